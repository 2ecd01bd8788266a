# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a guest that never finishes.  The host's timeout must
# kill it and report the log.
. /abiss/uml-test/lib/tap.sh
plan 1
pass "started"
sleep 100000
