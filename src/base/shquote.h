/* SPDX-License-Identifier: Apache-2.0 */
/* shquote.h - POSIX shell single quoting (internal).
 *
 * Every value that rendering places into a shell script goes through
 * shquote_append(): the value is wrapped in single quotes and each embedded
 * single quote becomes '\'' (close, escaped quote, reopen).  Inside single
 * quotes no byte is special to the shell (not $, `, \, newline or ;), so no
 * byte of a value can execute.  A C string cannot carry NUL, and the launch
 * and config modules refuse values that would need it.
 */
#ifndef SLUICE_SHQUOTE_H
#define SLUICE_SHQUOTE_H

#include "buf.h"

/* Append the single-quoted form of `s` to `b` ('' for an empty string). */
sluice_err shquote_append(buf_t *b, const char *s) SLUICE_WARN_UNUSED;

#endif /* SLUICE_SHQUOTE_H */
