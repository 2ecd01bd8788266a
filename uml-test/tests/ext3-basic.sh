# SPDX-License-Identifier: GPL-2.0
# An image made by mkfs.ext3 on the host, mounted as ext3 by the ext4 driver:
# a file written, read back after a remount, same checksum.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

plan 5
mnt=/mnt/ext3
dmesg -c > /dev/null
check "mount -t ext3 $EXT3_DEV" mount_fs ext3 "$EXT3_DEV" "$mnt" || bail "no ext3"
is "$(fs_type $mnt)" ext3 "/proc/mounts says ext3"
check "the ext4 driver mounted it" \
	sh -c "dmesg | grep -q 'EXT4-fs ($EXT3_NAME): mounting ext3 file system using the ext4 subsystem'"
make_file /tmp/data 4096
want=$(sum_of /tmp/data)
check "a 4 MiB file written" cp /tmp/data "$mnt/ext3-basic.data"
umount "$mnt" && mount_fs ext3 "$EXT3_DEV" "$mnt"
is "$(sum_of "$mnt/ext3-basic.data")" "$want" "read back after remount, same sha256"
umount "$mnt"
done_testing
