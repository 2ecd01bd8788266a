# SPDX-License-Identifier: GPL-2.0
# A refill that waits for a device that does not deliver holds up no
# user-facing path: the stream's mutex is never held across I/O, so its
# reader's exit, another stream's stop and debugfs do not wait for the
# device (and, under abiss_lock, for every other device).  The stalled
# device is an io.max of 4 KiB/s on the cgroup of one stream's reader: its
# first fill of 1 MiB takes four minutes.  Each check has 20 s, a bound
# for a hang only: each of these takes milliseconds when nothing waits.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

plan 8
mnt=/mnt/vfat
dir=$mnt/stall
cgroot=/sys/fs/cgroup
cg=$cgroot/abiss-stall
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
[ -f "$dir/f1" ] || rdrt --create 4M --seed 51 "$dir/f1" > /dev/null
[ -f "$dir/f2" ] || rdrt --create 16M --seed 52 "$dir/f2" > /dev/null
devno=$(cat /sys/class/block/"${FAT_DEV#/dev/}"/dev)
grep -q " $cgroot cgroup2 " /proc/mounts || mount -t cgroup2 none "$cgroot"
echo '+io' > "$cgroot/cgroup.subtree_control"
rmdir "$cg" 2> /dev/null
check "a cgroup with io.max at 4 KiB/s" sh -c "mkdir $cg && echo '$devno rbps=4096' > $cg/io.max"
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

# ends_within SECS DESC PID: PID exits within SECS seconds.
ends_within() {
	if await "$1" ended "$3"; then pass "$2"; else
		fail "$2"; diag "still there after $1 s: $(cut -d" " -f1-3 "/proc/$3/stat" 2> /dev/null)"; fi
}
# within SECS DESC CMD...: CMD finishes within SECS seconds (left behind if not).
within() {
	_s=$1 _d=$2
	shift 2
	"$@" > /dev/null 2>&1 &
	ends_within "$_s" "$_d" $!
}
active() { [ "$(stream_of "$1" 13)" = active ]; }

rdrt -a -r 1MB -s 64k -b 1M -n 16M "$dir/f2" > /dev/null 2>&1 &
p2=$!
await 10 active "$p2"
echo 1 > /proc/sys/vm/drop_caches
sh -c "$IN_CGROUP" "$cg" rdrt -a -r 1MB -b 1M -n 1M "$dir/f1" \
	> /dev/null 2>&1 &
p1=$!
# Its START waits for the first fill, whose reads the cgroup throttles.
await 10 sh -c "[ \"\$(stream_of $p1 2)\" = $p1 ]"
sleep 2
within 20 "debugfs lists the streams while a refill waits for the device" \
	cat /sys/kernel/debug/abiss/streams
kill -9 "$p1"
ends_within 20 "the stalled stream's reader exits on kill -9" "$p1"
within 20 "debugfs lists the streams after it" cat /sys/kernel/debug/abiss/streams
kill "$p2"
ends_within 20 "another stream's reader ends on SIGTERM" "$p2"
# Let the throttled reads through, whatever happened.
echo "$devno rbps=max" > "$cg/io.max"
await 30 sh -c "[ \$(tail -n +2 /sys/kernel/debug/abiss/streams | wc -l) = 0 ]"
is "$(tail -n +2 /sys/kernel/debug/abiss/streams | wc -l)" 0 "no stream is left"
abissd_stop
rmdir "$cg"
umount "$mnt"
done_testing
