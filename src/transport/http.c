/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - the libcurl client for slurmrestd, webhook receivers and
 * another sluice serve (the CLI remote client); webhook POSTs of
 * supervise/webhooks.c use the same client API.
 *
 * The only file of sluice that includes <curl/curl.h>.  One easy handle per
 * client is reused for every request (under c->lock) so that keep-alive
 * connections are reused; a CURLSH shares DNS, TLS sessions and the
 * connection cache.  Static options are set once at creation; every request
 * sets all of its per-request options explicitly, so nothing leaks from one
 * request into the next.
 *
 * Notes:
 * - The transport classification decides whether a POST may have reached
 *   slurmrestd.  Resolve/connect failures and TLS failures happen before the
 *   request is written, so they are "not sent"; everything after connecting
 *   is "uncertain".
 * - Nothing here logs a header value; curl debug output is redacted first.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include <sluice/log.h>

#include "base/urlsafe.h"

#include "http.h"

struct http_client {
    CURL *easy;
    CURLSH *share;
    pthread_mutex_t lock;
    pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
    char *base_url;   /* what the user configured */
    char *url_prefix; /* scheme://host:port used to build request URLs */
    int exact_url;    /* url_prefix is base_url, the only URL requested */
    char *unix_path;  /* NULL unless unix: */
    http_timeout_t timeouts[HTTP_CLASS_COUNT_];
    size_t max_response;
    int debug;
    int fresh_next; /* the last exchange failed or was not 2xx: do not reuse its socket */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *arg)
{
    struct http_client *c = arg;

    (void)h;
    (void)access;
    if (data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&c->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
    struct http_client *c = arg;

    (void)h;
    if (data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&c->share_locks[data]);
}

/* The two "%s%s" in front of an error of the base URL: its name as the
 * user knows it and ": ", or nothing. */
#define NAME(o) ((o)->url_name ? (o)->url_name : ""), ((o)->url_name ? ": " : "")

/* Split and check the base URL; sets c->url_prefix and c->unix_path. */
static sluice_err parse_base(struct http_client *c, const http_opts_t *o, sluice_error_t *err)
{
    CURLU *u = NULL;
    char *scheme = NULL;
    char *host = NULL;
    char *port = NULL;
    char *path = NULL;
    sluice_err rc = SLUICE_OK;
    buf_t b = BUF_INIT;
    int https;

    if (strncmp(o->base_url, "unix:", 5) == 0) {
        if (o->base_url[5] != '/')
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "%s%sunix socket path must be absolute (unix:/path)", NAME(o));
        c->unix_path = strdup(o->base_url + 5);
        c->url_prefix = strdup("http://localhost");
        if (c->unix_path == NULL || c->url_prefix == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        return SLUICE_OK;
    }
    u = curl_url();
    if (u == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    if (curl_url_set(u, CURLUPART_URL, o->base_url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "%s%scannot parse '%s' (want https://host:port, "
                           "http://127.0.0.1:port or unix:/path)",
                           NAME(o), o->base_url);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
        port = NULL;
    if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
        path = NULL;
    https = strcasecmp(scheme, "https") == 0;
    if (!https && strcasecmp(scheme, "http") != 0) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "%s%sunsupported scheme '%s'", NAME(o), scheme);
        goto out;
    }
    if (!https && !urlsafe_host_is_loopback(host, strlen(host))) {
        if (!o->allow_insecure_http) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "%s%splain http:// to non-loopback host '%s' refused "
                               "(tokens would travel in clear text; use https://%s%s)",
                               NAME(o), host, o->insecure_name ? " or set " : "",
                               o->insecure_name ? o->insecure_name : "");
            goto out;
        }
        sluice_log(SLUICE_LOG_WARNING, "%s: tokens travel in clear text to host=%s",
                   o->insecure_name ? o->insecure_name : "plain http://", host);
    }
    if (o->exact_url) {
        /* Byte for byte what the caller checked (webhook_url.h): curl's
         * view of it served only the checks above. */
        if ((c->url_prefix = strdup(o->base_url)) == NULL)
            goto nomem;
        c->exact_url = 1;
        goto out;
    }
    if ((rc = buf_printf(&b, "%s://%s", https ? "https" : "http", host)) != SLUICE_OK)
        goto nomem;
    if (port != NULL && (rc = buf_printf(&b, ":%s", port)) != SLUICE_OK)
        goto nomem;
    if (path != NULL && strcmp(path, "/") != 0) {
        size_t n = strlen(path);
        while (n > 0 && path[n - 1] == '/')
            n--;
        if ((rc = buf_append(&b, path, n)) != SLUICE_OK)
            goto nomem;
    }
    c->url_prefix = buf_take(&b);
    if (c->url_prefix == NULL)
        goto nomem;
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
out:
    buf_free(&b);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_url_cleanup(u);
    return rc;
}

/* curl hands over whole header blocks; log them line by line, each line
 * redacted before it reaches the log. */
static int debug_cb(CURL *h, curl_infotype type, char *data, size_t size, void *arg)
{
    char line[1024];
    const char *dir;
    size_t start = 0;

    (void)h;
    (void)arg;
    if (type == CURLINFO_HEADER_OUT)
        dir = ">";
    else if (type == CURLINFO_HEADER_IN)
        dir = "<";
    else if (type == CURLINFO_TEXT)
        dir = "*";
    else
        return 0;
    while (start < size) {
        size_t end = start, n;
        while (end < size && data[end] != '\n')
            end++;
        n = end - start;
        if (n > sizeof(line) - 1)
            n = sizeof(line) - 1;
        memcpy(line, data + start, n);
        line[n] = '\0';
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n'))
            line[--n] = '\0';
        if (n > 0) {
            sluice_redact(line, sizeof(line));
            sluice_log(SLUICE_LOG_DEBUG, "curl %s %s", dir, line);
        }
        start = end + 1;
    }
    return 0;
}

#define SETOPT(h, opt, val)                                                                        \
    do {                                                                                           \
        if (curl_easy_setopt((h), (opt), (val)) != CURLE_OK) {                                     \
            rc = sluice_errorf(err, SLUICE_ETRANSPORT, "http: cannot set curl option %s", #opt);   \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

static const long default_total_ms[HTTP_CLASS_COUNT_] = {60000, 30000, 30000};

sluice_err http_client_new(http_client_t **out, const http_opts_t *opts, sluice_error_t *err)
{
    struct http_client *c = NULL;
    sluice_err rc = SLUICE_OK;
    int i;

    if (out == NULL || opts == NULL || opts->base_url == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "http: no URL given");
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return sluice_errorf(err, SLUICE_ETRANSPORT, "http: curl_global_init failed");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "http: out of memory");
    pthread_mutex_init(&c->lock, NULL);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_locks[i], NULL);
    c->base_url = strdup(opts->base_url);
    if (c->base_url == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "http: out of memory");
        goto out;
    }
    if ((rc = parse_base(c, opts, err)) != SLUICE_OK)
        goto out;
    for (i = 0; i < HTTP_CLASS_COUNT_; i++) {
        c->timeouts[i].connect_ms =
            opts->timeouts[i].connect_ms > 0 ? opts->timeouts[i].connect_ms : 5000;
        c->timeouts[i].total_ms =
            opts->timeouts[i].total_ms > 0 ? opts->timeouts[i].total_ms : default_total_ms[i];
    }
    c->max_response = opts->max_response > 0 ? opts->max_response : HTTP_DEFAULT_MAX_RESPONSE;
    c->debug = opts->debug;

    c->share = curl_share_init();
    c->easy = curl_easy_init();
    if (c->share == NULL || c->easy == NULL) {
        rc = sluice_errorf(err, SLUICE_ETRANSPORT, "http: cannot create curl handles");
        goto out;
    }
    curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);

    SETOPT(c->easy, CURLOPT_SHARE, c->share);
    SETOPT(c->easy, CURLOPT_NOSIGNAL, 1L);
    SETOPT(c->easy, CURLOPT_TCP_KEEPALIVE, 1L);
    SETOPT(c->easy, CURLOPT_FOLLOWLOCATION, 0L);
    if (c->exact_url)
        SETOPT(c->easy, CURLOPT_PATH_AS_IS, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    SETOPT(c->easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    SETOPT(c->easy, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    SETOPT(c->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_response);
    if (c->unix_path != NULL)
        SETOPT(c->easy, CURLOPT_UNIX_SOCKET_PATH, c->unix_path);
    if (opts->tls_no_verify) {
        sluice_log(SLUICE_LOG_WARNING,
                   "tls_verify=false: the slurmrestd certificate is not checked url=%s",
                   c->base_url);
        SETOPT(c->easy, CURLOPT_SSL_VERIFYPEER, 0L);
        SETOPT(c->easy, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
        SETOPT(c->easy, CURLOPT_SSL_VERIFYPEER, 1L);
        SETOPT(c->easy, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    if (opts->ca_file != NULL)
        SETOPT(c->easy, CURLOPT_CAINFO, opts->ca_file);
    if (opts->ca_path != NULL)
        SETOPT(c->easy, CURLOPT_CAPATH, opts->ca_path);
    if (opts->pinned_pubkey != NULL)
        SETOPT(c->easy, CURLOPT_PINNEDPUBLICKEY, opts->pinned_pubkey);
    if (opts->client_cert != NULL)
        SETOPT(c->easy, CURLOPT_SSLCERT, opts->client_cert);
    if (opts->client_key != NULL)
        SETOPT(c->easy, CURLOPT_SSLKEY, opts->client_key);
    if (c->debug) {
        SETOPT(c->easy, CURLOPT_DEBUGFUNCTION, debug_cb);
        SETOPT(c->easy, CURLOPT_VERBOSE, 1L);
    }
    *out = c;
    c = NULL;
out:
    http_client_free(c);
    return rc;
}

void http_client_free(http_client_t *c)
{
    int i;

    if (c == NULL)
        return;
    if (c->easy != NULL)
        curl_easy_cleanup(c->easy);
    if (c->share != NULL)
        curl_share_cleanup(c->share);
    pthread_mutex_destroy(&c->lock);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_locks[i]);
    free(c->base_url);
    free(c->url_prefix);
    free(c->unix_path);
    free(c);
}

const char *http_client_url(const http_client_t *c)
{
    return c != NULL ? c->base_url : "";
}

struct sink {
    buf_t body;
    int too_big;
    CURL *h;
    http_stream_t *stream;
    int stopped;
};

static size_t write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
    struct sink *s = arg;
    size_t n = size * nmemb;
    long status = 0;

    if (s->stream != NULL && s->stream->on_data != NULL &&
        curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status >= 200 &&
        status <= 299) {
        if (s->stream->on_data(data, n, s->stream->arg) != 0) {
            s->stopped = 1;
            return 0;
        }
        return n;
    }
    if (buf_append(&s->body, data, n) != SLUICE_OK) {
        s->too_big = 1;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    return n;
}

/* 1 when curl never reached the point of writing the request: the
 * pretransfer timer is set once the connection, TLS handshake included, is
 * ready and just before the request goes out. */
static int never_sent(CURL *h)
{
    curl_off_t pre = 0;

    return curl_easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &pre) == CURLE_OK && pre == 0;
}

static http_xfer_t classify(CURLcode cc, CURL *h)
{
    switch (cc) {
    case CURLE_OK:
        return HTTP_XFER_OK;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
        return HTTP_XFER_NOT_SENT;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        /* Also reported for an HTTP/0.9 (garbage) answer, after sending. */
        return never_sent(h) ? HTTP_XFER_NOT_SENT : HTTP_XFER_OTHER;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
        return HTTP_XFER_TLS;
    case CURLE_OPERATION_TIMEDOUT:
        /* A timeout during connect or the TLS handshake leaves no
         * pretransfer time: the request was never written.  Anything later
         * is uncertain. */
        if (never_sent(h))
            return HTTP_XFER_NOT_SENT;
        return HTTP_XFER_TIMEOUT;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return HTTP_XFER_DROPPED;
    case CURLE_FILESIZE_EXCEEDED:
        return HTTP_XFER_TOO_BIG;
    default:
        return HTTP_XFER_OTHER;
    }
}

static const char *method_name(http_method_t m)
{
    switch (m) {
    case HTTP_GET:
        return "GET";
    case HTTP_POST:
        return "POST";
    case HTTP_DELETE:
        return "DELETE";
    }
    return "GET";
}

sluice_err http_request(http_client_t *c,
                        const http_request_t *req,
                        http_response_t *resp,
                        sluice_error_t *err)
{
    return http_request_stream(c, req, NULL, resp, err);
}

sluice_err http_request_stream(http_client_t *c,
                               const http_request_t *req,
                               http_stream_t *stream,
                               http_response_t *resp,
                               sluice_error_t *err)
{
    int streaming = stream != NULL && stream->on_data != NULL;

    struct curl_slist *hdrs = NULL;
    struct curl_slist *tmp;
    struct sink sink;
    buf_t url = BUF_INIT;
    char errbuf[CURL_ERROR_SIZE];
    char msg[sizeof(errbuf) + 64];
    char accept[160];
    sluice_err rc = SLUICE_OK;
    CURLcode cc;
    CURL *h;
    long status = 0;
    size_t i;
    int locked = 0;
    const char *mname;

    memset(&sink, 0, sizeof(sink));
    buf_init(&sink.body, 0);
    if (resp != NULL) {
        resp->status = 0;
        resp->body = NULL;
        resp->body_len = 0;
        resp->xfer = HTTP_XFER_REFUSED;
    }
    if (stream != NULL)
        stream->stopped = 0;
    if (c == NULL || req == NULL || resp == NULL || req->path == NULL ||
        req->klass >= HTTP_CLASS_COUNT_)
        return sluice_errorf(err, SLUICE_EINVAL, "http: invalid request arguments");
    mname = method_name(req->method);
    if (req->body != NULL && req->query != NULL && req->query[0] != '\0')
        return sluice_errorf(err, SLUICE_EINVAL,
                             "http: %s %s has both a body and a query string "
                             "(slurmrestd rejects that)",
                             mname, req->path);
    /* "" is the base URL itself (a webhook's URL, path included). */
    if (req->path[0] != '/' && req->path[0] != '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "http: path '%s' must start with '/'", req->path);
    if (c->exact_url && (req->path[0] != '\0' || (req->query != NULL && req->query[0] != '\0')))
        return sluice_errorf(err, SLUICE_EINVAL,
                             "http: this client requests its URL only (no path '%s' or query)",
                             req->path);
    buf_init(&sink.body, c->max_response);
    errbuf[0] = '\0';

    if (buf_printf(&url, "%s%s", c->url_prefix, req->path) != SLUICE_OK ||
        (req->query != NULL && req->query[0] != '\0' &&
         buf_printf(&url, "?%s", req->query) != SLUICE_OK))
        goto nomem;
    snprintf(accept, sizeof(accept), "Accept: %s",
             stream != NULL && stream->accept != NULL ? stream->accept : "application/json");
    if ((tmp = curl_slist_append(hdrs, accept)) == NULL)
        goto nomem;
    hdrs = tmp;
    if ((tmp = curl_slist_append(hdrs, "Expect:")) == NULL)
        goto nomem;
    hdrs = tmp;
    if (req->body != NULL) {
        if ((tmp = curl_slist_append(hdrs, "Content-Type: application/json")) == NULL)
            goto nomem;
        hdrs = tmp;
    }
    for (i = 0; req->headers != NULL && req->headers[i] != NULL; i++) {
        if ((tmp = curl_slist_append(hdrs, req->headers[i])) == NULL)
            goto nomem;
        hdrs = tmp;
    }

    pthread_mutex_lock(&c->lock);
    locked = 1;
    h = c->easy;
    sink.h = h;
    sink.stream = stream;
    SETOPT(h, CURLOPT_URL, buf_str(&url));
    SETOPT(h, CURLOPT_HTTPHEADER, hdrs);
    SETOPT(h, CURLOPT_ERRORBUFFER, errbuf);
    SETOPT(h, CURLOPT_WRITEFUNCTION, write_cb);
    SETOPT(h, CURLOPT_WRITEDATA, &sink);
    SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, c->timeouts[req->klass].connect_ms);
    /* A stream lasts as long as the server keeps it open. */
    SETOPT(h, CURLOPT_TIMEOUT_MS, streaming ? 0L : c->timeouts[req->klass].total_ms);
    SETOPT(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(streaming ? 0 : c->max_response));
    SETOPT(h, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    /* slurmrestd closes the connection after a non-2xx answer
     * (slurmrestd-api.md, gotcha 11): never send the next request, a POST
     * above all, on a socket that may be half-closed.  A POST always gets a
     * fresh connection: on a reused one that turns out dead, libcurl resends
     * the request by itself, which for a submit would be a blind repeat. */
    SETOPT(h, CURLOPT_FRESH_CONNECT, (long)(c->fresh_next || req->method == HTTP_POST));
    switch (req->method) {
    case HTTP_POST:
        SETOPT(h, CURLOPT_POST, 1L);
        SETOPT(h, CURLOPT_POSTFIELDSIZE_LARGE,
               (curl_off_t)(req->body != NULL ? strlen(req->body) : 0));
        SETOPT(h, CURLOPT_POSTFIELDS, req->body != NULL ? req->body : "");
        break;
    case HTTP_DELETE:
        SETOPT(h, CURLOPT_HTTPGET, 1L);
        SETOPT(h, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    case HTTP_GET:
    default:
        SETOPT(h, CURLOPT_HTTPGET, 1L);
        break;
    }

    cc = curl_easy_perform(h);
    if (sink.stopped && cc == CURLE_WRITE_ERROR)
        cc = CURLE_OK; /* the reader had what it wanted */
    if (stream != NULL)
        stream->stopped = sink.stopped;
    resp->xfer = classify(cc, h);
    if (sink.too_big)
        resp->xfer = HTTP_XFER_TOO_BIG;
    if (cc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    c->fresh_next = cc != CURLE_OK || status < 200 || status > 299 || sink.stopped;
    /* Do not keep pointers to this call's stack and headers in the handle. */
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, (struct curl_slist *)NULL);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, (char *)NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, (void *)NULL);
    if (req->method == HTTP_POST)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, (char *)NULL);
    pthread_mutex_unlock(&c->lock);
    locked = 0;

    if (resp->xfer == HTTP_XFER_TOO_BIG) {
        rc = sluice_errorf(err, SLUICE_ETOOBIG,
                           "http: %s %s: response larger than the %zu byte limit", mname, req->path,
                           c->max_response);
        goto out;
    }
    if (cc != CURLE_OK) {
        snprintf(msg, sizeof(msg), "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
        sluice_redact(msg, sizeof(msg));
        rc = sluice_errorf(
            err, resp->xfer == HTTP_XFER_TIMEOUT ? SLUICE_ETIMEDOUT : SLUICE_ETRANSPORT,
            "http: %s %s failed (%s, %s): %s", mname, req->path, http_xfer_name(resp->xfer),
            http_xfer_maybe_sent(resp->xfer) ? "request may have been received"
                                             : "request not sent",
            msg);
        goto out;
    }
    resp->status = status;
    resp->body_len = sink.body.len;
    resp->body = buf_take(&sink.body);
    if (resp->body == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "http: out of memory");
        goto out;
    }
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "http: out of memory");
out:
    if (locked)
        pthread_mutex_unlock(&c->lock);
    buf_free(&sink.body);
    buf_free(&url);
    curl_slist_free_all(hdrs);
    return rc;
}

void http_response_free(http_response_t *resp)
{
    if (resp == NULL)
        return;
    free(resp->body);
    resp->body = NULL;
    resp->body_len = 0;
    resp->status = 0;
}

int http_xfer_maybe_sent(http_xfer_t x)
{
    switch (x) {
    case HTTP_XFER_NOT_SENT:
    case HTTP_XFER_TLS:
    case HTTP_XFER_REFUSED:
        return 0;
    default:
        return 1;
    }
}

const char *http_xfer_name(http_xfer_t x)
{
    switch (x) {
    case HTTP_XFER_OK:
        return "ok";
    case HTTP_XFER_NOT_SENT:
        return "not-sent";
    case HTTP_XFER_TLS:
        return "tls";
    case HTTP_XFER_REFUSED:
        return "refused";
    case HTTP_XFER_TIMEOUT:
        return "timeout";
    case HTTP_XFER_DROPPED:
        return "connection-dropped";
    case HTTP_XFER_TOO_BIG:
        return "too-big";
    case HTTP_XFER_OTHER:
        return "other";
    }
    return "other";
}

sluice_err http_urlencode(buf_t *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    sluice_err rc;
    char enc[3];

    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            rc = buf_append(b, s, 1);
        } else {
            enc[0] = '%';
            enc[1] = hex[ch >> 4];
            enc[2] = hex[ch & 15];
            rc = buf_append(b, enc, 3);
        }
        if (rc != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

sluice_err http_query_add(buf_t *b, const char *key, const char *value)
{
    sluice_err rc;

    if (key == NULL || key[0] == '\0')
        return SLUICE_EINVAL;
    if (b->len > 0 && (rc = buf_puts(b, "&")) != SLUICE_OK)
        return rc;
    if ((rc = http_urlencode(b, key)) != SLUICE_OK)
        return rc;
    if (value == NULL)
        return SLUICE_OK;
    if ((rc = buf_puts(b, "=")) != SLUICE_OK)
        return rc;
    return http_urlencode(b, value);
}
