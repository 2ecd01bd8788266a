# SPDX-License-Identifier: GPL-2.0
# abiss-races: race loops on ABISS stream start and teardown (START vs
# truncate, STOP, close, umount; a reader killed with -9; the daemon
# restarting; the scheduler switched under a stream), on vfat and then on
# ext3, each beside a fake abissd whose accounting must equal the kernel's
# after every round.  Every stream ends, no page stays held, no splat, and
# kmemleak finds no new leak.
#
# ABISS_RACE_ROUNDS (default 25; make check-long: 1000) rounds per race;
# ABISS_RACE_SEED the seed (by default from the clock; each run prints
# it).  Each run's own TAP is shown indented; a failure there names the
# race, round and seed.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

rounds=${ABISS_RACE_ROUNDS:-25}
kml=/sys/kernel/debug/kmemleak

# races FS: abiss-races in /mnt/FS/races, its TAP indented (tap.sh).
races() {
	mkdir -p "/mnt/$1/races"
	indented "abiss-races on $1, $rounds rounds per race" \
		env ABISS_TEST_DIR="/mnt/$1/races" ABISS_RACE_ROUNDS="$rounds" abiss-races
	rm -rf "/mnt/$1/races"
}

plan 6
if pidof abissd > /dev/null; then fail "no abissd runs"; else pass "no abissd runs"; fi
[ -w $kml ] && echo clear > $kml

check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" /mnt/vfat
races vfat
check "mount $EXT3_DEV as ext4" mount_fs ext4 "$EXT3_DEV" /mnt/ext3
races ext3

# kmemleak reports objects unreferenced for a while: scan twice.
if [ -w $kml ]; then
	echo scan > $kml
	sleep 6
	echo scan > $kml
	is "$(grep -c 'unreferenced object' $kml)" 0 "kmemleak finds no new leak"
	grep -A 28 'unreferenced object' $kml | head -n 60 | while read -r l; do
		diag "$l"
	done
else
	pass "kmemleak finds no new leak # SKIP no kmemleak"
fi
done_testing
