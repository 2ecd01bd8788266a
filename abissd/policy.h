/* SPDX-License-Identifier: GPL-2.0 */
/*
 * abissd's admission policy and accounting.  The policy (struct config) is
 * what the config file says: the capacity of each device, the utilisation
 * ceiling, the users and groups allowed and their limits, the file system
 * types that carry streams.  The accounting (the devices' reservations and
 * the streams admitted) lives beside it in struct policy and survives a
 * reload, which only swaps the config.  No I/O here but reading the config
 * file and /proc/self/mountinfo.
 */
#ifndef ABISSD_POLICY_H
#define ABISSD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A limit or capacity the config does not set. */
#define NO_LIMIT	UINT64_MAX

/* The ceiling without a 'ceiling' line: percent of a device's capacity. */
#define DEFAULT_CEILING	85

/* struct stream's @group when no group line applies to it. */
#define NO_GROUP	UINT32_MAX

/* One stream, as the kernel described it (struct abiss_msg). */
struct stream {
	uint64_t id;
	uint64_t dev;		/* st_dev of the file system */
	uint64_t ino;
	uint64_t rate;		/* bytes per second */
	uint64_t buffer;	/* bytes */
	uint32_t pid, uid, gid;
	/* The supplementary groups: for the decision only, never kept. */
	const uint32_t *groups;
	uint32_t ngroups;
	/* The gid of the group line it counts under, or NO_GROUP (accounting). */
	uint32_t group;
};

/* A 'capacity' line naming one device. */
struct capacity {
	uint64_t dev;
	uint64_t rate;		/* bytes per second */
	uint64_t buffer;	/* sum of its streams' buffers, bytes; NO_LIMIT: none */
	unsigned int line;	/* where the config says so, for duplicates */
};

enum rule_kind { RULE_USER, RULE_GROUP, RULE_ANY_USER };

/* A 'user' or 'group' line; NO_LIMIT where it sets no limit. */
struct rule {
	enum rule_kind kind;
	uint32_t id;		/* uid or gid; unused for RULE_ANY_USER */
	uint64_t rate;		/* per stream */
	uint64_t total;		/* sum of the rates of the uid's (gid's) streams */
	uint64_t streams;	/* how many streams at once */
	uint64_t buffer;	/* sum of the buffers of the uid's (gid's) streams */
	unsigned int line;
};

/* What the config file says; replaced whole by a reload. */
struct config {
	uint64_t default_capacity;	/* 'capacity *' or --capacity; NO_LIMIT: none */
	uint64_t default_buffer;	/* 'capacity * R buffer B'; NO_LIMIT: none */
	unsigned int default_line;
	struct capacity *caps;
	size_t ncaps;
	unsigned int ceiling;		/* percent, 1-100 */
	unsigned int ceiling_line;
	struct rule *rules;
	size_t nrules;
	char **fstypes;			/* 'filesystems': NULL-terminated, or NULL */
	unsigned int fstypes_line;
};

/* The accounting of one device that has streams. */
struct device {
	uint64_t dev;
	uint64_t reserved;	/* sum of the rates of its streams */
	uint64_t buffered;	/* sum of the buffers of its streams */
	unsigned int streams;
};

struct policy {
	struct config cfg;
	struct device *devs;
	size_t ndevs;
	struct stream *streams;
	size_t nstreams;
};

/* A decision and the reason for it, for the log. */
struct verdict {
	int error;		/* 0: accepted; else the errno the reader gets */
	char why[200];
};

void config_init(struct config *c);
void config_free(struct config *c);

/*
 * Read a config file into @c (fresh from config_init()); see abissd.conf(5).
 * A missing file is not an error unless @must_exist.  Returns 0, or -1 with
 * "PATH:LINE: what" in @err and @c left empty.
 */
int config_load(struct config *c, const char *path, bool must_exist,
		char *err, size_t errlen);

/*
 * The device a capacity line means: "MAJOR:MINOR", a block device node, or
 * any other path (the device of the file system it is on).  Returns 0, or
 * -1 with a message in @err.
 */
int spec_to_dev(const char *spec, uint64_t *dev, char *err, size_t errlen);

/*
 * Give @dev the capacity @rate (no buffer limit), unless @c already has a
 * line of its own for it: then -1, and @c unchanged.  For the calibration
 * state, which the config file's own lines beat.
 */
int config_add_capacity(struct config *c, uint64_t dev, uint64_t rate);

void policy_init(struct policy *p);
void policy_free(struct policy *p);

/* Take @c as the policy (the old one is freed); the accounting stays. */
void policy_set_config(struct policy *p, struct config *c);

/* Decide on a request; an accepted stream is accounted at once. */
void policy_admit(struct policy *p, const struct stream *s, struct verdict *v);

/*
 * Account a stream admitted before we started (ABISS_MSG_LIVE), whatever
 * the policy.  Returns -1 if the id is already known.
 */
int policy_live(struct policy *p, const struct stream *s);

/* The stream with this id, or NULL. */
const struct stream *policy_find(const struct policy *p, uint64_t id);

/* Release a stream's reservation.  Returns -1 if the id is unknown. */
int policy_release(struct policy *p, uint64_t id, struct stream *gone);

/* policy_dump()'s @uid for the streams of every user. */
#define POLICY_ALL_UIDS	UINT32_MAX

/*
 * The 'device' then 'stream' lines of the control socket's status command
 * (Documentation/abissd-control.rst), also the status file's: the streams
 * of @uid only, or of everyone with POLICY_ALL_UIDS.
 */
void policy_dump(const struct policy *p, FILE *f, uint32_t uid);

#endif /* ABISSD_POLICY_H */
