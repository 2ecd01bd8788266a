// SPDX-License-Identifier: GPL-2.0
/*
 * ctlclient SOCKET - send stdin to abissd's control socket as it is,
 * close the sending side, and copy every answer to stdout until abissd
 * closes the connection, for the uml-tests (busybox nc has no Unix
 * sockets).  Exits 1 if it cannot connect.
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void copy(int from, int to)
{
	char buf[4096];
	ssize_t n, w, off;

	while ((n = read(from, buf, sizeof(buf))) > 0)
		for (off = 0; off < n; off += w)
			if ((w = write(to, buf + off, (size_t)(n - off))) < 0)
				err(1, "write");
	if (n < 0 && errno != ECONNRESET)
		err(1, "read");
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "Usage: %s SOCKET\n", argv[0]);
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err(1, "cannot connect to '%s'", argv[1]);
	copy(0, fd);
	shutdown(fd, SHUT_WR);
	copy(fd, 1);
	return 0;
}
