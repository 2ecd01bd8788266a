# SPDX-License-Identifier: GPL-2.0
# abiss-fuzz: random ABISS ioctls, sizes and structures, close, dup and
# fork from several threads on files on vfat, ext3 and tmpfs, on their
# folders and on device nodes, beside a fake abissd that writes garbage to
# /dev/abiss; then a shorter run on msdos.  Only documented errnos, every
# stream gone at the end, no splat and no new kmemleak report.
#
# ABISS_FUZZ_CALLS (default 20000) calls in the first run, a quarter of
# them in the second; ABISS_FUZZ_SEED the seed (the default is printed).
# Each run's own TAP is shown indented; a failure there names the seed,
# thread and call that replay it.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

calls=${ABISS_FUZZ_CALLS:-20000}
seed=${ABISS_FUZZ_SEED:-20261205}
threads=${ABISS_FUZZ_THREADS:-4}
# Low enough that STARTs meet ENOMEM now and then (at most 1 MiB a stream).
max_kib=16384
sysctl=/proc/sys/fs/abiss/max_buffer_kbytes

# fuzz DESCRIPTION ARG...: abiss-fuzz, its TAP indented (tap.sh).
fuzz() {
	_fd=$1
	shift
	indented "$_fd" abiss-fuzz --seed "$seed" --threads "$threads" "$@"
}

plan 8
diag "seed $seed, $calls calls, $threads threads (ABISS_FUZZ_SEED, ABISS_FUZZ_CALLS)"
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" /mnt/vfat
check "mount $EXT3_DEV as ext4" mount_fs ext4 "$EXT3_DEV" /mnt/ext3
check "mount a tmpfs" mount_fs tmpfs tmpfs /mnt/tmpfs
if pidof abissd > /dev/null; then fail "no abissd runs"; else pass "no abissd runs"; fi
mkdir -p /mnt/vfat/fuzz /mnt/ext3/fuzz /mnt/tmpfs/fuzz

old_kib=$(cat "$sysctl")
echo "$max_kib" > "$sysctl"
echo clear > /sys/kernel/debug/kmemleak 2> /dev/null

fuzz "abiss-fuzz on vfat, ext3 and tmpfs, $calls calls" --calls "$calls" \
	--dir /mnt/vfat/fuzz --dir /mnt/ext3/fuzz --dir /mnt/tmpfs/fuzz

# The FAT again as msdos (8.3 names): one mount of ubda at a time.
rm -rf /mnt/vfat/fuzz
if umount /mnt/vfat && mount_fs msdos "$FAT_DEV" /mnt/msdos && mkdir -p /mnt/msdos/fuzz2; then
	pass "umount the vfat, mount $FAT_DEV as msdos"
	seed=$((seed + 1))
	fuzz "abiss-fuzz on msdos and ext3, $((calls / 4)) calls" --calls $((calls / 4)) \
		--dir /mnt/msdos/fuzz2 --dir /mnt/ext3/fuzz
else
	fail "umount the vfat, mount $FAT_DEV as msdos"
	skip_rest 7 "no msdos mount"
fi
echo "$old_kib" > "$sysctl"

if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 1
	echo scan > /sys/kernel/debug/kmemleak
	is "$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)" 0 "kmemleak finds no new leak"
	grep -A 28 'unreferenced object' /sys/kernel/debug/kmemleak | head -n 60 | while read -r l; do
		diag "$l"
	done
else
	pass "kmemleak finds no new leak # SKIP no kmemleak"
fi
done_testing
