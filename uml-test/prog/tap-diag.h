/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap_diag() - a TAP "# " line for the uml-test programs, written at once
 * with one write(2): threads and forked children share stdout, and a child
 * (or the kselftest harness's, which ends with _exit()) may not rely on
 * stdio's buffers or locks.
 */
#ifndef UML_TEST_TAP_DIAG_H
#define UML_TEST_TAP_DIAG_H

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static void __attribute__((format(printf, 1, 2))) tap_diag(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "# ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, n) < 0)
		return;
}

#endif /* UML_TEST_TAP_DIAG_H */
