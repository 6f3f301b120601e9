/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c - launch requests: strict JSON → validated launch model.
 *
 * The request is loaded with jansson (duplicate keys refused, NUL bytes
 * allowed by the loader so that we can name the field that carries one),
 * then walked field by field.  Every object is checked against its list of
 * known keys first, so an unknown or misspelt field is an error rather than
 * something silently ignored.  The model is built in a private struct and
 * handed out only when everything passed.
 *
 * Notes:
 * - Secret values never reach an error message: errors about `secrets`
 *   name the variable, never the value, and JSON syntax errors are reported
 *   by line and column without jansson's "near '<token>'" excerpt.
 * - After parsing, the secret strings inside the jansson tree are zeroed
 *   before the tree is released, and the model's own copies are zeroed in
 *   sluice_launch_free().
 * - The canonical JSON is built from the model, not from the input, so key
 *   order, spelling variants (profile alias, signal prefix, time format,
 *   memory units) and the input form (native or NVFlare) do not change it.
 * - The parts live next to this file: launch_get.c (typed getters),
 *   launch_pool.c (pools), launch_nvflare.c (the NVFlare form),
 *   launch_json.c (canonical JSON and hash); value syntaxes are
 *   base/syntax.h's.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/jdec.h"
#include "base/marker.h"
#include "base/suggest.h"
#include "base/wipe.h"
#include "base/syntax.h"

#include "launch_int.h"

/* ---- freeing ----------------------------------------------------------- */

static void pool_clear(sluice_launch_pool_t *p)
{
    free(p->name);
    free(p->gpu_series);
    free(p->command);
    launch_free_strv(p->args, p->n_args);
    free(p->additional_node_command);
    free(p->constraint);
    free(p->gres);
    memset(p, 0, sizeof(*p));
}

void sluice_launch_free(sluice_launch_t *l)
{
    sluice_launch_spec_t *s;
    size_t i;

    if (l == NULL)
        return;
    s = &l->spec;
    free(s->launch_id);
    free(s->site);
    free(s->study);
    free(s->cluster);
    free(s->image);
    free(s->command);
    launch_free_strv(s->args, s->n_args);
    free(s->workdir);
    for (i = 0; i < s->n_env; i++) {
        free(s->env[i].name);
        free(s->env[i].value);
    }
    free(s->env);
    launch_free_strv(s->secret_env, s->n_secret_env);
    for (i = 0; i < s->n_mounts; i++) {
        free(s->mounts[i].source);
        free(s->mounts[i].target);
    }
    free(s->mounts);
    free(s->depends_on);
    free(s->webhook_url);
    free(s->signal);
    free(s->account);
    free(s->qos);
    free(s->partition);
    for (i = 0; i < s->n_pools; i++)
        pool_clear(&s->pools[i]);
    free(s->pools);
    for (i = 0; i < l->n_secrets; i++) {
        free(l->secret_names[i]);
        if (l->secret_values != NULL)
            wipe_str_free(l->secret_values[i]);
    }
    free(l->secret_names);
    free(l->secret_values);
    wipe(l, sizeof(*l));
    free(l);
}

/* A launch_id: the rule is base/marker.c's (issue 12: one implementation). */
_Static_assert(SLUICE_LAUNCH_MAX_ID == MARKER_LAUNCH_ID_MAX, "one launch_id length");
static sluice_err want_launch_id(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out)
{
    const char *s = NULL;
    sluice_err rc;

    if ((rc = jdec_string(at, key, JDEC_REQUIRED | JDEC_NONEMPTY, SLUICE_LAUNCH_MAX_ID, &s)) !=
        SLUICE_OK)
        return rc;
    if (!marker_launch_id_ok(s, strlen(s)))
        return jdec_fail(at, key, "%s", MARKER_LAUNCH_ID_RULE);
    if ((*out = launch_strdup(s)) == NULL)
        return launch_oom(c);
    return SLUICE_OK;
}

static sluice_err check_policy_list(launch_ctx_t *c,
                                    const char *path,
                                    const char *what,
                                    const char *value,
                                    const char *const *list,
                                    size_t n)
{
    char allowed[200] = "";
    char e[ECHO_CAP];
    size_t i, used = 0;

    if (list == NULL || n == 0)
        return launch_perr(c, path, "site policy does not let a request choose the %s", what);
    for (i = 0; i < n; i++)
        if (list[i] != NULL && (strcmp(list[i], "*") == 0 || strcmp(list[i], value) == 0))
            return SLUICE_OK;
    for (i = 0; i < n && used < sizeof(allowed) - 1; i++) {
        int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%s", i ? ", " : "",
                         list[i] ? list[i] : "");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return launch_perr(c, path, "%s \"%s\" is not allowed by site policy (allowed: %s)", what,
                       launch_echo(e, value), allowed);
}

static sluice_err parse_env(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    const char *k, *why, *val = NULL;
    jdec_cur_t env, x;
    void *it;
    size_t n, i = 0;
    sluice_err rc;

    if (jdec_object(root, "env", JDEC_SILENT, &env) != SLUICE_OK)
        return jdec_fail(root, "env", "expected an object of name to string");
    n = jdec_members(&env);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return jdec_fail(&env, NULL, "more than %d variables", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (s->env = calloc(n, sizeof(*s->env))) == NULL)
        return launch_oom(c);
    JDEC_FOREACH_MEMBER(&env, it, k, x)
    {
        if ((why = launch_envname_check(k)) != NULL) {
            LAUNCH_GO_ON(c, jdec_fail(&x, NULL, "%s", why));
            continue;
        }
        if ((rc = jdec_string(&x, NULL, 0, SLUICE_LAUNCH_MAX_VALUE, &val)) != SLUICE_OK) {
            LAUNCH_GO_ON(c, rc);
            continue;
        }
        s->env[i].name = launch_strdup(k);
        s->env[i].value = launch_strdup(val);
        s->n_env = ++i;
        if (s->env[i - 1].name == NULL || s->env[i - 1].value == NULL)
            return launch_oom(c);
    }
    return SLUICE_OK;
}

static int cmp_var(const void *a, const void *b)
{
    return strcmp(((const sluice_launch_var_t *)a)->name, ((const sluice_launch_var_t *)b)->name);
}

static bool target_forbidden(const char *t)
{
    static const char *const bad[] = {"/proc", "/sys", "/dev", NULL};
    size_t i, n;

    if (strcmp(t, "/") == 0)
        return true;
    for (i = 0; bad[i] != NULL; i++) {
        n = strlen(bad[i]);
        if (strncmp(t, bad[i], n) == 0 && (t[n] == '\0' || t[n] == '/'))
            return true;
    }
    return false;
}

/* A mount's source or target: a normalised absolute path that a Slurm
 * mount list can carry. */
static sluice_err want_mount_path(launch_ctx_t *c, const jdec_cur_t *m, const char *key, char **out)
{
    sluice_err rc;

    if (!jdec_present(m, key))
        return jdec_fail(m, key, "required");
    if ((rc = launch_want_path(c, m, key, out)) != SLUICE_OK)
        return rc;
    if (strpbrk(*out, ":,") != NULL)
        return jdec_fail(m, key, "must not contain ':' or ','");
    return SLUICE_OK;
}

/* One mount (its errors noted); true when it is good. */
static bool parse_mount(launch_ctx_t *c,
                        const jdec_cur_t *m,
                        const sluice_launch_spec_t *s,
                        const size_t *index,
                        sluice_launch_mount_t *mt)
{
    static const char *const keys[] = {"source", "target", "mode", NULL};
    const char *mode = NULL;
    size_t before = c->d.n_errors, j;

    if (!json_is_object(jdec_value(m, NULL))) {
        jdec_fail(m, NULL, "expected an object with source, target and mode");
        return false;
    }
    jdec_keys(m, keys);
    want_mount_path(c, m, "source", &mt->source);
    if (want_mount_path(c, m, "target", &mt->target) == SLUICE_OK) {
        if (target_forbidden(mt->target))
            jdec_fail(m, "target", "must not be /, /proc, /sys or /dev (or below them)");
        for (j = 0; j < s->n_mounts; j++)
            if (strcmp(s->mounts[j].target, mt->target) == 0) {
                jdec_fail(m, "target", "\"%s\" is already the target of mounts[%zu]", mt->target,
                          index[j]);
                break;
            }
    }
    if (jdec_string(m, "mode", JDEC_NONEMPTY, 8, &mode) == SLUICE_OK && mode != NULL) {
        if (strcmp(mode, "ro") == 0)
            mt->rw = false;
        else if (strcmp(mode, "rw") == 0)
            mt->rw = true;
        else
            jdec_fail(m, "mode", "expected \"ro\" or \"rw\"");
    }
    return c->d.n_errors == before && !c->d.oom;
}

/* The good mounts are kept in a row; every bad one is named. */
static sluice_err parse_mounts(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    jdec_cur_t mounts, m;
    size_t i, n, index[64]; /* the request index of each good mount */

    if (jdec_array(root, "mounts", JDEC_SILENT, &mounts) != SLUICE_OK)
        return jdec_fail(root, "mounts", "expected an array of mounts");
    n = jdec_len(&mounts);
    if (n > 64)
        return jdec_fail(&mounts, NULL, "more than 64 mounts");
    if (n > 0 && (s->mounts = calloc(n, sizeof(*s->mounts))) == NULL)
        return launch_oom(c);
    JDEC_FOREACH(&mounts, i, m)
    {
        sluice_launch_mount_t *mt = &s->mounts[s->n_mounts];

        if (parse_mount(c, &m, s, index, mt)) {
            index[s->n_mounts++] = i;
            continue;
        }
        if (c->d.oom)
            return SLUICE_ENOMEM;
        free(mt->source);
        free(mt->target);
        memset(mt, 0, sizeof(*mt));
    }
    return SLUICE_OK;
}

static sluice_err parse_depends(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    static const char *const keys[] = {"launch_id", "condition", NULL};
    const char *cond = NULL;
    jdec_cur_t dep;
    sluice_err rc;

    if (jdec_object(root, "depends_on", JDEC_SILENT, &dep) != SLUICE_OK)
        return jdec_fail(root, "depends_on", "expected an object with launch_id and condition");
    LAUNCH_GO_ON(c, jdec_keys(&dep, keys));
    if ((rc = want_launch_id(c, &dep, "launch_id", &s->depends_on)) != SLUICE_OK)
        LAUNCH_GO_ON(c, rc);
    else if (s->launch_id != NULL && strcmp(s->depends_on, s->launch_id) == 0)
        LAUNCH_GO_ON(c, jdec_fail(&dep, "launch_id", "a launch cannot depend on itself"));
    if (!jdec_present(&dep, "condition"))
        return jdec_fail(&dep, "condition", "required (after, afterok or afterany)");
    if ((rc = jdec_string(&dep, "condition", JDEC_NONEMPTY, 16, &cond)) != SLUICE_OK)
        return rc;
    if (strcmp(cond, "after") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTER;
    else if (strcmp(cond, "afterok") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTEROK;
    else if (strcmp(cond, "afterany") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTERANY;
    else
        return jdec_fail(&dep, "condition", "expected \"after\", \"afterok\" or \"afterany\"");
    return SLUICE_OK;
}

/* ---- the request ------------------------------------------------------- */

static const char *const native_keys[] = {
    "launch_id",  "site",    "study",      "profile",   "image",   "command",    "args",
    "workdir",    "env",     "secret_env", "secrets",   "mounts",  "time_limit", "pending_timeout",
    "depends_on", "requeue", "signal",     "exclusive", "account", "qos",        "partition",
    "keep_going", "pools",   "webhook",    "cluster",   NULL};
static const char *const nvflare_only[] = {"resource_spec", "launcher_spec", NULL};
static const char *const native_only[] = {"pools", "image", "time_limit", "pending_timeout", NULL};

static sluice_err parse_policy_name(launch_ctx_t *c,
                                    const jdec_cur_t *root,
                                    const char *key,
                                    const char *what,
                                    const char *const *list,
                                    size_t n,
                                    char **out)
{
    sluice_err rc;

    if (!jdec_present(root, key))
        return SLUICE_OK;
    if ((rc = launch_want_ident(c, root, key, SLUICE_LAUNCH_MAX_NAME, false, out)) != SLUICE_OK)
        return rc;
    return check_policy_list(c, key, what, *out, list, n);
}

static sluice_err check_disjoint(launch_ctx_t *c, const jdec_cur_t *root, const sluice_launch_t *l)
{
    const sluice_launch_spec_t *s = &l->spec;
    jdec_cur_t secrets;
    size_t i, j;

    for (i = 0; i < s->n_secret_env; i++)
        for (j = 0; j < s->n_env; j++)
            if (strcmp(s->secret_env[i], s->env[j].name) == 0)
                LAUNCH_GO_ON(c, jdec_fail(root, "secret_env", "\"%s\" is also set in env",
                                          s->secret_env[i]));
    jdec_member(&secrets, root, "secrets"); /* secret_names' too */
    for (i = 0; i < l->n_secrets; i++) {
        for (j = 0; j < s->n_env; j++)
            if (strcmp(l->secret_names[i], s->env[j].name) == 0)
                LAUNCH_GO_ON(c, jdec_fail(&secrets, l->secret_names[i], "also set in env"));
        for (j = 0; j < s->n_secret_env; j++)
            if (strcmp(l->secret_names[i], s->secret_env[j]) == 0)
                LAUNCH_GO_ON(c,
                             jdec_fail(&secrets, l->secret_names[i], "also listed in secret_env"));
    }
    return SLUICE_OK;
}

/* An optional field: `call` noted its errors; go on unless it is fatal. */
#define OPTIONAL(c, root, key, call)                                                               \
    do {                                                                                           \
        if (jdec_present((root), (key)))                                                           \
            LAUNCH_GO_ON((c), (call));                                                             \
    } while (0)

/* "unknown field", with the top-level field clearly meant (of the form the
 * request is in) when there is one. */
static sluice_err unknown_field(const jdec_cur_t *v, const char *k, bool nvflare_form)
{
    const char *const *p;
    suggest_t sg;

    suggest_init(&sg, k);
    for (p = native_keys; *p != NULL; p++)
        if (!nvflare_form || !launch_in_list(native_only, *p))
            suggest_add(&sg, *p);
    for (p = nvflare_only; *p != NULL; p++)
        suggest_add(&sg, *p);
    if (suggest_best(&sg) != NULL)
        return jdec_fail(v, NULL, "unknown field (did you mean %s?)", suggest_best(&sg));
    return jdec_fail(v, NULL, "unknown field");
}

static sluice_err parse_keys(launch_ctx_t *c, const jdec_cur_t *root, const sluice_launch_spec_t *s)
{
    const char *k;
    jdec_cur_t v;
    void *it;

    JDEC_FOREACH_MEMBER(root, it, k, v)
    {
        if (s->nvflare_form && launch_in_list(native_only, k))
            LAUNCH_GO_ON(c, jdec_fail(&v, NULL,
                                      "not allowed in the NVFlare form "
                                      "(resource_spec/launcher_spec); set it under "
                                      "launcher_spec.<site>.slurm"));
        else if (launch_in_list(native_keys, k) || launch_in_list(nvflare_only, k))
            continue;
        else if ((c->flags & SLUICE_LAUNCH_PARSE_STORED) && strcmp(k, "secret_names") == 0)
            continue;
        else
            LAUNCH_GO_ON(c, unknown_field(&v, k, s->nvflare_form));
    }
    return SLUICE_OK;
}

static sluice_err parse_profile(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    const sluice_launch_policy_t *pol = c->pol;
    unsigned allowed = pol->allowed_profiles ? pol->allowed_profiles
                                             : SLUICE_LAUNCH_PROFILE_BIT(s->effective_profile);
    const char *str = NULL;
    sluice_err rc;

    if ((rc = jdec_string(root, "profile", JDEC_NONEMPTY, 32, &str)) != SLUICE_OK || str == NULL)
        return rc;
    s->profile = sluice_launch_profile_parse(str);
    if (s->profile == SLUICE_LAUNCH_PROFILE_UNSET)
        return jdec_fail(root, "profile",
                         "expected \"enroot-pyxis\", \"pyxis\", \"apptainer\" or \"none\"");
    if (!(allowed & SLUICE_LAUNCH_PROFILE_BIT(s->profile)))
        return jdec_fail(root, "profile", "\"%s\" is not allowed by site policy",
                         sluice_launch_profile_name(s->profile));
    s->effective_profile = s->profile;
    return SLUICE_OK;
}

static sluice_err parse_flags(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    const sluice_launch_policy_t *pol = c->pol;
    const char *str = NULL;
    sluice_error_t e = SLUICE_ERROR_INIT;
    sluice_err rc;

    if (jdec_present(root, "requeue")) {
        if ((rc = jdec_bool(root, "requeue", 0, &s->requeue)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else if (s->requeue && !pol->allow_requeue)
            LAUNCH_GO_ON(c, jdec_fail(root, "requeue", "site policy does not allow requeue"));
    }
    LAUNCH_GO_ON(c, jdec_bool(root, "exclusive", 0, &s->exclusive));
    s->keep_going = pol->keep_going;
    if (jdec_present(root, "keep_going")) {
        if ((rc = jdec_bool(root, "keep_going", 0, &s->keep_going)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else if (s->keep_going != pol->keep_going && !pol->allow_keep_going)
            LAUNCH_GO_ON(c, jdec_fail(root, "keep_going",
                                      "site policy does not let a request choose it (the site's "
                                      "value is %s: policy.allow_keep_going is false)",
                                      pol->keep_going ? "true" : "false"));
        s->set_keep_going = true;
    }
    if (jdec_present(root, "signal")) {
        if ((rc = jdec_string(root, "signal", JDEC_NONEMPTY, 32, &str)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else
            LAUNCH_GO_ON(
                c, launch_take(c, "signal", syntax_signal(&s->signal, str, "signal", &e), &e));
    }
    LAUNCH_GO_ON(c, parse_policy_name(c, root, "partition", "partition", pol->partitions,
                                      pol->n_partitions, &s->partition));
    LAUNCH_GO_ON(c, parse_policy_name(c, root, "account", "account", pol->accounts, pol->n_accounts,
                                      &s->account));
    LAUNCH_GO_ON(c, parse_policy_name(c, root, "qos", "qos", pol->qos, pol->n_qos, &s->qos));
    return SLUICE_OK;
}

static sluice_err parse_native(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    if (jdec_present(root, "image")) {
        if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE) {
            if (!launch_failed(c, "profile"))
                LAUNCH_GO_ON(
                    c, jdec_fail(root, "image", "not allowed where the effective profile is none"));
        } else {
            LAUNCH_GO_ON(c, launch_want_image(c, root, "image", &s->image));
        }
    }
    LAUNCH_GO_ON(c, launch_want_time(c, root, "time_limit", &s->time_limit));
    LAUNCH_GO_ON(c, launch_want_pending(c, root, "pending_timeout", s));
    return launch_parse_pools(c, root, s);
}

/* Every field is checked, each error noted (launch_errors.c); a field whose
 * value is bad is left out of the checks that read it. */
static sluice_err parse_root(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_t *l)
{
    sluice_launch_spec_t *s = &l->spec;
    const sluice_launch_policy_t *pol = c->pol;
    jdec_cur_t mounts;

    s->nvflare_form = jdec_present(root, "resource_spec") || jdec_present(root, "launcher_spec");
    LAUNCH_GO_ON(c, parse_keys(c, root, s));

    LAUNCH_GO_ON(c, want_launch_id(c, root, "launch_id", &s->launch_id));
    if (!jdec_present(root, "site"))
        LAUNCH_GO_ON(c, jdec_fail(root, "site", "required"));
    else
        LAUNCH_GO_ON(c, launch_want_ident(c, root, "site", SLUICE_LAUNCH_MAX_NAME, true, &s->site));
    OPTIONAL(c, root, "study",
             launch_want_ident(c, root, "study", SLUICE_LAUNCH_MAX_NAME, true, &s->study));
    OPTIONAL(c, root, "cluster", launch_parse_cluster(c, root, pol, &s->cluster));

    s->effective_profile = pol->default_profile == SLUICE_LAUNCH_PROFILE_UNSET
                               ? SLUICE_LAUNCH_PROFILE_NONE
                               : pol->default_profile;
    LAUNCH_GO_ON(c, parse_profile(c, root, s));

    LAUNCH_GO_ON(c, launch_want_command(c, root, "command", &s->command));
    OPTIONAL(c, root, "args", launch_want_args(c, root, "args", &s->args, &s->n_args));
    LAUNCH_GO_ON(c, launch_want_path(c, root, "workdir", &s->workdir));
    OPTIONAL(c, root, "env", parse_env(c, root, s));
    if (s->n_env > 1)
        qsort(s->env, s->n_env, sizeof(*s->env), cmp_var);
    OPTIONAL(c, root, "secret_env",
             launch_parse_secret_env(c, root, "secret_env", &s->secret_env, &s->n_secret_env));
    OPTIONAL(c, root, "secrets", launch_parse_secrets(c, root, l));
    if (jdec_present(root, "secret_names")) {
        if (l->n_secrets > 0 || launch_failed(c, "secrets"))
            LAUNCH_GO_ON(c, jdec_fail(root, "secret_names", "not allowed together with secrets"));
        else
            LAUNCH_GO_ON(c, launch_parse_secret_env(c, root, "secret_names", &l->secret_names,
                                                    &l->n_secrets));
    }
    LAUNCH_GO_ON(c, check_disjoint(c, root, l));
    if (jdec_present(root, "mounts")) {
        jdec_member(&mounts, root, "mounts");
        if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE && jdec_len(&mounts) > 0) {
            if (!launch_failed(c, "profile"))
                LAUNCH_GO_ON(c, jdec_fail(&mounts, NULL,
                                          "not allowed where the effective profile is none (no "
                                          "mount namespace)"));
        } else {
            LAUNCH_GO_ON(c, parse_mounts(c, root, s));
        }
    }
    OPTIONAL(c, root, "depends_on", parse_depends(c, root, s));
    OPTIONAL(c, root, "webhook", launch_parse_webhook(c, root, s));
    LAUNCH_GO_ON(c, parse_flags(c, root, s));

    /* The NVFlare form's blocks are keyed by the site: without a valid
     * site there is nothing to read them with. */
    if (s->nvflare_form && !launch_failed(c, "site"))
        LAUNCH_GO_ON(c, launch_parse_nvflare(c, root, s));
    else if (!s->nvflare_form)
        LAUNCH_GO_ON(c, parse_native(c, root, s));
    s->effective_pending_timeout =
        s->pending_timeout
            ? s->pending_timeout
            : (pol->pending_timeout ? pol->pending_timeout : SLUICE_LAUNCH_DEFAULT_PENDING_TIMEOUT);
    if (s->nvflare_form && launch_failed(c, "site"))
        return SLUICE_OK;
    return launch_finish_pools(c, s);
}

/* Zero every secret string in the parse tree before it is released. */
static void wipe_tree_secrets(json_t *root)
{
    json_t *sec = json_object_get(root, "secrets"), *v;
    const char *k;

    if (!json_is_object(sec))
        return;
    json_object_foreach(sec, k, v)
    {
        if (json_is_string(v)) {
            char *p = (char *)(uintptr_t)json_string_value(v);
            wipe(p, json_string_length(v));
        }
    }
}

/* ---- public entry points ----------------------------------------------- */

sluice_err sluice_launch_parse(sluice_launch_t **out,
                               const char *data,
                               size_t len,
                               const sluice_launch_policy_t *policy,
                               unsigned flags,
                               sluice_error_t *err)
{
    return sluice_launch_parse_all(out, data, len, policy, flags, NULL, err);
}

sluice_err sluice_launch_parse_all(sluice_launch_t **out,
                                   const char *data,
                                   size_t len,
                                   const sluice_launch_policy_t *policy,
                                   unsigned flags,
                                   sluice_errlist_t *errors,
                                   sluice_error_t *err)
{
    json_t *root = NULL;
    sluice_err rc;

    if (out == NULL || policy == NULL || (data == NULL && len > 0))
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_launch_parse: invalid arguments");
    *out = NULL;
    if ((rc = sluice_launch_load(data ? data : "", len, &root, err)) != SLUICE_OK)
        return rc;
    rc = sluice_launch_parse_value(out, root, policy, flags, errors, err);
    json_decref(root); /* its secret values were wiped by the parse */
    return rc;
}

sluice_err sluice_launch_load(const char *data, size_t len, json_t **out, sluice_error_t *err)
{
    json_error_t jerr;
    json_t *root;

    *out = NULL;
    if (len > SLUICE_LAUNCH_MAX_BYTES)
        return sluice_errorf(err, SLUICE_ETOOBIG, "request: larger than %d bytes",
                             SLUICE_LAUNCH_MAX_BYTES);
    root = json_loadb(data ? data : "", len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (root == NULL) {
        /* jansson appends "near '<token>'", which may be part of a secret */
        char *near = strstr(jerr.text, " near '");
        if (near != NULL)
            *near = '\0';
        return sluice_errorf(err, SLUICE_EINVAL, "request: invalid JSON at line %d, column %d: %s",
                             jerr.line, jerr.column, jerr.text);
    }
    *out = root;
    return SLUICE_OK;
}

sluice_err sluice_launch_parse_value(sluice_launch_t **out,
                                     json_t *root,
                                     const sluice_launch_policy_t *policy,
                                     unsigned flags,
                                     sluice_errlist_t *errors,
                                     sluice_error_t *err)
{
    sluice_launch_t *l = NULL;
    sluice_errlist_t own = SLUICE_ERRLIST_INIT;
    launch_ctx_t c = {policy, flags, err, errors ? errors : &own, 0, {0}};
    jdec_cur_t top;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || policy == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_launch_parse: invalid arguments");
    *out = NULL;
    if (!json_is_object(root)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "request: expected a JSON object");
        goto out;
    }
    if ((l = calloc(1, sizeof(*l))) == NULL) {
        rc = launch_oom(&c);
        goto out;
    }
    c.first = c.list->n;
    jdec_init(&c.d, JDEC_STRICT, JDEC_VOICE_REQUEST, SLUICE_EINVAL, err, c.list);
    jdec_root(&top, &c.d, root, "");
    rc = parse_root(&c, &top, l);
    if (c.d.oom) /* one text, wherever the memory ran out */
        rc = launch_oom(&c);
    if (launch_fatal(&c, rc) || (rc != SLUICE_OK && c.d.n_errors == 0))
        goto out;
    if ((rc = launch_errors_finish(&c, root)) != SLUICE_OK)
        goto out;
    if (c.d.n_errors > 0) { /* every one dropped from a full list */
        rc = SLUICE_EINVAL;
        goto out;
    }
    *out = l;
    l = NULL;
out:
    if (root != NULL)
        wipe_tree_secrets(root);
    sluice_launch_free(l);
    sluice_errlist_clear(&own);
    return rc;
}

const sluice_launch_spec_t *sluice_launch_spec(const sluice_launch_t *l)
{
    return l ? &l->spec : NULL;
}

const char *sluice_launch_id(const sluice_launch_t *l)
{
    return l ? l->spec.launch_id : NULL;
}

size_t sluice_launch_pool_count(const sluice_launch_t *l)
{
    return l ? l->spec.n_pools : 0;
}

const sluice_launch_pool_t *sluice_launch_pool(const sluice_launch_t *l, size_t i)
{
    return (l && i < l->spec.n_pools) ? &l->spec.pools[i] : NULL;
}

size_t sluice_launch_secret_count(const sluice_launch_t *l)
{
    return l ? l->n_secrets : 0;
}

const char *sluice_launch_secret_name(const sluice_launch_t *l, size_t i)
{
    return (l && i < l->n_secrets) ? l->secret_names[i] : NULL;
}

const char *sluice_launch_secret_value(const sluice_launch_t *l, size_t i)
{
    return (l && l->secret_values && i < l->n_secrets) ? l->secret_values[i] : NULL;
}
