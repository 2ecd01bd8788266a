# SPDX-License-Identifier: GPL-2.0
# ptree on the real kernel: with six live streams the kernel's prio tree
# always reads as a valid red-black tree in deadline order, every node is
# one of the streams and is annotated with its reader's pid; a saved copy
# draws the same; the tree is empty once the readers are gone.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/ctl.sh

plan 12
ctl_help ptree "ptree [options]"
is "$(ptree 2>&1)" "(no streams)" "no streams: an empty tree"
# Not through check: abissd must stay in this shell.
if ctl_setup; then pass "FAT mounted, abissd runs"; else
	fail "FAT mounted, abissd runs"; bail "no abissd"; fi
if ctl_streams 6 200k 1M; then pass "six streams run"; else
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
is "$bad" 0 "40 readings of the live tree: each a valid red-black tree in deadline order"

# A copy with some streams in the tree (a refill pass takes them out).
for i in $(seq 20); do
	ctl_snapshot /tmp/snap && [ -s /tmp/snap/prio_tree ] && break
	sleep 0.05
done
out=$(ptree -f /tmp/snap/prio_tree -s /tmp/snap/streams 2>&1)
is "$?" 0 "ptree on a saved copy exits 0"
nodes=$(grep -c 'stream [0-9]' /tmp/snap/prio_tree)
is "$(echo "$out" | grep -c 'stream [0-9]* \(red\|black\), due')" "$nodes" \
	"as many nodes drawn as the kernel printed"
case "$out" in
*"$nodes stream"*" in the tree (of 6), height "*) pass "the summary counts them, of six streams" ;;
*) fail "the summary counts them, of six streams"; diag "$out" ;;
esac
echo "$out" | sed 's/^/#   /'
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
is "$(ptree 2>&1)" "(no streams)" "an empty tree once the readers are gone"
abissd_stop
umount "$CTL_MNT"
done_testing
