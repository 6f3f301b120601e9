/* SPDX-License-Identifier: Apache-2.0 */
/* server_text.h - checks of the text a client sends to `sluice serve` (not
 * installed): UTF-8, control bytes, percent-decoding of paths and query
 * values, and naming the JSON field that holds a bad byte.
 */
#ifndef SLUICE_SERVER_TEXT_H
#define SLUICE_SERVER_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 prefix of s[0..len) (len when all is valid).
 * Overlong forms, surrogates and code points past U+10FFFF are invalid. */
size_t text_utf8_prefix(const char *s, size_t len);

/* 1 when s[0..len) is fit for a path segment or a query value: valid UTF-8,
 * no control byte, no literal "%00" and no literal "%2F" (see
 * text_unescape() and text_unescape_path()).  Else 0 with
 * *why set to a static phrase ("is not valid UTF-8", ...). */
int text_clean(const char *s, size_t len, const char **why);

/* Decode %XX in place in the NUL-terminated `val`, except %00, which stays
 * literal so that no NUL silently cuts a path or a value short
 * (text_clean() refuses it).  Returns the new length. */
size_t text_unescape(char *val);

/* `s` for a log line: every control byte, DEL, backslash and byte that is
 * not part of valid UTF-8 written as \xNN, the rest as is, into
 * out[0..size) (cut before an escape that does not fit).  Returns out. */
const char *text_escape(const char *s, char *out, size_t size);

/* The same for a path: %2F (either case) stays literal too, so that an
 * encoded slash never separates segments (text_clean() refuses it in a
 * launch id; elsewhere the path matches no route). */
size_t text_unescape_path(char *val);

/* For a body that is not UTF-8: the JSON path of the field whose text holds
 * the first bad byte, copied into field[0..size); "body" when the bad byte
 * is outside any string or the body is not JSON. */
void text_utf8_field(const char *body, size_t len, char *field, size_t size);

#endif /* SLUICE_SERVER_TEXT_H */
