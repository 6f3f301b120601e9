/* SPDX-License-Identifier: Apache-2.0 */
/* render_commands.c - the commands a job runs and its PATH, shared by the
 * batch script of a launch and the probe job (render_int.h), and the
 * variable names of a pool (SLUICE_POOL_<NAME>_...).
 *
 * Notes:
 * - The probe proves what a launch will find because both take srun,
 *   apptainer and PATH from here (design.md, "Commands on the cluster").
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "render_int.h"

const char *render_srun(const sluice_config_t *cfg)
{
    return sluice_config_executable(cfg, "srun");
}

const char *render_apptainer(const sluice_config_t *cfg)
{
    const char *p = sluice_config_executable(cfg, "apptainer");

    if (!p)
        p = sluice_config_executable(cfg, "singularity");
    return p ? p : "apptainer";
}

char *render_job_path(const sluice_config_t *cfg)
{
    const char *srun = render_srun(cfg);
    const char *p = RENDER_DEFAULT_PATH;
    buf_t b = BUF_INIT;
    size_t dir_len;

    if (cfg->launcher.job_path)
        return strdup(cfg->launcher.job_path);
    if (!srun)
        return strdup(RENDER_DEFAULT_PATH);
    /* Config checked it: absolute, normalised, no ':'. */
    dir_len = (size_t)(strrchr(srun, '/') - srun);
    if (dir_len == 0)
        dir_len = 1;
    while (*p) {
        size_t len = strcspn(p, ":");
        if (len == dir_len && strncmp(p, srun, len) == 0)
            return strdup(RENDER_DEFAULT_PATH);
        p += len + (p[len] == ':');
    }
    buf_init(&b, 0);
    if (buf_printf(&b, "%.*s:%s", (int)dir_len, srun, RENDER_DEFAULT_PATH) != SLUICE_OK) {
        buf_free(&b);
        return NULL;
    }
    return buf_take(&b);
}

/* "TRAINER" from "trainer", "-" -> "_". */
void render_pool_var(const char *pool, char *out, size_t outsz)
{
    size_t i;

    for (i = 0; pool[i] && i + 1 < outsz; i++)
        out[i] = pool[i] == '-' ? '_' : (char)toupper((unsigned char)pool[i]);
    out[i] = '\0';
}
