/* SPDX-License-Identifier: GPL-2.0 */
/* Between json_line.c and json_line_string.c only: the line's bytes in and out. */
#ifndef HWLAB_JSON_LINE_INTERNAL_H
#define HWLAB_JSON_LINE_INTERNAL_H

#include <stddef.h>

#include "json_line.h"

/* The next byte of the line, left there; EOF at its end. */
int json_line__peek(struct json_line *l);
/* The next byte of the line, or EOF at its end ('\n' is not taken). */
int json_line__next(struct json_line *l);
/* Record why the line is malformed (the first reason counts); returns -1. */
int json_line__bad(struct json_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bytes of a member's name or value, to the caller's hooks. */
void json_line__emit(struct json_line *l, const char *p, size_t n);

static inline void json_line__emit_c(struct json_line *l, char c)
{
	json_line__emit(l, &c, 1);
}

/*
 * json_line_read(), for a line whose first non-blank byte is open: '{', a
 * report line, or '[', an array whose elements are heard as members without
 * a name (no member_name hook).
 */
int json_line__read(struct json_line *l, FILE *in, const struct json_line_hooks *hooks, int open);

/* A string after its opening quote; raw: its characters as they are, else as JSON. */
int json_line__string_body(struct json_line *l, int raw);

#endif
