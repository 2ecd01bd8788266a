/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ABISS - Active Block I/O Scheduling System: the user-space ABI.
 *
 * An application asks for a guaranteed read rate on a file it has open with
 * ABISS_IOC_START; the admission daemon (abissd), talking to the kernel
 * through /dev/abiss, accepts or denies.  See
 * Documentation/filesystems/abiss.rst for the lifecycle and every errno.
 *
 * Every structure starts with its size, which the caller sets to
 * sizeof(the structure it was built with); the kernel accepts any size from
 * the first version's up to a page, and requires the bytes it does not know
 * to be zero.  Reserved fields must be zero.  All fields are fixed-width and
 * naturally aligned, so 32-bit callers on 64-bit kernels need no translation.
 */
#ifndef _LINUX_ABISS_H
#define _LINUX_ABISS_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define ABISS_IOC_MAGIC		0xB9

/**
 * struct abiss_start - ask for a guaranteed-rate read stream
 * @size: sizeof(struct abiss_start)
 * @flags: ABISS_START_* flags; unknown bits are rejected
 * @rate: bytes per second the reader will consume, at least 1
 * @buffer: playout buffer in bytes (rounded up to pages), at least @read_unit
 * @read_unit: bytes the application reads at a time (0: one page)
 * @__reserved0: must be zero
 * @__reserved: must be zero
 */
struct abiss_start {
	__u32 size;
	__u32 flags;
	__u64 rate;
	__u64 buffer;
	__u32 read_unit;
	__u32 __reserved0;
	__u64 __reserved[4];
};

#define ABISS_START_SIZE_VER0	64	/* sizeof first published struct */

/*
 * ABISS_START_MMAP: the application reads through mmap() and reports its
 * position with ABISS_IOC_POSITION instead of read().
 */
#define ABISS_START_MMAP	(1U << 0)
#define ABISS_START_FLAGS	(ABISS_START_MMAP)

/**
 * struct abiss_status - the state of the stream on an open file
 * @size: sizeof(struct abiss_status), set by the caller
 * @flags: ABISS_STATUS_* flags
 * @id: stream id, as abissd and debugfs show it
 * @rate: admitted rate, bytes per second
 * @buffer: playout buffer size in bytes
 * @position: the application's position in the file, in bytes
 * @buffered: bytes from @position on that are in the buffer, read and held
 * @delivered: bytes the application has read from the buffer
 * @misses: reads (or, with ABISS_START_MMAP, reported pages) that were not
 *	in the buffer and had to wait for the disk
 * @refills: refill passes that issued I/O for this stream
 * @worst_refill_ns: longest time a refill took from issue to completion
 * @end_reason: why the stream ended (ABISS_END_*), with ABISS_STATUS_ENDED
 * @__reserved0: zero
 * @late_refills: refills still reading after the moment a reader at the
 *	admitted rate would have needed their first page
 * @worst_late_ns: how long after that moment the latest of them was seen
 *	still reading, or completed
 * @worst_take_late_ns: the longest a due refill waited past its deadline
 *	for its disk's refill worker
 * @__reserved1: zero
 */
struct abiss_status {
	__u32 size;
	__u32 flags;
	__u64 id;
	__u64 rate;
	__u64 buffer;
	__u64 position;
	__u64 buffered;
	__u64 delivered;
	__u64 misses;
	__u64 refills;
	__u64 worst_refill_ns;
	__u32 end_reason;
	__u32 __reserved0;
	__u64 late_refills;
	__u64 worst_late_ns;
	__u64 worst_take_late_ns;
	__u64 __reserved1;
};

#define ABISS_STATUS_SIZE_VER0	120

#define ABISS_STATUS_ACTIVE	(1U << 0)	/* the buffer is being kept */
#define ABISS_STATUS_ENDED	(1U << 1)	/* ended by the kernel: see end_reason */

/* Why a stream ended (struct abiss_status.end_reason, struct abiss_msg.reason) */
#define ABISS_END_NONE		0
#define ABISS_END_STOPPED	1	/* ABISS_IOC_STOP */
#define ABISS_END_CLOSED	2	/* the file was closed (or its process exited) */
#define ABISS_END_TRUNCATED	3	/* the file was truncated to zero */
#define ABISS_END_UNMOUNTED	4	/* the file system was unmounted, lazily or not */
#define ABISS_END_ERROR		5	/* a refill failed (I/O error, no memory) */
#define ABISS_END_ADMIN		6	/* abissd ended it (ABISS_DAEMON_STOP) */

#define ABISS_IOC_START		_IOW(ABISS_IOC_MAGIC, 1, struct abiss_start)
#define ABISS_IOC_STOP		_IO(ABISS_IOC_MAGIC, 2)
#define ABISS_IOC_POSITION	_IOW(ABISS_IOC_MAGIC, 3, __u64)
#define ABISS_IOC_STATUS	_IOWR(ABISS_IOC_MAGIC, 4, struct abiss_status)

/*
 * The daemon channel, /dev/abiss.  One process at a time may have it open
 * (CAP_SYS_ADMIN); it read()s struct abiss_msg records and write()s a
 * struct abiss_reply for each ABISS_MSG_REQUEST.  Right after open, it reads
 * one ABISS_MSG_LIVE per stream already running (after a daemon restart).
 */
#define ABISS_MSG_REQUEST	1	/* admit this stream? answer it */
#define ABISS_MSG_END		2	/* this admitted stream ended: @reason */
#define ABISS_MSG_LIVE		3	/* this stream was admitted before you came */

/**
 * struct abiss_msg - a message from the kernel to abissd
 * @size: length of the record: sizeof(struct abiss_msg) + 4 * @ngroups
 * @type: ABISS_MSG_*
 * @id: stream id
 * @pid: process that asked (thread group id, in the daemon's pid namespace)
 * @uid: its effective uid (in the daemon's user namespace)
 * @gid: its effective gid
 * @reason: ABISS_END_* for ABISS_MSG_END, else 0
 * @dev: device of the file system (as stat's st_dev)
 * @ino: inode number of the file
 * @rate: requested (or admitted) rate, bytes per second
 * @buffer: playout buffer, bytes
 * @ngroups: number of @groups
 * @__reserved0: zero
 * @__reserved: zero
 * @groups: the process's supplementary groups (in the daemon's user
 *	namespace, sorted), after the fixed part of the record
 *
 * A record is at most ABISS_MSG_MAX_SIZE bytes; a read() of the daemon
 * channel needs a buffer as long as the record it returns.
 */
struct abiss_msg {
	__u32 size;
	__u32 type;
	__u64 id;
	__u32 pid;
	__u32 uid;
	__u32 gid;
	__u32 reason;
	__u64 dev;
	__u64 ino;
	__u64 rate;
	__u64 buffer;
	__u32 ngroups;
	__u32 __reserved0;
	__u64 __reserved;
	__u32 groups[];
};

/* Most supplementary groups a process has (NGROUPS_MAX), and records. */
#define ABISS_MSG_MAX_GROUPS	65536
#define ABISS_MSG_MAX_SIZE	(sizeof(struct abiss_msg) + 4 * ABISS_MSG_MAX_GROUPS)

#define ABISS_VERDICT_ACCEPT	1
#define ABISS_VERDICT_DENY	2

/**
 * struct abiss_reply - abissd's answer to one ABISS_MSG_REQUEST
 * @size: sizeof(struct abiss_reply)
 * @verdict: ABISS_VERDICT_ACCEPT or ABISS_VERDICT_DENY
 * @id: the request's stream id
 * @error: with DENY, the errno the application gets: EACCES (default when
 *	0), EPERM, ENOSPC (over capacity) or EDQUOT (over a user's limit)
 * @__reserved0: zero
 * @__reserved: zero
 */
struct abiss_reply {
	__u32 size;
	__u32 verdict;
	__u64 id;
	__s32 error;
	__u32 __reserved0;
	__u64 __reserved[2];
};

/* On /dev/abiss: end the stream with this id (__u64) */
#define ABISS_DAEMON_STOP	_IOW(ABISS_IOC_MAGIC, 16, __u64)

#endif /* _LINUX_ABISS_H */
