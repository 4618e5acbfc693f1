// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *log_prog = "hwpoison-lab";

static void vmessage(const char *level, int err, const char *fmt, va_list ap)
{
	/* One fprintf per line, so lines from several threads do not mix. */
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err)
		fprintf(stderr, "%s: %s: %s: %s\n", log_prog, level, msg, strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", log_prog, level, msg);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("error", 0, fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning", 0, fmt, ap);
	va_end(ap);
}

void pr_errno(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vmessage("error", saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("error", 0, fmt, ap);
	va_end(ap);
	exit(1);
}

void tool_exit(int status, const char *synopsis, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", log_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (synopsis)
		fprintf(stderr, "\nusage: %s %s\n", log_prog, synopsis);
	else
		fputc('\n', stderr);
	exit(status);
}
