/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HWLAB_PARSE_NUM_H
#define HWLAB_PARSE_NUM_H

#include <stdint.h>

/*
 * A whole string as an unsigned number (decimal, 0x hex or 0 octal) no
 * larger than max. Refuses an empty string, a sign, trailing characters and
 * overflow; returns 0, or -1 with *out untouched.
 */
int parse_u64(const char *s, uint64_t max, uint64_t *out);

#endif
