// SPDX-License-Identifier: GPL-2.0
/*
 * aio-exit - processes that exit with aio contexts and much memory mapped
 * (kselftest TAP).
 *
 * At exit, exit_aio() kills the process's aio contexts and a worker frees
 * their rings (free_ioctx()) a grace period later, truncating each ring's
 * file: unmap_mapping_range() zaps the ring in the exiting mm while
 * exit_mmap() may still be unmapping the rest of it.  Two flushes of one
 * mm at once make tlb_finish_mmu() flush the whole mm, and UML's
 * flush_tlb_mm() walked the VMAs of an mm whose last user was gone with
 * no lock held: "WARNING: suspicious RCU usage" on the console, which the
 * host's verdict counts (and a walk of VMAs exit_mmap() was freeing).
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/aio_abi.h>

#include "kselftest_harness.h"

#define ROUNDS		40
#define CONTEXTS	8
#define MAPPED		(32 << 20)

/* A process with aio contexts and MAPPED bytes touched, then its exit. */
static int child(void)
{
	aio_context_t ctx[CONTEXTS] = { 0 };
	char *p;
	int i;

	p = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 1, MAPPED);
	for (i = 0; i < CONTEXTS; i++)
		if (syscall(__NR_io_setup, 64, &ctx[i]))
			return 2;
	return 0;
}

FIXTURE(aio) {
};

FIXTURE_SETUP(aio)
{
}

FIXTURE_TEARDOWN(aio)
{
}

/*
 * 40 rounds took 21-27 s on an idle machine and more than the harness's
 * default 30 s on a loaded one: the bound is only for a hang.
 */
TEST_F_TIMEOUT(aio, exit_with_aio_contexts, 300)
{
	int round, status;
	pid_t pid;

	for (round = 0; round < ROUNDS; round++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(child());
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status)) {
			TH_LOG("round %d: child failed at step %d", round,
			       WEXITSTATUS(status));
		}
	}
}

TEST_HARNESS_MAIN
