# SPDX-License-Identifier: GPL-2.0
# The ABISS ioctls and /dev/abiss on msdos, error paths included (abiss-api).
. /abiss/uml-test/lib/api.sh
run_api msdos "$FAT_DEV"
