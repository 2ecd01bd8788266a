# SPDX-License-Identifier: GPL-2.0
# Harness self-test: run after leave.sh, sees nothing it left.
. /abiss/uml-test/lib/tap.sh
plan 2
# The pattern does not match grep's own command line.
is "$(grep -l 'abiss-left[o]ver' /proc/[0-9]*/cmdline 2> /dev/null)" "" \
	"no process of the test before runs"
b0=$(cat /tmp/leave.beat 2> /dev/null | wc -l)
sleep 1
is "$(cat /tmp/leave.beat 2> /dev/null | wc -l)" "$b0" "nothing it left writes on"
done_testing
