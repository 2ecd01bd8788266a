// SPDX-License-Identifier: GPL-2.0
/*
 * abissd - the ABISS admission daemon.
 *
 * The kernel asks, through /dev/abiss, whether a read stream may start;
 * abissd answers from its policy (policy.c) and keeps the accounting of
 * what it admitted, released when the kernel says a stream ended.  A bad
 * message from the kernel is logged and skipped: the daemon never dies of
 * one.  SIGHUP (or 'reload' on the control socket, control.c) re-reads
 * the config; a bad one is logged and the old policy kept.
 *
 * As a systemd service (abissd.service: Type=notify, -F) it says when it
 * is ready, reloading and stopping through $NOTIFY_SOCKET, and its log
 * lines carry their priority into the journal; it needs no libsystemd for
 * either, the protocols being a datagram and a line prefix.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/abiss.h>
#include <linux/capability.h>

#include "abiss.h"
#include "abissd.h"
#include "util.h"

/* The Makefile passes the install's folders; these are the FHS's. */
#ifndef SYSCONFDIR
#define SYSCONFDIR	"/etc"
#endif
#ifndef LOCALSTATEDIR
#define LOCALSTATEDIR	"/var"
#endif
#ifndef RUNSTATEDIR
#define RUNSTATEDIR	"/run"
#endif

#define DEFAULT_DEVICE	"/dev/abiss"
#define DEFAULT_PIDFILE	RUNSTATEDIR "/abissd.pid"
#define DEFAULT_CONFIG	SYSCONFDIR "/abiss/abissd.conf"
#define DEFAULT_SOCKET	RUNSTATEDIR "/abiss/abissd.sock"
#define DEFAULT_CALIBRATION	LOCALSTATEDIR "/lib/abiss/calibration"
/* --calibrate reads this long unless told (or the device ends first). */
#define DEFAULT_CALIBRATE_NS	(5 * NSEC_PER_SEC)

/* Room for any record the kernel may send, supplementary groups and all. */
#define MSG_BUF_SIZE	ABISS_MSG_MAX_SIZE
/*
 * Most fds of the asker looked at for the path of a stream's file, for the
 * log only: the asker decides how many it has.  A count, not a time, so
 * that what is logged does not depend on the machine's speed.
 */
#define NAME_MAX_FDS	4096

/*
 * The capabilities kept once /dev/abiss is open (abissd.8, CAPABILITIES;
 * abissd.service's CapabilityBoundingSet= says the same).  Naming a
 * stream's file for the log reads /proc/PID/fd of the asker, whoever it
 * is: the folder is the asker's, mode 0500 (CAP_DAC_READ_SEARCH), and its
 * links and /proc/PID/fdinfo are behind a ptrace read check
 * (CAP_SYS_PTRACE).  CAP_SYS_ADMIN is checked at the open of /dev/abiss
 * only; its read, write, poll and ABISS_DAEMON_STOP check nothing.
 */
#define KEPT_CAPS	((1ULL << CAP_DAC_READ_SEARCH) | (1ULL << CAP_SYS_PTRACE))

static struct {
	const char *device;
	char *pidfile;
	char *config;
	bool config_given;
	uint64_t capacity;	/* --capacity; NO_LIMIT: not given */
	char *status_file;
	char *socket;
	char *calibration;
	const char *calibrate;
	uint64_t calibrate_ns;
	bool foreground;
	bool debug;
	bool journal;		/* -F and stderr is the journal's */
} opt = {
	.device = DEFAULT_DEVICE,
	.capacity = NO_LIMIT,
	.calibrate_ns = DEFAULT_CALIBRATE_NS,
};

struct policy policy;
static int dev_fd = -1;

static volatile sig_atomic_t got_stop;	/* the signal that asks us to exit */
static volatile sig_atomic_t got_usr1;
static volatile sig_atomic_t got_hup;

/* The pid file being made (pidfile_prepare()), removed if the start fails. */
static char *pidfile_tmp;

void logmsg(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio == LOG_DEBUG && !opt.debug)
		return;
	va_start(ap, fmt);
	if (opt.journal) {
		/* sd-daemon(3)'s "<N>": the journal keeps N as the priority. */
		fprintf(stderr, "<%d>", prio);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else if (opt.foreground) {
		fprintf(stderr, "%s: ", program_invocation_short_name);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	usage_start("[options]", "--calibrate <dev> [--calibrate-time <t>] [--calibration-file <file>]",
		    NULL);
	fputs("\nAdmit or deny ABISS guaranteed-rate read streams by the policy of the\n"
	      "config file: who may stream, within which limits, keeping the sum of the\n"
	      "rates admitted on each device under its capacity times the ceiling.\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -C, --capacity <rate>     capacity of every device without its own\n"
	      "                             'capacity' line, in bytes/s\n", out);
	fputs(" -c, --config <file>       config file (default " DEFAULT_CONFIG ")\n", out);
	fputs(" -D, --device <path>       the kernel channel (default " DEFAULT_DEVICE ")\n", out);
	fputs(" -p, --pidfile <path>      pid file, locked (default " DEFAULT_PIDFILE ")\n", out);
	fputs(" -S, --socket <path>       control socket (default " DEFAULT_SOCKET ")\n", out);
	fputs(" -s, --status-file <path>  keep the reservations written in this file\n", out);
	fputs("     --calibrate <dev>     measure the read rate of a block device (or\n"
	      "                             file), keep it as the device's capacity, exit\n", out);
	fputs("     --calibrate-time <t>  read this long (default 5 s)\n", out);
	fputs("     --calibration-file <file>\n"
	      "                           the calibrations (default\n"
	      "                             " DEFAULT_CALIBRATION ")\n", out);
	fputs(" -F, --foreground          do not daemonize; log to stderr\n", out);
	fputs(" -d, --debug               log every message from the kernel too\n", out);
	usage_help_version(27);
	usage_units();
	fputs("\nSignals: SIGTERM and SIGINT stop it; SIGHUP reloads the config file;\n"
	      "SIGUSR1 writes the status file (or logs the reservations without one).\n", out);
	usage_see_man(8);
}

/* @path made absolute, since the daemon changes to / */
static char *abs_path(const char *path)
{
	char cwd[4096], *abs;

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		abs = strdup(path);
	else if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	if (!abs)
		err(EXIT_FAIL, "out of memory");
	return abs;
}

static void parse_args(int argc, char **argv)
{
	enum { OPT_CALIBRATE = CHAR_MAX + 1, OPT_CALIBRATE_TIME, OPT_CALIBRATION_FILE };
	static const struct option longopts[] = {
		{ "capacity",       required_argument, NULL, 'C' },
		{ "config",         required_argument, NULL, 'c' },
		{ "device",         required_argument, NULL, 'D' },
		{ "pidfile",        required_argument, NULL, 'p' },
		{ "socket",         required_argument, NULL, 'S' },
		{ "status-file",    required_argument, NULL, 's' },
		{ "calibrate",      required_argument, NULL, OPT_CALIBRATE },
		{ "calibrate-time", required_argument, NULL, OPT_CALIBRATE_TIME },
		{ "calibration-file", required_argument, NULL, OPT_CALIBRATION_FILE },
		{ "foreground",     no_argument,       NULL, 'F' },
		{ "debug",          no_argument,       NULL, 'd' },
		{ "help",           no_argument,       NULL, 'h' },
		{ "version",        no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "C:c:D:p:S:s:FdhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			if (parse_size(optarg, &opt.capacity) || opt.capacity == NO_LIMIT)
				usage_error("invalid capacity: '%s'", optarg);
			break;
		case 'c':
			opt.config = abs_path(optarg);
			opt.config_given = true;
			break;
		case 'S':
			opt.socket = abs_path(optarg);
			break;
		case OPT_CALIBRATE:
			opt.calibrate = optarg;
			break;
		case OPT_CALIBRATION_FILE:
			opt.calibration = abs_path(optarg);
			break;
		case OPT_CALIBRATE_TIME:
			if (parse_duration(optarg, &opt.calibrate_ns) || !opt.calibrate_ns)
				usage_error("bad calibrate time: '%s'", optarg);
			break;
		case 'D':
			opt.device = optarg;
			break;
		case 'p':
			opt.pidfile = abs_path(optarg);
			break;
		case 's':
			opt.status_file = abs_path(optarg);
			break;
		case 'F':
			opt.foreground = true;
			break;
		case 'd':
			opt.debug = true;
			break;
		default:
			other_option(c, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument: '%s'", argv[optind]);
	if (!opt.pidfile)
		opt.pidfile = abs_path(DEFAULT_PIDFILE);
	if (!opt.socket)
		opt.socket = abs_path(DEFAULT_SOCKET);
	if (!opt.config)
		opt.config = abs_path(DEFAULT_CONFIG);
	if (!opt.calibration)
		opt.calibration = abs_path(DEFAULT_CALIBRATION);
}

/*
 * Write the reservations to the status file (atomically), or log them.
 * The file is root's only (0600): it names every user's streams, which
 * the control socket shows to root alone.
 */
static void write_status(bool log_if_no_file)
{
	char *tmp, *text = NULL, *line, *save;
	size_t len = 0;
	FILE *f = NULL;
	int fd;

	if (!opt.status_file) {
		if (!log_if_no_file)
			return;
		f = open_memstream(&text, &len);
		if (!f)
			return;
		policy_dump(&policy, f, POLICY_ALL_UIDS);
		fclose(f);
		for (line = strtok_r(text, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			logmsg(LOG_INFO, "%s", line);
		free(text);
		return;
	}
	if (asprintf(&tmp, "%s.tmp", opt.status_file) < 0)
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && !fchmod(fd, 0600))
		f = fdopen(fd, "w");
	if (!f && fd >= 0)
		close(fd);
	if (f) {
		policy_dump(&policy, f, POLICY_ALL_UIDS);
		if (fclose(f) == 0 && rename(tmp, opt.status_file) == 0) {
			free(tmp);
			return;
		}
	}
	logmsg(LOG_ERR, "cannot write '%s': %m", opt.status_file);
	unlink(tmp);
	free(tmp);
}

/*
 * Tell the service manager the "VAR=value" lines of @fmt (sd_notify(3)):
 * one datagram to $NOTIFY_SOCKET, a path or, with a leading '@', an
 * abstract socket name.  Without it, or when it fails, nothing happens:
 * the daemon runs the same, started by hand.
 */
static void __attribute__((format(printf, 1, 2))) notify(const char *fmt, ...)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("NOTIFY_SOCKET");
	char msg[1024];
	size_t len;
	va_list ap;
	int fd, n;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	len = strlen(path);
	if (len < 2 || len > sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))	/* a long STATUS= cut short: still worth it */
		n = sizeof(msg) - 1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   offsetof(struct sockaddr_un, sun_path) + len) < 0)
		logmsg(LOG_DEBUG, "cannot notify '%s': %m", path);
	close(fd);
}

int reload_config(char *err, size_t errlen)
{
	bool running = dev_fd >= 0;	/* not starting */
	struct config c;

	if (running)
		notify("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)(now_ns() / 1000));
	config_init(&c);
	if (config_load(&c, opt.config, opt.config_given, err, errlen)) {
		if (running)
			notify("READY=1\nSTATUS=Reload failed, old policy kept: %s", err);
		return -1;
	}
	calibration_load(&c, opt.calibration);
	/* --capacity overrides the config's 'capacity *'. */
	if (opt.capacity != NO_LIMIT)
		c.default_capacity = opt.capacity;
	policy_set_config(&policy, &c);
	if (running) {
		write_status(false);
		notify("READY=1\nSTATUS=Serving on %s, '%s' reloaded", opt.device, opt.config);
	}
	return 0;
}

int stop_stream(uint64_t id)
{
	return ioctl(dev_fd, ABISS_DAEMON_STOP, &id) ? errno : 0;
}

/*
 * Is stderr the journal's stream?  systemd says which in $JOURNAL_STREAM
 * (its device and inode); a stderr redirected since is not.
 */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	return env && sscanf(env, "%llu:%llu%c", &dev, &ino, &end) == 2 &&
	       !fstat(STDERR_FILENO, &st) && st.st_dev == dev && st.st_ino == ino;
}

/*
 * The pid file is made in two steps, so that whoever reads it finds a
 * whole pid or no file, and a start that fails leaves nothing behind (an
 * empty or stale pid file misleads 'kill $(cat ...)' and the tools).
 *
 * pidfile_prepare(), before anything else that may fail: refuse to start
 * if the file at the path is locked (another abissd runs).  If there is
 * one (a dead abissd's), hold its lock while we start, so that an abissd
 * started meanwhile is refused as well.  Make a temporary file beside it
 * and lock that.
 *
 * pidfile_publish(), once started and daemonized (the pid is final):
 * write the pid into the temporary file and rename() it over the path.
 * flock() locks the open file, that is the inode, which rename() moves:
 * the file at the path is whole and locked at once, and stays locked
 * until we exit.  The pid file readers need no lock of their own.
 *
 * Two abissd started at once with no pid file there both get through,
 * but the kernel lets one open /dev/abiss (EBUSY) before either touches
 * the control socket or the pid file's path.
 */
static int pidfile_prepare(int *stale_fd)
{
	char buf[32] = "", *tmp;
	ssize_t n;
	int fd;

	*stale_fd = open(opt.pidfile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*stale_fd < 0 && errno != ENOENT)
		err(EXIT_FAIL, "cannot open '%s'", opt.pidfile);
	if (*stale_fd >= 0 && flock(*stale_fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			err(EXIT_FAIL, "cannot lock '%s'", opt.pidfile);
		n = pread(*stale_fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		errx(EXIT_FAIL, "another abissd is already running (pid %s; '%s' is locked)",
		     *buf ? buf : "unknown", opt.pidfile);
	}
	if (asprintf(&tmp, "%s.XXXXXX", opt.pidfile) < 0)
		errx(EXIT_FAIL, "out of memory");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		err(EXIT_FAIL, "cannot create '%s'", tmp);
	pidfile_tmp = tmp;
	/* Readable by all, as pid files are: mkostemp() makes it 0600. */
	if (flock(fd, LOCK_EX | LOCK_NB) || fchmod(fd, 0644))
		err(EXIT_FAIL, "cannot lock '%s'", tmp);
	return fd;
}

/* After a failed start (exit()), not after a daemon() parent's _exit(). */
static void remove_pidfile_tmp(void)
{
	if (pidfile_tmp)
		unlink(pidfile_tmp);
}

static int pidfile_publish(int fd)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (pwrite(fd, buf, (size_t)len, 0) != len) {
		logmsg(LOG_ERR, "cannot write '%s': %m", pidfile_tmp);
		return -1;
	}
	if (rename(pidfile_tmp, opt.pidfile)) {
		logmsg(LOG_ERR, "cannot rename '%s' to '%s': %m", pidfile_tmp, opt.pidfile);
		return -1;
	}
	free(pidfile_tmp);
	pidfile_tmp = NULL;
	return 0;
}

/*
 * Keep KEPT_CAPS only, in the bounding set too, so that nothing abissd
 * could be made to run gets the others back.  Not root (tests): there is
 * nothing to drop, and this never fails the start.
 */
static void drop_capabilities(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uint64_t keep;
	int cap, i;

	if (syscall(SYS_capget, &hdr, data)) {
		logmsg(LOG_WARNING, "cannot read the capabilities: %m: kept");
		return;
	}
	/* Dropping from the bounding set needs CAP_SETPCAP, which root has. */
	if (data[0].effective & (1U << CAP_SETPCAP))
		for (cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
			if (!(KEPT_CAPS >> cap & 1) && prctl(PR_CAPBSET_DROP, cap))
				logmsg(LOG_WARNING, "cannot drop capability %d from the bounding set: %m",
				       cap);
	keep = ((uint64_t)data[1].permitted << 32 | data[0].permitted) & KEPT_CAPS;
	for (i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i] = (struct __user_cap_data_struct) {
			.effective = (uint32_t)(keep >> (32 * i)),
			.permitted = (uint32_t)(keep >> (32 * i)),
		};
	if (syscall(SYS_capset, &hdr, data))
		logmsg(LOG_WARNING, "cannot drop capabilities: %m");
}

/*
 * Open the kernel channel.  A Unix socket stands in for the device in
 * tests: we connect to it as SOCK_SEQPACKET, which keeps record boundaries
 * the way /dev/abiss does.
 */
static int open_device(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *hint = "";
	struct stat st;
	int fd;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == ENXIO && !stat(path, &st) && S_ISSOCK(st.st_mode) &&
	    strlen(path) < sizeof(sa.sun_path)) {
		strcpy(sa.sun_path, path);
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
	}
	if (errno == EBUSY)
		hint = " (is another abissd running?)";
	else if (errno == EPERM || errno == EACCES)
		hint = " (abissd needs CAP_SYS_ADMIN)";
	errx(EXIT_FAIL, "cannot open '%s': %s%s", path, strerror(errno), hint);
}

/* @s from @m, its supplementary groups pointing into @m's record. */
static void msg_to_stream(const struct abiss_msg *m, struct stream *s)
{
	*s = (struct stream) {
		.id = m->id, .dev = m->dev, .ino = m->ino, .rate = m->rate,
		.buffer = m->buffer, .pid = m->pid, .uid = m->uid, .gid = m->gid,
		.groups = m->groups, .ngroups = m->ngroups, .group = NO_GROUP,
	};
}

/*
 * The device of mount @mnt_id in /proc/@pid/mountinfo (its third field,
 * the st_dev of the file system), or 0.
 */
static uint64_t dev_of_mount(uint32_t pid, unsigned int mnt_id)
{
	unsigned int id, maj, min;
	uint64_t dev = 0;
	char path[32], *line = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/mountinfo", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!dev && getline(&line, &len, f) > 0)
		if (sscanf(line, "%u %*u %u:%u", &id, &maj, &min) == 3 && id == mnt_id)
			dev = makedev(maj, min);
	free(line);
	fclose(f);
	return dev;
}

/*
 * Is the file of fd @name in /proc/PID/fdinfo (@fdinfo) inode @s->ino on
 * device @s->dev?  The 'ino:' and 'mnt_id:' lines, then the mount's device.
 */
static bool fd_is_file_of(int fdinfo, const char *name, const struct stream *s)
{
	unsigned long long ino = 0;
	unsigned int mnt_id = 0;
	bool have_ino = false, have_mnt = false;
	char buf[512], *line, *save;
	ssize_t n;
	int fd;

	fd = openat(fdinfo, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* procfs's own lines come first: a driver's that follow are not read. */
	for (line = strtok_r(buf, "\n", &save); line && !(have_ino && have_mnt);
	     line = strtok_r(NULL, "\n", &save)) {
		have_ino = have_ino || sscanf(line, "ino: %llu", &ino) == 1;
		have_mnt = have_mnt || sscanf(line, "mnt_id: %u", &mnt_id) == 1;
	}
	return have_ino && have_mnt && ino == s->ino && dev_of_mount(s->pid, mnt_id) == s->dev;
}

/*
 * The path of the file @s reads, if process @s->pid still has it open, for
 * the log.  The asker owns that file and may have put it on its own FUSE
 * mount (or a hung NFS one) where a stat() of it never returns: so the file
 * is never touched.  readlink() of /proc/PID/fd/N and reading
 * /proc/PID/fdinfo/N (its 'ino:' and 'mnt_id:' lines) and
 * /proc/PID/mountinfo are answered by procfs from the kernel's own
 * structures (fs/proc/fd.c, fs/proc/base.c: proc_fd_link(), d_path()),
 * without calling into the file's file system.  Only fds whose link is a
 * path are looked at: the others (sockets, pipes, epoll, io_uring, ...)
 * are no stream's, and some of their fdinfo waits on a lock the process
 * may hold.  Gives up after NAME_MAX_FDS fds.
 */
static bool path_of(const struct stream *s, char *path, size_t len)
{
	unsigned int seen = 0;
	char fd_dir[32], fdinfo_dir[40];
	struct dirent *e;
	bool found = false;
	int fdinfo;
	ssize_t n;
	DIR *d;

	snprintf(fd_dir, sizeof(fd_dir), "/proc/%u/fd", s->pid);
	snprintf(fdinfo_dir, sizeof(fdinfo_dir), "/proc/%u/fdinfo", s->pid);
	d = opendir(fd_dir);
	if (!d)
		return false;
	fdinfo = open(fdinfo_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	while (fdinfo >= 0 && !found && seen++ < NAME_MAX_FDS && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), e->d_name, path, len - 1);
		if (n <= 0 || path[0] != '/')
			continue;
		path[n] = '\0';
		found = fd_is_file_of(fdinfo, e->d_name, s);
	}
	if (fdinfo >= 0)
		close(fdinfo);
	closedir(d);
	return found;
}

/*
 * "stream 7 (pid 12 uid 0 gid 0, file 8:1:42 '/mnt/f', rate 2000000 B/s,
 * buffer 65536)", the path when it can be found.
 */
static const char *describe(const struct stream *s)
{
	static char buf[PATH_MAX + 200];
	char path[PATH_MAX];
	bool named = path_of(s, path, sizeof(path));

	snprintf(buf, sizeof(buf),
		 "stream %llu (pid %u uid %u gid %u, file %u:%u:%llu%s%s%s, rate %llu B/s, "
		 "buffer %llu)", (unsigned long long)s->id, s->pid, s->uid, s->gid,
		 major(s->dev), minor(s->dev), (unsigned long long)s->ino,
		 named ? " '" : "", named ? path : "", named ? "'" : "",
		 (unsigned long long)s->rate, (unsigned long long)s->buffer);
	return buf;
}

static void handle_request(const struct abiss_msg *m)
{
	struct abiss_reply r = { .size = sizeof(r), .id = m->id };
	static char who[PATH_MAX + 200];
	struct verdict v;
	struct stream s, gone;
	ssize_t n;

	msg_to_stream(m, &s);
	/* Now, while the asker waits for us with the file open: not after. */
	snprintf(who, sizeof(who), "%s", describe(&s));
	policy_admit(&policy, &s, &v);
	r.verdict = v.error ? ABISS_VERDICT_DENY : ABISS_VERDICT_ACCEPT;
	r.error = v.error;
	/* The status is right by the time the stream can start. */
	if (!v.error)
		write_status(false);
	n = write(dev_fd, &r, sizeof(r));
	if (n != sizeof(r)) {
		/* The kernel gave up on the request (or it is gone): no stream. */
		logmsg(LOG_ERR, "%s: cannot send the verdict: %s", who,
		       n < 0 ? strerror(errno) : "short write");
		if (!v.error) {
			policy_release(&policy, s.id, &gone);
			write_status(false);
		}
		return;
	}
	if (v.error)
		logmsg(LOG_NOTICE, "%s: denied with %s: %s", who,
		       strerrorname_np(v.error), v.why);
	else
		logmsg(LOG_INFO, "%s: accepted: %s", who, v.why);
}

static void handle_end(const struct abiss_msg *m)
{
	struct stream gone;

	if (policy_release(&policy, m->id, &gone)) {
		logmsg(LOG_WARNING, "end of unknown stream %llu (%s): ignored",
		       (unsigned long long)m->id, abiss_end_reason(m->reason));
		return;
	}
	logmsg(LOG_INFO, "%s: ended (%s): reservation released", describe(&gone),
	       abiss_end_reason(m->reason));
	write_status(false);
}

static void handle_live(const struct abiss_msg *m)
{
	struct stream s;

	msg_to_stream(m, &s);
	if (policy_live(&policy, &s)) {
		logmsg(LOG_WARNING, "%s: already known: ignored", describe(&s));
		return;
	}
	logmsg(LOG_INFO, "%s: admitted before this abissd started: accounted",
	       describe(&s));
	write_status(false);
}

/*
 * One read() of the device: normally one record, but walk as many as it
 * holds.  Anything malformed is logged and the rest of the read dropped.
 */
static void handle_records(const unsigned char *buf, size_t len)
{
	/* A record after another in one read may not be aligned: copied. */
	static uint64_t rec[MSG_BUF_SIZE / sizeof(uint64_t)];
	struct abiss_msg *m = (struct abiss_msg *)rec;
	uint32_t size;
	size_t left;

	for (; len; buf += size, len -= size) {
		left = len;
		if (left < 2 * sizeof(uint32_t)) {
			logmsg(LOG_WARNING, "short record (%zu bytes): ignored", left);
			return;
		}
		memcpy(&size, buf, sizeof(size));
		if (size > left || size > MSG_BUF_SIZE) {
			logmsg(LOG_WARNING, "bad record (size %u, %zu bytes read): ignored",
			       size, left);
			return;
		}
		memcpy(m, buf, size);
		if (size < sizeof(*m) || m->ngroups > ABISS_MSG_MAX_GROUPS ||
		    size != sizeof(*m) + m->ngroups * sizeof(m->groups[0])) {
			logmsg(LOG_WARNING, "bad record (size %u, %zu bytes read): ignored",
			       size, left);
			return;
		}
		logmsg(LOG_DEBUG, "message type %u id %llu pid %u uid %u gid %u groups %u "
		       "reason %u dev %u:%u ino %llu rate %llu buffer %llu",
		       m->type, (unsigned long long)m->id, m->pid, m->uid, m->gid,
		       m->ngroups, m->reason, major(m->dev), minor(m->dev),
		       (unsigned long long)m->ino, (unsigned long long)m->rate,
		       (unsigned long long)m->buffer);
		switch (m->type) {
		case ABISS_MSG_REQUEST:
			handle_request(m);
			break;
		case ABISS_MSG_END:
			handle_end(m);
			break;
		case ABISS_MSG_LIVE:
			handle_live(m);
			break;
		default:
			logmsg(LOG_WARNING, "unknown message type %u (stream %llu): ignored",
			       m->type, (unsigned long long)m->id);
		}
	}
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		got_usr1 = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else
		got_stop = sig;
}

static void reload_on_hup(void)
{
	char msg[512];

	if (reload_config(msg, sizeof(msg)))
		logmsg(LOG_ERR, "SIGHUP: %s: keeping the old policy", msg);
	else
		logmsg(LOG_INFO, "SIGHUP: '%s' reloaded", opt.config);
}

/* Read and handle what the kernel sent; false when the channel is gone. */
static bool read_device(void)
{
	static unsigned char buf[MSG_BUF_SIZE] __attribute__((aligned(8)));
	ssize_t n;

	n = read(dev_fd, buf, sizeof(buf));
	if (n < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return true;
		logmsg(LOG_ERR, "read '%s': %m", opt.device);
		return false;
	}
	if (n == 0) {
		logmsg(LOG_ERR, "'%s' was closed", opt.device);
		return false;
	}
	handle_records(buf, (size_t)n);
	return true;
}

/*
 * Signals stay blocked but in ppoll(), so a SIGTERM is never lost between
 * checking got_stop and going to sleep.
 */
static int serve(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGUSR1, SIGHUP };
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd pfd[2 + CONTROL_MAX_CLIENTS];
	sigset_t block, orig;
	size_t i, n;

	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &block, &orig);

	while (!got_stop) {
		if (got_usr1) {
			got_usr1 = 0;
			write_status(true);
		}
		if (got_hup) {
			got_hup = 0;
			reload_on_hup();
		}
		pfd[0] = (struct pollfd) { .fd = dev_fd, .events = POLLIN };
		n = control_pollfds(&pfd[1]);
		if (ppoll(pfd, n + 1, NULL, &orig) < 0) {
			if (errno == EINTR)
				continue;
			logmsg(LOG_ERR, "poll '%s': %m", opt.device);
			return EXIT_FAIL;
		}
		/* The kernel first: a stream's end may free what a client asks. */
		if (pfd[0].revents && !read_device())
			return EXIT_FAIL;
		control_serve(&pfd[1], n);
	}
	logmsg(LOG_INFO, "exiting on %s", strsignal(got_stop));
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static char err_name[64];
	char msg[512], mainpid[32] = "";
	int pid_fd, stale_fd, ret;

	atexit(close_stdout);
	policy_init(&policy);
	parse_args(argc, argv);
	if (opt.calibrate)
		return calibrate(opt.calibrate, opt.calibrate_ns, opt.calibration, opt.config,
				 opt.config_given);
	if (opt.foreground && stderr_is_journal()) {
		opt.journal = true;
		/*
		 * err(3) starts its lines with the program's name: this one
		 * makes them the journal's errors ("<3>abissd: ...").
		 */
		snprintf(err_name, sizeof(err_name), "<%d>%s", LOG_ERR,
			 program_invocation_short_name);
		program_invocation_short_name = err_name;
	}
	if (reload_config(msg, sizeof(msg)))
		errx(EXIT_FAIL, "%s", msg);

	atexit(remove_pidfile_tmp);
	pid_fd = pidfile_prepare(&stale_fd);
	dev_fd = open_device(opt.device);
	control_open(opt.socket);
	drop_capabilities();
	if (!opt.foreground) {
		openlog(program_invocation_short_name, LOG_PID, LOG_DAEMON);
		if (daemon(0, 0))
			err(EXIT_FAIL, "cannot daemonize");
		snprintf(mainpid, sizeof(mainpid), "MAINPID=%d\n", (int)getpid());
	}
	ret = pidfile_publish(pid_fd) ? EXIT_FAIL : EXIT_OK;
	if (stale_fd >= 0)
		close(stale_fd);
	if (ret == EXIT_OK) {
		logmsg(LOG_INFO, "started on '%s'", opt.device);
		if (policy.cfg.default_capacity == NO_LIMIT && !policy.cfg.ncaps)
			logmsg(LOG_WARNING, "no capacity configured: every request will be denied");
		write_status(false);
		/* The device open, the policy loaded, the socket listening. */
		notify("%sREADY=1\nSTATUS=Serving on %s", mainpid, opt.device);
		ret = serve();
		notify("STOPPING=1");
		unlink(opt.pidfile);
	}

	control_close();
	if (opt.status_file)
		unlink(opt.status_file);
	close(dev_fd);
	close(pid_fd);
	policy_free(&policy);
	return ret;
}
