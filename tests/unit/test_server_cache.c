/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_cache.c - GET /v1/launches/{id} keeps the answers of many
 * live launches read round robin (issue 16: 1,000 live launches at 1,000
 * requests/s).  With one kept answer per slot of 512, ids sharing a slot
 * evicted each other and most reads of 600 launches rebuilt their view.
 * Only loopback traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "http_client.h"
#include "server_fixture.h"

#define N_LAUNCHES 600

static server_fixture_t fx;

static void setup(void)
{
    char why[256];

    cr_assert_eq(sfx_start(&fx, NULL, NULL, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_cache, .init = setup, .fini = teardown, .timeout = 120);

/* The counter sluice_http_launch_views_total{cache="<which>"}. */
static unsigned long long views(const char *which)
{
    hc_response_t r;
    char needle[96];
    const char *p;
    unsigned long long v = 0;

    cr_assert_eq(hc_request(fx.port, "GET", "/v1/metrics", SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200);
    snprintf(needle, sizeof(needle), "sluice_http_launch_views_total{cache=\"%s\"} ", which);
    p = strstr(r.body, needle);
    cr_assert_not_null(p, "%s", r.body);
    v = strtoull(p + strlen(needle), NULL, 10);
    hc_response_clear(&r);
    return v;
}

static void get_all(void)
{
    for (int i = 0; i < N_LAUNCHES; i++) {
        hc_response_t r;
        char path[64];

        snprintf(path, sizeof(path), "/v1/launches/cache-%d", i);
        cr_assert_eq(hc_request(fx.port, "GET", path, SFX_AUTH, NULL, 0, &r), 0);
        cr_assert_eq(r.status, 200, "%s: %s", path, r.body);
        hc_response_clear(&r);
    }
}

Test(server_cache, six_hundred_launches_read_round_robin_are_served_from_the_cache)
{
    unsigned long long hits;

    for (int i = 0; i < N_LAUNCHES; i++) {
        char id[32], req[1024];
        hc_response_t r;

        snprintf(id, sizeof(id), "cache-%d", i);
        sfx_request(id, "/bin/true", req, sizeof(req));
        cr_assert_eq(
            hc_request(fx.port, "POST", "/v1/launches", SFX_JSON_AUTH, req, strlen(req), &r), 0);
        cr_assert_eq(r.status, 201, "%s", r.body);
        hc_response_clear(&r);
    }
    get_all(); /* builds and keeps every answer */
    hits = views("hit");
    get_all(); /* nothing changed: every answer is a kept one */
    hits = views("hit") - hits;
    cr_expect_geq(hits, N_LAUNCHES * 9 / 10, "%llu of %d second reads were cache hits", hits,
                  N_LAUNCHES);
}
