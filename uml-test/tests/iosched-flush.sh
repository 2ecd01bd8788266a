# SPDX-License-Identifier: GPL-2.0
# abiss on a device with a volatile write cache and FUA: writes that ask
# for durability (O_DSYNC direct writes; fsync: a cache flush after the
# data) beside real-time reads, on a null_blk device with a write-back
# cache, while the in-flight bound holds and best-effort requests may hold
# only 4 of 8 scheduler tags.  Every job ends and verifies its data (a
# flush sequence stuck on a tag would hang it), and afterwards the
# counters of the scheduler add up: nothing queued or in flight, every
# request inserted completed.  From 6.10 on, FUA writes and the data of
# pre-flush writes go through the scheduler (before, they bypassed it).
# Not shown failing: no realistic bug of the 6.12 port made it fail (the
# KUnit case abiss_test_flush_writes guards the head insertion).
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/nullb.sh

plan 10

nullb_names nullb-flush
fio_out=/tmp/fio-flush.out

check "null_blk device made with a write-back cache" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 64 > $nb/size &&
	echo 16 > $nb/cache_size && echo 8 > $nb/hw_queue_depth &&
	{ ! test -e $nb/fua || echo 1 > $nb/fua; } && echo 1 > $nb/power"
is "$(cat /sys/block/$dev/queue/write_cache) $(cat /sys/block/$dev/queue/fua)" \
	"write back 1" "the device has a volatile write cache and FUA"
check "abiss chosen, 8 requests, best-effort depth 4" sh -c "
	echo abiss > /sys/block/$dev/queue/scheduler &&
	echo 8 > /sys/block/$dev/queue/nr_requests &&
	echo 4 > $ios/be_tag_depth"

# A real-time reader keeps the bound in force for as long as the writers
# run (it is stopped after them); four O_DSYNC writers send each 4 KiB
# block as a FUA write, two buffered writers fsync every 8 blocks.  The
# writers are best-effort and verify what they wrote.
fio --thread --output=/dev/null --filename=/dev/$dev --name=rt \
	--rw=randread --direct=1 --ioengine=psync --prioclass=1 --bs=4k \
	--offset=48m --size=16m --time_based --runtime=600 > /dev/null 2>&1 &
rt_pid=$!

# First the O_DSYNC writers alone (the reader beside them), and what the
# best-effort class counted meanwhile, for the diagnostics only: 4 x 256
# writes of 4 KiB gave 2048 requests inserted on 6.12.118 and 1024 on
# 6.1.192 (whose block device direct I/O writes with O_DSYNC are plain
# writes and a flush); that is no proof of FUA writes through the
# scheduler, so nothing is asserted on it.
look inserted
be0=$n2
timeout -s KILL 300 fio --thread --output=/tmp/fio-fua.out --filename=/dev/$dev \
	--randrepeat=0 --verify=crc32c --verify_fatal=1 --bs=4k --ioengine=psync \
	--prioclass=2 --name=fua-alone --rw=write --direct=1 --sync=dsync \
	--numjobs=4 --offset=32m --offset_increment=1m --size=1m > /dev/null 2>&1
is "$?" 0 "four O_DSYNC writers alone end and verify their data"
look inserted
fua_be=$((n2 - be0))
diag "best-effort requests inserted while the O_DSYNC writers ran alone: $fua_be"

# Then all six writers at once.
fio --thread --output=$fio_out --filename=/dev/$dev --randrepeat=0 \
	--verify=crc32c --verify_fatal=1 --bs=4k --ioengine=psync --prioclass=2 \
	--name=fua --rw=write --direct=1 --sync=dsync \
	--numjobs=4 --offset=0 --offset_increment=4m --size=1m \
	--name=fsync --rw=write --fsync=8 \
	--numjobs=2 --offset=16m --offset_increment=4m --size=2m \
	> /dev/null 2>&1 &
fio_pid=$!

# At most 300 s (they take seconds): a flush sequence stuck on a tag
# would hold its writer for ever.
dbg_look() {
	for f in queued inflight inserted dispatched completed; do
		diag "$f rt be idle: $(cat $dbg/$f)"
	done
}
t0=$(date +%s)
while kill -0 $fio_pid 2> /dev/null && [ $(($(date +%s) - t0)) -lt 300 ]; do
	sleep 1
done
if kill -0 $fio_pid 2> /dev/null; then
	fail "the six writers ended beside the real-time reader"
	dbg_look
	diag "$(cat /proc/$fio_pid/task/*/stack 2> /dev/null | sort | uniq -c | sort -rn | head -n 20)"
	kill -KILL $fio_pid
else
	pass "the six writers ended beside the real-time reader"
	diag "writers took $(($(date +%s) - t0)) s"
fi
wait $fio_pid
fio_rc=$?
kill -INT $rt_pid 2> /dev/null
wait $rt_pid
is "$fio_rc" 0 "fio's writers ended without an error (data verified)"
[ "$fio_rc" -eq 0 ] || diag "$(grep -E 'err=|verify' $fio_out | head -n 20)"
is "$(grep -c 'err= 0' $fio_out)" 6 "each of the six writers reports err= 0"

dbg_look
is "$(cat $dbg/queued) $(cat $dbg/inflight)" "0 0 0 0 0 0" \
	"nothing left queued or in flight once the load is over"
look inserted
i1=$n1 i2=$n2 i3=$n3
look completed
is "$n1 $n2 $n3" "$i1 $i2 $i3" "every request inserted was completed, in each class"
echo none > /sys/block/$dev/queue/scheduler
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"
done_testing
