/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - the HTTP transport to slurmrestd (internal).
 *
 * http.c is the only file that includes <curl/curl.h>.  A client holds one
 * curl easy handle (reused under a mutex, so keep-alive works) and a share
 * object for DNS, TLS sessions and connections.  Every exchange reports a
 * transport classification so that the caller can tell whether a POST may
 * have reached the server ("No blind POST" in design.md).
 *
 * Notes:
 * - Base URLs: https://host:port, http://host:port (loopback only unless
 *   allow_insecure_http), unix:/path/to.sock (the URL host is "localhost").
 * - Header values are never logged: the curl debug output is redacted with
 *   sluice_redact() before it reaches the log, and error text is redacted
 *   too.
 */
#ifndef SLUICE_HTTP_H
#define SLUICE_HTTP_H

#include <stddef.h>

#include <sluice/error.h>

#include "base/buf.h"

#define HTTP_DEFAULT_MAX_RESPONSE ((size_t)64 * 1024 * 1024)

typedef enum {
    HTTP_GET,
    HTTP_POST,
    HTTP_DELETE,
} http_method_t;

/* Request classes; each has its own connect and total timeout. */
typedef enum {
    HTTP_CLASS_SUBMIT,
    HTTP_CLASS_QUERY,
    HTTP_CLASS_CANCEL,
    HTTP_CLASS_COUNT_
} http_class_t;

/* What happened on the wire. */
typedef enum {
    HTTP_XFER_OK = 0,   /* a complete HTTP response was received */
    HTTP_XFER_NOT_SENT, /* resolve/connect failed: the request was never sent */
    HTTP_XFER_TLS,      /* TLS handshake or verification failed: not sent */
    HTTP_XFER_REFUSED,  /* refused locally (bad URL, insecure http): not sent */
    HTTP_XFER_TIMEOUT,  /* timed out after connecting: outcome uncertain */
    HTTP_XFER_DROPPED,  /* connection dropped / no answer: outcome uncertain */
    HTTP_XFER_TOO_BIG,  /* the answer exceeded the size cap: request was received */
    HTTP_XFER_OTHER,    /* any other failure: treat as uncertain */
} http_xfer_t;

typedef struct {
    long connect_ms; /* 0: default 5000 */
    long total_ms;   /* 0: default 60000 (submit) or 30000 (query, cancel) */
} http_timeout_t;

/* Options; zero-initialise and fill what you need.  Strings are borrowed
 * for the duration of http_client_new() only. */
typedef struct {
    const char *base_url;
    /* What the user calls base_url, in front of its errors ("rest.url:
     * ..."); NULL: no name (the caller puts the name in front). */
    const char *url_name;
    /* The setting that permits plain http:// to another host, named in
     * that refusal ("rest.allow_insecure_http"); NULL: none to name. */
    const char *insecure_name;
    int allow_insecure_http; /* permit http:// to a non-loopback host (logs a warning) */
    int tls_no_verify;       /* turn TLS peer/host verification off (logs a warning) */
    const char *ca_file;
    const char *ca_path;
    const char *pinned_pubkey; /* CURLOPT_PINNEDPUBLICKEY syntax: file or "sha256//..." */
    const char *client_cert;
    const char *client_key;
    http_timeout_t timeouts[HTTP_CLASS_COUNT_];
    size_t max_response; /* 0: HTTP_DEFAULT_MAX_RESPONSE */
    int debug;           /* log curl's (redacted) debug output at SLUICE_LOG_DEBUG */
    int exact_url;       /* base_url is the whole request URL, sent byte for byte: only
                            requests with path "" and no query, and curl does not rewrite
                            the path (a webhook: what the site's prefix rule matched) */
} http_opts_t;

typedef struct {
    http_method_t method;
    http_class_t klass;
    const char *path;           /* "/slurm/v0.0.40/jobs"; appended to the base URL ("": the
                                   base URL itself, as a webhook is posted to its URL) */
    const char *query;          /* already encoded, without '?'; NULL for none */
    const char *body;           /* JSON text; NULL for none */
    const char *const *headers; /* NULL-terminated "Name: value" lines; may be NULL */
} http_request_t;

/* A streamed answer (log follow, Server-Sent Events): the bytes of a 2xx
 * answer go to on_data as they arrive instead of into resp->body (other
 * answers are still buffered, so a problem object can be read), and the
 * total timeout and the size cap are off.  on_data returns 0 to go on,
 * non-zero to stop: the exchange then ends with SLUICE_OK and `stopped`
 * set. */
typedef struct {
    int (*on_data)(const char *data, size_t len, void *arg);
    void *arg;
    const char *accept; /* Accept header value; NULL: application/json */
    int stopped;        /* out: on_data asked to stop */
} http_stream_t;

typedef struct {
    long status; /* HTTP status; 0 when no response arrived */
    char *body;  /* NUL-terminated; caller frees with http_response_free() */
    size_t body_len;
    http_xfer_t xfer; /* set on every return of http_request() */
} http_response_t;

#define HTTP_RESPONSE_INIT                                                                         \
    {                                                                                              \
        0, NULL, 0, HTTP_XFER_OK                                                                   \
    }

typedef struct http_client http_client_t;

/* Create a client.  *out receives it on success (caller frees with
 * http_client_free()).  SLUICE_EINVAL for a bad or insecure URL,
 * SLUICE_ENOMEM, SLUICE_ETRANSPORT when curl cannot be set up. */
sluice_err http_client_new(http_client_t **out, const http_opts_t *opts, sluice_error_t *err);

/* NULL-safe. */
void http_client_free(http_client_t *c);

/* The base URL the client talks to (borrowed; valid until free). */
const char *http_client_url(const http_client_t *c);

/* Perform one exchange.  Thread-safe (requests on one client are
 * serialised).  `resp` is always reset first and resp->xfer is set on every
 * return, so a failure still says whether the request may have been sent.
 * Returns SLUICE_OK when a complete response arrived, whatever its status;
 * SLUICE_EINVAL for a request with both a body and a query string;
 * SLUICE_ETOOBIG above the size cap; SLUICE_ETIMEDOUT; SLUICE_ETRANSPORT. */
sluice_err http_request(http_client_t *c,
                        const http_request_t *req,
                        http_response_t *resp,
                        sluice_error_t *err);

/* http_request() with the answer streamed to `stream` (see http_stream_t);
 * `stream` NULL is http_request(). */
sluice_err http_request_stream(http_client_t *c,
                               const http_request_t *req,
                               http_stream_t *stream,
                               http_response_t *resp,
                               sluice_error_t *err);

/* Free the body and reset the struct.  NULL-safe. */
void http_response_free(http_response_t *resp);

/* 1 when the request may have reached the server (a POST must then be
 * reconciled, never blindly repeated), 0 when it certainly did not. */
int http_xfer_maybe_sent(http_xfer_t x);

/* "ok", "not-sent", "tls", ... */
const char *http_xfer_name(http_xfer_t x);

/* Percent-encode `s` (RFC 3986 unreserved characters stay) onto `b`. */
sluice_err http_urlencode(buf_t *b, const char *s) SLUICE_WARN_UNUSED;

/* Append "key=value" to a query string in `b`, with '&' when `b` is not
 * empty.  Repeat the call for repeated keys (job_id=1&job_id=2). */
sluice_err http_query_add(buf_t *b, const char *key, const char *value) SLUICE_WARN_UNUSED;

#endif /* SLUICE_HTTP_H */
