/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HWLAB_PARSE_NUM_H
#define HWLAB_PARSE_NUM_H

#include <stdint.h>

/*
 * A whole string as an unsigned number (decimal or 0x hex) no larger than
 * max. Refuses an empty string, a sign, trailing characters, overflow and a
 * leading zero before digits: "0612000" is neither read as octal (0x32400,
 * a different page) nor guessed to be hex. Returns 0, or -1 with *out
 * untouched.
 */
int parse_u64(const char *s, uint64_t max, uint64_t *out);

#endif
