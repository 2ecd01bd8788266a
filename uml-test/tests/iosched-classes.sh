# SPDX-License-Identifier: GPL-2.0
# I/O priority classes as abiss sees them, through its debugfs counters:
# real-time, best-effort levels 0 and 7 and idle requests are counted in
# their class; a task without an I/O class gets the level of its nice
# value.  The bound on non-real-time I/O in flight: without real-time I/O
# it holds on a device slower than rt_target_latency and lifts on a faster
# one, best-effort then filling it; beside a real-time reader the KiB of
# non-real-time requests in flight stay within the adaptive bound
# (be_bound_kb, at most be_inflight_max_kb) and one request while more wait
# in the scheduler, and expired ones are counted; the bound grows to
# be_inflight_max_kb while real-time requests take less than
# rt_target_latency, and shrinks when they take longer.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/nullb.sh

plan 24

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

# greedy: two best-effort readers of 4 KiB, 8 requests each (64 KiB, well
# past the bounds below; more only costs the guest CPU), in the background
# until load_stop: the looks below are taken while they run, however long
# the guest takes to get there.
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
# load_stop: the readers told to stop, and waited for.
load_stop() {
	stop_procs $load_pids
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
# one FILE: the number in a debugfs file of one value, in v.
one() { v=; read -r v < "$dbg/$1"; }
# sample MAXKB: 50 looks at debugfs: the most non-RT KiB in flight and BE
# requests queued in maxkb and maxq, how often throttled and bounded were 1
# in thr and bnd, the looks taken in i; over, the looks whose KiB in flight
# were more than be_bound_kb (read after them: the bound only grows while
# rt_target_latency is not missed) and 4 KiB, one request, or more than
# MAXKB and 4 KiB.
sample() {
	maxkb=0 maxq=0 thr=0 bnd=0 i=0 over=
	while [ $i -lt 50 ]; do
		one inflight_kb
		kb=$v
		one be_bound_kb
		[ "$kb" -gt $((v + 4)) ] || [ "$kb" -gt $(($1 + 4)) ] &&
			over="$over $kb/$v"
		look queued
		[ "$kb" -gt $maxkb ] && maxkb=$kb
		[ "$n2" -gt $maxq ] && maxq=$n2
		one throttled
		[ "$v" = 1 ] && thr=$((thr + 1))
		one bounded
		[ "$v" = 1 ] && bnd=$((bnd + 1))
		i=$((i + 1))
	done
}

# Without real-time I/O the bound follows the device's speed: on a second
# device, which never saw real-time I/O, with 20 ms completions (on the
# 2 ms one requests complete faster than the guest's shell can look), it
# holds while best-effort requests take rt_target_latency (10 ms) or more,
# and lifts under rt_target_latency 60000 ms, best-effort then filling the
# device far past what the bound would let through.
nb2=/sys/kernel/config/nullb/nullb-fresh
check "a second null_blk device made (20 ms completions), abiss, be_inflight_max_kb 16" \
	sh -c "mkdir $nb2 && echo 1 > $nb2/memory_backed && echo 64 > $nb2/size &&
	echo 2 > $nb2/irqmode && echo 20000000 > $nb2/completion_nsec &&
	echo 1 > $nb2/power && echo abiss > /sys/block/nullb-fresh/queue/scheduler &&
	echo 16 > /sys/block/nullb-fresh/queue/iosched/be_inflight_max_kb"
dev=nullb-fresh dbg=/sys/kernel/debug/block/nullb-fresh/sched
greedy
started 2
sleep 1
sample 16
load_stop
diag "slow device, no real-time I/O: non-RT KiB in flight at most $maxkb, bounded $bnd/50, be_latency $(cat $dbg/be_latency 2> /dev/null) us"
[ $i -gt 0 ] && [ -z "$over" ] && [ $bnd = $i ] &&
	pass "on a device slower than rt_target_latency the bound holds without real-time I/O" ||
	fail "on a device slower than rt_target_latency the bound holds without real-time I/O (KiB/bound over:$over; at most $maxkb, bounded $bnd/$i)"
check "rt_target_latency set to 60000" \
	sh -c "echo 60000 > /sys/block/nullb-fresh/queue/iosched/rt_target_latency"
# over_bound: more non-RT KiB in flight than the bound and one request.
over_bound() { one inflight_kb; [ "$v" -gt 20 ]; }
greedy
started 2
# fio takes its time to reach its depth in a loaded guest: the looks start
# once it has (a bound that holds fails the test after 30 s).
await 30 over_bound
sample 16
load_stop
diag "rt_target_latency 60000, no real-time I/O ever: non-RT KiB in flight at most $maxkb, bounded $bnd/50, be_bound_kb $(cat $dbg/be_bound_kb)"
[ $maxkb -gt 20 ] && [ $bnd = 0 ] &&
	pass "with no real-time I/O ever on a device faster than rt_target_latency, best-effort fills it" ||
	fail "with no real-time I/O ever on a device faster than rt_target_latency, best-effort fills it (saw $maxkb KiB, bounded $bnd/50)"
check "the second null_blk device removed" sh -c "echo 0 > $nb2/power && rmdir $nb2"
dev=nullb-class dbg=/sys/kernel/debug/block/nullb-class/sched

# A real-time reader alongside: the bound holds as long as it runs
# (rt_window 60 s, so that the reader's start and exit do not race the
# looks), and with rt_target_latency 60 s it only grows, to 16 KiB; the
# greedy readers' requests wait in the scheduler, and expire (after 1 ms)
# the more once the bound has shrunk.
check "be_inflight_max_kb set to 16, rt_window and rt_target_latency to 60000, be_read_expire to 1 ms" \
	sh -c "echo 16 > $ios/be_inflight_max_kb && echo 60000 > $ios/rt_window &&
	echo 60000 > $ios/rt_target_latency && echo 1 > $ios/be_read_expire"
exp0=$(field expired 2)
greedy
rt_reader
started 1
started 2
sleep 1
# As above, fio reaches its depth late in a loaded guest (in a make check
# beside builds none was queued yet after 1 s): the looks start once best-
# effort requests wait (a scheduler that never holds them fails after 30 s).
be_queued() { look queued; [ "$n2" -gt 2 ]; }
await 30 be_queued
sample 16
diag "real-time reader running: non-RT KiB in flight at most $maxkb, BE queued at most $maxq, throttled $thr/$i, bounded $bnd/$i, be_bound_kb $(cat $dbg/be_bound_kb)"
[ $i -gt 0 ] && [ $maxkb -ge 4 ] && [ -z "$over" ] && [ $bnd = $i ] &&
	pass "while a real-time reader runs, non-RT KiB in flight stay within the bound and one request" ||
	fail "while a real-time reader runs, non-RT KiB in flight stay within the bound and one request (KiB/bound over:$over; at most $maxkb, bounded $bnd/$i)"
[ $maxq -gt 2 ] && pass "the other best-effort requests wait in the scheduler" ||
	fail "the other best-effort requests wait in the scheduler (queued at most $maxq)"
# bound_is CMP: be_bound_kb CMP 16 (-eq, -lt).
bound_is() { one be_bound_kb; [ "$v" "$1" 16 ]; }
await 30 bound_is -eq && pass "be_bound_kb grows to be_inflight_max_kb while real-time requests take less than rt_target_latency" ||
	fail "be_bound_kb grows to be_inflight_max_kb while real-time requests take less than rt_target_latency (it is $v)"
check "rt_target_latency set to 1 ms (the device takes 2 ms)" \
	sh -c "echo 1 > $ios/rt_target_latency"
await 30 bound_is -lt && pass "be_bound_kb shrinks when real-time requests take longer than rt_target_latency" ||
	fail "be_bound_kb shrinks when real-time requests take longer than rt_target_latency (it is $v)"
# The greedy requests wait longest behind the smallest bound.
expired_more() { look expired; [ "$n2" -gt "$exp0" ]; }
await 30 expired_more && pass "expired best-effort requests are counted" ||
	fail "expired best-effort requests are counted"
diag "be_bound_kb $(cat $dbg/be_bound_kb), expired rt be idle $(cat $dbg/expired) (be before: $exp0)"
load_stop
check "the tunables back to their defaults" \
	sh -c "echo 4096 > $ios/be_inflight_max_kb && echo 500 > $ios/rt_window &&
	echo 10 > $ios/rt_target_latency && echo 500 > $ios/be_read_expire"
is "$(field queued 1) $(field queued 2) $(field queued 3) $(field inflight 1) $(field inflight 2) $(field inflight 3) $(cat $dbg/inflight_kb)" \
	"0 0 0 0 0 0 0" "nothing left queued or in flight once the load is over"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"
done_testing
