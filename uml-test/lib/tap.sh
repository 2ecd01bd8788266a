# SPDX-License-Identifier: GPL-2.0
# TAP helpers for uml-test scripts (busybox sh).  Source it, say how many
# tests follow with 'plan N', then report each with ok/check/is.  A script
# that dies half-way leaves a short plan, which the host counts as a failure.

_tap_n=0
_tap_failed=0

plan() { echo "1..$1"; }
# diag TEXT: TEXT as TAP diagnostics, every line of it: a line of a
# program's output that starts with "not ok" must not count as a test.
diag() {
	case "$*" in
	*"
"*)	printf '%s\n' "$*" | while IFS= read -r _d; do echo "# $_d"; done ;;
	*)	echo "# $*" ;;
	esac
}

# pass/fail DESCRIPTION
pass() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $*"
}

# check DESCRIPTION COMMAND [ARG...]: ok when the command succeeds.
check() {
	_d=$1
	shift
	if _out=$("$@" 2>&1); then
		pass "$_d"
	else
		fail "$_d"
		diag "'$*' failed: $_out"
	fi
}

# is GOT EXPECTED DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then
		pass "$3"
	else
		fail "$3"
		diag "got '$1', expected '$2'"
	fi
}

# await SECONDS COMMAND [ARG...]: wait until the command succeeds, for a
# state that a daemon or the kernel reaches in its own time; 1 if it has
# not after SECONDS (a bound only for when it never comes).
await() {
	_w=$(($1 * 10))
	shift
	until "$@"; do
		[ $_w -gt 0 ] || return 1
		_w=$((_w - 1))
		sleep 0.1
	done
}

# running PID: PID has not ended (a zombie has, though kill -0 finds it).
running() {
	_st=$(cat "/proc/$1/stat" 2> /dev/null) || return 1
	case "${_st##*) }" in Z*) return 1 ;; esac
}

# stop_procs PID...: end the processes with SIGINT (fio ends its jobs on
# it) and wait for them.  fio misses a SIGINT that comes while it starts a
# job, so it is sent again every second; after 60 s, SIGKILL.  A process
# that waits for a lost request ends on neither: the wait is the harness's.
stop_procs() {
	_t=0
	while :; do
		_left=
		for _p; do running "$_p" && _left="$_left $_p"; done
		[ -n "$_left" ] || break
		[ $_t = 600 ] && kill -9 $_left 2> /dev/null
		[ $((_t % 10)) = 0 ] && [ $_t -lt 600 ] && kill -INT $_left 2> /dev/null
		sleep 0.1
		_t=$((_t + 1))
	done
	wait "$@"
}

# skip_rest REASON: report every test still in the plan as skipped.
skip_rest() {
	while [ "$_tap_n" -lt "$1" ]; do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n - skipped # SKIP $2"
	done
}

# indented DESC CMD...: run CMD, a TAP program of its own, its output
# indented under this script's; pass if it exits 0, else fail with its
# exit status and first failed checks as diagnostics.
indented() {
	_d=$1
	shift
	{
		"$@"
		echo $? > /tmp/indented.rc
	} 2>&1 | tee /tmp/indented.out | sed 's/^/    /'
	if [ "$(cat /tmp/indented.rc)" = 0 ]; then
		pass "$_d"
	else
		fail "$_d"
		diag "'$*' exited with $(cat /tmp/indented.rc)"
		grep -E '^not ok|FAIL|unexpected' /tmp/indented.out | head -n 8 | while read -r l; do
			diag "$l"
		done
	fi
}

# bail REASON: stop the script; the plan comes out short.
bail() { echo "Bail out! $*"; exit 1; }

# Exit status: the number of failures (at most 1 for the shell's sake).
done_testing() { [ "$_tap_failed" -eq 0 ]; }
