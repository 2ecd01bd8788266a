# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Verdicts of check stages, kept by the hash of their inputs: a stage that
# passed with exactly the same inputs is not run again, its verdicts are
# repeated.  Sourced by scripts/check (and its self-test).  The caller sets
# $verdict_dir (where they are kept), $fresh (non-empty: run everything)
# and $log (a stage's stderr), and defines count, which folds 'ok'/'not ok'
# lines read from stdin into its totals.

# inputs FILE|DIR...: one hash of the names and contents of the files.
inputs() {
	find "$@" -type f -print0 2> /dev/null | sort -z | xargs -0 sha256sum | sha256sum |
		cut -c1-64
}

# cached NAME KEY CMD...: fold in CMD's verdicts, or the verdicts it gave
# when it last passed with inputs KEY.
cached() {
	local name=$1 key=$2 f=$verdict_dir/$1
	shift 2
	mkdir -p "$verdict_dir"
	if [ -z "$fresh" ] && [ -f "$f.key" ] && [ "$(cat "$f.key")" = "$key" ]; then
		echo "# $name: inputs unchanged since it passed on $(date -r "$f.key" '+%F %T');" \
			"its verdicts again (--fresh runs it)"
		count < "$f.out"
		return
	fi
	rm -f "$f.key"
	"$@" > "$f.out" 2>> "$log"
	count < "$f.out"
	if grep -q '^ok ' "$f.out" && ! grep -q '^not ok ' "$f.out"; then
		echo "$key" > "$f.key"
	fi
}
