# SPDX-License-Identifier: GPL-2.0
# No class starves another: on a device that takes two requests at a time,
# 10 ms each, with 64 scheduler tags, two readers of 32 requests each
# always have dozens waiting in the scheduler.  Without aging, a
# best-effort or idle request would never be dispatched beside real-time
# readers, nor an idle one beside best-effort readers (their class never
# leaves it its grace period).  With aging_expire, a request goes once it
# has waited that long: each reader finishes a fixed number of reads while
# the flood still runs, and debugfs counts them as aged.  rt_share is 100
# (no share for best-effort beside real-time): aging alone lets them
# through.  (With the default two tags per device slot, readers whose task
# is not real-time may hold only three of four (be_tag_depth, which follows
# nr_requests), and the scheduler runs out of their requests now and then.)
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/nullb.sh

plan 12

nullb_names nullb-aging

check "null_blk device made (two requests at a time, 10 ms each)" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 64 > $nb/size &&
	echo 1 > $nb/submit_queues && echo 2 > $nb/hw_queue_depth &&
	echo 2 > $nb/irqmode && echo 10000000 > $nb/completion_nsec &&
	echo 1 > $nb/power"
check "abiss chosen for $dev, 64 scheduler tags" sh -c "echo abiss > /sys/block/$dev/queue/scheduler &&
	echo 64 > /sys/block/$dev/queue/nr_requests"
check "aging_expire set to 200 ms, rt_share to 100" \
	sh -c "echo 200 > $ios/aging_expire && echo 100 > $ios/rt_share"

# flood CLASS: two readers of 32 requests each in CLASS (1 real-time, 2
# best-effort), until flood_stop; 0 once they keep requests waiting.
flood() {
	fio --thread --output=/tmp/aging-flood$1.out --name=aging-flood$1 \
		--filename=/dev/$dev --direct=1 --ioengine=libaio --iodepth=32 \
		--rw=randread --bs=4k --numjobs=2 --time_based --runtime=3600 \
		--prioclass="$1" > /dev/null 2>&1 &
	flood=$! flood_class=$1
	await 60 flooded
}
flooded() { look queued; eval [ "\$n$flood_class" -gt 8 ]; }
# flood_stop: the readers told to stop, and every reader of the test
# waited for; 0 if the flood had no errors.
flood_stop() {
	stop_procs $flood
	wait
	grep -q 'err= 0' /tmp/aging-flood$flood_class.out
}

# reader CLASS: 16 reads of 4 KiB in CLASS (2 best-effort, 3 idle) beside
# the flood; 0 if they all completed while the flood still ran.  The bound
# is only for a reader that never gets through: it is left waiting for its
# I/O (it cannot be killed then) until the flood stops.
reader() {
	fio --thread --output=/tmp/aging-$1.out --name=aging-$1 --filename=/dev/$dev \
		--direct=1 --ioengine=psync --rw=randread --bs=4k --size=64k \
		--prioclass="$1" > /dev/null 2>&1 &
	r=$!
	await 120 sh -c "! kill -0 $r 2> /dev/null" || { echo "no reads through in 120 s"; return 1; }
	wait $r || return 1
	grep -q 'err= 0' /tmp/aging-$1.out && kill -0 $flood
}

# flood and flood_stop set and wait for the test's own processes: not
# through check, which runs its command in a subshell.
flood 1 && pass "real-time requests wait in the scheduler" ||
	fail "real-time requests wait in the scheduler"
look aged
be0=$n2 idle0=$n3
diag "queued rt be idle: $(cat $dbg/queued)"
check "a best-effort reader gets its 16 reads through the real-time flood" reader 2
check "an idle reader gets its 16 reads through the real-time flood" reader 3
look aged
diag "aged rt be idle: $n1 $n2 $n3 (before: - $be0 $idle0)"
[ "$n2" -gt "$be0" ] && [ "$n3" -gt "$idle0" ] &&
	pass "debugfs counts the aged best-effort and idle requests" ||
	fail "debugfs counts the aged best-effort and idle requests"
flood_stop && pass "the real-time readers ran without errors" ||
	fail "the real-time readers ran without errors"

flood 2 && pass "best-effort requests wait in the scheduler" ||
	fail "best-effort requests wait in the scheduler"
look aged
idle0=$n3
diag "queued rt be idle: $(cat $dbg/queued)"
check "an idle reader gets its 16 reads through the best-effort flood" reader 3
look aged
diag "aged rt be idle: $n1 $n2 $n3 (idle before: $idle0)"
[ "$n3" -gt "$idle0" ] && pass "debugfs counts the aged idle requests" ||
	fail "debugfs counts the aged idle requests"
flood_stop && pass "the best-effort readers ran without errors" ||
	fail "the best-effort readers ran without errors"

echo none > /sys/block/$dev/queue/scheduler
echo 0 > $nb/power
rmdir $nb
done_testing
