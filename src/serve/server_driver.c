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

sluice_err sluice_server_step(sluice_server_t *s, sluice_error_t *err)
{
    struct timespec t0;
    double took;
    sluice_err rc;

    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server");
    pthread_mutex_lock(&s->mu);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = sluice_launcher_step(s->o.launcher, err);
    took = server_elapsed_s(&t0);
    atomic_store(&s->views_dirty, 1);
    pthread_mutex_unlock(&s->mu);
    server_wake_streams(s); /* events the cycle committed without a transition */
    server_metrics_cycle(s, took, rc);
    return rc;
}

sluice_err sluice_server_run_launcher(sluice_server_t *s, volatile int *stop, sluice_error_t *err)
{
    int64_t next_prune = 0;

    if (s == NULL || stop == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server or stop flag");
    while (!*stop) {
        sluice_error_t e = SLUICE_ERROR_INIT;
        int64_t wait_ms, slept = 0;

        if (server_clock_ms(CLOCK_MONOTONIC) >= next_prune) {
            sluice_error_t pe = SLUICE_ERROR_INIT;
            if (sluice_server_prune(s, 0, NULL, NULL, &pe) != SLUICE_OK)
                sluice_log(SLUICE_LOG_WARNING, "retention: %s", pe.text);
            next_prune = server_clock_ms(CLOCK_MONOTONIC) +
                         (int64_t)(s->o.prune_interval_s ? s->o.prune_interval_s : 3600) * 1000;
        }

        /* Replicas: only the leader runs cycles (server_ha.c). */
        if (!server_ha_may_step(s)) {
            (void)sluice_launcher_idle(s->o.launcher, 200);
            continue;
        }
        if (sluice_server_step(s, &e) != SLUICE_OK)
            sluice_log(SLUICE_LOG_WARNING, "launcher cycle: %s", e.text);
        pthread_mutex_lock(&s->mu);
        wait_ms = sluice_launcher_next_interval_ms(s->o.launcher);
        pthread_mutex_unlock(&s->mu);
        /* In slices of 100 ms so that *stop is seen; an accept or a cancel
         * ends the wait at once. */
        while (!*stop && slept < wait_ms) {
            int64_t slice = wait_ms - slept < 100 ? wait_ms - slept : 100;
            if (sluice_launcher_idle(s->o.launcher, slice))
                break;
            slept += slice;
        }
    }
    return SLUICE_OK;
}
