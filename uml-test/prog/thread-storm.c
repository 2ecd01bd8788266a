// SPDX-License-Identifier: GPL-2.0
/*
 * thread-storm - new threads while another thread of the process keeps
 * the mmap lock busy (kselftest TAP).
 *
 * A UML kernel makes a new thread's host address space whole in
 * fork_handler(), under the mmap lock that the other threads share; it
 * must be free to sleep there.  If it is not, a thread that waits for the
 * lock there ends in "BUG: spinlock recursion" on the console, which the
 * host's verdict counts.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define THREADS	2000

static volatile int stop;

/* mmap and munmap a page until told to stop: the mmap lock, for writing. */
static void *mapper(void *arg)
{
	unsigned long *n = arg;

	while (!stop) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		*(volatile char *)p = 1;
		munmap(p, 4096);
		(*n)++;
	}
	return NULL;
}

static void *nothing(void *arg)
{
	return arg;
}

TEST(threads_beside_mmap)
{
	pthread_t m[2], t;
	unsigned long maps[2] = { 0, 0 };
	int i;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&m[i], NULL, mapper, &maps[i]));
	for (i = 0; i < THREADS; i++) {
		ASSERT_EQ(0, pthread_create(&t, NULL, nothing, NULL));
		ASSERT_EQ(0, pthread_join(t, NULL));
	}
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(m[i], NULL);
	TH_LOG("%d threads made beside %lu + %lu mmaps", THREADS, maps[0], maps[1]);
	EXPECT_LT(0, maps[0] + maps[1]);
}

TEST_HARNESS_MAIN
