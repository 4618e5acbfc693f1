// SPDX-License-Identifier: GPL-2.0
/*
 * The option-table engine of hwlab-vmm and the tools (lib/options.h). It
 * knows option kinds, not programs: what an option means, and the rules
 * between options, stay in each program's table and its callbacks.
 */
#define _GNU_SOURCE
#include "lib/options.h"

#include <getopt.h>
#include <string.h>

#include "log.h"
#include "parse_num.h"

/* getopt_long() values of rows without a short name: past every character */
#define OPT_VAL_BASE 256
/* more than any program has: the getopt table lives on the stack */
#define OPT_ROWS_MAX 64

int opt_number(const char *name, const char *arg, uint64_t max, uint64_t *out)
{
	if (!parse_u64(arg, max, out))
		return 0;
	pr_err("--%s: '%s' is not a number up to %llu", name, arg, (unsigned long long)max);
	return -1;
}

const char *opt_choice_name(const struct opt_choice *choices, int value)
{
	const struct opt_choice *c;

	for (c = choices; c->name; c++)
		if (c->value == value)
			return c->name;
	return "?";
}

void opt_usage(const struct opt_table *t, FILE *f)
{
	unsigned int i;

	fputs(t->synopsis, f);
	for (i = 0; i < t->nr_rows; i++) {
		const struct opt_desc *d = &t->rows[i];
		const char *h = d->help, *nl;
		char left[40];

		snprintf(left, sizeof(left), "--%s%s%s", d->name, d->arg ? " " : "",
			 d->arg ? d->arg : "");
		for (; (nl = strchr(h, '\n')); h = nl + 1, left[0] = 0)
			fprintf(f, "  %-20s %.*s\n", left, (int)(nl - h), h);
		fprintf(f, "  %-20s %s\n", left, h);
	}
}

static int set_uint(const struct opt_desc *d, const char *arg, unsigned int *out)
{
	uint64_t v;

	if (!d->what) {
		if (opt_number(d->name, arg, d->max, &v))
			return -1;
	} else if (parse_u64(arg, d->max, &v) || v < d->min) {
		pr_err("--%s takes %s from %llu to %llu, not '%s'", d->name, d->what,
		       (unsigned long long)d->min, (unsigned long long)d->max, arg);
		return -1;
	}
	*out = v;
	return 0;
}

static int set_choice(const struct opt_desc *d, const char *arg, int *out)
{
	const struct opt_choice *c;

	for (c = d->choices; c->name; c++)
		if (!strcmp(arg, c->name)) {
			*out = c->value;
			return 0;
		}
	pr_err("--%s: bad value '%s'", d->name, arg);
	return -1;
}

static int apply(const struct opt_desc *d, const char *arg, void *ctx)
{
	void *field = (char *)ctx + d->field;

	switch (d->kind) {
	case OPT_FLAG:
		*(int *)field = 1;
		return 0;
	case OPT_UINT:
		return set_uint(d, arg, field);
	case OPT_CHOICE:
		return set_choice(d, arg, field);
	case OPT_STRING:
		*(const char **)field = arg;
		return 0;
	case OPT_CALL:
		return d->set(ctx, d, arg);
	}
	return -1;
}

/* the row getopt_long() answered with c, or NULL ('?': getopt said why) */
static const struct opt_desc *row_of(const struct opt_table *t, int c)
{
	unsigned int i;

	if (c >= OPT_VAL_BASE && c < OPT_VAL_BASE + (int)t->nr_rows)
		return &t->rows[c - OPT_VAL_BASE];
	for (i = 0; c != '?' && i < t->nr_rows; i++)
		if (t->rows[i].short_name == c)
			return &t->rows[i];
	return NULL;
}

int opt_parse(const struct opt_table *t, int argc, char **argv, void *ctx)
{
	struct option longopts[OPT_ROWS_MAX + 1];
	char shorts[2 * OPT_ROWS_MAX + 1];	/* "c" or "c:" per short name */
	unsigned int i, n = 0;
	int c;

	if (t->nr_rows > OPT_ROWS_MAX) {
		pr_err("%u options: the engine takes at most %d", t->nr_rows, OPT_ROWS_MAX);
		return OPT_BAD_USAGE;
	}
	for (i = 0; i < t->nr_rows; i++) {
		const struct opt_desc *d = &t->rows[i];

		longopts[i] = (struct option) {
			d->name, d->arg ? required_argument : no_argument, NULL,
			d->short_name ? d->short_name : OPT_VAL_BASE + (int)i,
		};
		if (d->short_name)
			shorts[n++] = d->short_name;
		if (d->short_name && d->arg)
			shorts[n++] = ':';
	}
	memset(&longopts[t->nr_rows], 0, sizeof(longopts[0]));
	shorts[n] = 0;

	optind = 0;	/* glibc: a fresh scan, also of another argv */
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct opt_desc *d = row_of(t, c);
		int r;

		if (!d) {
			opt_usage(t, stderr);
			return OPT_BAD_USAGE;
		}
		r = apply(d, optarg, ctx);
		if (r < 0)
			return OPT_BAD_VALUE;
		if (t->given)
			t->given(ctx, d);
		if (r == OPT_STOP)
			break;
	}
	return optind;
}
