# SPDX-License-Identifier: GPL-2.0
# Ids cross namespaces translated, never trusted: a user who is root only in
# a user namespace of its own (unshare -r) is its own uid to abissd, so a
# policy that lets only root stream refuses it; a stream started in a pid
# namespace of its own is named to abissd, debugfs and abissd's log by its
# pid in their namespace, not as pid 1 of its own.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/abissd.sh

plan 9
mnt=/mnt/vfat
dir=$mnt/ns
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
rdrt --create 4M --seed 1 "$dir/f1" > /dev/null
chmod 644 "$dir/f1"
# No user or group line: only root may stream.
echo "capacity $FAT_DEV 10M" > "$ABISSD_CONF"
if abissd_run; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

check "uid 1000 without a line: EACCES" refused "Permission denied" 1000 100k "$dir/f1"
# As uid 1000, root of a user namespace of its own.
out=$(asuser 1000 1000 unshare -r sh -c 'id -u; rdrt -a -r 100k -n 64k "$1"' rdrt "$dir/f1" 2>&1)
rc=$?
case "$out" in
0*"rdrt: ABISS refused the stream: Permission denied"*) [ $rc = 1 ] ;;
*) false ;;
esac && pass "uid 1000 as root of its own user namespace: still EACCES" ||
	{ fail "uid 1000 as root of its own user namespace: still EACCES"; diag "exit $rc: $out"; }
grep -q "(pid [0-9]* uid 1000 gid 1000, file $FAT_DEVNO:[0-9]* '$dir/f1', .*denied with EACCES" \
	"$ABISSD_LOG" && pass "abissd saw uid 1000 gid 1000, not 0" ||
	{ fail "abissd saw uid 1000 gid 1000, not 0"; diag "$(tail -n 3 "$ABISSD_LOG")"; }
! grep -q "uid 0 gid 0, file $FAT_DEVNO:[0-9]* '$dir/f1'" "$ABISSD_LOG" &&
	pass "no request came as uid 0" || fail "no request came as uid 0"

# Root in a pid namespace of its own: the stream's reader is pid 1 there.
unshare -p -f sh -c 'echo "inner pid $$"; exec rdrt -a -r 200k -s 64k -b 256k "$1"' rdrt \
	"$dir/f1" > /tmp/ns.out 2>&1 &
p=$!
await 10 streams_are 1 0
inner=$(children_of "$p")
is "$(sed -n 's/^inner pid //p' /tmp/ns.out)" 1 "the reader is pid 1 in its own pid namespace"
is "$(awk 'NR > 1 { print $2 }' /sys/kernel/debug/abiss/streams)" "$inner" \
	"debugfs names the reader by its pid here ($inner)"
grep -q "stream [0-9]* (pid $inner uid 0 gid 0, file $FAT_DEVNO:[0-9]* '$dir/f1', .*accepted" \
	"$ABISSD_LOG" && pass "abissd saw its pid here, and named its file from /proc" ||
	{ fail "abissd saw its pid here, and named its file from /proc"; diag "$(tail -n 3 "$ABISSD_LOG")"; }
kill "$inner" 2> /dev/null
wait "$p"
abissd_stop
done_testing
