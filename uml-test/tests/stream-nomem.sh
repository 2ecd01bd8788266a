# SPDX-License-Identifier: GPL-2.0
# A disk's refill worker never reclaims memory: it allocates the pages of
# a refill (and the entries that hold them) without direct reclaim.  Fault
# injection (fail_page_alloc, filtered to the worker's task) fails every
# page allocation of the worker that may not reclaim; one that may reclaim
# is never failed (ignore-gfp-wait).  Then each refill counts a 'nomem'
# (debugfs) and hands the window to a work item at normal priority that
# reads it with reclaim allowed: while the injection lasts longer than the
# stream's buffer, the reader misses nothing and reads its data as
# written, and the worker does not retry in a loop.  A worker that
# reclaimed would count no nomem (the injection would not touch it); one
# that only retried by itself would miss once the buffer ran out.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

plan 10
mnt=/mnt/vfat
dir=$mnt/nomem
fail=/sys/kernel/debug/fail_page_alloc
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
[ -f "$dir/f1" ] || rdrt --create 16M --seed 71 "$dir/f1" > /dev/null
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
# Every allocation that may not reclaim, of tasks with make-it-fail, from
# order 0 on, page-cache pages included (their mask has __GFP_HIGHMEM,
# which fail_page_alloc leaves alone by default), for as long as 'times'
# is -1; quietly (a verbose report prints a stack, which the harness
# takes for a splat).
check "fault injection set up (fail_page_alloc, task filter)" sh -c "
	echo 100 > $fail/probability && echo 1 > $fail/interval &&
	echo 0 > $fail/verbose && echo 0 > $fail/space && echo 0 > $fail/min-order &&
	echo Y > $fail/task-filter && echo Y > $fail/ignore-gfp-wait &&
	echo N > $fail/ignore-gfp-highmem && echo -1 > $fail/times"

active() { [ "$(stream_of "$1" 13)" = active ]; }
# past PID COLUMN N: the stream's column is at least N.
past() { [ "$(stream_of "$1" "$2")" -ge "$3" ] 2> /dev/null; }

# 1 MB/s with 1 MiB of buffer (a second of it), 14 MB in all.
echo 1 > /proc/sys/vm/drop_caches
rdrt -a -r 1MB -s 64k -b 1M -n 14M -v -S 71 -j "$dir/f1" > /tmp/nomem.json \
	2> /tmp/nomem.err &
p=$!
await 10 active "$p" || diag "stream not active: $(cat /tmp/nomem.err)"
w=$(kthread_pid abiss-refill/)
[ -n "$w" ] && pass "the disk's refill worker is there (pid $w)" ||
	fail "the disk's refill worker is there"
d0=$(stream_of "$p" 9) r0=$(stream_of "$p" 11)
echo 1 > "/proc/$w/make-it-fail"
# Inject until the reader has read 4 MB more, four times its buffer.
await 60 past "$p" 9 $((d0 + 4000000)) ||
	diag "delivered only $(stream_of "$p" 9) of $((d0 + 4000000))"
nomem=$(stream_of "$p" 18) r1=$(stream_of "$p" 11)
echo 0 > "/proc/$w/make-it-fail"
[ "${nomem:-0}" -gt 0 ] 2> /dev/null &&
	pass "refills short of memory were counted (nomem $nomem)" ||
	fail "refills short of memory were counted (nomem '$nomem')"
# A 1 MiB buffer at 1 MB/s: a refill at most every 65 ms (the time for
# 64 KiB), about 60 in 4 s; a worker retrying in a loop makes thousands.
refills=$((${r1:-0} - ${r0:-0}))
[ -n "$r1" ] && [ "$refills" -lt 1000 ] &&
	pass "no refill loop while short of memory ($refills refills)" ||
	fail "no refill loop while short of memory ($refills refills)"
wait "$p"
rc=$?
j=$(cat /tmp/nomem.json)
is "$rc:$(json_field "$j" verified)" 0:true \
	"every byte as written while the worker could not allocate" ||
	diag "$(cat /tmp/nomem.err)"
is "$(json_field "$j" misses)" 0 "no read missed the buffer"
echo 0 > "$fail/times"
echo 0 > "$fail/probability"
echo Y > "$fail/ignore-gfp-highmem"
is "$(abissd_reserved 0)" 0 "abissd got the reservation back"
abissd_stop
check "umount" umount "$mnt"
done_testing
