/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - site YAML + environment + flags -> validated site model.
 *
 * The YAML text is first turned into a small tree (config_yaml.c).  The
 * layers (defaults, the tree, the environment, --set) are applied by
 * config_walk.c, the cross-field checks run last (config_check.c), and a
 * `clusters:` list gives one model per entry (config_clusters.c).
 *
 * Notes:
 * - Everything is built into a fresh object; *out is set only on success,
 *   so a failed load never half-applies anything.
 * - Secret material is never read here: only paths to it are kept.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/config.h>

#include "base/opts.h"
#include "config_int.h"

/* Does the top level name a non-empty `clusters:`?  (Its shape is checked
 * by config_clusters.c.) */
static bool has_clusters(const node_t *root)
{
    size_t i;

    for (i = 0; i + 1 < root->n; i += 2)
        if (strcmp(root->kids[i]->str, "clusters") == 0)
            return !cfg_is_null(root->kids[i + 1]);
    return false;
}

sluice_err
sluice_config_load(const sluice_config_opts_t *opts, sluice_config_t **out, sluice_error_t *err)
{
    sluice_config_t *cfg = NULL;
    node_t *root = NULL;
    char *text = NULL;
    size_t len = 0;
    sluice_err rc = SLUICE_OK;
    cfg_bad_list_t bad = {0, NULL};
    ctx_t c;

    if (!opts || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_config_load: NULL argument");
    if ((rc = opts_check_version("config", opts->version, SLUICE_CONFIG_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    memset(&c, 0, sizeof(c));
    c.err = err;
    c.bad = &bad;
    if (opts->version >= 2)
        bad.list = opts->errors;
    c.file = opts->path ? opts->path : (opts->text_name ? opts->text_name : "<config>");
    if ((rc = cfg_new(&cfg, err)) != SLUICE_OK)
        goto out;
    c.cfg = cfg;
    if (opts->path) {
        if ((rc = cfg_read_file(opts->path, &text, &len, err)) != SLUICE_OK)
            goto out;
        rc = cfg_parse_yaml(c.file, text, len, &root, err);
    } else if (opts->text) {
        rc = cfg_parse_yaml(c.file, opts->text, opts->text_len, &root, err);
    }
    if (rc != SLUICE_OK)
        goto out;
    if (root && !cfg_is_null(root) && root->kind == N_MAP && has_clusters(root))
        c.role = CFG_ROLE_BASE;
    c.src = SLUICE_SRC_FILE;
    /* The file, the environment and --set: each layer goes on after a bad
     * value (cfg_go_on()), so that one run reports them all; the checks
     * across fields need good fields, so they wait for none to be bad. */
    if (root && !cfg_is_null(root) && (rc = cfg_walk_map(&c, root, "")) != SLUICE_OK &&
        !cfg_go_on(&c, rc))
        goto out;
    if ((rc = cfg_apply_env(&c, opts, false)) != SLUICE_OK && !cfg_go_on(&c, rc))
        goto out;
    if ((rc = cfg_apply_flags(&c, opts, false)) != SLUICE_OK && !cfg_go_on(&c, rc))
        goto out;
    if (bad.n > 0) {
        rc = SLUICE_ECONFIG;
        goto out;
    }
    /* The site's checks across fields: one error, the first. */
    c.bad = NULL;
    if ((rc = cfg_finalize(&c, opts->no_required)) != SLUICE_OK)
        goto out;
    /* Every entry of `clusters:` (each one's checks once it has no bad
     * field), then, when they are all good, `tenants:` (its first error). */
    c.bad = &bad;
    if ((rc = cfg_clusters_build(&c, root, opts)) != SLUICE_OK)
        goto out;
    c.bad = NULL;
    if ((rc = cfg_tenants_build(&c, root)) != SLUICE_OK)
        goto out;
    *out = cfg;
    cfg = NULL;
out:
    sluice_config_free(cfg);
    cfg_node_free(root);
    free(text);
    return rc;
}

void sluice_config_free(sluice_config_t *cfg)
{
    size_t i;

    if (!cfg)
        return;
    for (i = 0; i < CFG_N_FIELDS; i++) {
        const field_t *f = &cfg_fields[i];
        void *slot = (char *)cfg + f->off;
        switch (f->kind) {
        case K_STR:
        case K_NAME:
        case K_PREFIX:
        case K_HOST:
        case K_ABS:
        case K_URL:
        case K_DBURL:
        case K_APIVER:
        case K_ICS:
        case K_STIME:
        case K_JOBPATH:
        case K_GPUVENDOR:
        case K_LOGLEVEL:
        case K_LOGFORMAT:
            free(*(char **)slot);
            *(char **)slot = NULL;
            break;
        case K_LINES:
        case K_LIST:
        case K_ENVLIST:
        case K_PROFILES:
        case K_ARGV:
            cfg_strlist_clear((sluice_strlist_t *)slot);
            break;
        default:
            break;
        }
        if (cfg->priv)
            free(cfg->priv->origin[i]);
    }
    cfg_execs_free(cfg->launcher.executables, cfg->launcher.n_executables);
    cfg_series_free(cfg->gpu_series, cfg->n_gpu_series);
    cfg_strlist_clear(&cfg->warnings);
    if (cfg->priv) {
        for (i = 0; i < cfg->priv->n_clusters; i++)
            sluice_config_free(cfg->priv->clusters[i]);
        free(cfg->priv->clusters);
        free(cfg->priv->cluster_name);
        cfg_tenants_free(cfg->priv->tenants, cfg->priv->n_tenants);
    }
    free(cfg->priv);
    free(cfg);
}

const char *sluice_sandbox_name(sluice_sandbox_t s)
{
    switch (s) {
    case SLUICE_SANDBOX_ENROOT_PYXIS:
        return "enroot-pyxis";
    case SLUICE_SANDBOX_APPTAINER:
        return "apptainer";
    case SLUICE_SANDBOX_NONE:
        return "none";
    default:
        return "unset";
    }
}

const char *sluice_config_source_name(sluice_config_source_t s)
{
    switch (s) {
    case SLUICE_SRC_FILE:
        return "file";
    case SLUICE_SRC_ENV:
        return "env";
    case SLUICE_SRC_FLAG:
        return "flag";
    case SLUICE_SRC_TOKEN:
        return "token";
    default:
        return "default";
    }
}

sluice_err sluice_config_set_token_user(sluice_config_t *cfg,
                                        const char *user,
                                        const char *claim,
                                        sluice_error_t *err)
{
    size_t i = cfg_field_index("rest.user");
    char *u, *o = NULL;

    if (!cfg || !user || !user[0])
        return sluice_errorf(err, SLUICE_EINVAL, "rest.user: no user to set");
    if (cfg->rest.user)
        return strcmp(cfg->rest.user, user) == 0
                   ? SLUICE_OK
                   : sluice_errorf(err, SLUICE_ECONFIG, "rest.user: %s, but the token names %s",
                                   cfg->rest.user, user);
    if (!(u = cfg_dup(user)) || (claim && !(o = cfg_dup(claim)))) {
        free(u);
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    }
    cfg->rest.user = u;
    cfg->priv->src[i] = (unsigned char)SLUICE_SRC_TOKEN;
    free(cfg->priv->origin[i]);
    cfg->priv->origin[i] = o;
    return SLUICE_OK;
}

sluice_config_source_t sluice_config_source(const sluice_config_t *cfg, const char *key)
{
    const field_t *f;

    if (!cfg || !key || !(f = cfg_find_field(key)))
        return SLUICE_SRC_DEFAULT;
    return (sluice_config_source_t)cfg->priv->src[f - cfg_fields];
}

sluice_err
sluice_config_opts_init(sluice_config_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_config_opts_t tmpl = SLUICE_CONFIG_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "config", version, SLUICE_CONFIG_OPTS_VERSION, err);
}
