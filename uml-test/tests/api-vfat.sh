# SPDX-License-Identifier: GPL-2.0
# The ABISS ioctls and /dev/abiss on vfat, error paths included (abiss-api).
. /abiss/uml-test/lib/api.sh
run_api vfat "$FAT_DEV"
