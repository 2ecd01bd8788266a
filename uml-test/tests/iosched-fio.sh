# SPDX-License-Identifier: GPL-2.0
# Data survives the abiss I/O scheduler under load: fio writes and reads
# back (verify=crc32c, verification interleaved with the writes) through
# abiss on a memory-backed null_blk device and on a file of the ext3 disk
# (ubd), from several jobs of different I/O priority classes at once; and
# the requests went through abiss (its debugfs counters moved).
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

plan 10

nb=/sys/kernel/config/nullb/nullb-fio
dev=nullb-fio
# dispatched DEV: abiss's per-class dispatch counters of DEV, "RT BE IDLE".
dispatched() { cat "/sys/kernel/debug/block/$1/sched/dispatched"; }
sum() { echo $(($1 + $2 + $3)); }

# fio_verify FILENAME SIZE: four jobs, each on its own quarter, one
# real-time, two best-effort (levels 0 and 7) and one idle; random writes of
# 4-128 KiB with a read-back of every block while writing.
fio_verify() {
	fio --thread --output=/tmp/fio.out --filename="$1" \
		--direct=1 --ioengine=psync --rw=randwrite --bsrange=4k-128k \
		--size="$2" \
		--verify=crc32c --verify_backlog=16 --verify_fatal=1 \
		--do_verify=1 --randrepeat=0 \
		--name=rt --prioclass=1 --offset=0 \
		--name=be0 --prioclass=2 --prio=0 --offset="$2" \
		--name=be7 --prioclass=2 --prio=7 --offset="$(( ${2%m} * 2 ))m" \
		--name=idle --prioclass=3 --offset="$(( ${2%m} * 3 ))m" \
		> /dev/null 2>&1
	rc=$?
	[ $rc = 0 ] || { tail -n 20 /tmp/fio.out; return 1; }
	grep -q "err= 0" /tmp/fio.out || { cat /tmp/fio.out; return 1; }
}

check "null_blk device made" sh -c "mkdir $nb && echo 1 > $nb/memory_backed &&
	echo 128 > $nb/size && echo 1 > $nb/power"
check "abiss chosen for $dev" sh -c "echo abiss > /sys/block/$dev/queue/scheduler"
before=$(dispatched $dev)
check "fio verify=crc32c, mixed classes, on $dev" fio_verify /dev/$dev 24m
after=$(dispatched $dev)
diag "$dev dispatched rt be idle: $before -> $after"
set -- $after
[ "$1" -gt 0 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] &&
	pass "$dev: requests of every class went through abiss" ||
	fail "$dev: requests of every class went through abiss (got '$after')"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"

check "ext3 disk mounted" mount_fs ext3 "$EXT3_DEV" /mnt/ext3
check "abiss chosen for $EXT3_NAME" sh -c "echo abiss > /sys/block/$EXT3_NAME/queue/scheduler"
before=$(sum $(dispatched "$EXT3_NAME"))
check "fio verify=crc32c, mixed classes, on a file of $EXT3_NAME" \
	fio_verify /mnt/ext3/fio.data 8m
after=$(sum $(dispatched "$EXT3_NAME"))
[ "$after" -gt "$before" ] && pass "$EXT3_NAME: the requests went through abiss" ||
	fail "$EXT3_NAME: the requests went through abiss ($before -> $after)"
rm -f /mnt/ext3/fio.data
umount /mnt/ext3
check "mq-deadline chosen again for $EXT3_NAME" \
	sh -c "echo mq-deadline > /sys/block/$EXT3_NAME/queue/scheduler"
done_testing
