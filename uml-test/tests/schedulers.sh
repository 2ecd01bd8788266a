# SPDX-License-Identifier: GPL-2.0
# The I/O schedulers the FAT disk (ubd, virtio-blk) and a null_blk device
# offer, and each of them can be selected.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

want="none mq-deadline kyber bfq"
plan 4

offered() { tr -d '[]' < "/sys/block/$1/queue/scheduler"; }

# has_all DEV: every scheduler in $want is offered by DEV and can be chosen.
has_all() {
	for s in $want; do
		echo " $(offered "$1") " | grep -q " $s " || { echo "$s not offered"; return 1; }
		echo "$s" > "/sys/block/$1/queue/scheduler" || return 1
		grep -q "\[$s\]" "/sys/block/$1/queue/scheduler" || { echo "$s not taken"; return 1; }
	done
}

diag "$FAT_NAME offers: $(cat "/sys/block/$FAT_NAME/queue/scheduler")"
check "$FAT_NAME offers and takes $want" has_all "$FAT_NAME"

# null_blk names a configfs-made disk after its configfs folder.
nb=/sys/kernel/config/nullb/nullb-sched
check "null_blk device made through configfs" \
	sh -c "mkdir $nb && echo 1 > $nb/memory_backed && echo 64 > $nb/size &&
		echo 1 > $nb/power"
dev=nullb-sched
diag "$dev offers: $(cat /sys/block/$dev/queue/scheduler)"
check "$dev offers and takes $want" has_all "$dev"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"
done_testing
