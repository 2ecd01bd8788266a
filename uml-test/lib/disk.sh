# SPDX-License-Identifier: GPL-2.0
# The disks the host (uml-test/run) attaches to every guest, made fresh for
# each run with the host's mkfs tools:
#   FAT_DEV   FAT (mkfs.vfat), mounted as msdos (8.3 names) or vfat
#   EXT3_DEV  ext3 (mkfs.ext3), mounted by the ext4 driver
# In UML they are /dev/ubda and /dev/ubdb; in qemu (uml-test/run --platform
# qemu) virtio disks whose names the host passes in the environment.  A
# test names a disk, and its sysfs folder (/sys/block/$FAT_NAME), only by
# these variables, so that it runs on both platforms.
FAT_DEV=${FAT_DEV:-/dev/ubda}
EXT3_DEV=${EXT3_DEV:-/dev/ubdb}
FAT_NAME=${FAT_DEV#/dev/}
EXT3_NAME=${EXT3_DEV#/dev/}
# Their numbers, MAJOR:MINOR, as abissd and abissctl print them.
FAT_DEVNO=$(cat "/sys/block/$FAT_NAME/dev" 2> /dev/null)
EXT3_DEVNO=$(cat "/sys/block/$EXT3_NAME/dev" 2> /dev/null)

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
