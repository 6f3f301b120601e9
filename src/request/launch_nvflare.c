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

#include "base/jdec.h"
#include "base/syntax.h"

#include "launch_int.h"

typedef struct {
    jdec_cur_t site; /* launcher_spec.<site>.slurm (v NULL: none) */
    jdec_cur_t dflt; /* launcher_spec.default.slurm (v NULL: none) */
} nvslurm_t;

/* The cursor of a slurm key (site block first, then default; absent: in
 * the block that names it); true when it is there. */
static bool nv_get(const nvslurm_t *nv, const char *key, jdec_cur_t *out)
{
    if (jdec_present(&nv->site, key)) {
        jdec_member(out, &nv->site, key);
        return true;
    }
    if (jdec_present(&nv->dflt, key)) {
        jdec_member(out, &nv->dflt, key);
        return true;
    }
    jdec_member(out, nv->site.v != NULL || nv->dflt.v == NULL ? &nv->site : &nv->dflt, key);
    return false;
}

/* launcher_spec.<name>.slurm into *out (v NULL when it is not there or is
 * refused); an unknown key is noted, the known ones are still read. */
static sluice_err nv_slurm_block(const jdec_cur_t *ls, const char *name, jdec_cur_t *out)
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
    jdec_cur_t blk;

    if (jdec_object(ls, name, JDEC_SILENT, &blk) != SLUICE_OK) {
        jdec_member(out, &blk, "slurm");
        return jdec_fail(ls, name, "expected an object keyed by launcher (\"slurm\")");
    }
    /* keys of other launchers (docker, k8s, ...) belong to them: ignored */
    if (jdec_object(&blk, "slurm", JDEC_SILENT, out) != SLUICE_OK)
        return jdec_fail(&blk, "slurm", "expected an object");
    return jdec_keys(out, keys);
}

/* resource_spec's num_of_gpus, flat or keyed by site, into *out (v NULL:
 * not given). */
static sluice_err nv_num_of_gpus(const jdec_cur_t *root, const char *site, jdec_cur_t *out)
{
    static const char *const rkeys[] = {"num_of_gpus", NULL};
    jdec_cur_t rs, blk;
    sluice_err rc;

    if (jdec_object(root, "resource_spec", JDEC_SILENT, &rs) != SLUICE_OK) {
        jdec_member(out, &rs, "num_of_gpus");
        return jdec_fail(root, "resource_spec", "expected an object");
    }
    if (jdec_present(&rs, "num_of_gpus")) {
        /* flat form: {"num_of_gpus": N} */
        if ((rc = jdec_keys(&rs, rkeys)) != SLUICE_OK)
            return rc;
        jdec_member(out, &rs, "num_of_gpus");
        return SLUICE_OK;
    }
    /* NVFlare's own form: keyed by site; other sites' blocks are theirs */
    if (jdec_object(&rs, site, JDEC_SILENT, &blk) != SLUICE_OK) {
        jdec_member(out, &blk, "num_of_gpus");
        return jdec_fail(&rs, site, "expected an object");
    }
    jdec_member(out, &blk, "num_of_gpus");
    return jdec_keys(&blk, rkeys);
}

sluice_err launch_parse_nvflare(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    jdec_cur_t ls, ng, x, nodes, gpn;
    nvslurm_t nv;
    sluice_launch_pool_t *pool;
    uint64_t n = 0, num_gpus = 0;
    bool has_gpus = false, has_gpn = false;
    const char *str = NULL;
    size_t before = c->d.n_errors; /* the cross-checks need this form's fields good */
    sluice_error_t e = SLUICE_ERROR_INIT;
    sluice_err rc;

    if ((rc = nv_num_of_gpus(root, s->site, &ng)) != SLUICE_OK)
        return rc;
    if (ng.v != NULL) {
        if ((rc = jdec_uint(&ng, NULL, 0, 0,
                            (uint64_t)SLUICE_LAUNCH_MAX_NODES * SLUICE_LAUNCH_MAX_GPUS,
                            &num_gpus)) != SLUICE_OK)
            return rc;
        has_gpus = true;
    }
    if (jdec_object(root, "launcher_spec", JDEC_SILENT, &ls) != SLUICE_OK)
        return jdec_fail(root, "launcher_spec", "expected an object keyed by site");
    LAUNCH_GO_ON(c, nv_slurm_block(&ls, s->site, &nv.site));
    LAUNCH_GO_ON(c, nv_slurm_block(&ls, "default", &nv.dflt));

    if ((s->pools = calloc(1, sizeof(*s->pools))) == NULL)
        return launch_oom(c);
    s->n_pools = 1;
    pool = &s->pools[0];
    if ((pool->name = launch_strdup("main")) == NULL)
        return launch_oom(c);
    pool->nodes = 1;
    if (nv_get(&nv, "nodes", &nodes)) {
        if ((rc = jdec_uint(&nodes, NULL, 0, 1, SLUICE_LAUNCH_MAX_NODES, &n)) == SLUICE_OK)
            pool->nodes = (uint32_t)n;
        LAUNCH_GO_ON(c, rc);
    }
    if (nv_get(&nv, "gpus_per_node", &gpn)) {
        if ((rc = jdec_uint(&gpn, NULL, 0, 0, SLUICE_LAUNCH_MAX_GPUS, &n)) == SLUICE_OK) {
            pool->gpus_per_node = (uint32_t)n;
            has_gpn = true;
        }
        LAUNCH_GO_ON(c, rc);
    }
    if (nv_get(&nv, "cpus_per_node", &x)) {
        if ((rc = jdec_uint(&x, NULL, 0, 1, SLUICE_LAUNCH_MAX_CPUS, &n)) == SLUICE_OK)
            pool->cpus_per_node = (uint32_t)n;
        LAUNCH_GO_ON(c, rc);
    }
    if (nv_get(&nv, "mem_per_node", &x)) {
        if (json_is_integer(jdec_value(&x, NULL)))
            LAUNCH_GO_ON(c, jdec_uint(&x, NULL, 0, 1, SYNTAX_MEM_MAX_MIB, &pool->mem_per_node_mib));
        else if (!json_is_string(jdec_value(&x, NULL)))
            LAUNCH_GO_ON(c,
                         jdec_fail(&x, NULL, "expected MiB as an integer or a size like \"32G\""));
        else if ((rc = jdec_string(&x, NULL, JDEC_NONEMPTY, 32, &str)) != SLUICE_OK)
            LAUNCH_GO_ON(c, rc);
        else
            LAUNCH_GO_ON(c, launch_take(c, x.path,
                                        syntax_mem_size(&pool->mem_per_node_mib, str, x.path, &e),
                                        &e));
    }
    if (nv_get(&nv, "time", &x))
        LAUNCH_GO_ON(c, launch_want_time(c, &x, NULL, &s->time_limit));
    if (nv_get(&nv, "pending_timeout", &x))
        LAUNCH_GO_ON(c, launch_want_pending(c, &x, NULL, s));
    if (nv_get(&nv, "image", &x)) {
        if (s->effective_profile != SLUICE_LAUNCH_PROFILE_NONE)
            LAUNCH_GO_ON(c, launch_want_image(c, &x, NULL, &s->image));
        else if (!launch_failed(c, "profile"))
            LAUNCH_GO_ON(c, jdec_fail(&x, NULL,
                                      "job images are refused where the effective sandbox is "
                                      "none"));
    }
    /* null: application-owned fan-out, the same as leaving it out */
    if (nv_get(&nv, "additional_node_command", &x) && !json_is_null(jdec_value(&x, NULL)))
        LAUNCH_GO_ON(c, launch_want_node_command(c, &x, NULL, &pool->additional_node_command));

    /* the GPU count is checked against nodes and gpus_per_node only when
     * none of them was wrong */
    if (c->d.n_errors != before)
        return SLUICE_OK;
    if (has_gpus && has_gpn) {
        if ((uint64_t)pool->nodes * pool->gpus_per_node != num_gpus)
            return jdec_fail(
                &ng, NULL, "%llu must equal nodes * gpus_per_node = %u * %u = %llu (%s, %s)",
                (unsigned long long)num_gpus, pool->nodes, pool->gpus_per_node,
                (unsigned long long)pool->nodes * pool->gpus_per_node, nodes.path, gpn.path);
    } else if (has_gpus && num_gpus > 0) {
        if (pool->nodes > 1)
            return jdec_fail(&gpn, NULL, "required when num_of_gpus (%llu) > 0 and nodes (%u) > 1",
                             (unsigned long long)num_gpus, pool->nodes);
        if (num_gpus > SLUICE_LAUNCH_MAX_GPUS)
            return jdec_fail(&ng, NULL, "%llu GPUs on one node is more than %d",
                             (unsigned long long)num_gpus, SLUICE_LAUNCH_MAX_GPUS);
        pool->gpus_per_node = (uint32_t)num_gpus;
    }
    return SLUICE_OK;
}
