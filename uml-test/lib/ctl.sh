# SPDX-License-Identifier: GPL-2.0
# Helpers for the abissctl and ptree tests: live rdrt streams on the FAT
# disk, and the kernel's view of them.
. /abiss/uml-test/lib/stream.sh

CTL_MNT=/mnt/vfat
CTL_DIR=$CTL_MNT/ctl
DEBUGFS=/sys/kernel/debug/abiss
# The pid of stream file $CTL_DIR/s<i> is word i of $CTL_PIDS.
CTL_PIDS=

CTL_SOCK=/tmp/abissctl-test.sock

# ctl_setup: the FAT disk mounted and abissd running (20 MB/s).
ctl_setup() {
	mount_fs vfat "$FAT_DEV" "$CTL_MNT" && mkdir -p "$CTL_DIR" && abissd_start 20MB
}

# ctl_setup_socket CONFIG: the same, abissd with CONFIG and its control
# socket at $CTL_SOCK; returns once the socket is there (or after 10 s, 1).
ctl_setup_socket() {
	mount_fs vfat "$FAT_DEV" "$CTL_MNT" && mkdir -p "$CTL_DIR" || return 1
	abissd -F -C 20MB -c "$1" -p /tmp/abissd.pid --socket "$CTL_SOCK" \
		> /dev/null 2> /tmp/abissd.log < /dev/null &
	ABISSD_PID=$!
	await 10 test -S "$CTL_SOCK"
}

# ctl_streams N RATE BUFFER: N streams at RATE with BUFFER, each on its own
# 16 MiB file s1..sN, until ctl_stop_streams (a rate low enough that the
# file outlasts the test); returns once debugfs says all N are active (0),
# or after 30 s (1).
ctl_streams() {
	for _i in $(seq "$1"); do
		rdrt --create 16M --seed "$_i" "$CTL_DIR/s$_i" > /dev/null || return 1
	done
	for _i in $(seq "$1"); do
		rdrt -a -r "$2" -b "$3" "$CTL_DIR/s$_i" > "/tmp/ctl$_i.out" 2>&1 &
		CTL_PIDS="$CTL_PIDS $!"
	done
	await 30 ctl_active "$1"
}

# ctl_active N: debugfs lists N active streams.
ctl_active() { [ "$(awk '$13 == "active"' "$DEBUGFS/streams" | wc -l)" = "$1" ]; }

# ctl_stop_streams: end the readers (their close ends the streams).
ctl_stop_streams() {
	for _p in $CTL_PIDS; do kill "$_p" 2> /dev/null; done
	for _p in $CTL_PIDS; do wait "$_p" 2> /dev/null; done
	CTL_PIDS=
}

# ctl_pid I: the pid of the reader of s<I>.
ctl_pid() { echo $CTL_PIDS | cut -d' ' -f"$1"; }

# ctl_id I: the stream id of s<I>, from debugfs.
ctl_id() { awk -v p="$(ctl_pid "$1")" '$2 == p { print $1 }' "$DEBUGFS/streams"; }

# ctl_snapshot DIR: a copy of the debugfs files in DIR, the two read together.
ctl_snapshot() {
	mkdir -p "$1" && cat "$DEBUGFS/prio_tree" > "$1/prio_tree" &&
		cat "$DEBUGFS/streams" > "$1/streams"
}

# ctl_help PROG USAGE: PROG --help exits 0 and prints the line ' USAGE' (2 tests).
ctl_help() {
	_out=$($1 --help 2>&1)
	is "$?" 0 "$1 --help exits 0"
	if echo "$_out" | grep -qxF " $2"; then pass "$1 --help prints its usage line"
	else fail "$1 --help prints its usage line"; diag "$_out"; fi
}
