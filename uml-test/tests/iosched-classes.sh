# SPDX-License-Identifier: GPL-2.0
# I/O priority classes as abiss sees them, through its debugfs counters:
# real-time, best-effort levels 0 and 7 and idle requests are counted in
# their class; a task without an I/O class gets the level of its nice
# value; best-effort requests in flight stay within be_max_inflight while
# more wait in the scheduler, when the bound holds always (be_slow_latency 0),
# on a slow device and while a real-time reader runs; without real-time I/O
# on a device faster than be_slow_latency they fill it instead; and expired
# requests are counted.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/nullb.sh

plan 23

nullb_names nullb-class
# field FILE N: the Nth number of a debugfs file.
field() { look "$1"; eval echo "\$n$2"; }
# level_dispatched L: requests dispatched from best-effort level L.
level_dispatched() { awk -v l="$1" '$1 == l { print $3 }' "$dbg/be_levels"; }

# rd NAME SECONDS [fio options]: one reader of the device.
rd() {
	name=$1 secs=$2
	shift 2
	fio --thread --output="/tmp/$name.out" --name="$name" --filename=/dev/$dev \
		--direct=1 --ioengine=psync --rw=randread --bs=4k \
		--time_based --runtime="$secs" "$@" > /dev/null 2>&1
}

check "null_blk device made (2 ms completions)" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 64 > $nb/size &&
	echo 2 > $nb/irqmode && echo 2000000 > $nb/completion_nsec &&
	echo 1 > $nb/power"
check "abiss chosen for $dev" sh -c "echo abiss > /sys/block/$dev/queue/scheduler"

rt0=$(field dispatched 1) be0=$(field dispatched 2) id0=$(field dispatched 3)
l0=$(level_dispatched 0) l7=$(level_dispatched 7)
rd rt 2 --prioclass=1 & p1=$!
rd be0 2 --prioclass=2 --prio=0 & p2=$!
rd be7 2 --prioclass=2 --prio=7 & p3=$!
rd idle 1 --prioclass=3 & p4=$!
wait $p1 $p2 $p3 $p4
diag "dispatched rt be idle: $(cat $dbg/dispatched); levels: $(cut -d' ' -f3 $dbg/be_levels | tr '\n' ' ')"
[ "$(field dispatched 1)" -gt "$rt0" ] && pass "real-time requests counted as rt" ||
	fail "real-time requests counted as rt"
[ "$(field dispatched 2)" -gt "$be0" ] && pass "best-effort requests counted as be" ||
	fail "best-effort requests counted as be"
[ "$(field dispatched 3)" -gt "$id0" ] && pass "idle requests counted as idle, once the rest is done" ||
	fail "idle requests counted as idle, once the rest is done"
[ "$(level_dispatched 0)" -gt "$l0" ] && [ "$(level_dispatched 7)" -gt "$l7" ] &&
	pass "best-effort levels 0 and 7 counted apart" ||
	fail "best-effort levels 0 and 7 counted apart"

# No I/O class: nice 19 is level 7, nice -20 level 0 (task_nice_ioprio()).
l7=$(level_dispatched 7) l4=$(level_dispatched 4)
rd nice19 1 --nice=19
[ "$(level_dispatched 7)" -gt "$l7" ] && [ "$(level_dispatched 4)" = "$l4" ] &&
	pass "a nice 19 task without I/O class is best-effort level 7" ||
	fail "a nice 19 task without I/O class is best-effort level 7"
l0=$(level_dispatched 0) l4=$(level_dispatched 4)
rd nicem20 1 --nice=-20
[ "$(level_dispatched 0)" -gt "$l0" ] && [ "$(level_dispatched 4)" = "$l4" ] &&
	pass "a nice -20 task without I/O class is best-effort level 0" ||
	fail "a nice -20 task without I/O class is best-effort level 0"
l4=$(level_dispatched 4)
rd nice0 1
[ "$(level_dispatched 4)" -gt "$l4" ] && pass "a nice 0 task without I/O class is level 4" ||
	fail "a nice 0 task without I/O class is level 4"

# greedy: two best-effort readers, 8 requests each (16 in flight is
# well past be_max_inflight, and more only costs the guest CPU), in the
# background until load_stop: the looks below are taken while they run,
# however long the guest takes to get there.
load_pids=
greedy() {
	for j in 1 2; do
		fio --thread --output=/tmp/greedy$j.out --name=greedy$j --filename=/dev/$dev \
			--direct=1 --ioengine=libaio --iodepth=8 --rw=randread --bs=4k \
			--time_based --runtime=3600 > /dev/null 2>&1 &
		load_pids="$load_pids $!"
	done
}
# rt_reader: a real-time reader in the background until load_stop.
rt_reader() {
	fio --thread --output=/tmp/rtbound.out --name=rtbound --filename=/dev/$dev \
		--direct=1 --ioengine=psync --rw=randread --bs=4k \
		--time_based --runtime=3600 --prioclass=1 > /dev/null 2>&1 &
	load_pids="$load_pids $!"
}
# load_stop: the readers told to stop (fio ends its jobs on SIGINT).
load_stop() {
	kill -INT $load_pids 2> /dev/null
	wait $load_pids
	load_pids=
}
# started N: wait (up to 30 s) until class N (1 rt, 2 be) dispatches more
# requests: fio takes its time to start in a loaded guest.
started() {
	look dispatched
	eval _d0=\$n$1
	_t=0
	while look dispatched && eval [ "\$n$1" = "$_d0" ] && [ $_t -lt 300 ]; do
		sleep 0.1
		_t=$((_t + 1))
	done
}
# over_bound: more non-RT requests in flight than be_max_inflight (2).
over_bound() { look inflight; [ $((n2 + n3)) -gt 2 ]; }
# sample: 50 looks at debugfs, the highest non-RT in flight and BE queued
# counts in maxin and maxq, how often throttled and bounded were 1 in thr
# and bnd, the looks taken in i.
sample() {
	maxin=0 maxq=0 thr=0 bnd=0 i=0
	while [ $i -lt 50 ]; do
		look inflight
		n=$((n2 + n3))
		look queued
		q=$n2
		[ "$n" -gt $maxin ] && maxin=$n
		[ "$q" -gt $maxq ] && maxq=$q
		read -r t < "$dbg/throttled"
		[ "$t" = 1 ] && thr=$((thr + 1))
		read -r b < "$dbg/bounded"
		[ "$b" = 1 ] && bnd=$((bnd + 1))
		i=$((i + 1))
	done
}

# Always bounded (be_slow_latency 0): be_max_inflight 2 holds.
check "be_max_inflight set to 2, be_slow_latency to 0, be_read_expire to 1 ms" \
	sh -c "echo 2 > $ios/be_max_inflight && echo 0 > $ios/be_slow_latency &&
	echo 1 > $ios/be_read_expire"
exp0=$(field expired 2)
greedy
started 2
sleep 1
sample
load_stop
diag "non-RT in flight at most $maxin, queued at most $maxq, throttled seen $thr/50, bounded $bnd/50"
[ $maxin -ge 1 ] && [ $maxin -le 2 ] && pass "non-RT requests in flight stay within be_max_inflight" ||
	fail "non-RT requests in flight stay within be_max_inflight (saw $maxin)"
[ $maxq -gt 2 ] && pass "the other best-effort requests wait in the scheduler" ||
	fail "the other best-effort requests wait in the scheduler (queued at most $maxq)"
[ "$(field expired 2)" -gt "$exp0" ] && pass "expired best-effort requests are counted" ||
	fail "expired best-effort requests are counted"

# Without real-time I/O the bound follows the device's speed: on a second
# device with 20 ms completions it holds under be_slow_latency 10 ms and
# lifts under 60000 ms, best-effort then filling the device.  (On the 2 ms
# device requests complete faster than the guest's shell can look.)
nb2=/sys/kernel/config/nullb/nullb-slow
check "a second null_blk device made (20 ms completions), abiss, be_max_inflight 2" \
	sh -c "mkdir $nb2 && echo 1 > $nb2/memory_backed && echo 64 > $nb2/size &&
	echo 2 > $nb2/irqmode && echo 20000000 > $nb2/completion_nsec &&
	echo 1 > $nb2/power && echo abiss > /sys/block/nullb-slow/queue/scheduler &&
	echo 2 > /sys/block/nullb-slow/queue/iosched/be_max_inflight"
dev=nullb-slow dbg=/sys/kernel/debug/block/nullb-slow/sched
greedy
started 2
sample
load_stop
diag "slow device, no real-time I/O: non-RT in flight at most $maxin, bounded $bnd/50, be_latency $(cat $dbg/be_latency) us"
[ $maxin -le 2 ] && [ $bnd = 50 ] &&
	pass "on a device slower than be_slow_latency the bound holds without real-time I/O" ||
	fail "on a device slower than be_slow_latency the bound holds without real-time I/O (saw $maxin, bounded $bnd/50)"
check "be_slow_latency set to 60000" \
	sh -c "echo 60000 > /sys/block/nullb-slow/queue/iosched/be_slow_latency"
greedy
started 2
# fio takes its time to reach its depth in a loaded guest: the looks start
# once it has (a bound that holds fails the test after 30 s).
await 30 over_bound
sample
load_stop
diag "be_slow_latency 60000, no real-time I/O: non-RT in flight at most $maxin, bounded $bnd/50"
[ $maxin -gt 2 ] && [ $bnd = 0 ] &&
	pass "with no real-time I/O on a device faster than be_slow_latency, best-effort fills it" ||
	fail "with no real-time I/O on a device faster than be_slow_latency, best-effort fills it (saw $maxin, bounded $bnd/50)"
check "the second null_blk device removed" sh -c "echo 0 > $nb2/power && rmdir $nb2"
dev=nullb-class dbg=/sys/kernel/debug/block/nullb-class/sched

# A real-time reader alongside on the fast device: the bound holds as long as
# it runs (rt_window 60 s, so that the reader's start and exit do not race
# the looks).
check "be_slow_latency set to 60000, rt_window to 60000, be_read_expire to 500" \
	sh -c "echo 60000 > $ios/be_slow_latency && echo 60000 > $ios/rt_window &&
	echo 500 > $ios/be_read_expire"
greedy
rt_reader
started 1
sleep 1
sample
load_stop
diag "real-time reader running: non-RT in flight at most $maxin, queued at most $maxq, bounded $bnd/$i"
[ $i -gt 0 ] && [ $maxin -le 2 ] && [ $bnd = $i ] &&
	pass "while a real-time reader runs, be_max_inflight holds" ||
	fail "while a real-time reader runs, be_max_inflight holds (saw $maxin, bounded $bnd/$i)"
check "the tunables back to their defaults" \
	sh -c "echo 4 > $ios/be_max_inflight && echo 10 > $ios/be_slow_latency &&
	echo 500 > $ios/rt_window"
is "$(field queued 1) $(field queued 2) $(field queued 3) $(field inflight 1) $(field inflight 2) $(field inflight 3)" \
	"0 0 0 0 0 0" "nothing left queued or in flight once the load is over"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"
done_testing
