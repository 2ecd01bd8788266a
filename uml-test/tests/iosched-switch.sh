# SPDX-License-Identifier: GPL-2.0
# Switching a device's scheduler to abiss and away from it while fio writes
# and verifies (verify=crc32c) loses no request and leaks nothing: 200
# switches on null_blk and 40 on ubd under load, fio's verification passes,
# abiss's exit finds no request still counted (it would WARN, which fails
# the run), and kmemleak finds no leak from the block layer.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/disk.sh

plan 11

nb=/sys/kernel/config/nullb/nullb-switch
cycle="abiss mq-deadline abiss none abiss kyber abiss bfq"

# The load is fio in rounds of a fixed amount of I/O, one after the other
# for as long as the switching takes: each round two jobs (real-time and
# best-effort) write SIZE each once at random in 4-64 KiB blocks, reading
# every block back while writing (verify_backlog) and at the end; so every
# block is verified however slow or fast the disk is.  A request lost in a
# switch leaves its round unfinished: a round that takes more than
# $round_limit s fails the test before the harness's timeout would.
round_limit=150
rounds=0 blocks=0 fio_bad=

# fio_round FILENAME SIZE: the next round in the background, its pid in
# $fio_pid, its report in /tmp/fio-switch.out.
fio_round() {
	rounds=$((rounds + 1))
	fio --thread --output=/tmp/fio-switch.out --filename="$1" \
		--direct=1 --ioengine=libaio --iodepth=8 --rw=randwrite \
		--bsrange=4k-64k --size="$2" \
		--verify=crc32c --verify_backlog=32 --verify_fatal=1 \
		--randrepeat=0 \
		--name=rt --prioclass=1 --offset=0 \
		--name=be --prioclass=2 --prio=3 --offset="$2" \
		> /dev/null 2>&1 &
	fio_pid=$!
	fio_t0=$(date +%s)
}

# running PID: PID has not ended (a zombie has).
running() {
	_st=$(cat "/proc/$1/stat" 2> /dev/null) || return 1
	case "${_st##*) }" in Z*) return 1 ;; esac
}

# fio_verified REPORT: each of the two jobs ended with err= 0 and no
# verify failure, and read back every block it wrote (issued rwts:
# total=READS,WRITES), none short or dropped; the blocks read back added
# to $blocks.
fio_verified() {
	grep -qi "verify.*fail\|bad magic\|crc32c: wanted" "$1" && return 1
	_n=$(awk '/: \(groupid=/ { jobs++; if ($0 !~ / err= 0:/) bad++ }
		/issued rwts:/ {
			split($3, t, "[=,]"); split($4, s, "[=,]"); split($5, d, "[=,]")
			if (t[2] == 0 || t[2] != t[3] || s[2] + s[3] + d[2] + d[3] != 0) bad++
			n += t[2]; ios++
		}
		END { if (jobs == 2 && ios == 2 && !bad) print n }' "$1")
	[ -n "$_n" ] || return 1
	blocks=$((blocks + _n))
}

# fio_end: wait for the round (at most $round_limit s since it started)
# and check it; what went wrong in $fio_bad.  Not waited for when it does
# not end: a task waiting for a lost request does not die of kill -9.
fio_end() {
	while running "$fio_pid"; do
		if [ $(($(date +%s) - fio_t0)) -ge $round_limit ]; then
			fio_bad="$fio_bad round $rounds did not end in $round_limit s (a lost request?);"
			kill -9 "$fio_pid"
			return 1
		fi
		sleep 0.2
	done
	wait "$fio_pid"
	_rc=$?
	[ $_rc = 0 ] && fio_verified /tmp/fio-switch.out && return 0
	fio_bad="$fio_bad round $rounds: fio exited with $_rc, or read back fewer blocks than it wrote;"
	diag "$(tail -n 25 /tmp/fio-switch.out)"
	return 1
}

# switches DEV N FILENAME SIZE: N switches through $cycle, ending on abiss,
# while fio rounds on FILENAME run; then the last round ends.  In this
# shell (fio is its child): what went wrong in $switch_bad.
switches() {
	rounds=0 blocks=0 fio_bad= switch_bad=
	fio_round "$3" "$4"
	n=0
	while [ $n -lt "$2" ]; do
		for s in $cycle; do
			[ $n -lt "$2" ] || break
			echo "$s" > "/sys/block/$1/queue/scheduler" ||
				{ switch_bad="switch $n to $s failed"; fio_end; return; }
			n=$((n + 1))
		done
		running "$fio_pid" && continue
		fio_end || { switch_bad="fio failed after $n switches"; return; }
		fio_round "$3" "$4"
	done
	echo abiss > "/sys/block/$1/queue/scheduler"
	fio_end
}

# fio_ok: every round ended and verified every block it wrote.
fio_ok() {
	[ -z "$fio_bad" ] && [ "$blocks" -gt 0 ] && return 0
	echo "$fio_bad"
	return 1
}

check "null_blk device made" sh -c "mkdir $nb && echo 1 > $nb/memory_backed &&
	echo 64 > $nb/size && echo 1 > $nb/power"
start=$(date +%s)
switches nullb-switch 200 /dev/nullb-switch 8m
is "$switch_bad" "" "200 switches on nullb-switch under fio load"
diag "200 switches took $(($(date +%s) - start)) s, $rounds fio rounds of 2 x 8 MiB, $blocks blocks verified"
check "fio verified every block on nullb-switch" fio_ok
is "$(cat /sys/block/nullb-switch/queue/scheduler)" "mq-deadline kyber [abiss] bfq none" \
	"nullb-switch ends on abiss"
check "null_blk device removed" sh -c "echo 0 > $nb/power && rmdir $nb"

check "ext3 disk mounted" mount_fs ext3 "$EXT3_DEV" /mnt/ext3
start=$(date +%s)
switches ubdb 40 /mnt/ext3/switch.data 2m
is "$switch_bad" "" "40 switches on ubdb under fio load"
diag "40 switches took $(($(date +%s) - start)) s, $rounds fio rounds of 2 x 2 MiB, $blocks blocks verified"
check "fio verified every block on ubdb" fio_ok
rm -f /mnt/ext3/switch.data
umount /mnt/ext3
check "mq-deadline chosen again for ubdb" \
	sh -c "echo mq-deadline > /sys/block/ubdb/queue/scheduler"

# kmemleak reports objects unreferenced for a while: scan twice.
kml=/sys/kernel/debug/kmemleak
if [ -w $kml ]; then
	echo scan > $kml; sleep 6; echo scan > $kml
	leaks=$(grep -c "unreferenced object" $kml)
	ours=$(grep -A 30 "unreferenced object" $kml | grep -c "abiss\|elevator\|blk_mq_sched\|blk_mq_init")
	diag "kmemleak: $leaks unreferenced objects, $ours from the block layer"
	is "$ours" 0 "kmemleak finds no leak from the schedulers"
	check "kmemleak is running" test -n "$(cat $kml 2>&1; echo x)"
else
	skip_rest 11 "no kmemleak in this kernel"
fi
done_testing
