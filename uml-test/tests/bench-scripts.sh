# SPDX-License-Identifier: GPL-2.0
# The bench's own scripts cannot rot: uml-test/bench/streams.sh on a tiny
# run (1 s a reader, small files, the capped null_blk, both scenarios, one
# contender per mode of bench-reader) writes a JSON line per contender with
# every field, as a number where one is due, and its traces; the report
# (uml-test/bench/report) renders a table per scenario.  Only that fields
# exist and are numbers: never a latency or throughput value.
. /abiss/uml-test/lib/tap.sh

plan 17
dir=/tmp/bench
jsonl=$dir/bench-streams.jsonl
rm -rf "$dir"

is "$(bench-reader --help > /dev/null; echo $?)" 0 "bench-reader --help exits 0"
out=$(bench-reader --mode nonsense --rate 2M /dev/null 2>&1)
is "$?:$(echo "$out" | head -n 1)" "2:bench-reader: bad mode: 'nonsense' (plain, ring or abiss)" \
	"bench-reader: a bad mode is a usage error"
out=$(bench-reader --rate 2M /tmp/no-such-file 2>&1)
is "$?:$out" "1:bench-reader: cannot open '/tmp/no-such-file': No such file or directory" \
	"bench-reader: a missing file fails with the file's name"

# Exported for the child sh: prefix assignments to it are unreliable.
export BENCH_DIR=$dir BENCH_SECS=1 BENCH_WARMUP=0 BENCH_GREEDY_MB=2
export BENCH_DEVICES=capped BENCH_SCENARIOS="readers writers"
export BENCH_CONTENDERS="abiss/abiss ring/mq-deadline plain/none"
indented "streams.sh ran every step" sh /abiss/uml-test/bench/streams.sh

is "$(grep -c . "$jsonl" 2> /dev/null)" 8 \
	"a line per scenario: the greedy load alone and 3 contenders"
is "$(grep -c '"error"' "$jsonl")" 0 "no contender failed"

# fields TYPE NAME... < JSONL: the lines that lack one of the NAMEs as a
# TYPE (num: a number; str: a string; numnull: a number or null).
fields() {
	_type=$1
	shift
	awk -v type="$_type" -v names="$*" '
	BEGIN { n = split(names, f, " ")
		re["num"] = "-?[0-9]+(\\.[0-9]+)?"
		re["str"] = "\"[^\"]*\""
		re["numnull"] = "(-?[0-9]+(\\.[0-9]+)?|null)" }
	{ for (i = 1; i <= n; i++)
		if ($0 !~ ("\"" f[i] "\":" re[type] "[,}]")) { print NR ": no " type " " f[i]; next } }'
}
readers=$(grep -v '"mode":"none"' "$jsonl")
alone=$(grep '"mode":"none"' "$jsonl")
is "$(echo "$readers" | fields str scenario device fs sched label mode trace)" "" \
	"each contender's line names its scenario, device, scheduler, mode and trace"
is "$(echo "$readers" | fields num reads p50_us p99_us p999_us max_us stalls rate_Bps \
	cpu_ms greedy_KiBps secs bytes buffer)" "" \
	"each contender's latencies, stalls, rates and CPU time are numbers"
is "$(echo "$readers" | fields numnull misses)" "" "each contender has misses (number or null)"
is "$(echo "$readers" | grep '"mode":"abiss"' | fields num misses refills late_refills |
	grep -c .)" 0 "the ABISS stream's misses, refills and late refills are numbers"
is "$(echo "$readers" | grep -c '"misses":null')" 4 "the ring and plain readers' misses are null"
is "$(echo "$alone" | fields num greedy_KiBps secs)" "" "the greedy load alone has its throughput"

# Each trace: 't_ms latency_us' lines, the ABISS stream's with its fill.
traces_ok() {
	for t in $(sed -n 's/.*"trace":"\([^"]*\)".*/\1/p' "$jsonl"); do
		[ -s "$dir/$t" ] || { echo "no $t"; return 1; }
		case $t in
		*-abiss-*) want=3 ;;
		*) want=2 ;;
		esac
		awk -v w=$want 'NF != w || $0 !~ /^[0-9. ]+$/ { print FILENAME ": " $0; bad = 1; exit }
			END { exit bad }' "$dir/$t" || return 1
	done
}
check "every trace has a line of numbers per take" traces_ok

check "the report renders" sh /abiss/uml-test/bench/report -q -o "$dir/report" "$dir"
md=$dir/report/report.md
is "$(grep -c '^## ' "$md")" 2 "the report has a section per scenario"
is "$(grep -c '^| ' "$md")" 10 "each section has a table: a header and 4 rows"
is "$(grep -c '^- ' "$md")" 4 "each section has the goals beside"
done_testing
