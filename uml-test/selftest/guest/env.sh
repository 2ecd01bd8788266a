# SPDX-License-Identifier: GPL-2.0
# Harness self-test: uml-test/run -e NAME=VALUE reaches the test.
. /abiss/uml-test/lib/tap.sh
plan 1
is "${ABISS_SELFTEST_ENV:-unset}" x_1:2 "uml-test/run -e sets ABISS_SELFTEST_ENV"
done_testing
