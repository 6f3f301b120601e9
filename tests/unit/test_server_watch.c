/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_watch.c - watching launches over `sluice serve`'s API on
 * 127.0.0.1:<any> with a launcher over the fake cluster: the per-launch
 * event stream (resume, since=now, 404, its end), the filters of
 * /v1/events, resource versions on list and get with ETag and
 * If-None-Match, Location on create, and 400 for bad list parameters.
 * Only loopback traffic. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "http_client.h"
#include "server_fixture.h"
#include "sluice_assert.h"

#define AUTH SFX_AUTH
#define JSON_AUTH SFX_JSON_AUTH

static server_fixture_t fx;

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_watch, .init = setup, .fini = teardown, .timeout = 60);

static json_t *body_json(const hc_response_t *r)
{
    json_t *j = json_loads(r->body, 0, NULL);
    cr_assert_not_null(j, "not JSON: %s", r->body);
    return j;
}

static int post(const char *id, const char *command, hc_response_t *r)
{
    char req[1024];

    sfx_request(id, command, req, sizeof(req));
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, req, strlen(req), r), 0);
    return r->status;
}

static void step(int n)
{
    while (n-- > 0)
        cr_assert_sluice_ok(sluice_server_step(fx.server, NULL),
                            &(sluice_error_t)SLUICE_ERROR_INIT);
}

/* GET `path` and answer its status; the body stays in *r. */
static int get(const char *path, const char *extra, hc_response_t *r)
{
    char hdr[512];

    snprintf(hdr, sizeof(hdr), "%s%s", AUTH, extra ? extra : "");
    cr_assert_eq(hc_request(fx.port, "GET", path, hdr, NULL, 0, r), 0, "%s", path);
    return r->status;
}

/* Cancel launch `id` and step the launcher until it is terminal. */
static void finish(const char *id)
{
    hc_response_t r;
    char path[256];
    int i;
    json_t *j;

    snprintf(path, sizeof(path), "/v1/launches/%s", id);
    cr_assert_eq(hc_request(fx.port, "DELETE", path, AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 202, "%s", r.body);
    hc_response_clear(&r);
    for (i = 0; i < 20; i++) {
        step(1);
        cr_assert_eq(get(path, NULL, &r), 200);
        j = body_json(&r);
        hc_response_clear(&r);
        if (json_is_true(json_object_get(j, "terminal"))) {
            json_decref(j);
            return;
        }
        json_decref(j);
    }
    cr_assert_fail("launch %s did not finish", id);
}

/* The `data:` objects of an SSE body, in order (new array); a last line
 * without its newline is left out. */
static json_t *frames(const char *body)
{
    json_t *arr = json_array();
    const char *p = body;

    while ((p = strstr(p, "data: ")) != NULL) {
        const char *end = strchr(p, '\n');
        json_t *ev;

        if (end == NULL)
            break; /* a frame cut by the end of a partial read */
        ev = json_loadb(p + 6, (size_t)(end - p - 6), 0, NULL);
        cr_assert_not_null(ev, "frame: %.*s", (int)(end - p), p);
        json_array_append_new(arr, ev);
        p = end;
    }
    return arr;
}

static int64_t jint(const json_t *o, const char *k)
{
    return (int64_t)json_integer_value(json_object_get(o, k));
}

static void expect_problem(const char *path, const char *field)
{
    hc_response_t r;
    json_t *j;

    cr_expect_eq(get(path, NULL, &r), 400, "%s: %s", path, r.body);
    j = body_json(&r);
    cr_expect(strstr(json_string_value(json_object_get(j, "type"))
                         ? json_string_value(json_object_get(j, "type"))
                         : "",
                     "invalid-query") != NULL,
              "%s: %s", path, r.body);
    cr_expect_str_eq(json_string_value(json_object_get(j, "field")), field, "%s: %s", path, r.body);
    json_decref(j);
    hc_response_clear(&r);
}

Test(server_watch, launch_stream_has_only_its_events_and_ends_when_done)
{
    hc_response_t r;
    json_t *evs, *view, *ev;
    size_t i;

    cr_assert_eq(post("w-1", "/bin/true", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(post("w-2", "/bin/true", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    step(2);
    finish("w-1");
    /* The launch is done: the whole stream arrives and the response ends. */
    cr_assert_eq(get("/v1/launches/w-1/events", NULL, &r), 200, "%s", r.body);
    evs = frames(r.body);
    hc_response_clear(&r);
    cr_assert_eq(get("/v1/launches/w-1", NULL, &r), 200);
    view = body_json(&r);
    hc_response_clear(&r);
    {
        /* every event of w-1 once, up to the one that made it DONE (the
         * first with that state); later ones (archived) are not streamed */
        json_t *log = json_object_get(view, "events");
        size_t n_done = 0;

        while (n_done < json_array_size(log) &&
               strcmp(json_string_value(json_object_get(json_array_get(log, n_done), "state")),
                      "DONE") != 0)
            n_done++;
        cr_assert_lt(n_done, json_array_size(log), "w-1 has a DONE event");
        cr_assert_eq(json_array_size(evs), n_done + 1, "%zu frames, DONE at %zu",
                     json_array_size(evs), n_done);
        cr_expect_eq(jint(json_array_get(evs, n_done), "gseq"),
                     jint(json_array_get(log, n_done), "gseq"));
    }
    json_array_foreach(evs, i, ev)
    {
        cr_expect_str_eq(json_string_value(json_object_get(ev, "launch_id")), "w-1");
        cr_expect_eq(jint(ev, "seq"), (int64_t)i + 1);
        if (i > 0)
            cr_expect_gt(jint(ev, "gseq"), jint(json_array_get(evs, i - 1), "gseq"));
    }
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(evs, 0), "state")),
                     "ACCEPTED");
    cr_expect_str_eq(
        json_string_value(json_object_get(json_array_get(evs, json_array_size(evs) - 1), "state")),
        "DONE", "the stream ends with the DONE event");
    json_decref(evs);
    json_decref(view);

    cr_expect_eq(get("/v1/launches/nope/events", NULL, &r), 404, "%s", r.body);
    hc_response_clear(&r);
}

Test(server_watch, launch_stream_resumes_after_last_event_id)
{
    hc_response_t r;
    json_t *evs, *ev;
    char hdr[64];
    int64_t second;
    size_t i;

    cr_assert_eq(post("r-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    step(2);
    finish("r-1");
    cr_assert_eq(get("/v1/launches/r-1/events", NULL, &r), 200);
    evs = frames(r.body);
    hc_response_clear(&r);
    cr_assert_geq(json_array_size(evs), 3);
    second = jint(json_array_get(evs, 1), "gseq");
    json_decref(evs);

    snprintf(hdr, sizeof(hdr), "Last-Event-ID: %lld\r\n", (long long)second);
    cr_assert_eq(get("/v1/launches/r-1/events", hdr, &r), 200);
    evs = frames(r.body);
    hc_response_clear(&r);
    cr_assert_gt(json_array_size(evs), 0);
    json_array_foreach(evs, i, ev) cr_expect_gt(jint(ev, "gseq"), second);
    cr_expect_eq(jint(json_array_get(evs, 0), "seq"), 3);
    json_decref(evs);

    snprintf(hdr, sizeof(hdr), "/v1/launches/r-1/events?after=%lld", (long long)second);
    cr_assert_eq(get(hdr, NULL, &r), 200);
    evs = frames(r.body);
    hc_response_clear(&r);
    cr_expect_eq(jint(json_array_get(evs, 0), "seq"), 3);
    json_decref(evs);

    /* since=now on a finished launch: nothing is left, the stream ends */
    cr_assert_eq(get("/v1/launches/r-1/events?since=now", NULL, &r), 200);
    cr_expect_null(strstr(r.body, "data: "), "%s", r.body);
    hc_response_clear(&r);
}

static void *finish_thread(void *arg)
{
    usleep(300 * 1000);
    finish(arg);
    return NULL;
}

Test(server_watch, launch_stream_since_now_waits_for_new_events)
{
    hc_response_t r;
    pthread_t th;
    json_t *evs;
    int64_t mark;

    cr_assert_eq(post("n-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    step(1);
    cr_assert_eq(get("/v1/launches?limit=1", NULL, &r), 200);
    evs = body_json(&r);
    mark = jint(evs, "resource_version");
    json_decref(evs);
    hc_response_clear(&r);
    cr_assert_gt(mark, 0);
    /* The stream waits (suspended) until the cancel's events arrive, then
     * ends with the launch. */
    cr_assert_eq(pthread_create(&th, NULL, finish_thread, "n-1"), 0);
    cr_assert_eq(get("/v1/launches/n-1/events?since=now", NULL, &r), 200);
    pthread_join(th, NULL);
    evs = frames(r.body);
    hc_response_clear(&r);
    cr_assert_gt(json_array_size(evs), 0);
    cr_expect_gt(jint(json_array_get(evs, 0), "gseq"), mark);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(evs, 0), "name")),
                     "cancel-asked");
    json_decref(evs);
}

Test(server_watch, global_stream_filters)
{
    hc_response_t r;
    char *raw = NULL;

    cr_assert_eq(post("f-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(post("f-2", "/bin/true", &r), 201);
    hc_response_clear(&r);
    step(1);
    /* f-1's events come first in gseq order; with the filter only f-2's */
    cr_assert_eq(hc_stream_until(fx.port, "/v1/events?launch_id=f-2", AUTH, "\n\n", 5000, &raw), 0,
                 "%s", raw);
    cr_expect_null(strstr(raw, "\"launch_id\":\"f-1\""), "%s", raw);
    cr_expect_not_null(strstr(raw, "\"launch_id\":\"f-2\""), "%s", raw);
    free(raw);
    cr_assert_eq(
        hc_stream_until(fx.port, "/v1/events?site=site-1&launch_id=f-1", AUTH, "\n\n", 5000, &raw),
        0, "%s", raw);
    cr_expect_not_null(strstr(raw, "\"launch_id\":\"f-1\""), "%s", raw);
    free(raw);
    /* no event of another site; the stream waits */
    cr_expect_neq(hc_stream_until(fx.port, "/v1/events?site=elsewhere", AUTH, "data: ", 500, &raw),
                  0, "%s", raw);
    free(raw);
    /* since=now: nothing old */
    cr_expect_neq(hc_stream_until(fx.port, "/v1/events?since=now", AUTH, "data: ", 500, &raw), 0,
                  "%s", raw);
    free(raw);

    expect_problem("/v1/events?launch_id=..", "launch_id");
    expect_problem("/v1/events?state=done", "state");
    expect_problem("/v1/events?site=", "site");
    expect_problem("/v1/events?since=yesterday", "since");
    expect_problem("/v1/events?since=now&after=3", "since");
    expect_problem("/v1/events?after=-1", "after");
    expect_problem("/v1/events?launchid=f-1", "launchid");
    expect_problem("/v1/launches/f-1/events?launch_id=f-2", "launch_id");
}

Test(server_watch, list_and_get_carry_the_resource_version)
{
    hc_response_t r;
    json_t *j, *evs;
    char etag[64], hdr[128], path[128];
    int64_t list_rv, get_rv;

    cr_assert_eq(post("v-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(post("v-2", "/bin/true", &r), 201);
    hc_response_clear(&r);
    step(1);

    cr_assert_eq(get("/v1/launches", NULL, &r), 200, "%s", r.body);
    j = body_json(&r);
    hc_response_clear(&r);
    cr_assert(json_is_integer(json_object_get(j, "resource_version")), "no resource_version");
    list_rv = jint(j, "resource_version");
    json_decref(j);

    cr_assert_eq(get("/v1/launches/v-1", NULL, &r), 200);
    j = body_json(&r);
    get_rv = jint(j, "resource_version");
    cr_assert_not_null(hc_header(&r, "ETag", etag, sizeof(etag)), "no ETag");
    snprintf(hdr, sizeof(hdr), "\"%lld\"", (long long)get_rv);
    cr_expect_str_eq(etag, hdr);
    cr_expect_leq(get_rv, list_rv);
    cr_expect_gt(get_rv, 0);
    json_decref(j);
    hc_response_clear(&r);

    /* the same version: 304 without a body (from the cache and not) */
    snprintf(hdr, sizeof(hdr), "If-None-Match: %s\r\n", etag);
    cr_expect_eq(get("/v1/launches/v-1", hdr, &r), 304);
    cr_expect_eq(r.body_len, 0);
    hc_response_clear(&r);
    cr_expect_eq(get("/v1/launches/v-1", "If-None-Match: \"1\", W/\"999\"\r\n", &r), 200);
    hc_response_clear(&r);

    /* the watch after the list gives exactly what came after it */
    finish("v-2");
    cr_assert_eq(get("/v1/launches/v-2/events", NULL, &r), 200);
    evs = frames(r.body);
    hc_response_clear(&r);
    snprintf(path, sizeof(path), "/v1/launches/v-2/events?after=%lld", (long long)list_rv);
    cr_assert_eq(get(path, NULL, &r), 200);
    {
        json_t *after = frames(r.body), *ev;
        size_t i, n = 0;

        json_array_foreach(evs, i, ev) n += jint(ev, "gseq") > list_rv;
        cr_expect_eq(json_array_size(after), n);
        cr_expect_gt(n, 0);
        json_decref(after);
    }
    json_decref(evs);
    hc_response_clear(&r);
    /* the stepping moved v-1 on too: the old tag no longer matches */
    cr_assert_eq(get("/v1/launches/v-1", NULL, &r), 200);
    j = body_json(&r);
    hc_response_clear(&r);
    cr_assert_gt(jint(j, "resource_version"), get_rv, "v-1 moved on");
    json_decref(j);
    cr_expect_eq(get("/v1/launches/v-1", hdr, &r), 200, "a changed launch is sent again");
    hc_response_clear(&r);
}

Test(server_watch, create_answers_carry_location)
{
    hc_response_t r;
    char loc[256];

    cr_assert_eq(post("loc-1", "/bin/true", &r), 201);
    cr_assert_not_null(hc_header(&r, "Location", loc, sizeof(loc)), "no Location");
    cr_expect_str_eq(loc, "/v1/launches/loc-1");
    hc_response_clear(&r);
    cr_assert_eq(post("loc-1", "/bin/true", &r), 200, "idempotent: %s", r.body);
    cr_assert_not_null(hc_header(&r, "Location", loc, sizeof(loc)), "no Location");
    cr_expect_str_eq(loc, "/v1/launches/loc-1");
    hc_response_clear(&r);
}

Test(server_watch, bad_list_parameters_are_400)
{
    expect_problem("/v1/launches?limit=0", "limit");
    expect_problem("/v1/launches?limit=1001", "limit");
    expect_problem("/v1/launches?limit=", "limit");
    expect_problem("/v1/launches?limit=ten", "limit");
    expect_problem("/v1/launches?state=running", "state");
    expect_problem("/v1/launches?state=NOPE", "state");
    expect_problem("/v1/launches?site=a%20b", "site");
    expect_problem("/v1/launches?study=", "study");
    expect_problem("/v1/launches?cursor=garbage", "cursor");
    expect_problem("/v1/launches?sort=name", "sort");
    expect_problem("/v1/launches/x/logs/stdout?ofset=3", "ofset");
}

Test(server_watch, global_stream_state_filter)
{
    hc_response_t r;
    char *raw = NULL;
    json_t *evs, *ev;
    size_t i;

    cr_assert_eq(post("s-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    cr_assert_eq(post("s-2", "/bin/true", &r), 201);
    hc_response_clear(&r);
    step(1);
    finish("s-1");
    cr_assert_eq(hc_stream_until(fx.port, "/v1/events?state=DONE&launch_id=s-1", AUTH,
                                 "\"name\":\"archived\"", 5000, &raw),
                 0, "%s", raw);
    evs = frames(raw);
    free(raw);
    /* s-1 (cancelled) and s-2 (completed by the fake cluster) are done;
     * only events with the launch DONE after them come, none before. */
    cr_assert_gt(json_array_size(evs), 0);
    json_array_foreach(evs, i, ev)
    {
        cr_expect_str_eq(json_string_value(json_object_get(ev, "state")), "DONE");
        cr_expect_str_eq(json_string_value(json_object_get(ev, "launch_id")), "s-1");
        cr_expect_neq(jint(ev, "seq"), 1, "accepted is not DONE");
    }
    json_decref(evs);
}

Test(server_watch, waiting_launch_streams_hold_no_worker)
{
    hc_response_t r;
    int fds[16];
    size_t i;

    cr_assert_eq(post("idle-1", "/bin/true", &r), 201);
    hc_response_clear(&r);
    /* more waiting watchers of a live launch than worker threads (4) */
    for (i = 0; i < 16; i++) {
        fds[i] = hc_open_get(fx.port, "/v1/launches/idle-1/events?since=now", AUTH);
        cr_assert_geq(fds[i], 0);
    }
    usleep(200 * 1000);
    cr_assert_eq(get("/v1/launches/idle-1", NULL, &r), 200);
    hc_response_clear(&r);
    /* each of them then gets the rest of the launch and its end */
    finish("idle-1");
    for (i = 0; i < 16; i++) {
        char buf[65536];
        size_t n = 0;
        ssize_t k;
        struct pollfd p = {fds[i], POLLIN, 0};

        while (n < sizeof(buf) - 1 && poll(&p, 1, 5000) == 1 &&
               (k = read(fds[i], buf + n, sizeof(buf) - 1 - n)) > 0)
            n += (size_t)k;
        buf[n] = '\0';
        cr_expect(strstr(buf, "HTTP/1.1 200") == buf, "watcher %zu: %.200s", i, buf);
        cr_expect_not_null(strstr(buf, "event: cancel-requested\n"), "watcher %zu", i);
        cr_expect_not_null(strstr(buf, "\"state\":\"DONE\""), "watcher %zu", i);
        close(fds[i]);
    }
}
