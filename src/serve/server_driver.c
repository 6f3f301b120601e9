/* SPDX-License-Identifier: Apache-2.0 */
/* server_driver.c - the launcher loop of `sluice serve`: one cycle under
 * the server's mutex (sluice_server_step), and the loop that runs a cycle,
 * a retention pass when one is due, and sleeps the launcher's interval
 * (sluice_server_run_launcher).
 *
 * Notes:
 * - A cycle marks the read cache dirty: it may have appended events, and
 *   wakes the waiting event streams for the same reason.
 * - The sleep is cut in slices of 100 ms so that *stop is seen, and an
 *   accept or a cancel (which wakes the launcher) ends it at once.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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

/* The loop of cluster i: a cycle, then its launcher's interval in slices;
 * retention (prune) only on the first cluster's loop. */
static void run_loop(sluice_server_t *s, size_t i, volatile int *stop)
{
    sluice_launcher_t *l = server_cluster_launcher(s, i);
    pthread_mutex_t *mu = server_cluster_mu(s, i);
    const char *name = s->o.n_clusters > 0 ? s->o.clusters[i].name : NULL;
    int64_t next_prune = 0;

    while (!*stop) {
        sluice_error_t e = SLUICE_ERROR_INIT;
        int64_t wait_ms, slept = 0;

        if (i == 0 && server_clock_ms(CLOCK_MONOTONIC) >= next_prune) {
            sluice_error_t pe = SLUICE_ERROR_INIT;
            if (sluice_server_prune(s, 0, NULL, NULL, &pe) != SLUICE_OK)
                sluice_log(SLUICE_LOG_WARNING, "retention: %s", pe.text);
            next_prune = server_clock_ms(CLOCK_MONOTONIC) +
                         (int64_t)(s->o.prune_interval_s ? s->o.prune_interval_s : 3600) * 1000;
        }

        /* Replicas: only the leader runs cycles (server_ha.c). */
        if (!server_ha_may_step(s, i)) {
            (void)sluice_launcher_idle(l, 200);
            continue;
        }
        if (step_cluster(s, i, &e) != SLUICE_OK)
            sluice_log(SLUICE_LOG_WARNING, "launcher cycle%s%s: %s", name ? " of cluster " : "",
                       name ? name : "", e.text);
        pthread_mutex_lock(mu);
        wait_ms = sluice_launcher_next_interval_ms(l);
        pthread_mutex_unlock(mu);
        /* In slices of 100 ms so that *stop is seen; an accept or a cancel
         * ends the wait at once. */
        while (!*stop && slept < wait_ms) {
            int64_t slice = wait_ms - slept < 100 ? wait_ms - slept : 100;
            if (sluice_launcher_idle(l, slice))
                break;
            slept += slice;
        }
    }
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
