/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_int.h - what the launcher's files share (not installed).
 *
 * Purpose:
 *   The launcher (include/sluice/launcher.h) is one object split by
 *   concept over several files.  Five subsystems own state of their own,
 *   each with a private header, a create/destroy pair and a type no
 *   other file looks into
 *   (struct sluice_launcher lists them, the way flux-core's job-manager
 *   context lists its subsystems); per launch, each keeps a named
 *   sub-struct of launch_t.  This header holds what they all share: the
 *   launcher and launch structs and the helpers below the subsystems.
 *
 *   Calls only go down this list:
 *   - launcher.c: lifecycle (new and free make and undo the subsystems in
 *     order), cancel, archive, pool exits, picking up other processes'
 *     events, recovery, the step that orchestrates a cycle.
 *   - launcher_ha.c: a replica that stops leading forgets everything.
 *   - the subsystems:
 *     - submit (launcher_submit.h; launcher_submit.c: selection, marker
 *       and answer commits, the POSTs, resends; launcher_stage.c: staging
 *       threads and job descriptions, orphans at recovery).
 *     - intake (launcher_intake.h, launcher_intake.c): accepts from any
 *       thread, group commit, the hand-over to the launcher's thread (at
 *       a step, and between submit rounds), its idle and wake-up.
 *     - poll (launcher_poll.h, launcher_poll.c): the one batched state
 *       read per cycle, full reads of changed jobs, the pending
 *       heartbeat, accounting lookups, the adaptive interval.
 *     - reconcile (launcher_reconcile.h, launcher_reconcile.c):
 *       uncertain submits reconciled by their marker, jobs of older
 *       attempts.
 *   - launcher_peers.c: a launch that depends on another: the rule of each
 *     condition, the Slurm dependency of its submit, peers.env (called by
 *     launcher.c and launcher_submit.c).
 *   - launcher_owner.c: whether a record is the launch's job (the
 *     ownership rule), jobs that went to another cluster.
 *   - launcher_record.c: the table of launches, recording events and
 *     folding them back in, stats counters.
 *   - launcher_views.c: what a job record means before it is recorded
 *     (never-clearing pending reasons, hidden bases).
 *   - budget (launcher_budget.h, launcher_budget.c): the read and submit
 *     token budgets, spent by launcher.c, the subsystems, peers and
 *     owner.
 *   - launcher_util.c: the clocks, kill points, finding and dropping
 *     launches.
 *   - launcher_fsm.c: a launch's state machine kept compact (launch_fsm_t),
 *     called by every file above.
 *
 * Notes:
 *   - Everything here runs on the launcher's one thread (staging workers
 *     touch only their batch entry; a chunk's POST thread only its chunk),
 *     except sluice_launcher_accept/idle/wake (launcher_intake.c), which
 *     take the intake's mutexes; the intake, `dead` and `renders` are what
 *     they share.
 *   - Error and ownership rules are those of the static functions they
 *     were: `err` is the caller's, views passed in are borrowed.  A
 *     subsystem's *_create() returns SLUICE_ENOMEM (or the error of the
 *     thing it makes) with nothing made; its *_destroy() is NULL-safe.
 */
#ifndef SLUICE_LAUNCHER_INT_H
#define SLUICE_LAUNCHER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/launcher.h>

/* A job with an ending flag (SLUICE_JOB_ENDING_FLAGS: its batch script has
 * ended while slurmctld still completes it) is read again after
 * LAUNCHER_ENDING_POLL_MS instead of a whole poll interval (detection
 * latency). */
#define LAUNCHER_ENDING_POLL_MS 250
/* The longest poll interval when the site sets none and the cluster's
 * status read is jobs/state (design.md, "Polling and pending timer"). */
#define LAUNCHER_CHEAP_POLL_MAX_MS 2000

#define MAX_IN_FLIGHT 16
/* Renders kept in memory from the accept to the first POST, across the
 * intake and the tracked launches; past that a launch's submit reads its
 * render from the store (as after a restart).  Bounds a burst's memory. */
#define LAUNCHER_RENDERS_KEPT 256

/* A launch's state machine as the launcher keeps it (launcher_fsm.c): the
 * fields of sluice_fsm_launch_t under the same names, but the reason and
 * the marker as heap strings, and the rarely used text (caller, unschedulable,
 * pools, verdict_reason, dependency) in `cold`: NULL while all of it is
 * empty (a live launch), else a whole copy of the state.  About 420 bytes
 * instead of 3,000 per live launch.  Read its fields directly; change it
 * only through launcher_fsm_set(), and get the whole struct (for
 * sluice_fsm_apply/due) with launcher_fsm_get(). */
typedef struct {
    sluice_fsm_config_t cfg;
    sluice_fsm_state state;
    int result;
    char *reason; /* never NULL ("" when none) */
    double last_time;
    int64_t last_seq;
    uint64_t n_applied;
    uint64_t n_ignored;
    uint32_t attempt;
    char *job_name; /* never NULL ("" when none) */
    char *comment;  /* never NULL */
    double post_time;
    uint64_t job_ids[SLUICE_FSM_MAX_JOBS];
    size_t n_job_ids;
    sluice_cancel_intent intent;
    bool cancel_sent;
    double cancel_sent_time;
    bool left_queue;
    unsigned misses;
    bool has_miss;
    double last_miss_time;
    bool has_pending;
    double first_pending;
    bool prev_pending;
    double last_pending;
    double pending_observed;
    size_t n_components;
    size_t n_pools;
    bool settling;
    double settle_time;
    int verdict;
    bool unasked_cancel;
    int verdict_rest;
    int slurm_exit_code;
    sluice_fsm_launch_t *cold;
} launch_fsm_t;

/* A launch's render kept in memory from its accept to its first POST
 * (at most LAUNCHER_RENDERS_KEPT of them): the stored form, which the
 * staging hook reads, and its job descriptions, which the POST sends.  Both
 * are made once at the accept (launcher_intake.c): the typed path copies
 * the render's descriptions, the JSON path decodes them once. */
typedef struct {
    json_t *json;           /* the stored render (never changed once made) */
    sluice_jobdesc_t *jobs; /* complete: job 0 holds the script */
    size_t n_jobs;
} launcher_render_t;

/* What the launcher reads of a launch's request, once: from the parsed
 * launch (the accept pipeline) or from the canonical request object (a
 * JSON caller, a row read back).  Strings are borrowed from the source. */
typedef struct {
    const char *id;
    const char *site;    /* NULL: the launcher's */
    const char *study;   /* NULL: none */
    const char *cluster; /* NULL: the site's first */
    const char *dep_id;  /* NULL: no dependency */
    const char *dep_cond;
    bool needs_secrets;      /* the request has per-launch `secrets` */
    int64_t pending_timeout; /* seconds as requested; 0: the site's */
    bool requeue;
} launcher_terms_t;

/* One tracked launch.  What the launcher as a whole keeps (identity,
 * terms, the fsm, secrets, archive) sits at the top; what one subsystem
 * keeps per launch sits in a sub-struct named after it (the file that
 * keeps it is named with each).  Others read it; a few write it where
 * their action changes what it caches: a cancel's fresh read (launcher.c)
 * refreshes the poll cache and clears own.ok, folding an observation in
 * (launcher_record.c) stamps poll.last_obs_ms, peers-written sets
 * peers.written, a new POST's answer (launcher_submit.c) restarts recon,
 * and the poll sets own.ok and own.id by the ownership rule. */
typedef struct {
    char *id;
    char *site;
    launch_fsm_t fsm; /* launcher_fsm.c */
    int64_t next_seq; /* next store seq to fold in */
    int64_t created_ms;
    char *dep_id; /* depends_on.launch_id */
    char *dep_cond;
    bool needs_secrets;
    char **secret_names; /* owned copies (values zeroed on free) */
    char **secret_values;
    size_t n_secrets;
    bool has_secrets;
    bool archived;
    bool faulted; /* its last action failed on its own data (logged once; the
                     other launches went on) */
    bool cancel_refused;
    int64_t cancel_ask_seq; /* seq of a `cancel-asked` event from another
                               writer not yet carried out (0: none) */
    /* the intake's hand-over (launcher_intake.c; the render is read by
     * launcher_stage.c and dropped at the first POST) */
    struct {
        launcher_render_t *render; /* kept from the intake until the first POST
                                      (NULL: read it from the store) */
        uint64_t handed_ns;        /* monotonic time the intake handed it over; 0
                                      once its first submit began (timing.h: queue) */
    } intake;
    /* the poller's cache (launcher_poll.c) */
    struct {
        bool have_state;
        sluice_job_base last_base;
        uint32_t last_flags;
        /* The latest batched (jobs/state) base, even when the budget put the
         * full read off; UNKNOWN once the job left the live queue. */
        bool have_batch;
        sluice_job_base batch_base;
        sluice_jobview_t *views;
        size_t n_views;
        bool last_unavailable;
        unsigned pending_polls; /* unchanged pending polls since the last full read */
        int64_t last_obs_ms;
        int64_t next_acct_ms;
    } poll;
    /* the submit's POST that provably never left (launcher_submit.c), of
     * the current attempt (in memory only: after a restart the marker rule
     * takes over) */
    struct {
        bool not_sent;
        int64_t not_sent_since_ms; /* its first try: the submit budget runs from here */
        unsigned not_sent_tries;
        int64_t next_post_ms; /* the next try, not before */
    } submit;
    /* reconciliation (launcher_reconcile.c) */
    struct {
        unsigned absent_count;
        int64_t last_recon_ms;
        int64_t last_old_check_ms;
    } recon;
    /* ownership (launcher_owner.c) */
    struct {
        /* ok: job `id`'s full live record matched, and the id stayed in
         * the live view since: a state-only read (jobs/state) is trusted */
        bool ok;
        uint64_t id;
        uint64_t not_ours_id;  /* the job id last logged as naming another job (0: none) */
        unsigned not_ours_src; /* the sources (1 << sluice_lookup_source) it was logged for */
    } own;
    /* the dependency's hand-on (launcher_peers.c) */
    struct {
        bool written;      /* peers.env is written */
        bool dep_settled;  /* the partner ended and the condition was met (or
                              peers.env is written): nothing more to check */
        int64_t warned_ms; /* last warning that peers.env waits for addresses */
    } peers;
} launch_t;

/* sluice_launcher_stats() (at the end of launcher.c). */
struct launcher_counters {
    atomic_ullong adoptions_live, adoptions_accounting, absences_confirmed, accounting_misses;
    atomic_ullong accepts, accept_commits;
};

/* The launcher's subsystems: each owns its state, made by its
 * *_create() and freed by its *_destroy() (NULL-safe), declared in its own
 * header and defined in its file (submit's in launcher_submit.h, which its
 * two files share); no other file looks into it. */
typedef struct launcher_budget launcher_budget_t;       /* launcher_budget.h */
typedef struct launcher_poll launcher_poll_t;           /* launcher_poll.h */
typedef struct launcher_intake launcher_intake_t;       /* launcher_intake.h */
typedef struct launcher_submit launcher_submit_t;       /* launcher_submit.h */
typedef struct launcher_reconcile launcher_reconcile_t; /* launcher_reconcile.h */

/* Who acts on Slurm for a launch (launcher_tenant.c): the cluster
 * operations and the Slurm user every ownership check of its jobs
 * compares. */
typedef struct {
    char *name; /* the tenant; "" for the default tenant */
    char *user;
    sluice_cluster_ops_t cl;
} launcher_actor_t;

struct sluice_launcher {
    sluice_store_t *store;
    sluice_cluster_ops_t cl;
    sluice_staging_ops_t st;
    sluice_launcher_opts_t o; /* copies of the knobs; strings below */
    char *user;
    /* launcher_tenant.c: actors[0] is the default tenant (cl, user), then
     * the tenants of the options; `refused` acts for a tenant not given */
    launcher_actor_t *actors;
    size_t n_actors;
    launcher_actor_t refused;
    char *site;
    char *prefix;
    char *state_dir;
    char *cluster;  /* o.cluster_name's copy, or NULL: every launch is this one's */
    char **unsched; /* pending reasons that never clear (owned copies) */
    size_t n_unsched;
    /* the table of launches (launcher_record.c, launcher_util.c) */
    launch_t **v;
    size_t n;
    size_t cap;
    int64_t gseq;
    bool asks_pending;  /* some launch has a cancel_ask_seq (launcher.c) */
    json_t *node_addrs; /* launcher_peers.c: node -> [NodeAddr, read at ms] */
    bool activity;
    atomic_bool dead;      /* read by accepting threads */
    atomic_size_t renders; /* renders kept (intake entries and launches): the
                              intake counts one on, whoever frees it off */
    /* the subsystems, made in this order by sluice_launcher_new() and
     * destroyed in the reverse order by sluice_launcher_free() */
    launcher_budget_t *budget;       /* the read and submit token budgets */
    launcher_poll_t *poll;           /* the poller's interval and read times */
    launcher_submit_t *submit;       /* the submit's knobs, resolved once */
    launcher_reconcile_t *reconcile; /* the absence rule's knobs, resolved once */
    launcher_intake_t *intake;       /* accepts from any thread, group commit */
    struct launcher_counters counters;
};

/* ---- launcher_fsm.c: the compact state machine ------------------------- */

/* L's whole state into *out. */
void launcher_fsm_get(const launch_t *L, sluice_fsm_launch_t *out);
/* Make `in` L's state (SLUICE_ENOMEM leaves L as it was). */
sluice_err launcher_fsm_set(launch_t *L, const sluice_fsm_launch_t *in, sluice_error_t *err);
/* sluice_fsm_due() of L's state. */
unsigned launcher_fsm_due(const launch_t *L, double now);
/* The recorded reason ("" while none). */
const char *launcher_fsm_reason(const launch_t *L);
/* Free what L's state holds. */
void launcher_fsm_free(launch_t *L);

/* ---- launcher_tenant.c: who acts for a launch ---------------------------- */

/* The actors of the options' tenants (after l->user and l->cl are set);
 * SLUICE_EINVAL/ECONFIG name the tenant, SLUICE_ENOMEM.  Destroy undoes
 * whatever was made. */
sluice_err
launcher_tenants_create(sluice_launcher_t *l, const sluice_launcher_opts_t *o, sluice_error_t *err);
void launcher_tenants_destroy(sluice_launcher_t *l);
/* The index of the actor of launch key `id`: 0 for the default tenant,
 * l->n_actors for a tenant the launcher was not given. */
size_t launcher_actor_index(const sluice_launcher_t *l, const char *id);
/* The actor at index i (launcher_actor_index()); never NULL. */
const launcher_actor_t *launcher_actor_at(const sluice_launcher_t *l, size_t i);
/* The actor of launch key `id` (never NULL: the refusing one when its
 * tenant is unknown). */
const launcher_actor_t *launcher_actor(const sluice_launcher_t *l, const char *id);

/* ---- launcher_util.c: clocks and small helpers, the table of launches -- */

/* The real clock (the defaults of sluice_launcher_opts_t.now_ms/sleep_ms). */
int64_t launcher_real_now_ms(void *arg);
void launcher_real_sleep_ms(void *arg, int64_t ms);
/* The launcher's clock now (injected or real), epoch ms. */
int64_t launcher_now_ms(const sluice_launcher_t *l);

/* Store epoch ms to fsm epoch seconds: the one conversion. */
double launcher_fsm_time(int64_t ms);
/* Seconds-scale values (already multiplied) back to whole ms. */
int64_t launcher_to_ms(double x);
void launcher_views_free(sluice_jobview_t *v, size_t n);
/* A copy of `s`, or of `dflt` when `s` is NULL or empty (NULL: no memory). */
char *launcher_dup_or(const char *s, const char *dflt);
bool launcher_same_str(const char *a, const char *b);
/* A kill point: true means "the process died here". */
bool launcher_killed_at(sluice_launcher_t *l, const char *point);
launch_t *launcher_find_launch(const sluice_launcher_t *l, const char *id);
/* True when a launch stored with `cluster` (NULL: the first) is this
 * launcher's (sluice_launcher_opts_t.cluster_name). */
bool launcher_cluster_ours(const sluice_launcher_t *l, const char *cluster);
/* A monotonic clock in ms with a fraction, for the debug timings of a
 * cycle (never for decisions: those use the injected clock). */
double launcher_mono_ms(void);
/* True when the launcher runs on the real clock (no injected one). */
bool launcher_real_clock(const sluice_launcher_t *l);
/* Free one launch (secret values zeroed); NULL-safe. */
void launcher_launch_free(launch_t *L);
/* Drop L's kept render (the first POST is marked, or L goes). */
void launcher_render_drop(sluice_launcher_t *l, launch_t *L);
/* Free a kept render (NULL-safe; does not count it off). */
void launcher_render_free(launcher_render_t *r);

/* ---- launcher_util.c, launcher_record.c: tracking ----------------------- */

/* Stop tracking L and free it. */
void launcher_drop_launch(sluice_launcher_t *l, launch_t *L);
/* Fold every stored event of L not yet folded in (quiet: no transition
 * callbacks, as at recovery). */
sluice_err launcher_sync_launch(sluice_launcher_t *l, launch_t *L, bool quiet, sluice_error_t *err);
/* Track launch `id` from its stored row; *out (may be NULL) is the launch. */
sluice_err
launcher_load_launch(sluice_launcher_t *l, const char *id, launch_t **out, sluice_error_t *err);
/* The terms of a canonical request object (borrowed strings). */
void launcher_terms_of_request(const json_t *request, launcher_terms_t *t);
/* The terms of a parsed launch and its cluster (borrowed strings). */
void launcher_terms_of_launch(const sluice_launch_t *launch,
                              const char *cluster,
                              launcher_terms_t *t);
/* Start tracking the launch of `t` and fold its log in; *out (may be
 * NULL) is the new launch. */
sluice_err launcher_track(sluice_launcher_t *l,
                          const launcher_terms_t *t,
                          int64_t created_ms,
                          launch_t **out,
                          sluice_error_t *err);

/* ---- launcher_record.c: recording --------------------------------------- */

sluice_err launcher_record(sluice_launcher_t *l,
                           launch_t *L,
                           sluice_fsm_event_t *ev,
                           const char *caller,
                           sluice_error_t *err);
sluice_err launcher_record_many(sluice_launcher_t *l,
                                launch_t *const *who,
                                sluice_fsm_event_t *evs,
                                size_t n,
                                sluice_error_t *err);
/* launcher_record_many() committed with sluice_store_append_recoverable():
 * only for events reconciliation rebuilds when a power loss drops them
 * (the "submitted" answers, whose jobs carry a durable marker). */
sluice_err launcher_record_recoverable(sluice_launcher_t *l,
                                       launch_t *const *who,
                                       sluice_fsm_event_t *evs,
                                       size_t n,
                                       sluice_error_t *err);
/* Steals `ctx`. */
sluice_err launcher_note(
    sluice_launcher_t *l, launch_t *L, const char *name, json_t *ctx, sluice_error_t *err);
sluice_err launcher_record_simple(sluice_launcher_t *l,
                                  launch_t *L,
                                  sluice_fsm_event_type type,
                                  const char *detail,
                                  sluice_error_t *err);
sluice_err launcher_record_observed(sluice_launcher_t *l,
                                    launch_t *L,
                                    sluice_lookup lookup,
                                    sluice_lookup_source source,
                                    const sluice_jobview_t *views,
                                    size_t n,
                                    sluice_error_t *err);
/* The pending heartbeats of one poll (each launch's unchanged live views
 * observed again) in one durable commit.  `who` is reordered. */
sluice_err
launcher_record_heartbeats(sluice_launcher_t *l, launch_t **who, size_t n, sluice_error_t *err);

/* ---- launcher_owner.c ---------------------------------------------------- */

/* Why one record is not the job with leader id `id` (0: any id), marker
 * `name` and `comment` and Slurm user `user` (the launch's tenant's:
 * launcher_actor()), as `src` shows it: NULL when it is.  Accounting
 * compares the comment only where one was kept. */
const char *launcher_view_mismatch(const char *user,
                                   const sluice_jobview_t *v,
                                   uint64_t id,
                                   const char *name,
                                   const char *comment,
                                   sluice_lookup_source src);
/* Why the records of L's job are not L's (every component must be): NULL
 * when they are, "empty record" for none. */
const char *launcher_mismatch(const sluice_launcher_t *l,
                              const launch_t *L,
                              const sluice_jobview_t *v,
                              size_t n,
                              sluice_lookup_source src);
/* Keep only the records that are L's job on this cluster (a record of
 * another cluster with the same id is another job), compacted to the
 * front (the others are cleared); returns how many.  None kept: *why says
 * what the first one got wrong. */
size_t launcher_keep_owned(const sluice_launcher_t *l,
                           const launch_t *L,
                           sluice_jobview_t *v,
                           size_t n,
                           sluice_lookup_source src,
                           const char **why);
/* True when a record belongs to another cluster or a federation. */
bool launcher_other_cluster(const sluice_jobview_t *v, size_t n);
/* L's job id names another job in `src`: logged (and a `job-not-ours`
 * event) once per id and source. */
sluice_err launcher_not_ours(sluice_launcher_t *l,
                             launch_t *L,
                             uint64_t id,
                             sluice_lookup_source src,
                             const char *why,
                             sluice_error_t *err);
/* Cancel a job of ours that went to another cluster (`cluster`: its name
 * when known, else NULL) and log it; `out` receives the reason the launch
 * ends with ("multi-cluster routing is unsupported: ..."). */
void launcher_cancel_other_cluster(
    sluice_launcher_t *l, launch_t *L, uint64_t id, const char *cluster, char *out, size_t cap);

/* ---- launcher_views.c ---------------------------------------------------- */

bool launcher_fill_hidden_bases(const sluice_jobview_t *prev,
                                size_t n_prev,
                                sluice_jobview_t *v,
                                size_t n);
/* A pending component whose reason is one that never clears: true, with
 * the reason ("BadConstraints", "ReqNodeNotAvail with no node listed") in
 * `out`. */
bool launcher_unschedulable(
    const sluice_launcher_t *l, const sluice_jobview_t *v, size_t n, char *out, size_t cap);
/* Mark each FAILED record that never started and whose reason is on the
 * never-clearing list (sluice_jobview_t.failed_unschedulable): slurmctld
 * ended it, and the state machine ends the launch INFRASTRUCTURE_ERROR.
 * Done whatever job_launcher.fail_unschedulable says: Slurm, not sluice,
 * ended the job. */
void launcher_mark_failed_unschedulable(const sluice_launcher_t *l, sluice_jobview_t *v, size_t n);
/* The default reasons (NULL-terminated). */
extern const char *const launcher_default_unschedulable[];

/* ---- launcher_peers.c ---------------------------------------------------- */

typedef enum {
    LAUNCHER_DEP_NONE,   /* no dependency, or the partner ended and it is met */
    LAUNCHER_DEP_WAIT,   /* the partner has no job yet (or cannot be read now) */
    LAUNCHER_DEP_SLURM,  /* submit with the Slurm dependency written to `buf` */
    LAUNCHER_DEP_FAILED, /* it can never be met: why in `buf` */
} launcher_dep_t;

/* Before a submit of L: what its dependency asks for. */
launcher_dep_t launcher_dependency(sluice_launcher_t *l, launch_t *L, char *buf, size_t cap);
/* Once L has a job: record `dependency-failed` when its partner can no
 * longer satisfy the condition; for `after`, write peers.env once the
 * partner runs and every node's address is read. */
sluice_err
launcher_do_dependency(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err);

#endif /* SLUICE_LAUNCHER_INT_H */
