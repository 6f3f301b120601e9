/* SPDX-License-Identifier: Apache-2.0 */
/* test_server.c - the HTTP API on 127.0.0.1:<any> with a launcher over the
 * fake cluster: auth on every route, create/get/list/cancel, idempotency,
 * dry runs, error answers, logs with offsets and follow, SSE with resume,
 * health and metrics.  Only loopback traffic. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <grp.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "transport/http.h"
#include "access_capture.h"
#include "http_client.h"
#include "render_case.h"
#include "server_fixture.h"
#include "sluice_assert.h"

#define TOKEN SFX_TOKEN
#define AUTH SFX_AUTH
#define JSON_AUTH SFX_JSON_AUTH

/* The service on TCP with carol as an admin besides alice and bob, a
 * launcher on the real clock stepped by the tests, and retention limits. */
static server_fixture_t fx;

static volatile int slow_cycle_ms;

/* The launcher calls this at each submit kill point: a slow cycle. */
static bool slow_kill_point(void *arg, const char *point)
{
    (void)arg, (void)point;
    if (slow_cycle_ms > 0) {
        struct timespec ts = {slow_cycle_ms / 1000, (long)(slow_cycle_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return false;
}

static void with_slow_kill_point(sluice_launcher_opts_t *lo, void *arg)
{
    (void)arg;
    lo->kill_at = slow_kill_point;
}

static void with_retention(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->launches_max_age_s = 30 * 86400;
    so->logs_max_age_s = 90 * 86400;
}

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    o.extra_tokens = "carol tok-carol-0123456789abcdef admin\n";
    o.launcher_tweak = with_slow_kill_point;
    o.tweak = with_retention;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
    cr_assert_neq(fx.port, 0);
}

static void teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server, .init = setup, .fini = teardown, .timeout = 60);

static json_t *body_json(const hc_response_t *r)
{
    json_t *j = json_loads(r->body, 0, NULL);
    cr_assert_not_null(j, "not JSON: %s", r->body);
    return j;
}

static int post(const char *path, const char *id, const char *command, hc_response_t *r)
{
    char req[1024];
    sfx_request(id, command, req, sizeof(req));
    cr_assert_eq(hc_request(fx.port, "POST", path, JSON_AUTH, req, strlen(req), r), 0);
    return r->status;
}

static size_t count_events(const char *id, const char *name);

Test(server, every_route_but_healthz_refuses_missing_or_wrong_tokens)
{
    static const char *const routes[][2] = {
        {"GET", "/v1/launches"},
        {"POST", "/v1/launches"},
        {"GET", "/v1/launches/x"},
        {"DELETE", "/v1/launches/x"},
        {"GET", "/v1/launches/x/logs/stdout"},
        {"GET", "/v1/events"},
        {"GET", "/v1/readyz"},
        {"GET", "/v1/metrics"},
        {"GET", "/v1/nope"},
    };
    size_t i;
    hc_response_t r;

    for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        cr_assert_eq(hc_request(fx.port, routes[i][0], routes[i][1], NULL, NULL, 0, &r), 0);
        cr_expect_eq(r.status, 401, "%s %s without a token: %d", routes[i][0], routes[i][1],
                     r.status);
        hc_response_clear(&r);
        cr_assert_eq(hc_request(fx.port, routes[i][0], routes[i][1],
                                "Authorization: Bearer tok-alice-0123456789abcdeX\r\n", NULL, 0,
                                &r),
                     0);
        cr_expect_eq(r.status, 401, "%s %s with a wrong token: %d", routes[i][0], routes[i][1],
                     r.status);
        cr_expect(strstr(r.body, "\"status\":401") != NULL, "%s", r.body);
        hc_response_clear(&r);
        cr_assert_eq(hc_request(fx.port, routes[i][0], routes[i][1], "Authorization: Basic abc\r\n",
                                NULL, 0, &r),
                     0);
        cr_expect_eq(r.status, 401);
        hc_response_clear(&r);
    }
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/healthz", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
}

Test(server, create_get_list_cancel)
{
    hc_response_t r;
    json_t *j;
    char path[256];

    cr_assert_eq(post("/v1/launches", "run-1", "/bin/true", &r), 201, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "launch_id")), "run-1");
    cr_expect_str_eq(json_string_value(json_object_get(j, "state")), "ACCEPTED");
    cr_expect_null(json_object_get(j, "render"));
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(j, "events"), 0), "caller")),
                     "alice");
    json_decref(j);
    hc_response_clear(&r);

    cr_assert_sluice_ok(sluice_server_step(fx.server, NULL), &(sluice_error_t)SLUICE_ERROR_INIT);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/run-1", AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    j = body_json(&r);
    cr_expect_gt(json_array_size(json_object_get(j, "events")), 1);
    cr_expect_eq(json_array_size(json_object_get(j, "job_ids")), 1, "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);

    cr_assert_eq(post("/v1/launches", "run-2", "/bin/false", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches?limit=1&site=site-1", AUTH, NULL, 0, &r),
                 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    j = body_json(&r);
    cr_expect_eq(json_array_size(json_object_get(j, "items")), 1);
    cr_assert(json_is_string(json_object_get(j, "next_cursor")), "%s", r.body);
    snprintf(path, sizeof(path), "/v1/launches?limit=1&cursor=%s",
             json_string_value(json_object_get(j, "next_cursor")));
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", path, AUTH, NULL, 0, &r), 0);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(j, "items"), 0), "launch_id")),
                     "run-2");
    cr_expect(json_is_null(json_object_get(j, "next_cursor")));
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches?state=DONE", AUTH, NULL, 0, &r), 0);
    j = body_json(&r);
    cr_expect_eq(json_array_size(json_object_get(j, "items")), 0);
    json_decref(j);
    hc_response_clear(&r);

    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/run-1", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 202, "%s", r.body);
    /* the request is on record when the 202 is sent; the launcher carries
     * it out as its own cancel-requested on its next cycle */
    cr_expect(strstr(r.body, "cancel-asked") != NULL, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/run-1", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 202, "a repeated cancel is fine: %s", r.body);
    hc_response_clear(&r);
    cr_expect_eq(count_events("run-1", "cancel-asked"), 1, "a repeated cancel adds nothing");
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/nope", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/nope", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404);
    hc_response_clear(&r);
}

Test(server, post_is_idempotent_and_conflicts_on_a_different_body)
{
    hc_response_t r;

    cr_assert_eq(post("/v1/launches", "same", "/bin/true", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(post("/v1/launches", "same", "/bin/true", &r), 200, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(post("/v1/launches", "same", "/bin/false", &r), 409, "%s", r.body);
    cr_expect(strstr(r.body, "\"status\":409") != NULL);
    hc_response_clear(&r);
}

Test(server, dry_run_renders_without_storing)
{
    hc_response_t r;
    json_t *j;

    cr_assert_eq(post("/v1/launches?dry_run=true", "dry", "/bin/true", &r), 200, "%s", r.body);
    j = body_json(&r);
    cr_expect(json_is_true(json_object_get(j, "dry_run")));
    cr_expect(json_is_string(json_object_get(json_object_get(j, "render"), "script")));
    cr_expect(json_is_array(json_object_get(json_object_get(j, "render"), "jobs")));
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/dry", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404);
    hc_response_clear(&r);
}

Test(server, bad_requests_get_problem_objects)
{
    hc_response_t r;
    size_t big = SLUICE_SERVER_MAX_BODY + 1000;
    char *body = malloc(big);
    char hdr[64];

    cr_assert_not_null(body);
    memset(body, ' ', big);
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, body, big, &r), 0);
    cr_expect_eq(r.status, 413, "%d %s", r.status, r.body);
    hc_response_clear(&r);
    free(body);

    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", AUTH "Content-Type: text/plain\r\n",
                            "{}", 2, &r),
                 0);
    cr_expect_eq(r.status, 415);
    cr_expect_str_eq(hc_header(&r, "Content-Type", hdr, sizeof(hdr)), "application/problem+json");
    hc_response_clear(&r);

    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, "{\"launch_id\":", 13, &r),
                 0);
    cr_expect_eq(r.status, 400);
    cr_expect(strstr(r.body, "\"title\":\"Malformed JSON\"") != NULL, "%s", r.body);
    hc_response_clear(&r);

    cr_assert_eq(
        hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, "{\"launch_id\":\"x\"}", 17, &r), 0);
    cr_expect_eq(r.status, 422, "%s", r.body);
    cr_expect(strstr(r.body, "\"field\":\"") != NULL, "%s", r.body);
    hc_response_clear(&r);
    {
        char req[1200], *brace;
        sfx_request("unknown-field", "/bin/true", req, sizeof(req));
        brace = strrchr(req, '}');
        snprintf(brace, sizeof(req) - (size_t)(brace - req), ", \"bogus\": 1}");
        cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, req, strlen(req), &r),
                     0);
        cr_expect_eq(r.status, 422, "%s", r.body);
        cr_expect(strstr(r.body, "bogus") != NULL, "%s", r.body);
        hc_response_clear(&r);
    }
    {
        /* A study the service does not know (it has no study file): 422
         * naming the study, never a launch without it (issue 13). */
        char req[1200], *brace;
        sfx_request("unknown-study", "/bin/true", req, sizeof(req));
        brace = strrchr(req, '}');
        snprintf(brace, sizeof(req) - (size_t)(brace - req), ", \"study\": \"atlas\"}");
        cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, req, strlen(req), &r),
                     0);
        cr_expect_eq(r.status, 422, "%s", r.body);
        cr_expect(strstr(r.body, "\"field\":\"study\"") != NULL, "%s", r.body);
        cr_expect(strstr(r.body, "unknown study \\\"atlas\\\"") != NULL, "%s", r.body);
        hc_response_clear(&r);
    }

    cr_assert_eq(hc_request(fx.port, "GET", "/v1/nothing-here", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404);
    hc_response_clear(&r);
    /* An encoded slash is no separator: the id "..%2Fetc" is refused. */
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/..%2Fetc/logs/stdout", AUTH, NULL, 0, &r),
                 0);
    cr_expect_eq(r.status, 400, "%s", r.body);
    hc_response_clear(&r);

    cr_assert_eq(hc_request(fx.port, "PUT", "/v1/launches", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 405);
    cr_expect_str_eq(hc_header(&r, "Allow", hdr, sizeof(hdr)), "GET, POST");
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches/x", JSON_AUTH, "{}", 2, &r), 0);
    cr_expect_eq(r.status, 405);
    hc_response_clear(&r);
}

Test(server, logs_with_offset_and_follow)
{
    hc_response_t r;
    json_t *j;
    char path[1024], *raw = NULL;
    const char *staging;
    FILE *f;

    cr_assert_eq(post("/v1/launches?dry_run=true", "logged", "/bin/true", &r), 200);
    j = body_json(&r);
    staging = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "render"), "staging"), "service"));
    cr_assert_not_null(staging, "%s", r.body);
    snprintf(path, sizeof(path), "mkdir -p '%s'", staging);
    cr_assert_eq(system(path), 0);
    snprintf(path, sizeof(path), "%s/stdout.log", staging);
    json_decref(j);
    hc_response_clear(&r);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("hello world\n", f);
    fclose(f);
    cr_assert_eq(post("/v1/launches", "logged", "/bin/true", &r), 201);
    hc_response_clear(&r);

    cr_assert_eq(
        hc_request(fx.port, "GET", "/v1/launches/logged/logs/stdout?offset=6", AUTH, NULL, 0, &r),
        0);
    cr_expect_eq(r.status, 200);
    cr_expect_str_eq(r.body, "world\n");
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/logged/logs/stderr", AUTH, NULL, 0, &r),
                 0);
    cr_expect_eq(r.status, 200);
    cr_expect_eq(r.body_len, 0);
    hc_response_clear(&r);
    cr_assert_eq(
        hc_request(fx.port, "GET", "/v1/launches/logged/logs/stdout?offset=x", AUTH, NULL, 0, &r),
        0);
    cr_expect_eq(r.status, 400);
    hc_response_clear(&r);

    /* follow: the stream stays open and delivers what is there */
    cr_expect_eq(hc_stream_until(fx.port, "/v1/launches/logged/logs/stdout?follow=true&offset=6",
                                 AUTH, "world", 5000, &raw),
                 0, "%s", raw);
    free(raw);
}

/* A workload owns its staging: it swaps stdout.log for a symlink to the
 * service's API tokens file and stderr.log for a FIFO (issue 27).  The log
 * route reads neither: the symlink is 409 log-refused, not the file behind
 * it, and the FIFO answers at once (on main at 1ccc315 the first returned
 * the tokens and the second held the worker in open() forever), with the
 * service answering other requests meanwhile.  Neither is an empty 200
 * (issue 30: a log that cannot be read is an error). */
Test(server, logs_never_follow_a_symlink_nor_wait_on_a_fifo)
{
    hc_response_t r;
    json_t *j;
    char path[1024], *raw = NULL;
    const char *staging;

    cr_assert_eq(post("/v1/launches?dry_run=true", "swapped", "/bin/true", &r), 200);
    j = body_json(&r);
    staging = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "render"), "staging"), "service"));
    cr_assert_not_null(staging, "%s", r.body);
    snprintf(path, sizeof(path), "mkdir -p '%s'", staging);
    cr_assert_eq(system(path), 0);
    snprintf(path, sizeof(path), "%s/stdout.log", staging);
    cr_assert_eq(symlink(fx.tokens, path), 0, "%s", path);
    snprintf(path, sizeof(path), "%s/stderr.log", staging);
    cr_assert_eq(mkfifo(path, 0600), 0, "%s", path);
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(post("/v1/launches", "swapped", "/bin/true", &r), 201);
    hc_response_clear(&r);

    for (int round = 0; round < 3; round++) {
        cr_assert_eq(
            hc_request(fx.port, "GET", "/v1/launches/swapped/logs/stdout", AUTH, NULL, 0, &r), 0);
        cr_expect_eq(r.status, 409, "%d %s", r.status, r.body);
        cr_expect(strstr(r.body, "log-refused") != NULL && strstr(r.body, "symbolic link"), "%s",
                  r.body);
        cr_expect(strstr(r.body, "tok-") == NULL, "the symlink's target was served");
        hc_response_clear(&r);
        cr_assert_eq(
            hc_request(fx.port, "GET", "/v1/launches/swapped/logs/stderr", AUTH, NULL, 0, &r), 0);
        cr_expect_eq(r.status, 409);
        cr_expect(strstr(r.body, "not a regular file") != NULL, "%s", r.body);
        hc_response_clear(&r);
    }
    /* followed: refused at once too, and the service still answers */
    cr_expect_neq(hc_stream_until(fx.port, "/v1/launches/swapped/logs/stdout?follow=true", AUTH,
                                  "tok-", 1500, &raw),
                  0, "%s", raw ? raw : "");
    cr_expect(raw != NULL && strstr(raw, " 409 ") != NULL, "%s", raw ? raw : "");
    free(raw);
    raw = NULL;
    cr_expect_neq(hc_stream_until(fx.port, "/v1/launches/swapped/logs/stderr?follow=true", AUTH,
                                  "tok-", 1500, &raw),
                  0);
    cr_expect(raw != NULL && strstr(raw, " 409 ") != NULL, "the FIFO's stream did not answer");
    free(raw);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/healthz", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
}

Test(server, events_stream_in_order_and_resume)
{
    hc_response_t r;
    char *raw = NULL, *one, *two;

    cr_assert_eq(post("/v1/launches", "ev-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(post("/v1/launches", "ev-2", "/bin/true", &r), 201);
    hc_response_clear(&r);

    cr_assert_eq(hc_stream_until(fx.port, "/v1/events", AUTH, "id: 2\n", 5000, &raw), 0, "%s", raw);
    one = strstr(raw, "id: 1\nevent: accepted\n");
    two = strstr(raw, "id: 2\nevent: accepted\n");
    cr_expect(one && two && one < two, "%s", raw);
    cr_expect(strstr(raw, "text/event-stream") != NULL);
    cr_expect(strstr(raw, "\"launch_id\":\"ev-2\"") != NULL);
    free(raw);

    cr_assert_eq(
        hc_stream_until(fx.port, "/v1/events", AUTH "Last-Event-ID: 1\r\n", "id: 2\n", 5000, &raw),
        0, "%s", raw);
    cr_expect_null(strstr(raw, "id: 1\n"), "%s", raw);
    free(raw);

    /* a new transition reaches a waiting reader */
    cr_assert_sluice_ok(sluice_server_step(fx.server, NULL), &(sluice_error_t)SLUICE_ERROR_INIT);
    cr_assert_eq(hc_stream_until(fx.port, "/v1/events?after=2", AUTH, "id: 3\n", 5000, &raw), 0,
                 "%s", raw);
    free(raw);
}

Test(server, health_ready_and_metrics)
{
    hc_response_t r;

    cr_assert_eq(post("/v1/launches", "m-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    sluice_server_count_transition(fx.server);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/healthz", NULL, NULL, 0, &r), 0);
    cr_expect_str_eq(r.body, "{\"status\":\"ok\"}");
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/metrics", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    cr_expect(strstr(r.body, "sluice_launches{state=\"ACCEPTED\"} 1\n") != NULL, "%s", r.body);
    cr_expect(strstr(r.body, "sluice_transitions_total 1\n") != NULL, "%s", r.body);
    cr_expect(strstr(r.body, "# TYPE sluice_http_requests_total counter\n") != NULL);
    hc_response_clear(&r);
}

Test(server, refuses_non_loopback_and_open_tokens_files)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char tokens[256];

    sfx_server_opts(&fx, &so);
    snprintf(tokens, sizeof(tokens), "%s/tokens", fx.tmp);
    so.tokens_file = tokens;
    so.listen = "0.0.0.0:0";
    cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_EINVAL);
    cr_expect(strstr(err.text, "loopback") != NULL, "%s", err.text);
    so.listen = "127.0.0.1:0";
    chmod(tokens, 0640);
    cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_ECONFIG, "%s", err.text);
    cr_expect_null(other);
}

Test(server, unix_socket_needs_no_token_and_has_mode_0660)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    hc_response_t r;
    char sock[256], req[1024];
    struct stat st;
    json_t *j;

    sfx_server_opts(&fx, &so);
    snprintf(sock, sizeof(sock), "%s/api.sock", fx.tmp);
    so.socket_path = sock;
    so.getenv_fn = render_case_getenv;
    so.stat_fn = sfx_accept_image;
    cr_assert_sluice_ok(sluice_server_new(&other, &so, &err), &err);
    cr_assert_eq(stat(sock, &st), 0);
    cr_expect(S_ISSOCK(st.st_mode));
    cr_expect_eq(st.st_mode & 0777, 0660, "%o", st.st_mode & 0777);
    sfx_request("over-unix", "/bin/true", req, sizeof(req));
    cr_assert_eq(hc_request_unix(sock, "POST", "/v1/launches", "Content-Type: application/json\r\n",
                                 req, strlen(req), &r),
                 0);
    cr_expect_eq(r.status, 201, "%s", r.body);
    j = body_json(&r);
    {
        char me[80];
        struct passwd *pw = getpwuid(geteuid());
        snprintf(me, sizeof(me), "unix:%s", pw ? pw->pw_name : "?");
        cr_expect_str_eq(json_string_value(json_object_get(
                             json_array_get(json_object_get(j, "events"), 0), "caller")),
                         me);
        cr_expect_str_eq(json_string_value(json_object_get(j, "created_by")), me);
    }
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(hc_request_unix(sock, "GET", "/v1/launches/over-unix", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
    sluice_server_free(other);
    cr_expect_neq(access(sock, F_OK), 0);
}

Test(server, follow_ends_with_the_launch_and_cancel_is_audited)
{
    hc_response_t r;
    json_t *j, *ev;
    char path[512];
    size_t i;
    int saw_cancel = 0;
    FILE *f;

    cr_assert_eq(post("/v1/launches", "short", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/short", AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 202);
    hc_response_clear(&r);
    for (i = 0; i < 5; i++)
        cr_assert_sluice_ok(sluice_server_step(fx.server, NULL),
                            &(sluice_error_t)SLUICE_ERROR_INIT);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/short", AUTH, NULL, 0, &r), 0);
    j = body_json(&r);
    cr_expect(json_is_true(json_object_get(j, "terminal")), "%s", r.body);
    json_array_foreach(json_object_get(j, "events"), i, ev)
    {
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (name && strcmp(name, "cancel-requested") == 0) {
            saw_cancel = 1;
            cr_expect_str_eq(json_string_value(json_object_get(ev, "caller")), "alice");
        }
    }
    cr_expect(saw_cancel, "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);

    snprintf(path, sizeof(path), "mkdir -p '%s/state/artifacts/short'", fx.tmp);
    cr_assert_eq(system(path), 0);
    snprintf(path, sizeof(path), "%s/state/artifacts/short/stdout.log", fx.tmp);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("archived output\n", f);
    fclose(f);
    /* the whole stream arrives and the response ends */
    cr_assert_eq(
        hc_request(fx.port, "GET", "/v1/launches/short/logs/stdout?follow=true", AUTH, NULL, 0, &r),
        0);
    cr_expect_eq(r.status, 200);
    cr_expect_str_eq(r.body, "archived output\n");
    hc_response_clear(&r);
}

Test(server, many_open_streams_do_not_hold_the_workers)
{
    hc_response_t r;
    int fds[24];
    size_t i;

    cr_assert_eq(post("/v1/launches", "busy", "/bin/true", &r), 201);
    hc_response_clear(&r);
    /* more waiting readers than worker threads (4) */
    for (i = 0; i < 12; i++) {
        fds[i] = hc_open_get(fx.port, "/v1/events?after=99", AUTH);
        cr_assert_geq(fds[i], 0);
    }
    for (; i < 24; i++) {
        fds[i] = hc_open_get(fx.port, "/v1/launches/busy/logs/stdout?follow=true", AUTH);
        cr_assert_geq(fds[i], 0);
    }
    usleep(200 * 1000);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/busy", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
    for (i = 0; i < 24; i++)
        close(fds[i]);
}

static void *step_thread(void *arg)
{
    (void)arg;
    sluice_server_step(fx.server, NULL);
    return NULL;
}

Test(server, reads_do_not_wait_for_a_slow_launcher_cycle)
{
    hc_response_t r;
    pthread_t th;
    struct timespec t0, t1;
    long ms;

    cr_assert_eq(post("/v1/launches", "slow", "/bin/true", &r), 201);
    hc_response_clear(&r);
    slow_cycle_ms = 1500;
    cr_assert_eq(pthread_create(&th, NULL, step_thread, NULL), 0);
    usleep(200 * 1000); /* the cycle is now inside its submit */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/slow", AUTH, NULL, 0, &r), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
    ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    pthread_join(th, NULL);
    slow_cycle_ms = 0;
    cr_expect_lt(ms, 700, "GET took %ld ms during a slow cycle", ms);
}

Test(server, serve_command_answers_on_its_socket_and_stops_on_sigterm, .timeout = 90)
{
    const char *bin = getenv("SLUICE_BIN");
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char site[512], jwt[256], setjwt[300], setroot[300], state[256], sock[256];
    hc_response_t r;
    pid_t pid;
    int status = -1, i;
    FILE *f;

    if (bin == NULL || src == NULL)
        cr_skip_test("SLUICE_BIN and SLUICE_SOURCE_DIR are set by ctest");
    snprintf(site, sizeof(site), "%s/tests/golden/render/flower-gpu/site.yaml", src);
    snprintf(jwt, sizeof(jwt), "%s/jwt", fx.tmp);
    snprintf(setjwt, sizeof(setjwt), "rest.jwt_file=%s", jwt);
    snprintf(setroot, sizeof(setroot), "storage.root=%s/storage", fx.tmp);
    snprintf(state, sizeof(state), "%s/serve-state", fx.tmp);
    snprintf(sock, sizeof(sock), "%s/serve.sock", fx.tmp);
    f = fopen(jwt, "w");
    cr_assert_not_null(f);
    fputs("eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDAsInN1biI6InNsdWljZSJ9.x\n", f);
    fclose(f);
    chmod(jwt, 0600);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl(bin, bin, "serve", "--config", site, "--set", setjwt, "--set", setroot, "--state-dir",
              state, "--socket", sock, (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 200 && access(sock, F_OK) != 0; i++)
        usleep(50 * 1000);
    cr_assert_eq(access(sock, F_OK), 0, "the socket never appeared");
    cr_assert_eq(hc_request_unix(sock, "GET", "/v1/launches", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200, "%s", r.body);
    cr_expect_str_eq(r.body, "{\"items\":[],\"next_cursor\":null,\"resource_version\":0}");
    hc_response_clear(&r);
    kill(pid, SIGTERM);
    for (i = 0; i < 1200 && waitpid(pid, &status, WNOHANG) == 0; i++)
        usleep(50 * 1000);
    if (i == 1200) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        cr_assert_fail("sluice serve did not stop within 60 s of SIGTERM");
    }
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    cr_expect_neq(access(sock, F_OK), 0, "the socket was left behind");
}

/* ---- access: ownership, secrets, TLS, socket group, retention ---------- */

#define BOB "Authorization: Bearer " SFX_BOB_TOKEN "\r\n"
#define CAROL "Authorization: Bearer tok-carol-0123456789abcdef\r\n"

static size_t count_events(const char *id, const char *name)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL, *ev;
    size_t i, n = 0;

    cr_assert_sluice_ok(sluice_store_read_events(fx.store, id, 1, 0, &evs, &err), &err);
    json_array_foreach(evs, i, ev)
    {
        if (strcmp(json_string_value(json_object_get(ev, "name")), name) == 0)
            n++;
    }
    json_decref(evs);
    return n;
}

Test(server, only_the_creator_or_an_admin_may_cancel)
{
    hc_response_t r;
    json_t *j, *evs, *ev;
    size_t i;
    const char *cancel_by = NULL;

    cr_assert_eq(post("/v1/launches", "mine", "/bin/true", &r), 201, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "created_by")), "alice");
    json_decref(j);
    hc_response_clear(&r);

    /* bob may read alice's launch but not cancel it */
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/mine", BOB, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/mine", BOB, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 403, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "type")), "urn:sluice:problem:forbidden");
    cr_expect(strstr(json_string_value(json_object_get(j, "detail")), "created by alice") != NULL,
              "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    cr_expect_eq(count_events("mine", "cancel-asked"), 0);
    cr_expect_eq(count_events("mine", "cancel-requested"), 0);

    /* carol is an admin: her cancel goes through and is recorded as hers */
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/mine", CAROL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 202, "%s", r.body);
    j = body_json(&r);
    evs = json_object_get(j, "events");
    json_array_foreach(evs, i, ev)
    {
        if (strcmp(json_string_value(json_object_get(ev, "name")), "cancel-asked") == 0)
            cancel_by = json_string_value(json_object_get(ev, "caller"));
    }
    cr_expect_str_eq(cancel_by ? cancel_by : "(none)", "carol");
    json_decref(j);
    hc_response_clear(&r);

    /* a non-admin cancelling a launch of her own */
    cr_assert_eq(post("/v1/launches", "also-mine", "/bin/true", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/also-mine", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 202, "%s", r.body);
    hc_response_clear(&r);
    cr_expect_eq(count_events("also-mine", "cancel-asked"), 1);
}

Test(server, tokens_file_roles_and_names_are_checked)
{
    static const char *const bad[][2] = {
        {"alice tok-alice-0123456789abcdef root\n", "role: expected `admin`"},
        {"alice tok-alice-0123456789abcdef admin extra\n", "expected `<caller> <token> [admin]`"},
        {"unix:alice tok-alice-0123456789abcdef\n", "caller: expected"},
        {"al/ice tok-alice-0123456789abcdef\n", "caller: expected"},
    };
    char path[256];
    size_t i;

    snprintf(path, sizeof(path), "%s/bad-tokens", fx.tmp);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sluice_server_opts_t so;
        sluice_server_t *other = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        FILE *f = fopen(path, "w");

        cr_assert_not_null(f);
        fputs(bad[i][0], f);
        fclose(f);
        chmod(path, 0600);
        sfx_server_opts(&fx, &so);
        so.listen = "127.0.0.1:0";
        so.tokens_file = path;
        cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_EINVAL, "line %zu", i);
        cr_expect(strstr(err.text, bad[i][1]) != NULL, "%s", err.text);
        cr_expect(strstr(err.text, "0123456789") == NULL, "a token in the error: %s", err.text);
        sluice_server_free(other);
    }
}

static const char *secret_request(const char *id, char *buf, size_t size)
{
    snprintf(buf, size,
             "{\"launch_id\": \"%s\", \"site\": \"site-1\", \"profile\": \"none\", "
             "\"time_limit\": \"00:10:00\", \"partition\": \"gpu\", \"secrets\": {\"API_KEY\": "
             "\"do-not-leak-7f3a\"}, \"pools\": [{\"name\": \"main\", \"cpus_per_node\": 1, "
             "\"mem_per_node_mib\": 1024, \"command\": \"/bin/true\"}]}",
             id);
    return buf;
}

Test(server, secrets_are_refused_over_plain_tcp_and_accepted_on_the_socket)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    hc_response_t r;
    char req[1024], sock[256];
    json_t *j;

    secret_request("leaky", req, sizeof(req));
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, req, strlen(req), &r), 0);
    cr_expect_eq(r.status, 403, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "secrets");
    json_decref(j);
    cr_expect(strstr(r.body, "do-not-leak") == NULL);
    hc_response_clear(&r);
    /* a dry run carries the values just the same */
    cr_assert_eq(
        hc_request(fx.port, "POST", "/v1/launches?dry_run=true", JSON_AUTH, req, strlen(req), &r),
        0);
    cr_expect_eq(r.status, 403, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/leaky", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404, "nothing stored: %s", r.body);
    hc_response_clear(&r);

    sfx_server_opts(&fx, &so);
    snprintf(sock, sizeof(sock), "%s/secret.sock", fx.tmp);
    so.socket_path = sock;
    so.getenv_fn = render_case_getenv;
    so.stat_fn = sfx_accept_image;
    cr_assert_sluice_ok(sluice_server_new(&other, &so, &err), &err);
    secret_request("via-socket", req, sizeof(req));
    cr_assert_eq(hc_request_unix(sock, "POST", "/v1/launches", "Content-Type: application/json\r\n",
                                 req, strlen(req), &r),
                 0);
    cr_expect_eq(r.status, 201, "%s", r.body);
    cr_expect(strstr(r.body, "do-not-leak") == NULL);
    hc_response_clear(&r);
    sluice_server_free(other);
}

Test(server, socket_group_and_mode)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char sock[256];
    struct stat st;
    struct group *gr;
    gid_t groups[64];
    int n = getgroups(64, groups);
    gid_t want = n > 0 ? groups[n - 1] : getegid();

    gr = getgrgid(want);
    cr_assert_not_null(gr, "no name for gid %u", (unsigned)want);
    sfx_server_opts(&fx, &so);
    snprintf(sock, sizeof(sock), "%s/group.sock", fx.tmp);
    so.socket_path = sock;
    so.socket_group = gr->gr_name;
    so.socket_mode = 0640;
    cr_assert_sluice_ok(sluice_server_new(&other, &so, &err), &err);
    cr_assert_eq(stat(sock, &st), 0);
    cr_expect_eq(st.st_gid, want);
    cr_expect_eq(st.st_mode & 0777, 0640, "%o", st.st_mode & 0777);
    sluice_server_free(other);
    other = NULL;

    so.socket_group = "no-such-group-sluice";
    cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "socket group 'no-such-group-sluice'") != NULL, "%s", err.text);
    cr_expect_neq(access(sock, F_OK), 0, "no socket left behind");
    so.socket_group = NULL;
    so.socket_mode = 0666;
    cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_EINVAL);
    cr_expect(strstr(err.text, "accessible by others") != NULL, "%s", err.text);
    so.socket_mode = 0662;
    cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_EINVAL);
    cr_expect_null(other);
}

Test(server, plain_tcp_only_on_loopback)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char tokens[256];
    size_t i;
    static const char *const refused[] = {"192.0.2.1:0", "0.0.0.0:0", "[::]:0", "[2001:db8::1]:0"};

    snprintf(tokens, sizeof(tokens), "%s/tokens", fx.tmp);
    sfx_server_opts(&fx, &so);
    so.tokens_file = tokens;
    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        so.listen = refused[i];
        cr_expect_eq(sluice_server_new(&other, &so, &err), SLUICE_EINVAL, "%s", refused[i]);
        cr_expect(strstr(err.text, "not a loopback address") != NULL, "%s", err.text);
        cr_expect(strstr(err.text, "--tls-cert") != NULL, "%s", err.text);
        cr_expect_null(other);
    }
}

/* ---- TLS ------------------------------------------------------------------ */

/* A self-signed certificate for 127.0.0.1 (and its key) made by the
 * openssl CLI under tmp/<name>-{cert,key}.pem. */
static void make_cert(const char *name)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
             "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout '%s/%s-key.pem' "
             "-out '%s/%s-cert.pem' >/dev/null 2>&1 && chmod 600 '%s/%s-key.pem'",
             fx.tmp, name, fx.tmp, name, fx.tmp, name);
    cr_assert_eq(system(cmd), 0, "openssl could not make a certificate");
}

static sluice_err tls_server(const char *cert,
                             const char *key,
                             const char *listen,
                             sluice_server_t **out,
                             sluice_error_t *err)
{
    sluice_server_opts_t so;
    char tokens[256], c[256], k[256];

    snprintf(tokens, sizeof(tokens), "%s/tokens", fx.tmp);
    snprintf(c, sizeof(c), "%s/%s", fx.tmp, cert);
    snprintf(k, sizeof(k), "%s/%s", fx.tmp, key);
    sfx_server_opts(&fx, &so);
    so.listen = listen;
    so.tokens_file = tokens;
    so.tls_cert = c;
    so.tls_key = k;
    so.getenv_fn = render_case_getenv;
    so.stat_fn = sfx_accept_image;
    return sluice_server_new(out, &so, err);
}

/* One HTTPS exchange through sluice's own transport, verifying the server
 * against `ca` (a file under tmp). */
static sluice_err https(uint16_t p,
                        const char *ca,
                        http_method_t method,
                        const char *path,
                        const char *token,
                        const char *body,
                        http_response_t *resp,
                        sluice_error_t *err)
{
    http_opts_t ho;
    http_client_t *hc = NULL;
    http_request_t rq;
    char url[64], cafile[256], auth[128];
    const char *headers[3] = {NULL, NULL, NULL};
    size_t n = 0;
    sluice_err rc;

    snprintf(url, sizeof(url), "https://127.0.0.1:%u", (unsigned)p);
    snprintf(cafile, sizeof(cafile), "%s/%s", fx.tmp, ca);
    memset(&ho, 0, sizeof(ho));
    ho.base_url = url;
    ho.ca_file = cafile;
    if ((rc = http_client_new(&hc, &ho, err)) != SLUICE_OK)
        return rc;
    if (token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        headers[n++] = auth;
    }
    if (body)
        headers[n++] = "Content-Type: application/json";
    memset(&rq, 0, sizeof(rq));
    rq.method = method;
    rq.klass = HTTP_CLASS_QUERY;
    rq.path = path;
    rq.body = body;
    rq.headers = headers;
    rc = http_request(hc, &rq, resp, err);
    http_client_free(hc);
    return rc;
}

Test(server, tls_serves_verified_clients_and_refuses_plain_http)
{
    sluice_server_t *tls = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    http_response_t resp = HTTP_RESPONSE_INIT;
    hc_response_t r;
    uint16_t tp;
    char req[1024];
    static const char *const routes[][2] = {
        {"GET", "/v1/launches"},   {"POST", "/v1/launches"},
        {"GET", "/v1/launches/x"}, {"DELETE", "/v1/launches/x"},
        {"GET", "/v1/events"},     {"GET", "/v1/metrics"},
        {"GET", "/v1/readyz"},     {"GET", "/v1/launches/x/logs/stderr"},
    };
    size_t i;

    make_cert("a");
    make_cert("b");
    cr_assert_sluice_ok(tls_server("a-cert.pem", "a-key.pem", "127.0.0.1:0", &tls, &err), &err);
    tp = sluice_server_port(tls);
    cr_assert_neq(tp, 0);

    /* a client that trusts the certificate gets answers */
    cr_assert_sluice_ok(https(tp, "a-cert.pem", HTTP_GET, "/v1/launches", TOKEN, NULL, &resp, &err),
                        &err);
    cr_expect_eq(resp.status, 200, "%s", resp.body);
    http_response_free(&resp);
    cr_assert_sluice_ok(https(tp, "a-cert.pem", HTTP_GET, "/v1/healthz", NULL, NULL, &resp, &err),
                        &err);
    cr_expect_eq(resp.status, 200);
    http_response_free(&resp);

    /* every route but healthz wants a valid token over TLS too */
    for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        http_method_t m = strcmp(routes[i][0], "GET") == 0    ? HTTP_GET
                          : strcmp(routes[i][0], "POST") == 0 ? HTTP_POST
                                                              : HTTP_DELETE;
        cr_assert_sluice_ok(https(tp, "a-cert.pem", m, routes[i][1], NULL,
                                  m == HTTP_POST ? "{}" : NULL, &resp, &err),
                            &err);
        cr_expect_eq(resp.status, 401, "%s %s without a token", routes[i][0], routes[i][1]);
        http_response_free(&resp);
        cr_assert_sluice_ok(https(tp, "a-cert.pem", m, routes[i][1], "tok-alice-0123456789abcdeX",
                                  m == HTTP_POST ? "{}" : NULL, &resp, &err),
                            &err);
        cr_expect_eq(resp.status, 401, "%s %s with a wrong token", routes[i][0], routes[i][1]);
        http_response_free(&resp);
    }

    /* secrets are fine over TLS */
    secret_request("over-tls", req, sizeof(req));
    cr_assert_sluice_ok(https(tp, "a-cert.pem", HTTP_POST, "/v1/launches", TOKEN, req, &resp, &err),
                        &err);
    cr_expect_eq(resp.status, 201, "%s", resp.body);
    cr_expect(strstr(resp.body, "do-not-leak") == NULL);
    http_response_free(&resp);

    /* a client that trusts another CA refuses the server */
    cr_expect_eq(https(tp, "b-cert.pem", HTTP_GET, "/v1/healthz", NULL, NULL, &resp, &err),
                 SLUICE_ETRANSPORT);
    cr_expect_eq(resp.xfer, HTTP_XFER_TLS, "%s", http_xfer_name(resp.xfer));
    http_response_free(&resp);

    /* plain HTTP to the TLS port gets no HTTP answer */
    cr_expect_neq(hc_request(tp, "GET", "/v1/healthz", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 0);
    hc_response_clear(&r);

    /* the TLS server still serves after all that */
    cr_assert_sluice_ok(https(tp, "a-cert.pem", HTTP_GET, "/v1/healthz", NULL, NULL, &resp, &err),
                        &err);
    cr_expect_eq(resp.status, 200);
    http_response_free(&resp);
    sluice_server_free(tls);
}

Test(server, tls_setup_errors_name_the_file)
{
    sluice_server_t *tls = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[256];

    make_cert("a");
    make_cert("b");
    /* a key that belongs to another certificate */
    cr_expect_eq(tls_server("a-cert.pem", "b-key.pem", "127.0.0.1:0", &tls, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "a-cert.pem") && strstr(err.text, "b-key.pem"), "%s", err.text);
    cr_expect(strstr(err.text, "PRIVATE") == NULL, "%s", err.text);
    cr_expect_null(tls);
    /* missing file */
    cr_expect_eq(tls_server("nope.pem", "a-key.pem", "127.0.0.1:0", &tls, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "TLS certificate") && strstr(err.text, "nope.pem"), "%s", err.text);
    /* the key given as the certificate, and the certificate as the key */
    cr_expect_eq(tls_server("a-key.pem", "a-key.pem", "127.0.0.1:0", &tls, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "no PEM certificate") != NULL, "%s", err.text);
    snprintf(path, sizeof(path), "%s/a-cert.pem", fx.tmp);
    chmod(path, 0600);
    cr_expect_eq(tls_server("a-cert.pem", "a-cert.pem", "127.0.0.1:0", &tls, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "no PEM private key") != NULL, "%s", err.text);
    /* a key others may read */
    snprintf(path, sizeof(path), "%s/a-key.pem", fx.tmp);
    chmod(path, 0644);
    cr_expect_eq(tls_server("a-cert.pem", "a-key.pem", "127.0.0.1:0", &tls, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "readable by others") != NULL, "%s", err.text);
    chmod(path, 0600);
    /* with TLS a non-loopback address passes the address rule (this one is
     * not on the machine, so it then fails to bind: nothing listens) */
    cr_expect_eq(tls_server("a-cert.pem", "a-key.pem", "192.0.2.1:0", &tls, &err),
                 SLUICE_ETRANSPORT);
    cr_expect(strstr(err.text, "not a loopback") == NULL, "%s", err.text);
    cr_expect_null(tls);
}

/* ---- nodes and retention ------------------------------------------------ */

/* node_address_in: node1's address names the cluster it was asked in
 * (none: 127.0.0.11); node_address: the same without a cluster. */
static int cluster_address(void *arg, const char *cluster, const char *node, char *buf, size_t size)
{
    (void)arg;
    if (strcmp(node, "node1") != 0)
        return 0;
    if (cluster != NULL)
        snprintf(buf, size, "%s.node1", cluster);
    else
        snprintf(buf, size, "127.0.0.11");
    return 1;
}

static int fake_address(void *arg, const char *node, char *buf, size_t size)
{
    return cluster_address(arg, NULL, node, buf, size);
}

Test(server, launch_shows_nodes_and_addresses_per_component)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    hc_response_t r;
    char sock[256];
    json_t *j, *c0, *nodes;

    fake_stage_t running[] = {{SLUICE_JOB_RUNNING, 0, 0, 0, 100}};
    int i;

    fake_cluster_set_script(fx.fc, running, 1);
    cr_assert_eq(post("/v1/launches", "nodes-1", "/bin/sleep 100", &r), 201, "%s", r.body);
    j = body_json(&r);
    cr_expect_eq(json_array_size(json_object_get(j, "components")), 0, "no job yet: %s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    for (i = 0; i < 10 && count_events("nodes-1", "observed") == 0; i++) {
        cr_assert_sluice_ok(sluice_server_step(fx.server, &err), &err);
        fx.clock_ms += 5000;
    }

    sfx_server_opts(&fx, &so);
    snprintf(sock, sizeof(sock), "%s/nodes.sock", fx.tmp);
    so.socket_path = sock;
    so.node_address = fake_address;
    cr_assert_sluice_ok(sluice_server_new(&other, &so, &err), &err);
    cr_assert_eq(hc_request_unix(sock, "GET", "/v1/launches/nodes-1", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    j = body_json(&r);
    c0 = json_array_get(json_object_get(j, "components"), 0);
    cr_assert_not_null(c0, "%s", r.body);
    cr_expect_eq(json_integer_value(json_object_get(c0, "component")), 0);
    cr_expect(json_is_integer(json_object_get(c0, "job_id")), "%s", r.body);
    cr_expect_str_eq(json_string_value(json_object_get(c0, "nodelist")), "node[1-2]");
    nodes = json_object_get(c0, "nodes");
    cr_assert_eq(json_array_size(nodes), 2, "%s", r.body);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "name")), "node1");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "address")),
                     "127.0.0.11");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nodes, 1), "name")), "node2");
    cr_expect(json_is_null(json_object_get(json_array_get(nodes, 1), "address")), "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    sluice_server_free(other);
}

/* With several clusters a launch's node addresses come from its own
 * cluster's table (the launch's `cluster`; none: the first), never from
 * another cluster's, which may know a node of the same name. */
Test(server, node_addresses_come_from_the_launchs_cluster)
{
    sluice_server_opts_t so;
    sluice_server_t *other = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_launch_spec_t spec;
    hc_response_t r;
    char sock[256];
    const char *ids[] = {"in-west", "in-first"}, *want[] = {"west.node1", "127.0.0.11"};
    json_t *req = json_pack("{s:s}", "command", "/bin/true");
    json_t *obs = json_pack("{s:[{s:i s:s}]}", "jobs", "job_id", 7, "nodes", "node[1-2]");

    for (int i = 0; i < 2; i++) {
        memset(&spec, 0, sizeof(spec));
        spec.launch_id = ids[i];
        spec.site = "tb";
        spec.request = req;
        spec.cluster = i == 0 ? "west" : NULL;
        cr_assert_sluice_ok(sluice_store_create_launch(fx.store, &spec, NULL, &err), &err);
        cr_assert_sluice_ok(
            sluice_store_append_event(fx.store, ids[i], "observed", obs, NULL, 0, NULL, &err),
            &err);
    }
    sfx_server_opts(&fx, &so);
    snprintf(sock, sizeof(sock), "%s/cl.sock", fx.tmp);
    so.socket_path = sock;
    so.node_address = NULL; /* node_address_in alone */
    so.node_address_in = cluster_address;
    cr_assert_sluice_ok(sluice_server_new(&other, &so, &err), &err);
    for (int i = 0; i < 2; i++) {
        char path[128];
        json_t *j, *nodes;

        snprintf(path, sizeof(path), "/v1/launches/%s", ids[i]);
        cr_assert_eq(hc_request_unix(sock, "GET", path, NULL, NULL, 0, &r), 0);
        cr_assert_eq(r.status, 200, "%s", r.body);
        j = body_json(&r);
        nodes = json_object_get(json_array_get(json_object_get(j, "components"), 0), "nodes");
        cr_assert_eq(json_array_size(nodes), 2, "%s", r.body);
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(nodes, 0), "address")),
                         want[i], "%s", r.body);
        cr_expect(json_is_null(json_object_get(json_array_get(nodes, 1), "address")), "%s", r.body);
        json_decref(j);
        hc_response_clear(&r);
    }
    json_decref(req);
    json_decref(obs);
    sluice_server_free(other);
}

static void make_artifacts(const char *id, int64_t age_s)
{
    char path[512];
    struct timespec ts[2];
    FILE *f;

    snprintf(path, sizeof(path), "%s/artifacts", sluice_store_dir(fx.store));
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/artifacts/%s", sluice_store_dir(fx.store), id);
    cr_assert(mkdir(path, 0700) == 0 || errno == EEXIST);
    snprintf(path, sizeof(path), "%s/artifacts/%s/stdout.log", sluice_store_dir(fx.store), id);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("output\n", f);
    fclose(f);
    snprintf(path, sizeof(path), "%s/artifacts/%s", sluice_store_dir(fx.store), id);
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= age_s;
    ts[1] = ts[0];
    cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int artifacts_exist(const char *id)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/artifacts/%s", sluice_store_dir(fx.store), id);
    return access(path, F_OK) == 0;
}

Test(server, retention_prunes_only_finished_and_old)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    hc_response_t r;
    size_t nl = 99, ng = 99;
    int64_t now, day = 86400 * 1000LL;
    struct timespec ts;

    cr_assert_eq(post("/v1/launches", "done-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(post("/v1/launches", "live-1", "/bin/sleep 100", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/done-1", AUTH, NULL, 0, &r), 0);
    hc_response_clear(&r);
    cr_assert_sluice_ok(sluice_server_step(fx.server, &err), &err);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/done-1", AUTH, NULL, 0, &r), 0);
    cr_assert(strstr(r.body, "\"terminal\":true") != NULL, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/live-1", AUTH, NULL, 0, &r), 0);
    cr_assert(strstr(r.body, "\"terminal\":false") != NULL, "%s", r.body);
    hc_response_clear(&r);

    make_artifacts("done-1", 100 * 86400); /* old, launch finished: goes */
    make_artifacts("live-1", 100 * 86400); /* old, but its launch is live: stays */
    make_artifacts("gone-1", 100 * 86400); /* old, launch already pruned: goes */
    make_artifacts("fresh-1", 10 * 86400); /* young: stays */

    clock_gettime(CLOCK_REALTIME, &ts);
    now = (int64_t)ts.tv_sec * 1000;
    /* 29 days later nothing is old enough */
    cr_assert_sluice_ok(sluice_server_prune(fx.server, now + 29 * day, &nl, &ng, &err), &err);
    cr_expect_eq(nl, 0);
    cr_expect_eq(ng, 2, "the two 100-day-old finished log directories");
    cr_expect(!artifacts_exist("done-1") && !artifacts_exist("gone-1"));
    cr_expect(artifacts_exist("live-1") && artifacts_exist("fresh-1"));
    /* 31 days later the finished launch goes, the live one never does */
    cr_assert_sluice_ok(sluice_server_prune(fx.server, now + 31 * day, &nl, &ng, &err), &err);
    cr_expect_eq(nl, 1);
    cr_expect_eq(ng, 0);
    cr_assert_sluice_ok(sluice_server_prune(fx.server, now + 3650 * day, &nl, &ng, &err), &err);
    cr_expect_eq(nl, 0);
    cr_expect_eq(ng, 1, "fresh-1 after ten years");
    cr_expect(artifacts_exist("live-1"), "a live launch keeps its directory");
    cr_expect_eq(sfx_metric(&fx, "sluice_launches_pruned_total"), 1);
    cr_expect_eq(sfx_metric(&fx, "sluice_logs_pruned_total"), 3);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/done-1", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/live-1", AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 200);
    hc_response_clear(&r);
}

/* The access log: one info line per request, subsystem "access", with the
 * method, the path (no query), the status, the caller and the listener. */

Test(server, access_log_names_method_path_status_and_caller)
{
    hc_response_t r;
    int i, at;

    access_capture_start();
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/healthz", NULL, NULL, 0, &r), 0);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/nope?token=abc", JSON_AUTH, NULL, 0, &r),
                 0);
    cr_assert_eq(r.status, 400, "token is no query parameter of the route");
    hc_response_clear(&r);
    /* on_completed runs after the answer is sent: wait for both lines. */
    for (i = 0; i < 200 && access_find("/v1/launches/nope") < 0; i++)
        usleep(10000);
    sluice_log_set_records(NULL, SLUICE_LOG_WARNING, NULL);
    cr_assert_geq(access_find("GET /v1/healthz 200 caller=- via=tcp "), 0);
    at = access_find("GET /v1/launches/nope 400 caller=alice via=tcp ");
    cr_assert_geq(at, 0, "%s", access_line(-1));
    cr_assert_null(strstr(access_line(at), "token"), "%s", access_line(at));
}

/* /v1/readyz answers every check, ready or not; slurmrestd down fails only
 * readiness, and the store's reads keep working. */
static volatile int rest_down;
static volatile long long ttl_left = 3000;

static sluice_err fake_ready(void *arg, sluice_error_t *err)
{
    (void)arg;
    if (rest_down)
        return sluice_errorf(err, SLUICE_ETRANSPORT,
                             "GET /slurm/v0.0.43/ping: unavailable (not-sent): Failed to connect "
                             "to 127.0.0.1 port 1: Connection refused");
    return SLUICE_OK;
}

static int64_t fake_ttl(void *arg)
{
    (void)arg;
    return ttl_left;
}

static void with_ready_hooks(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->ready = fake_ready;
    so->token_ttl_s = fake_ttl;
}

static void ready_setup(void)
{
    char why[256];

    rest_down = 0;
    ttl_left = 3000;
    cr_assert_eq(sfx_start(&fx, with_ready_hooks, NULL, why, sizeof(why)), 0, "%s", why);
}

TestSuite(readyz, .init = ready_setup, .fini = teardown, .timeout = 60);

static json_t *ready_checks(int want_status)
{
    hc_response_t r;
    json_t *j, *checks;

    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, want_status, "%s", r.body);
    j = body_json(&r);
    hc_response_clear(&r);
    checks = json_incref(json_object_get(j, "checks"));
    cr_assert_not_null(checks);
    json_decref(j);
    return checks;
}

static const char *state_of(json_t *checks, const char *name)
{
    return json_string_value(json_object_get(json_object_get(checks, name), "state"));
}

Test(readyz, every_check_is_answered_and_reads_survive_slurmrestd_down)
{
    json_t *c = ready_checks(200);
    hc_response_t r;

    cr_assert_str_eq(state_of(c, "store"), "ok");
    cr_assert_str_eq(state_of(c, "slurmrestd"), "ok");
    cr_assert_str_eq(state_of(c, "token"), "ok");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(c, "token"), "expires_in_s")),
                 3000);
    json_decref(c);

    rest_down = 1;
    c = ready_checks(503);
    cr_assert_str_eq(state_of(c, "store"), "ok");
    cr_assert_str_eq(state_of(c, "slurmrestd"), "failed");
    cr_assert_not_null(
        strstr(json_string_value(json_object_get(json_object_get(c, "slurmrestd"), "detail")),
               "Connection refused"));
    cr_assert_str_eq(state_of(c, "token"), "ok");
    json_decref(c);
    /* The store's reads do not depend on slurmrestd. */
    cr_assert_eq(post("/v1/launches", "rd-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches", AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/rd-1", AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200);
    hc_response_clear(&r);

    rest_down = 0;
    ttl_left = 30;
    c = ready_checks(503);
    cr_assert_str_eq(state_of(c, "slurmrestd"), "ok");
    cr_assert_str_eq(state_of(c, "token"), "failed");
    json_decref(c);
}
