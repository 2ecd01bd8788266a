// SPDX-License-Identifier: GPL-2.0
/*
 * abissd --calibrate DEV: measure the sustained sequential read rate of a
 * block device (or of a file, for the device it is on) with O_DIRECT reads,
 * so that the page cache does not flatter it, and keep it in the
 * calibration state file, which abissd reads at start and on each reload.
 *
 * Not in the config file: that is the admin's (a conffile a package
 * upgrade must be able to compare with its own), and a program rewriting
 * it would lose its layout and fight the admin's editor.  Not by
 * MAJOR:MINOR either: those are handed out at boot in probe order, so a
 * number measured today may be another disk tomorrow.  A device is kept by
 * a name udev derives from the hardware (/dev/disk/by-id, else by-path),
 * mapped to its current number each time the file is read.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <unistd.h>

#include "abissd.h"
#include "util.h"

/* Bytes per read: large, so that the device streams; aligned for O_DIRECT. */
#define CALIBRATE_READ	(4 << 20)
#define CALIBRATE_ALIGN	4096

/* Where udev keeps the names of block devices that outlive a reboot, best first. */
static const char *const stable_dirs[] = { "/dev/disk/by-id", "/dev/disk/by-path" };

/* Read @fd from its start for up to @ns; returns the bytes per second. */
static uint64_t measure(int fd, const char *path, uint64_t ns, uint64_t *bytes,
			uint64_t *took)
{
	uint64_t start, total = 0, elapsed;
	void *buf;
	ssize_t n;

	if (posix_memalign(&buf, CALIBRATE_ALIGN, CALIBRATE_READ))
		errx(EXIT_FAIL, "out of memory");
	start = now_ns();
	do {
		n = read(fd, buf, CALIBRATE_READ);
		if (n < 0 && errno != EINTR)
			err(EXIT_FAIL, "cannot read '%s'", path);
		if (n > 0)
			total += (uint64_t)n;
		elapsed = now_ns() - start;
	} while (n != 0 && elapsed < ns);
	free(buf);
	if (total == 0)
		errx(EXIT_FAIL, "'%s' is empty: nothing to measure", path);
	*bytes = total;
	*took = elapsed ? elapsed : 1;
	return muldiv64(total, NSEC_PER_SEC, *took);
}

/*
 * The name the calibration of @path (@st) is kept under: for a block
 * device, the first link (in sorted order, so that the choice does not
 * change from one run to the next) to it in stable_dirs; for a file, its
 * own absolute path, which stat() maps to its file system's device.
 */
static char *stable_name(const char *path, const struct stat *st)
{
	struct dirent **names;
	char *found = NULL, *link;
	struct stat lst;
	size_t d;
	int i, n;

	for (d = 0; S_ISBLK(st->st_mode) && !found &&
	     d < sizeof(stable_dirs) / sizeof(stable_dirs[0]); d++) {
		n = scandir(stable_dirs[d], &names, NULL, alphasort);
		for (i = 0; i < n; i++) {
			if (!found && names[i]->d_name[0] != '.' &&
			    asprintf(&link, "%s/%s", stable_dirs[d], names[i]->d_name) >= 0) {
				if (!stat(link, &lst) && S_ISBLK(lst.st_mode) &&
				    lst.st_rdev == st->st_rdev)
					found = link;
				else
					free(link);
			}
			free(names[i]);
		}
		if (n >= 0)
			free(names);
	}
	if (found)
		return found;
	found = realpath(path, NULL);
	if (!found)
		err(EXIT_FAIL, "cannot resolve '%s'", path);
	if (S_ISBLK(st->st_mode))
		warnx("'%s' has no link in /dev/disk/by-id or /dev/disk/by-path: kept as '%s', "
		      "which may be another device after a reboot", path, found);
	return found;
}

/* Is @line an entry of state file for @key, or another name of @dev? */
static bool entry_of(const char *line, const char *key, uint64_t dev)
{
	char copy[1024], *name, *save, msg[256];
	uint64_t d;

	snprintf(copy, sizeof(copy), "%s", line);
	copy[strcspn(copy, "#")] = '\0';
	name = strtok_r(copy, " \t\r\n", &save);
	return name && (!strcmp(name, key) ||
			(!spec_to_dev(name, &d, msg, sizeof(msg)) && d == dev));
}

/*
 * Replace the entry of @key (or of any other name of @dev) in the state
 * file @state by @entry, or append it, keeping the other devices' entries:
 * through a temporary file renamed over it.
 */
static void write_entry(const char *state, const char *key, uint64_t dev, const char *entry)
{
	char *tmp, *line = NULL;
	bool ends_nl = true;
	size_t cap = 0;
	FILE *in, *out;
	ssize_t len;
	int fd;

	make_parent_dirs(state);
	if (asprintf(&tmp, "%s.XXXXXX", state) < 0)
		errx(EXIT_FAIL, "out of memory");
	in = fopen(state, "re");
	if (!in && errno != ENOENT)
		err(EXIT_FAIL, "cannot open '%s'", state);
	fd = mkstemp(tmp);
	if (fd < 0)
		err(EXIT_FAIL, "cannot create '%s'", tmp);
	if (fchmod(fd, 0644))
		warn("cannot set the mode of '%s'", tmp);
	out = fdopen(fd, "w");
	if (!out)
		err(EXIT_FAIL, "cannot write '%s'", tmp);
	if (!in)
		fputs("# abissd --calibrate's measurements: DEVICE RATE (bytes/s), see abissd(8).\n"
		      "# The config file's capacity lines win over these.\n", out);
	while (in && (len = getline(&line, &cap, in)) > 0) {
		if (!entry_of(line, key, dev))
			fputs(line, out);
		ends_nl = line[len - 1] == '\n';
	}
	fprintf(out, "%s%s", ends_nl ? "" : "\n", entry);
	free(line);
	if ((in && ferror(in)) || fflush(out) || fsync(fd) || fclose(out)) {
		unlink(tmp);
		err(EXIT_FAIL, "cannot write '%s'", tmp);
	}
	if (in)
		fclose(in);
	if (rename(tmp, state)) {
		unlink(tmp);
		err(EXIT_FAIL, "cannot rename '%s' to '%s'", tmp, state);
	}
	free(tmp);
}

/* Say so if the config file @config has its own line for @dev. */
static void note_config_line(const char *config, bool must_exist, uint64_t dev)
{
	struct config c;
	char msg[512];
	size_t i;

	config_init(&c);
	if (config_load(&c, config, must_exist, msg, sizeof(msg))) {
		warnx("%s", msg);
		return;
	}
	for (i = 0; i < c.ncaps; i++)
		if (c.caps[i].dev == dev)
			printf("%s:%u: sets the capacity of %u:%u: it wins over the calibration\n",
			       config, c.caps[i].line, major(dev), minor(dev));
	config_free(&c);
}

int calibrate(const char *path, uint64_t ns, const char *state, const char *config,
	      bool config_given)
{
	uint64_t dev, rate, bytes, took;
	char *entry, *key;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		warnx("'%s' does not take O_DIRECT: the page cache may flatter it", path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		err(EXIT_FAIL, "cannot open '%s'", path);
	if (fstat(fd, &st))
		err(EXIT_FAIL, "cannot stat '%s'", path);
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		errx(EXIT_FAIL, "'%s' is not a block device or a regular file", path);
	dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	key = stable_name(path, &st);
	/* The state file is words on a line. */
	if (strpbrk(key, " \t\r\n#"))
		errx(EXIT_FAIL, "cannot keep '%s' in '%s': its name has a blank or a '#'",
		     key, state);

	rate = measure(fd, path, ns, &bytes, &took);
	close(fd);
	printf("%s: %u:%u reads %llu bytes/s (%llu bytes in %llu ms)\n", path,
	       major(dev), minor(dev), (unsigned long long)rate, (unsigned long long)bytes,
	       (unsigned long long)(took / NSEC_PER_MSEC));

	if (asprintf(&entry, "%s %llu\t# abissd --calibrate %s (%u:%u then)\n", key,
		     (unsigned long long)rate, path, major(dev), minor(dev)) < 0)
		errx(EXIT_FAIL, "out of memory");
	write_entry(state, key, dev, entry);
	printf("%s: capacity of %s written\n", state, key);
	note_config_line(config, config_given, dev);
	free(entry);
	free(key);
	return EXIT_OK;
}

void calibration_load(struct config *c, const char *state)
{
	char line[1024], *key, *rate_s, *extra, *save, msg[256];
	unsigned int n = 0;
	uint64_t dev, rate;
	FILE *f;

	f = fopen(state, "re");
	if (!f) {
		if (errno != ENOENT)
			logmsg(LOG_WARNING, "cannot open '%s': %m: no calibration", state);
		return;
	}
	/*
	 * A bad or stale entry is skipped, never fatal: the file is ours, not
	 * the admin's, and a disk unplugged must not keep abissd from starting.
	 */
	while (fgets(line, sizeof(line), f)) {
		n++;
		line[strcspn(line, "#")] = '\0';
		key = strtok_r(line, " \t\r\n", &save);
		if (!key)
			continue;
		rate_s = strtok_r(NULL, " \t\r\n", &save);
		extra = strtok_r(NULL, " \t\r\n", &save);
		if (!rate_s || extra || parse_rate(rate_s, &rate) || rate == NO_LIMIT)
			logmsg(LOG_WARNING, "%s:%u: expected 'DEVICE RATE': ignored", state, n);
		else if (spec_to_dev(key, &dev, msg, sizeof(msg)))
			logmsg(LOG_WARNING, "%s:%u: %s: ignored", state, n, msg);
		else if (config_add_capacity(c, dev, rate))
			logmsg(LOG_DEBUG, "%s:%u: the config file sets the capacity of %u:%u",
			       state, n, major(dev), minor(dev));
	}
	fclose(f);
}
