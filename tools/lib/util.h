/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by abissd and the ABISS tools: checked number parsing with
 * unit suffixes, monotonic-clock time, usage errors and stdout checking.
 */
#ifndef ABISS_UTIL_H
#define ABISS_UTIL_H

#include <stdint.h>
#include <stdio.h>

/* Exit statuses of every ABISS program. */
#define EXIT_OK		0
#define EXIT_FAIL	1
#define EXIT_USAGE	2

/* The version every ABISS program reports with --version. */
#define ABISS_VERSION	"0.1"

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

/*
 * Each parser takes the whole string or fails with errno set (EINVAL for
 * anything but digits and one known suffix, ERANGE on overflow): no sign,
 * no spaces, no trailing junk.
 */
int parse_u64(const char *s, uint64_t *out);
/* Sizes: k, M, G, T (any case) are powers of 1024: "64k" = 65536. */
int parse_size(const char *s, uint64_t *out);
/* Rates in bytes/s: k, M, G (any case) are powers of 1000: "2M" = 2000000. */
int parse_rate(const char *s, uint64_t *out);
/* Durations: seconds with up to 9 decimals, or a suffix "s" or "ms". */
int parse_duration(const char *s, uint64_t *ns);

/* a * b / c without intermediate overflow; saturates at UINT64_MAX. */
uint64_t muldiv64(uint64_t a, uint64_t b, uint64_t c);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);
/* Sleep until CLOCK_MONOTONIC reaches @deadline (ns), through signals. */
void sleep_until(uint64_t deadline);

/* After getopt's own message: "Try 'prog --help'...", exit EXIT_USAGE. */
void try_help(void) __attribute__((noreturn));

/* print_version() - "prog (ABISS) version" on stdout, then exit 0 */
void print_version(void) __attribute__((noreturn));

/*
 * Bad usage: print "prog: message" and "Try 'prog --help'..." to stderr,
 * exit EXIT_USAGE.
 */
void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Exit EXIT_FAIL with a message if writing stdout failed (atexit). */
void close_stdout(void);

#endif /* ABISS_UTIL_H */
