// SPDX-License-Identifier: GPL-2.0
/*
 * libabiss-run.so - the LD_PRELOAD shim of abiss-run(1).
 *
 * Wraps the C library's open functions: after a successful open for
 * reading only of a regular file whose path matches ABISS_RUN_MATCH, it
 * starts an ABISS stream on the new file at ABISS_RUN_RATE bytes/s with an
 * ABISS_RUN_BUFFER byte playout buffer.  The program sees the open as it
 * would without the shim (errno included) unless ABISS_RUN_STRICT is set,
 * when a stream that cannot start makes the open fail with its errno.
 * Without ABISS_RUN_MATCH, a file whose file system has no streams (ENOTTY,
 * EOPNOTSUPP) is left alone: no message (but with ABISS_RUN_VERBOSE), no
 * failure.
 *
 * The environment is read once, by the constructor; until it has run (other
 * libraries' constructors may open files) every call passes straight
 * through.  Only the wrappers are exported (shim.map).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <abiss/abiss.h>
#include "util.h"

#define PREFIX	"abiss-run: "

static struct {
	bool active;		/* the constructor found a usable rate */
	bool verbose;
	bool strict;
	uint64_t rate;
	uint64_t buffer;
	const char *match;	/* NULL: every file */
} cfg;

/* Set while a wrapper runs the real function: a nested open is its own. */
static __thread int nested __attribute__((tls_model("initial-exec")));

typedef int open_fn(const char *, int, ...);
typedef int openat_fn(int, const char *, int, ...);
typedef int open2_fn(const char *, int);
typedef int openat2_fn(int, const char *, int);
typedef FILE *fopen_fn(const char *, const char *);

/* The next definition of @name (the C library's), or NULL with ENOSYS. */
static void *next(void **cache, const char *name)
{
	if (!*cache) {
		*cache = dlsym(RTLD_NEXT, name);
		if (!*cache)
			errno = ENOSYS;
	}
	return *cache;
}

#define REAL(type, name) ({					\
	static void *_p;					\
	(type *)next(&_p, #name);				\
})

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (write(STDERR_FILENO, line, strlen(line)) < 0)
		return;	/* nowhere to tell */
}

static uint64_t env_number(const char *name, uint64_t dflt, bool *ok)
{
	const char *s = getenv(name);
	uint64_t v;

	if (!s)
		return dflt;
	if (parse_u64(s, &v)) {
		say(PREFIX "bad %s: '%s': no streams\n", name, s);
		*ok = false;
		return 0;
	}
	return v;
}

__attribute__((constructor)) static void shim_init(void)
{
	int e = errno;
	bool ok = true;

	cfg.rate = env_number("ABISS_RUN_RATE", 0, &ok);
	cfg.buffer = env_number("ABISS_RUN_BUFFER", 0, &ok);
	cfg.match = getenv("ABISS_RUN_MATCH");
	if (cfg.match)	/* the program may change its environment */
		cfg.match = strdup(cfg.match);
	cfg.verbose = getenv("ABISS_RUN_VERBOSE") != NULL;
	cfg.strict = getenv("ABISS_RUN_STRICT") != NULL;
	if (ok && !cfg.rate)
		say(PREFIX "no ABISS_RUN_RATE: no streams\n");
	cfg.active = ok && cfg.rate;
	if (!cfg.buffer)
		cfg.buffer = ABISS_DEFAULT_BUFFER(cfg.rate);
	errno = e;
}

/* Does an open with @flags (or a stdio @mode) read only? */
static bool reads_only(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_PATH | O_DIRECT));
}

static bool mode_reads_only(const char *mode)
{
	return mode && mode[0] == 'r' && !strchr(mode, '+');
}

/*
 * A wrapped open of @path gave @fd (with @read_only: for reading only):
 * start the stream if it is for one.  Returns 0, or with --strict an errno
 * the open must fail with.  errno is left as the open left it.
 */
static int stream_on(int fd, const char *path, bool read_only)
{
	struct abiss_status st;
	struct stat sb;
	int e = errno, err = 0;

	if (fd < 0 || !cfg.active || !read_only || nested)
		return 0;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
	    (cfg.match && fnmatch(cfg.match, path, 0)))
		goto out;
	if (abiss_start(fd, cfg.rate, cfg.buffer, 0, 0)) {
		err = errno;
		/*
		 * Programs read files of /proc, /sys, /etc ... too: without
		 * --match, files of file systems that cannot stream are no
		 * failure, only told with --verbose.
		 */
		if (!cfg.match && (err == ENOTTY || err == EOPNOTSUPP)) {
			if (cfg.verbose)
				say(PREFIX "no stream on '%s': %s\n", path, abiss_strerror(err));
			err = 0;
			goto out;
		}
		say(PREFIX "cannot start a stream on '%s': %s\n", path, abiss_strerror(err));
		if (!cfg.strict)
			err = 0;
	} else if (cfg.verbose && !abiss_status(fd, &st)) {
		say(PREFIX "stream %llu on '%s' at %llu bytes/s\n",
		    (unsigned long long)st.id, path, (unsigned long long)st.rate);
	}
out:
	errno = e;
	return err;
}

/* The open functions: one body, the real function's call given. */
static int opened(int fd, const char *path, int flags)
{
	int err = stream_on(fd, path, reads_only(flags));

	if (!err)
		return fd;
	close(fd);
	errno = err;
	return -1;
}

/* The mode argument of an open with @flags, if it has one. */
#define OPEN_MODE(flags, last) ({					\
	mode_t _m = 0;							\
	if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) {	\
		va_list _ap;						\
		va_start(_ap, last);					\
		_m = (mode_t)va_arg(_ap, int);				\
		va_end(_ap);						\
	}								\
	_m;								\
})

/*
 * Run @call (a use of @fn, the real function) with nested set; @fail
 * (errno ENOSYS) if there is no real function.
 */
#define WRAP(type, name, call, fail) ({					\
	type *fn = REAL(type, name);					\
	__typeof__(call) _r = (fail);					\
	if (fn) {							\
		nested++;						\
		_r = (call);						\
		nested--;						\
	}								\
	_r;								\
})

#define DEFINE_OPEN(name)						\
int name(const char *path, int flags, ...)				\
{									\
	mode_t mode = OPEN_MODE(flags, flags);				\
	return opened(WRAP(open_fn, name, fn(path, flags, mode), -1), path, flags); \
}

#define DEFINE_OPENAT(name)						\
int name(int dirfd, const char *path, int flags, ...)			\
{									\
	mode_t mode = OPEN_MODE(flags, flags);				\
	return opened(WRAP(openat_fn, name, fn(dirfd, path, flags, mode), -1), \
		      path, flags);					\
}

/* The _FORTIFY_SOURCE entry points: no mode (O_CREAT goes to open()). */
#define DEFINE_OPEN_2(name)						\
int name(const char *path, int flags)					\
{									\
	return opened(WRAP(open2_fn, name, fn(path, flags), -1), path, flags); \
}

#define DEFINE_OPENAT_2(name)						\
int name(int dirfd, const char *path, int flags)			\
{									\
	return opened(WRAP(openat2_fn, name, fn(dirfd, path, flags), -1), path, flags); \
}

#define DEFINE_FOPEN(name)						\
FILE *name(const char *path, const char *mode)				\
{									\
	FILE *f = WRAP(fopen_fn, name, fn(path, mode), NULL);		\
	int err;							\
									\
	if (!f)								\
		return NULL;						\
	err = stream_on(fileno(f), path, mode_reads_only(mode));	\
	if (!err)							\
		return f;						\
	fclose(f);							\
	errno = err;							\
	return NULL;							\
}

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

DEFINE_OPEN(open)
DEFINE_OPEN(open64)
DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)
DEFINE_OPEN_2(__open_2)
DEFINE_OPEN_2(__open64_2)
DEFINE_OPENAT_2(__openat_2)
DEFINE_OPENAT_2(__openat64_2)
DEFINE_FOPEN(fopen)
DEFINE_FOPEN(fopen64)
