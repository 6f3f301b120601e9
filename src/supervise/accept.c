/* SPDX-License-Identifier: Apache-2.0 */
/* accept.c - the accept pipeline (accept.h): policy -> parse -> render ->
 * secrets -> durable accept, owned here once for the service, the CLI and
 * the benchmarks.
 *
 * Input: the site configuration, the study runtime (optional) and the
 * request text.  Output: the launch accepted into the store through the
 * launcher (new or an idempotent repeat), and the typed render.
 *
 * Notes:
 * - The request text is loaded once (sluice_launch_load(); the service
 *   loads it itself and comes in through sluice_accept_prepare_value()).
 *   The study and the cluster it names are looked up in that value before
 *   the strict parse of the same value, because the policy the parse needs
 *   depends on them.  A study the runtime does not know is refused; with a
 *   study source (opts.studies) the file is looked at as it is now, and the
 *   version used is held until the accept is freed.
 * - The canonical request is built once (a JSON value) and serialised once:
 *   that text is the store's column and the source of its idempotency
 *   hash.  The launcher gets the typed launch and render, and the render's
 *   JSON value (the stored form) built once: it decodes nothing.
 * - The secret values are borrowed from the launch (its own copies, wiped
 *   by sluice_launch_free()) and from the environment; the array that
 *   points at them lives as long as the prepared launch and holds no
 *   value itself.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/accept.h>
#include <sluice/ops.h>

#include "base/json_text.h"
#include "base/marker.h"
#include "base/opts.h"
#include "base/timing.h"

struct sluice_accept {
    const sluice_study_t *study; /* borrowed from opts.rt or from `rt`, or NULL */
    /* The version of opts.studies the study came from: held until free. */
    sluice_study_source_t *source;
    const sluice_study_runtime_t *rt;
    sluice_launch_t *launch; /* holds the secret values */
    sluice_render_t *render;
    json_t *request_json; /* canonical request: no secret values */
    char *request_text;   /* its one serialisation (the store's column) */
    json_t *render_json;
    sluice_getenv_fn getenv_fn;
    void *getenv_arg;
    char *caller;
    /* Pointers into the launch and the environment (never copies of the
     * values); gathered once, by prepare (read_secrets) or the first
     * commit. */
    sluice_secret_t *secrets;
    size_t n_secrets;
    bool have_secrets;
    /* The cluster of the launch (borrowed from cfg): its config renders
     * it; its name (NULL for a site without `clusters:`) goes into the
     * canonical request. */
    const sluice_config_t *ccfg;
    const char *cluster;
    const char **names; /* every cluster's name, for the parse's check */
    size_t n_names;
    /* What the commit created (its launch and events as stored), for the
     * caller's answer without a read back; zeroed for a repeat. */
    sluice_launcher_created_t created;
};

static sluice_err gather_secrets(sluice_accept_t *a, sluice_error_t *err)
{
    sluice_err rc;

    if (a->have_secrets)
        return SLUICE_OK;
    if ((rc = sluice_launch_collect_secrets(a->launch, a->study, a->getenv_fn, a->getenv_arg,
                                            &a->secrets, &a->n_secrets, err)) != SLUICE_OK)
        return rc;
    a->have_secrets = true;
    return SLUICE_OK;
}

static const char *process_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* The study the request names, looked up before the strict parse (which
 * needs the study's policy): in opts.studies as the file is now (its
 * version is held until the accept is freed), else in opts.rt.  A study
 * name the runtime does not know is refused (the launch would run without
 * the study's datasets, secrets and partition).  A body that is not an
 * object, or a name that is not a name, has no study here: the strict parse
 * then says what is wrong with it. */
/* A tenant with policy.allowed_studies: the study a request names must be
 * one of them (a request naming none is a plain launch, not refused). */
static sluice_err tenant_study(const sluice_tenant_t *t, const json_t *request, sluice_error_t *err)
{
    const char *name = json_string_value(json_object_get(request, "study"));
    size_t i;

    if (t == NULL || t->n_allowed_studies == 0 || name == NULL)
        return SLUICE_OK;
    for (i = 0; i < t->n_allowed_studies; i++)
        if (strcmp(t->allowed_studies[i], name) == 0)
            return SLUICE_OK;
    return sluice_errorf(err, SLUICE_EINVAL,
                         "study: \"%.64s\" is not one tenant %s may name (its "
                         "policy.allowed_studies); refused",
                         name, t->name);
}

static sluice_err find_study(sluice_accept_t *a,
                             const sluice_accept_opts_t *opts,
                             const json_t *request,
                             sluice_accept_stage *stage,
                             sluice_error_t *err)
{
    const sluice_study_runtime_t *rt = opts->rt;
    const char *name = json_string_value(json_object_get(request, "study"));
    sluice_err rc = SLUICE_OK;
    size_t n = name ? strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789._-")
                    : 0;

    if (name == NULL || n == 0 || n > SLUICE_LAUNCH_MAX_NAME || name[n] != '\0')
        goto out;
    if (opts->studies != NULL) {
        *stage = SLUICE_ACCEPT_STAGE_POLICY;
        if ((rc = sluice_study_source_get(opts->studies, &a->rt, err)) != SLUICE_OK)
            goto out;
        a->source = opts->studies;
        rt = a->rt;
    }
    *stage = SLUICE_ACCEPT_STAGE_PARSE;
    if (rt == NULL)
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "study: unknown study \"%s\": no study runtime file is loaded "
                           "(--study-runtime); refused",
                           name);
    else if ((a->study = sluice_study_runtime_find(rt, name)) == NULL)
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "study: unknown study \"%s\" (not in the study runtime file); "
                           "refused",
                           name);
out:
    return rc;
}

/* The cluster the request names, looked up before the parse (as the
 * study is): its policy and config are the ones the parse and the render
 * need.  A name the site does not know takes the first cluster's here; the
 * strict parse then refuses it, naming `cluster` and the known names. */
static sluice_err find_cluster(sluice_accept_t *a,
                               const sluice_config_t *cfg,
                               const sluice_accept_opts_t *opts,
                               const json_t *request,
                               sluice_accept_stage *stage,
                               sluice_error_t *err)
{
    const char *name = json_string_value(json_object_get(request, "cluster"));
    size_t n = sluice_config_cluster_count(cfg);
    sluice_err rc = SLUICE_OK;

    if (opts->cluster != NULL) { /* the caller's (--cluster), for a request that names none */
        *stage = SLUICE_ACCEPT_STAGE_PARSE;
        if (name != NULL && strcmp(name, opts->cluster) != 0) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "cluster: the request names \"%.64s\", the caller \"%.64s\"", name,
                               opts->cluster);
            goto out;
        }
        name = opts->cluster;
        if (sluice_config_cluster_named(cfg, name) == NULL) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "cluster: unknown cluster \"%.64s\"", name);
            goto out;
        }
        *stage = SLUICE_ACCEPT_STAGE_POLICY;
    }
    if ((a->ccfg = sluice_config_cluster_named(cfg, name)) == NULL)
        a->ccfg = sluice_config_cluster_at(cfg, 0);
    if (sluice_config_cluster_name(cfg) == NULL) /* the site has `clusters:` */
        a->cluster = sluice_config_cluster_name(a->ccfg);
    if (a->ccfg == NULL || (a->names = calloc(n ? n : 1, sizeof(*a->names))) == NULL) {
        rc = sluice_errorf(err, a->ccfg ? SLUICE_ENOMEM : SLUICE_ECONFIG,
                           a->ccfg ? "accept: out of memory" : "accept: the site has no cluster");
        goto out;
    }
    for (a->n_names = 0; a->n_names < n; a->n_names++)
        a->names[a->n_names] =
            sluice_config_cluster_name(sluice_config_cluster_at(cfg, a->n_names));
out:
    return rc;
}

/* The tenant of the request: the tenant part of its launch_id, which is
 * the launch key (the HTTP layer qualified the caller's id with the
 * caller's tenant).  *out NULL: the default tenant.  A key naming a tenant
 * the site does not have is refused (SLUICE_EINVAL). */
static sluice_err find_tenant(const sluice_config_t *cfg,
                              const json_t *request,
                              const sluice_tenant_t **out,
                              sluice_error_t *err)
{
    const char *id = json_string_value(json_object_get(request, "launch_id"));
    char name[64];

    *out = NULL;
    if (id == NULL || marker_key_tenant(id, name, sizeof(name)) == 0)
        return SLUICE_OK; /* no id: the parse names what is missing */
    if ((*out = sluice_config_tenant_named(cfg, name)) == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launch_id: tenant \"%.32s\" is not configured",
                             name);
    return SLUICE_OK;
}

/* The canonical request names the launch's cluster when the site has
 * several (an absent one: the first, by name, so that naming it or not is
 * the same request); with one cluster it names none (as before clusters). */
static sluice_err set_cluster(sluice_accept_t *a, sluice_error_t *err)
{
    if (a->cluster == NULL) {
        json_object_del(a->request_json, "cluster");
        return SLUICE_OK;
    }
    if (json_object_set_new(a->request_json, "cluster", json_string(a->cluster)) != 0)
        return sluice_errorf(err, SLUICE_ENOMEM, "accept: out of memory");
    return SLUICE_OK;
}

/* The canonical request's one text: compact, keys sorted, as the store
 * keeps it (sluice_store_launch_spec_t.request_text). */
static sluice_err set_text(sluice_accept_t *a, sluice_error_t *err)
{
    if ((a->request_text = json_text_dump(a->request_json, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "accept: out of memory");
    return SLUICE_OK;
}

sluice_err sluice_accept_prepare_value(sluice_accept_t **out,
                                       sluice_accept_stage *failed_out,
                                       const sluice_config_t *cfg,
                                       json_t *request,
                                       const sluice_accept_opts_t *opts,
                                       sluice_error_t *err)
{
    static const sluice_accept_opts_t defaults = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_accept_t *a = NULL;
    sluice_launch_policy_t policy;
    const sluice_tenant_t *tenant = NULL;
    sluice_render_ctx_t ctx;
    bool have_policy = false;
    size_t i;
    uint64_t t0 = timing_now_ns();
    sluice_err rc = SLUICE_OK;

    memset(&policy, 0, sizeof(policy));
    memset(&ctx, 0, sizeof(ctx));
    if (out == NULL || cfg == NULL || request == NULL) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "accept: out, cfg and the request are required");
        goto out;
    }
    if (opts == NULL)
        opts = &defaults;
    if ((rc = opts_check_version("accept", opts->version, SLUICE_ACCEPT_OPTS_VERSION, err)) !=
        SLUICE_OK)
        goto out; /* the caller's mistake, not the request's: no stage */
    if ((a = calloc(1, sizeof(*a))) == NULL ||
        (opts->caller != NULL && (a->caller = strdup(opts->caller)) == NULL)) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "accept: out of memory");
        goto out;
    }
    a->getenv_fn = opts->getenv_fn ? opts->getenv_fn : process_getenv;
    a->getenv_arg = opts->getenv_fn ? opts->getenv_arg : NULL;
    if ((rc = find_study(a, opts, request, &stage, err)) != SLUICE_OK)
        goto out;

    stage = SLUICE_ACCEPT_STAGE_POLICY;
    if ((rc = find_cluster(a, cfg, opts, request, &stage, err)) != SLUICE_OK ||
        (rc = find_tenant(cfg, request, &tenant, err)) != SLUICE_OK ||
        (rc = sluice_config_launch_policy(a->ccfg, a->study, &policy, err)) != SLUICE_OK)
        goto out;
    have_policy = true;
    if ((rc = tenant_study(tenant, request, err)) != SLUICE_OK)
        goto out;
    sluice_launch_policy_narrow(&policy, tenant); /* the site's rule, then the tenant's */
    policy.clusters = a->names;
    policy.n_clusters = a->n_names;

    stage = SLUICE_ACCEPT_STAGE_PARSE;
    if ((rc = sluice_launch_parse_value(&a->launch, request, &policy, 0, opts->errors, err)) !=
        SLUICE_OK)
        goto out;

    timing_since(SLUICE_TIMING_PARSE, 1, t0);
    t0 = timing_now_ns();
    stage = SLUICE_ACCEPT_STAGE_RENDER;
    ctx.attempt = 1;
    ctx.getenv_fn = a->getenv_fn;
    ctx.getenv_arg = a->getenv_arg;
    ctx.stat_fn = opts->stat_fn;
    ctx.stat_arg = opts->stat_arg;
    if ((rc = sluice_render(a->ccfg, a->study, a->launch, &ctx, &a->render, err)) != SLUICE_OK)
        goto out;
    /* The tenant's account where the request names none, and no default of
     * the study or site outside the tenant's lists. */
    stage = SLUICE_ACCEPT_STAGE_POLICY;
    if ((rc = sluice_render_for_tenant(a->ccfg, tenant, a->launch, a->render, err)) != SLUICE_OK)
        goto out;
    stage = SLUICE_ACCEPT_STAGE_RENDER;
    for (i = 0; opts->hold && i < a->render->n_jobs; i++)
        a->render->jobs[i].hold = true;
    if ((a->request_json = sluice_launch_to_value(a->launch, err)) == NULL) {
        rc = SLUICE_ENOMEM;
        goto out;
    }
    if ((rc = set_cluster(a, err)) != SLUICE_OK || (rc = set_text(a, err)) != SLUICE_OK)
        goto out;
    if ((a->render_json = sluice_render_to_json(a->render)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: out of memory building its JSON");
        goto out;
    }
    timing_since(SLUICE_TIMING_RENDER, 1, t0);
    stage = SLUICE_ACCEPT_STAGE_SECRETS;
    if (opts->read_secrets && (rc = gather_secrets(a, err)) != SLUICE_OK)
        goto out;
    stage = SLUICE_ACCEPT_STAGE_NONE;
    *out = a;
    a = NULL;
out:
    if (have_policy)
        sluice_config_launch_policy_clear(&policy);
    sluice_accept_free(a);
    if (rc != SLUICE_OK && failed_out != NULL)
        *failed_out = stage;
    return rc;
}

sluice_err sluice_accept_prepare(sluice_accept_t **out,
                                 sluice_accept_stage *failed_out,
                                 const sluice_config_t *cfg,
                                 const char *request,
                                 size_t len,
                                 const sluice_accept_opts_t *opts,
                                 sluice_error_t *err)
{
    json_t *root = NULL;
    sluice_err rc;

    if (request == NULL && len > 0) {
        if (failed_out != NULL)
            *failed_out = SLUICE_ACCEPT_STAGE_NONE;
        return sluice_errorf(err, SLUICE_EINVAL, "accept: out, cfg and the request are required");
    }
    if ((rc = sluice_launch_load(request ? request : "", len, &root, err)) != SLUICE_OK) {
        if (failed_out != NULL)
            *failed_out = SLUICE_ACCEPT_STAGE_PARSE;
        return rc;
    }
    rc = sluice_accept_prepare_value(out, failed_out, cfg, root, opts, err);
    json_decref(root); /* its secret values were wiped by the parse */
    return rc;
}

/* The launcher's view of a prepared launch: its typed form, canonical
 * text and caller (the secret values are the committing caller's to add). */
static void request_of(const sluice_accept_t *a, sluice_launcher_request_t *req)
{
    req->request = a->request_json;
    req->render = a->render_json;
    req->launch = a->launch;
    req->rendered = a->render;
    req->request_text = a->request_text;
    req->caller = a->caller;
}

sluice_err sluice_accept_commit(sluice_accept_t *a,
                                sluice_accept_outcome *outcome_out,
                                sluice_accept_stage *failed_out,
                                sluice_launcher_t *launcher,
                                sluice_error_t *err)
{
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_SECRETS;
    sluice_launcher_request_t req;
    const sluice_launch_spec_t *spec;
    int existed = 0;
    sluice_err rc;

    memset(&req, 0, sizeof(req));
    if (a == NULL || launcher == NULL) {
        stage = SLUICE_ACCEPT_STAGE_STORE;
        rc = sluice_errorf(err, SLUICE_EINVAL, "accept: a prepared launch and a launcher");
        goto out;
    }
    if ((rc = gather_secrets(a, err)) != SLUICE_OK)
        goto out;
    /* A partner the store does not know, or one that has ended without
     * meeting the condition: refused here, naming depends_on.launch_id. */
    stage = SLUICE_ACCEPT_STAGE_PARSE;
    spec = sluice_launch_spec(a->launch);
    if ((rc = sluice_launcher_check_dependency(launcher, spec->launch_id, spec->depends_on,
                                               sluice_launch_dep_name(spec->depends_condition),
                                               err)) != SLUICE_OK)
        goto out;
    stage = SLUICE_ACCEPT_STAGE_STORE;
    request_of(a, &req);
    req.secrets = a->secrets;
    req.n_secrets = a->n_secrets;
    json_decref(a->created.launch); /* a second commit of the same accept */
    json_decref(a->created.events);
    memset(&a->created, 0, sizeof(a->created));
    req.created = &a->created;
    if ((rc = sluice_launcher_accept(launcher, &req, NULL, &existed, err)) != SLUICE_OK) {
        if (rc == SLUICE_ECONFLICT && outcome_out != NULL)
            *outcome_out = SLUICE_ACCEPT_CONFLICT;
        goto out;
    }
    stage = SLUICE_ACCEPT_STAGE_NONE;
    if (outcome_out != NULL)
        *outcome_out = existed ? SLUICE_ACCEPT_EXISTED : SLUICE_ACCEPT_NEW;
out:
    if (rc != SLUICE_OK && failed_out != NULL)
        *failed_out = stage;
    return rc;
}

sluice_err sluice_accept_hand_over(sluice_accept_t *a,
                                   sluice_store_t *store,
                                   sluice_accept_outcome *outcome_out,
                                   sluice_accept_stage *failed_out,
                                   sluice_error_t *err)
{
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_SECRETS;
    sluice_launcher_request_t req;
    const sluice_launch_spec_t *spec;
    int existed = 0;
    sluice_err rc;

    memset(&req, 0, sizeof(req));
    if (a == NULL || store == NULL) {
        stage = SLUICE_ACCEPT_STAGE_STORE;
        rc = sluice_errorf(err, SLUICE_EINVAL, "accept: a prepared launch and a store");
        goto out;
    }
    spec = sluice_launch_spec(a->launch);
    /* Judged by names, before any value is read: a secret_env that is not
     * set here would otherwise be the first thing said. */
    if (a->render->n_secret_names > 0) {
        rc =
            sluice_errorf(err, SLUICE_EINVAL,
                          "secrets: the launch uses secret values (%s%s), which would live only "
                          "in this process: it cannot be handed to a supervisor elsewhere",
                          a->render->secret_names[0], a->render->n_secret_names > 1 ? ", ..." : "");
        goto out;
    }
    stage = SLUICE_ACCEPT_STAGE_PARSE;
    if (spec->depends_on != NULL) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "depends_on: a launch that depends on another is checked against it by "
                           "the supervisor that accepts it: it cannot be handed over");
        goto out;
    }
    stage = SLUICE_ACCEPT_STAGE_STORE;
    request_of(a, &req);
    if ((rc = sluice_launcher_hand_over(store, &req, &existed, err)) != SLUICE_OK) {
        if (rc == SLUICE_ECONFLICT && outcome_out != NULL)
            *outcome_out = SLUICE_ACCEPT_CONFLICT;
        goto out;
    }
    stage = SLUICE_ACCEPT_STAGE_NONE;
    if (outcome_out != NULL)
        *outcome_out = existed ? SLUICE_ACCEPT_EXISTED : SLUICE_ACCEPT_NEW;
out:
    if (rc != SLUICE_OK && failed_out != NULL)
        *failed_out = stage;
    return rc;
}

sluice_err sluice_accept(sluice_accept_t **out,
                         sluice_accept_outcome *outcome_out,
                         sluice_accept_stage *failed_out,
                         sluice_launcher_t *launcher,
                         const sluice_config_t *cfg,
                         const char *request,
                         size_t len,
                         const sluice_accept_opts_t *opts,
                         sluice_error_t *err)
{
    sluice_accept_t *a = NULL;
    sluice_err rc;

    if (launcher == NULL) {
        if (failed_out != NULL)
            *failed_out = SLUICE_ACCEPT_STAGE_STORE;
        return sluice_errorf(err, SLUICE_EINVAL, "accept: a launcher is required");
    }
    if ((rc = sluice_accept_prepare(&a, failed_out, cfg, request, len, opts, err)) != SLUICE_OK)
        goto out;
    if ((rc = sluice_accept_commit(a, outcome_out, failed_out, launcher, err)) != SLUICE_OK)
        goto out;
    if (out != NULL) {
        *out = a;
        a = NULL;
    }
out:
    sluice_accept_free(a);
    return rc;
}

const char *sluice_accept_launch_id(const sluice_accept_t *a)
{
    return a ? sluice_launch_id(a->launch) : NULL;
}

const char *sluice_accept_cluster(const sluice_accept_t *a)
{
    return a ? a->cluster : NULL;
}

const sluice_study_t *sluice_accept_study(const sluice_accept_t *a)
{
    return a ? a->study : NULL;
}

const sluice_render_t *sluice_accept_render(const sluice_accept_t *a)
{
    return a ? a->render : NULL;
}

const json_t *sluice_accept_request_json(const sluice_accept_t *a)
{
    return a ? a->request_json : NULL;
}

const json_t *sluice_accept_render_json(const sluice_accept_t *a)
{
    return a ? a->render_json : NULL;
}

const char *sluice_accept_request_text(const sluice_accept_t *a)
{
    return a ? a->request_text : NULL;
}

void sluice_accept_free(sluice_accept_t *a)
{
    if (a == NULL)
        return;
    free(a->secrets); /* only pointers: the values are the launch's and the environment's */
    free(a->names);
    json_decref(a->request_json);
    free(a->request_text);
    json_decref(a->render_json);
    sluice_render_free(a->render);
    sluice_launch_free(a->launch); /* wipes the secret values */
    sluice_study_source_release(a->source, a->rt);
    free(a->caller);
    json_decref(a->created.launch);
    json_decref(a->created.events);
    free(a);
}

const json_t *sluice_accept_created_launch(const sluice_accept_t *a,
                                           const json_t **events_out,
                                           int64_t *version_out)
{
    if (a == NULL || a->created.launch == NULL || a->created.events == NULL)
        return NULL;
    if (events_out != NULL)
        *events_out = a->created.events;
    if (version_out != NULL)
        *version_out = a->created.version;
    return a->created.launch;
}
