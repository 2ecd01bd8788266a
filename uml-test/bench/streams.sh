# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test: no thresholds), run in the guest by
# uml-test/bench/run (issue 14, scenarios a and b): one streaming reader,
# 2 MB/s in 64 KiB takes, beside 8 greedy buffered readers (scenario
# "readers") or 8 greedy buffered writers that fsync every 8 MiB
# ("writers"), on a FAT on null_blk:
#   capped  20 MB/s cap (a token bucket refilled every 20 ms), irqmode=2,
#           0.5 ms completions;
#   disk    one request at a time (hw_queue_depth=1, one submit queue),
#           irqmode=2, $BENCH_DISK_NSEC per request (default 6.5 ms),
#           requests of at most 128 KiB: bandwidth comes from service time,
#           about 20 MB/s in 128 KiB requests, as on a disk or SD card
#           (1 ms gave 110 MB/s: a 2 MB/s stream was 2 % of it).
# The contenders, each with a cold cache, in the same boot, all bench-reader
# (uml-test/prog/bench-reader.c) with the same rate, take size and buffer
# memory (4 MiB): an ABISS stream (admitted by abissd) under abiss,
# mq-deadline and bfq; a ring of 4 MiB filled by a real-time I/O class
# producer thread, and plain paced reads in the real-time I/O class, under
# none, mq-deadline, bfq, kyber and abiss.  Before them, per scenario, the
# greedy load alone ("greedy alone", under mq-deadline): what the device
# gives it with no stream.
#
# Appends a JSON line per contender to $BENCH_DIR/bench-streams.jsonl:
# bench-reader's object with "scenario", "device", "fs", "sched",
# "greedy_KiBps" (what the device read and wrote for others while the
# reader ran, from /sys/block/DEV/stat, less the reader's own bytes and
# buffer), "secs" and "trace" (its per-take trace, relative to BENCH_DIR)
# in front; a contender that failed gets "error" instead of figures.  TAP
# on stdout: a check per step, a diag line per contender as it ends.
#
# Environment (uml-test/run -e NAME=VALUE):
#   BENCH_SECS         seconds each reader runs (default 10)
#   BENCH_DIR          where results go (default /results)
#   BENCH_SCENARIOS    default "readers writers" (lists: blanks or + between)
#   BENCH_DEVICES      default "capped disk"
#   BENCH_CONTENDERS   MODE/SCHED words (default: the 13 above)
#   BENCH_GREEDY_MB    each greedy reader's file (default 32); a writer's is half
#   BENCH_DISK_NSEC    the disk device's time per request (default 6500000)
#   BENCH_WARMUP       seconds the load runs before the reader (default 2)
#   BENCH_FIFO         if set, every reader runs at this SCHED_FIFO priority
#                      (bench-reader --fifo); default: normal CPU scheduling
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

secs=${BENCH_SECS:-10}
dir=${BENCH_DIR:-/results}
# Lists: words separated by blanks or + (uml-test/run -e takes no blanks).
scenarios=$(echo "${BENCH_SCENARIOS:-readers writers}" | tr + ' ')
devices=$(echo "${BENCH_DEVICES:-capped disk}" | tr + ' ')
contenders=$(echo "${BENCH_CONTENDERS:-abiss/abiss abiss/mq-deadline abiss/bfq
	ring/none ring/mq-deadline ring/bfq ring/kyber ring/abiss
	plain/none plain/mq-deadline plain/bfq plain/kyber plain/abiss}" | tr + ' ')
greedy_mb=${BENCH_GREEDY_MB:-32}
writer_mb=$(((greedy_mb + 1) / 2))
disk_nsec=${BENCH_DISK_NSEC:-6500000}
warmup=${BENCH_WARMUP:-2}
rate=2M
rate_Bps=2000000
size=64k
buffer=4M
fs=vfat
jsonl=$dir/bench-streams.jsonl
mnt=/mnt/bench
cfg=/sys/kernel/config/nullb

# The stream's file outlasts the run with the buffer read ahead.
stream_mb=$((secs * rate_Bps / 1048576 + 9))

set -- $scenarios
nscen=$#
set -- $contenders
ncont=$#
set -- $devices
plan $((1 + $# * (2 + nscen * (1 + ncont))))

mkdir -p "$dir/traces"

# step DESC CMD...: check, and fail (1) if the command failed.
step() {
	_f=$_tap_failed
	check "$@"
	[ "$_tap_failed" = "$_f" ]
}

# jget JSON NAME: a number, word or string field of a flat JSON object.
jget() { echo "$1" | sed -n "s/.*\"$2\":\"*\([^,}\"]*\).*/\1/p"; }

# dev_bytes DEV: bytes read plus written by DEV so far.
dev_bytes() {
	read -r _r1 _r2 _rs _r4 _w1 _w2 _ws _rest < "/sys/block/$1/stat"
	echo $(((_rs + _ws) * 512))
}

# uptime_cs: seconds since boot in hundredths.
uptime_cs() {
	read -r _u _rest < /proc/uptime
	echo $((${_u%.*} * 100 + $(echo "${_u#*.}" | sed 's/^0//')))
}

# make_device NAME KIND SIZE_MB: a memory-backed null_blk.
make_device() {
	_nb=$cfg/$1
	mkdir "$_nb" && echo 1 > "$_nb/memory_backed" && echo "$3" > "$_nb/size" &&
		echo 2 > "$_nb/irqmode" || return 1
	case $2 in
	capped)
		echo 20 > "$_nb/mbps" && echo 500000 > "$_nb/completion_nsec" ;;
	disk)
		echo 1 > "$_nb/submit_queues" && echo 1 > "$_nb/hw_queue_depth" &&
			echo "$disk_nsec" > "$_nb/completion_nsec" &&
			echo 256 > "$_nb/max_sectors" ;;
	*)
		echo "no device kind '$2'"; return 1 ;;
	esac || return 1
	echo 1 > "$_nb/power"
}

# setup_device NAME KIND: the device, big enough for make_files, with a
# FAT mounted on $mnt.
setup_device() {
	make_device "$1" "$2" $((8 * greedy_mb + 8 * writer_mb + stream_mb + 64)) &&
		mkdosfs -F 32 "/dev/$1" > /dev/null && mkdir -p $mnt && mount -t vfat "/dev/$1" $mnt
}

remove_device() {
	umount "$mnt" 2> /dev/null
	echo 0 > "$cfg/$1/power"
	rmdir "$cfg/$1"
}

# make_files: the stream's file, 8 greedy readers' and 8 writers' files.
make_files() {
	dd if=/dev/zero of=$mnt/stream bs=1M count=$stream_mb 2> /dev/null || return 1
	for i in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of=$mnt/greedy$i bs=1M count="$greedy_mb" 2> /dev/null &&
			dd if=/dev/zero of=$mnt/writer$i bs=1M count="$writer_mb" 2> /dev/null ||
			return 1
	done
	sync
}

# load_start SCENARIO: the 8 greedy jobs in one fio, $load_pid; they run
# until load_stop (the runtime is only a bound).
load_start() {
	_jobs=
	for i in 1 2 3 4 5 6 7 8; do
		case $1 in
		readers) _jobs="$_jobs --name=greedy$i --filename=$mnt/greedy$i --rw=read" ;;
		writers) _jobs="$_jobs --name=writer$i --filename=$mnt/writer$i --rw=write" ;;
		esac
	done
	# Buffered; readers drop their file's cached pages at each pass
	# (invalidate, fio's default); writers fsync every 64 x 128 KiB.
	fio --thread --ioengine=psync --bs=128k --fsync=64 --time_based \
		--runtime=$((secs * 3 + 120)) --output-format=terse \
		--output=/tmp/greedy.out $_jobs > /dev/null 2> /tmp/greedy.err &
	load_pid=$!
}

# load_stop: TERM, not INT: sh starts a background job with SIGINT ignored,
# so an INT sent before fio has set its handlers (a short run on a busy
# host) is lost and fio runs out its --runtime.
load_stop() {
	kill -0 "$load_pid" 2> /dev/null ||
		diag "the greedy load had ended early: $(head -n 2 /tmp/greedy.err)"
	kill -TERM "$load_pid" 2> /dev/null
	wait "$load_pid"
}

# measure_start SCEN DEV: with a cold cache, the greedy load of SCEN
# started and warmed up, the measure starts: $_b0 and $_t0, DEV's bytes and
# the time.
measure_start() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	load_start "$1"
	sleep "$warmup"
	_b0=$(dev_bytes "$2")
	_t0=$(uptime_cs)
}

# measure_stop DEV: the measure ends, then the load: $_moved, the bytes DEV
# read and wrote since measure_start, in $_cs hundredths of a second.
measure_stop() {
	_t1=$(uptime_cs)
	_b1=$(dev_bytes "$1")
	load_stop
	_moved=$((_b1 - _b0))
	_cs=$((_t1 - _t0))
	[ $_cs -gt 0 ] || _cs=1
}

# one SCEN DEVKIND DEV MODE SCHED: a contender; its JSON line is appended.
one() {
	_name=$1-$2-$fs-$4-$5
	_trace=traces/$_name.trace
	_err=
	case $4 in
	abiss) _extra="--buffer $buffer" ;;
	ring) _extra="--buffer $buffer --rt" ;;
	*) _extra=--rt ;;
	esac
	[ -z "${BENCH_FIFO:-}" ] || _extra="$_extra --fifo $BENCH_FIFO"
	if ! echo "$5" > "/sys/block/$3/queue/scheduler"; then
		_err="cannot select the $5 scheduler"
	# 64 scheduler requests on the disk-like device, as a disk of NCQ
	# depth 32 gets (one request at a time would give 2 to order).
	elif [ "$2" = disk ] && [ "$5" != none ] &&
	     ! echo 64 > "/sys/block/$3/queue/nr_requests"; then
		_err="cannot set nr_requests under $5"
	else
		measure_start "$1" "$3"
		bench-reader --mode "$4" --rate $rate --size $size --seconds "$secs" \
			--label "$4" --trace "$dir/$_trace" $_extra $mnt/stream \
			> /tmp/reader.json 2> /tmp/reader.err
		_rc=$?
		measure_stop "$3"
		_j=$(cat /tmp/reader.json)
		[ $_rc = 0 ] && [ -n "$_j" ] ||
			_err="bench-reader exited with $_rc: $(head -n 1 /tmp/reader.err)"
	fi
	if [ -n "$_err" ]; then
		_err=$(echo "$_err" | tr -d '"\\')
		echo "{\"scenario\":\"$1\",\"device\":\"$2\",\"fs\":\"$fs\",\"sched\":\"$5\",\"label\":\"$4\",\"mode\":\"$4\",\"secs\":$secs,\"error\":\"$_err\"}" >> "$jsonl"
		diag "$1 on $2: $4 under $5: FAILED: $_err"
		return 1
	fi
	# The reader's own device bytes: what it took plus what it held.
	_own=$(($(jget "$_j" bytes) + $(jget "$_j" buffer)))
	_g=$(((_moved - _own) * 100 / 1024 / _cs))
	[ $_g -ge 0 ] || _g=0
	echo "{\"scenario\":\"$1\",\"device\":\"$2\",\"fs\":\"$fs\",\"sched\":\"$5\",\"greedy_KiBps\":$_g,\"secs\":$secs,\"trace\":\"$_trace\",${_j#\{}" >> "$jsonl"
	diag "$1 on $2: $4 under $5: p99 $(jget "$_j" p99_us) us, max $(jget "$_j" max_us) us," \
		"stalls $(jget "$_j" stalls), misses $(jget "$_j" misses), greedy $_g KiB/s"
}

# alone SCEN DEVKIND DEV: the greedy load alone under mq-deadline.
alone() {
	echo mq-deadline > "/sys/block/$3/queue/scheduler" || return 1
	measure_start "$1" "$3"
	sleep "$secs"
	measure_stop "$3"
	_g=$((_moved * 100 / 1024 / _cs))
	echo "{\"scenario\":\"$1\",\"device\":\"$2\",\"fs\":\"$fs\",\"sched\":\"mq-deadline\",\"label\":\"greedy alone\",\"mode\":\"none\",\"secs\":$secs,\"greedy_KiBps\":$_g}" >> "$jsonl"
	diag "$1 on $2: greedy alone: $_g KiB/s"
}

# Not through check: abissd must stay in this shell.
if abissd_start 20M; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
diag "$secs s per reader; devices: $devices; scenarios: $scenarios${BENCH_FIFO:+; readers at SCHED_FIFO $BENCH_FIFO}"
for kind in $devices; do
	dev=nullb-$kind
	step "$kind null_blk made, FAT made and mounted" setup_device "$dev" "$kind" ||
		bail "no $kind device"
	step "files made on the $kind device" make_files || bail "no files"
	for scen in $scenarios; do
		diag "scenario $scen, device $kind"
		if alone "$scen" "$kind" "$dev"; then
			pass "$scen on $kind: greedy load alone"
		else
			fail "$scen on $kind: greedy load alone"
		fi
		for c in $contenders; do
			if one "$scen" "$kind" "$dev" "${c%%/*}" "${c#*/}"; then
				pass "$scen on $kind: ${c%%/*} under ${c#*/}"
			else
				fail "$scen on $kind: ${c%%/*} under ${c#*/}"
			fi
		done
	done
	remove_device "$dev"
done
abissd_stop
done_testing
