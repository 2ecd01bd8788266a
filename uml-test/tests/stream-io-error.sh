# SPDX-License-Identifier: GPL-2.0
# A refill read that fails once is read again: a transient I/O error
# (fault injection, fail_make_request: one bio of the disk fails) costs
# the stream nothing; the reader gets all its data as written, and the
# abiss_refill_error tracepoint tells of the failure.  A device
# that keeps failing ends the stream with the refill-error reason.  With
# nothing to allocate (failslab), a failed read is read again later, and
# abissd still hears of a stream's end.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

plan 16
mnt=/mnt/vfat
dir=$mnt/ioerr
fail=/sys/kernel/debug/fail_make_request
disk=/sys/block/${FAT_DEV#/dev/}
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
[ -f "$dir/f1" ] || rdrt --create 16M --seed 61 "$dir/f1" > /dev/null
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
# Every bio of the disk while make-it-fail is set, up to 'times'; quietly
# (a verbose report prints a stack, which the harness takes for a splat).
check "fault injection set up" sh -c "echo 100 > $fail/probability && echo 1 > $fail/interval &&
	echo 0 > $fail/verbose && echo 0 > $fail/space"
active() { [ "$(stream_of "$1" 13)" = active ]; }

# inject N: the next N bios of the disk fail.
inject() { echo "$1" > "$fail/times"; echo 1 > "$disk/make-it-fail"; }
stop_injecting() { echo 0 > "$disk/make-it-fail"; }

tracefs=/sys/kernel/tracing
[ -d "$tracefs/events" ] || mount -t tracefs tracefs "$tracefs"
: > "$tracefs/trace"
echo 1 > "$tracefs/events/abiss/abiss_refill_error/enable"
echo 1 > /proc/sys/vm/drop_caches
rdrt -a -r 1MB -s 64k -b 2M -n 10M -v -S 61 -j --status "$dir/f1" > /tmp/ioerr1.json \
	2> /tmp/ioerr1.err &
p=$!
await 10 active "$p"
inject 1
wait "$p"
rc=$?
stop_injecting
is "$(cat "$fail/times")" 0 "one bio of the disk failed"
is "$rc:$(json_field "$(cat /tmp/ioerr1.json)" verified)" 0:true \
	"after one failed refill read: every byte as written" || diag "$(cat /tmp/ioerr1.err)"
grep -q "before stop: .* end_reason 0$" /tmp/ioerr1.err &&
	pass "the stream went on to the end (not ended by the error)" ||
	{ fail "the stream went on to the end (not ended by the error)"; diag "$(cat /tmp/ioerr1.err)"; }
is "$(json_field "$(cat /tmp/ioerr1.json)" misses)" 0 "no read missed the buffer"
echo 0 > "$tracefs/events/abiss/abiss_refill_error/enable"
check "the failed read was traced (abiss_refill_error, no retry yet)" \
	grep -q "abiss_refill_error: id=[0-9]* index=[0-9]* retries=0" "$tracefs/trace"

# A device that keeps failing: the stream ends, reason refill error (5),
# and the reader gets EIO from the read that needs a page that could not
# be read: no hang, and no data it did not ask for.
echo 1 > /proc/sys/vm/drop_caches
rdrt -a -r 1MB -s 64k -b 2M -n 10M "$dir/f1" > /dev/null 2> /tmp/ioerr2.err &
p=$!
await 10 active "$p"
inject -1
# The stream shows 'ended 5' until its reader, failing with EIO, closes the
# file; a slow guest may look only after that: abissd's log of the kernel's
# END message keeps the reason.
await 20 sh -c "[ \"\$(awk -v p=$p '\$2 == p { print \$13, \$14 }' /sys/kernel/debug/abiss/streams)\" = 'ended 5' ] ||
	grep -q 'ended (refill error)' '$ABISSD_LOG'" &&
	pass "a device that keeps failing ends the stream: refill error" ||
	{ fail "a device that keeps failing ends the stream: refill error"; diag "$(cat /sys/kernel/debug/abiss/streams)"; }
if await 60 ended "$p"; then
	wait "$p"
	rc=$?
	[ $rc = 1 ] && grep -q "read error .*Input/output error" /tmp/ioerr2.err &&
		pass "the reader's read past the failed page gets EIO" ||
		{ fail "the reader's read past the failed page gets EIO (rdrt $rc)"; diag "$(cat /tmp/ioerr2.err)"; }
else
	fail "the reader's read past the failed page gets EIO (rdrt still runs after 60 s)"
	kill "$p" 2> /dev/null
	wait "$p" 2> /dev/null
fi
stop_injecting
echo 0 > "$fail/times"

# A failed refill read whose next read cannot be counted without reclaim
# (failslab: every slab object the disk's refill worker allocates, with or
# without reclaim, fails for a while; its bios come from mempools; one
# cache cannot be singled out, SLUB's failslab attribute is set at boot
# only): the disk's real-time worker does not reclaim, it counts nomem and
# leaves the page for a later look, which reads it again once it can; the
# stream goes on.  (It ended with a refill error when the count was kept
# with GFP_KERNEL and its failure taken for the page's.)
slab=/sys/kernel/debug/failslab
echo 1 > /proc/sys/vm/drop_caches
rdrt -a -r 1MB -s 64k -b 2M -n 10M -v -S 61 -j --status "$dir/f1" > /tmp/ioerr3.json \
	2> /tmp/ioerr3.err &
p=$!
await 10 active "$p"
w=$(kthread_pid abiss-refill/)
check "failslab for the refill worker ($w) only" sh -c "
	echo N > $slab/cache-filter && echo Y > $slab/task-filter && echo N > $slab/ignore-gfp-wait && echo 0 > $slab/verbose &&
	echo 100 > $slab/probability && echo 1 > $slab/interval && echo -1 > $slab/times &&
	echo 1 > /proc/$w/make-it-fail"
inject 1
await 10 sh -c "[ \"\$(cat $fail/times)\" = 0 ]"
await 10 sh -c "[ \"\$(awk -v p=$p '\$2 == p { print \$18 }' /sys/kernel/debug/abiss/streams)\" -gt 0 ]"
nomem=$(awk -v p=$p '$2 == p { print $18 }' /sys/kernel/debug/abiss/streams)
sleep 1
echo 0 > "/proc/$w/make-it-fail"
stop_injecting
wait "$p"
rc=$?
[ $rc = 0 ] && [ "$(json_field "$(cat /tmp/ioerr3.json)" verified)" = true ] &&
	grep -q "before stop: .* end_reason 0$" /tmp/ioerr3.err && [ "${nomem:-0}" -gt 0 ] &&
	pass "a failed read whose retry cannot be counted without reclaim: nomem, read later, the stream goes on" ||
	{ fail "a failed read whose retry cannot be counted without reclaim: nomem, read later, the stream goes on"
	  diag "rdrt $rc, nomem ${nomem:-none}: $(cat /tmp/ioerr3.err)"; }
is "$(abissd_reserved 0)" 0 "abissd got the reservation back"

# A stream whose end is told to abissd while nothing can be allocated
# (failslab for the reader, from when its stream is active: its STOP ends
# the stream): abissd still hears of it (the message was allocated when
# the stream was admitted) and takes the reservation back.  (It was
# allocated at the end, and its loss left the reservation taken.)
rdrt -a -r 2MB -s 64k -b 2M -n 4M "$dir/f1" > /dev/null 2>&1 &
p=$!
await 10 active "$p"
echo 1 > "/proc/$p/make-it-fail"
wait "$p"
is "$(abissd_reserved 0)" 0 "a stream stopped by a reader that can allocate nothing: abissd takes the reservation back"
echo 0 > "$slab/probability"
is "$(abissd_reserved 0)" 0 "abissd got every reservation back"
abissd_stop
check "umount" umount "$mnt"
done_testing
