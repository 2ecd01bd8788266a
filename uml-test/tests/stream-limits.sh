# SPDX-License-Identifier: GPL-2.0
# A playout buffer is locked memory, and the kernel itself limits it,
# whatever abissd answers: without CAP_IPC_LOCK a user's buffers count
# against its RLIMIT_MEMLOCK, and all buffers together against
# fs.abiss.max_buffer_kbytes; over either, ABISS_IOC_START fails with
# ENOMEM.  A stream that ends gives its memory back.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/abissd.sh

plan 15
mnt=/mnt/vfat
dir=$mnt/limits
sysctl=/proc/sys/fs/abiss/max_buffer_kbytes
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
[ -f "$dir/f1" ] || rdrt --create 4M --seed 31 "$dir/f1" > /dev/null
printf 'capacity %s 20MB\nuser 1000 rate 1MB\n' "$FAT_DEV" > "$ABISSD_CONF"
if abissd_run; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

ENOMEM="rdrt: ABISS refused the stream: Cannot allocate memory (the buffer is over the locked-memory limit, or out of memory)"
# start UID MEMLOCK-KIB BUFFER: a short stream as UID under that limit;
# prints rdrt's exit status and its error, if any.
start() {
	_out=$(sh -c 'ulimit -l "$1" && shift && exec asuser "$@"' sh "$2" "$1" "$1" \
		rdrt -a -r 100kB -s 64k -b "$3" -n 64k "$dir/f1" 2>&1 > /dev/null)
	echo "$? $_out"
}
# hold UID MEMLOCK-KIB BUFFER: a stream as UID that lasts until killed;
# returns once it is active, its pid in $held.
hold() {
	sh -c 'ulimit -l "$1" && shift && exec asuser "$@"' sh "$2" "$1" "$1" \
		rdrt -a -r 10kB -s 4k -b "$3" -n 4M "$dir/f1" > /dev/null 2>&1 &
	held=$!
	await 10 sh -c "[ \"\$(awk -v p=$held '\$2 == p { print \$13 }' $DEBUGFS/streams)\" = active ]"
}
# unhold: end that stream; returns once it is gone (a refill in flight
# holds the file, and the stream ends when it lets go).
unhold() {
	kill "$held"
	wait "$held" 2> /dev/null
	await 10 sh -c "! awk -v p=$held '\$2 == p { f = 1 } END { exit !f }' $DEBUGFS/streams"
}
DEBUGFS=/sys/kernel/debug/abiss

# RLIMIT_MEMLOCK of 4 MiB for uid 1000.
is "$(start 1000 4096 8M)" "1 $ENOMEM" "uid 1000: 8 MiB of buffer over a 4 MiB RLIMIT_MEMLOCK: ENOMEM"
is "$(start 1000 4096 4M)" "0 " "uid 1000: 4 MiB of buffer under a 4 MiB RLIMIT_MEMLOCK"
hold 1000 4096 3M
is "$(start 1000 4096 2M)" "1 $ENOMEM" "uid 1000: a second stream over what the first left: ENOMEM"
is "$(start 1000 4096 1M)" "0 " "uid 1000: a second stream within what the first left"
is "$(start 0 4096 8M)" "0 " "root (CAP_IPC_LOCK): 8 MiB under a 4 MiB RLIMIT_MEMLOCK"
unhold
is "$(start 1000 4096 4M)" "0 " "uid 1000: the ended stream gave its 3 MiB back"
is "$(start 1000 0 64k)" "1 $ENOMEM" "uid 1000: no RLIMIT_MEMLOCK at all: ENOMEM"

# The system-wide limit: a quarter of RAM by default, for root too.
total=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
is "$(cat $sysctl)" $((total / 16 * 4)) "fs.abiss.max_buffer_kbytes is a quarter of RAM"
old=$(cat $sysctl)
echo 6144 > $sysctl
hold 0 unlimited 4M
is "$(start 0 unlimited 4M)" "1 $ENOMEM" "root: over fs.abiss.max_buffer_kbytes with another stream: ENOMEM"
is "$(start 0 unlimited 2M)" "0 " "root: within what the other stream left"
unhold
is "$(start 0 unlimited 6M)" "0 " "root: the ended stream gave its buffer back"
check "fs.abiss.max_buffer_kbytes: -1 is EINVAL" sh -c "! echo -1 2> /dev/null > $sysctl"
is "$(cat $sysctl)" 6144 "a refused value changes nothing"
echo "$old" > $sysctl

abissd_stop
umount "$mnt"
done_testing
