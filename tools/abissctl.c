// SPDX-License-Identifier: GPL-2.0
/*
 * abissctl - look at and control ABISS streams.
 *
 * Two sources: the kernel's stream list in debugfs (fill levels, misses:
 * what only the kernel knows) and abissd's control socket (devices,
 * capacities, reservations; stop and reload), whose protocol is
 * Documentation/abissd-control.rst.  An answer from abissd is checked line
 * by line: a garbled or cut-short one is an error, never a crash, and
 * fields or line kinds this version does not know are ignored.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "streams.h"
#include "util.h"

#define DEFAULT_SOCKET	"/run/abiss/abissd.sock"
#define ANSWER_TIMEOUT_MS	5000
/* Longest answer line taken; abissd's are far shorter. */
#define MAX_LINE	1024
#define MAX_WORDS	64

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static struct {
	const char *socket;
	const char *debugfs;
	bool numeric;
} opt = {
	.socket = DEFAULT_SOCKET,
	.debugfs = DEFAULT_DEBUGFS,
};

enum {
	OPT_DEBUGFS = 0x100,
};

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	usage_start("[options] [status]", "[options] streams|list", "[options] stop <id>",
		    "[options] reload", NULL);
	fputs("\nShow and control ABISS guaranteed-rate streams.\n", out);
	fputs("\nCommands:\n", out);
	fputs(" status           devices and streams, from abissd and the kernel\n"
	      "                    (the default)\n", out);
	fputs(" streams, list    the streams the kernel runs, from debugfs\n", out);
	fputs(" stop <id>        end stream <id> (root only)\n", out);
	fputs(" reload           make abissd re-read its config file (root only)\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -S, --socket <path>  abissd's control socket\n"
	      "                        (default " DEFAULT_SOCKET ")\n", out);
	fputs("     --debugfs <dir>  ABISS's debugfs folder\n"
	      "                        (default " DEFAULT_DEBUGFS ")\n", out);
	fputs(" -n, --numeric        no name lookups: devices and files as numbers\n", out);
	fputs(" -b, --bytes          rates and sizes in bytes, not human-readable\n", out);
	usage_help_version(22);
	usage_see_man(8);
}

/* --- the control socket ------------------------------------------------- */

struct conn {
	int fd;
	const char *request;	/* for messages */
	char buf[MAX_LINE + 1];
	size_t len;		/* bytes in @buf */
	size_t taken;		/* of which the line returned last */
	size_t lineno;		/* answer lines taken */
};

static void conn_open(struct conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(opt.socket) >= sizeof(sa.sun_path))
		errx(EXIT_FAIL, "socket path too long: '%s'", opt.socket);
	strcpy(sa.sun_path, opt.socket);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		err(EXIT_FAIL, "cannot create a socket");
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)))
		errx(EXIT_FAIL, "cannot connect to '%s': %s%s", opt.socket, strerror(errno),
		     errno == ENOENT || errno == ECONNREFUSED ? " (is abissd running?)" : "");
	c->len = 0;
	c->taken = 0;
	c->lineno = 0;
}

static void conn_send(struct conn *c, const char *request)
{
	char line[MAX_LINE];
	size_t n = (size_t)snprintf(line, sizeof(line), "%s\n", request);

	c->request = request;
	if (send(c->fd, line, n, MSG_NOSIGNAL) != (ssize_t)n)
		err(EXIT_FAIL, "cannot send '%s' to abissd", request);
}

/* A malformed answer: "abissctl: bad answer from abissd to 'status': ...", exit 1. */
#define bad_answer(c, fmt, ...) \
	errx(EXIT_FAIL, "bad answer from abissd to '%s': " fmt, (c)->request, ##__VA_ARGS__)

/* The next answer line, without its newline, in c->buf; exits on error. */
static char *conn_line(struct conn *c)
{
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
	char *nl, *p;
	ssize_t n;

	c->len -= c->taken;	/* drop the line returned last time */
	memmove(c->buf, c->buf + c->taken, c->len);
	while (!(nl = memchr(c->buf, '\n', c->len))) {
		if (c->len == MAX_LINE)
			bad_answer(c, "line %zu longer than %d bytes", c->lineno + 1, MAX_LINE);
		n = poll(&pfd, 1, ANSWER_TIMEOUT_MS);
		if (n == 0)
			errx(EXIT_FAIL, "no answer from abissd to '%s' in %d s", c->request,
			     ANSWER_TIMEOUT_MS / 1000);
		if (n > 0)
			n = read(c->fd, c->buf + c->len, MAX_LINE - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err(EXIT_FAIL, "cannot read abissd's answer to '%s'", c->request);
		if (n == 0)
			bad_answer(c, "cut short after %zu lines (no 'ok')", c->lineno);
		c->len += n;
	}
	*nl = '\0';
	c->taken = nl - c->buf + 1;
	c->lineno++;
	for (p = c->buf; p < nl; p++)
		if (*p < ' ' || *p > '~')
			bad_answer(c, "line %zu is not text", c->lineno);
	if (p == c->buf)
		bad_answer(c, "line %zu is empty", c->lineno);
	return c->buf;
}

/*
 * The value of @key in a data line split in @w (kind, name, then key-value
 * pairs); a lone last word is ignored.  NULL if absent.
 */
static const char *field(char **w, size_t n, const char *key)
{
	size_t i;

	for (i = 2; i + 1 < n; i += 2)
		if (!strcmp(w[i], key))
			return w[i + 1];
	return NULL;
}

static size_t words(char *line, char **w)
{
	size_t n = 0;
	char *save, *tok;

	for (tok = strtok_r(line, " ", &save); tok && n < MAX_WORDS;
	     tok = strtok_r(NULL, " ", &save))
		w[n++] = tok;
	return n;
}

/* A number field that must be there. */
static uint64_t num_field(struct conn *c, char **w, size_t n, const char *key)
{
	const char *v = field(w, n, key);
	uint64_t x;

	if (!v)
		bad_answer(c, "line %zu: no '%s'", c->lineno, key);
	if (parse_u64(v, &x))
		bad_answer(c, "line %zu: bad %s: '%s'", c->lineno, key, v);
	return x;
}

static void devno_field(struct conn *c, const char *v, unsigned int *major,
			unsigned int *minor)
{
	if (!v || parse_devno(v, major, minor))
		bad_answer(c, "line %zu: bad device: '%s'", c->lineno, v ? v : "");
}

/*
 * Send @request and hand each data line, split into words, to @data (if
 * not NULL; else data lines are ignored).  Returns on 'ok'; on 'error NAME
 * text' prints "abissctl: request: text (NAME)" and exits 1.
 */
static void request(const char *req, void (*data)(struct conn *, char **, size_t))
{
	char *line, *w[MAX_WORDS], *name, *text;
	struct conn c;
	size_t n;

	conn_open(&c);
	conn_send(&c, req);
	for (;;) {
		line = conn_line(&c);
		if (!strcmp(line, "ok"))
			break;
		if (!strcmp(line, "error") || !strncmp(line, "error ", 6)) {
			name = line + 5 + !!line[5];
			text = strchr(name, ' ');
			if (text)
				*text++ = '\0';
			if (!*name)
				bad_answer(&c, "'error' without a name");
			if (text && *text)
				errx(EXIT_FAIL, "%s: %s (%s)", req, text, name);
			errx(EXIT_FAIL, "%s: %s", req, name);
		}
		n = words(line, w);
		if (!n)
			bad_answer(&c, "line %zu is blank", c.lineno);
		if (data)
			data(&c, w, n);
	}
	close(c.fd);
}

/* --- status ------------------------------------------------------------- */

struct device {
	unsigned int major, minor;
	uint64_t capacity, ceiling, limit, reserved, streams;
};

struct astream {
	uint64_t id, pid;
	unsigned int major, minor;
	uint64_t ino, rate, buffer;
};

static struct {
	struct device *dev;
	size_t ndev;
	struct astream *st;
	size_t nst;
} status;

static void *grow(void *v, size_t n, size_t size)
{
	v = realloc(v, (n + 1) * size);
	if (!v)
		err(EXIT_FAIL, "out of memory");
	return v;
}

static void status_line(struct conn *c, char **w, size_t n)
{
	struct device *d;
	struct astream *s;

	if (!strcmp(w[0], "device")) {
		status.dev = grow(status.dev, status.ndev, sizeof(*d));
		d = &status.dev[status.ndev++];
		devno_field(c, n > 1 ? w[1] : NULL, &d->major, &d->minor);
		d->capacity = num_field(c, w, n, "capacity");
		d->ceiling = num_field(c, w, n, "ceiling");
		d->limit = num_field(c, w, n, "limit");
		d->reserved = num_field(c, w, n, "reserved");
		d->streams = num_field(c, w, n, "streams");
	} else if (!strcmp(w[0], "stream")) {
		status.st = grow(status.st, status.nst, sizeof(*s));
		s = &status.st[status.nst++];
		if (n < 2 || parse_u64(w[1], &s->id))
			bad_answer(c, "line %zu: bad stream id", c->lineno);
		s->pid = num_field(c, w, n, "pid");
		devno_field(c, field(w, n, "dev"), &s->major, &s->minor);
		s->ino = num_field(c, w, n, "ino");
		s->rate = num_field(c, w, n, "rate");
		s->buffer = num_field(c, w, n, "buffer");
	}
	/* Other kinds of line are for later versions. */
}

/* "8:1 (sda1)", the name from /sys/dev/block; just "8:1" with -n. */
static const char *fmt_device(char *buf, size_t len, unsigned int major, unsigned int minor)
{
	char path[64], target[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major, minor);
	n = opt.numeric ? -1 : readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		snprintf(buf, len, "%u:%u (%.32s)", major, minor, strrchr(target, '/') ?
			 strrchr(target, '/') + 1 : target);
	} else {
		snprintf(buf, len, "%u:%u", major, minor);
	}
	return buf;
}

static void print_devices(void)
{
	static const char *const heads[] = {
		"DEVICE", ">CAPACITY", ">CEILING", ">LIMIT", ">RESERVED", ">FREE", ">STREAMS"
	};
	char dev[64], cap[32], ceil[16], lim[32], res[32], fr[32], nst[24];
	const struct device *d;
	struct table t;
	size_t i;

	table_init(&t, heads, ARRAY_SIZE(heads));
	for (i = 0; i < status.ndev; i++) {
		d = &status.dev[i];
		snprintf(ceil, sizeof(ceil), "%llu%%", (unsigned long long)d->ceiling);
		snprintf(nst, sizeof(nst), "%llu", (unsigned long long)d->streams);
		fmt_rate(cap, sizeof(cap), d->capacity);
		fmt_rate(lim, sizeof(lim), d->limit);
		fmt_rate(fr, sizeof(fr), d->limit > d->reserved ? d->limit - d->reserved : 0);
		if (!d->capacity)	/* none configured */
			strcpy(cap, "-"), strcpy(ceil, "-"), strcpy(lim, "-"), strcpy(fr, "-");
		table_add(&t, (const char *const[]){
			fmt_device(dev, sizeof(dev), d->major, d->minor), cap, ceil, lim,
			fmt_rate(res, sizeof(res), d->reserved), fr, nst });
	}
	if (status.ndev)
		table_print(&t);
	else
		puts("(no devices)");
}

/* --- the stream table ---------------------------------------------------- */

/*
 * One row per stream: what abissd says (@a, may be NULL) and what the
 * kernel says (@k, may be NULL).  With -n, no COMMAND column and the file
 * as MAJ:MIN:INO.
 */
static void stream_row(struct table *t, const struct astream *a, const struct kstream *k)
{
	char id[24], pid[24], comm[64], rate[32], buf[32], fill[48], del[32], miss[24];
	char file[PATH_MAX];
	const char *row[10], *dash = "-";
	uint64_t sid = a ? a->id : k->id, spid = a ? a->pid : k->pid;
	unsigned int major = a ? a->major : k->major, minor = a ? a->minor : k->minor;
	uint64_t ino = a ? a->ino : k->ino;
	size_t c = 0;

	snprintf(id, sizeof(id), "%llu", (unsigned long long)sid);
	snprintf(pid, sizeof(pid), "%llu", (unsigned long long)spid);
	row[c++] = id;
	row[c++] = pid;
	if (!opt.numeric)
		row[c++] = proc_comm(comm, sizeof(comm), spid);
	row[c++] = fmt_rate(rate, sizeof(rate), a ? a->rate : k->rate);
	row[c++] = fmt_size(buf, sizeof(buf), a ? a->buffer : k->buffer);
	if (k) {
		snprintf(miss, sizeof(miss), "%llu", (unsigned long long)k->misses);
		row[c++] = fmt_fill(fill, sizeof(fill), k);
		row[c++] = fmt_size(del, sizeof(del), k->delivered);
		row[c++] = miss;
		row[c++] = k->state;
	} else {
		row[c++] = dash;
		row[c++] = dash;
		row[c++] = dash;
		row[c++] = dash;
	}
	if (opt.numeric)
		snprintf(file, sizeof(file), "%u:%u:%llu", major, minor,
			 (unsigned long long)ino);
	else
		proc_file(file, sizeof(file), spid, major, minor, ino);
	row[c++] = file;
	table_add(t, row);
}

static void stream_table_init(struct table *t)
{
	static const char *const heads[] = {
		">ID", ">PID", "COMMAND", ">RATE", ">BUFFER", ">FILL", ">DELIVERED",
		">MISSES", "STATE", "FILE"
	};
	static const char *const numeric_heads[] = {
		">ID", ">PID", ">RATE", ">BUFFER", ">FILL", ">DELIVERED", ">MISSES",
		"STATE", "FILE"
	};

	if (opt.numeric)
		table_init(t, numeric_heads, ARRAY_SIZE(numeric_heads));
	else
		table_init(t, heads, ARRAY_SIZE(heads));
}

static void print_table(struct table *t)
{
	if (t->nrows)
		table_print(t);
	else
		puts("(no streams)");
}

static char *debugfs_path(const char *name)
{
	char *path;

	if (asprintf(&path, "%s/%s", opt.debugfs, name) < 0)
		err(EXIT_FAIL, "out of memory");
	return path;
}

static int cmd_streams(void)
{
	char *path = debugfs_path("streams");
	struct kstreams ks;
	struct table t;
	size_t i;

	if (kstreams_read(path, &ks, false))
		return EXIT_FAIL;
	stream_table_init(&t);
	for (i = 0; i < ks.n; i++)
		stream_row(&t, NULL, &ks.v[i]);
	print_table(&t);
	kstreams_free(&ks);
	free(path);
	return EXIT_OK;
}

/*
 * abissd's devices and streams, each stream with the kernel's fill level
 * when debugfs can be read (root); without it those columns show '-'.
 */
static int cmd_status(void)
{
	char *path = debugfs_path("streams");
	struct kstreams ks = { 0 };
	struct table t;
	size_t i;

	request("status", status_line);
	/* Quietly: status works without debugfs, only with less. */
	kstreams_read(path, &ks, true);
	print_devices();
	putchar('\n');
	stream_table_init(&t);
	for (i = 0; i < status.nst; i++)
		stream_row(&t, &status.st[i], kstreams_find(&ks, status.st[i].id));
	print_table(&t);
	kstreams_free(&ks);
	free(status.dev);
	free(status.st);
	free(path);
	return EXIT_OK;
}

static int cmd_stop(const char *arg)
{
	char req[64];
	uint64_t id;

	if (parse_u64(arg, &id))
		usage_error("bad stream id: '%s'", arg);
	snprintf(req, sizeof(req), "stop %llu", (unsigned long long)id);
	request(req, NULL);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket",  required_argument, NULL, 'S' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "numeric", no_argument,       NULL, 'n' },
		{ "bytes",   no_argument,       NULL, 'b' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd;
	int c, nargs;

	atexit(close_stdout);
	while ((c = getopt_long(argc, argv, "S:nbhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			opt.socket = optarg;
			break;
		case OPT_DEBUGFS:
			opt.debugfs = optarg;
			break;
		case 'n':
			opt.numeric = true;
			break;
		case 'b':
			show_bytes = true;
			break;
		default:
			other_option(c, usage);
		}
	}
	cmd = optind < argc ? argv[optind++] : "status";
	nargs = argc - optind;
	if (!strcmp(cmd, "stop")) {
		if (nargs == 0)
			usage_error("stop needs a stream id");
		if (nargs > 1)
			usage_error("unexpected argument: '%s'", argv[optind + 1]);
		return cmd_stop(argv[optind]);
	}
	if (nargs)
		usage_error("unexpected argument: '%s'", argv[optind]);
	if (!strcmp(cmd, "status"))
		return cmd_status();
	if (!strcmp(cmd, "streams") || !strcmp(cmd, "list"))
		return cmd_streams();
	if (!strcmp(cmd, "reload")) {
		request("reload", NULL);
		return EXIT_OK;
	}
	usage_error("unknown command: '%s'", cmd);
}
