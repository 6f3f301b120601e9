/* SPDX-License-Identifier: Apache-2.0 */
/* config_json.c - a loaded site config as JSON for `sluice config show`:
 * every field's value under its dotted path, where each value came from,
 * the warnings, the derived values other modules use, and, for a site with
 * `clusters:`, each cluster's per-cluster blocks the same way.
 *
 * Notes:
 * - Passwords in rest.url are masked; secret files are only named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/urlsafe.h"
#include "config_int.h"

static json_t *strlist_json(const sluice_strlist_t *l)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a && i < l->n; i++)
        json_array_append_new(a, json_string(l->items[i]));
    return a;
}

/* rest.url without a password: "https://user:***@host". */
static json_t *url_json(const char *url)
{
    const char *scheme = strstr(url, "://");
    const char *at, *colon, *end;
    json_t *j;
    char *copy;

    if (!scheme)
        return json_string(url);
    end = scheme + 3 + strcspn(scheme + 3, "/?#");
    at = memchr(scheme + 3, '@', (size_t)(end - scheme - 3));
    if (!at)
        return json_string(url);
    colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3));
    if (!colon)
        return json_string(url);
    copy = malloc(strlen(url) + 4);
    if (!copy)
        return NULL;
    memcpy(copy, url, (size_t)(colon - url) + 1);
    strcpy(copy + (colon - url) + 1, "***");
    strcat(copy, at);
    j = json_string(copy);
    free(copy);
    return j;
}

static json_t *value_json(const sluice_config_t *cfg, const field_t *f)
{
    const void *slot = (const char *)cfg + f->off;
    const char *s;
    json_t *o;
    size_t i;

    switch (f->kind) {
    case K_RUNTIME:
        return json_string("slurm");
    case K_URL:
        s = *(char *const *)slot;
        return s ? url_json(s) : json_null();
    case K_DBURL: {
        char shown[2048];

        s = *(char *const *)slot;
        return s ? json_string(urlsafe_redact(s, shown, sizeof(shown))) : json_null();
    }
    case K_STR:
    case K_NAME:
    case K_PREFIX:
    case K_HOST:
    case K_ABS:
    case K_APIVER:
    case K_ICS:
    case K_STIME:
    case K_JOBPATH:
    case K_GPUVENDOR:
    case K_LOGLEVEL:
    case K_LOGFORMAT:
        s = *(char *const *)slot;
        return s ? json_string(s) : json_null();
    case K_SANDBOX:
        return cfg->launcher.sandbox ? json_string(sluice_sandbox_name(cfg->launcher.sandbox))
                                     : json_null();
    case K_BOOL:
        return json_boolean(*(const bool *)slot);
    case K_INT:
    case K_DUR:
        return json_integer(*(const long *)slot);
    case K_MODE: {
        char mode[8];
        snprintf(mode, sizeof(mode), "%04lo", *(const long *)slot);
        return json_string(mode);
    }
    case K_PORTRANGE:
        return json_pack("[ii]", (json_int_t)cfg->launcher.port_range_lo,
                         (json_int_t)cfg->launcher.port_range_hi);
    case K_LINES:
    case K_LIST:
    case K_ENVLIST:
    case K_PROFILES:
    case K_ARGV:
        return strlist_json((const sluice_strlist_t *)slot);
    case K_EXECS:
        o = json_object();
        for (i = 0; o && i < cfg->launcher.n_executables; i++)
            json_object_set_new(o, cfg->launcher.executables[i].name,
                                json_pack("{s:s s:b}", "path", cfg->launcher.executables[i].path,
                                          "used", cfg->launcher.executables[i].in_use));
        return o;
    case K_SERIES:
        o = json_object();
        for (i = 0; o && i < cfg->n_gpu_series; i++) {
            const sluice_gpu_series_t *g = &cfg->gpu_series[i];
            json_object_set_new(o, g->name,
                                json_pack("{s:s s:s s:I s:s?}", "constraint", g->constraint, "gres",
                                          g->gres, "gpus_per_node", (json_int_t)g->gpus_per_node,
                                          "gpu_vendor", g->gpu_vendor));
        }
        return o;
    }
    return json_null();
}

/* Every field of cfg (only the per-cluster ones with per_cluster) under its
 * dotted path in `conf`, its source in `srcs` and, when its unset value
 * stands for something, those words in `effs` (config_meaning.c).  -1 when
 * out of memory. */
static int
add_fields(const sluice_config_t *cfg, json_t *conf, json_t *srcs, json_t *effs, bool per_cluster)
{
    char meaning[512];

    json_t *obj, *val;
    size_t i;
    char part[128];

    for (i = 0; i < CFG_N_FIELDS; i++) {
        const char *p = cfg_fields[i].path, *dot;
        char srcname[200];
        if (per_cluster && !cfg_field_per_cluster(&cfg_fields[i]))
            continue;
        obj = conf;
        while ((dot = strchr(p, '.')) != NULL) {
            json_t *next;
            snprintf(part, sizeof(part), "%.*s", (int)(dot - p), p);
            next = json_object_get(obj, part);
            if (!next) {
                next = json_object();
                if (!next || json_object_set_new(obj, part, next) != 0)
                    return -1;
            }
            obj = next;
            p = dot + 1;
        }
        val = value_json(cfg, &cfg_fields[i]);
        if (!val || json_object_set_new(obj, p, val) != 0)
            return -1;
        if ((cfg->priv->src[i] == SLUICE_SRC_ENV || cfg->priv->src[i] == SLUICE_SRC_TOKEN) &&
            cfg->priv->origin[i])
            snprintf(srcname, sizeof(srcname), "%s:%s",
                     sluice_config_source_name((sluice_config_source_t)cfg->priv->src[i]),
                     cfg->priv->origin[i]);
        else
            snprintf(srcname, sizeof(srcname), "%s",
                     sluice_config_source_name((sluice_config_source_t)cfg->priv->src[i]));
        if (json_object_set_new(srcs, cfg_fields[i].path, json_string(srcname)) != 0)
            return -1;
        if (cfg_meaning(cfg, &cfg_fields[i], meaning, sizeof(meaning)) &&
            json_object_set_new(effs, cfg_fields[i].path, json_string(meaning)) != 0)
            return -1;
    }
    /* Derived values other modules use. */
    obj = json_object_get(json_object_get(conf, "job_launcher"), "sbatch_directives");
    if (json_object_set_new(obj, "time_minutes", json_integer(cfg->launcher.sbatch.time_minutes)) !=
        0)
        return -1;
    return 0;
}

/* [{"name", "config": {the per-cluster blocks}, "sources": {...}}, ...] */
static json_t *clusters_json(const sluice_config_t *cfg)
{
    json_t *list = json_array(), *one;
    size_t i;

    for (i = 0; list && i < cfg->priv->n_clusters; i++) {
        const sluice_config_t *k = cfg->priv->clusters[i];
        one = json_pack("{s:s s:{} s:{} s:{}}", "name", k->priv->cluster_name, "config", "sources",
                        "effective");
        if (!one || json_array_append_new(list, one) != 0 ||
            add_fields(k, json_object_get(one, "config"), json_object_get(one, "sources"),
                       json_object_get(one, "effective"), true) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

sluice_err sluice_config_to_json(const sluice_config_t *cfg, json_t **out, sluice_error_t *err)
{
    json_t *root = NULL;
    sluice_err rc = SLUICE_OK;

    if (!cfg || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_config_to_json: NULL argument");
    root = json_pack("{s:{} s:{} s:{} s:o}", "config", "sources", "effective", "warnings",
                     strlist_json(&cfg->warnings));
    if (!root || add_fields(cfg, json_object_get(root, "config"), json_object_get(root, "sources"),
                            json_object_get(root, "effective"), false) != 0)
        goto nomem;
    if (cfg->priv->n_clusters > 0 && json_object_set_new(root, "clusters", clusters_json(cfg)) != 0)
        goto nomem;
    *out = root;
    return SLUICE_OK;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    json_decref(root);
    return rc;
}
