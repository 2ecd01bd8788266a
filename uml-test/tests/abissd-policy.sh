# SPDX-License-Identifier: GPL-2.0
# abissd's policy on the real kernel: users with their own limits stream
# side by side, a user over its limit gets EDQUOT, a device over its
# capacity * ceiling ENOSPC, a user without a line EACCES; stop by id on
# the control socket (root only), and a malformed request on it.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/abissd.sh

plan 26
mnt=/mnt/vfat
dir=$mnt/policy
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
for i in 1 2 3 4; do rdrt --create 16M --seed "$i" "$dir/f$i" > /dev/null; done
# 1 MB/s, half of it for streams: 500 kB/s.
cat > "$ABISSD_CONF" <<CONF
capacity $FAT_DEV 1M
ceiling 50
user 1000 rate 200k total 200k streams 1
user 2000 rate 300k
CONF
if abissd_run; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

# Two users, two limits: uid 1000 at 200 kB/s, uid 2000 at 300 kB/s, which
# fill the device until the test stops them (16 MiB: 55 s and more).
asuser 1000 1000 rdrt -a -r 200k -s 64k -b 1M -v -S 1 "$dir/f1" 2> /tmp/u1.err &
p1=$!
asuser 2000 2000 rdrt -a -r 300k -s 64k -b 1536k -v -S 2 "$dir/f2" 2> /tmp/u2.err &
p2=$!
await 10 streams_are 1 1000 2000
is "$(streams_of 1000):$(streams_of 2000)" 1:1 "both users' streams admitted"
is "$(abissd_reserved 500000)" 500000 "the device is at its ceiling (500 kB/s of 1 MB/s)"
check "uid 1000 over its total: EDQUOT" refused "Disk quota exceeded" 1000 100k "$dir/f3"
check "uid 2000 over its rate per stream: EDQUOT" refused "Disk quota exceeded" 2000 400k "$dir/f3"
check "uid 2000 within its limits, over the device's: ENOSPC" \
	refused "No space left on device" 2000 100k "$dir/f3"
check "root over the device's capacity: ENOSPC" refused "No space left on device" 0 100k "$dir/f3"
check "uid 3000, no line for it: EACCES" refused "Permission denied" 3000 100k "$dir/f3"
grep -q "uid 1000 gid 1000, file $FAT_DEVNO:[0-9]* '$dir/f3', rate 100000 B/s, buffer [0-9]*): denied with EDQUOT: over the total of uid 1000 ('user 1000' on line 3): 200000 reserved + 100000 > 200000 B/s" \
	"$ABISSD_LOG" && pass "the log says who, which file, and why" ||
	{ fail "the log says who, which file, and why"; diag "$(tail -n 5 "$ABISSD_LOG")"; }
stream_stop "uid 1000's stream" $p1
stream_stop "uid 2000's stream" $p2
is "$(abissd_reserved 0)" 0 "both reservations released"

# Stop by id: root may, others may not.
# 4 MiB at 500 kB/s: 8 s, the checks before the stop take well under one.
rdrt -a -r 500k -s 64k -b 1M -n 4M -S 4 -v --status "$dir/f4" > /dev/null 2> /tmp/stop.err &
p=$!
await 10 streams_are 1 0
id=$(stream_ids 0)
is "$(ask "stop $id" 1000)" "error EPERM only root may stop ID" "uid 1000 may not stop it"
is "$(ask "stop 12345" | cut -d' ' -f1-2)" "error ENOENT" "stop of an unknown id: ENOENT"
is "$(ask "stop $id")" ok "root stops it"
await 10 awk -v i="$id" '$1 == i && $13 == "ended" && $14 == 6 { f = 1 } END { exit !f }' /sys/kernel/debug/abiss/streams &&
	pass "the kernel ended it (by abissd)" ||
	{ fail "the kernel ended it (by abissd)"; diag "$(cat /sys/kernel/debug/abiss/streams)"; }
is "$(abissd_reserved 0)" 0 "its reservation is released"
wait $p
is "$?" 0 "the reader goes on to the end of its 4 MiB"
grep -q "before stop: .* end_reason 6$" /tmp/stop.err && pass "its status says ended (admin)" ||
	{ fail "its status says ended (admin)"; diag "$(cat /tmp/stop.err)"; }

# Garbage on the control socket.
is "$(printf 'stat\001us\nversion\n' | ctl | head -n 1)" "error EINVAL request is not text" \
	"binary on the socket: EINVAL"
is "$(head -c 400 /dev/zero | tr '\0' x | ctl)" "error EINVAL request line longer than 255 bytes" \
	"a line too long: EINVAL"
is "$(ask version | tail -n 1)" ok "abissd answers the next client"
kill -0 "$ABISSD_PID" && pass "abissd is alive" || fail "abissd is alive"
abissd_stop
done_testing
