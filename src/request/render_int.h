/* SPDX-License-Identifier: Apache-2.0 */
/* render_int.h - what the batch script of a launch and the probe job of
 * `sluice check --probe-job` share: the commands a job runs and its PATH.
 *
 * Notes:
 * - Both renders take these from here, so the probe proves what a launch
 *   will find (design.md, "Commands on the cluster").
 */
#ifndef SLUICE_RENDER_INT_H
#define SLUICE_RENDER_INT_H

#include <sluice/config.h>

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

#endif /* SLUICE_RENDER_INT_H */
