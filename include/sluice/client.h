/* SPDX-License-Identifier: Apache-2.0 */
/* client.h - the slurmrestd client: transport + token source + the adapter
 * of the negotiated OpenAPI version, behind one handle.
 *
 * Every operation reports a typed outcome (sluice_outcome) in a
 * sluice_call_t, next to the HTTP status and Slurm's error number and text,
 * and also returns a sluice_err (SLUICE_OK only for SLUICE_OUTCOME_OK).
 *
 * Retry rules ("No blind POST" in design.md):
 * - GET and DELETE: an AUTH-classified answer invalidates the token and the
 *   request is sent once more with a fresh one; nothing else is retried.
 * - POST (submit): never retried.  Any answer that does not prove a
 *   rejection (timeout, dropped connection, 5xx, AUTH, an unreadable 200)
 *   gives SLUICE_OUTCOME_UNCERTAIN; after an AUTH answer the token is
 *   invalidated first.  The caller must reconcile before trying again.
 *   SLUICE_OUTCOME_UNAVAILABLE (or AUTH without a usable token) for a
 *   submit proves that no byte of the POST left: refused connect, TLS
 *   handshake failure, connect timeout.  The caller may send it again at
 *   once (the launcher does, with backoff within its submit budget).
 *
 * Threads: one client may be shared by any number of threads; requests on
 * one client are serialised by the transport.
 *
 * Ownership: the result structs (sluice_rest_*_t below) are filled on success (and on
 * NOT_FOUND they are left empty); the caller zeroes them before the call
 * and frees them with their _clear() function.  No log line, error text or
 * result ever contains a token.
 */
#ifndef SLUICE_CLIENT_H
#define SLUICE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/auth.h>
#include <sluice/common.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/jobdesc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- slurmrestd versions and answers --------------------------------------
 *
 * The result structs below are filled by the client's operations.  They
 * must be zeroed (or cleared) before a call; each is freed with its
 * _clear() function, which is NULL-safe and leaves it zeroed.  Strings in
 * them are owned by the struct.  (The adapters that build the requests and
 * parse the answers are internal: src/slurm/slurmrest.h.) */

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

/* The longest node name sluice_client_node() takes, in bytes. */
#define SLUICE_REST_NODE_NAME_MAX 255

/* ---- what slurmrestd answered (filled by the operations below) ---------- */

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
typedef struct {
    sluice_rest_envelope_t env;
    sluice_jobview_t *jobs;
    size_t n_jobs;
} sluice_rest_jobs_t;

SLUICE_API void sluice_rest_jobs_clear(sluice_rest_jobs_t *j);

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
typedef struct {
    sluice_rest_envelope_t env; /* meta gives release, cluster, data_parser */
    size_t n_controllers;
    size_t n_responding; /* "UP" (v0.0.38), pinged "UP" (.40/.41), responding (.42+) */
    bool primary_responding;
} sluice_rest_ping_t;

SLUICE_API void sluice_rest_ping_clear(sluice_rest_ping_t *p);
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

/* ---- the client ---------------------------------------------------------- */

/* What happened to one operation (docs/client.md, "From the wire to the
 * launcher": how the transport's result and the answer become it, and what
 * the cluster operations make of it). */
#define SLUICE_OUTCOME_MAP(XX)                                                                     \
    XX(OK, "ok")                   /* done; results are filled */                                  \
    XX(NOT_FOUND, "not-found")     /* a 404 verdict, or 22.05's 500 + 2017 "Invalid job id" */     \
    XX(AUTH, "auth")               /* the token was refused (after the one retry, if any) */       \
    XX(UNAVAILABLE, "unavailable") /* not sent, transport, 5xx, URL not served (not_served) */     \
    XX(REJECTED, "rejected")       /* Slurm refused the request (4xx, errors[]) */                 \
    XX(PROTOCOL, "protocol")       /* the answer could not be understood */                        \
    XX(TOO_LARGE, "too-large")     /* the answer exceeded the response cap */                      \
    XX(UNCERTAIN, "uncertain")     /* a POST that may have been accepted: reconcile */

typedef enum {
#define SLUICE_OUTCOME_ENUM(id, name) SLUICE_OUTCOME_##id,
    SLUICE_OUTCOME_MAP(SLUICE_OUTCOME_ENUM)
#undef SLUICE_OUTCOME_ENUM
        SLUICE_OUTCOME_COUNT_
} sluice_outcome;

/* "ok", "not-found", ...; "unknown" outside the table.  Static string. */
SLUICE_API const char *sluice_outcome_name(sluice_outcome o);

/* The record of one operation.  Caller-owned; no heap memory inside. */
typedef struct {
    sluice_outcome outcome;
    long http_status;      /* status of the last answer; 0 when none arrived */
    long slurm_errno;      /* errors[0].error_number of the last answer; 0 when none */
    char slurm_error[256]; /* its text (error, else description); "" when none */
    unsigned requests;     /* HTTP requests sent for this operation (retries included) */
    bool auth_refreshed;   /* the token was invalidated during the operation */
    bool no_changes;       /* jobs_since: 304 or the "No job changes" warning */
    bool not_served;       /* a 404 from slurmrestd's router, not a handler: the URL is not
                              served (on /slurmdb/: no accounting); outcome UNAVAILABLE */
} sluice_call_t;

/* Everything the client needs; start from SLUICE_CLIENT_OPTS_INIT and fill what you need.
 * Strings are borrowed for the duration of sluice_client_new(). */
typedef struct {
    unsigned int version;    /* SLUICE_CLIENT_OPTS_VERSION: first, always */
    const char *url;         /* https://h:p, http://127.0.0.1:p, unix:/path */
    const char *api_version; /* "auto" (NULL too) or a pinned "v0.0.NN" */
    int allow_insecure_http;
    int tls_no_verify;
    const char *ca_file, *ca_path, *pinned_pubkey, *client_cert, *client_key;
    long connect_timeout_ms; /* 0: 5000 */
    long submit_timeout_ms;  /* 0: 30000 */
    long query_timeout_ms;   /* 0: 10000 */
    long cancel_timeout_ms;  /* 0: 10000 */
    size_t max_response;     /* 0: 64 MiB */
    size_t states_chunk;     /* job ids per jobs/state request; 0: one request (see job_states) */
    sluice_auth_t *auth;     /* required; the client takes ownership on success */
} sluice_client_opts_t;

/* Every field but `version` zero: each one's documented default.  Declare options as
 * `sluice_client_opts_t o = SLUICE_CLIENT_OPTS_INIT;` and set what differs. */
#define SLUICE_CLIENT_OPTS_VERSION 1
#define SLUICE_CLIENT_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_CLIENT_OPTS_VERSION)

/* Initialise `opts` as SLUICE_CLIENT_OPTS_INIT does, for `version`
 * (pass SLUICE_CLIENT_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_client_opts_init(sluice_client_opts_t *opts,
                                              unsigned int version,
                                              sluice_error_t *err);

typedef struct sluice_client sluice_client_t;

/* Create a client.  No request is sent (negotiation happens on first use
 * or through sluice_client_negotiate()).  On success *out receives the
 * client (caller frees with sluice_client_free()), which owns opts->auth;
 * on failure opts->auth stays the caller's.  SLUICE_EINVAL for bad options
 * or an insecure URL, SLUICE_EUNSUPPORTED for a pinned version sluice does
 * not support, SLUICE_ENOMEM, SLUICE_ETRANSPORT. */
SLUICE_API sluice_err sluice_client_new(sluice_client_t **out,
                                        const sluice_client_opts_t *opts,
                                        sluice_error_t *err);

/* The token source of a site configuration (no request is sent): chosen
 * in this order: rest.jwt_file, rest.jwt_key_file (HS256),
 * rest.jwt_rs256_key_file (RS256, rest.jwt_kid its `kid`),
 * rest.jwt_command, else the SLURM_JWT environment variable.  The Slurm user is rest.user; unset,
 * it is the token's own (its `sun`, else `username` claim), fixed from the first token on
 * (sluice_auth_new()).  *out: caller frees with sluice_auth_free().
 * Errors of sluice_auth_new(); SLUICE_ECONFIG naming rest.user when
 * neither rest.user nor the token names a user, or when a key mints the
 * token and rest.user is unset. */
SLUICE_API sluice_err sluice_client_auth_from_config(sluice_auth_t **out,
                                                     const sluice_config_t *cfg,
                                                     sluice_error_t *err);

/* Complete a configuration without rest.user with the token's own user
 * (sluice_client_auth_from_config() reads the token; nothing is sent), so
 * that everything reading rest.user sees the Slurm identity: the staging
 * owner when the service runs as root, the launcher's ownership checks
 * (sluice_config_set_token_user()).  Commands that act on the cluster call
 * it right after loading the configuration.  *claim_out (may be NULL): the
 * claim the user came from ("sun", "username"; static), NULL when rest.user
 * was already set.  Errors of sluice_client_auth_from_config(). */
SLUICE_API sluice_err sluice_client_resolve_user(sluice_config_t *cfg,
                                                 const char **claim_out,
                                                 sluice_error_t *err);

/* Create a client from a site configuration: the rest.* section, the
 * job_launcher.*_timeout values, and the token source of
 * sluice_client_auth_from_config() (which names the Slurm user).  Errors
 * as sluice_client_new() plus those of sluice_client_auth_from_config()
 * (SLUICE_EPERM, SLUICE_EAUTH, SLUICE_EIO, SLUICE_ECONFIG). */
SLUICE_API sluice_err sluice_client_new_from_config(sluice_client_t **out,
                                                    const sluice_config_t *cfg,
                                                    sluice_error_t *err);

/* The token source acting as tenant `t` (sluice_config_tenant_at() of
 * the site) on the cluster `cfg` (sluice_config_cluster_at()); nothing is
 * sent.  By t->identity:
 * - SLUICE_TENANT_TOKEN_FILE: t->jwt_file, whose token must name
 *   t->slurm_user (a token naming anyone else is refused, SLUICE_EAUTH);
 * - SLUICE_TENANT_MINT: minted with the cluster's rest.jwt_key_file
 *   (HS256), else rest.jwt_rs256_key_file (RS256, rest.jwt_kid), sun =
 *   t->slurm_user, rest.jwt_lifespan; SLUICE_ECONFIG without a key;
 * - SLUICE_TENANT_PROXY: a SLUICE_AUTH_PROXY on `site` (the cluster's own
 *   source, borrowed: it must outlive the new one) naming t->slurm_user in
 *   X-SLURM-USER-NAME; Slurm accepts it only when the site's user is
 *   SlurmUser or root.
 * *out: caller frees with sluice_auth_free().  Errors of sluice_auth_new(),
 * prefixed with the tenant's name, user and identity. */
SLUICE_API sluice_err sluice_client_auth_for_tenant(sluice_auth_t **out,
                                                    const sluice_config_t *cfg,
                                                    const sluice_tenant_t *t,
                                                    sluice_auth_t *site,
                                                    sluice_error_t *err);

/* A client of cluster `cfg` acting as tenant `t`: the rest.* settings of
 * sluice_client_new_from_config() with the token source of
 * sluice_client_auth_for_tenant() (`site`: the cluster's own client, whose
 * source a proxy borrows: it must outlive the new client; may be NULL for
 * the other identities).  Caller frees with sluice_client_free(). */
SLUICE_API sluice_err sluice_client_new_for_tenant(sluice_client_t **out,
                                                   const sluice_config_t *cfg,
                                                   const sluice_tenant_t *t,
                                                   sluice_client_t *site,
                                                   sluice_error_t *err);

/* NULL-safe. */
SLUICE_API void sluice_client_free(sluice_client_t *c);

/* What negotiation found; strings are "" when unknown. */
typedef struct {
    bool negotiated;
    sluice_rest_version version;
    char release[64];     /* Slurm release, "22.05.8" */
    char cluster[128];    /* meta.slurm.cluster (v0.0.40+) */
    char data_parser[64]; /* meta.plugin.data_parser (v0.0.40+) */
    char url[512];        /* the base URL (never holds a token) */
} sluice_client_info_t;

/* Negotiate the API version now (idempotent once it succeeded).  A pinned
 * version is verified with one authenticated GET of its diag endpoint;
 * "auto" probes v0.0.46 .. v0.0.40, v0.0.38 newest first with the same
 * authenticated call (never ping: it answers 200 to a bad token on 25.05+).
 * SLUICE_EUNSUPPORTED when the server serves no supported version; the
 * error text lists what the server offers (from GET /openapi/v3).
 * Thread-safe. */
SLUICE_API sluice_err sluice_client_negotiate(sluice_client_t *c,
                                              sluice_call_t *call,
                                              sluice_error_t *err);

/* Copy the negotiation result into *out.  Thread-safe. */
SLUICE_API void sluice_client_info(sluice_client_t *c, sluice_client_info_t *out);

/* The token source (borrowed; valid until sluice_client_free()). */
SLUICE_API sluice_auth_t *sluice_client_auth(sluice_client_t *c);

/* Counters of one client since it was created, for metrics.  Requests are
 * counted by kind as sent (a retry after a token refresh counts again);
 * every complete or failed exchange is counted once by its class (the
 * outcome classes of restclass: a transport failure is `unavailable`).  A
 * request never sent (no usable token) is not counted. */
typedef struct {
    uint64_t submit, query, cancel;
    uint64_t ok, auth, unavailable, rejected, not_found;
} sluice_client_stats_t;

/* A snapshot of the counters (zeroes for NULL).  Thread-safe: the counters
 * are atomic, so a metrics reader may call it while the launcher runs. */
SLUICE_API void sluice_client_stats(const sluice_client_t *c, sluice_client_stats_t *out);

/* ---- operations: each negotiates first if needed; `call` may be NULL --- */

/* POST job/submit with `n` components (1: plain job, >1: hetjob).  Never
 * retried.  OK: out->job_id > 0.  REJECTED: Slurm refused (4xx, or 200
 * with errors[] and no job id).  UNCERTAIN: anything else after the
 * request may have been sent. */
SLUICE_API sluice_err sluice_client_submit(sluice_client_t *c,
                                           const sluice_jobdesc_t *descs,
                                           size_t n,
                                           sluice_rest_submit_t *out,
                                           sluice_call_t *call,
                                           sluice_error_t *err);

/* GET job/{id}: a hetjob leader id returns every component. */
SLUICE_API sluice_err sluice_client_get_job(sluice_client_t *c,
                                            uint64_t job_id,
                                            sluice_rest_jobs_t *out,
                                            sluice_call_t *call,
                                            sluice_error_t *err);

/* GET jobs?update_time=T (T < 0: every job).  When nothing changed (304 on
 * v0.0.38, the warning on newer versions) the outcome is OK, out->n_jobs
 * is 0 and call->no_changes is set.  Note: any change on the cluster
 * returns the whole job table. */
SLUICE_API sluice_err sluice_client_jobs_since(sluice_client_t *c,
                                               int64_t update_time,
                                               sluice_rest_jobs_t *out,
                                               sluice_call_t *call,
                                               sluice_error_t *err);

/* States of the listed jobs.  v0.0.40+: one GET jobs/state with repeated
 * job_id keys while that query stays under 60,000 bytes (slurmrestd drops a
 * query past 65,535 bytes and answers for every job); a longer list is one
 * GET jobs/state without ids, filtered here to the listed jobs and their
 * hetjob components.  With `states_chunk` set: that many ids per request
 * (results concatenated; a failed chunk fails the call).  A local failure
 * after the answer fails the call UNAVAILABLE.  v0.0.38: one GET jobs, filtered to the
 * requested ids (a hetjob leader id also matches its components).  Jobs
 * Slurm no longer knows are simply absent from out.  n must be > 0. */
SLUICE_API sluice_err sluice_client_job_states(sluice_client_t *c,
                                               const uint64_t *job_ids,
                                               size_t n,
                                               sluice_rest_job_states_t *out,
                                               sluice_call_t *call,
                                               sluice_error_t *err);

/* GET slurmdb job/{id}.  NOT_FOUND when accounting has no record (yet).
 * UNAVAILABLE with call->not_served when slurmrestd serves no /slurmdb/
 * URL (started without the openapi/slurmdbd plugin): that is never taken
 * for a missing record. */
SLUICE_API sluice_err sluice_client_acct_job(sluice_client_t *c,
                                             uint64_t job_id,
                                             sluice_rest_jobs_t *out,
                                             sluice_call_t *call,
                                             sluice_error_t *err);

/* GET slurmdb jobs?job_name=&users=&start_time=&end_time= (either time < 0:
 * unbounded).  out->jobs is ordered newest first (submit time, then job
 * id), so out->jobs[0] is the record that wins; requeue duplicates are
 * already collapsed.  NOT_FOUND when nothing matches; UNAVAILABLE with
 * call->not_served when accounting is not served (see acct_job). */
SLUICE_API sluice_err sluice_client_acct_find(sluice_client_t *c,
                                              const char *job_name,
                                              const char *user,
                                              int64_t start_time,
                                              int64_t end_time,
                                              sluice_rest_jobs_t *out,
                                              sluice_call_t *call,
                                              sluice_error_t *err);

/* DELETE job/{id}[?signal=S] (signal NULL: SIGKILL).  Retried once after a
 * token refresh on AUTH. */
SLUICE_API sluice_err sluice_client_cancel(sluice_client_t *c,
                                           uint64_t job_id,
                                           const char *signal,
                                           sluice_call_t *call,
                                           sluice_error_t *err);

/* GET /openapi/v3: the server's own OpenAPI document, as the server serves
 * it (authenticated; the paths of every data parser it loaded, with the
 * deprecated ones marked; read it with sluice_rest_openapi_ops()).  *out
 * is a new reference the caller releases with json_decref().  Negotiates
 * first.  A slurmrestd that does not serve it answers its router's 404:
 * UNAVAILABLE with call->not_served. */
SLUICE_API sluice_err sluice_client_openapi(sluice_client_t *c,
                                            json_t **out,
                                            sluice_call_t *call,
                                            sluice_error_t *err);

/* GET diag (RPC counters), nodes (features, partitions), ping.  Ping is
 * no credential check. */
SLUICE_API sluice_err sluice_client_diag(sluice_client_t *c,
                                         sluice_rest_diag_t *out,
                                         sluice_call_t *call,
                                         sluice_error_t *err);
SLUICE_API sluice_err sluice_client_nodes(sluice_client_t *c,
                                          sluice_rest_nodes_t *out,
                                          sluice_call_t *call,
                                          sluice_error_t *err);
SLUICE_API sluice_err sluice_client_ping(sluice_client_t *c,
                                         sluice_rest_ping_t *out,
                                         sluice_call_t *call,
                                         sluice_error_t *err);

/* GET node/{name}: that node's record (its `address` is Slurm's NodeAddr).
 * OK with the record in *out (the caller clears it with
 * sluice_rest_nodes_clear()); NOT_FOUND (SLUICE_ENOTFOUND) when slurmctld's
 * healthy answer holds no record of that name; every other outcome as for
 * any GET. */
SLUICE_API sluice_err sluice_client_node(sluice_client_t *c,
                                         const char *name,
                                         sluice_rest_nodes_t *out,
                                         sluice_call_t *call,
                                         sluice_error_t *err);

/* ---- helpers used by `sluice check` ------------------------------------ */

/* Does a node with the comma-separated `features` satisfy `constraint`?
 * Supported syntax: feature names joined by '&' and '|' ('&' binds
 * tighter).  Returns 1 satisfied, 0 not satisfied, -1 when the constraint
 * uses other syntax (brackets, counts, '*', parentheses): not checked. */
SLUICE_API int sluice_constraint_match(const char *constraint, const char *features);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_CLIENT_H */
