# SPDX-License-Identifier: GPL-2.0
# abissd killed with -9 while a stream runs, then started again: the kernel
# tells the new abissd about the stream (ABISS_MSG_LIVE), which accounts it
# for the device and for its user, and the stream never notices.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/abissd.sh

plan 13
mnt=/mnt/ext3
dir=$mnt/restart
check "mount $EXT3_DEV as ext3" mount_fs ext3 "$EXT3_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
chmod 755 "$dir"
rdrt --create 16M --seed 5 "$dir/s" > /dev/null
rdrt --create 1M --seed 6 "$dir/t" > /dev/null
chmod 644 "$dir/s" "$dir/t"
cat > "$ABISSD_CONF" <<CONF
capacity $EXT3_DEV 20MB
user 1000 streams 1
CONF
if abissd_run; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

# A stream that runs until the test stops it (16 MiB at 200 kB/s: 84 s),
# with 5 s of buffer.
asuser 1000 1000 rdrt -a -r 200kB -s 64k -b 1M -v -S 5 "$dir/s" 2> /tmp/r.err &
p=$!
await 10 streams_are 1 1000
id=$(stream_ids 1000)
[ -n "$id" ] && pass "the stream is admitted (id $id)" || fail "the stream is admitted"
kill -9 "$ABISSD_PID"
wait "$ABISSD_PID" 2> /dev/null
[ -S "$ABISSD_SOCKET" ] && pass "abissd killed with -9 leaves its socket behind" ||
	fail "abissd killed with -9 leaves its socket behind"
awk -v i="$id" '$1 == i && $13 == "active" && $14 == 0 { f = 1 } END { exit !f }' /sys/kernel/debug/abiss/streams &&
	pass "the stream outlives its abissd" || fail "the stream outlives its abissd"

if abissd_run; then pass "abissd starts again over the stale socket"; else
	fail "abissd starts again over the stale socket"; diag "$(tail -n 3 "$ABISSD_LOG")"; fi
await 10 streams_are 1 1000
is "$(stream_ids 1000)" "$id" "status shows the stream, rebuilt from the kernel"
is "$(abissd_reserved 200000)" 200000 "the device's reservation is rebuilt"
grep -q "stream $id (pid $p uid 1000 gid 1000, file [0-9:]* '$dir/s', rate 200000 B/s, buffer 1048576): admitted before this abissd started: accounted" \
	"$ABISSD_LOG" && pass "the log says so" || { fail "the log says so"; diag "$(tail -n 3 "$ABISSD_LOG")"; }
check "the user's accounting is rebuilt: a second stream is over its limit" \
	refused "Disk quota exceeded" 1000 1MB "$dir/t"
stream_stop "the stream across the restart" $p
is "$(abissd_reserved 0)" 0 "the new abissd releases it at its end"
abissd_stop
done_testing
