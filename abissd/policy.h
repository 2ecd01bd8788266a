/* SPDX-License-Identifier: GPL-2.0 */
/*
 * abissd's admission policy and accounting: the capacity of each device,
 * the streams admitted on it and the sum of their rates.  No I/O here but
 * reading the config file and writing the status, so it can grow (per-user
 * limits, calibration) without touching the daemon's plumbing.
 */
#ifndef ABISSD_POLICY_H
#define ABISSD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One stream, as the kernel described it (struct abiss_msg). */
struct stream {
	uint64_t id;
	uint64_t dev;		/* st_dev of the file system */
	uint64_t ino;
	uint64_t rate;		/* bytes per second */
	uint64_t buffer;	/* bytes */
	uint32_t pid, uid, gid;
};

/* A device with a capacity or streams (or both). */
struct device {
	uint64_t dev;
	bool has_capacity;
	uint64_t capacity;	/* bytes per second */
	uint64_t reserved;	/* sum of the rates of its streams */
	unsigned int streams;
};

struct policy {
	bool has_default;		/* 'capacity *' or --capacity */
	uint64_t default_capacity;
	struct device *devs;
	size_t ndevs;
	struct stream *streams;
	size_t nstreams;
};

/* A decision and the reason for it, for the log. */
struct verdict {
	int error;		/* 0: accepted; else the errno the reader gets */
	char why[160];
};

void policy_init(struct policy *p);
void policy_free(struct policy *p);

/*
 * Set the capacity of a device: "*" (every device without its own line),
 * "MAJOR:MINOR", a block device node, or any other path (the device of the
 * file system it is on).  Returns 0, or -1 with a message in @err.
 */
int policy_set_capacity(struct policy *p, const char *spec, uint64_t rate,
			char *err, size_t errlen);

/*
 * Read a config file: '#' comments, blank lines, and lines
 *	capacity <MAJOR:MINOR | path | *> <rate>
 * A missing file is not an error unless @must_exist.  Returns 0, or -1 with
 * "PATH:LINE: what" in @err.
 */
int policy_load(struct policy *p, const char *path, bool must_exist,
		char *err, size_t errlen);

/* Decide on a request; an accepted stream is accounted at once. */
void policy_admit(struct policy *p, const struct stream *s, struct verdict *v);

/*
 * Account a stream admitted before we started (ABISS_MSG_LIVE), whatever
 * the capacity.  Returns -1 if the id is already known.
 */
int policy_live(struct policy *p, const struct stream *s);

/* Release a stream's reservation.  Returns -1 if the id is unknown. */
int policy_release(struct policy *p, uint64_t id, struct stream *gone);

/* The reservations, one line per device then per stream (see abissd(8)). */
void policy_dump(const struct policy *p, FILE *f);

#endif /* ABISSD_POLICY_H */
