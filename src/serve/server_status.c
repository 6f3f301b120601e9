/* SPDX-License-Identifier: Apache-2.0 */
/* server_status.c - GET /v1/status: what the status page shows about the
 * service itself: the version, whether slurmrestd answers a ping, how long
 * the Slurm token has left, the supervisor's poll cycles (the newest, the
 * mean and the longest, measured by sluice_server_step around each
 * launcher cycle) and the launches by state.
 *
 * Notes:
 * - The ping uses the launcher's cluster client, so it takes s->mu (one
 *   user of that client at a time), as /v1/readyz does; a ping that fails
 *   is an answer (state "failed" and the transport's words), not an error.
 * - The cycle numbers are atomics written by server_metrics_cycle(); they
 *   are read without a lock, so one answer may mix two cycles' values.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include <sluice/launcher.h>
#include <sluice/version.h>

#include "server_metrics.h"
#include "server_status.h"
#include "server_tenant.h"
#include "server_util.h"

/* {"state", "detail"} of slurmrestd: a ping through opts.ready. */
static json_t *status_slurmrestd(sluice_server_t *s, int64_t *ttl, int64_t *interval_ms)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int ok = 1;

    pthread_mutex_lock(&s->mu);
    if (s->o.ready)
        ok = s->o.ready(s->o.cluster_arg, &err) == SLUICE_OK;
    *ttl = s->o.token_ttl_s ? s->o.token_ttl_s(s->o.cluster_arg) : -1;
    *interval_ms = s->o.launcher ? sluice_launcher_next_interval_ms(s->o.launcher) : -1;
    pthread_mutex_unlock(&s->mu);
    if (s->o.ready == NULL)
        return json_pack("{s:s s:n}", "state", "not checked", "detail");
    if (ok)
        return json_pack("{s:s s:n}", "state", "ok", "detail");
    return json_pack("{s:s s:s}", "state", "failed", "detail",
                     err.text[0] ? err.text : "slurmrestd is not reachable");
}

/* A count of milliseconds from microseconds, with one decimal. */
static json_t *ms_of_us(unsigned long long us)
{
    return json_real((double)(us / 100) / 10.0);
}

static json_t *status_poll(sluice_server_t *s, int64_t interval_ms)
{
    unsigned long long n = atomic_load(&s->cycle_count);
    long long end = atomic_load(&s->cycle_last_end_ms);
    json_t *p;

    p = json_pack("{s:I s:I}", "cycles", (json_int_t)n, "errors",
                  (json_int_t)atomic_load(&s->cycle_errors));
    if (p == NULL)
        return NULL;
    if (n == 0) {
        json_object_set_new(p, "last_cycle_ms", json_null());
        json_object_set_new(p, "avg_cycle_ms", json_null());
        json_object_set_new(p, "max_cycle_ms", json_null());
        json_object_set_new(p, "since_last_cycle_ms", json_null());
    } else {
        json_object_set_new(p, "last_cycle_ms", ms_of_us(atomic_load(&s->cycle_last_us)));
        json_object_set_new(p, "avg_cycle_ms", ms_of_us(atomic_load(&s->cycle_sum_us) / n));
        json_object_set_new(p, "max_cycle_ms", ms_of_us(atomic_load(&s->cycle_max_us)));
        json_object_set_new(p, "since_last_cycle_ms",
                            json_integer(server_clock_ms(CLOCK_MONOTONIC) - end));
    }
    json_object_set_new(p, "interval_ms",
                        interval_ms >= 0 ? json_integer(interval_ms) : json_null());
    return p;
}

void status_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    json_t *counts = NULL, *rest, *j;
    int64_t ttl = -1, interval_ms = -1;
    size_t tracked = 0;
    sluice_err rc;

    /* A tenant's caller sees its own tenant's launches only. */
    if ((rc = server_metrics_launch_counts(s, server_tenant_filter(&rq->caller), &counts)) !=
        SLUICE_OK) {
        if (rc == SLUICE_ESTORE)
            answer_problem(out, 503, "store", "Store unavailable", "the store could not be read");
        return; /* out of memory: no answer */
    }
    rest = status_slurmrestd(s, &ttl, &interval_ms);
    /* Every cluster's launcher, each under its own cycle mutex. */
    for (size_t i = 0; s->o.launcher != NULL && i < server_cluster_count(s); i++) {
        pthread_mutex_t *mu = server_cluster_mu(s, i);

        pthread_mutex_lock(mu);
        tracked += sluice_launcher_tracked(server_cluster_launcher(s, i));
        pthread_mutex_unlock(mu);
    }
    j = json_pack("{s:s s:I s:o s:{s:o} s:o s:I s:o}", "version", sluice_version(), "uptime_s",
                  (json_int_t)server_elapsed_s(&s->started), "slurmrestd", rest, "token",
                  "expires_in_s", ttl >= 0 ? json_integer(ttl) : json_null(), "poll",
                  status_poll(s, interval_ms), "tracked", (json_int_t)tracked, "launches", counts);
    answer_json(out, 200, j);
}
