# SPDX-License-Identifier: GPL-2.0
# FAT mounted as msdos (8.3 names): a file written, read back after a
# remount, same checksum.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

plan 5
mnt=/mnt/fat
check "mount -t msdos $FAT_DEV" mount_fs msdos "$FAT_DEV" "$mnt" || bail "no FAT"
is "$(fs_type $mnt)" msdos "/proc/mounts says msdos"
mkdir -p "$mnt/fatbasc"
make_file /tmp/data 4096
want=$(sum_of /tmp/data)
check "a 4 MiB file written" cp /tmp/data "$mnt/fatbasc/data.bin"
umount "$mnt" && mount_fs msdos "$FAT_DEV" "$mnt"
is "$(sum_of "$mnt/fatbasc/DATA.BIN")" "$want" "read back after remount, same sha256"
# msdos keeps 8.3 names: a long name is cut down to one.
touch "$mnt/fatbasc/LongFilename.data"
is "$(ls "$mnt/fatbasc" | grep -v data.bin)" longfile.dat "a long name becomes 8.3 (longfile.dat)"
umount "$mnt"
done_testing
