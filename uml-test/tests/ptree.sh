# SPDX-License-Identifier: GPL-2.0
# ptree on the real kernel: with six live streams the kernel's prio trees
# (one per disk) always read as valid red-black trees in deadline order,
# every node is one of the streams and is annotated with its reader's pid,
# the streams' tree comes under the heading of their disk; a saved copy
# draws the same; the trees are empty once the readers are gone.  Then
# files written here: two disks' sections, a bad device line, the format
# of older kernels.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/ctl.sh

plan 21

# ptree_empty: ptree says no stream waits: '(no streams)', or for each disk
# a heading that says so, and nothing else.
ptree_empty() {
	_out=$(ptree 2>&1) || { echo "$_out"; return 1; }
	echo "$_out" | grep -v -e '^(no streams)$' -e '^$' \
		-e '^device [^ ]* ([0-9]*:[0-9]*), refill latency [0-9]*\.[0-9][0-9][0-9] ms, no streams$'
	[ $? = 1 ]
}

ctl_help ptree "ptree [options]"
check "no streams: empty trees" ptree_empty
# Not through check: abissd must stay in this shell.
if ctl_setup; then pass "FAT mounted, abissd runs"; else
	fail "FAT mounted, abissd runs"; bail "no abissd"; fi
if ctl_streams 6 200kB 1M; then pass "six streams run"; else
	fail "six streams run"; diag "$(cat "$DEBUGFS/streams" /tmp/ctl*.out)"; fi

# 40 readings over about 4 s, while refills take streams out and put them back.
bad=0
for i in $(seq 40); do
	if ! out=$(ptree 2>&1); then
		bad=$((bad + 1))
		diag "$out"
	fi
	sleep 0.1
done
is "$bad" 0 "40 readings of the live trees: each a valid red-black tree in deadline order"

# A copy with some streams in a tree (a refill pass takes them out).
for i in $(seq 20); do
	ctl_snapshot /tmp/snap && grep -q 'stream [0-9]' /tmp/snap/prio_tree && break
	sleep 0.05
done
out=$(ptree -f /tmp/snap/prio_tree -s /tmp/snap/streams 2>&1)
is "$?" 0 "ptree on a saved copy exits 0"
nodes=$(grep -c 'stream [0-9]' /tmp/snap/prio_tree)
is "$(echo "$out" | grep -c 'stream [0-9]* \(red\|black\), due')" "$nodes" \
	"as many nodes drawn as the kernel printed"
sum=$(echo "$out" | sed -n 's/^\([0-9]*\) streams* in the tree (of 6), height .*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
is "$sum" "$nodes" "the summaries count them, of six streams"
echo "$out" | sed 's/^/#   /'
is "$(echo "$out" | grep -c '^device [^ ]* ([0-9]*:[0-9]*), refill latency ')" \
	"$(grep -c '^device ' /tmp/snap/prio_tree)" "a heading for each disk the kernel printed"
# The six streams' files are on the FAT disk: their tree is under its heading.
fat=${FAT_DEV#/dev/}
heading="device $fat ($(cat "/sys/block/$fat/dev")), refill latency "
if echo "$out" | grep -q "^$heading[0-9]*\.[0-9][0-9][0-9] ms, $nodes streams*\$"; then
	pass "the streams' tree under the heading of their disk, $fat"
else
	fail "the streams' tree under the heading of their disk, $fat"; diag "$out"
fi
# Each node's pid is its stream's (debugfs: id in column 1, pid in 2).
pairs='s/.*stream \([0-9]*\) [a-z]*, due [-+0-9]* us, pid \([0-9]*\),.*/\1 \2/p'
right=$(echo "$out" | sed -n "$pairs" |
	while read -r id pid; do
		awk -v i="$id" -v p="$pid" '$1 == i && $2 == p { print }' /tmp/snap/streams
	done | wc -l)
is "$right" "$nodes" "each node annotated with its reader's pid"
ascii=$(ptree --ascii -f /tmp/snap/prio_tree 2>&1 | LC_ALL=C grep -c '[^ -~]')
is "$ascii" 0 "--ascii draws with ASCII only"

ctl_stop_streams
check "empty trees once the readers are gone" ptree_empty
abissd_stop
umount "$CTL_MNT"

# Files written here: two disks' trees; one with a bad device line; the
# format of older kernels, one tree without device lines.
printf '%s\n' 'device 254:0 nullb0 latency_us 1234' '  R stream 7 due -300 us' \
	'B stream 5 due +1000 us' '  R stream 9 due +2600 us' \
	'device 98:0 ubda latency_us 0' 'B stream 3 due -120 us' > /tmp/ptree-two
out=$(ptree -f /tmp/ptree-two 2>&1)
is "$?" 0 "ptree -f on two disks' trees exits 0"
echo "$out" | sed 's/^/#   /'
is "$(echo "$out" | grep '^device ' | tr '\n' ';')" \
	"device nullb0 (254:0), refill latency 1.234 ms, 3 streams;device ubda (98:0), refill latency 0.000 ms, 1 stream;" \
	"two headings, each naming its disk, number, refill latency and streams"
is "$(echo "$out" | grep -c ' in the tree, height ')" 2 "two trees drawn, each summed up"
is "$(echo "$out" | sed -n '/^device ubda/,$p' | grep -c '^stream 3 black, due -120 us$')" 1 \
	"each tree under its own heading"
sed 's/ latency_us 0$/ latency_us/' /tmp/ptree-two > /tmp/ptree-bad
out=$(ptree -f /tmp/ptree-bad 2>&1)
is "$?:$out" '1:ptree: /tmp/ptree-bad:5: not a device line ("device MAJ:MIN NAME latency_us N")' \
	"a bad device line: exit 1, its file and line named"
grep -v '^device ' /tmp/ptree-two | head -n 3 > /tmp/ptree-old
out=$(ptree -f /tmp/ptree-old 2>&1)
is "$?" 0 "the old format, without device lines, still read"
is "$(echo "$out" | tr '\n' ';')" \
	"stream 5 black, due +1000 us;├─ L: stream 7 red, due -300 us;└─ R: stream 9 red, due +2600 us;3 streams in the tree, height 2, black height 1; next: stream 7, due -300 us;" \
	"... as one tree with no heading"
done_testing
