/* SPDX-License-Identifier: Apache-2.0 */
/* buf.c - capped growable buffer.
 *
 * Notes:
 * - Growth doubles, but never allocates past max + 1 bytes.
 * - A failed append leaves the buffer exactly as it was.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

void buf_init(buf_t *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

static sluice_err grow(buf_t *b, size_t extra)
{
    size_t limit = b->max ? b->max : SIZE_MAX - 1;
    size_t need, cap;
    char *p;

    if (extra > limit || b->len > limit - extra)
        return SLUICE_ETOOBIG;
    need = b->len + extra + 1;
    if (need <= b->cap)
        return SLUICE_OK;
    cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > limit + 1)
        cap = limit + 1;
    p = realloc(b->data, cap);
    if (p == NULL)
        return SLUICE_ENOMEM;
    b->data = p;
    b->cap = cap;
    return SLUICE_OK;
}

sluice_err buf_append(buf_t *b, const void *data, size_t len)
{
    sluice_err rc;

    if ((rc = grow(b, len)) != SLUICE_OK)
        return rc;
    if (len > 0)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return SLUICE_OK;
}

sluice_err buf_puts(buf_t *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

sluice_err buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    sluice_err rc;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return SLUICE_EINVAL;
    if ((rc = grow(b, (size_t)n)) != SLUICE_OK)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return SLUICE_OK;
}

const char *buf_str(const buf_t *b)
{
    return b->data ? b->data : "";
}

char *buf_take(buf_t *b)
{
    char *p = b->data;

    if (p == NULL)
        p = calloc(1, 1);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return p;
}

void buf_reset(buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void buf_free(buf_t *b)
{
    if (b == NULL)
        return;
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}
