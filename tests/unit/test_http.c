/* SPDX-License-Identifier: Apache-2.0 */
/* test_http.c - the libcurl transport against the scripted fake slurmrestd.
 *
 * Only loopback addresses are ever contacted; the non-loopback cases only
 * check that the client refuses before sending anything.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <sluice/auth.h>
#include <sluice/log.h>

#include "base/urlsafe.h"
#include "fake_slurmrestd.h"
#include "transport/http.h"
#include "slurm/restclass.h"

#define TOKEN                                                                                      \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE3MDAwMDAwMDAsInN1biI6InUifQ."                 \
    "c2VjcmV0c2lnbmF0dXJl"

static fake_server_t *fs;
static http_client_t *client;

static void setup(void)
{
    fs = fake_start(0);
    cr_assert_not_null(fs);
}

static void teardown(void)
{
    http_client_free(client);
    client = NULL;
    fake_stop(fs);
    fs = NULL;
}

TestSuite(http, .init = setup, .fini = teardown, .timeout = 30);

static void make_client(const char *url, size_t max_response, long total_ms)
{
    http_opts_t o;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int i;

    memset(&o, 0, sizeof(o));
    o.base_url = url;
    o.max_response = max_response;
    for (i = 0; i < HTTP_CLASS_COUNT_; i++)
        o.timeouts[i].total_ms = total_ms;
    cr_assert_eq(http_client_new(&client, &o, &err), SLUICE_OK, "%s", err.text);
}

static const char *auth_headers[] = {"X-SLURM-USER-NAME: alice", "X-SLURM-USER-TOKEN: " TOKEN,
                                     NULL};

Test(http, get_sends_accept_and_auth_headers)
{
    fake_response_t r = {.status = 200, .body = "{\"jobs\":[]}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/slurm/v0.0.40/jobs", "job_id=1&job_id=2",
                          NULL,     auth_headers};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const fake_request_t *rec;
    char v[512];

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 200);
    cr_assert_str_eq(resp.body, "{\"jobs\":[]}");
    cr_assert_eq(resp.xfer, HTTP_XFER_OK);
    rec = fake_request(fs, 0);
    cr_assert_str_eq(rec->method, "GET");
    cr_assert_str_eq(rec->target, "/slurm/v0.0.40/jobs?job_id=1&job_id=2");
    cr_assert(fake_header(rec, "Accept", v, sizeof(v)));
    cr_assert_str_eq(v, "application/json");
    cr_assert(fake_header(rec, "X-SLURM-USER-NAME", v, sizeof(v)));
    cr_assert_str_eq(v, "alice");
    cr_assert(fake_header(rec, "X-SLURM-USER-TOKEN", v, sizeof(v)));
    cr_assert_str_eq(v, TOKEN);
    http_response_free(&resp);
}

Test(http, post_sends_json_body_with_content_type)
{
    fake_response_t r = {.status = 200, .body = "{\"job_id\":42}"};
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "/slurm/v0.0.40/job/submit",
                          NULL,      "{\"job\":{}}",    auth_headers};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const fake_request_t *rec;
    char v[256];

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    rec = fake_request(fs, 0);
    cr_assert_str_eq(rec->method, "POST");
    cr_assert_str_eq(rec->body, "{\"job\":{}}");
    cr_assert(fake_header(rec, "Content-Type", v, sizeof(v)));
    cr_assert_str_eq(v, "application/json");
    cr_assert(fake_header(rec, "Accept", v, sizeof(v)));
    cr_assert_str_eq(v, "application/json");
    http_response_free(&resp);
}

/* A webhook is posted to its URL, path included: the request path "" is
 * the base URL itself (supervise/webhooks.c); "/" keeps a trailing slash. */
Test(http, empty_path_posts_to_the_base_url_itself)
{
    fake_response_t r = {.status = 204, .body = ""};
    const char *hdrs[] = {"X-Sluice-Delivery: d-1", NULL};
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "", NULL, "{\"a\":1}", hdrs};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const fake_request_t *rec;
    char url[256], v[64];

    snprintf(url, sizeof(url), "%s/hooks/sluice", fake_url(fs));
    make_client(url, 0, 0);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 204);
    rec = fake_request(fs, 0);
    cr_assert_str_eq(rec->method, "POST");
    cr_assert_str_eq(rec->target, "/hooks/sluice");
    cr_assert_str_eq(rec->body, "{\"a\":1}");
    cr_assert(fake_header(rec, "X-Sluice-Delivery", v, sizeof(v)));
    cr_assert_str_eq(v, "d-1");
    http_response_free(&resp);
    req.path = "/";
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/hooks/sluice/");
    http_response_free(&resp);
    req.path = "hooks";
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_EINVAL);
}

/* exact_url (a webhook): the URL goes out byte for byte, curl rewrites no
 * dot segment, and a path or query is refused (issue 27: what the site's
 * prefix rule matched is what is sent). */
Test(http, an_exact_url_is_sent_byte_for_byte)
{
    fake_response_t r = {.status = 204, .body = ""};
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "", NULL, "{}", NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    http_opts_t o;
    char url[256];

    snprintf(url, sizeof(url), "%s/hooks/./a/../b/", fake_url(fs));
    memset(&o, 0, sizeof(o));
    o.base_url = url;
    o.exact_url = 1;
    cr_assert_eq(http_client_new(&client, &o, &err), SLUICE_OK, "%s", err.text);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(fake_request(fs, 0)->target, "/hooks/./a/../b/");
    http_response_free(&resp);
    req.path = "/x";
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_EINVAL);
    req.path = "";
    req.method = HTTP_GET;
    req.body = NULL;
    req.query = "a=1";
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_EINVAL);
    cr_assert_eq(fake_request_count(fs), 1);
}

Test(http, delete_uses_delete_method_and_reports_status)
{
    fake_response_t r = {.status = 404, .body = "{}"};
    http_request_t req = {HTTP_DELETE, HTTP_CLASS_CANCEL, "/slurm/v0.0.40/job/7", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 404);
    cr_assert_str_eq(fake_request(fs, 0)->method, "DELETE");
    http_response_free(&resp);
}

Test(http, body_and_query_together_are_refused)
{
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "/x", "a=1", "{}", NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 0);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_EINVAL);
    cr_assert_eq(resp.xfer, HTTP_XFER_REFUSED);
    cr_assert_eq(fake_request_count(fs), 0);
}

Test(http, response_over_the_cap_is_etoobig)
{
    fake_response_t r = {.status = 200, .body = "0123456789", .repeat_body = 1000};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/big", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 4096, 0);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_ETOOBIG, "%s", err.text);
    cr_assert_eq(resp.xfer, HTTP_XFER_TOO_BIG);
    cr_assert_null(resp.body);
    cr_assert_not_null(strstr(err.text, "4096"));
}

Test(http, timeout_after_send_is_uncertain)
{
    fake_response_t r = {.status = 200, .body = "{}", .delay_ms = 1500};
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "/slurm/v0.0.40/job/submit", NULL, "{}",
                          NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 300);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_ETIMEDOUT, "%s", err.text);
    cr_assert_eq(resp.xfer, HTTP_XFER_TIMEOUT);
    cr_assert(http_xfer_maybe_sent(resp.xfer));
    cr_assert_eq(fake_request_count(fs), 1);
}

Test(http, close_without_answer_is_uncertain)
{
    fake_response_t r = {.close_silently = 1};
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "/s", NULL, "{}", auth_headers};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_ETRANSPORT);
    cr_assert_eq(resp.xfer, HTTP_XFER_DROPPED, "%s", http_xfer_name(resp.xfer));
    cr_assert(http_xfer_maybe_sent(resp.xfer));
    cr_assert_null(strstr(err.text, TOKEN));
    cr_assert_null(strstr(err.text, "c2VjcmV0c2lnbmF0dXJl"));
}

Test(http, garbage_answer_is_a_transport_error)
{
    fake_response_t r = {.garbage = 1};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/g", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r);
    cr_assert_neq(http_request(client, &req, &resp, &err), SLUICE_OK);
    cr_assert_neq(resp.xfer, HTTP_XFER_OK);
    cr_assert(http_xfer_maybe_sent(resp.xfer));
}

Test(http, connection_refused_is_not_sent)
{
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "/s", NULL, "{}", NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char url[128];

    /* Stop the fake server so that its loopback port refuses connections. */
    snprintf(url, sizeof(url), "%s", fake_url(fs));
    fake_stop(fs);
    fs = NULL;
    make_client(url, 0, 0);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_ETRANSPORT);
    cr_assert_eq(resp.xfer, HTTP_XFER_NOT_SENT, "%s", http_xfer_name(resp.xfer));
    cr_assert_not(http_xfer_maybe_sent(resp.xfer));
    cr_assert_not_null(strstr(err.text, "not sent"));
}

Test(http, keep_alive_reuses_one_connection)
{
    fake_response_t r = {.status = 200, .body = "{}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/k", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int i;

    make_client(fake_url(fs), 0, 0);
    for (i = 0; i < 5; i++) {
        fake_push(fs, &r);
        cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
        http_response_free(&resp);
    }
    cr_assert_eq(fake_request_count(fs), 5);
    cr_assert_eq(fake_connection_count(fs), 1);
}

Test(http, connection_close_forces_a_new_connection)
{
    fake_response_t r1 = {.status = 500, .body = "{}", .close_after = 1};
    fake_response_t r2 = {.status = 200, .body = "{}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/k", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r1);
    fake_push(fs, &r2);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 500);
    http_response_free(&resp);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 200);
    http_response_free(&resp);
    cr_assert_eq(fake_connection_count(fs), 2);
}

Test(http, unix_socket_listener)
{
    fake_server_t *us = fake_start(1);
    fake_response_t r = {.status = 200, .body = "{\"ok\":true}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/slurm/v0.0.40/ping", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char v[64];

    cr_assert_not_null(us);
    cr_assert_eq(strncmp(fake_url(us), "unix:/", 6), 0);
    make_client(fake_url(us), 0, 0);
    fake_push(us, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 200);
    cr_assert(fake_header(fake_request(us, 0), "Host", v, sizeof(v)));
    cr_assert_str_eq(v, "localhost");
    http_response_free(&resp);
    http_client_free(client);
    client = NULL;
    fake_stop(us);
}

static int warned;

static void count_warnings(int level, const char *msg, void *arg)
{
    (void)msg;
    (void)arg;
    if (level == SLUICE_LOG_WARNING)
        warned++;
}

Test(http, plain_http_to_non_loopback_is_refused_without_opt_in)
{
    http_opts_t o;
    sluice_error_t err = SLUICE_ERROR_INIT;
    http_client_t *c = NULL;

    memset(&o, 0, sizeof(o));
    o.base_url = "http://slurm.example.org:6820";
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_EINVAL);
    cr_assert_null(c);
    cr_assert_str_eq(err.text, "plain http:// to non-loopback host 'slurm.example.org' refused "
                               "(tokens would travel in clear text; use https://)");
    /* The caller's names of the URL and of the opt-in, never "base_url". */
    o.url_name = "rest.url";
    o.insecure_name = "rest.allow_insecure_http";
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "rest.url: plain http:// to non-loopback host 'slurm.example.org' "
                               "refused (tokens would travel in clear text; use https:// or set "
                               "rest.allow_insecure_http)");
    o.base_url = "ftp://slurm.example.org";
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "rest.url: unsupported scheme 'ftp'");
    o.base_url = "unix:relative.sock";
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "rest.url: unix socket path must be absolute (unix:/path)");
    o.base_url = "http://10.1.2.3:6820";
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_EINVAL);

    /* The opt-in creates the client (nothing is sent) and warns. */
    sluice_log_set(count_warnings, SLUICE_LOG_DEBUG, NULL);
    o.allow_insecure_http = 1;
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(warned, 1);
    http_client_free(c);
    sluice_log_set(NULL, 0, NULL);
}

/* The one loopback rule (base/urlsafe.h), on a host as curl gives it. */
static int loopback(const char *h)
{
    return urlsafe_host_is_loopback(h, h != NULL ? strlen(h) : 0);
}

Test(http, loopback_hosts)
{
    cr_assert(loopback("127.0.0.1"));
    cr_assert(loopback("127.200.1.9"));
    cr_assert(loopback("localhost"));
    cr_assert(loopback("LOCALHOST"));
    cr_assert(loopback("[::1]"));
    cr_assert(loopback("::1"));
    cr_assert_not(loopback("128.0.0.1"));
    cr_assert_not(loopback("localhost.example.org"));
    cr_assert_not(loopback("127.0.0.1.nip.io"));
    cr_assert_not(loopback("127."));
    cr_assert_not(loopback("[::2]"));
    cr_assert_not(loopback("[]"));
    cr_assert_not(loopback(""));
    cr_assert_not(loopback(NULL));
    cr_assert(urlsafe_host_is_loopback("127.0.0.1:6820", 9), "only the n bytes given");
}

Test(http, tls_no_verify_warns)
{
    http_opts_t o;
    sluice_error_t err = SLUICE_ERROR_INIT;
    http_client_t *c = NULL;

    warned = 0;
    memset(&o, 0, sizeof(o));
    o.base_url = "https://127.0.0.1:6820";
    o.tls_no_verify = 1;
    sluice_log_set(count_warnings, SLUICE_LOG_DEBUG, NULL);
    cr_assert_eq(http_client_new(&c, &o, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(warned, 1);
    http_client_free(c);
    sluice_log_set(NULL, 0, NULL);
}

static char logged[65536];

static void capture(int level, const char *msg, void *arg)
{
    (void)level;
    (void)arg;
    strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
    strcat(logged, "\n");
}

Test(http, debug_output_never_contains_the_token)
{
    http_opts_t o;
    fake_response_t r = {.status = 401, .body = "Authentication failure"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/slurm/v0.0.40/jobs", NULL,
                          NULL,     auth_headers};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(&o, 0, sizeof(o));
    o.base_url = fake_url(fs);
    o.debug = 1;
    logged[0] = '\0';
    sluice_log_set(capture, SLUICE_LOG_DEBUG, NULL);
    cr_assert_eq(http_client_new(&client, &o, &err), SLUICE_OK, "%s", err.text);
    fake_push(fs, &r);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 401);
    http_response_free(&resp);
    sluice_log_set(NULL, 0, NULL);
    cr_assert_not_null(strstr(logged, "X-SLURM-USER-TOKEN"), "%s", logged);
    cr_assert_null(strstr(logged, "c2VjcmV0c2lnbmF0dXJl"), "%s", logged);
    cr_assert_null(strstr(logged, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"), "%s", logged);
}

Test(http, query_encoding_with_repeated_keys)
{
    buf_t b = BUF_INIT;

    cr_assert_eq(http_query_add(&b, "job_id", "1"), SLUICE_OK);
    cr_assert_eq(http_query_add(&b, "job_id", "2"), SLUICE_OK);
    cr_assert_eq(http_query_add(&b, "job_name", "a b&c=d/é"), SLUICE_OK);
    cr_assert_eq(http_query_add(&b, "flag", NULL), SLUICE_OK);
    cr_assert_str_eq(buf_str(&b), "job_id=1&job_id=2&job_name=a%20b%26c%3Dd%2F%C3%A9&flag");
    buf_free(&b);
}

Test(http, tls_handshake_failure_is_not_sent)
{
    http_request_t req = {HTTP_POST, HTTP_CLASS_SUBMIT, "/s", NULL, "{}", auth_headers};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char url[128];

    /* https:// to the plain-HTTP fake on loopback: the handshake fails. */
    snprintf(url, sizeof(url), "https://%s", fake_url(fs) + strlen("http://"));
    make_client(url, 0, 2000);
    cr_assert_neq(http_request(client, &req, &resp, &err), SLUICE_OK);
    cr_assert(resp.xfer == HTTP_XFER_TLS || resp.xfer == HTTP_XFER_NOT_SENT, "%s: %s",
              http_xfer_name(resp.xfer), err.text);
    cr_assert_not(http_xfer_maybe_sent(resp.xfer));
    cr_assert_eq(fake_request_count(fs), 0);
    cr_assert_null(strstr(err.text, "c2VjcmV0c2lnbmF0dXJl"));
}

struct worker {
    int ok;
};

static void *hammer(void *arg)
{
    struct worker *w = arg;
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/slurm/v0.0.40/jobs", NULL, NULL, NULL};
    int i;

    for (i = 0; i < 5; i++) {
        http_response_t resp = HTTP_RESPONSE_INIT;
        if (http_request(client, &req, &resp, NULL) == SLUICE_OK && resp.status == 200)
            w->ok++;
        http_response_free(&resp);
    }
    return NULL;
}

Test(http, concurrent_requests_share_one_client)
{
    fake_response_t r = {.status = 200, .body = "{}"};
    pthread_t t[4];
    struct worker w[4];
    int i, total = 0;

    make_client(fake_url(fs), 0, 0);
    for (i = 0; i < 20; i++)
        fake_push(fs, &r);
    for (i = 0; i < 4; i++) {
        w[i].ok = 0;
        cr_assert_eq(pthread_create(&t[i], NULL, hammer, &w[i]), 0);
    }
    for (i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        total += w[i].ok;
    }
    cr_assert_eq(total, 20);
    cr_assert_eq(fake_request_count(fs), 20);
    cr_assert_eq(fake_connection_count(fs), 1);
}

Test(http, auth_failure_invalidate_and_retry_with_a_rotated_token)
{
    char dir[] = "/tmp/sluice-http-XXXXXX";
    char path[128], tmp[140];
    const char *t1 = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDAsInN1biI6ImFsaWNlIn0.b2xkc2ln";
    const char *t2 = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDEsInN1biI6ImFsaWNlIn0.bmV3c2ln";
    fake_response_t r401 = {.status = 401, .body = "Authentication failure", .close_after = 1};
    fake_response_t r200 = {.status = 200, .body = "{\"jobs\":[]}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/slurm/v0.0.40/jobs", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    rest_outcome_t o;
    char **hdrs = NULL;
    char v[256];
    FILE *f;

    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/token", dir);
    snprintf(tmp, sizeof(tmp), "%s/token.new", dir);
    f = fopen(path, "w");
    fprintf(f, "SLURM_JWT=%s\n", t1);
    fclose(f);
    chmod(path, 0600);
    ao.kind = SLUICE_AUTH_TOKEN_FILE;
    ao.path = path;
    ao.user = "alice";
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r401);
    fake_push(fs, &r200);

    cr_assert_eq(sluice_auth_headers(auth, &hdrs, &err), SLUICE_OK, "%s", err.text);
    req.headers = (const char *const *)hdrs;
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    memset(&o, 0, sizeof(o));
    o.status = resp.status;
    o.xfer = resp.xfer;
    o.error_number = restclass_error_number(resp.body, resp.body_len);
    o.family = SLURM_FAMILY_24_11;
    o.authenticated = 1;
    cr_assert_eq(restclass_classify(&o), SLUICE_OUTCOME_AUTH);
    http_response_free(&resp);
    sluice_auth_headers_free(hdrs);

    /* The operator rotates the file; the AUTH outcome invalidates the cache. */
    f = fopen(tmp, "w");
    fprintf(f, "%s\n", t2);
    fclose(f);
    chmod(tmp, 0600);
    cr_assert_eq(rename(tmp, path), 0);
    sluice_auth_invalidate(auth);
    cr_assert_eq(sluice_auth_headers(auth, &hdrs, &err), SLUICE_OK, "%s", err.text);
    req.headers = (const char *const *)hdrs;
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 200);
    cr_assert(fake_header(fake_request(fs, 1), "X-SLURM-USER-TOKEN", v, sizeof(v)));
    cr_assert_str_eq(v, t2);
    cr_assert(fake_header(fake_request(fs, 1), "X-SLURM-USER-NAME", v, sizeof(v)));
    cr_assert_str_eq(v, "alice");
    http_response_free(&resp);
    sluice_auth_headers_free(hdrs);
    sluice_auth_free(auth);
    unlink(path);
    rmdir(dir);
}

Test(http, no_socket_reuse_after_an_error_status)
{
    fake_response_t r500 = {.status = 500, .body = "{}"};
    fake_response_t r200 = {.status = 200, .body = "{}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/k", NULL, NULL, NULL};
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(fake_url(fs), 0, 0);
    fake_push(fs, &r200);
    fake_push(fs, &r500);
    fake_push(fs, &r200);
    fake_push(fs, &r200);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    http_response_free(&resp);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(resp.status, 500);
    http_response_free(&resp);
    cr_assert_eq(fake_connection_count(fs), 1);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    http_response_free(&resp);
    cr_assert_eq(fake_connection_count(fs), 2);
    cr_assert_eq(http_request(client, &req, &resp, &err), SLUICE_OK, "%s", err.text);
    http_response_free(&resp);
    cr_assert_eq(fake_connection_count(fs), 2);
}

typedef struct {
    char got[256];
    size_t len;
    size_t calls;
    size_t stop_after; /* stop once this many bytes arrived; 0: never */
} stream_sink_t;

static int stream_cb(const char *data, size_t len, void *arg)
{
    stream_sink_t *s = arg;

    s->calls++;
    if (s->len + len < sizeof(s->got)) {
        memcpy(s->got + s->len, data, len);
        s->len += len;
        s->got[s->len] = '\0';
    }
    return s->stop_after > 0 && s->len >= s->stop_after;
}

Test(http, stream_hands_2xx_bytes_to_the_callback_and_buffers_problems)
{
    fake_response_t ok = {.status = 200, .body = "line one\nline two\n"};
    fake_response_t nf = {.status = 404, .body = "{\"title\":\"Not found\"}"};
    http_request_t req = {HTTP_GET, HTTP_CLASS_QUERY, "/v1/launches/x/logs/stdout", NULL, NULL,
                          NULL};
    http_stream_t st;
    stream_sink_t sink;
    http_response_t resp = HTTP_RESPONSE_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const fake_request_t *rec;
    char v[128];

    /* a 1-byte cap: a streamed answer is not held against it */
    make_client(fake_url(fs), 1, 0);
    memset(&st, 0, sizeof(st));
    memset(&sink, 0, sizeof(sink));
    st.on_data = stream_cb;
    st.arg = &sink;
    st.accept = "text/plain";
    fake_push(fs, &ok);
    cr_assert_eq(http_request_stream(client, &req, &st, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(resp.status, 200);
    cr_expect_str_eq(sink.got, "line one\nline two\n");
    cr_expect_eq(resp.body_len, 0);
    cr_expect_eq(st.stopped, 0);
    rec = fake_request(fs, 0);
    cr_assert_not_null(rec);
    cr_expect_eq(fake_header(rec, "Accept", v, sizeof(v)), 1);
    cr_expect_str_eq(v, "text/plain");
    http_response_free(&resp);
    http_client_free(client);
    client = NULL;

    /* a problem answer is buffered for the caller, the callback sees nothing */
    make_client(fake_url(fs), 0, 0);
    memset(&sink, 0, sizeof(sink));
    fake_push(fs, &nf);
    cr_assert_eq(http_request_stream(client, &req, &st, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(resp.status, 404);
    cr_expect_str_eq(resp.body, "{\"title\":\"Not found\"}");
    cr_expect_eq(sink.calls, 0);
    http_response_free(&resp);

    /* the callback may stop the stream: that is a success, marked stopped */
    memset(&sink, 0, sizeof(sink));
    sink.stop_after = 1;
    fake_push(fs, &ok);
    cr_assert_eq(http_request_stream(client, &req, &st, &resp, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(st.stopped, 1);
    cr_expect_eq(resp.status, 200);
    cr_expect_geq(sink.len, 1);
    http_response_free(&resp);
}
