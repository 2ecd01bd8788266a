# SPDX-License-Identifier: GPL-2.0
# A stream over every scheduler that can carry one: abiss, mq-deadline and
# bfq, on a ubd disk (vfat and ext3) and on a null_blk capped at 20 MB/s
# (vfat).  Each time a 1 MB/s stream with 2 s of buffer reads 4 s beside 8
# greedy readers (the scheduler chosen while they run): its data as
# written, no miss.
#
# The refills must be real-time I/O (IOPRIO_CLASS_RT, the refill worker's
# I/O priority) under each scheduler; counted, not timed:
# - abiss: its debugfs counts the real-time requests it was given: at least
#   one per refill that read (rdrt's "refills"); nothing else in the guest
#   does real-time I/O (rdrt runs without -R, the readers are cat).
# - mq-deadline and bfq count no class: 6.1's mq-deadline shows only how
#   many requests of each class are queued and at the driver at the moment
#   it is looked at, a time-bound sample (a refill on ubd takes a few ms;
#   looks meant every 20 ms came every 300 ms in the busy guest and saw no
#   real-time request in 16-32 looks a stream); bfq shows nothing (its log
#   goes through blktrace, not in the test kernel).  So on the null_blk,
#   under each of the three, a stream is run over a file with a bad sector
#   (null_blk badblocks): the block layer logs each failed request with
#   its class ("I/O error, dev ..., prio class N": the request's ioprio,
#   which mq-deadline and abiss sort by; bfq takes the class from the same
#   task I/O priority).  A failed refill request must say class 1 (RT);
#   the reader's own read of that sector fails with EIO.  ubd cannot fail
#   a request (fail_make_request fails bios before they are requests).
# ext3 only on ubd: busybox mke2fs makes no journal, and the host makes
# the ubd file systems.
. /abiss/uml-test/lib/tap.sh
. /abiss/uml-test/lib/stream.sh
. /abiss/uml-test/lib/nullb.sh

scheds="abiss mq-deadline bfq"
plan 51
fifo=/tmp/stream-schedulers.fifo
mkfifo "$fifo"

check "mount $FAT_DEV as vfat" mount_fs vfat "$FAT_DEV" /mnt/vfat || bail "cannot mount"
check "mount $EXT3_DEV as ext3" mount_fs ext3 "$EXT3_DEV" /mnt/ext3 || bail "cannot mount"
for d in /mnt/vfat/stream /mnt/ext3/stream; do
	mkdir -p "$d"
	[ "$(stat -c %s "$d/s1" 2> /dev/null)" = 67108864 ] ||
		rdrt --create 64M --seed 11 "$d/s1" > /dev/null
done

nullb_names nb-sched
nbmnt=/mnt/nb-sched
check "a null_blk capped at 20 MB/s, 0.5 ms completions, with vfat" sh -c "mkdir $nb &&
	echo 1 > $nb/memory_backed && echo 128 > $nb/size && echo 20 > $nb/mbps &&
	echo 2 > $nb/irqmode && echo 500000 > $nb/completion_nsec && echo 1 > $nb/power &&
	mkdosfs /dev/$dev > /dev/null && mkdir -p $nbmnt && mount -t vfat /dev/$dev $nbmnt"
nbdev=$dev

# The file with a bad sector: the first on the new file system, so in one
# run from the first cluster after the root directory's.  bad_sector: the
# device sector that holds its byte 1 MiB, found from the FAT32 boot
# sector and checked against the file's data.
rdrt --create 2M --seed 70 "$nbmnt/bad" > /dev/null
sync
od_n() { echo $(($(od -An -tu"$1" -j"$2" -N"$1" "/dev/$nbdev"))); }
bad_sector() {
	[ "$(od_n 2 11)" = 512 ] || { echo "sectors not of 512 bytes"; return 1; }
	spc=$(od_n 1 13)
	data=$(($(od_n 2 14) + $(od_n 1 16) * $(od_n 4 36)))
	dd if="$nbmnt/bad" of=/tmp/bad.want bs=512 skip=2048 count=8 2> /dev/null
	for c in 3 4 5 6 7 8 9 10; do
		s=$((data + (c - 2) * spc + 2048))
		dd if="/dev/$nbdev" of=/tmp/bad.got bs=512 skip="$s" count=8 2> /dev/null
		cmp -s /tmp/bad.got /tmp/bad.want && echo "$s" && return 0
	done
	echo "byte 1 MiB of the file not found from sector $data on"
	return 1
}
if bad=$(bad_sector); then
	pass "byte 1 MiB of a 2 MiB file on the null_blk is at sector $bad"
	echo "+$bad-$((bad + 7))" > "$nb/badblocks"
else
	fail "byte 1 MiB of a 2 MiB file on the null_blk found"
	diag "$bad"
	bad=
fi
rdrt --create 8M --seed 11 "$nbmnt/s1" > /dev/null
if abissd_start 100MB; then pass "abissd runs"; else fail "abissd runs"; bail "no abissd"; fi

# alive PID: PID has not ended; by the shell alone (no fork: the guest is
# busy).
alive() {
	{ read -r _st < "/proc/$1/stat"; } 2> /dev/null || return 1
	case "${_st##*) }" in Z*) return 1 ;; esac
}

# watch PID: wait for PID to end; after about 60 s it is killed (a stall
# fails the test here, not at the harness's timeout).
watch() {
	_w0=$(date +%s) _n=0
	while alive "$1"; do
		_n=$((_n + 1))
		if [ $((_n % 20)) = 0 ] && [ $(($(date +%s) - _w0)) -gt 60 ]; then
			diag "rdrt still runs after 60 s: killed"
			kill -9 "$1"
		fi
		read -t 0.1 _ <> "$fifo"
	done
}

# one NAME DISK DIR: under $sched, chosen while the greedy readers of DIR
# run, the stream on DIR/s1 (seed 11), and its refills' class as far as
# the scheduler counts it.
one() {
	name="$1 under $sched"
	dbg=/sys/kernel/debug/block/$2/sched
	echo "$sched" > "/sys/block/$2/queue/scheduler" &&
		grep -q "\[$sched\]" "/sys/block/$2/queue/scheduler"
	is "$?" 0 "$name: the scheduler is $sched"
	sleep 1
	[ "$sched" = abiss ] && look inserted && rt0=$n1
	read -r _t0 _ < /proc/uptime
	rdrt -a -v -j -S 11 -r 1MB -s 64k -b 2M -t 4 "$3/s1" > /tmp/ss.json 2> /tmp/ss.err &
	p=$!
	watch "$p"
	wait "$p"
	rc=$?
	read -r _t1 _ < /proc/uptime
	j=$(cat /tmp/ss.json)
	check_stream "$name" "$j" "$rc"
	[ "$rc" = 0 ] || diag "$(cat /tmp/ss.err)"
	refills=$(json_field "$j" refills)
	case $refills in '' | *[!0-9]*) refills=0 ;; esac
	diag "$name: the stream took $((${_t1%.*} - ${_t0%.*})) s"
	case $sched in
	abiss)
		look inserted
		rt=$((n1 - rt0))
		diag "$name: $rt real-time requests inserted, $refills refills"
		[ "${refills:-0}" -ge 1 ] && [ "$rt" -ge "$refills" ]
		is "$?" 0 "$name: at least one real-time request per refill (abiss debugfs inserted)"
		;;
	esac
}

# probe: under $sched, a stream over the file with a bad sector: the
# reader's read of it fails with EIO, and a failed request of a refill
# was of the real-time class.
probe() {
	dmesg -c > /dev/null
	echo 1 > /proc/sys/vm/drop_caches
	rdrt -a -r 1MB -s 64k -b 512k -n 2M "$nbmnt/bad" > /dev/null 2> /tmp/probe.err &
	p=$!
	watch "$p"
	wait "$p"
	rc=$?
	dmesg > /tmp/probe.dmesg
	if [ "$rc" = 1 ] && grep -q "read error .*Input/output error" /tmp/probe.err; then
		pass "bad sector under $sched: the reader's read of it fails with EIO"
	else
		fail "bad sector under $sched: the reader's read of it fails with EIO"
		diag "rdrt $rc: $(cat /tmp/probe.err)"
	fi
	diag "bad sector under $sched: failed requests by class:$(awk -v d="dev $nbdev," '
		/I\/O error, dev / && index($0, d) { n[$NF]++ }
		END { for (c in n) printf " class %s: %d;", c, n[c] }' /tmp/probe.dmesg)"
	check "bad sector under $sched: a failed refill request was real-time (prio class 1)" \
		grep -q "I/O error, dev $nbdev, .* prio class 1$" /tmp/probe.dmesg
}

orig_a=$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/${FAT_DEV#/dev/}/queue/scheduler")
orig_b=$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/${EXT3_DEV#/dev/}/queue/scheduler")
# device NAME DISK DIR: the stream under each scheduler on DIR, the
# greedy readers running throughout; on the null_blk also the bad sector.
device() {
	load_readers "$3" 4M
	for sched in $scheds; do
		one "$@"
		[ "$2" = "$nbdev" ] || continue
		if [ -n "$bad" ]; then
			probe
		else
			skip_rest $((_tap_n + 2)) "no bad sector"
		fi
	done
	load_stop
}
device "ubd vfat" "${FAT_DEV#/dev/}" /mnt/vfat/stream
device "ubd ext3" "${EXT3_DEV#/dev/}" /mnt/ext3/stream
device "null_blk vfat" "$nbdev" "$nbmnt"
echo "$orig_a" > "/sys/block/${FAT_DEV#/dev/}/queue/scheduler"
echo "$orig_b" > "/sys/block/${EXT3_DEV#/dev/}/queue/scheduler"

is "$(abissd_reserved 0)" 0 "abissd got every reservation back"
abissd_stop
umount "$nbmnt"
umount /mnt/ext3
umount /mnt/vfat
echo 0 > "$nb/power"
rmdir "$nb"
rm -f "$fifo"
done_testing
