/* SPDX-License-Identifier: Apache-2.0 */
/* json_text.c - JSON values to text, byte for byte as jansson writes them
 * (json_text.h).
 *
 * Notes:
 * - What jansson escapes in a string (its dump.c, without
 *   JSON_ENSURE_ASCII and JSON_ESCAPE_SLASH): '"' and '\\', the controls
 *   below 0x20 (\b \f \n \r \t by name, the others as \u00XX with upper-case
 *   hex).  Everything else, DEL and every non-ASCII byte included, is
 *   copied: a jansson string is valid UTF-8 already.  So a run of bytes
 *   that holds none of those is copied with one memcpy.
 * - Keys sorted (JSON_SORT_KEYS) compare as jansson 2.14 compares them:
 *   memcmp of the common length, then the shorter first.  Unsorted keys
 *   come in the object's own order, as jansson iterates it.
 * - A nesting deeper than JSON_TEXT_MAX_DEPTH is refused (NULL), where
 *   jansson would refuse a cycle; sluice never builds either.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"

#define JSON_TEXT_MAX_DEPTH 2048
/* What json_text_dump() writes itself; any other flag goes to jansson. */
#define JSON_TEXT_OWN_FLAGS ((size_t)(JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY))

typedef struct {
    char *p;
    size_t len, cap;
    int bad; /* out of memory or too deep: the result is NULL */
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    if (o->bad)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        char *p;

        while (cap < o->len + n + 1)
            cap *= 2;
        if ((p = realloc(o->p, cap)) == NULL) {
            o->bad = 1;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void put_string(out_t *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t run = 0;

    put(o, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[7];
        const char *e = NULL;
        size_t elen = 2;

        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(o, s + run, i - run);
        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\b':
            e = "\\b";
            break;
        case '\f':
            e = "\\f";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\r':
            e = "\\r";
            break;
        case '\t':
            e = "\\t";
            break;
        default:
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 0xF];
            e = esc;
            elen = 6;
            break;
        }
        put(o, e, elen);
        run = i + 1;
    }
    put(o, s + run, n - run);
    put(o, "\"", 1);
}

typedef struct {
    const char *key;
    size_t len;
    json_t *value;
} member_t;

static int member_cmp(const void *a, const void *b)
{
    const member_t *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->key, y->key, n);

    if (r != 0)
        return r;
    return x->len < y->len ? -1 : x->len > y->len ? 1 : 0;
}

static void put_value(out_t *o, const json_t *v, size_t flags, int depth);

static void put_object(out_t *o, const json_t *v, size_t flags, int depth)
{
    const char *comma = (flags & JSON_COMPACT) ? "," : ", ";
    const char *colon = (flags & JSON_COMPACT) ? ":" : ": ";
    size_t n = json_object_size(v), i = 0;
    member_t *m;
    void *it;

    if (n == 0) {
        put(o, "{}", 2);
        return;
    }
    if ((m = calloc(n, sizeof(*m))) == NULL) {
        o->bad = 1;
        return;
    }
    for (it = json_object_iter((json_t *)(uintptr_t)v); it != NULL && i < n;
         it = json_object_iter_next((json_t *)(uintptr_t)v, it), i++) {
        m[i].key = json_object_iter_key(it);
        m[i].len = json_object_iter_key_len(it);
        m[i].value = json_object_iter_value(it);
    }
    n = i;
    if (flags & JSON_SORT_KEYS)
        qsort(m, n, sizeof(*m), member_cmp);
    put(o, "{", 1);
    for (i = 0; i < n && !o->bad; i++) {
        if (i > 0)
            put(o, comma, strlen(comma));
        put_string(o, m[i].key, m[i].len);
        put(o, colon, strlen(colon));
        put_value(o, m[i].value, flags, depth + 1);
    }
    put(o, "}", 1);
    free(m);
}

static void put_value(out_t *o, const json_t *v, size_t flags, int depth)
{
    char num[64];
    char *text;
    int k;

    if (o->bad)
        return;
    if (depth > JSON_TEXT_MAX_DEPTH) {
        o->bad = 1;
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        put_object(o, v, flags, depth);
        break;
    case JSON_ARRAY:
        put(o, "[", 1);
        for (size_t i = 0; i < json_array_size(v) && !o->bad; i++) {
            if (i > 0)
                put(o, (flags & JSON_COMPACT) ? "," : ", ", (flags & JSON_COMPACT) ? 1 : 2);
            put_value(o, json_array_get(v, i), flags, depth + 1);
        }
        put(o, "]", 1);
        break;
    case JSON_STRING:
        put_string(o, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        k = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        put(o, num, (size_t)k);
        break;
    case JSON_REAL: /* jansson's own shortest round-trip form */
        if ((text = json_dumps(v, JSON_ENCODE_ANY)) == NULL) {
            o->bad = 1;
            return;
        }
        put(o, text, strlen(text));
        free(text);
        break;
    case JSON_TRUE:
        put(o, "true", 4);
        break;
    case JSON_FALSE:
        put(o, "false", 5);
        break;
    case JSON_NULL:
    default:
        put(o, "null", 4);
        break;
    }
}

char *json_text_dump(const json_t *v, size_t flags)
{
    out_t o = {NULL, 0, 0, 0};

    if (v == NULL)
        return NULL;
    if ((flags & ~JSON_TEXT_OWN_FLAGS) != 0)
        return json_dumps(v, flags);
    if (!(flags & JSON_ENCODE_ANY) && !json_is_object(v) && !json_is_array(v))
        return NULL;
    put_value(&o, v, flags, 0);
    put(&o, "", 0);
    if (o.bad || o.p == NULL) {
        free(o.p);
        return NULL;
    }
    o.p[o.len] = '\0';
    return o.p;
}
