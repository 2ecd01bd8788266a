# SPDX-License-Identifier: GPL-2.0
# Refills are scheduled per disk.
# 1. A stream on one disk misses nothing while the refills of a stream on
#    another disk wait for a device that does not deliver (io.max of 4 KiB/s
#    on its starter's cgroup, on a null_blk): each disk has its own worker,
#    which never waits for I/O.
# 2. A stream with a tiny buffer, which wants a refill every few
#    milliseconds, does not make the other streams of its disk refill with
#    it: a 4 MiB stream at 1 MB/s is refilled a few times in 6 s (it was
#    refilled at every page its reader took).
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
. /abiss/uml-test/lib/nullb.sh

plan 17
mnt=/mnt/vfat
dir=$mnt/refill-sched
nbmnt=/mnt/nb-refill
cgroot=/sys/fs/cgroup
cg=$cgroot/abiss-refill-sched
nullb_names nb-refill
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
for f in a:8M:61 a2:8M:62 b2:8M:63; do
	set -- $(echo "$f" | tr : ' ')
	[ -f "$dir/$1" ] || rdrt --create "$2" --seed "$3" "$dir/$1" > /dev/null
done
check "a null_blk of its own, with vfat" sh -c "mkdir $nb && echo 1 > $nb/memory_backed &&
	echo 64 > $nb/size && echo 1 > $nb/power && mkdosfs /dev/$dev > /dev/null &&
	mkdir -p $nbmnt && mount -t vfat /dev/$dev $nbmnt"
rdrt --create 4M --seed 64 "$nbmnt/b" > /dev/null
devno=$(cat /sys/block/"$dev"/dev)
grep -q " $cgroot cgroup2 " /proc/mounts || mount -t cgroup2 none "$cgroot"
echo '+io' > "$cgroot/cgroup.subtree_control"
rmdir "$cg" 2> /dev/null
check "a cgroup with io.max at 4 KiB/s on the null_blk" \
	sh -c "mkdir $cg && echo '$devno rbps=4096' > $cg/io.max"
if abissd_start 100MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

listed() { [ "$(stream_of "$1" 2)" = "$1" ]; }

# 1. Stream A on the ubd disk, full; then stream B on the null_blk, whose
# first fill the cgroup holds for minutes; A reads on for 8 s, 8 buffers.
rdrt -a -v -j -S 61 -r 1MB -b 1M -t 8 "$dir/a" > /tmp/a.json 2> /tmp/a.err &
pa=$!
await 10 listed "$pa"
echo 1 > /proc/sys/vm/drop_caches
sh -c "$IN_CGROUP" "$cg" rdrt -a -r 1MB -b 1M -n 1M "$nbmnt/b" \
	> /dev/null 2>&1 &
pb=$!
check "the stalled stream is there" await 10 listed "$pb"
await 30 ended "$pa"
check "the stream on the other disk ends in its time" ended "$pa"
wait "$pa"
rc=$?
check_stream "stream beside a stalled disk" "$(cat /tmp/a.json)" "$rc"
[ -s /tmp/a.err ] && diag "$(cat /tmp/a.err)"
is "$(stream_of "$pb" 13)" active "the stalled stream is still active, waiting"
kill -9 "$pb"
await 20 ended "$pb"
check "the stalled stream's reader exits on kill -9" ended "$pb"
echo "$devno rbps=max" > "$cg/io.max"

# 2. A 4 MiB stream and a 16 KiB one on the same disk, 6 s.
rdrt -a -j -r 1MB -b 4M -t 6 "$dir/a2" > /tmp/a2.json 2> /dev/null &
pa2=$!
rdrt -a -j -r 1MB -b 16k -s 4k -t 6 "$dir/b2" > /tmp/b2.json 2> /dev/null &
pb2=$!
await 30 ended "$pa2"
await 30 ended "$pb2"
wait "$pa2"
is "$?" 0 "the 4 MiB stream's reader exits 0"
wait "$pb2"
is "$?" 0 "the 16 KiB stream's reader exits 0"
a2=$(json_field "$(cat /tmp/a2.json)" refills)
b2=$(json_field "$(cat /tmp/b2.json)" refills)
diag "refills in 6 s: 4 MiB stream $a2, 16 KiB stream $b2"
# 6 MB read through a 4 MiB buffer: 2 refills; with top-ups beside the
# other stream's, a few more.  Refilled with every pass of the other
# stream's, it would be one per page its reader takes, over a thousand.
check "the 4 MiB stream was refilled at most 4 times a second" [ "${a2:-9999}" -le 24 ]
check "the 16 KiB stream was refilled more often" [ "${b2:-0}" -gt "${a2:-9999}" ]
is "$(json_field "$(cat /tmp/a2.json)" misses)" 0 "the 4 MiB stream missed nothing"

await 30 sh -c "[ \$(tail -n +2 /sys/kernel/debug/abiss/streams | wc -l) = 0 ]"
is "$(tail -n +2 /sys/kernel/debug/abiss/streams | wc -l)" 0 "no stream is left"
abissd_stop
rmdir "$cg"
umount "$nbmnt"
umount "$mnt"
echo 0 > "$nb/power"
rmdir "$nb"
done_testing
