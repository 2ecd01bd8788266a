// SPDX-License-Identifier: GPL-2.0
/*
 * abiss-fuzz - a seeded, multi-threaded fuzzer of the ABISS ioctls and of
 * /dev/abiss (TAP output).
 *
 * Worker threads issue random ioctl numbers (mostly of type 0xB9, with
 * random direction and size bits), sizes and structure contents, valid and
 * near-valid, through good and bad pointers, in random sequences with
 * read, lseek, O_DIRECT toggles, close, dup, fork, truncate and hole
 * punching, on files made in each --dir (FAT, VFAT, ext3, tmpfs), on each
 * --dir itself and on device nodes.  The descriptors sit in a table the
 * threads share: a thread uses one under its slot's lock for reading, and
 * "closes it under the others' feet" with dup2() of a /dev/null descriptor
 * onto it, so a number is never used after an unrelated open could have
 * taken it.  A fake abissd thread owns /dev/abiss: it answers most
 * requests, and writes garbage, truncated, replayed and unknown replies,
 * ends streams with ABISS_DAEMON_STOP and now and then closes and reopens
 * the device.
 *
 * Every call's result is checked against the errnos that
 * Documentation/filesystems/abiss.rst gives for it (computed from the
 * arguments where the order of the checks allows); anything else is a
 * failure, reported with the seed, thread and call index that replay it.
 * Each call draws its random numbers from a generator seeded by (seed,
 * thread, call index), so a seed replays each thread's calls; with
 * --threads 1 it replays the run.
 *
 * Must run as root, with no abissd running.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/abiss.h>
#include <linux/capability.h>
#include <linux/falloc.h>
#include <linux/magic.h>

#include "util.h"
#include "tap-diag.h"

#define DEV_ABISS	"/dev/abiss"
#define STREAMS_FILE	"/sys/kernel/debug/abiss/streams"

#define MAX_DIRS	8
#define MAX_TARGETS	64
#define MAX_CHECKS	40
#define MAX_THREADS	32
#define NSLOTS		32		/* descriptors the threads share */
#define MAX_KIDS	8		/* forked children a thread keeps */
#define MAX_DIAGS	60		/* "# " lines about failures, at most */
#define NERR		200		/* errno counts: [0] is success */

#define MSG_BUF		(512 << 10)	/* daemon read buffer */
#define RW_BUF		(64 << 10)	/* read() buffer of a worker */
#define KEEP_BUFFER	(1 << 20)	/* the fake daemon admits no more */
#define KEEP_RATE	8000000ULL	/* nor faster streams */
#define MAX_RATE	(16ULL << 30)	/* ABISS_IOC_START's limits */
#define MAX_BUFFER	(256ULL << 20)
#define LIVE_IDS	(1 << 19)	/* ids the fake daemon can track */

/* --- options and the generator ------------------------------------------ */

static uint64_t opt_seed = 1;
static uint64_t opt_calls = 20000;
static unsigned int opt_threads = 4;
static const char *opt_dirs[MAX_DIRS];
static unsigned int nr_dirs;
static bool opt_verbose;
static long page;

struct rng {
	uint64_t s;
};

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The generator of one call: a function of (seed, thread, call index) only. */
static void rng_init(struct rng *r, uint64_t thread, uint64_t index)
{
	uint64_t s = opt_seed;

	r->s = splitmix(&s) ^ (thread * 0xd1342543de82ef95ULL);
	r->s = splitmix(&r->s) ^ index;
	splitmix(&r->s);
}

static uint64_t rnd(struct rng *r)
{
	return splitmix(&r->s);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* True with a chance of @permille / 1000. */
static bool chance(struct rng *r, unsigned int permille)
{
	return below(r, 1000) < permille;
}

/* --- checks, counts and reports, shared with forked children ------------- */

struct shared {
	unsigned long errs[NERR];	/* results by errno, [0] success */
	unsigned long calls;		/* workers' and children's calls */
	unsigned long dcalls;		/* the fake daemon's */
	unsigned long started;		/* STARTs that succeeded */
	unsigned long active;		/* STATUS that found a stream active */
	unsigned long ended;		/* ... or ended, still attached */
	unsigned long limited;		/* children without CAP_IPC_LOCK */
	unsigned long checked[MAX_CHECKS];
	unsigned long failed[MAX_CHECKS];
	int diags;
};

static struct shared *sh;
static char check_names[MAX_CHECKS][200];
static int nr_checks;

static int add_check(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(check_names[nr_checks], sizeof(check_names[0]), fmt, ap);
	va_end(ap);
	return nr_checks++;
}

#define inc(p)	__atomic_add_fetch((p), 1, __ATOMIC_RELAXED)

/* A failure of check @ck; the first MAX_DIAGS are told. */
static void fail(int ck, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	inc(&sh->failed[ck]);
	if (inc(&sh->diags) > MAX_DIAGS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tap_diag("%s", msg);
}

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "E?";
}

static void count_result(int err, bool daemon)
{
	inc(&sh->errs[err >= 0 && err < NERR ? err : NERR - 1]);
	inc(daemon ? &sh->dcalls : &sh->calls);
}

/* A set of allowed results: errnos, and whether success is one. */
struct eset {
	uint64_t w[(NERR + 63) / 64];
	bool ok;
};

static void es_add(struct eset *s, int e)
{
	if (e == 0)
		s->ok = true;
	else if (e < NERR)
		s->w[e / 64] |= 1ULL << (e % 64);
}

static void es_addv(struct eset *s, const int *e, int n)
{
	while (n--)
		es_add(s, *e++);
}

static bool es_has(const struct eset *s, int e)
{
	if (e == 0)
		return s->ok;
	return e < NERR && (s->w[e / 64] >> (e % 64) & 1);
}

static void es_print(const struct eset *s, char *buf, size_t len)
{
	size_t n = 0;
	int e;

	buf[0] = 0;
	for (e = 0; e < NERR && n + 1 < len; e++)
		if (es_has(s, e))
			n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", ename(e));
	if (!n)
		snprintf(buf, len, "nothing");
}

/* --- targets and the descriptor table ------------------------------------ */

enum tkind { T_FILE, T_DIR, T_DEV };

struct target {
	char path[300];
	enum tkind kind;
	bool abiss;		/* a file system that carries streams */
	bool ext4;
	bool fat;
	off_t size;		/* a file's size as made */
	dev_t dev;
	ino_t ino;
	int check;
};

static struct target targets[MAX_TARGETS];
static int nr_targets;
static int nr_files;		/* targets[0..nr_files) are the regular files */
static int spare_fd = -1;	/* /dev/null, dup2()ed over closed slots */

struct slot {
	pthread_rwlock_t lock;	/* read: using fd; write: closing, opening */
	int fd;			/* -1: empty */
	int target;
	int oflags;
	int dead;		/* fd is now the spare /dev/null */
	unsigned int gen;	/* odd while a thread dup2()s over fd */
};

static struct slot slots[NSLOTS];
static unsigned int odirect_flips;	/* F_SETFL toggles of O_DIRECT */

/* The fixed checks; the targets' come first. */
static int ck_daemon, ck_records, ck_ends, ck_kids, ck_fileops, ck_streams;

/* --- per-thread state ---------------------------------------------------- */

struct worker {
	unsigned int index;
	pthread_t tid;
	uint64_t ncalls;
	char *arena;		/* rw, rw, no access, read-only pages */
	char *rbuf;		/* RW_BUF, page aligned, for read() */
	pid_t kids[MAX_KIDS];
	int nr_kids;
};

/* Bytes readable from @p in the arena: 0 for a bad pointer. */
static size_t readable(const struct worker *w, uintptr_t p)
{
	uintptr_t a = (uintptr_t)w->arena;

	if (p >= a && p < a + 2 * page)
		return a + 2 * page - p;
	if (p >= a + 3 * page && p < a + 4 * page)
		return a + 4 * page - p;
	return 0;
}

static size_t writable(const struct worker *w, uintptr_t p)
{
	uintptr_t a = (uintptr_t)w->arena;

	return p >= a && p < a + 2 * page ? a + 2 * page - p : 0;
}

/* Offsets of the read-only page's contents. */
#define RO_START	0
#define RO_STATUS	512
#define RO_POS		1024

static int make_arena(struct worker *w)
{
	struct abiss_start *st;
	struct abiss_status *ss;
	char *a;

	a = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return -1;
	st = (void *)(a + 3 * page + RO_START);
	st->size = sizeof(*st);
	st->rate = 500000;
	st->buffer = 65536;
	ss = (void *)(a + 3 * page + RO_STATUS);
	ss->size = sizeof(*ss);
	*(__u64 *)(a + 3 * page + RO_POS) = 4096;
	if (mprotect(a + 2 * page, page, PROT_NONE) ||
	    mprotect(a + 3 * page, page, PROT_READ))
		return -1;
	w->arena = a;
	w->rbuf = aligned_alloc(page, RW_BUF);
	return w->rbuf ? 0 : -1;
}

/* Where a call's argument goes; @len is the length of what is built. */
enum pkind { P_NORMAL, P_ODD, P_EDGE, P_NULL, P_UNMAPPED, P_KERNEL, P_RO };
static const char *const pkind_name[] = {
	"arena", "misaligned", "before a guard page", "NULL", "unmapped",
	"kernel address", "read-only page",
};

static uintptr_t pick_ptr(struct worker *w, struct rng *r, size_t len,
			  size_t ro_off, enum pkind *kind)
{
	uintptr_t a = (uintptr_t)w->arena;
	static const size_t short_by[] = { 0, 4, 8, 32, 60 };
	unsigned int p = below(r, 100);

	if (p < 74) {
		*kind = P_NORMAL;
		return a + 8 * below(r, 64);
	}
	if (p < 78) {
		*kind = P_ODD;
		return a + 1 + 8 * below(r, 64);
	}
	if (p < 86) {
		/* The argument, or its tail, runs into the guard page. */
		size_t s = short_by[below(r, 5)];

		*kind = P_EDGE;
		return a + 2 * page - (len > s ? len - s : 4);
	}
	if (p < 89) {
		*kind = P_NULL;
		return 0;
	}
	if (p < 92) {
		*kind = P_UNMAPPED;
		return a + 2 * page + 8 * below(r, 64);
	}
	if (p < 94) {
		*kind = P_KERNEL;
		return (uintptr_t)-page;
	}
	*kind = P_RO;
	return a + 3 * page + ro_off;
}

/* Put @len bytes of @src at @p, as far as @p is writable. */
static void place(struct worker *w, uintptr_t p, const void *src, size_t len)
{
	size_t n = writable(w, p);

	memcpy((void *)p, src, len < n ? len : n);
}

/* --- one ioctl: build it, make it, check it ------------------------------ */

enum ckind { K_START, K_STOP, K_POSITION, K_STATUS, K_OTHER };
static const char *const ckind_name[] = {
	"START", "STOP", "POSITION", "STATUS", "other 0xB9 command",
};

static enum ckind kind_of(unsigned int cmd)
{
	switch (cmd) {
	case ABISS_IOC_START:
		return K_START;
	case ABISS_IOC_STOP:
		return K_STOP;
	case ABISS_IOC_POSITION:
		return K_POSITION;
	case ABISS_IOC_STATUS:
		return K_STATUS;
	default:
		return K_OTHER;
	}
}

/* What a call used: a snapshot of its slot. */
struct use {
	int slot;
	int fd;
	int target;
	int oflags;
	bool dead;
	unsigned int gen;
};

static unsigned int cmd_of(struct rng *r)
{
	unsigned int p = below(r, 100);

	if (p < 32)
		return ABISS_IOC_START;
	if (p < 46)
		return ABISS_IOC_STOP;
	if (p < 62)
		return ABISS_IOC_POSITION;
	if (p < 82)
		return ABISS_IOC_STATUS;
	if (p < 85)
		return ABISS_DAEMON_STOP;
	/* Type 0xB9 with random direction, number and size. */
	return _IOC(below(r, 4), ABISS_IOC_MAGIC, below(r, 32), below(r, 1 << 14));
}

static uint64_t pick_rate(struct rng *r)
{
	static const uint64_t odd[] = {
		0, 1, MAX_RATE, MAX_RATE + 1, UINT64_MAX, 1ULL << 63,
		KEEP_RATE + 1,
	};

	if (chance(r, 300))
		return 16000 + below(r, 4000000);
	return odd[below(r, sizeof(odd) / sizeof(odd[0]))];
}

/*
 * A struct abiss_start at @p: valid about half the time (a real stream,
 * small and slow enough to keep memory bounded), else with one to three
 * things wrong or odd.
 */
static void build_start(struct worker *w, struct rng *r, uintptr_t p)
{
	static const uint32_t sizes[] = {
		0, 1, 4, 63, 65, ABISS_START_SIZE_VER0 + 8, 120, 128, 4095, 4096,
		4097, 8192, 0xffffffff, 0x80000040,
	};
	static const uint32_t units[] = { 0, 4096, 4096, 65536, 1, 4095, 131072 };
	struct abiss_start st = {
		.size = sizeof(st),
		.flags = chance(r, 300) ? ABISS_START_MMAP : 0,
		.rate = 16000 + below(r, 4000000),
		.read_unit = units[below(r, 4)],
	};
	size_t room = writable(w, p);
	unsigned int n = chance(r, 500) ? 0 : 1 + below(r, 3);
	bool poke = false;

	st.buffer = (st.read_unit ? st.read_unit : 4096) + below(r, KEEP_BUFFER - 65536);
	if (chance(r, 100))
		st.size = sizeof(st) + 8 * (1 + below(r, 100));
	while (n--) {
		switch (below(r, 9)) {
		case 0:
			st.size = sizes[below(r, sizeof(sizes) / sizeof(sizes[0]))];
			break;
		case 1:
			st.flags = chance(r, 500) ? (uint32_t)rnd(r) : 1U << below(r, 32);
			break;
		case 2:
			st.rate = pick_rate(r);
			break;
		case 3:
			st.read_unit = chance(r, 300) ? (uint32_t)rnd(r) :
				       units[below(r, sizeof(units) / sizeof(units[0]))];
			break;
		case 4:
			st.buffer = below(r, 2) ? MAX_BUFFER : MAX_BUFFER + 1 + below(r, 4096);
			break;
		case 5:
			st.buffer = chance(r, 500) ? below(r, 8192) : rnd(r);
			break;
		case 6:
			st.__reserved0 = 1 + below(r, 0xffff);
			break;
		case 7:
			st.__reserved[below(r, 4)] = 1ULL << below(r, 64);
			break;
		default:
			poke = true;
		}
	}
	if (poke && st.size <= sizeof(st))
		st.size = sizeof(st) + 8 * (1 + below(r, 100));
	/* Zeros past the structure, up to what the size says; a byte maybe not. */
	if (room) {
		uint32_t size = st.size;
		size_t z = size < room ? size : room;

		memset((void *)p, 0, z);
		place(w, p, &st, sizeof(st));
		if (poke && size > sizeof(st) && size <= (uint32_t)page) {
			size_t off = sizeof(st) + below(r, size - sizeof(st));

			if (off < room)
				((char *)p)[off] = 1 + below(r, 255);
		}
	}
}

/*
 * The errnos ABISS_IOC_START may give for the structure at @p, from the
 * order of the checks the documentation implies: the size, the bytes past
 * the structure, the fields, then the file, then what happens after.
 */
static void expect_start(struct worker *w, const struct use *u, uintptr_t p,
			 bool flipped, struct eset *ok)
{
	static const int after[] = {
		0, ENOMEM, EBUSY, ESRCH, ETIMEDOUT, EACCES, EPERM, ENOSPC,
		EDQUOT, ECANCELED,
	};
	const struct target *t = &targets[u->target];
	size_t avail = readable(w, p), i;
	struct abiss_start st;
	uint32_t size;
	bool bad = false;
	uint32_t ru;

	if (avail < sizeof(__u32)) {
		es_add(ok, EFAULT);
		return;
	}
	memcpy(&size, (void *)p, sizeof(size));
	if (size < ABISS_START_SIZE_VER0 || size > page) {
		es_add(ok, EINVAL);
		return;
	}
	if (avail < (size < sizeof(st) ? size : sizeof(st))) {
		es_add(ok, EFAULT);
		return;
	}
	for (i = sizeof(st); i < size && i < avail; i++) {
		if (((char *)p)[i]) {
			es_add(ok, EINVAL);
			return;
		}
	}
	if (avail < size) {
		es_add(ok, EFAULT);
		return;
	}
	memset(&st, 0, sizeof(st));
	memcpy(&st, (void *)p, size < sizeof(st) ? size : sizeof(st));
	ru = st.read_unit ? st.read_unit : page;
	if (st.flags & ~ABISS_START_FLAGS || st.__reserved0 ||
	    st.__reserved[0] || st.__reserved[1] || st.__reserved[2] ||
	    st.__reserved[3] || !st.rate || st.rate > MAX_RATE ||
	    st.buffer < ru || st.buffer > MAX_BUFFER)
		bad = true;
	if (bad) {
		es_add(ok, EINVAL);
		return;
	}
	if (t->kind == T_DIR) {
		es_add(ok, EISDIR);
		return;
	}
	if ((u->oflags & O_ACCMODE) == O_WRONLY) {
		es_add(ok, EBADF);
		return;
	}
	if (flipped || (u->oflags & O_DIRECT))
		es_add(ok, EINVAL);
	if (!flipped && (u->oflags & O_DIRECT))
		return;
	es_addv(ok, after, sizeof(after) / sizeof(after[0]));
	if (t->ext4)
		es_add(ok, EOPNOTSUPP);
}

static void build_status(struct worker *w, struct rng *r, uintptr_t p)
{
	static const uint32_t sizes[] = {
		0, 1, 119, ABISS_STATUS_SIZE_VER0, 121, 4095, 4096, 4097, 0xffffffff,
	};
	size_t room = writable(w, p);
	uint32_t size = sizeof(struct abiss_status);

	if (chance(r, 250))
		size = sizes[below(r, sizeof(sizes) / sizeof(sizes[0]))];
	if (room) {
		/* A canary the kernel must not write past min(size, sizeof). */
		memset((void *)p, 0xa5, size < room ? size : room);
		place(w, p, &size, sizeof(size));
	}
}

static void expect_status(struct worker *w, uintptr_t p, struct eset *ok)
{
	size_t avail = readable(w, p);
	uint32_t size;

	if (avail < sizeof(__u32)) {
		es_add(ok, EFAULT);
		return;
	}
	memcpy(&size, (void *)p, sizeof(size));
	if (size < ABISS_STATUS_SIZE_VER0 || size > page) {
		es_add(ok, EINVAL);
		return;
	}
	es_add(ok, ENODATA);
	if (writable(w, p) >= (size < sizeof(struct abiss_status) ?
			       size : sizeof(struct abiss_status)))
		es_add(ok, 0);
	else
		es_add(ok, EFAULT);
}

/* What a successful STATUS wrote: NULL if it makes sense, else what not. */
static const char *status_wrong(struct worker *w, uintptr_t p, uint32_t size)
{
	struct abiss_status st;
	size_t n, i, room = writable(w, p);

	n = size < sizeof(st) ? size : sizeof(st);
	memset(&st, 0, sizeof(st));
	memcpy(&st, (void *)p, n);
	for (i = n; i < size && i < room; i++)
		if (((unsigned char *)p)[i] != 0xa5)
			return "wrote past the size it was given";
	if ((st.flags & ~(ABISS_STATUS_ACTIVE | ABISS_STATUS_ENDED)) ||
	    st.flags == (ABISS_STATUS_ACTIVE | ABISS_STATUS_ENDED))
		return "bad flags";
	if (!st.id)
		return "id 0";
	if (!st.rate || st.rate > MAX_RATE)
		return "rate out of range";
	if (!st.buffer || st.buffer % page || st.buffer > MAX_BUFFER)
		return "buffer not whole pages up to 256 MiB";
	if (st.buffered > st.buffer)
		return "more buffered than the buffer";
	if ((st.flags & ABISS_STATUS_ENDED) &&
	    (st.end_reason < ABISS_END_STOPPED || st.end_reason > ABISS_END_ADMIN))
		return "ended with no known end reason";
	if (!(st.flags & ABISS_STATUS_ENDED) && st.end_reason)
		return "an end reason while not ended";
	if (!(st.flags & ABISS_STATUS_ACTIVE) && st.buffered)
		return "buffered bytes while not active";
	if (st.late_refills > st.refills)
		return "more late refills than refills";
	if (!st.late_refills != !st.worst_late_ns)
		return "late refills and the latest's lateness disagree";
	if (n >= sizeof(st) && (st.__reserved0 || st.__reserved1))
		return "reserved fields not zero";
	return NULL;
}

static void describe_start(char *buf, size_t len, struct worker *w, uintptr_t p)
{
	struct abiss_start st;
	size_t avail = readable(w, p);

	if (avail < sizeof(st)) {
		snprintf(buf, len, "(%zu bytes readable)", avail);
		return;
	}
	memcpy(&st, (void *)p, sizeof(st));
	snprintf(buf, len, "{size %u flags %#x rate %llu buffer %llu read_unit %u "
		 "res0 %u res %llx %llx %llx %llx}", st.size, st.flags,
		 (unsigned long long)st.rate, (unsigned long long)st.buffer,
		 st.read_unit, st.__reserved0,
		 (unsigned long long)st.__reserved[0],
		 (unsigned long long)st.__reserved[1],
		 (unsigned long long)st.__reserved[2],
		 (unsigned long long)st.__reserved[3]);
}

/* Was the slot dup2()ed over, or being, since @u was taken?  (seqcount) */
static bool slot_changed(const struct use *u)
{
	const struct slot *s = &slots[u->slot];

	return u->dead || (u->gen & 1) ||
	       __atomic_load_n(&s->gen, __ATOMIC_SEQ_CST) != u->gen;
}

static void oflags_str(char *buf, size_t len, int f)
{
	snprintf(buf, len, "%s%s%s",
		 (f & O_ACCMODE) == O_RDONLY ? "O_RDONLY" :
		 (f & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR",
		 f & O_DIRECT ? "|O_DIRECT" : "", f & O_NONBLOCK ? "|O_NONBLOCK" : "");
}

/*
 * Report a result outside @ok: the call, its arguments, and what replays
 * it.  @what describes the call.
 */
static void unexpected(int ck, const struct eset *ok, int err, const char *what,
		       unsigned int thread, uint64_t index, bool child)
{
	char allowed[300];

	es_print(ok, allowed, sizeof(allowed));
	fail(ck, "unexpected %s from %s (allowed: %s); seed %llu thread %u call %llu%s",
	     ename(err), what, allowed, (unsigned long long)opt_seed, thread,
	     (unsigned long long)index, child ? " (in a forked child)" : "");
}

/* One random ABISS ioctl on the descriptor of @u. */
static void do_ioctl(struct worker *w, struct rng *r, const struct use *u,
		     uint64_t index, bool child)
{
	const struct target *t = &targets[u->target];
	unsigned int cmd = cmd_of(r), flips;
	enum ckind kind = kind_of(cmd);
	struct eset ok = { .ok = false };
	char what[700], args[300], fls[40];
	struct use uu = *u;
	uint32_t size_in = 0;
	enum pkind pk;
	uintptr_t p;
	__u64 pos;
	int ret, err, fl;

	switch (kind) {
	case K_START:
		p = pick_ptr(w, r, sizeof(struct abiss_start), RO_START, &pk);
		build_start(w, r, p);
		break;
	case K_STATUS:
		p = pick_ptr(w, r, sizeof(struct abiss_status), RO_STATUS, &pk);
		build_status(w, r, p);
		break;
	case K_POSITION:
		p = pick_ptr(w, r, sizeof(pos), RO_POS, &pk);
		switch (below(r, 6)) {
		case 0:
			pos = 0;
			break;
		case 1:
			pos = LLONG_MAX;
			break;
		case 2:
			pos = (__u64)LLONG_MAX + 1 + below(r, 2);
			break;
		case 3:
			pos = rnd(r);
			break;
		default:
			pos = below(r, 8 << 20);
		}
		place(w, p, &pos, sizeof(pos));
		break;
	default:
		p = pick_ptr(w, r, 64, RO_START, &pk);
	}
	/*
	 * What the documentation allows, from the arguments as they are
	 * before the call (STATUS writes over them).  O_DIRECT is the open
	 * file's, which a dup()ed sibling may have toggled.
	 */
	if (readable(w, p) >= sizeof(size_in))
		memcpy(&size_in, (void *)p, sizeof(size_in));
	flips = __atomic_load_n(&odirect_flips, __ATOMIC_SEQ_CST);
	fl = fcntl(u->fd, F_GETFL);
	if (fl >= 0)
		uu.oflags = (uu.oflags & ~O_DIRECT) | (fl & O_DIRECT);
	if (!t->abiss) {
		es_add(&ok, ENOTTY);
	} else {
		switch (kind) {
		case K_START:
			expect_start(w, &uu, p, false, &ok);
			break;
		case K_STOP:
			es_add(&ok, 0);
			es_add(&ok, ENODATA);
			break;
		case K_POSITION:
			if (readable(w, p) < sizeof(pos)) {
				es_add(&ok, EFAULT);
			} else {
				memcpy(&pos, (void *)p, sizeof(pos));
				if (pos > LLONG_MAX) {
					es_add(&ok, EINVAL);
				} else {
					es_add(&ok, 0);
					es_add(&ok, ENODATA);
				}
			}
			break;
		case K_STATUS:
			expect_status(w, p, &ok);
			break;
		default:
			es_add(&ok, ENOTTY);
		}
	}
	args[0] = 0;
	if (kind == K_START)
		describe_start(args, sizeof(args), w, p);
	else if (kind == K_POSITION && readable(w, p) >= sizeof(pos))
		snprintf(args, sizeof(args), "%llu",
			 (unsigned long long)*(__u64 *)p);
	else if (kind == K_STATUS && readable(w, p) >= 4)
		snprintf(args, sizeof(args), "{size %u}", size_in);

	ret = ioctl(u->fd, cmd, p);
	err = ret ? errno : 0;
	count_result(err, false);
	/*
	 * O_DIRECT toggled meanwhile: either way.  A forked child shares its
	 * open files with its parent, whose threads toggle O_DIRECT where the
	 * child's copy of the counter does not see it.
	 */
	if (kind == K_START && t->abiss &&
	    (child || flips != __atomic_load_n(&odirect_flips, __ATOMIC_SEQ_CST)))
		expect_start(w, &uu, p, true, &ok);
	/* Closed under our feet: it was /dev/null for part of the time. */
	if (slot_changed(u))
		es_add(&ok, ENOTTY);

	inc(&sh->checked[t->check]);
	oflags_str(fls, sizeof(fls), uu.oflags);
	snprintf(what, sizeof(what), "ioctl(%s [%s, slot %d], %#x %s, %s %s)",
		 t->path, fls, u->slot, cmd, ckind_name[kind], pkind_name[pk], args);
	if (opt_verbose && !child)
		tap_diag("thread %u call %llu: %s = %s", w->index,
		     (unsigned long long)index, what, ename(err));
	if (!es_has(&ok, err)) {
		unexpected(t->check, &ok, err, what, w->index, index, child);
		return;
	}
	if (kind == K_START && !err)
		inc(&sh->started);
	if (kind == K_STATUS && !err && readable(w, p) >= 8) {
		if (((struct abiss_status *)p)->flags & ABISS_STATUS_ACTIVE)
			inc(&sh->active);
		else if (((struct abiss_status *)p)->flags & ABISS_STATUS_ENDED)
			inc(&sh->ended);
	}
	if (kind == K_STATUS && !err && t->abiss && !slot_changed(u)) {
		const char *wrong = status_wrong(w, p, size_in);

		if (wrong)
			fail(t->check, "STATUS output: %s, from %s; seed %llu thread %u call %llu",
			     wrong, what, (unsigned long long)opt_seed, w->index,
			     (unsigned long long)index);
	}
}

/* read() or lseek() on the descriptor of @u: a stream's position moves. */
static void do_read(struct worker *w, struct rng *r, const struct use *u,
		    uint64_t index, bool child)
{
	const struct target *t = &targets[u->target];
	struct eset ok = { .ok = true };
	char what[500], fl[40];
	size_t len;
	off_t off;
	long ret;
	int err;
	bool seek = chance(r, 300);

	if (seek) {
		off = chance(r, 500) ? (off_t)below(r, 8 << 20) :
				       (off_t)(4096 * below(r, 2048));
		ret = lseek(u->fd, off, SEEK_SET);
		es_add(&ok, EINVAL);
		snprintf(what, sizeof(what), "lseek(%s, %lld)", t->path, (long long)off);
	} else {
		len = chance(r, 500) ? 4096 << below(r, 5) : 1 + below(r, RW_BUF);
		ret = read(u->fd, w->rbuf, len);
		if ((u->oflags & O_ACCMODE) == O_WRONLY)
			es_add(&ok, EBADF);
		if (t->kind == T_DIR)
			es_add(&ok, EISDIR);
		/* O_DIRECT wants aligned reads; it may be toggled by F_SETFL. */
		es_add(&ok, EINVAL);
		oflags_str(fl, sizeof(fl), u->oflags);
		snprintf(what, sizeof(what), "read(%s [%s], %zu)", t->path, fl, len);
	}
	err = ret < 0 ? errno : 0;
	count_result(err, false);
	inc(&sh->checked[ck_fileops]);
	if (!es_has(&ok, err) && !slot_changed(u))
		unexpected(ck_fileops, &ok, err, what, w->index, index, child);
}

/* --- the descriptor table ------------------------------------------------- */

/*
 * Open a random target into an empty slot, write-locked.  Falling back
 * from O_DIRECT (tmpfs, devices) and from writing (directories) is
 * expected; any other failure is not.
 */
static void slot_open(struct rng *r, struct slot *s, unsigned int thread,
		      uint64_t index)
{
	static const int acc[] = { O_RDONLY, O_RDONLY, O_RDWR, O_WRONLY };
	int ti, flags, fd, i;
	const struct target *t;

	/* Mostly files that carry streams; sometimes anything. */
	ti = below(r, nr_targets);
	if (nr_files && chance(r, 850)) {
		ti = below(r, nr_files);
		for (i = 0; i < 4 && !targets[ti].abiss && chance(r, 800); i++)
			ti = below(r, nr_files);
	}
	t = &targets[ti];
	flags = acc[below(r, 4)] | O_CLOEXEC;
	if (chance(r, 100))
		flags |= O_DIRECT;
	if (chance(r, 100))
		flags |= O_NONBLOCK;
	if (t->kind == T_DIR)
		flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (flags & O_DIRECT);
	fd = open(t->path, flags);
	if (fd < 0 && errno == EINVAL && (flags & O_DIRECT)) {
		count_result(EINVAL, false);
		flags &= ~O_DIRECT;
		fd = open(t->path, flags);
	}
	count_result(fd < 0 ? errno : 0, false);
	inc(&sh->checked[ck_fileops]);
	if (fd < 0) {
		fail(ck_fileops, "open(%s, %#x) failed: %s; seed %llu thread %u call %llu",
		     t->path, flags, ename(errno), (unsigned long long)opt_seed,
		     thread, (unsigned long long)index);
		return;
	}
	s->fd = fd;
	s->target = ti;
	s->oflags = flags;
	s->dead = 0;
}

static void slot_close(struct slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Take a used slot for reading, and what it holds; false if none came. */
static bool slot_use(struct rng *r, struct use *u)
{
	int i;

	for (i = 0; i < 4; i++) {
		struct slot *s = &slots[below(r, NSLOTS)];

		if (pthread_rwlock_tryrdlock(&s->lock))
			continue;
		if (s->fd < 0) {
			pthread_rwlock_unlock(&s->lock);
			continue;
		}
		u->slot = s - slots;
		u->gen = __atomic_load_n(&s->gen, __ATOMIC_SEQ_CST);
		u->dead = __atomic_load_n(&s->dead, __ATOMIC_SEQ_CST);
		u->fd = s->fd;
		u->target = s->target;
		u->oflags = __atomic_load_n(&s->oflags, __ATOMIC_RELAXED);
		return true;
	}
	return false;
}

static void slot_done(const struct use *u)
{
	pthread_rwlock_unlock(&slots[u->slot].lock);
}

/* Close a descriptor while other threads may be using it: dup2 over it. */
static void slot_kill(const struct use *u)
{
	struct slot *s = &slots[u->slot];

	if (__atomic_exchange_n(&s->dead, 2, __ATOMIC_SEQ_CST))
		return;
	__atomic_add_fetch(&s->gen, 1, __ATOMIC_SEQ_CST);
	if (dup2(spare_fd, u->fd) < 0)
		fail(ck_fileops, "dup2 over slot %d: %s", u->slot, ename(errno));
	__atomic_add_fetch(&s->gen, 1, __ATOMIC_SEQ_CST);
}

/* --- the fake daemon ------------------------------------------------------ */

enum {
	ID_REQ = 1,		/* its REQUEST was read */
	ID_ANSWERED = 2,	/* a reply for it was taken */
	ID_ACCEPTED = 4,
	ID_DENIED = 8,
	ID_END = 16,
	ID_LIVE = 32,
	ID_DROPPED = 64,	/* left unanswered on purpose */
};

struct idrec {
	uint64_t id;
	uint32_t flags;
	uint16_t acc_session;	/* session that accepted it */
	uint16_t live_session;	/* session that got its LIVE */
};

struct daemon {
	pthread_t tid;
	struct worker w;	/* its arena, for bad pointers */
	int fd;
	unsigned int session;	/* opens so far */
	char *buf;
	struct idrec *ids;
	unsigned long nr_ids;
	uint64_t deferred[16];	/* requests answered later */
	int nr_deferred;
	uint64_t recent[64];	/* ids of recent requests */
	unsigned long nr_recent;
	unsigned long requests, ends, lives, accepts, denies, drops;
	unsigned long unannounced;	/* END of a stream admitted before this session, no LIVE */
	int state;		/* D_RUN, D_FINAL, D_STOP (set by main) */
	unsigned int final_session;	/* set by the daemon once final */
	uint64_t iter;
};

enum { D_RUN, D_FINAL, D_STOP };

static struct daemon dmn;

static struct idrec *id_get(uint64_t id, bool add)
{
	unsigned long h = (id * 0x9e3779b97f4a7c15ULL) >> 45, i;

	for (i = 0; i < LIVE_IDS; i++) {
		struct idrec *e = &dmn.ids[(h + i) & (LIVE_IDS - 1)];

		if (e->id == id)
			return e;
		if (!e->id) {
			if (!add || dmn.nr_ids >= LIVE_IDS * 3 / 4)
				return NULL;
			dmn.nr_ids++;
			e->id = id;
			return e;
		}
	}
	return NULL;
}

static void daemon_unexpected(const struct eset *ok, int err, const char *what)
{
	char allowed[200];

	es_print(ok, allowed, sizeof(allowed));
	fail(ck_daemon, "fake daemon: unexpected %s from %s (allowed: %s); seed %llu, daemon iteration %llu",
	     ename(err), what, allowed, (unsigned long long)opt_seed,
	     (unsigned long long)dmn.iter);
}

static bool daemon_open(void)
{
	uint64_t until = now_ns() + 10 * NSEC_PER_SEC;
	int fd;

	for (;;) {
		fd = open(DEV_ABISS, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		count_result(fd < 0 ? errno : 0, true);
		if (fd >= 0) {
			dmn.fd = fd;
			dmn.session++;
			return true;
		}
		/* A worker holds it for a moment (its probe); not for long. */
		if (errno != EBUSY || now_ns() > until)
			break;
		usleep(1000);
	}
	fail(ck_daemon, "fake daemon: cannot open " DEV_ABISS ": %s%s", ename(errno),
	     errno == EBUSY ? " (is abissd running?)" : "");
	return false;
}

/*
 * write() a reply, and check the result against what the documentation
 * gives for it: EINVAL for any bad size, verdict, errno or reserved field,
 * ENOENT for an id with no pending request.  @pending: the id may still be
 * waiting in the kernel.  Returns the errno.
 */
static int daemon_write(uintptr_t p, size_t count, bool pending, const char *what)
{
	struct worker *w = &dmn.w;
	struct eset ok = { .ok = false };
	struct abiss_reply rep;
	size_t avail = readable(w, p), i;
	ssize_t n;
	int err;
	bool bad = false;

	n = write(dmn.fd, (void *)p, count);
	err = n < 0 ? errno : 0;
	count_result(err, true);
	inc(&sh->checked[ck_daemon]);
	if (count < sizeof(rep) || count > (size_t)page) {
		es_add(&ok, EINVAL);
	} else if (avail < count) {
		/* The tail is checked first; a non-zero byte before the fault may win. */
		es_add(&ok, EFAULT);
		es_add(&ok, EINVAL);
	} else {
		memcpy(&rep, (void *)p, sizeof(rep));
		for (i = sizeof(rep); i < count; i++)
			if (((char *)p)[i])
				bad = true;
		if (rep.size != count || rep.__reserved0 || rep.__reserved[0] ||
		    rep.__reserved[1])
			bad = true;
		if (rep.verdict == ABISS_VERDICT_DENY) {
			if (rep.error != 0 && rep.error != EACCES && rep.error != EPERM &&
			    rep.error != ENOSPC && rep.error != EDQUOT)
				bad = true;
		} else if (rep.verdict != ABISS_VERDICT_ACCEPT) {
			bad = true;
		}
		if (bad) {
			es_add(&ok, EINVAL);
		} else {
			es_add(&ok, ENOENT);
			if (pending)
				es_add(&ok, 0);
		}
	}
	if (!es_has(&ok, err)) {
		char d[300];

		snprintf(d, sizeof(d), "write(" DEV_ABISS ", %s, %zu)", what, count);
		daemon_unexpected(&ok, err, d);
	} else if (!err && n != (ssize_t)count) {
		fail(ck_daemon, "fake daemon: write of %zu bytes returned %zd", count, n);
	}
	return err;
}

/* Send a well-formed reply, with a zero tail sometimes; returns the errno. */
static int daemon_reply(struct rng *r, uint64_t id, uint32_t verdict, int32_t error,
			bool pending, const char *what)
{
	struct abiss_reply rep = {
		.size = sizeof(rep), .verdict = verdict, .id = id, .error = error,
	};
	uintptr_t p = (uintptr_t)dmn.w.arena + 8 * below(r, 32);
	size_t count = sizeof(rep);

	if (chance(r, 100))
		count += 8 * (1 + below(r, 100));
	rep.size = count;
	memset((void *)p, 0, count);
	memcpy((void *)p, &rep, sizeof(rep));
	return daemon_write(p, count, pending, what);
}

/* Answer @id for real: accept within the policy, else deny. */
static void daemon_verdict(struct rng *r, uint64_t id, bool replay)
{
	static const int32_t denials[] = { 0, EACCES, EPERM, ENOSPC, EDQUOT };
	struct idrec *e = id_get(id, true);
	bool keep = e && !(e->flags & ID_DENIED) && (e->flags & ID_REQ) &&
		    chance(r, 650);
	bool pending = e && !(e->flags & ID_ANSWERED);
	int err;

	/* The policy (buffer and rate) was put in the flags when it was read. */
	if (e && (e->flags & 0x10000))
		keep = false;
	if (keep)
		err = daemon_reply(r, id, ABISS_VERDICT_ACCEPT, 0, pending, "an accept");
	else
		err = daemon_reply(r, id, ABISS_VERDICT_DENY,
				   denials[below(r, 5)], pending, "a denial");
	if (!e)
		return;
	if (!err) {
		e->flags |= ID_ANSWERED | (keep ? ID_ACCEPTED : ID_DENIED);
		if (keep) {
			e->acc_session = dmn.session;
			dmn.accepts++;
		} else {
			dmn.denies++;
		}
	} else {
		/* The request went away (timed out, killed): nothing pending. */
		e->flags |= ID_ANSWERED;
	}
	if (replay && !err)
		daemon_reply(r, id, keep ? ABISS_VERDICT_ACCEPT : ABISS_VERDICT_DENY,
			     0, false, "a replayed reply");
}

/* A reply that is wrong in one random way (or, rarely, by chance, not). */
static void daemon_garbage(struct rng *r, uint64_t id)
{
	struct worker *w = &dmn.w;
	struct abiss_reply rep = {
		.size = sizeof(rep), .verdict = ABISS_VERDICT_DENY, .id = id,
	};
	uintptr_t a = (uintptr_t)w->arena, p = a + 8 * below(r, 32);
	size_t count = sizeof(rep), i;
	struct idrec *e;
	enum pkind pk;

	switch (below(r, 10)) {
	case 0:		/* random bytes, random length */
		count = below(r, 2) ? below(r, 2 * sizeof(rep)) : below(r, 2 * page);
		for (i = 0; i < count && i < (size_t)2 * page - 256; i++)
			((char *)p)[i] = rnd(r);
		if (count > (size_t)2 * page - 256)
			count = 2 * page - 256;
		/* Keep it from being a real verdict for a real request. */
		if (count >= sizeof(rep))
			((struct abiss_reply *)p)->id |= 1ULL << 62;
		daemon_write(p, count, false, "random bytes");
		return;
	case 1:		/* truncated */
		count = below(r, sizeof(rep));
		break;
	case 2:		/* size field not the length written */
		rep.size = below(r, 2) ? sizeof(rep) + 8 : rnd(r);
		break;
	case 3:		/* no such verdict */
		rep.verdict = below(r, 2) ? 0 : 3 + below(r, 1000);
		break;
	case 4:		/* a denial errno the kernel does not pass on */
		rep.error = below(r, 2) ? -EACCES : (int32_t)(ENOSPC + 1 + below(r, 200));
		if (rep.error == EDQUOT || rep.error == EPERM || rep.error == EACCES)
			rep.error = EINVAL;
		break;
	case 5:		/* reserved fields */
		if (below(r, 2))
			rep.__reserved0 = 1;
		else
			rep.__reserved[below(r, 2)] = 1ULL << below(r, 64);
		break;
	case 6:		/* a longer reply with a non-zero tail */
		count = sizeof(rep) + 8 + below(r, 64);
		rep.size = count;
		memset((void *)p, 0, count);
		memcpy((void *)p, &rep, sizeof(rep));
		((char *)p)[sizeof(rep) + below(r, count - sizeof(rep))] = 1;
		daemon_write(p, count, false, "a reply with a non-zero tail");
		return;
	case 7:		/* too long */
		count = page + 1 + below(r, 100);
		break;
	case 8:		/* a bad pointer */
		p = pick_ptr(w, r, sizeof(rep), 0, &pk);
		if (writable(w, p))
			place(w, p, &rep, sizeof(rep));
		e = id_get(id, false);
		daemon_write(p, count, e && !(e->flags & ID_ANSWERED), pkind_name[pk]);
		/* A good pointer may have carried a real denial. */
		return;
	default:	/* an id no request has */
		rep.id = (1ULL << 62) | rnd(r);
		rep.verdict = below(r, 2) ? ABISS_VERDICT_ACCEPT : ABISS_VERDICT_DENY;
		memset((void *)p, 0, count);
		memcpy((void *)p, &rep, sizeof(rep));
		daemon_write(p, count, false, "a reply for an unknown id");
		return;
	}
	memset((void *)p, 0, sizeof(rep) + 8);
	memcpy((void *)p, &rep, sizeof(rep));
	e = id_get(id, false);
	daemon_write(p, count, e && !(e->flags & ID_ANSWERED), "a malformed reply");
}

static void daemon_stop_id(struct rng *r, uint64_t id)
{
	struct worker *w = &dmn.w;
	struct eset ok = { .ok = false };
	char what[120];
	enum pkind pk = P_NORMAL;
	uintptr_t p = (uintptr_t)w->arena;
	int ret, err;

	if (chance(r, 100))
		p = pick_ptr(w, r, sizeof(__u64), RO_POS, &pk);
	place(w, p, &id, sizeof(id));
	ret = ioctl(dmn.fd, ABISS_DAEMON_STOP, p);
	err = ret ? errno : 0;
	count_result(err, true);
	inc(&sh->checked[ck_daemon]);
	if (readable(w, p) < sizeof(__u64)) {
		es_add(&ok, EFAULT);
	} else {
		es_add(&ok, 0);
		es_add(&ok, ENOENT);
	}
	if (!es_has(&ok, err)) {
		snprintf(what, sizeof(what), "ABISS_DAEMON_STOP(%llu, %s)",
			 (unsigned long long)*(__u64 *)(readable(w, p) >= 8 ? p : (uintptr_t)&id),
			 pkind_name[pk]);
		daemon_unexpected(&ok, err, what);
	}
}

/* Check one record the kernel gave us, and act on it. */
static void daemon_record(struct rng *r, const struct abiss_msg *m, ssize_t n)
{
	struct idrec *e;
	int i;

	inc(&sh->checked[ck_records]);
	if ((size_t)n < sizeof(*m) || m->size != n) {
		fail(ck_records, "record of %zd bytes says size %u", n, m->size);
		return;
	}
	if (m->type != ABISS_MSG_REQUEST && m->type != ABISS_MSG_END &&
	    m->type != ABISS_MSG_LIVE) {
		fail(ck_records, "record of unknown type %u, id %llu", m->type,
		     (unsigned long long)m->id);
		return;
	}
	if (m->type == ABISS_MSG_END ?
	    m->reason < ABISS_END_STOPPED || m->reason > ABISS_END_ADMIN : m->reason != 0)
		fail(ck_records, "record type %u id %llu has reason %u", m->type,
		     (unsigned long long)m->id, m->reason);
	if (!m->id || !m->pid || m->uid || m->gid || !m->rate || m->rate > MAX_RATE ||
	    !m->buffer || m->buffer % page || m->buffer > MAX_BUFFER)
		fail(ck_records, "record type %u id %llu: pid %u uid %u gid %u rate %llu buffer %llu",
		     m->type, (unsigned long long)m->id, m->pid, m->uid, m->gid,
		     (unsigned long long)m->rate, (unsigned long long)m->buffer);
	for (i = 0; i < nr_files; i++)
		if (m->ino == targets[i].ino && m->dev == targets[i].dev)
			break;
	if (i == nr_files)
		fail(ck_records, "record type %u id %llu names dev %llu ino %llu, none of our files",
		     m->type, (unsigned long long)m->id, (unsigned long long)m->dev,
		     (unsigned long long)m->ino);
	e = id_get(m->id, true);
	if (!e) {
		fail(ck_records, "too many ids to track");
		return;
	}
	switch (m->type) {
	case ABISS_MSG_REQUEST:
		dmn.requests++;
		if (e->flags & ID_REQ)
			fail(ck_records, "a second REQUEST for id %llu",
			     (unsigned long long)m->id);
		e->flags |= ID_REQ;
		if (m->buffer > KEEP_BUFFER || m->rate > KEEP_RATE)
			e->flags |= 0x10000;
		dmn.recent[dmn.nr_recent++ % 64] = m->id;
		break;
	case ABISS_MSG_END:
		dmn.ends++;
		if (e->flags & ID_END)
			fail(ck_records, "a second END for id %llu", (unsigned long long)m->id);
		else if (e->flags & ID_DENIED)
			fail(ck_records, "END for id %llu, which the daemon denied",
			     (unsigned long long)m->id);
		else if (!(e->flags & (ID_ACCEPTED | ID_LIVE)))
			fail(ck_records, "END for id %llu, which no daemon admitted",
			     (unsigned long long)m->id);
		else if (e->acc_session != dmn.session && e->live_session != dmn.session &&
			 ++dmn.unannounced <= 5)
			tap_diag("END (reason %u) of stream %llu in daemon session %u, which had no "
			     "LIVE for it: session %u admitted it (seed %llu)", m->reason,
			     (unsigned long long)m->id, dmn.session, e->acc_session,
			     (unsigned long long)opt_seed);
		e->flags |= ID_END;
		return;
	case ABISS_MSG_LIVE:
		dmn.lives++;
		if (!(e->flags & ID_ACCEPTED))
			fail(ck_records, "LIVE for id %llu, which no daemon admitted",
			     (unsigned long long)m->id);
		if (e->flags & ID_END)
			fail(ck_records, "LIVE for id %llu, which had ended",
			     (unsigned long long)m->id);
		if (e->live_session == dmn.session)
			fail(ck_records, "a second LIVE for id %llu", (unsigned long long)m->id);
		e->flags |= ID_LIVE;
		e->live_session = dmn.session;
		return;
	}

	/* A request: answer it, one way or another. */
	if (dmn.state == D_RUN && chance(r, 2)) {
		e->flags |= ID_DROPPED | ID_ANSWERED;
		dmn.drops++;
		return;
	}
	if (chance(r, 40) && dmn.nr_deferred < 16) {
		dmn.deferred[dmn.nr_deferred++] = m->id;
		return;
	}
	if (chance(r, 60))
		daemon_garbage(r, m->id);
	if (chance(r, 30))
		daemon_garbage(r, m->id);
	/* Ended while abissd decides: START then fails with ECANCELED. */
	if (chance(r, 25))
		daemon_stop_id(r, m->id);
	daemon_verdict(r, m->id, chance(r, 40));
	/* Ended right after the accept, racing the first fill. */
	if (chance(r, 25))
		daemon_stop_id(r, m->id);
}

/* A read() of /dev/abiss: good or, sometimes, not. */
static void daemon_read(struct rng *r)
{
	struct worker *w = &dmn.w;
	struct eset ok = { .ok = false };
	char what[100];
	uintptr_t p = (uintptr_t)dmn.buf;
	size_t count = MSG_BUF;
	enum pkind pk = P_NORMAL;
	ssize_t n;
	int err;

	if (chance(r, 15)) {
		count = below(r, sizeof(struct abiss_msg));
		es_add(&ok, EINVAL);
	} else if (chance(r, 10)) {
		/*
		 * A buffer that says it is longer than what is writable: the
		 * record fits or the read faults (and the record stays queued).
		 */
		p = pick_ptr(w, r, sizeof(struct abiss_msg), 0, &pk);
		count = sizeof(struct abiss_msg) + 64;
		es_add(&ok, EAGAIN);
		es_add(&ok, EFAULT);
		if (writable(w, p) >= sizeof(struct abiss_msg))
			es_add(&ok, 0);
	} else {
		es_add(&ok, 0);
		es_add(&ok, EAGAIN);
	}
	n = read(dmn.fd, (void *)p, count);
	err = n < 0 ? errno : 0;
	count_result(err, true);
	inc(&sh->checked[ck_daemon]);
	if (!es_has(&ok, err)) {
		snprintf(what, sizeof(what), "read(" DEV_ABISS ", %s, %zu)",
			 pkind_name[pk], count);
		daemon_unexpected(&ok, err, what);
	}
	if (n <= 0)
		return;
	if ((size_t)n > writable(w, p) && p != (uintptr_t)dmn.buf) {
		fail(ck_daemon, "fake daemon: read() of %zd bytes into %zu writable ones succeeded",
		     n, writable(w, p));
		return;
	}
	if (p != (uintptr_t)dmn.buf)
		memcpy(dmn.buf, (void *)p, n);
	daemon_record(r, (const struct abiss_msg *)dmn.buf, n);
}

/* Now and then, something else: stop a random id, a random ioctl, a close. */
static void daemon_misc(struct rng *r)
{
	struct eset ok = { .ok = false };
	unsigned int cmd;
	char what[80];
	int ret, err;

	if (chance(r, 15))
		daemon_stop_id(r, dmn.nr_recent && chance(r, 500) ?
			       dmn.recent[below(r, dmn.nr_recent < 64 ? dmn.nr_recent : 64)] :
			       chance(r, 500) ? rnd(r) : below(r, 100));
	if (chance(r, 10))
		daemon_garbage(r, dmn.nr_recent ? dmn.recent[(dmn.nr_recent - 1) % 64] : 1);
	if (chance(r, 8)) {
		cmd = below(r, 3) ? _IOC(below(r, 4), ABISS_IOC_MAGIC, below(r, 32),
					 below(r, 1 << 14)) : ABISS_IOC_START;
		ret = ioctl(dmn.fd, cmd, dmn.w.arena);
		err = ret ? errno : 0;
		count_result(err, true);
		inc(&sh->checked[ck_daemon]);
		es_add(&ok, ENOTTY);
		if (cmd == ABISS_DAEMON_STOP) {
			es_add(&ok, 0);
			es_add(&ok, ENOENT);
		}
		if (!es_has(&ok, err)) {
			snprintf(what, sizeof(what), "ioctl(" DEV_ABISS ", %#x)", cmd);
			daemon_unexpected(&ok, err, what);
		}
	}
	if (dmn.state == D_RUN && chance(r, 4)) {
		/* Pending STARTs fail with ESRCH; live streams carry on. */
		close(dmn.fd);
		dmn.fd = -1;
		dmn.nr_deferred = 0;
		if (chance(r, 500))
			usleep(below(r, 10000));
		daemon_open();
	}
}

static void *daemon_main(void *arg)
{
	struct pollfd pfd;
	struct rng r;
	int i, idle = 0;

	if (!daemon_open()) {
		__atomic_store_n(&dmn.final_session, UINT_MAX, __ATOMIC_SEQ_CST);
		return NULL;
	}
	for (dmn.iter = 0;; dmn.iter++) {
		int state = __atomic_load_n(&dmn.state, __ATOMIC_SEQ_CST);

		if (dmn.fd < 0 && !daemon_open())
			break;
		if (state != D_RUN && !dmn.final_session)
			__atomic_store_n(&dmn.final_session, dmn.session, __ATOMIC_SEQ_CST);
		rng_init(&r, opt_threads, dmn.iter);
		pfd.fd = dmn.fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 20) < 0)
			continue;
		if (!(pfd.revents & POLLIN)) {
			/* Deferred replies go out when things are quiet. */
			for (i = 0; i < dmn.nr_deferred; i++)
				daemon_verdict(&r, dmn.deferred[i], false);
			dmn.nr_deferred = 0;
			if (state == D_STOP && ++idle > 5)
				break;
			daemon_misc(&r);
			continue;
		}
		idle = 0;
		daemon_read(&r);
		if (dmn.nr_deferred && chance(&r, 100)) {
			daemon_verdict(&r, dmn.deferred[0], false);
			memmove(dmn.deferred, dmn.deferred + 1,
				--dmn.nr_deferred * sizeof(dmn.deferred[0]));
		}
		if (chance(&r, 50))
			daemon_misc(&r);
	}
	return NULL;
}

/* --- the workers ------------------------------------------------------------- */

static void reap_kids(struct worker *w, bool all)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < w->nr_kids;) {
		if (all)
			kill(w->kids[i], SIGKILL);
		pid = waitpid(w->kids[i], &status, all ? 0 : WNOHANG);
		if (pid == 0) {
			i++;
			continue;
		}
		if (pid > 0 && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			fail(ck_kids, "a forked child of thread %u ended with status %#x",
			     w->index, status);
		w->kids[i] = w->kids[--w->nr_kids];
	}
}

/*
 * In a child: without CAP_IPC_LOCK, its buffers count against its
 * RLIMIT_MEMLOCK (and the user's locked_vm), which root's do not.
 */
static void drop_ipc_lock(struct rng *r)
{
	static const rlim_t limits[] = { 0, 65536, 1 << 20, 4 << 20 };
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	struct rlimit rl;

	if (syscall(SYS_capget, &hdr, data))
		return;
	data[0].effective &= ~(1U << CAP_IPC_LOCK);
	data[0].permitted &= ~(1U << CAP_IPC_LOCK);
	if (syscall(SYS_capset, &hdr, data))
		return;
	rl.rlim_cur = rl.rlim_max = limits[below(r, 4)];
	if (!setrlimit(RLIMIT_MEMLOCK, &rl))
		inc(&sh->limited);
}

/*
 * fork(): the child makes a few calls on descriptors it inherited (the
 * parent holds their slots for reading across the fork, so they are what
 * the table says) and _exit()s; sometimes the parent kills it with
 * SIGKILL, in a START maybe.
 */
static void do_fork(struct worker *w, struct rng *r, uint64_t index)
{
	struct use u[3];
	int n = 0, i;
	pid_t pid;

	reap_kids(w, false);
	if (w->nr_kids == MAX_KIDS) {
		kill(w->kids[0], SIGKILL);
		reap_kids(w, false);
	}
	while (n < 3 && slot_use(r, &u[n]))
		n++;
	pid = fork();
	if (pid == 0) {
		struct rng cr;
		unsigned int from = 3, keep[3], k, j, t;

		/*
		 * Keep only the descriptors we were given: one of /dev/abiss
		 * (the fake daemon's, a worker's probe) would hold the device
		 * open after its owner closed it.
		 */
		for (k = 0; k < (unsigned int)n; k++)
			keep[k] = u[k].fd;
		for (k = 0; k < (unsigned int)n; k++)
			for (j = k + 1; j < (unsigned int)n; j++)
				if (keep[j] < keep[k]) {
					t = keep[j];
					keep[j] = keep[k];
					keep[k] = t;
				}
		for (k = 0; k < (unsigned int)n; k++) {
			if (keep[k] > from)
				close_range(from, keep[k] - 1, 0);
			if (keep[k] + 1 > from)
				from = keep[k] + 1;
		}
		close_range(from, ~0U, 0);
		rng_init(&cr, w->index, index ^ 0xc41dULL << 48);
		if (chance(&cr, 300))
			drop_ipc_lock(&cr);
		for (i = 0; i < 1 + (int)below(&cr, 4) && n; i++) {
			struct use *c = &u[below(&cr, n)];

			/* What changed between the fork and our snapshot shows here. */
			if (chance(&cr, 800))
				do_ioctl(w, &cr, c, index, true);
			else
				do_read(w, &cr, c, index, true);
		}
		_exit(0);
	}
	for (i = 0; i < n; i++)
		slot_done(&u[i]);
	count_result(pid < 0 ? errno : 0, false);
	inc(&sh->checked[ck_kids]);
	if (pid < 0) {
		fail(ck_kids, "fork: %s", ename(errno));
		return;
	}
	w->kids[w->nr_kids++] = pid;
	if (chance(r, 300)) {
		usleep(below(r, 3000));
		kill(pid, SIGKILL);
	}
}

/* truncate() a file and grow it back, or punch a hole in it. */
static void do_file_change(struct worker *w, struct rng *r, uint64_t index)
{
	const struct target *t;
	struct eset ok = { .ok = true };
	char what[400];
	off_t to, off;
	int fd, ret, err;

	if (!nr_files)
		return;
	t = &targets[below(r, nr_files)];
	if (chance(r, 600)) {
		to = below(r, 3) ? (off_t)below(r, t->size + 1) : 0;
		ret = truncate(t->path, to);
		err = ret ? errno : 0;
		count_result(err, false);
		snprintf(what, sizeof(what), "truncate(%s, %lld)", t->path, (long long)to);
		if (!ret) {
			ret = truncate(t->path, t->size);
			err = ret ? errno : 0;
			count_result(err, false);
			snprintf(what, sizeof(what), "truncate(%s, %lld) back from %lld",
				 t->path, (long long)t->size, (long long)to);
		}
	} else {
		off = 4096 * below(r, t->size / 4096 + 1);
		fd = open(t->path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			ret = -1;
		} else {
			ret = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					off, 4096 * (1 + below(r, 64)));
			err = errno;
			close(fd);
			errno = err;
		}
		err = ret ? errno : 0;
		count_result(err, false);
		if (t->fat)
			es_add(&ok, EOPNOTSUPP);
		snprintf(what, sizeof(what), "punching a hole at %lld in %s",
			 (long long)off, t->path);
	}
	inc(&sh->checked[ck_fileops]);
	if (!es_has(&ok, err))
		unexpected(ck_fileops, &ok, err, what, w->index, index, false);
}

/* open(/dev/abiss) beside the fake daemon: only one opener, read-write. */
static void do_probe(struct worker *w, struct rng *r, uint64_t index)
{
	static const int modes[] = { O_RDONLY, O_WRONLY, O_RDWR };
	struct eset ok = { .ok = false };
	int mode = modes[below(r, 3)], fd, err;
	char what[60];

	fd = open(DEV_ABISS, mode | O_CLOEXEC);
	err = fd < 0 ? errno : 0;
	count_result(err, false);
	if (fd >= 0)
		close(fd);
	es_add(&ok, EINVAL);
	if (mode == O_RDWR) {
		es_add(&ok, EBUSY);
		es_add(&ok, 0);	/* in the moment the fake daemon has it closed */
	}
	inc(&sh->checked[ck_fileops]);
	snprintf(what, sizeof(what), "open(" DEV_ABISS ", %#x)", mode);
	if (!es_has(&ok, err))
		unexpected(ck_fileops, &ok, err, what, w->index, index, false);
}

/* Per mille of the calls that are each operation. */
enum op {
	OP_IOCTL, OP_READ, OP_ODIRECT, OP_KILL, OP_REOPEN, OP_DUP, OP_FORK,
	OP_CHANGE, OP_PROBE, OP_TWO, NR_OPS
};
static const unsigned int op_permille[NR_OPS] = {
	[OP_IOCTL] = 660, [OP_READ] = 120, [OP_ODIRECT] = 10, [OP_KILL] = 15,
	[OP_REOPEN] = 50, [OP_DUP] = 30, [OP_FORK] = 15, [OP_CHANGE] = 15,
	[OP_PROBE] = 5, [OP_TWO] = 80,
};

/* Toggle O_DIRECT on an open file: START checks it once, reads each time. */
static void do_odirect(struct worker *w, const struct use *u, uint64_t index)
{
	int fl, err;

	__atomic_add_fetch(&odirect_flips, 1, __ATOMIC_SEQ_CST);
	fl = fcntl(u->fd, F_GETFL);
	err = fl < 0 || fcntl(u->fd, F_SETFL, fl ^ O_DIRECT) ? errno : 0;
	count_result(err, false);
	inc(&sh->checked[ck_fileops]);
	if (err && err != EINVAL)
		fail(ck_fileops, "fcntl(F_SETFL, O_DIRECT toggled) on %s: %s; seed %llu thread %u call %llu",
		     targets[u->target].path, ename(err), (unsigned long long)opt_seed,
		     w->index, (unsigned long long)index);
	__atomic_add_fetch(&odirect_flips, 1, __ATOMIC_SEQ_CST);
}

/* dup() into another slot: two descriptors, one open file. */
static void do_dup(struct rng *r, const struct use *u)
{
	struct slot *s = &slots[below(r, NSLOTS)];

	if (s - slots == u->slot || pthread_rwlock_trywrlock(&s->lock))
		return;
	slot_close(s);
	s->fd = fcntl(u->fd, F_DUPFD_CLOEXEC, 0);
	count_result(s->fd < 0 ? errno : 0, false);
	s->target = u->target;
	s->oflags = u->oflags;
	/* If the source was dup2()ed over meanwhile, this may be /dev/null. */
	s->dead = slot_changed(u);
	pthread_rwlock_unlock(&s->lock);
}

static void worker_call(struct worker *w, uint64_t index)
{
	unsigned int p, op;
	struct rng r;
	struct use u, v;
	struct slot *s;

	rng_init(&r, w->index, index);
	p = below(&r, 1000);
	for (op = 0; op < NR_OPS - 1 && p >= op_permille[op]; op++)
		p -= op_permille[op];
	switch (op) {
	case OP_FORK:
		do_fork(w, &r, index);
		return;
	case OP_CHANGE:
		do_file_change(w, &r, index);
		return;
	case OP_PROBE:
		do_probe(w, &r, index);
		return;
	case OP_REOPEN:
		break;
	default:
		if (!slot_use(&r, &u))
			break;
		switch (op) {
		case OP_IOCTL:
			do_ioctl(w, &r, &u, index, false);
			break;
		case OP_READ:
			do_read(w, &r, &u, index, false);
			break;
		case OP_ODIRECT:
			do_odirect(w, &u, index);
			break;
		case OP_KILL:
			/* Close under the other threads' feet. */
			slot_kill(&u);
			break;
		case OP_DUP:
			do_dup(&r, &u);
			break;
		default:
			/* Two calls from one thread, the second on any descriptor. */
			do_ioctl(w, &r, &u, index, false);
			if (slot_use(&r, &v)) {
				do_ioctl(w, &r, &v, index, false);
				slot_done(&v);
			}
		}
		slot_done(&u);
		return;
	}
	/*
	 * Close a slot and open another target in it: a dead or empty one if
	 * one of a few looked at is.
	 */
	s = &slots[below(&r, NSLOTS)];
	for (p = 0; p < 4; p++) {
		struct slot *t = &slots[below(&r, NSLOTS)];

		if (t->fd < 0 || __atomic_load_n(&t->dead, __ATOMIC_RELAXED))
			s = t;
	}
	if (pthread_rwlock_trywrlock(&s->lock))
		return;
	slot_close(s);
	if (chance(&r, 900))
		slot_open(&r, s, w->index, index);
	pthread_rwlock_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t i;

	for (i = 0; i < w->ncalls; i++)
		worker_call(w, i);
	reap_kids(w, true);
	return NULL;
}

/* --- setup and the end ---------------------------------------------------- */

/* The file system type of the mount @path is on, from /proc/self/mounts. */
static void fs_type_of(const char *path, char *type, size_t len)
{
	char dev[256], mnt[512], fst[64], best[512] = "";
	FILE *f = fopen("/proc/self/mounts", "r");

	snprintf(type, len, "?");
	if (!f)
		return;
	while (fscanf(f, "%255s %511s %63s %*[^\n]", dev, mnt, fst) == 3) {
		size_t n = strlen(mnt);

		if (strncmp(path, mnt, n) == 0 &&
		    (path[n] == '/' || path[n] == 0 || n == 1) &&
		    n >= strlen(best)) {
			snprintf(best, sizeof(best), "%s", mnt);
			snprintf(type, len, "%s", fst);
		}
	}
	fclose(f);
}

static int write_file(const char *path, off_t size, off_t data_at, off_t data_len,
		      bool sync)
{
	static char buf[65536];
	off_t done;
	int fd, i;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, size))
		goto fail;
	for (done = 0; done < data_len; done += sizeof(buf)) {
		for (i = 0; i < (int)sizeof(buf); i++)
			buf[i] = (char)(done / sizeof(buf) * 31 + i);
		if (pwrite(fd, buf, data_len - done < (off_t)sizeof(buf) ?
			   data_len - done : (off_t)sizeof(buf), data_at + done) < 0)
			goto fail;
	}
	if (sync && fsync(fd))
		goto fail;
	return close(fd);
fail:
	close(fd);
	return -1;
}

static int add_target(const char *path, enum tkind kind, bool abiss, const char *fs,
		      int check)
{
	struct target *t = &targets[nr_targets];
	struct stat st;

	if (nr_targets == MAX_TARGETS || stat(path, &st))
		return -1;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->kind = kind;
	t->abiss = abiss;
	t->ext4 = strcmp(fs, "ext4") == 0 || strcmp(fs, "ext3") == 0;
	t->fat = strcmp(fs, "vfat") == 0 || strcmp(fs, "msdos") == 0;
	t->size = st.st_size;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	t->check = check;
	nr_targets++;
	return 0;
}

/* The files each folder gets: name, size, data offset, data length, fsync. */
static const struct {
	const char *name;
	off_t size, at, len;
	bool sync;
} files[] = {
	{ "fzbig", 4 << 20, 0, 4 << 20, true },
	{ "fzmid", (1 << 20) + 123, 0, (1 << 20) + 123, false },
	{ "fzsmall", 5000, 0, 5000, false },
	{ "fzempty", 0, 0, 0, false },
	{ "fzsparse", 4 << 20, 1 << 20, 65536, true },
};

static void setup_dir(const char *dir, int *devcheck)
{
	char path[300], fs[64];
	struct statfs sfs;
	bool abiss;
	unsigned int i;
	int ck;

	fs_type_of(dir, fs, sizeof(fs));
	if (statfs(dir, &sfs)) {
		fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, dir,
			strerror(errno));
		exit(EXIT_FAIL);
	}
	abiss = sfs.f_type == MSDOS_SUPER_MAGIC || sfs.f_type == EXT4_SUPER_MAGIC;
	ck = add_check("only documented errnos on files on %s (%s)", fs, dir);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if (write_file(path, files[i].size, files[i].at, files[i].len, files[i].sync) ||
		    add_target(path, T_FILE, abiss, fs, ck)) {
			fprintf(stderr, "%s: cannot make %s: %s\n",
				program_invocation_short_name, path, strerror(errno));
			exit(EXIT_FAIL);
		}
	}
	/* A device node on it, where it can have one (not on FAT). */
	snprintf(path, sizeof(path), "%s/fznull", dir);
	unlink(path);
	if (!mknod(path, S_IFCHR | 0666, makedev(1, 3))) {
		if (*devcheck < 0)
			*devcheck = add_check("only documented errnos on device nodes");
		add_target(path, T_DEV, false, fs, *devcheck);
	}
}

static void setup(void)
{
	int devcheck = -1, dirchecks[MAX_DIRS];
	char fs[64];
	unsigned int d;
	struct statfs sfs;

	/* The regular files first: targets[0..nr_files). */
	for (d = 0; d < nr_dirs; d++)
		setup_dir(opt_dirs[d], &devcheck);
	/* setup_dir() added device nodes among them: put the files first. */
	for (d = 0; d < (unsigned int)nr_targets; d++) {
		if (targets[d].kind == T_FILE) {
			struct target t = targets[d];

			targets[d] = targets[nr_files];
			targets[nr_files++] = t;
		}
	}
	for (d = 0; d < nr_dirs; d++) {
		fs_type_of(opt_dirs[d], fs, sizeof(fs));
		statfs(opt_dirs[d], &sfs);
		dirchecks[d] = add_check("only documented errnos on the directory %s (%s)",
					 opt_dirs[d], fs);
		add_target(opt_dirs[d], T_DIR, sfs.f_type == MSDOS_SUPER_MAGIC ||
			   sfs.f_type == EXT4_SUPER_MAGIC, fs, dirchecks[d]);
	}
	if (devcheck < 0)
		devcheck = add_check("only documented errnos on device nodes");
	add_target("/dev/null", T_DEV, false, "devtmpfs", devcheck);
	add_target("/dev/zero", T_DEV, false, "devtmpfs", devcheck);
	ck_daemon = add_check("the fake daemon's calls on " DEV_ABISS
			      " (garbage too) got only documented errnos");
	ck_records = add_check("the daemon's records are well formed and consistent");
	ck_ends = add_check("every stream the last daemon admitted or saw live got its END");
	ck_kids = add_check("forked children exited cleanly");
	ck_fileops = add_check("open, read, lseek, fcntl, truncate, fallocate, "
			       "a second open of " DEV_ABISS " went as documented");
	ck_streams = add_check("every stream started was stopped or closed");
}

/* Streams debugfs lists (its lines but the header), or -1. */
static int streams_listed(void)
{
	char line[512];
	FILE *f = fopen(STREAMS_FILE, "r");
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	usage_start("[options]", NULL);
	fputs("\nFuzz the ABISS ioctls and " DEV_ABISS ": random commands, sizes and\n"
	      "structures on files made in each --dir, on each --dir and on device\n"
	      "nodes, from several threads, with a fake abissd; print TAP.  Every\n"
	      "errno must be one the documentation gives.  Run as root, without abissd.\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -s, --seed <n>        seed of the random calls (default 1)\n", out);
	fputs(" -n, --calls <n>       calls in all, shared by the threads (default 20000)\n", out);
	fputs(" -t, --threads <n>     worker threads (default 4, at most 32)\n", out);
	fputs(" -d, --dir <dir>       make test files in <dir> (repeatable, at most 8)\n", out);
	fputs(" -v, --verbose         print every ioctl and its result\n", out);
	usage_help_version(23);
	fputs("\nA failure names the seed, thread and call index; the same seed\n"
	      "replays each thread's calls, and with --threads 1 the whole run.\n", out);
	fputs("\nExit status: 0 every check passed, 1 a check failed, 2 bad usage.\n", out);
	exit(EXIT_OK);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed",    required_argument, NULL, 's' },
		{ "calls",   required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "dir",     required_argument, NULL, 'd' },
		{ "verbose", no_argument,       NULL, 'v' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct worker workers[MAX_THREADS];
	uint64_t v, t0, elapsed, left;
	unsigned long i, total, missing = 0;
	struct rng r;
	int c, n, failed = 0;
	char counts[2048];
	size_t len;

	atexit(close_stdout);
	while ((c = getopt_long(argc, argv, "s:n:t:d:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_u64(optarg, &opt_seed))
				usage_error("bad seed: '%s'", optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &opt_calls))
				usage_error("bad number of calls: '%s'", optarg);
			break;
		case 't':
			if (parse_u64(optarg, &v) || v < 1 || v > MAX_THREADS)
				usage_error("bad number of threads: '%s'", optarg);
			opt_threads = v;
			break;
		case 'd':
			if (nr_dirs == MAX_DIRS)
				usage_error("too many folders: '%s'", optarg);
			opt_dirs[nr_dirs++] = optarg;
			break;
		case 'v':
			opt_verbose = true;
			break;
		default:
			other_option(c, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument: '%s'", argv[optind]);

	page = sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	dmn.ids = calloc(LIVE_IDS, sizeof(*dmn.ids));
	dmn.buf = malloc(MSG_BUF);
	spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (sh == MAP_FAILED || !dmn.ids || !dmn.buf || spare_fd < 0 ||
	    make_arena(&dmn.w)) {
		perror(program_invocation_short_name);
		return EXIT_FAIL;
	}
	dmn.fd = -1;
	setup();
	printf("1..%d\n", nr_checks);
	printf("# seed %llu, %llu calls, %u threads; replay with: abiss-fuzz --seed %llu --calls %llu --threads %u",
	       (unsigned long long)opt_seed, (unsigned long long)opt_calls, opt_threads,
	       (unsigned long long)opt_seed, (unsigned long long)opt_calls, opt_threads);
	for (i = 0; i < nr_dirs; i++)
		printf(" --dir %s", opt_dirs[i]);
	printf("\n");
	fflush(stdout);

	rng_init(&r, opt_threads + 1, 0);
	for (i = 0; i < NSLOTS; i++) {
		pthread_rwlock_init(&slots[i].lock, NULL);
		slots[i].fd = -1;
		slot_open(&r, &slots[i], opt_threads + 1, i);
	}
	t0 = now_ns();
	if (pthread_create(&dmn.tid, NULL, daemon_main, NULL)) {
		perror("pthread_create");
		return EXIT_FAIL;
	}
	/* Let the daemon open /dev/abiss first, or STARTs only get ESRCH. */
	for (n = 0; n < 1000 && dmn.session == 0 && !dmn.final_session; n++)
		usleep(1000);
	left = opt_calls;
	for (i = 0; i < opt_threads; i++) {
		struct worker *w = &workers[i];

		memset(w, 0, sizeof(*w));
		w->index = i;
		w->ncalls = left / (opt_threads - i);
		left -= w->ncalls;
		if (make_arena(w) || pthread_create(&w->tid, NULL, worker_main, w)) {
			perror(program_invocation_short_name);
			return EXIT_FAIL;
		}
	}
	for (i = 0; i < opt_threads; i++)
		pthread_join(workers[i].tid, NULL);
	elapsed = now_ns() - t0;

	/* The end: the daemon stays, every descriptor goes. */
	__atomic_store_n(&dmn.state, D_FINAL, __ATOMIC_SEQ_CST);
	for (n = 0; n < 5000 && !__atomic_load_n(&dmn.final_session, __ATOMIC_SEQ_CST); n++)
		usleep(1000);
	for (i = 0; i < NSLOTS; i++)
		slot_close(&slots[i]);
	for (n = 0; n < 100 && streams_listed() > 0; n++)
		usleep(100000);
	inc(&sh->checked[ck_streams]);
	n = streams_listed();
	if (n != 0) {
		fail(ck_streams, "%s lists %d streams after every descriptor was closed%s",
		     STREAMS_FILE, n, n < 0 ? " (cannot read it)" : "");
		if (n > 0) {
			FILE *f = fopen(STREAMS_FILE, "r");
			char line[512];

			while (f && fgets(line, sizeof(line), f))
				tap_diag("  %s", strtok(line, "\n"));
			if (f)
				fclose(f);
		}
	}
	usleep(200000);
	__atomic_store_n(&dmn.state, D_STOP, __ATOMIC_SEQ_CST);
	pthread_join(dmn.tid, NULL);
	if (dmn.fd >= 0)
		close(dmn.fd);

	/* Every stream the final session admitted, or was told of, ended. */
	for (i = 0; i < LIVE_IDS; i++) {
		struct idrec *e = &dmn.ids[i];

		if (!e->id || (e->flags & ID_END))
			continue;
		inc(&sh->checked[ck_ends]);
		if (((e->flags & ID_ACCEPTED) && e->acc_session == dmn.final_session) ||
		    ((e->flags & ID_LIVE) && e->live_session == dmn.final_session)) {
			missing++;
			if (missing <= 5)
				fail(ck_ends, "no END for stream %llu (flags %#x)",
				     (unsigned long long)e->id, e->flags);
			else
				inc(&sh->failed[ck_ends]);
		}
	}

	for (c = 0; c < nr_checks; c++) {
		bool ok = !sh->failed[c];

		if (!ok)
			failed = 1;
		printf("%sok %d - %s\n", ok ? "" : "not ", c + 1, check_names[c]);
		if (!ok)
			printf("# %lu of %lu calls or records failed it\n", sh->failed[c],
			       sh->checked[c]);
	}
	total = sh->calls;
	len = 0;
	for (c = 1; c < NERR; c++)
		if (sh->errs[c])
			len += snprintf(counts + len, sizeof(counts) - len, " %s %lu",
					ename(c), sh->errs[c]);
	printf("# calls %lu in %.1f s (%.0f/s), daemon calls %lu, ok %lu, errno counts:%s\n",
	       total, elapsed / 1e9, total / (elapsed / 1e9), sh->dcalls, sh->errs[0], counts);
	printf("# daemon: %u sessions, %lu requests (%lu accepted, %lu denied, %lu left to time out), "
	       "%lu ends, %lu live; %lu ends of streams admitted before their session and not "
	       "announced LIVE\n", dmn.session, dmn.requests, dmn.accepts, dmn.denies,
	       dmn.drops, dmn.ends, dmn.lives, dmn.unannounced);
	printf("# streams: %lu STARTs succeeded; STATUS found %lu active and %lu ended; "
	       "%lu children ran without CAP_IPC_LOCK\n", sh->started, sh->active,
	       sh->ended, sh->limited);
	if (sh->diags > MAX_DIAGS)
		printf("# (%d more failures not shown)\n", sh->diags - MAX_DIAGS);
	return failed ? EXIT_FAIL : EXIT_OK;
}
