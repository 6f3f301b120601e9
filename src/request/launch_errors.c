/* SPDX-License-Identifier: Apache-2.0 */
/* launch_errors.c - the errors of a launch request: every field error is
 * noted in the parse's collector (sluice_errlist_t) and the walk goes on,
 * so that one answer names them all; at the end they are put in the order
 * of the request document, and the first becomes the sluice_error_t.
 *
 * Notes:
 * - A field's value gets one error (its first problem); the other fields,
 *   the other items of a list and the other pools are still checked.
 *   Checks across fields (the fan-out rule, the default series, a
 *   dependency on the launch itself) run only when the fields they read
 *   had no error, so an error is never followed by its own echo
 *   (launch_failed()).
 * - Out of memory stops the walk (launch_fatal()).
 * - A field error is noted by base/jdec.h, the one place that writes
 *   "<path>: <reason>" into an error and a collector: the parse's decoder
 *   (launch_ctx_t.d) notes into c->err and c->list, its getters and
 *   jdec_fail() at a cursor, launch_perr() at a path given as text.
 * - Document order: each error's path is looked up in the parse tree (key
 *   positions and array indexes; a parent's own error before its
 *   children's).  Errors about a field the request lacks ("required") have
 *   no place in it: they follow all the others, in the order they were
 *   found (the schema's).  Errors at the same place keep the order they
 *   were found in.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/jdec.h"
#include "launch_int.h"

sluice_err launch_perr(launch_ctx_t *c, const char *path, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    sluice_err rc;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rc = jdec_note(&c->d, path, "%s", msg);
    return c->d.oom ? launch_oom(c) : rc;
}

sluice_err launch_oom(launch_ctx_t *c)
{
    c->d.oom = true;
    return sluice_errorf(c->err, SLUICE_ENOMEM, "launch request: out of memory");
}

sluice_err launch_take(launch_ctx_t *c, const char *path, sluice_err rc, const sluice_error_t *e)
{
    size_t n = strlen(path);
    const char *why = e->text;

    if (rc == SLUICE_OK)
        return SLUICE_OK;
    if (rc != SLUICE_EINVAL) {
        c->d.oom = c->d.oom || rc == SLUICE_ENOMEM;
        if (c->err != NULL)
            *c->err = *e;
        return rc;
    }
    if (strncmp(why, path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
        why += n + 2;
    return launch_perr(c, path, "%s", why);
}

bool launch_fatal(const launch_ctx_t *c, sluice_err rc)
{
    return jdec_fatal(&c->d, rc);
}

static bool path_under(const char *p, const char *prefix)
{
    size_t n = strlen(prefix);

    return strncmp(p, prefix, n) == 0 && (p[n] == '\0' || p[n] == '.' || p[n] == '[');
}

bool launch_failed(const launch_ctx_t *c, const char *prefix)
{
    size_t i;

    if (c->list == NULL)
        return false;
    for (i = c->first; i < c->list->n; i++)
        if (path_under(c->list->items[i].path, prefix))
            return true;
    return false;
}

/* ---- document order ---------------------------------------------------- */

#define KEY_DEPTH 8

typedef struct {
    int key[KEY_DEPTH];
    size_t found; /* the order it was found in: ties keep it */
    sluice_field_error_t e;
} row_t;

/* The position of the longest key of `obj` that `s` starts with (followed by
 * the end, '.' or '['), or -1; its value and length go to *val and *len. */
static int key_pos(json_t *obj, const char *s, json_t **val, size_t *len)
{
    const char *k;
    json_t *v;
    int i = 0, best = -1;
    size_t best_len = 0;

    json_object_foreach(obj, k, v)
    {
        size_t n = strlen(k);

        if (n > best_len && strncmp(s, k, n) == 0 && (s[n] == '\0' || s[n] == '.' || s[n] == '[')) {
            best = i;
            best_len = n;
            *val = v;
        }
        i++;
    }
    *len = best_len;
    return best;
}

static void doc_key(json_t *root, const char *path, int *key)
{
    json_t *cur = root;
    const char *s = path;
    size_t d;

    for (d = 0; d < KEY_DEPTH; d++)
        key[d] = -1; /* a parent's own error sorts before its children's */
    for (d = 0; d < KEY_DEPTH && *s != '\0'; d++) {
        if (*s == '[') {
            char *end;
            unsigned long i = strtoul(s + 1, &end, 10);

            if (*end != ']' || !json_is_array(cur) || i >= json_array_size(cur))
                break;
            key[d] = (int)i;
            cur = json_array_get(cur, i);
            s = end + 1;
        } else {
            json_t *v = NULL;
            size_t n = 0;

            if (*s == '.')
                s++;
            key[d] = json_is_object(cur) ? key_pos(cur, s, &v, &n) : -1;
            if (key[d] < 0)
                break;
            cur = v;
            s += n;
        }
    }
    if (d < KEY_DEPTH && *s != '\0') { /* a field the request lacks: after all */
        for (d = 0; d < KEY_DEPTH; d++)
            key[d] = -1;
        key[0] = INT_MAX;
    }
}

static int row_cmp(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    size_t d;

    for (d = 0; d < KEY_DEPTH; d++)
        if (x->key[d] != y->key[d])
            return x->key[d] < y->key[d] ? -1 : 1;
    return x->found < y->found ? -1 : (x->found > y->found);
}

sluice_err launch_errors_finish(launch_ctx_t *c, json_t *root)
{
    sluice_errlist_t *l = c->list;
    const sluice_field_error_t *first;
    row_t *rows;
    size_t i, n;

    if (l == NULL || l->n <= c->first)
        return SLUICE_OK;
    n = l->n - c->first;
    if (n > 1) {
        if ((rows = calloc(n, sizeof(*rows))) == NULL)
            return launch_oom(c);
        for (i = 0; i < n; i++) {
            rows[i].e = l->items[c->first + i];
            rows[i].found = i;
            doc_key(root, rows[i].e.path, rows[i].key);
        }
        qsort(rows, n, sizeof(*rows), row_cmp);
        for (i = 0; i < n; i++)
            l->items[c->first + i] = rows[i].e;
        free(rows);
    }
    first = &l->items[c->first];
    if (first->path[0] != '\0')
        sluice_errorf(c->err, SLUICE_EINVAL, "%s: %s", first->path, first->reason);
    else
        sluice_errorf(c->err, SLUICE_EINVAL, "%s", first->reason);
    return SLUICE_EINVAL;
}
