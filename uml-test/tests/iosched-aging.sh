# SPDX-License-Identifier: GPL-2.0
# Real-time I/O delays the other classes but never starves them: on a
# device that takes two requests at a time, 10 ms each, with 64 scheduler
# tags, two real-time readers with 32 requests each always have dozens
# waiting in the scheduler, so without aging a best-effort or idle request
# would never be dispatched.  (With the default two tags per device slot,
# the readers, whose task is not real-time, may hold only three of four,
# and the scheduler runs out of real-time requests now and then.)  With aging_expire, its requests go once they
# have waited that long: each reader finishes a fixed number of reads while
# the real-time readers still run, and debugfs counts them as aged.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/nullb.sh

plan 8

nullb_names nullb-aging
rt_queued() { look queued; [ "$n1" -gt 8 ]; }

check "null_blk device made (two requests at a time, 10 ms each)" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 64 > $nb/size &&
	echo 1 > $nb/submit_queues && echo 2 > $nb/hw_queue_depth &&
	echo 2 > $nb/irqmode && echo 10000000 > $nb/completion_nsec &&
	echo 1 > $nb/power"
check "abiss chosen for $dev, 64 scheduler tags" sh -c "echo abiss > /sys/block/$dev/queue/scheduler &&
	echo 64 > /sys/block/$dev/queue/nr_requests"
check "aging_expire set to 200 ms" sh -c "echo 200 > $ios/aging_expire"

# Two real-time readers of 32 requests each, until the test stops them.
fio --thread --output=/tmp/aging-rt.out --name=aging-rt --filename=/dev/$dev \
	--direct=1 --ioengine=libaio --iodepth=32 --rw=randread --bs=4k --numjobs=2 \
	--time_based --runtime=3600 --prioclass=1 > /dev/null 2>&1 &
flood=$!
await 60 rt_queued && pass "real-time requests wait in the scheduler" ||
	fail "real-time requests wait in the scheduler"

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
kill -INT $flood
wait
grep -q 'err= 0' /tmp/aging-rt.out && pass "the real-time readers ran without errors" ||
	fail "the real-time readers ran without errors"

echo none > /sys/block/$dev/queue/scheduler
echo 0 > $nb/power
rmdir $nb
done_testing
