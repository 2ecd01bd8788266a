# SPDX-License-Identifier: GPL-2.0
# Helpers for the stream tests: abissd, greedy load, rdrt results.
. /abiss/uml-test/lib/disk.sh

ABISSD_STATUS=/tmp/abissd.status
ABISSD_SOCKET=/tmp/abissd.sock

# abissd_start CAPACITY: abissd in the background, reservations in a file;
# returns once the file is there (or after 10 s, 1).
abissd_start() {
	abissd -F -C "$1" -p /tmp/abissd.pid -s "$ABISSD_STATUS" -S "$ABISSD_SOCKET" \
		> /dev/null 2> /tmp/abissd.log < /dev/null &
	ABISSD_PID=$!
	await 10 test -e "$ABISSD_STATUS"
}

abissd_stop() {
	kill "$ABISSD_PID" 2> /dev/null
	wait "$ABISSD_PID" 2> /dev/null
}

# abissd_reserved [WANT]: the sum of reserved rates abissd reports on its
# control socket, all devices; with WANT, once it is WANT (or after 10 s):
# the kernel tells abissd of a stream's end in its own time.
abissd_reserved() {
	_n=0
	while :; do
		_r=$(echo status | ctlclient "$ABISSD_SOCKET" | awk '$1 == "device" {
			for (i = 2; i < NF; i++) if ($i == "reserved") r += $(i + 1) }
			END { print r + 0 }')
		[ -z "${1:-}" ] || [ "$_r" = "$1" ] || [ $_n -ge 100 ] && break
		_n=$((_n + 1))
		sleep 0.1
	done
	echo "$_r"
}

LOAD_PIDS=
# load_loop BODY [ARG...]: 'while :; do BODY; done' in the background, in
# a session (and so a process group) of its own, BODY's $1... the ARGs:
# load_stop ends the loop and whatever it runs with one signal, however
# busy the guest.  setsid runs sh in place: a background job of a shell
# without job control leads no group, so setsid forks no more and $! is
# the group's id.
load_loop() {
	_body=$1
	shift
	setsid sh -c "while :; do $_body; done" sh "$@" < /dev/null &
	LOAD_PIDS="$LOAD_PIDS $!"
}

# load_readers DIR [SIZE]: 8 greedy readers of their own files of SIZE
# (24M; made unless uml-test/run put them there), caches dropped often so
# that they keep the disk busy.
load_readers() {
	for _i in 1 2 3 4 5 6 7 8; do
		[ -f "$1/greedy$_i" ] ||
			rdrt --create "${2:-24M}" --seed "$_i" "$1/greedy$_i" > /dev/null
	done
	for _i in 1 2 3 4 5 6 7 8; do
		load_loop 'cat "$1" > /dev/null' "$1/greedy$_i"
	done
	load_loop 'echo 1 > /proc/sys/vm/drop_caches; sleep 0.3'
}

# load_writers DIR: 8 greedy writers, each rewriting an 8 MiB file.
load_writers() {
	for _i in 1 2 3 4 5 6 7 8; do
		load_loop 'dd if=/dev/zero of="$1" bs=64k count=128 conv=fsync 2> /dev/null
			rm -f "$1"' "$1/writer$_i"
	done
}

# children_of PID: the pids of PID's children (busybox has no pkill).
children_of() {
	for _s in /proc/[0-9]*/stat; do
		{ read -r _l < "$_s"; } 2> /dev/null || continue
		_f=${_l##*) }
		_f=${_f#* }
		[ "${_f%% *}" = "$1" ] && echo "${_l%% *}"
	done
}

# load_stop: each loop's process group killed with one signal (no loop
# can start a child the signal misses), and the loops waited for: no walk
# of /proc, which takes minutes in a guest whose CPU the loops share with
# a busy host.
load_stop() {
	for _p in $LOAD_PIDS; do
		kill -KILL "-$_p" 2> /dev/null
	done
	for _p in $LOAD_PIDS; do
		wait "$_p" 2> /dev/null
	done
	LOAD_PIDS=
}

# json_field JSON NAME: a number or word field of rdrt --json output.
json_field() {
	echo "$1" | sed -n "s/.*\"$2\": \([^,}]*\).*/\1/p"
}

# check_stream NAME JSON RC: rdrt passed, verified its data, missed nothing.
check_stream() {
	is "$3" 0 "$1: rdrt exits 0"
	is "$(json_field "$2" verified)" true "$1: every byte as written"
	is "$(json_field "$2" misses)" 0 "$1: no read missed the playout buffer"
	diag "$1: worst read $(($(json_field "$2" worst_latency_ns) / 1000)) us," \
		"p99 $(($(json_field "$2" p99_latency_ns) / 1000)) us," \
		"worst refill $(($(json_field "$2" worst_refill_ns) / 1000)) us," \
		"$(json_field "$2" late_refills) late refills," \
		"worst lag $(($(json_field "$2" worst_lag_ns) / 1000)) us," \
		"$(json_field "$2" refills) refills"
	diag "$1: of $(json_field "$2" reads) reads $(json_field "$2" slept_reads) slept" \
		"(worst $(($(json_field "$2" worst_slept_ns) / 1000)) us)," \
		"$(json_field "$2" preempted_reads) were preempted" \
		"(worst $(($(json_field "$2" worst_preempted_ns) / 1000)) us), the others" \
		"took at most $(($(json_field "$2" worst_running_ns) / 1000)) us"
}

# ended PID: PID has exited (gone, or a zombie not yet reaped).
ended() {
	[ ! -e "/proc/$1/stat" ] || [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2> /dev/null)" = Z ]
}

# sh -c "$IN_CGROUP" CG CMD...: CMD run in the cgroup (v2) folder CG.  Not
# a function: CMD replaces that sh, so a background job's $! is CMD's pid.
IN_CGROUP='echo $$ > "$0/cgroup.procs" && exec "$@"'

# stream_of PID FIELD: a column of the stream that PID reads, from debugfs
# (Documentation/filesystems/abiss.rst: 9 delivered, 10 misses, 13 state).
stream_of() {
	awk -v p="$1" -v f="$2" '$2 == p { print $f }' /sys/kernel/debug/abiss/streams
}

# stream_stop NAME PID: a reader (rdrt -a -v) that the test runs until
# it has done its checks, its file long enough to outlast them, still
# reads (no read error, its data as written so far: -v ends it at the
# first wrong byte) in an active stream that has missed nothing; then it
# is stopped (2 tests).
stream_stop() {
	if kill -0 "$2" 2> /dev/null && [ "$(stream_of "$2" 13)" = active ] &&
		[ "$(stream_of "$2" 9)" -gt 0 ]; then
		pass "$1: still streaming when stopped, data as written"
	else
		fail "$1: still streaming when stopped, data as written"
		diag "$(cat /sys/kernel/debug/abiss/streams)"
	fi
	is "$(stream_of "$2" 10)" 0 "$1: no read missed the playout buffer"
	kill "$2"
	wait "$2" 2> /dev/null
}

# stream_under_load TYPE DEV: the must-show of the core: a 2 MB/s stream
# in 64 KiB reads over a 64 MiB file, by read() and by mmap, with 8 MiB
# (4 s) of playout buffer, run at real-time CPU priority, beside 8
# greedy readers, then beside 8 greedy writers.
stream_under_load() {
	mnt=/mnt/$1
	dir=$mnt/stream
	plan 16
	check "mount $2 as $1" mount_fs "$1" "$2" "$mnt" || bail "cannot mount"
	mkdir -p "$dir"
	# Not through check: abissd must stay in this shell.
	if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi
	# uml-test/run puts them on the disks from the host; made here otherwise.
	check "two 64 MiB stream files" sh -c "
		[ \$(stat -c %s $dir/s1) = 67108864 ] || rdrt --create 64M --seed 11 $dir/s1 &&
		[ \$(stat -c %s $dir/s2) = 67108864 ] || rdrt --create 64M --seed 12 $dir/s2"

	for load in readers writers; do
		load_$load "$dir"
		sleep 1
		rdrt -R 10 -a -r 2MB -s 64k -b 8M -v -S 11 -j "$dir/s1" \
			> /tmp/s1.json 2> /tmp/s1.err &
		p1=$!
		rdrt -R 10 -a -m -r 2MB -s 64k -b 8M -v -S 12 -j "$dir/s2" \
			> /tmp/s2.json 2> /tmp/s2.err &
		p2=$!
		wait $p1; rc1=$?
		wait $p2; rc2=$?
		load_stop
		check_stream "read() beside 8 greedy $load" "$(cat /tmp/s1.json)" $rc1
		check_stream "mmap beside 8 greedy $load" "$(cat /tmp/s2.json)" $rc2
		[ $rc1 = 0 ] && [ $rc2 = 0 ] || diag "$(cat /tmp/s1.err /tmp/s2.err)"
	done
	is "$(abissd_reserved 0)" 0 "abissd released both reservations"
	abissd_stop
	umount "$mnt"
}

# kthread_pid NAME: the pid of the one task whose name starts with NAME
# ("abiss-refill/", "abiss-map/": names are cut to 15 characters in
# /proc); nothing if there is none or more than one.
kthread_pid() {
	_w=
	for _s in /proc/[0-9]*/stat; do
		{ read -r _l < "$_s"; } 2> /dev/null || continue
		case "$_l" in
		*"($1"*) _w="$_w ${_l%% *}" ;;
		esac
	done
	set -- $_w
	[ $# = 1 ] && echo "$1"
}
