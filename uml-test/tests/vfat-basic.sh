# SPDX-License-Identifier: GPL-2.0
# FAT mounted as vfat: a file with a long name written, read back after a
# remount under the same name, same checksum.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

plan 5
mnt=/mnt/vfat
name="A long file name, with spaces.data"
check "mount -t vfat $FAT_DEV" mount_fs vfat "$FAT_DEV" "$mnt" || bail "no VFAT"
is "$(fs_type $mnt)" vfat "/proc/mounts says vfat"
mkdir -p "$mnt/vfat basic"
make_file /tmp/data 4096
want=$(sum_of /tmp/data)
check "a 4 MiB file written under a long name" cp /tmp/data "$mnt/vfat basic/$name"
umount "$mnt" && mount_fs vfat "$FAT_DEV" "$mnt"
check "the long name is kept" test -f "$mnt/vfat basic/$name"
is "$(sum_of "$mnt/vfat basic/$name")" "$want" "read back after remount, same sha256"
umount "$mnt"
done_testing
