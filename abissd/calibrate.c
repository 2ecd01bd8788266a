// SPDX-License-Identifier: GPL-2.0
/*
 * abissd --calibrate DEV: measure the sustained sequential read rate of a
 * block device (or of a file, for the device it is on) with O_DIRECT reads,
 * so that the page cache does not flatter it, and write it as that
 * device's capacity line in the config file.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "abissd.h"
#include "util.h"

/* Bytes per read: large, so that the device streams; aligned for O_DIRECT. */
#define CALIBRATE_READ	(4 << 20)
#define CALIBRATE_ALIGN	4096

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

/* Is @line a 'capacity' line for @dev? */
static bool capacity_line_of(const char *line, uint64_t dev)
{
	char copy[1024], *word[3], *save, *w, msg[256];
	uint64_t d;
	int n = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	copy[strcspn(copy, "#")] = '\0';
	for (w = strtok_r(copy, " \t\r\n", &save); w && n < 3; w = strtok_r(NULL, " \t\r\n", &save))
		word[n++] = w;
	return n == 3 && !strcmp(word[0], "capacity") && strcmp(word[1], "*") &&
	       !spec_to_dev(word[1], &d, msg, sizeof(msg)) && d == dev;
}

/*
 * Replace @dev's capacity line in @config by @line, or append it, keeping
 * the rest: through a temporary file renamed over it.
 */
static void write_capacity(const char *config, uint64_t dev, const char *newline)
{
	char *tmp, *line = NULL;
	bool replaced = false, ends_nl = true;
	size_t cap = 0;
	struct stat st;
	FILE *in, *out;
	ssize_t len;
	int fd;

	if (asprintf(&tmp, "%s.XXXXXX", config) < 0)
		errx(EXIT_FAIL, "out of memory");
	in = fopen(config, "re");
	if (!in && errno != ENOENT)
		err(EXIT_FAIL, "cannot open '%s'", config);
	fd = mkstemp(tmp);
	if (fd < 0)
		err(EXIT_FAIL, "cannot create '%s'", tmp);
	if (fchmod(fd, in && !fstat(fileno(in), &st) ? st.st_mode & 07777 : 0644))
		warn("cannot set the mode of '%s'", tmp);
	out = fdopen(fd, "w");
	if (!out)
		err(EXIT_FAIL, "cannot write '%s'", tmp);
	while (in && (len = getline(&line, &cap, in)) > 0) {
		if (!replaced && capacity_line_of(line, dev)) {
			fputs(newline, out);
			replaced = true;
		} else {
			fputs(line, out);
		}
		ends_nl = line[len - 1] == '\n';
	}
	if (!replaced)
		fprintf(out, "%s%s", ends_nl ? "" : "\n", newline);
	free(line);
	if ((in && ferror(in)) || fflush(out) || fsync(fd) || fclose(out)) {
		unlink(tmp);
		err(EXIT_FAIL, "cannot write '%s'", tmp);
	}
	if (in)
		fclose(in);
	if (rename(tmp, config)) {
		unlink(tmp);
		err(EXIT_FAIL, "cannot rename '%s' to '%s'", tmp, config);
	}
	free(tmp);
}

int calibrate(const char *path, uint64_t ns, const char *config)
{
	uint64_t dev, rate, bytes, took;
	char *newline;
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

	rate = measure(fd, path, ns, &bytes, &took);
	close(fd);
	printf("%s: %u:%u reads %llu bytes/s (%llu bytes in %llu ms)\n", path,
	       major(dev), minor(dev), (unsigned long long)rate, (unsigned long long)bytes,
	       (unsigned long long)(took / NSEC_PER_MSEC));

	if (asprintf(&newline, "capacity %u:%u %llu\t# abissd --calibrate %s\n",
		     major(dev), minor(dev), (unsigned long long)rate, path) < 0)
		errx(EXIT_FAIL, "out of memory");
	write_capacity(config, dev, newline);
	printf("%s: capacity of %u:%u written\n", config, major(dev), minor(dev));
	free(newline);
	return EXIT_OK;
}
