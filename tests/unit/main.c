// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests: the VMM's pure logic, no VM; a test that needs the
 * host's /dev/kvm skips, saying why, where it has none.
 */
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static FILE *caught;
static int stderr_saved = -1;

void unit_stderr_catch(void)
{
	fflush(stderr);
	caught = tmpfile();
	stderr_saved = dup(STDERR_FILENO);
	if (caught && stderr_saved >= 0)
		dup2(fileno(caught), STDERR_FILENO);
}

size_t unit_stderr_caught(char *out, size_t len)
{
	size_t n = 0;

	fflush(stderr);
	if (stderr_saved >= 0) {
		dup2(stderr_saved, STDERR_FILENO);
		close(stderr_saved);
		stderr_saved = -1;
	}
	if (caught) {
		rewind(caught);
		n = fread(out, 1, len - 1, caught);
		fclose(caught);
		caught = NULL;
	}
	out[n] = 0;
	return n;
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

/* whether a command line of NAMEs (shell patterns) picks t; none: every test */
static int picked(const struct unit_test *t, int nr_names, char **names, int *name_used)
{
	int i, hit = nr_names == 0;

	for (i = 0; i < nr_names; i++)
		if (!fnmatch(names[i], t->name, 0))
			hit = name_used[i] = 1;
	return hit;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: unit-tests [--list] [NAME...]\n"
		"  runs every unit test, or those whose names match a NAME (a shell pattern:\n"
		"  'mce_*'); --list prints the names and descriptions instead\n");
}

/* two tests of one name: `unit-tests NAME` could not tell them apart */
static int names_unique(struct unit_test **table, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!strcmp(table[i]->name, table[j]->name)) {
				fprintf(stderr, "unit-tests: two tests named %s: %s:%d and %s:%d\n",
					table[i]->name, table[i]->file, table[i]->line,
					table[j]->file, table[j]->line);
				return 0;
			}
	return 1;
}

/* the tests a command line of NAMEs picks, in source order, or NULL */
static struct unit_test **pick(int nr_names, char **names, unsigned int *n)
{
	struct unit_test **table = calloc(nr_registered + 1, sizeof(*table)), *t;
	int *name_used = calloc(nr_names + 1, sizeof(*name_used)), i;

	*n = 0;
	if (!table || !name_used) {
		perror("unit-tests: calloc");
		goto fail;
	}
	for (t = registered; t; t = t->next)
		if (picked(t, nr_names, names, name_used))
			table[(*n)++] = t;
	/* a misspelt name would otherwise pass, having run nothing */
	for (i = 0; i < nr_names; i++) {
		if (!name_used[i]) {
			fprintf(stderr, "unit-tests: no test named '%s' (--list shows them)\n", names[i]);
			goto fail;
		}
	}
	qsort(table, *n, sizeof(*table), source_order);
	if (!names_unique(table, *n))
		goto fail;
	free(name_used);
	return table;
fail:
	free(table);
	free(name_used);
	return NULL;
}

int main(int argc, char **argv)
{
	struct unit_test **table;
	unsigned int i, n;
	int list = 0;

	if (argc > 1 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--list")) {
		list = 1;
		argv++;
		argc--;
	}
	for (i = 1; i < (unsigned int)argc; i++) {
		if (argv[i][0] == '-') {
			usage(stderr);
			return 2;
		}
	}
	table = pick(argc - 1, argv + 1, &n);
	if (!table)
		return 2;
	for (i = 0; i < n; i++) {
		if (list)
			printf("%-22s %s\n", table[i]->name, table[i]->desc);
		else
			run(table[i]);
	}
	free(table);
	if (list)
		return 0;
	/* tests/run.sh and tests/host/asan.sh parse this line */
	printf("unit: %u passed, %u failed, %u skipped\n", unit_passed, unit_failed, unit_skipped);
	return unit_failed != 0;
}
