# SPDX-License-Identifier: GPL-2.0
# The disks the host (uml-test/run) attaches to every guest, made fresh for
# each run with the host's mkfs tools:
#   /dev/ubda  FAT (mkfs.vfat), mounted as msdos (8.3 names) or vfat
#   /dev/ubdb  ext3 (mkfs.ext3), mounted by the ext4 driver
FAT_DEV=/dev/ubda
EXT3_DEV=/dev/ubdb

# mount_fs TYPE DEV DIR
mount_fs() {
	mkdir -p "$3" && mount -t "$1" "$2" "$3"
}

# fs_type DIR: the type /proc/mounts shows for a mount point.
fs_type() { awk -v d="$1" '$2 == d { print $3 }' /proc/mounts; }

# make_file PATH KIB: a file of random data.
make_file() {
	dd if=/dev/urandom of="$1" bs=1024 count="$2" 2> /dev/null
}

sum_of() { sha256sum "$1" | cut -d' ' -f1; }
