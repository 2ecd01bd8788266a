# SPDX-License-Identifier: GPL-2.0
# run_api TYPE DEV: mount DEV as TYPE and run abiss-api (kselftest TAP) on it.
. /abiss/uml-test/lib/disk.sh

run_api() {
	mkdir -p "/mnt/$1" && mount -t "$1" "$2" "/mnt/$1" || { echo "Bail out! cannot mount $2 as $1"; exit 1; }
	mkdir -p "/mnt/$1/api"
	ABISS_TEST_DIR="/mnt/$1/api" abiss-api
}
