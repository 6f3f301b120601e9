/* SPDX-License-Identifier: Apache-2.0 */
/* policy.c - the bridge from the site model (+ study) to the launch
 * parser's policy struct.
 *
 * Notes:
 * - An empty allowed_* list in the site file means "the site's own value
 *   only": the list handed to the parser then holds the site's (and the
 *   study's) value, or nothing when neither sets one.
 * - The series array is the only allocation; strings stay borrowed.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/render.h>

#include "site/config_model.h"

static const char *const *pick(const sluice_strlist_t *allowed,
                               const char *site,
                               const char *study,
                               const char **scratch,
                               size_t *n)
{
    size_t k = 0;

    if (allowed->n > 0) {
        *n = allowed->n;
        return (const char *const *)allowed->items;
    }
    if (site && site[0])
        scratch[k++] = site;
    if (study && study[0] && (!site || strcmp(site, study) != 0))
        scratch[k++] = study;
    *n = k;
    return k ? scratch : NULL;
}

static sluice_launch_profile from_sandbox(sluice_sandbox_t s)
{
    switch (s) {
    case SLUICE_SANDBOX_ENROOT_PYXIS:
        return SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS;
    case SLUICE_SANDBOX_APPTAINER:
        return SLUICE_LAUNCH_PROFILE_APPTAINER;
    case SLUICE_SANDBOX_NONE:
        return SLUICE_LAUNCH_PROFILE_NONE;
    default:
        return SLUICE_LAUNCH_PROFILE_UNSET;
    }
}

/* The fallback lists need storage that outlives this call but not the
 * policy; they live in the series allocation's tail. */
typedef struct {
    const char *partitions[2], *accounts[2], *qos[2];
    sluice_launch_series_t series[];
} policy_store_t;

sluice_err sluice_config_launch_policy(const sluice_config_t *cfg,
                                       const sluice_study_t *study,
                                       sluice_launch_policy_t *out,
                                       sluice_error_t *err)
{
    policy_store_t *ps;
    size_t i;
    sluice_launch_profile p;

    if (!cfg || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "policy: missing argument");
    memset(out, 0, sizeof(*out));
    ps = calloc(1, sizeof(*ps) + (cfg->n_gpu_series + 1) * sizeof(sluice_launch_series_t));
    if (!ps)
        return sluice_errorf(err, SLUICE_ENOMEM, "policy: out of memory");
    p = from_sandbox(study && study->sandbox != SLUICE_SANDBOX_UNSET ? study->sandbox
                                                                     : cfg->launcher.sandbox);
    out->default_profile = p;
    for (i = 0; i < cfg->policy.allowed_profiles.n; i++) {
        sluice_launch_profile q =
            sluice_launch_profile_parse(cfg->policy.allowed_profiles.items[i]);
        if (q == SLUICE_LAUNCH_PROFILE_UNSET) {
            free(ps);
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "policy.allowed_profiles: unknown profile \"%s\"",
                                 cfg->policy.allowed_profiles.items[i]);
        }
        out->allowed_profiles |= SLUICE_LAUNCH_PROFILE_BIT(q);
    }
    out->partitions = pick(&cfg->policy.allowed_partitions, cfg->launcher.sbatch.partition,
                           study ? study->partition : NULL, ps->partitions, &out->n_partitions);
    out->accounts = pick(&cfg->policy.allowed_accounts, cfg->launcher.sbatch.account,
                         study ? study->account : NULL, ps->accounts, &out->n_accounts);
    out->qos = pick(&cfg->policy.allowed_qos, cfg->launcher.sbatch.qos, study ? study->qos : NULL,
                    ps->qos, &out->n_qos);
    for (i = 0; i < cfg->n_gpu_series; i++) {
        ps->series[i].series = cfg->gpu_series[i].name;
        ps->series[i].constraint = cfg->gpu_series[i].constraint;
        ps->series[i].gres = cfg->gpu_series[i].gres;
        ps->series[i].max_gpus_per_node =
            cfg->gpu_series[i].gpus_per_node > 0 ? (uint32_t)cfg->gpu_series[i].gpus_per_node : 0;
    }
    /* `series` points into the store, which is its own first byte's owner:
     * clear() recovers it from the series pointer. */
    out->series = ps->series;
    out->n_series = cfg->n_gpu_series;
    out->pending_timeout = cfg->launcher.pending_timeout_s > 0
                               ? (uint32_t)cfg->launcher.pending_timeout_s
                               : SLUICE_LAUNCH_DEFAULT_PENDING_TIMEOUT;
    out->allow_requeue = cfg->policy.allow_requeue;
    out->default_series = cfg->policy.default_gpu_series;
    out->keep_going = cfg->policy.keep_going;
    out->allow_keep_going = cfg->policy.allow_keep_going;
    out->python_path = study && study->python_path ? study->python_path : cfg->launcher.python_path;
    out->secret_env_allowed = cfg->policy.allowed_secret_env.items;
    out->n_secret_env_allowed = cfg->policy.allowed_secret_env.n;
    out->allow_webhook_urls = cfg->webhooks.allow_request_urls;
    out->webhook_prefixes = cfg->webhooks.request_url_prefixes.items;
    out->n_webhook_prefixes = cfg->webhooks.request_url_prefixes.n;
    out->webhook_allow_insecure_http = cfg->webhooks.allow_insecure_http;
    return SLUICE_OK;
}

void sluice_config_launch_policy_clear(sluice_launch_policy_t *p)
{
    if (!p)
        return;
    if (p->series) {
        const char *base = (const char *)p->series - offsetof(policy_store_t, series);
        free((void *)(uintptr_t)base);
    }
    memset(p, 0, sizeof(*p));
}
