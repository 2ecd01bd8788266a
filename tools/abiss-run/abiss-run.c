// SPDX-License-Identifier: GPL-2.0
/*
 * abiss-run - run a program with ABISS streams on the files it reads.
 *
 * Puts the shim libabiss-run.so (shim.c) in LD_PRELOAD, passes the options
 * to it in ABISS_RUN_* environment variables, and executes the program.
 * The shim starts a guaranteed-rate stream on every regular file the
 * program opens for reading only (and whose path matches --match).
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <abiss/abiss.h>
#include "util.h"

#define SHIM_NAME	"libabiss-run.so"

/* Exit statuses of env(1) when the program cannot be run. */
#define EXIT_CANNOT_RUN	126
#define EXIT_NOT_FOUND	127

static struct {
	uint64_t rate;
	uint64_t buffer;	/* 0: the shim's default */
	const char *match;
	bool verbose;
	bool strict;
} opt;

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	usage_start("--rate <rate> [options] [--] <program> [<argument>...]", NULL);
	fputs("\nRun a program with an ABISS guaranteed-rate stream on every regular\n"
	      "file it opens for reading only.\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -r, --rate <rate>      bytes/s of each stream\n", out);
	fputs(" -b, --buffer <size>    playout buffer of each stream (default: one\n"
	      "                          second at the rate, at least 256K; at most\n"
	      "                          256M)\n", out);
	fputs(" -m, --match <glob>     only files whose path, as the program gives it,\n"
	      "                          matches the pattern (fnmatch(3))\n", out);
	fputs(" -v, --verbose          tell each stream started\n", out);
	fputs(" -s, --strict           fail the open when its stream cannot start\n", out);
	usage_help_version(24);
	usage_units();
	usage_see_man(1);
}

static void parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rate",    required_argument, NULL, 'r' },
		{ "buffer",  required_argument, NULL, 'b' },
		{ "match",   required_argument, NULL, 'm' },
		{ "verbose", no_argument,       NULL, 'v' },
		{ "strict",  no_argument,       NULL, 's' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	long page = sysconf(_SC_PAGESIZE);
	int c;

	while ((c = getopt_long(argc, argv, "+r:b:m:vshV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_size(optarg, &opt.rate) || !opt.rate)
				usage_error("invalid rate: '%s'", optarg);
			break;
		case 'b':
			if (parse_size(optarg, &opt.buffer) || opt.buffer < (uint64_t)page ||
			    opt.buffer > ABISS_MAX_BUFFER)
				usage_error("invalid buffer size: '%s' (%ldK to 256M)", optarg,
					    page / 1024);
			break;
		case 'm':
			opt.match = optarg;
			break;
		case 'v':
			opt.verbose = true;
			break;
		case 's':
			opt.strict = true;
			break;
		default:
			other_option(c, usage);
		}
	}
	if (!opt.rate)
		usage_error("--rate is required");
	if (optind == argc)
		usage_error("no program given");
}

#ifndef LIBDIR
#define LIBDIR "/usr/lib"
#endif

/* @dir followed by @name, made absolute, if it is there and readable. */
static char *readable(const char *dir, const char *name)
{
	char path[PATH_MAX * 2], *abs;

	snprintf(path, sizeof(path), "%s%s", dir, name);
	abs = realpath(path, NULL);
	if (abs && access(abs, R_OK) == 0)
		return abs;
	free(abs);
	return NULL;
}

/*
 * The shim: $ABISS_RUN_SHIM, else ../lib/abiss/ beside this program (the
 * build tree), else LIBDIR/abiss/ (where 'make install' puts it, a
 * multiarch libdir too), else this program's folder.
 */
static char *find_shim(void)
{
	const char *env = getenv("ABISS_RUN_SHIM");
	char self[PATH_MAX], *abs, *dir;
	ssize_t n;

	if (env && *env) {
		abs = realpath(env, NULL);
		if (!abs)
			err(EXIT_FAIL, "cannot use ABISS_RUN_SHIM '%s'", env);
		return abs;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		err(EXIT_FAIL, "cannot find myself: '/proc/self/exe'");
	self[n] = '\0';
	dir = dirname(self);
	abs = readable(dir, "/../lib/abiss/" SHIM_NAME);
	if (!abs)
		abs = readable(LIBDIR, "/abiss/" SHIM_NAME);
	if (!abs)
		abs = readable(dir, "/" SHIM_NAME);
	if (!abs)
		errx(EXIT_FAIL, "cannot find " SHIM_NAME " in '%s/../lib/abiss', '%s' or '%s'",
		     dir, LIBDIR "/abiss", dir);
	return abs;
}

/* LD_PRELOAD with @shim added at its end, unless it is there already. */
static void set_preload(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (old && *old) {
		if (strstr(old, shim))
			return;
		if (asprintf(&val, "%s:%s", old, shim) < 0)
			err(EXIT_FAIL, "out of memory");
	} else {
		val = strdup(shim);
		if (!val)
			err(EXIT_FAIL, "out of memory");
	}
	if (setenv("LD_PRELOAD", val, 1))
		err(EXIT_FAIL, "cannot set LD_PRELOAD");
	free(val);
}

/* Set @name to @value, or unset it for NULL (no outer abiss-run's leaks in). */
static void set_var(const char *name, const char *value)
{
	if (value ? setenv(name, value, 1) : unsetenv(name))
		err(EXIT_FAIL, "cannot set %s", name);
}

int main(int argc, char **argv)
{
	char num[32];
	char *shim;
	int e;

	parse_args(argc, argv);
	shim = find_shim();
	set_preload(shim);
	free(shim);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)opt.rate);
	set_var("ABISS_RUN_RATE", num);
	snprintf(num, sizeof(num), "%llu", (unsigned long long)opt.buffer);
	set_var("ABISS_RUN_BUFFER", opt.buffer ? num : NULL);
	set_var("ABISS_RUN_MATCH", opt.match);
	set_var("ABISS_RUN_VERBOSE", opt.verbose ? "1" : NULL);
	set_var("ABISS_RUN_STRICT", opt.strict ? "1" : NULL);

	execvp(argv[optind], argv + optind);
	e = errno;
	warn("cannot run '%s'", argv[optind]);
	return e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}
