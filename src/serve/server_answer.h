/* SPDX-License-Identifier: Apache-2.0 */
/* server_answer.h - an HTTP answer of `sluice serve` as plain data (not
 * installed): status, headers and a body that is a buffer, a file range or
 * a stream.  Handlers build one; server.c alone turns it into a
 * libmicrohttpd response.
 */
#ifndef SLUICE_SERVER_ANSWER_H
#define SLUICE_SERVER_ANSWER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include <sluice/error.h>

#define ANSWER_MAX_HEADERS 8 /* the status page's assets send 7 */
#define ANSWER_HEADER_MAX                                                                          \
    256 /* longest header value + 1: the CSP of /ui (Location: 13 + a 128-byte id fits too) */

/* What a stream's read function returns besides a byte count (> 0). */
#define ANSWER_STREAM_WAIT 0     /* nothing new: wait for the ticker */
#define ANSWER_STREAM_END (-1)   /* the stream is over */
#define ANSWER_STREAM_ERROR (-2) /* the stream failed: the connection closes */

/* Fill buf[0..max) with the stream's next bytes (see ANSWER_STREAM_*). */
typedef ssize_t (*answer_read_fn)(void *cls, char *buf, size_t max);

typedef enum {
    ANSWER_NONE,   /* no answer: the connection closes without one */
    ANSWER_BUFFER, /* body[0..len) (body NULL: empty) */
    ANSWER_FILE,   /* size bytes of fd from offset */
    ANSWER_STREAM, /* read(cls, ...) until it ends, in blocks of `block` */
} answer_kind_t;

typedef struct {
    const char *name; /* static */
    char value[ANSWER_HEADER_MAX];
} answer_header_t;

typedef struct {
    unsigned status;
    answer_kind_t kind;
    char *body; /* owned (malloc) */
    size_t len;
    int fd; /* owned */
    uint64_t offset, size;
    answer_read_fn read;
    void *cls; /* owned: freed with free_cls */
    void (*free_cls)(void *cls);
    size_t block;
    /* A stream that only wants the events of one launch: its
     * server_feed_key(), so that a round wakes it only when that launch
     * has news (and at every tick); 0: every round. */
    uint64_t stream_key;
    answer_header_t headers[ANSWER_MAX_HEADERS]; /* sent in this order */
    size_t n_headers;
} answer_t;

/* An empty answer (ANSWER_NONE); call before any other function below. */
void answer_init(answer_t *a);
/* Release what `a` owns and make it ANSWER_NONE again.  NULL-safe. */
void answer_clear(answer_t *a);
/* Add a header (name static; value copied, cut at ANSWER_HEADER_MAX - 1);
 * past ANSWER_MAX_HEADERS the header is dropped. */
void answer_header(answer_t *a, const char *name, const char *value);

/* `text` (steals; NULL: ANSWER_NONE) with Content-Type `ctype` and
 * Cache-Control: no-store. */
void answer_text(answer_t *a, unsigned status, const char *ctype, char *text);
/* `j` (steals) as compact JSON with sorted keys, as answer_text(). */
void answer_json(answer_t *a, unsigned status, json_t *j);
/* A file body: `size` bytes of `fd` (steals) from `offset`; no headers. */
void answer_file(answer_t *a, unsigned status, int fd, uint64_t offset, uint64_t size);
/* An empty body; no headers. */
void answer_empty(answer_t *a, unsigned status);
/* A stream body read in blocks of `block` bytes; `cls` is stolen and freed
 * with free_cls when the stream ends (or now, if it is never sent). */
void answer_stream(answer_t *a,
                   unsigned status,
                   size_t block,
                   answer_read_fn read,
                   void *cls,
                   void (*free_cls)(void *cls));

/* An application/problem+json answer {type, title, status, detail[, field]}
 * (detail NULL: the title); `allow` adds Allow, and a 401 adds
 * WWW-Authenticate: Bearer. */
void answer_problem_ex(answer_t *a,
                       unsigned status,
                       const char *slug,
                       const char *title,
                       const char *detail,
                       const char *field,
                       const char *allow);
/* answer_problem_ex() with the members of `more` (taken; may be NULL) added
 * to the problem object (RFC 9457 extension members). */
void answer_problem_more(answer_t *a,
                         unsigned status,
                         const char *slug,
                         const char *title,
                         const char *detail,
                         const char *field,
                         const char *allow,
                         json_t *more);
void answer_problem(
    answer_t *a, unsigned status, const char *slug, const char *title, const char *detail);
/* The problem answer for a sluice error: 404 not found, 409 conflict or
 * wrong state, 422 an invalid request (answer_invalid()), else 500. */
void answer_error(answer_t *a, const sluice_error_t *err);
/* answer_error() whose 422 lists `fields` (borrowed; may be NULL). */
void answer_error_fields(answer_t *a, const sluice_error_t *err, const sluice_errlist_t *fields);
/* 422 invalid-request: detail err->text; `errors` [{path, reason}] every
 * error of `fields` (borrowed), or when it is NULL or empty the one that
 * err->text names ("<path>: <reason>"; path "" when it names none);
 * `field` the first error's path (left out when ""). */
void answer_invalid(answer_t *a, const sluice_error_t *err, const sluice_errlist_t *fields);

#endif /* SLUICE_SERVER_ANSWER_H */
