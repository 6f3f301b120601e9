/* SPDX-License-Identifier: Apache-2.0 */
/* launch.h - internal helpers of the launch module (value syntax checks).
 *
 * They are shared with the config and render modules, which accept the
 * same value syntaxes (Slurm times, memory sizes, variable names, paths),
 * and with the unit tests.  Each returns NULL on success, or a static
 * reason sentence ("expected ...") that the caller prefixes with the path.
 */
#ifndef SLUICE_LAUNCH_INTERNAL_H
#define SLUICE_LAUNCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/launch.h>

/* A Slurm time string: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS.
 * Seconds round up to whole minutes.  *minutes is 1..
 * SLUICE_LAUNCH_MAX_TIME_MINUTES on success. */
const char *launch_time_parse(const char *s, uint32_t *minutes);

/* A memory size: digits with an optional K, M, G or T suffix (either
 * case; no suffix = MiB, as Slurm's --mem).  K rounds up to whole MiB. */
const char *launch_mem_parse(const char *s, uint64_t *mib);

/* An environment variable name a request may set: [A-Za-z_][A-Za-z0-9_]*,
 * at most 128 bytes, no reserved prefix (SLURM_, SLUICE_, NVFL_, SRUN_,
 * SBATCH_, SALLOC_, APPTAINER, SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_),
 * not a name that changes how the shell or the dynamic loader behaves
 * (LD_PRELOAD, LD_AUDIT, BASH_ENV, ENV, SHELLOPTS, BASHOPTS, IFS, PS4,
 * PROMPT_COMMAND, CDPATH, GLOBIGNORE). */
const char *launch_envname_check(const char *name);

/* An absolute path: no "..", no control bytes, at most
 * SLUICE_LAUNCH_MAX_STRING bytes.  "//" and "/./" collapse and a trailing
 * "/" goes.  On success *out is a new string (caller frees with free()). */
const char *launch_path_normalize(const char *in, char **out);

/* Slurm's --signal value: <name|number>[@<seconds 0..65535>].  Names may
 * carry the SIG prefix; the result is "<NAME>@<seconds>" (default 60 s)
 * in a new string (caller frees with free()). */
const char *launch_signal_normalize(const char *in, char **out);

#endif /* SLUICE_LAUNCH_INTERNAL_H */
