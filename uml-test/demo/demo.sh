# SPDX-License-Identifier: GPL-2.0
# The demo (make demo): what the booted ABISS kernel offers today.  Human
# text goes to /results/demo.txt, which uml-test/demo prints; the TAP on
# stdout only says whether each step worked.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

exec 3> /results/demo.txt
say() { echo "$*" >&3; }

plan 4
say "Kernel: $(uname -r) ($(uname -m)), booted in UML"
say
mount_fs vfat "$FAT_DEV" /mnt/fat && pass "FAT image mounted" || fail "FAT image mounted"
mount_fs ext3 "$EXT3_DEV" /mnt/ext3 && pass "ext3 image mounted" || fail "ext3 image mounted"
say "Mounted disk images:"
awk '$2 ~ "^/mnt/" { printf "  %-10s on %-10s type %s\n", $1, $2, $3 }' /proc/mounts >&3
df -h /mnt/fat /mnt/ext3 | sed 's/^/  /' >&3
say
say "I/O schedulers offered:"
for d in /sys/block/ubd*; do
	say "  $(basename "$d"): $(cat "$d/queue/scheduler")"
done
nb=/sys/kernel/config/nullb/nullb-demo
if mkdir $nb && echo 1 > $nb/memory_backed && echo 1 > $nb/power; then
	say "  nullb-demo: $(cat /sys/block/nullb-demo/queue/scheduler)"
	echo 0 > $nb/power
	rmdir $nb
	pass "null_blk device made"
else
	fail "null_blk device made"
fi
say
if [ -e /dev/abiss ]; then
	say "ABISS: /dev/abiss is there."
else
	say "Not there yet: the ABISS core (read streams, playout buffer, abissd),"
	say "the abiss I/O scheduler and the tools.  This kernel carries only"
	say "CONFIG_ABISS and the -abiss version tag; later patches add the rest."
fi
pass "demo ran"
done_testing
