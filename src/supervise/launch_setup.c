/* SPDX-License-Identifier: Apache-2.0 */
/* launch_setup.c - what every program that runs a launcher does with the
 * site configuration and a validated request: launcher options from the
 * config, and the launch's secret values gathered for acceptance.
 *
 * Notes:
 * - Secret values are borrowed, never copied here: the launcher keeps its
 *   own zeroed-on-free copy from sluice_launcher_accept() on.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/accept.h>
#include <sluice/ops.h>

#include "base/opts.h"
#include "site/config_model.h"

void sluice_launcher_opts_from_config(const sluice_config_t *cfg, sluice_launcher_opts_t *lo)
{
    lo->user = cfg->rest.user;
    lo->site = cfg->site_name;
    lo->job_name_prefix = cfg->job_name_prefix;
    lo->miss_budget = cfg->accounting.miss_budget;
    lo->miss_spacing_s = cfg->accounting.miss_spacing_s;
    lo->absence_delay_s = cfg->submit.absence_delay_s;
    lo->absence_lookups = cfg->submit.absence_lookups;
    lo->absence_spacing_s = cfg->submit.absence_spacing_s;
    lo->pending_timeout_s = cfg->launcher.pending_timeout_s;
    lo->wait_unschedulable = !cfg->launcher.fail_unschedulable;
    if (cfg->launcher.unschedulable_reasons.n > 0) {
        lo->unschedulable_reasons = (const char *const *)cfg->launcher.unschedulable_reasons.items;
        lo->n_unschedulable_reasons = cfg->launcher.unschedulable_reasons.n;
    }
    lo->rpc_per_sec = (double)cfg->poll.rpc_per_sec;
    lo->submit_per_sec = (double)cfg->submit.per_sec;
    lo->submit_in_flight = cfg->submit.in_flight > 0 ? (unsigned)cfg->submit.in_flight : 0;
    lo->submit_timeout_s = (double)cfg->launcher.submit_timeout_s;
    if (cfg->launcher.poll_interval_s > 0)
        lo->poll_max_ms = (int64_t)(cfg->launcher.poll_interval_s * 1000);
}

sluice_err sluice_launch_collect_secrets(const sluice_launch_t *launch,
                                         const sluice_study_t *study,
                                         sluice_getenv_fn getenv_fn,
                                         void *getenv_arg,
                                         sluice_secret_t **out,
                                         size_t *n_out,
                                         sluice_error_t *err)
{
    const sluice_launch_spec_t *s = sluice_launch_spec(launch);
    size_t n =
        sluice_launch_secret_count(launch) + s->n_secret_env + (study ? study->n_secret_env : 0);
    sluice_secret_t *v = calloc(n ? n : 1, sizeof(*v));
    size_t i, k = 0;
    sluice_err rc = SLUICE_OK;

    if (v == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "secrets: out of memory");
    for (i = 0; i < sluice_launch_secret_count(launch); i++, k++) {
        v[k].name = sluice_launch_secret_name(launch, i);
        v[k].value = sluice_launch_secret_value(launch, i);
    }
    for (i = 0; i < s->n_secret_env; i++, k++) {
        v[k].name = s->secret_env[i];
        v[k].value = getenv_fn ? getenv_fn(s->secret_env[i], getenv_arg) : NULL;
        if (v[k].value == NULL) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "secret_env: %s is not set in the service's environment",
                               s->secret_env[i]);
            goto out;
        }
    }
    for (i = 0; study && i < study->n_secret_env; i++, k++) {
        v[k].name = study->secret_env[i].name;
        v[k].value = getenv_fn ? getenv_fn(study->secret_env[i].source, getenv_arg) : NULL;
        if (v[k].value == NULL) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "study secret_env %s: %s is not set in the service's environment",
                               study->secret_env[i].name, study->secret_env[i].source);
            goto out;
        }
    }
    *out = v;
    *n_out = k;
    v = NULL;
out:
    free(v);
    return rc;
}

sluice_err
sluice_launcher_opts_init(sluice_launcher_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_launcher_opts_t tmpl = SLUICE_LAUNCHER_OPTS_INIT;
    /* Version 1 ends before tenants: a caller built for it has the smaller struct. */
    size_t size = version == 1 ? offsetof(sluice_launcher_opts_t, tenants) : sizeof(tmpl);
    sluice_err rc =
        opts_init(opts, &tmpl, size, "launcher", version, SLUICE_LAUNCHER_OPTS_VERSION, err);

    if (rc == SLUICE_OK)
        opts->version = version;
    return rc;
}

sluice_err
sluice_accept_opts_init(sluice_accept_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_accept_opts_t tmpl = SLUICE_ACCEPT_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "accept", version, SLUICE_ACCEPT_OPTS_VERSION, err);
}
