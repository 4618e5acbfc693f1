// SPDX-License-Identifier: GPL-2.0
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

const char *log_prog = "hwpoison-lab";

static void vmessage(const char *level, int err, const char *fmt, va_list ap)
{
	/* One fprintf per line, so lines from several threads do not mix. */
	char msg[1024], text[ESCAPED_SIZE(sizeof(msg))];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/*
	 * A message may carry what a stream, a guest or a peer chose (a name,
	 * a reply): whole, as escape.h writes it, so that it is one line and no
	 * control sequence reaches the terminal, whichever site forgot.
	 */
	escape_str(text, sizeof(text), msg);
	if (!level)
		fprintf(stderr, "%s: %s\n", log_prog, text);
	else if (err)
		fprintf(stderr, "%s: %s: %s: %s\n", log_prog, level, text, strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", log_prog, level, text);
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

void pr_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(NULL, 0, fmt, ap);
	va_end(ap);
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
	char msg[1024], text[ESCAPED_SIZE(sizeof(msg))];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	escape_str(text, sizeof(text), msg);
	if (synopsis)
		fprintf(stderr, "%s: %s\nusage: %s %s\n", log_prog, text, log_prog, synopsis);
	else
		fprintf(stderr, "%s: %s\n", log_prog, text);
	exit(status);
}
