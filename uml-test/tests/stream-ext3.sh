# SPDX-License-Identifier: GPL-2.0
# A guaranteed 2 MB/s stream on ext3 beside 8 greedy readers, then writers:
# no miss, data as written (read() and mmap).
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
stream_under_load ext3 "$EXT3_DEV"
done_testing
