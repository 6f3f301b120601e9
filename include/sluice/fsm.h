/* SPDX-License-Identifier: Apache-2.0 */
/* fsm.h - the launcher state machine: events in, launch state + result out.
 *
 * Purpose:
 *   Decide what a launch is (ACCEPTED, SUBMITTING, PENDING, RUNNING,
 *   CANCELLING, DONE, and SUBMITTING's two inner states RECONCILING and
 *   RETRYING) and how it ended (NVFlare return codes) from the events the
 *   launcher records.  docs/state-machine.md is the written rule set.
 *
 * Shape (flux-core's event_job_update / event_job_action split):
 *   - sluice_fsm_apply() is the pure update: no I/O, no clock; the time of an
 *     event travels inside the event.  It either applies the event whole or
 *     leaves the launch untouched.
 *   - sluice_fsm_due() says which idempotent side effects the launcher should
 *     run now (submit, reconcile, cancel, lookups, pending timeout ...).
 *   - sluice_fsm_replay() folds a stored event log ({seq, time, name, context}
 *     JSON objects) through sluice_fsm_apply(), so a restart rebuilds exactly
 *     the state the live service had.
 *
 * Notes:
 *   - A launch in DONE never changes again; later events are accepted (the
 *     store keeps them) but ignored.
 *   - An event that the current state does not allow returns SLUICE_ESTATE and
 *     leaves the launch unchanged; replay treats it the same way.
 *   - sluice_fsm_launch_t holds no heap memory: copy it freely.
 *   - Thread-safety: no global state; a launch must not be shared between
 *     threads without the caller's lock.
 */
#ifndef SLUICE_FSM_H
#define SLUICE_FSM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/cluster.h> /* sluice_lookup */
#include <sluice/common.h>
#include <sluice/error.h>
#include <sluice/jobdesc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- names ------------------------------------------------------------- */

/* Launcher states.  NEW exists only before the "accepted" event.
 * RECONCILING (the POST's outcome is unknown: look the marker up) and
 * RETRYING (absence confirmed: a new attempt is allowed) are inner states
 * of SUBMITTING: callers, the store and the API show them as SUBMITTING
 * (sluice_fsm_state_public()).  They come last so that the older states
 * keep their values. */
#define SLUICE_FSM_STATE_MAP(XX)                                                                   \
    XX(NEW, "NEW")                                                                                 \
    XX(ACCEPTED, "ACCEPTED")                                                                       \
    XX(SUBMITTING, "SUBMITTING")                                                                   \
    XX(PENDING, "PENDING")                                                                         \
    XX(RUNNING, "RUNNING")                                                                         \
    XX(CANCELLING, "CANCELLING")                                                                   \
    XX(DONE, "DONE")                                                                               \
    XX(RECONCILING, "RECONCILING")                                                                 \
    XX(RETRYING, "RETRYING")

typedef enum {
#define SLUICE_FSM_STATE_ENUM(id, name) SLUICE_FSM_##id,
    SLUICE_FSM_STATE_MAP(SLUICE_FSM_STATE_ENUM)
#undef SLUICE_FSM_STATE_ENUM
        SLUICE_FSM_STATE_COUNT_
} sluice_fsm_state;

/* Results, valued as their NVFlare return codes. */
#define SLUICE_RESULT_MAP(XX)                                                                      \
    XX(SUCCEEDED, 0)                                                                               \
    XX(EXECUTION_ERROR, 1)                                                                         \
    XX(ABORTED, 9)                                                                                 \
    XX(WORKLOAD_101, 101)                                                                          \
    XX(WORKLOAD_102, 102)                                                                          \
    XX(WORKLOAD_103, 103)                                                                          \
    XX(INFRASTRUCTURE_ERROR, 104)                                                                  \
    XX(UNKNOWN, 127)

typedef enum {
#define SLUICE_RESULT_ENUM(id, code) SLUICE_RESULT_##id = code,
    SLUICE_RESULT_MAP(SLUICE_RESULT_ENUM)
#undef SLUICE_RESULT_ENUM
} sluice_result;

/* Event names as they appear in the event log. */
#define SLUICE_FSM_EVENT_MAP(XX)                                                                   \
    XX(ACCEPTED, "accepted")                                                                       \
    XX(SUBMIT_STARTED, "submit-started")                                                           \
    XX(SUBMITTED, "submitted")                                                                     \
    XX(SUBMIT_UNCERTAIN, "submit-uncertain")                                                       \
    XX(SUBMIT_REJECTED, "submit-rejected")                                                         \
    XX(ADOPTED, "adopted")                                                                         \
    XX(ABSENCE_CONFIRMED, "absence-confirmed")                                                     \
    XX(OBSERVED, "observed")                                                                       \
    XX(CANCEL_REQUESTED, "cancel-requested")                                                       \
    XX(CANCEL_SENT, "cancel-sent")                                                                 \
    XX(PENDING_TIMEOUT, "pending-timeout")                                                         \
    XX(SECRET_UNAVAILABLE, "secret-unavailable")                                                   \
    XX(POOL_EXIT, "pool-exit")                                                                     \
    XX(POOL_EXITS_READ, "pool-exits-read")                                                         \
    XX(UNSCHEDULABLE, "unschedulable")                                                             \
    XX(SUBMIT_RESENT, "submit-resent")                                                             \
    XX(CANCEL_WITHDRAWN, "cancel-withdrawn")                                                       \
    XX(DEPENDENCY_FAILED, "dependency-failed")

typedef enum {
#define SLUICE_FSM_EVENT_ENUM(id, name) SLUICE_EV_##id,
    SLUICE_FSM_EVENT_MAP(SLUICE_FSM_EVENT_ENUM)
#undef SLUICE_FSM_EVENT_ENUM
        SLUICE_EV_COUNT_
} sluice_fsm_event_type;

typedef enum {
    SLUICE_SOURCE_LIVE = 0,
    SLUICE_SOURCE_ACCOUNTING,
} sluice_lookup_source;

/* "PENDING" ...; NULL for a value outside the table. */
SLUICE_API const char *sluice_fsm_state_name(sluice_fsm_state state);
/* The state as callers see it: SUBMITTING for RECONCILING and RETRYING,
 * the state itself otherwise (a value outside the table is returned as
 * is).  Summaries, transitions reported by the launcher, metrics and the
 * API use this. */
SLUICE_API sluice_fsm_state sluice_fsm_state_public(sluice_fsm_state state);
/* "SUCCEEDED" ...; "WORKLOAD_101" ...; NULL for a code outside the table. */
SLUICE_API const char *sluice_result_name(int code);
/* "observed" ...; NULL for a value outside the table. */
SLUICE_API const char *sluice_fsm_event_name(sluice_fsm_event_type type);
SLUICE_API const char *sluice_lookup_name(sluice_lookup lookup);
SLUICE_API const char *sluice_lookup_source_name(sluice_lookup_source source);

/* Reverse lookups (exact, case-sensitive).  Return false when the name is
 * unknown; *out is then untouched. */
SLUICE_API bool sluice_fsm_state_from_name(const char *name, sluice_fsm_state *out);
SLUICE_API bool sluice_fsm_event_from_name(const char *name, sluice_fsm_event_type *out);
SLUICE_API bool sluice_lookup_from_name(const char *name, sluice_lookup *out);
SLUICE_API bool sluice_lookup_source_from_name(const char *name, sluice_lookup_source *out);

/* ---- limits ------------------------------------------------------------ */

#define SLUICE_FSM_MAX_JOBS 16    /* job ids / hetjob components per launch */
#define SLUICE_FSM_MAX_POOLS 16   /* pools with an exit file */
#define SLUICE_FSM_MARKER_MAX 200 /* job name or comment, NUL included */
#define SLUICE_FSM_NAME_MAX 64    /* caller or pool name, NUL included */
#define SLUICE_FSM_DETAIL_MAX 256 /* free text in an event, NUL included */
#define SLUICE_FSM_REASON_MAX 320 /* the recorded reason, NUL included */
#define SLUICE_FSM_RAW_MAX 24     /* an exit file's text that is no status, NUL included */

/* Length of the longest prefix of `s` that fits in `max` bytes with its NUL
 * and does not end inside a UTF-8 sequence (strlen(s) when all fits).  Free
 * text from Slurm (a state description listing hundreds of nodes) is cut to
 * this before it goes into an event. */
SLUICE_API size_t sluice_fsm_text_fit(const char *s, size_t max);
/* A new copy of `s` cut by sluice_fsm_text_fit(); NULL for a NULL `s` or
 * out of memory. */
SLUICE_API char *sluice_fsm_text_dup(const char *s, size_t max);

/* ---- configuration ----------------------------------------------------- */

/* Per-launch settings; fixed for the launch's life (replay needs the same). */
typedef struct {
    unsigned miss_budget;   /* healthy accounting misses that end a launch; default 5 */
    double miss_spacing;    /* seconds that must separate two counted misses; default 6 */
    double pending_timeout; /* seconds of observed pending time; 0 = none */
    double cancel_resend;   /* seconds before a sent cancel is due again; default 30 */
    bool requeue_allowed;   /* REQUEUED is a live state (else the launch is cancelled) */
} sluice_fsm_config_t;

/* Fill *cfg with the defaults above (pending_timeout 600 s as NVFlare). */
SLUICE_API void sluice_fsm_config_default(sluice_fsm_config_t *cfg);

/* ---- events ------------------------------------------------------------ */

/* One event.  Strings and arrays are owned by the event and released by
 * sluice_fsm_event_clear(); fields an event type does not use stay zero. */
typedef struct {
    sluice_fsm_event_type type;
    int64_t seq;                           /* position in the launch's event log */
    double time;                           /* epoch seconds, supplied by the caller's clock */
    char *by;                              /* optional audit name of who caused it (all events) */
    uint32_t attempt;                      /* submit-started, submit-resent, adopted */
    char *job_name;                        /* submit-started: marker name */
    char *comment;                         /* submit-started: marker comment */
    uint64_t job_ids[SLUICE_FSM_MAX_JOBS]; /* submitted, adopted */
    size_t n_job_ids;
    char *detail;         /* submit-uncertain, submit-rejected, observed (optional), unschedulable,
                             dependency-failed */
    sluice_lookup lookup; /* observed */
    sluice_lookup_source source; /* observed, adopted */
    sluice_jobview_t *jobs;      /* observed FOUND: one per component (owned) */
    size_t n_jobs;
    char *caller;   /* cancel-requested */
    char *pool;     /* pool-exit */
    int exit_code;  /* pool-exit */
    int signal;     /* pool-exit */
    bool first;     /* pool-exit: the script recorded this pool as the first to fail */
    bool signalled; /* pool-exit: exit/.signalled: the script itself was signalled */
    bool unknown;   /* pool-exit: the exit file held no status 0-255 (the pool failed,
                       how is unknown); exit_code and signal are 0 */
    char *raw;      /* pool-exit with unknown: what the file held, printable, at most
                       SLUICE_FSM_RAW_MAX - 1 bytes (optional) */
} sluice_fsm_event_t;

/* Release everything the event owns and zero it.  NULL-safe.  Frees the job
 * views' strings itself (it does not need sluice_jobview_clear()). */
SLUICE_API void sluice_fsm_event_clear(sluice_fsm_event_t *ev);

/* Parse one log entry {seq, time, name, context} strictly: unknown keys,
 * unknown names, wrong types and out-of-range values are SLUICE_EINVAL with
 * the offending field named in err.  *out is filled only on success (caller
 * clears it with sluice_fsm_event_clear()). */
SLUICE_API sluice_err sluice_fsm_event_from_json(const json_t *entry,
                                                 sluice_fsm_event_t *out,
                                                 sluice_error_t *err);

/* The log entry for an event: *out receives a new reference.  Fails with
 * SLUICE_EINVAL when the event is not valid for its type. */
SLUICE_API sluice_err sluice_fsm_event_to_json(const sluice_fsm_event_t *ev,
                                               json_t **out,
                                               sluice_error_t *err);

/* ---- the launch -------------------------------------------------------- */

typedef enum {
    SLUICE_CANCEL_NONE = 0,
    SLUICE_CANCEL_CALLER,          /* the caller's abort: ends ABORTED */
    SLUICE_CANCEL_PENDING_TIMEOUT, /* ends INFRASTRUCTURE_ERROR "pending timeout" */
    SLUICE_CANCEL_REQUEUE,         /* requeued although requeue is not allowed */
    SLUICE_CANCEL_UNSCHEDULABLE,   /* a pending reason that can never clear: ends
                                      INFRASTRUCTURE_ERROR */
    SLUICE_CANCEL_DEPENDENCY,      /* the launch it depends on can no longer satisfy
                                      the condition: ends INFRASTRUCTURE_ERROR */
} sluice_cancel_intent;

typedef struct {
    char name[SLUICE_FSM_NAME_MAX];
    int exit_code;
    int signal;
    bool first;     /* the script's exit/.first names this pool */
    bool signalled; /* read with exit/.signalled present (the script was signalled) */
    bool unknown;   /* the exit file held no status: the pool failed, how is unknown */
    char raw[SLUICE_FSM_RAW_MAX]; /* with unknown: what the file held (printable) */
} sluice_fsm_pool_exit_t;

/* The whole state of one launch.  Plain data: no pointers. */
typedef struct {
    sluice_fsm_config_t cfg;
    sluice_fsm_state state;
    int result; /* sluice_result value; 127 until DONE */
    char reason[SLUICE_FSM_REASON_MAX];
    double last_time;   /* time of the last applied event */
    int64_t last_seq;   /* seq of the last applied event; -1 before any */
    uint64_t n_applied; /* events applied */
    uint64_t n_ignored; /* events received after DONE */
    /* submit */
    uint32_t attempt;
    char job_name[SLUICE_FSM_MARKER_MAX];
    char comment[SLUICE_FSM_MARKER_MAX];
    double post_time; /* time of the last POST: submit-started or submit-resent */
    uint64_t job_ids[SLUICE_FSM_MAX_JOBS];
    size_t n_job_ids;
    /* cancel */
    sluice_cancel_intent intent;
    char caller[SLUICE_FSM_NAME_MAX];
    char unschedulable[SLUICE_FSM_NAME_MAX]; /* the pending reason that never clears */
    bool cancel_sent;
    double cancel_sent_time;
    /* observation */
    bool left_queue; /* live lookup said NOT_FOUND: read accounting */
    unsigned misses; /* counted healthy accounting misses */
    bool has_miss;
    double last_miss_time; /* time of the last counted miss */
    bool has_pending;      /* a healthy pending observation was seen */
    double first_pending;
    bool prev_pending; /* the previous observation was healthy and pending */
    double last_pending;
    double pending_observed; /* accumulated observed pending seconds */
    /* hetjob */
    size_t n_components; /* components in the last FOUND observation */
    sluice_fsm_pool_exit_t pools[SLUICE_FSM_MAX_POOLS];
    size_t n_pools;
    bool settling;      /* final verdict known; waiting for the pool exit files */
    double settle_time; /* time of the observation that started settling */
    int verdict;        /* the verdict while settling */
    char verdict_reason[SLUICE_FSM_REASON_MAX];
    /* A component read CANCELLED although sluice did not cancel: the exit
     * files decide whether a pool failed (docs/state-machine.md). */
    bool unasked_cancel;
    int verdict_rest;    /* best verdict of the other components (SUCCEEDED: none) */
    int slurm_exit_code; /* batch exit code of the final observation */
    /* dependency-failed: why the dependency can never be satisfied */
    char dependency[SLUICE_FSM_DETAIL_MAX];
} sluice_fsm_launch_t;

/* Start a launch in NEW with the given settings (NULL = defaults). */
SLUICE_API void sluice_fsm_launch_init(sluice_fsm_launch_t *l, const sluice_fsm_config_t *cfg);

/* What one sluice_fsm_apply() did.  `from` and `to` are the states
 * themselves (RECONCILING, not SUBMITTING). */
typedef struct {
    sluice_fsm_state from;
    sluice_fsm_state to;
    int result;                         /* after the event */
    bool ignored;                       /* the launch was already DONE */
    char reason[SLUICE_FSM_REASON_MAX]; /* why (empty when nothing was decided) */
} sluice_fsm_transition_t;

/* The pure update: apply one event to the launch.
 * Returns SLUICE_OK (the event is applied, or ignored because the launch is
 * DONE), SLUICE_ESTATE (not allowed in the current state; launch unchanged)
 * or SLUICE_EINVAL (malformed event; launch unchanged).  `out` may be NULL. */
SLUICE_API sluice_err sluice_fsm_apply(sluice_fsm_launch_t *l,
                                       const sluice_fsm_event_t *ev,
                                       sluice_fsm_transition_t *out,
                                       sluice_error_t *err);

/* Side effects the launcher should run now (bits). */
enum {
    SLUICE_DUE_SUBMIT = 1u << 0,            /* post the (first or new) attempt */
    SLUICE_DUE_RECONCILE = 1u << 1,         /* look the marker up (live, then accounting) */
    SLUICE_DUE_NEW_ATTEMPT = 1u << 2,       /* absence confirmed: start attempt+1 */
    SLUICE_DUE_CANCEL = 1u << 3,            /* send (or resend) the cancel */
    SLUICE_DUE_LIVE_LOOKUP = 1u << 4,       /* read the job from the live queue */
    SLUICE_DUE_ACCOUNTING_LOOKUP = 1u << 5, /* read the job from accounting */
    SLUICE_DUE_PENDING_TIMEOUT = 1u << 6,   /* record "pending-timeout" */
    SLUICE_DUE_POOL_EXITS = 1u << 7,        /* read exit/<pool> files, then "pool-exits-read" */
};

/* The "what is due now" function (flux event_job_action): a bit set of
 * SLUICE_DUE_* for the launch at time `now`.  Pure; 0 for a DONE launch. */
SLUICE_API unsigned sluice_fsm_due(const sluice_fsm_launch_t *l, double now);

/* Field-by-field equality of two launches (replay checks). */
SLUICE_API bool sluice_fsm_launch_equal(const sluice_fsm_launch_t *a, const sluice_fsm_launch_t *b);

/* Rebuild a launch by folding a JSON array of log entries through
 * sluice_fsm_apply(), starting from sluice_fsm_launch_init(out, cfg).
 * seq must strictly increase.  Entries the state refused (SLUICE_ESTATE)
 * are skipped exactly as they were when live.  A malformed entry is
 * SLUICE_EINVAL naming "events[i].<field>"; *out is then unspecified. */
SLUICE_API sluice_err sluice_fsm_replay(const sluice_fsm_config_t *cfg,
                                        const json_t *events,
                                        sluice_fsm_launch_t *out,
                                        sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_FSM_H */
