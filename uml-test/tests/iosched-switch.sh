# SPDX-License-Identifier: GPL-2.0
# Switching a device's scheduler to abiss and away from it while fio writes
# and verifies (verify=crc32c) loses no request and leaks nothing: 200
# switches on null_blk and 40 on ubd under load, fio's verification passes,
# abiss's exit finds no request still counted (it would WARN, which fails
# the run), and kmemleak finds no leak from the block layer.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

plan 11

nb=/sys/kernel/config/nullb/nullb-switch
cycle="abiss mq-deadline abiss none abiss kyber abiss bfq"

# fio_load FILENAME SIZE: random writes verified while writing, real-time
# and best-effort jobs, in the background until fio_stop (at most 5 min);
# its pid in $fio_pid.
fio_load() {
	fio --thread --output=/tmp/fio-switch.out --filename="$1" \
		--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
		--bsrange=4k-64k --size="$2" --time_based --runtime=300 \
		--verify=crc32c --verify_backlog=32 --verify_fatal=1 \
		--randrepeat=0 \
		--name=rt --prioclass=1 --offset=0 \
		--name=be --prioclass=2 --prio=3 --offset="$2" \
		> /dev/null 2>&1 &
	fio_pid=$!
}

# switches DEV N: N switches through $cycle while fio runs, ending on abiss.
switches() {
	n=0
	while [ $n -lt "$2" ]; do
		for s in $cycle; do
			[ $n -lt "$2" ] || break
			echo "$s" > "/sys/block/$1/queue/scheduler" || { echo "switch $n to $s failed"; return 1; }
			n=$((n + 1))
		done
		kill -0 "$fio_pid" 2> /dev/null || { echo "fio ended after $n switches"; return 1; }
	done
	echo abiss > "/sys/block/$1/queue/scheduler"
}

# fio_stop: a second more of load after the switches, then fio is told to
# stop (SIGINT: it ends its jobs, prints its report and exits with 128);
# its status in $rc.  In this shell, not in check's subshell, where fio is
# no child.
fio_stop() {
	sleep 1
	kill -INT "$fio_pid"
	wait "$fio_pid"
	rc=$?
}

# fio_ok: fio stopped as told, not earlier, with no error and every block
# it read back as written.
fio_ok() {
	[ $rc = 128 ] && grep -q "terminating on signal 2" /tmp/fio-switch.out ||
		{ echo "fio exited with $rc"; tail -n 20 /tmp/fio-switch.out; return 1; }
	grep -q "err= 0" /tmp/fio-switch.out || { cat /tmp/fio-switch.out; return 1; }
	! grep -qi "verify.*fail\|bad magic\|crc32c: wanted" /tmp/fio-switch.out
}

check "null_blk device made" sh -c "mkdir $nb && echo 1 > $nb/memory_backed &&
	echo 64 > $nb/size && echo 1 > $nb/power"
fio_load /dev/nullb-switch 16m
sleep 2
start=$(date +%s)
check "200 switches on nullb-switch under fio load" switches nullb-switch 200
diag "200 switches took $(($(date +%s) - start)) s"
fio_stop
check "fio verified every block on nullb-switch" fio_ok
is "$(cat /sys/block/nullb-switch/queue/scheduler)" "mq-deadline kyber [abiss] bfq none" \
	"nullb-switch ends on abiss"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"

check "ext3 disk mounted" mount_fs ext3 "$EXT3_DEV" /mnt/ext3
fio_load /mnt/ext3/switch.data 8m
sleep 2
check "40 switches on ubdb under fio load" switches ubdb 40
fio_stop
check "fio verified every block on ubdb" fio_ok
rm -f /mnt/ext3/switch.data
umount /mnt/ext3
check "mq-deadline chosen again for ubdb" \
	sh -c "echo mq-deadline > /sys/block/ubdb/queue/scheduler"

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
