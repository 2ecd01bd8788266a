# SPDX-License-Identifier: GPL-2.0
# The demo (make demo): abissd with a real policy; a guaranteed ABISS stream
# (rdrt), an unmodified fio streaming through abiss-run and a plain reader,
# all reading at 2 MB/s in 64 KiB reads, while 8 greedy readers load the
# same disk, a FAT on null_blk capped at 20 MB/s; abissctl and ptree show
# the streams.  Human text goes to
# /results/demo.txt, which uml-test/demo/run prints; the TAP on stdout
# only says whether each step worked.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

exec 3> /results/demo.txt
say() { echo "$*" >&3; }
ms() { echo "$1" | awk '{ printf "%8.2f ms", $1 / 1000000 }'; }

DURATION=${DEMO_SECONDS:-20}
plan 12
say "Kernel: $(uname -r) ($(uname -m)), booted in UML"
say
mount_fs vfat "$FAT_DEV" /mnt/fat && pass "FAT image mounted" || fail "FAT image mounted"
mount_fs ext3 "$EXT3_DEV" /mnt/ext3 && pass "ext3 image mounted" || fail "ext3 image mounted"
say "Mounted disk images:"
awk '$2 ~ "^/mnt/" { printf "  %-10s on %-10s type %s\n", $1, $2, $3 }' /proc/mounts >&3
say
say "I/O schedulers offered by ubda: $(cat /sys/block/ubda/queue/scheduler)"
echo abiss > /sys/block/ubda/queue/scheduler &&
	pass "abiss scheduler selected" || fail "abiss scheduler selected"
say "                       chosen: $(cat /sys/block/ubda/queue/scheduler)"
say

# The disk the players share: null_blk capped at 20 MB/s with 0.5 ms
# completions (a slow disk with real contention), FAT, the abiss scheduler.
nb=/sys/kernel/config/nullb/nullb-demo
mkdir $nb && echo 1 > $nb/memory_backed && echo 320 > $nb/size &&
	echo 20 > $nb/mbps && echo 2 > $nb/irqmode &&
	echo 500000 > $nb/completion_nsec && echo 1 > $nb/power &&
	mkdosfs -F 32 /dev/nullb-demo > /dev/null &&
	echo abiss > /sys/block/nullb-demo/queue/scheduler &&
	mount_fs vfat /dev/nullb-demo /mnt/demo &&
	pass "FAT on a 20 MB/s null_blk" || fail "FAT on a 20 MB/s null_blk"
dir=/mnt/demo
say "Disk: FAT on null_blk capped at 20 MB/s, 0.5 ms completions;"
say "scheduler: $(cat /sys/block/nullb-demo/queue/scheduler)"
say

cat > /tmp/abissd.conf <<CONF
# The demo disk: 20 MB/s, of which streams may reserve 85 %.
capacity /dev/nullb-demo 20MB
ceiling 85
filesystems vfat ext3 ext4
# root streams within the capacity; uid 1000 gets two streams, 3 MB/s in all.
user 1000 rate 2MB total 3MB streams 2
CONF
abissd -F -c /tmp/abissd.conf -p /tmp/abissd.pid -s "$ABISSD_STATUS" -S "$ABISSD_SOCKET" \
	> /dev/null 2> /tmp/abissd.log < /dev/null &
ABISSD_PID=$!
sleep 0.5
[ -e "$ABISSD_STATUS" ] && pass "abissd runs" || fail "abissd runs"
say "abissd's config (/tmp/abissd.conf, see abissd.conf(5)):"
sed 's/^/  /' /tmp/abissd.conf >&3

rdrt --create 40M --seed 1 "$dir/stream.dat" > /dev/null
rdrt --create 40M --seed 2 "$dir/plain.dat" > /dev/null
rdrt --create 40M --seed 3 "$dir/fio.dat" > /dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
say
say "uid 1000 asks for 5 MB/s, over its limit of 2 MB/s per stream:"
asuser 1000 1000 rdrt -a -r 5MB -t 1 "$dir/plain.dat" > /dev/null 2> /tmp/denied.err
is "$?" 1 "a stream over the user's limit is refused"
sed 's/^/  /' /tmp/denied.err >&3

# 8 greedy buffered readers of the same disk, from 8 places on it.
fio --name=greedy --filename=/dev/nullb-demo --rw=read --bs=128k \
	--numjobs=8 --offset_increment=32m --size=32m --time_based \
	--runtime=$((DURATION + 4)) > /dev/null 2>&1 &
LOAD_PIDS=$!
say
say "Load: 8 greedy readers (fio, 128 KiB buffered reads) of the same disk."
say "For ${DURATION} s, three players read 2 MB/s in 64 KiB reads:"
say "  rdrt as an ABISS stream with 4 s of buffer (rdrt -a, real-time CPU priority),"
say "  an unmodified fio streaming through abiss-run (--rate 2100kB --buffer 8M),"
say "  rdrt as a plain reader (real-time CPU priority, no stream)."
sleep 1
rdrt -R 10 -a -r 2MB -s 64k -b 8M -t "$DURATION" -v -S 1 -j "$dir/stream.dat" \
	> /tmp/stream.json 2> /tmp/stream.err &
p1=$!
rdrt -R 10 -r 2MB -s 64k -t "$DURATION" -v -S 2 -j "$dir/plain.dat" \
	> /tmp/plain.json 2> /tmp/plain.err &
p2=$!
# fio's 2m is 2 MiB/s: the stream is admitted a little above it.
abiss-run --rate 2100kB --buffer 8M --match "$dir/*" --verbose -- \
	fio --name=player --filename="$dir/fio.dat" --rw=read --bs=64k --rate=2m \
	--ioengine=psync --runtime="$DURATION" --percentile_list=99 \
	--output-format=terse --output=/tmp/fio.out > /dev/null 2> /tmp/fio.err &
p3=$!
sleep 3
say
say "While they run: abissctl status (abissd's reservations and the kernel's buffers)"
abissctl -S "$ABISSD_SOCKET" status > /tmp/abissctl.out 2>&1 &&
	pass "abissctl status" || fail "abissctl status"
sed 's/^/  /' /tmp/abissctl.out >&3
say
say "and ptree (the kernel's refill deadlines):"
ptree > /tmp/ptree.out 2>&1 && pass "ptree" || fail "ptree"
sed 's/^/  /' /tmp/ptree.out >&3
wait $p1; rc1=$?
wait $p2; rc2=$?
wait $p3; rc3=$?
wait $LOAD_PIDS
umount /mnt/demo
[ $rc1 = 0 ] && pass "ABISS stream ran, data verified" || fail "ABISS stream ran, data verified"
[ $rc2 = 0 ] && pass "plain reader ran, data verified" || fail "plain reader ran, data verified"
[ $rc3 = 0 ] && grep -q 'abiss-run: stream' /tmp/fio.err &&
	pass "fio streamed through abiss-run" || fail "fio streamed through abiss-run"

s=$(cat /tmp/stream.json)
p=$(cat /tmp/plain.json)
terse() { tail -n 1 "$1" | cut -d';' -f"$2" | sed 's/.*=//'; }
us() { awk -v u="$1" 'BEGIN { printf "%8.2f ms", u / 1000 }'; }
say
say "                           worst read     p99 read   misses  data"
say "  rdrt, ABISS stream     $(ms "$(json_field "$s" worst_latency_ns)")  $(ms "$(json_field "$s" p99_latency_ns)")  $(printf %7s "$(json_field "$s" misses)")  $(json_field "$s" verified)"
say "  fio via abiss-run      $(us "$(terse /tmp/fio.out 39)")  $(us "$(terse /tmp/fio.out 18)")        -  -"
say "  rdrt, plain reader     $(ms "$(json_field "$p" worst_latency_ns)")  $(ms "$(json_field "$p" p99_latency_ns)")        -  $(json_field "$p" verified)"
say
say "The rdrt stream's worst refill: $(ms "$(json_field "$s" worst_refill_ns)") over $(json_field "$s" refills) refills."
say "abiss-run said: $(grep 'abiss-run:' /tmp/fio.err | head -n 1)"
say "abissd after the streams: reserved $(abissd_reserved) B/s."
abissd_stop
say
say "abissd's log:"
sed 's/^/  /' /tmp/abissd.log >&3
pass "demo ran"
done_testing
