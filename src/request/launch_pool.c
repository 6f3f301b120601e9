/* SPDX-License-Identifier: Apache-2.0 */
/* launch_pool.c - the pools of a launch: the native form's `pools` list,
 * each pool's GPU series resolved in the site catalogue, and the effective
 * command and fan-out rule applied to every pool of either form.
 *
 * Notes:
 * - Fail-closed: a series that is unknown or has no Slurm constraint is
 *   refused before anything is submitted, and so is a pool that asks for
 *   GPUs without a series when the site names no default series.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/jdec.h"
#include "base/syntax.h"

#include "launch_int.h"

/* The catalogue's series names, "a, b, c" in out (200 bytes, "..." when
 * cut), "none" when it has none. */
static const char *known_series(const sluice_launch_policy_t *pol, char *out)
{
    const size_t cap = 200;
    size_t i, used = 0;
    int w;

    out[0] = '\0';
    for (i = 0; i < pol->n_series; i++) {
        const char *name = pol->series[i].series;
        if (name == NULL)
            continue;
        w = snprintf(out + used, cap - used, "%s%s", used ? ", " : "", name);
        if (w < 0 || (size_t)w >= cap - used) {
            memcpy(out + cap - 4, "...", 4);
            return out;
        }
        used += (size_t)w;
    }
    return used ? out : "none";
}

/* Resolve a pool's series in the catalogue (fail-closed). */
static sluice_err resolve_series(launch_ctx_t *c, const char *path, sluice_launch_pool_t *pool)
{
    const sluice_launch_policy_t *pol = c->pol;
    const char *name = pool->name ? pool->name : "?"; /* "?": its name was bad */
    char e[ECHO_CAP], known[200];
    size_t i;

    for (i = 0; i < pol->n_series; i++) {
        const sluice_launch_series_t *ser = &pol->series[i];

        if (ser->series == NULL || strcmp(ser->series, pool->gpu_series) != 0)
            continue;
        if (ser->constraint == NULL || ser->constraint[0] == '\0')
            return launch_perr(
                c, path,
                "pool \"%s\" asks for GPU series \"%s\", which has no constraint in the "
                "site catalogue (gpu_series.%s.constraint); refused before anything is "
                "submitted",
                name, pool->gpu_series, pool->gpu_series);
        if (ser->max_gpus_per_node != 0 && pool->gpus_per_node > ser->max_gpus_per_node)
            return launch_perr(
                c, path, "pool \"%s\" asks for %u GPUs per node; series \"%s\" has %u per node",
                name, pool->gpus_per_node, pool->gpu_series, ser->max_gpus_per_node);
        if ((pool->constraint = launch_strdup(ser->constraint)) == NULL)
            return launch_oom(c);
        if (ser->gres != NULL && (pool->gres = launch_strdup(ser->gres)) == NULL)
            return launch_oom(c);
        return SLUICE_OK;
    }
    return launch_perr(c, path,
                       "pool \"%s\": unknown GPU series \"%s\" (not in the site catalogue; "
                       "known: %s)",
                       name, launch_echo(e, pool->gpu_series), known_series(pol, known));
}

/* One pool: each field is checked, each error noted. */
static sluice_err parse_pool(launch_ctx_t *c, const jdec_cur_t *at, sluice_launch_pool_t *pool)
{
    static const char *const keys[] = {"name",
                                       "gpu_series",
                                       "nodes",
                                       "gpus_per_node",
                                       "cpus_per_node",
                                       "mem_per_node_mib",
                                       "command",
                                       "args",
                                       "additional_node_command",
                                       NULL};
    char e[ECHO_CAP];
    const char *name = NULL;
    uint64_t n = 1;
    jdec_cur_t series;
    sluice_err rc;

    if (!json_is_object(at->v))
        return jdec_fail(at, NULL, "expected a pool object");
    LAUNCH_GO_ON(c, jdec_keys(at, keys));
    if ((rc = jdec_string(at, "name", JDEC_REQUIRED | JDEC_NONEMPTY, 32, &name)) != SLUICE_OK)
        LAUNCH_GO_ON(c, rc);
    else if (!launch_charset_ok(name, "_-", false))
        LAUNCH_GO_ON(c, jdec_fail(at, "name", "\"%s\" does not match [a-z0-9_-]{1,32}",
                                  launch_echo(e, name)));
    else if ((pool->name = launch_strdup(name)) == NULL)
        return launch_oom(c);
    LAUNCH_GO_ON(c, jdec_uint(at, "nodes", 0, 1, SLUICE_LAUNCH_MAX_NODES, &n));
    pool->nodes = (uint32_t)n;
    n = 0;
    LAUNCH_GO_ON(c, jdec_uint(at, "gpus_per_node", 0, 0, SLUICE_LAUNCH_MAX_GPUS, &n));
    pool->gpus_per_node = (uint32_t)n;
    n = 0;
    LAUNCH_GO_ON(c, jdec_uint(at, "cpus_per_node", 0, 1, SLUICE_LAUNCH_MAX_CPUS, &n));
    pool->cpus_per_node = (uint32_t)n;
    LAUNCH_GO_ON(
        c, jdec_uint(at, "mem_per_node_mib", 0, 1, SYNTAX_MEM_MAX_MIB, &pool->mem_per_node_mib));
    if (jdec_present(at, "command")) {
        LAUNCH_GO_ON(c, launch_want_command(c, at, "command", &pool->command));
        pool->set_command = true;
    }
    if (jdec_present(at, "args")) {
        LAUNCH_GO_ON(c, launch_want_args(c, at, "args", &pool->args, &pool->n_args));
        pool->set_args = true;
    }
    LAUNCH_GO_ON(c, launch_want_node_command(c, at, "additional_node_command",
                                             &pool->additional_node_command));
    if (jdec_present(at, "gpu_series")) {
        jdec_member(&series, at, "gpu_series");
        if ((rc = jdec_strdup(&series, NULL, JDEC_NONEMPTY, 64, &pool->gpu_series)) != SLUICE_OK)
            return rc;
        /* a bad gpus_per_node left 0 here: no second error about it */
        return resolve_series(c, series.path, pool);
    }
    return SLUICE_OK;
}

/* Every pool is checked (each error noted); the list itself being wrong
 * stops there. */
sluice_err launch_parse_pools(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_spec_t *s)
{
    jdec_cur_t pools, pool;
    size_t i, j, n;

    if (!jdec_present(root, "pools"))
        return jdec_fail(root, "pools", "required (1 to %d pools)", SLUICE_LAUNCH_MAX_POOLS);
    if (jdec_array(root, "pools", JDEC_SILENT, &pools) != SLUICE_OK)
        return jdec_fail(root, "pools", "expected an array of 1 to %d pools",
                         SLUICE_LAUNCH_MAX_POOLS);
    n = jdec_len(&pools);
    if (n < 1 || n > SLUICE_LAUNCH_MAX_POOLS)
        return jdec_fail(&pools, NULL, "expected 1 to %d pools (got %zu)", SLUICE_LAUNCH_MAX_POOLS,
                         n);
    if ((s->pools = calloc(n, sizeof(*s->pools))) == NULL)
        return launch_oom(c);
    JDEC_FOREACH(&pools, i, pool)
    {
        s->n_pools = i + 1;
        LAUNCH_GO_ON(c, parse_pool(c, &pool, &s->pools[i]));
        for (j = 0; j < i && s->pools[i].name != NULL; j++)
            if (s->pools[j].name != NULL && strcmp(s->pools[j].name, s->pools[i].name) == 0) {
                LAUNCH_GO_ON(c, jdec_fail(&pool, "name", "\"%s\" is already the name of pools[%zu]",
                                          s->pools[i].name, j));
                break;
            }
    }
    return SLUICE_OK;
}

/* A pool that asks for GPUs without a series gets the site's default
 * series, or is refused: without a series it has no constraint and could
 * land on any GPU node (fail-closed, as for a series without one). */
static sluice_err
default_series(launch_ctx_t *c, const sluice_launch_spec_t *s, size_t i, sluice_launch_pool_t *pool)
{
    char p[PATH_CAP];
    sluice_err rc;

    if (pool->gpus_per_node == 0 || pool->gpu_series != NULL)
        return SLUICE_OK;
    if (s->nvflare_form)
        snprintf(p, sizeof(p), "resource_spec");
    else
        snprintf(p, sizeof(p), "pools[%zu].gpus_per_node", i);
    if (c->pol->default_series == NULL || c->pol->default_series[0] == '\0')
        return launch_perr(c, p,
                           "pool \"%s\" asks for %u GPUs per node but names no gpu_series, and the "
                           "site names no default series (policy.default_gpu_series); refused "
                           "before anything is submitted (fail-closed)",
                           pool->name, pool->gpus_per_node);
    if ((pool->gpu_series = launch_strdup(c->pol->default_series)) == NULL)
        return launch_oom(c);
    pool->default_series = true;
    if ((rc = resolve_series(c, p, pool)) != SLUICE_OK)
        return rc;
    return SLUICE_OK;
}

/* A pool with an error of its own is left out of the checks below. */
static bool pool_failed(const launch_ctx_t *c, const sluice_launch_spec_t *s, size_t i)
{
    char p[PATH_CAP];

    if (s->nvflare_form)
        return launch_failed(c, "resource_spec") || launch_failed(c, "launcher_spec");
    snprintf(p, sizeof(p), "pools[%zu]", i);
    return launch_failed(c, p);
}

/* The pool's command and arguments: its own, else the launch's. */
static sluice_err pool_command(launch_ctx_t *c, sluice_launch_spec_t *s, size_t i)
{
    sluice_launch_pool_t *pool = &s->pools[i];
    char p[PATH_CAP];
    size_t k;

    if (pool->set_command)
        return SLUICE_OK;
    if (s->command == NULL) {
        if (launch_failed(c, "command")) /* already named */
            return SLUICE_OK;
        if (s->nvflare_form)
            return launch_perr(c, "command",
                               "required: the NVFlare form must carry the worker command, or the "
                               "site (or study) must set python_path (sluice invents none)");
        snprintf(p, sizeof(p), "pools[%zu].command", i);
        return launch_perr(c, p, "required because the launch has no command");
    }
    if ((pool->command = launch_strdup(s->command)) == NULL)
        return launch_oom(c);
    if (!pool->set_args && s->n_args > 0) {
        if ((pool->args = calloc(s->n_args, sizeof(char *))) == NULL)
            return launch_oom(c);
        for (k = 0; k < s->n_args; k++) {
            if ((pool->args[k] = launch_strdup(s->args[k])) == NULL)
                return launch_oom(c);
            pool->n_args = k + 1;
        }
    }
    return SLUICE_OK;
}

/* Effective commands, the default GPU series and the multi-node fan-out
 * rule; each pool's errors are noted and the next pool is checked. */
sluice_err launch_finish_pools(launch_ctx_t *c, sluice_launch_spec_t *s)
{
    char p[PATH_CAP];
    size_t i;

    /* NVFlare's launcher runs `<python_path> -u -m <worker module> ...`: a
     * request in its form may leave the interpreter to the site (or study)
     * and send only the module and its arguments.  The effective command
     * is kept in the model, so a stored launch does not depend on the site
     * file it was accepted under. */
    if (s->nvflare_form && s->command == NULL && c->pol->python_path != NULL &&
        !launch_failed(c, "command") && !launch_failed(c, "args")) {
        if (s->n_args == 0)
            return launch_perr(c, "args",
                               "required when the command is the site's python_path (%s): the "
                               "worker module and its arguments (sluice invents none)",
                               c->pol->python_path);
        if ((s->command = launch_strdup(c->pol->python_path)) == NULL)
            return launch_oom(c);
    }
    for (i = 0; i < s->n_pools; i++) {
        sluice_launch_pool_t *pool = &s->pools[i];

        if (pool_failed(c, s, i))
            continue;
        LAUNCH_GO_ON(c, default_series(c, s, i, pool));
        LAUNCH_GO_ON(c, pool_command(c, s, i));
        if (pool->nodes > 1 && pool->additional_node_command == NULL &&
            s->effective_profile != SLUICE_LAUNCH_PROFILE_NONE && !launch_failed(c, "profile")) {
            if (s->nvflare_form)
                launch_path_join(p, "launcher_spec.", s->site, ".slurm.nodes");
            else
                snprintf(p, sizeof(p), "pools[%zu].nodes", i);
            LAUNCH_GO_ON(c, launch_perr(c, p,
                                        "%u nodes without additional_node_command leave the "
                                        "fan-out to the application, which needs the sandbox none "
                                        "(effective: %s)",
                                        pool->nodes,
                                        sluice_launch_profile_name(s->effective_profile)));
        }
    }
    return SLUICE_OK;
}
