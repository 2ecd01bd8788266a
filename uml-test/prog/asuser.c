// SPDX-License-Identifier: GPL-2.0
/*
 * asuser UID GID[,GID...] COMMAND [ARG...] - run COMMAND as numeric UID and
 * GID, with the other GIDs as its supplementary groups (none unless given),
 * for the uml-tests: busybox has no chpst, and the guest's /etc/passwd knows
 * only root.
 */
#include <err.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned int id_arg(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v >= 0xffffffffUL)
		errx(2, "bad id: '%s'", s);
	return (unsigned int)v;
}

int main(int argc, char **argv)
{
	gid_t groups[32];
	unsigned int uid, gid;
	size_t n = 0;
	char *g, *save;

	if (argc < 4) {
		fprintf(stderr, "Usage: %s UID GID[,GID...] COMMAND [ARG...]\n", argv[0]);
		return 2;
	}
	uid = id_arg(argv[1]);
	gid = id_arg(strtok_r(argv[2], ",", &save) ?: "");
	while ((g = strtok_r(NULL, ",", &save))) {
		if (n == sizeof(groups) / sizeof(groups[0]))
			errx(2, "more than %zu groups", n);
		groups[n++] = id_arg(g);
	}
	if (setgroups(n, groups) || setgid(gid) || setuid(uid))
		err(1, "cannot become uid %u gid %u", uid, gid);
	execvp(argv[3], argv + 3);
	err(127, "cannot run '%s'", argv[3]);
}
