/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Bytes someone else chose (a stream's device name, a QMP or libvirt reply,
 * a watch request, the guest's text) as text safe for a terminal: printable
 * ASCII (0x20..0x7e) kept, every other byte written as \xNN, so that no
 * control sequence (ESC [ 2 J, a newline that starts a fake message line, a
 * C1 byte, a UTF-8 one) reaches the operator as it is. A backslash is kept:
 * the result is for people, and escaping it twice gives the same text, so
 * log.c escapes every message whole as well without doubling a site's
 * escapes. Report lines (JSON) have their own escaping (vmm/core/report.h).
 */
#ifndef HWLAB_ESCAPE_H
#define HWLAB_ESCAPE_H

#include <stddef.h>

/* room for len bytes escaped whole, with the NUL */
#define ESCAPED_SIZE(len) ((len) * 4 + 1)

/*
 * in[0..len) escaped into out (outlen > 0 bytes, always NUL-terminated).
 * Cut only between whole characters and escapes; a cut text ends in "..."
 * (when outlen leaves room for it). Returns out.
 */
char *escape_bytes(char *out, size_t outlen, const void *in, size_t len);
/* The C string s, escaped the same way; NULL as "(null)". Returns out. */
char *escape_str(char *out, size_t outlen, const char *s);

#endif
