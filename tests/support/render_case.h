/* SPDX-License-Identifier: Apache-2.0 */
/* render_case.h - load a golden rendering case directory (site.yaml,
 * request.json, optional study_runtime.yaml) and render it with fixed,
 * test-only inputs: forward_env values from a fixed table, and an image
 * check that accepts every path. */
#ifndef SLUICE_TEST_RENDER_CASE_H
#define SLUICE_TEST_RENDER_CASE_H

#include <sluice/sluice.h>

#include "site/config_model.h"
#include "slurm/slurmrest.h"

typedef struct {
    sluice_config_t *cfg;
    sluice_study_runtime_t *rt;
    const sluice_study_t *study;
    sluice_launch_t *launch;
    sluice_render_t *render;
} render_case_t;

/* Read a whole file into a new NUL-terminated string (NULL if unreadable). */
char *render_case_slurp(const char *path, size_t *len);

/* The fixed getenv of the tests: CUDA_HOME and a few secret_env sources. */
const char *render_case_getenv(const char *name, void *arg);

/* Load and render `dir`.  On failure the stage that failed is in err. */
sluice_err render_case_run(const char *dir, render_case_t *out, sluice_error_t *err);
void render_case_clear(render_case_t *c);

#endif
