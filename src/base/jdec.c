/* SPDX-License-Identifier: Apache-2.0 */
/* jdec.c - the path-aware JSON decoder (jdec.h): cursors, their paths, the
 * typed getters and the one place their errors are written.
 *
 * Notes:
 * - A getter that succeeds never touches a path: the path of a member is
 *   put together only when there is an error to name (fail_at()).  Child
 *   cursors (objects, arrays, items) copy their parent's path, bounded by
 *   JDEC_PATH_MAX; nothing here allocates but jdec_strdup() and the list.
 * - Every error goes through note(): the first one into the error struct,
 *   each one into the list when there is one.  The voices differ only in
 *   their words; which checks run, and in which order, does not depend on
 *   the voice.
 * - jansson's object iterators take a non-const object; they do not modify
 *   it (mutable_json()).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdec.h"
#include "suggest.h"

/* The reason of an error: as long as the list keeps. */
#define REASON_MAX sizeof(((sluice_field_error_t *)0)->reason)

/* ---- paths --------------------------------------------------------------- */

/* Append n bytes of s; past the cap the path ends in "..." for good. */
static void put(jdec_cur_t *c, const char *s, size_t n)
{
    size_t room;

    if (c->cut)
        return;
    if (c->len + n < JDEC_PATH_MAX) {
        memcpy(c->path + c->len, s, n);
        c->len += n;
        c->path[c->len] = '\0';
        return;
    }
    if (c->len < JDEC_PATH_MAX - 4) {
        room = JDEC_PATH_MAX - 4 - c->len;
        memcpy(c->path + c->len, s, room);
    }
    c->len = JDEC_PATH_MAX - 4;
    memcpy(c->path + c->len, "...", 4);
    c->len += 3;
    c->cut = true;
}

/* ".key" (bare at the root), the key cut and its control bytes as '?'. */
static void put_key(jdec_cur_t *c, const char *key)
{
    char k[JDEC_KEY_ECHO];
    size_t i, n = strlen(key);

    for (i = 0; i < n && i < JDEC_KEY_ECHO - 4; i++)
        k[i] = ((unsigned char)key[i] < 0x20 || key[i] == 0x7f) ? '?' : key[i];
    if (i < n) {
        memcpy(k + i, "...", 3);
        i += 3;
    }
    if (c->len > 0)
        put(c, ".", 1);
    put(c, k, i);
}

static void copy_cursor(jdec_cur_t *out, const jdec_cur_t *c)
{
    out->d = c->d;
    out->v = c->v;
    out->len = c->len;
    out->cut = c->cut;
    memcpy(out->path, c->path, c->len + 1);
}

void jdec_init(jdec_t *d,
               jdec_mode mode,
               jdec_voice voice,
               sluice_err code,
               sluice_error_t *err,
               sluice_errlist_t *list)
{
    d->mode = mode;
    d->voice = voice;
    d->code = code;
    d->err = err;
    d->list = list;
    d->n_errors = 0;
    d->oom = false;
}

void jdec_root(jdec_cur_t *out, jdec_t *d, const json_t *v, const char *path)
{
    out->d = d;
    out->v = v;
    out->len = 0;
    out->cut = false;
    out->path[0] = '\0';
    if (path != NULL)
        put(out, path, strlen(path));
}

void jdec_member(jdec_cur_t *out, const jdec_cur_t *c, const char *key)
{
    copy_cursor(out, c);
    out->v = json_object_get(c->v, key);
    put_key(out, key);
}

void jdec_item(jdec_cur_t *out, const jdec_cur_t *c, size_t i)
{
    char idx[32];
    int n = snprintf(idx, sizeof(idx), "[%zu]", i);

    copy_cursor(out, c);
    out->v = json_array_get(c->v, i);
    put(out, idx, (size_t)n);
}

/* ---- looking ------------------------------------------------------------- */

const json_t *jdec_value(const jdec_cur_t *c, const char *key)
{
    return key != NULL ? json_object_get(c->v, key) : c->v;
}

bool jdec_present(const jdec_cur_t *c, const char *key)
{
    const json_t *v = jdec_value(c, key);

    return v != NULL && !(c->d->mode == JDEC_LENIENT && json_is_null(v));
}

size_t jdec_len(const jdec_cur_t *c)
{
    return json_is_array(c->v) ? json_array_size(c->v) : 0;
}

size_t jdec_members(const jdec_cur_t *c)
{
    return json_is_object(c->v) ? json_object_size(c->v) : 0;
}

const char *jdec_peek_string(const jdec_cur_t *c, const char *key)
{
    return json_string_value(jdec_value(c, key));
}

const char *jdec_peek_string_or(const jdec_cur_t *c, const char *key, const char *dflt)
{
    const char *s = jdec_peek_string(c, key);

    return s != NULL ? s : dflt;
}

void jdec_peek_root(jdec_t *d, jdec_cur_t *out, const json_t *v)
{
    jdec_init(d, JDEC_LENIENT, JDEC_VOICE_EXPECT, SLUICE_EPROTO, NULL, NULL);
    jdec_root(out, d, v, "");
}

/* ---- errors -------------------------------------------------------------- */

sluice_err jdec_oom(jdec_t *d, const char *path)
{
    d->oom = true;
    if (path != NULL && path[0] != '\0')
        return sluice_errorf(d->err, SLUICE_ENOMEM, "%s: out of memory", path);
    return sluice_errorf(d->err, SLUICE_ENOMEM, "out of memory");
}

static sluice_err vnote(jdec_t *d, const char *path, const char *fmt, va_list ap)
    SLUICE_PRINTF(3, 0);

static sluice_err vnote(jdec_t *d, const char *path, const char *fmt, va_list ap)
{
    char reason[REASON_MAX];

    vsnprintf(reason, sizeof(reason), fmt, ap);
    if (d->n_errors++ == 0) {
        if (path[0] != '\0')
            sluice_errorf(d->err, d->code, "%s: %s", path, reason);
        else
            sluice_errorf(d->err, d->code, "%s", reason);
    }
    if (d->list != NULL && sluice_errlist_add(d->list, path, "%s", reason) != SLUICE_OK)
        return jdec_oom(d, path);
    return d->code;
}

sluice_err jdec_note(jdec_t *d, const char *path, const char *fmt, ...)
{
    va_list ap;
    sluice_err rc;

    va_start(ap, fmt);
    rc = vnote(d, path != NULL ? path : "", fmt, ap);
    va_end(ap);
    return rc;
}

static sluice_err vfail(const jdec_cur_t *c, const char *key, const char *fmt, va_list ap)
    SLUICE_PRINTF(3, 0);

static sluice_err vfail(const jdec_cur_t *c, const char *key, const char *fmt, va_list ap)
{
    jdec_cur_t at;

    if (key == NULL)
        return vnote(c->d, c->path, fmt, ap);
    copy_cursor(&at, c);
    put_key(&at, key);
    return vnote(c->d, at.path, fmt, ap);
}

sluice_err jdec_fail(const jdec_cur_t *c, const char *key, const char *fmt, ...)
{
    va_list ap;
    sluice_err rc;

    va_start(ap, fmt);
    rc = vfail(c, key, fmt, ap);
    va_end(ap);
    return rc;
}

/* A getter's error: nothing noted under JDEC_SILENT. */
static sluice_err fail_at(const jdec_cur_t *c, const char *key, unsigned how, const char *fmt, ...)
    SLUICE_PRINTF(4, 5);

static sluice_err fail_at(const jdec_cur_t *c, const char *key, unsigned how, const char *fmt, ...)
{
    va_list ap;
    sluice_err rc;

    if (how & JDEC_SILENT)
        return c->d->code;
    va_start(ap, fmt);
    rc = vfail(c, key, fmt, ap);
    va_end(ap);
    return rc;
}

static sluice_err oom_at(const jdec_cur_t *c, const char *key)
{
    jdec_cur_t at;

    copy_cursor(&at, c);
    if (key != NULL)
        put_key(&at, key);
    return jdec_oom(c->d, at.path);
}

bool jdec_fatal(const jdec_t *d, sluice_err rc)
{
    return d->oom || (rc != SLUICE_OK && rc != d->code);
}

/* ---- the words of each voice --------------------------------------------- */

typedef enum { T_STRING, T_INTEGER, T_NUMBER, T_BOOL, T_OBJECT, T_ARRAY } kind;

static const char *type_words(jdec_voice voice, kind k)
{
    static const char *const expect[] = {"expected a string",  "expected an integer",
                                         "expected a number",  "expected a boolean",
                                         "expected an object", "expected an array"};
    static const char *const must[] = {"must be a string",  "must be an integer",
                                       "must be a number",  "must be a boolean",
                                       "must be an object", "must be an array"};

    if (voice == JDEC_VOICE_LOG)
        return must[k];
    if (voice == JDEC_VOICE_REQUEST && k == T_BOOL)
        return "expected true or false";
    return expect[k];
}

/* In a request, the text of a string member that reads as the kind that
 * was wanted ("4" for an integer, "0.5" for a number, "true" for a
 * boolean), or NULL: the error then says to drop the quotes.  Only such
 * short, plain texts are echoed. */
static const char *quoted(const jdec_cur_t *c, const char *key, kind k)
{
    const json_t *v = jdec_value(c, key);
    const char *s, *p;
    char *end = NULL;
    size_t len;

    if (c->d->voice != JDEC_VOICE_REQUEST || !json_is_string(v))
        return NULL;
    s = json_string_value(v);
    len = strlen(s);
    if (len == 0 || len > 24 || len != json_string_length(v))
        return NULL;
    switch (k) {
    case T_BOOL:
        return strcmp(s, "true") == 0 || strcmp(s, "false") == 0 ? s : NULL;
    case T_INTEGER:
        p = s[0] == '-' ? s + 1 : s;
        if (*p == '\0')
            return NULL;
        for (; *p != '\0'; p++)
            if (*p < '0' || *p > '9')
                return NULL;
        return s;
    case T_NUMBER:
        if (strspn(s, "0123456789+-.eE") != len || !isfinite(strtod(s, &end)) || *end != '\0')
            return NULL;
        return s;
    default:
        return NULL;
    }
}

static sluice_err type_fail(const jdec_cur_t *c, const char *key, unsigned how, kind k)
{
    const char *q = quoted(c, key, k);

    if (q != NULL)
        return fail_at(c, key, how, "%s, got \"%s\" as a string: drop the quotes",
                       type_words(c->d->voice, k), q);
    return fail_at(c, key, how, "%s", type_words(c->d->voice, k));
}

/* An integer of the wrong type (`type`) or out of [lo, hi] (`got`); the
 * bounds come as text so that one function words both signednesses. */
static sluice_err range_fail(const jdec_cur_t *c,
                             const char *key,
                             unsigned how,
                             const char *lo,
                             const char *hi,
                             bool open_top,
                             bool type,
                             long long got)
{
    char what[128];

    switch (c->d->voice) {
    case JDEC_VOICE_LOG:
        if (type)
            return fail_at(c, key, how, "must be an integer");
        return fail_at(c, key, how, "out of range [%s, %s]", lo, hi);
    case JDEC_VOICE_REQUEST:
        if (open_top)
            snprintf(what, sizeof(what), "expected an integer >= %s", lo);
        else
            snprintf(what, sizeof(what), "expected an integer between %s and %s", lo, hi);
        if (type && quoted(c, key, T_INTEGER) != NULL)
            return fail_at(c, key, how, "%s, got \"%s\" as a string: drop the quotes", what,
                           quoted(c, key, T_INTEGER));
        if (type)
            return fail_at(c, key, how, "%s", what);
        return fail_at(c, key, how, "%s (got %lld)", what, got);
    default:
        return fail_at(c, key, how, "expected an integer in %s..%s", lo, hi);
    }
}

/* ---- typed getters ------------------------------------------------------- */

/* The member to decode into *out, NULL when it is absent (null counted as
 * absent where the mode or `how` says so).  An absent required member is
 * an error. */
static sluice_err fetch(const jdec_cur_t *c, const char *key, unsigned how, const json_t **out)
{
    const json_t *v = jdec_value(c, key);

    if (v != NULL && json_is_null(v) && (c->d->mode == JDEC_LENIENT || (how & JDEC_NULLABLE) != 0))
        v = NULL;
    *out = v;
    if (v == NULL && (how & JDEC_REQUIRED))
        return fail_at(c, key, how, "required");
    return SLUICE_OK;
}

sluice_err
jdec_string(const jdec_cur_t *c, const char *key, unsigned how, size_t max, const char **out)
{
    const json_t *v;
    const char *s;
    size_t len;
    sluice_err rc;

    if ((rc = fetch(c, key, how, &v)) != SLUICE_OK || v == NULL)
        return rc;
    if (!json_is_string(v)) {
        if (how & JDEC_SOFT)
            return SLUICE_OK;
        return type_fail(c, key, how, T_STRING);
    }
    s = json_string_value(v);
    len = json_string_length(v);
    if (c->d->mode == JDEC_LENIENT) {
        len = strlen(s); /* read up to a NUL byte */
    } else if (strlen(s) != len) {
        if (c->d->voice != JDEC_VOICE_LOG)
            return fail_at(c, key, how, "contains a NUL byte");
        if (max == SIZE_MAX)
            return fail_at(c, key, how, "has NUL");
        return fail_at(c, key, how, "longer than %zu bytes or has NUL", max);
    }
    if (len > max) {
        if (c->d->voice == JDEC_VOICE_LOG)
            return fail_at(c, key, how, "longer than %zu bytes or has NUL", max);
        return fail_at(c, key, how, "longer than %zu bytes", max);
    }
    if ((how & JDEC_NONEMPTY) && s[0] == '\0')
        return fail_at(c, key, how, "must not be empty");
    *out = s;
    return SLUICE_OK;
}

sluice_err jdec_strdup(const jdec_cur_t *c, const char *key, unsigned how, size_t max, char **out)
{
    const char *s = NULL;
    char *copy;
    sluice_err rc;

    if ((rc = jdec_string(c, key, how, max, &s)) != SLUICE_OK || s == NULL)
        return rc;
    if ((copy = strdup(s)) == NULL)
        return oom_at(c, key);
    *out = copy;
    return SLUICE_OK;
}

/* An integer member into *n; *found false when it is absent (or a
 * non-finite real in lenient mode); *wrong when it is of another type. */
static sluice_err
integer(const jdec_cur_t *c, const char *key, unsigned how, long long *n, bool *found, bool *wrong)
{
    const json_t *v;
    sluice_err rc;

    *found = false;
    *wrong = false;
    if ((rc = fetch(c, key, how, &v)) != SLUICE_OK || v == NULL)
        return rc;
    if (json_is_integer(v)) {
        *n = json_integer_value(v);
        *found = true;
    } else if (c->d->mode == JDEC_LENIENT && json_is_real(v)) {
        double r = json_real_value(v);
        if (isfinite(r) && r >= (double)INT64_MIN && r < (double)INT64_MAX) {
            *n = (long long)r;
            *found = true;
        } else if (how & JDEC_REQUIRED) {
            return fail_at(c, key, how, "required");
        }
    } else if (!(how & JDEC_SOFT)) {
        *wrong = true;
    }
    return SLUICE_OK;
}

sluice_err
jdec_int(const jdec_cur_t *c, const char *key, unsigned how, int64_t min, int64_t max, int64_t *out)
{
    long long n = 0;
    bool found, wrong;
    char lo[32], hi[32];
    sluice_err rc;

    if ((rc = integer(c, key, how, &n, &found, &wrong)) != SLUICE_OK)
        return rc;
    if (found && n >= min && n <= max) {
        *out = (int64_t)n;
        return SLUICE_OK;
    }
    if (!found && !wrong)
        return SLUICE_OK;
    snprintf(lo, sizeof(lo), "%lld", (long long)min);
    snprintf(hi, sizeof(hi), "%lld", (long long)max);
    return range_fail(c, key, how, lo, hi, max == INT64_MAX, wrong, n);
}

sluice_err jdec_uint(
    const jdec_cur_t *c, const char *key, unsigned how, uint64_t min, uint64_t max, uint64_t *out)
{
    long long n = 0;
    bool found, wrong;
    char lo[32], hi[32];
    sluice_err rc;

    if ((rc = integer(c, key, how, &n, &found, &wrong)) != SLUICE_OK)
        return rc;
    if (found && n >= 0 && (uint64_t)n >= min && (uint64_t)n <= max) {
        *out = (uint64_t)n;
        return SLUICE_OK;
    }
    if (!found && !wrong)
        return SLUICE_OK;
    snprintf(lo, sizeof(lo), "%llu", (unsigned long long)min);
    snprintf(hi, sizeof(hi), "%llu", (unsigned long long)max);
    return range_fail(c, key, how, lo, hi, max == UINT64_MAX, wrong, n);
}

int64_t jdec_peek_int(const jdec_cur_t *c, const char *key, int64_t dflt)
{
    int64_t n = dflt;

    if (jdec_int(c, key, JDEC_SOFT | JDEC_SILENT, INT64_MIN, INT64_MAX, &n) != SLUICE_OK)
        return dflt;
    return n;
}

bool jdec_peek_true(const jdec_cur_t *c, const char *key)
{
    return json_is_true(jdec_value(c, key));
}

sluice_err jdec_bool(const jdec_cur_t *c, const char *key, unsigned how, bool *out)
{
    const json_t *v;
    sluice_err rc;

    if ((rc = fetch(c, key, how, &v)) != SLUICE_OK || v == NULL)
        return rc;
    if (!json_is_boolean(v))
        return (how & JDEC_SOFT) ? SLUICE_OK : type_fail(c, key, how, T_BOOL);
    *out = json_is_true(v);
    return SLUICE_OK;
}

sluice_err jdec_number(const jdec_cur_t *c, const char *key, unsigned how, double *out)
{
    const json_t *v;
    sluice_err rc;

    if ((rc = fetch(c, key, how, &v)) != SLUICE_OK || v == NULL)
        return rc;
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return (how & JDEC_SOFT) ? SLUICE_OK : type_fail(c, key, how, T_NUMBER);
    *out = json_number_value(v);
    return SLUICE_OK;
}

/* jdec_object() and jdec_array(): the cursor, then its checks. */
static sluice_err
container(const jdec_cur_t *c, const char *key, unsigned how, kind k, jdec_cur_t *out)
{
    const json_t *v;
    sluice_err rc;

    if (key != NULL)
        jdec_member(out, c, key);
    else
        copy_cursor(out, c);
    if ((rc = fetch(c, key, how, &v)) != SLUICE_OK || v == NULL) {
        out->v = NULL;
        return rc;
    }
    if (k == T_OBJECT ? json_is_object(v) : json_is_array(v))
        return SLUICE_OK;
    out->v = NULL;
    return (how & JDEC_SOFT) ? SLUICE_OK : type_fail(c, key, how, k);
}

sluice_err jdec_object(const jdec_cur_t *c, const char *key, unsigned how, jdec_cur_t *out)
{
    return container(c, key, how, T_OBJECT, out);
}

sluice_err jdec_array(const jdec_cur_t *c, const char *key, unsigned how, jdec_cur_t *out)
{
    return container(c, key, how, T_ARRAY, out);
}

sluice_err jdec_enum(const jdec_cur_t *c,
                     const char *key,
                     unsigned how,
                     const char *const *names,
                     size_t n,
                     int *out)
{
    const char *s = NULL;
    char list[REASON_MAX];
    size_t used = 0, i;
    bool quote = c->d->voice != JDEC_VOICE_LOG;
    sluice_err rc;

    if ((rc = jdec_string(c, key, how, SIZE_MAX, &s)) != SLUICE_OK || s == NULL)
        return rc;
    for (i = 0; i < n; i++) {
        if (strcmp(names[i], s) == 0) {
            *out = (int)i;
            return SLUICE_OK;
        }
    }
    /* "A, B or C" (the log), "expected \"A\", \"B\" or \"C\"" (the others) */
    list[0] = '\0';
    for (i = 0; i < n && used < sizeof(list); i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w =
            snprintf(list + used, sizeof(list) - used, quote ? "%s\"%s\"" : "%s%s", sep, names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (quote)
        return fail_at(c, key, how, "expected %s", list);
    return fail_at(c, key, how, "%s", list);
}

/* ---- members ------------------------------------------------------------- */

static json_t *mutable_json(const json_t *o)
{
    json_t *m;

    memcpy(&m, &o, sizeof(m));
    return m;
}

static bool listed(const char *const *allowed, const char *key)
{
    for (; *allowed != NULL; allowed++) {
        if (strcmp(*allowed, key) == 0)
            return true;
    }
    return false;
}

/* The allowed key clearly meant by an unknown one, or NULL. */
static const char *nearest(const char *const *allowed, const char *key)
{
    suggest_t s;

    suggest_init(&s, key);
    for (; *allowed != NULL; allowed++)
        suggest_add(&s, *allowed);
    return suggest_best(&s);
}

/* Every member is allowed: counted without walking the object. */
static bool all_known(const json_t *obj, const char *const *allowed)
{
    size_t n = 0;

    for (; *allowed != NULL; allowed++) {
        if (json_object_get(obj, *allowed) != NULL)
            n++;
    }
    return n == json_object_size(obj);
}

void *jdec_iter(const jdec_cur_t *obj)
{
    return json_object_iter(mutable_json(obj->v));
}

void *jdec_iter_next(const jdec_cur_t *obj, void *it)
{
    return json_object_iter_next(mutable_json(obj->v), it);
}

const char *jdec_iter_member(jdec_cur_t *out, const jdec_cur_t *obj, void *it)
{
    const char *key = json_object_iter_key(it);

    copy_cursor(out, obj);
    out->v = json_object_iter_value(it);
    put_key(out, key);
    return key;
}

const char *jdec_unknown_key(const jdec_cur_t *c, const char *const *allowed)
{
    const char *key;
    json_t *val;

    if (!json_is_object(c->v) || all_known(c->v, allowed))
        return NULL;
    json_object_foreach(mutable_json(c->v), key, val)
    {
        (void)val;
        if (!listed(allowed, key))
            return key;
    }
    return NULL;
}

sluice_err jdec_keys(const jdec_cur_t *c, const char *const *allowed)
{
    const char *key;
    const char *why = c->d->voice == JDEC_VOICE_EXPECT ? "unknown key" : "unknown field";
    const char *near;
    json_t *val;
    sluice_err rc = SLUICE_OK, one;

    if (c->d->mode == JDEC_LENIENT || !json_is_object(c->v) || all_known(c->v, allowed))
        return SLUICE_OK;
    json_object_foreach(mutable_json(c->v), key, val)
    {
        (void)val;
        if (listed(allowed, key))
            continue;
        near = nearest(allowed, key);
        if (near != NULL)
            one = jdec_fail(c, key, "%s (did you mean %s?)", why, near);
        else
            one = jdec_fail(c, key, "%s", why);
        if (rc == SLUICE_OK)
            rc = one;
        if (c->d->list == NULL || jdec_fatal(c->d, one))
            return one;
    }
    return rc;
}
