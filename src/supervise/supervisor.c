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
 * - One set of client, operations and launcher per cluster of the site
 *   (sluice_config_cluster_at): each launcher has its own poller and
 *   budgets, and takes only its own cluster's launches.  The store's
 *   supervisor lock is taken once, here, before the first launcher is
 *   made (launchers run with store_locked), and released after the last
 *   is freed.
 * - Replicas (opts.replicas, PostgreSQL): the leader object is made right
 *   after the launchers and fences the store before anything is written;
 *   recovery is then the serve loops', each when it leads (server_ha.c).
 * - The webhook worker (webhooks.c; only when the site turns webhooks on)
 *   starts after recovery and stops first.  Every transition the launcher
 *   reports wakes it before the caller's own callback runs.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/ops.h>
#include <sluice/supervisor.h>

#include "base/opts.h"
#include "site/config_model.h"
#include "webhooks.h"

/* One cluster's part: everything a launcher talks to the cluster with. */
typedef struct {
    const sluice_config_t *cfg; /* the cluster's (borrowed from the site's) */
    sluice_client_t *client;
    sluice_cluster_rest_t *cluster;
    sluice_launcher_opts_t lo; /* holds the staging table */
    sluice_launcher_t *launcher;
    /* one per tenant of the site (sluice_config_tenant_at), in its order:
     * the client acting as the tenant's user, its operations, and the
     * launcher's entry naming them */
    sluice_client_t **tclient;
    sluice_cluster_rest_t **trest;
    sluice_launcher_tenant_t *tenants;
    size_t n_tenants;
} sup_cluster_t;

struct sluice_supervisor {
    sluice_store_t *store;
    sup_cluster_t *c; /* one per cluster of the site, in its order */
    size_t n;
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

/* The tenants' clients and operations on cluster c (made after the
 * cluster's own client: a proxy borrows its token source).  A tenant's
 * operations have no extra submit clients (cfg NULL): its POSTs of a
 * batch go one at a time, each as the tenant, never on a client of the
 * site's identity. */
static sluice_err open_tenants(sup_cluster_t *c, const sluice_config_t *site, sluice_error_t *err)
{
    size_t n = sluice_config_tenant_count(site);
    sluice_err rc;

    if (n == 0)
        return SLUICE_OK;
    c->tclient = calloc(n, sizeof(*c->tclient));
    c->trest = calloc(n, sizeof(*c->trest));
    c->tenants = calloc(n, sizeof(*c->tenants));
    if (c->tclient == NULL || c->trest == NULL || c->tenants == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "supervisor: out of memory");
    c->n_tenants = n;
    for (size_t k = 0; k < n; k++) {
        const sluice_tenant_t *t = sluice_config_tenant_at(site, k);

        if ((rc = sluice_client_new_for_tenant(&c->tclient[k], c->cfg, t, c->client, err)) !=
                SLUICE_OK ||
            (rc = sluice_cluster_rest_new(&c->trest[k], c->tclient[k], NULL, err)) != SLUICE_OK)
            return rc;
        c->tenants[k].name = t->name;
        c->tenants[k].user = t->slurm_user;
        sluice_cluster_rest_ops(c->trest[k], &c->tenants[k].cluster);
    }
    return SLUICE_OK;
}

/* The client, the cluster and staging operations and the launcher of
 * cluster c (named when the site has several: it then takes only its own
 * launches, the first also those stored with none). */
static sluice_err open_cluster(sluice_supervisor_t *sup,
                               sup_cluster_t *c,
                               size_t i,
                               const sluice_config_t *site,
                               const sluice_supervisor_opts_t *opts,
                               sluice_error_t *err)
{
    sluice_err rc;

    c->cfg = sluice_config_cluster_at(site, i);
    if ((rc = sluice_client_new_from_config(&c->client, c->cfg, err)) != SLUICE_OK ||
        (rc = sluice_cluster_rest_new(&c->cluster, c->client, c->cfg, err)) != SLUICE_OK ||
        (rc = open_tenants(c, site, err)) != SLUICE_OK)
        return rc;
    c->lo = (sluice_launcher_opts_t)SLUICE_LAUNCHER_OPTS_INIT;
    c->lo.store = sup->store;
    sluice_cluster_rest_ops(c->cluster, &c->lo.cluster);
    if ((rc = sluice_staging_ops_new(c->cfg, sup->store, &c->lo.staging, err)) != SLUICE_OK ||
        (rc = sluice_staging_ops_use_tenants(&c->lo.staging, site, err)) != SLUICE_OK)
        return rc;
    sluice_launcher_opts_from_config(c->cfg, &c->lo);
    if (opts->submit_in_flight > 0)
        c->lo.submit_in_flight = opts->submit_in_flight;
    c->lo.on_transition = on_transition;
    c->lo.transition_arg = sup;
    c->lo.store_locked = true; /* taken once, for every cluster's launcher */
    c->lo.tenants = c->tenants;
    c->lo.n_tenants = c->n_tenants;
    if (sluice_config_cluster_name(site) == NULL) { /* the site has `clusters:` */
        c->lo.cluster_name = sluice_config_cluster_name(c->cfg);
        c->lo.cluster_default = i == 0;
    }
    return sluice_launcher_new(&c->launcher, &c->lo, err);
}

/* Replicas on PostgreSQL: the leader object, fencing the store before
 * anything is written; it recovers nothing (the serve loops do, when they
 * lead). */
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
    sluice_store_opts_t so = SLUICE_STORE_OPTS_INIT;
    sluice_supervisor_t *sup = NULL;
    size_t i, n = sluice_config_cluster_count(cfg);
    sluice_err rc;

    if (out == NULL || cfg == NULL || n == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "supervisor: out and cfg are required");
    if (opts == NULL)
        opts = &defaults;
    if ((rc = opts_check_version("supervisor", opts->version, SLUICE_SUPERVISOR_OPTS_VERSION,
                                 err)) != SLUICE_OK)
        return rc;
    if ((sup = calloc(1, sizeof(*sup))) == NULL || (sup->c = calloc(n, sizeof(*sup->c))) == NULL) {
        free(sup);
        return sluice_errorf(err, SLUICE_ENOMEM, "supervisor: out of memory");
    }
    sup->n = n;
    sup->user_fn = opts->on_transition;
    sup->user_arg = opts->transition_arg;
    /* The state directory always; the database there (SQLite) or at
     * store.url (PostgreSQL).  One supervisor lock for the process, taken
     * before any launcher exists and released after the last is freed. */
    so.dir = opts->state_dir;
    so.url = cfg->store.url;
    so.password_file = cfg->store.password_file;
    if ((rc = sluice_store_open_with(&sup->store, &so, err)) != SLUICE_OK ||
        (rc = sluice_store_lock_supervisor(sup->store, err)) != SLUICE_OK)
        goto out;
    for (i = 0; i < n; i++)
        if ((rc = open_cluster(sup, &sup->c[i], i, cfg, opts, err)) != SLUICE_OK)
            goto out;
    if (orphans_out != NULL)
        *orphans_out = 0;
    if ((rc = open_leader(sup, cfg, opts, err)) != SLUICE_OK)
        goto out;
    for (i = 0; i < n && sup->leader == NULL; i++) {
        size_t orphans = 0;
        if ((rc = sluice_launcher_recover(sup->c[i].launcher, &orphans, err)) != SLUICE_OK)
            goto out;
        if (orphans_out != NULL)
            *orphans_out += orphans;
    }
    /* With replicas the worker delivers only while this replica leads. */
    if ((rc = webhooks_new(&sup->webhooks, sup->store, cfg, false, err)) != SLUICE_OK ||
        (rc = webhooks_start(sup->webhooks, sup->leader, err)) != SLUICE_OK)
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
    for (size_t i = 0; sup->c != NULL && i < sup->n; i++) {
        sluice_launcher_free(sup->c[i].launcher);
        sluice_staging_ops_free(&sup->c[i].lo.staging);
        for (size_t k = 0; k < sup->c[i].n_tenants; k++) {
            sluice_cluster_rest_free(sup->c[i].trest[k]);
            sluice_client_free(sup->c[i].tclient[k]); /* before the client a proxy borrows */
        }
        free(sup->c[i].trest);
        free(sup->c[i].tclient);
        free(sup->c[i].tenants);
        sluice_cluster_rest_free(sup->c[i].cluster);
        sluice_client_free(sup->c[i].client);
    }
    free(sup->c);
    if (sup->store != NULL)
        sluice_store_unlock_supervisor(sup->store);
    sluice_store_close(sup->store);
    free(sup);
}

size_t sluice_supervisor_cluster_count(const sluice_supervisor_t *sup)
{
    return sup ? sup->n : 0;
}

sluice_launcher_t *sluice_supervisor_launcher_at(const sluice_supervisor_t *sup, size_t i)
{
    return sup && i < sup->n ? sup->c[i].launcher : NULL;
}

sluice_client_t *sluice_supervisor_client_at(const sluice_supervisor_t *sup, size_t i)
{
    return sup && i < sup->n ? sup->c[i].client : NULL;
}

const sluice_config_t *sluice_supervisor_cluster_config(const sluice_supervisor_t *sup, size_t i)
{
    return sup && i < sup->n ? sup->c[i].cfg : NULL;
}

sluice_launcher_t *sluice_supervisor_launcher_for(const sluice_supervisor_t *sup,
                                                  const char *cluster)
{
    if (sup == NULL)
        return NULL;
    if (cluster == NULL || cluster[0] == '\0')
        return sup->c[0].launcher;
    for (size_t i = 0; i < sup->n; i++) {
        const char *name = sluice_config_cluster_name(sup->c[i].cfg);
        if (name != NULL && strcmp(name, cluster) == 0)
            return sup->c[i].launcher;
    }
    return NULL;
}

sluice_launcher_t *sluice_supervisor_launcher(const sluice_supervisor_t *sup)
{
    return sluice_supervisor_launcher_at(sup, 0);
}

sluice_store_t *sluice_supervisor_store(const sluice_supervisor_t *sup)
{
    return sup ? sup->store : NULL;
}

sluice_client_t *sluice_supervisor_client(const sluice_supervisor_t *sup)
{
    return sluice_supervisor_client_at(sup, 0);
}

sluice_leader_t *sluice_supervisor_leader(const sluice_supervisor_t *sup)
{
    return sup ? sup->leader : NULL;
}

sluice_err sluice_supervisor_opts_init(sluice_supervisor_opts_t *opts,
                                       unsigned int version,
                                       sluice_error_t *err)
{
    static const sluice_supervisor_opts_t tmpl = SLUICE_SUPERVISOR_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "supervisor", version,
                     SLUICE_SUPERVISOR_OPTS_VERSION, err);
}
