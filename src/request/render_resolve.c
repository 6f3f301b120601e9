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
 * - Mount sources may not overlap the storage root (written or canonical:
 *   another launch's staging holds its secrets); a request mount may not
 *   sit on, in or above a study mount, and no mount on the staging
 *   directory.
 * - A job image (the request's own) must be allowed by
 *   policy.allowed_images, compared on canonical paths (BYOC).
 * - NVFlare-form launches under a container get the NVFlare launcher's own
 *   mounts first (workspace sandbox, run directory, startup/, local/,
 *   /etc/resolv.conf under apptainer); no request or study mount may
 *   shadow them or take its source from the workspace.
 * - forward_env is not read here: the script reads the job's own values
 *   after setup (render_script.c); only the names are checked.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sluice/render.h>

#include "base/buf.h"
#include "launch.h"
#include "render_int.h"

/* ---- checks and resolution ----------------------------------------------- */

/* `path` as the service sees it: a path under storage.cluster_root (and
 * not under storage.root) is moved to storage.root.  New string. */
static char *service_side(const sluice_config_t *cfg, const char *path)
{
    if (!render_under(cfg->storage.root, path) && render_under(render_cluster_root(cfg), path))
        return render_reroot(render_cluster_root(cfg), cfg->storage.root, path);
    return strdup(path);
}

/* Does entry `e` of policy.allowed_images allow the canonical image
 * `cimg`?  A directory (a trailing '/', or an existing directory) allows
 * the files below it, a file itself; both compared canonically.  -1 when
 * out of memory. */
static int allowed_by(const sluice_config_t *cfg, const char *e, const char *cimg)
{
    size_t n = strlen(e);
    bool dir = n > 1 && e[n - 1] == '/';
    char *plain = strndup(e, dir ? n - 1 : n), *svc = NULL, *ce = NULL;
    struct stat sb;
    int ok = -1;

    if (plain && (svc = service_side(cfg, plain)) != NULL && (ce = render_canonical(svc)) != NULL) {
        if (!dir)
            dir = stat(ce, &sb) == 0 && S_ISDIR(sb.st_mode);
        ok = dir ? (render_under(ce, cimg) && strcmp(ce, cimg) != 0) : strcmp(ce, cimg) == 0;
    }
    free(plain);
    free(svc);
    free(ce);
    return ok;
}

int render_image_listed(const sluice_config_t *cfg, const char *img, char *const *list, size_t n)
{
    char *svc = service_side(cfg, img), *cimg = svc != NULL ? render_canonical(svc) : NULL;
    int ok = cimg != NULL ? 0 : -1;

    for (size_t i = 0; i < n && ok == 0; i++)
        ok = allowed_by(cfg, list[i], cimg);
    free(svc);
    free(cimg);
    return ok;
}

/* A job image (the request's own) needs BYOC authorisation: an entry of
 * policy.allowed_images that allows its canonical path.  None are allowed
 * when the list is empty.  `svc` is the service-side path.  The message
 * names the image as the request wrote it, never where it leads. */
static sluice_err job_image_allowed(render_rctx_t *c, const char *img, const char *svc)
{
    const sluice_strlist_t *al = &c->cfg->policy.allowed_images;
    char *cimg;
    size_t i;
    int ok = 0;

    if (al->n == 0)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: %s is a job image, which needs BYOC authorisation, and this "
                             "site authorises none (policy.allowed_images is empty); leave image "
                             "out to use the study's or the site's image",
                             img);
    if ((cimg = render_canonical(svc)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
    for (i = 0; i < al->n && ok == 0; i++)
        ok = allowed_by(c->cfg, al->items[i], cimg);
    free(cimg);
    if (ok == 0)
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: %s is not an authorised job image (BYOC): no entry of "
                             "policy.allowed_images allows its canonical path; refused",
                             img);
    if (ok < 0)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
    return SLUICE_OK;
}

sluice_err render_resolve_image(render_rctx_t *c)
{
    const char *img = c->s->image;
    const char *svc;
    char *tmp = NULL;
    sluice_err rc;
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
    if ((tmp = service_side(c->cfg, img)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "image: out of memory");
    svc = tmp;
    /* Authorisation first: a refused job image is not looked at (its
     * existence is nobody's business). */
    if (img == c->s->image && (rc = job_image_allowed(c, img, svc)) != SLUICE_OK) {
        free(tmp);
        return rc;
    }
    if (c->ctx->stat_fn) {
        st = c->ctx->stat_fn(svc, c->ctx->stat_arg);
    } else {
        struct stat sb;
        st = (stat(svc, &sb) == 0 && S_ISREG(sb.st_mode)) ? 0 : -1;
    }
    if (st != 0) {
        free(tmp);
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "image: %s does not exist or is not a regular file", img);
    }
    free(tmp);
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

/* A mount source may not overlap the storage root on either side (the
 * staging of every launch, secrets files included), compared as written
 * and with symbolic links resolved. */
static sluice_err source_outside_storage(render_rctx_t *c, const char *what, const char *src)
{
    const char *keys[2] = {"storage.root", "storage.cluster_root"};
    const char *roots[2] = {c->cfg->storage.root, render_cluster_root(c->cfg)};
    char *csrc = NULL, *croot = NULL;
    sluice_err rc = SLUICE_OK;
    size_t i;

    for (i = 0; i < 2; i++)
        if (roots[i] && roots[i][0] && render_overlap(roots[i], src))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: source %s overlaps %s %s, where sluice keeps the staging "
                                 "of every launch; refused",
                                 what, src, keys[i], roots[i]);
    if ((csrc = render_canonical(src)) == NULL)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    for (i = 0; i < 2 && rc == SLUICE_OK; i++) {
        if (!roots[i] || !roots[i][0])
            continue;
        if ((croot = render_canonical(roots[i])) == NULL)
            rc = sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
        else if (render_overlap(croot, csrc))
            rc = sluice_errorf(c->err, SLUICE_EINVAL,
                               "%s: source %s resolves to %s, which overlaps %s %s (%s), where "
                               "sluice keeps the staging of every launch; refused",
                               what, src, csrc, keys[i], roots[i], croot);
        free(croot);
    }
    free(csrc);
    return rc;
}

/* Targets: one bind per target; a request mount may not sit on, inside or
 * above a study mount (it would shadow the study's read-only dataset or
 * secret), nor may any mount overlap the staging directory that sluice
 * binds itself.  The message names the request's mount first. */
static sluice_err check_target(render_rctx_t *c, const char *what, const char *dst, bool study)
{
    size_t i;

    if (c->staging && render_overlap(c->staging, dst))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: target %s overlaps the launch's staging directory %s, which "
                             "sluice binds itself; refused",
                             what, dst, c->staging);
    for (i = 0; i < c->n_mounts; i++) {
        const render_mount_t *o = &c->mounts[i];
        /* a: the mount to blame (the request's, when one of the two is),
         * b: the other. */
        bool swap = study && !o->study;
        const char *aw = swap ? o->what : what, *ad = swap ? o->dst : dst;
        const char *bw = swap ? what : o->what, *bd = swap ? dst : o->dst;

        if (strcmp(o->dst, dst) == 0)
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: target %s is also the target of %s; refused (two binds "
                                 "on one target: the later would hide the other)",
                                 aw, ad, bw);
        if ((study || o->study) && render_overlap(o->dst, dst))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: target %s is %s the target %s of %s; refused (a mount may "
                                 "not shadow a study's mount)",
                                 aw, ad, render_under(bd, ad) ? "inside" : "above", bd, bw);
    }
    return SLUICE_OK;
}

/* True when a path has a byte that mount lists or scripts cannot carry. */
static bool bad_path_bytes(const char *p)
{
    size_t i;

    if (strpbrk(p, ":,"))
        return true;
    for (i = 0; p[i]; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
            return true;
    return false;
}

/* Append a launcher-owned mount (src may be NULL: the sandbox); takes src. */
static sluice_err add_launcher_mount(render_rctx_t *c, char *src, const char *dst, bool rw)
{
    render_mount_t *nm = realloc(c->mounts, (c->n_mounts + 1) * sizeof(*nm));

    if (!nm) {
        free(src);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "job_launcher.workspace: out of memory");
    }
    c->mounts = nm;
    nm[c->n_mounts].src = src;
    nm[c->n_mounts].dst = strdup(dst);
    nm[c->n_mounts].what = strdup("the NVFlare launcher's mounts");
    nm[c->n_mounts].rw = rw;
    nm[c->n_mounts].study = false;
    nm[c->n_mounts].launcher = true;
    if (!nm[c->n_mounts].dst || !nm[c->n_mounts].what) {
        free(src);
        free(nm[c->n_mounts].dst);
        free(nm[c->n_mounts].what);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "job_launcher.workspace: out of memory");
    }
    c->n_mounts++;
    return SLUICE_OK;
}

/* `<ws>/<name>` resolved through symlinks where this host can see it (the
 * seed binds the real directory), else as written; a new string. */
static char *real_or_self(const char *ws, const char *name)
{
    char path[PATH_MAX], real[PATH_MAX];

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", ws, name) >= sizeof(path))
        return NULL;
    if (realpath(path, real) != NULL && render_normalised(real) && !bad_path_bytes(real))
        return strdup(real);
    return strdup(path);
}

/* The NVFlare launcher's own mounts (manager.py, _write_job_files): a
 * private per-attempt sandbox at the workspace path (rw), the run
 * directory (rw), startup/ and local/ (ro, their real paths as sources)
 * and, under apptainer, /etc/resolv.conf (ro).  Only for launches in the
 * NVFlare form under a container, when the site names its workspace. */
static sluice_err resolve_launcher_mounts(render_rctx_t *c)
{
    const char *ws = c->cfg->launcher.workspace;
    const char *wd = c->s->workdir;
    static const char *const ro_dirs[] = {"startup", "local", NULL};
    char dst[PATH_MAX];
    sluice_err rc;
    size_t i;

    if (!ws || !c->s->nvflare_form || c->profile == SLUICE_LAUNCH_PROFILE_NONE)
        return SLUICE_OK;
    if (!render_normalised(ws) || strcmp(ws, "/") == 0 || bad_path_bytes(ws) ||
        forbidden_target(ws) || strlen(ws) > PATH_MAX - 16)
        return sluice_errorf(c->err, SLUICE_ECONFIG,
                             "job_launcher.workspace: expected an absolute normalised path "
                             "without ':', ',' or control bytes, not a system directory");
    if ((rc = add_launcher_mount(c, NULL, ws, true)) != SLUICE_OK)
        return rc;
    if (wd && render_under(ws, wd) && strcmp(wd, ws) != 0 && !bad_path_bytes(wd)) {
        char *src = strdup(wd);
        if (!src || (rc = add_launcher_mount(c, src, wd, true)) != SLUICE_OK)
            return src ? rc : sluice_errorf(c->err, SLUICE_ENOMEM, "workdir: out of memory");
    }
    for (i = 0; ro_dirs[i]; i++) {
        char *src = real_or_self(ws, ro_dirs[i]);
        snprintf(dst, sizeof(dst), "%s/%s", ws, ro_dirs[i]);
        if (!src || (rc = add_launcher_mount(c, src, dst, false)) != SLUICE_OK)
            return src ? rc
                       : sluice_errorf(c->err, SLUICE_ENOMEM,
                                       "job_launcher.workspace: out of memory");
    }
    if (c->profile == SLUICE_LAUNCH_PROFILE_APPTAINER) {
        char *src = strdup("/etc/resolv.conf");
        if (!src || (rc = add_launcher_mount(c, src, "/etc/resolv.conf", false)) != SLUICE_OK)
            return src ? rc
                       : sluice_errorf(c->err, SLUICE_ENOMEM,
                                       "job_launcher.workspace: out of memory");
    }
    return SLUICE_OK;
}

static sluice_err
add_mount(render_rctx_t *c, const char *what, const char *src, const char *dst, bool rw, bool study)
{
    size_t i;
    render_mount_t *nm;
    sluice_err rc;

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
    if ((rc = source_outside_storage(c, what, src)) != SLUICE_OK)
        return rc;
    for (i = 0; i < c->n_mounts; i++) {
        const render_mount_t *o = &c->mounts[i];
        const char *ws = c->cfg->launcher.workspace;

        if (o->launcher) {
            /* The NVFlare launcher's own mounts are never shadowed, and no
             * source may come from the workspace they bind. */
            if (render_overlap(o->dst, dst))
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "%s: target %s overlaps %s, a path the NVFlare launcher "
                                     "mounts itself",
                                     what, dst, o->dst);
            if (ws && render_overlap(ws, src))
                return sluice_errorf(c->err, SLUICE_EINVAL,
                                     "%s: source %s overlaps the NVFlare workspace %s (mount "
                                     "sources must lie outside it)",
                                     what, src, ws);
            continue;
        }
        if (render_overlap(o->src, src))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "%s: source %s overlaps the source %s of %s", what, src, o->src,
                                 o->what);
    }
    if ((rc = check_target(c, what, dst, study)) != SLUICE_OK)
        return rc;
    nm = realloc(c->mounts, (c->n_mounts + 1) * sizeof(*nm));
    if (!nm)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    c->mounts = nm;
    /* A request's source is bound as it resolved when it was checked: a
     * symlink on the way that is re-pointed after accept (at the storage
     * root, say) is not followed again when the job binds it.  A study's
     * sources are the site's own and stay as written. */
    nm[c->n_mounts].src = study ? strdup(src) : render_canonical(src);
    nm[c->n_mounts].dst = strdup(dst);
    nm[c->n_mounts].what = strdup(what);
    nm[c->n_mounts].rw = rw;
    nm[c->n_mounts].study = study;
    nm[c->n_mounts].launcher = false;
    if (!nm[c->n_mounts].src || !nm[c->n_mounts].dst || !nm[c->n_mounts].what) {
        free(nm[c->n_mounts].src);
        free(nm[c->n_mounts].dst);
        free(nm[c->n_mounts].what);
        return sluice_errorf(c->err, SLUICE_ENOMEM, "%s: out of memory", what);
    }
    c->n_mounts++;
    return SLUICE_OK;
}

sluice_err render_resolve_mounts(render_rctx_t *c)
{
    sluice_err rc;
    size_t i, n_ds = c->study ? c->study->n_datasets : 0;
    size_t n_sm = c->study ? c->study->n_secret_mounts : 0;
    char what[96];

    if (c->profile == SLUICE_LAUNCH_PROFILE_NONE && (c->s->n_mounts > 0 || n_ds > 0 || n_sm > 0))
        return sluice_errorf(c->err, SLUICE_EINVAL,
                             "%s: profile none has no mount namespace; mounts, datasets and "
                             "secret mounts need apptainer or enroot-pyxis",
                             c->s->n_mounts > 0 ? "mounts"
                             : n_ds > 0         ? "study.datasets"
                                                : "study.secret_mounts");
    if ((rc = resolve_launcher_mounts(c)) != SLUICE_OK)
        return rc;
    for (i = 0; i < c->s->n_mounts; i++) {
        snprintf(what, sizeof(what), "mounts[%zu]", i);
        if ((rc = add_mount(c, what, c->s->mounts[i].source, c->s->mounts[i].target,
                            c->s->mounts[i].rw, false)) != SLUICE_OK)
            return rc;
    }
    for (i = 0; i < n_ds; i++) {
        const sluice_dataset_t *d = &c->study->datasets[i];
        snprintf(what, sizeof(what), "study.datasets.%.64s", d->name);
        if ((rc = add_mount(c, what, d->source, d->target, !d->read_only, true)) != SLUICE_OK)
            return rc;
    }
    /* Secret mounts: read-only binds of files or directories sluice never
     * opens; only their paths reach the script. */
    for (i = 0; i < n_sm; i++) {
        const sluice_secret_mount_t *m = &c->study->secret_mounts[i];
        snprintf(what, sizeof(what), "study.secret_mounts.%.64s", m->name);
        if ((rc = add_mount(c, what, m->source, m->target, false, true)) != SLUICE_OK)
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

/* True when `name` is one of the site's forward_env names. */
static bool forwarded(const render_rctx_t *c, const char *name)
{
    const sluice_strlist_t *fw = &c->cfg->launcher.forward_env;
    size_t i;

    for (i = 0; i < fw->n; i++)
        if (strcmp(fw->items[i], name) == 0)
            return true;
    return false;
}

/* The study's and the request's env.  forward_env names are only checked:
 * their values are the job's own after setup (NVFlare's meaning), read by
 * the script; a name that is also set by env or study.env would have two
 * sources, and is refused as NVFlare refuses it. */
sluice_err render_resolve_env(render_rctx_t *c)
{
    const sluice_strlist_t *fw = &c->cfg->launcher.forward_env;
    sluice_err rc;
    size_t i;

    for (i = 0; i < fw->n; i++) {
        const char *why = launch_envname_check(fw->items[i]);
        if (why)
            return sluice_errorf(c->err, SLUICE_ECONFIG, "job_launcher.forward_env: \"%s\" %s",
                                 fw->items[i], why);
    }
    for (i = 0; c->study && i < c->study->n_env; i++) {
        if (forwarded(c, c->study->env_names[i]))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "study.env: \"%s\" is also a job_launcher.forward_env name (its "
                                 "value comes from the job after setup)",
                                 c->study->env_names[i]);
        if ((rc = add_var(c, "study.env", c->study->env_names[i], c->study->env_values[i])) !=
            SLUICE_OK)
            return rc;
    }
    for (i = 0; i < c->s->n_env; i++) {
        if (forwarded(c, c->s->env[i].name))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "env: \"%s\" is also a job_launcher.forward_env name of the "
                                 "site (its value comes from the job after setup)",
                                 c->s->env[i].name);
        if ((rc = add_var(c, "env", c->s->env[i].name, c->s->env[i].value)) != SLUICE_OK)
            return rc;
    }
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
        if (forwarded(c, r->secret_names[i]))
            return sluice_errorf(c->err, SLUICE_EINVAL,
                                 "secrets: \"%s\" is also a job_launcher.forward_env name of "
                                 "the site",
                                 r->secret_names[i]);
    }
    return SLUICE_OK;
}

/* ---- NVFlare's parent URL ------------------------------------------------ */

/* NVFlare's launcher (_rewrite_parent_url) gives the worker the parent's
 * compute-reachable address: in a tcp:// or stcp:// URL whose port is
 * internal_port, the host becomes parent_host (bracketed when it is an
 * IPv6 address).  Other arguments, and shared-file URLs, are left alone. */
char *render_parent_url(const render_rctx_t *c, const char *arg)
{
    const char *host = c->cfg->launcher.parent_host;
    long want = c->cfg->launcher.internal_port > 0 ? c->cfg->launcher.internal_port : 8102;
    const char *auth, *end, *colon, *q;
    size_t scheme_len;
    char *endp;
    long port;
    buf_t b = BUF_INIT;
    bool v6;

    if (!host || !host[0] || !c->s->nvflare_form)
        return NULL;
    if (strncmp(arg, "tcp://", 6) == 0)
        scheme_len = 6;
    else if (strncmp(arg, "stcp://", 7) == 0)
        scheme_len = 7;
    else
        return NULL;
    auth = arg + scheme_len;
    end = auth + strcspn(auth, "/?#");
    if (memchr(auth, '@', (size_t)(end - auth)) != NULL)
        return NULL;
    colon = NULL;
    for (q = auth; q < end; q++)
        if (*q == ':')
            colon = q;
    if (!colon || colon == auth || colon + 1 == end)
        return NULL;
    if (auth[0] == '[' && colon[-1] != ']')
        return NULL;
    port = strtol(colon + 1, &endp, 10);
    if (endp != end || port != want)
        return NULL;
    v6 = strchr(host, ':') != NULL && host[0] != '[';
    buf_init(&b, 0);
    if (buf_printf(&b, "%.*s%s%s%s:%ld%s", (int)scheme_len, arg, v6 ? "[" : "", host, v6 ? "]" : "",
                   port, end) != SLUICE_OK) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}
