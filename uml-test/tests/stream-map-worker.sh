# SPDX-License-Identifier: GPL-2.0
# START builds a stream's location map in its disk's map worker
# ("abiss-map/DISK"), whose reads are real-time I/O (level 4, below the
# refills) and whose CPU priority is normal, so that the map's metadata
# reads do not queue behind best-effort load; the starter waits killably,
# and a kill stops the build at its next lookup.  On a null_blk whose
# every request takes 200 ms (the file written first; the device then
# powered off, slowed and powered on again: null_blk keeps the data),
# under the abiss scheduler, a FAT of 512-byte clusters, so that mapping a
# 16 MiB file takes 32768 lookups and reads 256 FAT blocks: 50 s at the
# least.  While the stream is still being admitted (no refill yet), the
# scheduler counts real-time requests: the map's reads.  Killed then, the
# starter is gone in seconds, not after the build; so is a second starter
# killed while its map waits behind the first's (it was, before, after
# the first map and its own).
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
. /abiss/uml-test/lib/nullb.sh

plan 10
nullb_names nb-map
mnt=/mnt/nb-map
check "a null_blk with vfat of 512-byte clusters and a 16 MiB file" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 64 > $nb/size && echo 0 > $nb/irqmode &&
	echo 1 > $nb/power && mkdosfs -F 32 -s 1 /dev/$dev > /dev/null &&
	mkdir -p $mnt && mount -t vfat /dev/$dev $mnt &&
	rdrt --create 16M --seed 81 $mnt/f > /dev/null &&
	rdrt --create 1M --seed 82 $mnt/g > /dev/null && umount $mnt"
check "the device slowed to 200 ms a request, under abiss, mounted again" sh -c "
	echo 0 > $nb/power && echo 2 > $nb/irqmode &&
	echo 200000000 > $nb/completion_nsec && echo 1 > $nb/power &&
	echo abiss > /sys/block/$dev/queue/scheduler && mount -t vfat /dev/$dev $mnt"
if abissd_start 100MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

admitting() { [ "$(stream_of "$1" 13)" = admitting ]; }
# rt_past N: the scheduler has counted more than N real-time requests.
rt_past() { look inserted; [ "$n1" -gt "$1" ]; }

look inserted
rt0=$n1
rdrt -a -r 1MB -s 64k -b 1M -t 2 "$mnt/f" > /dev/null 2> /tmp/map.err &
p=$!
await 20 admitting "$p" || diag "stream not admitting: $(cat /tmp/map.err)"
w=$(kthread_pid abiss-map/)
[ -n "$w" ] && pass "the disk's map worker is there (pid $w)" ||
	fail "the disk's map worker is there"
is "$(ionice -p "${w:-0}" 2>&1)" "realtime: prio 4" "its I/O priority is real-time, level 4"
# Field 41 of /proc/PID/stat, the 39th after the command's ") ".
is "$(sed 's/.*) //' "/proc/${w:-0}/stat" 2> /dev/null | awk '{ print $39 }')" 0 \
	"its CPU scheduling policy is normal (SCHED_OTHER)"
await 20 rt_past "$rt0" &&
	pass "real-time requests while the stream is being admitted: the map's reads" ||
	fail "real-time requests while the stream is being admitted (inserted: $n1 $n2 $n3)"
admitting "$p" || diag "the stream is no longer being admitted: $(stream_of "$p" 13)"
rdrt -a -r 1MB -s 64k -b 1M -t 2 "$mnt/g" > /dev/null 2> /tmp/map2.err &
q=$!
await 20 admitting "$q" || diag "second stream not admitting: $(cat /tmp/map2.err)"
kill -KILL "$q"
await 10 ended "$q" &&
	pass "a starter killed while its map waits behind another's is gone in seconds" ||
	fail "a starter killed while its map waits behind another's is gone in seconds"
wait "$q" 2> /dev/null
admitting "$p" || diag "the stream is no longer being admitted: $(stream_of "$p" 13)"
kill -KILL "$p"
await 10 ended "$p" &&
	pass "a starter killed while its map is built is gone in seconds" ||
	fail "a starter killed while its map is built is gone in seconds"
wait "$p" 2> /dev/null
abissd_stop
check "umount, the device removed" sh -c "umount $mnt && echo 0 > $nb/power && rmdir $nb"
done_testing
