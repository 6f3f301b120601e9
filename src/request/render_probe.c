/* SPDX-License-Identifier: Apache-2.0 */
/* render_probe.c - the probe job of `sluice check --probe-job`: a batch
 * script that shows what a job of this site really finds on the cluster.
 *
 * Input: the site model and a unique tag.  Output: a sluice_render_t with
 * one job description (one node, one task) and job.sh, whose script
 *   1. sets the same PATH as a launch (render_job_path()),
 *   2. looks up the same srun (render_srun()) with `command -v`,
 *   3. runs `srun --version`,
 *   4. runs a one-task step that looks up the container runtime of the
 *      site's sandbox on the compute node (or only names the node),
 * and writes the answers to <staging>/probe.out, one "<key> <value>" line
 * each, ending with "end".  The service reads that file afterwards.
 *
 * Notes:
 * - Values reach the script only as single-quoted words; the step's text
 *   is fixed and gets the runtime as an argument.
 * - The script never fails on purpose: a missing srun or a failed step is
 *   a line of the report, so the caller can tell them from a job that did
 *   not run at all.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/render.h>

#include "base/buf.h"
#include "render_int.h"
#include "base/shquote.h"

#define PROBE_TIME_MINUTES 5u
#define PROBE_SCRIPT_MAX (64u * 1024u)

/* The step: the runtime's path on the node ($1 empty: only the node). */
static const char probe_step[] =
    "n=${SLURMD_NODENAME:-?}\n"
    "if [ -z \"$1\" ]; then printf 'node %s\\n' \"$n\"\n"
    "elif p=$(command -v -- \"$1\"); then printf 'runtime %s %s\\n' \"$n\" \"$p\"\n"
    "else printf 'runtime-missing %s\\n' \"$n\"; fi\n";

static const char probe_report[] =
    "sluice_first_line() {\n"
    "    local l=\n"
    "    IFS= read -r l <\"$1\" 2>/dev/null || true\n"
    "    printf '%s' \"$l\"\n"
    "}\n"
    "sluice_report() {\n"
    "    local found v rc\n"
    "    printf 'uid %s\\n' \"$(id -u)\"\n"
    "    printf 'srun %s\\n' \"$sluice_srun\"\n"
    "    printf 'runtime-name %s\\n' \"$sluice_runtime\"\n"
    "    if ! found=$(command -v -- \"$sluice_srun\"); then\n"
    "        printf 'srun-missing\\nend\\n'\n"
    "        return 0\n"
    "    fi\n"
    "    printf 'srun-path %s\\n' \"$found\"\n"
    "    rc=0\n"
    "    v=$(\"$sluice_srun\" --version 2>\"$SLUICE_STAGING/version.err\") || rc=$?\n"
    "    printf 'srun-version-rc %s\\n' \"$rc\"\n"
    "    printf 'srun-version %s\\n' \"${v%%$'\\n'*}\"\n"
    "    printf 'srun-version-err %s\\n' \"$(sluice_first_line \"$SLUICE_STAGING/version.err\")\"\n"
    "    rc=0\n"
    "    v=$(\"$sluice_srun\" --nodes=1 --ntasks=1 --ntasks-per-node=1 \\\n"
    "        /bin/bash -c \"$sluice_step_sh\" sluice-probe \"$sluice_runtime\" \\\n"
    "        2>\"$SLUICE_STAGING/step.err\") || rc=$?\n"
    "    printf 'step-rc %s\\n' \"$rc\"\n"
    "    printf 'step-out %s\\n' \"${v%%$'\\n'*}\"\n"
    "    printf 'step-err %s\\n' \"$(sluice_first_line \"$SLUICE_STAGING/step.err\")\"\n"
    "    printf 'end\\n'\n"
    "}\n"
    "sluice_report >\"$SLUICE_STAGING/" SLUICE_PROBE_REPORT "\"\n";

/* The runtime the sandbox uses, or "" (none). */
static const char *probe_runtime(const sluice_config_t *cfg)
{
    const char *p;

    switch (cfg->launcher.sandbox) {
    case SLUICE_SANDBOX_APPTAINER:
        return render_apptainer(cfg);
    case SLUICE_SANDBOX_ENROOT_PYXIS:
        p = sluice_config_executable(cfg, "enroot");
        return p ? p : "enroot";
    default:
        return "";
    }
}

static bool tag_ok(const char *tag)
{
    size_t i;

    for (i = 0; tag[i]; i++)
        if (!isdigit((unsigned char)tag[i]) && !islower((unsigned char)tag[i]))
            return false;
    return i > 0 && i <= 16;
}

static size_t trimmed_len(const char *root)
{
    size_t n = strlen(root);

    while (n > 0 && root[n - 1] == '/')
        n--;
    return n;
}

#define P(s)                                                                                       \
    do {                                                                                           \
        if ((rc = buf_puts(&b, (s))) != SLUICE_OK)                                                 \
            goto out;                                                                              \
    } while (0)
#define Q(s)                                                                                       \
    do {                                                                                           \
        if ((rc = shquote_append(&b, (s))) != SLUICE_OK)                                           \
            goto out;                                                                              \
    } while (0)

static sluice_err
probe_script(const sluice_config_t *cfg, const char *staging, const char *path, char **out)
{
    buf_t b = BUF_INIT;
    sluice_err rc = SLUICE_OK;
    const char *srun = render_srun(cfg);

    buf_init(&b, PROBE_SCRIPT_MAX);
    P("#!/bin/bash\n"
      "# Probe job of `sluice check --probe-job` (rendered by sluice; do not edit):\n"
      "# which srun and container runtime a job of this site finds, srun's\n"
      "# version, and one one-task step.  Report: " SLUICE_PROBE_REPORT
      " in the staging directory.\n"
      "set -u\numask 077\nexport PATH=");
    Q(path);
    P(" LANG=");
    Q(RENDER_LANG);
    P("\nSLUICE_STAGING=");
    Q(staging);
    P("\nexport HOME=\"$SLUICE_STAGING\"\nsluice_srun=");
    Q(srun ? srun : "srun");
    P("\nsluice_runtime=");
    Q(probe_runtime(cfg));
    P("\n# The step's text (no value inside): the runtime's path on the node.\n"
      "sluice_step_sh=");
    Q(probe_step);
    P("\n");
    P(probe_report);
    *out = buf_take(&b);
    if (*out == NULL)
        rc = SLUICE_ENOMEM;
out:
    buf_free(&b);
    return rc;
}

#undef P
#undef Q

static char *probe_printf(const char *fmt, ...) SLUICE_PRINTF(1, 2);

static char *probe_printf(const char *fmt, ...)
{
    va_list ap;
    char *s;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static char *dup_or_null(const char *s)
{
    return s && s[0] ? strdup(s) : NULL;
}

sluice_err sluice_render_probe(const sluice_config_t *cfg,
                               const char *tag,
                               sluice_render_t **out,
                               sluice_error_t *err)
{
    sluice_render_t *r = NULL;
    sluice_jobdesc_t *d;
    char *path = NULL;
    const char *croot;
    sluice_err rc = SLUICE_OK;
    uint32_t tl = PROBE_TIME_MINUTES;

    if (!cfg || !tag || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "probe: missing argument");
    if (!tag_ok(tag))
        return sluice_errorf(err, SLUICE_EINVAL, "probe: tag \"%.32s\" is not [0-9a-z]{1,16}", tag);
    if (!cfg->storage.root || cfg->storage.root[0] != '/')
        return sluice_errorf(err, SLUICE_ECONFIG, "storage.root: needed for the probe job");
    croot = cfg->storage.cluster_root && cfg->storage.cluster_root[0] ? cfg->storage.cluster_root
                                                                      : cfg->storage.root;
    if (cfg->launcher.sbatch.time_minutes > 0 && (uint32_t)cfg->launcher.sbatch.time_minutes < tl)
        tl = (uint32_t)cfg->launcher.sbatch.time_minutes;
    if ((r = calloc(1, sizeof(*r))) == NULL || (r->jobs = calloc(1, sizeof(*r->jobs))) == NULL ||
        (r->pool_names = calloc(1, sizeof(char *))) == NULL ||
        (r->files = calloc(1, sizeof(*r->files))) == NULL)
        goto nomem;
    r->n_jobs = 1;
    r->attempt = 1;
    r->launch_id = probe_printf("probe-%s", tag);
    r->sha8 = probe_printf(".probe-%s", tag);
    r->run_id = probe_printf("probe-%s.1", tag);
    r->staging_service =
        probe_printf("%.*s/%s/.probe-%s/attempt-1", (int)trimmed_len(cfg->storage.root),
                     cfg->storage.root, cfg->site_name, tag);
    r->staging_cluster = probe_printf("%.*s/%s/.probe-%s/attempt-1", (int)trimmed_len(croot), croot,
                                      cfg->site_name, tag);
    r->pool_names[0] = strdup("probe");
    path = render_job_path(cfg);
    if (!r->launch_id || !r->sha8 || !r->run_id || !r->staging_service || !r->staging_cluster ||
        !r->pool_names[0] || !path)
        goto nomem;
    if ((rc = probe_script(cfg, r->staging_cluster, path, &r->script)) != SLUICE_OK)
        goto nomem;

    d = &r->jobs[0];
    d->name =
        probe_printf("%s-%.32s-probe-%s", cfg->job_name_prefix ? cfg->job_name_prefix : "sluice",
                     cfg->site_name, tag);
    d->comment = probe_printf("sluice check --probe-job %s", tag);
    d->partition = dup_or_null(cfg->launcher.sbatch.partition);
    d->account = dup_or_null(cfg->launcher.sbatch.account);
    d->qos = dup_or_null(cfg->launcher.sbatch.qos);
    d->reservation = dup_or_null(cfg->launcher.sbatch.reservation);
    d->constraint = dup_or_null(cfg->launcher.sbatch.constraint);
    d->time_limit = tl;
    d->nodes = 1;
    d->tasks_per_node = 1;
    d->workdir = strdup(r->staging_cluster);
    d->std_out = probe_printf("%s/stdout.log", r->staging_cluster);
    d->std_err = probe_printf("%s/stderr.log", r->staging_cluster);
    d->requeue = false;
    d->script = strdup(r->script);
    if (!d->name || !d->comment || !d->workdir || !d->std_out || !d->std_err || !d->script)
        goto nomem;
    if ((rc = sluice_jobdesc_setenv(d, "PATH", path, err)) != SLUICE_OK ||
        (rc = sluice_jobdesc_setenv(d, "LANG", RENDER_LANG, err)) != SLUICE_OK ||
        (rc = sluice_jobdesc_setenv(d, "HOME", r->staging_cluster, err)) != SLUICE_OK)
        goto out;
    if ((r->files[0].name = strdup("job.sh")) == NULL ||
        (r->files[0].content = strdup(r->script)) == NULL)
        goto nomem;
    r->files[0].mode = 0600;
    r->n_files = 1;
    *out = r;
    r = NULL;
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "probe: out of memory");
out:
    if (r && r->files && r->n_files == 0) {
        free(r->files[0].name);
        free(r->files[0].content);
    }
    sluice_render_free(r);
    free(path);
    return rc;
}
