/* SPDX-License-Identifier: Apache-2.0 */
/* study.c - the study runtime file (format_version: 2): per study, the
 * image, datasets, environment, secret environment, read-only secret
 * mounts and Slurm settings.
 *
 * Notes:
 * - Strict like the site file: unknown keys are errors, with the file,
 *   line and column of the offending key.
 * - The site config, when given, decides the effective sandbox, which
 *   refuses images, datasets and secret mounts where it is none.
 * - Variable names are checked by base/syntax.h, like launch requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/syntax.h"

#include "config_int.h"

static void study_free(sluice_study_t *s)
{
    size_t i;

    free(s->name);
    free(s->image);
    for (i = 0; i < s->n_datasets; i++) {
        free(s->datasets[i].name);
        free(s->datasets[i].source);
        free(s->datasets[i].target);
    }
    free(s->datasets);
    for (i = 0; i < s->n_env; i++) {
        free(s->env_names[i]);
        free(s->env_values[i]);
    }
    free(s->env_names);
    free(s->env_values);
    for (i = 0; i < s->n_secret_env; i++) {
        free(s->secret_env[i].name);
        free(s->secret_env[i].source);
    }
    free(s->secret_env);
    for (i = 0; i < s->n_secret_mounts; i++) {
        free(s->secret_mounts[i].name);
        free(s->secret_mounts[i].source);
        free(s->secret_mounts[i].target);
    }
    free(s->secret_mounts);
    cfg_strlist_clear(&s->setup);
    free(s->partition);
    free(s->account);
    free(s->qos);
    free(s->python_path);
}

void sluice_study_runtime_free(sluice_study_runtime_t *rt)
{
    size_t i;

    if (!rt)
        return;
    for (i = 0; i < rt->n_studies; i++)
        study_free(&rt->studies[i]);
    free(rt->studies);
    free(rt);
}

const sluice_study_t *sluice_study_runtime_find(const sluice_study_runtime_t *rt, const char *name)
{
    size_t i;

    if (!rt || !name)
        return NULL;
    for (i = 0; i < rt->n_studies; i++) {
        if (strcmp(rt->studies[i].name, name) == 0)
            return &rt->studies[i];
    }
    return NULL;
}

static bool reserved_env(const char *s)
{
    return strncmp(s, "SLURM_", 6) == 0 || strncmp(s, "SLUICE_", 7) == 0 ||
           strncmp(s, "NVFL_", 5) == 0;
}

static sluice_err study_str(ctx_t *c, const node_t *v, const char *key, bool abs, char **slot)
{
    if (v->kind != N_SCALAR || cfg_is_null(v) || !cfg_oneline_ok(v->str))
        return cfg_bad(c, v, key,
                       abs ? "expected an absolute path" : "expected a non-empty string");
    if (abs && v->str[0] != '/')
        return cfg_bad(c, v, key, "expected an absolute path");
    return cfg_set_str(c, slot, v->str);
}

static sluice_err study_datasets(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    size_t i, j;
    sluice_err rc;
    char sub[300], sub2[340];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, key, "expected a mapping of dataset name to {source, mode}");
    s->datasets = calloc(n->n / 2 + 1, sizeof(*s->datasets));
    if (!s->datasets)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        sluice_dataset_t *d = &s->datasets[s->n_datasets++];
        char target[200];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (!cfg_name_ok(k->str))
            return cfg_bad(c, k, sub, "dataset names use [A-Za-z0-9._-]");
        if (v->kind != N_MAP)
            return cfg_bad(c, v, sub, "expected a mapping with source and mode");
        d->read_only = true;
        if ((rc = cfg_set_str(c, &d->name, k->str)) != SLUICE_OK)
            return rc;
        snprintf(target, sizeof(target), "/data/%s/%s", s->name, k->str);
        if ((rc = cfg_set_str(c, &d->target, target)) != SLUICE_OK)
            return rc;
        for (j = 0; j < v->n; j += 2) {
            const node_t *dk = v->kids[j], *dv = v->kids[j + 1];
            snprintf(sub2, sizeof(sub2), "%s.%.32s", sub, dk->str);
            if (strcmp(dk->str, "source") == 0) {
                if ((rc = study_str(c, dv, sub2, true, &d->source)) != SLUICE_OK)
                    return rc;
            } else if (strcmp(dk->str, "mode") == 0) {
                if (dv->kind != N_SCALAR ||
                    (strcmp(dv->str, "ro") != 0 && strcmp(dv->str, "rw") != 0))
                    return cfg_bad(c, dv, sub2, "expected ro or rw");
                d->read_only = strcmp(dv->str, "ro") == 0;
            } else {
                return cfg_bad(c, dk, sub2, "unknown key (expected source, mode)");
            }
        }
        if (!d->source)
            return cfg_bad(c, v, sub, "source is required");
    }
    return SLUICE_OK;
}

static sluice_err study_env(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    sluice_error_t serr = SLUICE_ERROR_INIT;
    size_t i;
    char sub[300];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, key, "expected a mapping of variable name to value");
    s->env_names = calloc(n->n / 2 + 1, sizeof(char *));
    s->env_values = calloc(n->n / 2 + 1, sizeof(char *));
    if (!s->env_names || !s->env_values)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (syntax_envname(k->str, sub, &serr) != SLUICE_OK)
            return cfg_bad_text(c, k, serr.text);
        if (reserved_env(k->str))
            return cfg_bad(c, k, sub, "reserved prefix (SLURM_, SLUICE_, NVFL_)");
        if (v->kind != N_SCALAR)
            return cfg_bad(c, v, sub, "expected a scalar value, found %s", cfg_kind_word(v));
        s->env_names[s->n_env] = cfg_dup(k->str);
        s->env_values[s->n_env] = cfg_dup(cfg_is_null(v) ? "" : v->str);
        s->n_env++;
        if (!s->env_names[s->n_env - 1] || !s->env_values[s->n_env - 1])
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    return SLUICE_OK;
}

/* secret_env: {NAME: {source: VAR}} (NVFlare), {NAME: VAR}, or [NAME, ...]. */
static sluice_err study_secret_env(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    sluice_error_t serr = SLUICE_ERROR_INIT;
    size_t i, step = n->kind == N_MAP ? 2 : 1;
    char sub[300];

    if (n->kind == N_SCALAR)
        return cfg_bad(c, n, key, "expected a mapping NAME: {source: VAR} or a list of names");
    s->secret_env = calloc(n->n / step + 1, sizeof(*s->secret_env));
    if (!s->secret_env)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += step) {
        const node_t *k = n->kids[i];
        const node_t *v = step == 2 ? n->kids[i + 1] : NULL;
        const char *source = k->str;
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->kind == N_SCALAR ? k->str : "?");
        if (k->kind != N_SCALAR)
            return cfg_bad(c, k, sub, "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
        if (syntax_envname(k->str, sub, &serr) != SLUICE_OK)
            return cfg_bad_text(c, k, serr.text);
        if (reserved_env(k->str))
            return cfg_bad(c, k, sub, "reserved prefix (SLURM_, SLUICE_, NVFL_)");
        if (v && v->kind == N_MAP) {
            if (v->n != 2 || strcmp(v->kids[0]->str, "source") != 0)
                return cfg_bad(c, v, sub, "expected {source: VARIABLE}");
            v = v->kids[1];
        }
        if (v && !cfg_is_null(v)) {
            if (v->kind != N_SCALAR || !cfg_env_name_ok(v->str))
                return cfg_bad(c, v, sub,
                               "source: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
            source = v->str;
        }
        s->secret_env[s->n_secret_env].name = cfg_dup(k->str);
        s->secret_env[s->n_secret_env].source = cfg_dup(source);
        s->n_secret_env++;
        if (!s->secret_env[s->n_secret_env - 1].name || !s->secret_env[s->n_secret_env - 1].source)
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    return SLUICE_OK;
}

/* An absolute path as written is its normalised form, without ':' or ','
 * (they separate mount lists). */
static bool mount_path_ok(const char *p)
{
    char *norm = NULL;
    bool ok;

    if (syntax_path_normalize(&norm, p, "path", NULL) != SLUICE_OK)
        return false;
    ok = strcmp(norm, p) == 0 && !strpbrk(p, ":,");
    free(norm);
    return ok;
}

/* True when one of the paths is the other or below it. */
static bool paths_overlap(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;

    if (strcmp(a, "/") == 0 || strcmp(b, "/") == 0)
        return true;
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/') && (b[n] == '\0' || b[n] == '/');
}

/* secret_mounts: {NAME: {source: /abs, mount_path: /abs, mode: ro}} (the
 * NVFlare study format).  Read-only always; `items` (Kubernetes-only) is
 * refused.  The source must lie outside the storage root, where the
 * staging of every launch lives; render checks it again with symbolic
 * links resolved.  sluice never opens a source: only its path reaches the
 * script. */
static sluice_err study_secret_mounts(
    ctx_t *c, sluice_study_t *s, const node_t *n, const char *key, const sluice_config_t *site)
{
    static const char *const forbidden[] = {"/proc", "/sys", "/dev"};
    size_t i, j;
    sluice_err rc;
    bool bad;
    char sub[300], sub2[340];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, key, "expected a mapping of name to {source, mount_path}");
    s->secret_mounts = calloc(n->n / 2 + 1, sizeof(*s->secret_mounts));
    if (!s->secret_mounts)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        sluice_secret_mount_t *m = &s->secret_mounts[s->n_secret_mounts++];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (!cfg_name_ok(k->str))
            return cfg_bad(c, k, sub, "secret mount names use [A-Za-z0-9._-]");
        if (v->kind != N_MAP)
            return cfg_bad(c, v, sub, "expected a mapping with source and mount_path");
        if ((rc = cfg_set_str(c, &m->name, k->str)) != SLUICE_OK)
            return rc;
        for (j = 0; j < v->n; j += 2) {
            const node_t *mk = v->kids[j], *mv = v->kids[j + 1];
            snprintf(sub2, sizeof(sub2), "%s.%.32s", sub, mk->str);
            if (strcmp(mk->str, "source") == 0 || strcmp(mk->str, "mount_path") == 0) {
                char **slot = mk->str[0] == 's' ? &m->source : &m->target;
                if ((rc = study_str(c, mv, sub2, true, slot)) != SLUICE_OK)
                    return rc;
                if (!mount_path_ok(*slot))
                    return cfg_bad(c, mv, sub2,
                                   "expected a normalised absolute path (no '.', '..', '//', "
                                   "trailing '/', ':' or ',')");
            } else if (strcmp(mk->str, "mode") == 0) {
                if (mv->kind != N_SCALAR || strcmp(mv->str, "ro") != 0)
                    return cfg_bad(c, mv, sub2, "expected ro (secret mounts are always read-only)");
            } else if (strcmp(mk->str, "items") == 0) {
                return cfg_bad(c, mk, sub2,
                               "Kubernetes-only; point source at a directory that holds only "
                               "the intended files");
            } else {
                return cfg_bad(c, mk, sub2, "unknown key (expected source, mount_path, mode)");
            }
        }
        if (!m->source)
            return cfg_bad(c, v, sub, "source is required");
        if (!m->target)
            return cfg_bad(c, v, sub, "mount_path is required");
        bad = strcmp(m->target, "/") == 0;
        for (j = 0; j < sizeof(forbidden) / sizeof(forbidden[0]); j++)
            bad = bad || paths_overlap(forbidden[j], m->target);
        if (bad)
            return cfg_bad(c, v, sub, "mount_path %s is not allowed (/, /proc, /sys, /dev)",
                           m->target);
        if (site && site->storage.root && paths_overlap(site->storage.root, m->source))
            return cfg_bad(c, v, sub, "source %s overlaps storage.root %s; refused", m->source,
                           site->storage.root);
        if (site && site->storage.cluster_root &&
            paths_overlap(site->storage.cluster_root, m->source))
            return cfg_bad(c, v, sub, "source %s overlaps storage.cluster_root %s; refused",
                           m->source, site->storage.cluster_root);
    }
    return SLUICE_OK;
}

static sluice_err study_slurm(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    size_t i;
    sluice_err rc;
    char sub[300];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, key, "expected a mapping");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (strcmp(k->str, "sandbox") == 0) {
            if (v->kind != N_SCALAR || !cfg_sandbox_word(v->str, &s->sandbox))
                return cfg_bad(c, v, sub, "expected enroot-pyxis (alias pyxis), apptainer or none");
        } else if (strcmp(k->str, "setup") == 0) {
            if ((rc = cfg_set_lines(c, v, sub, &s->setup)) != SLUICE_OK)
                return rc;
            s->has_setup = true;
        } else if (strcmp(k->str, "partition") == 0) {
            if ((rc = study_str(c, v, sub, false, &s->partition)) != SLUICE_OK)
                return rc;
        } else if (strcmp(k->str, "account") == 0) {
            if ((rc = study_str(c, v, sub, false, &s->account)) != SLUICE_OK)
                return rc;
        } else if (strcmp(k->str, "qos") == 0) {
            if ((rc = study_str(c, v, sub, false, &s->qos)) != SLUICE_OK)
                return rc;
        } else if (strcmp(k->str, "python_path") == 0) {
            if ((rc = study_str(c, v, sub, true, &s->python_path)) != SLUICE_OK)
                return rc;
        } else {
            return cfg_bad(
                c, k, sub,
                "unknown key (expected sandbox, setup, partition, account, qos, python_path)");
        }
    }
    return SLUICE_OK;
}

static sluice_err study_one(
    ctx_t *c, sluice_study_t *s, const node_t *k, const node_t *v, const sluice_config_t *site)
{
    size_t i;
    sluice_err rc;
    char key[160], sub[300];
    const node_t *image_node = NULL, *ds_node = NULL, *sm_node = NULL;
    sluice_sandbox_t eff;

    snprintf(key, sizeof(key), "studies.%.64s", k->str);
    if (!cfg_name_ok(k->str))
        return cfg_bad(c, k, key, "study names use [A-Za-z0-9._-]");
    if (v->kind != N_MAP)
        return cfg_bad(c, v, key, "expected a mapping, found %s", cfg_kind_word(v));
    if ((rc = cfg_set_str(c, &s->name, k->str)) != SLUICE_OK)
        return rc;
    for (i = 0; i < v->n; i += 2) {
        const node_t *sk = v->kids[i], *sv = v->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, sk->str);
        if (strcmp(sk->str, "container") == 0) {
            if (sv->kind != N_MAP || sv->n != 2 || strcmp(sv->kids[0]->str, "image") != 0)
                return cfg_bad(c, sv, sub, "expected {image: /absolute/path}");
            snprintf(sub, sizeof(sub), "%s.container.image", key);
            if ((rc = study_str(c, sv->kids[1], sub, true, &s->image)) != SLUICE_OK)
                return rc;
            image_node = sv->kids[1];
        } else if (strcmp(sk->str, "image") == 0) {
            if ((rc = study_str(c, sv, sub, true, &s->image)) != SLUICE_OK)
                return rc;
            image_node = sv;
        } else if (strcmp(sk->str, "datasets") == 0) {
            if ((rc = study_datasets(c, s, sv, sub)) != SLUICE_OK)
                return rc;
            ds_node = sv;
        } else if (strcmp(sk->str, "env") == 0) {
            if ((rc = study_env(c, s, sv, sub)) != SLUICE_OK)
                return rc;
        } else if (strcmp(sk->str, "secret_env") == 0) {
            if ((rc = study_secret_env(c, s, sv, sub)) != SLUICE_OK)
                return rc;
        } else if (strcmp(sk->str, "secret_mounts") == 0) {
            if ((rc = study_secret_mounts(c, s, sv, sub, site)) != SLUICE_OK)
                return rc;
            sm_node = sv;
        } else if (strcmp(sk->str, "slurm") == 0) {
            if ((rc = study_slurm(c, s, sv, sub)) != SLUICE_OK)
                return rc;
        } else {
            return cfg_bad(c, sk, sub,
                           "unknown key (expected container, datasets, env, secret_env, "
                           "secret_mounts, slurm)");
        }
    }
    eff = s->sandbox ? s->sandbox : (site ? site->launcher.sandbox : SLUICE_SANDBOX_UNSET);
    if (eff == SLUICE_SANDBOX_NONE && image_node)
        return cfg_bad(c, image_node, key,
                       "an image is not allowed when the effective sandbox is none");
    if (eff == SLUICE_SANDBOX_NONE && ds_node && s->n_datasets)
        return cfg_bad(c, ds_node, key,
                       "datasets are not allowed when the effective sandbox is none (no mount "
                       "namespace)");
    if (eff == SLUICE_SANDBOX_NONE && sm_node && s->n_secret_mounts)
        return cfg_bad(c, sm_node, key,
                       "secret_mounts are not allowed when the effective sandbox is none (no "
                       "mount namespace)");
    return SLUICE_OK;
}

sluice_err sluice_study_runtime_load(const char *path,
                                     const char *text,
                                     size_t len,
                                     const sluice_config_t *site,
                                     sluice_study_runtime_t **out,
                                     sluice_error_t *err)
{
    sluice_study_runtime_t *rt = NULL;
    sluice_config_t scratch;
    node_t *root = NULL;
    char *ftext = NULL;
    sluice_err rc = SLUICE_OK;
    const node_t *studies = NULL;
    bool have_version = false;
    size_t i;
    ctx_t c;

    if (!out || (!path && !text))
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_study_runtime_load: NULL argument");
    memset(&c, 0, sizeof(c));
    memset(&scratch, 0, sizeof(scratch));
    c.file = path ? path : "<study_runtime>";
    c.err = err;
    c.src = SLUICE_SRC_FILE;
    c.cfg = &scratch; /* only for warnings, which studies do not produce */
    if (!text) {
        if ((rc = cfg_read_file(path, &ftext, &len, err)) != SLUICE_OK)
            goto out;
        text = ftext;
    }
    if ((rc = cfg_parse_yaml(c.file, text, len, &root, err)) != SLUICE_OK)
        goto out;
    rt = calloc(1, sizeof(*rt));
    if (!rt) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    if (!root || root->kind != N_MAP) {
        rc = cfg_bad(&c, root, "(top level)",
                     "expected a mapping with format_version: 2 and studies");
        goto out;
    }
    for (i = 0; i < root->n; i += 2) {
        const node_t *k = root->kids[i], *v = root->kids[i + 1];
        if (strcmp(k->str, "format_version") == 0) {
            if (v->kind != N_SCALAR || strcmp(v->str, "2") != 0) {
                rc = cfg_bad(&c, v, "format_version", "expected 2 (migrate study_data.yaml first)");
                goto out;
            }
            have_version = true;
        } else if (strcmp(k->str, "studies") == 0) {
            if (v->kind != N_MAP && !cfg_is_null(v)) {
                rc = cfg_bad(&c, v, "studies", "expected a mapping of study name to settings");
                goto out;
            }
            studies = v->kind == N_MAP ? v : NULL;
        } else {
            rc = cfg_bad(&c, k, k->str, "unknown key (expected format_version, studies)");
            goto out;
        }
    }
    if (!have_version) {
        rc = cfg_bad(&c, root, "format_version", "required (format_version: 2)");
        goto out;
    }
    if (studies) {
        rt->studies = calloc(studies->n / 2 + 1, sizeof(*rt->studies));
        if (!rt->studies) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < studies->n; i += 2) {
            rc = study_one(&c, &rt->studies[rt->n_studies++], studies->kids[i],
                           studies->kids[i + 1], site);
            if (rc != SLUICE_OK)
                goto out;
        }
    }
    *out = rt;
    rt = NULL;
out:
    cfg_strlist_clear(&scratch.warnings);
    sluice_study_runtime_free(rt);
    cfg_node_free(root);
    free(ftext);
    return rc;
}
