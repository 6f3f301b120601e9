/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_wake.c - a waiting event stream sees a commit at once, not at
 * the ticker's next follow_poll_ms (issue 16: SSE fan-out within 50 ms).
 * The ticker is set to 20 s here, so only the wake on commit can deliver
 * within the tests' 3 s.  Only loopback traffic. */
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

static void slow_ticker(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->follow_poll_ms = 20000;
}

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    o.tweak = slow_ticker;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_wake, .init = setup, .fini = teardown, .timeout = 60);

static int post(const char *id)
{
    int status = sfx_post(&fx, id);

    cr_assert_neq(status, -1, "POST %s: no answer", id);
    return status;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* After 300 ms (the reader is suspended by then): a POST, or a cycle. */
static void *later_post(void *arg)
{
    usleep(300 * 1000);
    post(arg);
    return NULL;
}

static void *later_step(void *arg)
{
    (void)arg;
    usleep(300 * 1000);
    sluice_server_step(fx.server, NULL);
    return NULL;
}

Test(server_wake, a_post_reaches_a_waiting_reader_before_the_tick)
{
    pthread_t th;
    char *raw = NULL;
    double t0;

    cr_assert_eq(post("wake-1"), 201);
    cr_assert_eq(pthread_create(&th, NULL, later_post, "wake-2"), 0);
    t0 = now_s();
    cr_expect_eq(hc_stream_until(fx.port, "/v1/events?after=1", SFX_AUTH, "id: 2\n", 3000, &raw), 0,
                 "%s", raw ? raw : "");
    cr_expect_lt(now_s() - t0, 2.5, "the accept waited for the ticker");
    cr_expect(raw != NULL && strstr(raw, "\"launch_id\":\"wake-2\"") != NULL, "%s", raw ? raw : "");
    free(raw);
    pthread_join(th, NULL);
}

Test(server_wake, a_launcher_transition_reaches_a_waiting_reader_before_the_tick)
{
    pthread_t th;
    char *raw = NULL;

    cr_assert_eq(post("wake-3"), 201);
    /* the cycle submits wake-3: its events come after gseq 1 */
    cr_assert_eq(pthread_create(&th, NULL, later_step, NULL), 0);
    cr_expect_eq(hc_stream_until(fx.port, "/v1/events?after=1", SFX_AUTH, "id: 2\n", 3000, &raw), 0,
                 "%s", raw ? raw : "");
    free(raw);
    pthread_join(th, NULL);
}
