/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_ha.c - `sluice serve` as a replica (server_ha.c): /v1/readyz
 * and /v1/metrics say the role, epoch, leader and replica; a follower
 * refuses a launch with secret values with 503 naming the leader (nothing
 * stored) and accepts one without; a standalone server says "standalone".
 * The lease runs on the fixture's store (SQLite here: the lease rules are
 * the same, the clock is the host's).  Only loopback traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/leader.h>
#include <sluice/server.h>
#include <sluice/sluice.h>

#include "http_client.h"
#include "render_case.h"
#include "server_fixture.h"
#include "sluice_assert.h"

static server_fixture_t fx;
static sluice_leader_t *leader;

static void with_leader(sluice_server_opts_t *so, void *arg)
{
    sluice_leader_opts_t lo = SLUICE_LEADER_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_lease_t l;
    sluice_store_t *other = NULL;

    (void)arg;
    /* Another replica holds the lease for a minute. */
    cr_assert_sluice_ok(sluice_store_reopen(&other, so->store, &err), &err);
    cr_assert_sluice_ok(sluice_store_lease_campaign(other, "replica-other", 0, 60000, &l, &err),
                        &err);
    sluice_store_close(other);
    lo.replica_id = "replica-me";
    cr_assert_sluice_ok(sluice_leader_new(&leader, so->store, &lo, &err), &err);
    sluice_leader_tick(leader);
    so->leader = leader;
    so->getenv_fn = render_case_getenv;
    so->stat_fn = sfx_accept_image;
}

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.socket = true;
    o.tweak = with_leader;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    sluice_server_free(fx.server);
    fx.server = NULL;
    sluice_leader_free(leader);
    leader = NULL;
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_ha, .init = setup, .fini = teardown, .timeout = 60);

static json_t *body_json(const hc_response_t *r)
{
    json_error_t e;
    json_t *j = json_loads(r->body, 0, &e);

    cr_assert_not_null(j, "not JSON: %s", r->body);
    return j;
}

Test(server_ha, readyz_and_metrics_say_the_role)
{
    hc_response_t r;
    json_t *j;

    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", SFX_AUTH, NULL, 0, &r), 0);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "role")), "follower", "%s", r.body);
    cr_expect_eq(json_integer_value(json_object_get(j, "epoch")), 1);
    cr_expect_str_eq(json_string_value(json_object_get(j, "leader")), "replica-other");
    cr_expect_str_eq(json_string_value(json_object_get(j, "replica")), "replica-me");
    json_decref(j);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/metrics", SFX_AUTH, NULL, 0, &r), 0);
    cr_expect(strstr(r.body, "\nsluice_leader 0\n") != NULL, "%s", r.body);
    cr_expect(strstr(r.body, "\nsluice_leader_epoch 1\n") != NULL);
    cr_expect(strstr(r.body, "\nsluice_leader_changes_total 0\n") != NULL);
    cr_expect(strstr(r.body, "\nsluice_fenced_writes_total ") != NULL);
    hc_response_clear(&r);
}

Test(server_ha, a_follower_sends_secret_values_to_the_leader_and_accepts_the_rest)
{
    hc_response_t r;
    char req[1024];
    json_t *j;

    snprintf(req, sizeof(req),
             "{\"launch_id\": \"with-secret\", \"site\": \"site-1\", \"profile\": \"none\", "
             "\"time_limit\": \"00:10:00\", \"partition\": \"gpu\", \"secrets\": {\"API_KEY\": "
             "\"do-not-leak-7f3a\"}, \"pools\": [{\"name\": \"main\", \"cpus_per_node\": 1, "
             "\"mem_per_node_mib\": 1024, \"command\": \"/bin/true\"}]}");
    cr_assert_eq(hc_request_unix(fx.sock, "POST", "/v1/launches",
                                 "Content-Type: application/json\r\n", req, strlen(req), &r),
                 0);
    cr_expect_eq(r.status, 503, "%s", r.body);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "leader")), "replica-other");
    cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "secrets");
    json_decref(j);
    cr_expect(strstr(r.body, "do-not-leak") == NULL);
    hc_response_clear(&r);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches/with-secret", SFX_AUTH, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 404, "nothing stored: %s", r.body);
    hc_response_clear(&r);
    /* Without secret values any replica accepts. */
    cr_expect_eq(sfx_post(&fx, "plain-one"), 201);
}

Test(server_ha, a_leader_says_so)
{
    hc_response_t r;
    json_t *j;

    /* The other replica's lease is released: this one takes over. */
    {
        sluice_store_t *other = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;

        cr_assert_sluice_ok(sluice_store_reopen(&other, fx.store, &err), &err);
        cr_assert_sluice_ok(sluice_store_lease_release(other, "replica-other", 1, &err), &err);
        sluice_store_close(other);
    }
    sluice_leader_tick(leader);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", SFX_AUTH, NULL, 0, &r), 0);
    j = body_json(&r);
    cr_expect_str_eq(json_string_value(json_object_get(j, "role")), "leader", "%s", r.body);
    cr_expect_eq(json_integer_value(json_object_get(j, "epoch")), 2);
    cr_expect_str_eq(json_string_value(json_object_get(j, "leader")), "replica-me");
    json_decref(j);
    hc_response_clear(&r);
}
