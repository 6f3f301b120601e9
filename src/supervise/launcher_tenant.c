/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_tenant.c - who acts on Slurm for a launch: the default tenant
 * (the launcher's own cluster operations and user) for a launch key
 * without a tenant, the tenant's own operations and user for
 * "<tenant>~<launch_id>" (marker.h), and nobody for a tenant the launcher
 * was not given.
 *
 * Notes:
 * - The tenant of a launch is read from its key only: the HTTP layer
 *   qualified the caller's id with the caller's tenant before the accept,
 *   so a caller cannot name another tenant's identity.
 * - A launch of an unknown tenant (the site dropped the tenant while its
 *   launches lived) gets the refusing table below: its submit is REJECTED
 *   (nothing sent), every read is UNAVAILABLE (nothing concluded) and a
 *   cancel is refused.  It never falls back to the site's identity.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/log.h>

#include "base/marker.h"
#include "launcher_int.h"

/* ---- the refusing table ------------------------------------------------- */

static sluice_submit_outcome
refuse_submit(void *arg, const sluice_jobdesc_t *descs, size_t n, sluice_submit_result_t *out)
{
    (void)arg;
    (void)descs;
    (void)n;
    memset(out, 0, sizeof(*out));
    snprintf(out->detail, sizeof(out->detail),
             "the launch's tenant is not configured on this service: nothing was submitted");
    return SLUICE_SUBMIT_REJECTED;
}

static sluice_lookup
refuse_get(void *arg, uint64_t job_id, sluice_jobview_t **views_out, size_t *n_out)
{
    (void)arg;
    (void)job_id;
    *views_out = NULL;
    *n_out = 0;
    return SLUICE_LOOKUP_UNAVAILABLE;
}

static sluice_lookup
refuse_states(void *arg, const uint64_t *ids, size_t n, sluice_job_state_t *states)
{
    (void)arg;
    (void)ids;
    (void)states;
    (void)n;
    return SLUICE_LOOKUP_UNAVAILABLE;
}

static sluice_lookup refuse_live(
    void *arg, const char *name, const char *user, sluice_jobview_t **views_out, size_t *n_out)
{
    (void)arg;
    (void)name;
    (void)user;
    *views_out = NULL;
    *n_out = 0;
    return SLUICE_LOOKUP_UNAVAILABLE;
}

static sluice_lookup refuse_acct(void *arg,
                                 const char *name,
                                 const char *user,
                                 int64_t start,
                                 int64_t end,
                                 sluice_jobview_t **views_out,
                                 size_t *n_out)
{
    (void)start;
    (void)end;
    return refuse_live(arg, name, user, views_out, n_out);
}

static sluice_err refuse_cancel(void *arg, uint64_t job_id, int signal, sluice_error_t *err)
{
    (void)arg;
    (void)signal;
    return sluice_errorf(err, SLUICE_EPERM,
                         "job %" PRIu64 ": the launch's tenant is not configured on this "
                         "service: no identity may cancel it",
                         job_id);
}

static const sluice_cluster_ops_t refusing_ops = {
    .submit = refuse_submit,
    .get_job = refuse_get,
    .job_states = refuse_states,
    .find_live_by_name = refuse_live,
    .find_acct_by_name = refuse_acct,
    .acct_job = refuse_get,
    .cancel = refuse_cancel,
};

/* ---- the table of actors ------------------------------------------------ */

sluice_err
launcher_tenants_create(sluice_launcher_t *l, const sluice_launcher_opts_t *o, sluice_error_t *err)
{
    size_t n = o->version >= 2 && o->tenants != NULL ? o->n_tenants : 0;

    l->actors = calloc(n + 1, sizeof(*l->actors));
    l->refused.name = strdup("?");
    l->refused.user = strdup(""); /* no view names "": the launcher never keeps one */
    l->refused.cl = refusing_ops;
    if (l->actors == NULL || l->refused.name == NULL || l->refused.user == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    l->n_actors = 1;
    l->actors[0].name = strdup("");
    l->actors[0].user = strdup(l->user);
    l->actors[0].cl = l->cl;
    if (l->actors[0].name == NULL || l->actors[0].user == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const sluice_launcher_tenant_t *t = &o->tenants[i];
        launcher_actor_t *A = &l->actors[l->n_actors];
        const char *user = t->user;

        if (t->name == NULL || t->name[0] == '\0' || strchr(t->name, '~') != NULL)
            return sluice_errorf(err, SLUICE_EINVAL, "launcher: tenant %zu has no usable name", i);
        if (t->cluster.submit == NULL || t->cluster.get_job == NULL ||
            t->cluster.job_states == NULL || t->cluster.find_live_by_name == NULL ||
            t->cluster.find_acct_by_name == NULL || t->cluster.acct_job == NULL ||
            t->cluster.cancel == NULL)
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "launcher: tenant %s: every cluster operation is required",
                                 t->name);
        if ((user == NULL || user[0] == '\0') && t->cluster.user != NULL)
            user = t->cluster.user(t->cluster.arg);
        if (user == NULL || user[0] == '\0')
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "launcher: tenant %s has no Slurm user: ownership of its jobs "
                                 "cannot be checked",
                                 t->name);
        A->name = strdup(t->name);
        A->user = strdup(user);
        A->cl = t->cluster;
        l->n_actors++;
        if (A->name == NULL || A->user == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    }
    return SLUICE_OK;
}

void launcher_tenants_destroy(sluice_launcher_t *l)
{
    for (size_t i = 0; l->actors != NULL && i < l->n_actors; i++) {
        free(l->actors[i].name);
        free(l->actors[i].user);
    }
    free(l->actors);
    free(l->refused.name);
    free(l->refused.user);
    l->actors = NULL;
    l->n_actors = 0;
}

size_t launcher_actor_index(const sluice_launcher_t *l, const char *id)
{
    char tenant[64];

    if (marker_key_tenant(id != NULL ? id : "", tenant, sizeof(tenant)) == 0)
        return 0;
    for (size_t i = 1; i < l->n_actors; i++)
        if (strcmp(l->actors[i].name, tenant) == 0)
            return i;
    return l->n_actors; /* unknown: the refusing actor */
}

const launcher_actor_t *launcher_actor_at(const sluice_launcher_t *l, size_t i)
{
    return i < l->n_actors ? &l->actors[i] : &l->refused;
}

const launcher_actor_t *launcher_actor(const sluice_launcher_t *l, const char *id)
{
    const launcher_actor_t *A = launcher_actor_at(l, launcher_actor_index(l, id));

    if (A == &l->refused)
        sluice_log(SLUICE_LOG_DEBUG, "launch %s: its tenant is not configured: not acted on", id);
    return A;
}
