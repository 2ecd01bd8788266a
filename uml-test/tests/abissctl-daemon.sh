# SPDX-License-Identifier: GPL-2.0
# abissctl against the real abissd's control socket
# (Documentation/abissd-control.rst), with two live streams: status shows
# the FAT disk's capacity and reservations and the streams with their fill
# levels; stop is refused to a user and for an unknown id, and ends a
# stream for root; reload takes a good config and refuses a bad one; a
# stopped abissd is an error.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/ctl.sh

plan 21
sock=$CTL_SOCK
conf=/tmp/ctl.conf
ctl() { abissctl -S "$sock" "$@"; }

echo "# abissctl test: every device 20 MB/s" > "$conf"
# Not through check: abissd must stay in this shell.
if ctl_setup_socket "$conf"; then pass "abissd listens on its control socket"; else
	fail "abissd listens on its control socket"; diag "$(cat /tmp/abissd.log)"; bail "no socket"; fi
if ctl_streams 2 200k 1M; then pass "two streams run"; else
	fail "two streams run"; diag "$(cat "$DEBUGFS/streams" /tmp/ctl*.out)"; fi
id1=$(ctl_id 1)
id2=$(ctl_id 2)

# --- status ---------------------------------------------------------------------
out=$(ctl status 2>&1)
is "$?" 0 "abissctl status exits 0"
echo "$out" | sed 's/^/#   /'
re="^$FAT_DEVNO \\($FAT_NAME\\)"' +20\.0 MB/s +[0-9]+% .* 400\.0 kB/s +[0-9.]+ [kMG]?B/s +2$'
if echo "$out" | grep -qE "$re"; then
	pass "the FAT disk: 20 MB/s, 400 kB/s reserved, 2 streams"
else
	fail "the FAT disk: 20 MB/s, 400 kB/s reserved, 2 streams"
fi
for i in 1 2; do
	re="^ *$(ctl_id $i) +$(ctl_pid $i) +rdrt +200\.0 kB/s +1\.0 MiB +[0-9.]+ [KMG]?i?B [0-9]+%"
	re="$re .* active +$CTL_DIR/s$i\$"
	if echo "$out" | grep -qE "$re"; then pass "s$i: listed with its fill level and file"
	else fail "s$i: listed with its fill level and file"; fi
done
# -n -b: DEVICE CAPACITY CEILING LIMIT RESERVED FREE STREAMS, free = limit - reserved.
dev=$(ctl -n -b status | awk -v d="$FAT_DEVNO" '$1 == d { print $2, $5, $7, ($4 - $5 == $6) }')
is "$dev" "20000000 400000 2 1" \
	"-n -b: capacity, reserved, streams in numbers; free = limit - reserved"
msg="cannot connect to '/run/abiss/abissd.sock': No such file or directory"
is "$(abissctl status 2>&1)" "abissctl: $msg (is abissd running?)" \
	"without --socket, the default socket (not there)"

# --- stop ---------------------------------------------------------------------------
# A user: bind-mount a passwd that has one.
cp /etc/passwd /tmp/passwd
echo 'ctltest:x:1000:1000::/tmp:/bin/sh' >> /tmp/passwd
mount --bind /tmp/passwd /etc/passwd
out=$(su -s /bin/sh ctltest -c "$(command -v abissctl) -S $sock stop $id1" 2>&1)
is "$?" 1 "stop by a user: exit 1"
case "$out" in
"abissctl: stop $id1: "*"(EPERM)") pass "stop by a user: abissd says EPERM" ;;
*) fail "stop by a user: abissd says EPERM"; diag "$out" ;;
esac
umount /etc/passwd
out=$(ctl stop 999999 2>&1)
is "$?:$(echo "$out" | grep -c '^abissctl: stop 999999: .*(ENOENT)$')" "1:1" \
	"stop of an unknown id: exit 1, ENOENT"
is "$(awk '$13 == "active"' "$DEBUGFS/streams" | wc -l)" 2 "both streams still run"
out=$(ctl stop "$id1" 2>&1)
is "$?:$out" "0:" "stop by root: exit 0, nothing printed"
reserved_is() { [ "$(ctl -n -b status | awk -v d="$FAT_DEVNO" '$1 == d { print $5 }')" = "$1" ]; }
await 10 reserved_is 200000
is "$(ctl -n -b status | awk -v d="$FAT_DEVNO" '$1 == d { print $5, $7 }')" "200000 1" \
	"its reservation is released"
is "$(awk -v i="$id1" '$1 == i { print $14 }' "$DEBUGFS/streams")" 6 \
	"the kernel ended it as stopped by abissd (ABISS_END_ADMIN)"
is "$(awk -v i="$id2" '$1 == i { print $13 }' "$DEBUGFS/streams")" active \
	"the other stream runs on"

# --- reload ---------------------------------------------------------------------------
echo "capacity $FAT_DEV 10M" >> "$conf"
out=$(ctl reload 2>&1)
is "$?:$out" "0:" "reload of a good config: exit 0"
is "$(ctl -n -b status | awk -v d="$FAT_DEVNO" '$1 == d { print $2 }')" 10000000 "the new capacity applies"
echo "frob" >> "$conf"
out=$(ctl reload 2>&1)
is "$?:$(echo "$out" | grep -c "^abissctl: reload: $conf:3: .*(EINVAL)$")" "1:1" \
	"reload of a bad config: exit 1, EINVAL naming the line"
is "$(ctl -n -b status | awk -v d="$FAT_DEVNO" '$1 == d { print $2 }')" 10000000 "the old policy stays"

# --- no abissd ------------------------------------------------------------------------
ctl_stop_streams
abissd_stop
out=$(ctl status 2>&1)
is "$?:$(echo "$out" | grep -c "^abissctl: cannot connect to '$sock': .*(is abissd running?)$")" \
	"1:1" "abissd stopped: exit 1, cannot connect"
umount "$CTL_MNT"
done_testing
