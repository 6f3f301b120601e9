/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_ui.c - the status page's routes of `sluice serve`
 * (src/serve/server_ui.c, server_status.c) through a real server on
 * loopback: /ui answers the embedded page without a token and with the
 * strict CSP, nosniff, no referrer and an ETag (304 when it matches); an
 * unknown or escaping file is 404 (with the CSP too); the page holds no
 * inline script, style or handler (the CSP would refuse them); GET
 * /v1/status needs the token and has the contract's shape, its poll
 * numbers moving with real launcher cycles, its slurmrestd and token
 * entries from the cluster hooks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/version.h>

#include "http_client.h"
#include "serve/server_assets.h"
#include "serve/server_ui.h"
#include "server_fixture.h"

static server_fixture_t fx;
static int ready_fails;

static sluice_err fake_ready(void *arg, sluice_error_t *err)
{
    (void)arg;
    if (ready_fails)
        return sluice_errorf(err, SLUICE_ETRANSPORT, "Failed to connect to 127.0.0.1 port 1");
    return SLUICE_OK;
}

static int64_t fake_ttl(void *arg)
{
    (void)arg;
    return 5400;
}

static void hooks(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->ready = fake_ready;
    so->token_ttl_s = fake_ttl;
}

static void init(void)
{
    char why[512] = "";
    ready_fails = 0;
    cr_assert_eq(sfx_start(&fx, hooks, NULL, why, sizeof(why)), 0, "fixture: %s", why);
}

static void fini(void)
{
    sfx_stop(&fx);
}

TestSuite(server_ui, .init = init, .fini = fini, .timeout = 60);

static void get(const char *path, const char *extra, hc_response_t *r)
{
    cr_assert_eq(hc_request(fx.port, "GET", path, extra, NULL, 0, r), 0, "GET %s", path);
}

static void expect_header(const hc_response_t *r, const char *name, const char *want)
{
    char buf[512];
    const char *got = hc_header(r, name, buf, sizeof(buf));

    cr_assert_not_null(got, "no %s header", name);
    cr_assert_str_eq(got, want, "%s", name);
}

static void expect_strict(const hc_response_t *r)
{
    expect_header(r, "Content-Security-Policy",
                  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                  "img-src 'self' data:; base-uri 'none'; form-action 'none'; "
                  "frame-ancestors 'none'");
    expect_header(r, "X-Content-Type-Options", "nosniff");
    expect_header(r, "Referrer-Policy", "no-referrer");
}

Test(server_ui, the_page_needs_no_token_and_carries_the_csp)
{
    const char *paths[] = {"/ui", "/ui/"};
    size_t i;

    for (i = 0; i < 2; i++) {
        hc_response_t r;
        char etag[128];
        get(paths[i], NULL, &r);
        cr_assert_eq(r.status, 200, "%s: %d", paths[i], r.status);
        expect_header(&r, "Content-Type", "text/html; charset=utf-8");
        expect_strict(&r);
        expect_header(&r, "Cache-Control", "no-cache");
        cr_assert_not_null(hc_header(&r, "ETag", etag, sizeof(etag)));
        cr_assert_eq(etag[0], '"');
        cr_assert_not_null(strstr(r.body, "<script src=\"/ui/app.js\""), "%s", r.body);
        cr_assert_eq(r.body_len, server_asset_find("src/serve/ui/index.html")->len);
        hc_response_clear(&r);
    }
}

Test(server_ui, assets_have_their_type_and_a_matching_etag_is_304)
{
    hc_response_t r;
    char etag[128], extra[256];

    get("/ui/app.js", NULL, &r);
    cr_assert_eq(r.status, 200);
    expect_header(&r, "Content-Type", "text/javascript; charset=utf-8");
    expect_strict(&r);
    cr_assert_not_null(hc_header(&r, "ETag", etag, sizeof(etag)));
    hc_response_clear(&r);

    snprintf(extra, sizeof(extra), "If-None-Match: %s\r\n", etag);
    get("/ui/app.js", extra, &r);
    cr_assert_eq(r.status, 304);
    cr_assert_eq(r.body_len, 0);
    expect_header(&r, "ETag", etag);
    hc_response_clear(&r);

    get("/ui/app.js", "If-None-Match: \"ui-0000000000000000\"\r\n", &r);
    cr_assert_eq(r.status, 200);
    hc_response_clear(&r);

    get("/ui/app.css", NULL, &r);
    cr_assert_eq(r.status, 200);
    expect_header(&r, "Content-Type", "text/css; charset=utf-8");
    hc_response_clear(&r);
}

Test(server_ui, unknown_or_escaping_files_are_404)
{
    const char *paths[] = {"/ui/nope.js", "/ui/..",         "/ui/../openapi/sluice-v1.yaml",
                           "/ui/.hidden", "/ui/sub/app.js", "/ui//app.js"};
    size_t i;
    hc_response_t r;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        get(paths[i], NULL, &r);
        cr_assert_eq(r.status, 404, "%s: %d", paths[i], r.status);
        expect_strict(&r);
        hc_response_clear(&r);
    }
    cr_assert_eq(hc_request(fx.port, "POST", "/ui", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 405);
    hc_response_clear(&r);
    /* a path that only starts like the page is not the page: it needs a token */
    get("/uix", NULL, &r);
    cr_assert_eq(r.status, 401);
    hc_response_clear(&r);
}

/* The CSP allows no inline script, style or event handler: the page must
 * not hold any, or the browser refuses it. */
Test(server_ui, the_page_has_nothing_inline)
{
    const server_asset_t *a = server_asset_find("src/serve/ui/index.html");
    const char *p;

    cr_assert_not_null(a);
    for (p = strstr((const char *)a->data, "<script"); p; p = strstr(p + 1, "<script"))
        cr_assert_eq(strncmp(p, "<script src=", 12), 0, "an inline script: %.40s", p);
    cr_assert_null(strstr((const char *)a->data, "<style"));
    cr_assert_null(strstr((const char *)a->data, " style="));
    cr_assert_null(strstr((const char *)a->data, " onclick="));
    cr_assert_null(strstr((const char *)a->data, " onload="));
    cr_assert_null(strstr((const char *)a->data, "http://"), "no remote resource");
    cr_assert_null(strstr((const char *)a->data, "https://"), "no remote resource");
}

static json_t *status(void)
{
    hc_response_t r;
    json_t *j;

    get("/v1/status", SFX_AUTH, &r);
    cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
    expect_header(&r, "Content-Type", "application/json");
    cr_assert_not_null(j = json_loads(r.body, 0, NULL), "%s", r.body);
    hc_response_clear(&r);
    return j;
}

Test(server_ui, status_needs_the_token)
{
    hc_response_t r;

    get("/v1/status", NULL, &r);
    cr_assert_eq(r.status, 401);
    hc_response_clear(&r);
}

Test(server_ui, status_has_the_contract_shape)
{
    json_t *j = status(), *poll, *l;
    const char *states[] = {"ACCEPTED", "SUBMITTING", "PENDING", "RUNNING", "DONE"};
    size_t i;

    cr_assert_str_eq(json_string_value(json_object_get(j, "version")), sluice_version());
    cr_assert(json_is_integer(json_object_get(j, "uptime_s")));
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "slurmrestd"), "state")),
                     "ok");
    cr_assert(json_is_null(json_object_get(json_object_get(j, "slurmrestd"), "detail")));
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "token"), "expires_in_s")),
                 5400);
    poll = json_object_get(j, "poll");
    cr_assert_eq(json_integer_value(json_object_get(poll, "cycles")), 0);
    cr_assert(json_is_null(json_object_get(poll, "last_cycle_ms")));
    cr_assert(json_is_null(json_object_get(poll, "avg_cycle_ms")));
    cr_assert(json_is_integer(json_object_get(poll, "interval_ms")));
    l = json_object_get(j, "launches");
    for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
        cr_assert_eq(json_integer_value(json_object_get(l, states[i])), 0, "%s", states[i]);
    cr_assert(json_object_get(l, states[0]) != NULL);
    json_decref(j);
}

Test(server_ui, status_counts_real_cycles_and_launches)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char req[1024];
    hc_response_t r;
    json_t *j, *poll;
    int i;

    sfx_request("st-1", "/bin/true", req, sizeof(req));
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", SFX_JSON_AUTH, req, strlen(req), &r),
                 0);
    cr_assert_eq(r.status, 201, "%s", r.body);
    hc_response_clear(&r);
    j = status();
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "launches"), "ACCEPTED")),
                 1);
    json_decref(j);

    for (i = 0; i < 3; i++) {
        cr_assert_eq(sluice_server_step(fx.server, &err), SLUICE_OK, "%s", err.text);
        fx.clock_ms += 1000;
    }
    j = status();
    poll = json_object_get(j, "poll");
    cr_assert_eq(json_integer_value(json_object_get(poll, "cycles")), 3);
    cr_assert(json_is_number(json_object_get(poll, "last_cycle_ms")));
    cr_assert_geq(json_number_value(json_object_get(poll, "last_cycle_ms")), 0);
    cr_assert_geq(json_number_value(json_object_get(poll, "max_cycle_ms")),
                  json_number_value(json_object_get(poll, "avg_cycle_ms")));
    cr_assert_geq(json_integer_value(json_object_get(poll, "since_last_cycle_ms")), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(j, "launches"), "ACCEPTED")), 0,
                 "the cycles submitted it");
    json_decref(j);
}

Test(server_ui, status_says_when_slurmrestd_fails)
{
    json_t *j;

    ready_fails = 1;
    j = status();
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "slurmrestd"), "state")),
                     "failed");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "slurmrestd"), "detail")),
                     "Failed to connect to 127.0.0.1 port 1");
    json_decref(j);
}
