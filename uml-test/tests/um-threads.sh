# SPDX-License-Identifier: GPL-2.0
# The UML kernel itself: new threads of a process whose other threads
# keep its mmap lock busy (thread-storm, kselftest TAP).  A new thread
# that had to wait for the lock in fork_handler() printed "BUG: spinlock
# recursion", which fails the guest's console check.
thread-storm
