/* SPDX-License-Identifier: Apache-2.0 */
/* render_resolve.c - the checks and resolutions of a launch render, before
 * any output exists: the container image, the mounts, the environment and
 * the secret names (render.c calls them in that order).
 *
 * Notes:
 * - Fail-closed: each refuses what it cannot place safely, with a message
 *   naming the field; nothing here writes the script.
 * - Paths under storage.root are translated to the cluster side
 *   (render_to_cluster()); mounts may not target the system directories.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sluice/render.h>

#include "base/buf.h"
#include "launch.h"
#include "render_int.h"

/* ---- checks and resolution ----------------------------------------------- */

sluice_err render_resolve_image(render_rctx_t *c)
{
    const char *img = c->s->image;
    const char *svc;
    char *tmp = NULL;
    int st;

    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE) {
        if (img)
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "image: profile none runs commands directly and takes no image");
        return SLUICE_OK;
    }
    if (!img && c->study && c->study->image)
        img = c->study->image;
    if (!img)
        img = c->cfg->launcher.image;
    if (!img)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: profile %s needs an image (none in the request, the study "
                             "or the site)",
                             sluice_launch_profile_name(c->profile));
    if (img[0] != '/' || strstr(img, "://") != NULL)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: expected an absolute path to a .sqsh or .sif file; registry "
                             "references are refused");
    if (strstr(img, "/../") || render_has_suffix(img, "/..") || strpbrk(img, ":,\n"))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: expected a normalised path without '..', ':' or ','");
    if (!render_has_suffix(img, ".sqsh") && !render_has_suffix(img, ".sif"))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: expected a .sqsh or .sif file (profile %s)",
                             sluice_launch_profile_name(c->profile));
    /* Check where the service can see it. */
    svc = img;
    if (!render_under(c->cfg->storage.root, img) &&
        render_under(render_cluster_root(c->cfg), img)) {
        if ((tmp = render_reroot(render_cluster_root(c->cfg), c->cfg->storage.root, img)) == NULL)
            return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
        svc = tmp;
    }
    if (c->ctx->stat_fn) {
        st = c->ctx->stat_fn(svc, c->ctx->stat_arg);
    } else {
        struct stat sb;
        st = (stat(svc, &sb) == 0 && S_ISREG(sb.st_mode)) ? 0 : -1;
    }
    free(tmp);
    if (st != 0)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: %s does not exist or is not a regular file", img);
    if ((c->image = render_to_cluster(c->cfg, img)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
    return SLUICE_OK;
}

static bool forbidden_target(const char *t)
{
    static const char *const bad[] = {"/proc", "/sys", "/dev", NULL};
    size_t i;

    if (strcmp(t, "/") == 0)
        return true;
    for (i = 0; bad[i]; i++)
        if (render_under(bad[i], t))
            return true;
    return false;
}

static sluice_err
add_mount(render_rctx_t *c, const char *what, const char *src, const char *dst, bool rw)
{
    size_t i;
    render_mount_t *nm;
    char *csrc = NULL;

    if (!render_normalised(src) || !render_normalised(dst))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: expected absolute normalised paths (no '.', '..' or '//')", what);
    if (strpbrk(src, ":,") || strpbrk(dst, ":,"))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: paths may not contain ':' or ',' (they separate mount lists)",
                             what);
    for (i = 0; src[i]; i++)
        if ((unsigned char)src[i] < 0x20 || src[i] == 0x7f)
            return sluice_errorf(c->err, SLUICE_EINVAL, "%s: control byte in path", what);
    for (i = 0; dst[i]; i++)
        if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
            return sluice_errorf(c->err, SLUICE_EINVAL, "%s: control byte in path", what);
    if (forbidden_target(dst))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: target %s is not allowed (/, /proc, /sys, /dev)", what, dst);
    if ((csrc = render_to_cluster(c->cfg, src)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    for (i = 0; i < c->n_mounts; i++) {
        if (render_under(c->mounts[i].src, csrc) || render_under(csrc, c->mounts[i].src)) {
            free(csrc);
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: source %s overlaps the source %s of another mount", what, src,
                                 c->mounts[i].src);
        }
        /* A repeated target (a request mount onto a study dataset's
         * /data/<study>/<dataset>) would let the later bind hide the other. */
        if (strcmp(c->mounts[i].dst, dst) == 0) {
            free(csrc);
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: target %s is already used by another mount", what, dst);
        }
    }
    nm = realloc(c->mounts, (c->n_mounts + 1) * sizeof(*nm));
    if (!nm) {
        free(csrc);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    }
    c->mounts = nm;
    nm[c->n_mounts].src = csrc;
    nm[c->n_mounts].dst = strdup(dst);
    nm[c->n_mounts].rw = rw;
    if (!nm[c->n_mounts].src || !nm[c->n_mounts].dst) {
        free(nm[c->n_mounts].src);
        free(nm[c->n_mounts].dst);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    }
    c->n_mounts++;
    return SLUICE_OK;
}

sluice_err render_resolve_mounts(render_rctx_t *c)
{
    sluice_err rc;
    size_t i, n_ds = c->study ? c->study->n_datasets : 0;
    char what[96];

    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE && (c->s->n_mounts > 0 || n_ds > 0))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: profile none has no mount namespace; mounts and datasets need "
                             "apptainer or enroot-pyxis",
                             c->s->n_mounts > 0 ? "mounts" : "study.datasets");
    for (i = 0; i < c->s->n_mounts; i++) {
        snprintf(what, sizeof(what), "mounts[%zu]", i);
        if ((rc = add_mount(c, what, c->s->mounts[i].source, c->s->mounts[i].target,
                            c->s->mounts[i].rw)) != SLUICE_OK)
            return rc;
    }
    for (i = 0; i < n_ds; i++) {
        const sluice_dataset_t *d = &c->study->datasets[i];
        snprintf(what, sizeof(what), "study.datasets.%.64s", d->name);
        if ((rc = add_mount(c, what, d->source, d->target, !d->read_only)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static sluice_err add_var(render_rctx_t *c, const char *what, const char *name, const char *value)
{
    const char *why = launch_envname_check(name);
    render_var_t *nv;

    if (why)
        return sluice_errorf(c->err, SLUICE_EINVAL, "%s: \"%s\" %s", what, name, why);
    nv = realloc(c->vars, (c->n_vars + 1) * sizeof(*nv));
    if (!nv)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    c->vars = nv;
    nv[c->n_vars].name = name;
    nv[c->n_vars].value = value;
    c->n_vars++;
    return SLUICE_OK;
}

sluice_err render_resolve_env(render_rctx_t *c)
{
    const sluice_strlist_t *fw = &c->cfg->launcher.forward_env;
    sluice_err rc;
    size_t i;

    for (i = 0; i < fw->n; i++) {
        const char *v =
            c->ctx->getenv_fn ? c->ctx->getenv_fn(fw->items[i], c->ctx->getenv_arg) : NULL;
        const char *why = launch_envname_check(fw->items[i]);
        if (why)
            return sluice_errorf(c->err, SLUICE_ECONFIG, "job_launcher.forward_env: \"%s\" %s",
                                 fw->items[i], why);
        if (v && (rc = add_var(c, "job_launcher.forward_env", fw->items[i], v)) != SLUICE_OK)
            return rc;
    }
    for (i = 0; c->study && i < c->study->n_env; i++)
        if ((rc = add_var(c, "study.env", c->study->env_names[i], c->study->env_values[i])) !=
            SLUICE_OK)
            return rc;
    for (i = 0; i < c->s->n_env; i++)
        if ((rc = add_var(c, "env", c->s->env[i].name, c->s->env[i].value)) != SLUICE_OK)
            return rc;
    return SLUICE_OK;
}

/* Secret names: the request's secrets, its secret_env, the study's. */
sluice_err render_collect_secret_names(render_rctx_t *c, sluice_render_t *r)
{
    size_t n = sluice_launch_secret_count(c->l) + c->s->n_secret_env +
               (c->study ? c->study->n_secret_env : 0);
    size_t i, j, k = 0;

    r->secret_names = calloc(n + 1, sizeof(char *));
    if (!r->secret_names)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "secrets: out of memory");
    for (i = 0; i < sluice_launch_secret_count(c->l); i++)
        r->secret_names[k++] = render_strdup(sluice_launch_secret_name(c->l, i));
    for (i = 0; i < c->s->n_secret_env; i++)
        r->secret_names[k++] = render_strdup(c->s->secret_env[i]);
    for (i = 0; c->study && i < c->study->n_secret_env; i++)
        r->secret_names[k++] = render_strdup(c->study->secret_env[i].name);
    r->n_secret_names = k;
    for (i = 0; i < k; i++) {
        const char *why;
        if (!r->secret_names[i])
            return sluice_errorf(c->err, SLUICE_ENOMEM, "secrets: out of memory");
        if ((why = launch_envname_check(r->secret_names[i])) != NULL)
            return sluice_errorf(c->err, SLUICE_EINVAL, "secrets: \"%s\" %s", r->secret_names[i],
                                 why);
        for (j = 0; j < i; j++)
            if (strcmp(r->secret_names[i], r->secret_names[j]) == 0)
                return sluice_errorf(c->err, SLUICE_EINVAL, "secrets: \"%s\" is given twice",
                                     r->secret_names[i]);
        for (j = 0; j < c->n_vars; j++)
            if (strcmp(r->secret_names[i], c->vars[j].name) == 0)
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "secrets: \"%s\" collides with an environment variable of "
                                     "the same name",
                                     r->secret_names[i]);
    }
    return SLUICE_OK;
}
