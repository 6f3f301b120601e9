/* SPDX-License-Identifier: Apache-2.0 */
/* server_metrics.c - the Prometheus text of GET /v1/metrics: launches by
 * state, the supervisor's and the HTTP side's counters, the REST client's
 * and the launcher's statistics, the webhook outbox, and the
 * launcher-cycle histogram.
 *
 * Notes:
 * - Counters are atomics in the server struct, bumped where things happen;
 *   this file only reads them, except the cycle histogram, which
 *   server_metrics_cycle() fills.
 * - server_health.c turns the text into the answer; server.c alone
 *   sends it (libmicrohttpd).
 */
#define _GNU_SOURCE 1 /* open_memstream */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/config.h>
#include <sluice/timing.h>

#include "base/marker.h"
#include "store/store_webhooks.h"

#include "server_ha.h"
#include "server_metrics.h"
#include "server_util.h"
#include "server_wake.h"

/* Upper bounds (seconds) of the launcher-cycle latency histogram. */
static const double cycle_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
_Static_assert(sizeof(cycle_buckets) / sizeof(cycle_buckets[0]) == N_CYCLE_BUCKETS,
               "N_CYCLE_BUCKETS (server_int.h) is the number of cycle buckets");

void server_metrics_cycle(sluice_server_t *s, double took, sluice_err rc)
{
    unsigned long long us, max;
    size_t i;

    for (i = 0; i < N_CYCLE_BUCKETS; i++)
        if (took <= cycle_buckets[i])
            atomic_fetch_add(&s->cycle_le[i], 1);
    us = (unsigned long long)(took * 1e6);
    atomic_fetch_add(&s->cycle_count, 1);
    atomic_fetch_add(&s->cycle_sum_us, us);
    atomic_store(&s->cycle_last_us, us);
    max = atomic_load(&s->cycle_max_us);
    while (us > max && !atomic_compare_exchange_weak(&s->cycle_max_us, &max, us))
        ;
    atomic_store(&s->cycle_last_end_ms, (long long)server_clock_ms(CLOCK_MONOTONIC));
    if (rc != SLUICE_OK)
        atomic_fetch_add(&s->cycle_errors, 1);
}

/* The label of cluster i's series: `cluster="NAME",` with several
 * clusters (opts.clusters), "" with one (the series as they always were). */
static const char *cluster_label(const sluice_server_t *s, size_t i, char *buf, size_t cap)
{
    if (s->o.n_clusters == 0)
        return "";
    snprintf(buf, cap, "cluster=\"%s\",", s->o.clusters[i].name);
    return buf;
}

/* The REST client of cluster i (NULL: none). */
static sluice_client_t *client_of(const sluice_server_t *s, size_t i)
{
    return s->o.n_clusters > 0 ? s->o.clusters[i].client : s->o.client;
}

/* The REST client's counters of each cluster (cluster-labelled with
 * several), read once per cluster for both families. */
static void metrics_clients(sluice_server_t *s, FILE *m)
{
    size_t n = server_cluster_count(s);
    sluice_client_stats_t *cs = calloc(n, sizeof(*cs));
    char lb[160];
    int any = 0;

    if (cs == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        if (client_of(s, i) != NULL) {
            sluice_client_stats(client_of(s, i), &cs[i]);
            any = 1;
        }
    if (!any) { /* only with the REST client(s) */
        free(cs);
        return;
    }
    fprintf(m, "# HELP sluice_slurmrestd_requests_total Requests sent to slurmrestd, by kind.\n"
               "# TYPE sluice_slurmrestd_requests_total counter\n");
    for (size_t i = 0; i < n; i++) {
        const char *l = cluster_label(s, i, lb, sizeof(lb));

        if (client_of(s, i) != NULL)
            fprintf(m,
                    "sluice_slurmrestd_requests_total{%skind=\"submit\"} %" PRIu64 "\n"
                    "sluice_slurmrestd_requests_total{%skind=\"query\"} %" PRIu64 "\n"
                    "sluice_slurmrestd_requests_total{%skind=\"cancel\"} %" PRIu64 "\n",
                    l, cs[i].submit, l, cs[i].query, l, cs[i].cancel);
    }
    fprintf(m, "# HELP sluice_slurmrestd_responses_total Exchanges with slurmrestd by outcome "
               "class (a transport failure is unavailable).\n"
               "# TYPE sluice_slurmrestd_responses_total counter\n");
    for (size_t i = 0; i < n; i++) {
        const char *l = cluster_label(s, i, lb, sizeof(lb));

        if (client_of(s, i) != NULL)
            fprintf(m,
                    "sluice_slurmrestd_responses_total{%sclass=\"ok\"} %" PRIu64 "\n"
                    "sluice_slurmrestd_responses_total{%sclass=\"auth\"} %" PRIu64 "\n"
                    "sluice_slurmrestd_responses_total{%sclass=\"unavailable\"} %" PRIu64 "\n"
                    "sluice_slurmrestd_responses_total{%sclass=\"rejected\"} %" PRIu64 "\n"
                    "sluice_slurmrestd_responses_total{%sclass=\"not-found\"} %" PRIu64 "\n",
                    l, cs[i].ok, l, cs[i].auth, l, cs[i].unavailable, l, cs[i].rejected, l,
                    cs[i].not_found);
    }
    free(cs);
}

/* The launchers' own counters: reconciliations and accounting misses,
 * per cluster with several; the tracked launches (under each cluster's
 * mutex). */
static void metrics_launchers(sluice_server_t *s, FILE *m)
{
    sluice_launcher_stats_t ls;
    char lb[160];
    size_t n = server_cluster_count(s);

    fprintf(m, "# HELP sluice_launches_tracked Launches the supervisor is driving.\n"
               "# TYPE sluice_launches_tracked gauge\n");
    for (size_t i = 0; i < n; i++) {
        char one[160];
        size_t tracked;

        pthread_mutex_lock(server_cluster_mu(s, i));
        tracked = sluice_launcher_tracked(server_cluster_launcher(s, i));
        pthread_mutex_unlock(server_cluster_mu(s, i));
        if (s->o.n_clusters > 0)
            snprintf(one, sizeof(one), "{cluster=\"%s\"}", s->o.clusters[i].name);
        else
            one[0] = '\0';
        fprintf(m, "sluice_launches_tracked%s %zu\n", one, tracked);
    }
    fprintf(m, "# HELP sluice_accounting_misses_total Accounting reads that found no record of "
               "a job that left the queue.\n"
               "# TYPE sluice_accounting_misses_total counter\n");
    for (size_t i = 0; i < n; i++) {
        const char *l = cluster_label(s, i, lb, sizeof(lb));
        char one[160];

        sluice_launcher_stats(server_cluster_launcher(s, i), &ls);
        snprintf(one, sizeof(one), "%s", l);
        if (one[0] != '\0')
            one[strlen(one) - 1] = '\0'; /* no trailing comma */
        fprintf(m, "sluice_accounting_misses_total%s%s%s %" PRIu64 "\n", one[0] ? "{" : "", one,
                one[0] ? "}" : "", ls.accounting_misses);
    }
    fprintf(m, "# HELP sluice_submit_reconciliations_total Uncertain submits settled by "
               "reconciliation, by outcome.\n"
               "# TYPE sluice_submit_reconciliations_total counter\n");
    for (size_t i = 0; i < n; i++) {
        const char *l = cluster_label(s, i, lb, sizeof(lb));

        sluice_launcher_stats(server_cluster_launcher(s, i), &ls);
        fprintf(
            m,
            "sluice_submit_reconciliations_total{%soutcome=\"adopted-live\"} %" PRIu64 "\n"
            "sluice_submit_reconciliations_total{%soutcome=\"adopted-accounting\"} %" PRIu64 "\n"
            "sluice_submit_reconciliations_total{%soutcome=\"absence-confirmed\"} %" PRIu64 "\n",
            l, ls.adoptions_live, l, ls.adoptions_accounting, l, ls.absences_confirmed);
    }
}

/* The counters of the launcher cycle, the REST client, the launcher's
 * reconciliation and the HTTP side, in Prometheus text format. */
static void metrics_counters(sluice_server_t *s, FILE *m)
{
    sluice_timing_t tm[SLUICE_TIMING_COUNT];
    unsigned long long n;
    size_t i;

    fprintf(m, "# HELP sluice_launcher_cycle_seconds Duration of one launcher cycle (poll, submit, "
               "reconcile, cancel).\n"
               "# TYPE sluice_launcher_cycle_seconds histogram\n");
    for (i = 0; i < N_CYCLE_BUCKETS; i++)
        fprintf(m, "sluice_launcher_cycle_seconds_bucket{le=\"%g\"} %llu\n", cycle_buckets[i],
                (unsigned long long)atomic_load(&s->cycle_le[i]));
    n = atomic_load(&s->cycle_count);
    fprintf(m,
            "sluice_launcher_cycle_seconds_bucket{le=\"+Inf\"} %llu\n"
            "sluice_launcher_cycle_seconds_sum %.6f\n"
            "sluice_launcher_cycle_seconds_count %llu\n"
            "# HELP sluice_launcher_cycle_errors_total Launcher cycles that ended in an error.\n"
            "# TYPE sluice_launcher_cycle_errors_total counter\n"
            "sluice_launcher_cycle_errors_total %llu\n",
            n, (double)atomic_load(&s->cycle_sum_us) / 1e6, n,
            (unsigned long long)atomic_load(&s->cycle_errors));
    metrics_clients(s, m);
    metrics_launchers(s, m);
    fprintf(m,
            "# HELP sluice_launches_pruned_total Finished launches removed by retention.\n"
            "# TYPE sluice_launches_pruned_total counter\n"
            "sluice_launches_pruned_total %llu\n"
            "# HELP sluice_logs_pruned_total Archived logs removed by retention (launches whose "
            "stored logs went, and this host's log directories).\n"
            "# TYPE sluice_logs_pruned_total counter\n"
            "sluice_logs_pruned_total %llu\n"
            "# HELP sluice_http_launch_views_total GET /v1/launches/{id} answers, by whether "
            "the cached answer was still current.\n"
            "# TYPE sluice_http_launch_views_total counter\n"
            "sluice_http_launch_views_total{cache=\"hit\"} %llu\n"
            "sluice_http_launch_views_total{cache=\"miss\"} %llu\n"
            "# HELP sluice_http_connections Open HTTP connections (TCP and Unix socket).\n"
            "# TYPE sluice_http_connections gauge\n"
            "sluice_http_connections %u\n"
            "# HELP sluice_http_refused_total Requests refused before routing, by reason.\n"
            "# TYPE sluice_http_refused_total counter\n"
            "sluice_http_refused_total{reason=\"busy\"} %llu\n"
            "sluice_http_refused_total{reason=\"too-large\"} %llu\n"
            "sluice_http_refused_total{reason=\"body-timeout\"} %llu\n"
            "sluice_http_refused_total{reason=\"head-timeout\"} %llu\n"
            "sluice_http_refused_total{reason=\"head-evicted\"} %llu\n",
            (unsigned long long)atomic_load(&s->pruned),
            (unsigned long long)atomic_load(&s->pruned_logs),
            (unsigned long long)atomic_load(&s->view_hits),
            (unsigned long long)atomic_load(&s->view_misses), atomic_load(&s->open_conns),
            (unsigned long long)atomic_load(&s->refused_busy),
            (unsigned long long)atomic_load(&s->refused_too_large),
            (unsigned long long)atomic_load(&s->body_timeouts),
            (unsigned long long)atomic_load(&s->head_timeouts),
            (unsigned long long)atomic_load(&s->head_evictions));
    sluice_timings(tm);
    fprintf(m, "# HELP sluice_submit_phase_seconds_total Wall time of the submit path, by phase "
               "(a group's time counted once for the group).\n"
               "# TYPE sluice_submit_phase_seconds_total counter\n");
    for (i = 0; i < SLUICE_TIMING_COUNT; i++)
        fprintf(m, "sluice_submit_phase_seconds_total{phase=\"%s\"} %.6f\n",
                sluice_timing_name((int)i), (double)tm[i].sum_ns / 1e9);
    fprintf(m, "# HELP sluice_submit_phase_launches_total Launches that went through each phase "
               "of the submit path.\n"
               "# TYPE sluice_submit_phase_launches_total counter\n");
    for (i = 0; i < SLUICE_TIMING_COUNT; i++)
        fprintf(m, "sluice_submit_phase_launches_total{phase=\"%s\"} %" PRIu64 "\n",
                sluice_timing_name((int)i), tm[i].count);
}

/* The webhook outbox (store/store_webhooks.h): read from the store,
 * whose counters survive restarts; all zero while webhooks are off. */
static void metrics_webhooks(sluice_server_t *s, FILE *m)
{
    store_webhook_stats_t w;
    sluice_err rc;

    pthread_mutex_lock(&s->rmu);
    rc = store_webhooks_stats(s->rstore, &w, NULL);
    pthread_mutex_unlock(&s->rmu);
    if (rc != SLUICE_OK)
        return;
    fprintf(m,
            "# HELP sluice_webhook_queue_depth Webhook deliveries in the store, by state (dead: "
            "out of attempts, kept).\n"
            "# TYPE sluice_webhook_queue_depth gauge\n"
            "sluice_webhook_queue_depth{state=\"pending\"} %" PRId64 "\n"
            "sluice_webhook_queue_depth{state=\"dead\"} %" PRId64 "\n"
            "# HELP sluice_webhook_deliveries_total Webhook deliveries settled, by outcome "
            "(failed: out of attempts).\n"
            "# TYPE sluice_webhook_deliveries_total counter\n"
            "sluice_webhook_deliveries_total{outcome=\"delivered\"} %" PRId64 "\n"
            "sluice_webhook_deliveries_total{outcome=\"failed\"} %" PRId64 "\n"
            "# HELP sluice_webhook_retries_total Failed webhook attempts scheduled again.\n"
            "# TYPE sluice_webhook_retries_total counter\n"
            "sluice_webhook_retries_total %" PRId64 "\n",
            w.pending, w.dead, w.delivered, w.failed, w.retries);
}

/* Zero for every public state. */
static json_t *zero_states(void)
{
    json_t *by_state = json_object();

    for (size_t i = 0; by_state != NULL && i < (size_t)SLUICE_FSM_STATE_COUNT_; i++) {
        const char *name = sluice_fsm_state_name((sluice_fsm_state)i);
        if (name && sluice_fsm_state_public((sluice_fsm_state)i) == (sluice_fsm_state)i)
            json_object_set_new(by_state, name, json_integer(0));
    }
    return by_state;
}

/* The Prometheus labels of one launch's series: cluster="..." with
 * by_cluster (a launch stored with none is the first cluster's) and
 * tenant="..." with by_tenant, comma-separated, into buf. */
static void labels_of(const sluice_server_t *s,
                      const char *cluster,
                      const char *key,
                      int by_cluster,
                      int by_tenant,
                      char *buf,
                      size_t cap)
{
    char t[40];
    int n = 0;

    buf[0] = '\0';
    if (by_cluster)
        n = snprintf(buf, cap, "cluster=\"%s\"", cluster ? cluster : s->o.clusters[0].name);
    if (by_tenant) {
        if (marker_key_tenant(key, t, sizeof(t)) == 0)
            snprintf(t, sizeof(t), "%s", SLUICE_TENANT_DEFAULT);
        snprintf(buf + n, cap - (size_t)n, "%stenant=\"%s\"", n > 0 ? "," : "", t);
    }
}

/* Launches by labels and state ({labels: {state: n}}, labels as
 * labels_of() writes them; "" without either), every combination of the
 * site's clusters and tenants present even at zero.  `tenant` (NULL:
 * every one) keeps one tenant's launches only ("" the default tenant's). */
static sluice_err
launch_counts(sluice_server_t *s, int by_cluster, int by_tenant, const char *tenant, json_t **out)
{
    json_t *all = json_object(), *items = NULL, *it;
    sluice_store_filter_t f;
    char *cursor = NULL, *next = NULL, labels[160], key[48];
    size_t i, j, nt = by_tenant ? sluice_config_tenant_count(s->o.cfg) + 1 : 1;
    size_t nc = by_cluster ? s->o.n_clusters : 1;
    int ok = 1;

    if (all == NULL)
        return SLUICE_ENOMEM;
    for (i = 0; i < nc; i++)
        for (j = 0; j < nt; j++) {
            const sluice_tenant_t *tn = j > 0 ? sluice_config_tenant_at(s->o.cfg, j - 1) : NULL;

            snprintf(key, sizeof(key), "%s~x", tn != NULL ? tn->name : "");
            labels_of(s, by_cluster ? s->o.clusters[i].name : NULL, tn != NULL ? key : "x",
                      by_cluster, by_tenant, labels, sizeof(labels));
            json_object_set_new(all, labels, zero_states());
        }
    pthread_mutex_lock(&s->rmu);
    do {
        memset(&f, 0, sizeof(f));
        f.limit = 1000;
        f.cursor = cursor;
        f.tenant = tenant;
        if (sluice_store_list_launches(s->rstore, &f, &items, &next, NULL) != SLUICE_OK) {
            ok = 0;
            break;
        }
        json_array_foreach(items, i, it)
        {
            const char *st = json_string_value(json_object_get(it, "state"));
            const char *cl = json_string_value(json_object_get(it, "cluster"));
            const char *id = json_string_value(json_object_get(it, "launch_id"));
            json_t *by_state;

            labels_of(s, cl, id ? id : "", by_cluster, by_tenant, labels, sizeof(labels));
            by_state = json_object_get(all, labels);
            if (by_state == NULL) {
                /* a tenant or cluster the site no longer names */
                json_object_set_new(all, labels, zero_states());
                by_state = json_object_get(all, labels);
            }
            if (st && by_state)
                json_object_set_new(
                    by_state, st,
                    json_integer(json_integer_value(json_object_get(by_state, st)) + 1));
        }
        json_decref(items);
        items = NULL;
        free(cursor);
        cursor = next;
        next = NULL;
    } while (cursor);
    pthread_mutex_unlock(&s->rmu);
    free(cursor);
    if (!ok) {
        json_decref(all);
        return SLUICE_ESTORE;
    }
    *out = all;
    return SLUICE_OK;
}

sluice_err server_metrics_launch_counts(sluice_server_t *s, const char *tenant, json_t **out)
{
    json_t *all = NULL;
    sluice_err rc = launch_counts(s, 0, 0, tenant, &all);

    if (rc != SLUICE_OK)
        return rc;
    *out = json_incref(json_object_get(all, ""));
    json_decref(all);
    return *out != NULL ? SLUICE_OK : SLUICE_ENOMEM;
}

sluice_err server_metrics_render(sluice_server_t *s, char **text_out)
{
    json_t *by_state = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *m;
    const char *k, *st;
    json_t *v, *lv;
    sluice_err rc;

    if ((rc = launch_counts(s, s->o.n_clusters > 0, sluice_config_tenant_count(s->o.cfg) > 0, NULL,
                            &by_state)) != SLUICE_OK)
        return rc;
    if ((m = open_memstream(&text, &len)) == NULL) {
        json_decref(by_state);
        return SLUICE_ENOMEM;
    }
    fprintf(m, "# HELP sluice_launches Launches in the store by state.\n"
               "# TYPE sluice_launches gauge\n");
    json_object_foreach(by_state, k, lv)
    {
        json_object_foreach(lv, st, v)
        {
            fprintf(m, "sluice_launches{%s%sstate=\"%s\"} %" JSON_INTEGER_FORMAT "\n", k,
                    k[0] ? "," : "", st, json_integer_value(v));
        }
    }
    fprintf(m,
            "# HELP sluice_transitions_total State or result changes seen by the supervisor.\n"
            "# TYPE sluice_transitions_total counter\n"
            "sluice_transitions_total %llu\n"
            "# HELP sluice_http_requests_total HTTP requests answered.\n"
            "# TYPE sluice_http_requests_total counter\n"
            "sluice_http_requests_total %llu\n",
            (unsigned long long)atomic_load(&s->transitions),
            (unsigned long long)atomic_load(&s->requests));
    if (s->o.token_ttl_s) {
        int64_t ttl;
        pthread_mutex_lock(&s->mu);
        ttl = s->o.token_ttl_s(s->o.cluster_arg);
        pthread_mutex_unlock(&s->mu);
        if (ttl >= 0)
            fprintf(m,
                    "# HELP sluice_token_expiry_seconds Seconds until the Slurm JWT expires.\n"
                    "# TYPE sluice_token_expiry_seconds gauge\n"
                    "sluice_token_expiry_seconds %" PRId64 "\n",
                    ttl);
    }
    metrics_counters(s, m);
    metrics_webhooks(s, m);
    server_ha_metrics(s, m);
    fclose(m);
    json_decref(by_state);
    if (text == NULL)
        return SLUICE_ENOMEM;
    *text_out = text;
    return SLUICE_OK;
}

void sluice_server_count_transition(sluice_server_t *s)
{
    if (s == NULL)
        return;
    atomic_fetch_add(&s->transitions, 1);
    /* committed: the next GET looks before it answers (not only after the
     * cycle), and watchers look now */
    atomic_store(&s->views_dirty, 1);
    server_wake_streams(s);
}
