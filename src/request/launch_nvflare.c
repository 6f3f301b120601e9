/* SPDX-License-Identifier: Apache-2.0 */
/* launch_nvflare.c - the NVFlare form of a launch request: resource_spec
 * (num_of_gpus, flat or keyed by site) and launcher_spec.<site>.slurm over
 * launcher_spec.default.slurm, turned into the one pool "main".
 *
 * Notes:
 * - Blocks of other sites and of other launchers (docker, k8s, ...) belong
 *   to them and are ignored; unknown keys inside a slurm block are errors.
 * - num_of_gpus must agree with nodes * gpus_per_node when both are given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/syntax.h"

#include "launch_int.h"

typedef struct {
    json_t *site; /* launcher_spec.<site>.slurm, or NULL */
    json_t *dflt; /* launcher_spec.default.slurm, or NULL */
    char site_path[PATH_CAP];
    char dflt_path[PATH_CAP];
} nvslurm_t;

/* The value of a slurm key (site block first, then default) and its path. */
static json_t *nv_get(const nvslurm_t *nv, const char *key, char *path)
{
    json_t *x;

    if (nv->site != NULL && (x = json_object_get(nv->site, key)) != NULL) {
        launch_path_key(path, nv->site_path, key);
        return x;
    }
    if (nv->dflt != NULL && (x = json_object_get(nv->dflt, key)) != NULL) {
        launch_path_key(path, nv->dflt_path, key);
        return x;
    }
    launch_path_key(path, nv->site != NULL || nv->dflt == NULL ? nv->site_path : nv->dflt_path,
                    key);
    return NULL;
}

static sluice_err
nv_slurm_block(launch_ctx_t *c, json_t *ls, const char *name, json_t **out, char *path_out)
{
    static const char *const keys[] = {"image",
                                       "nodes",
                                       "gpus_per_node",
                                       "cpus_per_node",
                                       "mem_per_node",
                                       "time",
                                       "pending_timeout",
                                       "additional_node_command",
                                       NULL};
    char p[PATH_CAP];
    json_t *blk, *sl;
    sluice_err rc;

    launch_path_key(p, "launcher_spec", name);
    launch_path_key(path_out, p, "slurm");
    *out = NULL;
    if ((blk = json_object_get(ls, name)) == NULL)
        return SLUICE_OK;
    if (!json_is_object(blk))
        return launch_perr(c, p, "expected an object keyed by launcher (\"slurm\")");
    /* keys of other launchers (docker, k8s, ...) belong to them: ignored */
    if ((sl = json_object_get(blk, "slurm")) == NULL)
        return SLUICE_OK;
    if (!json_is_object(sl))
        return launch_perr(c, path_out, "expected an object");
    /* an unknown key is noted; the known ones are still read */
    rc = launch_check_keys(c, sl, path_out, keys);
    *out = sl;
    return rc;
}

sluice_err launch_parse_nvflare(launch_ctx_t *c, json_t *root, sluice_launch_spec_t *s)
{
    static const char *const rkeys[] = {"num_of_gpus", NULL};
    json_t *rs = json_object_get(root, "resource_spec");
    json_t *ls = json_object_get(root, "launcher_spec");
    json_t *x, *ng = NULL;
    nvslurm_t nv;
    sluice_launch_pool_t *pool;
    char ng_path[PATH_CAP] = "", p[PATH_CAP], gp_path[PATH_CAP], nodes_path[PATH_CAP];
    uint64_t n = 0, num_gpus = 0;
    bool has_gpus = false, has_gpn = false;
    const char *str = NULL;
    size_t before = c->n_errors; /* the cross-checks need this form's fields good */
    sluice_error_t e = SLUICE_ERROR_INIT;
    sluice_err rc;

    memset(&nv, 0, sizeof(nv));
    if (rs != NULL) {
        if (!json_is_object(rs))
            return launch_perr(c, "resource_spec", "expected an object");
        if (json_object_get(rs, "num_of_gpus") != NULL) {
            /* flat form: {"num_of_gpus": N} */
            if ((rc = launch_check_keys(c, rs, "resource_spec", rkeys)) != SLUICE_OK)
                return rc;
            ng = json_object_get(rs, "num_of_gpus");
            snprintf(ng_path, sizeof(ng_path), "resource_spec.num_of_gpus");
        } else if ((x = json_object_get(rs, s->site)) != NULL) {
            /* NVFlare's own form: keyed by site; other sites' blocks are theirs */
            launch_path_key(p, "resource_spec", s->site);
            if (!json_is_object(x))
                return launch_perr(c, p, "expected an object");
            if ((rc = launch_check_keys(c, x, p, rkeys)) != SLUICE_OK)
                return rc;
            ng = json_object_get(x, "num_of_gpus");
            launch_path_key(ng_path, p, "num_of_gpus");
        }
        if (ng != NULL) {
            if ((rc = launch_want_uint(c, ng, ng_path, 0,
                                       (uint64_t)SLUICE_LAUNCH_MAX_NODES * SLUICE_LAUNCH_MAX_GPUS,
                                       &num_gpus)) != SLUICE_OK)
                return rc;
            has_gpus = true;
        }
    }
    if (ls != NULL) {
        if (!json_is_object(ls))
            return launch_perr(c, "launcher_spec", "expected an object keyed by site");
        LAUNCH_GO_ON(c, nv_slurm_block(c, ls, s->site, &nv.site, nv.site_path));
        LAUNCH_GO_ON(c, nv_slurm_block(c, ls, "default", &nv.dflt, nv.dflt_path));
    } else {
        launch_path_key(p, "launcher_spec", s->site);
        launch_path_key(nv.site_path, p, "slurm");
    }

    if ((s->pools = calloc(1, sizeof(*s->pools))) == NULL)
        return launch_oom(c);
    s->n_pools = 1;
    pool = &s->pools[0];
    if ((pool->name = launch_strdup("main")) == NULL)
        return launch_oom(c);
    pool->nodes = 1;
    if ((x = nv_get(&nv, "nodes", nodes_path)) != NULL) {
        if ((rc = launch_want_uint(c, x, nodes_path, 1, SLUICE_LAUNCH_MAX_NODES, &n)) == SLUICE_OK)
            pool->nodes = (uint32_t)n;
        LAUNCH_GO_ON(c, rc);
    }
    if ((x = nv_get(&nv, "gpus_per_node", gp_path)) != NULL) {
        if ((rc = launch_want_uint(c, x, gp_path, 0, SLUICE_LAUNCH_MAX_GPUS, &n)) == SLUICE_OK) {
            pool->gpus_per_node = (uint32_t)n;
            has_gpn = true;
        }
        LAUNCH_GO_ON(c, rc);
    }
    if ((x = nv_get(&nv, "cpus_per_node", p)) != NULL) {
        if ((rc = launch_want_uint(c, x, p, 1, SLUICE_LAUNCH_MAX_CPUS, &n)) == SLUICE_OK)
            pool->cpus_per_node = (uint32_t)n;
        LAUNCH_GO_ON(c, rc);
    }
    if ((x = nv_get(&nv, "mem_per_node", p)) != NULL) {
        if (json_is_integer(x))
            LAUNCH_GO_ON(c,
                         launch_want_uint(c, x, p, 1, SYNTAX_MEM_MAX_MIB, &pool->mem_per_node_mib));
        else if (!json_is_string(x))
            LAUNCH_GO_ON(c, launch_perr(c, p, "expected MiB as an integer or a size like \"32G\""));
        else if ((rc = launch_want_string(c, x, p, 32, false, &str)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else
            LAUNCH_GO_ON(
                c, launch_take(c, p, syntax_mem_size(&pool->mem_per_node_mib, str, p, &e), &e));
    }
    if ((x = nv_get(&nv, "time", p)) != NULL)
        LAUNCH_GO_ON(c, launch_want_time(c, x, p, &s->time_limit));
    if ((x = nv_get(&nv, "pending_timeout", p)) != NULL)
        LAUNCH_GO_ON(c, launch_want_pending(c, x, p, s));
    if ((x = nv_get(&nv, "image", p)) != NULL) {
        if (s->effective_profile != SLUICE_LAUNCH_PROFILE_NONE)
            LAUNCH_GO_ON(c, launch_want_image(c, x, p, &s->image));
        else if (!launch_failed(c, "profile"))
            LAUNCH_GO_ON(c, launch_perr(c, p,
                                        "job images are refused where the effective sandbox is "
                                        "none"));
    }
    /* null: application-owned fan-out, the same as leaving it out */
    if ((x = nv_get(&nv, "additional_node_command", p)) != NULL && !json_is_null(x))
        LAUNCH_GO_ON(c, launch_want_node_command(c, x, p, &pool->additional_node_command));

    /* the GPU count is checked against nodes and gpus_per_node only when
     * none of them was wrong */
    if (c->n_errors != before)
        return SLUICE_OK;
    if (has_gpus && has_gpn) {
        if ((uint64_t)pool->nodes * pool->gpus_per_node != num_gpus)
            return launch_perr(
                c, ng_path, "%llu must equal nodes * gpus_per_node = %u * %u = %llu (%s, %s)",
                (unsigned long long)num_gpus, pool->nodes, pool->gpus_per_node,
                (unsigned long long)pool->nodes * pool->gpus_per_node, nodes_path, gp_path);
    } else if (has_gpus && num_gpus > 0) {
        if (pool->nodes > 1)
            return launch_perr(c, gp_path,
                               "required when num_of_gpus (%llu) > 0 and nodes (%u) > 1",
                               (unsigned long long)num_gpus, pool->nodes);
        if (num_gpus > SLUICE_LAUNCH_MAX_GPUS)
            return launch_perr(c, ng_path, "%llu GPUs on one node is more than %d",
                               (unsigned long long)num_gpus, SLUICE_LAUNCH_MAX_GPUS);
        pool->gpus_per_node = (uint32_t)num_gpus;
    }
    return SLUICE_OK;
}
