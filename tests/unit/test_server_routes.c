/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_routes.c - the route table of `sluice serve`
 * (src/serve/server_routes.c) on its own, without libmicrohttpd: which
 * check answers first (public route, caller, query, launch id, route,
 * method) and the Allow lists.  Only answers that need no store are
 * asked for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "serve/server_access.h"
#include "serve/server_answer.h"
#include "serve/server_req.h"
#include "serve/server_routes.h"

static char dir[64];
static sluice_server_t *srv;

static void setup(void)
{
    char path[128];
    sluice_error_t err = SLUICE_ERROR_INIT;
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/sluice-routes-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/tokens", dir);
    cr_assert_not_null(f = fopen(path, "w"));
    fputs("alice 0123456789abcdef\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_not_null(srv = calloc(1, sizeof(*srv)));
    cr_assert_eq(server_load_tokens(srv, path, &err), SLUICE_OK, "%s", err.text);
}

static void teardown(void)
{
    char cmd[128];

    server_access_free(srv);
    free(srv);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(server_routes, .init = setup, .fini = teardown, .timeout = 10);

/* A header or query argument with its length as sent. */
#define KV(k, v)                                                                                   \
    {                                                                                              \
        k, v, sizeof(v) - 1                                                                        \
    }

static const req_kv_t auth[] = {KV("authorization", "Bearer 0123456789abcdef")};

/* Dispatch METHOD URL (with the token when `authed`, and the query `args`)
 * and check the status, the problem's detail and the Allow header. */
static void expect(const char *method,
                   const char *url,
                   int authed,
                   const req_kv_t *args,
                   size_t n_args,
                   unsigned status,
                   const char *detail,
                   const char *allow)
{
    req_t rq;
    answer_t a;
    json_t *j;
    const char *got_allow = NULL;
    size_t i;

    memset(&rq, 0, sizeof(rq));
    rq.method = method;
    rq.url = url;
    rq.headers = authed ? auth : NULL;
    rq.n_headers = authed ? 1 : 0;
    rq.args = args;
    rq.n_args = n_args;
    rq.peer_fd = -1;
    answer_init(&a);
    routes_dispatch(srv, &rq, &a);
    cr_assert_eq(a.kind, ANSWER_BUFFER, "%s %s", method, url);
    cr_assert_eq(a.status, status, "%s %s: %u", method, url, a.status);
    cr_assert_not_null(j = json_loadb(a.body, a.len, 0, NULL), "%s %s", method, url);
    if (detail)
        cr_assert_str_eq(json_string_value(json_object_get(j, "detail")), detail, "%s %s", method,
                         url);
    for (i = 0; i < a.n_headers; i++)
        if (strcmp(a.headers[i].name, "Allow") == 0)
            got_allow = a.headers[i].value;
    if (allow)
        cr_assert_str_eq(got_allow ? got_allow : "(none)", allow, "%s %s", method, url);
    else
        cr_assert_null(got_allow, "%s %s", method, url);
    json_decref(j);
    answer_clear(&a);
}

Test(server_routes, healthz_needs_no_caller)
{
    static const req_kv_t bad[] = {KV("x", "\x01")};

    expect("GET", "/v1/healthz", 0, bad, 1, 200, NULL, NULL);
    expect("POST", "/v1/healthz", 0, NULL, 0, 405, "Method not allowed", "GET");
}

Test(server_routes, every_other_path_needs_a_caller_first)
{
    expect("GET", "/v1/nothing", 0, NULL, 0, 401, NULL, NULL);
    expect("GET", "/v1/healthz/", 0, NULL, 0, 401, NULL, NULL);
    expect("PUT", "/v1/launches", 0, NULL, 0, 401, NULL, NULL);
}

Test(server_routes, query_text_before_the_route)
{
    static const req_kv_t bad[] = {KV("state", "ok"), KV("cursor", "a\x01")};

    expect("GET", "/v1/nothing", 1, bad, 2, 400, "query parameter cursor holds a control character",
           NULL);
}

Test(server_routes, unknown_paths_and_ids)
{
    expect("GET", "/v1/nothing", 1, NULL, 0, 404, "no such route", NULL);
    expect("GET", "/v1/launches/abc/", 1, NULL, 0, 404, "no such route", NULL);
    expect("GET", "/v1/launches/abc/logs/other", 1, NULL, 0, 404, "no such route", NULL);
    expect("GET", "/v1/launches/", 1, NULL, 0, 404, "no such launch", NULL);
    expect("GET", "/v1/launches/../x", 1, NULL, 0, 404, "no such launch", NULL);
    expect("GET", "/v1/launches/a%00b", 1, NULL, 0, 400,
           "the launch id in the path holds a NUL byte", NULL);
}

Test(server_routes, methods_in_table_order)
{
    expect("PUT", "/v1/launches", 1, NULL, 0, 405, NULL, "GET, POST");
    expect("POST", "/v1/launches/abc", 1, NULL, 0, 405, NULL, "GET, DELETE");
    expect("DELETE", "/v1/launches/abc/logs/stdout", 1, NULL, 0, 405, NULL, "GET");
    expect("POST", "/v1/events", 1, NULL, 0, 405, NULL, "GET");
    expect("HEAD", "/v1/readyz", 1, NULL, 0, 405, NULL, "GET");
}

Test(server_routes, unknown_query_parameters_are_400_on_every_route)
{
    static const req_kv_t bogus[] = {KV("bogus", "1")};
    static const req_kv_t filter[] = {KV("launch_id", "x")};
    static const req_kv_t mixed[] = {KV("offset", "3"), KV("FOLLOW", "1"), KV("ofset", "3")};

    expect("GET", "/v1/events", 1, bogus, 1, 400,
           "query parameter bogus is not known to GET /v1/events", NULL);
    expect("GET", "/v1/readyz", 1, bogus, 1, 400,
           "query parameter bogus is not known to GET /v1/readyz", NULL);
    expect("GET", "/v1/metrics", 1, bogus, 1, 400, NULL, NULL);
    expect("GET", "/v1/launches", 1, bogus, 1, 400, NULL, NULL);
    expect("POST", "/v1/launches", 1, bogus, 1, 400, NULL, NULL);
    expect("GET", "/v1/launches/abc", 1, bogus, 1, 400, NULL, NULL);
    expect("DELETE", "/v1/launches/abc", 1, bogus, 1, 400, NULL, NULL);
    expect("GET", "/v1/launches/abc/events", 1, filter, 1, 400,
           "query parameter launch_id is not known to GET /v1/launches/{id}/events", NULL);
    expect("GET", "/v1/launches/abc/logs/stderr", 1, mixed, 3, 400,
           "query parameter ofset is not known to GET /v1/launches/{id}/logs/stderr", NULL);
    /* the route's own checks still come first: no route, no method */
    expect("GET", "/v1/nothing", 1, bogus, 1, 404, "no such route", NULL);
    expect("PUT", "/v1/launches", 1, bogus, 1, 405, NULL, "GET, POST");
    /* a public route takes whatever it is given, as before */
    expect("GET", "/v1/healthz", 0, bogus, 1, 200, NULL, NULL);
}

Test(server_routes, the_launch_event_stream_has_a_route)
{
    expect("POST", "/v1/launches/abc/events", 1, NULL, 0, 405, NULL, "GET");
    expect("GET", "/v1/launches/abc/events/", 1, NULL, 0, 404, "no such route", NULL);
}
