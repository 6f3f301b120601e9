/* SPDX-License-Identifier: Apache-2.0 */
/* server_health.c - the probe routes of `sluice serve`: liveness,
 * readiness (store writable, slurmrestd reachable) and the metrics text.
 *
 * Notes:
 * - With replicas (server_ha.c) readiness also says the role, the epoch,
 *   the leader and this replica, and fails while the database cannot be
 *   reached.
 * - The readiness check uses the launcher's cluster client, so it takes
 *   s->mu: one user of that client at a time.
 * - Readiness answers every check, ready or not: store (the directory is
 *   writable), slurmrestd (a ping answers; with several clusters, any one
 *   of them, and the detail names those that did not), token (more than
 *   60 s left, on every cluster).
 *   Not ready is a 503 problem that carries the same checks.  Only this
 *   route depends on slurmrestd: every read of the store keeps working
 *   while it is down.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/store.h>

#include "server_ha.h"
#include "server_health.h"
#include "server_metrics.h"

void health_live(sluice_server_t *s, req_t *rq, answer_t *out)
{
    (void)s, (void)rq;
    answer_json(out, 200, json_pack("{s:s}", "status", "ok"));
}

/* One check's answer: {"state": "ok" | "failed" | "not checked", "detail"?}. */
static json_t *check(const char *state, const char *detail)
{
    json_t *j = json_pack("{s:s}", "state", state);

    if (j && detail && detail[0])
        json_object_set_new(j, "detail", json_string(detail));
    return j;
}

void health_ready(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int store_ok = access(sluice_store_dir(s->o.store), W_OK) == 0;
    int rest_ok = 1, token_ok = 1, ha_ok;
    int64_t ttl = -1;
    json_t *checks, *tok, *ha = json_object();
    const char *failed = NULL;
    char ha_why[512];
    char detail[sizeof(err.text) + 64];

    (void)rq;
    if (s->o.ready && s->o.ready_unlocked) {
        /* the hook has a client and a lock of its own */
        rest_ok = s->o.ready(s->o.cluster_arg, &err) == SLUICE_OK;
        if (s->o.token_ttl_s)
            ttl = s->o.token_ttl_s(s->o.cluster_arg);
    } else if (s->o.ready) {
        /* the cluster client is the launcher's: one user at a time */
        pthread_mutex_lock(&s->mu);
        rest_ok = s->o.ready(s->o.cluster_arg, &err) == SLUICE_OK;
        if (s->o.token_ttl_s)
            ttl = s->o.token_ttl_s(s->o.cluster_arg);
        pthread_mutex_unlock(&s->mu);
    } else if (s->o.token_ttl_s) {
        ttl = s->o.token_ttl_s(s->o.cluster_arg);
    }
    if (ttl >= 0 && ttl < 60)
        token_ok = 0;

    tok = check(s->o.token_ttl_s == NULL ? "not checked"
                                         : (ttl < 0 ? "unknown" : (token_ok ? "ok" : "failed")),
                token_ok ? NULL : "the Slurm token expires in less than 60 s");
    if (tok && ttl >= 0)
        json_object_set_new(tok, "expires_in_s", json_integer(ttl));
    /* Replicas: the role, and whether the database answers (server_ha.c). */
    ha_ok = server_ha_ready(s, ha, ha_why, sizeof(ha_why));
    checks = json_pack("{s:o s:o s:o}", "store",
                       check(store_ok && ha_ok ? "ok" : "failed",
                             !ha_ok     ? ha_why + 7
                             : store_ok ? NULL
                                        : "the store directory is not writable"),
                       "slurmrestd",
                       check(s->o.ready == NULL ? "not checked" : (rest_ok ? "ok" : "failed"),
                             rest_ok ? err.text /* clusters that did not answer, or "" */
                                     : (err.text[0] ? err.text : "slurmrestd is not reachable")),
                       "token", tok);
    if (!ha_ok)
        failed = ha_why;
    else if (!store_ok)
        failed = "store: the store directory is not writable";
    else if (!rest_ok)
        failed = "slurmrestd";
    else if (!token_ok)
        failed = "token: the Slurm token expires in less than 60 s";
    if (failed == NULL) {
        json_object_set_new(ha, "status", json_string("ready"));
        json_object_set_new(ha, "checks", checks);
        answer_json(out, 200, ha);
        return;
    }
    if (strcmp(failed, "slurmrestd") == 0) {
        snprintf(detail, sizeof(detail), "slurmrestd: %s",
                 err.text[0] ? err.text : "slurmrestd is not reachable");
        failed = detail;
    }
    json_object_set_new(ha, "checks", checks);
    answer_problem_more(out, 503, "not-ready", "Not ready", failed, NULL, NULL, ha);
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
