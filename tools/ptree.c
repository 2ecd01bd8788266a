// SPDX-License-Identifier: GPL-2.0
/*
 * ptree - draw the ABISS prio tree.
 *
 * The kernel prints its red-black tree of streams waiting for a refill
 * (fs/abiss/prio.c, abiss_prio_show()) in order, one node a line, indented
 * two spaces per level:
 *
 *	  R stream 3 due -20 us
 *	B stream 5 due +1200 us
 *	  R stream 7 due +5000 us
 *
 * In-order positions and depths together fix the shape of a binary tree,
 * so ptree rebuilds it, draws it root first with connectors, annotates
 * each node from the stream list, and checks what the kernel promises: a
 * binary tree, in deadline order, with the red-black rules.
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

struct tree {
	const char *path;
	struct node *v;
	size_t n;
	int root;
	unsigned int height;		/* levels */
	unsigned int black_height;	/* black nodes on each root-leaf path */
};

static void __attribute__((noreturn)) usage(void)
{
	FILE *out = stdout;
	const char *p = program_invocation_short_name;

	fputs("\nUsage:\n", out);
	fprintf(out, " %s [options]\n", p);
	fputs("\nDraw the ABISS prio tree: the streams waiting for a refill, by\n"
	      "deadline, each with its pid, rate and buffer fill.\n", out);
	fputs("\nOptions:\n", out);
	fputs(" -f, --file <path>     read a saved prio_tree dump\n", out);
	fputs(" -s, --streams <path>  read a saved streams dump (for the annotations)\n", out);
	fputs("     --debugfs <dir>   ABISS's debugfs folder\n"
	      "                         (default " DEFAULT_DEBUGFS ")\n", out);
	fputs(" -a, --ascii           draw with ASCII, not box-drawing characters\n", out);
	fputs(" -b, --bytes           rates and sizes in bytes, not human-readable\n", out);
	fputs(" -w, --watch <time>    redraw every <time> (seconds, or 500ms)\n", out);
	fputs(" -h, --help            display this help\n", out);
	fputs(" -V, --version         display version\n", out);
	fprintf(out, "\nFor more details see %s(1).\n", p);
	exit(EXIT_OK);
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

static void tree_read(struct tree *t, const char *path)
{
	size_t cap = 0, linecap = 0, lineno = 0;
	char *line = NULL;
	FILE *fp;

	t->path = path;
	t->v = NULL;
	t->n = 0;
	t->height = 0;
	fp = fopen(path, "re");
	if (!fp)
		errx(EXIT_FAIL, "cannot open '%s': %s%s", path, strerror(errno),
		     errno == ENOENT && !opt.file ? " (is debugfs mounted?)" : "");
	while (getline(&line, &linecap, fp) != -1) {
		lineno++;
		if (t->n == cap) {
			cap = cap ? 2 * cap : 16;
			t->v = realloc(t->v, cap * sizeof(*t->v));
			if (!t->v)
				err(EXIT_FAIL, "out of memory");
		}
		if (parse_node(line, &t->v[t->n]))
			bad_line(t, lineno, "not a prio tree line (\"<indent>R|B stream ID due +N us\")");
		t->v[t->n].line = lineno;
		if (t->n && t->v[t->n].due_us < t->v[t->n - 1].due_us)
			bad_line(t, lineno, "due before the line above: not in deadline order");
		t->n++;
	}
	if (ferror(fp))
		err(EXIT_FAIL, "cannot read '%s'", path);
	fclose(fp);
	free(line);
	t->root = build(t, 0, t->n, 0);
	if (t->root >= 0 && t->v[t->root].red)
		bad_line(t, t->v[t->root].line, "the root is red");
	t->black_height = check_rb(t, t->root) - 1;
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

static int draw(void)
{
	char *tree_path = NULL, *streams_path = NULL, prefix[MAX_DEPTH * 8 + 1] = "";
	const char *sp = opt.streams;
	struct kstreams ks;
	struct tree t;
	bool have_ks = false;

	if (!opt.file && asprintf(&tree_path, "%s/prio_tree", opt.debugfs) < 0)
		err(EXIT_FAIL, "out of memory");
	if (!sp && !opt.file) {
		if (asprintf(&streams_path, "%s/streams", opt.debugfs) < 0)
			err(EXIT_FAIL, "out of memory");
		sp = streams_path;
	}
	tree_read(&t, opt.file ? opt.file : tree_path);
	if (sp) {
		if (kstreams_read(sp, &ks, false))
			exit(EXIT_FAIL);
		have_ks = true;
	}
	if (t.root < 0) {
		puts("(no streams)");
	} else {
		print_node(&t.v[t.root], have_ks ? &ks : NULL);
		draw_children(&t, t.root, have_ks ? &ks : NULL, opt.ascii ? &ascii : &box,
			      prefix, sizeof(prefix));
		printf("%zu stream%s in the tree", t.n, t.n == 1 ? "" : "s");
		if (have_ks)
			printf(" (of %zu)", ks.n);
		printf(", height %u, black height %u; next: stream %llu, due %+lld us\n",
		       t.height, t.black_height, (unsigned long long)t.v[0].id, t.v[0].due_us);
	}
	if (have_ks)
		kstreams_free(&ks);
	free(t.v);
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
		case 'h':
			usage();
		case 'V':
			print_version();
		default:
			try_help();
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
