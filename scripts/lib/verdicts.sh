# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Verdicts of check stages, kept by the hash of their inputs: a stage that
# passed with exactly the same inputs is not run again, its verdicts are
# repeated.  Sourced by scripts/check (and its self-test), after
# scripts/lib/tally.sh, which counts the verdicts.  The caller sets
# $verdict_dir (where they are kept), $fresh (non-empty: run everything)
# and $log (where a stage's stderr and its lines that are no verdict go).
# A stage is a child with verdicts (tally_fold): one that exits non-zero,
# prints none or stops before its plan fails.

# inputs FILE|DIR...: one hash of the names and contents of the files.
inputs() {
	find "$@" -type f -print0 2> /dev/null | sort -z | xargs -0 sha256sum | sha256sum |
		cut -c1-64
}

# How each stage started (repeat, fg, bg), its inputs, its background pid,
# its exit status (fg).
declare -A stage_how stage_key stage_pid stage_rc

# stage_file NAME: where a stage's verdicts are kept, without their
# suffix: a NAME may have blanks, colons and slashes ('6.1: checkpatch-6.1/X').
stage_file() {
	echo "$verdict_dir/${1//[\/: ]/_}"
}

# What judged the verdicts kept: part of every key, so that verdicts kept
# under other rules are not repeated.
verdict_rules=$(inputs "${BASH_SOURCE[0]}" "$(dirname "${BASH_SOURCE[0]}")/tally.sh")

# stage_start fg|bg NAME KEY CMD...: run CMD (fg), or start it in the
# background at the lowest CPU priority and a low I/O priority (bg:
# SCHED_IDLE, nice 19, best-effort I/O level 7; not the idle I/O class,
# which mq-deadline holds back up to 10 s a request while other I/O
# waits), unless it passed with inputs KEY before.  An empty KEY: a stage
# that keeps verdicts of its own, run every time.
stage_start() {
	local how=$1 name=$2 key=$3 f
	f=$(stage_file "$2")
	shift 3
	mkdir -p "$verdict_dir"
	[ -n "$key" ] && key="$key $verdict_rules"
	stage_key[$name]=$key
	if [ -z "$fresh" ] && [ -n "$key" ] && [ -f "$f.key" ] && [ -f "$f.out" ] &&
		[ "$(cat "$f.key")" = "$key" ]; then
		stage_how[$name]=repeat
		return
	fi
	rm -f "$f.key"
	stage_how[$name]=$how
	if [ "$how" = bg ]; then
		# A process group of its own, for stages_stop.
		nice -n 19 chrt --idle 0 ionice -c 2 -n 7 setsid "$@" > "$f.out" 2> "$f.err" &
		stage_pid[$name]=$!
	else
		"$@" > "$f.out" 2> "$f.err"
		stage_rc[$name]=$?
	fi
}

# stage_finish NAME: wait for the stage if it runs in the background, fold
# in its verdicts, and keep its inputs if it passed.
stage_finish() {
	local name=$1 f rc
	f=$(stage_file "$1")
	case "${stage_how[$name]}" in
	repeat)
		echo "# $name: inputs unchanged since it passed on $(date -r "$f.key" '+%F %T');" \
			"its verdicts again (--fresh runs it)"
		tally_fold "$name" 0 /dev/null < "$f.out" 2>> "$log"
		return ;;
	bg)
		wait "${stage_pid[$name]}"
		rc=$? ;;
	*)
		rc=${stage_rc[$name]} ;;
	esac
	cat "$f.err" >> "$log"
	if tally_fold "$name" "$rc" "$f.err" < "$f.out" 2>> "$log" && [ -n "${stage_key[$name]}" ]; then
		echo "${stage_key[$name]}" > "$f.key"
	fi
}

# stages_stop: stop the stages still running in the background, with
# everything they started (scripts/check on SIGINT and SIGTERM).
stages_stop() {
	local pid
	for pid in "${stage_pid[@]}"; do
		# Its group, or itself while it has not made one yet.
		kill -TERM -- "-$pid" 2> /dev/null || kill -TERM "$pid" 2> /dev/null
	done
}

# cached NAME KEY CMD...: fold in CMD's verdicts, or the verdicts it gave
# when it last passed with inputs KEY.
cached() {
	stage_start fg "$@"
	stage_finish "$1"
}
