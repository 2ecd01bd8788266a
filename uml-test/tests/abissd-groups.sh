# SPDX-License-Identifier: GPL-2.0
# A group line of abissd's policy applies to a process's supplementary
# groups too, not only to its effective gid: the kernel sends them,
# translated into abissd's user namespace, and a group's streams count
# together whichever of its members' groups it is.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/abissd.sh

plan 7
mnt=/mnt/vfat
dir=$mnt/groups
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
[ -f "$dir/f1" ] || rdrt --create 4M --seed 41 "$dir/f1" > /dev/null
chmod 644 "$dir/f1"
# The shipped example's case: audio (here 29) is a desktop user's
# supplementary group, never its effective one.
printf 'capacity %s 10MB\ngroup 29 rate 1MB streams 1\n' "$FAT_DEV" > "$ABISSD_CONF"
if abissd_run; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

check "uid 1000 gid 1000 without group 29: EACCES" refused "Permission denied" 1000 100kB "$dir/f1"
asuser 1000 1000,29 rdrt -a -r 100kB -s 4k -n 4M "$dir/f1" > /dev/null 2> /tmp/g1.err &
p=$!
if await 10 streams_are 1 1000; then pass "uid 1000 gid 1000 in group 29 streams"; else
	fail "uid 1000 gid 1000 in group 29 streams"; diag "$(cat /tmp/g1.err; tail -n 2 "$ABISSD_LOG")"; fi
out=$(asuser 1001 1001,5,29 rdrt -a -r 100kB -n 64k "$dir/f1" 2>&1)
is "$?:$out" "1:rdrt: ABISS refused the stream: Disk quota exceeded (over your rate, stream or buffer limit)" \
	"uid 1001 in group 29 too: the group's one stream is taken (EDQUOT)"
grep -q "over the streams of gid 29 ('group 29' on line 2): 1 of 1 running" "$ABISSD_LOG" &&
	pass "abissd counted both under gid 29" || { fail "abissd counted both under gid 29"; diag "$(tail -n 2 "$ABISSD_LOG")"; }
kill "$p"
wait "$p" 2> /dev/null
await 10 streams_are 0 1000
# In a user namespace of its own the process sees its groups unmapped;
# abissd still sees them as they are in its own.
out=$(asuser 1000 1000,29 unshare -r sh -c 'rdrt -a -r 100kB -n 64k "$1" > /dev/null' rdrt \
	"$dir/f1" 2>&1)
is "$?:$out" "0:" "uid 1000 in group 29, root of its own user namespace: still group 29 to abissd"
abissd_stop
umount "$mnt"
done_testing
