# SPDX-License-Identifier: GPL-2.0
# What a greedy load got, counted by the load itself (sourced by the
# bench scripts in uml-test/bench/): fio's own byte counts, asked of a
# running fio, and the device bytes of a cgroup (io.stat), so that the
# best-effort share beside streams is measured rather than derived.
#
# fio_ready PID: waits until fio PID catches SIGUSR1 (bit 10 of SigCgt in
# /proc/PID/status), 60 s at most by the clock: the signal's default
# action ends a process, and a fio just started on a busy guest may take
# many seconds to set its handlers.  Call it before a measuring window
# opens: fio_mark then only signals.  False if fio is gone or never did.
fio_ready() {
	read -r _fr_t0 _fr_rest < /proc/uptime
	_fr_t0=${_fr_t0%.*}
	while :; do
		_fr_c=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2> /dev/null)
		[ -n "$_fr_c" ] || return 1
		if [ $((0x${_fr_c#????????} & 0x200)) != 0 ]; then
			_fm_pid=$1 _fm_n=0
			return 0
		fi
		read -r _fr_t _fr_rest < /proc/uptime
		[ $((${_fr_t%.*} - _fr_t0)) -lt 60 ] || return 1
		sleep 0.1
	done
}

# fio_mark PID: asks fio PID (--output-format=terse --output=OUT) for its
# counts now: SIGUSR1, on which fio appends a terse line per job to OUT.
# Sets $fio_marked to the number of this mark of PID (1, 2, ...), for
# fio_sum; empty if fio_ready did not find PID ready (or it is gone).  One
# builtin: the guest's CPU is the greedy load's, and a process started or
# a file read a byte at a time by the shell's read takes a second there.
# Marks a second or more apart each get their own lines (signals sent
# sooner may merge).
fio_mark() {
	fio_marked=
	[ "$1" = "${_fm_pid:-}" ] || return 0
	kill -USR1 "$1" 2> /dev/null || return 0
	_fm_n=$((_fm_n + 1))
	fio_marked=$_fm_n
}

# fio_sum OUT K JOBS: the bytes fio had read and written at its mark K,
# summed over its JOBS jobs (the Kth JOBS terse lines of OUT, fields 6 and
# 47: KiB read and written so far); waits up to 5 s for them.  Empty if
# fio did not answer.
fio_sum() {
	_fb_w=50
	while [ "$(grep -c '^3;' "$1" 2> /dev/null)" -lt $(($2 * $3)) ] && [ $_fb_w -gt 0 ]; do
		sleep 0.1
		_fb_w=$((_fb_w - 1))
	done
	[ $_fb_w -gt 0 ] || return 0
	grep '^3;' "$1" | sed -n "$((($2 - 1) * $3 + 1)),$(($2 * $3))p" |
		awk -F';' '{ k += $6 + $47 } END { printf "%.0f\n", k * 1024 }'
}

# fio_between OUT M0 M1 JOBS: the bytes fio's JOBS jobs read and wrote
# between its marks M0 and M1 (fio_mark's $fio_marked); empty if a mark
# was not made or fio did not answer it.
fio_between() {
	[ -n "$2" ] && [ -n "$3" ] || return 0
	_fw_b0=$(fio_sum "$1" "$2" "$4")
	_fw_b1=$(fio_sum "$1" "$3" "$4")
	[ -z "$_fw_b0" ] || [ -z "$_fw_b1" ] || echo $((_fw_b1 - _fw_b0))
}

# cg_make NAME: the cgroup /sys/fs/cgroup/NAME (cgroup2 mounted, the io
# controller on for it).
cg_make() {
	_cg_dir=/sys/fs/cgroup/$1
	grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts ||
		mount -t cgroup2 none /sys/fs/cgroup || return 1
	echo +io > /sys/fs/cgroup/cgroup.subtree_control || return 1
	[ -d "$_cg_dir" ] || mkdir "$_cg_dir"
}

# cg_enter NAME / cg_leave: this shell (and what it starts next) into the
# cgroup NAME, or back to the root cgroup.
cg_enter() { echo $$ > "/sys/fs/cgroup/$1/cgroup.procs"; }
cg_leave() { echo $$ > /sys/fs/cgroup/cgroup.procs; }

# cg_rbytes NAME DEV: $cg_rbytes, the bytes the cgroup NAME has had read
# from DEV (io.stat rbytes: counted as its bios are submitted), 0 if none
# yet.  Builtins only (io.stat is a line per device the cgroup used).
cg_rbytes() {
	cg_rbytes=0
	read -r _cg_dev < "/sys/block/$2/dev"
	while read -r _cg_d _cg_rest; do
		[ "$_cg_d" = "$_cg_dev" ] || continue
		case $_cg_rest in
		*rbytes=*) _cg_r=${_cg_rest#*rbytes=}; cg_rbytes=${_cg_r%% *} ;;
		esac
	done < "/sys/fs/cgroup/$1/io.stat"
}
