# SPDX-License-Identifier: GPL-2.0
# The ABISS ioctls and /dev/abiss on ext3, error paths included (abiss-api).
. /abiss/uml-test/lib/api.sh
run_api ext3 "$EXT3_DEV"
