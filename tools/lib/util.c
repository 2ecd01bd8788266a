// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by abissd and the ABISS tools.  See util.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
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

/* Digits, then an optional suffix from @suffixes whose n-th letter is base^(n+1). */
static int parse_scaled(const char *s, uint64_t base, const char *suffixes,
			uint64_t *out)
{
	size_t len = strspn(s, "0123456789");
	uint64_t mult = 1, v;
	char digits[32];
	const char *p;

	if (len == 0 || len >= sizeof(digits)) {
		errno = len ? ERANGE : EINVAL;
		return -1;
	}
	memcpy(digits, s, len);
	digits[len] = '\0';
	if (s[len]) {
		if (s[len + 1])
			goto bad;
		p = strchr(suffixes, s[len] | 0x20);	/* lower case */
		if (!p)
			goto bad;
		for (; p >= suffixes; p--)
			mult *= base;
	}
	if (parse_u64(digits, &v))
		return -1;
	if (v > UINT64_MAX / mult) {
		errno = ERANGE;
		return -1;
	}
	*out = v * mult;
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int parse_size(const char *s, uint64_t *out)
{
	return parse_scaled(s, 1024, "kmgt", out);
}

int parse_rate(const char *s, uint64_t *out)
{
	return parse_scaled(s, 1000, "kmg", out);
}

int parse_duration(const char *s, uint64_t *ns)
{
	size_t ilen = strspn(s, "0123456789"), flen = 0;
	uint64_t unit = NSEC_PER_SEC, secs, frac = 0, scale;
	const char *p = s + ilen;
	char digits[32];

	if (ilen == 0 || ilen >= sizeof(digits))
		goto bad;
	memcpy(digits, s, ilen);
	digits[ilen] = '\0';
	if (parse_u64(digits, &secs))
		return -1;
	if (*p == '.') {
		p++;
		flen = strspn(p, "0123456789");
		if (flen == 0 || flen > 9)
			goto bad;
		memcpy(digits, p, flen);
		digits[flen] = '\0';
		if (parse_u64(digits, &frac))
			return -1;
		p += flen;
	}
	if (!strcmp(p, "ms"))
		unit = NSEC_PER_MSEC;
	else if (*p && strcmp(p, "s"))
		goto bad;
	for (scale = 1; flen; flen--)
		scale *= 10;
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
