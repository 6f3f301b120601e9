/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_ready.c - /v1/readyz with hooks of their own
 * (sluice_server_opts_t.ready_unlocked) is answered while a launcher cycle
 * runs; before, readiness waited for the cycle (issue 16: a first cycle
 * over 1,000 live launches held sluice serve's readiness for seconds).
 * Only loopback traffic. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "http_client.h"
#include "server_fixture.h"

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

static volatile int one_cluster_down;

/* Ready; with one_cluster_down, as with two clusters of which one did not
 * answer: SLUICE_OK and the text naming the other. */
static sluice_err fake_ready(void *arg, sluice_error_t *err)
{
    (void)arg;
    if (one_cluster_down)
        snprintf(err->text, sizeof(err->text), "cluster west: connection refused");
    return SLUICE_OK;
}

static int64_t fake_ttl(void *arg)
{
    (void)arg;
    return 3000;
}

static void with_own_ready_hooks(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->ready = fake_ready;
    so->token_ttl_s = fake_ttl;
    so->ready_unlocked = 1;
}

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    o.launcher_tweak = with_slow_kill_point;
    o.tweak = with_own_ready_hooks;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    slow_cycle_ms = 0;
    one_cluster_down = 0;
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_ready, .init = setup, .fini = teardown, .timeout = 60);

static void *step_thread(void *arg)
{
    (void)arg;
    sluice_server_step(fx.server, NULL);
    return NULL;
}

Test(server_ready, readyz_does_not_wait_for_a_slow_launcher_cycle)
{
    char req[1024];
    hc_response_t r;
    pthread_t th;
    struct timespec t0, t1;
    long ms;

    sfx_request("ready-slow", "/bin/true", req, sizeof(req));
    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", SFX_JSON_AUTH, req, strlen(req), &r),
                 0);
    cr_assert_eq(r.status, 201, "%s", r.body);
    hc_response_clear(&r);
    slow_cycle_ms = 1500;
    cr_assert_eq(pthread_create(&th, NULL, step_thread, NULL), 0);
    usleep(200 * 1000); /* the cycle is now inside its submit, holding the launcher */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", SFX_AUTH, NULL, 0, &r), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_expect_eq(r.status, 200, "%s", r.body);
    /* No replicas: the only supervisor of its store (server_ha.c). */
    cr_expect(strstr(r.body, "\"role\":\"standalone\"") != NULL, "%s", r.body);
    hc_response_clear(&r);
    ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    pthread_join(th, NULL);
    cr_expect_lt(ms, 700, "readyz took %ld ms during a slow cycle", ms);
}

/* Several clusters: ready while any one answers (the others' launches wait;
 * every read works), and the slurmrestd check names the ones that did
 * not. */
Test(server_ready, ready_while_one_cluster_answers_and_the_others_are_named)
{
    hc_response_t r;
    json_t *j, *rest;

    one_cluster_down = 1;
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    j = json_loads(r.body, 0, NULL);
    rest = json_object_get(json_object_get(j, "checks"), "slurmrestd");
    cr_expect_str_eq(json_string_value(json_object_get(rest, "state")), "ok", "%s", r.body);
    cr_expect_str_eq(json_string_value(json_object_get(rest, "detail")),
                     "cluster west: connection refused", "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    one_cluster_down = 0;
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/readyz", SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_expect(strstr(r.body, "detail") == NULL, "%s", r.body);
    hc_response_clear(&r);
}
