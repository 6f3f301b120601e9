/* SPDX-License-Identifier: Apache-2.0 */
/* fake_slurmrestd.h - a scripted HTTP/1.1 server thread for tests.
 *
 * Listens on 127.0.0.1 port 0 (or a Unix socket), answers requests from a
 * queue of canned responses in order, and records every request.  Plain
 * POSIX sockets and one pthread; connections are served one at a time with
 * keep-alive.  Criterion forks per test, so start one inside each test.
 */
#ifndef FAKE_SLURMRESTD_H
#define FAKE_SLURMRESTD_H

#include <stddef.h>

typedef struct {
    int status;               /* HTTP status; 0 means 200 */
    const char *headers;      /* extra header lines, each ending "\r\n"; may be NULL */
    const char *body;         /* may be NULL (empty) */
    int delay_ms;             /* wait before answering */
    int close_silently;       /* close the connection without answering */
    int garbage;              /* answer with bytes that are not HTTP */
    int close_after;          /* send "Connection: close" and close after answering */
    size_t repeat_body;       /* when > 0: body is repeated this many times */
    const char *content_type; /* NULL: application/json ("text/plain": a router answer) */
} fake_response_t;

typedef struct {
    char method[16];
    char target[2048]; /* path and query */
    char *headers;     /* raw header block, lines "Name: value\r\n" */
    char *body;
    size_t body_len;
    int connection; /* 1-based index of the accepted connection */
} fake_request_t;

typedef struct fake_server fake_server_t;

/* Start a server; unix_socket != 0 listens on a Unix socket in /tmp.
 * Returns NULL on failure. */
fake_server_t *fake_start(int unix_socket);

/* Start a server on 127.0.0.1:`port` (a port the test picked, e.g. one a
 * client was refused on), with `n` responses queued before it accepts any
 * connection.  Returns NULL on failure (e.g. the port is taken). */
fake_server_t *fake_start_port(int port, const fake_response_t *script, size_t n);

/* A loopback port that nothing listens on (bound to port 0, then closed). */
int fake_free_port(void);

/* Stop the thread, close sockets, free everything.  NULL-safe. */
void fake_stop(fake_server_t *fs);

/* "http://127.0.0.1:PORT" or "unix:/tmp/..."; borrowed. */
const char *fake_url(const fake_server_t *fs);

/* Queue a response (copied). */
void fake_push(fake_server_t *fs, const fake_response_t *r);

/* Call fn(request, arg) in the server thread for every request, after it is
 * recorded and before it is answered (a fake cluster can act on a submit
 * before its answer leaves).  NULL removes the hook.  Set it before the
 * first request. */
typedef void (*fake_hook_fn)(const fake_request_t *req, void *arg);
void fake_set_hook(fake_server_t *fs, fake_hook_fn fn, void *arg);

/* Number of requests recorded and of connections accepted so far. */
size_t fake_request_count(fake_server_t *fs);
size_t fake_connection_count(fake_server_t *fs);

/* Recorded request i (borrowed; valid until fake_stop). */
const fake_request_t *fake_request(fake_server_t *fs, size_t i);

/* Value of header `name` (case-insensitive) in a recorded request, copied
 * into `out`; returns 1 when found. */
int fake_header(const fake_request_t *r, const char *name, char *out, size_t size);

#endif /* FAKE_SLURMRESTD_H */
