/* SPDX-License-Identifier: Apache-2.0 */
/* launcher.h - the supervisor that drives launches from acceptance to a
 * terminal state: exactly-once submit, one batched poll for every launch,
 * owned cancel, artifacts, recovery.
 *
 * Purpose:
 *   Tie the store (durable event log), the state machine (pure decisions)
 *   and the cluster (REST) together.  Every side effect follows the flux
 *   shape: the fsm says what is due (sluice_fsm_due), the launcher carries it
 *   out, records the outcome as an event in the store first, and then folds
 *   the stored event back into its in-memory state.  The in-memory state is
 *   therefore always the replay of the log.
 *
 * Inputs the launcher does not build itself (function tables, so the REST
 * client and the renderer can be bridged in and tests can fake them):
 *   - sluice_cluster_ops_t: the typed cluster operations (cluster.h);
 *   - sluice_staging_ops_t: staging files (secret file, peers.env, exit
 *     files, archive and removal);
 *   - a clock (now_ms) and a sleep function.
 *
 * Notes:
 *   - One launcher object per store holds the store's supervisor lock.
 *     Other processes may append `cancel-requested` to the store; the
 *     launcher picks such events up at the start of every cycle.
 *   - Secret values given at accept time are kept in memory only.
 *   - Thread-safety: a launcher object is driven by one thread at a time
 *     (step, run, wait, cancel, recover, tracked).  sluice_launcher_accept(),
 *     sluice_launcher_wake(), sluice_launcher_idle() and
 *     sluice_launcher_stats() may be called from any thread, also while a
 *     cycle runs: an accepted launch joins the cycle at its next intake
 *     (the start and the end of every step).  Inside a cycle the launcher
 *     runs staging `prepare` hooks and `submit_many` POSTs on up to
 *     submit_in_flight threads of its own.
 */
#ifndef SLUICE_LAUNCHER_H
#define SLUICE_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/cluster.h>
#include <sluice/common.h>
#include <sluice/error.h>
#include <sluice/fsm.h>
#include <sluice/jobdesc.h>
#include <sluice/launch.h>
#include <sluice/render.h>
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- staging ----------------------------------------------------------- */

/* One secret value held in memory for a launch (borrowed at accept time;
 * the launcher keeps its own zeroed-on-free copy). */
typedef struct {
    const char *name;
    const char *value;
} sluice_secret_t;

/* One per-pool exit file (`exit/<pool>`).  `first`: the script's record
 * `exit/.first` names this pool as the first that failed on its own (not
 * stopped by the script, not while the script itself was being
 * cancelled). */
typedef struct {
    char name[SLUICE_FSM_NAME_MAX];
    int exit_code;
    int signal;
    bool first;
    /* `exit/.signalled` was there: the script's TERM/INT trap ran (an
     * outside cancel reached the script).  The same for every pool read. */
    bool signalled;
    /* The file held no status 0-255 (garbage, a number out of range, or a
     * file that could not be read as a job-owned file): the pool failed,
     * how is unknown; exit_code and signal are 0 and `raw` holds the
     * file's text (printable bytes only, cut) or the reason it was not
     * read. */
    bool unknown;
    char raw[SLUICE_FSM_RAW_MAX];
} sluice_pool_exit_t;

/* The partner of a dependent launch as handed on in peers.env: the nodes of
 * each of its job's components (hetjob order), each with the address Slurm
 * reaches it at (NodeAddr, read through slurmrestd), never a guess. */
typedef struct {
    const char *name;    /* node name, as Slurm lists it */
    const char *address; /* its NodeAddr */
} sluice_peer_node_t;

typedef struct {
    const sluice_peer_node_t *nodes; /* Slurm's order; nodes[0] is the first host */
    size_t n_nodes;
} sluice_peer_component_t;

typedef struct {
    const char *launch_id; /* the launch depended on */
    uint64_t job_id;       /* its job (a hetjob: the leader's id) */
    const sluice_peer_component_t *components;
    size_t n_components;
} sluice_peers_t;

/* Staging hooks; any member may be NULL (then the step is skipped and
 * counts as done). */
typedef struct {
    /* Create the attempt's staging and write its 0600 secret file before
     * the POST.  Failing here means no POST this cycle (retried).  Called
     * for up to submit_in_flight launches at once, from several threads
     * (never twice at once for one launch): it must be thread-safe.
     * `render` is the launch's stored render when the launcher has it in
     * memory (borrowed, read-only), else NULL: read it from the store. */
    sluice_err (*prepare)(void *arg,
                          const char *launch_id,
                          uint32_t attempt,
                          const json_t *render,
                          const sluice_secret_t *secrets,
                          size_t n_secrets,
                          sluice_error_t *err);
    /* Make every write of the `prepare` calls before it durable.  When set,
     * `prepare` may leave its files unsynced: the launcher calls `sync`
     * once per chunk of a batch, after the chunk's prepares and before its
     * markers are committed (so before any POST).  NULL: `prepare` is
     * durable on its own. */
    sluice_err (*sync)(void *arg, sluice_error_t *err);
    /* Read the pool exit files of a finished attempt: up to `max` entries
     * into `out`, count in *n_out. */
    sluice_err (*read_pool_exits)(void *arg,
                                  const char *launch_id,
                                  uint32_t attempt,
                                  sluice_pool_exit_t *out,
                                  size_t max,
                                  size_t *n_out,
                                  sluice_error_t *err);
    /* Write `peers.env` into the dependent launch's staging (atomically:
     * a waiting script never reads half a file): the partner's launch and
     * job id, and the names and addresses of its nodes, per component and
     * per pool (docs/rendering.md, "peers.env").  Called once the partner
     * runs and every address is known; a failure is retried next cycle. */
    sluice_err (*write_peers)(void *arg,
                              const char *dependent_id,
                              uint32_t dependent_attempt,
                              const sluice_peers_t *peers,
                              sluice_error_t *err);
    /* Keep every attempt's stdout/stderr in the store (sluice_store_put_log)
     * and, unless `artifact_dir` is NULL (a PostgreSQL store: each replica's
     * state directory is its own), copy them into `artifact_dir` (those of an
     * attempt k that a later attempt superseded into
     * `artifact_dir`/attempt-<k>/); then remove the launch's staging. */
    sluice_err (*archive)(void *arg,
                          const char *launch_id,
                          uint32_t attempt,
                          const char *artifact_dir,
                          sluice_error_t *err);
    /* Names of the staging directories that exist (new array of strings
     * in *names_out, each and the array freed with free()). */
    sluice_err (*list_staging)(void *arg, char ***names_out, size_t *n_out, sluice_error_t *err);
    void *arg;
} sluice_staging_ops_t;

/* ---- options ----------------------------------------------------------- */

/* Named kill points of the submit path (fault injection). */
#define SLUICE_KILL_BEFORE_POST "before-post"
#define SLUICE_KILL_AFTER_POST "after-post"
#define SLUICE_KILL_AFTER_ANSWER "after-answer"

/* A transition seen by the launcher (for `sluice launch --wait`). */
typedef struct {
    const char *launch_id;
    const char *event; /* the event that caused it */
    sluice_fsm_state from;
    sluice_fsm_state to;
    int result;              /* 127 until DONE */
    const char *reason;      /* borrowed */
    const char *slurm_state; /* last Slurm base state seen, or "" */
    double elapsed;          /* seconds since acceptance */
} sluice_launcher_transition_t;

typedef void (*sluice_launcher_transition_fn)(const sluice_launcher_transition_t *t, void *arg);

/* One tenant of the site (sluice_config_tenant_at()) as the launcher acts
 * for it (options version 2).  A launch whose id is "<name>~<id>"
 * (marker.h: the launch key) is the tenant's: its submit, its reads of
 * its job (live, accounting, by name), its cancels and adoptions go
 * through `cluster`, and a job is its only when Slurm names `user` as
 * the job's user.  A launch of a tenant the launcher was not given is
 * never acted on: its submit is refused (REJECTED), its reads are
 * UNAVAILABLE and it is never cancelled. */
typedef struct {
    const char *name;             /* copied */
    const char *user;             /* the tenant's Slurm user; copied; NULL or "": cluster.user() */
    sluice_cluster_ops_t cluster; /* acting as `user` (its arg must outlive the launcher) */
} sluice_launcher_tenant_t;

typedef struct {
    unsigned int version;  /* SLUICE_LAUNCHER_OPTS_VERSION: first, always */
    sluice_store_t *store; /* required, borrowed; must outlive the launcher */
    sluice_cluster_ops_t cluster;
    sluice_staging_ops_t staging;
    /* Slurm user of the site identity (every ownership check); NULL or "":
     * cluster.user()'s (the token's user).  Neither: SLUICE_ECONFIG. */
    const char *user;
    const char *site;            /* marker part; default "default" */
    const char *job_name_prefix; /* default "sluice" */
    const char *state_dir;       /* artifacts under <state_dir>/artifacts/<id>/; NULL: store dir */
    /* accounting and absence rules (config.h), seconds; 0 = default */
    unsigned miss_budget;     /* 5 */
    double miss_spacing_s;    /* 6 */
    double absence_delay_s;   /* 60 */
    unsigned absence_lookups; /* 3 */
    double absence_spacing_s; /* 10 */
    double pending_timeout_s; /* site default when the request has none; 600 */
    /* A pending reason that can never clear (BadConstraints ...) ends the
     * launch at once: the job is cancelled (ownership checked) and the
     * launch ends INFRASTRUCTURE_ERROR "pending reason R can never clear".
     * wait_unschedulable = true keeps waiting for pending_timeout instead.
     * unschedulable_reasons (copied; NULL = the default list of
     * docs/state-machine.md) names the reasons that count; the name
     * "ReqNodeNotAvail" counts only when Slurm lists no unavailable node. */
    bool wait_unschedulable;
    const char *const *unschedulable_reasons;
    size_t n_unschedulable_reasons;
    /* polling: the adaptive interval stays within [min, max]; 0 = default */
    int64_t poll_min_ms; /* 1000 */
    int64_t poll_max_ms; /* 0: 2000 when cl.states_are_cheap() says so, else 10000 */
    double rpc_per_sec;  /* reads and cancels toward slurmctld per second; 0 = 50 */
    /* submits: their own budget, and how many POSTs run at once */
    double submit_per_sec;     /* submits per second (burst: one second's worth); 0 = 200 */
    unsigned submit_in_flight; /* 1..16; 0 = 4 (needs cluster.submit_many, else 1) */
    /* A POST that was provably never sent (SLUICE_SUBMIT_UNAVAILABLE) is
     * tried again with backoff (0.1 s doubling to 5 s; a later step, never a
     * sleep inside one) for this long after its first try
     * (job_launcher.submit_timeout); then the launch ends
     * INFRASTRUCTURE_ERROR, nothing having been sent.  0 = 30. */
    double submit_timeout_s;
    /* clock and sleep; NULL = CLOCK_REALTIME / nanosleep */
    int64_t (*now_ms)(void *arg);
    void (*sleep_ms)(void *arg, int64_t ms);
    void *clock_arg;
    /* Kill points: return true to stop right there as if the process died
     * (the launcher refuses every further call but _free).  NULL: the
     * environment variable SLUICE_KILL_AT=<point> raises SIGKILL. */
    bool (*kill_at)(void *arg, const char *point);
    void *kill_arg;
    /* Called on every state or result change of any launch. */
    sluice_launcher_transition_fn on_transition;
    void *transition_arg;
    /* Several clusters on one store (one launcher each): this launcher's
     * cluster, or NULL (the only one: it takes every launch).  Named, it
     * takes (accepts, recovery, pick-up) only launches stored with this
     * cluster, and with none too when cluster_default (the first).  An
     * accept of a request naming another cluster is SLUICE_EINVAL.  The name
     * is copied. */
    const char *cluster_name;
    bool cluster_default;
    /* The caller holds the store's supervisor lock (taken once for every
     * launcher of the process): the launcher neither takes nor releases it. */
    bool store_locked;
    /* version 2: the site's tenants (copied; may be NULL when n_tenants is
     * 0: every launch acts as `user` through `cluster`).  The batched state
     * read of a cycle is one request per identity that has jobs to read:
     * each tenant's jobs are read as the tenant, so that a site identity
     * that cannot see other users' jobs (PrivateData=jobs) never makes a
     * tenant's job look gone. */
    const sluice_launcher_tenant_t *tenants;
    size_t n_tenants;
} sluice_launcher_opts_t;

/* Every field but `version` zero: each one's documented default.  Declare options as
 * `sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;` and set what differs. */
#define SLUICE_LAUNCHER_OPTS_VERSION 2
#define SLUICE_LAUNCHER_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_LAUNCHER_OPTS_VERSION)

/* Initialise `opts` as SLUICE_LAUNCHER_OPTS_INIT does, for `version`
 * (pass SLUICE_LAUNCHER_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_launcher_opts_init(sluice_launcher_opts_t *opts,
                                                unsigned int version,
                                                sluice_error_t *err);

typedef struct sluice_launcher sluice_launcher_t;

/* Create a launcher: takes the store's supervisor lock (SLUICE_ECONFLICT
 * when another process holds it; not with opts.store_locked).  Does not recover: call
 * sluice_launcher_recover() next.  Caller frees with sluice_launcher_free(). */
SLUICE_API sluice_err sluice_launcher_new(sluice_launcher_t **out,
                                          const sluice_launcher_opts_t *opts,
                                          sluice_error_t *err);

/* Release the supervisor lock (unless opts.store_locked) and all memory (secrets zeroed).  Never
 * writes to the store or the cluster.  NULL-safe. */
SLUICE_API void sluice_launcher_free(sluice_launcher_t *l);

/* What a caller asks the launcher to run.  Two forms:
 * - typed (sluice_accept() fills it): `launch`, `rendered` and
 *   `request_text` are set, and `request` / `render` are the JSON values
 *   the accept built from them (the stored forms).  The launcher reads the
 *   launch's terms from `launch`, its job descriptions from `rendered`,
 *   stores `request_text` as it is, and holds references to `request` and
 *   `render` (never changed by anyone after the accept).  Nothing is
 *   decoded.
 * - JSON (a caller that has only the stored forms: tests, tools): `launch`
 *   and `rendered` are NULL; the launcher decodes `request` and `render`
 *   once, and keeps its own copies (the caller's stay the caller's). */
/* A launch as sluice_launcher_accept() created it (sluice_launcher_request_t.
 * created): the launch and its events as a read back of the store would
 * give them at once (sluice_store_created_launch()), and the gseq of its
 * `accepted` event.  New references; the caller releases them. */
typedef struct {
    json_t *launch; /* NULL: not created by this call (a repeat), or no memory */
    json_t *events;
    int64_t version;
} sluice_launcher_created_t;

typedef struct {
    const json_t *request;          /* canonical request object: launch_id, site, study?,
                                       cluster?, pending_timeout?, requeue?, depends_on?,
                                       secret_names?; never secret values */
    const json_t *render;           /* {"script": str, "jobs": [jobdesc JSON, ...]} */
    const sluice_secret_t *secrets; /* values kept in memory only */
    size_t n_secrets;
    const char *caller; /* audit name, or NULL */
    /* The typed form (all three or none). */
    const sluice_launch_t *launch;   /* the parsed launch */
    const sluice_render_t *rendered; /* its render at attempt 1 */
    const char *request_text;        /* `request`'s canonical text (the store's column) */
    /* NULL, or where a launch this call creates is described
     * (sluice_launcher_created_t; left zeroed for a repeat): the API answers
     * a new launch from it, with no read back. */
    sluice_launcher_created_t *created;
} sluice_launcher_request_t;

/* Accept a launch: stored with its render and the event `accepted` (a
 * durable commit when this returns).  The same launch_id with the same
 * request returns the existing launch (*existed_out = 1); a different
 * request is SLUICE_ECONFLICT.  `*launch_id_out` (may be NULL) is a new
 * string; caller frees with free().
 * Thread-safe against the launcher's own thread: it writes the store and
 * queues the launch (with copies of its secret values) for the next step,
 * and wakes a thread waiting in sluice_launcher_idle().  It never waits for
 * a running cycle.  The request and secrets stay the caller's. */
SLUICE_API sluice_err sluice_launcher_accept(sluice_launcher_t *l,
                                             const sluice_launcher_request_t *req,
                                             char **launch_id_out,
                                             int *existed_out,
                                             sluice_error_t *err);

/* Store a launch for the supervisor that runs on `store` in another process
 * (the holder of sluice_store_lock_supervisor): the same row and `accepted`
 * event sluice_launcher_accept() writes, with no launcher here; that
 * supervisor takes the launch up from the store's events, as it takes up a
 * cancel asked by the CLI.  Only the typed form of `req` (launch, rendered,
 * request_text), and never secret values: they would live only in this
 * process, so `req->n_secrets` > 0 is SLUICE_EINVAL.  The store and `req`
 * stay the caller's; `*existed_out` (may be NULL) as for
 * sluice_launcher_accept(). */
SLUICE_API sluice_err sluice_launcher_hand_over(sluice_store_t *store,
                                                const sluice_launcher_request_t *req,
                                                int *existed_out,
                                                sluice_error_t *err);

/* The dependency rule at accept time (docs/state-machine.md,
 * "Dependencies"), for the launch `launch_id` that depends on `dep_id`
 * under `condition` ("after", "afterok", "afterany"): SLUICE_OK when
 * `dep_id` is NULL (no dependency), when the partner is a launch the store
 * knows that can still satisfy the condition, or when the store already
 * holds `launch_id` itself (a repeat: sluice_launcher_accept() decides).
 * Otherwise SLUICE_EINVAL, the text starting "depends_on.launch_id: " and
 * naming the partner: it is unknown, or it has ended and the condition can
 * never be met (after: it must be running; afterok: it did not succeed).
 * Reads the store only: thread-safe as sluice_launcher_accept() is. */
SLUICE_API sluice_err sluice_launcher_check_dependency(sluice_launcher_t *l,
                                                       const char *launch_id,
                                                       const char *dep_id,
                                                       const char *condition,
                                                       sluice_error_t *err);

/* Record the caller's intent to cancel (idempotent: nothing is written for
 * a launch that is DONE or already cancelled by a caller). */
SLUICE_API sluice_err sluice_launcher_cancel(sluice_launcher_t *l,
                                             const char *launch_id,
                                             const char *caller,
                                             sluice_error_t *err);

/* Forget every tracked launch and every launch on the intake (their
 * secret values wiped), as a replica does when it stops leading: the
 * store keeps them for the next leader, and this launcher starts from
 * nothing at its next sluice_launcher_recover().  Call it from the
 * launcher's thread, never during a step.  NULL-safe. */
SLUICE_API void sluice_launcher_forget(sluice_launcher_t *l);

/* Recover after a start: replay every live launch from the store, append
 * `submit-uncertain` to launches caught mid-submit, end launches whose
 * secrets were lost, report orphan staging directories (never deleted).
 * `orphans_out` (may be NULL) receives their number. */
SLUICE_API sluice_err sluice_launcher_recover(sluice_launcher_t *l,
                                              size_t *orphans_out,
                                              sluice_error_t *err);

/* One cycle at the clock's current time: pick up request events from other
 * processes, run every due action, one batched state read for every live
 * job, full reads only for changed jobs, accounting only for jobs that left
 * the queue.  Deterministic for a given clock and cluster. */
SLUICE_API sluice_err sluice_launcher_step(sluice_launcher_t *l, sluice_error_t *err);

/* The interval the adaptive poller wants before the next step (ms), cut
 * short by the earliest resend of a POST that provably never left.  Call it
 * where sluice_launcher_step() is called (same lock). */
SLUICE_API int64_t sluice_launcher_next_interval_ms(const sluice_launcher_t *l);

/* Wait up to max_ms, returning early (true) when a step is wanted now: a
 * launch was accepted or sluice_launcher_wake() was called since the last
 * step took the intake.  With an injected clock it sleeps through the
 * clock's sleep function and only reports (never waits for) a wake-up.
 * Thread-safe. */
SLUICE_API bool sluice_launcher_idle(sluice_launcher_t *l, int64_t max_ms);

/* Ask the thread in sluice_launcher_idle() for a step now (e.g. after a
 * cancel recorded from another thread).  Thread-safe. */
SLUICE_API void sluice_launcher_wake(sluice_launcher_t *l);

/* ---- the loop ------------------------------------------------------------- */

/* What the caller of sluice_launcher_loop() wants before each step. */
typedef enum {
    SLUICE_LOOP_STEP = 0, /* step now, then idle the launcher's interval */
    SLUICE_LOOP_SKIP,     /* no step this time; idle skip_idle_ms (a replica that
                             does not lead) */
    SLUICE_LOOP_STOP,     /* leave the loop: it returns SLUICE_OK */
} sluice_loop_next;

/* How sluice_launcher_loop() runs; start from SLUICE_LAUNCHER_LOOP_INIT.
 * Every member may be zero. */
typedef struct {
    /* Leave when it becomes non-zero: read before each step and between
     * the slices of an idle.  NULL: only `before` stops the loop. */
    volatile int *stop;
    /* Called before each step (NULL: always STEP). */
    sluice_loop_next (*before)(void *arg);
    /* The step (NULL: sluice_launcher_step()); it also sets *next_ms to the
     * wait before the next one (NULL step: sluice_launcher_next_interval_ms()),
     * so a caller that steps under a lock of its own reads both under it.
     * *next_ms is read whatever the step returns. */
    sluice_err (*step)(sluice_launcher_t *l, void *arg, int64_t *next_ms, sluice_error_t *err);
    void *arg; /* handed to before and step */
    /* The longest one idle lasts (0: the whole interval), e.g. 1000 for a
     * status line redrawn every second. */
    int64_t max_idle_ms;
    /* Idle in slices this long so that *stop is seen (0: one slice). */
    int64_t slice_ms;
    /* Idle after SKIP (0: 200 ms). */
    int64_t skip_idle_ms;
    /* A failed step: false, the loop returns its error; true, it is logged
     * as a warning ("launcher cycle<name>: ...") and the loop goes on. */
    bool keep_going;
    const char *name; /* in that warning (NULL: ""), e.g. " of cluster b" */
} sluice_launcher_loop_t;

#define SLUICE_LAUNCHER_LOOP_INIT                                                                  \
    {                                                                                              \
        0                                                                                          \
    }

/* The one loop that drives a launcher (`sluice serve` runs one per
 * cluster, `sluice launch --wait` one until its launch ends): until
 * *stop or `before` says STOP, ask `before`, step, and idle the
 * launcher's interval (sluice_launcher_idle(): an accept or a wake ends the
 * idle at once).  `lo` may be NULL (every member zero).  SLUICE_OK when it
 * stopped; a step's error when keep_going is false; SLUICE_EINVAL without
 * a launcher.  Call it from the launcher's thread. */
SLUICE_API sluice_err sluice_launcher_loop(sluice_launcher_t *l,
                                           const sluice_launcher_loop_t *lo,
                                           sluice_error_t *err);

/* Number of launches the launcher tracks (live, or DONE awaiting archive),
 * counting those accepted but not yet taken in by a step. */
SLUICE_API size_t sluice_launcher_tracked(const sluice_launcher_t *l);

/* ---- counters for metrics --------------------------------------------- */

/* What one launcher has done since it was created.  Counted from the
 * events it records, so a replay at recovery never counts twice. */
typedef struct {
    uint64_t adoptions_live;       /* reconciliation found the job in the live queue */
    uint64_t adoptions_accounting; /* ... or only in accounting */
    uint64_t absences_confirmed;   /* the absence rule opened a new attempt */
    uint64_t accounting_misses;    /* an accounting read found no record of a job
                                      that left the queue */
    uint64_t accepts;              /* sluice_launcher_accept() calls that reached the store */
    uint64_t accept_commits;       /* store transactions they took: concurrent accepts
                                      share one durable commit (group commit) */
} sluice_launcher_stats_t;

/* A snapshot of the counters (zeroes for NULL).  Thread-safe: the counters
 * are atomic, so a metrics reader may call it while a cycle runs. */
SLUICE_API void sluice_launcher_stats(const sluice_launcher_t *l, sluice_launcher_stats_t *out);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_LAUNCHER_H */
