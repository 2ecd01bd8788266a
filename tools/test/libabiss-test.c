// SPDX-License-Identifier: GPL-2.0
/*
 * libabiss-test FILE - libabiss's error paths on a kernel without ABISS:
 * FILE is a plain file, on which every ABISS ioctl fails with ENOTTY.
 * Linked with libabiss.so.1.  Prints 'ok - ...' / 'not ok - ...: why' per
 * check (tools/test/libabiss counts them); exits 1 if one failed.
 *
 * libabiss-test --opens FILE - for abiss-run's shim (tools/test/abiss-run):
 * opens FILE for reading with each open function of the C library, errno
 * set to E2BIG before, and prints one line for each: "NAME opened, errno
 * kept" (or "changed to ..."), or "NAME failed: ERRNO-NAME".  It first
 * changes the ABISS_RUN_* variables, which the shim must not see.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <abiss/abiss.h>

static int failed;

/* check(DESC, COND): one line for the test runner. */
#define check(desc, cond) do {						\
	int _e = errno;							\
	if (cond) {							\
		printf("ok - libabiss: %s\n", desc);			\
	} else {							\
		printf("not ok - libabiss: %s: %s is false (errno %d, %s)\n", \
		       desc, #cond, _e, strerror(_e));			\
		failed = 1;						\
	}								\
} while (0)

/* The lowest free descriptor: the same before and after means no leak. */
static int next_fd(void)
{
	int fd = dup(0);

	close(fd);
	return fd;
}

static void test_fopen(const char *path)
{
	static const char *const modes[] = { "w", "r+", "a", "", "rw", "rb+", "wb", "br" };
	struct stat before, after;
	int fd = next_fd();
	char desc[64];
	size_t i;

	stat(path, &before);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		errno = 0;
		snprintf(desc, sizeof(desc), "mode '%s' is EINVAL", modes[i]);
		check(desc, !abiss_fopen(path, modes[i], 1000000, 0) && errno == EINVAL);
	}
	stat(path, &after);
	check("mode 'w' truncated nothing", before.st_size == after.st_size && after.st_size > 0);
	errno = 0;
	check("NULL path is EINVAL", !abiss_fopen(NULL, "r", 1000000, 0) && errno == EINVAL);
	errno = 0;
	check("NULL mode is EINVAL", !abiss_fopen(path, NULL, 1000000, 0) && errno == EINVAL);
	errno = 0;
	check("rate 0 is EINVAL", !abiss_fopen(path, "r", 0, 0) && errno == EINVAL);
	errno = 0;
	check("a missing file is ENOENT", !abiss_fopen("/nonexistent/f", "r", 1000000, 0) &&
	      errno == ENOENT);
	errno = 0;
	check("a plain file is ENOTTY", !abiss_fopen(path, "r", 1000000, 0) && errno == ENOTTY);
	errno = 0;
	check("\"rb\" gets as far as the ioctl", !abiss_fopen(path, "rb", 1000000, 1 << 20) &&
	      errno == ENOTTY);
	check("a refused abiss_fopen() leaks no descriptor", next_fd() == fd);
}

static void test_null_file(void)
{
	struct abiss_status st;
	char buf[16];

	errno = 0;
	check("abiss_fread(NULL file) is 0, EINVAL",
	      abiss_fread(buf, 1, sizeof(buf), NULL) == 0 && errno == EINVAL);
	errno = 0;
	check("abiss_fseek(NULL) is EINVAL", abiss_fseek(NULL, 0, SEEK_SET) == -1 && errno == EINVAL);
	errno = 0;
	check("abiss_ftell(NULL) is EINVAL", abiss_ftell(NULL) == -1 && errno == EINVAL);
	errno = 0;
	check("abiss_fileno(NULL) is EBADF", abiss_fileno(NULL) == -1 && errno == EBADF);
	errno = 0;
	check("abiss_fstatus(NULL) is EINVAL", abiss_fstatus(NULL, &st) == -1 && errno == EINVAL);
	errno = 0;
	check("abiss_fclose(NULL) is EOF, EINVAL", abiss_fclose(NULL) == EOF && errno == EINVAL);
	check("abiss_feof(NULL) and abiss_ferror(NULL) are 0",
	      abiss_feof(NULL) == 0 && abiss_ferror(NULL) == 0);
	abiss_clearerr(NULL);
	check("abiss_clearerr(NULL) does nothing", 1);
}

static void test_ioctls(const char *path)
{
	struct abiss_status st;
	int fd = open(path, O_RDONLY);

	errno = 0;
	check("abiss_start on a plain file is ENOTTY",
	      abiss_start(fd, 1000000, 1 << 20, 0, 0) == -1 && errno == ENOTTY);
	errno = 0;
	check("abiss_stop on a plain file is ENOTTY", abiss_stop(fd) == -1 && errno == ENOTTY);
	errno = 0;
	check("abiss_position on a plain file is ENOTTY",
	      abiss_position(fd, 4096) == -1 && errno == ENOTTY);
	errno = 0;
	check("abiss_status on a plain file is ENOTTY",
	      abiss_status(fd, &st) == -1 && errno == ENOTTY);
	errno = 0;
	check("abiss_status with a NULL status is EINVAL",
	      abiss_status(fd, NULL) == -1 && errno == EINVAL);
	close(fd);
	errno = 0;
	check("abiss_start on a closed descriptor is EBADF",
	      abiss_start(fd, 1000000, 1 << 20, 0, 0) == -1 && errno == EBADF);
}

static void test_strings(void)
{
	static const struct {
		int e;
		const char *text;
	} texts[] = {
		{ ESRCH, "no admission daemon is running" },
		{ ENOSPC, "the device's capacity is reserved" },
		{ EDQUOT, "over your rate, stream or buffer limit" },
		{ ENOMEM, "the buffer is over the locked-memory limit, or out of memory" },
		{ EACCES, "not allowed to stream" },
		{ EPERM, "not allowed to stream" },
		{ ETIMEDOUT, "abissd did not answer" },
		{ EBUSY, "a stream is already running on this file" },
		{ ECANCELED, "the stream was stopped before it started" },
		{ ENOTTY, "this file system does not support ABISS" },
		{ ENODATA, "no stream on this file" },
		{ ENOENT, "No such file or directory" },	/* strerror's */
	};
	static const char *const reasons[] = {
		"no reason", "stopped", "file closed", "file truncated",
		"file system unmounted", "refill error", "stopped by abissd",
	};
	char desc[96];
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		snprintf(desc, sizeof(desc), "abiss_strerror(%s)", strerrorname_np(texts[i].e));
		check(desc, !strcmp(abiss_strerror(texts[i].e), texts[i].text));
	}
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		snprintf(desc, sizeof(desc), "abiss_end_reason(%zu) is '%s'", i, reasons[i]);
		check(desc, !strcmp(abiss_end_reason((uint32_t)i), reasons[i]));
	}
	check("abiss_end_reason(99) is 'unknown reason'",
	      !strcmp(abiss_end_reason(99), "unknown reason"));
}

int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

static void opened(const char *name, int fd)
{
	int e = errno;

	if (fd < 0)
		printf("%s failed: %s\n", name, strerrorname_np(e));
	else if (e == E2BIG)
		printf("%s opened, errno kept\n", name);
	else
		printf("%s opened, errno changed to %s\n", name, strerrorname_np(e));
	if (fd >= 0)
		close(fd);
	errno = E2BIG;
}

static void fopened(const char *name, FILE *f)
{
	int e = errno, fd = f ? dup(fileno(f)) : -1;

	if (f)
		fclose(f);
	errno = e;
	opened(name, fd);
}

static int test_opens(const char *path)
{
	setenv("ABISS_RUN_MATCH", "*.none", 1);
	setenv("ABISS_RUN_STRICT", "1", 1);
	errno = E2BIG;
	opened("open", open(path, O_RDONLY));
	opened("open64", open64(path, O_RDONLY));
	opened("openat", openat(AT_FDCWD, path, O_RDONLY));
	opened("openat64", openat64(AT_FDCWD, path, O_RDONLY));
	opened("__open_2", __open_2(path, O_RDONLY));
	opened("__open64_2", __open64_2(path, O_RDONLY));
	opened("__openat_2", __openat_2(AT_FDCWD, path, O_RDONLY));
	opened("__openat64_2", __openat64_2(AT_FDCWD, path, O_RDONLY));
	fopened("fopen", fopen(path, "r"));
	fopened("fopen64", fopen64(path, "re"));
	fopened("fopen for writing", fopen(path, "a"));
	opened("open for writing", open(path, O_WRONLY));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--opens"))
		return test_opens(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	test_fopen(argv[1]);
	test_null_file();
	test_ioctls(argv[1]);
	test_strings();
	return failed;
}
