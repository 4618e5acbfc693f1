/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the static test programs that run inside the outer VM
 * (madvise_sigbus, hugetlb_read): one "HWLAB-CHECK PASS|FAIL name: detail"
 * line per check, as tests/lib/check.sh prints them, and the count of
 * failures, which each program returns as its exit status.
 */
#ifndef HWLAB_TESTS_CHECK_H
#define HWLAB_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

static void __attribute__((format(printf, 3, 4), unused))
check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("HWLAB-CHECK %s %s: ", ok ? "PASS" : "FAIL", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !ok;
}

#endif
