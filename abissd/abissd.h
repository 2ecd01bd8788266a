/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What abissd's parts offer each other: the daemon (abissd.c) keeps the
 * policy and the kernel channel.
 */
#ifndef ABISSD_ABISSD_H
#define ABISSD_ABISSD_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* abissd.c */
extern struct policy policy;

/* To stderr with -F, else syslog; LOG_DEBUG only with -d. */
void logmsg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Read the config file again and take it as the policy; the accounting
 * stays.  Returns 0, or -1 with "FILE:LINE: what" in @err, the old policy
 * kept.
 */
int reload_config(char *err, size_t errlen);

#endif /* ABISSD_ABISSD_H */
