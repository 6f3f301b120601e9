/* SPDX-License-Identifier: Apache-2.0 */
/* jobdesc.h - the version-neutral Slurm job model shared by rendering and the
 * REST adapters.
 *
 * Rendering fills one sluice_jobdesc_t per component (one for a plain job,
 * one per pool for a hetjob); the REST adapter of the server's API version
 * turns them into that version's submit body.  In the other direction each
 * adapter normalises a job record (live or accounting) into a
 * sluice_jobview_t, so nothing above the adapters sees a version difference.
 *
 * Ownership: every string in these structs is owned by the struct and freed
 * by the matching _clear() function.  Only component 0 carries the script.
 */
#ifndef SLUICE_JOBDESC_H
#define SLUICE_JOBDESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- request side ------------------------------------------------------ */

/* One environment entry sent in the REST `environment` field. */
typedef struct {
    char *name;
    char *value;
} sluice_envvar_t;

typedef struct {
    char *name;          /* Slurm job name (the marker's name part) */
    char *comment;       /* "sluice:<launch_id>:<attempt>" */
    char *partition;     /* NULL: the cluster's default */
    char *account;       /* NULL: the user's default */
    char *qos;           /* NULL: the association's default */
    char *reservation;   /* NULL: none */
    uint32_t time_limit; /* minutes; 0 = not set (partition default) */
    uint32_t nodes;      /* >= 1 */
    uint32_t tasks_per_node;
    uint32_t cpus_per_task;    /* 0 = not set */
    uint64_t mem_per_node_mib; /* 0 = not set */
    uint32_t gpus_per_node;    /* 0 = none */
    char *gres_name;           /* "gpu" or a typed name like "gpu:a100"; NULL = "gpu" */
    char *constraint;          /* site constraint & series constraint, or NULL */
    char *workdir;             /* absolute, cluster-side path */
    char *std_out;             /* absolute, cluster-side path (may hold %j) */
    char *std_err;
    bool hold;
    char *dependency; /* e.g. "after:123" or NULL */
    bool requeue;     /* false: the adapter sends the version's "no requeue" */
    char *signal;     /* e.g. "USR1@120" or NULL */
    bool exclusive;
    sluice_envvar_t *env; /* the REST environment: PATH, LANG, HOME only */
    size_t n_env;
    char *script; /* component 0 only; NULL elsewhere */
} sluice_jobdesc_t;

/* Free every string and the env array; leaves the struct zeroed. NULL-safe. */
SLUICE_API void sluice_jobdesc_clear(sluice_jobdesc_t *d);

/* A deep copy of `src` into `dst` (whose old contents are not freed).  On
 * failure `dst` is left empty.  Errors: SLUICE_EINVAL, SLUICE_ENOMEM. */
SLUICE_API sluice_err sluice_jobdesc_copy(sluice_jobdesc_t *dst,
                                          const sluice_jobdesc_t *src,
                                          sluice_error_t *err);

/* Append one REST environment entry (copies both strings). */
SLUICE_API sluice_err sluice_jobdesc_setenv(sluice_jobdesc_t *d,
                                            const char *name,
                                            const char *value,
                                            sluice_error_t *err);

/* The neutral model as JSON (for golden files and dry runs): a new
 * reference, or NULL when out of memory. */
SLUICE_API json_t *sluice_jobdesc_to_json(const sluice_jobdesc_t *d);

/* ---- response side ----------------------------------------------------- */

/* Slurm base job states (exactly one per job). */
#define SLUICE_JOB_BASE_MAP(XX)                                                                    \
    XX(PENDING)                                                                                    \
    XX(RUNNING)                                                                                    \
    XX(SUSPENDED)                                                                                  \
    XX(COMPLETED)                                                                                  \
    XX(CANCELLED)                                                                                  \
    XX(FAILED)                                                                                     \
    XX(TIMEOUT)                                                                                    \
    XX(NODE_FAIL)                                                                                  \
    XX(PREEMPTED)                                                                                  \
    XX(BOOT_FAIL)                                                                                  \
    XX(DEADLINE)                                                                                   \
    XX(OUT_OF_MEMORY)

typedef enum {
    SLUICE_JOB_BASE_UNKNOWN = 0,
#define SLUICE_JOB_BASE_ENUM(n) SLUICE_JOB_##n,
    SLUICE_JOB_BASE_MAP(SLUICE_JOB_BASE_ENUM)
#undef SLUICE_JOB_BASE_ENUM
        SLUICE_JOB_BASE_COUNT_
} sluice_job_base;

/* Slurm job state flags (zero or more per job), as bits. */
#define SLUICE_JOB_FLAG_MAP(XX)                                                                    \
    XX(LAUNCH_FAILED)                                                                              \
    XX(UPDATE_DB)                                                                                  \
    XX(REQUEUED)                                                                                   \
    XX(REQUEUE_HOLD)                                                                               \
    XX(SPECIAL_EXIT)                                                                               \
    XX(RESIZING)                                                                                   \
    XX(CONFIGURING)                                                                                \
    XX(COMPLETING)                                                                                 \
    XX(STOPPED)                                                                                    \
    XX(RECONFIG_FAIL)                                                                              \
    XX(POWER_UP_NODE)                                                                              \
    XX(REVOKED)                                                                                    \
    XX(REQUEUE_FED)                                                                                \
    XX(RESV_DEL_HOLD)                                                                              \
    XX(SIGNALING)                                                                                  \
    XX(STAGE_OUT)                                                                                  \
    XX(EXPEDITING)

enum {
#define SLUICE_JOB_FLAG_BIT(n) SLUICE_JOB_FLAG_BIT_##n,
    SLUICE_JOB_FLAG_MAP(SLUICE_JOB_FLAG_BIT)
#undef SLUICE_JOB_FLAG_BIT
        SLUICE_JOB_FLAG_COUNT_
};
#define SLUICE_JOB_FLAG(n) (UINT32_C(1) << SLUICE_JOB_FLAG_BIT_##n)

/* "PENDING" etc.; "UNKNOWN" for an out-of-range value. */
SLUICE_API const char *sluice_job_base_name(sluice_job_base base);
/* Parse a base state name (exact, upper case); SLUICE_JOB_BASE_UNKNOWN if none. */
SLUICE_API sluice_job_base sluice_job_base_parse(const char *name);
/* The flag bit for a name, or 0 when the name is not a known flag. */
SLUICE_API uint32_t sluice_job_flag_parse(const char *name);
/* Name of a single flag bit, or NULL. */
SLUICE_API const char *sluice_job_flag_name(uint32_t bit);
/* The requeue flags: a job that carries one comes back PENDING (REQUEUED),
 * held (REQUEUE_HOLD, SPECIAL_EXIT), whatever its base state says. */
#define SLUICE_JOB_REQUEUE_FLAGS                                                                   \
    (SLUICE_JOB_FLAG(REQUEUED) | SLUICE_JOB_FLAG(REQUEUE_HOLD) | SLUICE_JOB_FLAG(SPECIAL_EXIT))
/* The flags of a job that has ended but is not done: its epilog
 * (COMPLETING) or burst-buffer stage-out (STAGE_OUT) still runs, and
 * slurmctld may requeue it when that ends. */
#define SLUICE_JOB_ENDING_FLAGS (SLUICE_JOB_FLAG(COMPLETING) | SLUICE_JOB_FLAG(STAGE_OUT))

/* Whether Slurm is done with a job for good (the one "job is final" rule:
 * the state machine's, docs/state-machine.md "Slurm state flags"): its base
 * state has ended (neither PENDING, RUNNING, SUSPENDED nor UNKNOWN, which a
 * v0.0.38 state string leaves when it names a flag), and it carries no
 * ending flag and no requeue flag. */
SLUICE_API bool sluice_job_is_final(sluice_job_base base, uint32_t flags);

/* One job record, normalised (one component of a hetjob). */
typedef struct {
    uint64_t job_id;
    uint64_t het_job_id; /* 0 when not a hetjob component */
    uint32_t het_job_offset;
    char *name;
    char *comment; /* may be NULL (accounting without job_comment) */
    char *user_name;
    char *partition;
    char *nodes;        /* hostlist expression, or NULL */
    char *state_reason; /* "None", "Priority", ... or NULL */
    /* slurmctld's longer text, e.g. "ReqNodeNotAvail, UnavailableNodes:n1",
     * or NULL (empty in most records; absent in accounting) */
    char *state_description;
    sluice_job_base base;
    uint32_t flags;  /* SLUICE_JOB_FLAG(...) bits */
    bool has_exit;   /* exit_code/exit_signal are meaningful */
    int exit_code;   /* workload return code (0-255) */
    int exit_signal; /* terminating signal number, 0 = none */
    bool has_derived;
    int derived_exit_code;
    int derived_exit_signal;
    int64_t submit_time; /* epoch seconds; 0 = unknown */
    int64_t start_time;
    int64_t end_time;
    uint32_t restart_count;
    /* Set by the adapters: the record belongs to another cluster than the
     * one slurmrestd serves (its `cluster` differs from the answer's
     * meta.slurm.cluster), or to a federation (federation_origin or
     * federation_siblings_* set).  sluice refuses multi-cluster routing:
     * such a record of ours ends the launch INFRASTRUCTURE_ERROR. */
    bool other_cluster;
    /* Set by the launcher, never by a parser: slurmctld FAILED the job
     * before it started, with a pending reason that never clears (Slurm
     * 24.11 fails a job whose node count its partition cannot hold at once,
     * with BadConstraints).  Not the workload's failure. */
    bool failed_unschedulable;
} sluice_jobview_t;

SLUICE_API void sluice_jobview_clear(sluice_jobview_t *v);

/* A raw wait(2) status (what v0.0.38 and v0.0.39 report) split into return
 * code and signal. */
SLUICE_API void sluice_wait_status_split(int64_t status, int *exit_code, int *signal);

/* ---- render JSON ------------------------------------------------------- */

/* Inverse of sluice_jobdesc_to_json(): fill *out (zeroed first) from the
 * object.  Unknown keys are SLUICE_EINVAL (the field is named).  Caller
 * clears *out with sluice_jobdesc_clear(). */
SLUICE_API sluice_err sluice_jobdesc_from_json(const json_t *obj,
                                               sluice_jobdesc_t *out,
                                               sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_JOBDESC_H */
