/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest.h - internals shared by the slurmrestd version adapters.
 *
 * slurmrest.c holds the version table, URL building, the envelope and the
 * version-independent parsers; slurmrest_v0038.c and slurmrest_v0040.c hold
 * the shapes of their families (v0.0.40 covers v0.0.40-v0.0.45 through the
 * difference flags in slurmrest_info_t).
 */
#ifndef SLUICE_SLURMREST_INTERNAL_H
#define SLUICE_SLURMREST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/slurmrest.h>

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
} slurmrest_info_t;

/* The row of a version, or NULL outside the table. */
const slurmrest_info_t *slurmrest_info(sluice_rest_version v);

/* ---- lenient getters; `path` names the object for error text ------------ */

/* A string member: absent or null leaves *out NULL; other types EPROTO.
 * *out is a new allocation (free()). */
sluice_err slurmrest_get_string(
    const json_t *obj, const char *key, const char *path, char **out, sluice_error_t *err);

/* A number that may be bare (integer or real), {set,infinite,number} or
 * null.  *present is false for absent, null, unset or infinite values. */
sluice_err slurmrest_get_number(const json_t *obj,
                                const char *key,
                                const char *path,
                                bool *present,
                                int64_t *out,
                                sluice_error_t *err);

/* One state name into base or flag bits (unknown names are ignored). */
void slurmrest_state_name(const char *name, sluice_job_base *base, uint32_t *flags);

/* A state array (or a single string) into base + flags; EPROTO on other
 * types. */
/* A number at obj.key (plain or {set,infinite,number}), 0 when absent;
 * does nothing once *rc holds an error, and records the first one. */
int64_t slurmrest_num_or_zero(
    const json_t *obj, const char *key, const char *path, sluice_err *rc, sluice_error_t *err);

/* The parts of an accounting record that every version shapes alike:
 * state {current, reason}, comment.job, het {job_id, job_offset} and
 * time {submission, start, end}. */
sluice_err slurmrest_acct_common(const json_t *rec,
                                 const char *path,
                                 sluice_jobview_t *v,
                                 sluice_error_t *err);

sluice_err slurmrest_state_value(const json_t *state,
                                 const char *path,
                                 sluice_job_base *base,
                                 uint32_t *flags,
                                 sluice_error_t *err);

/* ---- family entry points ------------------------------------------------ */

sluice_err slurmrest_v0038_submit_body(const sluice_jobdesc_t *descs,
                                       size_t n,
                                       json_t **out,
                                       sluice_error_t *err);
sluice_err slurmrest_v0038_job(const json_t *rec,
                               const char *path,
                               sluice_jobview_t *out,
                               sluice_error_t *err);
sluice_err slurmrest_v0038_acct_job(const json_t *rec,
                                    const char *path,
                                    sluice_jobview_t *out,
                                    sluice_error_t *err);

sluice_err slurmrest_v0040_submit_body(const slurmrest_info_t *info,
                                       const sluice_jobdesc_t *descs,
                                       size_t n,
                                       json_t **out,
                                       sluice_error_t *err);
sluice_err slurmrest_v0040_job(const slurmrest_info_t *info,
                               const json_t *rec,
                               const char *path,
                               sluice_jobview_t *out,
                               sluice_error_t *err);
sluice_err slurmrest_v0040_acct_job(const slurmrest_info_t *info,
                                    const json_t *rec,
                                    const char *path,
                                    sluice_jobview_t *out,
                                    sluice_error_t *err);

/* Shared by both families: the common job-description fields, the GPU
 * request text and the signal split.  *out of gres is a new allocation. */
sluice_err slurmrest_check_desc(const sluice_jobdesc_t *d, size_t i, sluice_error_t *err);
sluice_err slurmrest_gres(const sluice_jobdesc_t *d, const char *prefix, char **out);

/* "[B:]NAME[@SECONDS]" into its parts; EINVAL on bad syntax.  *name is a new
 * allocation; *delay is -1 when no "@SECONDS" was given. */
sluice_err slurmrest_split_signal(
    const char *spec, size_t i, bool *batch_only, char **name, long *delay, sluice_error_t *err);

#endif /* SLUICE_SLURMREST_INTERNAL_H */
