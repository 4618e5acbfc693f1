// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests: the VMM's pure logic, no VM; a test that needs the
 * host's /dev/kvm skips, saying why, where it has none.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"

unsigned int unit_passed, unit_failed;
static unsigned int unit_skipped;	/* tests, not checks: each stopped at its UNIT_SKIP */

/* every UNIT_TEST, as its constructor added it: in no particular order */
static struct unit_test *registered;
static unsigned int nr_registered;

void unit_register(struct unit_test *t)
{
	t->next = registered;
	registered = t;
	nr_registered++;
}

/*
 * Source order: by file, then by line. Constructors run in link order,
 * which the Makefile's wildcard and the linker decide; this order is the
 * one a reader of tests/unit/ sees, and stays put when a file is added.
 */
static int source_order(const void *a, const void *b)
{
	const struct unit_test *x = *(const struct unit_test *const *)a;
	const struct unit_test *y = *(const struct unit_test *const *)b;
	int c = strcmp(x->file, y->file);

	return c ? c : x->line - y->line;
}

/* where a UNIT_SKIP returns to: the test running, or NULL outside one */
static jmp_buf *skip_to;
static char skip_reason[256];

void unit_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
	if (!skip_to) {
		printf("FAIL UNIT_SKIP outside a test: %s\n", skip_reason);
		abort();
	}
	longjmp(*skip_to, 1);
}

static void run(const struct unit_test *t)
{
	unsigned int before = unit_failed;
	jmp_buf here;

	if (setjmp(here) == 0) {
		skip_to = &here;
		t->fn();
		skip_to = NULL;
		printf("%s %s\n", unit_failed == before ? "ok  " : "FAIL", t->desc);
		return;
	}
	skip_to = NULL;
	/* a check that failed before the skip still fails the test */
	if (unit_failed != before) {
		printf("FAIL %s (then skipped: %s)\n", t->desc, skip_reason);
		return;
	}
	unit_skipped++;
	printf("skip %s: %s\n", t->desc, skip_reason);
}

int main(void)
{
	struct unit_test **table = calloc(nr_registered, sizeof(*table)), *t;
	unsigned int i = 0;

	if (!table) {
		perror("unit-tests: calloc");
		return 1;
	}
	for (t = registered; t; t = t->next)
		table[i++] = t;
	qsort(table, nr_registered, sizeof(*table), source_order);
	for (i = 0; i < nr_registered; i++)
		run(table[i]);
	free(table);
	/* tests/run.sh and tests/host/asan.sh parse this line */
	printf("unit: %u passed, %u failed, %u skipped\n", unit_passed, unit_failed, unit_skipped);
	return unit_failed != 0;
}
