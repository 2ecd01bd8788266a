# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test: no thresholds), run in the guest by uml-test/bench/run.
#
# 1. A FAT file system on null_blk capped at 20 MB/s with 0.5 ms completions;
#    per scheduler (none mq-deadline bfq kyber abiss), with cold caches: one
#    paced reader (2 MB/s in 64 KiB buffered reads, I/O class real-time) and
#    eight greedy buffered readers (128 KiB reads, one 64 MiB file each).
#    Writes "SCHED p99_us p99.9_us max_us greedy_KiB/s" to
#    /results/bench-latency.txt.
# 2. 4 KiB random direct reads on an uncapped null_blk, per scheduler, in
#    three rounds, each in another order (so that a slow spell of the host
#    does not hit one scheduler only): "SCHED IOPS" per run to
#    /results/bench-iops.txt.
. /abiss/uml-test/lib/tap.sh

scheds="none mq-deadline bfq kyber abiss"
secs=${BENCH_SECS:-20}
plan 24

cfg=/sys/kernel/config/nullb
lat=/results/bench-latency.txt
iops=/results/bench-iops.txt
: > $lat
: > $iops

# terse FILE N: field N of the last terse line of FILE (a=b fields give b).
terse() { tail -n 1 "$1" | cut -d';' -f"$2" | sed 's/.*=//'; }

check "capped null_blk made (20 MB/s, 0.5 ms completions)" sh -c "mkdir $cfg/nullb-lat &&
	echo 1 > $cfg/nullb-lat/memory_backed && echo 640 > $cfg/nullb-lat/size &&
	echo 20 > $cfg/nullb-lat/mbps && echo 2 > $cfg/nullb-lat/irqmode &&
	echo 500000 > $cfg/nullb-lat/completion_nsec && echo 1 > $cfg/nullb-lat/power"
check "FAT made and mounted" sh -c "mkdosfs -F 32 /dev/nullb-lat > /dev/null &&
	mkdir -p /mnt/bench && mount -t vfat /dev/nullb-lat /mnt/bench"
mkfiles() {
	i=1
	while [ $i -le 8 ]; do
		dd if=/dev/zero of=/mnt/bench/greedy$i bs=1M count=64 2> /dev/null || return 1
		i=$((i + 1))
	done
	dd if=/dev/zero of=/mnt/bench/paced bs=1M count=48 2> /dev/null && sync
}
check "eight 64 MiB files and a 48 MiB one written" mkfiles

greedy_jobs=
i=1
while [ $i -le 8 ]; do
	greedy_jobs="$greedy_jobs --name=greedy$i --filename=/mnt/bench/greedy$i"
	i=$((i + 1))
done

# one SCHED: the paced reader against the greedy ones under SCHED.
one() {
	echo "$1" > /sys/block/nullb-lat/queue/scheduler || return 1
	sync
	echo 3 > /proc/sys/vm/drop_caches
	fio --thread --output-format=terse --output=/tmp/greedy.out \
		--group_reporting --ioengine=psync --rw=read --bs=128k \
		--time_based --runtime="$secs" $greedy_jobs > /dev/null 2>&1 &
	g=$!
	sleep 2
	fio --thread --output-format=terse --output=/tmp/paced.out \
		--percentile_list=99:99.9 --name=paced --filename=/mnt/bench/paced \
		--ioengine=psync --rw=read --bs=64k --rate=2m --prioclass=1 \
		--time_based --runtime=$((secs - 4)) > /dev/null 2>&1 || return 1
	wait $g || return 1
	echo "$1 $(terse /tmp/paced.out 18) $(terse /tmp/paced.out 19)" \
		"$(terse /tmp/paced.out 39) $(terse /tmp/greedy.out 7)" >> $lat
}
for s in $scheds; do
	check "latency run under $s" one "$s"
done
umount /mnt/bench
echo 0 > $cfg/nullb-lat/power
rmdir $cfg/nullb-lat

check "uncapped null_blk made" sh -c "mkdir $cfg/nullb-iops &&
	echo 1024 > $cfg/nullb-iops/size && echo 1 > $cfg/nullb-iops/power"
iops_one() {
	echo "$1" > /sys/block/nullb-iops/queue/scheduler || return 1
	fio --thread --output-format=terse --output=/tmp/iops.out \
		--group_reporting --name=rand --filename=/dev/nullb-iops \
		--direct=1 --ioengine=libaio --iodepth=32 --numjobs=2 \
		--rw=randread --bs=4k --time_based --runtime=8 > /dev/null 2>&1 || return 1
	echo "$1 $(terse /tmp/iops.out 8)" >> $iops
}
order=$scheds
for round in 1 2 3; do
	for s in $order; do
		check "4k random reads under $s, round $round" iops_one "$s"
	done
	order="${order#* } ${order%% *}"
done
echo 0 > $cfg/nullb-iops/power
rmdir $cfg/nullb-iops
done_testing
