/* SPDX-License-Identifier: Apache-2.0 */
/* cluster.h - the typed cluster operations the launcher is written
 * against (sluice_cluster_ops_t, the submit and lookup outcomes it
 * reports), and their implementation over the slurmrestd client.
 *
 * The launcher (launcher.h) takes a sluice_cluster_ops_t so that its tests
 * can use fakes; a program that runs launches for real fills the table with
 * sluice_cluster_rest_ops().  Job views cross
 * this interface as sluice_jobview_t (jobdesc.h), so nothing above it sees
 * a slurmrestd version difference.
 */
#ifndef SLUICE_CLUSTER_H
#define SLUICE_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/client.h>
#include <sluice/common.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/jobdesc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of a lookup: FOUND, NOT_FOUND (a healthy answer: no such job) or
 * UNAVAILABLE (nothing is known).  How a call's outcome becomes one, and a
 * submit's: docs/client.md, "From the wire to the launcher". */
typedef enum {
    SLUICE_LOOKUP_FOUND = 0,
    SLUICE_LOOKUP_NOT_FOUND,
    SLUICE_LOOKUP_UNAVAILABLE,
} sluice_lookup;

/* ---- the operations ------------------------------------------------------ */

/* Outcome of a submit.  Only REJECTED proves that no job exists. */
typedef enum {
    SLUICE_SUBMIT_OK = 0,      /* accepted; job_id is set */
    SLUICE_SUBMIT_REJECTED,    /* Slurm refused it (error number and text) */
    SLUICE_SUBMIT_UNCERTAIN,   /* timeout, dropped connection, 5xx, auth during the POST */
    SLUICE_SUBMIT_UNAVAILABLE, /* provably not sent (refused connect, TLS handshake, connect
                                  timeout, no usable token): the same attempt is POSTed again */
} sluice_submit_outcome;

/* What sluice_cluster_ops_t.submit reports besides the outcome. */
typedef struct {
    uint64_t job_id;  /* OK: the job (hetjob: the leader) */
    int error_number; /* REJECTED: Slurm's error number */
    char detail[256]; /* REJECTED/UNCERTAIN/UNAVAILABLE: why; OK: warnings, if any */
    /* OK: the cluster of a job id answered as "<id>;<cluster>" (a
     * federation or multi-cluster routing sent the job elsewhere); "" for a
     * plain id.  The launcher refuses such a job: it cancels it and ends
     * the launch (docs/state-machine.md, "Ownership"). */
    char cluster[64];
} sluice_submit_result_t;

/* One submit of a batch (sluice_cluster_ops_t.submit_many). */
typedef struct {
    const sluice_jobdesc_t *descs; /* descs[0] carries the script */
    size_t n;
} sluice_submit_req_t;

/* One entry of a batched state read. */
typedef struct {
    bool present;         /* false: the job is no longer in the live queue */
    sluice_job_base base; /* hetjob: the leader's (the adapter may combine) */
    uint32_t flags;       /* SLUICE_JOB_FLAG() bits */
} sluice_job_state_t;

/* The cluster operations.  Every function returns a sluice_lookup where a
 * lookup is involved: FOUND, NOT_FOUND (a healthy answer: no such job) or
 * UNAVAILABLE (timeout, 5xx, auth refresh pending, slurmdbd down; nothing
 * is known).  Job views returned through `views_out` are a new array of
 * `*n_out` records that the launcher frees with sluice_jobview_clear() and
 * free().  `user` is the Slurm user sluice submits as. */
typedef struct {
    /* POST the components (descs[0] carries the script). */
    sluice_submit_outcome (*submit)(void *arg,
                                    const sluice_jobdesc_t *descs,
                                    size_t n,
                                    sluice_submit_result_t *out);
    /* Optional: POST `n` independent submits, at most `in_flight` of them
     * at the same time.  Fills outcomes[i] and results[i] for reqs[i];
     * each outcome stands alone (one UNCERTAIN says nothing about the
     * others).  Returns only when every POST has its outcome.  NULL: the
     * launcher calls `submit` once per request, in order. */
    void (*submit_many)(void *arg,
                        const sluice_submit_req_t *reqs,
                        size_t n,
                        unsigned in_flight,
                        sluice_submit_outcome *outcomes,
                        sluice_submit_result_t *results);
    /* Full live record of one job, one view per hetjob component. */
    sluice_lookup (*get_job)(void *arg,
                             uint64_t job_id,
                             sluice_jobview_t **views_out,
                             size_t *n_out);
    /* Cheap batched read of many jobs' states: exactly one request.  Fills
     * states[i] for ids[i].  Returns FOUND when the answer is healthy (even
     * if no id is present), UNAVAILABLE otherwise. */
    sluice_lookup (*job_states)(void *arg,
                                const uint64_t *ids,
                                size_t n,
                                sluice_job_state_t *states);
    /* Live jobs with this exact name and user (every component). */
    sluice_lookup (*find_live_by_name)(
        void *arg, const char *name, const char *user, sluice_jobview_t **views_out, size_t *n_out);
    /* Accounting jobs with this name and user submitted in [start, end]
     * (epoch seconds).  Accounting may carry no comment. */
    sluice_lookup (*find_acct_by_name)(void *arg,
                                       const char *name,
                                       const char *user,
                                       int64_t window_start,
                                       int64_t window_end,
                                       sluice_jobview_t **views_out,
                                       size_t *n_out);
    /* Accounting record of a job that left the live queue. */
    sluice_lookup (*acct_job)(void *arg,
                              uint64_t job_id,
                              sluice_jobview_t **views_out,
                              size_t *n_out);
    /* DELETE the job (signal 0: Slurm's default).  SLUICE_OK when sent. */
    sluice_err (*cancel)(void *arg, uint64_t job_id, int signal, sluice_error_t *err);
    void *arg;
    /* Optional: true when job_states is one request that reads only the
     * listed jobs (slurmrestd's jobs/state, v0.0.40+), false while that is
     * not known or the read is the whole job table (v0.0.38).  With the
     * poll interval left to sluice (poll_max_ms 0) it picks the longest
     * interval: 2 s when true, 10 s otherwise.  NULL: false. */
    bool (*states_are_cheap)(void *arg);
    /* Optional: the Slurm user these operations act as (the token's user:
     * rest.user, or the token's own `sun` claim), borrowed and fixed for
     * the table's life.  The launcher takes it when its options name no
     * user.  NULL: unknown. */
    const char *(*user)(void *arg);
    /* Optional: the address of one node (Slurm's NodeAddr, what slurmd is
     * reached at; its name may not resolve on the other nodes) into `out`
     * (`cap` bytes, NUL included).  FOUND with the address; NOT_FOUND when
     * slurmctld's healthy answer has no such node, or a record without an
     * address, or one that does not fit `cap`; UNAVAILABLE when nothing is
     * known.  NULL: no address can be read (peers.env is then not written:
     * see launcher.h). */
    sluice_lookup (*node_address)(void *arg, const char *node, char *out, size_t cap);
} sluice_cluster_ops_t;

/* ---- over the slurmrestd client ------------------------------------------ */

/* The cluster operations over the slurmrestd client.  Make the object
 * with sluice_cluster_rest_new(), fill a table with
 * sluice_cluster_rest_ops(), free it with sluice_cluster_rest_free() after
 * the last use of the table.
 *
 * Outcomes (docs/client.md, "From the wire to the launcher", has the whole
 * mapping): a submit answered OK is SUBMIT_OK; a proven refusal (Slurm's
 * error number on a 4xx) is SUBMIT_REJECTED; a request that certainly
 * never left (connection refused, no usable token) is SUBMIT_UNAVAILABLE;
 * anything else, including a 5xx or a garbled 200, is SUBMIT_UNCERTAIN.
 * Lookups map OK to FOUND, NOT_FOUND to NOT_FOUND and every other outcome
 * to UNAVAILABLE.  Live lookups by name read the live job table.
 *
 * submit_many POSTs up to `in_flight` submits at once.  Every concurrent
 * POST uses its own client: `client` (borrowed: it must outlive the table)
 * serves the calling thread and every other operation; the others are made
 * from `cfg` (borrowed; NULL: no extra clients, submits stay sequential)
 * with sluice_client_new_from_config() the first time a batch needs them,
 * and reused after that.  A client that cannot be made, or whose token
 * names another user, is logged and the batch runs with fewer POSTs in
 * flight.  No client is ever used by two threads at once. */
typedef struct sluice_cluster_rest sluice_cluster_rest_t;

SLUICE_API sluice_err sluice_cluster_rest_new(sluice_cluster_rest_t **out,
                                              sluice_client_t *client,
                                              const sluice_config_t *cfg,
                                              sluice_error_t *err);

/* Fill `out` with the operations (submit_many included), bound to `r`. */
SLUICE_API void sluice_cluster_rest_ops(sluice_cluster_rest_t *r, sluice_cluster_ops_t *out);

/* Free the extra clients (never the borrowed one).  NULL-safe. */
SLUICE_API void sluice_cluster_rest_free(sluice_cluster_rest_t *r);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_CLUSTER_H */
