# SPDX-License-Identifier: GPL-2.0
# The guest booted the kernel built from the ABISS series.
. /abiss/uml-test/lib/tap.sh

plan 4
case "$(uname -r)" in
*-abiss*) pass "uname -r ($(uname -r)) shows the ABISS series" ;;
*) fail "uname -r ($(uname -r)) does not end in -abiss" ;;
esac
check "debugfs is mounted" grep -q ' /sys/kernel/debug debugfs ' /proc/mounts
check "configfs is mounted" grep -q ' /sys/kernel/config configfs ' /proc/mounts
check "the FAT, VFAT and ext3 drivers are there" \
	sh -c 'grep -qw msdos /proc/filesystems && grep -qw vfat /proc/filesystems &&
		grep -qw ext3 /proc/filesystems'
done_testing
