/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest.h - the version table row and the entry points of the
 * slurmrestd version adapters.
 *
 * slurmrest.c holds the version table, URL building, the envelope and the
 * dispatch to the adapters; slurmrest_v0038.c and slurmrest_v0040.c hold
 * the shapes of their families (v0.0.40 covers v0.0.40-v0.0.46 through the
 * difference flags in slurmrest_info_t); slurmrest_status.c parses diag,
 * nodes and ping.  What they all share is in slurmrest_parse.h.
 *
 * The adapter functions below were public (include/sluice/slurmrest.h)
 * until the ABI was settled: they are internal now, used by client*.c,
 * `sluice render` and the tests.  The version enum and the result structs
 * they fill are public in <sluice/client.h>.
 *
 * Everything here is a pure function over jansson values: no network, no
 * global state, safe to call from any thread.
 *
 * Ownership: strings returned through `char **out` are new allocations the
 * caller frees with free().  JSON returned through `json_t **out` is a new
 * reference.  Response arguments are borrowed references; parsers copy what
 * they keep.  Result structs must be zeroed (or cleared) before a parse
 * call and are freed with their _clear() function (client.h).
 *
 * Errors: SLUICE_EINVAL for bad arguments, SLUICE_EPROTO naming the JSON
 * path for a response of the wrong shape, SLUICE_EUNSUPPORTED for a feature
 * the version lacks, SLUICE_ENOMEM.  Unknown response fields are ignored.
 */
#ifndef SLUICE_SLURMREST_INTERNAL_H
#define SLUICE_SLURMREST_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/client.h>
#include <sluice/jobdesc.h>

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

/* ---- the adapters: version, URL paths, submit body, parsers ------------- */

/* Parse "v0.0.43", "0.0.43", "data_parser/v0.0.43" or "openapi/v0.0.38".
 * SLUICE_EUNSUPPORTED for a well-formed but unsupported version (v0.0.39),
 * SLUICE_EINVAL for anything else. */
sluice_err
sluice_rest_version_parse(const char *text, sluice_rest_version *out, sluice_error_t *err);

/* ---- URL paths (path plus query string; values percent-encoded) --------- */

/* POST /slurm/vX/job/submit */
sluice_err sluice_rest_path_submit(sluice_rest_version v, char **out, sluice_error_t *err);
/* GET /slurm/vX/job/{id} */
sluice_err
sluice_rest_path_job(sluice_rest_version v, uint64_t job_id, char **out, sluice_error_t *err);
/* GET /slurm/vX/jobs/[?update_time=T].  update_time < 0: no filter.  The
 * time is a bare epoch on v0.0.38 and v0.0.42+, `uts<epoch>` on v0.0.40 and
 * v0.0.41 (their parse_time() regression).  v0.0.38 answers 304 when nothing
 * changed; newer versions warn "No job changes". */
sluice_err
sluice_rest_path_jobs(sluice_rest_version v, int64_t update_time, char **out, sluice_error_t *err);
/* GET /slurm/vX/jobs/state/?job_id=A&job_id=B (repeated keys; v0.0.40+).
 * n == 0 asks for every job.  SLUICE_EUNSUPPORTED on v0.0.38. */
sluice_err sluice_rest_path_jobs_state(
    sluice_rest_version v, const uint64_t *job_ids, size_t n, char **out, sluice_error_t *err);
/* DELETE /slurm/vX/job/{id}[?signal=S].  signal NULL: Slurm's default
 * (SIGKILL). */
sluice_err sluice_rest_path_cancel(
    sluice_rest_version v, uint64_t job_id, const char *signal, char **out, sluice_error_t *err);
/* GET /slurmdb/vX/job/{id} */
sluice_err
sluice_rest_path_acct_job(sluice_rest_version v, uint64_t job_id, char **out, sluice_error_t *err);
/* GET /slurmdb/vX/jobs/?job_name=N&users=U&start_time=S&end_time=E.
 * name/user NULL: no filter; start/end < 0: no bound (times formatted as
 * for sluice_rest_path_jobs). */
sluice_err sluice_rest_path_acct_jobs(sluice_rest_version v,
                                      const char *job_name,
                                      const char *user,
                                      int64_t start_time,
                                      int64_t end_time,
                                      char **out,
                                      sluice_error_t *err);
/* GET /slurm/vX/diag/, /slurm/vX/nodes/, /slurm/vX/ping/ */
sluice_err sluice_rest_path_diag(sluice_rest_version v, char **out, sluice_error_t *err);
sluice_err sluice_rest_path_nodes(sluice_rest_version v, char **out, sluice_error_t *err);
sluice_err sluice_rest_path_ping(sluice_rest_version v, char **out, sluice_error_t *err);
/* GET /slurm/vX/node/{name} (one node's record; the answer has the shape
 * of GET nodes/, parsed by sluice_rest_parse_nodes()).  `name`: 1 to
 * SLUICE_REST_NODE_NAME_MAX bytes, percent-encoded in the path. */
sluice_err
sluice_rest_path_node(sluice_rest_version v, const char *name, char **out, sluice_error_t *err);

/* ---- submit body -------------------------------------------------------- */

/* Build the POST body for `n` components (1: plain job, >1: hetjob; only
 * descs[0].script is used).  *out receives a new reference.  SLUICE_EINVAL
 * names the component and field for an unusable description (no script,
 * nodes 0, bad signal syntax). */
sluice_err sluice_rest_submit_body(sluice_rest_version v,
                                   const sluice_jobdesc_t *descs,
                                   size_t n,
                                   json_t **out,
                                   sluice_error_t *err);

/* Parse meta/errors/warnings of any response (also error bodies). */
sluice_err sluice_rest_parse_envelope(sluice_rest_version v,
                                      const json_t *resp,
                                      sluice_rest_envelope_t *out,
                                      sluice_error_t *err);

sluice_err sluice_rest_parse_submit(sluice_rest_version v,
                                    const json_t *resp,
                                    sluice_rest_submit_t *out,
                                    sluice_error_t *err);

/* GET /slurm/vX/job/{id} and /jobs/ answers.  On v0.0.38 the single
 * job_state string may be a flag hiding the base state ("COMPLETING"):
 * then base is SLUICE_JOB_BASE_UNKNOWN and the flag bit is set. */
sluice_err sluice_rest_parse_jobs(sluice_rest_version v,
                                  const json_t *resp,
                                  sluice_rest_jobs_t *out,
                                  sluice_error_t *err);

/* GET /slurmdb/vX/job/{id} and /jobs/ answers.  Duplicate records of a
 * requeued job (same job_id, name, user and cluster) collapse to the newest
 * (latest submission time, then highest restart count, then last in the
 * answer); records of one id with another name, user or cluster are other
 * jobs (a reused id) and are all kept.  Every record, live or accounting,
 * says whether it belongs to another cluster (sluice_jobview_t
 * .other_cluster). */
sluice_err sluice_rest_parse_acct_jobs(sluice_rest_version v,
                                       const json_t *resp,
                                       sluice_rest_jobs_t *out,
                                       sluice_error_t *err);

/* GET /slurm/vX/jobs/state/ (v0.0.40+): {jobs:[{job_id:"5"|"5+1", state:[…]}]}
 * as observed live (the OpenAPI documents describe another shape). */
sluice_err sluice_rest_parse_job_states(sluice_rest_version v,
                                        const json_t *resp,
                                        sluice_rest_job_states_t *out,
                                        sluice_error_t *err);

sluice_err sluice_rest_parse_diag(sluice_rest_version v,
                                  const json_t *resp,
                                  sluice_rest_diag_t *out,
                                  sluice_error_t *err);
/* Sum of counts of RPC types whose name equals `message_type`. */
sluice_err sluice_rest_parse_nodes(sluice_rest_version v,
                                   const json_t *resp,
                                   sluice_rest_nodes_t *out,
                                   sluice_error_t *err);

sluice_err sluice_rest_parse_ping(sluice_rest_version v,
                                  const json_t *resp,
                                  sluice_rest_ping_t *out,
                                  sluice_error_t *err);

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
