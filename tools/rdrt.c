// SPDX-License-Identifier: GPL-2.0
/*
 * rdrt - real-time read test.
 *
 * Reads a file at a given rate, a read unit at a time on absolute
 * CLOCK_MONOTONIC deadlines, with or without an ABISS stream, with read()
 * or through mmap(), and reports how long each read took.  It also writes
 * and checks test files whose content is a known function of the offset
 * (pattern.h), so a run can prove that what it read is what is on disk.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abiss.h"
#include "pattern.h"
#include "util.h"

#define DEFAULT_READ_SIZE	(64 * 1024)
#define MAX_READ_SIZE		(1024 * 1024 * 1024)	/* fits read_unit */
#define CREATE_CHUNK		(1024 * 1024)

static struct {
	const char *file;
	uint64_t rate;		/* bytes/s; 0: as fast as possible */
	uint64_t read_size;
	uint64_t duration;	/* ns; 0: no limit */
	uint64_t stop_after;	/* bytes; 0: no limit */
	uint64_t buffer;	/* 0: default */
	uint64_t seed;
	uint64_t create_size;
	bool create;
	bool abiss;
	bool mmap;
	bool verify;
	bool json;
	bool status;
	unsigned int rt_prio;	/* SCHED_FIFO priority; 0: normal scheduling */
} opt = {
	.read_size = DEFAULT_READ_SIZE,
};

/* What a run measured. */
struct result {
	uint64_t bytes;
	uint64_t reads;
	uint64_t worst_ns;
	uint64_t worst_at_ns;	/* when it began, CLOCK_MONOTONIC */
	uint64_t p99_ns;
	uint64_t worst_lag_ns;	/* --rate: the latest a read began */
	/*
	 * Each read by what the reader did meanwhile (getrusage(2) of its
	 * thread): it slept (a voluntary context switch: it waited for I/O,
	 * a lock, memory), or it was only preempted (it was runnable: the
	 * CPU went to others), or neither (the read's own CPU time).
	 */
	uint64_t worst_running_ns;
	uint64_t worst_preempted_ns;
	uint64_t worst_slept_ns;
	uint64_t preempted_reads;
	uint64_t slept_reads;
	uint64_t run_ns;
	bool have_status;	/* ABISS: @status is the stream's, at the end */
	struct abiss_status status;
	bool mismatch;
	uint64_t bad_offset;
	unsigned char got, want;
};

enum {
	OPT_STATUS = 0x100,
};

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	usage_start("[options] <file>", "--create <size> [--seed <n>] <file>", NULL);
	fputs("\nRead a file at a steady rate, optionally as an ABISS guaranteed-rate\n"
	      "stream, and report the latency of every read.\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -r, --rate <rate>        read at this many bytes/s;\n"
	      "                            default: as fast as possible\n", out);
	fputs(" -s, --read-size <size>   bytes per read (default 64K)\n", out);
	fputs(" -t, --duration <time>    stop after this time (seconds, or 500ms)\n", out);
	fputs(" -n, --stop-after <size>  stop after this many bytes\n", out);
	fputs(" -a, --abiss              read as an ABISS stream at --rate\n", out);
	fputs(" -b, --buffer <size>      ABISS playout buffer (default: one second\n"
	      "                            at the rate, at least 4 reads)\n", out);
	fputs(" -m, --mmap               read through mmap(), touching every page\n", out);
	fputs(" -v, --verify             check the data against the test pattern\n", out);
	fputs(" -S, --seed <n>           the test pattern's seed (default 0)\n", out);
	fputs(" -c, --create <size>      write a test file of this size, then exit\n", out);
	fputs(" -j, --json               print the results as one JSON object\n", out);
	fputs(" -R, --rt-prio <prio>     run at SCHED_FIFO priority 1-99, memory\n"
	      "                            locked, as a real-time player would\n", out);
	fputs("     --status             print the stream status after the start and\n"
	      "                            before the stop (to stderr)\n", out);
	usage_help_version(26);
	usage_units();
	usage_see_man(1);
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rate",       required_argument, NULL, 'r' },
		{ "read-size",  required_argument, NULL, 's' },
		{ "duration",   required_argument, NULL, 't' },
		{ "stop-after", required_argument, NULL, 'n' },
		{ "abiss",      no_argument,       NULL, 'a' },
		{ "buffer",     required_argument, NULL, 'b' },
		{ "mmap",       no_argument,       NULL, 'm' },
		{ "rt-prio",    required_argument, NULL, 'R' },
		{ "verify",     no_argument,       NULL, 'v' },
		{ "seed",       required_argument, NULL, 'S' },
		{ "create",     required_argument, NULL, 'c' },
		{ "json",       no_argument,       NULL, 'j' },
		{ "status",     no_argument,       NULL, OPT_STATUS },
		{ "help",       no_argument,       NULL, 'h' },
		{ "version",    no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "r:s:t:n:ab:mvS:c:jR:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			opt.rate = arg_number(parse_size, "rate", optarg);
			break;
		case 's':
			opt.read_size = arg_number(parse_size, "read size", optarg);
			if (opt.read_size > MAX_READ_SIZE)
				usage_error("read size too large (at most 1G): '%s'", optarg);
			break;
		case 't':
			opt.duration = arg_number(parse_duration, "duration", optarg);
			break;
		case 'n':
			opt.stop_after = arg_number(parse_size, "size", optarg);
			break;
		case 'a':
			opt.abiss = true;
			break;
		case 'b':
			opt.buffer = arg_number(parse_size, "buffer size", optarg);
			break;
		case 'm':
			opt.mmap = true;
			break;
		case 'v':
			opt.verify = true;
			break;
		case 'S':
			if (parse_u64(optarg, &opt.seed))
				usage_error("invalid seed: '%s'", optarg);
			break;
		case 'c':
			opt.create = true;
			if (parse_size(optarg, &opt.create_size))
				usage_error("invalid size: '%s'", optarg);
			break;
		case 'j':
			opt.json = true;
			break;
		case 'R':
			opt.rt_prio = arg_rt_prio(optarg);
			break;
		case OPT_STATUS:
			opt.status = true;
			break;
		default:
			other_option(c, usage);
		}
	}
	opt.file = arg_file(argc, argv);

	if (opt.create && (opt.abiss || opt.mmap || opt.verify || opt.rate || opt.json))
		usage_error("--create writes a file: it takes only --seed");
	if (opt.abiss && !opt.rate)
		usage_error("--abiss needs --rate");
	if (!opt.abiss && (opt.buffer || opt.status))
		usage_error("--buffer and --status need --abiss");
	if (opt.abiss && !opt.buffer) {
		opt.buffer = opt.rate > 4 * opt.read_size ? opt.rate : 4 * opt.read_size;
	}
}

static int create_file(void)
{
	unsigned char *buf = malloc(CREATE_CHUNK);
	uint64_t off;
	size_t n;
	int fd;

	if (!buf)
		err(EXIT_FAIL, "out of memory");
	fd = open(opt.file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		err(EXIT_FAIL, "cannot create '%s'", opt.file);
	for (off = 0; off < opt.create_size; off += n) {
		n = opt.create_size - off < CREATE_CHUNK ? opt.create_size - off
							 : CREATE_CHUNK;
		pattern_fill(buf, off, n, opt.seed);
		if (write(fd, buf, n) != (ssize_t)n)
			err(EXIT_FAIL, "write error on '%s'", opt.file);
	}
	if (fsync(fd) || close(fd))
		err(EXIT_FAIL, "write error on '%s'", opt.file);
	free(buf);
	return EXIT_OK;
}

static void start_stream(int fd)
{
	const char *why;
	int e;

	if (!abiss_start(fd, opt.rate, opt.buffer, (uint32_t)opt.read_size,
			 opt.mmap ? ABISS_START_MMAP : 0))
		return;
	/* The errno's name, and what it means for ABISS when that says more. */
	e = errno;
	why = abiss_strerror(e);
	if (!strcmp(why, strerror(e)))
		errx(EXIT_FAIL, "ABISS refused the stream: %s", why);
	errx(EXIT_FAIL, "ABISS refused the stream: %s (%s)", strerror(e), why);
}

static int get_status(int fd, struct abiss_status *st)
{
	if (abiss_status(fd, st) == 0)
		return 0;
	warn("cannot get the stream status");
	return -1;
}

static void print_status(const char *when, const struct abiss_status *st)
{
	fprintf(stderr, "%s: stream status %s: id %llu flags 0x%x rate %llu buffer %llu "
		"position %llu buffered %llu delivered %llu misses %llu refills %llu "
		"worst_refill_ns %llu late_refills %llu worst_late_ns %llu "
		"worst_take_late_ns %llu end_reason %u\n",
		program_invocation_short_name, when, (unsigned long long)st->id,
		st->flags, (unsigned long long)st->rate, (unsigned long long)st->buffer,
		(unsigned long long)st->position, (unsigned long long)st->buffered,
		(unsigned long long)st->delivered, (unsigned long long)st->misses,
		(unsigned long long)st->refills,
		(unsigned long long)st->worst_refill_ns,
		(unsigned long long)st->late_refills,
		(unsigned long long)st->worst_late_ns,
		(unsigned long long)st->worst_take_late_ns, st->end_reason);
}

/* The calling thread's voluntary and involuntary context switches. */
static void switches(long *vol, long *invol)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*vol = 0;
		*invol = 0;
		return;
	}
	*vol = ru.ru_nvcsw;
	*invol = ru.ru_nivcsw;
}

/*
 * Count a read of @ns by what the reader did meanwhile: @vol voluntary
 * and @invol involuntary context switches.
 */
static void classify(struct result *r, uint64_t ns, long vol, long invol)
{
	uint64_t *worst = &r->worst_running_ns;

	if (vol) {
		r->slept_reads++;
		worst = &r->worst_slept_ns;
	} else if (invol) {
		r->preempted_reads++;
		worst = &r->worst_preempted_ns;
	}
	if (ns > *worst)
		*worst = ns;
}

/* Touch every page of [p, p + len), as a reader of a mapping would. */
static void touch_pages(const unsigned char *p, size_t len, size_t page)
{
	volatile unsigned char sink = 0;
	size_t i;

	for (i = 0; i < len; i += page - ((uintptr_t)(p + i) & (page - 1)))
		sink += p[i];
	(void)sink;
}

static void check_data(struct result *r, const unsigned char *p, uint64_t off, size_t n)
{
	ptrdiff_t bad = pattern_check(p, off, n, opt.seed);

	if (bad < 0)
		return;
	r->mismatch = true;
	r->bad_offset = off + (uint64_t)bad;
	r->got = p[bad];
	pattern_fill(&r->want, r->bad_offset, 1, opt.seed);
}

static void run(int fd, struct result *r)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), cap = 1024, n;
	unsigned char *buf = NULL, *map = NULL;
	uint64_t *lat = malloc(cap * sizeof(*lat));
	uint64_t start, due = 0, t0, t1, size = 0, want, pos;
	long vol0, invol0, vol1, invol1;
	struct abiss_status st;
	struct stat sb;
	ssize_t got;

	if (!lat)
		err(EXIT_FAIL, "out of memory");
	if (opt.mmap) {
		if (fstat(fd, &sb))
			err(EXIT_FAIL, "cannot stat '%s'", opt.file);
		size = (uint64_t)sb.st_size;
		if (size) {
			map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
			if (map == MAP_FAILED)
				err(EXIT_FAIL, "cannot mmap '%s'", opt.file);
		}
	} else if (posix_memalign((void **)&buf, page, opt.read_size)) {
		err(EXIT_FAIL, "out of memory");
	}

	if (opt.abiss) {
		start_stream(fd);
		if (opt.status && !get_status(fd, &st))
			print_status("after start", &st);
	}

	start = now_ns();
	for (;;) {
		want = opt.read_size;
		if (opt.stop_after) {
			if (r->bytes >= opt.stop_after)
				break;
			if (opt.stop_after - r->bytes < want)
				want = opt.stop_after - r->bytes;
		}
		if (opt.rate) {
			due = start + muldiv64(r->bytes, NSEC_PER_SEC, opt.rate);
			if (opt.duration && due - start >= opt.duration)
				break;
			sleep_until(due);
		} else if (opt.duration && now_ns() - start >= opt.duration) {
			break;
		}

		if (opt.mmap) {
			if (r->bytes >= size)
				break;
			n = size - r->bytes < want ? size - r->bytes : want;
			switches(&vol0, &invol0);
			t0 = now_ns();
			touch_pages(map + r->bytes, n, page);
			t1 = now_ns();
			switches(&vol1, &invol1);
			pos = r->bytes + n;
			if (opt.abiss && abiss_position(fd, pos) < 0)
				err(EXIT_FAIL, "cannot report the position %llu",
				    (unsigned long long)pos);
		} else {
			switches(&vol0, &invol0);
			t0 = now_ns();
			got = read(fd, buf, want);
			t1 = now_ns();
			switches(&vol1, &invol1);
			if (got < 0) {
				if (errno == EINTR)
					continue;
				err(EXIT_FAIL, "read error on '%s' at offset %llu",
				    opt.file, (unsigned long long)r->bytes);
			}
			if (got == 0)
				break;
			n = (size_t)got;
		}

		if (r->reads == cap) {
			cap *= 2;
			lat = realloc(lat, cap * sizeof(*lat));
			if (!lat)
				err(EXIT_FAIL, "out of memory");
		}
		lat[r->reads++] = t1 - t0;
		/*
		 * Behind its schedule (not run in time, or a slow read before)
		 * the reader catches up by reading faster than the rate: a
		 * miss then may be its own.
		 */
		if (opt.rate && t0 - due > r->worst_lag_ns)
			r->worst_lag_ns = t0 - due;
		if (t1 - t0 > r->worst_ns) {
			r->worst_ns = t1 - t0;
			r->worst_at_ns = t0;
		}
		classify(r, t1 - t0, vol1 - vol0, invol1 - invol0);
		if (opt.verify)
			check_data(r, opt.mmap ? map + r->bytes : buf, r->bytes, n);
		r->bytes += n;
		if (r->mismatch)
			break;
	}
	r->run_ns = now_ns() - start;
	sort_u64(lat, r->reads);
	r->p99_ns = nearest_rank(lat, r->reads, 990);

	if (opt.abiss) {
		if (!get_status(fd, &r->status)) {
			r->have_status = true;
			if (opt.status)
				print_status("before stop", &r->status);
		}
		if (abiss_stop(fd) < 0)
			warn("cannot stop the stream");
	}
	if (map)
		munmap(map, size);
	free(buf);
	free(lat);
}

static void print_json(const struct result *r)
{
	const struct abiss_status *st = &r->status;

	printf("{\"file\": ");
	json_string(opt.file);
	printf(", \"abiss\": %s, \"mmap\": %s, \"rate\": %llu, \"read_size\": %llu",
	       opt.abiss ? "true" : "false", opt.mmap ? "true" : "false",
	       (unsigned long long)opt.rate, (unsigned long long)opt.read_size);
	printf(", \"bytes\": %llu, \"reads\": %llu, \"worst_latency_ns\": %llu"
	       ", \"p99_latency_ns\": %llu",
	       (unsigned long long)r->bytes, (unsigned long long)r->reads,
	       (unsigned long long)r->worst_ns, (unsigned long long)r->p99_ns);
	if (r->have_status)
		printf(", \"buffer\": %llu, \"misses\": %llu, \"refills\": %llu"
		       ", \"worst_refill_ns\": %llu, \"late_refills\": %llu"
		       ", \"worst_late_ns\": %llu",
		       (unsigned long long)st->buffer, (unsigned long long)st->misses,
		       (unsigned long long)st->refills,
		       (unsigned long long)st->worst_refill_ns,
		       (unsigned long long)st->late_refills,
		       (unsigned long long)st->worst_late_ns);
	else
		printf(", \"buffer\": null, \"misses\": null, \"refills\": null"
		       ", \"worst_refill_ns\": null, \"late_refills\": null"
		       ", \"worst_late_ns\": null");
	if (opt.rate)
		printf(", \"worst_lag_ns\": %llu", (unsigned long long)r->worst_lag_ns);
	else
		printf(", \"worst_lag_ns\": null");
	printf(", \"worst_at_ns\": %llu", (unsigned long long)r->worst_at_ns);
	printf(", \"worst_running_ns\": %llu, \"worst_preempted_ns\": %llu"
	       ", \"worst_slept_ns\": %llu, \"preempted_reads\": %llu"
	       ", \"slept_reads\": %llu",
	       (unsigned long long)r->worst_running_ns,
	       (unsigned long long)r->worst_preempted_ns,
	       (unsigned long long)r->worst_slept_ns,
	       (unsigned long long)r->preempted_reads,
	       (unsigned long long)r->slept_reads);
	printf(", \"run_time_ns\": %llu", (unsigned long long)r->run_ns);
	if (!opt.verify)
		printf(", \"verified\": null");
	else if (r->mismatch)
		printf(", \"verified\": false, \"bad_offset\": %llu",
		       (unsigned long long)r->bad_offset);
	else
		printf(", \"verified\": true");
	printf("}\n");
}

static void print_ms(const char *label, uint64_t ns)
{
	printf("%-15s %llu.%03llu ms\n", label, (unsigned long long)(ns / NSEC_PER_MSEC),
	       (unsigned long long)(ns % NSEC_PER_MSEC / 1000));
}

static void print_text(const struct result *r)
{
	printf("%-15s %llu\n", "bytes:", (unsigned long long)r->bytes);
	printf("%-15s %llu\n", "reads:", (unsigned long long)r->reads);
	print_ms("worst latency:", r->worst_ns);
	print_ms("p99 latency:", r->p99_ns);
	if (r->have_status) {
		printf("%-15s %llu\n", "misses:", (unsigned long long)r->status.misses);
		printf("%-15s %llu\n", "refills:", (unsigned long long)r->status.refills);
		print_ms("worst refill:", r->status.worst_refill_ns);
	} else {
		printf("%-15s -\n%-15s -\n%-15s -\n", "misses:", "refills:", "worst refill:");
	}
	if (opt.rate)
		print_ms("worst lag:", r->worst_lag_ns);
	else
		printf("%-15s -\n", "worst lag:");
	printf("%-15s %llu.%03llu s\n", "run time:",
	       (unsigned long long)(r->run_ns / NSEC_PER_SEC),
	       (unsigned long long)(r->run_ns % NSEC_PER_SEC / NSEC_PER_MSEC));
	if (opt.verify)
		printf("%-15s %s\n", "data:", r->mismatch ? "MISMATCH" : "verified");
}

int main(int argc, char **argv)
{
	struct result r = { 0 };
	int fd;

	atexit(close_stdout);
	parse_args(argc, argv);
	if (opt.create)
		return create_file();

	/* Not MCL_FUTURE: that would lock a whole mmap()ed file in. */
	if (opt.rt_prio)
		realtime(opt.rt_prio, MCL_CURRENT);
	fd = open(opt.file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err(EXIT_FAIL, "cannot open '%s'", opt.file);
	run(fd, &r);
	close(fd);

	if (opt.json)
		print_json(&r);
	else
		print_text(&r);
	if (r.mismatch) {
		fflush(stdout);
		warnx("'%s': data mismatch at offset %llu: read 0x%02x, expected 0x%02x",
		      opt.file, (unsigned long long)r.bad_offset, r.got, r.want);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
