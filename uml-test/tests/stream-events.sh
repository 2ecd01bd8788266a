# SPDX-License-Identifier: GPL-2.0
# A stream ended from outside while it runs: kill -9 of its reader, a
# truncate to zero, a umount (refused) and a lazy umount (ends it).  Each
# time abissd gets the reservation back and ABISS holds nothing; kmemleak
# finds nothing new.  The lazy umount that ends a stream is of the mount
# its file was opened through: another mount of the file system (a bind
# mount) neither keeps it going nor ends it.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

plan 20
mnt=/mnt/vfat
dir=$mnt/events
echo clear > /sys/kernel/debug/kmemleak
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
for i in 1 2 3; do rdrt --create 16M --seed "$i" "$dir/f$i" > /dev/null; done

# streams_listed: how many streams debugfs lists.
streams_listed() { tail -n +2 /sys/kernel/debug/abiss/streams | wc -l; }

# listed N: debugfs lists N streams.
listed() { [ "$(streams_listed)" = "$1" ]; }

# stream_bg N: a 2 MB/s stream on f$N in the background (8 s), returns once
# it is active: each event below comes within a second of that.
stream_bg() {
	rdrt -a -r 2MB -s 64k -b 4M -S "$1" -v -j --status "$dir/f$1" \
		> "/tmp/ev$1.json" 2> "/tmp/ev$1.err" &
	RDRT_PID=$!
	await 10 stream_active
}
stream_active() { [ "$(stream_of "$RDRT_PID" 13)" = active ]; }

stream_bg 1
is "$(abissd_reserved 2000000)" 2000000 "reserved while the stream runs"
kill -9 "$RDRT_PID"
wait "$RDRT_PID" 2> /dev/null
is "$(abissd_reserved 0)" 0 "kill -9 of the reader gives the reservation back"
await 10 listed 0
is "$(streams_listed)" 0 "and ABISS holds no stream"

stream_bg 2
truncate -s 0 "$dir/f2"
is "$(abissd_reserved 0)" 0 "a truncate to zero ends the stream"
wait "$RDRT_PID"
is "$?" 0 "the reader ends cleanly at the new end of file"
grep -q "before stop: .* end_reason 3$" /tmp/ev2.err && pass "its status says ended (truncated)" ||
	{ fail "its status says ended (truncated)"; diag "$(cat /tmp/ev2.err)"; }
is "$(streams_listed)" 0 "the reader's close frees the stream"

# Opened through a bind mount: the lazy umount of another mount of the
# file system leaves it going, that of its own ends it.
mkdir -p /mnt/bind1 /mnt/bind2
mount --bind "$mnt" /mnt/bind1
mount --bind "$mnt" /mnt/bind2
dir=/mnt/bind1/events
stream_bg 3
dir=$mnt/events
umount -l /mnt/bind2
sleep 1
is "$(stream_of "$RDRT_PID" 13)" active "the lazy umount of another bind mount leaves it going"
umount -l /mnt/bind1
await 10 awk '$13 == "ended" && $14 == 4 { f = 1 } END { exit !f }' /sys/kernel/debug/abiss/streams && \
	pass "the lazy umount of its own mount ends it, the file system still mounted" ||
	fail "the lazy umount of its own mount ends it, the file system still mounted"
wait "$RDRT_PID"
is "$?" 0 "the reader reads its detached file to the end, data intact"

stream_bg 3
if umount "$mnt" 2> /dev/null; then fail "umount refused while a stream reads"; else
	pass "umount refused while a stream reads"; fi
is "$(abissd_reserved 2000000)" 2000000 "the refused umount leaves the stream running"
check "umount -l detaches the file system" umount -l "$mnt"
is "$(abissd_reserved 0)" 0 "the lazy umount ends the stream"
await 10 awk '$13 == "ended" && $14 == 4 { f = 1 } END { exit !f }' /sys/kernel/debug/abiss/streams && pass "debugfs says ended (unmounted)" ||
	fail "debugfs says ended (unmounted)"
wait "$RDRT_PID"
is "$?" 0 "the reader still reads its detached file to the end, data intact"
is "$(streams_listed)" 0 "nothing left in ABISS"

abissd_stop
echo scan > /sys/kernel/debug/kmemleak
sleep 1
echo scan > /sys/kernel/debug/kmemleak
is "$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)" 0 "kmemleak finds no new leak"
done_testing
