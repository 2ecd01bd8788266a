# SPDX-License-Identifier: GPL-2.0
# abiss refuses a host-managed zoned device (it does not keep a zone's
# writes in order): choosing it for a zoned null_blk fails, and the device
# keeps the scheduler it had and still does I/O.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/nullb.sh

plan 6

if ! zcat /proc/config.gz 2> /dev/null | grep -q '^CONFIG_BLK_DEV_ZONED=y'; then
	skip_rest 6 "the kernel has no CONFIG_BLK_DEV_ZONED: null_blk cannot make a zoned device"
	exit 0
fi

nullb_names nullb-zoned
sched=/sys/block/$dev/queue/scheduler
check "zoned null_blk device made (host-managed, 16 zones of 4 MiB)" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 64 > $nb/size &&
	echo 1 > $nb/zoned && echo 4 > $nb/zone_size && echo 1 > $nb/power"
is "$(cat /sys/block/$dev/queue/zoned)" host-managed "the device is host-managed zoned"
before=$(cat $sched)
diag "scheduler: $before"
if err=$(sh -c "echo abiss > $sched" 2>&1); then
	fail "choosing abiss for the zoned device fails"
else
	pass "choosing abiss for the zoned device fails"
	diag "$err"
fi
is "$(cat $sched)" "$before" "the zoned device keeps its scheduler"
check "the zoned device still reads" \
	dd if=/dev/$dev of=/dev/null bs=64k count=64 iflag=direct
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"
done_testing
