// SPDX-License-Identifier: GPL-2.0
/*
 * The debugfs stream list, names and numbers for abissctl and ptree.
 * See streams.h.
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "streams.h"
#include "util.h"

bool show_bytes;

/* The columns of the streams file the tools use, by header name. */
enum {
	COL_ID, COL_PID, COL_DEV, COL_INO, COL_RATE, COL_BUFFER, COL_HELD,
	COL_DELIVERED, COL_MISSES, COL_STATE, NR_COLS
};

static const char *const col_names[NR_COLS] = {
	[COL_ID] = "id", [COL_PID] = "pid", [COL_DEV] = "dev", [COL_INO] = "ino",
	[COL_RATE] = "rate", [COL_BUFFER] = "buffer", [COL_HELD] = "held",
	[COL_DELIVERED] = "delivered", [COL_MISSES] = "misses", [COL_STATE] = "state",
};

#define MAX_FIELDS	64

/* Split @line in place on spaces; return the number of fields, at most @max. */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *save, *tok;

	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (n == max)
			return max + 1;
		f[n++] = tok;
	}
	return n;
}

int parse_devno(const char *s, unsigned int *major, unsigned int *minor)
{
	uint64_t ma, mi;
	const char *colon = strchr(s, ':');
	char buf[24];

	if (!colon || (size_t)(colon - s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, colon - s);
	buf[colon - s] = '\0';
	if (parse_u64(buf, &ma) || parse_u64(colon + 1, &mi) || ma > 0xfff || mi > 0xfffff)
		return -1;
	*major = (unsigned int)ma;
	*minor = (unsigned int)mi;
	return 0;
}

/* One data line, split in @f by the column positions @pos; 0 or -1. */
static int parse_kstream(char **f, const size_t *pos, struct kstream *s)
{
	const char *state = f[pos[COL_STATE]];

	if (parse_u64(f[pos[COL_ID]], &s->id) || parse_u64(f[pos[COL_PID]], &s->pid) ||
	    parse_devno(f[pos[COL_DEV]], &s->major, &s->minor) ||
	    parse_u64(f[pos[COL_INO]], &s->ino) || parse_u64(f[pos[COL_RATE]], &s->rate) ||
	    parse_u64(f[pos[COL_BUFFER]], &s->buffer) ||
	    parse_u64(f[pos[COL_HELD]], &s->held) ||
	    parse_u64(f[pos[COL_DELIVERED]], &s->delivered) ||
	    parse_u64(f[pos[COL_MISSES]], &s->misses) || strlen(state) >= sizeof(s->state))
		return -1;
	strcpy(s->state, state);
	return 0;
}

/* Find each column of col_names[] in the header @f of @n fields. */
static int parse_header(char **f, size_t n, size_t *pos, const char **missing)
{
	size_t c, i;

	for (c = 0; c < NR_COLS; c++) {
		for (i = 0; i < n && strcmp(f[i], col_names[c]); i++)
			;
		if (i == n) {
			*missing = col_names[c];
			return -1;
		}
		pos[c] = i;
	}
	return 0;
}

int kstreams_read(const char *path, struct kstreams *ks, bool quiet)
{
	size_t cap = 0, nhead = 0, n, pos[NR_COLS], lineno = 0;
	char *line = NULL, *f[MAX_FIELDS];
	const char *missing;
	size_t linecap = 0;
	FILE *fp;

	ks->v = NULL;
	ks->n = 0;
	fp = fopen(path, "re");
	if (!fp) {
		if (quiet)
			return -1;
		warnx("cannot open '%s': %s%s", path, strerror(errno),
		      errno == ENOENT ? " (is debugfs mounted?)" :
		      errno == EACCES ? " (only root may read it)" : "");
		return -1;
	}
	while (getline(&line, &linecap, fp) != -1) {
		lineno++;
		n = split(line, f, MAX_FIELDS);
		if (lineno == 1) {
			if (n > MAX_FIELDS || parse_header(f, n, pos, &missing)) {
				if (!quiet)
					warnx("%s:1: no '%s' column in the header", path,
					      n > MAX_FIELDS ? "id" : missing);
				goto bad;
			}
			nhead = n;
			continue;
		}
		if (ks->n == cap) {
			cap = cap ? 2 * cap : 16;
			ks->v = realloc(ks->v, cap * sizeof(*ks->v));
			if (!ks->v)
				err(EXIT_FAIL, "out of memory");
		}
		if (n != nhead || parse_kstream(f, pos, &ks->v[ks->n])) {
			if (!quiet)
				warnx("%s:%zu: malformed stream line", path, lineno);
			goto bad;
		}
		ks->n++;
	}
	if (ferror(fp)) {
		if (!quiet)
			warn("cannot read '%s'", path);
		goto bad;
	}
	if (lineno == 0) {
		if (!quiet)
			warnx("%s: empty (no header line)", path);
		goto bad;
	}
	free(line);
	fclose(fp);
	return 0;
bad:
	free(line);
	fclose(fp);
	kstreams_free(ks);
	return -1;
}

struct kstream *kstreams_find(const struct kstreams *ks, uint64_t id)
{
	size_t i;

	for (i = 0; i < ks->n; i++)
		if (ks->v[i].id == id)
			return &ks->v[i];
	return NULL;
}

void kstreams_free(struct kstreams *ks)
{
	free(ks->v);
	ks->v = NULL;
	ks->n = 0;
}

/* @v in units of @base: "512 B", "2.0 kB", "4.0 MiB"...; @units from the smallest. */
static const char *fmt_scaled(char *buf, size_t len, uint64_t v, unsigned int base,
			      const char *const *units, const char *suffix)
{
	double x = (double)v;
	int u = 0;

	if (show_bytes) {
		snprintf(buf, len, "%llu", (unsigned long long)v);
		return buf;
	}
	while (x >= base && units[u + 1]) {
		x /= base;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu %s%s", (unsigned long long)v, units[0], suffix);
	else
		snprintf(buf, len, "%.1f %s%s", x, units[u], suffix);
	return buf;
}

const char *fmt_rate(char *buf, size_t len, uint64_t bytes_per_s)
{
	static const char *const units[] = { "B", "kB", "MB", "GB", "TB", NULL };

	return fmt_scaled(buf, len, bytes_per_s, 1000, units, "/s");
}

const char *fmt_size(char *buf, size_t len, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", NULL };

	return fmt_scaled(buf, len, bytes, 1024, units, "");
}

const char *fmt_fill(char *buf, size_t len, const struct kstream *s)
{
	uint64_t held = s->held * (uint64_t)sysconf(_SC_PAGESIZE);
	char size[32];

	snprintf(buf, len, "%s %llu%%", fmt_size(size, sizeof(size), held),
		 (unsigned long long)(s->buffer ? muldiv64(held, 100, s->buffer) : 0));
	return buf;
}

const char *proc_comm(char *buf, size_t len, uint64_t pid)
{
	char path[64];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%llu/comm", (unsigned long long)pid);
	fp = fopen(path, "re");
	if (!fp || !fgets(buf, (int)len, fp) || !*buf)
		snprintf(buf, len, "-");
	buf[strcspn(buf, "\n")] = '\0';
	if (fp)
		fclose(fp);
	return buf;
}

const char *proc_file(char *buf, size_t len, uint64_t pid, unsigned int major,
		      unsigned int minor, uint64_t ino)
{
	char dir[64], path[64 + sizeof(((struct dirent *)0)->d_name) + 1];
	struct dirent *d;
	struct stat st;
	ssize_t n;
	DIR *dp;

	snprintf(buf, len, "-");
	snprintf(dir, sizeof(dir), "/proc/%llu/fd", (unsigned long long)pid);
	dp = opendir(dir);
	if (!dp)
		return buf;
	while ((d = readdir(dp))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (stat(path, &st) || st.st_dev != makedev(major, minor) ||
		    st.st_ino != ino)
			continue;
		n = readlink(path, buf, len - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (n <= 0)
			snprintf(buf, len, "-");
		break;
	}
	closedir(dp);
	return buf;
}

void table_init(struct table *t, const char *const *heads, size_t ncols)
{
	if (ncols > TABLE_MAX_COLS)
		errx(EXIT_FAIL, "%s: too many columns", __func__);
	t->ncols = ncols;
	t->heads = heads;
	t->cells = NULL;
	t->nrows = 0;
}

void table_add(struct table *t, const char *const *row)
{
	size_t c;

	t->cells = realloc(t->cells, (t->nrows + 1) * t->ncols * sizeof(*t->cells));
	if (!t->cells)
		err(EXIT_FAIL, "out of memory");
	for (c = 0; c < t->ncols; c++) {
		t->cells[t->nrows * t->ncols + c] = strdup(row[c]);
		if (!t->cells[t->nrows * t->ncols + c])
			err(EXIT_FAIL, "out of memory");
	}
	t->nrows++;
}

/* The heading of column @c, without its alignment mark. */
static const char *head_name(const struct table *t, size_t c)
{
	return t->heads[c] + (t->heads[c][0] == '>');
}

static void print_row(const struct table *t, const size_t *width, char *const *cells)
{
	size_t c;
	bool right;

	for (c = 0; c < t->ncols; c++) {
		right = t->heads[c][0] == '>';
		if (c + 1 == t->ncols && !right)	/* no trailing blanks */
			printf("%s", cells[c]);
		else
			printf(right ? "%*s" : "%-*s", (int)width[c], cells[c]);
		fputs(c + 1 == t->ncols ? "\n" : "  ", stdout);
	}
}

void table_print(struct table *t)
{
	size_t width[TABLE_MAX_COLS], c, r, w;
	const char *heads[TABLE_MAX_COLS];

	for (c = 0; c < t->ncols; c++) {
		heads[c] = head_name(t, c);
		width[c] = strlen(heads[c]);
		for (r = 0; r < t->nrows; r++) {
			w = strlen(t->cells[r * t->ncols + c]);
			if (w > width[c])
				width[c] = w;
		}
	}
	print_row(t, width, (char *const *)heads);
	for (r = 0; r < t->nrows; r++)
		print_row(t, width, &t->cells[r * t->ncols]);
	for (r = 0; r < t->nrows * t->ncols; r++)
		free(t->cells[r]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = 0;
}
