/* SPDX-License-Identifier: Apache-2.0 */
/* launch.h - internal rule of the launch module shared with the render
 * module: which environment variable names a request may set.
 *
 * The value syntaxes themselves (Slurm times, memory sizes, signals,
 * variable names, paths) are in base/syntax.h.
 */
#ifndef SLUICE_LAUNCH_INTERNAL_H
#define SLUICE_LAUNCH_INTERNAL_H

#include <sluice/launch.h>

/* An environment variable name a request may set: the syntax of
 * base/syntax.h ([A-Za-z_][A-Za-z0-9_]*, at most 128 bytes), no reserved
 * prefix (SLURM_, SLUICE_, NVFL_, SRUN_, SBATCH_, SALLOC_, APPTAINER,
 * SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_), not a name that changes how
 * the shell or the dynamic loader behaves (LD_PRELOAD, LD_AUDIT, BASH_ENV,
 * ENV, SHELLOPTS, BASHOPTS, IFS, PS4, PROMPT_COMMAND, CDPATH, GLOBIGNORE).
 * Returns NULL when allowed, or a static reason sentence that the caller
 * prefixes with the path. */
const char *launch_envname_check(const char *name);

#endif /* SLUICE_LAUNCH_INTERNAL_H */
