/* SPDX-License-Identifier: Apache-2.0 */
/* render_container.c - the container side of a launch render: the
 * apptainer command line, the enroot-pyxis options of srun, the GPU flag
 * of a pool, and the task wrapper that runs on every node of a step.
 *
 * Notes:
 * - The flags are those of NVFlare's Slurm launcher (batch.py), so a site
 *   that accepted its isolation gets the same container from sluice:
 *     apptainer exec --userns --containall --no-eval --no-privs
 *                    --no-mount bind-paths,hostfs --bind ... --pwd DIR
 *                    [--nv|--rocm] IMAGE
 *     srun --export=NAMES --container-image=IMAGE --container-readonly
 *          --no-container-mount-home --no-container-entrypoint
 *          --container-workdir=DIR --container-mounts=... --container-env=NAMES
 *   sluice adds --cleanenv (implied by --containall; kept explicit) and
 *   --no-container-remap-root (pyxis otherwise follows enroot's config).
 *   docs/rendering.md, "Container flags", says why each one is there.
 * - The task wrapper is fixed text: every value reaches it as a quoted
 *   argument word, never as shell.  It runs where slurmstepd started the
 *   task (outside the container under apptainer, inside it under pyxis),
 *   so it sees the task's own Slurm and GPU variables.
 */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/shquote.h"
#include "render_int.h"

/* NVFlare's JobProcessEnv: the job process's bootstrap credentials. */
const char *const render_rank0_credentials[] = {
    "NVFLARE_JOB_AUTH_TOKEN", "NVFLARE_JOB_TOKEN_SIGNATURE", "NVFLARE_JOB_SSID", NULL};

/* Arguments: MODE (letters: a = apptainer mirrors, n = NVFlare Cell API
 * bootstrap on ranks 1..n-1, - = neither), then counted lists: the names
 * only rank 0 keeps, the launcher prefix (may be empty), rank 0's command;
 * the rest is the command of the other ranks (may be empty: every rank
 * runs rank 0's).
 *
 * Under apptainer --containall passes no variable of the task, so the
 * wrapper mirrors what Slurm set for this task (GPU visibility, SLURM_*,
 * SLURMD_NODENAME) into APPTAINERENV_*; stale mirrors of GPU names are
 * dropped first, so a task without GPUs sees none. */
const char render_task_wrapper[] =
    "set -eu\n"
    "mode=$1; shift\n"
    "nk=$1; shift; cred=(\"${@:1:$nk}\"); shift \"$nk\"\n"
    "np=$1; shift; pre=(\"${@:1:$np}\"); shift \"$np\"\n"
    "nc=$1; shift; cmd=(\"${@:1:$nc}\"); shift \"$nc\"\n"
    "r=${SLURM_NODEID:-0}\n"
    "export SLUICE_NODE_RANK=\"$r\" NVFL_NODE_RANK=\"$r\"\n"
    "case $mode in *a*)\n"
    "    export APPTAINERENV_SLUICE_NODE_RANK=\"$r\" APPTAINERENV_NVFL_NODE_RANK=\"$r\"\n"
    "    for n in CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ROCR_VISIBLE_DEVICES "
    "ZE_AFFINITY_MASK; do unset \"APPTAINERENV_$n\"; done\n"
    "    for n in CUDA_VISIBLE_DEVICES GPU_DEVICE_ORDINAL ROCR_VISIBLE_DEVICES "
    "ZE_AFFINITY_MASK SLURMD_NODENAME ${!SLURM_@}; do\n"
    "        if [ -n \"${!n+x}\" ]; then export \"APPTAINERENV_$n=${!n}\"; fi\n"
    "    done ;;\n"
    "esac\n"
    "if [ \"$r\" != 0 ] && [ \"$#\" -gt 0 ]; then\n"
    "    for n in ${cred[@]+\"${cred[@]}\"}; do unset \"$n\" \"APPTAINERENV_$n\"; done\n"
    "    case $mode in *n*)\n"
    "        export CLIENT_API_TYPE=CELL_API "
    "NVFLARE_CLIENT_API_BOOTSTRAP=client_api_bootstrap_1.json\n"
    "        export APPTAINERENV_CLIENT_API_TYPE=CELL_API "
    "APPTAINERENV_NVFLARE_CLIENT_API_BOOTSTRAP=client_api_bootstrap_1.json ;;\n"
    "    esac\n"
    "    exec ${pre[@]+\"${pre[@]}\"} \"$@\"\n"
    "fi\n"
    "exec ${pre[@]+\"${pre[@]}\"} \"${cmd[@]}\"\n";

const char *render_gpu_flag(const render_rctx_t *c, const sluice_launch_pool_t *p)
{
    const sluice_gpu_series_t *gs;
    const char *vendor = NULL;

    if (p->gpus_per_node == 0)
        return NULL;
    if (p->gpu_series && (gs = sluice_config_gpu_series(c->cfg, p->gpu_series)) != NULL)
        vendor = gs->gpu_vendor;
    if (!vendor)
        vendor = c->cfg->launcher.gpu_vendor;
    if (!vendor || strcmp(vendor, "nvidia") == 0)
        return "--nv";
    if (strcmp(vendor, "amd") == 0)
        return "--rocm";
    return NULL;
}

/* "<src>:<dst>" (+ ":ro"/":rw" when `mode`, else ":ro" only when read-only,
 * as pyxis writes it) into m. */
static sluice_err mount_spec(buf_t *m, const render_mount_t *mt, const char *staging, bool mode)
{
    sluice_err rc;

    if (mt->src)
        rc = buf_puts(m, mt->src);
    else
        rc = buf_printf(m, "%s/sandbox", staging);
    if (rc == SLUICE_OK)
        rc = buf_printf(m, ":%s", mt->dst);
    if (rc == SLUICE_OK && (mode || !mt->rw))
        rc = buf_puts(m, mt->rw ? ":rw" : ":ro");
    return rc;
}

sluice_err render_apptainer_words(const render_rctx_t *c,
                                  const sluice_launch_pool_t *p,
                                  const char *staging,
                                  char ***out,
                                  size_t *n_out)
{
    static const char *const fixed[] = {"exec",       "--userns",         "--containall",
                                        "--cleanenv", "--no-eval",        "--no-privs",
                                        "--no-mount", "bind-paths,hostfs"};
    char **w = calloc(24 + 2 * c->n_mounts, sizeof(char *));
    const char *gpu = render_gpu_flag(c, p);
    size_t n = 0, i;
    buf_t m = BUF_INIT;

    if (!w)
        return SLUICE_ENOMEM;
    buf_init(&m, 0);
    w[n++] = strdup(render_apptainer(c->cfg));
    for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        w[n++] = strdup(fixed[i]);
    w[n++] = strdup("--bind");
    if (buf_printf(&m, "%s:%s", staging, staging) != SLUICE_OK)
        goto fail;
    w[n++] = buf_take(&m);
    for (i = 0; i < c->n_mounts; i++) {
        w[n++] = strdup("--bind");
        if (mount_spec(&m, &c->mounts[i], staging, true) != SLUICE_OK)
            goto fail;
        w[n++] = buf_take(&m);
    }
    w[n++] = strdup("--pwd");
    w[n++] = strdup(c->workdir);
    if (gpu)
        w[n++] = strdup(gpu);
    w[n++] = strdup(c->image);
    for (i = 0; i < n; i++)
        if (!w[i])
            goto fail;
    *out = w;
    *n_out = n;
    return SLUICE_OK;
fail:
    buf_free(&m);
    for (i = 0; i < n; i++)
        free(w[i]);
    free(w);
    return SLUICE_ENOMEM;
}

#define P(s)                                                                                       \
    do {                                                                                           \
        if ((rc = buf_puts(b, (s))) != SLUICE_OK)                                                  \
            goto out;                                                                              \
    } while (0)
#define Q(s)                                                                                       \
    do {                                                                                           \
        if ((rc = shquote_append(b, (s))) != SLUICE_OK)                                            \
            goto out;                                                                              \
    } while (0)

/* The names sluice exported (sluice_names, a function of the script) are
 * the only variables of the batch environment that srun passes to the
 * task (--export); with --container-env they, and the GPU variables Slurm
 * sets for the task, win over the image's own values. */
sluice_err render_emit_pyxis_opts(const render_rctx_t *c, buf_t *b, const char *staging)
{
    sluice_err rc;
    buf_t m = BUF_INIT;
    size_t i;

    buf_init(&m, 0);
    P(" \\\n        \"--export=$(sluice_names),HOME\"");
    if ((rc = buf_printf(&m, "--container-image=%s", c->image)) != SLUICE_OK)
        goto out;
    P(" \\\n        ");
    Q(buf_str(&m));
    buf_reset(&m);
    if ((rc = buf_printf(&m, "--container-mounts=%s:%s", staging, staging)) != SLUICE_OK)
        goto out;
    for (i = 0; i < c->n_mounts; i++)
        if ((rc = buf_puts(&m, ",")) != SLUICE_OK ||
            (rc = mount_spec(&m, &c->mounts[i], staging, false)) != SLUICE_OK)
            goto out;
    P(" \\\n        ");
    Q(buf_str(&m));
    buf_reset(&m);
    if ((rc = buf_printf(&m, "--container-workdir=%s", c->workdir)) != SLUICE_OK)
        goto out;
    P(" \\\n        ");
    Q(buf_str(&m));
    P(" \\\n        \"--container-env=$(sluice_names)," RENDER_GPU_ENV "\"");
    P(" \\\n        --container-readonly --no-container-mount-home --no-container-entrypoint"
      " \\\n        --no-container-remap-root");
out:
    buf_free(&m);
    return rc;
}

#undef P
#undef Q
