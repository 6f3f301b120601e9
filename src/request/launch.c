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

#include "base/wipe.h"
#include "base/marker.h"
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
static sluice_err want_launch_id(launch_ctx_t *c, json_t *v, const char *path, char **out)
{
    const char *s = NULL;
    sluice_err rc;

    if ((rc = launch_want_string(c, v, path, SLUICE_LAUNCH_MAX_ID, false, &s)) != SLUICE_OK)
        return rc;
    if (!marker_launch_id_ok(s, strlen(s)))
        return launch_perr(c, path, "%s", MARKER_LAUNCH_ID_RULE);
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

static sluice_err parse_env(launch_ctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    const char *k, *why, *val = NULL;
    json_t *x;
    size_t n, i = 0;
    char p[PATH_CAP];
    sluice_err rc;

    if (!json_is_object(v))
        return launch_perr(c, "env", "expected an object of name to string");
    n = json_object_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return launch_perr(c, "env", "more than %d variables", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (s->env = calloc(n, sizeof(*s->env))) == NULL)
        return launch_oom(c);
    json_object_foreach(v, k, x)
    {
        launch_path_key(p, "env", k);
        if ((why = launch_envname_check(k)) != NULL) {
            LAUNCH_GO_ON(c, launch_perr(c, p, "%s", why));
            continue;
        }
        if ((rc = launch_want_string(c, x, p, SLUICE_LAUNCH_MAX_VALUE, true, &val)) != SLUICE_OK) {
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

/* One mount (its errors noted); true when it is good. */
static bool parse_mount(launch_ctx_t *c,
                        json_t *m,
                        const char *p,
                        const sluice_launch_spec_t *s,
                        const size_t *index,
                        sluice_launch_mount_t *mt)
{
    static const char *const keys[] = {"source", "target", "mode", NULL};
    char q[PATH_CAP];
    const char *mode = NULL;
    size_t before = c->n_errors, j;
    json_t *x;

    if (!json_is_object(m)) {
        launch_perr(c, p, "expected an object with source, target and mode");
        return false;
    }
    launch_check_keys(c, m, p, keys);
    launch_path_key(q, p, "source");
    if ((x = json_object_get(m, "source")) == NULL)
        launch_perr(c, q, "required");
    else if (launch_want_path(c, x, q, &mt->source) == SLUICE_OK &&
             strpbrk(mt->source, ":,") != NULL)
        launch_perr(c, q, "must not contain ':' or ','");
    launch_path_key(q, p, "target");
    if ((x = json_object_get(m, "target")) == NULL)
        launch_perr(c, q, "required");
    else if (launch_want_path(c, x, q, &mt->target) == SLUICE_OK) {
        if (strpbrk(mt->target, ":,") != NULL)
            launch_perr(c, q, "must not contain ':' or ','");
        else if (target_forbidden(mt->target))
            launch_perr(c, q, "must not be /, /proc, /sys or /dev (or below them)");
        for (j = 0; j < s->n_mounts; j++)
            if (strcmp(s->mounts[j].target, mt->target) == 0) {
                launch_perr(c, q, "\"%s\" is already the target of mounts[%zu]", mt->target,
                            index[j]);
                break;
            }
    }
    launch_path_key(q, p, "mode");
    if ((x = json_object_get(m, "mode")) != NULL &&
        launch_want_string(c, x, q, 8, false, &mode) == SLUICE_OK) {
        if (strcmp(mode, "ro") == 0)
            mt->rw = false;
        else if (strcmp(mode, "rw") == 0)
            mt->rw = true;
        else
            launch_perr(c, q, "expected \"ro\" or \"rw\"");
    }
    return c->n_errors == before && !c->oom;
}

/* The good mounts are kept in a row; every bad one is named. */
static sluice_err parse_mounts(launch_ctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    size_t i, n, index[64]; /* the request index of each good mount */
    char p[PATH_CAP];

    if (!json_is_array(v))
        return launch_perr(c, "mounts", "expected an array of mounts");
    n = json_array_size(v);
    if (n > 64)
        return launch_perr(c, "mounts", "more than 64 mounts");
    if (n > 0 && (s->mounts = calloc(n, sizeof(*s->mounts))) == NULL)
        return launch_oom(c);
    for (i = 0; i < n; i++) {
        sluice_launch_mount_t *mt = &s->mounts[s->n_mounts];

        launch_path_idx(p, "mounts", i);
        if (parse_mount(c, json_array_get(v, i), p, s, index, mt)) {
            index[s->n_mounts++] = i;
            continue;
        }
        if (c->oom)
            return SLUICE_ENOMEM;
        free(mt->source);
        free(mt->target);
        memset(mt, 0, sizeof(*mt));
    }
    return SLUICE_OK;
}

static sluice_err parse_depends(launch_ctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    static const char *const keys[] = {"launch_id", "condition", NULL};
    const char *cond = NULL;
    json_t *x;
    sluice_err rc;

    if (!json_is_object(v))
        return launch_perr(c, "depends_on", "expected an object with launch_id and condition");
    LAUNCH_GO_ON(c, launch_check_keys(c, v, "depends_on", keys));
    if ((x = json_object_get(v, "launch_id")) == NULL)
        LAUNCH_GO_ON(c, launch_perr(c, "depends_on.launch_id", "required"));
    else if ((rc = want_launch_id(c, x, "depends_on.launch_id", &s->depends_on)) != SLUICE_OK)
        LAUNCH_GO_ON(c, rc);
    else if (s->launch_id != NULL && strcmp(s->depends_on, s->launch_id) == 0)
        LAUNCH_GO_ON(c, launch_perr(c, "depends_on.launch_id", "a launch cannot depend on itself"));
    if ((x = json_object_get(v, "condition")) == NULL)
        return launch_perr(c, "depends_on.condition", "required (after, afterok or afterany)");
    if ((rc = launch_want_string(c, x, "depends_on.condition", 16, false, &cond)) != SLUICE_OK)
        return rc;
    if (strcmp(cond, "after") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTER;
    else if (strcmp(cond, "afterok") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTEROK;
    else if (strcmp(cond, "afterany") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTERANY;
    else
        return launch_perr(c, "depends_on.condition",
                           "expected \"after\", \"afterok\" or \"afterany\"");
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
                                    json_t *root,
                                    const char *key,
                                    const char *what,
                                    const char *const *list,
                                    size_t n,
                                    char **out)
{
    json_t *x = json_object_get(root, key);
    sluice_err rc;

    if (x == NULL)
        return SLUICE_OK;
    if ((rc = launch_want_ident(c, x, key, SLUICE_LAUNCH_MAX_NAME, false, out)) != SLUICE_OK)
        return rc;
    return check_policy_list(c, key, what, *out, list, n);
}

static sluice_err check_disjoint(launch_ctx_t *c, const sluice_launch_t *l)
{
    const sluice_launch_spec_t *s = &l->spec;
    size_t i, j;

    for (i = 0; i < s->n_secret_env; i++)
        for (j = 0; j < s->n_env; j++)
            if (strcmp(s->secret_env[i], s->env[j].name) == 0)
                LAUNCH_GO_ON(
                    c, launch_perr(c, "secret_env", "\"%s\" is also set in env", s->secret_env[i]));
    for (i = 0; i < l->n_secrets; i++) {
        char p[PATH_CAP];

        launch_path_key(p, "secrets", l->secret_names[i]);
        for (j = 0; j < s->n_env; j++)
            if (strcmp(l->secret_names[i], s->env[j].name) == 0)
                LAUNCH_GO_ON(c, launch_perr(c, p, "also set in env"));
        for (j = 0; j < s->n_secret_env; j++)
            if (strcmp(l->secret_names[i], s->secret_env[j]) == 0)
                LAUNCH_GO_ON(c, launch_perr(c, p, "also listed in secret_env"));
    }
    return SLUICE_OK;
}

/* An optional field: `parse` noted its errors; go on unless it is fatal. */
#define OPTIONAL(c, root, key, x, call)                                                            \
    do {                                                                                           \
        if (((x) = json_object_get((root), (key))) != NULL)                                        \
            LAUNCH_GO_ON((c), (call));                                                             \
    } while (0)

static sluice_err parse_keys(launch_ctx_t *c, json_t *root, const sluice_launch_spec_t *s)
{
    const char *k;
    char e[ECHO_CAP];
    json_t *v;

    json_object_foreach(root, k, v)
    {
        if (s->nvflare_form && launch_in_list(native_only, k))
            LAUNCH_GO_ON(c, launch_perr(c, k,
                                        "not allowed in the NVFlare form "
                                        "(resource_spec/launcher_spec); set it under "
                                        "launcher_spec.<site>.slurm"));
        else if (launch_in_list(native_keys, k) || launch_in_list(nvflare_only, k))
            continue;
        else if ((c->flags & SLUICE_LAUNCH_PARSE_STORED) && strcmp(k, "secret_names") == 0)
            continue;
        else
            LAUNCH_GO_ON(c, launch_perr(c, launch_echo(e, k), "unknown field"));
    }
    return SLUICE_OK;
}

static sluice_err parse_profile(launch_ctx_t *c, json_t *x, sluice_launch_spec_t *s)
{
    const sluice_launch_policy_t *pol = c->pol;
    unsigned allowed = pol->allowed_profiles ? pol->allowed_profiles
                                             : SLUICE_LAUNCH_PROFILE_BIT(s->effective_profile);
    const char *str = NULL;
    sluice_err rc;

    if ((rc = launch_want_string(c, x, "profile", 32, false, &str)) != SLUICE_OK)
        return rc;
    s->profile = sluice_launch_profile_parse(str);
    if (s->profile == SLUICE_LAUNCH_PROFILE_UNSET)
        return launch_perr(c, "profile",
                           "expected \"enroot-pyxis\", \"pyxis\", \"apptainer\" or \"none\"");
    if (!(allowed & SLUICE_LAUNCH_PROFILE_BIT(s->profile)))
        return launch_perr(c, "profile", "\"%s\" is not allowed by site policy",
                           sluice_launch_profile_name(s->profile));
    s->effective_profile = s->profile;
    return SLUICE_OK;
}

static sluice_err parse_flags(launch_ctx_t *c, json_t *root, sluice_launch_spec_t *s)
{
    const sluice_launch_policy_t *pol = c->pol;
    const char *str = NULL;
    sluice_error_t e = SLUICE_ERROR_INIT;
    json_t *x;
    sluice_err rc;

    if ((x = json_object_get(root, "requeue")) != NULL) {
        if ((rc = launch_want_bool(c, x, "requeue", &s->requeue)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else if (s->requeue && !pol->allow_requeue)
            LAUNCH_GO_ON(c, launch_perr(c, "requeue", "site policy does not allow requeue"));
    }
    OPTIONAL(c, root, "exclusive", x, launch_want_bool(c, x, "exclusive", &s->exclusive));
    s->keep_going = pol->keep_going;
    if ((x = json_object_get(root, "keep_going")) != NULL) {
        if ((rc = launch_want_bool(c, x, "keep_going", &s->keep_going)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else if (s->keep_going != pol->keep_going && !pol->allow_keep_going)
            LAUNCH_GO_ON(c, launch_perr(c, "keep_going",
                                        "site policy does not let a request choose it (the site's "
                                        "value is %s: policy.allow_keep_going is false)",
                                        pol->keep_going ? "true" : "false"));
        s->set_keep_going = true;
    }
    if ((x = json_object_get(root, "signal")) != NULL) {
        if ((rc = launch_want_string(c, x, "signal", 32, false, &str)) != SLUICE_OK)
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

static sluice_err parse_native(launch_ctx_t *c, json_t *root, sluice_launch_spec_t *s)
{
    json_t *x;

    if ((x = json_object_get(root, "image")) != NULL) {
        if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE) {
            if (!launch_failed(c, "profile"))
                LAUNCH_GO_ON(
                    c, launch_perr(c, "image", "not allowed where the effective profile is none"));
        } else {
            LAUNCH_GO_ON(c, launch_want_image(c, x, "image", &s->image));
        }
    }
    OPTIONAL(c, root, "time_limit", x, launch_want_time(c, x, "time_limit", &s->time_limit));
    OPTIONAL(c, root, "pending_timeout", x, launch_want_pending(c, x, "pending_timeout", s));
    if ((x = json_object_get(root, "pools")) == NULL)
        return launch_perr(c, "pools", "required (1 to %d pools)", SLUICE_LAUNCH_MAX_POOLS);
    return launch_parse_pools(c, x, s);
}

/* Every field is checked, each error noted (launch_errors.c); a field whose
 * value is bad is left out of the checks that read it. */
static sluice_err parse_root(launch_ctx_t *c, json_t *root, sluice_launch_t *l)
{
    sluice_launch_spec_t *s = &l->spec;
    const sluice_launch_policy_t *pol = c->pol;
    json_t *x;

    s->nvflare_form = json_object_get(root, "resource_spec") != NULL ||
                      json_object_get(root, "launcher_spec") != NULL;
    LAUNCH_GO_ON(c, parse_keys(c, root, s));

    if ((x = json_object_get(root, "launch_id")) == NULL)
        LAUNCH_GO_ON(c, launch_perr(c, "launch_id", "required"));
    else
        LAUNCH_GO_ON(c, want_launch_id(c, x, "launch_id", &s->launch_id));
    if ((x = json_object_get(root, "site")) == NULL)
        LAUNCH_GO_ON(c, launch_perr(c, "site", "required"));
    else
        LAUNCH_GO_ON(c, launch_want_ident(c, x, "site", SLUICE_LAUNCH_MAX_NAME, true, &s->site));
    OPTIONAL(c, root, "study", x,
             launch_want_ident(c, x, "study", SLUICE_LAUNCH_MAX_NAME, true, &s->study));
    OPTIONAL(c, root, "cluster", x, launch_parse_cluster(c, x, pol, &s->cluster));

    s->effective_profile = pol->default_profile == SLUICE_LAUNCH_PROFILE_UNSET
                               ? SLUICE_LAUNCH_PROFILE_NONE
                               : pol->default_profile;
    OPTIONAL(c, root, "profile", x, parse_profile(c, x, s));

    OPTIONAL(c, root, "command", x, launch_want_command(c, x, "command", &s->command));
    OPTIONAL(c, root, "args", x, launch_want_args(c, x, "args", &s->args, &s->n_args));
    OPTIONAL(c, root, "workdir", x, launch_want_path(c, x, "workdir", &s->workdir));
    OPTIONAL(c, root, "env", x, parse_env(c, x, s));
    if (s->n_env > 1)
        qsort(s->env, s->n_env, sizeof(*s->env), cmp_var);
    OPTIONAL(c, root, "secret_env", x,
             launch_parse_secret_env(c, x, "secret_env", &s->secret_env, &s->n_secret_env));
    OPTIONAL(c, root, "secrets", x, launch_parse_secrets(c, x, l));
    if ((x = json_object_get(root, "secret_names")) != NULL) {
        if (l->n_secrets > 0 || launch_failed(c, "secrets"))
            LAUNCH_GO_ON(c, launch_perr(c, "secret_names", "not allowed together with secrets"));
        else
            LAUNCH_GO_ON(
                c, launch_parse_secret_env(c, x, "secret_names", &l->secret_names, &l->n_secrets));
    }
    LAUNCH_GO_ON(c, check_disjoint(c, l));
    if ((x = json_object_get(root, "mounts")) != NULL) {
        if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE && json_array_size(x) > 0) {
            if (!launch_failed(c, "profile"))
                LAUNCH_GO_ON(c, launch_perr(c, "mounts",
                                            "not allowed where the effective profile is none (no "
                                            "mount namespace)"));
        } else {
            LAUNCH_GO_ON(c, parse_mounts(c, x, s));
        }
    }
    OPTIONAL(c, root, "depends_on", x, parse_depends(c, x, s));
    OPTIONAL(c, root, "webhook", x, launch_parse_webhook(c, x, s));
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
    launch_ctx_t c = {policy, flags, err, errors ? errors : &own, 0, 0, false};
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
    rc = parse_root(&c, root, l);
    if (launch_fatal(&c, rc) || (rc != SLUICE_OK && c.n_errors == 0))
        goto out;
    if ((rc = launch_errors_finish(&c, root)) != SLUICE_OK)
        goto out;
    if (c.n_errors > 0) { /* every one dropped from a full list */
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
