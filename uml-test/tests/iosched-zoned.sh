# SPDX-License-Identifier: GPL-2.0
# Zoned devices and abiss, which does not keep a zone's writes in order
# itself.  On 6.1 it refuses a host-managed zoned device: choosing it for a
# zoned null_blk fails, and the device keeps the scheduler it had and still
# does I/O.  From 6.10 on, zone write plugging holds each write to a
# sequential zone until the one before it has completed, so no scheduler
# can reorder them: abiss serves the device, and fio's sequential writes at
# queue depth 16 through it land in order and read back verified.
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
case "$(uname -r)" in
6.1.*)
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
	;;
*)
	check "abiss chosen for the zoned device" sh -c "echo abiss > $sched"
	check "fio writes two zones at queue depth 16 through abiss, in order, verified" \
		fio --output=/tmp/fio-zoned.out --name=zoned --filename=/dev/$dev \
		--zonemode=zbd --direct=1 --ioengine=libaio --iodepth=16 \
		--rw=write --bs=16k --size=8m --verify=crc32c --do_verify=1 \
		--verify_fatal=1
	grep -q "err= 0" /tmp/fio-zoned.out || diag "$(cat /tmp/fio-zoned.out)"
	case "$(cat $sched)" in
	*"[abiss]"*) pass "abiss still the zoned device's scheduler" ;;
	*) fail "abiss still the zoned device's scheduler"; diag "$(cat $sched)" ;;
	esac
	;;
esac
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"
done_testing
