// SPDX-License-Identifier: GPL-2.0
/*
 * abiss-api - the ABISS ioctls and /dev/abiss, every error path included.
 *
 * Runs in the uml-test guest (kselftest harness, TAP output).  The test
 * files live in $ABISS_TEST_DIR (a FAT, VFAT or ext3 mount); each test
 * plays abissd itself with a thread on /dev/abiss when it needs one.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/abiss.h>
#include <linux/falloc.h>
#include <linux/magic.h>

#include "kselftest_harness.h"

#define FILE_SIZE	(4 << 20)

static const char *test_dir(void)
{
	const char *d = getenv("ABISS_TEST_DIR");

	return d ? d : "/tmp";
}

/* A file of FILE_SIZE bytes in the test folder, opened as asked. */
static int make_file(const char *name, int flags)
{
	static char buf[65536];
	char path[512];
	int fd, i;

	snprintf(path, sizeof(path), "%s/%s", test_dir(), name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	for (i = 0; i < FILE_SIZE / (int)sizeof(buf); i++) {
		memset(buf, i, sizeof(buf));
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return -1;
	}
	close(fd);
	return open(path, flags);
}

static struct abiss_start start_args(void)
{
	struct abiss_start a = {
		.size = sizeof(a),
		.rate = 2000000,
		.buffer = 1 << 20,
		.read_unit = 65536,
	};
	return a;
}

static int start(int fd, struct abiss_start *a)
{
	return ioctl(fd, ABISS_IOC_START, a) ? errno : 0;
}

/*
 * A stand-in for abissd: answers every request with @verdict and @error
 * (verdict 0: never answers), and counts what it reads.  While @hold is
 * set it keeps its answer to the last request (@last_id) back.
 */
struct daemon {
	int fd;
	int verdict;
	int error;
	pthread_t thread;
	volatile int requests, ends, lives;
	volatile unsigned int last_reason;
	volatile __u64 last_id;
	volatile int hold;
	volatile int stop;
};

static void *daemon_main(void *arg)
{
	struct daemon *d = arg;
	struct abiss_msg *mp = malloc(ABISS_MSG_MAX_SIZE);
	struct pollfd p = { .fd = d->fd, .events = POLLIN };
	struct abiss_reply held = { 0 };
	ssize_t n;

	if (!mp)
		return NULL;
	while (!d->stop) {
		struct abiss_msg m;

		if (held.size && !d->hold) {
			if (write(d->fd, &held, sizeof(held)) != sizeof(held))
				perror("abiss-api: held reply");
			held.size = 0;
		}
		if (poll(&p, 1, 10) <= 0)
			continue;
		n = read(d->fd, mp, ABISS_MSG_MAX_SIZE);
		if (n < (ssize_t)sizeof(m) || n != mp->size)
			continue;
		m = *mp;
		if (m.type == ABISS_MSG_END) {
			d->last_reason = m.reason;
			d->ends++;
		} else if (m.type == ABISS_MSG_LIVE) {
			d->lives++;
		} else if (m.type == ABISS_MSG_REQUEST) {
			struct abiss_reply r = {
				.size = sizeof(r), .id = m.id,
				.verdict = d->verdict, .error = d->error,
			};

			d->last_id = m.id;
			d->requests++;
			if (d->hold)
				held = r;
			else if (d->verdict && write(d->fd, &r, sizeof(r)) != sizeof(r))
				perror("abiss-api: reply");
		}
	}
	free(mp);
	return NULL;
}

static int daemon_start(struct daemon *d, int verdict, int error)
{
	memset(d, 0, sizeof(*d));
	d->verdict = verdict;
	d->error = error;
	d->fd = open("/dev/abiss", O_RDWR | O_NONBLOCK);
	if (d->fd < 0)
		return -1;
	return pthread_create(&d->thread, NULL, daemon_main, d);
}

static void daemon_stop(struct daemon *d)
{
	d->stop = 1;
	pthread_join(d->thread, NULL);
	close(d->fd);
}

/*
 * Wait for a daemon counter to reach a value: the kernel tells the daemon
 * in its own time.  Ten seconds at most, a bound only for when it never does.
 */
static int wait_for(volatile int *counter, int value)
{
	int i;

	for (i = 0; i < 1000 && *counter < value; i++)
		usleep(10000);
	return *counter >= value;
}

FIXTURE(stream) {
	int fd;
	struct daemon d;
};

FIXTURE_SETUP(stream)
{
	self->fd = make_file("api-stream.dat", O_RDONLY);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, daemon_start(&self->d, ABISS_VERDICT_ACCEPT, 0));
}

FIXTURE_TEARDOWN(stream)
{
	close(self->fd);
	daemon_stop(&self->d);
}

TEST_F(stream, starts_fills_and_stops)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	char buf[65536];

	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_TRUE(!!(st.flags & ABISS_STATUS_ACTIVE));
	EXPECT_EQ(a.rate, st.rate);
	EXPECT_EQ(a.buffer, st.buffer);
	EXPECT_EQ(a.buffer, st.buffered);	/* full when START returns */
	EXPECT_EQ(1, self->d.requests);
	ASSERT_EQ((ssize_t)sizeof(buf), read(self->fd, buf, sizeof(buf)));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(sizeof(buf), st.position);
	EXPECT_EQ(sizeof(buf), st.delivered);
	EXPECT_EQ(0, st.misses);
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
	EXPECT_TRUE(wait_for(&self->d.ends, 1));
	EXPECT_EQ(ABISS_END_STOPPED, self->d.last_reason);
	EXPECT_EQ(-1, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(ENODATA, errno);
}

/*
 * How many of the first 64 pages of @fd's file are in the page cache
 * after a one-page read at 0 from a cold cache: 1 without readahead
 * (POSIX_FADV_RANDOM), more with it.
 */
static int pages_read_for_one(int fd)
{
	unsigned char vec[64];
	char buf[4096];
	int i, n = 0;
	void *map;

	if (fsync(fd) || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) ||
	    pread(fd, buf, sizeof(buf), 0) != sizeof(buf))
		return -1;
	map = mmap(NULL, sizeof(vec) * 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	if (mincore(map, sizeof(vec) * 4096, vec))
		n = -1;
	for (i = 0; n >= 0 && i < (int)sizeof(vec); i++)
		n += vec[i] & 1;
	munmap(map, sizeof(vec) * 4096);
	return n;
}

/*
 * A stream turns its file's readahead off while it runs; when it ends, the
 * file gets back what the application had set: POSIX_FADV_RANDOM stays,
 * and a file that had readahead has it again.
 */
TEST_F(stream, end_restores_readahead)
{
	struct abiss_start a = start_args();
	int fd2 = make_file("api-stream2.dat", O_RDONLY);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_RANDOM));
	ASSERT_EQ(1, pages_read_for_one(self->fd));
	ASSERT_LT(1, pages_read_for_one(fd2));
	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
	ASSERT_EQ(0, start(fd2, &a));
	ASSERT_EQ(0, ioctl(fd2, ABISS_IOC_STOP));
	EXPECT_EQ(1, pages_read_for_one(self->fd));
	EXPECT_LT(1, pages_read_for_one(fd2));
	close(fd2);
}

TEST_F(stream, second_start_is_busy)
{
	struct abiss_start a = start_args();

	ASSERT_EQ(0, start(self->fd, &a));
	EXPECT_EQ(EBUSY, start(self->fd, &a));
}

TEST_F(stream, close_ends_it)
{
	struct abiss_start a = start_args();
	int fd2 = dup(self->fd);

	ASSERT_EQ(0, start(self->fd, &a));
	close(self->fd);	/* the dup keeps the file open */
	usleep(100000);
	EXPECT_EQ(0, self->d.ends);
	close(fd2);
	EXPECT_TRUE(wait_for(&self->d.ends, 1));
	EXPECT_EQ(ABISS_END_CLOSED, self->d.last_reason);
	self->fd = open("/dev/null", O_RDONLY);
}

TEST_F(stream, truncate_to_zero_ends_it)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	char path[512];

	ASSERT_EQ(0, start(self->fd, &a));
	snprintf(path, sizeof(path), "%s/api-stream.dat", test_dir());
	ASSERT_EQ(0, truncate(path, 0));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_TRUE(!!(st.flags & ABISS_STATUS_ENDED));
	EXPECT_EQ(ABISS_END_TRUNCATED, st.end_reason);
	EXPECT_TRUE(wait_for(&self->d.ends, 1));
}

TEST_F(stream, truncate_shrinks_the_buffer)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	char path[512];

	ASSERT_EQ(0, start(self->fd, &a));
	snprintf(path, sizeof(path), "%s/api-stream.dat", test_dir());
	ASSERT_EQ(0, truncate(path, 100000));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_TRUE(!!(st.flags & ABISS_STATUS_ACTIVE));
	EXPECT_GE(100000, st.buffered);
}

TEST_F(stream, mmap_position)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	__u64 pos = 3 << 20;

	a.flags = ABISS_START_MMAP;
	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_POSITION, &pos));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(pos, st.position);
}

TEST_F(stream, daemon_reply_errors)
{
	struct abiss_reply r = { .size = sizeof(r), .verdict = ABISS_VERDICT_ACCEPT,
				 .id = 987654321 };
	int fd2;

	EXPECT_EQ(-1, write(self->d.fd, &r, sizeof(r)));	/* no such request */
	EXPECT_EQ(ENOENT, errno);
	r.verdict = 7;
	EXPECT_EQ(-1, write(self->d.fd, &r, sizeof(r)));
	EXPECT_EQ(EINVAL, errno);
	r.verdict = ABISS_VERDICT_DENY;
	r.error = EIO;				/* not a denial errno */
	EXPECT_EQ(-1, write(self->d.fd, &r, sizeof(r)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(self->d.fd, &r, 8));	/* short */
	EXPECT_EQ(EINVAL, errno);
	fd2 = open("/dev/abiss", O_RDWR);		/* one daemon at a time */
	EXPECT_EQ(-1, fd2);
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(stream, daemon_restart_sees_live_streams)
{
	struct abiss_start a = start_args();

	ASSERT_EQ(0, start(self->fd, &a));
	daemon_stop(&self->d);
	ASSERT_EQ(0, daemon_start(&self->d, ABISS_VERDICT_ACCEPT, 0));
	EXPECT_TRUE(wait_for(&self->d.lives, 1));
}

/* START in a thread of its own, its errno in @err. */
struct starter {
	pthread_t thread;
	int fd;
	int err;
};

static void *starter_main(void *arg)
{
	struct starter *st = arg;
	struct abiss_start a = start_args();

	st->err = start(st->fd, &a);
	return NULL;
}

/*
 * STOP on a shared descriptor while START waits for abissd: START fails
 * with ECANCELED and the stream goes once, whatever abissd answers; an
 * accepted reservation is given back.  Then the file can stream again.
 */
static void stop_while_admitting(struct __test_metadata *_metadata,
				 struct daemon *d, int fd, int verdict,
				 int error, int want)
{
	struct abiss_status st = { .size = sizeof(st) };
	struct abiss_start a = start_args();
	struct starter t = { .fd = fd };

	d->verdict = verdict;
	d->error = error;
	d->hold = 1;
	ASSERT_EQ(0, pthread_create(&t.thread, NULL, starter_main, &t));
	ASSERT_TRUE(wait_for(&d->requests, 1));
	EXPECT_EQ(0, ioctl(fd, ABISS_IOC_STOP));
	d->hold = 0;
	pthread_join(t.thread, NULL);
	EXPECT_EQ(want, t.err);
	if (verdict == ABISS_VERDICT_ACCEPT)
		EXPECT_TRUE(wait_for(&d->ends, 1));
	usleep(100000);
	EXPECT_EQ(verdict == ABISS_VERDICT_ACCEPT, d->ends);
	EXPECT_EQ(-1, ioctl(fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(ENODATA, errno);
	d->verdict = ABISS_VERDICT_ACCEPT;
	EXPECT_EQ(0, start(fd, &a));
	EXPECT_EQ(0, ioctl(fd, ABISS_IOC_STOP));
}

TEST_F(stream, stop_while_admitting_accepted)
{
	stop_while_admitting(_metadata, &self->d, self->fd,
			     ABISS_VERDICT_ACCEPT, 0, ECANCELED);
}

TEST_F(stream, stop_while_admitting_denied)
{
	stop_while_admitting(_metadata, &self->d, self->fd,
			     ABISS_VERDICT_DENY, ENOSPC, ENOSPC);
}

/*
 * abissd stops a stream it has not answered for yet, then accepts it:
 * START fails with ECANCELED and abissd hears that the stream ended, so
 * it gets its reservation back.
 */
TEST_F(stream, daemon_stop_while_admitting)
{
	struct abiss_status st = { .size = sizeof(st) };
	struct starter t = { .fd = self->fd };
	__u64 id;

	self->d.hold = 1;
	ASSERT_EQ(0, pthread_create(&t.thread, NULL, starter_main, &t));
	ASSERT_TRUE(wait_for(&self->d.requests, 1));
	id = self->d.last_id;
	EXPECT_EQ(0, ioctl(self->d.fd, ABISS_DAEMON_STOP, &id));
	self->d.hold = 0;
	pthread_join(t.thread, NULL);
	EXPECT_EQ(ECANCELED, t.err);
	EXPECT_TRUE(wait_for(&self->d.ends, 1));
	EXPECT_EQ(ABISS_END_ADMIN, self->d.last_reason);
	EXPECT_EQ(-1, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(ENODATA, errno);
}

TEST_F(stream, daemon_stop_by_id)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	__u64 id;

	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	id = st.id;
	ASSERT_EQ(0, ioctl(self->d.fd, ABISS_DAEMON_STOP, &id));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(ABISS_END_ADMIN, st.end_reason);
	id = 987654321;
	EXPECT_EQ(-1, ioctl(self->d.fd, ABISS_DAEMON_STOP, &id));
	EXPECT_EQ(ENOENT, errno);
}

/* Spin (yielding) until a daemon counter passes @seen; 10 s at most. */
static int spin_for(volatile int *counter, int seen)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (*counter <= seen) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			return 0;
	}
	return 1;
}

#define TRUNC_ROUNDS	24
#define TRUNC_SIZE	65536

/*
 * A truncate while START maps the file: the location map START publishes
 * must not keep the blocks the truncate freed.  In each round the file is
 * written past its first 64 KiB, then truncated a little later after
 * abissd's answer (START maps the file then), START let finish, the file
 * extended again (a hole on ext3, zeros on FAT) and written back, its
 * cache dropped, and its second half read back through another
 * descriptor: zeros, never the blocks it had.
 */
FIXTURE(trunc) {
	int wfd;
	char path[512];
	struct daemon d;
};

FIXTURE_SETUP(trunc)
{
	int fd = make_file("api-trunc.dat", O_RDONLY);

	ASSERT_LE(0, fd);
	close(fd);
	snprintf(self->path, sizeof(self->path), "%s/api-trunc.dat", test_dir());
	self->wfd = open(self->path, O_RDWR);
	ASSERT_LE(0, self->wfd);
	ASSERT_EQ(0, daemon_start(&self->d, ABISS_VERDICT_ACCEPT, 0));
}

FIXTURE_TEARDOWN(trunc)
{
	close(self->wfd);
	daemon_stop(&self->d);
}

/* Each round writes 4 MiB and reads 2 MiB on a slow guest: a bound for a hang. */
TEST_F_TIMEOUT(trunc, truncate_while_mapping, 300)
{
	static char buf[65536], zero[65536];
	int round, stale = 0, stale_round = -1;
	off_t off;

	for (round = 0; round < TRUNC_ROUNDS; round++) {
		struct starter t = { .fd = open(self->path, O_RDONLY) };
		int seen = self->d.requests;

		ASSERT_LE(0, t.fd);
		memset(buf, round + 1, sizeof(buf));
		for (off = TRUNC_SIZE; off < FILE_SIZE; off += sizeof(buf))
			ASSERT_EQ((ssize_t)sizeof(buf),
				  pwrite(self->wfd, buf, sizeof(buf), off));
		ASSERT_EQ(0, fsync(self->wfd));
		ASSERT_EQ(0, pthread_create(&t.thread, NULL, starter_main, &t));
		ASSERT_TRUE(spin_for(&self->d.requests, seen));
		usleep(round * round * 50);	/* 0 to 26 ms */
		ASSERT_EQ(0, ftruncate(self->wfd, TRUNC_SIZE));
		pthread_join(t.thread, NULL);
		EXPECT_EQ(0, t.err);
		ASSERT_EQ(0, ftruncate(self->wfd, FILE_SIZE));
		ASSERT_EQ(0, fsync(self->wfd));
		ASSERT_EQ(0, posix_fadvise(self->wfd, FILE_SIZE / 2, FILE_SIZE / 2,
					   POSIX_FADV_DONTNEED));
		for (off = FILE_SIZE / 2; off < FILE_SIZE; off += sizeof(buf)) {
			ASSERT_EQ((ssize_t)sizeof(buf),
				  pread(self->wfd, buf, sizeof(buf), off));
			if (memcmp(buf, zero, sizeof(buf))) {
				stale++;
				stale_round = round;
			}
		}
		ioctl(t.fd, ABISS_IOC_STOP);
		close(t.fd);
	}
	if (stale)
		TH_LOG("%d chunks of 64 KiB read old blocks, the last in round %d",
		       stale, stale_round);
	EXPECT_EQ(0, stale);
}

#define SPARSE_SIZE	(1ULL << 40)
#define SPARSE_BUFFER	(1 << 20)

/*
 * A stream on a file of 1 TiB (ext3 only: FAT has no holes) that is one
 * hole but for its last 64 KiB.  Mapping it a block at a time takes START
 * 2^28 lookups, hours here; the file system's lookup of runs and holes
 * takes a few.  The buffer at the end of the file holds the data and the
 * zeros before it.
 */
FIXTURE(sparse) {
	int fd;
	char path[512];
	struct daemon d;
};

FIXTURE_SETUP(sparse)
{
	static char buf[65536];
	struct statfs sfs;
	int wfd;

	snprintf(self->path, sizeof(self->path), "%s/api-sparse.dat", test_dir());
	self->fd = -1;
	ASSERT_EQ(0, statfs(test_dir(), &sfs));
	/* The test skips itself: a SKIP() here would not stop it. */
	if (sfs.f_type != EXT4_SUPER_MAGIC)
		return;
	wfd = open(self->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, wfd);
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ((ssize_t)sizeof(buf),
		  pwrite(wfd, buf, sizeof(buf), SPARSE_SIZE - sizeof(buf)));
	ASSERT_EQ(0, fsync(wfd));
	ASSERT_EQ(0, posix_fadvise(wfd, 0, 0, POSIX_FADV_DONTNEED));
	close(wfd);
	self->fd = open(self->path, O_RDONLY);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, daemon_start(&self->d, ABISS_VERDICT_ACCEPT, 0));
}

FIXTURE_TEARDOWN(sparse)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	unlink(self->path);
	daemon_stop(&self->d);
}

/* Lookups of 2^28 blocks take hours; the bound is only for that hang. */
TEST_F_TIMEOUT(sparse, huge_file_maps_by_runs, 120)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	static char buf[65536], want[65536];
	off_t off, end = SPARSE_SIZE;

	if (self->fd < 0)
		SKIP(return, "no holes on this file system");
	a.buffer = SPARSE_BUFFER;
	ASSERT_EQ(end - SPARSE_BUFFER, lseek(self->fd, end - SPARSE_BUFFER, SEEK_SET));
	ASSERT_EQ(0, start(self->fd, &a));
	for (off = end - SPARSE_BUFFER; off < end; off += sizeof(buf)) {
		memset(want, off + (off_t)sizeof(buf) == end ? 0x5a : 0, sizeof(want));
		ASSERT_EQ((ssize_t)sizeof(buf), read(self->fd, buf, sizeof(buf)));
		EXPECT_EQ(0, memcmp(buf, want, sizeof(buf)));
	}
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(0, st.misses);
	EXPECT_EQ(SPARSE_BUFFER, st.delivered);
	EXPECT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
}

/*
 * A reader that says it jumped to the end of a stream's file, grown to
 * 1 TiB by a hole after START: one miss.  Counting the 2^28 pages it went
 * past one by one, under RCU, took the guest's CPU for 102 s here; what
 * the buffer holds of them is at most its own size.  The bound is only for
 * that stall.
 */
TEST_F_TIMEOUT(stream, position_past_a_huge_hole, 30)
{
	struct abiss_status st = { .size = sizeof(st) };
	struct abiss_start a = start_args();
	__u64 pos = SPARSE_SIZE - SPARSE_BUFFER;
	struct statfs sfs;
	char path[512];
	int wfd;

	ASSERT_EQ(0, statfs(test_dir(), &sfs));
	if (sfs.f_type != EXT4_SUPER_MAGIC)
		SKIP(return, "no holes on this file system");
	ASSERT_EQ(0, start(self->fd, &a));
	snprintf(path, sizeof(path), "%s/api-stream.dat", test_dir());
	wfd = open(path, O_WRONLY);
	ASSERT_LE(0, wfd);
	ASSERT_EQ(0, ftruncate(wfd, SPARSE_SIZE));
	close(wfd);
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_POSITION, &pos));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(pos, st.position);
	EXPECT_EQ(1, st.misses);
	EXPECT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
}

/* How many of the pages in [@off, @off + @len) of @fd's file are cached. */
static int pages_cached(int fd, off_t off, size_t len)
{
	unsigned char vec[1024];
	size_t i, pages = len / 4096;
	int n = 0;
	void *map;

	if (pages > sizeof(vec))
		return -1;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
	if (map == MAP_FAILED)
		return -1;
	if (mincore(map, len, vec))
		n = -1;
	for (i = 0; n >= 0 && i < pages; i++)
		n += vec[i] & 1;
	munmap(map, len);
	return n;
}

/*
 * A hole punched in a stream's buffer (ext3 only: FAT has no holes): the
 * page cache drops the pages the buffer held, which stay held, out of the
 * page cache, unless a refill lets go of them.  Within a few refills (one
 * comes 0.4 s after START here, the reader idle) the buffer holds the
 * file's pages again, all in the page cache, and the reader gets zeros
 * with no miss: the location map no longer maps the punched blocks.  The
 * 10 s bound is only for when no refill ever does.
 */
TEST_F(stream, punched_buffer_is_held_again)
{
	struct abiss_status st = { .size = sizeof(st) };
	struct abiss_start a = start_args();
	static char buf[65536], zero[65536];
	int i, cached = -1, wfd;
	struct statfs sfs;
	char path[512];
	off_t off;

	ASSERT_EQ(0, statfs(test_dir(), &sfs));
	if (sfs.f_type != EXT4_SUPER_MAGIC)
		SKIP(return, "no holes on this file system");
	snprintf(path, sizeof(path), "%s/api-stream.dat", test_dir());
	wfd = open(path, O_RDWR);
	ASSERT_LE(0, wfd);
	/*
	 * The data on the disk, not only in the page cache: a refill that
	 * still read the punched blocks through a stale location map would
	 * then read it, not zeros (a punch does not write dirty pages back
	 * first from 6.12.y on, so the blocks may still hold zeros).
	 */
	ASSERT_EQ(0, fsync(wfd));
	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(a.buffer / 4096, pages_cached(self->fd, 0, a.buffer));
	ASSERT_EQ(0, fallocate(wfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       0, a.buffer));
	close(wfd);
	for (i = 0; i < 100; i++) {
		cached = pages_cached(self->fd, 0, a.buffer);
		if (cached == (int)(a.buffer / 4096))
			break;
		usleep(100000);
	}
	EXPECT_EQ(a.buffer / 4096, cached);
	for (off = 0; off < a.buffer; off += sizeof(buf)) {
		ASSERT_EQ((ssize_t)sizeof(buf), read(self->fd, buf, sizeof(buf)));
		EXPECT_EQ(0, memcmp(buf, zero, sizeof(buf)));
	}
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(0, st.misses);
	EXPECT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
}

#define TRACEFS	"/sys/kernel/tracing"

/* Write @s to the tracefs file @name; 0 or an errno. */
static int tracefs_write(const char *name, const char *s, int flags)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), TRACEFS "/%s", name);
	fd = open(path, O_WRONLY | flags);
	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = errno;
	close(fd);
	return err;
}

/* Does the trace hold an event of @event for stream @id, then @rest? */
static int traced(const char *trace, const char *event, __u64 id,
		  const char *rest)
{
	char want[128];

	snprintf(want, sizeof(want), "%s: id=%llu %s", event,
		 (unsigned long long)id, rest);
	return strstr(trace, want) != NULL;
}

/*
 * The tracepoints fire for a stream's life: start, its first refill (due,
 * issue, complete: its file was dropped from the page cache), a miss (a
 * position move past the buffer) and its end.
 */
TEST_F(stream, tracepoints)
{
	/* Each event of the stream, and what its line must say. */
	static const char *const events[][2] = {
		{ "abiss_stream_start", "dev=" },
		{ "abiss_refill_due", "disk=" },
		{ "abiss_refill_issue", "index=0 ahead=0" },
		{ "abiss_refill_complete", "lat_ns=" },
		{ "abiss_miss", "pos=0 len=3145728" },
		{ "abiss_stream_end", "reason=stopped" },
	};
	struct abiss_status st = { .size = sizeof(st) };
	struct abiss_start a = start_args();
	__u64 pos = 3 << 20;
	static char trace[1 << 20];
	ssize_t n, len = 0;
	bool all = true;
	unsigned int i;
	int fd;

	if (access(TRACEFS "/events", F_OK))
		ASSERT_EQ(0, mount("tracefs", TRACEFS, "tracefs", 0, NULL));
	ASSERT_EQ(0, tracefs_write("trace", "", O_TRUNC));
	ASSERT_EQ(0, tracefs_write("events/abiss/enable", "1", 0));
	/* Written back and dropped: the first fill reads. */
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_DONTNEED));
	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_POSITION, &pos));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
	ASSERT_EQ(0, tracefs_write("events/abiss/enable", "0", 0));

	fd = open(TRACEFS "/trace", O_RDONLY);
	ASSERT_LE(0, fd);
	while (len < (ssize_t)sizeof(trace) - 1 &&
	       (n = read(fd, trace + len, sizeof(trace) - 1 - len)) > 0)
		len += n;
	close(fd);
	trace[len] = '\0';
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		bool seen = traced(trace, events[i][0], st.id, events[i][1]);

		EXPECT_TRUE(seen) TH_LOG("no %s with %s", events[i][0], events[i][1]);
		all &= seen;
	}
	if (!all || !traced(trace, "abiss_stream_end", st.id, ""))
		TH_LOG("trace: %.2000s", trace);
}

/* Reads completed by the block device (or partition) holding @fd. */
static long dev_reads(int fd)
{
	struct stat sb;
	char path[64];
	long reads = -1;
	FILE *f;

	if (fstat(fd, &sb))
		return -1;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/stat",
		 major(sb.st_dev), minor(sb.st_dev));
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &reads) != 1)
		reads = -1;
	fclose(f);
	return reads;
}

/*
 * A read that misses the buffer reads the range it needs in one go: the
 * file's readahead is off while the stream runs, and the normal read of
 * 1 MiB would be 256 reads of a page, each waited for.
 */
TEST_F(stream, miss_reads_the_range)
{
	struct abiss_start a = start_args();
	static char buf[1 << 20];
	long before, after;

	/* Written back and dropped: nothing of the file is cached. */
	ASSERT_EQ(0, fsync(self->fd));
	ASSERT_EQ(0, posix_fadvise(self->fd, 0, 0, POSIX_FADV_DONTNEED));
	ASSERT_EQ(0, start(self->fd, &a));
	/* Past the first fill (1 MiB): not held, not cached. */
	ASSERT_EQ(2 << 20, lseek(self->fd, 2 << 20, SEEK_SET));
	before = dev_reads(self->fd);
	ASSERT_LE(0, before);
	ASSERT_EQ((ssize_t)sizeof(buf), read(self->fd, buf, sizeof(buf)));
	after = dev_reads(self->fd);
	/* make_file() fills each 64 KiB with its index. */
	EXPECT_EQ(32, (unsigned char)buf[0]);
	EXPECT_EQ(47, (unsigned char)buf[sizeof(buf) - 1]);
	EXPECT_GT(64, after - before) {
		TH_LOG("a missed read of 1 MiB took %ld reads", after - before);
	}
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
}

/*
 * sendfile() and splice() read a file's page cache through ->splice_read,
 * which stopped going through ->read_iter in Linux 6.5: they count and
 * move the stream as read() does, a hit as delivered bytes, a read past
 * the buffer as a miss.
 */
TEST_F(stream, sendfile_and_splice_move_it)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	off_t far = 3 << 20;
	int null, p[2];

	null = open("/dev/null", O_WRONLY);
	ASSERT_LE(0, null);
	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, start(self->fd, &a));
	ASSERT_EQ(65536, sendfile(null, self->fd, NULL, 65536));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(65536, st.position);
	EXPECT_EQ(65536, st.delivered);
	ASSERT_EQ(32768, splice(self->fd, NULL, p[1], NULL, 32768, 0));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(98304, st.position);
	EXPECT_EQ(98304, st.delivered);
	EXPECT_EQ(0, st.misses);
	/* 3 MiB on, past the 1 MiB buffer: a miss, and the stream moves. */
	ASSERT_EQ(4096, sendfile(null, self->fd, &far, 4096));
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(1, st.misses);
	EXPECT_EQ((3 << 20) + 4096, st.position);
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
	close(p[0]);
	close(p[1]);
	close(null);
}

/*
 * O_DIRECT set after START (START refuses a file opened with it): the
 * read is served from the buffer as a buffered one, counted and moving
 * the stream; ext4 sent it around the stream before.  After STOP a
 * direct read is a direct one again.
 */
TEST_F(stream, direct_read_is_served_by_the_stream)
{
	struct abiss_start a = start_args();
	struct abiss_status st = { .size = sizeof(st) };
	unsigned char *buf;
	int fl, i;

	ASSERT_EQ(0, posix_memalign((void **)&buf, 4096, 131072));
	ASSERT_EQ(0, start(self->fd, &a));
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_LE(0, fl);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_DIRECT));
	ASSERT_EQ(131072, read(self->fd, buf, 131072));
	for (i = 0; i < 131072; i++)
		if (buf[i] != i / 65536)
			break;
	EXPECT_EQ(131072, i);
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(131072, st.position);
	EXPECT_EQ(131072, st.delivered);
	EXPECT_EQ(0, st.misses);
	ASSERT_EQ(0, ioctl(self->fd, ABISS_IOC_STOP));
	ASSERT_EQ(65536, pread(self->fd, buf, 65536, 3 << 16));
	EXPECT_EQ(3, buf[0]);
	EXPECT_EQ(3, buf[65535]);
	free(buf);
}

/* Bad arguments: every one refused before abissd is asked. */
FIXTURE(badargs) {
	int fd;
	struct daemon d;
};

FIXTURE_SETUP(badargs)
{
	self->fd = make_file("api-bad.dat", O_RDONLY);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, daemon_start(&self->d, ABISS_VERDICT_ACCEPT, 0));
}

FIXTURE_TEARDOWN(badargs)
{
	EXPECT_EQ(0, self->d.requests);
	close(self->fd);
	daemon_stop(&self->d);
}

TEST_F(badargs, unknown_ioctl)
{
	EXPECT_EQ(-1, ioctl(self->fd, _IO(ABISS_IOC_MAGIC, 31)));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_F(badargs, zero_rate)
{
	struct abiss_start a = start_args();

	a.rate = 0;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
}

/*
 * Whatever abissd answers (this one accepts all), the kernel bounds the
 * rate itself: rate * ABISS_REFILL_FRACTION must not wrap, nor divide by
 * zero in the refill scheduling.
 */
TEST_F(badargs, rate_too_big)
{
	struct abiss_start a = start_args();

	a.rate = (16ULL << 30) + 1;	/* above 16 GiB/s */
	EXPECT_EQ(EINVAL, start(self->fd, &a));
	a.rate = 1ULL << 62;		/* * 4 is 0 */
	EXPECT_EQ(EINVAL, start(self->fd, &a));
	a.rate = UINT64_MAX;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
}

TEST_F(badargs, buffer_below_read_unit)
{
	struct abiss_start a = start_args();

	a.buffer = a.read_unit - 1;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
}

TEST_F(badargs, buffer_too_big)
{
	struct abiss_start a = start_args();

	a.buffer = 1ULL << 40;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
}

TEST_F(badargs, reserved_fields)
{
	struct abiss_start a = start_args();

	a.__reserved[2] = 1;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
	a = start_args();
	a.__reserved0 = 1;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
	a = start_args();
	a.flags = 1U << 7;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
}

TEST_F(badargs, wrong_size)
{
	struct {
		struct abiss_start a;
		__u64 more;
	} big = { .a = start_args(), .more = 1 };
	struct abiss_start a = start_args();

	a.size = ABISS_START_SIZE_VER0 - 8;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
	a.size = 1 << 20;
	EXPECT_EQ(EINVAL, start(self->fd, &a));
	big.a.size = sizeof(big);		/* unknown non-zero tail */
	EXPECT_EQ(EINVAL, start(self->fd, &big.a));
}

TEST_F(badargs, status_and_stop_without_stream)
{
	struct abiss_status st = { .size = sizeof(st) };
	__u64 pos = 0;

	EXPECT_EQ(-1, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ABISS_IOC_STOP));
	EXPECT_EQ(ENODATA, errno);
	EXPECT_EQ(-1, ioctl(self->fd, ABISS_IOC_POSITION, &pos));
	EXPECT_EQ(ENODATA, errno);
	st.size = 8;
	EXPECT_EQ(-1, ioctl(self->fd, ABISS_IOC_STATUS, &st));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(badargs, directory)
{
	struct abiss_start a = start_args();
	int dfd = open(test_dir(), O_RDONLY | O_DIRECTORY);

	ASSERT_LE(0, dfd);
	EXPECT_EQ(EISDIR, start(dfd, &a));
	close(dfd);
}

TEST_F(badargs, not_open_for_reading)
{
	struct abiss_start a = start_args();
	char path[512];
	int wfd;

	snprintf(path, sizeof(path), "%s/api-bad.dat", test_dir());
	wfd = open(path, O_WRONLY);
	ASSERT_LE(0, wfd);
	EXPECT_EQ(EBADF, start(wfd, &a));
	close(wfd);
}

TEST_F(badargs, opened_direct)
{
	struct abiss_start a = start_args();
	char path[512];
	int dfd;

	snprintf(path, sizeof(path), "%s/api-bad.dat", test_dir());
	dfd = open(path, O_RDONLY | O_DIRECT);
	ASSERT_LE(0, dfd);
	EXPECT_EQ(EINVAL, start(dfd, &a));
	close(dfd);
}

TEST_F(badargs, unsupported_filesystem)
{
	struct abiss_start a = start_args();
	int tfd = open("/tmp/abiss-api-tmpfs.dat", O_RDWR | O_CREAT, 0644);

	ASSERT_LE(0, tfd);
	EXPECT_EQ(ENOTTY, start(tfd, &a));
	close(tfd);
	unlink("/tmp/abiss-api-tmpfs.dat");
}

/* abissd's answers, and its absence. */
TEST(no_daemon)
{
	struct abiss_start a = start_args();
	struct timespec t0, t1;
	int fd = make_file("api-nodaemon.dat", O_RDONLY);

	ASSERT_LE(0, fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(ESRCH, start(fd, &a));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	EXPECT_GE(1, t1.tv_sec - t0.tv_sec);	/* at once, no hang */
	close(fd);
}

TEST(denied)
{
	struct abiss_start a = start_args();
	struct daemon d;
	int fd = make_file("api-denied.dat", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, daemon_start(&d, ABISS_VERDICT_DENY, 0));
	EXPECT_EQ(EACCES, start(fd, &a));
	daemon_stop(&d);
	ASSERT_EQ(0, daemon_start(&d, ABISS_VERDICT_DENY, ENOSPC));
	EXPECT_EQ(ENOSPC, start(fd, &a));
	EXPECT_EQ(0, d.ends);		/* never admitted: no end message */
	daemon_stop(&d);
	close(fd);
}

TEST(daemon_silent)
{
	struct abiss_start a = start_args();
	struct daemon d;
	int fd = make_file("api-silent.dat", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, daemon_start(&d, 0, 0));
	EXPECT_EQ(ETIMEDOUT, start(fd, &a));
	daemon_stop(&d);
	close(fd);
}

TEST(daemon_read_too_small)
{
	char small[8];
	int fd = open("/dev/abiss", O_RDWR | O_NONBLOCK);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, read(fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	fd = open("/dev/abiss", O_RDONLY);	/* must be read-write */
	EXPECT_EQ(-1, fd);
	EXPECT_EQ(EINVAL, errno);
}

/*
 * A request carries the asker's supplementary groups after the fixed part
 * of the record, sorted; a read() too short for the whole record fails
 * with EINVAL and leaves it first in line.
 */
TEST(daemon_reads_groups)
{
	const gid_t groups[] = { 7, 5, 6 };
	const size_t want = sizeof(struct abiss_msg) + 3 * sizeof(__u32);
	struct pollfd p = { .events = POLLIN };
	struct abiss_reply r = { .size = sizeof(r), .verdict = ABISS_VERDICT_ACCEPT };
	struct abiss_msg *m = malloc(ABISS_MSG_MAX_SIZE);
	int fd = make_file("api-groups.dat", O_RDONLY), status;
	pid_t child;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, m);
	p.fd = open("/dev/abiss", O_RDWR | O_NONBLOCK);
	ASSERT_LE(0, p.fd);
	child = fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		struct abiss_start a = start_args();

		if (setgroups(3, groups))
			_exit(2);
		_exit(start(fd, &a) ? 1 : 0);
	}
	ASSERT_EQ(1, poll(&p, 1, 5000));
	EXPECT_EQ(-1, read(p.fd, m, sizeof(*m)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(p.fd, m, want - 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ((ssize_t)want, read(p.fd, m, ABISS_MSG_MAX_SIZE));
	EXPECT_EQ(want, m->size);
	EXPECT_EQ(ABISS_MSG_REQUEST, m->type);
	ASSERT_EQ(3, m->ngroups);
	EXPECT_EQ(5, m->groups[0]);
	EXPECT_EQ(6, m->groups[1]);
	EXPECT_EQ(7, m->groups[2]);
	r.id = m->id;
	EXPECT_EQ(sizeof(r), write(p.fd, &r, sizeof(r)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(p.fd);
	close(fd);
	free(m);
}

/*
 * abissd reopens /dev/abiss between its accept and the stream's start
 * (a restart): the new session gets an ABISS_MSG_LIVE for the stream, so
 * that its accounting has the reservation.  The window is short; each
 * round the daemon closes and reopens right after answering.
 */
TEST(daemon_reopen_after_accept)
{
	struct abiss_msg *m = malloc(ABISS_MSG_MAX_SIZE);
	int fd = make_file("api-reopen.dat", O_RDONLY);
	int i, dfd, started = 0, missed = 0, live;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, m);
	for (i = 0; i < 20; i++) {
		struct abiss_reply r = { .size = sizeof(r), .verdict = ABISS_VERDICT_ACCEPT };
		struct starter t = { .fd = fd };

		dfd = open("/dev/abiss", O_RDWR);
		ASSERT_LE(0, dfd);
		ASSERT_EQ(0, pthread_create(&t.thread, NULL, starter_main, &t));
		ASSERT_LT(0, read(dfd, m, ABISS_MSG_MAX_SIZE));
		ASSERT_EQ(ABISS_MSG_REQUEST, m->type);
		r.id = m->id;
		ASSERT_EQ(sizeof(r), write(dfd, &r, sizeof(r)));
		close(dfd);
		dfd = open("/dev/abiss", O_RDWR | O_NONBLOCK);
		ASSERT_LE(0, dfd);
		pthread_join(t.thread, NULL);
		live = 0;
		while (read(dfd, m, ABISS_MSG_MAX_SIZE) > 0)
			live |= m->type == ABISS_MSG_LIVE && m->id == r.id;
		if (t.err == 0) {
			started++;
			missed += !live;
			EXPECT_EQ(0, ioctl(fd, ABISS_IOC_STOP));
		}
		close(dfd);
	}
	EXPECT_EQ(20, started);
	EXPECT_EQ(0, missed);
	close(fd);
	free(m);
}

TEST_HARNESS_MAIN
