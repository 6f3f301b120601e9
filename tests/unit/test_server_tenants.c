/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_tenants.c - the API seen from one tenant (server_tenant.c)
 * on a `sluice serve` whose site has two tenants: alice is tenant ta's,
 * bob tenant tb's (live_launches 1), dave is nobody's (the default
 * tenant), carol an admin.  Launch ids are per tenant; another tenant's
 * launch is "no such launch" on every route; lists, status and the event
 * feed keep to the caller's tenant; an admin sees and names every
 * launch; a limit answers 429 naming it and never refuses a repeat.
 * Only the HTTP side runs here (the launcher is not stepped): the
 * launches stay ACCEPTED.  Only loopback traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/server.h>
#include <sluice/sluice.h>
#include <sluice/store.h>

#include "http_client.h"
#include "render_case.h"
#include "server_fixture.h"
#include "sluice_assert.h"

#define CAROL "tok-carol-0123456789abcdef"
#define DAVE "tok-dave-0123456789abcdef"
#define AS(tok) "Authorization: Bearer " tok "\r\n"
#define JSON_AS(tok) AS(tok) "Content-Type: application/json\r\n"

static server_fixture_t fx;

static void images(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->getenv_fn = render_case_getenv;
    so->stat_fn = sfx_accept_image;
}

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.extra_tokens = "carol " CAROL " admin\ndave " DAVE "\n";
    o.tweak = images;
    o.site_append = "tenants:\n"
                    "  - name: ta\n"
                    "    callers: [alice]\n"
                    "    slurm_user: sluice\n"
                    "    identity: proxy\n"
                    "  - name: tb\n"
                    "    callers: [bob]\n"
                    "    slurm_user: sluice\n"
                    "    identity: proxy\n"
                    "    limits:\n"
                    "      live_launches: 1\n";
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    sfx_stop(&fx);
}

TestSuite(tenants, .init = setup, .fini = teardown, .timeout = 60);

static int
call(const char *method, const char *path, const char *auth, const char *id, hc_response_t *r)
{
    char req[1024];
    size_t len = 0;

    if (id != NULL) {
        sfx_request(id, "/bin/true", req, sizeof(req));
        len = strlen(req);
    }
    cr_assert_eq(hc_request(fx.port, method, path, auth, id != NULL ? req : NULL, len, r), 0);
    return r->status;
}

static json_t *body_json(const hc_response_t *r)
{
    json_error_t je;
    json_t *j = json_loads(r->body, 0, &je);

    cr_assert_not_null(j, "not JSON: %s", r->body);
    return j;
}

/* The launch_ids (and tenants) of a list answer as "id/tenant ..." */
static void list_of(const char *auth, char *buf, size_t cap)
{
    hc_response_t r;
    json_t *j, *it;
    size_t i, used = 0;

    cr_assert_eq(call("GET", "/v1/launches", auth, NULL, &r), 200, "%s", r.body);
    j = body_json(&r);
    buf[0] = '\0';
    json_array_foreach(json_object_get(j, "items"), i, it)
    {
        const char *t = json_string_value(json_object_get(it, "tenant"));
        used += (size_t)snprintf(buf + used, cap - used, "%s/%s ",
                                 json_string_value(json_object_get(it, "launch_id")),
                                 t != NULL ? t : "-");
    }
    json_decref(j);
    hc_response_clear(&r);
}

Test(tenants, the_same_launch_id_in_two_tenants_is_two_launches)
{
    hc_response_t r;
    json_t *j, *l = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "run-1", &r), 201, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "launch_id")), "run-1");
    cr_expect_str_eq(json_string_value(json_object_get(j, "tenant")), "ta");
    cr_expect(strstr(r.headers, "\nLocation: /v1/launches/run-1\r") != NULL, "%s", r.headers);
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_BOB_TOKEN), "run-1", &r), 201, "%s",
                 r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(DAVE), "run-1", &r), 201, "%s", r.body);
    j = body_json(&r);
    cr_expect_null(json_object_get(j, "tenant"), "the default tenant's launch names none");
    json_decref(j);
    hc_response_clear(&r);
    /* three rows, under three keys */
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "ta~run-1", &l, &err), &err);
    json_decref(l);
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "tb~run-1", &l, &err), &err);
    json_decref(l);
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "run-1", &l, &err), &err);
    json_decref(l);
}

Test(tenants, another_tenants_launch_is_no_such_launch_on_every_route)
{
    static const char *const routes[][2] = {
        {"GET", "/v1/launches/only-a"},
        {"DELETE", "/v1/launches/only-a"},
        {"GET", "/v1/launches/only-a/logs/stdout"},
        {"GET", "/v1/launches/only-a/logs/stderr"},
        {"GET", "/v1/launches/only-a/events"},
        {"GET", "/v1/launches/ta~only-a"},
        {"DELETE", "/v1/launches/ta~only-a"},
    };
    const char *const others[] = {AS(SFX_BOB_TOKEN), AS(DAVE)};
    hc_response_t r;
    char list[512];
    size_t i, k;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "only-a", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    for (k = 0; k < 2; k++)
        for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
            cr_assert_eq(call(routes[i][0], routes[i][1], others[k], NULL, &r), 404,
                         "%s %s as %s: %d %s", routes[i][0], routes[i][1], others[k], r.status,
                         r.body);
            /* the same answer as for a launch that never was: nothing
             * names tenant ta or says the launch exists */
            cr_expect(strstr(r.body, "ta~") == NULL && strstr(r.body, "orbidden") == NULL &&
                          strstr(r.body, "\"tenant\"") == NULL,
                      "%s", r.body);
            hc_response_clear(&r);
        }
    list_of(AS(SFX_BOB_TOKEN), list, sizeof(list));
    cr_expect_str_eq(list, "");
    list_of(AS(DAVE), list, sizeof(list));
    cr_expect_str_eq(list, "");
    list_of(AS(SFX_TOKEN), list, sizeof(list));
    cr_expect_str_eq(list, "only-a/ta ");
    /* its own tenant's key names it too */
    cr_assert_eq(call("GET", "/v1/launches/ta~only-a", AS(SFX_TOKEN), NULL, &r), 200, "%s", r.body);
    hc_response_clear(&r);
    /* the launch is untouched: no cancel was recorded */
    cr_assert_eq(call("GET", "/v1/launches/only-a", AS(SFX_TOKEN), NULL, &r), 200, "%s", r.body);
    cr_expect(strstr(r.body, "cancel") == NULL, "%s", r.body);
    hc_response_clear(&r);
}

Test(tenants, an_admin_sees_every_tenant_and_names_launches_by_key)
{
    hc_response_t r;
    char list[512];
    json_t *j;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "x1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_BOB_TOKEN), "x1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(DAVE), "x2", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    list_of(AS(CAROL), list, sizeof(list));
    cr_expect(strstr(list, "x1/ta ") && strstr(list, "x1/tb ") && strstr(list, "x2/- "), "%s",
              list);
    cr_assert_eq(call("GET", "/v1/launches/tb~x1", AS(CAROL), NULL, &r), 200, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "tenant")), "tb");
    cr_expect_str_eq(json_string_value(json_object_get(j, "launch_id")), "x1");
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(call("GET", "/v1/launches/x2", AS(CAROL), NULL, &r), 200, "%s", r.body);
    hc_response_clear(&r);
    /* an admin cancels another tenant's launch by its key */
    cr_assert_eq(call("DELETE", "/v1/launches/ta~x1", AS(CAROL), NULL, &r), 202, "%s", r.body);
    hc_response_clear(&r);
}

Test(tenants, a_caller_cannot_send_a_key)
{
    hc_response_t r;
    json_t *j;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "tb~evil", &r), 422, "%s",
                 r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "launch_id", "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(DAVE), "ta~evil", &r), 422, "%s", r.body);
    hc_response_clear(&r);
}

Test(tenants, a_limit_refuses_with_429_naming_it_and_never_a_repeat)
{
    hc_response_t r;
    json_t *j;
    char list[512];

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_BOB_TOKEN), "b1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_BOB_TOKEN), "b2", &r), 429, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "limits.live_launches");
    cr_expect_str_eq(json_string_value(json_object_get(j, "limit")), "live_launches");
    cr_expect(strstr(json_string_value(json_object_get(j, "type")), "tenant-limit") != NULL, "%s",
              r.body);
    json_decref(j);
    hc_response_clear(&r);
    /* the repeat of b1 is the same launch, not a new one */
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_BOB_TOKEN), "b1", &r), 200, "%s", r.body);
    hc_response_clear(&r);
    list_of(AS(SFX_BOB_TOKEN), list, sizeof(list));
    cr_expect_str_eq(list, "b1/tb ", "nothing of b2 was stored");
    /* tenant ta has no limit */
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "a1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "a2", &r), 201, "%s", r.body);
    hc_response_clear(&r);
}

Test(tenants, status_counts_and_metrics_by_tenant)
{
    hc_response_t r;
    json_t *j;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "s1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "s2", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(DAVE), "s3", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("GET", "/v1/status", AS(SFX_BOB_TOKEN), NULL, &r), 200, "%s", r.body);
    j = body_json(&r);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(j, "launches"), "ACCEPTED")), 0,
                 "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(call("GET", "/v1/status", AS(SFX_TOKEN), NULL, &r), 200, "%s", r.body);
    j = body_json(&r);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(j, "launches"), "ACCEPTED")), 2,
                 "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    cr_expect_eq(sfx_metric(&fx, "sluice_launches{tenant=\"ta\",state=\"ACCEPTED\"}"), 2);
    cr_expect_eq(sfx_metric(&fx, "sluice_launches{tenant=\"tb\",state=\"ACCEPTED\"}"), 0);
    cr_expect_eq(sfx_metric(&fx, "sluice_launches{tenant=\"default\",state=\"ACCEPTED\"}"), 1);
}

Test(tenants, the_event_feed_keeps_to_a_tenant)
{
    hc_response_t r;
    sluice_store_event_filter_t f;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL, *ev;
    size_t i;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "e1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(DAVE), "e2", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    memset(&f, 0, sizeof(f));
    f.tenant = "ta";
    cr_assert_sluice_ok(sluice_store_events_filtered(fx.store, 0, 100, &f, &evs, NULL, &err), &err);
    cr_assert_gt(json_array_size(evs), 0);
    json_array_foreach(evs, i, ev)
        cr_expect_str_eq(json_string_value(json_object_get(ev, "launch_id")), "ta~e1");
    json_decref(evs);
    f.tenant = "";
    cr_assert_sluice_ok(sluice_store_events_filtered(fx.store, 0, 100, &f, &evs, NULL, &err), &err);
    cr_assert_gt(json_array_size(evs), 0);
    json_array_foreach(evs, i, ev)
        cr_expect_str_eq(json_string_value(json_object_get(ev, "launch_id")), "e2");
    json_decref(evs);
    f.tenant = "t_%";
    cr_expect_eq(sluice_store_events_filtered(fx.store, 0, 100, &f, &evs, NULL, &err),
                 SLUICE_EINVAL, "a pattern is not a tenant");
}

/* `sluice ls --server` of an admin: a TENANT column when the page has a
 * tenant's launch; the tenant's own caller sees only its launch. */
static char *ls_as(const char *name, const char *token)
{
    char tok[300], out[300], cmd[1200], *text;
    const char *bin = getenv("SLUICE_BIN");
    FILE *f;
    long n;

    cr_assert_not_null(bin, "SLUICE_BIN is not set");
    snprintf(tok, sizeof(tok), "%s/%s.token", fx.tmp, name);
    snprintf(out, sizeof(out), "%s/%s.out", fx.tmp, name);
    cr_assert_eq(sfx_write_file(tok, token, 0600), 0);
    snprintf(cmd, sizeof(cmd), "'%s' ls --server http://127.0.0.1:%u --api-token-file '%s' >'%s'",
             bin, (unsigned)fx.port, tok, out);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    cr_assert_not_null(f = fopen(out, "r"));
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)n + 1);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return text;
}

Test(tenants, ls_of_an_admin_names_the_tenants)
{
    hc_response_t r;
    char *out;

    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_TOKEN), "l-1", &r), 201, "%s", r.body);
    hc_response_clear(&r);
    cr_assert_eq(call("POST", "/v1/launches", JSON_AS(SFX_BOB_TOKEN), "l-1", &r), 201, "%s",
                 r.body);
    hc_response_clear(&r);
    out = ls_as("carol", CAROL);
    cr_expect(strstr(out, "TENANT") != NULL, "%s", out);
    cr_expect(strstr(out, " ta ") != NULL && strstr(out, " tb ") != NULL, "%s", out);
    free(out);
    out = ls_as("bob", SFX_BOB_TOKEN);
    cr_expect(strstr(out, " tb ") != NULL && strstr(out, " ta ") == NULL, "%s", out);
    free(out);
}
