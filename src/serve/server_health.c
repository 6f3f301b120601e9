/* SPDX-License-Identifier: Apache-2.0 */
/* server_health.c - the probe routes of `sluice serve`: liveness,
 * readiness (store writable, slurmrestd reachable) and the metrics text.
 *
 * Notes:
 * - The readiness check uses the launcher's cluster client, so it takes
 *   s->mu: one user of that client at a time.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/store.h>

#include "server_health.h"
#include "server_metrics.h"

void health_live(sluice_server_t *s, req_t *rq, answer_t *out)
{
    (void)s, (void)rq;
    answer_json(out, 200, json_pack("{s:s}", "status", "ok"));
}

void health_ready(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int store_ok = access(sluice_store_dir(s->o.store), W_OK) == 0;
    int cluster_ok = 1;

    (void)rq;
    if (s->o.ready) {
        /* the cluster client is the launcher's: one user at a time */
        pthread_mutex_lock(&s->mu);
        cluster_ok = s->o.ready(s->o.cluster_arg, &err) == SLUICE_OK;
        pthread_mutex_unlock(&s->mu);
    }

    if (!store_ok) {
        answer_problem(out, 503, "not-ready", "Not ready", "the store directory is not writable");
        return;
    }
    if (!cluster_ok) {
        answer_problem(out, 503, "not-ready", "Not ready",
                       err.text[0] ? err.text : "slurmrestd is not reachable");
        return;
    }
    answer_json(out, 200,
                json_pack("{s:s s:{s:s s:s}}", "status", "ready", "checks", "store", "ok",
                          "slurmrestd", s->o.ready ? "ok" : "not checked"));
}

void health_metrics(sluice_server_t *s, req_t *rq, answer_t *out)
{
    char *text = NULL;
    sluice_err rc = server_metrics_render(s, &text);

    (void)rq;
    if (rc == SLUICE_ESTORE) {
        answer_problem(out, 503, "store", "Store unavailable", "the store could not be read");
        return;
    }
    if (rc != SLUICE_OK)
        return; /* no answer */
    answer_text(out, 200, "text/plain; version=0.0.4; charset=utf-8", text);
}
