/* SPDX-License-Identifier: Apache-2.0 */
/* server_driver.c - the launcher loop of `sluice serve`: one cycle under
 * the server's mutex (sluice_server_step), and the launcher's one loop
 * (sluice_launcher_loop) configured to run a cycle, a retention pass when
 * one is due, and to sleep the launcher's interval
 * (sluice_server_run_launcher, sluice_server_run_cluster).
 *
 * Notes:
 * - A cycle marks the read cache dirty: it may have appended events, and
 *   wakes the waiting event streams for the same reason.
 * - The sleep is cut in slices of 100 ms so that *stop is seen, and an
 *   accept or a cancel (which wakes the launcher) ends it at once.
 * - A failed cycle is logged and the loop goes on.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <sluice/launcher.h>
#include <sluice/log.h>
#include <sluice/server.h>

#include "server_ha.h"
#include "server_int.h"
#include "server_metrics.h"
#include "server_util.h"
#include "server_wake.h"

/* One cycle of cluster i's launcher under its mutex. */
static sluice_err step_cluster(sluice_server_t *s, size_t i, sluice_error_t *err)
{
    pthread_mutex_t *mu = server_cluster_mu(s, i);
    struct timespec t0;
    double took;
    sluice_err rc;

    pthread_mutex_lock(mu);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = sluice_launcher_step(server_cluster_launcher(s, i), err);
    took = server_elapsed_s(&t0);
    atomic_store(&s->views_dirty, 1);
    pthread_mutex_unlock(mu);
    server_wake_streams(s); /* events the cycle committed without a transition */
    server_metrics_cycle(s, took, rc);
    return rc;
}

sluice_err sluice_server_step(sluice_server_t *s, sluice_error_t *err)
{
    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server");
    return step_cluster(s, 0, err);
}

/* The loop of cluster i (sluice_launcher_loop()) is configured by these. */
typedef struct {
    sluice_server_t *s;
    size_t i;
    int64_t next_prune;
} loop_ctx_t;

/* Before a cycle: retention when due (the first cluster's loop only), and
 * no cycle on a replica that does not lead (server_ha.c). */
static sluice_loop_next before_cycle(void *arg)
{
    loop_ctx_t *c = arg;
    sluice_server_t *s = c->s;

    if (c->i == 0 && server_clock_ms(CLOCK_MONOTONIC) >= c->next_prune) {
        sluice_error_t pe = SLUICE_ERROR_INIT;
        if (sluice_server_prune(s, 0, NULL, NULL, &pe) != SLUICE_OK)
            sluice_log(SLUICE_LOG_WARNING, "retention: %s", pe.text);
        c->next_prune = server_clock_ms(CLOCK_MONOTONIC) +
                        (int64_t)(s->o.prune_interval_s ? s->o.prune_interval_s : 3600) * 1000;
    }
    return server_ha_may_step(s, c->i) ? SLUICE_LOOP_STEP : SLUICE_LOOP_SKIP;
}

/* A cycle under the cluster's mutex, and the interval read under it too. */
static sluice_err cycle(sluice_launcher_t *l, void *arg, int64_t *next_ms, sluice_error_t *err)
{
    loop_ctx_t *c = arg;
    pthread_mutex_t *mu = server_cluster_mu(c->s, c->i);
    sluice_err rc = step_cluster(c->s, c->i, err);

    pthread_mutex_lock(mu);
    *next_ms = sluice_launcher_next_interval_ms(l);
    pthread_mutex_unlock(mu);
    return rc;
}

static void run_loop(sluice_server_t *s, size_t i, volatile int *stop)
{
    sluice_launcher_loop_t lo = SLUICE_LAUNCHER_LOOP_INIT;
    loop_ctx_t c = {s, i, 0};
    char name[96] = "";

    if (s->o.n_clusters > 0 && s->o.clusters[i].name != NULL)
        snprintf(name, sizeof(name), " of cluster %s", s->o.clusters[i].name);
    lo.stop = stop;
    lo.before = before_cycle;
    lo.step = cycle;
    lo.arg = &c;
    lo.slice_ms = 100; /* *stop is seen within 100 ms */
    lo.skip_idle_ms = 200;
    lo.keep_going = true;
    lo.name = name;
    (void)sluice_launcher_loop(server_cluster_launcher(s, i), &lo, NULL);
}

sluice_err sluice_server_run_launcher(sluice_server_t *s, volatile int *stop, sluice_error_t *err)
{
    if (s == NULL || stop == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server or stop flag");
    run_loop(s, 0, stop);
    return SLUICE_OK;
}

sluice_err
sluice_server_run_cluster(sluice_server_t *s, size_t i, volatile int *stop, sluice_error_t *err)
{
    if (s == NULL || stop == NULL || i == 0 || i >= s->o.n_clusters)
        return sluice_errorf(err, SLUICE_EINVAL, "no server, stop flag or cluster %zu", i);
    run_loop(s, i, stop);
    return SLUICE_OK;
}
