# SPDX-License-Identifier: GPL-2.0
# abiss-run gives unmodified programs streams: fio (psync and sync) and pv
# read a test file on vfat through the LD_PRELOAD shim.  While each runs,
# debugfs lists its stream at the rate asked and abissd logged it accepted;
# the data read is the file's.  With abissd's capacity too small the program
# still runs and the refusal is printed; with --strict the open fails.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh

plan 30
mnt=/mnt/vfat
dir=$mnt/run
file=$dir/data
check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" "$mnt" || bail "cannot mount"
mkdir -p "$dir"
check "an 8 MiB test file" rdrt --create 8M --seed 31 "$file"
want=$(sum_of "$file")
if abissd_start 20MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

# stream_rates: the rate column of every stream debugfs lists.
stream_rates() { tail -n +2 /sys/kernel/debug/abiss/streams | awk '{ print $5 }' | tr '\n' ' '; }

# watch_run NAME CMD...: CMD in the background with stdout in /tmp/NAME.out
# and stderr in /tmp/NAME.err; the first rates debugfs lists while it runs
# are in $SEEN; its exit status in $RC.
watch_run() {
	_name=$1
	shift
	"$@" > "/tmp/$_name.out" 2> "/tmp/$_name.err" &
	_pid=$!
	SEEN=
	while [ -z "$SEEN" ] && kill -0 "$_pid" 2> /dev/null; do
		SEEN=$(stream_rates)
		sleep 0.1
	done
	wait "$_pid"
	RC=$?
}

# streamed NAME: the program's stream was listed in debugfs while it ran.
streamed() {
	is "$SEEN" "2000000 " "$1: debugfs listed its stream at 2 MB/s while it ran"
}

# --- fio, in 64 KiB reads at 2 MiB/s over the file -----------------------
for engine in psync sync; do
	watch_run "fio-$engine" abiss-run --rate 2MB --buffer 8M --verbose -- \
		fio --name=abiss-run --filename="$file" --rw=read --bs=64k --size=8M \
		--ioengine=$engine --rate=2m --invalidate=0 --output-format=terse
	is "$RC" 0 "fio ($engine) under abiss-run exits 0"
	streamed "fio ($engine)"
	line=$(grep "^abiss-run: stream [0-9]* on '$file' at 2000000 bytes/s$" "/tmp/fio-$engine.err")
	if [ -n "$line" ]; then pass "fio ($engine): --verbose tells the stream started"; else
		fail "fio ($engine): --verbose tells the stream started"; diag "$(cat "/tmp/fio-$engine.err")"; fi
	id=$(echo "$line" | awk '{ print $3 }')
	grep -q "stream $id (.*rate 2000000 B/s.*accepted" /tmp/abissd.log &&
		pass "fio ($engine): abissd accepted stream $id" ||
		{ fail "fio ($engine): abissd accepted stream $id"; diag "$(cat /tmp/abissd.log)"; }
	# terse v3: field 6 is the KiB read, 7 the bandwidth
	is "$(cut -d';' -f6 "/tmp/fio-$engine.out")" 8192 "fio ($engine) read the 8 MiB"
done

# --- pv, rate-limited to 4 MiB/s, its output checked -----------------------
watch_run pv abiss-run --rate 2MB -- pv -q -L 4M "$file"
is "$RC" 0 "pv under abiss-run exits 0"
streamed "pv"
is "$(sum_of /tmp/pv.out)" "$want" "pv's output is the file, byte for byte"
is "$(cat /tmp/pv.err)" "" "pv: nothing on stderr without --verbose"
is "$(abissd_reserved 0)" 0 "abissd got every reservation back"

# --- a file that does not match --match: no stream -------------------------
watch_run nomatch abiss-run --rate 2MB --match '*.mp3' --verbose -- pv -q -L 4M "$file"
is "$RC" 0 "pv with a --match that fails exits 0"
is "$SEEN" "" "no stream for a file that does not match"
is "$(sum_of /tmp/nomatch.out)" "$want" "and the data is the file's"

# --- refused: abissd's capacity is too small ---------------------------------
abissd_stop
if abissd_start 1MB; then pass "abissd runs with 1 MB/s"; else fail "abissd runs with 1 MB/s"; fi
watch_run denied abiss-run --rate 2MB -- pv -q -L 8M "$file"
is "$RC" 0 "a refused stream: pv still runs and exits 0"
is "$(sum_of /tmp/denied.out)" "$want" "and reads the file"
is "$(cat /tmp/denied.err)" \
	"abiss-run: cannot start a stream on '$file': the device's capacity is reserved" \
	"the refusal is printed"
abiss-run --rate 2MB --strict -- pv -q "$file" > /tmp/strict.out 2> /tmp/strict.err
rc=$?
[ "$rc" != 0 ] && pass "--strict: pv fails" || fail "--strict: pv fails"
grep -q "^abiss-run: cannot start a stream on '$file': the device's capacity is reserved$" \
	/tmp/strict.err && pass "--strict: the refusal is printed" ||
	{ fail "--strict: the refusal is printed"; diag "$(cat /tmp/strict.err)"; }
grep -q "^pv: .*$file: No space left on device$" /tmp/strict.err &&
	pass "--strict: the open failed with the refusal's errno (ENOSPC)" ||
	{ fail "--strict: the open failed with the refusal's errno (ENOSPC)"; diag "$(cat /tmp/strict.err)"; }
is "$(wc -c < /tmp/strict.out)" 0 "--strict: nothing was read"
abissd_stop

# --- no abissd at all ----------------------------------------------------------
out=$(abiss-run --rate 2MB -- pv -q "$file" 2>&1 > /dev/null)
is "$out" "abiss-run: cannot start a stream on '$file': no admission daemon is running" \
	"without abissd the program runs and the reason is printed"
umount "$mnt"
done_testing
