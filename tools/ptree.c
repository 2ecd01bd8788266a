// SPDX-License-Identifier: GPL-2.0
/*
 * ptree - draw the ABISS prio trees.
 *
 * ABISS refills each disk's streams in deadline order, from one red-black
 * tree per disk.  The kernel prints them (fs/abiss/prio.c,
 * abiss_prio_show()) one section per disk: a device line with its number,
 * name and measured refill latency, then its tree in order, one node a
 * line, indented two spaces per level:
 *
 *	device 254:0 nullb0 latency_us 1234
 *	  R stream 3 due -20 us
 *	B stream 5 due +1200 us
 *	  R stream 7 due +5000 us
 *	device 98:0 ubda latency_us 0
 *
 * Older kernels printed one tree, without device lines; such a file is
 * read as one tree with no device.
 *
 * In-order positions and depths together fix the shape of a binary tree,
 * so ptree rebuilds each tree, draws it root first with connectors,
 * annotates each node from the stream list, and checks what the kernel
 * promises: binary trees, each in deadline order, with the red-black rules.
 */
#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "streams.h"
#include "util.h"

/* A red-black tree of 2^32 nodes is at most 64 deep. */
#define MAX_DEPTH	64

static struct {
	const char *debugfs;
	const char *file;	/* a saved prio_tree */
	const char *streams;	/* a saved streams file */
	bool ascii;
	uint64_t watch;		/* ns between redraws; 0: draw once */
} opt = {
	.debugfs = DEFAULT_DEBUGFS,
};

enum {
	OPT_DEBUGFS = 0x100,
	OPT_STREAMS,
	OPT_ASCII,
};

struct node {
	uint64_t id;
	long long due_us;
	bool red;
	unsigned int depth;
	size_t line;
	int left, right;	/* indexes, -1: none */
};

/* One disk's tree: the lines after its device line, or a whole old file. */
struct tree {
	const char *path;
	struct node *v;
	size_t n, cap;
	int root;
	unsigned int height;		/* levels */
	unsigned int black_height;	/* black nodes on each root-leaf path */
	/* From the device line; name NULL: an old file, without one. */
	char *name;
	unsigned int major, minor;
	uint64_t latency_us;		/* the disk's measured refill latency */
	size_t line;			/* of the device line */
};

/* What prio_tree holds: its trees, in the file's order. */
struct prio {
	struct tree *v;
	size_t n;
};

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;

	usage_start("[options]", NULL);
	fputs("\nDraw the ABISS prio trees: for each disk, the streams waiting for a\n"
	      "refill, by deadline, each with its pid, rate and buffer fill.\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -f, --file <path>     read a saved prio_tree dump\n", out);
	fputs(" -s, --streams <path>  read a saved streams dump (for the annotations)\n", out);
	fputs("     --debugfs <dir>   ABISS's debugfs folder\n"
	      "                         (default " DEFAULT_DEBUGFS ")\n", out);
	fputs(" -a, --ascii           draw with ASCII, not box-drawing characters\n", out);
	fputs(" -b, --bytes           rates and sizes in bytes, not human-readable\n", out);
	fputs(" -w, --watch <time>    redraw every <time> (seconds, or 500ms)\n", out);
	usage_help_version(23);
	usage_see_man(1);
}

/* --- reading ------------------------------------------------------------ */

/* "+123" or "-45": a sign, then digits. */
static int parse_due(const char *s, long long *us)
{
	uint64_t v;

	if ((*s != '+' && *s != '-') || parse_u64(s + 1, &v) || v > (uint64_t)LLONG_MAX)
		return -1;
	*us = *s == '-' ? -(long long)v : (long long)v;
	return 0;
}

/* "<2*depth spaces>R|B stream ID due +N us"; 0, or -1 if malformed. */
static int parse_node(char *line, struct node *nd)
{
	size_t sp = strspn(line, " ");
	char *w[7], *save;
	size_t n = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sp % 2 || sp / 2 > MAX_DEPTH)
		return -1;
	for (w[n] = strtok_r(line + sp, " ", &save); w[n] && n < 6; w[n] = strtok_r(NULL, " ", &save))
		n++;
	if (n != 6 || w[6] || (strcmp(w[0], "R") && strcmp(w[0], "B")) ||
	    strcmp(w[1], "stream") || parse_u64(w[2], &nd->id) || strcmp(w[3], "due") ||
	    parse_due(w[4], &nd->due_us) || strcmp(w[5], "us"))
		return -1;
	nd->red = w[0][0] == 'R';
	nd->depth = (unsigned int)(sp / 2);
	nd->left = nd->right = -1;
	return 0;
}

/* Malformed input: "ptree: FILE:LINE: ...", exit 1. */
#define bad_line(t, line, fmt, ...) \
	errx(EXIT_FAIL, "%s:%zu: " fmt, (t)->path, (size_t)(line), ##__VA_ARGS__)

/*
 * The subtree of nodes [lo, hi) whose root is at @depth: its one node at
 * that depth, everything left of it its left subtree, right of it its right.
 */
static int build(struct tree *t, size_t lo, size_t hi, unsigned int depth)
{
	int root = -1;
	size_t i, shallow = lo;

	if (lo == hi)
		return -1;
	for (i = lo; i < hi; i++) {
		if (t->v[i].depth < t->v[shallow].depth)
			shallow = i;
		if (t->v[i].depth != depth)
			continue;
		if (root >= 0)
			bad_line(t, t->v[i].line, "a second node at depth %u where one is expected",
				 depth);
		root = (int)i;
	}
	if (root < 0 || t->v[shallow].depth < depth)
		bad_line(t, t->v[shallow].line, "node at depth %u where one at depth %u is expected",
			 t->v[shallow].depth, depth);
	t->v[root].left = build(t, lo, (size_t)root, depth + 1);
	t->v[root].right = build(t, (size_t)root + 1, hi, depth + 1);
	return root;
}

/* Red-black rules below node @i; its black height (nil leaves count 1). */
static unsigned int check_rb(struct tree *t, int i)
{
	const struct node *nd;
	unsigned int lh, rh;
	int c;

	if (i < 0)
		return 1;
	nd = &t->v[i];
	if (nd->depth + 1 > t->height)
		t->height = nd->depth + 1;
	for (c = 0; c < 2; c++)
		if (nd->red && (c ? nd->right : nd->left) >= 0 &&
		    t->v[c ? nd->right : nd->left].red)
			bad_line(t, nd->line, "red node with a red child");
	lh = check_rb(t, nd->left);
	rh = check_rb(t, nd->right);
	if (lh != rh)
		bad_line(t, nd->line, "black height %u on the left, %u on the right", lh, rh);
	return lh + !nd->red;
}

/* "device MAJ:MIN NAME latency_us N" into @t; 0, or -1 if malformed. */
static int parse_device(char *line, struct tree *t)
{
	char *w[6], *save;
	size_t n = 0;

	line[strcspn(line, "\n")] = '\0';
	for (w[n] = strtok_r(line, " ", &save); w[n] && n < 5; w[n] = strtok_r(NULL, " ", &save))
		n++;
	if (n != 5 || w[5] || strcmp(w[0], "device") ||
	    parse_devno(w[1], &t->major, &t->minor) || strcmp(w[3], "latency_us") ||
	    parse_u64(w[4], &t->latency_us))
		return -1;
	t->name = strdup(w[2]);
	if (!t->name)
		err(EXIT_FAIL, "out of memory");
	return 0;
}

/* A device line: the word "device" first, not indented. */
static bool is_device_line(const char *line)
{
	return !strncmp(line, "device", 6) &&
	       (line[6] == ' ' || line[6] == '\n' || line[6] == '\0');
}

/* A new, empty tree at the end of @p. */
static struct tree *prio_add(struct prio *p, const char *path)
{
	struct tree *t;

	p->v = realloc(p->v, (p->n + 1) * sizeof(*p->v));
	if (!p->v)
		err(EXIT_FAIL, "out of memory");
	t = &p->v[p->n++];
	memset(t, 0, sizeof(*t));
	t->path = path;
	t->root = -1;
	return t;
}

/* Line @lineno of the file, a node, onto the last tree of @p. */
static void node_add(struct prio *p, char *line, size_t lineno)
{
	struct tree *t = &p->v[p->n - 1];
	struct node *nd;
	size_t i, j;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		if (!t->v)
			err(EXIT_FAIL, "out of memory");
	}
	nd = &t->v[t->n];
	if (parse_node(line, nd))
		bad_line(t, lineno, "not a prio tree line (\"<indent>R|B stream ID due +N us\")");
	nd->line = lineno;
	if (t->n && nd->due_us < t->v[t->n - 1].due_us)
		bad_line(t, lineno, "due before the line above: not in deadline order");
	/* A stream waits in at most one tree, once. */
	for (i = 0; i < p->n; i++)
		for (j = 0; j < p->v[i].n; j++)
			if (p->v[i].v[j].id == nd->id)
				bad_line(t, lineno, "stream %llu a second time (first on line %zu)",
					 (unsigned long long)nd->id, p->v[i].v[j].line);
	t->n++;
}

/* All of @t read: rebuild its shape and check the red-black rules. */
static void tree_check(struct tree *t)
{
	t->root = build(t, 0, t->n, 0);
	if (t->root >= 0 && t->v[t->root].red)
		bad_line(t, t->v[t->root].line, "the root is red");
	t->black_height = check_rb(t, t->root) - 1;
}

static void prio_read(struct prio *p, const char *path)
{
	size_t linecap = 0, lineno = 0, i;
	struct tree *t = NULL;
	char *line = NULL;
	FILE *fp;

	p->v = NULL;
	p->n = 0;
	fp = fopen(path, "re");
	if (!fp)
		errx(EXIT_FAIL, "cannot open '%s': %s%s", path, strerror(errno),
		     errno == ENOENT && !opt.file ? " (is debugfs mounted?)" : "");
	while (getline(&line, &linecap, fp) != -1) {
		lineno++;
		if (!is_device_line(line)) {
			if (!t)		/* an old file: one tree, no device */
				t = prio_add(p, path);
			node_add(p, line, lineno);
			continue;
		}
		if (t && !t->name)
			bad_line(t, t->v[0].line, "a stream before the first device line (line %zu)",
				 lineno);
		if (t)
			tree_check(t);
		t = prio_add(p, path);
		t->line = lineno;
		if (parse_device(line, t))
			bad_line(t, lineno, "not a device line (\"device MAJ:MIN NAME latency_us N\")");
		for (i = 0; i + 1 < p->n; i++)
			if (p->v[i].major == t->major && p->v[i].minor == t->minor)
				bad_line(t, lineno, "device %u:%u a second time (first on line %zu)",
					 t->major, t->minor, p->v[i].line);
	}
	if (ferror(fp))
		err(EXIT_FAIL, "cannot read '%s'", path);
	fclose(fp);
	free(line);
	if (t)
		tree_check(t);
}

static void prio_free(struct prio *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->v[i].v);
		free(p->v[i].name);
	}
	free(p->v);
}

/* --- drawing ------------------------------------------------------------ */

struct glyphs {
	const char *mid, *last, *bar, *gap;
};

static const struct glyphs box = { "├─", "└─", "│  ", "   " };
static const struct glyphs ascii = { "|-", "`-", "|  ", "   " };

static void print_node(const struct node *nd, const struct kstreams *ks)
{
	const struct kstream *s;
	char rate[32], fill[48];

	printf("stream %llu %s, due %+lld us", (unsigned long long)nd->id,
	       nd->red ? "red" : "black", nd->due_us);
	if (ks) {
		s = kstreams_find(ks, nd->id);
		if (s)
			printf(", pid %llu, %s, fill %s", (unsigned long long)s->pid,
			       fmt_rate(rate, sizeof(rate), s->rate), fmt_fill(fill, sizeof(fill), s));
		else
			fputs(", not in the stream list", stdout);
	}
	putchar('\n');
}

/* The children of node @i, each on a line after @prefix and a connector. */
static void draw_children(const struct tree *t, int i, const struct kstreams *ks,
			  const struct glyphs *g, char *prefix, size_t plen)
{
	const struct node *nd = &t->v[i];
	int kids[2] = { nd->left, nd->right };
	size_t k, len = strlen(prefix);
	bool last;

	for (k = 0; k < 2; k++) {
		if (kids[k] < 0)
			continue;
		last = k == 1 || kids[1] < 0;
		printf("%s%s %s: ", prefix, last ? g->last : g->mid, k ? "R" : "L");
		print_node(&t->v[kids[k]], ks);
		snprintf(prefix + len, plen - len, "%s", last ? g->gap : g->bar);
		draw_children(t, kids[k], ks, g, prefix, plen);
		prefix[len] = '\0';
	}
}

/* One tree: under a heading naming its disk, if it has one. */
static void draw_tree(const struct tree *t, const struct kstreams *ks, const struct glyphs *g)
{
	char prefix[MAX_DEPTH * 8 + 1] = "";

	if (t->name) {
		printf("device %s (%u:%u), refill latency %llu.%03llu ms, ", t->name, t->major,
		       t->minor, (unsigned long long)(t->latency_us / 1000),
		       (unsigned long long)(t->latency_us % 1000));
		if (t->n)
			printf("%zu stream%s\n", t->n, t->n == 1 ? "" : "s");
		else
			puts("no streams");
	}
	if (t->root < 0)
		return;
	print_node(&t->v[t->root], ks);
	draw_children(t, t->root, ks, g, prefix, sizeof(prefix));
	printf("%zu stream%s in the tree", t->n, t->n == 1 ? "" : "s");
	if (ks)
		printf(" (of %zu)", ks->n);
	printf(", height %u, black height %u; next: stream %llu, due %+lld us\n",
	       t->height, t->black_height, (unsigned long long)t->v[0].id, t->v[0].due_us);
}

static int draw(void)
{
	char *tree_path = NULL, *streams_path = NULL;
	const char *sp = opt.streams;
	struct kstreams ks;
	struct prio p;
	bool have_ks = false;
	size_t i;

	if (!opt.file && asprintf(&tree_path, "%s/prio_tree", opt.debugfs) < 0)
		err(EXIT_FAIL, "out of memory");
	if (!sp && !opt.file) {
		if (asprintf(&streams_path, "%s/streams", opt.debugfs) < 0)
			err(EXIT_FAIL, "out of memory");
		sp = streams_path;
	}
	prio_read(&p, opt.file ? opt.file : tree_path);
	if (sp) {
		if (kstreams_read(sp, &ks, false))
			exit(EXIT_FAIL);
		have_ks = true;
	}
	if (!p.n)
		puts("(no streams)");
	for (i = 0; i < p.n; i++) {
		if (i)
			putchar('\n');
		draw_tree(&p.v[i], have_ks ? &ks : NULL, opt.ascii ? &ascii : &box);
	}
	if (have_ks)
		kstreams_free(&ks);
	prio_free(&p);
	free(tree_path);
	free(streams_path);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "file",    required_argument, NULL, 'f' },
		{ "streams", required_argument, NULL, 's' },
		{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
		{ "ascii",   no_argument,       NULL, 'a' },
		{ "bytes",   no_argument,       NULL, 'b' },
		{ "watch",   required_argument, NULL, 'w' },
		{ "help",    no_argument,       NULL, 'h' },
		{ "version", no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t next;
	int c;

	atexit(close_stdout);
	while ((c = getopt_long(argc, argv, "f:s:abw:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			opt.file = optarg;
			break;
		case 's':
			opt.streams = optarg;
			break;
		case OPT_DEBUGFS:
			opt.debugfs = optarg;
			break;
		case 'a':
			opt.ascii = true;
			break;
		case 'b':
			show_bytes = true;
			break;
		case 'w':
			if (parse_duration(optarg, &opt.watch) || opt.watch == 0)
				usage_error("bad interval: '%s'", optarg);
			break;
		default:
			other_option(c, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument: '%s'", argv[optind]);
	if (!opt.watch)
		return draw();
	for (next = now_ns();; next += opt.watch) {
		if (isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		draw();
		putchar('\n');
		if (fflush(stdout))
			exit(EXIT_FAIL);
		sleep_until(next + opt.watch);
	}
}
