// SPDX-License-Identifier: GPL-2.0
/*
 * abissd's control socket: text requests, one a line, from abissctl and
 * scripts (Documentation/abissd-control.rst).  Everything is non-blocking
 * and served from the daemon's one poll loop: a client that sends garbage
 * gets an error, one that sends a line too long or does not read its
 * answers is disconnected, and the daemon goes on.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "abissd.h"
#include "util.h"

/* A request line's longest length, without its '\n'. */
#define LINE_MAX_LEN	255
/* A client quiet this long makes room for a new one when all slots are taken. */
#define IDLE_NS		NSEC_PER_SEC

struct client {
	int fd;
	struct ucred cred;		/* SO_PEERCRED at accept */
	uint64_t active;		/* now_ns() at accept and at each request */
	size_t len;			/* bytes in buf */
	char buf[LINE_MAX_LEN + 1];	/* a request line and its '\n' */
};

static int listen_fd = -1;
static char *sock_path;
static struct client clients[CONTROL_MAX_CLIENTS];
static size_t nclients;

void make_parent_dirs(const char *path)
{
	char *dir = strdup(path), *p;

	if (!dir)
		err(EXIT_FAIL, "out of memory");
	for (p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(dir, 0755) && errno != EEXIST)
			err(EXIT_FAIL, "cannot create '%s'", dir);
		*p = '/';
	}
	free(dir);
}

void control_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		errx(EXIT_FAIL, "socket path too long: '%s'", path);
	strcpy(sa.sun_path, path);
	make_parent_dirs(path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		err(EXIT_FAIL, "cannot create a socket");
	/*
	 * We hold the pid file's lock, so a socket there is a dead abissd's,
	 * unless one with another pid file answers on it.
	 */
	if (!connect(listen_fd, (struct sockaddr *)&sa, sizeof(sa)))
		errx(EXIT_FAIL, "another abissd listens on '%s'", path);
	if (unlink(path) && errno != ENOENT)
		err(EXIT_FAIL, "cannot remove '%s'", path);
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)))
		err(EXIT_FAIL, "cannot bind '%s'", path);
	if (chmod(path, 0666) || listen(listen_fd, 16))
		err(EXIT_FAIL, "cannot listen on '%s'", path);
	sock_path = strdup(path);
}

static void drop(size_t i)
{
	close(clients[i].fd);
	clients[i] = clients[--nclients];
}

void control_close(void)
{
	while (nclients)
		drop(0);
	if (listen_fd >= 0) {
		close(listen_fd);
		unlink(sock_path);
	}
	free(sock_path);
	listen_fd = -1;
}

size_t control_pollfds(struct pollfd *pfd)
{
	size_t i;

	pfd[0] = (struct pollfd) { .fd = listen_fd, .events = POLLIN };
	for (i = 0; i < nclients; i++)
		pfd[i + 1] = (struct pollfd) { .fd = clients[i].fd, .events = POLLIN };
	return nclients + 1;
}

/*
 * All slots taken and @new connects: drop the client quiet for longest, if
 * it has been for IDLE_NS, so that clients that connect and say nothing
 * cannot lock the others out.  For root, drop the least recently active
 * client of another uid however busy it is: no user can lock root out.
 * Returns whether a slot is free.
 */
static bool make_room(const struct ucred *new)
{
	size_t i, oldest = 0, other = nclients;

	for (i = 0; i < nclients; i++) {
		if (clients[i].active < clients[oldest].active)
			oldest = i;
		if (clients[i].cred.uid != 0 &&
		    (other == nclients || clients[i].active < clients[other].active))
			other = i;
	}
	if (new->uid == 0 && other < nclients) {
		logmsg(LOG_WARNING, "control socket: client pid %d uid %d closed for root's pid %d",
		       (int)clients[other].cred.pid, (int)clients[other].cred.uid,
		       (int)new->pid);
		drop(other);
		return true;
	}
	if (now_ns() - clients[oldest].active < IDLE_NS)
		return false;
	logmsg(LOG_WARNING, "control socket: client pid %d uid %d idle: closed for a new one",
	       (int)clients[oldest].cred.pid, (int)clients[oldest].cred.uid);
	drop(oldest);
	return true;
}

static void accept_client(void)
{
	socklen_t len = sizeof(struct ucred);
	struct ucred cred;
	struct client *c;
	int fd;

	fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			logmsg(LOG_WARNING, "control socket: accept: %m");
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		logmsg(LOG_WARNING, "control socket: SO_PEERCRED: %m");
		close(fd);
		return;
	}
	if (nclients == CONTROL_MAX_CLIENTS && !make_room(&cred)) {
		logmsg(LOG_WARNING, "control socket: %d clients already: one more closed",
		       CONTROL_MAX_CLIENTS);
		close(fd);
		return;
	}
	c = &clients[nclients++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->cred = cred;
	c->active = now_ns();
}

/*
 * An answer, all at once or not at all: a client whose socket buffer is
 * full is not reading, and is dropped (false).
 */
static bool send_answer(struct client *c, const char *text, size_t len)
{
	ssize_t n = send(c->fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n == (ssize_t)len)
		return true;
	logmsg(LOG_WARNING, "control socket: client pid %d uid %d %s: disconnected",
	       (int)c->cred.pid, (int)c->cred.uid,
	       n < 0 && errno != EAGAIN ? "went away" : "does not read its answers");
	return false;
}

static void __attribute__((format(printf, 3, 4)))
error_line(FILE *out, int error, const char *fmt, ...)
{
	va_list ap;

	fprintf(out, "error %s ", strerrorname_np(error));
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* Does the command @cmd of @c take @n words and may its caller run it? */
static bool allowed(FILE *out, const struct client *c, int n, int want, bool root_only,
		    const char *usage)
{
	if (root_only && c->cred.uid != 0) {
		error_line(out, EPERM, "only root may %s", usage);
		return false;
	}
	if (n != want) {
		error_line(out, EINVAL, "usage: %s", usage);
		return false;
	}
	return true;
}

static void cmd_stop(FILE *out, const struct client *c, const char *arg)
{
	uint64_t id;
	int e;

	if (parse_u64(arg, &id)) {
		error_line(out, EINVAL, "bad stream id '%.64s'", arg);
		return;
	}
	if (!policy_find(&policy, id)) {
		error_line(out, ENOENT, "no stream %llu", (unsigned long long)id);
		return;
	}
	e = stop_stream(id);
	logmsg(LOG_INFO, "control socket: pid %d uid %d stops stream %llu: %s",
	       (int)c->cred.pid, (int)c->cred.uid, (unsigned long long)id,
	       e ? strerror(e) : "done");
	if (e)
		error_line(out, e, "cannot stop stream %llu: %s", (unsigned long long)id,
			   strerror(e));
	else
		fputs("ok\n", out);
}

static void cmd_reload(FILE *out, const struct client *c)
{
	char msg[512];

	logmsg(LOG_INFO, "control socket: pid %d uid %d asks for a reload",
	       (int)c->cred.pid, (int)c->cred.uid);
	if (reload_config(msg, sizeof(msg)))
		error_line(out, EINVAL, "%s", msg);
	else
		fputs("ok\n", out);
}

/* Answer one request @line (no '\n') of @c into @out. */
static void request(FILE *out, const struct client *c, char *line)
{
	char *word[3], *save, *w;
	int n = 0;
	size_t i;

	for (i = 0; line[i]; i++) {
		if (line[i] < 0x20 || line[i] > 0x7e) {
			error_line(out, EINVAL, "request is not text");
			return;
		}
	}
	for (w = strtok_r(line, " ", &save); w && n < 3; w = strtok_r(NULL, " ", &save))
		word[n++] = w;
	if (n == 0) {
		error_line(out, EINVAL, "empty request");
	} else if (!strcmp(word[0], "version")) {
		if (allowed(out, c, n, 1, false, "version"))
			fprintf(out, "version abissd %s\nok\n", ABISS_VERSION);
	} else if (!strcmp(word[0], "status")) {
		if (allowed(out, c, n, 1, false, "status")) {
			/* Other users' streams are root's business only. */
			policy_dump(&policy, out,
				    c->cred.uid == 0 ? POLICY_ALL_UIDS : c->cred.uid);
			fputs("ok\n", out);
		}
	} else if (!strcmp(word[0], "stop")) {
		if (allowed(out, c, n, 2, true, "stop ID"))
			cmd_stop(out, c, word[1]);
	} else if (!strcmp(word[0], "reload")) {
		if (allowed(out, c, n, 1, true, "reload"))
			cmd_reload(out, c);
	} else {
		error_line(out, EINVAL, "unknown command '%.32s'", word[0]);
	}
}

/* Answer @line of @c; false when @c must go. */
static bool answer(struct client *c, char *line)
{
	char *text = NULL;
	size_t len = 0;
	bool ok;
	FILE *out;

	logmsg(LOG_DEBUG, "control socket: pid %d uid %d: '%.64s'", (int)c->cred.pid,
	       (int)c->cred.uid, line);
	c->active = now_ns();
	out = open_memstream(&text, &len);
	if (!out) {
		logmsg(LOG_ERR, "control socket: out of memory");
		return false;
	}
	request(out, c, line);
	ok = fclose(out) == 0 && send_answer(c, text, len);
	free(text);
	return ok;
}

/* Read what @c sent and answer its whole lines; false when @c must go. */
static bool serve_client(struct client *c)
{
	static const char too_long[] = "error EINVAL request line longer than 255 bytes\n";
	ssize_t n;
	char *nl;
	size_t used;

	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (n == 0)
		return false;
	c->len += (size_t)n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		*nl = '\0';
		used = (size_t)(nl - c->buf) + 1;
		/* A NUL inside the line is binary, not the end of the request. */
		for (char *p = c->buf; p < nl; p++)
			if (!*p)
				*p = '\x01';
		if (!answer(c, c->buf))
			return false;
		c->len -= used;
		memmove(c->buf, c->buf + used, c->len);
	}
	if (c->len == sizeof(c->buf)) {
		send_answer(c, too_long, sizeof(too_long) - 1);
		return false;
	}
	return true;
}

void control_serve(const struct pollfd *pfd, size_t n)
{
	size_t i;

	/* Clients from the last one down: drop() moves the last into a hole. */
	for (i = n - 1; i >= 1; i--)
		if (pfd[i].revents && !serve_client(&clients[i - 1]))
			drop(i - 1);
	if (pfd[0].revents & POLLIN)
		accept_client();
}
