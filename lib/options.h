/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A command line described by one table: each row is an option's name, its
 * argument, its help text and how it is stored into the program's own
 * struct (the context). The usage text and the getopt_long() table are
 * both made from it, so an option cannot be documented and parsed
 * differently, and every program's options fail with the same kind of
 * message: the option, the bad value and what it takes.
 */
#ifndef HWLAB_LIB_OPTIONS_H
#define HWLAB_LIB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_kind {
	OPT_FLAG,		/* int field set to 1 */
	OPT_UINT,		/* unsigned int field, 0..max (min..max with what) */
	OPT_CHOICE,		/* int field, one of choices */
	OPT_STRING,		/* const char * field */
	OPT_CALL,		/* set() does it */
};

struct opt_choice {
	const char *name;
	int value;
};

/* set() returns 0, -1 after its message, or OPT_STOP: the parse ends there (--help) */
#define OPT_STOP 1

struct opt_desc {
	const char *name;
	char short_name;	/* 0, or also -c (-h for --help) */
	const char *arg;	/* the argument's name in the usage text; NULL: none */
	const char *help;	/* '\n' starts an indented continuation line */
	enum opt_kind kind;
	size_t field;		/* offset in the context */
	uint64_t min, max;	/* OPT_UINT; min only with what */
	/*
	 * OPT_UINT: what the number counts, for "--NAME takes WHAT from MIN to
	 * MAX, not 'ARG'"; NULL: "--NAME: 'ARG' is not a number up to MAX"
	 */
	const char *what;
	const struct opt_choice *choices;	/* OPT_CHOICE, ended by a NULL name */
	int (*set)(void *ctx, const struct opt_desc *d, const char *arg);
};

struct opt_table {
	const char *synopsis;	/* the usage text's first lines, each ending in '\n' */
	const struct opt_desc *rows;
	unsigned int nr_rows;
	/* optional: told each option as it is given, for rules between options */
	void (*given)(void *ctx, const struct opt_desc *d);
};

/* opt_parse()'s refusals: the caller chooses the exit status of each */
#define OPT_BAD_VALUE	(-1)	/* an option's value: a message named both */
#define OPT_BAD_USAGE	(-2)	/* unknown option, missing argument: getopt said which,
				 * and the usage text followed on stderr */

/*
 * Apply argv's options to ctx in their order (fields not given keep what
 * ctx held), starting a fresh getopt scan. Returns the index of the first
 * operand (getopt_long() moves them after the options), or OPT_BAD_VALUE,
 * OPT_BAD_USAGE.
 */
int opt_parse(const struct opt_table *t, int argc, char **argv, void *ctx);
void opt_usage(const struct opt_table *t, FILE *f);

/*
 * A whole number 0..max for --name (lib/parse_num.h), or -1 after the
 * message naming the option and the value: for OPT_CALL rows.
 */
int opt_number(const char *name, const char *arg, uint64_t max, uint64_t *out);
/* the name of value in choices, "?" if none has it */
const char *opt_choice_name(const struct opt_choice *choices, int value);

/*
 * The rows, kvmtool style: one macro per kind, T the context's type. The
 * field must have the type the engine stores (a build error otherwise).
 */
#define OPT_BUILD_BUG_ON_ZERO(e) ((int)(sizeof(struct { int : (-!!(e)); })))
#define OPT_FIELD(T, f, type)							\
	(offsetof(T, f) +							\
	 OPT_BUILD_BUG_ON_ZERO(!__builtin_types_compatible_p(__typeof__(((T *)0)->f), type)))

#define OPT_FLAG_ROW(T, n, h, f) \
	{ .name = n, .help = h, .kind = OPT_FLAG, .field = OPT_FIELD(T, f, int) }
#define OPT_UINT_ROW(T, n, a, h, f, m) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_UINT, \
	  .field = OPT_FIELD(T, f, unsigned int), .max = m }
/* a number with a range and a unit in its message: "--soak takes a count from 1 to N" */
#define OPT_RANGE_ROW(T, n, a, h, f, lo, hi, w) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_UINT, \
	  .field = OPT_FIELD(T, f, unsigned int), .min = lo, .max = hi, .what = w }
#define OPT_CHOICE_ROW(T, n, a, h, f, c) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_CHOICE, \
	  .field = OPT_FIELD(T, f, int), .choices = c }
#define OPT_STRING_ROW(T, n, a, h, f) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_STRING, \
	  .field = OPT_FIELD(T, f, const char *) }
#define OPT_CALL_ROW(n, a, h, fn) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_CALL, .set = fn }

#define OPT_TABLE(syn, r, g) \
	{ .synopsis = syn, .rows = r, .nr_rows = sizeof(r) / sizeof((r)[0]), .given = g }

#endif
