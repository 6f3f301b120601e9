/* SPDX-License-Identifier: Apache-2.0 */
/* server.c - `sluice serve` on libmicrohttpd, and the only file that
 * includes <microhttpd.h>: daemon start and stop, the request entry and its
 * limits against hostile clients, body reading, turning an answer
 * (server_answer.h) into a response, and suspending and resuming streams.
 * Everything else is plain data and lives beside it; server_int.h names
 * each file's part.
 *
 * Notes:
 * - A request is read into a req_t (server_req.h) and answered by the
 *   route table (server_routes.c); no other file sees a connection.
 * - Streams (log follow, SSE) are callback responses: when nothing is new
 *   the stream says so, this file suspends its connection, and a ticker
 *   thread resumes every waiting connection each follow_poll_ms, and at
 *   once after a commit (server_wake_streams: every event appended through
 *   the service's store handle, a launcher transition or cycle, a POST or
 *   DELETE), so no worker blocks per reader and a watcher sees an event
 *   milliseconds after its commit.
 * - Hostile clients: each listener counts its own connections, those
 *   still sending their first request head apart (server_conns.h: at most
 *   max_connections of them, each closed after head_timeout_s, and an
 *   answer without a caller closes its connection); past max_connections
 *   of the others a request gets 503 and the connection closes; a body
 *   over SLUICE_SERVER_MAX_BODY gets 413 (read and thrown away up to
 *   DRAIN_MAX) or a closed connection; a body slower than conn_timeout_s
 *   closes the connection.
 */
#define _GNU_SOURCE 1 /* strdup under -std=c11 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include <sluice/log.h>
#include <sluice/server.h>
#include <sluice/store.h>

#include "base/wipe.h"
#include "server_access.h"
#include "server_answer.h"
#include "server_conns.h"
#include "server_feed.h"
#include "server_int.h"
#include "server_req.h"
#include "server_routes.h"
#include "server_text.h"
#include "server_ticker.h"
#include "server_util.h"
#include "server_wake.h"

#define DEFAULT_CONN_TIMEOUT_S 30u
#define DEFAULT_HEAD_TIMEOUT_S 10u
#define DEFAULT_MAX_CONNECTIONS 4096u
#define DRAIN_MAX (8u * SLUICE_SERVER_MAX_BODY) /* see on_request */

/* Per-request state (MHD's con_cls). */
typedef struct {
    char *body;
    size_t len;
    int answered;          /* a refusal was queued before the body ended */
    int discard;           /* declared too large: read and thrown away, then 413 */
    struct timespec start; /* the headers were complete (body deadline) */
    /* For the access log line (on_completed). */
    unsigned status; /* the answer's status; 0 when none was queued */
    char method[8];  /* "GET", ... (cut) */
    char path[200];  /* the path, percent-decoded (cut) */
    char *route;     /* the path as routed (on_uri) */
    int started;     /* the request's first call came */
    char caller[48]; /* who sent it, or "" */
    const char *via; /* "unix", "tls" or "tcp" */
} upload_t;

/* ---- waiting streams ---------------------------------------------------- */

struct server_waiter {
    struct MHD_Connection *c;
    uint64_t key; /* answer_t.stream_key */
};

/* Suspend `c` until the next wake that concerns it (`key`: see
 * answer_t.stream_key) or the next tick.  `gen` is the ticker's round count
 * read before the stream looked for news: a round since then (news the
 * look may have missed) resumes it at once. */
static void park(sluice_server_t *s, struct MHD_Connection *c, uint64_t key, unsigned long long gen)
{
    MHD_suspend_connection(c);
    pthread_mutex_lock(&s->wait_mu);
    if (s->no_more_suspend || atomic_load(&s->round_gen) != gen) {
        MHD_resume_connection(c);
    } else {
        if (s->n_waiting == s->cap_waiting) {
            size_t cap = s->cap_waiting ? s->cap_waiting * 2 : 16;
            struct server_waiter *nw = realloc(s->waiting, cap * sizeof(*nw));
            if (nw == NULL) {
                pthread_mutex_unlock(&s->wait_mu);
                MHD_resume_connection(c);
                return;
            }
            s->waiting = nw;
            s->cap_waiting = cap;
        }
        s->waiting[s->n_waiting].c = c;
        s->waiting[s->n_waiting++].key = key;
    }
    pthread_mutex_unlock(&s->wait_mu);
}

/* With wait_mu held: resume every waiting stream. */
static void resume_locked(sluice_server_t *s)
{
    size_t i;

    for (i = 0; i < s->n_waiting; i++)
        MHD_resume_connection(s->waiting[i].c);
    s->n_waiting = 0;
}

/* With wait_mu held: resume the streams of every round (key 0) and those
 * of the launches in keys[0..n) (sorted); the others keep waiting. */
static void resume_some_locked(sluice_server_t *s, const uint64_t *keys, size_t n)
{
    size_t i, kept = 0;

    for (i = 0; i < s->n_waiting; i++) {
        uint64_t k = s->waiting[i].key;
        if (k == 0 || bsearch(&k, keys, n, sizeof(*keys), server_feed_key_cmp) != NULL)
            MHD_resume_connection(s->waiting[i].c);
        else
            s->waiting[kept++] = s->waiting[i];
    }
    s->n_waiting = kept;
}

/* s->resume_locked (server_ticker.h). */
static void resume_keys_locked(sluice_server_t *s, const uint64_t *keys, size_t n)
{
    if (keys == NULL)
        resume_locked(s);
    else
        resume_some_locked(s, keys, n);
}

static void resume_all(sluice_server_t *s)
{
    pthread_mutex_lock(&s->wait_mu);
    resume_locked(s);
    pthread_mutex_unlock(&s->wait_mu);
}

/* ---- answers ------------------------------------------------------------ */

/* A stream answer on its connection (the callback response's cls). */
typedef struct {
    sluice_server_t *s;
    struct MHD_Connection *c;
    answer_read_fn read;
    void *cls;
    void (*free_cls)(void *cls);
    uint64_t key; /* answer_t.stream_key */
} stream_t;

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    stream_t *st = cls;
    ssize_t n;

    (void)pos;
    unsigned long long gen;

    if (atomic_load(&st->s->stopping))
        return MHD_CONTENT_READER_END_OF_STREAM;
    gen = atomic_load(&st->s->round_gen);
    n = st->read(st->cls, buf, max);
    if (n == ANSWER_STREAM_END)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n == ANSWER_STREAM_ERROR)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    if (n == ANSWER_STREAM_WAIT)
        park(st->s, st->c, st->key, gen);
    return n;
}

static void stream_free(void *cls)
{
    stream_t *st = cls;

    st->free_cls(st->cls);
    free(st);
}

/* Send `a` on `c` (what it owns goes to the response, the rest is freed);
 * MHD_NO for ANSWER_NONE or when no response could be made. */
static enum MHD_Result queue_answer(sluice_server_t *s, struct MHD_Connection *c, answer_t *a)
{
    struct MHD_Response *r = NULL;
    enum MHD_Result ret;
    stream_t *st;
    size_t i;

    switch (a->kind) {
    case ANSWER_NONE:
        break;
    case ANSWER_BUFFER:
        if (a->body == NULL) {
            r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        } else if ((r = MHD_create_response_from_buffer(a->len, a->body, MHD_RESPMEM_MUST_FREE)) !=
                   NULL) {
            a->body = NULL;
        }
        break;
    case ANSWER_FILE:
        if ((r = MHD_create_response_from_fd_at_offset64(a->size, a->fd, a->offset)) != NULL)
            a->fd = -1;
        break;
    case ANSWER_STREAM:
        if ((st = calloc(1, sizeof(*st))) == NULL)
            break;
        st->s = s;
        st->c = c;
        st->read = a->read;
        st->cls = a->cls;
        st->free_cls = a->free_cls;
        st->key = a->stream_key;
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, a->block, stream_reader, st,
                                              stream_free);
        if (r == NULL)
            free(st);
        else
            a->cls = NULL;
        break;
    }
    if (r == NULL) {
        answer_clear(a);
        return MHD_NO;
    }
    for (i = 0; i < a->n_headers; i++)
        MHD_add_response_header(r, a->headers[i].name, a->headers[i].value);
    ret = MHD_queue_response(c, a->status, r);
    MHD_destroy_response(r);
    answer_clear(a);
    return ret;
}

/* MHD's unescape callback (path and query): see text_unescape(). */
static size_t unescape(void *cls, struct MHD_Connection *c, char *val)
{
    (void)cls, (void)c;
    return text_unescape(val);
}

/* The request's state, made when its target arrives (before libmicrohttpd
 * decodes it: MHD_OPTION_URI_LOG_CALLBACK), with the path to route on
 * decoded by text_unescape_path, which keeps %2F as sent: an encoded slash
 * never separates path segments. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    upload_t *up = calloc(1, sizeof(*up));

    (void)cls, (void)c;
    if (up == NULL || (up->route = strndup(uri, strcspn(uri, "?"))) == NULL) {
        free(up);
        return NULL;
    }
    text_unescape_path(up->route);
    return up;
}

/* Headers or query arguments of a request, as MHD hands them over. */
typedef struct {
    req_kv_t *kv;
    size_t n, cap;
    int failed;
} kv_list_t;

static enum MHD_Result collect(void *cls,
                               enum MHD_ValueKind kind,
                               const char *key,
                               size_t key_size,
                               const char *value,
                               size_t value_size)
{
    kv_list_t *l = cls;

    (void)kind, (void)key_size;
    if (key == NULL)
        return MHD_YES;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        req_kv_t *nk = realloc(l->kv, cap * sizeof(*nk));
        if (nk == NULL) {
            l->failed = 1;
            return MHD_NO;
        }
        l->kv = nk;
        l->cap = cap;
    }
    l->kv[l->n].key = key;
    l->kv[l->n].value = value;
    l->kv[l->n].value_len = value_size;
    l->n++;
    return MHD_YES;
}

/* The whole request as plain data, answered by the route table. */
static enum MHD_Result answer_request(const listener_t *li,
                                      struct MHD_Connection *c,
                                      const char *url,
                                      const char *method,
                                      upload_t *up)
{
    kv_list_t headers = {NULL, 0, 0, 0}, args = {NULL, 0, 0, 0};
    req_t rq;
    answer_t a;
    enum MHD_Result ret = MHD_NO;

    memset(&rq, 0, sizeof(rq));
    answer_init(&a);
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, collect, &headers);
    MHD_get_connection_values_n(c, MHD_GET_ARGUMENT_KIND, collect, &args);
#if MHD_VERSION < 0x01000000 /* it cuts values at a NUL unseen (1.0 refuses them) */
    req_nul_lengths(headers.kv, headers.n);
#endif
    if (!headers.failed && !args.failed) {
        rq.method = method;
        rq.url = up->route;
        rq.body = up->body;
        rq.len = up->len;
        rq.headers = headers.kv;
        rq.n_headers = headers.n;
        rq.args = args.kv;
        rq.n_args = args.n;
        rq.unix_socket = li->unix_socket;
        rq.tls = li->tls;
        rq.peer_fd = -1;
        if (li->unix_socket) {
            const union MHD_ConnectionInfo *ci =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
            rq.peer_fd = ci ? ci->connect_fd : -1;
        }
        routes_dispatch(li->s, &rq, &a);
        /* A POST or DELETE may have committed events (an accept, a cancel):
         * waiting streams look now instead of at the next tick. */
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
            server_wake_streams(li->s);
        up->status = a.status;
        snprintf(up->caller, sizeof(up->caller), "%s", rq.caller.name);
        /* No caller (a public route, a 401): the connection ends with the
         * answer, so only callers keep connections past their first head
         * (server_conns.h). */
        if (rq.caller.name[0] == '\0' && a.kind != ANSWER_NONE)
            answer_header(&a, "Connection", "close");
        ret = queue_answer(li->s, c, &a);
    }
    free(headers.kv);
    free(args.kv);
    return ret;
}

/* ---- hostile clients ---------------------------------------------------- */

static const char too_large_detail[] = "request bodies are limited to 1048576 bytes";

/* A problem answer that also closes the connection (its request is not
 * read to the end); `retry_after` > 0 adds Retry-After. */
static enum MHD_Result refuse(sluice_server_t *s,
                              struct MHD_Connection *c,
                              unsigned status,
                              const char *slug,
                              const char *title,
                              const char *detail,
                              unsigned retry_after)
{
    answer_t a;
    char ra[16];

    answer_init(&a);
    answer_problem(&a, status, slug, title, detail);
    if (a.kind != ANSWER_NONE) {
        answer_header(&a, "Connection", "close");
        if (retry_after > 0) {
            snprintf(ra, sizeof(ra), "%u", retry_after);
            answer_header(&a, "Retry-After", ra);
        }
    }
    return queue_answer(s, c, &a);
}

/* Each listener counts its connections, heads apart (server_conns.h). */
static void on_connection(void *cls,
                          struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    listener_t *li = cls;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        atomic_fetch_add(&li->s->open_conns, 1);
        if (ci != NULL)
            *socket_context = conns_opened(li, ci->connect_fd, li->s->o.max_connections);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        atomic_fetch_sub(&li->s->open_conns, 1);
        conns_closed(*socket_context);
        *socket_context = NULL;
    }
}

static enum MHD_Result on_request(void *cls,
                                  struct MHD_Connection *c,
                                  const char *url,
                                  const char *method,
                                  const char *version,
                                  const char *upload_data,
                                  size_t *upload_data_size,
                                  void **con_cls)
{
    listener_t *li = cls;
    sluice_server_t *s = li->s;
    upload_t *up = *con_cls;

    (void)version;
    if (up == NULL)
        return MHD_NO; /* on_uri ran out of memory */
    if (!up->started) {
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

        if (ci != NULL)
            conns_head_done(ci->socket_context);
        up->started = 1;
        clock_gettime(CLOCK_MONOTONIC, &up->start);
        snprintf(up->method, sizeof(up->method), "%s", method);
        snprintf(up->path, sizeof(up->path), "%s", up->route);
        up->via = li->unix_socket ? "unix" : (li->tls ? "tls" : "tcp");
        *con_cls = up;
        /* Past the connection limit (this listener's connections past
         * their first head): a clean 503, and the connection closes. */
        if (conns_established(li) > s->o.max_connections) {
            atomic_fetch_add(&s->refused_busy, 1);
            up->answered = 1;
            up->status = 503;
            return refuse(s, c, 503, "busy", "Too many connections",
                          "the service has too many open connections; retry shortly", 1);
        }
        /* A declared oversized body: up to DRAIN_MAX it is read and thrown
         * away so that a simple client, which sends all before it reads,
         * gets its 413 after the body; past that it is refused before any
         * of it is read.  Neither is ever buffered. */
        if (cl != NULL && server_parse_count(cl) > (long long)SLUICE_SERVER_MAX_BODY) {
            atomic_fetch_add(&s->refused_too_large, 1);
            if (server_parse_count(cl) <= (long long)DRAIN_MAX) {
                up->discard = 1;
                return MHD_YES;
            }
            up->answered = 1;
            up->status = 413;
            return refuse(s, c, 413, "too-large", "Payload too large", too_large_detail, 0);
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;

        *upload_data_size = 0;
        if (up->answered)
            return MHD_YES; /* answered early: the rest is discarded */
        if (up->discard) {
            if (server_elapsed_s(&up->start) > (double)s->o.conn_timeout_s)
                return MHD_NO;
            return MHD_YES;
        }
        /* libmicrohttpd cannot answer in the middle of a body, so the two
         * cases below close the connection without an answer. */
        if (server_elapsed_s(&up->start) > (double)s->o.conn_timeout_s) {
            /* A body trickled in slower than the limit (slowloris). */
            atomic_fetch_add(&s->body_timeouts, 1);
            sluice_log(SLUICE_LOG_INFO, "http: a request body took over %u s; connection closed",
                       s->o.conn_timeout_s);
            return MHD_NO;
        }
        if (up->len + n > SLUICE_SERVER_MAX_BODY) {
            /* Chunked (no declared length): closed as soon as it passes the limit. */
            atomic_fetch_add(&s->refused_too_large, 1);
            sluice_log(SLUICE_LOG_INFO, "http: a chunked body passed %u bytes; connection closed",
                       (unsigned)SLUICE_SERVER_MAX_BODY);
            return MHD_NO;
        }
        {
            char *nb = realloc(up->body, up->len + n + 1);
            if (nb == NULL)
                return MHD_NO;
            up->body = nb;
            memcpy(up->body + up->len, upload_data, n);
            up->len += n;
            up->body[up->len] = '\0';
        }
        return MHD_YES;
    }
    if (up->answered)
        return MHD_YES;
    if (up->discard) {
        up->answered = 1;
        up->status = 413;
        return refuse(s, c, 413, "too-large", "Payload too large", too_large_detail, 0);
    }
    atomic_fetch_add(&s->requests, 1);
    return answer_request(li, c, url, method, up);
}

/* One access log line per request, at info level, subsystem "access":
 * method, path (never the query: it may name a launch's filters, and the
 * redactor sees the line anyway), status, caller, listener, duration, and
 * how the connection ended when it was not a normal completion. */
static void access_log(const upload_t *up, enum MHD_RequestTerminationCode toe)
{
    const char *end = "";
    char method[4 * sizeof(up->method)], path[4 * sizeof(up->path)];

    if (!sluice_log_enabled(SLUICE_LOG_INFO) || up->method[0] == '\0')
        return;
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        end = toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED   ? " (timed out)"
              : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT    ? " (client closed)"
              : toe == MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN ? " (service stopping)"
                                                              : " (closed on error)";
    /* The method and the path come from the client: no raw control byte
     * reaches the log. */
    sluice_log_from("access", SLUICE_LOG_INFO, "%s %s %u caller=%s via=%s %.1f ms%s",
                    text_escape(up->method, method, sizeof(method)),
                    text_escape(up->path, path, sizeof(path)), up->status,
                    up->caller[0] ? up->caller : "-", up->via,
                    server_elapsed_s(&up->start) * 1000.0, end);
}

static void on_completed(void *cls,
                         struct MHD_Connection *c,
                         void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    upload_t *up = *con_cls;

    (void)cls, (void)c;
    if (up) {
        access_log(up, toe);
        wipe(up->body, up->len);
        free(up->body);
        free(up->route);
        free(up);
        *con_cls = NULL;
    }
}

/* ---- lifecycle ---------------------------------------------------------- */

/* GnuTLS priorities of the TLS listener: TLS 1.3 and 1.2 only, AEAD
 * ciphers with ephemeral key exchange. */
#define TLS_PRIORITIES                                                                             \
    "SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:"   \
    "+AES-128-GCM:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA"

/* A daemon of listener `li` on the listening socket `fd` (TLS when
 * li->tls), or NULL.  Its connection limit leaves max_connections past
 * their first head, as many heads (server_conns.h) and the spare. */
static struct MHD_Daemon *start_daemon(sluice_server_t *s, listener_t *li, int fd, unsigned flags)
{
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert_pem},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, s->key_pem},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES},
        {MHD_OPTION_END, 0, NULL},
    };

    return MHD_start_daemon(
        flags | (li->tls ? MHD_USE_TLS : 0), 0, NULL, NULL, on_request, li,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, s->o.threads,
        MHD_OPTION_CONNECTION_TIMEOUT, s->o.conn_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)(128 * 1024), MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, li, MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
        MHD_OPTION_CONNECTION_LIMIT, 2 * s->o.max_connections + SLUICE_SERVER_CONN_SPARE,
        MHD_OPTION_EXTERNAL_LOGGER, server_mhd_log, s, MHD_OPTION_URI_LOG_CALLBACK, on_uri, li,
        MHD_OPTION_ARRAY, li->tls ? tls : tls + sizeof(tls) / sizeof(tls[0]) - 1, MHD_OPTION_END);
}

sluice_err
sluice_server_new(sluice_server_t **out, const sluice_server_opts_t *opts, sluice_error_t *err)
{
    sluice_server_t *s = NULL;
    struct sockaddr_storage ss;
    /* epoll (or poll), never select: descriptors past 1024 must work. */
    unsigned flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME |
        (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL);
    int v6 = 0, ufd = -1, tfd = -1;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || (rc = server_check_opts(opts, err)) != SLUICE_OK)
        return out == NULL ? sluice_errorf(err, SLUICE_EINVAL, "server: no out pointer") : rc;
    if (opts->tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return sluice_errorf(err, SLUICE_EUNSUPPORTED,
                             "server: this libmicrohttpd was built without TLS (GnuTLS); install "
                             "Debian's libmicrohttpd12 or serve on loopback or the Unix socket");
    if (opts->listen && (rc = server_parse_listen(opts->listen, opts->tls_cert != NULL, &ss, &v6,
                                                  err)) != SLUICE_OK)
        return rc;
    if ((s = calloc(1, sizeof(*s))) == NULL ||
        (opts->n_clusters > 0 && (s->cmu = calloc(opts->n_clusters, sizeof(*s->cmu))) == NULL)) {
        free(s);
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    }
    s->o = *opts;
    if (s->o.threads == 0)
        s->o.threads = 4;
    if (s->o.follow_poll_ms == 0)
        s->o.follow_poll_ms = 250;
    if (s->o.socket_mode == 0)
        s->o.socket_mode = 0660;
    if (s->o.conn_timeout_s == 0)
        s->o.conn_timeout_s = DEFAULT_CONN_TIMEOUT_S;
    if (s->o.max_connections == 0)
        s->o.max_connections = DEFAULT_MAX_CONNECTIONS;
    if (s->o.head_timeout_s == 0)
        s->o.head_timeout_s = DEFAULT_HEAD_TIMEOUT_S;
    s->tcp_l.s = s;
    s->unix_l.s = s;
    pthread_mutex_init(&s->tcp_l.conn_mu, NULL);
    pthread_mutex_init(&s->unix_l.conn_mu, NULL);
    s->unix_l.unix_socket = 1;
    s->tcp_l.tls = opts->tls_cert != NULL;
    pthread_mutex_init(&s->mu, NULL);
    for (size_t i = 1; i < s->o.n_clusters; i++)
        pthread_mutex_init(&s->cmu[i], NULL);
    pthread_mutex_init(&s->prune_mu, NULL);
    pthread_mutex_init(&s->tenant_mu, NULL);
    pthread_mutex_init(&s->rmu, NULL);
    pthread_mutex_init(&s->vmu, NULL);
    pthread_mutex_init(&s->lookmu, NULL);
    atomic_init(&s->views_dirty, 1);
    clock_gettime(CLOCK_MONOTONIC, &s->started);
    pthread_mutex_init(&s->wait_mu, NULL);
    {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->wake_cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    atomic_init(&s->round_gen, 0);
    atomic_init(&s->stopping, 0);
    atomic_init(&s->transitions, 0);
    atomic_init(&s->requests, 0);
    atomic_init(&s->pruned_logs, 0);
    if (opts->tls_cert &&
        ((rc = server_read_pem(opts->tls_cert, 0, &s->cert_pem, &s->cert_len, err)) != SLUICE_OK ||
         (rc = server_read_pem(opts->tls_key, 1, &s->key_pem, &s->key_len, err)) != SLUICE_OK))
        goto out;
    if ((rc = sluice_store_reopen(&s->rstore, opts->store, err)) != SLUICE_OK ||
        (rc = sluice_store_last_gseq(s->rstore, &s->seen_gseq, err)) != SLUICE_OK)
        goto out;
    if ((s->feed = server_feed_new(s->seen_gseq, 0, 0)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    if ((opts->listen || opts->tokens_file) &&
        (rc = server_load_tokens(s, opts->tokens_file, err)) != SLUICE_OK)
        goto out;
    if (opts->listen) {
        if ((tfd = server_tcp_listen(&ss, v6, opts->listen, err)) < 0) {
            rc = err ? err->code : SLUICE_ETRANSPORT;
            goto out;
        }
        s->starting = 1;
        s->mhd_msg[0] = '\0';
        s->d = start_daemon(s, &s->tcp_l, tfd, flags | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0));
        s->starting = 0;
        if (s->d == NULL) {
            close(tfd);
            if (s->cert_pem)
                rc = sluice_errorf(err, SLUICE_ECONFIG,
                                   "cannot serve TLS on %s with certificate %s and key %s: %s%s"
                                   "GnuTLS refused them (does the key belong to the certificate? "
                                   "are both PEM?)",
                                   opts->listen, opts->tls_cert, opts->tls_key, s->mhd_msg,
                                   s->mhd_msg[0] ? "; " : "");
            else
                rc = sluice_errorf(err, SLUICE_ETRANSPORT, "cannot serve on %s%s%s", opts->listen,
                                   s->mhd_msg[0] ? ": " : "", s->mhd_msg);
            goto out;
        }
        s->port = server_bound_port(tfd);
    }
    if (opts->socket_path) {
        if ((ufd = server_unix_listen(opts->socket_path, s->o.socket_mode, opts->socket_group,
                                      err)) < 0) {
            rc = err ? err->code : SLUICE_ETRANSPORT;
            goto out;
        }
        if ((s->socket_path = strdup(opts->socket_path)) == NULL) {
            close(ufd);
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        s->ud = start_daemon(s, &s->unix_l, ufd, flags);
        if (s->ud == NULL) {
            close(ufd);
            rc = sluice_errorf(err, SLUICE_ETRANSPORT, "cannot serve on %s", opts->socket_path);
            goto out;
        }
    }
    s->resume_locked = resume_keys_locked;
    if (pthread_create(&s->ticker, NULL, server_ticker_main, s) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "cannot start the stream ticker");
        goto out;
    }
    s->ticker_started = 1;
    sluice_store_on_commit(s->o.store, server_wake_on_commit, s);
    *out = s;
    s = NULL;
out:
    sluice_server_free(s);
    return rc;
}

void sluice_server_free(sluice_server_t *s)
{
    size_t i;

    if (s == NULL)
        return;
    atomic_store(&s->stopping, 1);
    if (s->ticker_started) {
        pthread_mutex_lock(&s->wait_mu);
        pthread_cond_signal(&s->wake_cv);
        pthread_mutex_unlock(&s->wait_mu);
        pthread_join(s->ticker, NULL);
    }
    pthread_mutex_lock(&s->wait_mu);
    s->no_more_suspend = 1;
    pthread_mutex_unlock(&s->wait_mu);
    resume_all(s);
    if (s->d || s->ud)
        server_sleep_ms(20); /* let resumed streams see `stopping` and end */
    if (s->d)
        MHD_stop_daemon(s->d);
    if (s->ud)
        MHD_stop_daemon(s->ud);
    if (s->ticker_started) /* no handler commits any more (the launcher is stopped) */
        sluice_store_on_commit(s->o.store, NULL, NULL);
    if (s->socket_path) {
        unlink(s->socket_path);
        free(s->socket_path);
    }
    server_access_free(s);
    pthread_mutex_destroy(&s->prune_mu);
    pthread_mutex_destroy(&s->tenant_mu);
    free(s->waiting);
    server_feed_free(s->feed);
    sluice_store_close(s->rstore);
    pthread_mutex_destroy(&s->rmu);
    pthread_mutex_destroy(&s->vmu);
    pthread_mutex_destroy(&s->lookmu);
    for (i = 0; i < VIEW_SLOTS; i++)
        free(s->views[i].text);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->tcp_l.conn_mu);
    pthread_mutex_destroy(&s->unix_l.conn_mu);
    for (i = 1; s->cmu != NULL && i < s->o.n_clusters; i++)
        pthread_mutex_destroy(&s->cmu[i]);
    free(s->cmu);
    pthread_cond_destroy(&s->wake_cv);
    pthread_mutex_destroy(&s->wait_mu);
    free(s);
}

uint16_t sluice_server_port(const sluice_server_t *s)
{
    return s ? s->port : 0;
}
