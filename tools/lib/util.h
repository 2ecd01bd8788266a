/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by abissd and the ABISS tools: checked number parsing with
 * unit suffixes, monotonic-clock time, --help and usage errors, stdout
 * checking, and what the readers (rdrt, bench-reader) share: percentiles,
 * JSON strings, real-time scheduling.
 */
#ifndef ABISS_UTIL_H
#define ABISS_UTIL_H

#include <stddef.h>
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
/*
 * Sizes and rates (bytes, bytes/s), as util-linux reads them: K, M, G, T, P,
 * E (any case), alone or with "iB", are powers of 1024 ("64K" and "64KiB"
 * are 65536); with "B" they are powers of 1000 ("2MB" is 2000000).  With a
 * suffix the number may have a decimal fraction, rounded down to a byte:
 * "1.5M" is 1572864.
 */
int parse_size(const char *s, uint64_t *out);
/* Durations: seconds with up to 9 decimals, or a suffix "s" or "ms". */
int parse_duration(const char *s, uint64_t *ns);

/*
 * arg_number() - an option's value by @parse (one of the above), which must
 * be more than 0; else usage_error("invalid @what: '@arg'").
 */
uint64_t arg_number(int (*parse)(const char *, uint64_t *), const char *what,
		    const char *arg);
/* arg_rt_prio() - a real-time priority option's value, 1 to 99; else usage_error() */
unsigned int arg_rt_prio(const char *arg);
/*
 * arg_file() - the one operand left after the options (argv[optind]);
 * usage_error() if there is none or more than one
 */
const char *arg_file(int argc, char **argv);

/* a * b / c without intermediate overflow; saturates at UINT64_MAX. */
uint64_t muldiv64(uint64_t a, uint64_t b, uint64_t c);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t now_ns(void);
/* Sleep until CLOCK_MONOTONIC reaches @deadline (ns), through signals. */
void sleep_until(uint64_t deadline);

/* After getopt's own message: "Try 'prog --help'...", exit EXIT_USAGE. */
void try_help(void) __attribute__((noreturn));

/*
 * other_option() - the end of every getopt_long() switch (default:): 'h'
 * runs @usage, 'V' print_version(), anything else ('?', getopt has said
 * why) try_help().
 */
void other_option(int c, void (*usage)(void)) __attribute__((noreturn));

/*
 * --help, alike in every program, on stdout: usage_start() prints "Usage:"
 * and " prog SYNOPSIS" for each synopsis up to NULL; the program prints its
 * description and options; usage_help_version() adds the -h and -V lines,
 * their text at column @col as the program's other options have it;
 * usage_see_man() ends with "For more details see prog(@section)." and
 * exits EXIT_OK.
 */
void usage_start(const char *synopsis, ...) __attribute__((sentinel));
void usage_help_version(int col);
/*
 * usage_units() - the "Arguments:" paragraph on what parse_size() takes,
 * for the programs with <size> or <rate> options
 */
void usage_units(void);
void usage_see_man(int section) __attribute__((noreturn));

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

/* sort_u64() - sort @n values in increasing order */
void sort_u64(uint64_t *v, size_t n);
/*
 * nearest_rank() - the value of nearest rank @per_mille/1000 of @n sorted
 * values (990: the 99th percentile); 0 if there are none
 */
uint64_t nearest_rank(const uint64_t *v, size_t n, unsigned int per_mille);

/* json_string() - @s as a JSON string (quoted, escaped) on stdout */
void json_string(const char *s);

/*
 * realtime() - run at SCHED_FIFO priority @prio (threads made later inherit
 * it) with memory locked by mlockall(@mlock_flags), as a real-time player
 * would; exit EXIT_FAIL if either fails
 */
void realtime(unsigned int prio, int mlock_flags);

#endif /* ABISS_UTIL_H */
