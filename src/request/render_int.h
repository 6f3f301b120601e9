/* SPDX-License-Identifier: Apache-2.0 */
/* render_int.h - what the files of the render share (internal):
 *   - with the probe job of `sluice check --probe-job` (render_probe.c):
 *     the commands a job runs and its PATH;
 *   - between render.c (entry points, job descriptions), render_resolve.c
 *     (checks and resolution) and render_script.c (the batch script): the
 *     context of one launch render and the path helpers (render_paths.c).
 *
 * Notes:
 * - Both renders take the commands and PATH from here, so the probe proves
 *   what a launch will find (design.md, "Commands on the cluster").
 * - The context borrows the config, study, launch and render context; it
 *   owns image, mounts, workdir, host_workdir, job_path and vars, which
 *   sluice_render() frees.
 */
#ifndef SLUICE_RENDER_INT_H
#define SLUICE_RENDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/config.h>
#include <sluice/render.h>

#include "base/buf.h"
#include "site/config_model.h"

/* The PATH of a job when the site sets none (job_launcher.job_path). */
#define RENDER_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define RENDER_LANG "C.UTF-8"

/* job_launcher.executables.srun, or NULL: the job runs `srun` from PATH. */
const char *render_srun(const sluice_config_t *cfg);

/* The command of the apptainer profile: executables.apptainer, else
 * executables.singularity (apptainer's compatibility name), else
 * "apptainer" from PATH.  Never NULL. */
const char *render_apptainer(const sluice_config_t *cfg);

/* The job's PATH as a new string (caller frees; NULL when out of memory):
 * job_launcher.job_path when set; otherwise the default, preceded by the
 * directory of executables.srun when that is set and not already in the
 * default, so that the tools next to srun (scontrol, sbcast, ...) come
 * from the same Slurm installation. */
char *render_job_path(const sluice_config_t *cfg);

/* ---- one launch render (render.c, render_resolve.c, render_script.c) ---- */
/* (path helpers: render_paths.c; render_pool_var(): render_commands.c) */

typedef struct {
    char *src; /* cluster-side; NULL: the attempt's <staging>/sandbox */
    char *dst;
    char *what; /* the field that asked for it: "mounts[0]", "study.datasets.x" */
    bool rw;
    bool study;    /* the study's (datasets, secret_mounts), not the request's */
    bool launcher; /* one of the NVFlare launcher's own mounts (never shadowed) */
} render_mount_t;

typedef struct {
    const char *name;
    const char *value; /* borrowed */
} render_var_t;

typedef struct {
    const sluice_config_t *cfg;
    const sluice_study_t *study;
    const sluice_launch_spec_t *s;
    const sluice_launch_t *l;
    const sluice_render_ctx_t *ctx;
    sluice_launch_profile profile;
    char *image; /* cluster-side, or NULL for profile none */
    render_mount_t *mounts;
    size_t n_mounts;
    char *workdir;       /* where the workload starts (container or host path) */
    char *host_workdir;  /* the job's working directory on the host */
    char *job_path;      /* PATH of the script and of the REST environment */
    const char *staging; /* the attempt's staging directory, cluster side (borrowed) */
    render_var_t *vars;
    size_t n_vars;
    sluice_error_t *err;
} render_rctx_t;

/* strdup() that passes NULL through. */
static inline char *render_strdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Length of `root` without trailing slashes ("/" counts as 0). */
size_t render_root_len(const char *root);

/* True when `path` is `root` or below it. */
bool render_under(const char *root, const char *path);

/* `path` with the prefix `from` replaced by `to` (path is under `from`), as
 * a new string; NULL when out of memory. */
char *render_reroot(const char *from, const char *to, const char *path);

/* storage.cluster_root when set, else storage.root (borrowed). */
const char *render_cluster_root(const sluice_config_t *cfg);

/* Service-side path -> cluster-side path (unchanged outside the root), as a
 * new string; NULL when out of memory. */
char *render_to_cluster(const sluice_config_t *cfg, const char *path);

/* "TRAINER" from "trainer", "-" -> "_", into out (outsz bytes). */
void render_pool_var(const char *pool, char *out, size_t outsz);

/* Site constraint AND series constraint as a new string (NULL when both
 * are unset or out of memory). */
char *render_join_constraint(const char *site, const char *series);

/* True when `s` ends with `suffix`. */
bool render_has_suffix(const char *s, const char *suffix);

/* True for an absolute path without ".", ".." or "//" components. */
bool render_normalised(const char *p);

/* `path` (absolute, normalised) with the symbolic links of its longest
 * existing prefix resolved (realpath(3)) and the rest appended as written:
 * a new string, NULL when out of memory. */
char *render_canonical(const char *path);

/* 1 when an entry of list[0..n) allows image `img` (as the request names
 * it) by the rule of policy.allowed_images: both compared canonically on
 * the service side, a directory entry allowing the files below it.  0
 * when none does, -1 when out of memory. */
int render_image_listed(const sluice_config_t *cfg, const char *img, char *const *list, size_t n);

/* True when one of `a` and `b` is the other or below it. */
bool render_overlap(const char *a, const char *b);

/* render_resolve.c: each fills its part of `c` or fails with a message
 * naming the field (into c->err). */
sluice_err render_resolve_image(render_rctx_t *c);
sluice_err render_resolve_mounts(render_rctx_t *c);
sluice_err render_resolve_env(render_rctx_t *c);
sluice_err render_collect_secret_names(render_rctx_t *c, sluice_render_t *r);

/* The NVFlare credential names (NVFLARE_JOB_AUTH_TOKEN, ...) that only
 * rank 0 of a multi-node pool keeps; NULL-terminated. */
extern const char *const render_rank0_credentials[];

/* render_resolve.c: `arg` with the host of an NVFlare parent URL
 * (tcp:// or stcp://, port job_launcher.internal_port) replaced by
 * job_launcher.parent_host, as a new string; NULL when `arg` is no such
 * URL, parent_host is unset or the launch is not in the NVFlare form. */
char *render_parent_url(const render_rctx_t *c, const char *arg);

/* ---- containers (render_container.c) ---- */

/* The task wrapper: fixed text run as `bash -c "$SLUICE_TASK_SH"
 * sluice-task MODE NCRED CRED... NPRE PRE... NCMD CMD... [ADD...]` on each
 * node (see render_container.c). */
extern const char render_task_wrapper[];

/* The variables Slurm sets for a task's GPUs, comma-joined. */
#define RENDER_GPU_ENV                                                                             \
    "CUDA_VISIBLE_DEVICES,GPU_DEVICE_ORDINAL,ROCR_VISIBLE_DEVICES,ZE_AFFINITY_MASK"

/* "--nv", "--rocm" or NULL for pool `p` (apptainer): its series'
 * gpu_vendor, else job_launcher.gpu_vendor, else nvidia; NULL without GPUs. */
const char *render_gpu_flag(const render_rctx_t *c, const sluice_launch_pool_t *p);

/* The apptainer launcher words of pool `p` (runtime, exec, flags, binds,
 * --pwd, GPU flag, image) as a new argv in *out (free each and the array). */
sluice_err render_apptainer_words(const render_rctx_t *c,
                                  const sluice_launch_pool_t *p,
                                  const char *staging,
                                  char ***out,
                                  size_t *n_out);

/* The enroot-pyxis options of a step (after srun's own), appended to b. */
sluice_err render_emit_pyxis_opts(const render_rctx_t *c, buf_t *b, const char *staging);

/* render_script.c: the batch script as a new string in *out (caller frees). */
sluice_err render_emit_script(render_rctx_t *c, sluice_render_t *r, char **out);

#endif /* SLUICE_RENDER_INT_H */
