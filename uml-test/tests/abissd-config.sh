# SPDX-License-Identifier: GPL-2.0
# abissd's config on the real kernel: a garbage line stops it from
# starting, SIGHUP with a broken config keeps the old policy, a reload
# that lowers a capacity leaves a running stream alone, 'filesystems'
# picks by type, and --calibrate measures a real block device into the
# config.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/abissd.sh

plan 20
mnt=/mnt/vfat
dir=$mnt/config
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
rdrt --create 8M --seed 1 "$dir/f1" > /dev/null
rdrt --create 1M --seed 2 "$dir/f2" > /dev/null

rm -f "$ABISSD_SOCKET"
printf 'capacity %s 20M\ngarbage here\n' "$FAT_DEV" > /tmp/bad.conf
out=$(abissd -F -c /tmp/bad.conf -p /tmp/abissd.pid -S "$ABISSD_SOCKET" 2>&1)
is "$?" 1 "a garbage line: abissd does not start (exit 1)"
is "$out" "abissd: /tmp/bad.conf:2: unknown keyword 'garbage'" "the message names file:line"
[ -e "$ABISSD_SOCKET" ] && fail "nor leaves a socket" || pass "nor leaves a socket"

cat > "$ABISSD_CONF" <<CONF
# root streams on the FAT disk
capacity $FAT_DEV 20M
user root
CONF
if abissd_run; then pass "abissd runs (user root by name)"; else
	fail "abissd runs (user root by name)"; bail "no abissd: $(cat "$ABISSD_LOG")"; fi

# A stream that runs until the test stops it (8 MiB at 200 kB/s: 42 s);
# reloads while it runs.
rdrt -a -r 200k -s 64k -b 1M -v -S 1 "$dir/f1" 2> /tmp/c.err &
p=$!
await 10 streams_are 1 0
echo "ceiling 200" >> "$ABISSD_CONF"
kill -HUP "$ABISSD_PID"
await 10 grep -q "SIGHUP: $ABISSD_CONF:4: ceiling 200 out of range (1-100): keeping the old policy" \
	"$ABISSD_LOG" && pass "SIGHUP with a broken config: logged with file:line" ||
	{ fail "SIGHUP with a broken config: logged with file:line"; diag "$(tail -n 2 "$ABISSD_LOG")"; }
kill -0 "$ABISSD_PID" && pass "abissd is alive" || fail "abissd is alive"
check "the old policy still admits" rdrt -a -r 2M -b 1M -v -S 2 "$dir/f2"
await 10 streams_are 1 0	# abissd hears of that stream's end in its own time
printf 'capacity %s 1M\n' "$FAT_DEV" > "$ABISSD_CONF"
is "$(ask reload)" ok "a reload that lowers the capacity"
is "$(ask status | grep "^device $FAT_DEVNO " | cut -d' ' -f4,10,12)" "1000000 200000 1" \
	"the running stream stays accounted"
check "new streams see the lower capacity: ENOSPC" refused "No space left on device" 0 1M "$dir/f2"
stream_stop "the stream across the reloads" $p

# Only ext3 streams.
check "mount $EXT3_DEV as ext3" mount_fs ext3 "$EXT3_DEV" /mnt/ext3
rdrt --create 1M --seed 3 /mnt/ext3/f3 > /dev/null
printf 'capacity * 20M\nfilesystems ext3\n' > "$ABISSD_CONF"
is "$(ask reload)" ok "a reload that lets only ext3 stream"
check "a file on vfat: EACCES" refused "Permission denied" 0 1M "$dir/f2"
grep -q "$FAT_DEVNO is vfat, not in 'filesystems' (line 2)" "$ABISSD_LOG" &&
	pass "the log says so" || { fail "the log says so"; diag "$(tail -n 2 "$ABISSD_LOG")"; }
check "a file on ext3 streams" rdrt -a -r 2M -b 1M -v -S 3 /mnt/ext3/f3
abissd_stop

out=$(abissd --calibrate "$EXT3_DEV" --calibrate-time 1 -c /tmp/cal.conf)
is "$?" 0 "--calibrate $EXT3_DEV"
diag "$out"
grep -q "^capacity $EXT3_DEVNO [1-9][0-9]*	# abissd --calibrate $EXT3_DEV$" /tmp/cal.conf &&
	pass "--calibrate wrote the device's capacity" ||
	{ fail "--calibrate wrote the device's capacity"; diag "$(cat /tmp/cal.conf)"; }
done_testing
