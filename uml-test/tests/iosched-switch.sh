# SPDX-License-Identifier: GPL-2.0
# Switching a device's scheduler to abiss and away from it while fio writes
# and verifies (verify=crc32c) loses no request and leaks nothing: 200
# switches on null_blk and 40 on ubd under load, fio's verification passes,
# abiss's exit finds no request still counted (it would WARN, which fails
# the run), and kmemleak finds no leak from the block layer.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh
. /abiss/uml-test/lib/switch.sh

plan 11

nb=/sys/kernel/config/nullb/nullb-switch
cycle="abiss mq-deadline abiss none abiss kyber abiss bfq"

# Each round two jobs (real-time and best-effort) write SIZE each in 4-64
# KiB blocks and read them back (uml-test/lib/switch.sh).
fio_jobs() {
	echo "--ioengine=libaio --iodepth=8 --rw=randwrite --bsrange=4k-64k" \
		"--name=rt --prioclass=1 --offset=0" \
		"--name=be --prioclass=2 --prio=3 --offset=$1"
}

check "null_blk device made" sh -c "mkdir $nb && echo 1 > $nb/memory_backed &&
	echo 64 > $nb/size && echo 1 > $nb/power"
start=$(date +%s)
switches nullb-switch 200 /dev/nullb-switch 8m
is "$switch_bad" "" "200 switches on nullb-switch under fio load"
diag "200 switches took $(($(date +%s) - start)) s, $rounds fio rounds of 2 x 8 MiB, $blocks blocks verified"
check "fio verified every block on nullb-switch" fio_ok
is "$(chosen nullb-switch)" abiss "nullb-switch ends on abiss"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"

check "ext3 disk mounted" mount_fs ext3 "$EXT3_DEV" /mnt/ext3
start=$(date +%s)
switches "$EXT3_NAME" 40 /mnt/ext3/switch.data 2m
is "$switch_bad" "" "40 switches on $EXT3_NAME under fio load"
diag "40 switches took $(($(date +%s) - start)) s, $rounds fio rounds of 2 x 2 MiB, $blocks blocks verified"
check "fio verified every block on $EXT3_NAME" fio_ok
rm -f /mnt/ext3/switch.data
umount /mnt/ext3
check "mq-deadline chosen again for $EXT3_NAME" \
	sh -c "echo mq-deadline > /sys/block/$EXT3_NAME/queue/scheduler"

# kmemleak reports objects unreferenced for a while: scan twice.
kml=/sys/kernel/debug/kmemleak
if [ -w $kml ]; then
	echo scan > $kml; sleep 6; echo scan > $kml
	leaks=$(grep -c "unreferenced object" $kml)
	ours=$(grep -A 30 "unreferenced object" $kml | grep -c "abiss\|elevator\|blk_mq_sched\|blk_mq_init")
	diag "kmemleak: $leaks unreferenced objects, $ours from the block layer"
	is "$ours" 0 "kmemleak finds no leak from the schedulers"
	check "kmemleak is running" test -n "$(cat $kml 2>&1; echo x)"
else
	skip_rest 11 "no kmemleak in this kernel"
fi
done_testing
