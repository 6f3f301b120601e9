/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest.h - slurmrestd version adapters: URL paths, submit bodies and
 * response parsers for OpenAPI plugin versions v0.0.38 and v0.0.40-v0.0.46.
 *
 * Everything here is a pure function over jansson values: no network, no
 * global state, safe to call from any thread.  The transport sends what
 * these functions build and hands the decoded answers back to them.
 *
 * Ownership: strings returned through `char **out` are new allocations the
 * caller frees with free().  JSON returned through `json_t **out` is a new
 * reference.  Response arguments are borrowed references; parsers copy what
 * they keep.  Every result struct is freed with its _clear() function, which
 * is NULL-safe and leaves the struct zeroed.  Result structs must be zeroed
 * (or cleared) before a parse call.
 *
 * Errors: SLUICE_EINVAL for bad arguments, SLUICE_EPROTO naming the JSON
 * path for a response of the wrong shape, SLUICE_EUNSUPPORTED for a feature
 * the version lacks, SLUICE_ENOMEM.  Unknown response fields are ignored.
 */
#ifndef SLUICE_SLURMREST_H
#define SLUICE_SLURMREST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>
#include <sluice/jobdesc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Supported slurmrestd data-parser versions, oldest first. */
#define SLUICE_REST_VERSION_MAP(XX)                                                                \
    XX(V0038, "v0.0.38")                                                                           \
    XX(V0040, "v0.0.40")                                                                           \
    XX(V0041, "v0.0.41")                                                                           \
    XX(V0042, "v0.0.42")                                                                           \
    XX(V0043, "v0.0.43")                                                                           \
    XX(V0044, "v0.0.44")                                                                           \
    XX(V0045, "v0.0.45")                                                                           \
    XX(V0046, "v0.0.46")

typedef enum {
#define SLUICE_REST_VERSION_ENUM(id, name) SLUICE_REST_##id,
    SLUICE_REST_VERSION_MAP(SLUICE_REST_VERSION_ENUM)
#undef SLUICE_REST_VERSION_ENUM
        SLUICE_REST_VERSION_COUNT_
} sluice_rest_version;

/* "v0.0.43"; "unknown" outside the table.  Static string. */
SLUICE_API const char *sluice_rest_version_name(sluice_rest_version v);

/* Parse "v0.0.43", "0.0.43", "data_parser/v0.0.43" or "openapi/v0.0.38".
 * SLUICE_EUNSUPPORTED for a well-formed but unsupported version (v0.0.39),
 * SLUICE_EINVAL for anything else. */
SLUICE_API sluice_err sluice_rest_version_parse(const char *text,
                                                sluice_rest_version *out,
                                                sluice_error_t *err);

/* ---- URL paths (path plus query string; values percent-encoded) --------- */

/* POST /slurm/vX/job/submit */
SLUICE_API sluice_err sluice_rest_path_submit(sluice_rest_version v,
                                              char **out,
                                              sluice_error_t *err);
/* GET /slurm/vX/job/{id} */
SLUICE_API sluice_err sluice_rest_path_job(sluice_rest_version v,
                                           uint64_t job_id,
                                           char **out,
                                           sluice_error_t *err);
/* GET /slurm/vX/jobs/[?update_time=T].  update_time < 0: no filter.  The
 * time is a bare epoch on v0.0.38 and v0.0.42+, `uts<epoch>` on v0.0.40 and
 * v0.0.41 (their parse_time() regression).  v0.0.38 answers 304 when nothing
 * changed; newer versions warn "No job changes". */
SLUICE_API sluice_err sluice_rest_path_jobs(sluice_rest_version v,
                                            int64_t update_time,
                                            char **out,
                                            sluice_error_t *err);
/* GET /slurm/vX/jobs/state/?job_id=A&job_id=B (repeated keys; v0.0.40+).
 * n == 0 asks for every job.  SLUICE_EUNSUPPORTED on v0.0.38. */
SLUICE_API sluice_err sluice_rest_path_jobs_state(
    sluice_rest_version v, const uint64_t *job_ids, size_t n, char **out, sluice_error_t *err);
/* DELETE /slurm/vX/job/{id}[?signal=S].  signal NULL: Slurm's default
 * (SIGKILL). */
SLUICE_API sluice_err sluice_rest_path_cancel(
    sluice_rest_version v, uint64_t job_id, const char *signal, char **out, sluice_error_t *err);
/* GET /slurmdb/vX/job/{id} */
SLUICE_API sluice_err sluice_rest_path_acct_job(sluice_rest_version v,
                                                uint64_t job_id,
                                                char **out,
                                                sluice_error_t *err);
/* GET /slurmdb/vX/jobs/?job_name=N&users=U&start_time=S&end_time=E.
 * name/user NULL: no filter; start/end < 0: no bound (times formatted as
 * for sluice_rest_path_jobs). */
SLUICE_API sluice_err sluice_rest_path_acct_jobs(sluice_rest_version v,
                                                 const char *job_name,
                                                 const char *user,
                                                 int64_t start_time,
                                                 int64_t end_time,
                                                 char **out,
                                                 sluice_error_t *err);
/* GET /slurm/vX/diag/, /slurm/vX/nodes/, /slurm/vX/ping/ */
SLUICE_API sluice_err sluice_rest_path_diag(sluice_rest_version v, char **out, sluice_error_t *err);
SLUICE_API sluice_err sluice_rest_path_nodes(sluice_rest_version v,
                                             char **out,
                                             sluice_error_t *err);
SLUICE_API sluice_err sluice_rest_path_ping(sluice_rest_version v, char **out, sluice_error_t *err);
/* GET /slurm/vX/node/{name} (one node's record; the answer has the shape
 * of GET nodes/, parsed by sluice_rest_parse_nodes()).  `name`: 1 to
 * SLUICE_REST_NODE_NAME_MAX bytes, percent-encoded in the path. */
#define SLUICE_REST_NODE_NAME_MAX 255
SLUICE_API sluice_err sluice_rest_path_node(sluice_rest_version v,
                                            const char *name,
                                            char **out,
                                            sluice_error_t *err);

/* ---- submit body -------------------------------------------------------- */

/* Build the POST body for `n` components (1: plain job, >1: hetjob; only
 * descs[0].script is used).  *out receives a new reference.  SLUICE_EINVAL
 * names the component and field for an unusable description (no script,
 * nodes 0, bad signal syntax). */
SLUICE_API sluice_err sluice_rest_submit_body(sluice_rest_version v,
                                              const sluice_jobdesc_t *descs,
                                              size_t n,
                                              json_t **out,
                                              sluice_error_t *err);

/* ---- responses ---------------------------------------------------------- */

typedef struct {
    long number;       /* error_number (error_code on v0.0.38 submit); 0 if absent */
    char *error;       /* short text, or NULL */
    char *description; /* long text, or NULL */
} sluice_rest_error_t;

/* What every response carries: meta, errors[] and warnings[]. */
typedef struct {
    sluice_rest_error_t *errors;
    size_t n_errors;
    char **warnings; /* warning descriptions */
    size_t n_warnings;
    char *release;     /* meta.slurm.release / meta.Slurm.release, or NULL */
    char *cluster;     /* meta.slurm.cluster (v0.0.40+), or NULL */
    char *data_parser; /* meta.plugin.data_parser, or NULL (v0.0.38) */
    char *plugin_type; /* meta.plugin.type, or NULL */
} sluice_rest_envelope_t;

SLUICE_API void sluice_rest_envelope_clear(sluice_rest_envelope_t *e);

/* Parse meta/errors/warnings of any response (also error bodies). */
SLUICE_API sluice_err sluice_rest_parse_envelope(sluice_rest_version v,
                                                 const json_t *resp,
                                                 sluice_rest_envelope_t *out,
                                                 sluice_error_t *err);

/* First error's number and text (error, else description); false when the
 * envelope has no error.  *text is borrowed from the envelope. */
SLUICE_API bool
sluice_rest_first_error(const sluice_rest_envelope_t *e, long *number, const char **text);

/* True when a warning says "No job changes since update_time" (v0.0.39+
 * form of v0.0.38's HTTP 304). */
SLUICE_API bool sluice_rest_no_job_changes(const sluice_rest_envelope_t *e);

typedef struct {
    sluice_rest_envelope_t env;
    uint64_t job_id; /* 0 when the answer carries none */
    /* The cluster of a job id given as the string "<id>;<cluster>" (what
     * `sbatch --parsable` prints when a federation or -M routed the job to
     * another cluster), or NULL for a plain id. */
    char *cluster;
    char *step_id;  /* "BATCH"/"batch", or NULL */
    char *user_msg; /* job_submit_user_msg, or NULL */
} sluice_rest_submit_t;

SLUICE_API void sluice_rest_submit_clear(sluice_rest_submit_t *s);
SLUICE_API sluice_err sluice_rest_parse_submit(sluice_rest_version v,
                                               const json_t *resp,
                                               sluice_rest_submit_t *out,
                                               sluice_error_t *err);

typedef struct {
    sluice_rest_envelope_t env;
    sluice_jobview_t *jobs;
    size_t n_jobs;
} sluice_rest_jobs_t;

SLUICE_API void sluice_rest_jobs_clear(sluice_rest_jobs_t *j);

/* GET /slurm/vX/job/{id} and /jobs/ answers.  On v0.0.38 the single
 * job_state string may be a flag hiding the base state ("COMPLETING"):
 * then base is SLUICE_JOB_BASE_UNKNOWN and the flag bit is set. */
SLUICE_API sluice_err sluice_rest_parse_jobs(sluice_rest_version v,
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
SLUICE_API sluice_err sluice_rest_parse_acct_jobs(sluice_rest_version v,
                                                  const json_t *resp,
                                                  sluice_rest_jobs_t *out,
                                                  sluice_error_t *err);

typedef struct {
    uint64_t job_id;
    bool has_het_offset; /* the id was "<id>+<offset>" */
    uint32_t het_offset;
    sluice_job_base base;
    uint32_t flags;
} sluice_rest_job_state_t;

typedef struct {
    sluice_rest_envelope_t env;
    sluice_rest_job_state_t *states;
    size_t n_states;
} sluice_rest_job_states_t;

SLUICE_API void sluice_rest_job_states_clear(sluice_rest_job_states_t *s);
/* GET /slurm/vX/jobs/state/ (v0.0.40+): {jobs:[{job_id:"5"|"5+1", state:[…]}]}
 * as observed live (the OpenAPI documents describe another shape). */
SLUICE_API sluice_err sluice_rest_parse_job_states(sluice_rest_version v,
                                                   const json_t *resp,
                                                   sluice_rest_job_states_t *out,
                                                   sluice_error_t *err);

typedef struct {
    char *message_type;
    uint64_t count;
} sluice_rest_rpc_count_t;

typedef struct {
    sluice_rest_envelope_t env;
    int64_t req_time; /* statistics.req_time, 0 if absent */
    sluice_rest_rpc_count_t *rpcs;
    size_t n_rpcs;
} sluice_rest_diag_t;

SLUICE_API void sluice_rest_diag_clear(sluice_rest_diag_t *d);
SLUICE_API sluice_err sluice_rest_parse_diag(sluice_rest_version v,
                                             const json_t *resp,
                                             sluice_rest_diag_t *out,
                                             sluice_error_t *err);
/* Sum of counts of RPC types whose name equals `message_type`. */
SLUICE_API uint64_t sluice_rest_diag_rpc_count(const sluice_rest_diag_t *d,
                                               const char *message_type);

typedef struct {
    char *name;
    char *state;    /* "IDLE", "MIXED+DRAIN" (flags joined with '+'), or NULL */
    char *features; /* comma-separated, or NULL */
    char *partitions;
    char *address; /* NodeAddr, or NULL when the answer has none */
} sluice_rest_node_t;

typedef struct {
    sluice_rest_envelope_t env;
    sluice_rest_node_t *nodes;
    size_t n_nodes;
} sluice_rest_nodes_t;

SLUICE_API void sluice_rest_nodes_clear(sluice_rest_nodes_t *n);
SLUICE_API sluice_err sluice_rest_parse_nodes(sluice_rest_version v,
                                              const json_t *resp,
                                              sluice_rest_nodes_t *out,
                                              sluice_error_t *err);

typedef struct {
    sluice_rest_envelope_t env; /* meta gives release, cluster, data_parser */
    size_t n_controllers;
    size_t n_responding; /* "UP" (v0.0.38), pinged "UP" (.40/.41), responding (.42+) */
    bool primary_responding;
} sluice_rest_ping_t;

SLUICE_API void sluice_rest_ping_clear(sluice_rest_ping_t *p);
SLUICE_API sluice_err sluice_rest_parse_ping(sluice_rest_version v,
                                             const json_t *resp,
                                             sluice_rest_ping_t *out,
                                             sluice_error_t *err);

/* ---- lifecycle: what a server's own OpenAPI document says ---------------- */

/* The Slurm release that removes version v ("27.05"), from Slurm's data
 * parser lifecycle table; NULL when Slurm has announced none (or v is
 * outside the table).  Static string. */
SLUICE_API const char *sluice_rest_version_removed_in(sluice_rest_version v);

typedef struct {
    size_t operations; /* operations under /slurm/vX/ and /slurmdb/vX/ */
    size_t deprecated; /* of those, marked "deprecated": true */
} sluice_rest_openapi_ops_t;

/* Count the operations of version v in an OpenAPI document as slurmrestd
 * serves it (GET /openapi/v3: the paths of every loaded version) and those it
 * marks deprecated.  slurmrestd marks every operation of a deprecated data
 * parser (26.11: v0.0.43), so operations > 0 && deprecated == operations
 * means the server deprecates v.  `doc` is borrowed.  SLUICE_EPROTO naming
 * the member when the document is not an object, its paths are not an
 * object, a path item of v is not an object or a "deprecated" is not a
 * boolean; SLUICE_EINVAL for a NULL argument or an unknown v. */
SLUICE_API sluice_err sluice_rest_openapi_ops(const json_t *doc,
                                              sluice_rest_version v,
                                              sluice_rest_openapi_ops_t *out,
                                              sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SLURMREST_H */
