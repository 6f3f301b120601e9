/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest.h - the version table row and the entry points of the
 * slurmrestd version adapters.
 *
 * slurmrest.c holds the version table, URL building, the envelope and the
 * dispatch to the adapters; slurmrest_v0038.c and slurmrest_v0040.c hold
 * the shapes of their families (v0.0.40 covers v0.0.40-v0.0.46 through the
 * difference flags in slurmrest_info_t); slurmrest_status.c parses diag,
 * nodes and ping.  What they all share is in slurmrest_parse.h.
 */
#ifndef SLUICE_SLURMREST_INTERNAL_H
#define SLUICE_SLURMREST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/slurmrest.h>

#include "base/jdec.h"

/* One row per version: how it differs from its family's baseline.  Checked
 * against the OpenAPI documents in shared/openapi/slurmrestd and the
 * reference's live observations (slurmrestd-api.md section 16). */
typedef struct {
    sluice_rest_version v;
    const char *name;       /* "v0.0.43" */
    int family;             /* 38 or 40 */
    bool uts_time_query;    /* v0.0.40/41: query times need the "uts" prefix */
    bool submit_has_result; /* v0.0.40/41: submit answer has a deprecated "result" */
    bool ping_responding;   /* v0.0.42+: pings[] carry responding/primary booleans */
    bool jobs_state;        /* GET jobs/state/ exists (v0.0.40+) */
    const char *removed_in; /* the Slurm release that drops it ("27.05"); NULL: not announced */
} slurmrest_info_t;

/* The row of a version, or NULL outside the table. */
const slurmrest_info_t *slurmrest_info(sluice_rest_version v);

/* ---- family entry points ------------------------------------------------ */

sluice_err slurmrest_v0038_submit_body(const sluice_jobdesc_t *descs,
                                       size_t n,
                                       json_t **out,
                                       sluice_error_t *err);
/* The record at cursor `rec` (an object, read leniently: slurmrest_parse.h)
 * into *out; errors name its members' paths ("jobs[2].job_state"). */
sluice_err slurmrest_v0038_job(const jdec_cur_t *rec, sluice_jobview_t *out);
sluice_err slurmrest_v0038_acct_job(const jdec_cur_t *rec, sluice_jobview_t *out);

sluice_err slurmrest_v0040_submit_body(const slurmrest_info_t *info,
                                       const sluice_jobdesc_t *descs,
                                       size_t n,
                                       json_t **out,
                                       sluice_error_t *err);
sluice_err
slurmrest_v0040_job(const slurmrest_info_t *info, const jdec_cur_t *rec, sluice_jobview_t *out);
sluice_err slurmrest_v0040_acct_job(const slurmrest_info_t *info,
                                    const jdec_cur_t *rec,
                                    sluice_jobview_t *out);

#endif /* SLUICE_SLURMREST_INTERNAL_H */
