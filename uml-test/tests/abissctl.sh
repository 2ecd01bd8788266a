# SPDX-License-Identifier: GPL-2.0
# abissctl streams on the real kernel: three live 200 kB/s streams, each
# listed with its pid, command, file, rate, buffer and state; the numbers
# with -n -b match debugfs; none once the readers are gone.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/ctl.sh

plan 15
ctl_help abissctl "abissctl [options] [status]"
# Not through check: abissd must stay in this shell.
if ctl_setup; then pass "FAT mounted, abissd runs"; else
	fail "FAT mounted, abissd runs"; bail "no abissd"; fi
if ctl_streams 3 200k 1M; then pass "three streams run"; else
	fail "three streams run"; diag "$(cat "$DEBUGFS/streams" /tmp/ctl*.out)"; fi

out=$(abissctl streams 2>&1)
is "$?" 0 "abissctl streams exits 0"
is "$(echo "$out" | sed 1d | wc -l)" 3 "it lists three streams"
for i in 1 2 3; do
	re="^ *$(ctl_id $i) +$(ctl_pid $i) +rdrt +200\.0 kB/s +1\.0 MiB .* active +$CTL_DIR/s$i\$"
	if echo "$out" | grep -qE "$re"; then pass "s$i: id, pid, command, rate, buffer, state, file"
	else fail "s$i: id, pid, command, rate, buffer, state, file"; diag "$out"; fi
done

# -n -b: the numbers, the file as MAJ:MIN:INO (the FAT disk is $FAT_DEVNO: 98:0 in UML).
out=$(abissctl -n -b list 2>&1)
is "$?" 0 "abissctl -n -b list exits 0"
for i in 1 2 3; do
	ino=$(stat -c %i "$CTL_DIR/s$i")
	re="^ *$(ctl_id $i) +$(ctl_pid $i) +200000 +1048576 .* active +$FAT_DEVNO:$ino\$"
	if echo "$out" | grep -qE "$re"; then pass "s$i with -n -b: numbers, file as dev:ino"
	else fail "s$i with -n -b: numbers, file as dev:ino"; diag "$out"; fi
done

# The fill level and counters of one reading of debugfs, shown right.
ctl_snapshot /tmp/snap
out=$(abissctl --debugfs /tmp/snap -n -b streams 2>&1)
bad=$(echo "$out" | sed 1d | awk -v pg="$(awk '/^KernelPageSize:/ { print $2 * 1024; exit }' /proc/self/smaps)" '
	FILENAME != "-" && FNR > 1 { held[$1] = $8 * pg; del[$1] = $9; miss[$1] = $10; buf[$1] = $6; next }
	FILENAME == "-" {
		want = held[$1] " " int(held[$1] * 100 / buf[$1]) "% " del[$1] " " miss[$1]
		got = $5 " " $6 " " $7 " " $8
		n++
		if (got != want) print "stream " $1 ": " got ", expected " want
	}
	END { print n + 0 " streams checked" }' /tmp/snap/streams -)
is "$bad" "3 streams checked" "fill, share of the buffer, delivered and misses as debugfs says"

ctl_stop_streams
is "$(abissctl streams 2>&1)" "(no streams)" "no streams once the readers are gone"
abissd_stop
umount "$CTL_MNT"
done_testing
