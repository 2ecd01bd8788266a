# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a test that the per-test timeout kills, leaving behind
# a process that holds a file on /mnt open and writes to /tmp every 0.2 s.
# The next test (left.sh) must see none of it.
. /abiss/uml-test/lib/tap.sh
plan 1
mkdir -p /mnt/leave && mount -t tmpfs tmpfs /mnt/leave || bail "cannot mount a tmpfs"
sh -c 'exec 3> /mnt/leave/held
	while :; do echo beat >> /tmp/leave.beat; sleep 0.2; done' abiss-leftover &
pass "a process left behind"
sleep 100000
