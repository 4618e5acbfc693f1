/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HWLAB_PARSE_NUM_H
#define HWLAB_PARSE_NUM_H

#include <stddef.h>
#include <stdint.h>

/*
 * A whole string as an unsigned number (decimal or 0x hex) no larger than
 * max. Refuses an empty string, a sign, trailing characters, overflow and a
 * leading zero before digits: "0612000" is neither read as octal (0x31400,
 * a different page) nor guessed to be hex. Returns 0, or -1 with *out
 * untouched.
 */
int parse_u64(const char *s, uint64_t max, uint64_t *out);

/*
 * The same refusals for a number in a file the kernel writes (/proc/PID/
 * maps, stat, status), where the field's base is fixed and there is no
 * prefix: the len bytes at s, all digits of base (10 or 16), at least one,
 * no sign or blank, no larger than max. Decimal has no leading zero but
 * "0"; hex may be zero-padded, as the kernel prints it ("%08lx"). Returns
 * 0, or -1 with *out untouched.
 */
int parse_field_u64(const char *s, size_t len, unsigned int base, uint64_t max, uint64_t *out);

#endif
