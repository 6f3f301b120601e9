/* SPDX-License-Identifier: Apache-2.0 */
/* config_catalog.c - the two catalogues of the site file: gpu_series
 * (series name -> Slurm constraint, gres, GPUs per node) and
 * job_launcher.executables (command name -> absolute path), and their
 * lookups.
 *
 * Notes:
 * - Fail-closed: a series without a constraint is refused, because a job
 *   asking for it could land on any GPU node.
 * - Only srun, enroot, apptainer and singularity are used; the Slurm
 *   client commands are accepted for NVFlare files with a warning.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/syntax.h"

#include "config_int.h"

static const char *const execs_used[] = {"srun", "enroot", "apptainer", "singularity"};
static const char *const execs_unused[] = {"sbatch", "squeue", "sacct", "scancel"};

const char *cfg_exec_used(size_t i)
{
    return i < sizeof(execs_used) / sizeof(execs_used[0]) ? execs_used[i] : NULL;
}

void cfg_execs_free(sluice_executable_t *e, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].path);
    }
    free(e);
}

void cfg_series_free(sluice_gpu_series_t *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(s[i].name);
        free(s[i].constraint);
        free(s[i].gres);
        free(s[i].gpu_vendor);
    }
    free(s);
}

sluice_err cfg_set_execs(ctx_t *c, const node_t *n, const char *key)
{
    sluice_executable_t *e = NULL;
    size_t ne = 0, i, j;
    sluice_err rc = SLUICE_OK;
    char sub[300];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, key, "expected a mapping of command name to absolute path, found %s",
                       cfg_kind_word(n));
    e = calloc(n->n / 2 + 1, sizeof(*e));
    if (!e)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        bool used = false, known = false;
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        for (j = 0; j < 4; j++) {
            if (strcmp(k->str, execs_used[j]) == 0)
                known = used = true;
            if (strcmp(k->str, execs_unused[j]) == 0)
                known = true;
        }
        if (!known) {
            rc = cfg_bad(c, k, sub,
                         "unknown command (expected one of sbatch, squeue, sacct, scancel, srun, "
                         "enroot, apptainer, singularity)");
            goto out;
        }
        if (v->kind != N_SCALAR || v->str[0] != '/' || !cfg_oneline_ok(v->str)) {
            rc = cfg_bad(c, v, sub, "expected an absolute path");
            goto out;
        }
        if (!syntax_path_plain(v->str, strlen(v->str)) || strcmp(v->str, "/") == 0) {
            rc = cfg_bad(c, v, sub,
                         "expected an absolute normalised path to the command (no '.', '..', '//' "
                         "or trailing '/'; no ':', quote, '$' or '\\')");
            goto out;
        }
        if (!used &&
            (rc = cfg_warn(c, k, sub, "not used by sluice (it talks to slurmrestd)")) != SLUICE_OK)
            goto out;
        e[ne].name = cfg_dup(k->str);
        e[ne].path = cfg_dup(v->str);
        e[ne].in_use = used;
        ne++;
        if (!e[ne - 1].name || !e[ne - 1].path) {
            rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
    }
    cfg_execs_free(c->cfg->launcher.executables, c->cfg->launcher.n_executables);
    c->cfg->launcher.executables = e;
    c->cfg->launcher.n_executables = ne;
    e = NULL;
    ne = 0;
out:
    cfg_execs_free(e, ne);
    return rc;
}

static bool constraint_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++) {
        if (!(isalnum((unsigned char)s[i]) || strchr("_-.&|*[]():,!", s[i])))
            return false;
    }
    return i > 0 && i <= 1024;
}

static bool gres_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || s[i] == ':'))
            return false;
    }
    return i > 0 && i <= 64;
}

sluice_err cfg_set_series(ctx_t *c, const node_t *n, const char *key)
{
    sluice_gpu_series_t *s = NULL;
    size_t ns = 0, i, j;
    sluice_err rc = SLUICE_OK;
    char sub[300];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, key,
                       "expected a mapping of series name to {constraint, gres, "
                       "gpus_per_node}, found %s",
                       cfg_kind_word(n));
    s = calloc(n->n / 2 + 1, sizeof(*s));
    if (!s)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (!cfg_name_ok(k->str)) {
            rc = cfg_bad(c, k, sub, "series names use [A-Za-z0-9._-]");
            goto out;
        }
        if (v->kind != N_MAP) {
            rc = cfg_bad(c, v, sub, "expected a mapping with constraint, gres, gpus_per_node");
            goto out;
        }
        s[ns].name = cfg_dup(k->str);
        s[ns].gres = cfg_dup("gpu");
        ns++;
        if (!s[ns - 1].name || !s[ns - 1].gres) {
            rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        for (j = 0; j < v->n; j += 2) {
            const node_t *sk = v->kids[j], *sv = v->kids[j + 1];
            char sub2[340];
            snprintf(sub2, sizeof(sub2), "%s.%.32s", sub, sk->str);
            if (strcmp(sk->str, "constraint") == 0) {
                if (sv->kind != N_SCALAR || !constraint_ok(sv->str)) {
                    rc = cfg_bad(
                        c, sv, sub2,
                        "expected a Slurm feature expression (letters, digits, _-.&|*[]():,!)");
                    goto out;
                }
                if ((rc = cfg_set_str(c, &s[ns - 1].constraint, sv->str)) != SLUICE_OK)
                    goto out;
            } else if (strcmp(sk->str, "gres") == 0) {
                if (sv->kind != N_SCALAR || !gres_ok(sv->str)) {
                    rc = cfg_bad(c, sv, sub2, "expected a gres name such as gpu or gpu:a100");
                    goto out;
                }
                if ((rc = cfg_set_str(c, &s[ns - 1].gres, sv->str)) != SLUICE_OK)
                    goto out;
            } else if (strcmp(sk->str, "gpus_per_node") == 0) {
                long g;
                if (sv->kind != N_SCALAR || !sv->plain || !cfg_parse_long(sv->str, &g) || g < 1 ||
                    g > 1024) {
                    rc = cfg_bad(c, sv, sub2, "expected an integer from 1 to 1024");
                    goto out;
                }
                s[ns - 1].gpus_per_node = g;
            } else if (strcmp(sk->str, "gpu_vendor") == 0) {
                if (sv->kind != N_SCALAR || !cfg_gpu_vendor_word(sv->str)) {
                    rc = cfg_bad(c, sv, sub2, "expected nvidia, amd or none");
                    goto out;
                }
                if ((rc = cfg_set_str(c, &s[ns - 1].gpu_vendor, sv->str)) != SLUICE_OK)
                    goto out;
            } else {
                rc = cfg_bad(c, sk, sub2,
                             "unknown key (expected constraint, gres, gpus_per_node, gpu_vendor)");
                goto out;
            }
        }
        if (!s[ns - 1].constraint) {
            rc = cfg_bad(c, v, sub,
                         "constraint is required (fail-closed: a series without a Slurm constraint "
                         "could land on any GPU node)");
            goto out;
        }
    }
    cfg_series_free(c->cfg->gpu_series, c->cfg->n_gpu_series);
    c->cfg->gpu_series = s;
    c->cfg->n_gpu_series = ns;
    s = NULL;
    ns = 0;
out:
    cfg_series_free(s, ns);
    return rc;
}

const sluice_gpu_series_t *sluice_config_gpu_series(const sluice_config_t *cfg, const char *name)
{
    size_t i;

    if (!cfg || !name)
        return NULL;
    for (i = 0; i < cfg->n_gpu_series; i++) {
        if (strcmp(cfg->gpu_series[i].name, name) == 0)
            return &cfg->gpu_series[i];
    }
    return NULL;
}

const char *sluice_config_executable(const sluice_config_t *cfg, const char *name)
{
    size_t i;

    if (!cfg || !name)
        return NULL;
    for (i = 0; i < cfg->launcher.n_executables; i++) {
        if (strcmp(cfg->launcher.executables[i].name, name) == 0)
            return cfg->launcher.executables[i].path;
    }
    return NULL;
}

/* ---- one entry from --set or the environment --------------------------- */

const field_t *cfg_entry_field(const char *key)
{
    static const char *const maps[] = {"job_launcher.executables", "gpu_series"};
    size_t i, len;

    for (i = 0; i < 2; i++) {
        len = strlen(maps[i]);
        if (strncmp(key, maps[i], len) == 0 && key[len] == '.' && key[len + 1] != '\0')
            return cfg_find_field(maps[i]);
    }
    return NULL;
}

/* A scalar node over `s` (borrowed), as the environment and --set make. */
static void scalar_node(node_t *n, const char *s)
{
    memset(n, 0, sizeof(*n));
    n->kind = N_SCALAR;
    n->plain = true;
    n->str = (char *)(uintptr_t)s;
}

/* The executables with `one` (a list of one, taken) added or put in place
 * of the entry of its name. */
static sluice_err merge_exec(ctx_t *c, sluice_executable_t *one)
{
    sluice_executable_t *e = c->cfg->launcher.executables, *grown;
    size_t i, n = c->cfg->launcher.n_executables;

    for (i = 0; i < n; i++) {
        if (strcmp(e[i].name, one->name) == 0) {
            free(e[i].path);
            e[i].path = one->path;
            e[i].in_use = one->in_use;
            free(one->name);
            free(one);
            return SLUICE_OK;
        }
    }
    if (!(grown = realloc(e, (n + 2) * sizeof(*e)))) {
        cfg_execs_free(one, 1);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    grown[n] = *one;
    memset(&grown[n + 1], 0, sizeof(grown[n + 1]));
    free(one);
    c->cfg->launcher.executables = grown;
    c->cfg->launcher.n_executables = n + 1;
    return SLUICE_OK;
}

/* The same for gpu_series. */
static sluice_err merge_series(ctx_t *c, sluice_gpu_series_t *one)
{
    sluice_gpu_series_t *s = c->cfg->gpu_series, *grown;
    size_t i, n = c->cfg->n_gpu_series;

    for (i = 0; i < n; i++) {
        if (strcmp(s[i].name, one->name) == 0) {
            free(s[i].name);
            free(s[i].constraint);
            free(s[i].gres);
            free(s[i].gpu_vendor);
            s[i] = *one;
            free(one);
            return SLUICE_OK;
        }
    }
    if (!(grown = realloc(s, (n + 2) * sizeof(*s)))) {
        cfg_series_free(one, 1);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    grown[n] = *one;
    memset(&grown[n + 1], 0, sizeof(grown[n + 1]));
    free(one);
    c->cfg->gpu_series = grown;
    c->cfg->n_gpu_series = n + 1;
    return SLUICE_OK;
}

sluice_err cfg_set_entry(ctx_t *c, const field_t *f, const char *key, const char *value)
{
    const char *name = key + strlen(f->path) + 1, *dot;
    sluice_gpu_series_t *had_s = c->cfg->gpu_series, *g = NULL;
    sluice_executable_t *had_e = c->cfg->launcher.executables;
    size_t had_ns = c->cfg->n_gpu_series, had_ne = c->cfg->launcher.n_executables, i, nk = 0;
    node_t k, v, top, sub, keys[5], vals[4], *top_kids[2], *sub_kids[10];
    char gpn[24], nm[128];
    sluice_err rc;

    scalar_node(&v, value);
    if (f->kind == K_EXECS) {
        scalar_node(&k, name);
        top_kids[0] = &k;
        top_kids[1] = &v;
    } else {
        /* gpu_series.NAME.FIELD: a series name may hold dots, a field none. */
        dot = strrchr(name, '.');
        if (!dot || dot == name || (size_t)(dot - name) >= sizeof(nm))
            return cfg_bad(c, NULL, key,
                           "expected gpu_series.NAME.FIELD (constraint, gres, gpus_per_node or "
                           "gpu_vendor)");
        snprintf(nm, sizeof(nm), "%.*s", (int)(dot - name), name);
        scalar_node(&k, nm);
        for (i = 0; i < had_ns; i++)
            if (strcmp(had_s[i].name, nm) == 0)
                g = &had_s[i];
        /* The entry's other fields as they are, then the one set. */
        snprintf(gpn, sizeof(gpn), "%ld", g ? g->gpus_per_node : 0L);
        if (g && g->constraint && strcmp(dot + 1, "constraint") != 0) {
            scalar_node(&keys[nk], "constraint");
            scalar_node(&vals[nk++], g->constraint);
        }
        if (g && g->gres && strcmp(dot + 1, "gres") != 0) {
            scalar_node(&keys[nk], "gres");
            scalar_node(&vals[nk++], g->gres);
        }
        if (g && g->gpus_per_node > 0 && strcmp(dot + 1, "gpus_per_node") != 0) {
            scalar_node(&keys[nk], "gpus_per_node");
            scalar_node(&vals[nk++], gpn);
        }
        if (g && g->gpu_vendor && strcmp(dot + 1, "gpu_vendor") != 0) {
            scalar_node(&keys[nk], "gpu_vendor");
            scalar_node(&vals[nk++], g->gpu_vendor);
        }
        for (i = 0; i < nk; i++) {
            sub_kids[2 * i] = &keys[i];
            sub_kids[2 * i + 1] = &vals[i];
        }
        scalar_node(&keys[4], dot + 1);
        sub_kids[2 * nk] = &keys[4];
        sub_kids[2 * nk + 1] = &v;
        memset(&sub, 0, sizeof(sub));
        sub.kind = N_MAP;
        sub.kids = sub_kids;
        sub.n = 2 * nk + 2;
        top_kids[0] = &k;
        top_kids[1] = &sub;
    }
    memset(&top, 0, sizeof(top));
    top.kind = N_MAP;
    top.kids = top_kids;
    top.n = 2;
    /* Checked as the file's one entry would be, into a list of its own;
     * then put beside the entries there were. */
    c->cfg->gpu_series = NULL;
    c->cfg->n_gpu_series = 0;
    c->cfg->launcher.executables = NULL;
    c->cfg->launcher.n_executables = 0;
    rc = f->kind == K_EXECS ? cfg_set_execs(c, &top, f->path) : cfg_set_series(c, &top, f->path);
    if (f->kind == K_EXECS) {
        sluice_executable_t *one = c->cfg->launcher.executables;
        c->cfg->launcher.executables = had_e;
        c->cfg->launcher.n_executables = had_ne;
        c->cfg->gpu_series = had_s;
        c->cfg->n_gpu_series = had_ns;
        if (rc == SLUICE_OK)
            rc = merge_exec(c, one);
    } else {
        sluice_gpu_series_t *one = c->cfg->gpu_series;
        c->cfg->launcher.executables = had_e;
        c->cfg->launcher.n_executables = had_ne;
        c->cfg->gpu_series = had_s;
        c->cfg->n_gpu_series = had_ns;
        if (rc == SLUICE_OK)
            rc = merge_series(c, one);
    }
    if (rc == SLUICE_OK) {
        i = (size_t)(f - cfg_fields);
        c->cfg->priv->src[i] = (unsigned char)c->src;
        free(c->cfg->priv->origin[i]);
        c->cfg->priv->origin[i] = NULL;
        if (c->origin && !(c->cfg->priv->origin[i] = cfg_dup(c->origin)))
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    return rc;
}
