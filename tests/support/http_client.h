/* SPDX-License-Identifier: Apache-2.0 */
/* http_client.h - a tiny HTTP/1.1 client over plain loopback sockets for
 * the server tests (no libcurl, so the test sees exactly what was sent). */
#ifndef SLUICE_TEST_HTTP_CLIENT_H
#define SLUICE_TEST_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int status;
    char *headers; /* raw header block (lower-case search with hc_header) */
    char *body;    /* de-chunked, NUL-terminated */
    size_t body_len;
} hc_response_t;

/* One request on a new connection with `Connection: close`.  `extra` is
 * NULL or header lines, each ending in "\r\n".  Returns 0 or -1. */
int hc_request(uint16_t port,
               const char *method,
               const char *path,
               const char *extra,
               const char *body,
               size_t body_len,
               hc_response_t *out);

/* The same over a Unix stream socket. */
int hc_request_unix(const char *socket_path,
                    const char *method,
                    const char *path,
                    const char *extra,
                    const char *body,
                    size_t body_len,
                    hc_response_t *out);

/* Open a GET and read the raw response until `needle` has been seen in the
 * bytes (or timeout_ms passes); the raw bytes go to *out (caller frees).
 * Returns 0 when the needle was seen, -1 otherwise. */
int hc_stream_until(uint16_t port,
                    const char *path,
                    const char *extra,
                    const char *needle,
                    int timeout_ms,
                    char **out);

/* Send a GET and return the connected socket without reading (a reader
 * that stays open), or -1.  Caller closes it. */
int hc_open_get(uint16_t port, const char *path, const char *extra);

/* A header's value (case-insensitive name) copied into buf, or NULL. */
const char *hc_header(const hc_response_t *r, const char *name, char *buf, size_t size);

void hc_response_clear(hc_response_t *r);

#endif
