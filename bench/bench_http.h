/* SPDX-License-Identifier: Apache-2.0 */
/* bench_http.h - what the service benchmarks share: a minimal keep-alive
 * HTTP/1.1 client for plain loopback TCP with a bearer token, and starting
 * the real `sluice serve` binary on 127.0.0.1:0.
 *
 * The client is deliberately small: one request at a time per connection,
 * answers with Content-Length only (what libmicrohttpd sends for every
 * route the benchmarks call), at most 256 KiB per answer.  It is not a
 * general HTTP client.
 */
#ifndef SLUICE_BENCH_HTTP_H
#define SLUICE_BENCH_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One keep-alive connection to 127.0.0.1:port.  Opened on first use and
 * again after the server closed it. */
typedef struct bench_conn bench_conn_t;

/* A new, unconnected connection (NULL when out of memory).  `token` is
 * borrowed and must outlive the connection; NULL sends no Authorization
 * header.  Caller frees with bench_conn_free(). */
bench_conn_t *bench_conn_new(uint16_t port, const char *token);
void bench_conn_free(bench_conn_t *c);

/* One request.  `body` (may be NULL) is sent as application/json with
 * its length.  Returns the HTTP status, or -1 on an I/O or protocol error
 * (the connection is then closed and reopened by the next call).  When
 * `answer` is not NULL it receives the answer's body (caller frees). */
int bench_conn_request(
    bench_conn_t *c, const char *method, const char *path, const char *body, char **answer);

/* Start `bin serve --listen 127.0.0.1:0 --tokens TOKENS --config CONFIG
 * --state-dir DIR [extra...]` with stderr to `log`, and wait (up to 30 s)
 * for its "(port N)" line.  `extra` is a NULL-terminated argument list (may
 * be NULL), e.g. {"--set", "submit.in_flight=4", NULL}.  Returns the pid and
 * sets *port, or -1 when it did not start (the log says why). */
pid_t bench_serve_start(const char *bin,
                        const char *config,
                        const char *dir,
                        const char *tokens,
                        const char *log,
                        const char *const *extra,
                        uint16_t *port);

/* SIGTERM, then wait for the process. */
void bench_serve_stop(pid_t pid);

#endif /* SLUICE_BENCH_HTTP_H */
