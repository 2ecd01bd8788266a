# SPDX-License-Identifier: GPL-2.0
# The UML kernel itself: processes that exit with aio contexts while much
# of their memory is still being unmapped (aio-exit, kselftest TAP).  A
# ring freed during exit_mmap() made flush_tlb_mm() walk the VMAs of the
# dying mm without a lock: "WARNING: suspicious RCU usage", which fails
# the guest's console check.
aio-exit
