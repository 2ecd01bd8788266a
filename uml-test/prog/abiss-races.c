// SPDX-License-Identifier: GPL-2.0
/*
 * abiss-races - race loops on ABISS stream start and teardown.
 *
 * Runs in the uml-test guest (kselftest harness, TAP output), as root, with
 * no abissd running: each test plays abissd itself with a thread on
 * /dev/abiss that keeps its accounting of admitted streams by id.  The test
 * files live in $ABISS_TEST_DIR (a FAT, VFAT or ext3 mount).
 *
 * One test per race, each run ABISS_RACE_ROUNDS times (default 25): in
 * every round two or more threads or processes race, each after a random
 * delay drawn from a generator seeded by ABISS_RACE_SEED (printed; the
 * default comes from the clock), so the interleavings vary from round to
 * round.  The races:
 *
 *   truncate   ABISS_IOC_START vs ftruncate(fd, 0) from another thread
 *   stop       START vs ABISS_IOC_STOP on the same descriptor
 *   close      START vs close() of its descriptor in another thread
 *   umount     START vs umount2(MNT_DETACH), and vs a plain umount2()
 *              (EBUSY), of a bind mount the file was opened through
 *   kill       a stream's reader, a child, killed with SIGKILL at a random
 *              point (before, during START, reading, during STOP)
 *   restart    the daemon closes and reopens /dev/abiss while threads
 *              start and stop streams
 *   scheduler  a stream read while another thread switches the disk's I/O
 *              scheduler among none, mq-deadline, bfq, kyber and abiss
 *
 * Only outcomes are asserted, never times: START returns 0 or an errno
 * that Documentation/filesystems/abiss.rst gives for that race; every
 * stream ends; after each round the daemon's accounting (accepted or
 * announced LIVE in its session, minus ended) equals the streams debugfs
 * lists as active, no END comes for an id the session did not admit or
 * twice, no ended stream holds a page; at the end of each round and test
 * debugfs lists no stream.  Each test prints its outcomes: what START
 * returned, how the streams ended, what the daemon saw.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/abiss.h>

#include "pattern.h"
#include "tap-diag.h"
#include "kselftest_harness.h"

#define FILE_SIZE	(1 << 20)
#define BUFFER		(256 << 10)
#define READ_UNIT	(64 << 10)
#define RATE		4000000
#define STREAMS_FILE	"/sys/kernel/debug/abiss/streams"
#define MNT		"/tmp/abiss-race-mnt"
#define SETTLE_MS	5000		/* the kernel tells in its own time: a bound */
#define MAX_FAILS	5		/* failures told per test; then it stops */
#define NERR		134		/* errno tallies; the last counts the rest */
#define NIDS		(1 << 17)	/* ids the fake daemon can track */
#define RESTART_WORKERS	3
#define RESTART_STREAMS	3		/* streams a worker starts per round */

/* --- seeds and random delays --------------------------------------------- */

static uint64_t base_seed;

__attribute__((constructor)) static void seed_init(void)
{
	const char *s = getenv("ABISS_RACE_SEED");
	struct timespec t;

	if (s && *s) {
		base_seed = strtoull(s, NULL, 0);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &t);
	base_seed = (uint64_t)t.tv_sec * 1000003 + t.tv_nsec / 1000;
}

static int nr_rounds(void)
{
	const char *s = getenv("ABISS_RACE_ROUNDS");
	long n = s ? strtol(s, NULL, 10) : 0;

	return n > 0 && n < 10000000 ? n : 25;
}

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* A generator of its own for a thread, drawn from @r. */
static struct rng rng_fork(struct rng *r)
{
	struct rng c = { .s = rnd(r) };

	return c;
}

/*
 * Wait a random while, up to about @max_us: not at all, a yield, a busy
 * spin or a sleep, so that a racing thread lands anywhere from before the
 * other's system call to well after it.  Sleeps are log-uniform: short
 * ones are as likely as long ones.
 */
static void jitter(struct rng *r, unsigned int max_us)
{
	volatile unsigned long spin;
	unsigned long n;
	unsigned int us;

	switch (below(r, 5)) {
	case 0:
		return;
	case 1:
		sched_yield();
		return;
	case 2:
		n = below(r, (uint64_t)max_us * 20 + 1);
		for (spin = 0; spin < n; spin++)
			;
		return;
	default:
		us = 1u << below(r, 32 - __builtin_clz(max_us | 1));
		usleep(below(r, us) + 1);
	}
}

/* --- output and tallies -------------------------------------------------- */

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "E?";
}

struct tally {
	unsigned long n[NERR];
};

static void tally_add(struct tally *t, int e)
{
	__atomic_add_fetch(&t->n[e >= 0 && e < NERR ? e : NERR - 1], 1, __ATOMIC_RELAXED);
}

static const char *tally_str(const struct tally *t, char *buf, size_t len)
{
	size_t n = 0;
	int e;

	buf[0] = 0;
	for (e = 0; e < NERR && n < len; e++)
		if (t->n[e])
			n += snprintf(buf + n, len - n, "%s%s %lu", n ? ", " : "",
				      e == NERR - 1 ? "other" : ename(e), t->n[e]);
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

/* The state of one test: its metadata, round and seed, for failures. */
struct race {
	struct __test_metadata *md;
	const char *name;
	int round, rounds;
	unsigned int fails;
	struct rng rng;
	uint64_t t0;
};

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ULL + t.tv_nsec / 1000000;
}

/* A failed check: the test fails; the first MAX_FAILS are told. */
static void race_fail(struct race *r, const char *fmt, ...)
{
	char msg[700];
	va_list ap;

	if (!r->fails) {
		/* The harness's own way to fail a test, in any of its versions. */
		struct __test_metadata *_metadata = r->md;

		EXPECT_TRUE(0) TH_LOG("%s: a check failed", r->name);
	}
	if (++r->fails > MAX_FAILS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tap_diag("FAIL %s round %d (ABISS_RACE_SEED=%llu): %s", r->name, r->round,
	     (unsigned long long)base_seed, msg);
}

static void race_init(struct race *r, struct __test_metadata *md, const char *name)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;

	memset(r, 0, sizeof(*r));
	r->md = md;
	r->name = name;
	r->rounds = nr_rounds();
	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	r->rng.s = base_seed ^ h;
	r->t0 = now_ms();
	tap_diag("%s: %d rounds, ABISS_RACE_SEED=%llu", name, r->rounds,
	     (unsigned long long)base_seed);
}

/* Go on with the next round? Not after MAX_FAILS failures. */
static int race_next(struct race *r)
{
	if (r->fails >= MAX_FAILS) {
		tap_diag("%s: stopped after %u failures, in round %d", r->name,
		     r->fails, r->round);
		return 0;
	}
	return ++r->round < r->rounds;
}

/* --- test files ---------------------------------------------------------- */

static const char *test_dir(void)
{
	const char *d = getenv("ABISS_TEST_DIR");

	return d ? d : "/tmp";
}

#define PATTERN_SEED	0xab155eedULL

/* Write the test pattern into @fd's file, FILE_SIZE bytes from 0 on. */
static int fill_file(int fd)
{
	static char buf[READ_UNIT];
	off_t off;

	for (off = 0; off < FILE_SIZE; off += sizeof(buf)) {
		pattern_fill(buf, off, sizeof(buf), PATTERN_SEED);
		if (pwrite(fd, buf, sizeof(buf), off) != sizeof(buf))
			return -1;
	}
	return fsync(fd);
}

static int make_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int err;

	if (fd < 0)
		return -1;
	err = fill_file(fd);
	close(fd);
	return err;
}

/* Read @fd from its position to the end; 0 if every byte is as written. */
static int read_check(int fd, int (*stop)(void *), void *arg)
{
	static __thread char buf[READ_UNIT];
	off_t off = lseek(fd, 0, SEEK_CUR);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (pattern_check(buf, off, n, PATTERN_SEED) >= 0)
			return 1;
		off += n;
		if (stop && stop(arg))
			break;
	}
	return n < 0 ? -1 : 0;
}

static struct abiss_start start_args(void)
{
	struct abiss_start a = {
		.size = sizeof(a),
		.rate = RATE,
		.buffer = BUFFER,
		.read_unit = READ_UNIT,
	};
	return a;
}

static int start(int fd)
{
	struct abiss_start a = start_args();

	return ioctl(fd, ABISS_IOC_START, &a) ? errno : 0;
}

static int stop(int fd)
{
	return ioctl(fd, ABISS_IOC_STOP) ? errno : 0;
}

/* ABISS_IOC_STATUS: 0, or the errno (ENODATA: no stream). */
static int status(int fd, struct abiss_status *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, ABISS_IOC_STATUS, st) ? errno : 0;
}

/* --- the fake daemon ----------------------------------------------------- */

enum {
	ID_REQ = 1,
	ID_ACCEPTED = 2,	/* accepted by session @session */
	ID_DENIED = 4,
	ID_LOST = 8,		/* the reply found no request (START gone) */
	ID_LIVE = 16,		/* announced LIVE to session @session */
	ID_END = 32,
};

struct idrec {
	uint64_t id;
	unsigned int flags;
	unsigned int session;
};

/*
 * A stand-in for abissd: accepts every request (denies one in
 * 1000 / @deny_permille with ENOSPC), after a random delay of up to
 * @reply_us, and keeps the accounting of what it admitted, by id and
 * session.  With @churn set it closes and reopens /dev/abiss now and then
 * (a restart): a session starts from nothing and learns of running streams
 * from their LIVE records.  Anything the records should not say goes to
 * @bad.  Counters and @held are read by the test under @lock.
 */
struct daemon {
	pthread_t thread;
	pthread_mutex_t lock;
	int fd;
	volatile int stop;
	volatile int churn;
	unsigned int deny_permille;
	unsigned int reply_us;
	struct rng rng;
	unsigned int session;
	struct idrec *ids;
	long held;
	unsigned long requests, accepted, denied, lost, lives, ends, restarts, records;
	unsigned long reasons[8];
	unsigned long bad;
	char first_bad[400];
	char *buf;
};

static void daemon_bad(struct daemon *d, const char *fmt, ...)
{
	va_list ap;

	if (d->bad++)
		return;
	va_start(ap, fmt);
	vsnprintf(d->first_bad, sizeof(d->first_bad), fmt, ap);
	va_end(ap);
}

static struct idrec *id_get(struct daemon *d, uint64_t id)
{
	unsigned long h = id * 0x9e3779b97f4a7c15ULL >> 47, i;

	for (i = 0; i < NIDS; i++) {
		struct idrec *e = &d->ids[(h + i) & (NIDS - 1)];

		if (e->id == id || !e->id) {
			e->id = id;
			return e;
		}
	}
	return NULL;
}

/* Admitted in, or announced to, this session and not ended. */
static int counted(struct daemon *d, struct idrec *e)
{
	return (e->flags & (ID_ACCEPTED | ID_LIVE)) && !(e->flags & ID_END) &&
	       e->session == d->session;
}

static void daemon_request(struct daemon *d, struct idrec *e)
{
	struct abiss_reply r = {
		.size = sizeof(r), .id = e->id, .verdict = ABISS_VERDICT_ACCEPT,
	};
	int deny = below(&d->rng, 1000) < d->deny_permille;
	ssize_t n;

	if (e->flags)
		daemon_bad(d, "a second REQUEST for id %llu", (unsigned long long)e->id);
	e->flags |= ID_REQ;
	d->requests++;
	if (deny) {
		r.verdict = ABISS_VERDICT_DENY;
		r.error = ENOSPC;
	}
	if (d->reply_us && below(&d->rng, 2)) {
		pthread_mutex_unlock(&d->lock);
		jitter(&d->rng, d->reply_us);
		pthread_mutex_lock(&d->lock);
	}
	n = write(d->fd, &r, sizeof(r));
	if (n == sizeof(r) && deny) {
		e->flags |= ID_DENIED;
		d->denied++;
	} else if (n == sizeof(r)) {
		e->flags |= ID_ACCEPTED;
		e->session = d->session;
		d->accepted++;
		d->held++;
	} else if (n < 0 && errno == ENOENT) {
		/* Its START has gone (a fatal signal), or timed out. */
		e->flags |= ID_LOST;
		d->lost++;
	} else {
		daemon_bad(d, "reply to id %llu: write returned %zd (%s)",
			   (unsigned long long)e->id, n, ename(n < 0 ? errno : 0));
	}
}

static void daemon_record(struct daemon *d, const struct abiss_msg *m, ssize_t n)
{
	struct idrec *e;

	d->records++;
	if (n < (ssize_t)sizeof(*m) || m->size != n || !m->id) {
		daemon_bad(d, "a record of %zd bytes says size %u, id %llu", n,
			   n >= 8 ? m->size : 0, n >= 16 ? (unsigned long long)m->id : 0);
		return;
	}
	e = id_get(d, m->id);
	if (!e) {
		daemon_bad(d, "too many ids");
		return;
	}
	switch (m->type) {
	case ABISS_MSG_REQUEST:
		daemon_request(d, e);
		break;
	case ABISS_MSG_LIVE:
		d->lives++;
		if (!(e->flags & ID_ACCEPTED))
			daemon_bad(d, "LIVE for id %llu, which no session accepted (flags %#x)",
				   (unsigned long long)m->id, e->flags);
		else if (e->flags & ID_END)
			daemon_bad(d, "LIVE for id %llu, which had ended",
				   (unsigned long long)m->id);
		else if (counted(d, e))
			daemon_bad(d, "LIVE for id %llu, which session %u already %s",
				   (unsigned long long)m->id, d->session,
				   e->flags & ID_LIVE ? "had LIVE" : "accepted");
		e->flags |= ID_LIVE;
		e->session = d->session;
		d->held++;
		break;
	case ABISS_MSG_END:
		d->ends++;
		d->reasons[m->reason < 7 ? m->reason : 7]++;
		if (m->reason < ABISS_END_STOPPED || m->reason > ABISS_END_ADMIN)
			daemon_bad(d, "END for id %llu with reason %u",
				   (unsigned long long)m->id, m->reason);
		if (e->flags & ID_END)
			daemon_bad(d, "a second END for id %llu", (unsigned long long)m->id);
		else if (!counted(d, e))
			daemon_bad(d, "END (reason %u) for id %llu, which session %u neither "
				   "accepted nor had LIVE for (flags %#x, session %u)",
				   m->reason, (unsigned long long)m->id, d->session,
				   e->flags, e->session);
		else
			d->held--;
		e->flags |= ID_END;
		break;
	default:
		daemon_bad(d, "a record of type %u", m->type);
	}
}

static int daemon_open(struct daemon *d)
{
	int i;

	for (i = 0; i < 1000; i++) {
		d->fd = open("/dev/abiss", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (d->fd >= 0 || errno != EBUSY)
			break;
		usleep(1000);
	}
	if (d->fd >= 0)
		d->session++;
	return d->fd;
}

/* A restart: close, a random pause, open again; a new session. */
static void daemon_restart(struct daemon *d)
{
	close(d->fd);
	d->fd = -1;
	d->held = 0;
	d->restarts++;
	pthread_mutex_unlock(&d->lock);
	jitter(&d->rng, 2000);
	pthread_mutex_lock(&d->lock);
	if (daemon_open(d) < 0)
		daemon_bad(d, "cannot reopen /dev/abiss: %s", ename(errno));
}

static void *daemon_main(void *arg)
{
	struct daemon *d = arg;
	struct pollfd p = { .events = POLLIN };
	ssize_t n;

	pthread_mutex_lock(&d->lock);
	while (!d->stop && d->fd >= 0) {
		if (d->churn && below(&d->rng, 100) < 10)
			daemon_restart(d);
		if (d->fd < 0)
			break;
		p.fd = d->fd;
		pthread_mutex_unlock(&d->lock);
		n = poll(&p, 1, d->churn ? 1 : 5);
		pthread_mutex_lock(&d->lock);
		if (n <= 0)
			continue;
		n = read(d->fd, d->buf, ABISS_MSG_MAX_SIZE);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n < 0)
			daemon_bad(d, "read of /dev/abiss: %s", ename(errno));
		else
			daemon_record(d, (struct abiss_msg *)d->buf, n);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static int daemon_start(struct daemon *d, struct rng *r)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
	d->rng = rng_fork(r);
	d->ids = calloc(NIDS, sizeof(*d->ids));
	d->buf = malloc(ABISS_MSG_MAX_SIZE);
	if (!d->ids || !d->buf || daemon_open(d) < 0)
		return -1;
	return pthread_create(&d->thread, NULL, daemon_main, d);
}

static void daemon_stop(struct daemon *d)
{
	d->stop = 1;
	pthread_join(d->thread, NULL);
	if (d->fd >= 0)
		close(d->fd);
	free(d->ids);
	free(d->buf);
}

static long daemon_held(struct daemon *d)
{
	long held;

	pthread_mutex_lock(&d->lock);
	held = d->held;
	pthread_mutex_unlock(&d->lock);
	return held;
}

static void daemon_summary(struct daemon *d, const char *name)
{
	pthread_mutex_lock(&d->lock);
	tap_diag("%s: daemon: %u sessions, %lu requests (%lu accepted, %lu denied, %lu "
	     "gone before the reply), %lu LIVE, %lu END (stopped %lu, closed %lu, "
	     "truncated %lu, unmounted %lu, error %lu, admin %lu)", name, d->session,
	     d->requests, d->accepted, d->denied, d->lost, d->lives, d->ends,
	     d->reasons[1], d->reasons[2], d->reasons[3], d->reasons[4],
	     d->reasons[5], d->reasons[6]);
	pthread_mutex_unlock(&d->lock);
}

/* --- the kernel's side: debugfs ------------------------------------------ */

struct kstate {
	int listed, active, admitting, ended;
	long held, ended_held;
};

static int kstate_read(struct kstate *k)
{
	char line[512], state[32];
	unsigned long long id;
	long long held;
	FILE *f = fopen(STREAMS_FILE, "r");
	int first = 1;

	memset(k, 0, sizeof(*k));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (first) {
			first = 0;
			continue;
		}
		if (sscanf(line, "%llu %*d %*u:%*u %*u %*u %*u %*d %lld %*d %*d %*d %*u %31s",
			   &id, &held, state) != 3) {
			fclose(f);
			return -1;
		}
		k->listed++;
		k->held += held;
		if (!strcmp(state, "active")) {
			k->active++;
		} else if (!strcmp(state, "admitting")) {
			k->admitting++;
		} else {
			k->ended++;
			k->ended_held += held;
		}
	}
	fclose(f);
	return 0;
}

static void kstate_dump(void)
{
	char line[512];
	FILE *f = fopen(STREAMS_FILE, "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f) && n++ < 12)
		tap_diag("  %s", strtok(line, "\n"));
	if (f)
		fclose(f);
}

/*
 * After a round's racing is done (no START in flight): wait until the
 * daemon's accounting equals the streams the kernel keeps active, none of
 * them still admitting; with @empty, until there are none at all.  An
 * ended stream must hold no page at any moment.  The kernel and the daemon
 * get there in their own time: SETTLE_MS is a bound for when they never do.
 */
static int settle(struct race *r, struct daemon *d, int empty)
{
	struct kstate k;
	long held = 0;
	int i, readable = 0;

	for (i = 0; i < SETTLE_MS / 2; i++) {
		readable = !kstate_read(&k);
		if (readable && k.ended_held) {
			race_fail(r, "an ended stream holds %ld pages", k.ended_held);
			kstate_dump();
			return 0;
		}
		held = daemon_held(d);
		if (readable && !k.admitting && k.active == held &&
		    (!empty || (!k.listed && !held)))
			return 1;
		usleep(2000);
	}
	if (!readable) {
		race_fail(r, "cannot read %s", STREAMS_FILE);
		return 0;
	}
	race_fail(r, "%s: debugfs lists %d streams (%d active, %d admitting, %d ended, "
		  "%ld pages held), the daemon counts %ld admitted and running",
		  empty ? "after every close" : "the racing done",
		  k.listed, k.active, k.admitting, k.ended, k.held, held);
	kstate_dump();
	return 0;
}

/* The daemon saw nothing amiss. */
static void daemon_check(struct race *r, struct daemon *d)
{
	pthread_mutex_lock(&d->lock);
	if (d->bad) {
		race_fail(r, "the daemon: %s (%lu such)", d->first_bad, d->bad);
		d->bad = 0;
	}
	pthread_mutex_unlock(&d->lock);
}

/* A round's checks: accounting now, and nothing left after the closes. */
static void round_end_check(struct race *r, struct daemon *d, int empty)
{
	settle(r, d, empty);
	daemon_check(r, d);
}

static void check_errno(struct race *r, const char *what, int err, const int *ok, int nok)
{
	char list[200];
	int i, n = 0;

	for (i = 0; i < nok; i++)
		if (err == ok[i])
			return;
	for (i = 0; i < nok; i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s", i ? " " : "", ename(ok[i]));
	race_fail(r, "%s returned %s (allowed: %s)", what, ename(err), list);
}

#define CHECK_ERRNO(r, what, err, ...) do { \
	static const int _ok[] = { __VA_ARGS__ }; \
	check_errno(r, what, err, _ok, sizeof(_ok) / sizeof(_ok[0])); \
} while (0)

/* The end of a test: nothing left, every page let go; the outcomes told. */
static void race_finish(struct race *r, struct daemon *d, const char *outcomes)
{
	struct kstate k;

	r->round = r->rounds;
	settle(r, d, 1);
	usleep(20000);	/* a late record would show now */
	daemon_check(r, d);
	if (kstate_read(&k) || k.listed || k.held)
		race_fail(r, "at the end debugfs lists %d streams holding %ld pages",
			  k.listed, k.held);
	tap_diag("%s: %d rounds in %.1f s; %s", r->name, r->rounds,
	     (now_ms() - r->t0) / 1000.0, outcomes);
	daemon_summary(d, r->name);
}

/* --- racing threads ------------------------------------------------------ */

/*
 * A thread that runs @fn after a random delay, its result in @err.  With
 * @after, the delay starts when that racer is about to make its call
 * (@ready), so that this one lands anywhere in the other's call; without,
 * it may as well come first.
 */
struct racer {
	pthread_t thread;
	struct rng rng;
	unsigned int max_us;
	int (*fn)(struct racer *);
	struct racer *after;
	volatile int ready;
	int fd;
	int err;
	void *arg;
};

static void *racer_main(void *arg)
{
	struct racer *t = arg;
	uint64_t t0 = now_ms();

	while (t->after && !t->after->ready && now_ms() - t0 < SETTLE_MS)
		sched_yield();
	jitter(&t->rng, t->max_us);
	t->ready = 1;
	t->err = t->fn(t);
	return NULL;
}

static int racer_go(struct racer *t, struct racer *after, struct rng *r,
		    unsigned int max_us, int (*fn)(struct racer *), int fd, void *arg)
{
	t->rng = rng_fork(r);
	/* Three rounds in four, the second racer waits for the first. */
	t->after = after && below(r, 4) ? after : NULL;
	t->max_us = max_us;
	t->fn = fn;
	t->fd = fd;
	t->arg = arg;
	t->err = -1;
	t->ready = 0;
	return pthread_create(&t->thread, NULL, racer_main, t);
}

static int do_start(struct racer *t)
{
	return start(t->fd);
}

FIXTURE(race) {
	struct race r;
	struct daemon d;
	char path[512];
	int made;
};

FIXTURE_SETUP(race)
{
	snprintf(self->path, sizeof(self->path), "%s/race-%s.dat", test_dir(),
		 _metadata->name);
	race_init(&self->r, _metadata, _metadata->name);
	ASSERT_EQ(0, make_file(self->path));
	self->made = 1;
	ASSERT_EQ(0, daemon_start(&self->d, &self->r.rng));
}

FIXTURE_TEARDOWN(race)
{
	daemon_stop(&self->d);
	if (self->made)
		unlink(self->path);
}

/*
 * START vs a truncate to zero from another thread: START succeeds (the
 * stream may then be ended, TRUNCATED, or run on the empty file) or fails
 * with ECANCELED (ended before it was active).  Either way no page is held
 * past the new end, and the daemon gets the reservation back.
 */
static int do_truncate(struct racer *t)
{
	return ftruncate(t->fd, 0) ? errno : 0;
}

TEST_F_TIMEOUT(race, truncate, 600)
{
	struct race *r = &self->r;
	unsigned long active = 0, truncated = 0;
	struct tally starts = { 0 };
	char s1[300], out[700];
	struct abiss_status st;
	int wfd = open(self->path, O_RDWR);

	ASSERT_LE(0, wfd);
	self->d.reply_us = 2000;
	do {
		struct racer a, b;
		int fd = open(self->path, O_RDONLY), err;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, racer_go(&a, NULL, &r->rng, 500, do_start, fd, NULL));
		ASSERT_EQ(0, racer_go(&b, &a, &r->rng, 8000, do_truncate, wfd, NULL));
		pthread_join(a.thread, NULL);
		pthread_join(b.thread, NULL);
		tally_add(&starts, a.err);
		CHECK_ERRNO(r, "START", a.err, 0, ECANCELED);
		if (b.err)
			race_fail(r, "ftruncate: %s", ename(b.err));
		err = status(fd, &st);
		/* After START: ENODATA, or the stream, ended or on an empty file. */
		if (a.err && err != ENODATA)
			race_fail(r, "START failed, STATUS returned %s", ename(err));
		if (!a.err && err)
			race_fail(r, "START succeeded, STATUS returned %s", ename(err));
		if (!err && (st.flags & ABISS_STATUS_ENDED) &&
		    st.end_reason != ABISS_END_TRUNCATED)
			race_fail(r, "the stream ended with reason %u", st.end_reason);
		if (!err && (st.flags & ABISS_STATUS_ACTIVE) && st.buffered)
			race_fail(r, "a stream on an empty file has %llu bytes buffered",
				  (unsigned long long)st.buffered);
		if (!err && (st.flags & ABISS_STATUS_ACTIVE))
			active++;
		else if (!err)
			truncated++;
		round_end_check(r, &self->d, 0);
		close(fd);
		round_end_check(r, &self->d, 1);
		ASSERT_EQ(0, fill_file(wfd));
	} while (race_next(r));
	close(wfd);
	snprintf(out, sizeof(out), "START: %s; of the streams started, %lu ended truncated, "
		 "%lu ran on the emptied file", tally_str(&starts, s1, sizeof(s1)),
		 truncated, active);
	race_finish(r, &self->d, out);
}

/*
 * START vs ABISS_IOC_STOP on the same descriptor: STOP before the stream
 * exists fails with ENODATA and START goes on; STOP while START waits
 * ends the stream and START fails with ECANCELED; STOP after that ends
 * and detaches it.  One in ten requests is denied (ENOSPC).
 */
static int do_stop(struct racer *t)
{
	return stop(t->fd);
}

TEST_F_TIMEOUT(race, stop, 600)
{
	struct race *r = &self->r;
	struct tally starts = { 0 }, stops = { 0 };
	char s1[300], s2[300], out[700];
	struct abiss_status st;

	self->d.reply_us = 2000;
	self->d.deny_permille = 100;
	do {
		struct racer a, b;
		int fd = open(self->path, O_RDONLY), err;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, racer_go(&a, NULL, &r->rng, 500, do_start, fd, NULL));
		ASSERT_EQ(0, racer_go(&b, &a, &r->rng, 8000, do_stop, fd, NULL));
		pthread_join(a.thread, NULL);
		pthread_join(b.thread, NULL);
		tally_add(&starts, a.err);
		tally_add(&stops, b.err);
		CHECK_ERRNO(r, "START", a.err, 0, ECANCELED, ENOSPC);
		CHECK_ERRNO(r, "STOP", b.err, 0, ENODATA);
		if (a.err == ECANCELED && b.err)
			race_fail(r, "START was cancelled, but STOP returned %s", ename(b.err));
		err = status(fd, &st);
		/* Left attached only when START succeeded and STOP came too early. */
		if (!a.err && b.err == ENODATA ? err || !(st.flags & ABISS_STATUS_ACTIVE) :
		    err != ENODATA)
			race_fail(r, "START %s, STOP %s, then STATUS %s (flags %#x)",
				  ename(a.err), ename(b.err), ename(err), st.flags);
		round_end_check(r, &self->d, 0);
		if (!err)
			CHECK_ERRNO(r, "the last STOP", stop(fd), 0);
		close(fd);
		round_end_check(r, &self->d, 1);
	} while (race_next(r));
	snprintf(out, sizeof(out), "START: %s; STOP: %s", tally_str(&starts, s1, sizeof(s1)),
		 tally_str(&stops, s2, sizeof(s2)));
	race_finish(r, &self->d, out);
}

/*
 * START vs close() of its descriptor in another thread: START holds a
 * reference of its own on the file, so it either never saw the descriptor
 * (EBADF) or finishes (0), and the stream goes at the last close, START's.
 */
static int do_close(struct racer *t)
{
	return close(t->fd) ? errno : 0;
}

TEST_F_TIMEOUT(race, close, 600)
{
	struct race *r = &self->r;
	struct tally starts = { 0 };
	char s1[300], out[700];

	self->d.reply_us = 2000;
	do {
		struct racer a, b;
		int fd = open(self->path, O_RDONLY);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, racer_go(&a, NULL, &r->rng, 500, do_start, fd, NULL));
		ASSERT_EQ(0, racer_go(&b, &a, &r->rng, 8000, do_close, fd, NULL));
		pthread_join(a.thread, NULL);
		pthread_join(b.thread, NULL);
		tally_add(&starts, a.err);
		CHECK_ERRNO(r, "START", a.err, 0, EBADF);
		if (b.err)
			race_fail(r, "close: %s", ename(b.err));
		round_end_check(r, &self->d, 1);
	} while (race_next(r));
	snprintf(out, sizeof(out), "START: %s", tally_str(&starts, s1, sizeof(s1)));
	race_finish(r, &self->d, out);
}

/*
 * START vs the umount of a bind mount the file was opened through, made
 * anew each round: a lazy umount (MNT_DETACH) succeeds and ends the
 * stream (UNMOUNTED) once it is active, or START fails with ECANCELED; a
 * plain umount fails with EBUSY while the file is open, leaves the stream
 * running, and succeeds after the close: ABISS keeps no reference on the
 * mount.
 */
static int do_umount(struct racer *t)
{
	return umount2(MNT, *(int *)t->arg) ? errno : 0;
}

TEST_F_TIMEOUT(race, umount, 600)
{
	struct race *r = &self->r;
	struct tally starts[2], umounts[2];
	unsigned long active = 0, unmounted = 0;
	char s[4][300], out[1400], path[600];
	struct abiss_status st;

	memset(starts, 0, sizeof(starts));
	memset(umounts, 0, sizeof(umounts));
	snprintf(path, sizeof(path), MNT "/race-umount.dat");
	mkdir(MNT, 0755);
	self->d.reply_us = 2000;
	do {
		struct racer a, b;
		int lazy = below(&r->rng, 2), flags = lazy ? MNT_DETACH : 0;
		int fd, err, i;

		ASSERT_EQ(0, mount(test_dir(), MNT, NULL, MS_BIND, NULL));
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, racer_go(&a, NULL, &r->rng, 500, do_start, fd, NULL));
		ASSERT_EQ(0, racer_go(&b, &a, &r->rng, 8000, do_umount, fd, &flags));
		pthread_join(a.thread, NULL);
		pthread_join(b.thread, NULL);
		tally_add(&starts[lazy], a.err);
		tally_add(&umounts[lazy], b.err);
		if (lazy) {
			CHECK_ERRNO(r, "START beside a lazy umount", a.err, 0, ECANCELED);
			CHECK_ERRNO(r, "umount2(MNT_DETACH)", b.err, 0);
		} else {
			CHECK_ERRNO(r, "START beside a plain umount", a.err, 0);
			CHECK_ERRNO(r, "umount2() of the open file's mount", b.err, EBUSY);
		}
		/* A stream on a detached mount ends, UNMOUNTED, a refill pass later. */
		for (i = 0; i < SETTLE_MS / 2; i++) {
			err = status(fd, &st);
			if (err || !lazy || !(st.flags & ABISS_STATUS_ACTIVE))
				break;
			usleep(2000);
		}
		if (a.err && err != ENODATA)
			race_fail(r, "START failed, STATUS returned %s", ename(err));
		if (!a.err && err)
			race_fail(r, "START succeeded, STATUS returned %s", ename(err));
		if (!err && lazy && st.end_reason != ABISS_END_UNMOUNTED)
			race_fail(r, "after a lazy umount the stream has flags %#x, reason %u",
				  st.flags, st.end_reason);
		if (!err && !lazy && !(st.flags & ABISS_STATUS_ACTIVE))
			race_fail(r, "after a refused umount the stream has flags %#x, reason %u",
				  st.flags, st.end_reason);
		if (!err && (st.flags & ABISS_STATUS_ACTIVE))
			active++;
		else if (!err)
			unmounted++;
		round_end_check(r, &self->d, 0);
		close(fd);
		round_end_check(r, &self->d, 1);
		if (!lazy) {
			err = umount2(MNT, 0) ? errno : 0;
			if (err) {
				race_fail(r, "umount2() after the close: %s", ename(err));
				umount2(MNT, MNT_DETACH);
			}
		}
	} while (race_next(r));
	rmdir(MNT);
	snprintf(out, sizeof(out), "lazy: START: %s; umount2: %s; plain: START: %s; umount2: %s; "
		 "of the streams started, %lu ended unmounted, %lu ran on",
		 tally_str(&starts[1], s[0], 300), tally_str(&umounts[1], s[1], 300),
		 tally_str(&starts[0], s[2], 300), tally_str(&umounts[0], s[3], 300),
		 unmounted, active);
	race_finish(r, &self->d, out);
}

/*
 * A stream's reader killed with SIGKILL at a random point: the child opens
 * the file, starts a stream, reads the file through it checking every byte,
 * stops it, and does it again; the parent kills it after a random delay.
 * Whatever it was doing, its stream ends with its exit and the daemon gets
 * the reservation back.
 */
enum { K_FORKED, K_OPEN, K_START, K_READ, K_STOP, K_DONE, K_PHASES };
static const char *const phase_names[] = {
	"fork", "open", "START", "read", "STOP", "exited",
};

struct kid {
	volatile int phase;
	volatile int err;	/* a START or STOP that failed, or bad data */
	volatile int what;	/* 1 START, 2 read, 3 STOP */
};

static void kid_main(struct kid *k, const char *path)
{
	int i, fd, err;

	for (i = 0; i < 2; i++) {
		k->phase = K_OPEN;
		fd = open(path, O_RDONLY);
		if (fd < 0)
			_exit(2);
		k->phase = K_START;
		err = start(fd);
		if (err) {
			k->what = 1;
			k->err = err;
			_exit(1);
		}
		k->phase = K_READ;
		if (read_check(fd, NULL, NULL)) {
			k->what = 2;
			k->err = EIO;
			_exit(1);
		}
		k->phase = K_STOP;
		err = stop(fd);
		if (err) {
			k->what = 3;
			k->err = err;
			_exit(1);
		}
		close(fd);
	}
	k->phase = K_DONE;
	_exit(0);
}

TEST_F_TIMEOUT(race, kill, 600)
{
	struct race *r = &self->r;
	unsigned long phases[K_PHASES] = { 0 };
	struct kid *k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char out[700];

	ASSERT_NE(MAP_FAILED, k);
	self->d.reply_us = 1000;
	do {
		int wstatus, phase, i;
		pid_t pid;

		memset(k, 0, sizeof(*k));
		/* Cold pages now and then, so that START and the reads wait for the disk. */
		if (below(&r->rng, 2)) {
			int fd = open(self->path, O_RDONLY);

			ASSERT_LE(0, fd);
			posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			close(fd);
		}
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			kid_main(k, self->path);
		/* From the child's first step on: a fork takes long in UML. */
		for (i = 0; !k->phase && i < SETTLE_MS; i++)
			usleep(1000);
		jitter(&r->rng, 60000);
		phase = k->phase;
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &wstatus, 0));
		if (WIFEXITED(wstatus))
			phase = K_DONE;
		phases[phase]++;
		if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus))
			race_fail(r, "the reader exited with %d: %s %s", WEXITSTATUS(wstatus),
				  k->what == 1 ? "START" : k->what == 2 ? "read (bad data)" : "STOP",
				  ename(k->err));
		round_end_check(r, &self->d, 1);
	} while (race_next(r));
	munmap(k, sizeof(*k));
	snprintf(out, sizeof(out), "killed during %s %lu, %s %lu, %s %lu, %s %lu, %s %lu; %s %lu",
		 phase_names[0], phases[0], phase_names[1], phases[1], phase_names[2], phases[2],
		 phase_names[3], phases[3], phase_names[4], phases[4], phase_names[5], phases[5]);
	race_finish(r, &self->d, out);
}

/*
 * The daemon restarts (closes /dev/abiss and opens it again) at random
 * while three threads start, read a little of and stop streams, leaving
 * some running at the end of the round.  A START meets the daemon (0) or
 * its absence (ESRCH, at once or when it closes with the request
 * pending).  After each reopen the daemon learns of the streams it had
 * admitted from their LIVE records, so at the end of the round its count
 * equals the kernel's.
 */
struct restart_worker {
	struct racer t;
	const char *path;
	struct tally *starts;
	int fds[RESTART_STREAMS];
	int bad;
};

static int do_restart_worker(struct racer *t)
{
	struct restart_worker *w = t->arg;
	static __thread char buf[READ_UNIT];
	int i, err;

	for (i = 0; i < RESTART_STREAMS; i++) {
		w->fds[i] = open(w->path, O_RDONLY);
		if (w->fds[i] < 0)
			return errno;
		err = start(w->fds[i]);
		tally_add(w->starts, err);
		if (err && err != ESRCH)
			return err;
		jitter(&t->rng, 3000);
		if (!err && pread(w->fds[i], buf, sizeof(buf), 0) != sizeof(buf))
			return EIO;
		/* Stop it, close it, or leave it running for the round's check. */
		switch (below(&t->rng, 3)) {
		case 0:
			err = stop(w->fds[i]);
			if (err && err != ENODATA)
				return err;
			break;
		case 1:
			close(w->fds[i]);
			w->fds[i] = -1;
			break;
		}
	}
	return 0;
}

TEST_F_TIMEOUT(race, restart, 600)
{
	struct race *r = &self->r;
	struct tally starts = { 0 };
	char s1[300], out[700];

	do {
		struct restart_worker w[RESTART_WORKERS];
		int i, j;

		self->d.churn = 1;
		for (i = 0; i < RESTART_WORKERS; i++) {
			memset(&w[i], 0, sizeof(w[i]));
			w[i].path = self->path;
			w[i].starts = &starts;
			for (j = 0; j < RESTART_STREAMS; j++)
				w[i].fds[j] = -1;
			ASSERT_EQ(0, racer_go(&w[i].t, NULL, &r->rng, 2000, do_restart_worker,
					      -1, &w[i]));
		}
		for (i = 0; i < RESTART_WORKERS; i++) {
			pthread_join(w[i].t.thread, NULL);
			if (w[i].t.err)
				race_fail(r, "worker %d: %s", i, ename(w[i].t.err));
		}
		self->d.churn = 0;
		round_end_check(r, &self->d, 0);
		for (i = 0; i < RESTART_WORKERS; i++)
			for (j = 0; j < RESTART_STREAMS; j++)
				if (w[i].fds[j] >= 0)
					close(w[i].fds[j]);
		round_end_check(r, &self->d, 1);
	} while (race_next(r));
	if (!starts.n[0])
		race_fail(r, "no START succeeded");
	snprintf(out, sizeof(out), "START: %s; %lu daemon restarts",
		 tally_str(&starts, s1, sizeof(s1)), self->d.restarts);
	race_finish(r, &self->d, out);
}

/*
 * A stream read while another thread switches the disk's I/O scheduler
 * among none, mq-deadline, bfq, kyber and abiss: the stream starts, every
 * byte read through it is as written, and it ends cleanly (STOPPED).  The
 * file's pages are dropped first, so its refills go to the disk.
 */
static const char *const sched_names[] = { "none", "mq-deadline", "bfq", "kyber", "abiss" };

/* /sys/block/DISK/queue/scheduler of the disk that holds @dir. */
static int sched_path(const char *dir, char *path, size_t len)
{
	char link[PATH_MAX], buf[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (stat(dir, &st))
		return -1;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	if (!realpath(link, buf))
		return -1;
	snprintf(path, len, "%.4000s/partition", buf);
	if (!access(path, F_OK))
		*strrchr(buf, '/') = 0;	/* a partition: its disk's queue */
	n = snprintf(path, len, "%.4000s/queue/scheduler", buf);
	return n < (ssize_t)len && !access(path, W_OK) ? 0 : -1;
}

static int sched_set(const char *path, const char *name)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, name, strlen(name)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* The scheduler in use: the bracketed name. */
static int sched_get(const char *path, char *name, size_t len)
{
	char buf[256], *a, *b;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (!b)
		return -1;
	*b = 0;
	snprintf(name, len, "%s", a + 1);
	return 0;
}

struct switcher {
	const char *path;
	const char *names[5];
	int nr;
	volatile int done;
	unsigned long switches[5];
	int err;
};

static int do_switch(struct racer *t)
{
	struct switcher *sw = t->arg;
	int i, err;

	while (!sw->done) {
		i = below(&t->rng, sw->nr);
		err = sched_set(sw->path, sw->names[i]);
		if (err)
			return err;
		sw->switches[i]++;
		jitter(&t->rng, 10000);
	}
	return 0;
}

static int pace_reads(void *arg)
{
	(void)arg;
	usleep(8000);	/* about 8 MB/s in 64 KiB reads, over the stream's rate */
	return 0;
}

TEST_F_TIMEOUT(race, scheduler, 600)
{
	struct race *r = &self->r;
	struct switcher sw = { .nr = 0 };
	struct tally starts = { 0 };
	char path[PATH_MAX], old[64], avail[256] = "", s1[300], out[900];
	unsigned long misses = 0, total = 0;
	struct abiss_status st;
	size_t i;
	int fd;

	if (sched_path(test_dir(), path, sizeof(path)) || sched_get(path, old, sizeof(old)))
		SKIP(return, "no scheduler to switch for %s", test_dir());
	fd = open(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, avail, sizeof(avail) - 1));
	close(fd);
	sw.path = path;
	for (i = 0; i < sizeof(sched_names) / sizeof(sched_names[0]); i++)
		if (strstr(avail, sched_names[i]))
			sw.names[sw.nr++] = sched_names[i];
	ASSERT_LE(2, sw.nr);
	do {
		struct racer b;
		int err;

		fd = open(self->path, O_RDONLY);
		ASSERT_LE(0, fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		sw.done = 0;
		ASSERT_EQ(0, racer_go(&b, NULL, &r->rng, 2000, do_switch, -1, &sw));
		err = start(fd);
		tally_add(&starts, err);
		CHECK_ERRNO(r, "START", err, 0);
		if (read_check(fd, pace_reads, NULL))
			race_fail(r, "the stream read wrong data or failed");
		err = status(fd, &st);
		if (!err) {
			misses += st.misses;
			total++;
			if (!(st.flags & ABISS_STATUS_ACTIVE))
				race_fail(r, "the stream ended (reason %u)", st.end_reason);
		}
		sw.done = 1;
		pthread_join(b.thread, NULL);
		if (b.err)
			race_fail(r, "switching the scheduler: %s", ename(b.err));
		round_end_check(r, &self->d, 0);
		if (!err)
			CHECK_ERRNO(r, "STOP", stop(fd), 0);
		close(fd);
		round_end_check(r, &self->d, 1);
	} while (race_next(r));
	EXPECT_EQ(0, sched_set(path, old));
	snprintf(out, sizeof(out), "%.300s; START: %s; %lu misses in %lu streams; switches: "
		 "%s %lu, %s %lu, %s %lu, %s %lu, %s %lu", path, tally_str(&starts, s1, sizeof(s1)),
		 misses, total, sw.names[0], sw.switches[0], sw.names[1], sw.switches[1],
		 sw.nr > 2 ? sw.names[2] : "-", sw.switches[2],
		 sw.nr > 3 ? sw.names[3] : "-", sw.switches[3],
		 sw.nr > 4 ? sw.names[4] : "-", sw.switches[4]);
	race_finish(r, &self->d, out);
}

TEST_HARNESS_MAIN
