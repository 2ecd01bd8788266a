// SPDX-License-Identifier: GPL-2.0
/*
 * bench-reader - the streaming consumer of make bench (uml-test/bench/).
 *
 * One program for every streaming contender, so that all are measured the
 * same way: a consumer takes --size bytes of a file every size/rate
 * seconds, on an absolute CLOCK_MONOTONIC schedule (behind it, it takes
 * the next chunk at once and skips nothing), and times each take.  Where
 * the chunks come from is the mode:
 *
 *   plain  read() of the file, buffered; a take is one read() call;
 *   ring   the careful application: a producer thread reads --size chunks
 *          ahead into a user-space ring of --buffer bytes, filled before
 *          the consumer starts; a take waits (if the ring is empty) for the
 *          producer, then copies the chunk out; its time is from the take's
 *          call (its scheduled moment, or later when behind) to having the
 *          chunk and its slot handed back;
 *   abiss  read() of the file with an ABISS stream on it at --rate with a
 *          playout buffer of --buffer bytes (libabiss), timed as plain.
 *
 * At the end it prints one JSON object on stdout (see usage()).  Not a test:
 * it judges nothing, it measures.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abiss.h"
#include "pattern.h"
#include "util.h"

/*
 * ioprio_set(2) values, as <linux/ioprio.h> defines them (not included:
 * its newer versions need kernel-only macros).  Level 4 is what
 * 'ionice -c1' gives when no level is named.
 */
#define IOPRIO_CLASS_SHIFT_	13
#define IOPRIO_CLASS_RT_	1
#define IOPRIO_WHO_PROCESS_	1
#define RT_LEVEL		4

#define DEFAULT_SIZE		(64 * 1024)
#define MAX_SIZE		(64 * 1024 * 1024)
#define STALL_NS		1000000ULL	/* a take that waited more: a stall */

enum mode { MODE_PLAIN, MODE_RING, MODE_ABISS };
static const char *const mode_names[] = { "plain", "ring", "abiss" };

static struct {
	const char *file;
	const char *label;
	const char *trace;
	uint64_t rate;
	uint64_t size;
	uint64_t duration;	/* ns */
	uint64_t buffer;	/* 0: the default */
	uint64_t seed;
	unsigned int fifo;	/* SCHED_FIFO priority; 0: normal scheduling */
	enum mode mode;
	bool rt;
	bool verify;
} opt = {
	.size = DEFAULT_SIZE,
	.mode = MODE_PLAIN,
};

/* One take: when it began (from the start) and how long it waited. */
struct take {
	uint64_t t_ns;
	uint64_t lat_ns;
	int64_t fill;		/* abiss --trace: bytes buffered after it; else -1 */
};

static struct {
	struct take *takes;
	size_t n, cap;
	uint64_t bytes;
	uint64_t run_ns;
	uint64_t worst_lag_ns;	/* the latest a take began after its moment */
	bool eof;
	bool have_status;
	struct abiss_status status;
	bool mismatch;
	uint64_t bad_offset;
} res;

static void __attribute__((noreturn)) usage(void)
{
	usage_start("[options] --rate <rate> <file>", NULL);
	fputs("\nRead a file at a steady rate as a streaming player would, in one of three\n"
	      "ways, and report how long each take of --size bytes waited (make bench).\n"
	      "\nOptions:\n"
	      " -r, --rate <rate>      bytes/s to consume\n"
	      " -s, --size <size>      bytes per take (default 64K)\n"
	      " -t, --seconds <time>   how long to consume (seconds, or 500ms; default 10)\n"
	      " -m, --mode <mode>      plain: paced read() calls (the default);\n"
	      "                        ring: a producer thread reads ahead into a\n"
	      "                          user-space ring of --buffer bytes, filled before\n"
	      "                          the consumer starts;\n"
	      "                        abiss: paced read() calls with an ABISS stream\n"
	      "                          (--rate, playout buffer --buffer) on the file\n"
	      " -b, --buffer <size>    ring or playout buffer (default: one second at\n"
	      "                          --rate, at least 4 takes)\n"
	      "     --rt               real-time I/O class (as 'ionice -c1'): the reader,\n"
	      "                          or in ring mode the producer thread\n"
	      "     --fifo <prio>      run at SCHED_FIFO priority 1-99 (the producer thread\n"
	      "                          too), memory locked, as a real-time player would\n"
	      " -l, --label <name>     the contender's name in the output\n"
	      "     --trace <file>     write 't_ms latency_us' per take to <file> (abiss\n"
	      "                          mode: and the bytes buffered after the take)\n"
	      "     --verify <seed>    check the data against the test pattern (rdrt\n"
	      "                          --create --seed <seed>), outside the timing\n", stdout);
	usage_help_version(24);
	usage_units();
	fputs("\nOutput: one JSON object: label, mode, reads, p50_us, p99_us, p999_us, max_us,\n"
	      "stalls (takes that waited more than 1 ms), misses (the ABISS stream's; null\n"
	      "in the other modes), rate_Bps (delivered), cpu_ms (user + system), the\n"
	      "settings, and in abiss mode the stream's refills, worst_refill_us,\n"
	      "late_refills (refills done after a reader at the rate needed them) and\n"
	      "worst_late_us.  A file that ends before --seconds ends the run (\"eof\": true).\n"
	      "\nExit status: 0 measured, 1 failed (open, read, ABISS refused, data\n"
	      "mismatch), 2 bad usage.\n", stdout);
	exit(EXIT_OK);
}

enum { OPT_RT = 0x100, OPT_FIFO, OPT_TRACE, OPT_VERIFY };

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rate",    required_argument, NULL, 'r' },
		{ "size",    required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "mode",    required_argument, NULL, 'm' },
		{ "buffer",  required_argument, NULL, 'b' },
		{ "rt",      no_argument,       NULL, OPT_RT },
		{ "fifo",    required_argument, NULL, OPT_FIFO },
		{ "label",   required_argument, NULL, 'l' },
		{ "trace",   required_argument, NULL, OPT_TRACE },
		{ "verify",  required_argument, NULL, OPT_VERIFY },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned int i;
	int c;

	opt.duration = 10 * NSEC_PER_SEC;
	while ((c = getopt_long(argc, argv, "r:s:t:m:b:l:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			opt.rate = arg_number(parse_size, "rate", optarg);
			break;
		case 's':
			opt.size = arg_number(parse_size, "size", optarg);
			if (opt.size > MAX_SIZE)
				usage_error("size too large (at most 64M): '%s'", optarg);
			break;
		case 't':
			opt.duration = arg_number(parse_duration, "duration", optarg);
			break;
		case 'm':
			for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == sizeof(mode_names) / sizeof(mode_names[0]))
				usage_error("bad mode: '%s' (plain, ring or abiss)", optarg);
			opt.mode = (enum mode)i;
			break;
		case 'b':
			opt.buffer = arg_number(parse_size, "buffer size", optarg);
			break;
		case OPT_RT:
			opt.rt = true;
			break;
		case OPT_FIFO:
			opt.fifo = arg_rt_prio(optarg);
			break;
		case 'l':
			opt.label = optarg;
			break;
		case OPT_TRACE:
			opt.trace = optarg;
			break;
		case OPT_VERIFY:
			if (parse_u64(optarg, &opt.seed))
				usage_error("invalid seed: '%s'", optarg);
			opt.verify = true;
			break;
		default:
			other_option(c, usage);
		}
	}
	opt.file = arg_file(argc, argv);
	if (!opt.rate)
		usage_error("no --rate given");
	if (opt.mode == MODE_PLAIN && opt.buffer)
		usage_error("--buffer needs --mode ring or abiss");
	if (!opt.buffer)
		opt.buffer = opt.rate > 4 * opt.size ? opt.rate : 4 * opt.size;
	if (opt.buffer < opt.size)
		usage_error("--buffer (%llu) smaller than --size (%llu)",
			    (unsigned long long)opt.buffer, (unsigned long long)opt.size);
	if (!opt.label)
		opt.label = mode_names[opt.mode];
}

static void set_rt(void)
{
	int prio = (IOPRIO_CLASS_RT_ << IOPRIO_CLASS_SHIFT_) | RT_LEVEL;

	/* Who 0: the calling thread (I/O priority is per thread). */
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS_, 0, prio))
		err(EXIT_FAIL, "cannot set the real-time I/O class");
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		err(EXIT_FAIL, "out of memory");
	return p;
}

static void record(uint64_t start, uint64_t due, uint64_t t0, uint64_t t1, int64_t fill)
{
	struct take *tk;

	if (res.n == res.cap) {
		res.cap = res.cap ? 2 * res.cap : 1024;
		res.takes = realloc(res.takes, res.cap * sizeof(*res.takes));
		if (!res.takes)
			err(EXIT_FAIL, "out of memory");
	}
	tk = &res.takes[res.n++];
	tk->t_ns = t0 - start;
	tk->lat_ns = t1 - t0;
	tk->fill = fill;
	if (t0 > due && t0 - due > res.worst_lag_ns)
		res.worst_lag_ns = t0 - due;
}

static void check_data(const unsigned char *p, uint64_t off, size_t n)
{
	ptrdiff_t bad;

	if (!opt.verify || res.mismatch)
		return;
	bad = pattern_check(p, off, n, opt.seed);
	if (bad < 0)
		return;
	res.mismatch = true;
	res.bad_offset = off + (uint64_t)bad;
}

/* read() until @n bytes or the end of the file: the bytes read. */
static size_t read_full(int fd, unsigned char *buf, size_t n, uint64_t off)
{
	size_t done = 0;
	ssize_t got;

	while (done < n) {
		got = read(fd, buf + done, n - done);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			err(EXIT_FAIL, "read error on '%s' at offset %llu", opt.file,
			    (unsigned long long)(off + done));
		}
		if (got == 0)
			break;
		done += (size_t)got;
	}
	return done;
}

/* For the trace: the bytes the ABISS stream on @fd holds; else -1. */
static int64_t stream_fill(int fd)
{
	struct abiss_status st;

	if (opt.mode != MODE_ABISS || !opt.trace || abiss_status(fd, &st))
		return -1;
	return (int64_t)st.buffered;
}

/*
 * The consumer, the same in every mode: a take of @take(@fd, buf) every
 * --size bytes at --rate, timed, until --seconds or the end of the file
 * (@take returns fewer than --size bytes).
 */
static void consume(size_t (*take)(int fd, unsigned char *buf), int fd)
{
	unsigned char *buf = xmalloc(opt.size);
	uint64_t start = now_ns(), due, t0, t1;
	size_t n;

	for (;;) {
		due = start + muldiv64(res.bytes, NSEC_PER_SEC, opt.rate);
		if (due - start >= opt.duration)
			break;
		sleep_until(due);
		t0 = now_ns();
		n = take(fd, buf);
		t1 = now_ns();
		if (n) {
			record(start, due, t0, t1, stream_fill(fd));
			check_data(buf, res.bytes, n);
			res.bytes += n;
		}
		if (n < opt.size) {
			res.eof = true;
			break;
		}
	}
	res.run_ns = now_ns() - start;
	free(buf);
}

/* plain and abiss: a take is read() of --size bytes (read_full()). */
static size_t take_read(int fd, unsigned char *buf)
{
	return read_full(fd, buf, opt.size, res.bytes);
}

static void run_reads(int fd)
{
	if (opt.rt)
		set_rt();
	if (opt.mode == MODE_ABISS && abiss_start(fd, opt.rate, opt.buffer, (uint32_t)opt.size, 0))
		errx(EXIT_FAIL, "ABISS refused the stream on '%s': %s", opt.file,
		     abiss_strerror(errno));
	consume(take_read, fd);
	if (opt.mode == MODE_ABISS) {
		if (abiss_status(fd, &res.status) == 0)
			res.have_status = true;
		else
			warn("cannot get the stream status of '%s'", opt.file);
		if (abiss_stop(fd) < 0)
			warn("cannot stop the stream on '%s'", opt.file);
	}
}

/*
 * The ring: slots of --size bytes; the producer fills slot head while
 * fewer than nslots are full, the consumer empties slot tail.  A slot's
 * bytes are touched only by the side that owns it, outside the lock.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	unsigned char *mem;
	size_t *len;		/* bytes in each full slot */
	size_t nslots, head, tail, count;
	bool eof, stop;
	int fd;
} ring = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.changed = PTHREAD_COND_INITIALIZER,
};

static void *producer(void *arg)
{
	uint64_t off = 0;
	size_t n, slot;

	if (opt.rt)
		set_rt();
	for (;;) {
		pthread_mutex_lock(&ring.lock);
		while (ring.count == ring.nslots && !ring.stop)
			pthread_cond_wait(&ring.changed, &ring.lock);
		slot = ring.head;
		if (ring.stop) {
			pthread_mutex_unlock(&ring.lock);
			return NULL;
		}
		pthread_mutex_unlock(&ring.lock);

		n = read_full(ring.fd, ring.mem + slot * opt.size, opt.size, off);
		off += n;

		pthread_mutex_lock(&ring.lock);
		if (n) {
			ring.len[slot] = n;
			ring.head = (slot + 1) % ring.nslots;
			ring.count++;
		}
		if (n < opt.size)
			ring.eof = true;
		pthread_cond_broadcast(&ring.changed);
		pthread_mutex_unlock(&ring.lock);
		if (n < opt.size)
			return NULL;
	}
}

/* ring: a take waits for a full slot, copies it out and hands it back. */
static size_t take_ring(int fd, unsigned char *buf)
{
	size_t n, slot;

	pthread_mutex_lock(&ring.lock);
	while (!ring.count && !ring.eof)
		pthread_cond_wait(&ring.changed, &ring.lock);
	if (!ring.count) {
		pthread_mutex_unlock(&ring.lock);
		return 0;
	}
	slot = ring.tail;
	n = ring.len[slot];
	pthread_mutex_unlock(&ring.lock);
	memcpy(buf, ring.mem + slot * opt.size, n);

	pthread_mutex_lock(&ring.lock);
	ring.tail = (slot + 1) % ring.nslots;
	ring.count--;
	pthread_cond_broadcast(&ring.changed);
	pthread_mutex_unlock(&ring.lock);
	return n;
}

static void run_ring(int fd)
{
	pthread_t thread;
	int e;

	ring.fd = fd;
	ring.nslots = opt.buffer / opt.size;
	ring.mem = xmalloc(ring.nslots * opt.size);
	ring.len = xmalloc(ring.nslots * sizeof(*ring.len));
	/* Fault the ring in now, not on the producer's first pass. */
	memset(ring.mem, 0, ring.nslots * opt.size);
	e = pthread_create(&thread, NULL, producer, NULL);
	if (e) {
		errno = e;
		err(EXIT_FAIL, "cannot start the producer thread");
	}
	pthread_mutex_lock(&ring.lock);
	while (ring.count < ring.nslots && !ring.eof)
		pthread_cond_wait(&ring.changed, &ring.lock);
	pthread_mutex_unlock(&ring.lock);

	consume(take_ring, fd);
	pthread_mutex_lock(&ring.lock);
	ring.stop = true;
	pthread_cond_broadcast(&ring.changed);
	pthread_mutex_unlock(&ring.lock);
	pthread_join(thread, NULL);
	free(ring.mem);
	free(ring.len);
}

static double us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

static void write_trace(void)
{
	FILE *f = fopen(opt.trace, "w");
	size_t i;

	if (!f)
		err(EXIT_FAIL, "cannot open '%s'", opt.trace);
	for (i = 0; i < res.n; i++) {
		fprintf(f, "%.3f %.1f", (double)res.takes[i].t_ns / 1e6, us(res.takes[i].lat_ns));
		if (res.takes[i].fill >= 0)
			fprintf(f, " %lld", (long long)res.takes[i].fill);
		fputc('\n', f);
	}
	if (ferror(f) | fclose(f))
		err(EXIT_FAIL, "write error on '%s'", opt.trace);
}

static void print_json(void)
{
	uint64_t *lat = xmalloc((res.n ? res.n : 1) * sizeof(*lat));
	uint64_t stalls = 0, span;
	struct rusage ru;
	double cpu_ms = 0;
	size_t i;

	for (i = 0; i < res.n; i++) {
		lat[i] = res.takes[i].lat_ns;
		if (lat[i] > STALL_NS)
			stalls++;
	}
	sort_u64(lat, res.n);
	if (!getrusage(RUSAGE_SELF, &ru))
		cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;

	printf("{\"label\":");
	json_string(opt.label);
	printf(",\"mode\":\"%s\",\"reads\":%zu", mode_names[opt.mode], res.n);
	printf(",\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f",
	       us(nearest_rank(lat, res.n, 500)), us(nearest_rank(lat, res.n, 990)),
	       us(nearest_rank(lat, res.n, 999)), us(res.n ? lat[res.n - 1] : 0));
	printf(",\"stalls\":%llu", (unsigned long long)stalls);
	if (res.have_status)
		printf(",\"misses\":%llu", (unsigned long long)res.status.misses);
	else
		printf(",\"misses\":null");
	/* On schedule, the bytes took bytes/rate seconds however early the last came. */
	span = muldiv64(res.bytes, NSEC_PER_SEC, opt.rate);
	if (res.run_ns > span)
		span = res.run_ns;
	printf(",\"rate_Bps\":%llu,\"cpu_ms\":%.1f",
	       (unsigned long long)(span ? muldiv64(res.bytes, NSEC_PER_SEC, span) : 0), cpu_ms);
	printf(",\"bytes\":%llu,\"run_ms\":%.1f,\"worst_lag_us\":%.1f",
	       (unsigned long long)res.bytes, (double)res.run_ns / 1e6, us(res.worst_lag_ns));
	printf(",\"rate_req_Bps\":%llu,\"size\":%llu,\"buffer\":%llu,\"rt\":%s,\"fifo\":%u"
	       ",\"eof\":%s",
	       (unsigned long long)opt.rate, (unsigned long long)opt.size,
	       opt.mode == MODE_PLAIN ? 0ULL : (unsigned long long)opt.buffer,
	       opt.rt ? "true" : "false", opt.fifo, res.eof ? "true" : "false");
	if (res.have_status)
		printf(",\"refills\":%llu,\"worst_refill_us\":%.1f,\"late_refills\":%llu"
		       ",\"worst_late_us\":%.1f",
		       (unsigned long long)res.status.refills, us(res.status.worst_refill_ns),
		       (unsigned long long)res.status.late_refills, us(res.status.worst_late_ns));
	if (opt.verify)
		printf(",\"verified\":%s", res.mismatch ? "false" : "true");
	printf("}\n");
	free(lat);
}

int main(int argc, char **argv)
{
	int fd;

	atexit(close_stdout);
	parse_args(argc, argv);
	/* The producer thread, made later, inherits it; its ring is locked too. */
	if (opt.fifo)
		realtime(opt.fifo, MCL_CURRENT | MCL_FUTURE);
	fd = open(opt.file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err(EXIT_FAIL, "cannot open '%s'", opt.file);
	if (opt.mode == MODE_RING)
		run_ring(fd);
	else
		run_reads(fd);
	close(fd);
	if (opt.trace)
		write_trace();
	print_json();
	free(res.takes);
	if (res.mismatch) {
		fflush(stdout);
		warnx("'%s': data mismatch at offset %llu", opt.file,
		      (unsigned long long)res.bad_offset);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
