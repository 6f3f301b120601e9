/* SPDX-License-Identifier: Apache-2.0 */
/* buf.h - a growable byte buffer with a hard size cap (internal).
 *
 * Every piece of text sluice accumulates from outside (HTTP bodies, log
 * reads, rendered scripts) goes through a buf so that nothing grows without
 * bound.  The data is always NUL-terminated, so text can be used directly.
 */
#ifndef SLUICE_BUF_H
#define SLUICE_BUF_H

#include <stddef.h>

#include <sluice/common.h>
#include <sluice/error.h>

typedef struct {
    char *data; /* NUL-terminated; NULL until the first append */
    size_t len; /* bytes used, NUL excluded */
    size_t cap; /* bytes allocated */
    size_t max; /* hard limit on len; 0 = SIZE_MAX */
} buf_t;

#define BUF_INIT                                                                                   \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

/* Start an empty buffer whose length may never exceed `max` (0: no cap). */
void buf_init(buf_t *b, size_t max);

/* Append bytes.  SLUICE_ETOOBIG when the cap would be crossed (the buffer
 * keeps what it had), SLUICE_ENOMEM when allocation fails. */
sluice_err buf_append(buf_t *b, const void *data, size_t len) SLUICE_WARN_UNUSED;
sluice_err buf_puts(buf_t *b, const char *s) SLUICE_WARN_UNUSED;
sluice_err buf_printf(buf_t *b, const char *fmt, ...) SLUICE_PRINTF(2, 3) SLUICE_WARN_UNUSED;

/* The text (never NULL: "" when empty); borrowed, valid until the next
 * append or buf_free. */
const char *buf_str(const buf_t *b);

/* Hand the allocation to the caller (caller frees with free(); never NULL
 * unless out of memory) and reset the buffer to empty. */
char *buf_take(buf_t *b);

void buf_reset(buf_t *b);
void buf_free(buf_t *b);

#endif /* SLUICE_BUF_H */
