/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What abissd's parts offer each other: the daemon (abissd.c) keeps the
 * policy and the kernel channel, the control socket (control.c) serves
 * clients from them, and calibrate.c measures a device for the config.
 */
#ifndef ABISSD_ABISSD_H
#define ABISSD_ABISSD_H

#include <poll.h>
#include <stdbool.h>
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

/* Ask the kernel to end stream @id (ABISS_DAEMON_STOP): 0 or an errno. */
int stop_stream(uint64_t id);

/* mkdir -p of the folder of @path (mode 0755).  Exits on failure. */
void make_parent_dirs(const char *path);


/* control.c: the control socket, Documentation/abissd-control.rst */

/* Most clients connected at once; more are closed as they come. */
#define CONTROL_MAX_CLIENTS	32

/*
 * Listen on @path (mode 0666), making its folder and removing a stale
 * socket: call it with the pid file locked.  Exits on failure.
 */
void control_open(const char *path);
/* Close every connection and remove the socket. */
void control_close(void);
/* Fill @pfd with the listening socket and the clients; returns how many. */
size_t control_pollfds(struct pollfd *pfd);
/* Serve what poll() found on the @n entries control_pollfds() filled. */
void control_serve(const struct pollfd *pfd, size_t n);

/* calibrate.c */

/*
 * Measure the sequential read rate of the block device or file @path for
 * up to @ns nanoseconds, print it and keep it in the calibration state
 * file @state, under the device's stable name; say so if the config file
 * @config (which must exist if @config_given) has a line of its own for
 * the device.  Returns the exit status.
 */
int calibrate(const char *path, uint64_t ns, const char *state, const char *config,
	      bool config_given);

/*
 * Add to @c the capacities of the state file @state (a missing file has
 * none) that @c has no line of its own for, each name mapped to the
 * device it is now.  Bad and stale entries are logged and skipped.
 */
void calibration_load(struct config *c, const char *state);

#endif /* ABISSD_ABISSD_H */
