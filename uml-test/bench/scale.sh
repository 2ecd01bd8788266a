# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test: no thresholds), run in the guest by
# uml-test/bench/run (issue 14, scenarios c to f): many ABISS streams at
# once, each an rdrt (64 KiB reads, admitted by abissd with its capacity
# raised to 1 GB/s, so that its 85 % ceiling is out of the way), on FAT on
# null_blk under the abiss scheduler (or BENCH_SCALE_SCHED).  Each run
# starts from a cold cache but for the FAT's own blocks (fat_warm),
# launches its N streams at once
# and, once all are active (BENCH_SCALE_START s at most) and, beside the
# greedy readers, BENCH_SCALE_SETTLE s more (their buffers filled: the
# steady state), measures them for BENCH_SECS s (the window); each stream
# reads that long and as long again as it was allowed to start and
# settle, so that all of them read through the window.
#
#   reservable  (c) On the capped null_blk (20 MiB/s, a token bucket
#               refilled every 20 ms; irqmode=2, 0.5 ms completions) beside
#               8 greedy buffered readers (fio, 128 KiB reads): N streams
#               of 1 MB/s, 2 MiB of buffer each, their data verified
#               (rdrt -v), each N a fresh run (the load started again),
#               N = 1 2 4 8 12 14 16 17 18 19 20 until the first N with a
#               miss or a failed stream.  First the device's bandwidth
#               alone: one sequential O_DIRECT reader (fio, 128 KiB, libaio
#               depth 8) for BENCH_BW_SECS.  The report divides the largest
#               N without a miss (x 1 MB/s) by it: the fraction reservable.
#   small       (d) On the same device beside the same readers: 32 streams
#               of 256 kB/s (512 KiB of buffer each, 2 s as in c).
#   busy        (e) Scenario a of streams.sh (one 2 MB/s stream, 4 MiB of
#               buffer, beside the 8 greedy readers, on the capped device)
#               read by rdrt at normal CPU priority, without and with 2
#               CPU-bound busy loops (sh loops) in the guest: here rather
#               than in streams.sh, so that both runs are in one boot and
#               a streams boot stays as it was.
#   cost        (f) On an uncapped null_blk (irqmode=0: completions in the
#               submitter, no timer), no other load: N = 1, 16, 64 streams
#               sharing 16 MB/s (16/N MB/s each, 1 s of buffer each), data
#               not verified (that would add rdrt's own CPU per MB).  The
#               total is the same for each N, so that CPU time per MB shows
#               only what more streams cost (at a fixed 1 MB/s each, the
#               guest's own background CPU would be spread over 1 MB/s
#               with one stream, over 64 MB/s with 64); 16 MB/s rather than
#               64 because each run's files must outlast it in a
#               memory-backed null_blk (16 MB/s x 15 s = 240 MB) in a
#               1 GiB guest.  Each N gets a fresh device (its memory freed
#               after).  In the window: the guest's CPU time (/proc/stat:
#               user, nice, system, irq, softirq, steal) and the refill
#               workers' (utime + stime of the "abiss-refill/..." kernel
#               threads, /proc/PID/stat), each over the bytes the streams
#               delivered meanwhile (debugfs, "delivered").  In UML both
#               are samples: the scheduler's clock is jiffies, so a task is
#               charged 10 ms for each 100 Hz tick that finds it running.
#
# Appends a JSON line per run to $BENCH_DIR/bench-scale.jsonl: "scenario"
# (bandwidth, reservable, small, busy or cost), "device", "fs", "sched",
# "secs", and for the bandwidth run "bw_Bps"; for the others "n" streams,
# "rate_Bps" (each), "buffer" (bytes each), "greedy" (readers), "busy"
# (loops); of the whole run of each stream "misses" (sum), "worst_ns"
# (the worst read of any stream), "p99_ns" (the worst of their p99s),
# "worst_lag_ns" (the furthest a reader was behind its schedule: its own
# CPU delay), "worst_refill_ns", "late_refills" and "refills" (sum),
# "bytes" (read by the streams), "failed" (streams that failed, refused or
# read wrong data; "why", the first failure, if one did), "verified" (1 if
# the data was checked); "start_ms" (launch to all active) and of the
# window "window_ms", "cpu_pct" (the guest's CPU busy) and beside the
# greedy readers "greedy_KiBps" (what the readers themselves got: fio's
# own byte counts at the window's ends, lib/greedy.sh), and as checks of
# it "greedy_dev_KiBps" (the device bytes of the readers' cgroup,
# io.stat) and "others_KiBps" (all the device read, /sys/block/DEV/stat,
# less what the streams had read, their bytes delivered and pages held
# ahead, from debugfs), "streams_dev_KiBps" (the device bytes of the
# streams' cgroup: their refills are charged to it), "settle_ms" and
# "greedy_fill_KiBps" (fio's count from all active to the window); for
# cost runs
# "window_bytes" (delivered), "cpu_ms", "cpu_ms_per_MB", "nonidle_ms" and
# "nonidle_ms_per_MB" (the window less the guest's idle time: with NO_HZ
# idle time is measured, not sampled), "refill_ms", "refill_ms_per_MB"
# (MB: 10^6 bytes).  A cost run that could not be made
# has "error" instead of figures.  TAP on stdout: a check per step, a diag
# line per run as it ends.
#
# Environment (uml-test/run -e NAME=VALUE; lists: blanks or + between):
#   BENCH_SECS             seconds each run's window takes (default 6)
#   BENCH_DIR              where results go (default /results)
#   BENCH_SCALE_SCENARIOS  default "reservable small busy cost"
#   BENCH_SCALE_NS         the Ns of reservable (default above)
#   BENCH_SCALE_SMALL_N    the streams of small (default 32)
#   BENCH_SCALE_BUSY       the busy loops of each busy run (default "0 2")
#   BENCH_SCALE_COST_NS    the Ns of cost (default "1 16 64")
#   BENCH_SCALE_COST_RATE  bytes/s the cost streams share (default 16000000)
#   BENCH_SCALE_START      seconds a run allows its streams to start
#                          (default 4): they read that much longer
#   BENCH_SCALE_SETTLE     seconds between all active and the window,
#                          beside the greedy readers (default 4; 0: the
#                          window includes the buffers' first fill)
#   BENCH_BW_SECS          seconds the bandwidth is measured (default 4; at
#                          most BENCH_SECS)
#   BENCH_GREEDY_MB        each greedy reader's file (default 8)
#   BENCH_WARMUP           seconds the load runs before the streams
#                          (default 2)
#   BENCH_HOST_HOGS        set by uml-test/bench/run when the host runs
#                          that many CPU-bound loops beside this guest
#                          (--only host-cpu): the busy runs are then
#                          scenario "busy-host", with "host_hogs" in their
#                          JSON (default 0: none)
#   BENCH_SCALE_OUT        the JSON lines' file in BENCH_DIR (default
#                          bench-scale.jsonl)
#   BENCH_SCALE_SCHED      the devices' scheduler (default abiss; e.g.
#                          mq-deadline, to compare refill engines of
#                          kernels whose abiss elevators differ)
#   BENCH_SCALE_RT_PRIO    run the streams' readers at this SCHED_FIFO
#                          priority (rdrt -R; "rt_prio" in the JSON;
#                          default: normal scheduling, "rt_prio":0)
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
. /abiss/uml-test/lib/greedy.sh

secs=${BENCH_SECS:-6}
dir=${BENCH_DIR:-/results}
scenarios=$(echo "${BENCH_SCALE_SCENARIOS:-reservable small busy cost}" | tr + ' ')
ns=$(echo "${BENCH_SCALE_NS:-1 2 4 8 12 14 16 17 18 19 20}" | tr + ' ')
small_n=${BENCH_SCALE_SMALL_N:-32}
busy_list=$(echo "${BENCH_SCALE_BUSY:-0 2}" | tr + ' ')
cost_ns=$(echo "${BENCH_SCALE_COST_NS:-1 16 64}" | tr + ' ')
cost_rate=${BENCH_SCALE_COST_RATE:-16000000}
start_secs=${BENCH_SCALE_START:-4}
settle=${BENCH_SCALE_SETTLE:-4}
bw_secs=${BENCH_BW_SECS:-4}
[ "$bw_secs" -le "$secs" ] || bw_secs=$secs
greedy_mb=${BENCH_GREEDY_MB:-8}
warmup=${BENCH_WARMUP:-2}
fs=vfat
jsonl=$dir/${BENCH_SCALE_OUT:-bench-scale.jsonl}
host_hogs=${BENCH_HOST_HOGS:-0}
rt_prio=${BENCH_SCALE_RT_PRIO:-}
sched=${BENCH_SCALE_SCHED:-abiss}
busy_sc=busy
[ "$host_hogs" = 0 ] || busy_sc=busy-host
mnt=/mnt/scale
cfg=/sys/kernel/config/nullb
streams=/sys/kernel/debug/abiss/streams
# The per-stream figures of each scenario: rate (bytes/s) and buffer.
c_rate=1000000 c_buf=2097152
d_rate=256000 d_buf=524288
e_rate=2000000 e_buf=4194304

has() { case " $scenarios " in *" $1 "*) return 0 ;; esac; return 1; }

# The plan: abissd; on the capped device, if a scenario runs there, the
# device and its files, then a check per run; per cost run one.
capped=0
for s in reservable small busy; do has $s && capped=1; done
nplan=1
[ $capped = 0 ] || nplan=$((nplan + 1))
if has reservable; then
	set -- $ns
	nplan=$((nplan + 1 + $#))
fi
has small && nplan=$((nplan + 1))
if has busy; then
	set -- $busy_list
	nplan=$((nplan + $#))
fi
if has cost; then
	set -- $cost_ns
	nplan=$((nplan + $#))
fi
plan $nplan

mkdir -p "$dir"

# dev_read DEV: bytes read by DEV so far.
dev_read() {
	read -r _r1 _r2 _rs _rest < "/sys/block/$1/stat"
	echo $((_rs * 512))
}

# uptime_cs: seconds since boot in hundredths.
uptime_cs() {
	read -r _u _rest < /proc/uptime
	echo $((${_u%.*} * 100 + $(echo "${_u#*.}" | sed 's/^0//')))
}

# cpu_read: the guest's CPU time so far, in USER_HZ ticks (100 a second):
# $cpu_busy (user, nice, system, irq, softirq, steal: samples of the
# tick), $cpu_idle (idle and iowait: with NO_HZ, measured as the idle
# task sleeps) and $cpu_all.
cpu_read() {
	read -r _c _us _ni _sy _id _io _ir _si _st _rest < /proc/stat
	cpu_busy=$((_us + _ni + _sy + _ir + _si + _st))
	cpu_idle=$((_id + _io))
	cpu_all=$((cpu_busy + cpu_idle))
}

# refill_pids: $refill_pids, the refill workers' ("abiss-refill/DISK"
# kernel threads) alive now.  Builtins only; not wchan (UML KASAN).
refill_pids() {
	refill_pids=
	for _s in /proc/[0-9]*/stat; do
		{ read -r _l < "$_s"; } 2> /dev/null || continue
		case $_l in
		*"(abiss-refill/"*) refill_pids="$refill_pids ${_l%% *}" ;;
		esac
	done
}

# refill_us: $refill, the CPU time of the workers of refill_pids in us:
# utime + stime of /proc/PID/stat (USER_HZ, 100 a second).  Builtins only.
# UML's scheduler clock is jiffies (HZ 100), so a thread's CPU time, here
# or in /proc/PID/sched, is a sample: 10 ms for each tick it was running at.
refill_us() {
	refill=0
	for _p in $refill_pids; do
		{ read -r _l < "/proc/$_p/stat"; } 2> /dev/null || continue
		set -- ${_l##*) }
		refill=$((refill + (${12} + ${13}) * 10000))
	done
}

# active: the number of active streams (debugfs), what they have
# delivered and what they have had read from the disk (delivered, plus
# the pages held ahead), in $active, $delivered and $fetched.
active() {
	set -- $(awk 'NR > 1 && $13 == "active" { n++; d += $9; h += $8 }
		END { printf "%d %.0f %.0f\n", n, d, d + h * 4096 }' "$streams")
	active=$1 delivered=$2 fetched=$3
}

# greedy_now DEV: beside the greedy readers, fio marked and the device
# bytes of the readers' and the streams' cgroups: $g_mark, $g_dev, $s_dev.
greedy_now() {
	g_mark= g_dev=0 s_dev=0
	[ -n "$greedy_pid" ] || return 0
	fio_mark "$greedy_pid"
	g_mark=$fio_marked
	cg_rbytes bench-greedy "$1"
	g_dev=$cg_rbytes
	cg_rbytes bench-streams "$1"
	s_dev=$cg_rbytes
}

# measure N DEV: once the N streams of launch are all active (waiting
# start_secs at most), a window of $secs: $start_cs (launch to all
# active), $win_cs, $win_bytes (what they delivered), $win_greedy (what
# DEV read for others: all it read, less what the streams had read),
# $win_cpu, $win_idle and $win_all (the guest's busy, idle and all CPU
# ticks), $win_refill
# (the refill workers' CPU, us).  $merr says why there was no window.
measure() {
	merr= start_cs=0 win_cs=0 win_bytes=0 win_greedy=0 win_cpu=0 win_idle=0 win_all=0
	win_refill=0 win_own= fill_own= win_gdev=0 win_sdev=0
	_l0=$(uptime_cs)
	_w=$((start_secs * 10))
	active
	while [ "$active" -lt "$1" ] && [ $_w -gt 0 ]; do
		sleep 0.1
		_w=$((_w - 1))
		active
	done
	start_cs=$(($(uptime_cs) - _l0))
	if [ "$active" -lt "$1" ]; then
		merr="only $active of $1 streams started in $start_secs s"
		return 1
	fi
	# Beside the greedy readers, the window opens once the streams have
	# filled their buffers: what is measured is the steady state.
	_oa= fill_cs=0
	_ta=$(uptime_cs)
	if [ -n "$greedy_pid" ] && [ "$settle" != 0 ]; then
		fio_mark "$greedy_pid"
		_oa=$fio_marked
		sleep "$settle"
	fi
	# The window: builtins only but for uptime_cs's sed, dev_read's
	# echo, sleep and active's awk.
	refill_pids
	active
	_d0=$delivered _f0=$fetched
	_b0=$(dev_read "$2")
	_t0=$(uptime_cs)
	greedy_now "$2"
	_o0=$g_mark _gd0=$g_dev _sd0=$s_dev
	cpu_read
	_c0=$cpu_busy _i0=$cpu_idle _a0=$cpu_all
	refill_us
	_r0=$refill
	sleep "$secs"
	greedy_now "$2"
	_o1=$g_mark _gd1=$g_dev _sd1=$s_dev
	refill_us
	cpu_read
	_t1=$(uptime_cs)
	_b1=$(dev_read "$2")
	active
	if [ "$active" -lt "$1" ]; then
		merr="$(($1 - active)) of $1 streams ended within the window"
		return 1
	fi
	win_cs=$((_t1 - _t0)) fill_cs=$((_t0 - _ta))
	win_bytes=$((delivered - _d0))
	win_greedy=$((_b1 - _b0 - (fetched - _f0)))
	[ $win_greedy -ge 0 ] || win_greedy=0
	if [ -n "$greedy_pid" ]; then
		win_own=$(fio_between /tmp/greedy.out "$_o0" "$_o1" 8)
		fill_own=$(fio_between /tmp/greedy.out "$_oa" "$_o0" 8)
		win_gdev=$((_gd1 - _gd0)) win_sdev=$((_sd1 - _sd0))
	fi
	win_cpu=$((cpu_busy - _c0)) win_idle=$((cpu_idle - _i0)) win_all=$((cpu_all - _a0))
	win_refill=$((refill - _r0))
}

# size_k RATE BUFFER SECS: KiB of a stream's file that outlasts SECS of
# reading at RATE with BUFFER read ahead, with 1 MiB to spare.
size_k() { echo $(($1 * $3 / 1024 + $2 / 1024 + 1024)); }

# fat_warm DEV: read the start of DEV, its FAT32's reserved sectors, FATs
# and root folder (the first data cluster), into the page cache, where
# FAT's buffer heads find them.  Each run starts from a cold cache, but a
# stream's start maps its file through FAT's block lookup (fat_bmap), whose
# FAT reads are best-effort I/O: beside the greedy readers one start
# waited 5 to 10 s for them (2026-12-05).  Runs measure streams, not that.
fat_warm() {
	set -- "$1" $(od -An -tu2 -j11 -N2 "/dev/$1") $(od -An -tu2 -j14 -N2 "/dev/$1") \
		$(od -An -tu1 -j16 -N1 "/dev/$1") $(od -An -tu4 -j36 -N4 "/dev/$1")
	# bytes a sector, reserved sectors, FATs, sectors a FAT
	dd if="/dev/$1" of=/dev/null bs=1M count=$((($3 + $4 * $5) * $2 / 1048576 + 2)) 2> /dev/null
}

# --- the runs' streams -----------------------------------------------------

# launch N RATE BUFFER VERIFY SECS: N rdrt streams at once, stream I on
# $mnt/sI (seed 100 + I), their pids in $pids.
launch() {
	pids=
	_i=1
	while [ $_i -le "$1" ]; do
		rdrt -a ${4:+-v -S $((100 + _i))} ${rt_prio:+-R $rt_prio} -j -r "$2" -s 64k -b "$3" -t "$5" \
			"$mnt/s$_i" > "/tmp/scale$_i.json" 2> "/tmp/scale$_i.err" &
		pids="$pids $!"
		_i=$((_i + 1))
	done
}

# collect N: wait for the streams of launch and add up their results: in
# $res as JSON fields (misses worst_ns p99_ns worst_lag_ns worst_refill_ns
# late_refills refills bytes), $misses, $worst, $bytes_all, $buffers (the
# sum of their buffers), $failed (streams that exited non-zero, gave no
# result or read data not as written) and $why (the first failure).
collect() {
	_i=0 _bad=0 why=
	for _p in $pids; do
		_i=$((_i + 1))
		wait "$_p"
		_rc=$?
		[ $_rc = 0 ] && continue
		_bad=$((_bad + 1))
		[ -n "$why" ] || why="stream $_i: rdrt exited with $_rc: $(head -n 1 "/tmp/scale$_i.err")"
	done
	_i=1 _files=
	while [ $_i -le "$1" ]; do
		_files="$_files /tmp/scale$_i.json"
		_i=$((_i + 1))
	done
	set -- $(awk '
	function f(k,    m) {
		if (!match($0, "\"" k "\": [^,}]*")) return ""
		m = substr($0, RSTART, RLENGTH)
		sub(/.*: /, "", m)
		return m
	}
	function max(k, v) { if (v != "null" && v + 0 > M[k]) M[k] = v + 0 }
	/^\{/ {
		if (f("misses") == "null" || f("verified") == "false") next
		good++
		S["misses"] += f("misses"); S["refills"] += f("refills")
		S["late"] += f("late_refills"); S["bytes"] += f("bytes")
		S["buffer"] += f("buffer")
		max("worst", f("worst_latency_ns")); max("p99", f("p99_latency_ns"))
		max("lag", f("worst_lag_ns")); max("refill", f("worst_refill_ns"))
	}
	END {
		printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f\n", S["misses"], M["worst"], M["p99"],
			M["lag"], M["refill"], S["late"], S["refills"], S["bytes"], S["buffer"],
			good
	}' $_files)
	res="\"misses\":$1,\"worst_ns\":$2,\"p99_ns\":$3,\"worst_lag_ns\":$4,\"worst_refill_ns\":$5,\"late_refills\":$6,\"refills\":$7,\"bytes\":$8"
	# What the worst reads waited for (rdrt: the reader slept, was only
	# preempted, or neither): the worst of each kind, and how many reads
	# slept or were preempted, of all streams.
	res="$res,$(awk '
	function f(k,    m) {
		if (!match($0, "\"" k "\": [^,}]*")) return 0
		m = substr($0, RSTART, RLENGTH)
		sub(/.*: /, "", m)
		return m + 0
	}
	/^\{/ {
		if (f("worst_running_ns") > R) R = f("worst_running_ns")
		if (f("worst_preempted_ns") > P) P = f("worst_preempted_ns")
		if (f("worst_slept_ns") > S) S = f("worst_slept_ns")
		NP += f("preempted_reads"); NS += f("slept_reads"); N += f("reads")
	}
	END {
		printf "\"worst_running_ns\":%.0f,\"worst_preempted_ns\":%.0f,\"worst_slept_ns\":%.0f,", R, P, S
		printf "\"reads\":%.0f,\"preempted_reads\":%.0f,\"slept_reads\":%.0f\n", N, NP, NS
	}' $_files)"
	misses=$1 worst=$2 bytes_all=$8 buffers=$9
	failed=$((_i - 1 - ${10}))
	[ $failed -ge $_bad ] || failed=$_bad
	[ $failed = 0 ] || [ -n "$why" ] ||
		why="a stream read data not as written or gave no result"
}

# line SCENARIO FIELDS: a JSON line for a run.
line() {
	echo "{\"scenario\":\"$1\",\"device\":\"$device\",\"fs\":\"$fs\",\"sched\":\"$sched\",\"secs\":$secs,\"rt_prio\":${rt_prio:-0},$2}" >> "$jsonl"
}

# --- the capped device: c, d, e --------------------------------------------

cdev=nullb-scale

# capped_sizes: the KiB of $mnt/s1, s2 ...: each as long as the longest
# run that reads it needs, for the scenarios that run.
capped_sizes() {
	_nc=0
	if has reservable; then for _n in $ns; do [ "$_n" -le $_nc ] || _nc=$_n; done; fi
	_nd=0
	has small && _nd=$small_n
	_ne=0
	has busy && _ne=1
	_kc=$(size_k $c_rate $c_buf $((secs + start_secs + settle + 1)))
	_kd=$(size_k $d_rate $d_buf $((secs + start_secs + settle + 1)))
	_ke=$(size_k $e_rate $e_buf $((secs + start_secs + settle + 1)))
	_i=1
	while [ $_i -le $_nc ] || [ $_i -le $_nd ] || [ $_i -le $_ne ]; do
		_k=0
		[ $_i -gt $_nc ] || _k=$_kc
		[ $_i -gt $_nd ] || [ $_kd -le $_k ] || _k=$_kd
		[ $_i -gt $_ne ] || [ $_ke -le $_k ] || _k=$_ke
		echo $_k
		_i=$((_i + 1))
	done
}

# capped_make: the device made fast (irqmode=0, no cap), FAT and the files
# written (the streams' by rdrt, for -v), then powered off, capped and
# powered on again (a memory-backed null_blk keeps its data): the files at
# 20 MB/s would take minutes.
capped_make() {
	_nb=$cfg/$cdev
	_sizes=$(capped_sizes)
	# The files, a MiB each to spare, and room for FAT.
	_mb=$((8 * greedy_mb + 64))
	for _k in $_sizes; do _mb=$((_mb + _k / 1024 + 1)); done
	mkdir "$_nb" && echo 1 > "$_nb/memory_backed" && echo $_mb > "$_nb/size" &&
		echo 0 > "$_nb/irqmode" && echo 1 > "$_nb/power" &&
		mkdosfs -F 32 "/dev/$cdev" > /dev/null && mkdir -p $mnt &&
		mount -t vfat "/dev/$cdev" $mnt || return 1
	_i=1
	for _k in $_sizes; do
		rdrt --create "${_k}k" --seed $((100 + _i)) "$mnt/s$_i" > /dev/null || return 1
		_i=$((_i + 1))
	done
	for _i in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of="$mnt/greedy$_i" bs=1M count="$greedy_mb" 2> /dev/null ||
			return 1
	done
	sync
	umount $mnt && echo 0 > "$_nb/power" && echo 20 > "$_nb/mbps" &&
		echo 2 > "$_nb/irqmode" && echo 500000 > "$_nb/completion_nsec" &&
		echo 1 > "$_nb/power" && mount -t vfat "/dev/$cdev" $mnt &&
		echo "$sched" > "/sys/block/$cdev/queue/scheduler"
}

# greedy_start: the 8 greedy readers in one fio, $greedy_pid; buffered,
# each file's cached pages dropped at each pass (fio's invalidate), as in
# streams.sh.  They run until greedy_stop (the runtime is only a bound).
greedy_start() {
	_jobs=
	for _i in 1 2 3 4 5 6 7 8; do
		_jobs="$_jobs --name=greedy$_i --filename=$mnt/greedy$_i --rw=read"
	done
	cg_enter bench-greedy
	fio --thread --ioengine=psync --bs=128k --time_based \
		--runtime=$((secs * 3 + 120)) --output-format=terse \
		--output=/tmp/greedy.out $_jobs > /dev/null 2> /tmp/greedy.err &
	greedy_pid=$!
	cg_leave
	fio_ready "$greedy_pid" ||
		diag "the greedy fio does not catch SIGUSR1: its counts will be null"
}

# greedy_stop: TERM (see streams.sh: a background job ignores SIGINT).
greedy_stop() {
	kill -0 "$greedy_pid" 2> /dev/null ||
		diag "the greedy load had ended early: $(head -n 2 /tmp/greedy.err)"
	kill -TERM "$greedy_pid" 2> /dev/null
	wait "$greedy_pid"
	greedy_pid=
}

# bandwidth: the capped device's read bandwidth alone, one sequential
# O_DIRECT reader; a JSON line.
bandwidth() {
	fio --name=bw --filename="/dev/$cdev" --rw=read --direct=1 --bs=128k \
		--ioengine=libaio --iodepth=8 --time_based --runtime=$((bw_secs + 3)) \
		--output-format=terse --output=/tmp/bw.out > /dev/null 2> /tmp/bw.err &
	_p=$!
	# The window opens once fio reads (a slow guest may take seconds to
	# start it), at most 10 s after it was started.
	_b0=$(dev_read $cdev)
	_w=0
	while [ $_w -lt 10 ] && [ "$(dev_read $cdev)" = "$_b0" ]; do
		sleep 1
		_w=$((_w + 1))
	done
	_b0=$(dev_read $cdev)
	_t0=$(uptime_cs)
	sleep "$bw_secs"
	_b1=$(dev_read $cdev)
	_t1=$(uptime_cs)
	kill -TERM $_p 2> /dev/null
	wait $_p
	if [ $((_t1 - _t0)) -le 0 ] || [ $((_b1 - _b0)) -le 0 ]; then
		diag "bandwidth: $((_b1 - _b0)) bytes in $((_t1 - _t0)) cs; fio: $(cat /tmp/bw.err)"
		return 1
	fi
	bw=$(((_b1 - _b0) * 100 / (_t1 - _t0)))
	echo "{\"scenario\":\"bandwidth\",\"device\":\"$device\",\"fs\":\"$fs\",\"sched\":\"$sched\",\"secs\":$bw_secs,\"bw_Bps\":$bw}" >> "$jsonl"
	diag "bandwidth of the capped device alone: $bw B/s"
}

# loaded SCENARIO N RATE BUFFER BUSY: N streams at once beside the greedy
# readers on the capped device, with BUSY busy loops, measured in the
# window of measure; a JSON line; 1 if the run failed.
loaded() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	fat_warm $cdev
	busy_pids=
	_i=0
	while [ $_i -lt "$5" ]; do
		sh -c 'while :; do :; done' &
		busy_pids="$busy_pids $!"
		_i=$((_i + 1))
	done
	greedy_start
	sleep "$warmup"
	cg_enter bench-streams
	launch "$2" "$3" "$4" 1 $((secs + start_secs + settle + 1))
	cg_leave
	measure "$2" $cdev
	collect "$2"
	greedy_stop
	[ -z "$busy_pids" ] || { kill $busy_pids; wait $busy_pids; } 2> /dev/null
	[ -z "$merr" ] || why=${why:-$merr}
	_cs=$win_cs
	[ $_cs -gt 0 ] || _cs=1
	_g=$((win_greedy * 100 / 1024 / _cs))
	_own=null
	[ -z "$win_own" ] || _own=$((win_own * 100 / 1024 / _cs))
	_gdev=$((win_gdev * 100 / 1024 / _cs)) _sdev=$((win_sdev * 100 / 1024 / _cs))
	_fill=null
	[ -z "$fill_own" ] || [ "$fill_cs" -le 0 ] || _fill=$((fill_own * 100 / 1024 / fill_cs))
	_pct=0
	[ $win_all -le 0 ] || _pct=$((win_cpu * 100 / win_all))
	line "$1" "\"n\":$2,\"rate_Bps\":$3,\"buffer\":$4,\"greedy\":8,\"busy\":$5,\"host_hogs\":$host_hogs,$res,\"failed\":$failed,\"verified\":1,\"start_ms\":$((start_cs * 10)),\"settle_ms\":$((fill_cs * 10)),\"window_ms\":$((win_cs * 10)),\"greedy_KiBps\":$_own,\"greedy_fill_KiBps\":$_fill,\"greedy_dev_KiBps\":$_gdev,\"streams_dev_KiBps\":$_sdev,\"others_KiBps\":$_g,\"cpu_pct\":$_pct${why:+,\"why\":\"$(echo "$why" | tr -d '"\\')\"}"
	diag "$1: $2 x $3 B/s, $5 busy loops: $misses misses, worst read" \
		"$((worst / 1000)) us, all active after $((start_cs * 10)) ms; greedy (fio's" \
		"count) $_fill KiB/s while the buffers filled, then $_own KiB/s (its" \
		"cgroup's device reads $_gdev, the device less the streams $_g), CPU" \
		"$_pct %, $failed failed${why:+ ($why)}"
	[ "$failed" = 0 ] && [ -z "$merr" ]
}

# --- the uncapped device: f ------------------------------------------------

udev=nullb-cost

# cost N: N streams sharing $cost_rate on a fresh uncapped device, no other
# load; a JSON line; 1 if the run failed.
cost() {
	_r=$((cost_rate / $1))
	# A second of buffer in whole reads, at least 4.
	_buf=$(((_r + 65535) / 65536 * 65536))
	[ $_buf -ge 262144 ] || _buf=262144
	_dur=$((secs + start_secs + 1))
	_k=$(size_k $_r $_buf $_dur)
	_nb=$cfg/$udev
	_err=
	if ! { mkdir "$_nb" && echo 1 > "$_nb/memory_backed" &&
		echo $(($1 * (_k / 1024 + 1) + 64)) > "$_nb/size" &&
		echo 0 > "$_nb/irqmode" && echo 1 > "$_nb/power" &&
		echo "$sched" > "/sys/block/$udev/queue/scheduler" &&
		mkdosfs -F 32 "/dev/$udev" > /dev/null && mkdir -p $mnt &&
		mount -t vfat "/dev/$udev" $mnt; }; then
		_err="cannot make the uncapped device"
	else
		_i=1
		while [ $_i -le "$1" ]; do
			dd if=/dev/zero of="$mnt/s$_i" bs=64k count=$((_k / 64)) 2> /dev/null ||
				{ _err="cannot write the files"; break; }
			_i=$((_i + 1))
		done
	fi
	if [ -z "$_err" ]; then
		sync
		echo 3 > /proc/sys/vm/drop_caches
		fat_warm $udev
		launch "$1" $_r $_buf "" $_dur
		measure "$1" $udev || _err=$merr
		collect "$1"
		[ "$failed" = 0 ] || _err=${_err:-$why}
	fi
	umount $mnt 2> /dev/null
	[ ! -d "$_nb" ] || { echo 0 > "$_nb/power"; rmdir "$_nb"; }
	if [ -n "$_err" ]; then
		_err=$(echo "$_err" | tr -d '"\\')
		line cost "\"n\":$1,\"rate_Bps\":$_r,\"buffer\":$_buf,\"error\":\"$_err\""
		diag "cost: $1 x $_r B/s: FAILED: $_err"
		return 1
	fi
	_wb=$win_bytes
	_cpu=$((win_cpu * 10))
	# The same from the other side: the window less the idle time.
	_nidle=$(((win_cs - win_idle) * 10))
	[ $_nidle -ge 0 ] || _nidle=0
	_pct=0
	[ $win_all -le 0 ] || _pct=$((win_cpu * 100 / win_all))
	set -- "$1" $(awk -v c=$_cpu -v n=$_nidle -v r=$win_refill -v b=$_wb 'BEGIN {
		mb = b / 1e6
		printf "%.3f %.3f %.3f %.3f\n", r / 1000, (mb > 0 ? c / mb : 0),
			(mb > 0 ? r / 1000 / mb : 0), (mb > 0 ? n / mb : 0) }')
	line cost "\"n\":$1,\"rate_Bps\":$_r,\"buffer\":$_buf,\"greedy\":0,\"busy\":0,$res,\"failed\":0,\"verified\":0,\"start_ms\":$((start_cs * 10)),\"window_ms\":$((win_cs * 10)),\"window_bytes\":$_wb,\"cpu_pct\":$_pct,\"cpu_ms\":$_cpu,\"cpu_ms_per_MB\":$3,\"nonidle_ms\":$_nidle,\"nonidle_ms_per_MB\":$5,\"refill_ms\":$2,\"refill_ms_per_MB\":$4"
	diag "cost: $1 x $_r B/s: $_wb bytes in $((win_cs * 10)) ms, CPU $_cpu ms" \
		"($3 ms/MB, $_pct %; not idle $_nidle ms, $5 ms/MB), refill workers $2 ms" \
		"($4 ms/MB), $misses misses"
}

# --- the runs ---------------------------------------------------------------

# Not through check: abissd must stay in this shell.
if abissd_start 1GB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
greedy_pid=
cg_make bench-greedy && cg_make bench-streams ||
	bail "no cgroups bench-greedy and bench-streams (io controller)"
diag "$secs s per run; scenarios: $scenarios"

if [ $capped = 0 ]; then
	:
elif ! capped_make > /tmp/capped.out 2>&1; then
	fail "capped null_blk made, its files written, capped at 20 MB/s"
	diag "$(cat /tmp/capped.out)"
	bail "no capped device"
else
	pass "capped null_blk made, its files written, capped at 20 MB/s"
	device=capped
	if has reservable; then
		if bandwidth; then
			pass "the capped device's bandwidth alone"
		else
			fail "the capped device's bandwidth alone"
		fi
		stop=
		for n in $ns; do
			if [ -n "$stop" ]; then
				pass "reservable: $n streams # SKIP $stop"
				continue
			fi
			if loaded reservable "$n" $c_rate $c_buf 0; then
				pass "reservable: $n streams of 1 MB/s beside 8 greedy readers"
			else
				fail "reservable: $n streams of 1 MB/s beside 8 greedy readers"
			fi
			[ "$misses" = 0 ] && [ "$failed" = 0 ] ||
				stop="stopped after $n streams: $misses misses, $failed failed"
		done
	fi
	if has small; then
		if loaded small "$small_n" $d_rate $d_buf 0; then
			pass "small: $small_n streams of 256 kB/s beside 8 greedy readers"
		else
			fail "small: $small_n streams of 256 kB/s beside 8 greedy readers"
		fi
	fi
	if has busy; then
		for b in $busy_list; do
			if loaded $busy_sc 1 $e_rate $e_buf "$b"; then
				pass "$busy_sc: a 2 MB/s stream beside 8 greedy readers and $b busy loops"
			else
				fail "$busy_sc: a 2 MB/s stream beside 8 greedy readers and $b busy loops"
			fi
		done
	fi
	umount $mnt
	echo 0 > "$cfg/$cdev/power"
	rmdir "$cfg/$cdev"
fi

if has cost; then
	device=uncapped
	for n in $cost_ns; do
		if cost "$n"; then
			pass "cost: $n streams sharing $cost_rate B/s, no other load"
		else
			fail "cost: $n streams sharing $cost_rate B/s, no other load"
		fi
	done
fi
abissd_stop
rmdir /sys/fs/cgroup/bench-greedy /sys/fs/cgroup/bench-streams 2> /dev/null
done_testing
