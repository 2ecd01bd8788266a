# SPDX-License-Identifier: GPL-2.0
# A guaranteed 2 MB/s stream on msdos beside 8 greedy readers, then writers:
# no miss, data as written (read() and mmap).
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
stream_under_load msdos "$FAT_DEV"
done_testing
