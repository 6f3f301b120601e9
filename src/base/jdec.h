/* SPDX-License-Identifier: Apache-2.0 */
/* jdec.h - the one path-aware JSON decoder (internal): a cursor that knows
 * where it stands in a document ("pools[1].gpus_per_node",
 * "meta.plugin.name", "jobs[0].job_resources.nodes") and typed getters that
 * name that path in every error they write.
 *
 * A decoder (jdec_t) says how a document is read and where errors go; a
 * cursor (jdec_cur_t) is one value of it and its path.  A getter reads the
 * member `key` of a cursor (key NULL: the cursor's own value):
 *
 *     jdec_t d;
 *     jdec_cur_t root, jobs, job;
 *     size_t i;
 *
 *     jdec_init(&d, JDEC_LENIENT, JDEC_VOICE_EXPECT, SLUICE_EPROTO, err, NULL);
 *     jdec_root(&root, &d, resp, "");
 *     if ((rc = jdec_array(&root, "jobs", 0, &jobs)) != SLUICE_OK)
 *         return rc;                          // "jobs: expected an array"
 *     JDEC_FOREACH(&jobs, i, job) {
 *         if ((rc = jdec_strdup(&job, "name", 0, SIZE_MAX, &name)) != SLUICE_OK)
 *             return rc;                      // "jobs[3].name: expected a string"
 *     }
 *
 * Errors: one text "<path>: <reason>" (the reason alone at the root of an
 * unnamed document) with the decoder's code, in the caller-owned
 * sluice_error_t.  Without a list the first error is the answer and the
 * caller returns it.  With a sluice_errlist_t every error is also appended
 * there and the caller goes on (jdec_fatal() says when it must stop); the
 * error struct keeps the first.  Out of memory is SLUICE_ENOMEM,
 * "<path>: out of memory", and always replaces what the struct held.
 *
 * Modes:
 * - JDEC_STRICT (requests, sluice's own logs and renders): null is a value
 *   of its own type (a wrong type) unless a getter is given JDEC_NULLABLE;
 *   strings may not hold a NUL byte; unknown members are refused by
 *   jdec_keys().
 * - JDEC_LENIENT (answers of slurmrestd): null is absent; a string is read
 *   up to a NUL byte; an integer may come as a real (its integral part; a
 *   non-finite one is absent); jdec_keys() accepts anything.  A member of
 *   another type is still an error unless the getter is given JDEC_SOFT.
 *
 * Voices: the error texts of the decoders that predate this file are kept
 * byte for byte, and they speak three ways.  JDEC_VOICE_EXPECT ("expected a
 * string", "expected an integer in 0..9", "unknown key": slurmrestd
 * answers, stored job descriptions), JDEC_VOICE_REQUEST ("expected true or
 * false", "expected an integer between 1 and 9 (got 12)", "unknown field":
 * launch requests) and JDEC_VOICE_LOG ("must be a string", "out of range
 * [1, 9]", "longer than 31 bytes or has NUL": the event log).  A reason no
 * getter has is written with jdec_fail().
 *
 * Paths: a cursor holds its path in a fixed buffer (no allocation); past
 * JDEC_PATH_MAX - 1 bytes it ends in "...".  A key taken into a path is cut
 * to JDEC_KEY_ECHO bytes ("..." again) with control bytes shown as '?', so
 * a hostile document cannot forge a log line through a key.
 *
 * Every cursor belongs to a decoder (jdec_root() takes one even when the
 * cursor is only walked for its paths and values).
 *
 * Ownership: cursors borrow the document (valid as long as it is); strings
 * from jdec_string() are borrowed from it, jdec_strdup()'s are new (caller
 * frees with free()).  A getter sets *out only on success with a value;
 * an absent optional member leaves *out as it was (the caller's default).
 * Not thread-safe per decoder; decoders share nothing.
 */
#ifndef SLUICE_JDEC_H
#define SLUICE_JDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>

/* A path with its NUL; the errlist's path field has the same size. */
#define JDEC_PATH_MAX SLUICE_FIELD_PATH_MAX
/* A key from the document put in a path: at most this many bytes with NUL. */
#define JDEC_KEY_ECHO 72

typedef enum {
    JDEC_STRICT = 0,
    JDEC_LENIENT = 1,
} jdec_mode;

typedef enum {
    JDEC_VOICE_EXPECT,
    JDEC_VOICE_REQUEST,
    JDEC_VOICE_LOG,
} jdec_voice;

/* Per-call flags (`how`), or-ed. */
#define JDEC_REQUIRED 0x01u /* absent is an error: "required" */
#define JDEC_NULLABLE 0x02u /* null is absent (always so in lenient mode) */
#define JDEC_NONEMPTY 0x04u /* a string: "" is an error: "must not be empty" */
#define JDEC_SOFT 0x08u     /* a value of another type is absent, no error */
#define JDEC_SILENT 0x10u   /* note nothing, return the code: the caller words it */

typedef struct {
    jdec_mode mode;
    jdec_voice voice;
    sluice_err code;        /* the code of a field error (EINVAL, EPROTO) */
    sluice_error_t *err;    /* the first error; NULL allowed */
    sluice_errlist_t *list; /* NULL: the first error ends the decode */
    size_t n_errors;        /* field errors noted so far */
    bool oom;               /* out of memory: the decode must stop */
} jdec_t;

typedef struct {
    jdec_t *d;
    const json_t *v; /* borrowed; NULL: absent */
    size_t len;      /* strlen(path) */
    bool cut;        /* the path ends in "..." and takes nothing more */
    char path[JDEC_PATH_MAX];
} jdec_cur_t;

void jdec_init(jdec_t *d,
               jdec_mode mode,
               jdec_voice voice,
               sluice_err code,
               sluice_error_t *err,
               sluice_errlist_t *list);

/* A cursor on `v` (NULL: absent) named `path` ("" for a document whose
 * members are named bare: "jobs[0]"; cut like any path). */
void jdec_root(jdec_cur_t *out, jdec_t *d, const json_t *v, const char *path);
/* The cursor of c.key and of c[i] (v NULL when c is not an object or an
 * array, or has no such member or item). */
void jdec_member(jdec_cur_t *out, const jdec_cur_t *c, const char *key);
void jdec_item(jdec_cur_t *out, const jdec_cur_t *c, size_t i);

/* The member as it is (key NULL: the cursor's value), NULL when absent.
 * Borrowed reference. */
const json_t *jdec_value(const jdec_cur_t *c, const char *key);
/* The member is there (in lenient mode: and is not null). */
bool jdec_present(const jdec_cur_t *c, const char *key);
/* The items of an array cursor; 0 for anything else. */
size_t jdec_len(const jdec_cur_t *c);
/* The members of an object cursor; 0 for anything else. */
size_t jdec_members(const jdec_cur_t *c);
/* A string member, or NULL when absent or of another type: never an
 * error.  Borrowed. */
const char *jdec_peek_string(const jdec_cur_t *c, const char *key);
/* The same, `dflt` when absent or of another type. */
const char *jdec_peek_string_or(const jdec_cur_t *c, const char *key, const char *dflt);
/* An integer member (in lenient mode also a real, as jdec_int() reads
 * one), or `dflt` when absent or of another type: never an error. */
int64_t jdec_peek_int(const jdec_cur_t *c, const char *key, int64_t dflt);
/* The member is true: never an error. */
bool jdec_peek_true(const jdec_cur_t *c, const char *key);

/* A cursor on a document that is shown rather than checked (what the CLI
 * prints of an answer of the service): its decoder `d` is lenient and
 * keeps no error; read it with the jdec_peek_*() getters. */
void jdec_peek_root(jdec_t *d, jdec_cur_t *out, const json_t *v);

/* ---- typed getters: SLUICE_OK, the decoder's code, or SLUICE_ENOMEM ---- */

/* A string of at most `max` bytes (SIZE_MAX: any).  Borrowed. */
sluice_err
jdec_string(const jdec_cur_t *c, const char *key, unsigned how, size_t max, const char **out);
/* The same, copied (caller frees with free()). */
sluice_err jdec_strdup(const jdec_cur_t *c, const char *key, unsigned how, size_t max, char **out);
/* An integer in [min, max]. */
sluice_err jdec_int(
    const jdec_cur_t *c, const char *key, unsigned how, int64_t min, int64_t max, int64_t *out);
/* A non-negative integer in [min, max]. */
sluice_err jdec_uint(
    const jdec_cur_t *c, const char *key, unsigned how, uint64_t min, uint64_t max, uint64_t *out);
sluice_err jdec_bool(const jdec_cur_t *c, const char *key, unsigned how, bool *out);
/* An integer or a real, finite. */
sluice_err jdec_number(const jdec_cur_t *c, const char *key, unsigned how, double *out);
/* An object or an array: *out is its cursor, also when it is absent or
 * refused (then with v NULL), so a walk that goes on reads nothing. */
sluice_err jdec_object(const jdec_cur_t *c, const char *key, unsigned how, jdec_cur_t *out);
sluice_err jdec_array(const jdec_cur_t *c, const char *key, unsigned how, jdec_cur_t *out);
/* A string that is one of names[0..n): *out is its index. */
sluice_err jdec_enum(const jdec_cur_t *c,
                     const char *key,
                     unsigned how,
                     const char *const *names,
                     size_t n,
                     int *out);

/* Every member of the object c is in the NULL-terminated `allowed`; each
 * other one is "<path>.<key>: unknown field" (one, or all with a list),
 * followed by " (did you mean <allowed key>?)" when one allowed key is
 * clearly meant (base/suggest.h).
 * Nothing in lenient mode or when c is not an object. */
sluice_err jdec_keys(const jdec_cur_t *c, const char *const *allowed);
/* The first member of c not in `allowed`, or NULL.  Borrowed. */
const char *jdec_unknown_key(const jdec_cur_t *c, const char *const *allowed);

/* Note the error "<path of c.key>: <reason>" (key NULL: c's own path) and
 * return the decoder's code (SLUICE_ENOMEM when the list could not take
 * it). */
sluice_err jdec_fail(const jdec_cur_t *c, const char *key, const char *fmt, ...)
    SLUICE_PRINTF(3, 4);
/* The same at a path given as text. */
sluice_err jdec_note(jdec_t *d, const char *path, const char *fmt, ...) SLUICE_PRINTF(3, 4);
/* Out of memory at `path`: SLUICE_ENOMEM. */
sluice_err jdec_oom(jdec_t *d, const char *path);
/* The decode must stop: out of memory, or an error that is not a field's. */
bool jdec_fatal(const jdec_t *d, sluice_err rc);

/* Every item of the array cursor `arr`: `i` a size_t, `item` a jdec_cur_t. */
#define JDEC_FOREACH(arr, i, item)                                                                 \
    for ((i) = 0; (i) < jdec_len(arr) && (jdec_item(&(item), (arr), (i)), true); (i)++)

/* Member iteration in document order (jansson's): jdec_iter() is NULL for
 * anything but a non-empty object; jdec_iter_member() makes `out` the
 * member's cursor and returns its key (borrowed). */
void *jdec_iter(const jdec_cur_t *obj);
void *jdec_iter_next(const jdec_cur_t *obj, void *it);
const char *jdec_iter_member(jdec_cur_t *out, const jdec_cur_t *obj, void *it);

/* Every member of the object cursor `obj`: `it` a void *, `key` a const
 * char *, `item` a jdec_cur_t. */
#define JDEC_FOREACH_MEMBER(obj, it, key, item)                                                    \
    for ((it) = jdec_iter(obj); (it) != NULL && ((key) = jdec_iter_member(&(item), (obj), (it)));  \
         (it) = jdec_iter_next((obj), (it)))

#endif /* SLUICE_JDEC_H */
