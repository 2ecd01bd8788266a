# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test: no thresholds), run in the guest by uml-test/bench/run.
# Every scheduler of a part runs in this one boot: compare them as ratios.
#
# 1. A FAT file system on null_blk capped at 20 MB/s with 0.5 ms completions;
#    per scheduler (none mq-deadline bfq kyber abiss), with cold caches: one
#    paced reader (2 MB/s in 64 KiB buffered reads, I/O class real-time) and
#    eight greedy buffered readers (128 KiB reads, one 64 MiB file each).
#    Writes "SCHED p99_us p99.9_us max_us greedy_KiB/s" to
#    $BENCH_DIR/bench-latency.txt.
# 2. On the same device, a greedy real-time reader (128 KiB direct reads,
#    libaio depth 4) beside a best-effort writer (128 KiB buffered writes,
#    fsync every 4 MiB), per scheduler: what the device read and wrote while
#    both ran (from /sys/block/DEV/stat; the reader's O_DIRECT reads are the
#    only reads, the writer the only writer).  Writes "SCHED rt_read_KiB/s
#    be_write_KiB/s RT_SHARE" to $BENCH_DIR/bench-rt-share.txt; RT_SHARE is
#    /sys/block/DEV/queue/iosched/rt_share (the percent of service time
#    real-time I/O may take while best-effort waits) where the scheduler
#    has that tunable, else n/a.
# 3. Part 1 again on a disk-like null_blk, as uml-test/bench/streams.sh
#    makes it: one request at a time (hw_queue_depth=1, one submit queue),
#    irqmode=2, $BENCH_DISK_NSEC per request (6.5 ms: about 15-20 MB/s in
#    128 KiB requests), no mbps cap: bandwidth comes from service time, as
#    on a disk or SD card.  Its files are written with the device fast
#    (irqmode=0), which is then powered off, slowed and powered on again:
#    null_blk keeps a memory-backed device's data while it is off, and 560
#    MiB at 6.5 ms a request would take most of a minute.  Writes "disk
#    SCHED p99_us p99.9_us max_us greedy_KiB/s" to
#    $BENCH_DIR/bench-latency-disk.txt.
# 4. (issue 14, g) 4 KiB random direct reads (libaio depth 32, 2 jobs) of
#    an uncapped null_blk, per scheduler, alone, beside one paced real-time
#    reader of the same device (2 MB/s in 64 KiB direct reads), and beside
#    one ABISS stream (rdrt, admitted by abissd: 2 MB/s in 64 KiB reads, 4
#    MiB of playout buffer) of a file on the FAT that the device carries,
#    in $BENCH_ROUNDS rounds, each in another order (so that a slow spell
#    of the host does not hit one scheduler only).  The device is memory
#    backed, for the FAT: the random reads mostly find no page there and
#    are given zeros, still a copy per read that a device without memory
#    does not make (IOPS are lower than before the stream run was added,
#    for every scheduler alike).  Before each run beside the stream the
#    caches are dropped, so that its refills read the device.  Writes
#    "SCHED IOPS" per run alone to $BENCH_DIR/bench-iops.txt, to
#    $BENCH_DIR/bench-iops-rt.txt "SCHED alone IOPS" and "SCHED with_rt IOPS
#    rt_KiB/s rt_max_us" (the paced reader's throughput and worst latency),
#    and to $BENCH_DIR/bench-iops-stream.txt "SCHED with_stream IOPS
#    stream_KiB/s stream_worst_us misses" (the stream's delivered rate,
#    worst read and ABISS misses).
#    UML is uniprocessor and null_blk caps submit_queues at nr_cpu_ids, so
#    the device has one hardware context for these reads: null_blk's second
#    one (poll_queues) serves only polled I/O (fio --hipri), which neither
#    the paced reader nor a player issues.
#
# Environment (uml-test/run -e NAME=VALUE):
#   BENCH_SECS       seconds each measured run of parts 1-3 takes (default
#                    8): the greedy load runs this long, the measure is its
#                    middle, BENCH_WARMUP from each end
#   BENCH_WARMUP     seconds the load runs before the measure (default 2)
#   BENCH_DIR        where results go (default /results)
#   BENCH_SCHEDS     the schedulers (default "none mq-deadline bfq kyber
#                    abiss"; blanks or + between)
#   BENCH_GREEDY_MB  each greedy reader's file (default 64); the writer's is
#                    half
#   BENCH_DISK_NSEC  the disk-like device's time per request (default 6500000)
#   BENCH_IOPS_SECS  seconds each IOPS run takes (default 4)
#   BENCH_ROUNDS     rounds of IOPS runs (default 2)
#   BENCH_IOPS_RUNS  which IOPS runs (default "alone with_rt with_stream")
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

scheds=$(echo "${BENCH_SCHEDS:-none mq-deadline bfq kyber abiss}" | tr + ' ')
secs=${BENCH_SECS:-8}
warmup=${BENCH_WARMUP:-2}
dir=${BENCH_DIR:-/results}
greedy_mb=${BENCH_GREEDY_MB:-64}
writer_mb=$(((greedy_mb + 1) / 2))
disk_nsec=${BENCH_DISK_NSEC:-6500000}
iops_secs=${BENCH_IOPS_SECS:-4}
rounds=${BENCH_ROUNDS:-2}
iops_runs=$(echo "${BENCH_IOPS_RUNS:-alone with_rt with_stream}" | tr + ' ')
# The IOPS stream's file outlasts its run (3 s more than the random
# readers', see iops_one) with its buffer read ahead.
iops_stream_mb=$(((iops_secs + 4) * 2 + 6))
# The paced reader's file outlasts its run (2 MB/s) with readahead to spare.
paced_mb=$((secs * 2 + 8))
mnt=/mnt/bench

set -- $iops_runs
nruns=$#
set -- $scheds
plan $((12 + 4 * $# + nruns * $# * rounds))

cfg=/sys/kernel/config/nullb
lat=$dir/bench-latency.txt
latdisk=$dir/bench-latency-disk.txt
latubd=$dir/bench-latency-ubd.txt
share=$dir/bench-rt-share.txt
iops=$dir/bench-iops.txt
iopsrt=$dir/bench-iops-rt.txt
iopsst=$dir/bench-iops-stream.txt
mkdir -p "$dir"
: > "$lat"
: > "$latdisk"
: > "$latubd"
: > "$share"
: > "$iops"
: > "$iopsrt"
: > "$iopsst"

# terse FILE N: field N of the last terse line of FILE (a=b fields give b).
terse() { tail -n 1 "$1" | cut -d';' -f"$2" | sed 's/.*=//'; }

# sectors DEV N: field N of /sys/block/DEV/stat (3: sectors read, 7: written).
sectors() { awk -v n="$2" '{ print $n }' "/sys/block/$1/stat"; }

# uptime_cs: seconds since boot in hundredths.
uptime_cs() {
	read -r _u _rest < /proc/uptime
	echo $((${_u%.*} * 100 + $(echo "${_u#*.}" | sed 's/^0//')))
}

# Made fast (irqmode=0, no cap) for its files, capped after them (as the
# disk-like device below): 600 MiB at 20 MB/s would take half a minute.
check "capped null_blk made (fast for now)" sh -c "mkdir $cfg/nullb-lat &&
	echo 1 > $cfg/nullb-lat/memory_backed &&
	echo $((8 * greedy_mb + paced_mb + writer_mb + 80)) > $cfg/nullb-lat/size &&
	echo 0 > $cfg/nullb-lat/irqmode && echo 1 > $cfg/nullb-lat/power"
check "FAT made and mounted" sh -c "mkdosfs -F 32 /dev/nullb-lat > /dev/null &&
	mkdir -p $mnt && mount -t vfat /dev/nullb-lat $mnt"
# mkfiles WRITER: 8 greedy readers' files and the paced reader's, with
# WRITER (1) the writer's too.
mkfiles() {
	i=1
	while [ $i -le 8 ]; do
		dd if=/dev/zero of=$mnt/greedy$i bs=1M count="$greedy_mb" 2> /dev/null || return 1
		i=$((i + 1))
	done
	if [ "$1" = 1 ]; then
		dd if=/dev/zero of=$mnt/writer bs=1M count="$writer_mb" 2> /dev/null || return 1
	fi
	dd if=/dev/zero of=$mnt/paced bs=1M count="$paced_mb" 2> /dev/null && sync
}
check "eight $greedy_mb MiB files, the writer's and the paced reader's written" mkfiles 1
check "capped null_blk capped (20 MB/s, 0.5 ms completions)" sh -c "umount $mnt &&
	echo 0 > $cfg/nullb-lat/power && echo 20 > $cfg/nullb-lat/mbps &&
	echo 2 > $cfg/nullb-lat/irqmode && echo 500000 > $cfg/nullb-lat/completion_nsec &&
	echo 1 > $cfg/nullb-lat/power && mount -t vfat /dev/nullb-lat $mnt && test -s $mnt/paced"

greedy_jobs=
i=1
while [ $i -le 8 ]; do
	greedy_jobs="$greedy_jobs --name=greedy$i --filename=$mnt/greedy$i"
	i=$((i + 1))
done

# one DEV SCHED OUT PREFIX: the paced reader against the greedy ones under
# SCHED on DEV; a line to OUT, PREFIX first (none when empty).
one() {
	echo "$2" > "/sys/block/$1/queue/scheduler" || return 1
	# A disk queues 32 requests (NCQ) and blk-mq gives its scheduler 64;
	# one request at a time would give it 2 (2 x hw_queue_depth) to order
	# and share, so the disk-like device gets 64 as a disk would ("none"
	# has no scheduler tags: it keeps the driver's depth).
	[ "$1" != nullb-disk ] || [ "$2" = none ] ||
		echo 64 > "/sys/block/$1/queue/nr_requests" || return 1
	sync
	echo 3 > /proc/sys/vm/drop_caches
	fio --thread --output-format=terse --output=/tmp/greedy.out \
		--group_reporting --ioengine=psync --rw=read --bs=128k \
		--time_based --runtime="$secs" $greedy_jobs > /dev/null 2>&1 &
	g=$!
	sleep "$warmup"
	fio --thread --output-format=terse --output=/tmp/paced.out \
		--percentile_list=99:99.9 --name=paced --filename=$mnt/paced \
		--ioengine=psync --rw=read --bs=64k --rate=2m --prioclass=1 \
		--time_based --runtime=$((secs - 2 * warmup)) > /dev/null 2>&1 || return 1
	wait $g || return 1
	echo "$4${4:+ }$2 $(terse /tmp/paced.out 18) $(terse /tmp/paced.out 19)" \
		"$(terse /tmp/paced.out 39) $(terse /tmp/greedy.out 7)" >> "$3"
}
# ran DESC CMD...: check, and fail (1) if the command failed: a progress
# line follows a run that wrote its line.
ran() {
	_f=$_tap_failed
	check "$@"
	[ "$_tap_failed" = "$_f" ]
}

# lastrun FILE: the figures of FILE's last line, for the progress lines.
lastrun() { tail -n 1 "$1" | awk '{ printf "p99 %s us, max %s us, greedy %s KiB/s", $(NF - 3), $(NF - 1), $NF }'; }
for s in $scheds; do
	ran "latency run under $s" one nullb-lat "$s" "$lat" "" &&
		diag "paced reader beside 8 greedy readers, capped device, $s: $(lastrun "$lat")"
done

# rt_share DEV SCHED: the real-time reader and the best-effort writer under
# SCHED; the device's reads and writes in the middle of their run.
rt_share() {
	echo "$2" > "/sys/block/$1/queue/scheduler" || return 1
	sync
	echo 3 > /proc/sys/vm/drop_caches
	fio --thread --output-format=terse --output=/tmp/writer.out \
		--name=be --filename=$mnt/writer --size="${writer_mb}m" \
		--ioengine=psync --rw=write --bs=128k --fsync=32 \
		--time_based --runtime="$secs" > /dev/null 2>&1 &
	w=$!
	fio --thread --output-format=terse --output=/tmp/rt.out \
		--name=rt --filename=$mnt/greedy1 --direct=1 --ioengine=libaio \
		--iodepth=4 --rw=read --bs=128k --prioclass=1 \
		--time_based --runtime="$secs" > /dev/null 2>&1 &
	r=$!
	sleep "$warmup"
	r0=$(sectors "$1" 3)
	w0=$(sectors "$1" 7)
	t0=$(uptime_cs)
	sleep $((secs - 2 * warmup))
	r1=$(sectors "$1" 3)
	w1=$(sectors "$1" 7)
	t1=$(uptime_cs)
	wait $w || return 1
	wait $r || return 1
	cs=$((t1 - t0))
	[ $cs -gt 0 ] || cs=1
	rs=n/a
	[ -r "/sys/block/$1/queue/iosched/rt_share" ] &&
		rs=$(cat "/sys/block/$1/queue/iosched/rt_share")
	echo "$2 $(((r1 - r0) * 100 / 2 / cs)) $(((w1 - w0) * 100 / 2 / cs)) $rs" >> "$share"
}
for s in $scheds; do
	ran "real-time reader beside a writer under $s" rt_share nullb-lat "$s" &&
		diag "real-time reader beside a writer, $s: read and written KiB/s, rt_share:" \
			"$(tail -n 1 "$share" | cut -d' ' -f2-)"
done
umount $mnt
echo 0 > $cfg/nullb-lat/power
rmdir $cfg/nullb-lat

nb=$cfg/nullb-disk
check "disk-like null_blk made (fast for now), FAT made and mounted" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo $((8 * greedy_mb + paced_mb + 64)) > $nb/size &&
	echo 1 > $nb/submit_queues && echo 1 > $nb/hw_queue_depth &&
	echo 256 > $nb/max_sectors && echo 0 > $nb/irqmode && echo 1 > $nb/power &&
	mkdosfs -F 32 /dev/nullb-disk > /dev/null && mount -t vfat /dev/nullb-disk $mnt"
check "eight $greedy_mb MiB files and the paced reader's written" mkfiles 0
check "disk-like null_blk slowed to $disk_nsec ns a request" sh -c "umount $mnt &&
	echo 0 > $nb/power && echo 2 > $nb/irqmode &&
	echo $disk_nsec > $nb/completion_nsec && echo 1 > $nb/power &&
	mount -t vfat /dev/nullb-disk $mnt && test -s $mnt/paced"
for s in $scheds; do
	ran "latency run on the disk-like device under $s" one nullb-disk "$s" "$latdisk" disk &&
		diag "paced reader beside 8 greedy readers, disk-like device, $s: $(lastrun "$latdisk")," \
			"nr_requests $(cat /sys/block/nullb-disk/queue/nr_requests)"
done
umount $mnt
echo 0 > $nb/power
rmdir $nb

# ubd on a host file: the guest's first disk, the harness's FAT image.  Its
# reads go to the host (its page cache, most likely) through one ubd thread:
# what a guest on a host file gets, not what a disk does.
check "FAT on ubda mounted" sh -c "mount -t vfat /dev/ubda $mnt"
check "eight $greedy_mb MiB files and the paced reader's written on ubda" mkfiles 0
for s in $scheds; do
	ran "latency run on ubda under $s" one ubda "$s" "$latubd" ubd &&
		diag "paced reader beside 8 greedy readers, ubd, $s: $(lastrun "$latubd")"
done
check "the files removed from ubda, unmounted" sh -c "rm -f $mnt/greedy[1-8] $mnt/paced &&
	umount $mnt"

# abissd for the IOPS runs beside a stream.  Not through check: abissd must
# stay in this shell.
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; fi
check "uncapped null_blk made (memory backed), FAT and the stream's file on it" sh -c "
	mkdir $cfg/nullb-iops && echo 1 > $cfg/nullb-iops/memory_backed &&
	echo 1024 > $cfg/nullb-iops/size && echo 1 > $cfg/nullb-iops/power &&
	mkdosfs -F 32 /dev/nullb-iops > /dev/null && mount -t vfat /dev/nullb-iops $mnt &&
	dd if=/dev/zero of=$mnt/stream bs=1M count=$iops_stream_mb 2> /dev/null && sync"
# iops_one SCHED alone|with_rt|with_stream: the random readers under SCHED;
# with_rt beside the paced real-time reader (started first, so that it runs
# throughout; it reads at 2 MB/s however long it waits to start);
# with_stream beside the ABISS stream, once it is active (started with
# cold caches, so that its refills read the device; it reads 3 s longer
# than the random readers, so that it runs throughout).
iops_one() {
	echo "$1" > /sys/block/nullb-iops/queue/scheduler || return 1
	case $2 in
	with_rt)
		fio --thread --output-format=terse --output=/tmp/rt.out \
			--name=rt --filename=/dev/nullb-iops --direct=1 \
			--ioengine=psync --rw=read --bs=64k --rate=2m --prioclass=1 \
			--time_based --runtime="$iops_secs" > /dev/null 2>&1 &
		r=$! ;;
	with_stream)
		sync
		echo 3 > /proc/sys/vm/drop_caches
		rdrt -a -j -r 2MB -s 64k -b 4M -t $((iops_secs + 3)) $mnt/stream \
			> /tmp/stream.json 2> /tmp/stream.err &
		r=$!
		# Active within 5 s (debugfs: column 13 is the state).
		_n=0
		until awk 'NR > 1 && $13 == "active" { a = 1 } END { exit !a }' \
			/sys/kernel/debug/abiss/streams; do
			_n=$((_n + 1))
			if [ $_n -ge 50 ] || ! kill -0 $r 2> /dev/null; then
				wait $r
				echo "no active stream: $(head -n 1 /tmp/stream.err)"
				return 1
			fi
			sleep 0.1
		done ;;
	esac
	fio --thread --output-format=terse --output=/tmp/iops.out \
		--group_reporting --name=rand --filename=/dev/nullb-iops \
		--direct=1 --ioengine=libaio --iodepth=32 --numjobs=2 \
		--rw=randread --bs=4k --time_based --runtime="$iops_secs" > /dev/null 2>&1 || return 1
	case $2 in
	with_rt)
		wait $r || return 1
		echo "$1 with_rt $(terse /tmp/iops.out 8) $(terse /tmp/rt.out 7)" \
			"$(terse /tmp/rt.out 39)" >> "$iopsrt" ;;
	with_stream)
		wait $r || { echo "rdrt failed: $(head -n 1 /tmp/stream.err)"; return 1; }
		_j=$(cat /tmp/stream.json)
		_ns=$(json_field "$_j" run_time_ns)
		[ "${_ns:-0}" -gt 0 ] || _ns=1
		echo "$1 with_stream $(terse /tmp/iops.out 8)" \
			"$(($(json_field "$_j" bytes) * 1000000000 / 1024 / _ns))" \
			"$(($(json_field "$_j" worst_latency_ns) / 1000)) $(json_field "$_j" misses)" \
			>> "$iopsst" ;;
	*)
		echo "$1 $(terse /tmp/iops.out 8)" >> "$iops"
		echo "$1 alone $(terse /tmp/iops.out 8)" >> "$iopsrt" ;;
	esac
}
order=$scheds
round=1
while [ $round -le "$rounds" ]; do
	for s in $order; do
		for k in $iops_runs; do
			case $k in
			alone) d="4k random reads under $s, round $round" ;;
			with_rt) d="4k random reads beside a real-time reader under $s, round $round" ;;
			*) d="4k random reads beside an ABISS stream under $s, round $round" ;;
			esac
			ran "$d" iops_one "$s" "$k" || continue
			case $k in
			alone) f=$iops ;;
			with_rt) f=$iopsrt ;;
			*) f=$iopsst ;;
			esac
			diag "$d: $(tail -n 1 "$f" | awk '{ print $(NF == 2 ? 2 : 3) }') IOPS"
		done
	done
	case $order in
	*' '*) order="${order#* } ${order%% *}" ;;
	esac
	round=$((round + 1))
done
umount $mnt
echo 0 > $cfg/nullb-iops/power
rmdir $cfg/nullb-iops
abissd_stop
done_testing
