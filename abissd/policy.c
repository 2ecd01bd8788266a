// SPDX-License-Identifier: GPL-2.0
/*
 * abissd's admission policy: admit a stream while the sum of the rates
 * admitted on its device stays at or under the device's capacity.
 *
 * Tables are plain arrays searched linearly: a system has a handful of
 * devices and tens of streams.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "policy.h"
#include "util.h"

void policy_init(struct policy *p)
{
	memset(p, 0, sizeof(*p));
}

void policy_free(struct policy *p)
{
	free(p->devs);
	free(p->streams);
	policy_init(p);
}

static void *grow(void *array, size_t n, size_t size)
{
	void *a = realloc(array, (n + 1) * size);

	if (!a) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(EXIT_FAIL);
	}
	return a;
}

static struct device *find_dev(const struct policy *p, uint64_t dev)
{
	size_t i;

	for (i = 0; i < p->ndevs; i++)
		if (p->devs[i].dev == dev)
			return &p->devs[i];
	return NULL;
}

static struct device *get_dev(struct policy *p, uint64_t dev)
{
	struct device *d = find_dev(p, dev);

	if (d)
		return d;
	p->devs = grow(p->devs, p->ndevs, sizeof(*p->devs));
	d = &p->devs[p->ndevs++];
	memset(d, 0, sizeof(*d));
	d->dev = dev;
	return d;
}

static struct stream *find_stream(const struct policy *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->nstreams; i++)
		if (p->streams[i].id == id)
			return &p->streams[i];
	return NULL;
}

static void add_stream(struct policy *p, const struct stream *s)
{
	struct device *d = get_dev(p, s->dev);

	p->streams = grow(p->streams, p->nstreams, sizeof(*p->streams));
	p->streams[p->nstreams++] = *s;
	d->reserved = d->reserved > UINT64_MAX - s->rate ? UINT64_MAX
							  : d->reserved + s->rate;
	d->streams++;
}

/* The capacity that applies to @dev; false if none does. */
static bool capacity_of(const struct policy *p, uint64_t dev, uint64_t *cap)
{
	const struct device *d = find_dev(p, dev);

	if (d && d->has_capacity)
		*cap = d->capacity;
	else if (p->has_default)
		*cap = p->default_capacity;
	else
		return false;
	return true;
}

static int spec_to_dev(const char *spec, uint64_t *dev, char *err, size_t errlen)
{
	unsigned int maj, min;
	struct stat st;
	char end;

	if (sscanf(spec, "%u:%u%c", &maj, &min, &end) == 2) {
		*dev = makedev(maj, min);
		return 0;
	}
	if (spec[0] != '/') {
		snprintf(err, errlen, "bad device '%s' (MAJOR:MINOR, a path or *)", spec);
		return -1;
	}
	if (stat(spec, &st)) {
		snprintf(err, errlen, "cannot stat '%s': %s", spec, strerror(errno));
		return -1;
	}
	*dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	return 0;
}

int policy_set_capacity(struct policy *p, const char *spec, uint64_t rate,
			char *err, size_t errlen)
{
	struct device *d;
	uint64_t dev;

	if (!strcmp(spec, "*")) {
		p->has_default = true;
		p->default_capacity = rate;
		return 0;
	}
	if (spec_to_dev(spec, &dev, err, errlen))
		return -1;
	d = get_dev(p, dev);
	d->has_capacity = true;
	d->capacity = rate;
	return 0;
}

int policy_load(struct policy *p, const char *path, bool must_exist,
		char *err, size_t errlen)
{
	char line[1024], what[256], *word[4], *save, *hash;
	unsigned int lineno = 0, n;
	uint64_t rate;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(what, sizeof(what), "line too long");
			goto bad;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		n = 0;
		for (char *w = strtok_r(line, " \t\r\n", &save); w;
		     w = strtok_r(NULL, " \t\r\n", &save)) {
			if (n == 4)
				break;
			word[n++] = w;
		}
		if (n == 0)
			continue;
		if (strcmp(word[0], "capacity")) {
			snprintf(what, sizeof(what), "unknown keyword '%.64s'", word[0]);
			goto bad;
		}
		if (n != 3) {
			snprintf(what, sizeof(what),
				 "expected 'capacity <MAJOR:MINOR | path | *> <rate>'");
			goto bad;
		}
		if (parse_rate(word[2], &rate)) {
			snprintf(what, sizeof(what), "bad rate: '%.64s'", word[2]);
			goto bad;
		}
		if (policy_set_capacity(p, word[1], rate, what, sizeof(what)))
			goto bad;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		ret = -1;
	}
	fclose(f);
	return ret;
bad:
	snprintf(err, errlen, "%s:%u: %s", path, lineno, what);
	fclose(f);
	return -1;
}

void policy_admit(struct policy *p, const struct stream *s, struct verdict *v)
{
	struct device *d = find_dev(p, s->dev);
	uint64_t cap, reserved = d ? d->reserved : 0;
	unsigned int maj = major(s->dev), min = minor(s->dev);

	v->error = 0;
	if (find_stream(p, s->id)) {
		v->error = EACCES;
		snprintf(v->why, sizeof(v->why), "stream id already admitted");
	} else if (s->rate == 0) {
		v->error = EACCES;
		snprintf(v->why, sizeof(v->why), "rate 0");
	} else if (!capacity_of(p, s->dev, &cap)) {
		v->error = EACCES;
		snprintf(v->why, sizeof(v->why), "no capacity configured for %u:%u",
			 maj, min);
	} else if (s->rate > cap || reserved > cap - s->rate) {
		v->error = ENOSPC;
		snprintf(v->why, sizeof(v->why),
			 "over capacity: %u:%u has %llu of %llu B/s reserved",
			 maj, min, (unsigned long long)reserved,
			 (unsigned long long)cap);
	} else {
		add_stream(p, s);
		snprintf(v->why, sizeof(v->why), "%u:%u now has %llu of %llu B/s reserved",
			 maj, min, (unsigned long long)(reserved + s->rate),
			 (unsigned long long)cap);
	}
}

int policy_live(struct policy *p, const struct stream *s)
{
	if (find_stream(p, s->id))
		return -1;
	add_stream(p, s);
	return 0;
}

int policy_release(struct policy *p, uint64_t id, struct stream *gone)
{
	struct stream *s = find_stream(p, id);
	struct device *d;

	if (!s)
		return -1;
	*gone = *s;
	d = find_dev(p, s->dev);
	d->reserved -= s->rate;
	d->streams--;
	*s = p->streams[--p->nstreams];
	return 0;
}

void policy_dump(const struct policy *p, FILE *f)
{
	const struct device *d;
	const struct stream *s;
	uint64_t cap;
	size_t i;

	fprintf(f, "# abissd reservations (rates in bytes/s)\n");
	if (p->has_default)
		fprintf(f, "default capacity %llu\n",
			(unsigned long long)p->default_capacity);
	for (i = 0; i < p->ndevs; i++) {
		d = &p->devs[i];
		fprintf(f, "device %u:%u capacity ", major(d->dev), minor(d->dev));
		if (capacity_of(p, d->dev, &cap))
			fprintf(f, "%llu", (unsigned long long)cap);
		else
			fprintf(f, "none");
		fprintf(f, " reserved %llu streams %u\n",
			(unsigned long long)d->reserved, d->streams);
	}
	for (i = 0; i < p->nstreams; i++) {
		s = &p->streams[i];
		fprintf(f, "stream %llu device %u:%u ino %llu rate %llu buffer %llu "
			"pid %u uid %u gid %u\n",
			(unsigned long long)s->id, major(s->dev), minor(s->dev),
			(unsigned long long)s->ino, (unsigned long long)s->rate,
			(unsigned long long)s->buffer, s->pid, s->uid, s->gid);
	}
}
