/* SPDX-License-Identifier: Apache-2.0 */
/* hostlist.c - see hostlist.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

/* Names past `max` are an error (SLUICE_ETOOBIG), or, with `truncate`,
 * left out while the rest of the expression is still checked. */
typedef struct {
    json_t *arr;
    size_t max;
    bool truncate;
} sink_t;

/* Append one name. */
static sluice_err push(sink_t *k, const char *name, sluice_error_t *err)
{
    if (json_array_size(k->arr) >= k->max) {
        if (k->truncate)
            return SLUICE_OK;
        return sluice_errorf(err, SLUICE_ETOOBIG, "hostlist: more than %zu nodes", k->max);
    }
    if (json_array_append_new(k->arr, json_string(name)) != 0)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    return SLUICE_OK;
}

/* Read a decimal of at most 9 digits at *p; its digit count in *width. */
static int read_num(const char **p, long *v, int *width)
{
    const char *s = *p;
    long n = 0;
    int w = 0;

    while (*s >= '0' && *s <= '9' && w < 9) {
        n = n * 10 + (*s - '0');
        s++;
        w++;
    }
    if (w == 0 || (*s >= '0' && *s <= '9'))
        return -1;
    *p = s;
    *v = n;
    *width = w;
    return 0;
}

/* Expand "prefix[ranges]suffix" (one bracket group). */
static sluice_err
expand_one(const char *item, size_t len, const char *expr, sink_t *k, sluice_error_t *err)
{
    char name[256];
    const char *open = memchr(item, '[', len), *close, *p;
    size_t pre, post;
    sluice_err rc;

    if (open == NULL) {
        if (len == 0 || len >= sizeof(name) || memchr(item, ']', len))
            return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': bad node name", expr);
        memcpy(name, item, len);
        name[len] = '\0';
        return push(k, name, err);
    }
    close = memchr(open, ']', len - (size_t)(open - item));
    pre = (size_t)(open - item);
    if (close == NULL || pre == 0 || pre >= 128 || memchr(item, ']', pre) != NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': bad bracket group", expr);
    post = len - (size_t)(close + 1 - item);
    if (post >= 64 || memchr(close + 1, '[', post) || memchr(close + 1, ']', post))
        return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': one bracket group per name", expr);
    for (p = open + 1; p < close;) {
        const char *start = p;
        long lo, hi;
        int wlo, whi = 0, width;

        if (read_num(&p, &lo, &wlo) != 0)
            return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': bad range", expr);
        hi = lo;
        whi = wlo;
        if (*p == '-') {
            p++;
            if (read_num(&p, &hi, &whi) != 0 || hi < lo)
                return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': bad range", expr);
        }
        (void)whi; /* the upper bound's width follows the lower one's */
        if (p != close && *p != ',')
            return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': bad range", expr);
        if (p == close - 1 && *p == ',')
            return sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': bad range", expr);
        if (*p == ',')
            p++;
        /* "01-10": the width of the first bound when it is zero-padded. */
        width = wlo > 1 && start[0] == '0' ? wlo : 1;
        if ((size_t)(hi - lo) >= k->max && !k->truncate)
            return sluice_errorf(err, SLUICE_ETOOBIG, "hostlist: more than %zu nodes", k->max);
        if (k->truncate && json_array_size(k->arr) >= k->max)
            continue;
        for (; lo <= hi && (!k->truncate || json_array_size(k->arr) < k->max); lo++) {
            snprintf(name, sizeof(name), "%.*s%0*ld%.*s", (int)pre, item, width, lo, (int)post,
                     close + 1);
            if ((rc = push(k, name, err)) != SLUICE_OK)
                return rc;
        }
    }
    return SLUICE_OK;
}

static sluice_err
expand(const char *expr, size_t max, bool truncate, json_t **out, sluice_error_t *err)
{
    json_t *arr;
    const char *p;
    sink_t k;
    sluice_err rc = SLUICE_OK;

    if (expr == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "hostlist: no expression");
    if ((arr = json_array()) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    k.arr = arr;
    k.max = max;
    k.truncate = truncate;
    for (p = expr; *p && rc == SLUICE_OK;) {
        size_t len = 0;
        int depth = 0;

        /* An item ends at a comma outside brackets. */
        while (p[len] && (depth > 0 || p[len] != ',')) {
            if (p[len] == '[')
                depth++;
            else if (p[len] == ']')
                depth--;
            len++;
        }
        rc = expand_one(p, len, expr, &k, err);
        p += len;
        if (*p == ',') {
            p++;
            if (*p == '\0')
                rc = sluice_errorf(err, SLUICE_EINVAL, "hostlist '%s': trailing comma", expr);
        }
    }
    if (rc != SLUICE_OK) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return SLUICE_OK;
}

sluice_err hostlist_expand(const char *expr, size_t max, json_t **out, sluice_error_t *err)
{
    return expand(expr, max, false, out, err);
}

sluice_err hostlist_first(const char *expr, char *out, size_t size, sluice_error_t *err)
{
    json_t *arr = NULL;
    const char *name;
    sluice_err rc;

    if ((rc = expand(expr, 1, true, &arr, err)) != SLUICE_OK)
        return rc;
    name = json_string_value(json_array_get(arr, 0));
    if (name == NULL || strlen(name) >= size) {
        rc = sluice_errorf(err, name ? SLUICE_ETOOBIG : SLUICE_EINVAL,
                           name ? "hostlist '%s': first name too long" : "hostlist '%s': empty",
                           expr);
        goto out;
    }
    memcpy(out, name, strlen(name) + 1);
out:
    json_decref(arr);
    return rc;
}
