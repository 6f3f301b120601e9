/* SPDX-License-Identifier: Apache-2.0 */
/* server.c - the HTTP API of `sluice serve` on libmicrohttpd (the only file
 * that includes <microhttpd.h>): daemon start and stop, the request entry
 * and its limits against hostile clients, routing, the handlers and their
 * responses, streams, and the launcher loop.  What calls no libmicrohttpd
 * lives beside it (server_int.h names each file's part): access and
 * sockets in server_access.c, the metrics text in server_metrics.c,
 * retention in server_retention.c, the GET read cache in server_cache.c.
 *
 * Notes:
 * - One mutex (`mu`) serialises the launcher and the store between the
 *   launcher's cycles and every request handler.
 * - Streams (log follow, SSE) are callback responses: when nothing is new
 *   the callback suspends its connection and a ticker thread resumes every
 *   waiting connection each follow_poll_ms, so no worker blocks per reader.
 * - Files are read in chunks at an offset; nothing reads a whole log.
 */
#define _GNU_SOURCE 1 /* pread, nanosleep, strdup under -std=c11 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include <sluice/fsm.h>
#include <sluice/launch.h>
#include <sluice/launch_view.h>
#include <sluice/log.h>
#include <sluice/ops.h>
#include <sluice/server.h>

#include "base/marker.h"
#include "server_int.h"

#define SSE_BATCH 100
#define DEFAULT_CONN_TIMEOUT_S 30u
#define DEFAULT_MAX_CONNECTIONS 4096u
#define DRAIN_MAX (8u * SLUICE_SERVER_MAX_BODY) /* see on_request */

/* Per-request state (MHD's con_cls). */
typedef struct {
    char *body;
    size_t len;
    int answered;          /* a refusal was queued before the body ended */
    int discard;           /* declared too large: read and thrown away, then 413 */
    struct timespec start; /* the headers were complete (body deadline) */
} req_t;

/* ---- small helpers ------------------------------------------------------ */

void server_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

double server_elapsed_s(const struct timespec *t0)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static enum MHD_Result
queue_text(struct MHD_Connection *c, unsigned status, const char *ctype, char *text /* steals */)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    enum MHD_Result ret;

    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result queue_json(struct MHD_Connection *c, unsigned status, json_t *j /* steals */)
{
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    json_decref(j);
    if (text == NULL)
        return MHD_NO;
    return queue_text(c, status, "application/json", text);
}

static enum MHD_Result problem_ex(struct MHD_Connection *c,
                                  unsigned status,
                                  const char *slug,
                                  const char *title,
                                  const char *detail,
                                  const char *field,
                                  const char *allow)
{
    json_t *j = json_pack("{s:s+ s:s s:i s:s}", "type", "urn:sluice:problem:", slug, "title", title,
                          "status", (int)status, "detail", detail ? detail : title);
    char *text;
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (j && field)
        json_object_set_new(j, "field", json_string(field));
    text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(j);
    if (text == NULL)
        return MHD_NO;
    r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/problem+json");
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result problem(struct MHD_Connection *c,
                               unsigned status,
                               const char *slug,
                               const char *title,
                               const char *detail)
{
    return problem_ex(c, status, slug, title, detail, NULL, NULL);
}

static enum MHD_Result problem_err(struct MHD_Connection *c, const sluice_error_t *err)
{
    switch (err->code) {
    case SLUICE_ENOTFOUND:
        return problem(c, 404, "not-found", "Not found", err->text);
    case SLUICE_ECONFLICT:
        return problem(c, 409, "conflict", "Conflict", err->text);
    case SLUICE_EINVAL:
    case SLUICE_ETOOBIG:
    case SLUICE_ECONFIG: {
        /* The parser's messages start with the JSON path: "<path>: <why>". */
        char field[160];
        size_t n = strcspn(err->text, ": ");
        int has_path = n > 0 && n < sizeof(field) && strncmp(err->text + n, ": ", 2) == 0;
        if (has_path) {
            memcpy(field, err->text, n);
            field[n] = '\0';
        }
        return problem_ex(c, 422, "invalid-request", "Invalid launch request", err->text,
                          has_path ? field : NULL, NULL);
    }
    case SLUICE_ESTATE:
        return problem(c, 409, "wrong-state", "Not allowed in the current state", err->text);
    default:
        return problem(c, 500, "internal", "Internal error", err->text);
    }
}

static const char *query(struct MHD_Connection *c, const char *key)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, key);
}

static int query_true(struct MHD_Connection *c, const char *key)
{
    const char *v = query(c, key);
    return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

long long server_parse_count(const char *s)
{
    long long v = 0;

    if (s == NULL || *s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

int server_valid_id(const char *id, size_t len)
{
    /* The launch_id rule is base/marker.c's (issue 12); "." and ".." (and
     * other dot names of 2 bytes) never name a launch in a URL or in the
     * artifacts directory. */
    return marker_launch_id_ok(id, len) && !(len <= 2 && id[0] == '.');
}

/* Length of the valid UTF-8 prefix of s[0..len) (len when all is valid).
 * Overlong forms, surrogates and code points past U+10FFFF are invalid. */
static size_t utf8_valid_prefix(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        unsigned char b = p[i];
        size_t n, k;
        uint32_t cp;

        if (b < 0x80) {
            i++;
            continue;
        }
        if (b >= 0xc2 && b <= 0xdf)
            n = 1, cp = b & 0x1fu;
        else if (b >= 0xe0 && b <= 0xef)
            n = 2, cp = b & 0x0fu;
        else if (b >= 0xf0 && b <= 0xf4)
            n = 3, cp = b & 0x07u;
        else
            return i;
        if (len - i <= n)
            return i;
        for (k = 1; k <= n; k++) {
            if ((p[i + k] & 0xc0) != 0x80)
                return i;
            cp = (cp << 6) | (p[i + k] & 0x3fu);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return i;
        i += n + 1;
    }
    return len;
}

/* Text fit for a path segment or a query value: valid UTF-8 and no control
 * byte (NUL arrives as the literal "%00", see unescape()). */
static int clean_text(const char *s, size_t len, const char **why)
{
    size_t i;

    if (utf8_valid_prefix(s, len) != len) {
        *why = "is not valid UTF-8";
        return 0;
    }
    for (i = 0; i < len; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            *why = "holds a control character";
            return 0;
        }
        if (s[i] == '%' && i + 2 < len && s[i + 1] == '0' && s[i + 2] == '0') {
            *why = "holds a NUL byte";
            return 0;
        }
    }
    return 1;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* MHD's unescape callback (path and query): %XX decoded in place, except
 * %00, which stays literal so that no NUL silently cuts a path or a value
 * short; clean_text() refuses it. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *val)
{
    char *r = val, *w = val;

    (void)cls, (void)c;
    while (*r) {
        int hi, lo;
        if (r[0] == '%' && (hi = hexval(r[1])) >= 0 && (lo = hexval(r[2])) >= 0 && (hi | lo) != 0) {
            *w++ = (char)(hi * 16 + lo);
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return (size_t)(w - val);
}

typedef struct {
    const char *field; /* the offending parameter's name, or "query" when the name is bad */
    const char *why;
} arg_check_t;

static enum MHD_Result
check_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    arg_check_t *ac = cls;

    (void)kind;
    if (!clean_text(key, strlen(key), &ac->why)) {
        ac->field = "query";
        return MHD_NO;
    }
    if (value && !clean_text(value, strlen(value), &ac->why)) {
        ac->field = key;
        return MHD_NO;
    }
    return MHD_YES;
}

/* The JSON path of the first string (value or key) holding U+FFFD, the
 * mark left where a byte was not UTF-8; "" when none. */
static int find_mark(json_t *j, char *path, size_t size)
{
    static const char mark[] = "\xef\xbf\xbd";
    size_t used = strlen(path), i;
    const char *k;
    json_t *v;

    if (json_is_string(j))
        return strstr(json_string_value(j), mark) != NULL;
    if (json_is_array(j)) {
        json_array_foreach(j, i, v)
        {
            snprintf(path + used, size - used, "[%zu]", i);
            if (find_mark(v, path, size))
                return 1;
        }
    } else if (json_is_object(j)) {
        json_object_foreach(j, k, v)
        {
            snprintf(path + used, size - used, "%s%s", used ? "." : "", k);
            if (strstr(k, mark) != NULL || find_mark(v, path, size))
                return 1;
        }
    }
    path[used] = '\0';
    return 0;
}

/* For a body that is not UTF-8: the field whose text holds the first bad
 * byte, found by parsing a copy with every bad byte replaced by U+FFFD.
 * "body" when the bad byte is outside any string. */
static void utf8_field(const char *body, size_t len, char *field, size_t size)
{
    char *copy = malloc(len * 3 + 1);
    size_t i = 0, o = 0;
    json_t *j;

    snprintf(field, size, "body");
    if (copy == NULL)
        return;
    while (i < len) {
        size_t ok = utf8_valid_prefix(body + i, len - i);
        memcpy(copy + o, body + i, ok);
        o += ok;
        i += ok;
        if (i < len) {
            memcpy(copy + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    if ((j = json_loadb(copy, o, 0, NULL)) != NULL) {
        field[0] = '\0';
        if (!find_mark(j, field, size) || field[0] == '\0')
            snprintf(field, size, "body");
        json_decref(j);
    }
    server_wipe(copy, o);
    free(copy);
}

/* ---- waiting streams ---------------------------------------------------- */

static void park(sluice_server_t *s, struct MHD_Connection *c)
{
    MHD_suspend_connection(c);
    pthread_mutex_lock(&s->wait_mu);
    if (s->no_more_suspend) {
        MHD_resume_connection(c);
    } else {
        if (s->n_waiting == s->cap_waiting) {
            size_t cap = s->cap_waiting ? s->cap_waiting * 2 : 16;
            struct MHD_Connection **nw = realloc(s->waiting, cap * sizeof(*nw));
            if (nw == NULL) {
                pthread_mutex_unlock(&s->wait_mu);
                MHD_resume_connection(c);
                return;
            }
            s->waiting = nw;
            s->cap_waiting = cap;
        }
        s->waiting[s->n_waiting++] = c;
    }
    pthread_mutex_unlock(&s->wait_mu);
}

static void resume_all(sluice_server_t *s)
{
    size_t i;

    pthread_mutex_lock(&s->wait_mu);
    for (i = 0; i < s->n_waiting; i++)
        MHD_resume_connection(s->waiting[i]);
    s->n_waiting = 0;
    pthread_mutex_unlock(&s->wait_mu);
}

static void *ticker_main(void *arg)
{
    sluice_server_t *s = arg;

    while (!atomic_load(&s->stopping)) {
        server_sleep_ms(s->o.follow_poll_ms);
        resume_all(s);
    }
    return NULL;
}

/* ---- launches ----------------------------------------------------------- */

/* The API view of a launch (launch_view.h).  Takes rmu (never mu: reads do
 * not wait for a launcher cycle). */
static sluice_err launch_view(sluice_server_t *s, const char *id, json_t **out, sluice_error_t *err)
{
    json_t *l = NULL, *ev = NULL;
    sluice_err rc;

    pthread_mutex_lock(&s->rmu);
    if ((rc = sluice_store_get_launch(s->rstore, id, &l, err)) == SLUICE_OK)
        rc = sluice_store_read_events(s->rstore, id, 1, 0, &ev, err);
    pthread_mutex_unlock(&s->rmu);
    if (rc == SLUICE_OK &&
        (*out = sluice_launch_view_build(l, ev, s->o.node_address, s->o.node_address_arg)) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", id);
    json_decref(l);
    json_decref(ev);
    return rc;
}

static const char *process_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

static const char *server_getenv(sluice_server_t *s, const char *name)
{
    return s->o.getenv_fn ? s->o.getenv_fn(name, s->o.getenv_arg) : getenv(name);
}

static const char *server_getenv_cb(const char *name, void *arg)
{
    return server_getenv(arg, name);
}

static enum MHD_Result post_launch(sluice_server_t *s,
                                   struct MHD_Connection *c,
                                   req_t *rq,
                                   const char *caller,
                                   int protected_channel)
{
    const char *ctype =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    json_t *peek = NULL, *request = NULL, *render = NULL, *view = NULL;
    json_error_t jerr;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_policy_t policy;
    sluice_launch_t *launch = NULL;
    sluice_render_t *r = NULL;
    sluice_render_ctx_t ctx;
    sluice_launcher_request_t lr;
    sluice_secret_t *secrets = NULL;
    const sluice_study_t *study = NULL;
    size_t n_secrets = 0;
    char *canon = NULL, *id = NULL;
    int existed = 0, have_policy = 0;
    sluice_err rc;
    enum MHD_Result ret;

    memset(&policy, 0, sizeof(policy));
    memset(&ctx, 0, sizeof(ctx));
    memset(&lr, 0, sizeof(lr));
    if (ctype == NULL || strncmp(ctype, "application/json", 16) != 0 ||
        (ctype[16] != '\0' && ctype[16] != ';')) {
        ret = problem(c, 415, "unsupported-media-type", "Unsupported media type",
                      "send the launch request as application/json");
        goto out;
    }
    if (rq->body && utf8_valid_prefix(rq->body, rq->len) != rq->len) {
        char field[256], detail[320];
        utf8_field(rq->body, rq->len, field, sizeof(field));
        snprintf(detail, sizeof(detail), "%s: not valid UTF-8 (byte %zu of the body)", field,
                 utf8_valid_prefix(rq->body, rq->len));
        ret = problem_ex(c, 400, "invalid-utf8", "Invalid UTF-8", detail, field, NULL);
        goto out;
    }
    if ((peek = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr)) ==
            NULL ||
        !json_is_object(peek)) {
        ret = problem(c, 400, "malformed-json", "Malformed JSON",
                      peek ? "the body is not a JSON object" : jerr.text);
        goto out;
    }
    /* Values that crossed plain TCP are not secret any more: refuse them
     * before anything is parsed, rendered or stored. */
    if (!protected_channel && json_object_get(peek, "secrets") != NULL) {
        ret = problem_ex(c, 403, "secrets-need-protected-channel",
                         "Secrets need TLS or the Unix socket",
                         "secret values are accepted only over TLS or the Unix socket; nothing "
                         "was stored (use secret_env names, or a protected listener)",
                         "secrets", NULL);
        goto out;
    }
    if (s->o.rt) {
        const char *name = json_string_value(json_object_get(peek, "study"));
        study = name ? sluice_study_runtime_find(s->o.rt, name) : NULL;
    }
    if (sluice_config_launch_policy(s->o.cfg, study, &policy, &err) != SLUICE_OK) {
        ret = problem_err(c, &err);
        goto out;
    }
    have_policy = 1;
    if (sluice_launch_parse(&launch, rq->body, rq->len, &policy, 0, &err) != SLUICE_OK) {
        ret = problem_err(c, &err);
        goto out;
    }
    ctx.attempt = 1;
    ctx.getenv_fn = s->o.getenv_fn;
    ctx.getenv_arg = s->o.getenv_arg;
    ctx.stat_fn = s->o.stat_fn;
    ctx.stat_arg = s->o.stat_arg;
    if (ctx.getenv_fn == NULL)
        ctx.getenv_fn = process_getenv;
    if (sluice_render(s->o.cfg, study, launch, &ctx, &r, &err) != SLUICE_OK) {
        ret = problem_err(c, &err);
        goto out;
    }
    if ((canon = sluice_launch_to_json(launch, &err)) == NULL ||
        (request = json_loads(canon, 0, NULL)) == NULL ||
        (render = sluice_render_to_json(r)) == NULL) {
        ret = problem(c, 500, "internal", "Internal error", "out of memory");
        goto out;
    }
    if (query_true(c, "dry_run")) {
        ret = queue_json(c, 200,
                         json_pack("{s:b s:s s:O s:O}", "dry_run", 1, "launch_id",
                                   sluice_launch_id(launch), "request", request, "render", render));
        goto out;
    }
    if (sluice_launch_collect_secrets(launch, study, server_getenv_cb, s, &secrets, &n_secrets,
                                      &err) != SLUICE_OK) {
        ret = problem_ex(c, 422, "invalid-request", "Invalid launch request", err.text,
                         "secret_env", NULL);
        goto out;
    }
    lr.request = request;
    lr.render = render;
    lr.secrets = secrets;
    lr.n_secrets = n_secrets;
    lr.caller = caller;
    /* Not under s->mu: an accept never waits for a launcher cycle (the
     * launcher takes the launch at its next intake and is woken now). */
    rc = sluice_launcher_accept(s->o.launcher, &lr, &id, &existed, &err);
    atomic_store(&s->views_dirty, 1);
    if (rc == SLUICE_OK)
        launch_view(s, id, &view, &err);
    if (view == NULL) {
        ret = problem_err(c, &err);
        goto out;
    }
    ret = queue_json(c, existed ? 200 : 201, view);
    view = NULL;
out:
    server_wipe(rq->body, rq->len);
    free(secrets);
    free(id);
    free(canon);
    json_decref(view);
    json_decref(peek);
    json_decref(request);
    json_decref(render);
    sluice_render_free(r);
    sluice_launch_free(launch);
    if (have_policy)
        sluice_config_launch_policy_clear(&policy);
    return ret;
}

static enum MHD_Result list_launches(sluice_server_t *s, struct MHD_Connection *c)
{
    sluice_store_filter_t f;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *items = NULL;
    char *next = NULL;
    const char *lim = query(c, "limit");
    long long limit = lim ? server_parse_count(lim) : 0;
    sluice_err rc;

    memset(&f, 0, sizeof(f));
    if (limit < 0 || limit > 1000)
        return problem_ex(c, 400, "invalid-query", "Invalid query",
                          "limit must be an integer from 1 to 1000", "limit", NULL);
    f.limit = (size_t)limit;
    f.state = query(c, "state");
    f.site = query(c, "site");
    f.study = query(c, "study");
    f.cursor = query(c, "cursor");
    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_list_launches(s->rstore, &f, &items, &next, &err);
    pthread_mutex_unlock(&s->rmu);
    if (rc == SLUICE_EINVAL)
        return problem_ex(c, 400, "invalid-query", "Invalid query", err.text, "cursor", NULL);
    if (rc != SLUICE_OK)
        return problem_err(c, &err);
    {
        json_t *j = json_pack("{s:o s:s?}", "items", items, "next_cursor", next);
        free(next);
        return queue_json(c, 200, j);
    }
}

static enum MHD_Result get_launch(sluice_server_t *s, struct MHD_Connection *c, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;
    int64_t upto;
    char *text = server_cache_get(s, id, &upto);

    if (text != NULL) {
        atomic_fetch_add(&s->view_hits, 1);
        return queue_text(c, 200, "application/json", text);
    }
    atomic_fetch_add(&s->view_misses, 1);
    launch_view(s, id, &view, &err);
    if (view == NULL)
        return problem_err(c, &err);
    text = json_dumps(view, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(view);
    if (text == NULL)
        return MHD_NO;
    server_cache_put(s, id, upto, text);
    return queue_text(c, 200, "application/json", text);
}

/* The creator of a launch (the caller of its `accepted` event) copied into
 * buf; "" when none was recorded. */
static sluice_err
creator_of(sluice_store_t *st, const char *id, char *buf, size_t size, sluice_error_t *err)
{
    json_t *ev = NULL;
    const char *who;
    sluice_err rc;

    buf[0] = '\0';
    if ((rc = sluice_store_read_events(st, id, 1, 1, &ev, err)) != SLUICE_OK)
        return rc;
    who = json_string_value(json_object_get(json_array_get(ev, 0), "caller"));
    snprintf(buf, size, "%s", who ? who : "");
    json_decref(ev);
    return SLUICE_OK;
}

static enum MHD_Result
cancel_launch(sluice_server_t *s, struct MHD_Connection *c, const char *id, const caller_t *caller)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;
    char creator[SLUICE_FSM_NAME_MAX], detail[320];
    int forbidden = 0;
    sluice_err rc;

    pthread_mutex_lock(&s->mu);
    rc = sluice_store_get_launch(s->o.store, id, &view, &err);
    json_decref(view);
    view = NULL;
    if (rc == SLUICE_OK)
        rc = creator_of(s->o.store, id, creator, sizeof(creator), &err);
    /* Only the creator or an admin may cancel a launch. */
    if (rc == SLUICE_OK && !caller->admin && strcmp(creator, caller->name) != 0)
        forbidden = 1;
    else if (rc == SLUICE_OK)
        rc = sluice_launcher_cancel(s->o.launcher, id, caller->name, &err);
    atomic_store(&s->views_dirty, 1);
    pthread_mutex_unlock(&s->mu);
    if (rc == SLUICE_OK && !forbidden)
        sluice_launcher_wake(s->o.launcher); /* act on the intent now */
    if (forbidden) {
        snprintf(detail, sizeof(detail),
                 "launch %s was created by %s; only its creator or an admin may cancel it", id,
                 creator[0] ? creator : "an unrecorded caller");
        sluice_log(SLUICE_LOG_WARNING, "cancel of launch %s by %s refused (created by %s)", id,
                   caller->name, creator[0] ? creator : "?");
        return problem(c, 403, "forbidden", "Forbidden", detail);
    }
    if (rc == SLUICE_OK)
        rc = launch_view(s, id, &view, &err);
    if (rc != SLUICE_OK)
        return problem_err(c, &err);
    return queue_json(c, 202, view);
}

/* ---- logs --------------------------------------------------------------- */

typedef struct {
    sluice_server_t *s;
    struct MHD_Connection *conn;
    char id[136];
    char live[4200];
    char archived[4200];
    uint64_t offset;
    unsigned idle;
} logstream_t;

/* Read up to `max` bytes of `path` at `off`: bytes read, 0 at the end,
 * -1 when the file does not exist or cannot be read. */
static ssize_t read_at(const char *path, uint64_t off, char *buf, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = pread(fd, buf, max, (off_t)off);
    close(fd);
    return n;
}

static ssize_t log_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    logstream_t *ls = cls;
    sluice_server_t *s = ls->s;
    json_t *l = NULL;
    ssize_t n;
    int terminal = 0, have_archive;

    (void)pos;
    if (atomic_load(&s->stopping))
        return MHD_CONTENT_READER_END_OF_STREAM;
    have_archive = access(ls->archived, F_OK) == 0;
    n = read_at(have_archive ? ls->archived : ls->live, ls->offset, buf, max);
    if (n > 0) {
        ls->offset += (uint64_t)n;
        ls->idle = 0;
        return n;
    }
    pthread_mutex_lock(&s->rmu);
    if (sluice_store_get_launch(s->rstore, ls->id, &l, NULL) == SLUICE_OK)
        terminal = json_is_true(json_object_get(l, "terminal"));
    else
        terminal = 1; /* pruned */
    pthread_mutex_unlock(&s->rmu);
    json_decref(l);
    /* Over once the archive has been read to its end, or when a finished
     * launch left no archive for a while (it produced no output). */
    if (terminal && (have_archive || ++ls->idle > 40))
        return MHD_CONTENT_READER_END_OF_STREAM;
    park(s, ls->conn);
    return 0;
}

static enum MHD_Result
get_logs(sluice_server_t *s, struct MHD_Connection *c, const char *id, const char *which)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *l = NULL;
    const char *staging, *off = query(c, "offset");
    long long offset = off ? server_parse_count(off) : 0;
    logstream_t *ls = NULL;
    struct MHD_Response *r = NULL;
    enum MHD_Result ret;
    sluice_err rc;

    if (offset < 0)
        return problem_ex(c, 400, "invalid-query", "Invalid query",
                          "offset must be a non-negative integer", "offset", NULL);
    if ((ls = calloc(1, sizeof(*ls))) == NULL)
        return MHD_NO;
    ls->s = s;
    ls->conn = c;
    ls->offset = (uint64_t)offset;
    snprintf(ls->id, sizeof(ls->id), "%s", id);
    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_get_launch(s->rstore, id, &l, &err);
    if (rc == SLUICE_OK) {
        staging = json_string_value(
            json_object_get(json_object_get(json_object_get(l, "render"), "staging"), "service"));
        snprintf(ls->archived, sizeof(ls->archived), "%s/artifacts/%s/%s.log",
                 sluice_store_dir(s->o.store), id, which);
        snprintf(ls->live, sizeof(ls->live), "%s/%s.log", staging ? staging : "/nonexistent",
                 which);
    }
    pthread_mutex_unlock(&s->rmu);
    json_decref(l);
    if (rc != SLUICE_OK) {
        free(ls);
        return problem_err(c, &err);
    }
    if (query_true(c, "follow")) {
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, log_reader, ls, free);
        if (r == NULL) {
            free(ls);
            return MHD_NO;
        }
    } else {
        const char *path = access(ls->archived, F_OK) == 0 ? ls->archived : ls->live;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;

        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size > ls->offset) {
            r = MHD_create_response_from_fd_at_offset64((uint64_t)st.st_size - ls->offset, fd,
                                                        ls->offset);
            if (r == NULL)
                close(fd);
        } else {
            if (fd >= 0)
                close(fd);
            r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        }
        free(ls);
        if (r == NULL)
            return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- events (SSE) ------------------------------------------------------- */

typedef struct {
    sluice_server_t *s;
    struct MHD_Connection *conn;
    int64_t after;
    char *pending;
    size_t len, off;
    unsigned idle;
} sse_t;

static void sse_free(void *cls)
{
    sse_t *e = cls;

    free(e->pending);
    free(e);
}

static int sse_fill(sse_t *e)
{
    json_t *evs = NULL, *ev;
    int64_t next = e->after;
    size_t i, cap = 0;
    sluice_err rc;

    pthread_mutex_lock(&e->s->rmu);
    rc = sluice_store_events_since(e->s->rstore, e->after, SSE_BATCH, &evs, &next, NULL);
    pthread_mutex_unlock(&e->s->rmu);
    if (rc != SLUICE_OK)
        return -1;
    free(e->pending);
    e->pending = NULL;
    e->len = e->off = 0;
    json_array_foreach(evs, i, ev)
    {
        char *data = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
        const char *name = json_string_value(json_object_get(ev, "name"));
        size_t need;
        int w;

        if (data == NULL)
            break;
        need = strlen(data) + (name ? strlen(name) : 0) + 64;
        if (e->len + need > cap) {
            char *np = realloc(e->pending, cap + need + 4096);
            if (np == NULL) {
                free(data);
                break;
            }
            e->pending = np;
            cap += need + 4096;
        }
        w = snprintf(e->pending + e->len, cap - e->len, "id: %" PRId64 "\nevent: %s\ndata: %s\n\n",
                     (int64_t)json_integer_value(json_object_get(ev, "gseq")),
                     name ? name : "event", data);
        free(data);
        if (w < 0)
            break;
        e->len += (size_t)w;
        e->after = json_integer_value(json_object_get(ev, "gseq"));
    }
    json_decref(evs);
    if (e->len == 0)
        e->after = next > e->after ? next : e->after;
    return 0;
}

static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    sse_t *e = cls;
    size_t n;

    (void)pos;
    if (atomic_load(&e->s->stopping))
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (e->off == e->len) {
        if (sse_fill(e) != 0)
            return MHD_CONTENT_READER_END_WITH_ERROR;
        if (e->len == 0) {
            /* A comment now and then keeps proxies and idle timers happy. */
            if (++e->idle >= 40) {
                static const char ka[] = ": keep-alive\n\n";
                e->idle = 0;
                if (max >= sizeof(ka) - 1) {
                    memcpy(buf, ka, sizeof(ka) - 1);
                    return (ssize_t)(sizeof(ka) - 1);
                }
            }
            park(e->s, e->conn);
            return 0;
        }
    }
    e->idle = 0;
    n = e->len - e->off < max ? e->len - e->off : max;
    memcpy(buf, e->pending + e->off, n);
    e->off += n;
    return (ssize_t)n;
}

static enum MHD_Result get_events(sluice_server_t *s, struct MHD_Connection *c)
{
    const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
    const char *after = query(c, "after");
    long long from = 0;
    sse_t *e;
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (last || after) {
        from = server_parse_count(last ? last : after);
        if (from < 0)
            return problem_ex(c, 400, "invalid-query", "Invalid query",
                              "Last-Event-ID and after must be non-negative integers",
                              last ? "Last-Event-ID" : "after", NULL);
    }
    if ((e = calloc(1, sizeof(*e))) == NULL)
        return MHD_NO;
    e->s = s;
    e->conn = c;
    e->after = from;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, sse_reader, e, sse_free);
    if (r == NULL) {
        free(e);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* ---- health and metrics ------------------------------------------------- */

static enum MHD_Result get_readyz(sluice_server_t *s, struct MHD_Connection *c)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int store_ok = access(sluice_store_dir(s->o.store), W_OK) == 0;
    int cluster_ok = 1;

    if (s->o.ready) {
        /* the cluster client is the launcher's: one user at a time */
        pthread_mutex_lock(&s->mu);
        cluster_ok = s->o.ready(s->o.cluster_arg, &err) == SLUICE_OK;
        pthread_mutex_unlock(&s->mu);
    }

    if (!store_ok)
        return problem(c, 503, "not-ready", "Not ready", "the store directory is not writable");
    if (!cluster_ok)
        return problem(c, 503, "not-ready", "Not ready",
                       err.text[0] ? err.text : "slurmrestd is not reachable");
    return queue_json(c, 200,
                      json_pack("{s:s s:{s:s s:s}}", "status", "ready", "checks", "store", "ok",
                                "slurmrestd", s->o.ready ? "ok" : "not checked"));
}

static enum MHD_Result get_metrics(sluice_server_t *s, struct MHD_Connection *c)
{
    char *text = NULL;
    sluice_err rc = server_metrics_render(s, &text);

    if (rc == SLUICE_ESTORE)
        return problem(c, 503, "store", "Store unavailable", "the store could not be read");
    if (rc != SLUICE_OK)
        return MHD_NO;
    return queue_text(c, 200, "text/plain; version=0.0.4; charset=utf-8", text);
}

/* ---- hostile clients ---------------------------------------------------- */

static const char too_large_detail[] = "request bodies are limited to 1048576 bytes";

/* A problem answer that also closes the connection (its request is not
 * read to the end); `retry_after` > 0 adds Retry-After. */
static enum MHD_Result refuse(struct MHD_Connection *c,
                              unsigned status,
                              const char *slug,
                              const char *title,
                              const char *detail,
                              unsigned retry_after)
{
    json_t *j = json_pack("{s:s+ s:s s:i s:s}", "type", "urn:sluice:problem:", slug, "title", title,
                          "status", (int)status, "detail", detail);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    struct MHD_Response *r;
    enum MHD_Result ret;
    char ra[16];

    json_decref(j);
    if (text == NULL)
        return MHD_NO;
    r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/problem+json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (retry_after > 0) {
        snprintf(ra, sizeof(ra), "%u", retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static void on_connection(void *cls,
                          struct MHD_Connection *c,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    sluice_server_t *s = cls;

    (void)c, (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&s->open_conns, 1);
    else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
        atomic_fetch_sub(&s->open_conns, 1);
}

/* ---- routing ------------------------------------------------------------ */

static enum MHD_Result method_not_allowed(struct MHD_Connection *c, const char *allow)
{
    return problem_ex(c, 405, "method-not-allowed", "Method not allowed", NULL, NULL, allow);
}

static enum MHD_Result route(
    const listener_t *li, struct MHD_Connection *c, const char *url, const char *method, req_t *rq)
{
    sluice_server_t *s = li->s;
    caller_t caller;
    const char *rest;
    int get = strcmp(method, "GET") == 0;

    if (strcmp(url, "/v1/healthz") == 0)
        return get ? queue_json(c, 200, json_pack("{s:s}", "status", "ok"))
                   : method_not_allowed(c, "GET");
    memset(&caller, 0, sizeof(caller));
    if (li->unix_socket) {
        /* The socket's file mode guards the Unix listener; the peer's uid
         * names the caller. */
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (server_peer_caller(ci ? ci->connect_fd : -1, &caller) != 0)
            return problem(c, 401, "unauthorized", "Unauthorized",
                           "the peer of the Unix socket could not be identified");
    } else {
        const token_t *t = server_authenticate(
            s, MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION));
        if (t == NULL)
            return problem(c, 401, "unauthorized", "Unauthorized",
                           "a valid `Authorization: Bearer <token>` header is required");
        snprintf(caller.name, sizeof(caller.name), "%s", t->name);
        caller.admin = t->admin;
    }
    {
        arg_check_t ac = {NULL, NULL};
        char detail[256];

        MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, check_arg, &ac);
        if (ac.field != NULL) {
            snprintf(detail, sizeof(detail), "query parameter %s %s", ac.field, ac.why);
            return problem_ex(c, 400, "invalid-query", "Invalid query", detail, ac.field, NULL);
        }
    }
    if (strcmp(url, "/v1/readyz") == 0)
        return get ? get_readyz(s, c) : method_not_allowed(c, "GET");
    if (strcmp(url, "/v1/metrics") == 0)
        return get ? get_metrics(s, c) : method_not_allowed(c, "GET");
    if (strcmp(url, "/v1/events") == 0)
        return get ? get_events(s, c) : method_not_allowed(c, "GET");
    if (strcmp(url, "/v1/launches") == 0) {
        if (get)
            return list_launches(s, c);
        if (strcmp(method, "POST") == 0)
            return post_launch(s, c, rq, caller.name, li->unix_socket || li->tls);
        return method_not_allowed(c, "GET, POST");
    }
    if (strncmp(url, "/v1/launches/", 13) == 0) {
        char id[136];
        size_t idlen;
        const char *why = NULL;

        rest = url + 13;
        idlen = strcspn(rest, "/");
        if (!clean_text(rest, idlen, &why)) {
            char detail[96];
            snprintf(detail, sizeof(detail), "the launch id in the path %s", why);
            return problem_ex(c, 400, "invalid-id", "Invalid launch id", detail, "launch_id", NULL);
        }
        if (!server_valid_id(rest, idlen))
            return problem(c, 404, "not-found", "Not found", "no such launch");
        memcpy(id, rest, idlen);
        id[idlen] = '\0';
        rest += idlen;
        if (*rest == '\0') {
            if (get)
                return get_launch(s, c, id);
            if (strcmp(method, "DELETE") == 0)
                return cancel_launch(s, c, id, &caller);
            return method_not_allowed(c, "GET, DELETE");
        }
        if (strcmp(rest, "/logs/stdout") == 0 || strcmp(rest, "/logs/stderr") == 0)
            return get ? get_logs(s, c, id, rest + 6) : method_not_allowed(c, "GET");
    }
    return problem(c, 404, "not-found", "Not found", "no such route");
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
    req_t *rq = *con_cls;

    (void)version;
    if (rq == NULL) {
        const char *cl =
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

        if ((rq = calloc(1, sizeof(*rq))) == NULL)
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &rq->start);
        *con_cls = rq;
        /* Past the connection limit: a clean 503, and the connection closes. */
        if (atomic_load(&s->open_conns) > s->o.max_connections) {
            atomic_fetch_add(&s->refused_busy, 1);
            rq->answered = 1;
            return refuse(c, 503, "busy", "Too many connections",
                          "the service has too many open connections; retry shortly", 1);
        }
        /* A declared oversized body: up to DRAIN_MAX it is read and thrown
         * away so that a simple client, which sends all before it reads,
         * gets its 413 after the body; past that it is refused before any
         * of it is read.  Neither is ever buffered. */
        if (cl != NULL && server_parse_count(cl) > (long long)SLUICE_SERVER_MAX_BODY) {
            atomic_fetch_add(&s->refused_too_large, 1);
            if (server_parse_count(cl) <= (long long)DRAIN_MAX) {
                rq->discard = 1;
                return MHD_YES;
            }
            rq->answered = 1;
            return refuse(c, 413, "too-large", "Payload too large", too_large_detail, 0);
        }
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;

        *upload_data_size = 0;
        if (rq->answered)
            return MHD_YES; /* answered early: the rest is discarded */
        if (rq->discard) {
            if (server_elapsed_s(&rq->start) > (double)s->o.conn_timeout_s)
                return MHD_NO;
            return MHD_YES;
        }
        /* libmicrohttpd cannot answer in the middle of a body, so the two
         * cases below close the connection without an answer. */
        if (server_elapsed_s(&rq->start) > (double)s->o.conn_timeout_s) {
            /* A body trickled in slower than the limit (slowloris). */
            atomic_fetch_add(&s->body_timeouts, 1);
            sluice_log(SLUICE_LOG_INFO, "http: a request body took over %u s; connection closed",
                       s->o.conn_timeout_s);
            return MHD_NO;
        }
        if (rq->len + n > SLUICE_SERVER_MAX_BODY) {
            /* Chunked (no declared length): closed as soon as it passes the limit. */
            atomic_fetch_add(&s->refused_too_large, 1);
            sluice_log(SLUICE_LOG_INFO, "http: a chunked body passed %u bytes; connection closed",
                       (unsigned)SLUICE_SERVER_MAX_BODY);
            return MHD_NO;
        }
        {
            char *nb = realloc(rq->body, rq->len + n + 1);
            if (nb == NULL)
                return MHD_NO;
            rq->body = nb;
            memcpy(rq->body + rq->len, upload_data, n);
            rq->len += n;
            rq->body[rq->len] = '\0';
        }
        return MHD_YES;
    }
    if (rq->answered)
        return MHD_YES;
    if (rq->discard) {
        rq->answered = 1;
        return refuse(c, 413, "too-large", "Payload too large", too_large_detail, 0);
    }
    atomic_fetch_add(&s->requests, 1);
    return route(li, c, url, method, rq);
}

static void on_completed(void *cls,
                         struct MHD_Connection *c,
                         void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    req_t *rq = *con_cls;

    (void)cls, (void)c, (void)toe;
    if (rq) {
        server_wipe(rq->body, rq->len);
        free(rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

/* ---- lifecycle ---------------------------------------------------------- */

/* libmicrohttpd's messages: kept while starting (for the error text), else
 * logged at debug level (failed handshakes are routine on an open port).
 * They never hold key material. */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
    sluice_server_t *s = cls;
    char msg[256];
    size_t n;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '.'))
        msg[--n] = '\0';
    if (s->starting)
        snprintf(s->mhd_msg, sizeof(s->mhd_msg), "%s", msg);
    else
        sluice_log(SLUICE_LOG_DEBUG, "libmicrohttpd: %s", msg);
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

    if (out == NULL || opts == NULL || opts->launcher == NULL || opts->store == NULL ||
        opts->cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "server: launcher, store and config are required");
    if (opts->listen == NULL && opts->socket_path == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "server: a listen address or a socket path is "
                             "required");
    if ((opts->tls_cert == NULL) != (opts->tls_key == NULL))
        return sluice_errorf(err, SLUICE_EINVAL, "server: tls_cert and tls_key go together");
    if (opts->tls_cert && opts->listen == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "server: tls_cert and tls_key need a listen address");
    if (opts->tls_cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return sluice_errorf(err, SLUICE_EUNSUPPORTED,
                             "server: this libmicrohttpd was built without TLS (GnuTLS); install "
                             "Debian's libmicrohttpd12 or serve on loopback or the Unix socket");
    if (opts->listen && (rc = server_parse_listen(opts->listen, opts->tls_cert != NULL, &ss, &v6,
                                                  err)) != SLUICE_OK)
        return rc;
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
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
    s->tcp_l.s = s;
    s->unix_l.s = s;
    s->unix_l.unix_socket = 1;
    s->tcp_l.tls = opts->tls_cert != NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->prune_mu, NULL);
    pthread_mutex_init(&s->rmu, NULL);
    pthread_mutex_init(&s->vmu, NULL);
    pthread_mutex_init(&s->lookmu, NULL);
    atomic_init(&s->views_dirty, 1);
    clock_gettime(CLOCK_MONOTONIC, &s->started);
    pthread_mutex_init(&s->wait_mu, NULL);
    atomic_init(&s->stopping, 0);
    atomic_init(&s->transitions, 0);
    atomic_init(&s->requests, 0);
    atomic_init(&s->pruned_logs, 0);
    if (opts->tls_cert &&
        ((rc = server_read_pem(opts->tls_cert, 0, &s->cert_pem, &s->cert_len, err)) != SLUICE_OK ||
         (rc = server_read_pem(opts->tls_key, 1, &s->key_pem, &s->key_len, err)) != SLUICE_OK))
        goto out;
    if ((rc = sluice_store_open(&s->rstore, sluice_store_dir(opts->store), err)) != SLUICE_OK ||
        (rc = sluice_store_last_gseq(s->rstore, &s->seen_gseq, err)) != SLUICE_OK)
        goto out;
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
        if (s->cert_pem)
            s->d = MHD_start_daemon(
                flags | MHD_USE_TLS | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL,
                on_request, &s->tcp_l, MHD_OPTION_LISTEN_SOCKET, tfd, MHD_OPTION_THREAD_POOL_SIZE,
                s->o.threads, MHD_OPTION_CONNECTION_TIMEOUT, s->o.conn_timeout_s,
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
                MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
                on_connection, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
                MHD_OPTION_CONNECTION_LIMIT, s->o.max_connections + SLUICE_SERVER_CONN_SPARE,
                MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s, MHD_OPTION_HTTPS_MEM_CERT, s->cert_pem,
                MHD_OPTION_HTTPS_MEM_KEY, s->key_pem, MHD_OPTION_END);
        else
            s->d = MHD_start_daemon(
                flags | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, on_request,
                &s->tcp_l, MHD_OPTION_LISTEN_SOCKET, tfd, MHD_OPTION_THREAD_POOL_SIZE, s->o.threads,
                MHD_OPTION_CONNECTION_TIMEOUT, s->o.conn_timeout_s,
                MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
                MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
                on_connection, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
                MHD_OPTION_CONNECTION_LIMIT, s->o.max_connections + SLUICE_SERVER_CONN_SPARE,
                MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, s, MHD_OPTION_END);
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
        {
            struct sockaddr_storage bound;
            socklen_t blen = sizeof(bound);
            if (getsockname(tfd, (struct sockaddr *)&bound, &blen) == 0)
                s->port = ntohs(v6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                   : ((struct sockaddr_in *)&bound)->sin_port);
        }
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
        s->ud = MHD_start_daemon(
            flags, 0, NULL, NULL, on_request, &s->unix_l, MHD_OPTION_LISTEN_SOCKET, ufd,
            MHD_OPTION_THREAD_POOL_SIZE, s->o.threads, MHD_OPTION_CONNECTION_TIMEOUT,
            s->o.conn_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
            on_connection, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape, s,
            MHD_OPTION_CONNECTION_LIMIT, s->o.max_connections + SLUICE_SERVER_CONN_SPARE,
            MHD_OPTION_END);
        if (s->ud == NULL) {
            close(ufd);
            rc = sluice_errorf(err, SLUICE_ETRANSPORT, "cannot serve on %s", opts->socket_path);
            goto out;
        }
    }
    if (pthread_create(&s->ticker, NULL, ticker_main, s) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "cannot start the stream ticker");
        goto out;
    }
    s->ticker_started = 1;
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
    if (s->ticker_started)
        pthread_join(s->ticker, NULL);
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
    if (s->socket_path) {
        unlink(s->socket_path);
        free(s->socket_path);
    }
    server_access_free(s);
    pthread_mutex_destroy(&s->prune_mu);
    free(s->waiting);
    sluice_store_close(s->rstore);
    pthread_mutex_destroy(&s->rmu);
    pthread_mutex_destroy(&s->vmu);
    pthread_mutex_destroy(&s->lookmu);
    for (i = 0; i < VIEW_SLOTS; i++)
        free(s->views[i].text);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->wait_mu);
    free(s);
}

uint16_t sluice_server_port(const sluice_server_t *s)
{
    return s ? s->port : 0;
}

sluice_err sluice_server_step(sluice_server_t *s, sluice_error_t *err)
{
    struct timespec t0;
    double took;
    sluice_err rc;

    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server");
    pthread_mutex_lock(&s->mu);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = sluice_launcher_step(s->o.launcher, err);
    took = server_elapsed_s(&t0);
    atomic_store(&s->views_dirty, 1);
    pthread_mutex_unlock(&s->mu);
    server_metrics_cycle(s, took, rc);
    return rc;
}

sluice_err sluice_server_run_launcher(sluice_server_t *s, volatile int *stop, sluice_error_t *err)
{
    int64_t next_prune = 0;

    if (s == NULL || stop == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server or stop flag");
    while (!*stop) {
        sluice_error_t e = SLUICE_ERROR_INIT;
        int64_t wait_ms, slept = 0;

        if (server_clock_ms(CLOCK_MONOTONIC) >= next_prune) {
            sluice_error_t pe = SLUICE_ERROR_INIT;
            if (sluice_server_prune(s, 0, NULL, NULL, &pe) != SLUICE_OK)
                sluice_log(SLUICE_LOG_WARNING, "retention: %s", pe.text);
            next_prune = server_clock_ms(CLOCK_MONOTONIC) +
                         (int64_t)(s->o.prune_interval_s ? s->o.prune_interval_s : 3600) * 1000;
        }

        if (sluice_server_step(s, &e) != SLUICE_OK)
            sluice_log(SLUICE_LOG_WARNING, "launcher cycle: %s", e.text);
        pthread_mutex_lock(&s->mu);
        wait_ms = sluice_launcher_next_interval_ms(s->o.launcher);
        pthread_mutex_unlock(&s->mu);
        /* In slices of 100 ms so that *stop is seen; an accept or a cancel
         * ends the wait at once. */
        while (!*stop && slept < wait_ms) {
            int64_t slice = wait_ms - slept < 100 ? wait_ms - slept : 100;
            if (sluice_launcher_idle(s->o.launcher, slice))
                break;
            slept += slice;
        }
    }
    return SLUICE_OK;
}
