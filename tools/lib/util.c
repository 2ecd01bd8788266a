// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by abissd and the ABISS tools.  See util.h.
 */
#include <err.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s) {
		errno = EINVAL;
		return -1;
	}
	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			errno = EINVAL;
			return -1;
		}
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
			errno = ERANGE;
			return -1;
		}
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/*
 * A decimal number at the start of @s, "123" or "123.45": the integer part
 * in @v and, of the fraction, its first @max_frac digits as @frac / @scale
 * (0 / 1 without a point) and how many digits it has in @flen.  Returns the
 * rest of @s, or NULL with errno set.
 */
static const char *parse_decimal(const char *s, size_t max_frac, uint64_t *v,
				 uint64_t *frac, uint64_t *scale, size_t *flen)
{
	size_t ilen = strspn(s, "0123456789"), i;
	const char *p = s + ilen;
	char digits[32];

	*frac = 0;
	*scale = 1;
	*flen = 0;
	if (ilen == 0)
		goto bad;
	if (ilen >= sizeof(digits)) {
		errno = ERANGE;
		return NULL;
	}
	memcpy(digits, s, ilen);
	digits[ilen] = '\0';
	if (parse_u64(digits, v))
		return NULL;
	if (*p != '.')
		return p;
	*flen = strspn(++p, "0123456789");
	if (*flen == 0)
		goto bad;
	for (i = 0; i < *flen && i < max_frac; i++) {
		*frac = *frac * 10 + (uint64_t)(p[i] - '0');
		*scale *= 10;
	}
	return p + *flen;
bad:
	errno = EINVAL;
	return NULL;
}

/*
 * Sizes and rates read alike, as util-linux's strtosize() reads them, so that
 * "64K" means what it means to dd, fallocate or losetup.  Stricter than it in
 * what is not a number: decimal digits only (no "0x", no leading zero taken
 * as octal), no space, no sign.
 */
int parse_size(const char *s, uint64_t *out)
{
	static const char letters[] = "kmgtpe";
	uint64_t v, base = 1024, mult = 1, frac, scale;
	unsigned __int128 total;
	const char *p, *l;
	size_t flen;
	int power;

	/*
	 * 18 decimals keep frac * mult (mult at most 2^60) in 128 bits; the
	 * ones after them are worth less than a byte.
	 */
	p = parse_decimal(s, 18, &v, &frac, &scale, &flen);
	if (!p)
		return -1;
	if (!*p) {
		if (flen)	/* no fraction of a byte */
			goto bad;
		*out = v;
		return 0;
	}
	l = strchr(letters, *p | 0x20);	/* any case */
	if (!l)
		goto bad;
	p++;
	if (*p == 'i' && (p[1] == 'B' || p[1] == 'b')) {
		p += 2;		/* "KiB": powers of 1024, as "K" */
	} else if (*p == 'B' || *p == 'b') {
		p++;		/* "KB": powers of 1000 */
		base = 1000;
	}
	if (*p)
		goto bad;
	for (power = (int)(l - letters) + 1; power; power--)
		mult *= base;
	total = (unsigned __int128)v * mult + (unsigned __int128)frac * mult / scale;
	if (total > UINT64_MAX) {
		errno = ERANGE;
		return -1;
	}
	*out = (uint64_t)total;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int parse_duration(const char *s, uint64_t *ns)
{
	uint64_t unit = NSEC_PER_SEC, secs, frac, scale;
	const char *p;
	size_t flen;

	p = parse_decimal(s, 9, &secs, &frac, &scale, &flen);
	if (!p)
		return -1;
	if (flen > 9)
		goto bad;
	if (!strcmp(p, "ms"))
		unit = NSEC_PER_MSEC;
	else if (*p && strcmp(p, "s"))
		goto bad;
	if (secs > UINT64_MAX / unit) {
		errno = ERANGE;
		return -1;
	}
	*ns = secs * unit + muldiv64(frac, unit, scale);
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

uint64_t arg_number(int (*parse)(const char *, uint64_t *), const char *what,
		    const char *arg)
{
	uint64_t v;

	if (parse(arg, &v) || v == 0)
		usage_error("invalid %s: '%s'", what, arg);
	return v;
}

unsigned int arg_rt_prio(const char *arg)
{
	uint64_t prio;

	if (parse_u64(arg, &prio) || prio < 1 || prio > 99)
		usage_error("invalid real-time priority: '%s' (1-99)", arg);
	return (unsigned int)prio;
}

const char *arg_file(int argc, char **argv)
{
	if (optind == argc)
		usage_error("no file given");
	if (optind + 1 < argc)
		usage_error("unexpected argument: '%s'", argv[optind + 1]);
	return argv[optind];
}

uint64_t muldiv64(uint64_t a, uint64_t b, uint64_t c)
{
	unsigned __int128 r = (unsigned __int128)a * b / c;

	return r > UINT64_MAX ? UINT64_MAX : (uint64_t)r;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

void sleep_until(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / NSEC_PER_SEC),
		.tv_nsec = (long)(deadline % NSEC_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	try_help();
}

void print_version(void)
{
	printf("%s (ABISS) %s\n", program_invocation_short_name, ABISS_VERSION);
	exit(EXIT_OK);
}

void try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n",
		program_invocation_short_name);
	exit(EXIT_USAGE);
}

void other_option(int c, void (*usage)(void))
{
	if (c == 'h')
		usage();
	if (c == 'V')
		print_version();
	try_help();
}

void usage_start(const char *synopsis, ...)
{
	va_list ap;
	const char *s;

	fputs("\nUsage:\n", stdout);
	va_start(ap, synopsis);
	for (s = synopsis; s; s = va_arg(ap, const char *))
		printf(" %s %s\n", program_invocation_short_name, s);
	va_end(ap);
}

void usage_help_version(int col)
{
	printf(" %-*s%s\n", col - 1, "-h, --help", "display this help");
	printf(" %-*s%s\n", col - 1, "-V, --version", "display version");
}

void usage_units(void)
{
	fputs("\nArguments:\n"
	      " <size> and <rate> (bytes, bytes/s) may be followed by K, M, G, T, P or E,\n"
	      "   powers of 1024 (the \"iB\" is optional: 64K = 64KiB = 65536), or by\n"
	      "   KB, MB, GB, TB, PB or EB, powers of 1000 (2MB = 2000000); 1.5M is\n"
	      "   1572864.\n", stdout);
}

void usage_see_man(int section)
{
	printf("\nFor more details see %s(%d).\n", program_invocation_short_name, section);
	exit(EXIT_OK);
}

void close_stdout(void)
{
	int bad = ferror(stdout);

	errno = 0;
	if (fclose(stdout) == 0 && !bad)
		return;
	if (errno == EPIPE)	/* the reader went away: its business */
		_exit(EXIT_FAIL);
	fprintf(stderr, "%s: write error%s%s\n", program_invocation_short_name,
		errno ? ": " : "", errno ? strerror(errno) : "");
	_exit(EXIT_FAIL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

uint64_t nearest_rank(const uint64_t *v, size_t n, unsigned int per_mille)
{
	size_t r;

	if (!n)
		return 0;
	r = (n * per_mille + 999) / 1000;
	return v[r ? r - 1 : 0];
}

void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

void realtime(unsigned int prio, int mlock_flags)
{
	struct sched_param sp = { .sched_priority = (int)prio };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		err(EXIT_FAIL, "cannot run at real-time priority %u", prio);
	if (mlockall(mlock_flags))
		err(EXIT_FAIL, "cannot lock memory");
}
