/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_hostile.c - `sluice serve` against hostile HTTP clients:
 * oversized bodies, slowloris-style trickles, 1,000 concurrent
 * connections and the connection limit, invalid UTF-8 and NUL bytes, path
 * traversal in ids, wrong content types, malformed JSON, unknown fields,
 * header floods.  After each attack a normal request still works, and
 * every accepted launch is in the store.  Only loopback traffic. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "http_client.h"
#include "raw_socket.h"
#include "server_fixture.h"

static server_fixture_t fx;

static void start_with(sfx_tweak_fn tweak, void *arg)
{
    char why[512] = "";

    cr_assert_eq(sfx_start(&fx, tweak, arg, why, sizeof(why)), 0, "fixture: %s", why);
}

static void fini(void)
{
    sfx_stop(&fx);
}

/* Short limits so that a test can watch them act. */
static void short_limits(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->conn_timeout_s = 2;
}

static void small_limit(sluice_server_opts_t *so, void *arg)
{
    so->max_connections = *(unsigned *)arg;
}

static void init_default(void)
{
    start_with(NULL, NULL);
}

static void init_short(void)
{
    start_with(short_limits, NULL);
}

TestSuite(hostile, .fini = fini, .timeout = 120);

/* ---- raw sockets: tests/support/raw_socket.h ---------------------------- */

static int status_of(const char *raw)
{
    int st = -1;
    if (sscanf(raw, "HTTP/1.%*d %d", &st) != 1)
        return -1;
    return st;
}

/* GET /v1/launches/{id} with the token answers 200 (or `want`) within
 * max_s seconds: the service keeps serving others. */
static void served_quickly(const char *path, int want, double max_s)
{
    hc_response_t r;
    double t0 = raw_now_s(), took;

    cr_assert_eq(hc_request(fx.port, "GET", path, SFX_AUTH, NULL, 0, &r), 0, "GET %s", path);
    took = raw_now_s() - t0;
    cr_expect_eq(r.status, want, "GET %s: %d %s", path, r.status, r.body);
    cr_expect_lt(took, max_s, "GET %s took %.2f s", path, took);
    hc_response_clear(&r);
}

static void post_ok(const char *id)
{
    char req[1024];
    hc_response_t r;

    sfx_request(id, "/bin/true", req, sizeof(req));
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", SFX_JSON_AUTH, req, strlen(req), &r),
                 0);
    cr_assert(r.status == 201 || r.status == 200, "POST %s: %d %s", id, r.status, r.body);
    hc_response_clear(&r);
}

/* Every id in the store (the store itself, not the API). */
static size_t stored_ids(char ids[][64], size_t max)
{
    sluice_store_filter_t f;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *items = NULL, *it;
    char *next = NULL;
    size_t i, n = 0;

    memset(&f, 0, sizeof(f));
    f.limit = 1000;
    cr_assert_eq(sluice_store_list_launches(fx.store, &f, &items, &next, &err), SLUICE_OK, "%s",
                 err.text);
    json_array_foreach(items, i, it)
    {
        if (n < max)
            snprintf(ids[n++], 64, "%s", json_string_value(json_object_get(it, "launch_id")));
    }
    json_decref(items);
    free(next);
    return n;
}

static int stored(const char *id)
{
    char ids[256][64];
    size_t n = stored_ids(ids, 256), i;

    for (i = 0; i < n; i++)
        if (strcmp(ids[i], id) == 0)
            return 1;
    return 0;
}

/* ---- oversized bodies --------------------------------------------------- */

Test(hostile, a_declared_oversized_body_is_refused_before_it_is_read, .init = init_default)
{
    static const char head[] = "POST /v1/launches HTTP/1.1\r\nHost: 127.0.0.1\r\n" SFX_JSON_AUTH
                               "Content-Length: 104857600\r\n\r\n";
    int fd = raw_connect(fx.port), closed;
    double t0 = raw_now_s();
    char *raw;

    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, head, strlen(head)), 0);
    /* Not one byte of the 100 MiB is sent: the answer comes anyway. */
    raw = raw_read(fd, 5000, &closed);
    cr_expect_eq(status_of(raw), 413, "%s", raw);
    cr_expect(strstr(raw, "\"status\":413") != NULL, "%s", raw);
    cr_expect(closed, "the connection stays open after a 413");
    cr_expect_lt(raw_now_s() - t0, 2.0);
    free(raw);
    close(fd);
    cr_expect_eq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"too-large\"}"), 1);
    post_ok("after-413");
    cr_expect(stored("after-413"));
}

Test(hostile, a_body_declared_slightly_too_large_is_drained_then_refused, .init = init_default)
{
    /* 2 MiB: read and thrown away, then 413, so a client that sends all
     * before it reads still gets the answer. */
    size_t big = 2 * SLUICE_SERVER_MAX_BODY;
    char *body = malloc(big);
    hc_response_t r;

    cr_assert_not_null(body);
    memset(body, ' ', big);
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", SFX_JSON_AUTH, body, big, &r), 0);
    cr_expect_eq(r.status, 413, "%d %s", r.status, r.body);
    hc_response_clear(&r);
    free(body);
    cr_expect_eq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"too-large\"}"), 1);
    post_ok("after-drain");
}

Test(hostile, a_chunked_body_is_cut_off_once_it_passes_the_limit, .init = init_default)
{
    static const char head[] = "POST /v1/launches HTTP/1.1\r\nHost: 127.0.0.1\r\n" SFX_JSON_AUTH
                               "Transfer-Encoding: chunked\r\n\r\n";
    char chunk[70000];
    int fd = raw_connect(fx.port), closed, sent = 0, i;
    char *raw;

    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, head, strlen(head)), 0);
    /* 64 KiB chunks, 8 MiB in all, without the final chunk: the server
     * must close the connection soon after 1 MiB instead of reading on. */
    snprintf(chunk, sizeof(chunk), "10000\r\n");
    memset(chunk + 7, ' ', 65536);
    memcpy(chunk + 7 + 65536, "\r\n", 2);
    for (i = 0; i < 128; i++) {
        if (raw_send(fd, chunk, 7 + 65536 + 2) != 0)
            break;
        sent++;
    }
    raw = raw_read(fd, 5000, &closed);
    cr_expect(closed, "still open after %d chunks", sent);
    cr_expect_lt(sent, 128, "the server read all 8 MiB");
    cr_expect_neq(status_of(raw), 200, "%.200s", raw);
    free(raw);
    close(fd);
    cr_expect_eq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"too-large\"}"), 1);
    /* Within the limit, chunked is fine. */
    {
        char req[1024], body[2048];
        int n;
        sfx_request("chunked-ok", "/bin/true", req, sizeof(req));
        n = snprintf(body, sizeof(body), "%s%zx\r\n%s\r\n0\r\n\r\n",
                     "POST /v1/launches HTTP/1.1\r\nHost: x\r\n" SFX_JSON_AUTH
                     "Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n",
                     strlen(req), req);
        cr_assert_lt((size_t)n, sizeof(body));
        fd = raw_connect(fx.port);
        cr_assert_eq(raw_send(fd, body, (size_t)n), 0);
        raw = raw_read(fd, 5000, &closed);
        cr_expect_eq(status_of(raw), 201, "%.300s", raw);
        free(raw);
        close(fd);
    }
    served_quickly("/v1/launches/chunked-ok", 200, 2.0);
}

/* ---- slow clients ------------------------------------------------------- */

Test(hostile, trickled_headers_time_out_and_do_not_block_others, .init = init_short)
{
    static const char part[] = "GET /v1/launches HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    int fds[20], i, closed;
    double t0 = raw_now_s();
    char *raw;

    post_ok("slow-1");
    for (i = 0; i < 20; i++) {
        cr_assert_geq(fds[i] = raw_connect(fx.port), 0);
        cr_assert_eq(raw_send(fds[i], part, strlen(part)), 0);
    }
    /* While they hang, others are served at once. */
    served_quickly("/v1/launches/slow-1", 200, 1.0);
    served_quickly("/v1/healthz", 200, 1.0);
    /* Idle past the limit (2 s): closed by the server. */
    for (i = 0; i < 20; i++) {
        raw = raw_read(fds[i], 6000, &closed);
        cr_expect(closed, "connection %d still open after %.1f s", i, raw_now_s() - t0);
        free(raw);
        close(fds[i]);
    }
    cr_expect_lt(raw_now_s() - t0, 6.0);
    served_quickly("/v1/launches/slow-1", 200, 1.0);
}

Test(hostile, a_body_trickled_past_the_limit_is_cut_off, .init = init_short)
{
    static const char head[] = "POST /v1/launches HTTP/1.1\r\nHost: 127.0.0.1\r\n" SFX_JSON_AUTH
                               "Content-Length: 1000\r\n\r\n";
    int fd = raw_connect(fx.port), closed = 0, i;
    double t0 = raw_now_s(), took;
    char *raw = NULL;

    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, head, strlen(head)), 0);
    /* One byte every 400 ms: never idle for the 2 s limit, but the body
     * would take 400 s. */
    for (i = 0; i < 30 && !closed; i++) {
        if (raw_send(fd, "{", 1) != 0)
            break;
        free(raw);
        raw = raw_read(fd, 400, &closed);
        if (i == 2)
            served_quickly("/v1/healthz", 200, 1.0);
    }
    took = raw_now_s() - t0;
    cr_expect(closed || i < 30, "still open after %.1f s", took);
    cr_expect_lt(took, 5.0, "cut off after %.1f s", took);
    cr_expect_eq(status_of(raw), -1, "%s", raw);
    free(raw);
    close(fd);
    cr_expect_eq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"body-timeout\"}"), 1);
    post_ok("after-trickle");
}

Test(hostile, a_follow_stream_outlives_the_idle_limit, .init = init_short)
{
    char *raw = NULL;

    post_ok("quiet");
    /* Nothing is written for 3 s (more than the 2 s limit): the stream
     * must stay open, then end when the launch ends. */
    cr_assert_eq(hc_stream_until(fx.port, "/v1/launches/quiet/logs/stdout?follow=true", SFX_AUTH,
                                 "never-printed", 3000, &raw),
                 -1);
    cr_expect(strstr(raw, "HTTP/1.1 200") != NULL, "%s", raw);
    free(raw);
    {
        int fd = hc_open_get(fx.port, "/v1/launches/quiet/logs/stdout?follow=true", SFX_AUTH);
        int closed;
        char *got;

        cr_assert_geq(fd, 0);
        got = raw_read(fd, 3500, &closed);
        cr_expect_not(closed, "a quiet follow stream was closed by the idle limit: %s", got);
        free(got);
        close(fd);
    }
}

/* ---- many connections --------------------------------------------------- */

static void raise_nofile(rlim_t want)
{
    struct rlimit rl;

    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    }
    cr_assert_geq(rl.rlim_cur, want, "RLIMIT_NOFILE hard limit %llu is below %llu",
                  (unsigned long long)rl.rlim_max, (unsigned long long)want);
}

Test(hostile, a_thousand_concurrent_connections_and_others_are_still_served, .timeout = 180)
{
    enum { N = 1000 };
    static int fds[N];
    static const char part[] = "GET /v1/launches HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    int i, opened = 0;

    /* 1,000 client sockets plus the server's 1,000: past FD_SETSIZE, so
     * select() could not serve them. */
    raise_nofile(4 * N + 256);
    init_default();
    post_ok("crowd-1");
    for (i = 0; i < N; i++) {
        fds[i] = raw_connect(fx.port);
        cr_assert_geq(fds[i], 0, "connect %d: %s", i, strerror(errno));
        cr_assert_eq(raw_send(fds[i], part, strlen(part)), 0);
        opened++;
    }
    raw_sleep_ms(500);
    cr_expect_geq(sfx_metric(&fx, "sluice_http_connections"), N,
                  "the server holds every connection");
    served_quickly("/v1/launches/crowd-1", 200, 2.0);
    post_ok("crowd-2");
    /* The crowd finishes its requests: every one is answered. */
    for (i = 0; i < N; i += 50) {
        int closed;
        char *raw;
        cr_assert_eq(raw_send(fds[i], SFX_AUTH "Connection: close\r\n\r\n",
                              strlen(SFX_AUTH "Connection: close\r\n\r\n")),
                     0);
        raw = raw_read(fds[i], 5000, &closed);
        cr_expect_eq(status_of(raw), 200, "connection %d: %.200s", i, raw);
        free(raw);
    }
    for (i = 0; i < opened; i++)
        close(fds[i]);
    cr_expect(stored("crowd-1") && stored("crowd-2"));
}

Test(hostile, past_the_connection_limit_a_request_gets_503_then_service_resumes)
{
    static unsigned limit = 20;
    static const char whole[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\n" SFX_AUTH "\r\n";
    int fds[30], i, fd, closed;
    char *raw;

    start_with(small_limit, &limit);
    /* Callers' connections kept open after a whole request (slow heads
     * are counted apart: test_server_guard.c); those past the limit get
     * their 503 too. */
    /* One after the other, each answered before the next opens: so no
     * head waits beside another (trickled heads are test_server_guard.c's),
     * however busy the machine is. */
    for (i = 0; i < 30; i++) {
        struct pollfd p;
        cr_assert_geq(fds[i] = raw_connect(fx.port), 0);
        cr_assert_eq(raw_send(fds[i], whole, strlen(whole)), 0);
        p.fd = fds[i];
        p.events = POLLIN;
        p.revents = 0;
        cr_assert_eq(poll(&p, 1, 10000), 1, "connection %d was not answered", i);
    }
    fd = raw_connect(fx.port);
    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, "GET /v1/launches HTTP/1.1\r\nHost: x\r\n" SFX_AUTH "\r\n",
                          strlen("GET /v1/launches HTTP/1.1\r\nHost: x\r\n" SFX_AUTH "\r\n")),
                 0);
    raw = raw_read(fd, 3000, &closed);
    cr_expect_eq(status_of(raw), 503, "%s", raw);
    cr_expect(strstr(raw, "Retry-After: 1") != NULL, "%s", raw);
    cr_expect(strstr(raw, "\"status\":503") != NULL, "%s", raw);
    cr_expect(closed, "the refused connection stays open");
    free(raw);
    close(fd);
    for (i = 0; i < 30; i++)
        close(fds[i]);
    raw_sleep_ms(300);
    served_quickly("/v1/launches", 200, 2.0);
    cr_expect_geq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"busy\"}"), 1);
}

/* ---- bytes that are not text -------------------------------------------- */

static void expect_problem(const char *method,
                           const char *path,
                           const char *extra,
                           const char *body,
                           int status,
                           const char *field)
{
    hc_response_t r;
    json_t *j;

    cr_assert_eq(hc_request(fx.port, method, path, extra, body, body ? strlen(body) : 0, &r), 0,
                 "%s %s", method, path);
    cr_expect_eq(r.status, status, "%s %s: %d %s", method, path, r.status, r.body);
    j = json_loads(r.body, 0, NULL);
    cr_expect_not_null(j, "%s %s: not JSON: %s", method, path, r.body);
    if (j && field) {
        const char *got = json_string_value(json_object_get(j, "field"));
        cr_expect_str_eq(got ? got : "(none)", field, "%s %s: %s", method, path, r.body);
    }
    if (j)
        cr_expect_eq(json_integer_value(json_object_get(j, "status")), status);
    json_decref(j);
    hc_response_clear(&r);
}

Test(hostile, invalid_utf8_and_nul_get_400_naming_the_field, .init = init_default)
{
    char req[1024];

    post_ok("text-1");
    /* In a body string: the JSON path of that string. */
    sfx_request("utf8", "/bin/echo \xff\xfe", req, sizeof(req));
    expect_problem("POST", "/v1/launches", SFX_JSON_AUTH, req, 400, "pools[0].command");
    sfx_request("utf\xc0\xaf", "/bin/true", req, sizeof(req)); /* overlong '/' */
    expect_problem("POST", "/v1/launches", SFX_JSON_AUTH, req, 400, "launch_id");
    sfx_request("surrogate", "/bin/echo \xed\xa0\x80", req, sizeof(req));
    expect_problem("POST", "/v1/launches", SFX_JSON_AUTH, req, 400, "pools[0].command");
    /* In a key. */
    expect_problem("POST", "/v1/launches", SFX_JSON_AUTH, "{\"launch\xff\": 1}", 400, NULL);
    /* In the query. */
    expect_problem("GET", "/v1/launches?state=%ff", SFX_AUTH, NULL, 400, "state");
    expect_problem("GET", "/v1/launches?site=a%00b", SFX_AUTH, NULL, 400, "site");
    expect_problem("GET", "/v1/launches?study=%c3%28", SFX_AUTH, NULL, 400, "study");
    expect_problem("GET", "/v1/launches/text-1/logs/stdout?offset=%0a1", SFX_AUTH, NULL, 400,
                   "offset");
    expect_problem("GET", "/v1/events?after=%ff", SFX_AUTH, NULL, 400, "after");
    expect_problem("GET", "/v1/launches?%ff=1", SFX_AUTH, NULL, 400, "query");
    /* In ids, on every route with one. */
    expect_problem("GET", "/v1/launches/%ff%fe", SFX_AUTH, NULL, 400, "launch_id");
    expect_problem("DELETE", "/v1/launches/%ff", SFX_AUTH, NULL, 400, "launch_id");
    expect_problem("GET", "/v1/launches/text-1%00/logs/stdout", SFX_AUTH, NULL, 400, "launch_id");
    expect_problem("GET", "/v1/launches/text-1%00", SFX_AUTH, NULL, 400, "launch_id");
    expect_problem("DELETE", "/v1/launches/text-1%00x", SFX_AUTH, NULL, 400, "launch_id");
    expect_problem("GET", "/v1/launches/%e2%82/logs/stderr", SFX_AUTH, NULL, 400, "launch_id");
    /* Nothing was cancelled, nothing new was stored. */
    served_quickly("/v1/launches/text-1", 200, 2.0);
    cr_expect_not(stored("utf8") || stored("surrogate"));
}

/* ---- path traversal ----------------------------------------------------- */

static void plant(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs("PLANTED-SECRET\n", f);
    fclose(f);
}

Test(hostile, path_traversal_in_ids_never_reads_outside_the_store, .init = init_default)
{
    static const char *const ids[] = {
        "..",
        ".",
        "%2e%2e",
        "%2E%2E",
        "..%2f..%2fstdout",
        "%2e%2e%2f%2e%2e%2f%2e%2e%2fetc",
        "..%2F",
        "%2e%2e%5c%2e%2e",
        "%00",
        "..%00",
        "...",
        "....",
        "a%2f..%2f..",
        "%252e%252e",
        "..;",
        "~",
        "%2fetc%2fpasswd",
    };
    static const char *const tails[] = {"", "/logs/stdout", "/logs/stderr",
                                        "/logs/stdout?follow=true&offset=0"};
    char path[512], planted[512];
    size_t i, k;

    post_ok("real-1");
    /* Files a traversal would reach from <store>/artifacts/<id>/stdout.log
     * or from the staging directory. */
    snprintf(planted, sizeof(planted), "%s/stdout.log", fx.state);
    plant(planted);
    snprintf(planted, sizeof(planted), "%s/stderr.log", fx.tmp);
    plant(planted);
    snprintf(planted, sizeof(planted), "%s/artifacts", fx.state);
    mkdir(planted, 0700);
    snprintf(planted, sizeof(planted), "%s/artifacts/stdout.log", fx.state);
    plant(planted);
    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        for (k = 0; k < sizeof(tails) / sizeof(tails[0]); k++) {
            const char *methods[] = {"GET", "DELETE"};
            size_t m;
            for (m = 0; m < (k == 0 ? 2u : 1u); m++) {
                hc_response_t r;
                snprintf(path, sizeof(path), "/v1/launches/%s%s", ids[i], tails[k]);
                cr_assert_eq(hc_request(fx.port, methods[m], path, SFX_AUTH, NULL, 0, &r), 0, "%s",
                             path);
                cr_expect(r.status == 404 || r.status == 400, "%s %s: %d %s", methods[m], path,
                          r.status, r.body);
                cr_expect(strstr(r.body, "PLANTED") == NULL, "%s %s read a planted file",
                          methods[m], path);
                hc_response_clear(&r);
            }
        }
    }
    /* The real launch was never cancelled by a traversal. */
    {
        hc_response_t r;
        cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/real-1", SFX_AUTH, NULL, 0, &r), 0);
        cr_expect_eq(r.status, 200);
        cr_expect(strstr(r.body, "cancel-requested") == NULL, "%s", r.body);
        cr_expect(strstr(r.body, "cancel-asked") == NULL, "%s", r.body);
        hc_response_clear(&r);
    }
}

/* ---- wrong content, malformed JSON, unknown fields ---------------------- */

Test(hostile, wrong_bodies_get_4xx_problems, .init = init_default)
{
    static const struct {
        const char *ctype;
        const char *body;
        int status;
        const char *field;
    } cases[] = {
        {"text/plain", "{}", 415, NULL},
        {"application/x-www-form-urlencoded", "launch_id=x", 415, NULL},
        {"application/jsonx", "{}", 415, NULL},
        {"multipart/form-data; boundary=x", "--x--", 415, NULL},
        {"application/json", "", 400, NULL},
        {"application/json", "{", 400, NULL},
        {"application/json", "[]", 400, NULL},
        {"application/json", "\"text\"", 400, NULL},
        {"application/json", "{\"a\":1,\"a\":2}", 400, NULL},
        {"application/json", "{\"launch_id\": \"x\"} trailing", 400, NULL},
        {"application/json", "{\"launch_id\": 1e999}", 400, NULL},
        {"application/json; charset=utf-8", "{\"launch_id\": \"x\", \"bogus\": 1}", 422, "bogus"},
        {"application/json", "{\"launch_id\": \"../../etc\"}", 422, "launch_id"},
    };
    size_t i;
    char hdr[256];

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(hdr, sizeof(hdr), SFX_AUTH "Content-Type: %s\r\n", cases[i].ctype);
        expect_problem("POST", "/v1/launches", hdr, cases[i].body, cases[i].status, cases[i].field);
    }
    /* Deeply nested JSON does not crash the parser. */
    {
        size_t depth = 100000;
        char *deep = malloc(2 * depth + 1);
        hc_response_t r;
        cr_assert_not_null(deep);
        memset(deep, '[', depth);
        memset(deep + depth, ']', depth);
        deep[2 * depth] = '\0';
        cr_assert_eq(
            hc_request(fx.port, "POST", "/v1/launches", SFX_JSON_AUTH, deep, 2 * depth, &r), 0);
        cr_expect_eq(r.status, 400, "%d %s", r.status, r.body);
        hc_response_clear(&r);
        free(deep);
    }
    post_ok("after-bodies");
    cr_expect(stored("after-bodies"));
}

/* ---- header floods ------------------------------------------------------ */

Test(hostile, header_floods_are_refused_and_the_service_carries_on, .init = init_default)
{
    size_t big = 300 * 1024, i;
    char *flood = malloc(big + 256);
    int fd, closed;
    char *raw;

    cr_assert_not_null(flood);
    /* One huge header line. */
    fd = raw_connect(fx.port);
    cr_assert_geq(fd, 0);
    strcpy(flood, "GET /v1/launches HTTP/1.1\r\nHost: x\r\nX-Big: ");
    memset(flood + strlen(flood), 'a', big);
    flood[strlen("GET /v1/launches HTTP/1.1\r\nHost: x\r\nX-Big: ") + big] = '\0';
    strcat(flood, "\r\n\r\n");
    (void)raw_send(fd, flood, strlen(flood));
    raw = raw_read(fd, 5000, &closed);
    cr_expect(status_of(raw) >= 400 && status_of(raw) < 500, "huge header: %.200s", raw);
    cr_expect(closed);
    free(raw);
    close(fd);
    /* Many small headers. */
    fd = raw_connect(fx.port);
    cr_assert_geq(fd, 0);
    strcpy(flood, "GET /v1/launches HTTP/1.1\r\nHost: x\r\n");
    for (i = 0; strlen(flood) + 64 < big; i++)
        snprintf(flood + strlen(flood), 64, "X-H%zu: v\r\n", i);
    strcat(flood, "\r\n");
    (void)raw_send(fd, flood, strlen(flood));
    raw = raw_read(fd, 5000, &closed);
    cr_expect(status_of(raw) >= 400 && status_of(raw) < 500, "many headers: %.200s", raw);
    free(raw);
    close(fd);
    /* A huge request line. */
    fd = raw_connect(fx.port);
    cr_assert_geq(fd, 0);
    strcpy(flood, "GET /v1/launches/");
    memset(flood + strlen(flood), 'b', big);
    flood[strlen("GET /v1/launches/") + big] = '\0';
    strcat(flood, " HTTP/1.1\r\nHost: x\r\n\r\n");
    (void)raw_send(fd, flood, strlen(flood));
    raw = raw_read(fd, 5000, &closed);
    cr_expect(status_of(raw) >= 400 && status_of(raw) < 500, "huge URL: %.200s", raw);
    free(raw);
    close(fd);
    /* 100 KiB of a bearer token. */
    fd = raw_connect(fx.port);
    cr_assert_geq(fd, 0);
    strcpy(flood, "GET /v1/launches HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ");
    memset(flood + strlen(flood), 't', 100 * 1024);
    flood[strlen("GET /v1/launches HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + 100 * 1024] =
        '\0';
    strcat(flood, "\r\nConnection: close\r\n\r\n");
    (void)raw_send(fd, flood, strlen(flood));
    raw = raw_read(fd, 5000, &closed);
    cr_expect(status_of(raw) == 401 || status_of(raw) == 431 || status_of(raw) == 413,
              "long token: %.200s", raw);
    free(raw);
    close(fd);
    free(flood);
    post_ok("after-flood");
    served_quickly("/v1/launches/after-flood", 200, 2.0);
}

/* ---- everything at once ------------------------------------------------- */

static volatile int attack_stop;

static void *attacker(void *arg)
{
    int which = (int)(intptr_t)arg;

    while (!attack_stop) {
        int fd = raw_connect(fx.port), closed;
        char *raw;

        if (fd < 0)
            continue;
        if (which == 0) {
            static const char h[] = "POST /v1/launches HTTP/1.1\r\nHost: x\r\n" SFX_JSON_AUTH
                                    "Content-Length: 99999999\r\n\r\n";
            (void)raw_send(fd, h, strlen(h));
        } else if (which == 1) {
            static const char h[] =
                "POST /v1/launches HTTP/1.1\r\nHost: x\r\n" SFX_JSON_AUTH
                "Content-Length: 40\r\n\r\n{\"launch_id\": \"\xff\xfe\", \"x\": 1}        ";
            (void)raw_send(fd, h, strlen(h));
        } else {
            static const char h[] = "GET /v1/launches/%2e%2e/logs/stdout HTTP/1.1\r\nHost: x\r\n"
                                    "Connection: close\r\n" SFX_AUTH "\r\n";
            (void)raw_send(fd, h, strlen(h));
        }
        raw = raw_read(fd, 2000, &closed);
        free(raw);
        close(fd);
    }
    return NULL;
}

Test(hostile, under_attack_nothing_accepted_is_lost, .init = init_short)
{
    pthread_t t[3];
    char id[64], ids[256][64];
    size_t n, i, k;
    int j;

    attack_stop = 0;
    for (j = 0; j < 3; j++)
        cr_assert_eq(pthread_create(&t[j], NULL, attacker, (void *)(intptr_t)j), 0);
    for (i = 0; i < 30; i++) {
        snprintf(id, sizeof(id), "kept-%zu", i);
        post_ok(id);
        if (i % 10 == 9)
            cr_assert_eq(sluice_server_step(fx.server, NULL), SLUICE_OK);
    }
    attack_stop = 1;
    for (j = 0; j < 3; j++)
        pthread_join(t[j], NULL);
    n = stored_ids(ids, 256);
    cr_expect_eq(n, 30, "stored %zu launches", n);
    for (i = 0; i < 30; i++) {
        int found = 0;
        snprintf(id, sizeof(id), "kept-%zu", i);
        for (k = 0; k < n; k++)
            found |= strcmp(ids[k], id) == 0;
        cr_expect(found, "%s lost", id);
    }
    served_quickly("/v1/launches/kept-0", 200, 2.0);
}
