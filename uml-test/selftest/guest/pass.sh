# SPDX-License-Identifier: GPL-2.0
# Harness self-test: a test that passes.
. /abiss/uml-test/lib/tap.sh
plan 2
pass "one"
check "two" true
done_testing
