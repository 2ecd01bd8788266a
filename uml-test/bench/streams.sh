# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test: no thresholds), run in the guest by
# uml-test/bench/run (issue 14, scenarios a and b): one streaming reader,
# 2 MB/s in 64 KiB takes, beside 8 greedy buffered readers (scenario
# "readers") or 8 greedy buffered writers that fsync every 8 MiB
# ("writers"), on a file system (FAT, "vfat", or ext3) on a device:
#   capped  null_blk, 20 MB/s cap (a token bucket refilled every 20 ms),
#           irqmode=2, 0.5 ms completions;
#   disk    null_blk, one request at a time (hw_queue_depth=1, one submit
#           queue), irqmode=2, $BENCH_DISK_NSEC per request (default
#           6.5 ms), requests of at most 128 KiB: bandwidth comes from
#           service time, about 20 MB/s in 128 KiB requests, as on a disk
#           or SD card (1 ms gave 110 MB/s: a 2 MB/s stream was 2 % of it);
#   ubd     a file of the host as a UML disk: the guest's FAT image (ubda)
#           or ext3 image (ubdb) that uml-test/run makes, the files in a
#           folder of their own (removed after); reads are served by the
#           host, most likely from its page cache, through one ubd thread.
# A null_blk's files are written with it fast (irqmode=0, no cap), then it
# is powered off, slowed and powered on again (a memory-backed null_blk
# keeps its data): 400 MiB at 20 MB/s would take 20 s a device.  FAT is
# made by mkdosfs; the guest has no mkfs.ext3 (busybox makes ext2 only), so
# ext3 on a null_blk is a copy of an empty ext3 image the host made
# ($BENCH_EXT3_IMAGE, uml-test/bench/run makes it): the blocks its
# "START COUNT" lines (4 KiB blocks, $BENCH_EXT3_IMAGE.extents) list, the
# rest left unwritten (a memory-backed null_blk reads zeros there).
# The contenders, each with a cold cache, in the same boot, with the same
# rate, read size and buffer memory (4 MiB): bench-reader
# (uml-test/prog/bench-reader.c) as an ABISS stream (admitted by abissd)
# under abiss, mq-deadline and bfq; a ring of 4 MiB filled by a real-time
# I/O class producer thread, and plain paced reads in the real-time I/O
# class, under none, mq-deadline, bfq, kyber and abiss; and an unmodified
# player through abiss-run (mode "abissrun"): fio, --rate 2000000 in 64 KiB
# psync reads, run by abiss-run --rate 2MB --buffer 4M, whose per-read
# latency is fio's (its latency log, "lat": the whole read() call).  Before
# them, per scenario, the greedy load alone ("greedy alone", under
# mq-deadline): what the device gives it with no stream.
#
# Appends a JSON line per contender to $BENCH_DIR/bench-streams.jsonl:
# bench-reader's object with "scenario", "device", "fs", "sched",
# "greedy_KiBps" (what the 8 greedy jobs read or wrote while the reader
# ran, by their own count: fio's, lib/greedy.sh; null if fio did not
# answer), "others_KiBps" (as a check of it: what the device read and
# wrote meanwhile, from /sys/block/DEV/stat, less the reader's own bytes
# and buffer), "secs", "trace" (its per-take trace, relative to BENCH_DIR)
# and for an ABISS stream "dev_trace" (the device's bytes every 0.2 s)
# in front; a contender that failed gets "error" instead of figures.  The
# abissrun line has the same fields, made from fio's: reads, p50_us,
# p99_us, p999_us, max_us (nearest rank, as bench-reader), stalls (reads
# over 1 ms), rate_Bps (delivered: bytes over fio's run time), cpu_ms (its
# user + system), bytes, "stream" (its id, from abiss-run --verbose: no
# stream started is a failed contender), and misses, refills and
# late_refills of its stream, sampled from debugfs every 0.1 s while fio
# ran (a miss in its last moments may be lost; null and no refills if the
# stream was never seen, as a short run on a loaded host can be).  TAP on
# stdout: a check per step, a diag line per contender as it ends.
#
# Environment (uml-test/run -e NAME=VALUE; lists: blanks or + between):
#   BENCH_SECS         seconds each reader runs (default 4)
#   BENCH_DIR          where results go (default /results)
#   BENCH_SCENARIOS    default "readers writers"
#   BENCH_DEVICES      default "capped" (all three: "capped disk ubd")
#   BENCH_FS           default "vfat" (ext3 too: "vfat ext3"); every file
#                      system on every device
#   BENCH_CONTENDERS   MODE/SCHED words (default: the 14 above); MODE is
#                      abiss, ring, plain (bench-reader) or abissrun
#   BENCH_GREEDY_MB    each greedy reader's file (default 32); a writer's is half
#   BENCH_DISK_NSEC    the disk device's time per request (default 6500000)
#   BENCH_WARMUP       seconds the load runs before the reader (default 2)
#   BENCH_FIFO         if set, every bench-reader runs at this SCHED_FIFO
#                      priority (bench-reader --fifo); default: normal CPU
#                      scheduling (fio under abiss-run always has it: the
#                      guest has no chrt)
#   BENCH_EXT3_IMAGE   the empty ext3 image for ext3 on a null_blk (default
#                      /results/nullb-ext3.img); without it, that device
#                      and file system is a failed step, the others run
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
. /abiss/uml-test/lib/greedy.sh

secs=${BENCH_SECS:-4}
dir=${BENCH_DIR:-/results}
# Lists: words separated by blanks or + (uml-test/run -e takes no blanks).
scenarios=$(echo "${BENCH_SCENARIOS:-readers writers}" | tr + ' ')
devices=$(echo "${BENCH_DEVICES:-capped}" | tr + ' ')
fss=$(echo "${BENCH_FS:-vfat}" | tr + ' ')
contenders=$(echo "${BENCH_CONTENDERS:-abiss/abiss abiss/mq-deadline abiss/bfq
	ring/none ring/mq-deadline ring/bfq ring/kyber ring/abiss
	plain/none plain/mq-deadline plain/bfq plain/kyber plain/abiss
	abissrun/abiss}" | tr + ' ')
greedy_mb=${BENCH_GREEDY_MB:-32}
writer_mb=$(((greedy_mb + 1) / 2))
disk_nsec=${BENCH_DISK_NSEC:-6500000}
warmup=${BENCH_WARMUP:-2}
ext3_image=${BENCH_EXT3_IMAGE:-/results/nullb-ext3.img}
rate=2MB
rate_Bps=2000000
size=64k
size_B=65536
buffer=4M
buffer_B=4194304
jsonl=$dir/bench-streams.jsonl
mnt=/mnt/bench
# The files, in a folder of their own: on ubd the file system is the
# harness's, with files of the tests beside.
fdir=$mnt/bench
cfg=/sys/kernel/config/nullb
streams=/sys/kernel/debug/abiss/streams

# The stream's file outlasts the run with the buffer read ahead.
stream_mb=$((secs * rate_Bps / 1048576 + 9))

set -- $scenarios
nscen=$#
set -- $contenders
ncont=$#
set -- $devices
ndev=$#
set -- $fss
plan $((1 + ndev * $# * (2 + nscen * (1 + ncont))))

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

# dev_sample FILE DEV T0: append "t_ms bytes" to FILE: DEV's bytes read
# plus written so far, t from T0 (uptime_cs).  dev_sampler FILE DEV T0:
# the same every 0.2 s, until killed.  The device's throughput over time,
# plotted beside an ABISS stream's buffer fill; the first and the last
# sample are taken by the caller (a fork may take a second in the busy
# guest).
dev_sample() { echo "$((($(uptime_cs) - $3) * 10)) $(dev_bytes "$2")" >> "$1"; }
dev_sampler() {
	while sleep 0.2; do
		dev_sample "$@"
	done
}

# uptime_cs: seconds since boot in hundredths.
uptime_cs() {
	read -r _u _rest < /proc/uptime
	echo $((${_u%.*} * 100 + $(echo "${_u#*.}" | sed 's/^0//')))
}

# files_mb: MiB the files of make_files take.
files_mb() { echo $((8 * greedy_mb + 8 * writer_mb + stream_mb)); }

# make_fs DEV FS: an empty FS on /dev/DEV.  ext3: the host's image, the
# blocks its extents list (the device reads zeros elsewhere).
make_fs() {
	case $2 in
	vfat)
		mkdosfs -F 32 "/dev/$1" > /dev/null ;;
	ext3)
		[ -s "$ext3_image" ] && [ -s "$ext3_image.extents" ] || {
			echo "no ext3 image $ext3_image (uml-test/bench/run makes it)"
			return 1
		}
		while read -r _s _n; do
			dd if="$ext3_image" of="/dev/$1" bs=4096 skip="$_s" seek="$_s" \
				count="$_n" conv=notrunc 2> /dev/null || return 1
		done < "$ext3_image.extents"
		sync ;;
	*)
		echo "no file system '$2' (vfat or ext3)"; return 1 ;;
	esac
}

# fs_size_mb FS: the null_blk's size for FS: for ext3 its image's.
fs_size_mb() {
	case $1 in
	ext3) echo $(($(stat -c %s "$ext3_image" 2> /dev/null || echo 0) / 1048576)) ;;
	*) echo $(($(files_mb) + 64)) ;;
	esac
}

# dev_of KIND FS: the block device of KIND for FS: ubd has a disk per file
# system (uml-test/lib/disk.sh).
dev_of() {
	case $1:$2 in
	ubd:ext3) echo ubdb ;;
	ubd:*) echo ubda ;;
	*) echo "nullb-$1" ;;
	esac
}

# setup_device KIND FS: the device of KIND (capped, disk, ubd), $dev, with
# FS mounted on $mnt and the folder $fdir made.  A null_blk is made fast,
# so that make_files is quick, and slowed by slow_device.  (Run by check,
# in a subshell: it sets nothing.)
setup_device() {
	case $1 in
	ubd)
		case $2 in
		vfat | ext3) ;;
		*) echo "no file system '$2' (vfat or ext3)"; return 1 ;;
		esac
		mkdir -p $mnt && mount -t "$2" "/dev/$dev" $mnt || return 1 ;;
	capped | disk)
		_nb=$cfg/$dev
		_mb=$(fs_size_mb "$2")
		[ "$_mb" -gt $(($(files_mb) + 16)) ] || {
			echo "the $2 image ($_mb MiB) is too small for $(files_mb) MiB of files"
			return 1
		}
		mkdir "$_nb" && echo 1 > "$_nb/memory_backed" && echo "$_mb" > "$_nb/size" &&
			echo 0 > "$_nb/irqmode" || return 1
		if [ "$1" = disk ]; then
			echo 1 > "$_nb/submit_queues" && echo 1 > "$_nb/hw_queue_depth" &&
				echo 256 > "$_nb/max_sectors" || return 1
		fi
		echo 1 > "$_nb/power" && make_fs "$dev" "$2" && mkdir -p $mnt &&
			mount -t "$2" "/dev/$dev" $mnt || return 1 ;;
	*)
		echo "no device kind '$1' (capped, disk or ubd)"; return 1 ;;
	esac
	mkdir -p "$fdir"
}

# slow_device KIND FS: a null_blk powered off, capped or slowed, powered
# on and mounted again; nothing for ubd.
slow_device() {
	[ "$1" != ubd ] || return 0
	_nb=$cfg/$dev
	umount $mnt && echo 0 > "$_nb/power" && echo 2 > "$_nb/irqmode" || return 1
	case $1 in
	capped)
		echo 20 > "$_nb/mbps" && echo 500000 > "$_nb/completion_nsec" ;;
	disk)
		echo "$disk_nsec" > "$_nb/completion_nsec" ;;
	esac || return 1
	echo 1 > "$_nb/power" && mount -t "$2" "/dev/$dev" $mnt && test -s "$fdir/stream"
}

# prepare KIND FS: the files made, the device slowed.
prepare() { make_files && slow_device "$1" "$2"; }

# remove_device KIND: the files and the device gone (ubd: the files, and
# its scheduler put back).
remove_device() {
	case $1 in
	ubd)
		rm -rf "$fdir"
		umount $mnt
		[ -z "$ubd_sched" ] || echo "$ubd_sched" > "/sys/block/$dev/queue/scheduler" ;;
	*)
		umount $mnt 2> /dev/null
		echo 0 > "$cfg/$dev/power"
		rmdir "$cfg/$dev" ;;
	esac
}

# make_files: the stream's file, 8 greedy readers' and 8 writers' files.
make_files() {
	dd if=/dev/zero of=$fdir/stream bs=1M count=$stream_mb 2> /dev/null || return 1
	for i in 1 2 3 4 5 6 7 8; do
		dd if=/dev/zero of=$fdir/greedy$i bs=1M count="$greedy_mb" 2> /dev/null &&
			dd if=/dev/zero of=$fdir/writer$i bs=1M count="$writer_mb" 2> /dev/null ||
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
		readers) _jobs="$_jobs --name=greedy$i --filename=$fdir/greedy$i --rw=read" ;;
		writers) _jobs="$_jobs --name=writer$i --filename=$fdir/writer$i --rw=write" ;;
		esac
	done
	# Buffered; readers drop their file's cached pages at each pass
	# (invalidate, fio's default); writers fsync every 64 x 128 KiB.
	fio --thread --ioengine=psync --bs=128k --fsync=64 --time_based \
		--runtime=$((secs * 3 + 120)) --output-format=terse \
		--output=/tmp/greedy.out $_jobs > /dev/null 2> /tmp/greedy.err &
	load_pid=$!
	fio_ready "$load_pid" ||
		diag "the greedy fio does not catch SIGUSR1: its counts will be null"
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
# the time; fio marked (lib/greedy.sh), $_m0.
measure_start() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	load_start "$1"
	sleep "$warmup"
	_b0=$(dev_bytes "$2")
	_t0=$(uptime_cs)
	fio_mark "$load_pid"
	_m0=$fio_marked
}

# measure_stop DEV: the measure ends, then the load: $_moved, the bytes DEV
# read and wrote since measure_start, and $_got, the bytes the greedy jobs
# themselves read or wrote meanwhile (fio's own counts; empty if fio did
# not answer), in $_cs hundredths of a second.
measure_stop() {
	_t1=$(uptime_cs)
	_b1=$(dev_bytes "$1")
	fio_mark "$load_pid"
	_m1=$fio_marked
	_got=$(fio_between /tmp/greedy.out "$_m0" "$_m1" 8)
	load_stop
	_moved=$((_b1 - _b0))
	_cs=$((_t1 - _t0))
	[ $_cs -gt 0 ] || _cs=1
}

# stream_watch: in the background until killed, every 0.1 s, the id,
# misses, refills and late refills of each stream at 2 MB/s that debugfs
# lists (one at a time here), to /tmp/watch.out.  Not a function's
# subshell that a kill would miss: a sh of its own, $watch_pid.
stream_watch() {
	: > /tmp/watch.out
	sh -c 'while :; do
		awk -v r="$1" "NR > 1 && \$5 == r { print \$1, \$10, \$11, \$15 }" "$0" \
			>> /tmp/watch.out 2> /dev/null
		sleep 0.1
	done' "$streams" "$rate_Bps" &
	watch_pid=$!
}

# player TRACE: the unmodified player, fio through abiss-run, on the
# stream's file; bench-reader's JSON object from its figures on stdout,
# its per-read trace ("t_ms latency_us") to TRACE.  1 (and why on stderr)
# if it failed.
player() {
	_tr=$1
	rm -f /tmp/player_*.log /tmp/player.json
	stream_watch
	abiss-run --rate $rate --buffer $buffer --verbose -- fio --thread --name=player \
		--filename=$fdir/stream --rw=read --bs=$size --ioengine=psync \
		--rate=$rate_Bps --invalidate=0 --runtime="$secs" \
		--write_lat_log=/tmp/player --log_avg_msec=0 \
		--output-format=json --output=/tmp/player.json > /dev/null 2> /tmp/player.err
	_prc=$?
	kill "$watch_pid" 2> /dev/null
	wait "$watch_pid" 2> /dev/null
	if [ $_prc != 0 ] || ! [ -s /tmp/player_lat.1.log ]; then
		echo "abiss-run fio exited with $_prc: $(grep -v '^$' /tmp/player.err | head -n 1)" >&2
		return 1
	fi
	# --verbose: "abiss-run: stream ID on 'FILE' at RATE bytes/s".
	_id=$(sed -n "s/^abiss-run: stream \([0-9]*\) on .*/\1/p" /tmp/player.err | head -n 1)
	if [ -z "$_id" ]; then
		echo "abiss-run started no stream: $(grep '^abiss-run: ' /tmp/player.err | head -n 1)" >&2
		return 1
	fi
	# fio's JSON: the read side's first io_bytes and runtime (ms), the
	# job's usr_cpu and sys_cpu (percent of its run).
	set -- $(awk -F' : ' '
		/"io_bytes"/ && b == "" { b = $2 + 0 }
		/"runtime"/ && $2 !~ /"/ && t == "" { t = $2 + 0 }
		/"usr_cpu"/ { u = $2 + 0 } /"sys_cpu"/ { s = $2 + 0 }
		END { printf "%.0f %.0f %.1f\n", b, t, (u + s) / 100 * t }' /tmp/player.json)
	_bytes=${1:-0} _run=${2:-0} _cpu=${3:-0}
	# The stream's last sample, if debugfs was read while it lived.
	_w=$(awk -v id="$_id" '$1 == id { l = $2 " " $3 " " $4 } END { print l }' /tmp/watch.out)
	if [ -n "$_w" ]; then
		set -- $_w
		_st="\"misses\":$1"
		_rf=",\"refills\":$2,\"late_refills\":$3"
	else
		_st="\"misses\":null"
		_rf=
	fi
	_rf="$_rf,\"stream\":$_id"
	# The lat log: "t_ms, lat_ns, dir, bs, offset" per read.
	awk -F', *' '{ printf "%d %.1f\n", $1, $2 / 1000 }' /tmp/player_lat.1.log > "$_tr"
	sort -n -k 2 "$_tr" | awk -v bytes="$_bytes" -v run="$_run" -v cpu="$_cpu" \
		-v rate=$rate_Bps -v size=$size_B -v buf=$buffer_B -v st="$_st" -v rf="$_rf" '
	{ l[++n] = $2; if ($2 > 1000) stalls++ }
	# nearest RANK PER_MILLE: as bench-reader (tools/lib/util.c).
	function rank(pm,    r) { if (!n) return 0; r = int((n * pm + 999) / 1000); return l[r ? r : 1] }
	END {
		# On schedule, the bytes took bytes/rate seconds however early
		# the last came (as bench-reader).
		span = bytes * 1000 / rate
		if (run > span) span = run
		printf "{\"label\":\"abiss-run fio\",\"mode\":\"abissrun\",\"reads\":%d", n
		printf ",\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f",
			rank(500), rank(990), rank(999), (n ? l[n] : 0)
		printf ",\"stalls\":%d,%s,\"rate_Bps\":%.0f,\"cpu_ms\":%.1f", stalls, st,
			(span > 0 ? bytes * 1000 / span : 0), cpu
		printf ",\"bytes\":%.0f,\"run_ms\":%.1f,\"rate_req_Bps\":%d,\"size\":%d",
			bytes, run, rate, size
		printf ",\"buffer\":%d,\"rt\":false,\"fifo\":0%s}\n", buf, rf
	}'
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
		_sampler=
		if [ "$4" = abiss ]; then
			_st=$(uptime_cs)
			: > "$dir/traces/$_name.dev"
			dev_sample "$dir/traces/$_name.dev" "$3" "$_st"
			dev_sampler "$dir/traces/$_name.dev" "$3" "$_st" &
			_sampler=$!
		fi
		if [ "$4" = abissrun ]; then
			player "$dir/$_trace" > /tmp/reader.json 2> /tmp/reader.err
		else
			bench-reader --mode "$4" --rate $rate --size $size --seconds "$secs" \
				--label "$4" --trace "$dir/$_trace" $_extra $fdir/stream \
				> /tmp/reader.json 2> /tmp/reader.err
		fi
		_rc=$?
		if [ -n "$_sampler" ]; then
			{ kill "$_sampler"; wait "$_sampler"; } 2> /dev/null
			dev_sample "$dir/traces/$_name.dev" "$3" "$_st"
		fi
		measure_stop "$3"
		_j=$(cat /tmp/reader.json)
		[ $_rc = 0 ] && [ -n "$_j" ] ||
			_err="$4 exited with $_rc: $(head -n 1 /tmp/reader.err)"
	fi
	if [ -n "$_err" ]; then
		_err=$(echo "$_err" | tr -d '"\\')
		echo "{\"scenario\":\"$1\",\"device\":\"$2\",\"fs\":\"$fs\",\"sched\":\"$5\",\"label\":\"$4\",\"mode\":\"$4\",\"secs\":$secs,\"error\":\"$_err\"}" >> "$jsonl"
		diag "$1 on $2, $fs: $4 under $5: FAILED: $_err"
		return 1
	fi
	# The reader's own device bytes: what it took plus what it held.
	_own=$(($(jget "$_j" bytes) + $(jget "$_j" buffer)))
	_o=$(((_moved - _own) * 100 / 1024 / _cs))
	[ $_o -ge 0 ] || _o=0
	_g=null
	[ -z "$_got" ] || _g=$((_got * 100 / 1024 / _cs))
	_dt=
	[ "$4" != abiss ] || _dt="\"dev_trace\":\"traces/$_name.dev\","
	echo "{\"scenario\":\"$1\",\"device\":\"$2\",\"fs\":\"$fs\",\"sched\":\"$5\",\"greedy_KiBps\":$_g,\"others_KiBps\":$_o,\"secs\":$secs,\"trace\":\"$_trace\",$_dt${_j#\{}" >> "$jsonl"
	diag "$1 on $2, $fs: $4 under $5: p99 $(jget "$_j" p99_us) us, max $(jget "$_j" max_us) us," \
		"stalls $(jget "$_j" stalls), misses $(jget "$_j" misses), greedy $_g KiB/s" \
		"(the device less the reader: $_o)"
}

# alone SCEN DEVKIND DEV: the greedy load alone under mq-deadline.
alone() {
	echo mq-deadline > "/sys/block/$3/queue/scheduler" || return 1
	measure_start "$1" "$3"
	sleep "$secs"
	measure_stop "$3"
	_o=$((_moved * 100 / 1024 / _cs))
	_g=null
	[ -z "$_got" ] || _g=$((_got * 100 / 1024 / _cs))
	echo "{\"scenario\":\"$1\",\"device\":\"$2\",\"fs\":\"$fs\",\"sched\":\"mq-deadline\",\"label\":\"greedy alone\",\"mode\":\"none\",\"secs\":$secs,\"greedy_KiBps\":$_g,\"others_KiBps\":$_o}" >> "$jsonl"
	diag "$1 on $2, $fs: greedy alone: $_g KiB/s (the device: $_o)"
}

# Not through check: abissd must stay in this shell.
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
diag "$secs s per reader; devices: $devices; file systems: $fss; scenarios: $scenarios${BENCH_FIFO:+; readers at SCHED_FIFO $BENCH_FIFO}"
for kind in $devices; do
	for fs in $fss; do
		dev=$(dev_of "$kind" "$fs")
		# ubd's scheduler is put back at the end (remove_device): the
		# harness's disk.
		ubd_sched=
		[ "$kind" != ubd ] ||
			ubd_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/$dev/queue/scheduler")
		# A device that cannot be made skips its runs (told, not
		# counted), so that the others still run.
		made=
		if step "$kind device made, $fs made and mounted" setup_device "$kind" "$fs"; then
			step "files made on $kind, $fs, and the device slowed" prepare "$kind" "$fs" &&
				made=1
		else
			pass "files made on $kind, $fs, and the device slowed # SKIP no device"
		fi
		if [ -z "$made" ]; then
			for scen in $scenarios; do
				pass "$scen on $kind, $fs: greedy load alone # SKIP no device"
				for c in $contenders; do
					pass "$scen on $kind, $fs: ${c%%/*} under ${c#*/} # SKIP no device"
				done
			done
			remove_device "$kind" 2> /dev/null
			continue
		fi
		for scen in $scenarios; do
			diag "scenario $scen, device $kind, $fs"
			if alone "$scen" "$kind" "$dev"; then
				pass "$scen on $kind, $fs: greedy load alone"
			else
				fail "$scen on $kind, $fs: greedy load alone"
			fi
			for c in $contenders; do
				if one "$scen" "$kind" "$dev" "${c%%/*}" "${c#*/}"; then
					pass "$scen on $kind, $fs: ${c%%/*} under ${c#*/}"
				else
					fail "$scen on $kind, $fs: ${c%%/*} under ${c#*/}"
				fi
			done
		done
		remove_device "$kind"
	done
done
abissd_stop
done_testing
