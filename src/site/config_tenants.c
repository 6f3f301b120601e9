/* SPDX-License-Identifier: Apache-2.0 */
/* config_tenants.c - the `tenants:` list of the site file, and the
 * sluice_config_tenant_*() accessors.
 *
 * An entry is {name, callers, slurm_user, identity, jwt_file, account,
 * policy: {allowed_partitions, allowed_accounts, allowed_qos,
 * allowed_images, allowed_studies}, limits: {live_launches, nodes_in_flight,
 * gpus_in_flight, accepts_per_minute}} (docs/tenants.md).
 *
 * Notes:
 * - Tenants come from the site file only: the environment and --set do not
 *   reach them (a list of mappings has no dotted path).
 * - Errors name the entry by its index, "tenants[1].slurm_user", as
 *   `clusters:` does.
 * - A caller belongs to at most one tenant; a caller no tenant lists is the
 *   default tenant's, which acts as rest.user (today's single identity).
 * - A tenant's policy lists narrow the site's: each entry must be one the
 *   site allows (its list, or its own sbatch value when its list is
 *   empty), so that the request check can apply the site's rule and then
 *   the tenant's.
 * - The mint identity needs a key on every cluster (rest.jwt_key_file or
 *   rest.jwt_rs256_key_file); the proxy identity needs a token the site's
 *   SlurmUser holds, which only a live check can tell (`sluice check`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/config.h>

#include "base/marker.h"
#include "config_int.h"

#define TENANT_LIMIT_MAX 1000000L

static const char *const entry_keys[] = {"name",     "callers", "slurm_user", "identity",
                                         "jwt_file", "account", "policy",     "limits"};
#define N_ENTRY_KEYS (sizeof(entry_keys) / sizeof(entry_keys[0]))
static const char *const policy_keys[] = {"allowed_partitions", "allowed_accounts", "allowed_qos",
                                          "allowed_images", "allowed_studies"};
static const char *const limit_keys[] = {"live_launches", "nodes_in_flight", "gpus_in_flight",
                                         "accepts_per_minute"};

/* A caller as the service names it: [A-Za-z0-9._@-]{1,63} (a tokens file
 * name) or "unix:" and a user name (a socket peer). */
static bool caller_ok(const char *s)
{
    const char *p = strncmp(s, "unix:", 5) == 0 ? s + 5 : s;
    size_t i;

    if (p[0] == '\0' || strlen(s) >= 64)
        return false;
    for (i = 0; p[i]; i++) {
        char ch = p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_' || ch == '@' || ch == '-'))
            return false;
    }
    return true;
}

/* A Slurm user name: [a-z_][a-z0-9_.-]{0,31} (what useradd accepts by
 * default, and what slurmctld resolves). */
static bool user_ok(const char *s)
{
    size_t i;

    if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (i = 1; s[i]; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
              ch == '-'))
            return false;
    }
    return i <= 32;
}

static bool abs_ok(const char *s)
{
    return s[0] == '/' && cfg_oneline_ok(s);
}

/* Every key of mapping `m` is one of keys[0..n); `what` lists them. */
static sluice_err
known_keys(ctx_t *c, const node_t *m, const char *scope, const char *const *keys, size_t n)
{
    char key[192], list[256] = "";
    size_t i, j, used = 0;

    for (j = 0; j < n; j++)
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", j ? ", " : "", keys[j]);
    if (m->kind != N_MAP)
        return cfg_bad(c, m, scope, "expected a mapping of %s, found %s", list, cfg_kind_word(m));
    for (i = 0; i + 1 < m->n; i += 2) {
        for (j = 0; j < n; j++)
            if (strcmp(m->kids[i]->str, keys[j]) == 0)
                break;
        if (j == n) {
            snprintf(key, sizeof(key), "%s.%.64s", scope, m->kids[i]->str);
            return cfg_bad(c, m->kids[i], key, "unknown key (expected %s)", list);
        }
    }
    return SLUICE_OK;
}

/* A required or optional scalar of `e` checked by `ok`, copied to *out. */
static sluice_err scalar(ctx_t *c,
                         const node_t *e,
                         const char *scope,
                         const char *name,
                         bool required,
                         bool (*ok)(const char *),
                         const char *what,
                         char **out)
{
    const node_t *v = cfg_map_get(e, name);
    char key[160];

    snprintf(key, sizeof(key), "%s.%s", scope, name);
    if (v == NULL)
        return required ? cfg_bad(c, e, key, "required (%s)", what) : SLUICE_OK;
    if (v->kind != N_SCALAR || !ok(v->str))
        return cfg_bad(c, v, key, "expected %s", what);
    if (!(*out = cfg_dup(v->str)))
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    return SLUICE_OK;
}

/* A list of `e` (or of its `policy`) into *items / *n. */
static sluice_err get_list(ctx_t *c,
                           const node_t *m,
                           const char *key,
                           const char *name,
                           bool (*ok)(const char *),
                           const char *what,
                           char ***items,
                           size_t *n)
{
    const node_t *v = cfg_map_get(m, name);
    sluice_strlist_t l = {NULL, 0};
    sluice_err rc;

    if (v == NULL)
        return SLUICE_OK;
    if (v->kind != N_SEQ)
        return cfg_bad(c, v, key, "expected a list of %s, found %s", what, cfg_kind_word(v));
    if ((rc = cfg_get_list(c, v, key, ok, what, &l)) != SLUICE_OK)
        return rc;
    *items = l.items;
    *n = l.n;
    return SLUICE_OK;
}

/* `value` is allowed by the site: in its list, or its own sbatch value
 * when its list is empty. */
static bool site_allows(const sluice_strlist_t *site, const char *own, const char *value)
{
    size_t i;

    if (site->n == 0)
        return own != NULL && strcmp(own, value) == 0;
    for (i = 0; i < site->n; i++)
        if (strcmp(site->items[i], value) == 0)
            return true;
    return false;
}

/* An image the site allows: one of its entries, or below one ending in '/'. */
static bool site_allows_image(const sluice_strlist_t *site, const char *value)
{
    size_t i, len;

    for (i = 0; i < site->n; i++) {
        len = strlen(site->items[i]);
        if (strcmp(site->items[i], value) == 0)
            return true;
        if (len > 0 && site->items[i][len - 1] == '/' && strncmp(site->items[i], value, len) == 0)
            return true;
    }
    return false;
}

static sluice_err narrow(ctx_t *c,
                         const node_t *pol,
                         const char *scope,
                         size_t which,
                         const sluice_strlist_t *site,
                         const char *own,
                         char **items,
                         size_t n)
{
    const node_t *v = cfg_map_get(pol, policy_keys[which]);
    char key[192];
    size_t i;

    for (i = 0; i < n; i++) {
        bool ok = which == 3 ? site_allows_image(site, items[i]) : site_allows(site, own, items[i]);
        if (ok)
            continue;
        snprintf(key, sizeof(key), "%s.policy.%s", scope, policy_keys[which]);
        return cfg_bad(c, v != NULL && i < v->n ? v->kids[i] : v, key,
                       "'%.64s' is not allowed by the site's policy.%s%s", items[i],
                       policy_keys[which],
                       site->n == 0 && which != 3 ? " (empty: only the site's own value)" : "");
    }
    return SLUICE_OK;
}

static sluice_err policy(ctx_t *c, const node_t *e, const char *scope, sluice_tenant_t *t)
{
    const sluice_config_t *cfg = c->cfg;
    const node_t *pol = cfg_map_get(e, "policy");
    char key[192], scope_p[96];
    sluice_err rc;

    if (pol == NULL)
        return SLUICE_OK;
    snprintf(scope_p, sizeof(scope_p), "%s.policy", scope);
    if ((rc = known_keys(c, pol, scope_p, policy_keys, 5)) != SLUICE_OK)
        return rc;
    /* studies come from the study runtime file, not the site's policy: the
     * accept checks the name a request gives against this list */
    snprintf(key, sizeof(key), "%s.allowed_studies", scope_p);
    if ((rc = get_list(c, pol, key, "allowed_studies", cfg_name_ok, "study names",
                       &t->allowed_studies, &t->n_allowed_studies)) != SLUICE_OK)
        return rc;
    snprintf(key, sizeof(key), "%s.allowed_partitions", scope_p);
    if ((rc = get_list(c, pol, key, "allowed_partitions", cfg_name_ok, "partition names",
                       &t->allowed_partitions, &t->n_allowed_partitions)) != SLUICE_OK)
        return rc;
    snprintf(key, sizeof(key), "%s.allowed_accounts", scope_p);
    if ((rc = get_list(c, pol, key, "allowed_accounts", cfg_name_ok, "account names",
                       &t->allowed_accounts, &t->n_allowed_accounts)) != SLUICE_OK)
        return rc;
    snprintf(key, sizeof(key), "%s.allowed_qos", scope_p);
    if ((rc = get_list(c, pol, key, "allowed_qos", cfg_name_ok, "QOS names", &t->allowed_qos,
                       &t->n_allowed_qos)) != SLUICE_OK)
        return rc;
    snprintf(key, sizeof(key), "%s.allowed_images", scope_p);
    if ((rc = get_list(c, pol, key, "allowed_images", abs_ok, "absolute paths", &t->allowed_images,
                       &t->n_allowed_images)) != SLUICE_OK)
        return rc;
    if ((rc = narrow(c, pol, scope, 0, &cfg->policy.allowed_partitions,
                     cfg->launcher.sbatch.partition, t->allowed_partitions,
                     t->n_allowed_partitions)) != SLUICE_OK ||
        (rc = narrow(c, pol, scope, 1, &cfg->policy.allowed_accounts, cfg->launcher.sbatch.account,
                     t->allowed_accounts, t->n_allowed_accounts)) != SLUICE_OK ||
        (rc = narrow(c, pol, scope, 2, &cfg->policy.allowed_qos, cfg->launcher.sbatch.qos,
                     t->allowed_qos, t->n_allowed_qos)) != SLUICE_OK ||
        (rc = narrow(c, pol, scope, 3, &cfg->policy.allowed_images, NULL, t->allowed_images,
                     t->n_allowed_images)) != SLUICE_OK)
        return rc;
    return SLUICE_OK;
}

static sluice_err limits(ctx_t *c, const node_t *e, const char *scope, sluice_tenant_t *t)
{
    const node_t *lim = cfg_map_get(e, "limits");
    long *slot[] = {&t->limits.live_launches, &t->limits.nodes_in_flight, &t->limits.gpus_in_flight,
                    &t->limits.accepts_per_minute};
    char key[192], scope_l[96];
    size_t i;
    sluice_err rc;

    if (lim == NULL)
        return SLUICE_OK;
    snprintf(scope_l, sizeof(scope_l), "%s.limits", scope);
    if ((rc = known_keys(c, lim, scope_l, limit_keys, 4)) != SLUICE_OK)
        return rc;
    for (i = 0; i < 4; i++) {
        const node_t *v = cfg_map_get(lim, limit_keys[i]);
        long x;

        if (v == NULL)
            continue;
        snprintf(key, sizeof(key), "%s.%s", scope_l, limit_keys[i]);
        if (v->kind != N_SCALAR || !v->plain || !cfg_parse_long(v->str, &x) || x < 0 ||
            x > TENANT_LIMIT_MAX)
            return cfg_bad(c, v, key, "expected an integer from 0 (no limit) to %ld%s",
                           TENANT_LIMIT_MAX,
                           v->kind == N_SCALAR && !v->plain ? " (without quotes)" : "");
        *slot[i] = x;
    }
    return SLUICE_OK;
}

/* The identity and what it needs. */
static sluice_err identity(ctx_t *c, const node_t *e, const char *scope, sluice_tenant_t *t)
{
    const node_t *v = cfg_map_get(e, "identity"), *jf = cfg_map_get(e, "jwt_file");
    const sluice_config_t *site = c->cfg;
    char key[160];
    size_t i;
    sluice_err rc;

    snprintf(key, sizeof(key), "%s.identity", scope);
    if (v == NULL)
        return cfg_bad(c, e, key, "required (token_file, mint or proxy)");
    if (v->kind == N_SCALAR && strcmp(v->str, "token_file") == 0)
        t->identity = SLUICE_TENANT_TOKEN_FILE;
    else if (v->kind == N_SCALAR && strcmp(v->str, "mint") == 0)
        t->identity = SLUICE_TENANT_MINT;
    else if (v->kind == N_SCALAR && strcmp(v->str, "proxy") == 0)
        t->identity = SLUICE_TENANT_PROXY;
    else
        return cfg_bad(c, v, key, "expected token_file, mint or proxy");
    snprintf(key, sizeof(key), "%s.jwt_file", scope);
    if (t->identity != SLUICE_TENANT_TOKEN_FILE) {
        if (jf != NULL)
            return cfg_bad(c, jf, key, "only for identity token_file (this tenant's is %s)",
                           v->str);
    } else if ((rc = scalar(c, e, scope, "jwt_file", true, abs_ok, "an absolute path",
                            &t->jwt_file)) != SLUICE_OK) {
        return rc;
    }
    if (t->identity != SLUICE_TENANT_MINT)
        return SLUICE_OK;
    for (i = 0; i < sluice_config_cluster_count(site); i++) {
        const sluice_config_t *k = sluice_config_cluster_at(site, i);
        if (k->rest.jwt_key_file == NULL && k->rest.jwt_rs256_key_file == NULL) {
            snprintf(key, sizeof(key), "%s.identity", scope);
            return cfg_bad(c, v, key,
                           "mint needs the cluster's signing key, and cluster \"%s\" has neither "
                           "rest.jwt_key_file nor rest.jwt_rs256_key_file",
                           sluice_config_cluster_name(k));
        }
    }
    return SLUICE_OK;
}

/* Entry i of `list` into tenants[i]. */
static sluice_err
build_one(ctx_t *c, const node_t *list, size_t i, sluice_tenant_t *tenants, const char *scope)
{
    const node_t *e = list->kids[i], *name;
    sluice_tenant_t *t = &tenants[i];
    char key[160];
    size_t j, k, m;
    sluice_err rc;

    if (e->kind != N_MAP)
        return cfg_bad(c, e, scope,
                       "expected a mapping of name, callers, slurm_user, identity, ... found %s",
                       cfg_kind_word(e));
    if ((rc = known_keys(c, e, scope, entry_keys, N_ENTRY_KEYS)) != SLUICE_OK)
        return rc;
    snprintf(key, sizeof(key), "%s.name", scope);
    if (!(name = cfg_map_get(e, "name")))
        return cfg_bad(c, e, key, "required");
    if (name->kind != N_SCALAR || !marker_tenant_name_ok(name->str, strlen(name->str)))
        return cfg_bad(c, name, key,
                       "expected a tenant name: 1-32 characters from [a-z0-9-], the first a "
                       "letter or digit");
    if (strcmp(name->str, SLUICE_TENANT_DEFAULT) == 0)
        return cfg_bad(c, name, key,
                       "\"default\" is the tenant of every caller no entry lists (it acts as "
                       "rest.user); choose another name");
    for (j = 0; j < i; j++)
        if (strcmp(tenants[j].name, name->str) == 0)
            return cfg_bad(c, name, key, "\"%s\" is already the name of tenants[%zu]", name->str,
                           j);
    if (!(t->name = cfg_dup(name->str)))
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    snprintf(key, sizeof(key), "%s.callers", scope);
    if (!cfg_map_get(e, "callers"))
        return cfg_bad(c, e, key, "required (the API callers of this tenant)");
    if ((rc = get_list(c, e, key, "callers", caller_ok,
                       "callers ([A-Za-z0-9._@-]{1,63} as in the tokens file, or unix:<user>)",
                       &t->callers, &t->n_callers)) != SLUICE_OK)
        return rc;
    if (t->n_callers == 0)
        return cfg_bad(c, cfg_map_get(e, "callers"), key, "expected at least one caller");
    for (j = 0; j <= i; j++)
        for (k = 0; k < tenants[j].n_callers; k++)
            for (m = (j == i ? k + 1 : 0); m < t->n_callers; m++)
                if (strcmp(tenants[j].callers[k], t->callers[m]) == 0)
                    return cfg_bad(c, cfg_map_get(e, "callers"), key,
                                   "caller \"%s\" is already in tenants[%zu]; a caller belongs to "
                                   "one tenant",
                                   t->callers[m], j);
    if ((rc = scalar(c, e, scope, "slurm_user", true, user_ok,
                     "a user name: [a-z_][a-z0-9_.-]{0,31}", &t->slurm_user)) != SLUICE_OK)
        return rc;
    if ((rc = identity(c, e, scope, t)) != SLUICE_OK)
        return rc;
    if ((rc = scalar(c, e, scope, "account", false, cfg_name_ok, "an account name", &t->account)) !=
        SLUICE_OK)
        return rc;
    if ((rc = policy(c, e, scope, t)) != SLUICE_OK)
        return rc;
    if (t->account != NULL && t->n_allowed_accounts > 0) {
        for (j = 0; j < t->n_allowed_accounts; j++)
            if (strcmp(t->allowed_accounts[j], t->account) == 0)
                break;
        if (j == t->n_allowed_accounts) {
            snprintf(key, sizeof(key), "%s.account", scope);
            return cfg_bad(c, cfg_map_get(e, "account"), key,
                           "'%s' is not in this tenant's policy.allowed_accounts", t->account);
        }
    }
    return limits(c, e, scope, t);
}

sluice_err cfg_tenants_build(ctx_t *site, const node_t *root)
{
    sluice_config_priv_t *sp = site->cfg->priv;
    const node_t *l = root != NULL ? cfg_map_get(root, "tenants") : NULL;
    char scope[32];
    size_t i;
    sluice_err rc;

    if (l == NULL)
        return SLUICE_OK;
    site->src = SLUICE_SRC_FILE;
    site->origin = NULL;
    site->scope = NULL;
    if (l->kind != N_SEQ)
        return cfg_bad(site, l, "tenants",
                       "expected a list of tenants ({name, callers, slurm_user, identity, ...}), "
                       "found %s",
                       cfg_kind_word(l));
    if (l->n == 0)
        return SLUICE_OK;
    if (!(sp->tenants = calloc(l->n, sizeof(*sp->tenants))))
        return sluice_errorf(site->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < l->n; i++) {
        sp->n_tenants = i + 1; /* so that a failure frees what entry i holds */
        snprintf(scope, sizeof(scope), "tenants[%zu]", i);
        if ((rc = build_one(site, l, i, sp->tenants, scope)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static void strv_free(char **v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void cfg_tenants_free(sluice_tenant_t *t, size_t n)
{
    size_t i;

    for (i = 0; t != NULL && i < n; i++) {
        free(t[i].name);
        free(t[i].slurm_user);
        free(t[i].jwt_file);
        free(t[i].account);
        strv_free(t[i].callers, t[i].n_callers);
        strv_free(t[i].allowed_partitions, t[i].n_allowed_partitions);
        strv_free(t[i].allowed_accounts, t[i].n_allowed_accounts);
        strv_free(t[i].allowed_qos, t[i].n_allowed_qos);
        strv_free(t[i].allowed_images, t[i].n_allowed_images);
        strv_free(t[i].allowed_studies, t[i].n_allowed_studies);
    }
    free(t);
}

/* ---- accessors ---------------------------------------------------------- */

size_t sluice_config_tenant_count(const sluice_config_t *cfg)
{
    return cfg != NULL ? cfg->priv->n_tenants : 0;
}

const sluice_tenant_t *sluice_config_tenant_at(const sluice_config_t *cfg, size_t i)
{
    return cfg != NULL && i < cfg->priv->n_tenants ? &cfg->priv->tenants[i] : NULL;
}

const sluice_tenant_t *sluice_config_tenant_named(const sluice_config_t *cfg, const char *name)
{
    size_t i;

    for (i = 0; name != NULL && i < sluice_config_tenant_count(cfg); i++)
        if (strcmp(cfg->priv->tenants[i].name, name) == 0)
            return &cfg->priv->tenants[i];
    return NULL;
}

const sluice_tenant_t *sluice_config_tenant_of_caller(const sluice_config_t *cfg,
                                                      const char *caller)
{
    size_t i, j;

    for (i = 0; caller != NULL && i < sluice_config_tenant_count(cfg); i++)
        for (j = 0; j < cfg->priv->tenants[i].n_callers; j++)
            if (strcmp(cfg->priv->tenants[i].callers[j], caller) == 0)
                return &cfg->priv->tenants[i];
    return NULL;
}

const char *sluice_tenant_identity_name(sluice_tenant_identity_t id)
{
    switch (id) {
    case SLUICE_TENANT_TOKEN_FILE:
        return "token_file";
    case SLUICE_TENANT_MINT:
        return "mint";
    case SLUICE_TENANT_PROXY:
        return "proxy";
    }
    return "unknown";
}
