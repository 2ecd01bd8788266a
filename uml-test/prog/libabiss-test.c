// SPDX-License-Identifier: GPL-2.0
/*
 * libabiss-test - libabiss (abiss_fopen() ... abiss_fclose()) on a real
 * ABISS kernel, with a real abissd.
 *
 * Runs in the uml-test guest (kselftest harness, TAP output).  Reads
 * $ABISS_TEST_FILE, a test-pattern file (rdrt --create, seed
 * $ABISS_TEST_SEED) of at least 8 MiB on a file system that carries
 * streams.  Each fixture starts abissd (from PATH) with the capacity it
 * needs, or none, and stops it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <abiss.h>

#include "kselftest_harness.h"
#include "pattern.h"
#include "util.h"

#define RATE		2000000		/* 2 MB/s */
#define BUFFER		(2 << 20)	/* one second at RATE */
#define STATUS_FILE	"/tmp/libabiss-test.status"

static const char *test_file(void)
{
	const char *f = getenv("ABISS_TEST_FILE");

	return f ? f : "/tmp/libabiss-test.dat";
}

static uint64_t test_seed(void)
{
	const char *s = getenv("ABISS_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : 0;
}

static uint64_t file_size(void)
{
	struct stat sb;

	return stat(test_file(), &sb) ? 0 : (uint64_t)sb.st_size;
}

/* abissd in the foreground with @capacity; its pid, or -1. */
static pid_t abissd_start(const char *capacity)
{
	pid_t pid;
	int i;

	unlink(STATUS_FILE);
	pid = fork();
	if (pid == 0) {
		if (!freopen("/tmp/libabiss-test.abissd.log", "w", stderr))
			_exit(127);
		execlp("abissd", "abissd", "-F", "-C", capacity, "-p", "/tmp/libabiss-test.pid",
		       "-s", STATUS_FILE, (char *)NULL);
		_exit(127);
	}
	for (i = 0; pid > 0 && i < 50; i++) {
		if (access(STATUS_FILE, F_OK) == 0)
			return pid;
		usleep(100000);
	}
	return -1;
}

static void abissd_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* Read @len bytes with @item-sized items and check them against the pattern. */
static int read_check(ABISS_FILE *f, size_t item, size_t len)
{
	static unsigned char buf[1 << 20];
	off_t at = abiss_ftell(f);
	size_t n = abiss_fread(buf, item, len / item, f);

	if (n != len / item)
		return -1;
	return pattern_check(buf, (uint64_t)at, n * item, test_seed()) < 0 ? 0 : -1;
}

FIXTURE(admitted) {
	pid_t abissd;
	ABISS_FILE *f;
};

FIXTURE_SETUP(admitted)
{
	ASSERT_LE(8 << 20, file_size());
	self->abissd = abissd_start("20MB");
	ASSERT_LT(0, self->abissd);
	self->f = abiss_fopen(test_file(), "rb", RATE, BUFFER);
	ASSERT_NE(NULL, self->f) TH_LOG("abiss_fopen: %s", abiss_strerror(errno));
}

FIXTURE_TEARDOWN(admitted)
{
	if (self->f)
		EXPECT_EQ(0, abiss_fclose(self->f));
	abissd_stop(self->abissd);
}

/* The whole file at 2 MB/s in odd-sized reads: every byte right, no miss. */
TEST_F(admitted, paced_read_verifies_without_misses)
{
	uint64_t size = file_size(), done = 0, start = now_ns();
	struct abiss_status st;
	size_t chunk = 100000;	/* not a multiple of the read unit */
	static unsigned char buf[100000];
	size_t n;

	ASSERT_EQ(0, abiss_fstatus(self->f, &st));
	EXPECT_TRUE(!!(st.flags & ABISS_STATUS_ACTIVE));
	EXPECT_EQ(RATE, st.rate);
	EXPECT_EQ(BUFFER, st.buffer);
	while (!abiss_feof(self->f)) {
		sleep_until(start + muldiv64(done, NSEC_PER_SEC, RATE));
		n = abiss_fread(buf, 1, chunk, self->f);
		ASSERT_EQ(-1, pattern_check(buf, done, n, test_seed()))
			TH_LOG("data mismatch near offset %llu", (unsigned long long)done);
		done += n;
		if (n < chunk)
			break;
	}
	EXPECT_EQ(size, done);
	EXPECT_TRUE(abiss_feof(self->f));
	EXPECT_FALSE(abiss_ferror(self->f));
	EXPECT_EQ((off_t)size, abiss_ftell(self->f));
	EXPECT_EQ(0, abiss_fread(buf, 1, 1, self->f));	/* end of file sticks */
	ASSERT_EQ(0, abiss_fstatus(self->f, &st));
	EXPECT_EQ(0, st.misses);
	EXPECT_EQ(size, st.position);
	EXPECT_EQ(size, st.delivered);
}

TEST_F(admitted, fseek_moves_the_stream)
{
	uint64_t size = file_size();
	struct abiss_status st;
	char small[16];

	ASSERT_EQ(0, abiss_fseek(self->f, 3 << 20, SEEK_SET));
	EXPECT_EQ(3 << 20, abiss_ftell(self->f));
	ASSERT_EQ(0, abiss_fstatus(self->f, &st));
	EXPECT_EQ(3 << 20, st.position);	/* the kernel knows at once */
	EXPECT_EQ(0, read_check(self->f, 1, 65536));
	EXPECT_EQ(0, abiss_fseek(self->f, -1000, SEEK_CUR));
	EXPECT_EQ((3 << 20) + 65536 - 1000, abiss_ftell(self->f));
	EXPECT_EQ(0, read_check(self->f, 4, 4000));
	EXPECT_EQ(0, abiss_fseek(self->f, -10, SEEK_END));
	EXPECT_EQ((off_t)size - 10, abiss_ftell(self->f));
	EXPECT_EQ(0, read_check(self->f, 5, 10));
	EXPECT_EQ(0, abiss_fseek(self->f, -10, SEEK_END));
	EXPECT_EQ(3, abiss_fread(small, 3, 4, self->f));	/* 3 whole items */
	EXPECT_TRUE(abiss_feof(self->f));
	EXPECT_EQ((off_t)size, abiss_ftell(self->f));
	EXPECT_EQ(0, abiss_fread(small, 0, 1, self->f));	/* nothing to read */
	EXPECT_EQ(0, abiss_fread(small, 1, 0, self->f));
	EXPECT_EQ(0, abiss_fread(small, SIZE_MAX, 2, self->f));
	EXPECT_EQ(EOVERFLOW, errno);
	EXPECT_TRUE(abiss_ferror(self->f));
	abiss_clearerr(self->f);
	EXPECT_FALSE(abiss_ferror(self->f));
	EXPECT_FALSE(abiss_feof(self->f));
	EXPECT_EQ(0, abiss_fseek(self->f, -10, SEEK_END));
	EXPECT_EQ(0, abiss_fseek(self->f, 0, SEEK_SET));	/* clears the end of file */
	EXPECT_FALSE(abiss_feof(self->f));
	EXPECT_EQ(0, read_check(self->f, 1, 1 << 20));
	ASSERT_EQ(0, abiss_fstatus(self->f, &st));
	EXPECT_EQ(1 << 20, st.position);
	EXPECT_EQ(-1, abiss_fseek(self->f, -1, SEEK_SET));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, abiss_fseek(self->f, -(2 << 20), SEEK_CUR));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, abiss_fseek(self->f, 0, 42));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(1 << 20, abiss_ftell(self->f));	/* failed seeks moved nothing */
}

TEST_F(admitted, second_start_is_busy)
{
	EXPECT_EQ(-1, abiss_start(abiss_fileno(self->f), RATE, BUFFER, 0, 0));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_STREQ("a stream is already running on this file", abiss_strerror(errno));
}

/* A stream stopped through the descriptor: fclose still succeeds. */
TEST_F(admitted, stopped_stream_closes)
{
	struct abiss_status st;
	int fd = abiss_fileno(self->f);

	ASSERT_EQ(0, abiss_status(fd, &st));
	EXPECT_EQ(0, abiss_position(fd, 4096));
	EXPECT_EQ(0, abiss_stop(fd));
	EXPECT_EQ(-1, abiss_fstatus(self->f, &st));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, abiss_position(fd, 4096));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, abiss_stop(fd));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(0, abiss_fclose(self->f));
	self->f = NULL;
}

/* Opens that must fail, with abissd as the fixture's variant runs it. */
FIXTURE(refused) {
	pid_t abissd;
};

FIXTURE_VARIANT(refused) {
	const char *capacity;	/* NULL: no abissd */
	int error;
};

FIXTURE_VARIANT_ADD(refused, no_daemon) {
	.capacity = NULL,
	.error = ESRCH,
};

FIXTURE_VARIANT_ADD(refused, over_capacity) {
	.capacity = "1MB",
	.error = ENOSPC,
};

FIXTURE_SETUP(refused)
{
	self->abissd = variant->capacity ? abissd_start(variant->capacity) : 0;
	ASSERT_LE(0, self->abissd);
}

FIXTURE_TEARDOWN(refused)
{
	abissd_stop(self->abissd);
}

TEST_F(refused, fopen_fails_with_the_kernels_errno)
{
	int before = dup(0), after;

	errno = 0;
	EXPECT_EQ(NULL, abiss_fopen(test_file(), "r", RATE, BUFFER));
	EXPECT_EQ(variant->error, errno);
	after = dup(0);
	EXPECT_EQ(before + 1, after);	/* the file was closed */
	close(before);
	close(after);
}

TEST_F(refused, bad_modes_and_arguments_are_einval)
{
	static const char *const modes[] = { "w", "r+", "a", "", "rw", "rb+", "wb" };
	uint64_t size = file_size();
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		errno = 0;
		EXPECT_EQ(NULL, abiss_fopen(test_file(), modes[i], RATE, BUFFER));
		EXPECT_EQ(EINVAL, errno) TH_LOG("mode '%s'", modes[i]);
	}
	EXPECT_EQ(size, file_size());	/* "w" truncated nothing */
	EXPECT_EQ(NULL, abiss_fopen(test_file(), "r", 0, BUFFER));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, abiss_fopen(NULL, "r", RATE, BUFFER));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, abiss_fopen("/nonexistent", "r", RATE, BUFFER));
	EXPECT_EQ(ENOENT, errno);
}

TEST_HARNESS_MAIN
