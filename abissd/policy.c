// SPDX-License-Identifier: GPL-2.0
/*
 * abissd's admission policy: who may stream (user and group lines, root by
 * default), within which limits (per stream, per uid or gid in total and in
 * number), from which devices (those with a capacity, on the file system
 * types allowed), while the sum of the rates admitted on a device stays at
 * or under its capacity times the ceiling.
 *
 * Tables are plain arrays searched linearly: a system has a handful of
 * devices, rules and tens of streams.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "policy.h"
#include "util.h"

/* Words a config line may have: a keyword and a few file system types. */
#define MAX_WORDS	32

static void *grow(void *array, size_t n, size_t size)
{
	void *a = realloc(array, (n + 1) * size);

	if (!a) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(EXIT_FAIL);
	}
	return a;
}

void config_init(struct config *c)
{
	memset(c, 0, sizeof(*c));
	c->default_capacity = NO_LIMIT;
	c->default_buffer = NO_LIMIT;
	c->ceiling = DEFAULT_CEILING;
}

void config_free(struct config *c)
{
	char **t;

	for (t = c->fstypes; t && *t; t++)
		free(*t);
	free(c->fstypes);
	free(c->caps);
	free(c->rules);
	config_init(c);
}

int spec_to_dev(const char *spec, uint64_t *dev, char *err, size_t errlen)
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

/* The 'capacity' line of @dev, if any. */
static const struct capacity *own_capacity(const struct config *c, uint64_t dev)
{
	size_t i;

	for (i = 0; i < c->ncaps; i++)
		if (c->caps[i].dev == dev)
			return &c->caps[i];
	return NULL;
}

static void add_capacity(struct config *c, uint64_t dev, uint64_t rate, uint64_t buffer,
			 unsigned int line)
{
	c->caps = grow(c->caps, c->ncaps, sizeof(*c->caps));
	c->caps[c->ncaps++] = (struct capacity) {
		.dev = dev, .rate = rate, .buffer = buffer, .line = line,
	};
}

int config_add_capacity(struct config *c, uint64_t dev, uint64_t rate)
{
	if (own_capacity(c, dev))
		return -1;
	add_capacity(c, dev, rate, NO_LIMIT, 0);
	return 0;
}

/* The config file being read, and where the message of its error goes. */
struct parser {
	struct config *c;
	unsigned int line;
	char *what;
	size_t len;
};

static int __attribute__((format(printf, 2, 3)))
bad(struct parser *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ps->what, ps->len, fmt, ap);
	va_end(ap);
	return -1;
}

static int dup_of(struct parser *ps, const char *what, unsigned int first)
{
	return bad(ps, "duplicate '%s' (first on line %u)", what, first);
}

/* capacity <MAJOR:MINOR | path | *> <rate> [buffer <size>] */
static int parse_capacity(struct parser *ps, char **w, int n)
{
	uint64_t rate, dev, buffer = NO_LIMIT;
	struct config *c = ps->c;
	const struct capacity *first;

	if (n != 3 && (n != 5 || strcmp(w[3], "buffer")))
		return bad(ps, "expected 'capacity <MAJOR:MINOR | path | *> <rate> [buffer <size>]'");
	if (parse_size(w[2], &rate))
		return bad(ps, "bad rate: '%.64s'", w[2]);
	if (n == 5 && (parse_size(w[4], &buffer) || buffer == NO_LIMIT))
		return bad(ps, "bad size: '%.64s'", w[4]);
	if (!strcmp(w[1], "*")) {
		if (c->default_line)
			return dup_of(ps, "capacity *", c->default_line);
		c->default_capacity = rate;
		c->default_buffer = buffer;
		c->default_line = ps->line;
		return 0;
	}
	if (spec_to_dev(w[1], &dev, ps->what, ps->len))
		return -1;
	first = own_capacity(c, dev);
	if (first)
		return bad(ps, "duplicate capacity of %u:%u (first on line %u)",
			   major(dev), minor(dev), first->line);
	add_capacity(c, dev, rate, buffer, ps->line);
	return 0;
}

/* ceiling <percent> */
static int parse_ceiling(struct parser *ps, char **w, int n)
{
	uint64_t pct;

	if (n != 2)
		return bad(ps, "expected 'ceiling <percent>'");
	if (parse_u64(w[1], &pct))
		return bad(ps, "bad number: '%.64s'", w[1]);
	if (pct < 1 || pct > 100)
		return bad(ps, "ceiling %.64s out of range (1-100)", w[1]);
	if (ps->c->ceiling_line)
		return dup_of(ps, "ceiling", ps->c->ceiling_line);
	ps->c->ceiling = (unsigned int)pct;
	ps->c->ceiling_line = ps->line;
	return 0;
}

/* filesystems <type>... */
static int parse_filesystems(struct parser *ps, char **w, int n)
{
	struct config *c = ps->c;
	int i;

	if (n < 2)
		return bad(ps, "expected 'filesystems <type>...'");
	if (c->fstypes_line)
		return dup_of(ps, "filesystems", c->fstypes_line);
	c->fstypes = calloc((size_t)n, sizeof(*c->fstypes));
	if (!c->fstypes)
		return bad(ps, "out of memory");
	for (i = 1; i < n; i++) {
		c->fstypes[i - 1] = strdup(w[i]);
		if (!c->fstypes[i - 1])
			return bad(ps, "out of memory");
	}
	c->fstypes_line = ps->line;
	return 0;
}

/* A uid or gid: a number (no passwd entry needed) or a name. */
static int parse_id(struct parser *ps, enum rule_kind kind, const char *s, uint32_t *id)
{
	const char *what = kind == RULE_GROUP ? "group" : "user";
	struct passwd *pw;
	struct group *gr;
	uint64_t v;

	if (s[strspn(s, "0123456789")] == '\0') {
		/* (uid_t)-1 means "no id" to the kernel. */
		if (parse_u64(s, &v) || v >= UINT32_MAX)
			return bad(ps, "%s id %.64s out of range (0-%u)", what, s,
				   UINT32_MAX - 1);
		*id = (uint32_t)v;
		return 0;
	}
	if (kind == RULE_GROUP) {
		gr = getgrnam(s);
		if (!gr)
			return bad(ps, "unknown group '%.64s'", s);
		*id = (uint32_t)gr->gr_gid;
	} else {
		pw = getpwnam(s);
		if (!pw)
			return bad(ps, "unknown user '%.64s'", s);
		*id = (uint32_t)pw->pw_uid;
	}
	return 0;
}

/* The limits of a user or group line: [rate R] [total R] [streams N] [buffer B]. */
static int parse_limits(struct parser *ps, struct rule *r, char **w, int n)
{
	uint64_t *field;
	int i;

	for (i = 2; i < n; i += 2) {
		if (!strcmp(w[i], "rate"))
			field = &r->rate;
		else if (!strcmp(w[i], "total"))
			field = &r->total;
		else if (!strcmp(w[i], "streams"))
			field = &r->streams;
		else if (!strcmp(w[i], "buffer"))
			field = &r->buffer;
		else
			return bad(ps, "unknown limit '%.64s' (rate, total, streams or buffer)",
				   w[i]);
		if (i + 1 == n)
			return bad(ps, "'%s' needs a value", w[i]);
		if (*field != NO_LIMIT)
			return bad(ps, "duplicate '%s' on the line", w[i]);
		if (field == &r->streams) {
			if (parse_u64(w[i + 1], field))
				return bad(ps, "bad number: '%.64s'", w[i + 1]);
			if (*field > UINT32_MAX)
				return bad(ps, "streams %.64s out of range (0-%u)", w[i + 1],
					   UINT32_MAX);
		} else if (field == &r->buffer) {
			if (parse_size(w[i + 1], field) || *field == NO_LIMIT)
				return bad(ps, "bad size: '%.64s'", w[i + 1]);
		} else if (parse_size(w[i + 1], field) || *field == NO_LIMIT) {
			return bad(ps, "bad rate: '%.64s'", w[i + 1]);
		}
	}
	return 0;
}

static const char *rule_name(const struct rule *r, char *buf, size_t len)
{
	if (r->kind == RULE_ANY_USER)
		snprintf(buf, len, "user *");
	else
		snprintf(buf, len, "%s %u", r->kind == RULE_GROUP ? "group" : "user", r->id);
	return buf;
}

/* user <name | uid | *> [limits], group <name | gid> [limits] */
static int parse_rule(struct parser *ps, char **w, int n)
{
	struct rule r = {
		.kind = strcmp(w[0], "group") ? RULE_USER : RULE_GROUP,
		.rate = NO_LIMIT, .total = NO_LIMIT, .streams = NO_LIMIT, .buffer = NO_LIMIT,
		.line = ps->line,
	};
	struct config *c = ps->c;
	char name[32];
	size_t i;

	if (n < 2)
		return bad(ps, "expected '%s <name | id%s> [rate R] [total R] [streams N] [buffer B]'",
			   w[0], r.kind == RULE_USER ? " | *" : "");
	if (!strcmp(w[1], "*")) {
		if (r.kind == RULE_GROUP)
			return bad(ps, "no 'group *': 'user *' covers everyone");
		r.kind = RULE_ANY_USER;
	} else if (parse_id(ps, r.kind, w[1], &r.id)) {
		return -1;
	}
	if (parse_limits(ps, &r, w, n))
		return -1;
	for (i = 0; i < c->nrules; i++)
		if (c->rules[i].kind == r.kind && c->rules[i].id == r.id)
			return dup_of(ps, rule_name(&r, name, sizeof(name)), c->rules[i].line);
	c->rules = grow(c->rules, c->nrules, sizeof(*c->rules));
	c->rules[c->nrules++] = r;
	return 0;
}

static int parse_line(struct parser *ps, char *line)
{
	static const struct {
		const char *keyword;
		int (*parse)(struct parser *ps, char **w, int n);
	} keywords[] = {
		{ "capacity", parse_capacity },
		{ "ceiling", parse_ceiling },
		{ "filesystems", parse_filesystems },
		{ "user", parse_rule },
		{ "group", parse_rule },
	};
	char *word[MAX_WORDS], *save, *w;
	int n = 0;
	size_t i;

	line[strcspn(line, "#")] = '\0';
	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == MAX_WORDS)
			return bad(ps, "more than %d words", MAX_WORDS);
		word[n++] = w;
	}
	if (n == 0)
		return 0;
	for (i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (!strcmp(word[0], keywords[i].keyword))
			return keywords[i].parse(ps, word, n);
	return bad(ps, "unknown keyword '%.64s'", word[0]);
}

int config_load(struct config *c, const char *path, bool must_exist,
		char *err, size_t errlen)
{
	char line[1024], what[256];
	struct parser ps = { .c = c, .what = what, .len = sizeof(what) };
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		ps.line++;
		if (!strchr(line, '\n') && !feof(f))
			ret = bad(&ps, "line too long");
		else
			ret = parse_line(&ps, line);
		if (ret)
			snprintf(err, errlen, "%s:%u: %s", path, ps.line, what);
	}
	if (!ret && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		ret = -1;
	}
	fclose(f);
	if (ret)
		config_free(c);
	return ret;
}

void policy_init(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	config_init(&p->cfg);
}

void policy_free(struct policy *p)
{
	config_free(&p->cfg);
	free(p->devs);
	free(p->streams);
	policy_init(p);
}

void policy_set_config(struct policy *p, struct config *c)
{
	config_free(&p->cfg);
	p->cfg = *c;
	config_init(c);
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

const struct stream *policy_find(const struct policy *p, uint64_t id)
{
	size_t i;

	for (i = 0; i < p->nstreams; i++)
		if (p->streams[i].id == id)
			return &p->streams[i];
	return NULL;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Account @s, which counts under the group line of @group (or NO_GROUP). */
static void add_stream(struct policy *p, const struct stream *s, uint32_t group)
{
	struct device *d = get_dev(p, s->dev);
	struct stream *t;

	p->streams = grow(p->streams, p->nstreams, sizeof(*p->streams));
	t = &p->streams[p->nstreams++];
	*t = *s;
	t->groups = NULL;
	t->ngroups = 0;
	t->group = group;
	d->reserved = add_sat(d->reserved, s->rate);
	d->buffered = add_sat(d->buffered, s->buffer);
	d->streams++;
}

/* The capacity that applies to @dev; NO_LIMIT if none does. */
static uint64_t capacity_of(const struct config *c, uint64_t dev)
{
	const struct capacity *cap = own_capacity(c, dev);

	return cap ? cap->rate : c->default_capacity;
}

/* The sum of buffers that @dev's streams may hold; NO_LIMIT if unlimited. */
static uint64_t buffer_limit_of(const struct config *c, uint64_t dev)
{
	const struct capacity *cap = own_capacity(c, dev);

	return cap ? cap->buffer : c->default_buffer;
}

static uint64_t limit_of(const struct config *c, uint64_t cap)
{
	return muldiv64(cap, c->ceiling, 100);
}

/* The type of the file system mounted from @dev (/proc/self/mountinfo). */
static bool fs_type_of(uint64_t dev, char *type, size_t len)
{
	char line[4096], fmt[32];
	unsigned int maj, min;
	bool found = false;
	char *sep;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	snprintf(fmt, sizeof(fmt), "%%%zus", len - 1);
	while (!found && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		found = sep && sscanf(line, "%*u %*u %u:%u", &maj, &min) == 2 &&
			makedev(maj, min) == dev && sscanf(sep + 3, fmt, type) == 1;
	}
	fclose(f);
	return found;
}

/* Does the 'filesystems' line (if any) let @dev stream?  Why not in @v. */
static bool fs_allowed(const struct config *c, uint64_t dev, struct verdict *v)
{
	char type[64];
	char **t;

	if (!c->fstypes)
		return true;
	if (!fs_type_of(dev, type, sizeof(type))) {
		snprintf(v->why, sizeof(v->why), "%u:%u is not a mounted file system",
			 major(dev), minor(dev));
		return false;
	}
	for (t = c->fstypes; *t; t++)
		if (!strcmp(*t, type))
			return true;
	snprintf(v->why, sizeof(v->why), "%u:%u is %s, not in 'filesystems' (line %u)",
		 major(dev), minor(dev), type, c->fstypes_line);
	return false;
}

static bool in_groups(const struct stream *s, uint32_t gid)
{
	uint32_t i;

	for (i = 0; i < s->ngroups; i++)
		if (s->groups[i] == gid)
			return true;
	return false;
}

/*
 * The line that says what @s's process may do: the user line of its uid,
 * then the group line of its effective gid, then the first group line of
 * one of its supplementary groups, then user *.
 */
static const struct rule *rule_for(const struct config *c, const struct stream *s)
{
	const struct rule *group = NULL, *supp = NULL, *any = NULL;
	size_t i;

	for (i = 0; i < c->nrules; i++) {
		const struct rule *r = &c->rules[i];

		if (r->kind == RULE_USER && r->id == s->uid)
			return r;
		if (r->kind == RULE_GROUP && r->id == s->gid && !group)
			group = r;
		if (r->kind == RULE_GROUP && !supp && in_groups(s, r->id))
			supp = r;
		if (r->kind == RULE_ANY_USER)
			any = r;
	}
	return group ? group : supp ? supp : any;
}

/* The gid whose group line @s counts under, if @r is one. */
static uint32_t group_of(const struct rule *r)
{
	return r && r->kind == RULE_GROUP ? r->id : NO_GROUP;
}

/* Is @s within the limits of @r?  Why not in @v. */
static bool within_limits(const struct policy *p, const struct rule *r,
			  const struct stream *s, struct verdict *v)
{
	bool by_gid = r->kind == RULE_GROUP;
	uint64_t total = 0, count = 0, buffered = 0;
	char who[64], name[32];
	size_t i;

	for (i = 0; i < p->nstreams; i++) {
		const struct stream *t = &p->streams[i];

		if (by_gid ? t->group == r->id : t->uid == s->uid) {
			total = add_sat(total, t->rate);
			buffered = add_sat(buffered, t->buffer);
			count++;
		}
	}
	snprintf(who, sizeof(who), "%s %u ('%s' on line %u)", by_gid ? "gid" : "uid",
		 by_gid ? r->id : s->uid, rule_name(r, name, sizeof(name)), r->line);
	if (s->rate > r->rate)
		snprintf(v->why, sizeof(v->why), "over the rate per stream of %s: %llu > %llu B/s",
			 who, (unsigned long long)s->rate, (unsigned long long)r->rate);
	else if (add_sat(total, s->rate) > r->total)
		snprintf(v->why, sizeof(v->why),
			 "over the total of %s: %llu reserved + %llu > %llu B/s", who,
			 (unsigned long long)total, (unsigned long long)s->rate,
			 (unsigned long long)r->total);
	else if (count >= r->streams)
		snprintf(v->why, sizeof(v->why), "over the streams of %s: %llu of %llu running",
			 who, (unsigned long long)count, (unsigned long long)r->streams);
	else if (add_sat(buffered, s->buffer) > r->buffer)
		snprintf(v->why, sizeof(v->why),
			 "over the buffer of %s: %llu held + %llu > %llu bytes", who,
			 (unsigned long long)buffered, (unsigned long long)s->buffer,
			 (unsigned long long)r->buffer);
	else
		return true;
	return false;
}

void policy_admit(struct policy *p, const struct stream *s, struct verdict *v)
{
	const struct config *c = &p->cfg;
	const struct device *d = find_dev(p, s->dev);
	uint64_t cap = capacity_of(c, s->dev), limit = limit_of(c, cap);
	uint64_t reserved = d ? d->reserved : 0, buffered = d ? d->buffered : 0;
	uint64_t buffer_limit = buffer_limit_of(c, s->dev);
	unsigned int maj = major(s->dev), min = minor(s->dev);
	const struct rule *r = rule_for(c, s);

	v->error = EACCES;
	if (policy_find(p, s->id)) {
		snprintf(v->why, sizeof(v->why), "stream id already admitted");
	} else if (s->rate == 0) {
		snprintf(v->why, sizeof(v->why), "rate 0");
	} else if (cap == NO_LIMIT) {
		snprintf(v->why, sizeof(v->why), "no capacity configured for %u:%u", maj, min);
	} else if (!fs_allowed(c, s->dev, v)) {
		/* v->why says why */
	} else if (!r && s->uid != 0) {
		snprintf(v->why, sizeof(v->why),
			 "no user or group line allows uid %u gid %u", s->uid, s->gid);
	} else if (r && !within_limits(p, r, s, v)) {
		v->error = EDQUOT;
	} else if (add_sat(reserved, s->rate) > limit) {
		v->error = ENOSPC;
		snprintf(v->why, sizeof(v->why),
			 "over capacity: %u:%u has %llu reserved + %llu > limit %llu B/s "
			 "(%u%% of %llu)", maj, min, (unsigned long long)reserved,
			 (unsigned long long)s->rate, (unsigned long long)limit, c->ceiling,
			 (unsigned long long)cap);
	} else if (add_sat(buffered, s->buffer) > buffer_limit) {
		v->error = ENOSPC;
		snprintf(v->why, sizeof(v->why),
			 "over the buffer of %u:%u: %llu held + %llu > %llu bytes", maj, min,
			 (unsigned long long)buffered, (unsigned long long)s->buffer,
			 (unsigned long long)buffer_limit);
	} else {
		v->error = 0;
		add_stream(p, s, group_of(r));
		snprintf(v->why, sizeof(v->why), "%u:%u now has %llu of %llu B/s reserved",
			 maj, min, (unsigned long long)(reserved + s->rate),
			 (unsigned long long)limit);
	}
}

int policy_live(struct policy *p, const struct stream *s)
{
	if (policy_find(p, s->id))
		return -1;
	add_stream(p, s, group_of(rule_for(&p->cfg, s)));
	return 0;
}

int policy_release(struct policy *p, uint64_t id, struct stream *gone)
{
	struct stream *s = (struct stream *)policy_find(p, id);
	struct device *d;

	if (!s)
		return -1;
	*gone = *s;
	d = find_dev(p, s->dev);
	d->reserved -= s->rate;
	d->buffered -= s->buffer;
	d->streams--;
	*s = p->streams[--p->nstreams];
	return 0;
}

static void dump_device(const struct policy *p, FILE *f, uint64_t dev)
{
	const struct device *d = find_dev(p, dev);
	uint64_t cap = capacity_of(&p->cfg, dev), buf = buffer_limit_of(&p->cfg, dev);

	if (cap == NO_LIMIT)
		cap = 0;
	if (buf == NO_LIMIT)
		buf = 0;
	fprintf(f, "device %u:%u capacity %llu ceiling %u limit %llu reserved %llu streams %u "
		"buffered %llu buffer_limit %llu\n",
		major(dev), minor(dev), (unsigned long long)cap, p->cfg.ceiling,
		(unsigned long long)limit_of(&p->cfg, cap),
		(unsigned long long)(d ? d->reserved : 0), d ? d->streams : 0,
		(unsigned long long)(d ? d->buffered : 0), (unsigned long long)buf);
}

void policy_dump(const struct policy *p, FILE *f, uint32_t uid)
{
	const struct stream *s;
	size_t i;

	for (i = 0; i < p->cfg.ncaps; i++)
		dump_device(p, f, p->cfg.caps[i].dev);
	for (i = 0; i < p->ndevs; i++)
		if (!own_capacity(&p->cfg, p->devs[i].dev) &&
		    (p->devs[i].streams || p->cfg.default_capacity != NO_LIMIT))
			dump_device(p, f, p->devs[i].dev);
	for (i = 0; i < p->nstreams; i++) {
		s = &p->streams[i];
		if (uid != POLICY_ALL_UIDS && s->uid != uid)
			continue;
		fprintf(f, "stream %llu pid %u uid %u gid %u dev %u:%u ino %llu rate %llu "
			"buffer %llu\n", (unsigned long long)s->id, s->pid, s->uid, s->gid,
			major(s->dev), minor(s->dev), (unsigned long long)s->ino,
			(unsigned long long)s->rate, (unsigned long long)s->buffer);
	}
}
