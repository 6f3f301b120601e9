/* SPDX-License-Identifier: Apache-2.0 */
/* config_clusters.c - the `clusters:` list of the site file: one complete
 * model per entry, and the sluice_config_cluster_*() accessors.
 *
 * An entry is {name, rest, storage, job_launcher: {sbatch_directives,
 * executables},
 * gpu_series}.  Its model is built in the order of the site's, with the
 * entry as one more file layer right after the top level:
 *   defaults < the top level < the entry < environment < --set
 * where the environment and --set give their per-cluster fields (rest.*,
 * storage.*, job_launcher.sbatch_directives.*) to the first cluster only,
 * and their other fields to every cluster, as to the site.
 *
 * Notes:
 * - rest, storage and sbatch_directives are merged field by field, with
 *   two pairs taken whole: the token source (an entry that sets one of
 *   jwt_file, jwt_key_file, jwt_rs256_key_file, jwt_command drops the
 *   inherited ones and jwt_kid),
 *   the client certificate (client_cert with client_key), and storage.root
 *   drops an inherited cluster_root (the same directory seen elsewhere).
 *   gpu_series and job_launcher.executables replace the whole catalogue
 *   and map.
 * - Errors name the entry by its index, "clusters[1].rest.url", as a
 *   launch request names its pools ("pools[0].nodes").
 * - Each model is put into the site's list as soon as it exists, so that a
 *   failure leaves nothing for this file to free (sluice_config_free() of
 *   the site frees them all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/config.h>

#include "config_int.h"

#define CLUSTER_NAME_MAX 32

/* [a-z0-9][a-z0-9-]{0,31} */
static bool cluster_name_ok(const char *s)
{
    size_t i;

    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
        return false;
    for (i = 1; s[i]; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    }
    return i <= CLUSTER_NAME_MAX;
}

/* Forget what `cfg` holds for the string field `path` (inherited from the
 * top level): the entry replaces a pair or a choice as a whole. */
static void drop_field(sluice_config_t *cfg, const char *path)
{
    const field_t *f = cfg_find_field(path);
    size_t i = (size_t)(f - cfg_fields);
    char **slot = (char **)(void *)((char *)cfg + f->off);

    if (f->kind == K_ARGV) {
        cfg_strlist_clear((sluice_strlist_t *)(void *)slot);
    } else {
        free(*slot);
        *slot = NULL;
    }
    cfg->priv->src[i] = (unsigned char)SLUICE_SRC_DEFAULT;
    free(cfg->priv->origin[i]);
    cfg->priv->origin[i] = NULL;
    cfg->priv->line[i] = cfg->priv->col[i] = 0;
}

/* The job_launcher block of an entry: sbatch_directives (field by field)
 * and executables (the whole map: another cluster's Slurm may live
 * elsewhere). */
static sluice_err walk_launcher(ctx_t *c, const node_t *n)
{
    size_t i;
    sluice_err rc;

    if (n->kind != N_MAP)
        return cfg_bad(c, n, "job_launcher", "expected a mapping, found %s", cfg_kind_word(n));
    for (i = 0; i + 1 < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        char key[160];

        snprintf(key, sizeof(key), "job_launcher.%.64s", k->str);
        if (strcmp(k->str, "executables") == 0) {
            if (!cfg_is_null(v) &&
                (rc = cfg_apply(c, cfg_find_field("job_launcher.executables"), v)) != SLUICE_OK)
                return rc;
            continue;
        }
        if (strcmp(k->str, "sbatch_directives") != 0)
            return cfg_bad(c, k, key,
                           "unknown key (a cluster sets only job_launcher.sbatch_directives "
                           "and job_launcher.executables; the other job_launcher keys are the "
                           "site's)");
        if (!cfg_is_null(v) &&
            (rc = cfg_walk_map(c, v, "job_launcher.sbatch_directives")) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

/* The entry's own blocks, on top of the top level's. */
static sluice_err walk_entry(ctx_t *c, const node_t *e)
{
    static const char *const token[] = {"jwt_file", "jwt_key_file", "jwt_rs256_key_file",
                                        "jwt_command"};
    const node_t *rest = cfg_map_get(e, "rest"), *storage = cfg_map_get(e, "storage");
    sluice_config_t *cfg = c->cfg;
    size_t i;
    sluice_err rc;
    bool failed = false;

    for (i = 0; i < 4; i++)
        if (cfg_map_get(rest, token[i]))
            break;
    if (i < 4) {
        drop_field(cfg, "rest.jwt_file");
        drop_field(cfg, "rest.jwt_key_file");
        drop_field(cfg, "rest.jwt_rs256_key_file");
        drop_field(cfg, "rest.jwt_command");
        drop_field(cfg, "rest.jwt_kid");
    }
    if (cfg_map_get(rest, "client_cert") || cfg_map_get(rest, "client_key")) {
        drop_field(cfg, "rest.client_cert");
        drop_field(cfg, "rest.client_key");
    }
    if (cfg_map_get(storage, "root"))
        drop_field(cfg, "storage.cluster_root");
    for (i = 0; i + 1 < e->n; i += 2) {
        const char *k = e->kids[i]->str;
        const node_t *v = e->kids[i + 1];

        if (strcmp(k, "name") == 0 || cfg_is_null(v))
            rc = SLUICE_OK;
        else if (strcmp(k, "rest") == 0 || strcmp(k, "storage") == 0)
            rc = cfg_walk_map(c, v, k);
        else if (strcmp(k, "job_launcher") == 0)
            rc = walk_launcher(c, v);
        else /* gpu_series: check_entry() allowed nothing else */
            rc = cfg_apply(c, cfg_find_field("gpu_series"), v);
        if (cfg_go_on(c, rc))
            failed = true; /* the entry's next key */
        else if (rc != SLUICE_OK)
            return rc;
    }
    return failed ? SLUICE_ECONFIG : SLUICE_OK;
}

/* The shape of entry i: a mapping of known keys with a good, new name.
 * *name_out is borrowed from the tree. */
static sluice_err
check_entry(ctx_t *site, const node_t *list, size_t i, const char *scope, const char **name_out)
{
    static const char *const keys[] = {"name", "rest", "storage", "job_launcher", "gpu_series"};
    const node_t *e = list->kids[i], *name;
    char key[160];
    size_t j, k;

    if (e->kind != N_MAP)
        return cfg_bad(site, e, scope,
                       "expected a mapping of name, rest, storage, job_launcher, gpu_series, "
                       "found %s",
                       cfg_kind_word(e));
    for (j = 0; j + 1 < e->n; j += 2) {
        for (k = 0; k < 5; k++)
            if (strcmp(e->kids[j]->str, keys[k]) == 0)
                break;
        snprintf(key, sizeof(key), "%s.%.64s", scope, e->kids[j]->str);
        if (k == 5)
            return cfg_bad(site, e->kids[j], key,
                           "unknown key (expected name, rest, storage, job_launcher, gpu_series)");
    }
    snprintf(key, sizeof(key), "%s.name", scope);
    if (!(name = cfg_map_get(e, "name")))
        return cfg_bad(site, e, key, "required");
    if (name->kind != N_SCALAR || !cluster_name_ok(name->str))
        return cfg_bad(site, name, key,
                       "expected a cluster name: 1-32 characters from [a-z0-9-], the first a "
                       "letter or digit");
    for (j = 0; j < i; j++) {
        const node_t *other = cfg_map_get(list->kids[j], "name");
        if (other && strcmp(other->str, name->str) == 0)
            return cfg_bad(site, name, key, "\"%s\" is already the name of clusters[%zu]",
                           name->str, j);
    }
    *name_out = name->str;
    return SLUICE_OK;
}

/* The model of entry i, put at the end of the site's list. */
static sluice_err build_one(ctx_t *site,
                            const node_t *root,
                            const node_t *e,
                            size_t i,
                            const char *scope,
                            const char *name,
                            const sluice_config_opts_t *opts)
{
    sluice_config_priv_t *sp = site->cfg->priv;
    sluice_config_t *cfg = NULL;
    ctx_t c;
    sluice_err rc;

    if ((rc = cfg_new(&cfg, site->err)) != SLUICE_OK)
        return rc;
    sp->clusters[sp->n_clusters++] = cfg;
    if (!(cfg->priv->cluster_name = cfg_dup(name)))
        return sluice_errorf(site->err, SLUICE_ENOMEM, "out of memory");
    memset(&c, 0, sizeof(c));
    c.file = site->file;
    c.cfg = cfg;
    c.err = site->err;
    c.role = i == 0 ? CFG_ROLE_FIRST : CFG_ROLE_OTHER;
    c.entry = e;
    c.src = SLUICE_SRC_FILE;
    c.bad = site->bad; /* the entry's errors join the site's (config.c) */
    /* The top level again: it was valid for the site, so it is here. */
    if ((rc = cfg_walk_map(&c, root, "")) != SLUICE_OK)
        return rc;
    c.scope = scope;
    if ((rc = walk_entry(&c, e)) != SLUICE_OK && !cfg_go_on(&c, rc))
        return rc;
    if ((rc = cfg_apply_env(&c, opts, i != 0)) != SLUICE_OK && !cfg_go_on(&c, rc))
        return rc;
    if ((rc = cfg_apply_flags(&c, opts, i != 0)) != SLUICE_OK && !cfg_go_on(&c, rc))
        return rc;
    /* The checks across fields need good fields, in this entry and those
     * before it (their first error stays the message). */
    if (c.bad && c.bad->n > 0)
        return SLUICE_ECONFIG;
    c.src = SLUICE_SRC_FILE;
    c.origin = NULL;
    return cfg_finalize(&c, opts->no_required);
}

sluice_err cfg_clusters_build(ctx_t *site, const node_t *root, const sluice_config_opts_t *opts)
{
    sluice_config_priv_t *sp = site->cfg->priv;
    const node_t *list = NULL;
    const char *name = NULL;
    char scope[32];
    size_t i;
    sluice_err rc;
    bool failed = false;

    if (site->role == CFG_ROLE_BASE)
        list = cfg_map_get(root, "clusters");
    if (list == NULL)
        return (sp->cluster_name = cfg_dup("default")) != NULL
                   ? SLUICE_OK
                   : sluice_errorf(site->err, SLUICE_ENOMEM, "out of memory");
    site->src = SLUICE_SRC_FILE;
    site->origin = NULL;
    if (list->kind != N_SEQ)
        return cfg_bad(site, list, "clusters",
                       "expected a list of clusters ({name, rest, storage, job_launcher, "
                       "gpu_series}), found %s",
                       cfg_kind_word(list));
    if (list->n == 0)
        return cfg_bad(site, list, "clusters", "expected at least one cluster");
    if (!(sp->clusters = calloc(list->n, sizeof(*sp->clusters))))
        return sluice_errorf(site->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < list->n; i++) {
        snprintf(scope, sizeof(scope), "clusters[%zu]", i);
        if ((rc = check_entry(site, list, i, scope, &name)) == SLUICE_OK)
            rc = build_one(site, root, list->kids[i], i, scope, name, opts);
        if (cfg_go_on(site, rc))
            failed = true; /* the next entry: every entry's errors in one run */
        else if (rc != SLUICE_OK)
            return rc;
    }
    return failed ? SLUICE_ECONFIG : SLUICE_OK;
}

/* ---- accessors ---------------------------------------------------------- */

size_t sluice_config_cluster_count(const sluice_config_t *cfg)
{
    if (cfg == NULL)
        return 0;
    return cfg->priv->n_clusters > 0 ? cfg->priv->n_clusters : 1;
}

const sluice_config_t *sluice_config_cluster_at(const sluice_config_t *cfg, size_t i)
{
    if (cfg == NULL)
        return NULL;
    if (cfg->priv->n_clusters == 0)
        return i == 0 ? cfg : NULL;
    return i < cfg->priv->n_clusters ? cfg->priv->clusters[i] : NULL;
}

sluice_config_t *sluice_config_cluster_at_mut(sluice_config_t *cfg, size_t i)
{
    if (cfg == NULL)
        return NULL;
    if (cfg->priv->n_clusters == 0)
        return i == 0 ? cfg : NULL;
    return i < cfg->priv->n_clusters ? cfg->priv->clusters[i] : NULL;
}

const sluice_config_t *sluice_config_cluster_named(const sluice_config_t *cfg, const char *name)
{
    size_t i, n = sluice_config_cluster_count(cfg);

    if (cfg == NULL)
        return NULL;
    if (name == NULL || name[0] == '\0')
        return sluice_config_cluster_at(cfg, 0);
    for (i = 0; i < n; i++) {
        const sluice_config_t *k = sluice_config_cluster_at(cfg, i);
        if (strcmp(sluice_config_cluster_name(k), name) == 0)
            return k;
    }
    return NULL;
}

const char *sluice_config_cluster_name(const sluice_config_t *cfg)
{
    return cfg ? cfg->priv->cluster_name : NULL;
}
