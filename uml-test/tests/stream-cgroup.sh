# SPDX-License-Identifier: GPL-2.0
# A stream's playout buffer and its refill I/O belong to the cgroup of the
# process that started it, not to the root cgroup of the refill thread:
# the held pages are in the memory cgroup's page cache (memory.stat), the
# refill reads in the I/O cgroup's io.stat, and io.max limits the refills
# as it limits every other read of the cgroup.  Under a memory.max that
# leaves room beside the buffer, the stream runs with no OOM kill.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

plan 13
mnt=/mnt/vfat
dir=$mnt/cg
cgroot=/sys/fs/cgroup
cg=$cgroot/abiss-test
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
[ -f "$dir/f1" ] || rdrt --create 32M --seed 21 "$dir/f1" > /dev/null
devno=$(cat /sys/class/block/"${FAT_DEV#/dev/}"/dev)
grep -q " $cgroot cgroup2 " /proc/mounts || mount -t cgroup2 none "$cgroot"
check "memory and io controllers for child cgroups" \
	sh -c "echo '+memory +io' > $cgroot/cgroup.subtree_control"
rmdir "$cg" 2> /dev/null
check "a cgroup of its own" mkdir "$cg"
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

# cg_stat FILE KEY: a value of a flat-keyed cgroup file (memory.stat) or
# of the line of the stream's device in a nested-keyed one (io.stat).
cg_stat() {
	awk -v k="$2" -v d="$devno" '$1 == k { print $2; exit }
		$1 == d { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) {
			print substr($i, length(k) + 2); exit } }' "$cg/$1"
}

# A 1 MB/s stream with 8 MiB of buffer, from a cold cache: once it has
# started, the 8 MiB are held in pages charged to the starter's cgroup,
# whose memory.max of 48 MiB leaves room for the rest.
check "memory.max of 48 MiB" sh -c "echo $((48 << 20)) > $cg/memory.max"
echo 3 > /proc/sys/vm/drop_caches
sh -c "$IN_CGROUP" "$cg" rdrt -a -r 1MB -s 64k -b 8M -n 16M -v -S 21 -j "$dir/f1" > /tmp/cg1.json 2> /tmp/cg1.err &
p=$!
await 10 sh -c "[ \"\$(awk -v p=$p '\$2 == p { print \$13 }' /sys/kernel/debug/abiss/streams)\" = active ]"
file=$(cg_stat memory.stat file)
[ "${file:-0}" -ge $((6 << 20)) ] && pass "the held buffer is in the cgroup's page cache" ||
	{ fail "the held buffer is in the cgroup's page cache"; diag "memory.stat file ${file:-none}"; }
wait $p
rc=$?
check_stream_rc() { [ "$1" = 0 ] && [ "$(json_field "$2" verified)" = true ]; }
check "the stream read its data as written" check_stream_rc $rc "$(cat /tmp/cg1.json)" ||
	diag "$(cat /tmp/cg1.err)"
is "$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")" 0 \
	"no OOM kill in the cgroup under its memory.max"
rbytes=$(cg_stat io.stat rbytes)
[ "${rbytes:-0}" -ge $((12 << 20)) ] && pass "the refill reads are in the cgroup's io.stat" ||
	{ fail "the refill reads are in the cgroup's io.stat"; diag "io.stat: $(cat "$cg/io.stat")"; }

# io.max at 256 KiB/s under a 2 MB/s stream: the refills are throttled
# with the rest of the cgroup's reads, so the buffer (512 KiB) runs dry
# eight times over and reads miss it.  Root's refills would not be.
echo 3 > /proc/sys/vm/drop_caches
echo "$devno rbps=262144" > "$cg/io.max"
sh -c "$IN_CGROUP" "$cg" rdrt -a -r 2MB -s 64k -b 512k -n 2M -j "$dir/f1" > /tmp/cg2.json 2> /tmp/cg2.err
rc=$?
misses=$(json_field "$(cat /tmp/cg2.json)" misses)
[ $rc = 0 ] && [ "${misses:-0}" -gt 0 ] && pass "io.max throttles the refills: reads missed" ||
	{ fail "io.max throttles the refills: reads missed"; diag "exit $rc, misses ${misses:-none}: $(cat /tmp/cg2.err)"; }
# The first stream's reads all hit its buffer: no late refill, not even
# the first fill, which START waits for (it was counted once: every
# stream had one late refill).  A throttled stream's late refills are
# not asserted: its reader reads what it misses itself, a buffer ahead,
# and the refills after that find the pages there.
late=$(json_field "$(cat /tmp/cg1.json)" late_refills)
is "$(json_field "$(cat /tmp/cg1.json)" misses):${late:-none}" 0:0 \
	"a stream that never waited counts no late refill, the first fill neither"
echo "$devno rbps=max" > "$cg/io.max"

# A refill that is late without its reader overtaking it: a 1 MB/s stream
# with 1 MiB of buffer starts unthrottled (the first fill is quick), then
# io.max drops to 256 KiB/s.  The next refill is issued when due, with
# the device's latency measured unthrottled, and its pages (in the page
# cache, under I/O) arrive seconds after a reader at the rate needs the
# first of them: the reader waits for them, and the refill counts late,
# by seconds.  The data is still as written.
echo 3 > /proc/sys/vm/drop_caches
sh -c "$IN_CGROUP" "$cg" rdrt -a -r 1MB -s 64k -b 1M -n 4M -v -S 21 -j "$dir/f1" > /tmp/cg3.json 2> /tmp/cg3.err &
p=$!
await 10 sh -c "[ \"\$(awk -v p=$p '\$2 == p { print \$13 }' /sys/kernel/debug/abiss/streams)\" = active ]"
echo "$devno rbps=262144" > "$cg/io.max"
wait $p
rc=$?
echo "$devno rbps=max" > "$cg/io.max"
res=$(cat /tmp/cg3.json)
late=$(json_field "$res" late_refills)
[ $rc = 0 ] && [ "$(json_field "$res" verified)" = true ] && [ "${late:-0}" -gt 0 ] &&
	[ "$(json_field "$res" worst_late_ns)" -ge 100000000 ] &&
	pass "a refill slowed by io.max after the start counts late, its data as written" ||
	{ fail "a refill slowed by io.max after the start counts late, its data as written"
	  diag "exit $rc, late ${late:-none}, worst late $(json_field "$res" worst_late_ns) ns," \
		"misses $(json_field "$res" misses): $(cat /tmp/cg3.err)"; }

abissd_stop
check "the cgroup goes away with its processes" rmdir "$cg"
umount "$mnt"
done_testing
