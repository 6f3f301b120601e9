/* SPDX-License-Identifier: Apache-2.0 */
/* errlist.c - the collector of field errors (include/sluice/error.h): the
 * checks of a launch request append every error they find, and the API and
 * the CLI report them all.
 *
 * Notes:
 * - The array grows by doubling up to SLUICE_ERRLIST_MAX items; past that
 *   an error is only counted (`dropped`), so a hostile request cannot make
 *   the answer grow without bound.
 * - Texts are cut to their buffers like sluice_errorf()'s ("..." at the
 *   end).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/error.h>

static void cut(char *dst, size_t cap, int n)
{
    if (n < 0)
        dst[0] = '\0';
    else if ((size_t)n >= cap)
        memcpy(dst + cap - 4, "...", 4);
}

static sluice_field_error_t *grow(sluice_errlist_t *l)
{
    sluice_field_error_t *items;
    size_t cap;

    if (l->n < l->cap)
        return &l->items[l->n];
    cap = l->cap ? l->cap * 2 : 4;
    if (cap > SLUICE_ERRLIST_MAX)
        cap = SLUICE_ERRLIST_MAX;
    if ((items = realloc(l->items, cap * sizeof(*items))) == NULL)
        return NULL;
    l->items = items;
    l->cap = cap;
    return &l->items[l->n];
}

sluice_err sluice_errlist_add(sluice_errlist_t *l, const char *path, const char *fmt, ...)
{
    sluice_field_error_t *e;
    va_list ap;
    int n;

    if (l == NULL)
        return SLUICE_OK;
    if (l->n >= SLUICE_ERRLIST_MAX) {
        l->dropped++;
        return SLUICE_OK;
    }
    if ((e = grow(l)) == NULL)
        return SLUICE_ENOMEM;
    n = snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
    cut(e->path, sizeof(e->path), n);
    va_start(ap, fmt);
    n = vsnprintf(e->reason, sizeof(e->reason), fmt, ap);
    va_end(ap);
    cut(e->reason, sizeof(e->reason), n);
    l->n++;
    return SLUICE_OK;
}

sluice_err sluice_errlist_add_text(sluice_errlist_t *l, const char *text)
{
    char path[SLUICE_FIELD_PATH_MAX];
    size_t n;

    if (text == NULL)
        text = "";
    n = strcspn(text, ": ");
    if (n > 0 && n < sizeof(path) && strncmp(text + n, ": ", 2) == 0) {
        memcpy(path, text, n);
        path[n] = '\0';
        return sluice_errlist_add(l, path, "%s", text + n + 2);
    }
    return sluice_errlist_add(l, "", "%s", text);
}

void sluice_errlist_clear(sluice_errlist_t *l)
{
    if (l == NULL)
        return;
    free(l->items);
    l->items = NULL;
    l->n = l->cap = l->dropped = 0;
}
