# SPDX-License-Identifier: GPL-2.0
# libabiss on vfat with a real abissd (libabiss-test, kselftest TAP): a
# paced read verified against the test pattern with no miss, seeks, and the
# errnos of a stream that is refused (no abissd, over capacity, bad mode).
. /abiss/uml-test/lib/disk.sh

mnt=/mnt/vfat
mount_fs vfat "$FAT_DEV" "$mnt" || { echo "Bail out! cannot mount $FAT_DEV as vfat"; exit 1; }
mkdir -p "$mnt/libabiss"
rdrt --create 8M --seed 21 "$mnt/libabiss/data" > /dev/null ||
	{ echo "Bail out! cannot create the test file"; exit 1; }
ABISS_TEST_FILE=$mnt/libabiss/data ABISS_TEST_SEED=21 libabiss-test
rc=$?
umount "$mnt"
exit $rc
