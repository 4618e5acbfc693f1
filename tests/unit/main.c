// SPDX-License-Identifier: GPL-2.0
/* Host unit tests: the VMM's pure logic, no VM and no /dev/kvm needed. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

unsigned int unit_passed, unit_failed;

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

static void run(const struct unit_test *t)
{
	unsigned int before = unit_failed;

	t->fn();
	printf("%s %s\n", unit_failed == before ? "ok  " : "FAIL", t->desc);
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
	printf("unit: %u passed, %u failed\n", unit_passed, unit_failed);
	return unit_failed != 0;
}
