/* SPDX-License-Identifier: Apache-2.0 */
/* supervisor.c - the supervisor of a process (supervisor.h): store, REST
 * client, cluster operations, staging operations and launcher, made in
 * that order, recovered, and freed in reverse.
 *
 * Notes:
 * - The cluster operations are the concurrent ones
 *   (sluice_cluster_rest_new: submit.in_flight POSTs at once, each on a
 *   client of its own) for every caller, so `sluice launch --wait`
 *   submits exactly as `sluice serve` does.
 * - The launcher is made last because it takes the store's lock; freeing
 *   it first releases the lock before anything else goes.
 * - Replicas (opts.replicas, PostgreSQL): the leader object is made right
 *   after the launcher and fences its store before anything is written;
 *   recovery is then the serve loop's, when it leads (server_ha.c).
 * - The webhook worker (webhooks.c; only when the site turns webhooks on)
 *   starts after recovery and stops first.  Every transition the launcher
 *   reports wakes it before the caller's own callback runs.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/ops.h>
#include <sluice/supervisor.h>

#include "webhooks.h"

struct sluice_supervisor {
    sluice_store_t *store;
    sluice_client_t *client;
    sluice_cluster_rest_t *cluster;
    sluice_launcher_opts_t lo; /* holds the staging table */
    sluice_launcher_t *launcher;
    webhooks_t *webhooks;    /* NULL unless the site turns webhooks on */
    sluice_leader_t *leader; /* NULL unless replicas (opts.replicas, PostgreSQL) */
    sluice_launcher_transition_fn user_fn;
    void *user_arg;
};

static void on_transition(const sluice_launcher_transition_t *t, void *arg)
{
    sluice_supervisor_t *sup = arg;

    webhooks_poke(sup->webhooks);
    if (sup->user_fn != NULL)
        sup->user_fn(t, sup->user_arg);
}

/* Replicas on PostgreSQL: the leader object, fencing the store before
 * anything is written; it recovers nothing (the serve loop does, when it
 * leads). */
static sluice_err open_leader(sluice_supervisor_t *sup,
                              const sluice_config_t *cfg,
                              const sluice_supervisor_opts_t *opts,
                              sluice_error_t *err)
{
    sluice_leader_opts_t lo = SLUICE_LEADER_OPTS_INIT;
    sluice_err rc;

    if (!opts->replicas || strcmp(sluice_store_backend(sup->store), "postgresql") != 0)
        return SLUICE_OK;
    lo.replica_id = cfg->ha.replica_id;
    lo.lease_ms = cfg->ha.lease_ms;
    lo.renew_ms = cfg->ha.renew_ms;
    if ((rc = sluice_leader_new(&sup->leader, sup->store, &lo, err)) != SLUICE_OK)
        return rc;
    return sluice_leader_start(sup->leader, err);
}

sluice_err sluice_supervisor_open(sluice_supervisor_t **out,
                                  const sluice_config_t *cfg,
                                  const sluice_supervisor_opts_t *opts,
                                  size_t *orphans_out,
                                  sluice_error_t *err)
{
    static const sluice_supervisor_opts_t defaults = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_store_options_t so = SLUICE_STORE_OPTIONS_INIT;
    sluice_supervisor_t *sup = NULL;
    sluice_err rc;

    if (out == NULL || cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "supervisor: out and cfg are required");
    if (opts == NULL)
        opts = &defaults;
    if ((sup = calloc(1, sizeof(*sup))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "supervisor: out of memory");
    /* The state directory always; the database there (SQLite) or at
     * store.url (PostgreSQL). */
    so.dir = opts->state_dir;
    so.url = cfg->store.url;
    so.password_file = cfg->store.password_file;
    if ((rc = sluice_store_open_with(&sup->store, &so, err)) != SLUICE_OK ||
        (rc = sluice_client_new_from_config(&sup->client, cfg, err)) != SLUICE_OK ||
        (rc = sluice_cluster_rest_new(&sup->cluster, sup->client, cfg, err)) != SLUICE_OK)
        goto out;
    sup->lo.store = sup->store;
    sluice_cluster_rest_ops(sup->cluster, &sup->lo.cluster);
    if ((rc = sluice_staging_ops_new(cfg, sup->store, &sup->lo.staging, err)) != SLUICE_OK)
        goto out;
    sluice_launcher_opts_from_config(cfg, &sup->lo);
    if (opts->submit_in_flight > 0)
        sup->lo.submit_in_flight = opts->submit_in_flight;
    sup->user_fn = opts->on_transition;
    sup->user_arg = opts->transition_arg;
    sup->lo.on_transition = on_transition;
    sup->lo.transition_arg = sup;
    if ((rc = sluice_launcher_new(&sup->launcher, &sup->lo, err)) != SLUICE_OK ||
        (rc = open_leader(sup, cfg, opts, err)) != SLUICE_OK ||
        (sup->leader == NULL &&
         (rc = sluice_launcher_recover(sup->launcher, orphans_out, err)) != SLUICE_OK) ||
        (rc = webhooks_new(&sup->webhooks, sup->store, cfg, true, err)) != SLUICE_OK)
        goto out;
    *out = sup;
    sup = NULL;
out:
    sluice_supervisor_close(sup);
    return rc;
}

void sluice_supervisor_close(sluice_supervisor_t *sup)
{
    if (sup == NULL)
        return;
    webhooks_free(sup->webhooks);
    sluice_leader_free(sup->leader); /* releases the lease: another replica takes over */
    sluice_launcher_free(sup->launcher);
    sluice_staging_ops_free(&sup->lo.staging);
    sluice_cluster_rest_free(sup->cluster);
    sluice_client_free(sup->client);
    sluice_store_close(sup->store);
    free(sup);
}

sluice_launcher_t *sluice_supervisor_launcher(const sluice_supervisor_t *sup)
{
    return sup ? sup->launcher : NULL;
}

sluice_store_t *sluice_supervisor_store(const sluice_supervisor_t *sup)
{
    return sup ? sup->store : NULL;
}

sluice_client_t *sluice_supervisor_client(const sluice_supervisor_t *sup)
{
    return sup ? sup->client : NULL;
}

sluice_leader_t *sluice_supervisor_leader(const sluice_supervisor_t *sup)
{
    return sup ? sup->leader : NULL;
}
