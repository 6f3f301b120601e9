/* SPDX-License-Identifier: Apache-2.0 */
/* render.c - launch + site (+ study) -> batch script + one job description
 * per pool: the entry points (sluice_render(), sluice_render_free(),
 * sluice_render_to_json()) and the job descriptions.
 *
 * Files of the render:
 *   render.c          this file: context, staging paths, port, job
 *                     descriptions (name and comment: the marker of
 *                     base/marker.c)
 *   render_resolve.c  checks and resolution: image, mounts, env, secrets
 *   render_script.c   the batch script (every value through
 *                     shquote_append())
 *   render_container.c apptainer and enroot-pyxis flags, the GPU flag,
 *                     the task wrapper run on every node
 *   render_paths.c    service-side and cluster-side paths
 *   render_commands.c srun, apptainer and PATH of a job; pool variables
 *   render_probe.c    the probe job of `sluice check --probe-job`
 *
 * Notes:
 * - Everything is checked before any output exists (fail-closed series,
 *   mounts, image, names); on error no render is returned.
 * - srun and apptainer come from job_launcher.executables when set (quoted
 *   like any value), else from the job's PATH; render_job_path() is the one
 *   PATH of the script and of the REST environment (render_int.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sluice/render.h>

#include "base/buf.h"
#include "base/marker.h"
#include "launch.h"
#include "render_int.h"

/* Site constraint AND series constraint; each side in parentheses when it
 * holds an OR, so that '&' cannot bind into it. */
char *render_join_constraint(const char *site, const char *series)
{
    buf_t b = BUF_INIT;
    bool ok = true;

    buf_init(&b, 0);
    if (site && site[0] && series && series[0]) {
        bool ps = strchr(site, '|') != NULL, pc = strchr(series, '|') != NULL;
        ok = buf_printf(&b, "%s%s%s&%s%s%s", ps ? "(" : "", site, ps ? ")" : "", pc ? "(" : "",
                        series, pc ? ")" : "") == SLUICE_OK;
    } else if (site && site[0]) {
        ok = buf_puts(&b, site) == SLUICE_OK;
    } else if (series && series[0]) {
        ok = buf_puts(&b, series) == SLUICE_OK;
    } else {
        return NULL;
    }
    if (!ok) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* ---- job descriptions ---------------------------------------------------- */

static const char *first_set(const char *a, const char *b, const char *c2)
{
    if (a && a[0])
        return a;
    if (b && b[0])
        return b;
    return (c2 && c2[0]) ? c2 : NULL;
}

static sluice_err fill_jobdesc(render_rctx_t *c, sluice_render_t *r, size_t k, sluice_jobdesc_t *d)
{
    const sluice_launch_pool_t *p = &c->s->pools[k];
    const sluice_config_t *cfg = c->cfg;
    const sluice_study_t *st = c->study;
    char buf[64];
    buf_t t = BUF_INIT;
    sluice_err rc = SLUICE_OK;
    uint32_t tl = c->s->time_limit ? c->s->time_limit : (uint32_t)cfg->launcher.sbatch.time_minutes;

    buf_init(&t, 0);
    d->name = marker_job_name_dup(cfg->job_name_prefix, c->s->site, c->s->launch_id, r->attempt);
    d->comment = marker_comment_dup(c->s->launch_id, r->attempt);
    d->partition = render_strdup(
        first_set(c->s->partition, st ? st->partition : NULL, cfg->launcher.sbatch.partition));
    d->account = render_strdup(
        first_set(c->s->account, st ? st->account : NULL, cfg->launcher.sbatch.account));
    d->qos = render_strdup(first_set(c->s->qos, st ? st->qos : NULL, cfg->launcher.sbatch.qos));
    d->reservation = render_strdup(first_set(cfg->launcher.sbatch.reservation, NULL, NULL));
    d->time_limit = tl;
    d->nodes = p->nodes;
    d->tasks_per_node = 1;
    d->cpus_per_task = p->cpus_per_node;
    d->mem_per_node_mib = p->mem_per_node_mib;
    d->gpus_per_node = p->gpus_per_node;
    if (p->gpus_per_node > 0)
        d->gres_name = strdup(p->gres ? p->gres : "gpu");
    d->constraint = render_join_constraint(cfg->launcher.sbatch.constraint, p->constraint);
    d->workdir = strdup(c->host_workdir);
    if (buf_printf(&t, "%s/stdout.log", r->staging_cluster) != SLUICE_OK)
        goto nomem;
    d->std_out = buf_take(&t);
    if (buf_printf(&t, "%s/stderr.log", r->staging_cluster) != SLUICE_OK)
        goto nomem;
    d->std_err = buf_take(&t);
    d->hold = false;
    if (k == 0 && c->ctx->dependency_job_id > 0 && c->s->depends_on) {
        if (buf_printf(&t, "%s:%llu", sluice_launch_dep_name(c->s->depends_condition),
                       (unsigned long long)c->ctx->dependency_job_id) != SLUICE_OK)
            goto nomem;
        d->dependency = buf_take(&t);
    }
    d->requeue = c->s->requeue;
    d->signal = render_strdup(c->s->signal);
    d->exclusive = c->s->exclusive;
    if (!d->name || !d->comment || !d->workdir || !d->std_out || !d->std_err)
        goto nomem;
    if ((rc = sluice_jobdesc_setenv(d, "PATH", c->job_path, c->err)) != SLUICE_OK ||
        (rc = sluice_jobdesc_setenv(d, "LANG", RENDER_LANG, c->err)) != SLUICE_OK ||
        (rc = sluice_jobdesc_setenv(d, "HOME", r->staging_cluster, c->err)) != SLUICE_OK)
        goto out;
    (void)buf;
    goto out;
nomem:
    rc = sluice_errorf(c->err, SLUICE_ENOMEM, "pools[%zu]: out of memory", k);
out:
    buf_free(&t);
    return rc;
}

/* ---- entry points -------------------------------------------------------- */

static sluice_err check_pools(render_rctx_t *c)
{
    size_t i, j;
    char vi[64], vj[64];

    for (i = 0; i < c->s->n_pools; i++) {
        const sluice_launch_pool_t *p = &c->s->pools[i];
        if (p->gpus_per_node > 0 && (!p->constraint || !p->constraint[0]))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "pools[%zu] (%s): %u GPUs per node without a GPU series "
                                 "constraint (no gpu_series and no policy.default_gpu_series); "
                                 "refused (fail-closed)",
                                 i, p->name, p->gpus_per_node);
        if (p->gpu_series) {
            const sluice_gpu_series_t *gs = sluice_config_gpu_series(c->cfg, p->gpu_series);
            if (!gs || !gs->constraint || !gs->constraint[0])
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "pools[%zu] (%s): GPU series \"%s\" has no Slurm constraint "
                                     "in the site catalogue; refused (fail-closed)",
                                     i, p->name, p->gpu_series);
        }
        if (p->nodes > 1 && !p->additional_node_command && c->profile != SLUICE_LAUNCH_PROFILE_NONE)
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "pools[%zu] (%s): %u nodes without additional_node_command "
                                 "(application-owned fan-out) needs the profile none",
                                 i, p->name, p->nodes);
        render_pool_var(p->name, vi, sizeof(vi));
        for (j = 0; j < i; j++) {
            render_pool_var(c->s->pools[j].name, vj, sizeof(vj));
            if (strcmp(vi, vj) == 0)
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "pools[%zu] (%s): name gives the same variable "
                                     "SLUICE_POOL_%s_HOST as pool %s",
                                     i, p->name, vi, c->s->pools[j].name);
        }
    }
    return SLUICE_OK;
}

static uint32_t pick_port(const sluice_config_t *cfg, const char *launch_id)
{
    unsigned char md[MARKER_SHA256_LEN];
    long lo = cfg->launcher.port_range_lo, hi = cfg->launcher.port_range_hi;
    uint32_t h;

    if (lo <= 0 || hi < lo) {
        lo = 29400;
        hi = 30399;
    }
    (void)marker_sha256(launch_id, strlen(launch_id), md); /* zeros on failure */
    h = ((uint32_t)md[4] << 24) | ((uint32_t)md[5] << 16) | ((uint32_t)md[6] << 8) | md[7];
    return (uint32_t)lo + h % (uint32_t)(hi - lo + 1);
}

void sluice_render_free(sluice_render_t *r)
{
    size_t i;

    if (!r)
        return;
    free(r->launch_id);
    free(r->sha8);
    free(r->run_id);
    free(r->staging_service);
    free(r->staging_cluster);
    free(r->script);
    for (i = 0; r->jobs && i < r->n_jobs; i++)
        sluice_jobdesc_clear(&r->jobs[i]);
    free(r->jobs);
    for (i = 0; r->pool_names && i < r->n_jobs; i++)
        free(r->pool_names[i]);
    free(r->pool_names);
    for (i = 0; r->secret_names && i < r->n_secret_names; i++)
        free(r->secret_names[i]);
    free(r->secret_names);
    for (i = 0; r->files && i < r->n_files; i++) {
        free(r->files[i].name);
        free(r->files[i].content);
    }
    free(r->files);
    free(r);
}

sluice_err sluice_render(const sluice_config_t *cfg,
                         const sluice_study_t *study,
                         const sluice_launch_t *launch,
                         const sluice_render_ctx_t *ctx,
                         sluice_render_t **out,
                         sluice_error_t *err)
{
    static const sluice_render_ctx_t zero_ctx;
    sluice_render_ctx_t rctx;
    render_rctx_t c;
    sluice_render_t *r = NULL;
    sluice_err rc = SLUICE_OK;
    buf_t t = BUF_INIT;
    char hex[MARKER_SHA8_SIZE];
    size_t i;

    if (!cfg || !launch || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "render: missing argument");
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.study = study;
    c.l = launch;
    c.s = sluice_launch_spec(launch);
    /* The launch's keep_going (request within policy, else the site's)
     * joins the C option of the same name. */
    rctx = ctx ? *ctx : zero_ctx;
    rctx.keep_going = rctx.keep_going || c.s->keep_going;
    c.ctx = &rctx;
    c.err = err;
    buf_init(&t, 0);
    if (!cfg->storage.root || cfg->storage.root[0] != '/')
        return sluice_errorf(err, SLUICE_ECONFIG, "storage.root: needed to render a launch");
    if (strcmp(c.s->site, cfg->site_name) != 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "site: the request names site \"%s\" but this service serves \"%s\"",
                             c.s->site, cfg->site_name);
    if (study && c.s->study && strcmp(study->name, c.s->study) != 0)
        return sluice_errorf(err, SLUICE_EINVAL, "study: runtime given for \"%s\", not \"%s\"",
                             study->name, c.s->study);
    /* A launch that names a study never runs without it (its datasets,
     * secrets and partition would silently go missing). */
    if (!study && c.s->study)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "study: unknown study \"%s\" (not in the study runtime file); "
                             "refused",
                             c.s->study);
    c.profile = c.s->effective_profile == SLUICE_LAUNCH_PROFILE_UNSET ? SLUICE_LAUNCH_PROFILE_NONE
                                                                      : c.s->effective_profile;
    if (c.s->time_limit == 0 && cfg->policy.max_time_minutes > 0 &&
        cfg->launcher.sbatch.time_minutes == 0)
        (void)0;
    if (cfg->policy.max_time_minutes > 0 &&
        c.s->time_limit > (uint32_t)cfg->policy.max_time_minutes)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "time_limit: %u minutes is more than the site allows (%ld)",
                             c.s->time_limit, cfg->policy.max_time_minutes);

    if ((r = calloc(1, sizeof(*r))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
    r->attempt = c.ctx->attempt ? c.ctx->attempt : 1;
    r->launch_id = strdup(c.s->launch_id);
    marker_sha8(c.s->launch_id, hex);
    r->sha8 = strdup(hex);
    if (c.ctx->run_id) {
        r->run_id = strdup(c.ctx->run_id);
    } else if (buf_printf(&t, "%s.%u", c.s->launch_id, r->attempt) == SLUICE_OK) {
        r->run_id = buf_take(&t);
    }
    if (buf_printf(&t, "%.*s/%s/%s/attempt-%u", (int)render_root_len(cfg->storage.root),
                   cfg->storage.root, c.s->site, hex, r->attempt) == SLUICE_OK)
        r->staging_service = buf_take(&t);
    if (buf_printf(&t, "%.*s/%s/%s/attempt-%u", (int)render_root_len(render_cluster_root(cfg)),
                   render_cluster_root(cfg), c.s->site, hex, r->attempt) == SLUICE_OK)
        r->staging_cluster = buf_take(&t);
    r->master_port = pick_port(cfg, c.s->launch_id);
    if (!r->launch_id || !r->sha8 || !r->run_id || !r->staging_service || !r->staging_cluster) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }

    c.staging = r->staging_cluster;
    if ((rc = check_pools(&c)) != SLUICE_OK || (rc = render_resolve_image(&c)) != SLUICE_OK ||
        (rc = render_resolve_mounts(&c)) != SLUICE_OK ||
        (rc = render_resolve_env(&c)) != SLUICE_OK ||
        (rc = render_collect_secret_names(&c, r)) != SLUICE_OK)
        goto out;

    /* Working directory: the request's (translated when on the storage
     * root), else the staging directory. */
    if (c.s->workdir) {
        if (!render_normalised(c.s->workdir) || strpbrk(c.s->workdir, ":,")) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "workdir: expected an absolute normalised path without ':' or ','");
            goto out;
        }
        c.workdir = c.profile == SLUICE_LAUNCH_PROFILE_NONE ? render_to_cluster(cfg, c.s->workdir)
                                                            : strdup(c.s->workdir);
    } else {
        c.workdir = strdup(r->staging_cluster);
    }
    c.host_workdir = strdup(
        c.profile == SLUICE_LAUNCH_PROFILE_NONE && c.workdir ? c.workdir : r->staging_cluster);
    if (!c.workdir || !c.host_workdir) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }

    if ((c.job_path = render_job_path(cfg)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    r->n_jobs = c.s->n_pools;
    r->jobs = calloc(r->n_jobs, sizeof(*r->jobs));
    r->pool_names = calloc(r->n_jobs, sizeof(char *));
    if (!r->jobs || !r->pool_names) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    for (i = 0; i < r->n_jobs; i++) {
        if ((r->pool_names[i] = strdup(c.s->pools[i].name)) == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
            goto out;
        }
        if ((rc = fill_jobdesc(&c, r, i, &r->jobs[i])) != SLUICE_OK)
            goto out;
    }
    if ((rc = render_emit_script(&c, r, &r->script)) != SLUICE_OK) {
        rc = sluice_errorf(err, rc, "render: the batch script %s",
                           rc == SLUICE_ETOOBIG ? "exceeds 4 MiB" : "could not be built");
        goto out;
    }
    if ((r->jobs[0].script = strdup(r->script)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    /* A copy of the script in staging, for people reading a job's files. */
    r->files = calloc(1, sizeof(*r->files));
    if (!r->files || (r->files[0].name = strdup("job.sh")) == NULL ||
        (r->files[0].content = strdup(r->script)) == NULL) {
        if (r->files)
            free(r->files[0].name);
        free(r->files);
        r->files = NULL;
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory");
        goto out;
    }
    r->files[0].mode = 0600;
    r->n_files = 1;
    *out = r;
    r = NULL;
out:
    buf_free(&t);
    sluice_render_free(r);
    for (i = 0; i < c.n_mounts; i++) {
        free(c.mounts[i].src);
        free(c.mounts[i].dst);
        free(c.mounts[i].what);
    }
    free(c.mounts);
    free(c.vars);
    free(c.image);
    free(c.workdir);
    free(c.host_workdir);
    free(c.job_path);
    return rc;
}

json_t *sluice_render_to_json(const sluice_render_t *r)
{
    json_t *o = json_object(), *a;
    size_t i;
    int bad = 0;

    if (!o)
        return NULL;
    bad |= json_object_set_new(o, "launch_id", json_string(r->launch_id));
    bad |= json_object_set_new(o, "attempt", json_integer(r->attempt));
    bad |= json_object_set_new(o, "sha8", json_string(r->sha8));
    bad |= json_object_set_new(o, "run_id", json_string(r->run_id));
    bad |= json_object_set_new(
        o, "staging",
        json_pack("{s:s s:s}", "service", r->staging_service, "cluster", r->staging_cluster));
    bad |= json_object_set_new(o, "master_port", json_integer(r->master_port));
    a = json_array();
    for (i = 0; a && i < r->n_jobs; i++)
        bad |= json_array_append_new(a, json_string(r->pool_names[i]));
    bad |= json_object_set_new(o, "pools", a);
    a = json_array();
    for (i = 0; a && i < r->n_secret_names; i++)
        bad |= json_array_append_new(a, json_string(r->secret_names[i]));
    bad |= json_object_set_new(o, "secret_names", a);
    a = json_array();
    for (i = 0; a && i < r->n_files; i++)
        bad |= json_array_append_new(
            a, json_pack("{s:s s:i}", "name", r->files[i].name, "mode", (int)r->files[i].mode));
    bad |= json_object_set_new(o, "files", a);
    bad |= json_object_set_new(o, "script", json_string(r->script));
    a = json_array();
    for (i = 0; a && i < r->n_jobs; i++)
        bad |= json_array_append_new(a, sluice_jobdesc_to_json(&r->jobs[i]));
    bad |= json_object_set_new(o, "jobs", a);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
