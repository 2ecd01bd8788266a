# SPDX-License-Identifier: GPL-2.0
# The abiss I/O scheduler's sysfs tunables: each starts at its documented
# default, takes a value within its range and refuses anything else
# (non-numbers, negatives, out of range, overflow) with an error, keeping
# its old value.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

dev=$FAT_NAME
q=/sys/block/$dev/queue
ios=$q/iosched
nr=$(cat $q/nr_requests)
# name default min max
tunables="rt_read_expire 50 1 60000
rt_write_expire 250 1 60000
be_read_expire 500 1 60000
be_write_expire 5000 1 60000
fifo_batch 16 1 1024
front_merges 1 0 1
idle_grace 100 0 60000
aging_expire 10000 1 60000
be_tag_depth $((nr * 75 / 100)) 1 $nr
rt_share 95 1 100
rt_window 500 0 60000
rt_target_latency 10 1 60000
be_inflight_max_kb 4096 4 65536"
ntun=$(echo "$tunables" | wc -l)
plan $((2 + 3 * ntun + 3))

check "abiss can be chosen for $dev" sh -c "echo abiss > $q/scheduler"
is "$(ls $ios | sort | tr '\n' ' ')" \
	"aging_expire be_inflight_max_kb be_read_expire be_tag_depth be_write_expire fifo_batch front_merges idle_grace rt_read_expire rt_share rt_target_latency rt_window rt_write_expire " \
	"the tunables are the documented ones"

# set NAME VALUE: write VALUE as one write(2), as "echo -n" would.
set_t() { printf '%s' "$2" > "$ios/$1" 2> /dev/null; }

# refuses NAME MIN MAX: every bad value fails and leaves the value alone.
refuses() {
	old=$(cat "$ios/$1")
	for bad in abc " " -1 "-$2" 1x 0x10 1.5 99999999999 4294967296 \
		$(($3 + 1)) $(($3 * 10)) "$2 $2"; do
		[ "$bad" = "$2" ] && continue
		if set_t "$1" "$bad"; then
			echo "'$bad' was taken"; return 1
		fi
		now=$(cat "$ios/$1")
		[ "$now" = "$old" ] || { echo "'$bad' changed it to $now"; return 1; }
	done
	if [ "$2" -gt 0 ]; then
		set_t "$1" $(($2 - 1)) && { echo "$(($2 - 1)) (below min) was taken"; return 1; }
		[ "$(cat "$ios/$1")" = "$old" ] || return 1
	fi
	return 0
}

# takes NAME MIN MAX: both ends of the range are taken and read back.
takes() {
	for v in "$3" "$2"; do
		set_t "$1" "$v" || { echo "$v refused"; return 1; }
		[ "$(cat "$ios/$1")" = "$v" ] || { echo "$v read back as $(cat "$ios/$1")"; return 1; }
	done
	echo "$2" > "$ios/$1" || return 1	# with a newline too
}

echo "$tunables" | {
	while read -r name def min max; do
		is "$(cat "$ios/$name")" "$def" "$name starts at its default $def"
		check "$name refuses bad values and keeps its value" refuses "$name" "$min" "$max"
		check "$name takes $min and $max" takes "$name" "$min" "$max"
		echo "$def" > "$ios/$name"
	done
	# be_tag_depth follows nr_requests (blk-mq resizes the tags before it
	# sets nr_requests: the depth must come from the tags).
	half=$((nr / 2))
	check "nr_requests set to $half" sh -c "echo $half > $q/nr_requests"
	is "$(cat $ios/be_tag_depth)" "$((half * 75 / 100))" \
		"be_tag_depth follows nr_requests to $((half * 75 / 100))"
	echo "$nr" > $q/nr_requests
	check "mq-deadline can be chosen again" sh -c "echo mq-deadline > $q/scheduler"
	done_testing
}
