// SPDX-License-Identifier: GPL-2.0
#include "report.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "clock.h"

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

void report(const char *event, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&report_lock);
	printf("{\"event\":\"%s\"", event);
	if (fmt && *fmt) {
		putchar(',');
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	/* CLOCK_MONOTONIC is one clock for every process: tools line events up by it */
	printf(",\"t_ns\":%llu}\n", (unsigned long long)monotonic_ns());
	fflush(stdout);
	pthread_mutex_unlock(&report_lock);
}

void json_escape(char *dst, unsigned long dstlen, const char *s)
{
	unsigned long n = 0;

	for (; *s && n + 7 < dstlen; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\') {
			dst[n++] = '\\';
			dst[n++] = c;
		} else if (c < 0x20 || c >= 0x7f) {
			n += snprintf(dst + n, dstlen - n, "\\u%04x", c);
		} else {
			dst[n++] = c;
		}
	}
	dst[n] = 0;
}
