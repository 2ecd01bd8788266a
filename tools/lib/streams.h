/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What abissctl and ptree share: the kernel's stream list from debugfs
 * (/sys/kernel/debug/abiss/streams), the names behind a stream (command,
 * file, device), numbers for humans, and aligned tables.
 */
#ifndef ABISS_STREAMS_H
#define ABISS_STREAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define DEFAULT_DEBUGFS	"/sys/kernel/debug/abiss"

/* One line of the debugfs streams file. */
struct kstream {
	uint64_t id;
	uint64_t pid;
	unsigned int major, minor;	/* the file system's device */
	uint64_t ino;
	uint64_t rate;			/* bytes/s */
	uint64_t buffer;		/* bytes */
	uint64_t held;			/* pages held in the buffer */
	uint64_t delivered;		/* bytes */
	uint64_t misses;
	char state[16];
};

struct kstreams {
	struct kstream *v;
	size_t n;
};

/*
 * kstreams_read() - parse the streams file at @path into @ks
 *
 * Columns are found by the header line's names, so that the kernel may add
 * some.  On error, prints "prog: cannot open 'path': ..." (with a hint when
 * debugfs looks unmounted) or "prog: path:LINE: ..." unless @quiet, and
 * returns -1 with @ks empty.
 */
int kstreams_read(const char *path, struct kstreams *ks, bool quiet);
struct kstream *kstreams_find(const struct kstreams *ks, uint64_t id);
void kstreams_free(struct kstreams *ks);

/* "MAJ:MIN" into @major and @minor; 0, or -1 if malformed. */
int parse_devno(const char *s, unsigned int *major, unsigned int *minor);

/* How a number is shown: human-readable, or raw with --bytes. */
extern bool show_bytes;

/*
 * Each returns @buf (of @len bytes).  Rates: "2.0 MB/s" (powers of 1000,
 * as rates are given to rdrt and abissd); sizes: "4.0 MiB" (powers of 1024).
 */
const char *fmt_rate(char *buf, size_t len, uint64_t bytes_per_s);
const char *fmt_size(char *buf, size_t len, uint64_t bytes);
/* A stream's fill level: "3.9 MiB 98%" (held bytes and share of buffer). */
const char *fmt_fill(char *buf, size_t len, const struct kstream *s);

/* /proc/PID/comm, or "-"; returns @buf. */
const char *proc_comm(char *buf, size_t len, uint64_t pid);
/* The path PID has open on MAJ:MIN inode INO (from /proc/PID/fd), or "-". */
const char *proc_file(char *buf, size_t len, uint64_t pid, unsigned int major,
		      unsigned int minor, uint64_t ino);

/* A table of strings printed in aligned columns; a '>' heading aligns right. */
#define TABLE_MAX_COLS	16
struct table {
	size_t ncols;
	const char *const *heads;
	char **cells;		/* nrows * ncols, row-major, owned */
	size_t nrows;
};

void table_init(struct table *t, const char *const *heads, size_t ncols);
/* Add a row of t->ncols strings, copied. */
void table_add(struct table *t, const char *const *row);
/* Print the heading and the rows to stdout, then free the rows. */
void table_print(struct table *t);

#endif /* ABISS_STREAMS_H */
