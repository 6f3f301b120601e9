/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_guard.c - the findings of issue 27 against `sluice serve`:
 * slow request heads neither lock out token holders nor the Unix socket
 * and are closed after head_timeout_s; TLS below 1.2 is refused; control
 * bytes never reach the access log raw; a NUL or anything after the token
 * in Authorization does not authenticate; an encoded slash is no path
 * separator; the tokens file's owner is checked.  Only loopback traffic. */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <criterion/criterion.h>

#include <sluice/log.h>
#include <sluice/server.h>

#include "http_client.h"
#include "access_capture.h"
#include "raw_socket.h"
#include "render_case.h"
#include "serve/server_access.h"
#include "server_fixture.h"

static server_fixture_t fx;

static void fini(void)
{
    sfx_stop(&fx);
}

TestSuite(guard, .fini = fini, .timeout = 120);

static void start_opts(const sfx_opts_t *o)
{
    char why[512] = "";

    cr_assert_eq(sfx_start_with(&fx, o, why, sizeof(why)), 0, "fixture: %s", why);
}

static void init_default(void)
{
    start_opts(NULL);
}

/* ---- raw sockets: tests/support/raw_socket.h ---------------------------- */

static int status_of(const char *raw)
{
    int st = -1;
    if (sscanf(raw, "HTTP/1.%*d %d", &st) != 1)
        return -1;
    return st;
}

/* ---- 1. slow request heads ---------------------------------------------- */

static void tight(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->max_connections = 20;
    so->conn_timeout_s = 30;
    so->head_timeout_s = 2;
}

Test(guard, slow_heads_lock_out_neither_the_socket_nor_a_token_holder)
{
    enum { N = 60 };
    static const char part[] = "GET /v1/launches HTT";
    sfx_opts_t o = {0};
    int fds[N], i, closed, still_open = 0;
    hc_response_t r;
    double t0;
    char *raw;

    o.socket = true;
    o.tweak = tight;
    start_opts(&o);
    /* Three times max_connections of clients that never finish their
     * request line and send no token. */
    for (i = 0; i < N; i++) {
        cr_assert_geq(fds[i] = raw_connect(fx.port), 0, "connect %d: %s", i, strerror(errno));
        cr_assert_eq(raw_send(fds[i], part, strlen(part)), 0);
    }
    raw_sleep_ms(300);
    /* The Unix socket has its own listener and limit. */
    cr_assert_eq(hc_request_unix(fx.sock, "GET", "/v1/launches", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200, "Unix socket under a TCP flood: %d %s", r.status, r.body);
    hc_response_clear(&r);
    /* A fresh TCP client with a token is served too. */
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches", SFX_AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200, "token holder under a flood of slow heads: %d %s", r.status,
                 r.body);
    hc_response_clear(&r);
    /* Every slow head is closed once head_timeout_s (2 s) has passed,
     * although conn_timeout_s is 30 s. */
    t0 = raw_now_s();
    for (i = 0; i < N; i++) {
        raw = raw_read(fds[i], (int)((t0 + 8.0 - raw_now_s()) * 1000), &closed);
        still_open += !closed;
        free(raw);
        close(fds[i]);
    }
    cr_expect_eq(still_open, 0, "%d of %d slow heads still open after 8 s", still_open, N);
    /* 40 made room for newer ones, the other 20 timed out. */
    cr_expect_geq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"head-evicted\"}"), N - 20);
    cr_expect_geq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"head-timeout\"}"), 1);
    cr_expect_eq(sfx_metric(&fx, "sluice_http_refused_total{reason=\"busy\"}"), 0);
}

Test(guard, a_trickled_head_is_closed_after_head_timeout_s)
{
    static const char head[] = "GET /v1/launches HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    sfx_opts_t o = {0};
    int fd, closed = 0, i;
    char *raw;

    o.tweak = tight;
    start_opts(&o);
    fd = raw_connect(fx.port);
    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, head, strlen(head)), 0);
    /* One byte every 250 ms: never idle, but the head never ends. */
    for (i = 0; i < 32 && !closed; i++) {
        if (raw_send(fd, "a", 1) != 0)
            break;
        raw = raw_read(fd, 250, &closed);
        free(raw);
    }
    cr_expect(closed || i < 32, "a trickled head was still open after 8 s");
    close(fd);
}

Test(guard, an_answer_without_a_caller_closes_the_connection, .init = init_default)
{
    static const char req[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\n\r\n";
    int fd = raw_connect(fx.port), closed;
    char *raw;

    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, req, strlen(req)), 0);
    raw = raw_read(fd, 5000, &closed);
    cr_expect_eq(status_of(raw), 401, "%s", raw);
    cr_expect(closed, "a connection without a token stays open after its 401");
    free(raw);
    close(fd);
}

/* ---- 2. TLS versions ---------------------------------------------------- */

/* `openssl s_client` with `args` (a version such as "-tls1_1", maybe a
 * cipher) against the TLS port: its exit status (0: the handshake worked). */
static int handshake(uint16_t port, const char *args)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd),
             "timeout 20 openssl s_client -connect 127.0.0.1:%u -cipher "
             "'DEFAULT:@SECLEVEL=0' %s "
             "</dev/null >/dev/null 2>&1",
             (unsigned)port, args);
    return system(cmd);
}

Test(guard, tls_below_1_2_is_refused, .init = init_default)
{
    sluice_server_opts_t so;
    sluice_server_t *tls = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char cmd[1024], cert[256], key[256];
    uint16_t tp;

    snprintf(cert, sizeof(cert), "%s/cert.pem", fx.tmp);
    snprintf(key, sizeof(key), "%s/key.pem", fx.tmp);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
             "-nodes -days 1 "
             "-subj /CN=127.0.0.1 -keyout '%s' -out '%s' >/dev/null 2>&1 && "
             "chmod 600 '%s'",
             key, cert, key);
    cr_assert_eq(system(cmd), 0, "openssl could not make a certificate");
    sfx_server_opts(&fx, &so);
    so.listen = "127.0.0.1:0";
    so.tokens_file = fx.tokens;
    so.tls_cert = cert;
    so.tls_key = key;
    so.getenv_fn = render_case_getenv;
    cr_assert_eq(sluice_server_new(&tls, &so, &err), SLUICE_OK, "%s", err.text);
    tp = sluice_server_port(tls);
    cr_expect_neq(handshake(tp, "-tls1"), 0, "a TLS 1.0 handshake worked");
    cr_expect_neq(handshake(tp, "-tls1_1"), 0, "a TLS 1.1 handshake worked");
    cr_expect_eq(handshake(tp, "-tls1_2"), 0, "a TLS 1.2 handshake failed");
    cr_expect_eq(handshake(tp, "-tls1_3"), 0, "a TLS 1.3 handshake failed");
    /* TLS 1.2 with only a CBC cipher or only RSA key exchange: refused. */
    cr_expect_neq(handshake(tp, "-tls1_2 -cipher ECDHE-ECDSA-AES128-SHA"), 0, "CBC accepted");
    cr_expect_neq(handshake(tp, "-tls1_2 -cipher AES128-GCM-SHA256"), 0, "RSA kx accepted");
    sluice_server_free(tls);
}

/* ---- 3. the access log -------------------------------------------------- */

/* One raw request of `len` bytes (it may hold NUL bytes); the status. */
static int raw_status(const char *req, size_t len)
{
    int fd = raw_connect(fx.port), closed, st;
    char *raw;

    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_send(fd, req, len), 0);
    raw = raw_read(fd, 5000, &closed);
    st = status_of(raw);
    free(raw);
    close(fd);
    return st;
}

Test(guard, the_access_log_escapes_control_bytes, .init = init_default)
{
    static const char req[] =
        "GET /v1/evil%1b%5b2J%0d%0afake%09line%7f%ff HTTP/1.1\r\nHost: x\r\n\r\n";
    const unsigned char *p;
    const char *line;
    int i, at;

    access_capture_start();
    cr_expect_eq(raw_status(req, strlen(req)), 401);
    for (i = 0; i < 200 && access_find("/v1/evil") < 0; i++)
        raw_sleep_ms(10);
    sluice_log_set_records(NULL, SLUICE_LOG_WARNING, NULL);
    at = access_find("/v1/evil");
    cr_assert_geq(at, 0, "no access line");
    line = access_line(at);
    for (p = (const unsigned char *)line; *p; p++)
        cr_expect(*p >= 0x20 && *p != 0x7f, "raw byte 0x%02x in the access line: %s", *p, line);
    cr_expect(strstr(line, "GET /v1/evil\\x1b[2J\\x0d\\x0afake\\x09line\\x7f\\xff 401 ") != NULL,
              "%s", line);
}

/* ---- 4. Authorization with a NUL or a tail ------------------------------ */

Test(guard, a_token_followed_by_a_nul_or_more_bytes_does_not_authenticate, .init = init_default)
{
    static const char good[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                               "Authorization: Bearer " SFX_TOKEN "\r\n\r\n";
    static const char nul[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                              "Authorization: Bearer " SFX_TOKEN "\0junk\r\n\r\n";
    static const char nul_end[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\n"
                                  "Authorization: Bearer " SFX_TOKEN "\0\r\n"
                                  "Connection: close\r\n\r\n";
    static const char nul_last[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\n"
                                   "Authorization: Bearer " SFX_TOKEN "\0junk\r\n"
                                   "Connection: close\r\n\r\n";
    static const char tail[] = "GET /v1/launches HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                               "Authorization: Bearer " SFX_TOKEN " junk\r\n\r\n";

    cr_expect_eq(raw_status(good, sizeof(good) - 1), 200);
    cr_expect_eq(raw_status(nul, sizeof(nul) - 1), 401, "a token, a NUL and junk authenticated");
    /* (A NUL that is the last byte of the last header line is cut unseen
     * by libmicrohttpd before 1.0: server.c, header_lengths.) */
    cr_expect_eq(raw_status(nul_end, sizeof(nul_end) - 1), 401, "a token and a NUL authenticated");
    cr_expect_eq(raw_status(nul_last, sizeof(nul_last) - 1), 401,
                 "a token, a NUL and junk before another header authenticated");
    cr_expect_eq(raw_status(tail, sizeof(tail) - 1), 401, "a token and a tail authenticated");
    cr_expect_eq(raw_status(good, sizeof(good) - 1), 200);
}

/* ---- 5. encoded slashes ------------------------------------------------- */

Test(guard, an_encoded_slash_is_no_path_separator, .init = init_default)
{
    static const struct {
        const char *path;
        int status;
    } cases[] = {
        {"/v1/launches/enc-1%2Flogs%2Fstdout", 400},
        {"/v1/launches/enc-1%2flogs%2fstdout", 400},
        {"/v1/launches/a%2Fb/logs/stdout", 400},
        {"/v1/launches/enc-1%2F", 400},
        {"/v1/launches%2Fenc-1", 404},
        {"/v1%2Flaunches", 404},
        {"/v1/launches/enc-1", 200},
        {"/v1/launches/enc-1/logs/stdout", 200},
    };
    hc_response_t r;
    size_t i;

    cr_assert_eq(sfx_post(&fx, "enc-1"), 201);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(hc_request(fx.port, "GET", cases[i].path, SFX_AUTH, NULL, 0, &r), 0);
        cr_expect_eq(r.status, cases[i].status, "GET %s: %d %s", cases[i].path, r.status, r.body);
        if (cases[i].status == 400)
            cr_expect(strstr(r.body, "\"field\":\"launch_id\"") != NULL, "GET %s: %s",
                      cases[i].path, r.body);
        hc_response_clear(&r);
    }
}

/* ---- 6. the tokens file's owner ----------------------------------------- */

Test(guard, a_tokens_file_owned_by_another_user_is_refused, .init = init_default)
{
    sluice_server_t *s;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[300];

    if (geteuid() != 0)
        cr_skip_test("needs root to give a file away");
    snprintf(path, sizeof(path), "%s/others-tokens", fx.tmp);
    cr_assert_eq(sfx_write_file(path, "alice " SFX_TOKEN "\n", 0600), 0);
    cr_assert_eq(chown(path, 12345, 12345), 0, "%s", strerror(errno));
    cr_assert_not_null(s = calloc(1, sizeof(*s)));
    cr_expect_eq(server_load_tokens(s, path, &err), SLUICE_ECONFIG, "%s", err.text);
    cr_expect(strstr(err.text, path) != NULL, "%s", err.text);
    cr_expect(strstr(err.text, "owned by uid 12345") != NULL, "%s", err.text);
    cr_expect(strstr(err.text, SFX_TOKEN) == NULL, "%s", err.text);
    server_access_free(s);
    free(s);
    /* Owned by the service's user (here root) it loads. */
    cr_assert_eq(chown(path, geteuid(), getegid()), 0);
    cr_assert_not_null(s = calloc(1, sizeof(*s)));
    cr_expect_eq(server_load_tokens(s, path, &err), SLUICE_OK, "%s", err.text);
    server_access_free(s);
    free(s);
}

/* ---- 7. problem slugs in docs/api.md ------------------------------------ */

/* Every slug the service answers with (`<status>, "<slug>"` in a call in
 * src/serve/) is in docs/api.md's table of problem types. */
Test(guard, docs_api_lists_every_problem_slug)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[512], *doc, *text, *p;
    DIR *d;
    struct dirent *e;
    FILE *f;
    long n;
    int seen = 0;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(path, sizeof(path), "%s/docs/api.md", src);
    cr_assert_not_null(f = fopen(path, "r"), "%s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    cr_assert_not_null(doc = calloc(1, (size_t)n + 1));
    cr_assert_eq(fread(doc, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    snprintf(path, sizeof(path), "%s/src/serve", src);
    cr_assert_not_null(d = opendir(path), "%s", path);
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/src/serve/%s", src, e->d_name);
        cr_assert_not_null(f = fopen(path, "r"), "%s", path);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        cr_assert_not_null(text = calloc(1, (size_t)n + 1));
        cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        /* `, 4xx, "slug"` or `, 5xx, "slug"` */
        for (p = text; (p = strstr(p, ", \"")) != NULL; p++) {
            char slug[64], row[80];
            size_t k = strspn(p + 3, "abcdefghijklmnopqrstuvwxyz0123456789-");
            if (p - text < 5 || (p[-4] != ' ' && p[-4] != '(') || (p[-3] != '4' && p[-3] != '5') ||
                strspn(p - 3, "0123456789") != 3 || p[3 + k] != '"' || k == 0 || k >= sizeof(slug))
                continue;
            memcpy(slug, p + 3, k);
            slug[k] = '\0';
            snprintf(row, sizeof(row), "| `%s` |", slug);
            cr_expect(strstr(doc, row) != NULL, "%s answers with %s, missing from docs/api.md",
                      e->d_name, slug);
            seen++;
        }
        free(text);
    }
    closedir(d);
    free(doc);
    cr_expect_geq(seen, 10, "found only %d problem answers in src/serve", seen);
}
