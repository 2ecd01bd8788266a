# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tally.sh - the one place the harness counts verdicts.  Sourced by
# scripts/check, scripts/check-series, uml-test/run, tools/test/run and
# uml-test/selftest/run (and by scripts/lib/verdicts.sh's callers).
#
#   ok NAME                 print 'ok - NAME' and count it
#   not_ok NAME [WHY]       print 'not ok - NAME: WHY' and count it
#   tally_fold NAME RC ERR  fold in a child's stdout (on stdin): its verdict
#                           lines are printed and counted, any other line
#                           goes to stderr; RC is its exit status, ERR the
#                           file of its stderr.  The child fails, in a
#                           'not ok - NAME: why' line ending with its last
#                           stderr line, when it exited non-zero with no
#                           'not ok' of its own, printed no verdict, did not
#                           reach its plan ('N passed, N failed' last, or a
#                           TAP '1..N'), or its plan does not match its
#                           verdicts.  Returns 0 if the child passed.
#   tally_run NAME CMD...   run CMD and fold in what it printed
#   tally_begin [NAME]      count from zero (a script, or a subshell that
#                           reports as a child of its caller)
#   tally_end               print 'N passed, N failed' and exit: 0 only if
#                           something passed and nothing failed (with no
#                           verdict at all, 'not ok - NAME: ran no test')
#
# $tally_prefix, if set, goes before every NAME (uml-test/selftest/run).

tally_begin() {
	tally_passed=0
	tally_failed=0
	tally_name=${1:-$0}
}
tally_begin

ok() {
	tally_passed=$((tally_passed + 1))
	echo "ok - ${tally_prefix:-}$1"
}

not_ok() {
	tally_failed=$((tally_failed + 1))
	echo "not ok - ${tally_prefix:-}$1${2:+: $2}"
}

# tally_last_err FILE: the last line of FILE that is not blank, shortened.
tally_last_err() {
	grep -v '^[[:space:]]*$' "$1" 2> /dev/null | tail -n 1 | cut -c1-240
}

tally_fold() {
	local name=$1 rc=$2 err=$3 line good=0 bad=0 plan= summary= why= last
	while IFS= read -r line; do
		case "$line" in
		"ok "*|ok)		good=$((good + 1)); echo "$line" ;;
		"not ok "*|"not ok")	bad=$((bad + 1)); echo "$line" ;;
		*)
			if [[ $line =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
				summary=$line
			elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
				plan=${BASH_REMATCH[1]}
			else
				echo "$line" >&2
			fi ;;
		esac
	done
	tally_passed=$((tally_passed + good))
	tally_failed=$((tally_failed + bad))
	if [ "$rc" -gt 128 ] 2> /dev/null; then
		why="killed by signal $((rc - 128))"
	elif [ "$rc" != 0 ] && [ "$bad" = 0 ]; then
		why="exited with status $rc"
	fi
	if [ $((good + bad)) = 0 ]; then
		why="${why:+$why, }printed no verdict"
	elif [ -n "$plan" ] && [ "$plan" != $((good + bad)) ]; then
		why="${why:+$why, }planned $plan tests, reported $((good + bad))"
	elif [ -z "$plan" ] && [ -z "$summary" ]; then
		why="${why:+$why, }stopped before its 'N passed, N failed' line"
	elif [ -n "$summary" ] && [ "$summary" != "$good passed, $bad failed" ]; then
		why="${why:+$why, }says '$summary' after $good ok and $bad not ok"
	fi
	[ -z "$why" ] && return "$((bad > 0))"
	last=$(tally_last_err "$err")
	not_ok "$name" "$why${last:+; stderr: $last}"
	return 1
}

tally_run() {
	local name=$1 out err rc
	shift
	out=$(mktemp) && err=$(mktemp) || { not_ok "$name" "cannot make a temporary file"; return 1; }
	"$@" > "$out" 2> "$err"
	rc=$?
	cat "$err" >&2
	tally_fold "$name" "$rc" "$err" < "$out"
	rc=$?
	rm -f "$out" "$err"
	return "$rc"
}

tally_end() {
	[ $((tally_passed + tally_failed)) -gt 0 ] || not_ok "$tally_name" "ran no test"
	echo "$tally_passed passed, $tally_failed failed"
	[ "$tally_failed" -eq 0 ]
	exit
}
