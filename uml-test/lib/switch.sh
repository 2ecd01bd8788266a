# SPDX-License-Identifier: GPL-2.0
# Switching a device's scheduler many times under a fio load that checks
# its data, for the tests that switch (iosched-switch, iosched-multiqueue).
#
# The load is fio in rounds of a fixed amount of I/O, one after the other
# for as long as the switching takes: in each round every job writes SIZE
# once at random, reading every block back while writing (verify_backlog)
# and at the end (verify=crc32c); so every block is verified however slow
# or fast the disk is.  A request lost in a switch leaves its round
# unfinished: a round that takes more than $round_limit s fails the test
# before the harness's timeout would.
#
# The test defines fio_jobs SIZE, which prints fio's options for the jobs
# of a round (engine, depth, block sizes, then one --name= per job with its
# class and offset; each job's rw must write and verify), and sets cycle,
# the schedulers to go through.  What went wrong is in $fio_bad and
# $switch_bad; the blocks verified in $blocks.  Needs tap.sh (diag,
# running).

round_limit=150
rounds=0 blocks=0 fio_bad= switch_bad=

# fio_round FILENAME SIZE: the next round in the background, its pid in
# $fio_pid (fio itself, not a subshell: a stuck round is killed), its
# report in /tmp/fio-switch.out.
fio_round() {
	rounds=$((rounds + 1))
	fio_njobs=0
	for _o in $(fio_jobs "$2"); do
		case "$_o" in --name=*) fio_njobs=$((fio_njobs + 1)) ;; esac
	done
	fio --thread --output=/tmp/fio-switch.out --filename="$1" \
		--direct=1 --size="$2" \
		--verify=crc32c --verify_backlog=32 --verify_fatal=1 \
		--randrepeat=0 $(fio_jobs "$2") > /dev/null 2>&1 &
	fio_pid=$!
	fio_t0=$(date +%s)
}

# fio_verified REPORT: each of the round's $fio_njobs jobs ended with
# err= 0 and no verify failure, and read back every block it wrote (issued
# rwts: total=READS,WRITES), none short or dropped; the blocks read back
# added to $blocks.
fio_verified() {
	grep -qi "verify.*fail\|bad magic\|crc32c: wanted" "$1" && return 1
	_n=$(awk -v want="$fio_njobs" '/: \(groupid=/ { jobs++; if ($0 !~ / err= 0:/) bad++ }
		/issued rwts:/ {
			split($3, t, "[=,]"); split($4, s, "[=,]"); split($5, d, "[=,]")
			if (t[2] == 0 || t[2] != t[3] || s[2] + s[3] + d[2] + d[3] != 0) bad++
			n += t[2]; ios++
		}
		END { if (jobs == want && ios == want && !bad) print n }' "$1")
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

# chosen DEV: the scheduler DEV has, the bracketed one of its list (whose
# order changed: 6.12 lists none first).
chosen() { sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$1/queue/scheduler"; }
