# SPDX-License-Identifier: GPL-2.0
# A null_blk device of a test's own, made through configfs, and the abiss
# scheduler's debugfs counters on it.

# nullb_names NAME: the device's configfs folder (nb), block device name
# (dev), abiss debugfs folder (dbg) and sysfs tunables folder (ios).
nullb_names() {
	nb=/sys/kernel/config/nullb/$1
	dev=$1
	dbg=/sys/kernel/debug/block/$dev/sched
	ios=/sys/block/$dev/queue/iosched
}

# look FILE: the numbers of a debugfs file ("RT BE IDLE") in n1 n2 n3, read
# by the shell itself: the looks are taken while the guest is busy with
# I/O, and a fork per look made one pass of a test take minutes there.
look() { read -r n1 n2 n3 _ < "$dbg/$1"; }
