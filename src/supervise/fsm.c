/* SPDX-License-Identifier: Apache-2.0 */
/* fsm.c - the launcher state machine (pure update, due actions, replay).
 *
 * Purpose:
 *   Turn the events the launcher records into one launch state and, at the
 *   end, one result code.  docs/state-machine.md is the rule set this file
 *   implements; the tests in tests/unit/test_fsm.c check it rule by rule.
 *
 * Input:  a launch (plain data) and one event carrying its own time.
 * Output: the updated launch and a transition {from, to, result, reason}.
 *
 * Notes:
 *   - No I/O, no clock: every time comes from an event or from the `now`
 *     argument of sluice_fsm_due().
 *   - apply() works on a copy and commits it only when the event is valid,
 *     so a refused event leaves the launch byte-for-byte unchanged.
 *   - set_state() is the only place that changes `state`; it also records the
 *     reason.  A DONE launch is never changed again.
 *   - Slurm state names are formatted from local tables generated from the
 *     X-macros in jobdesc.h; this file calls no jobdesc.c function.
 */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>

/* ---- name tables ------------------------------------------------------- */

static const char *const state_names[] = {
#define STATE_NAME(id, name) name,
    SLUICE_FSM_STATE_MAP(STATE_NAME)
#undef STATE_NAME
};

static const char *const event_names[] = {
#define EVENT_NAME(id, name) name,
    SLUICE_FSM_EVENT_MAP(EVENT_NAME)
#undef EVENT_NAME
};

static const struct {
    int code;
    const char *name;
} result_names[] = {
#define RESULT_NAME(id, code) {code, #id},
    SLUICE_RESULT_MAP(RESULT_NAME)
#undef RESULT_NAME
};

static const char *const lookup_names[] = {"FOUND", "NOT_FOUND", "UNAVAILABLE"};
static const char *const source_names[] = {"live", "accounting"};

/* Slurm's names, from jobdesc.h's maps (index = enum value). */
static const char *const base_names[] = {"UNKNOWN",
#define BASE_NAME(n) #n,
                                         SLUICE_JOB_BASE_MAP(BASE_NAME)
#undef BASE_NAME
};

static const char *const flag_names[] = {
#define FLAG_NAME(n) #n,
    SLUICE_JOB_FLAG_MAP(FLAG_NAME)
#undef FLAG_NAME
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int find_name(const char *const *tab, size_t n, const char *name)
{
    size_t i;

    if (name == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        if (strcmp(tab[i], name) == 0)
            return (int)i;
    }
    return -1;
}

const char *sluice_fsm_state_name(sluice_fsm_state state)
{
    if ((unsigned)state >= COUNT(state_names))
        return NULL;
    return state_names[state];
}

const char *sluice_fsm_event_name(sluice_fsm_event_type type)
{
    if ((unsigned)type >= COUNT(event_names))
        return NULL;
    return event_names[type];
}

const char *sluice_result_name(int code)
{
    size_t i;

    for (i = 0; i < COUNT(result_names); i++) {
        if (result_names[i].code == code)
            return result_names[i].name;
    }
    return NULL;
}

const char *sluice_lookup_name(sluice_lookup lookup)
{
    if ((unsigned)lookup >= COUNT(lookup_names))
        return NULL;
    return lookup_names[lookup];
}

const char *sluice_lookup_source_name(sluice_lookup_source source)
{
    if ((unsigned)source >= COUNT(source_names))
        return NULL;
    return source_names[source];
}

bool sluice_fsm_state_from_name(const char *name, sluice_fsm_state *out)
{
    int i = find_name(state_names, COUNT(state_names), name);

    if (i < 0)
        return false;
    *out = (sluice_fsm_state)i;
    return true;
}

bool sluice_fsm_event_from_name(const char *name, sluice_fsm_event_type *out)
{
    int i = find_name(event_names, COUNT(event_names), name);

    if (i < 0)
        return false;
    *out = (sluice_fsm_event_type)i;
    return true;
}

bool sluice_result_from_name(const char *name, int *out)
{
    size_t i;

    if (name == NULL)
        return false;
    for (i = 0; i < COUNT(result_names); i++) {
        if (strcmp(result_names[i].name, name) == 0) {
            *out = result_names[i].code;
            return true;
        }
    }
    return false;
}

bool sluice_lookup_from_name(const char *name, sluice_lookup *out)
{
    int i = find_name(lookup_names, COUNT(lookup_names), name);

    if (i < 0)
        return false;
    *out = (sluice_lookup)i;
    return true;
}

bool sluice_lookup_source_from_name(const char *name, sluice_lookup_source *out)
{
    int i = find_name(source_names, COUNT(source_names), name);

    if (i < 0)
        return false;
    *out = (sluice_lookup_source)i;
    return true;
}

static const char *base_name(sluice_job_base b)
{
    if ((unsigned)b >= COUNT(base_names))
        return "UNKNOWN";
    return base_names[b];
}

/* ---- configuration and launch ------------------------------------------ */

void sluice_fsm_config_default(sluice_fsm_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->miss_budget = 5;
    cfg->miss_spacing = 6.0;
    cfg->pending_timeout = 600.0;
    cfg->cancel_resend = 30.0;
    cfg->requeue_allowed = false;
}

void sluice_fsm_launch_init(sluice_fsm_launch_t *l, const sluice_fsm_config_t *cfg)
{
    memset(l, 0, sizeof(*l));
    if (cfg != NULL)
        l->cfg = *cfg;
    else
        sluice_fsm_config_default(&l->cfg);
    if (l->cfg.miss_budget == 0)
        l->cfg.miss_budget = 1;
    l->state = SLUICE_FSM_NEW;
    l->result = SLUICE_RESULT_UNKNOWN;
    l->last_seq = -1;
}

bool sluice_fsm_is_terminal(const sluice_fsm_launch_t *l)
{
    return l->state == SLUICE_FSM_DONE;
}

/* ---- the one state setter ---------------------------------------------- */

static void vformat(char *dst, size_t cap, const char *fmt, va_list ap) SLUICE_PRINTF(3, 0);

static void vformat(char *dst, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(dst, cap, fmt, ap);

    if (n < 0)
        dst[0] = '\0';
    else if ((size_t)n >= cap && cap > 4)
        memcpy(dst + cap - 4, "...", 4);
}

static void set_state(sluice_fsm_launch_t *l,
                      sluice_fsm_transition_t *tr,
                      sluice_fsm_state to,
                      int result,
                      const char *fmt,
                      ...) SLUICE_PRINTF(5, 6);

/* Change state (and result), and record why.  Every transition goes here. */
static void set_state(sluice_fsm_launch_t *l,
                      sluice_fsm_transition_t *tr,
                      sluice_fsm_state to,
                      int result,
                      const char *fmt,
                      ...)
{
    va_list ap;

    va_start(ap, fmt);
    vformat(l->reason, sizeof(l->reason), fmt, ap);
    va_end(ap);
    l->state = to;
    l->result = to == SLUICE_FSM_DONE ? result : SLUICE_RESULT_UNKNOWN;
    memcpy(tr->reason, l->reason, sizeof(tr->reason));
}

/* Record a reason for an event that keeps the state. */
static void note(sluice_fsm_transition_t *tr, const char *fmt, ...) SLUICE_PRINTF(2, 3);

static void note(sluice_fsm_transition_t *tr, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vformat(tr->reason, sizeof(tr->reason), fmt, ap);
    va_end(ap);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src != NULL ? src : "");
}

/* ---- Slurm record → verdict -------------------------------------------- */

enum { COMP_PENDING, COMP_RUNNING, COMP_FINAL };

#define REQUEUE_FLAGS                                                                              \
    (SLUICE_JOB_FLAG(REQUEUED) | SLUICE_JOB_FLAG(REQUEUE_HOLD) | SLUICE_JOB_FLAG(SPECIAL_EXIT))
#define ENDING_FLAGS (SLUICE_JOB_FLAG(COMPLETING) | SLUICE_JOB_FLAG(STAGE_OUT))
#define INFRA_FLAGS                                                                                \
    (SLUICE_JOB_FLAG(LAUNCH_FAILED) | SLUICE_JOB_FLAG(RECONFIG_FAIL) | SLUICE_JOB_FLAG(REVOKED))

static bool requeued(const sluice_jobview_t *v)
{
    return (v->flags & REQUEUE_FLAGS) != 0;
}

/* Reference section 8.1: final = base not PENDING/RUNNING/SUSPENDED and no
 * COMPLETING/STAGE_OUT flag and no requeue flag. */
static int classify(const sluice_jobview_t *v)
{
    if (requeued(v))
        return COMP_PENDING;
    switch (v->base) {
    case SLUICE_JOB_PENDING:
        return COMP_PENDING;
    case SLUICE_JOB_RUNNING:
    case SLUICE_JOB_SUSPENDED:
        return COMP_RUNNING;
    default:
        return (v->flags & ENDING_FLAGS) ? COMP_RUNNING : COMP_FINAL;
    }
}

static bool infra_base(sluice_job_base b)
{
    switch (b) {
    case SLUICE_JOB_BOOT_FAIL:
    case SLUICE_JOB_DEADLINE:
    case SLUICE_JOB_NODE_FAIL:
    case SLUICE_JOB_OUT_OF_MEMORY:
    case SLUICE_JOB_PREEMPTED:
    case SLUICE_JOB_TIMEOUT:
        return true;
    default:
        return false;
    }
}

/* Name of a signal number, or NULL for one this table does not know. */
static const char *signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
        {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
        {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
        {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
        {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
    };
    unsigned i;

    for (i = 0; i < COUNT(names); i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

/* "FAILED+LAUNCH_FAILED reason=NonZeroExitCode exit=3 signal=0".  The batch
 * script reports a pool killed by a signal the way a shell does, as exit
 * 128+N with no signal of its own; such an exit also names the signal:
 * "exit=137 signal=0 (128+9: SIGKILL)". */
static void describe(const sluice_jobview_t *v, char *dst, size_t cap)
{
    size_t used;
    unsigned i;

    snprintf(dst, cap, "%s", base_name(v->base));
    for (i = 0; i < COUNT(flag_names); i++) {
        if (v->flags & (UINT32_C(1) << i)) {
            used = strlen(dst);
            snprintf(dst + used, cap - used, "+%s", flag_names[i]);
        }
    }
    used = strlen(dst);
    snprintf(dst + used, cap - used, " reason=%s", v->state_reason ? v->state_reason : "None");
    used = strlen(dst);
    if (v->has_exit)
        snprintf(dst + used, cap - used, " exit=%d signal=%d", v->exit_code, v->exit_signal);
    used = strlen(dst);
    if (v->has_exit && v->exit_signal == 0 && v->exit_code > 128 &&
        signal_name(v->exit_code - 128) != NULL)
        snprintf(dst + used, cap - used, " (128+%d: %s)", v->exit_code - 128,
                 signal_name(v->exit_code - 128));
    used = strlen(dst);
    if (v->has_derived)
        snprintf(dst + used, cap - used, " derived=%d", v->derived_exit_code);
}

/* Exit code first, then derived exit code: 101-104 are the workload's own. */
static int workload_code(const sluice_jobview_t *v)
{
    if (v->has_exit && v->exit_code >= 101 && v->exit_code <= 104)
        return v->exit_code;
    if (v->has_derived && v->derived_exit_code >= 101 && v->derived_exit_code <= 104)
        return v->derived_exit_code;
    return 0;
}

static int verdict_rank(int result)
{
    switch (result) {
    case SLUICE_RESULT_INFRASTRUCTURE_ERROR:
        return 5;
    case SLUICE_RESULT_WORKLOAD_101:
    case SLUICE_RESULT_WORKLOAD_102:
    case SLUICE_RESULT_WORKLOAD_103:
        return 4;
    case SLUICE_RESULT_EXECUTION_ERROR:
        return 3;
    case SLUICE_RESULT_ABORTED:
        return 2;
    default:
        return 1;
    }
}

/* slurmctld FAILED the job before it started, for a pending reason that
 * never clears (the launcher marks the record: the reason list is a site
 * setting).  Slurm ended it, not the workload. */
static bool failed_by_slurm(const sluice_jobview_t *v)
{
    return v->failed_unschedulable && v->base == SLUICE_JOB_FAILED;
}

/* An infrastructure flag or base state: nothing the exit files say changes
 * that verdict. */
static bool hard_infra(const sluice_jobview_t *v)
{
    return (v->flags & INFRA_FLAGS) != 0 || infra_base(v->base) || failed_by_slurm(v);
}

/* CANCELLED although sluice did not cancel it.  That is an admin's scancel,
 * or Slurm ending a hetjob whose script stopped the other pools: only the
 * exit files tell the two apart. */
static bool unasked_cancel(const sluice_fsm_launch_t *l, const sluice_jobview_t *v)
{
    return l->intent == SLUICE_CANCEL_NONE && v->base == SLUICE_JOB_CANCELLED && !hard_infra(v);
}

/* The result of one final component, with its explanation in `why`. */
static int
component_verdict(const sluice_fsm_launch_t *l, const sluice_jobview_t *v, char *why, size_t cap)
{
    int wc;
    bool failed;

    if (v->flags & INFRA_FLAGS) {
        snprintf(why, cap, "infrastructure flag");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (infra_base(v->base)) {
        snprintf(why, cap, "infrastructure state");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (failed_by_slurm(v)) {
        snprintf(why, cap, "slurmctld failed the job: %s can never be satisfied",
                 v->state_reason != NULL ? v->state_reason : "its pending reason");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (l->intent == SLUICE_CANCEL_CALLER &&
        (v->base == SLUICE_JOB_CANCELLED || v->base == SLUICE_JOB_COMPLETED)) {
        snprintf(why, cap, "aborted by %s", l->caller[0] ? l->caller : "the caller");
        return SLUICE_RESULT_ABORTED;
    }
    if (l->intent == SLUICE_CANCEL_REQUEUE) {
        snprintf(why, cap, "requeued although requeue is not allowed");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (v->base == SLUICE_JOB_CANCELLED) {
        if (l->intent == SLUICE_CANCEL_PENDING_TIMEOUT)
            snprintf(why, cap, "pending timeout");
        else if (l->intent == SLUICE_CANCEL_UNSCHEDULABLE)
            snprintf(why, cap, "pending reason %s can never clear", l->unschedulable);
        else
            snprintf(why, cap, "cancelled without the caller's intent");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    wc = workload_code(v);
    if (wc == 104) {
        snprintf(why, cap, "workload declared an infrastructure error (104)");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (wc != 0) {
        snprintf(why, cap, "workload declared %d", wc);
        return wc;
    }
    failed = v->base == SLUICE_JOB_FAILED || (v->has_exit && v->exit_code != 0) ||
             (v->has_exit && v->exit_signal != 0);
    if (failed || v->base != SLUICE_JOB_COMPLETED) {
        snprintf(why, cap, "workload failed");
        return SLUICE_RESULT_EXECUTION_ERROR;
    }
    snprintf(why, cap, "completed");
    return SLUICE_RESULT_SUCCEEDED;
}

/* ---- the pure update --------------------------------------------------- */

static void start_job(sluice_fsm_launch_t *l,
                      sluice_fsm_transition_t *tr,
                      const sluice_fsm_event_t *ev,
                      const char *how)
{
    size_t i;

    for (i = 0; i < ev->n_job_ids; i++)
        l->job_ids[i] = ev->job_ids[i];
    l->n_job_ids = ev->n_job_ids;
    l->uncertain = false;
    if (l->intent == SLUICE_CANCEL_CALLER)
        set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "job %llu %s; cancel requested by %s",
                  (unsigned long long)ev->job_ids[0], how, l->caller);
    else
        set_state(l, tr, SLUICE_FSM_PENDING, 0, "job %llu %s (attempt %u)",
                  (unsigned long long)ev->job_ids[0], how, l->attempt);
}

static bool observable(sluice_fsm_state s)
{
    return s == SLUICE_FSM_PENDING || s == SLUICE_FSM_RUNNING || s == SLUICE_FSM_CANCELLING;
}

static void pending_tick(sluice_fsm_launch_t *l, double t)
{
    if (!l->has_pending) {
        l->has_pending = true;
        l->first_pending = t;
    } else if (l->prev_pending && t > l->last_pending) {
        l->pending_observed += t - l->last_pending;
    }
    l->prev_pending = true;
    l->last_pending = t;
}

static sluice_err apply_found(sluice_fsm_launch_t *l,
                              const sluice_fsm_event_t *ev,
                              sluice_fsm_transition_t *tr,
                              sluice_error_t *err)
{
    char desc[160] = "";
    char why[96] = "";
    char best_desc[160] = "";
    char best_why[96] = "";
    int best = -1, best_comp = 0, v, cls, rest = SLUICE_RESULT_SUCCEEDED;
    bool any_pending = false, any_live = false, any_requeue = false, hard = false, unasked = false;
    size_t i;

    if (ev->n_jobs == 0 || ev->jobs == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "context.jobs: FOUND needs at least one job");
    if (ev->n_jobs > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "context.jobs: more than %d components",
                             SLUICE_FSM_MAX_JOBS);
    for (i = 0; i < ev->n_jobs; i++) {
        if (ev->jobs[i].base <= SLUICE_JOB_BASE_UNKNOWN ||
            ev->jobs[i].base >= SLUICE_JOB_BASE_COUNT_)
            return sluice_errorf(err, SLUICE_EINVAL, "context.jobs[%zu].state: unknown", i);
    }
    l->misses = 0;
    l->has_miss = false;
    if (ev->source == SLUICE_SOURCE_LIVE)
        l->left_queue = false;
    l->n_components = ev->n_jobs;
    for (i = 0; i < ev->n_jobs; i++) {
        cls = classify(&ev->jobs[i]);
        any_requeue |= requeued(&ev->jobs[i]);
        any_pending |= cls == COMP_PENDING;
        any_live |= cls != COMP_FINAL;
    }
    if (any_live) {
        describe(&ev->jobs[0], desc, sizeof(desc));
        if (any_pending)
            pending_tick(l, ev->time);
        else
            l->prev_pending = false;
        if (any_requeue && !l->cfg.requeue_allowed && l->intent == SLUICE_CANCEL_NONE) {
            l->intent = SLUICE_CANCEL_REQUEUE;
            l->cancel_sent = false;
            set_state(l, tr, SLUICE_FSM_CANCELLING, 0,
                      "slurm %s (%s): requeued although requeue is not allowed", desc,
                      sluice_lookup_source_name(ev->source));
            return SLUICE_OK;
        }
        if (l->state == SLUICE_FSM_CANCELLING) {
            note(tr, "slurm %s (%s): still live, cancel in progress", desc,
                 sluice_lookup_source_name(ev->source));
            return SLUICE_OK;
        }
        set_state(l, tr, any_pending ? SLUICE_FSM_PENDING : SLUICE_FSM_RUNNING, 0, "slurm %s (%s)",
                  desc, sluice_lookup_source_name(ev->source));
        return SLUICE_OK;
    }
    l->prev_pending = false;
    for (i = 0; i < ev->n_jobs; i++) {
        v = component_verdict(l, &ev->jobs[i], why, sizeof(why));
        hard |= hard_infra(&ev->jobs[i]);
        if (unasked_cancel(l, &ev->jobs[i]))
            unasked = true;
        else if (verdict_rank(v) > verdict_rank(rest))
            rest = v;
        /* Among equal ranks an infrastructure state or flag names the
         * component: it is the verdict the exit files cannot change. */
        if (best < 0 || verdict_rank(v) > verdict_rank(best) ||
            (v == best && hard_infra(&ev->jobs[i]) && !hard_infra(&ev->jobs[best_comp]))) {
            best = v;
            best_comp = (int)i;
            memcpy(best_why, why, sizeof(why));
            describe(&ev->jobs[i], best_desc, sizeof(best_desc));
        }
    }
    l->slurm_exit_code = ev->jobs[best_comp].has_exit ? ev->jobs[best_comp].exit_code : 0;
    if (ev->n_jobs > 1)
        snprintf(why, sizeof(why), "component %d: ", best_comp);
    else
        why[0] = '\0';
    if (best != SLUICE_RESULT_SUCCEEDED && best != SLUICE_RESULT_ABORTED &&
        l->intent == SLUICE_CANCEL_NONE && !hard && (ev->n_jobs > 1 || unasked)) {
        /* Slurm cannot say which pool failed (hetjob), nor whether an
         * unasked CANCELLED was a pool's failure (the script's stop of the
         * other pools races Slurm's end of the job); the exit files can. */
        l->settling = true;
        l->settle_time = ev->time;
        l->verdict = best;
        l->unasked_cancel = unasked;
        l->verdict_rest = rest;
        snprintf(l->verdict_reason, sizeof(l->verdict_reason), "%s%s: slurm %s (%s)", why, best_why,
                 best_desc, sluice_lookup_source_name(ev->source));
        note(tr, "final (%s); reading the pool exit files", l->verdict_reason);
        return SLUICE_OK;
    }
    set_state(l, tr, SLUICE_FSM_DONE, best, "%s%s: slurm %s (%s)", why, best_why, best_desc,
              sluice_lookup_source_name(ev->source));
    return SLUICE_OK;
}

static sluice_err apply_observed(sluice_fsm_launch_t *l,
                                 const sluice_fsm_event_t *ev,
                                 sluice_fsm_transition_t *tr,
                                 sluice_error_t *err)
{
    const char *src = sluice_lookup_source_name(ev->source);
    bool counted;

    if (src == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "context.source: unknown");
    switch (ev->lookup) {
    case SLUICE_LOOKUP_UNAVAILABLE:
        /* Never terminal, never a miss; the pending timer pauses. */
        l->prev_pending = false;
        note(tr, "%s lookup unavailable%s%s", src, ev->detail ? ": " : "",
             ev->detail ? ev->detail : "");
        return SLUICE_OK;
    case SLUICE_LOOKUP_NOT_FOUND:
        l->prev_pending = false;
        if (ev->source == SLUICE_SOURCE_LIVE) {
            l->left_queue = true;
            note(tr, "job left the live queue; reading accounting");
            return SLUICE_OK;
        }
        counted = !l->has_miss || ev->time - l->last_miss_time >= l->cfg.miss_spacing;
        if (!counted) {
            note(tr, "accounting miss %.1f s after the last counted one (< %.1f s): not counted",
                 ev->time - l->last_miss_time, l->cfg.miss_spacing);
            return SLUICE_OK;
        }
        l->misses++;
        l->has_miss = true;
        l->last_miss_time = ev->time;
        if (l->misses >= l->cfg.miss_budget) {
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                      "accounting has no record of job %llu after %u healthy misses",
                      (unsigned long long)(l->n_job_ids ? l->job_ids[0] : 0), l->misses);
            return SLUICE_OK;
        }
        note(tr, "accounting miss %u of %u", l->misses, l->cfg.miss_budget);
        return SLUICE_OK;
    case SLUICE_LOOKUP_FOUND:
        return apply_found(l, ev, tr, err);
    }
    return sluice_errorf(err, SLUICE_EINVAL, "context.lookup: unknown");
}

static sluice_err refuse(const sluice_fsm_launch_t *l,
                         const sluice_fsm_event_t *ev,
                         sluice_error_t *err,
                         const char *why)
{
    return sluice_errorf(err, SLUICE_ESTATE, "event %s not allowed in state %s%s%s",
                         sluice_fsm_event_name(ev->type), sluice_fsm_state_name(l->state),
                         why ? ": " : "", why ? why : "");
}

static sluice_err check_ids(const sluice_fsm_event_t *ev, sluice_error_t *err)
{
    size_t i;

    if (ev->n_job_ids == 0 || ev->n_job_ids > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_ids: 1 to %d ids required",
                             SLUICE_FSM_MAX_JOBS);
    for (i = 0; i < ev->n_job_ids; i++) {
        if (ev->job_ids[i] == 0)
            return sluice_errorf(err, SLUICE_EINVAL, "context.job_ids[%zu]: must be > 0", i);
    }
    return SLUICE_OK;
}

/* A pool ended by SIGTERM or SIGKILL: what the script's stop of the other
 * pools, or a cancel from outside, does to a pool. */
static bool stopped_pool(const sluice_fsm_pool_exit_t *p)
{
    return p->exit_code == 0 && (p->signal == SIGTERM || p->signal == SIGKILL);
}

/* The pool that failed first.  The script's own record (exit/.first) wins;
 * without one (a render from before it existed), the first failing pool
 * whose exit code equals the batch exit code, else the first failing one,
 * passing over stopped pools when `skip_stopped`.  *n_failed counts every
 * failing pool. */
static const sluice_fsm_pool_exit_t *
failed_pool(const sluice_fsm_launch_t *l, bool skip_stopped, size_t *n_failed)
{
    const sluice_fsm_pool_exit_t *chosen = NULL;
    size_t i;

    *n_failed = 0;
    for (i = 0; i < l->n_pools; i++) {
        const sluice_fsm_pool_exit_t *p = &l->pools[i];

        if (p->exit_code == 0 && p->signal == 0)
            continue;
        (*n_failed)++;
        if (p->first)
            return p;
        if (skip_stopped && stopped_pool(p))
            continue;
        if (chosen == NULL)
            chosen = p;
        else if (chosen->exit_code != l->slurm_exit_code && p->exit_code == l->slurm_exit_code)
            chosen = p;
    }
    return chosen;
}

/* A failed pool's own result: its workload code, else EXECUTION_ERROR. */
static int pool_verdict(const sluice_fsm_pool_exit_t *p)
{
    if (p->exit_code >= 101 && p->exit_code <= 103)
        return p->exit_code;
    if (p->exit_code == 104)
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    return SLUICE_RESULT_EXECUTION_ERROR;
}

/* A component read CANCELLED and sluice had not cancelled it: the pool the
 * exit files name is the failure; no such pool (an admin's scancel) leaves
 * INFRASTRUCTURE_ERROR. */
static sluice_err apply_unasked_cancel(sluice_fsm_launch_t *l, sluice_fsm_transition_t *tr)
{
    size_t n_failed = 0;
    const sluice_fsm_pool_exit_t *p = failed_pool(l, true, &n_failed);
    bool signalled = false;
    int result;

    for (size_t i = 0; i < l->n_pools; i++)
        signalled |= l->pools[i].signalled;
    if (signalled && (p == NULL || !p->first)) {
        /* The script's trap ran and it had recorded no failure before: an
         * outside cancel, whatever the pools exited with on their way out
         * (a workload that handles SIGTERM may exit 1). */
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                  "cancelled without the caller's intent: the script was signalled before any "
                  "pool failed; %s",
                  l->verdict_reason);
        return SLUICE_OK;
    }
    if (p == NULL || stopped_pool(p)) {
        if (p != NULL)
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                      "pool '%s' was stopped by signal %d, no pool failed on its own; %s", p->name,
                      p->signal, l->verdict_reason);
        else
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                      "no pool exit file names a failure; %s", l->verdict_reason);
        return SLUICE_OK;
    }
    result = pool_verdict(p);
    if (verdict_rank(l->verdict_rest) > verdict_rank(result))
        result = l->verdict_rest;
    set_state(l, tr, SLUICE_FSM_DONE, result,
              "pool '%s' failed (exit %d, signal %d)%s; CANCELLED without a cancel by sluice "
              "follows that failure; %s",
              p->name, p->exit_code, p->signal, n_failed > 1 ? " (other pools failed too)" : "",
              l->verdict_reason);
    return SLUICE_OK;
}

static sluice_err apply_pool_exits_read(sluice_fsm_launch_t *l, sluice_fsm_transition_t *tr)
{
    size_t n_failed = 0;
    const sluice_fsm_pool_exit_t *chosen;

    l->settling = false;
    if (l->unasked_cancel)
        return apply_unasked_cancel(l, tr);
    chosen = failed_pool(l, false, &n_failed);
    if (chosen == NULL) {
        set_state(l, tr, SLUICE_FSM_DONE, l->verdict, "no pool exit file names a failure; %s",
                  l->verdict_reason);
        return SLUICE_OK;
    }
    set_state(l, tr, SLUICE_FSM_DONE, l->verdict, "pool '%s' failed (exit %d, signal %d)%s; %s",
              chosen->name, chosen->exit_code, chosen->signal,
              n_failed > 1 ? " (other pools failed too)" : "", l->verdict_reason);
    return SLUICE_OK;
}

static sluice_err apply_event(sluice_fsm_launch_t *l,
                              const sluice_fsm_event_t *ev,
                              sluice_fsm_transition_t *tr,
                              sluice_error_t *err)
{
    sluice_err rc;
    size_t i;

    switch (ev->type) {
    case SLUICE_EV_ACCEPTED:
        if (l->state != SLUICE_FSM_NEW)
            return refuse(l, ev, err, NULL);
        set_state(l, tr, SLUICE_FSM_ACCEPTED, 0, "accepted");
        return SLUICE_OK;

    case SLUICE_EV_SUBMIT_STARTED:
        if (ev->job_name == NULL || ev->job_name[0] == '\0')
            return sluice_errorf(err, SLUICE_EINVAL, "context.job_name: required");
        if (ev->comment == NULL || ev->comment[0] == '\0')
            return sluice_errorf(err, SLUICE_EINVAL, "context.comment: required");
        if (strlen(ev->job_name) >= SLUICE_FSM_MARKER_MAX ||
            strlen(ev->comment) >= SLUICE_FSM_MARKER_MAX)
            return sluice_errorf(err, SLUICE_EINVAL, "context.job_name: marker too long");
        if (!(l->state == SLUICE_FSM_ACCEPTED ||
              (l->state == SLUICE_FSM_SUBMITTING && l->may_retry)))
            return refuse(l, ev, err, "no attempt is allowed now");
        if (ev->attempt != l->attempt + 1)
            return sluice_errorf(err, SLUICE_ESTATE, "context.attempt: expected %u, got %u",
                                 l->attempt + 1, ev->attempt);
        l->attempt = ev->attempt;
        copy_str(l->job_name, sizeof(l->job_name), ev->job_name);
        copy_str(l->comment, sizeof(l->comment), ev->comment);
        l->post_time = ev->time;
        l->uncertain = false;
        l->may_retry = false;
        l->n_job_ids = 0;
        set_state(l, tr, SLUICE_FSM_SUBMITTING, 0, "attempt %u: submitting %s", l->attempt,
                  l->job_name);
        return SLUICE_OK;

    case SLUICE_EV_SUBMIT_RESENT:
        /* The attempt's POST provably never left and goes again: the same
         * marker, a later POST time (the absence delay runs from it). */
        if (l->state != SLUICE_FSM_SUBMITTING || l->may_retry || l->uncertain || l->n_job_ids != 0)
            return refuse(l, ev, err, "no POST of this attempt is waiting to be sent");
        if (ev->attempt != l->attempt)
            return sluice_errorf(err, SLUICE_ESTATE,
                                 "context.attempt: %u is not the current attempt %u", ev->attempt,
                                 l->attempt);
        l->post_time = ev->time;
        note(tr, "attempt %u: POST sent again (the last one never left)", l->attempt);
        return SLUICE_OK;

    case SLUICE_EV_SUBMITTED:
    case SLUICE_EV_ADOPTED:
        if ((rc = check_ids(ev, err)) != SLUICE_OK)
            return rc;
        if (l->state != SLUICE_FSM_SUBMITTING || l->may_retry)
            return refuse(l, ev, err, NULL);
        if (ev->type == SLUICE_EV_ADOPTED && ev->attempt != l->attempt)
            return sluice_errorf(err, SLUICE_ESTATE,
                                 "context.attempt: %u is not the current attempt %u", ev->attempt,
                                 l->attempt);
        start_job(l, tr, ev, ev->type == SLUICE_EV_SUBMITTED ? "submitted" : "adopted");
        return SLUICE_OK;

    case SLUICE_EV_SUBMIT_UNCERTAIN:
        if (l->state != SLUICE_FSM_SUBMITTING || l->may_retry)
            return refuse(l, ev, err, NULL);
        l->uncertain = true;
        note(tr, "submit outcome unknown%s%s; reconciling", ev->detail ? ": " : "",
             ev->detail ? ev->detail : "");
        return SLUICE_OK;

    case SLUICE_EV_SUBMIT_REJECTED:
        if (l->state != SLUICE_FSM_SUBMITTING || l->may_retry)
            return refuse(l, ev, err, NULL);
        if (l->intent == SLUICE_CANCEL_CALLER)
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_ABORTED,
                      "aborted by %s; submit rejected: %s", l->caller,
                      ev->detail ? ev->detail : "");
        else
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                      "submit rejected: %s", ev->detail ? ev->detail : "");
        return SLUICE_OK;

    case SLUICE_EV_ABSENCE_CONFIRMED:
        if (l->state != SLUICE_FSM_SUBMITTING || !l->uncertain)
            return refuse(l, ev, err, "only after an uncertain submit");
        l->uncertain = false;
        l->may_retry = true;
        if (l->intent == SLUICE_CANCEL_CALLER) {
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_ABORTED,
                      "aborted by %s; no job of attempt %u exists", l->caller, l->attempt);
            return SLUICE_OK;
        }
        note(tr, "no job of attempt %u exists; a new attempt is allowed", l->attempt);
        return SLUICE_OK;

    case SLUICE_EV_OBSERVED:
        if (!observable(l->state) || l->settling)
            return refuse(l, ev, err, NULL);
        return apply_observed(l, ev, tr, err);

    case SLUICE_EV_CANCEL_REQUESTED:
        if (ev->caller == NULL || ev->caller[0] == '\0' ||
            strlen(ev->caller) >= SLUICE_FSM_NAME_MAX)
            return sluice_errorf(err, SLUICE_EINVAL, "context.caller: 1 to %d characters",
                                 SLUICE_FSM_NAME_MAX - 1);
        if (l->state == SLUICE_FSM_NEW)
            return refuse(l, ev, err, NULL);
        if (l->settling) {
            note(tr, "cancel by %s: the job had already finished", ev->caller);
            return SLUICE_OK;
        }
        if (l->intent != SLUICE_CANCEL_CALLER) {
            l->intent = SLUICE_CANCEL_CALLER;
            copy_str(l->caller, sizeof(l->caller), ev->caller);
        }
        if (l->state == SLUICE_FSM_ACCEPTED ||
            (l->state == SLUICE_FSM_SUBMITTING && l->may_retry)) {
            set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_ABORTED,
                      "aborted by %s before a job existed", l->caller);
            return SLUICE_OK;
        }
        if (l->state == SLUICE_FSM_SUBMITTING) {
            note(tr, "cancel by %s recorded; waiting for the submit outcome", l->caller);
            return SLUICE_OK;
        }
        if (l->state == SLUICE_FSM_CANCELLING) {
            note(tr, "cancel by %s (already cancelling)", l->caller);
            return SLUICE_OK;
        }
        l->cancel_sent = false;
        set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "cancel requested by %s", l->caller);
        return SLUICE_OK;

    case SLUICE_EV_CANCEL_SENT:
        if (l->state != SLUICE_FSM_CANCELLING || l->settling)
            return refuse(l, ev, err, NULL);
        l->cancel_sent = true;
        l->cancel_sent_time = ev->time;
        note(tr, "cancel sent");
        return SLUICE_OK;

    case SLUICE_EV_CANCEL_WITHDRAWN:
        /* A cancel for a pending job (timeout, unschedulable) that was not
         * sent: the launcher's fresh read before the DELETE showed the job
         * started, so the reason to cancel is gone and the launch goes on. */
        if (l->state != SLUICE_FSM_CANCELLING || l->settling || l->cancel_sent ||
            (l->intent != SLUICE_CANCEL_PENDING_TIMEOUT &&
             l->intent != SLUICE_CANCEL_UNSCHEDULABLE))
            return refuse(l, ev, err, NULL);
        l->intent = SLUICE_CANCEL_NONE;
        l->unschedulable[0] = '\0';
        set_state(l, tr, SLUICE_FSM_RUNNING, 0, "job started before the cancel was sent; running");
        return SLUICE_OK;

    case SLUICE_EV_PENDING_TIMEOUT:
        if (l->state != SLUICE_FSM_PENDING || l->intent != SLUICE_CANCEL_NONE)
            return refuse(l, ev, err, NULL);
        if (!(l->cfg.pending_timeout > 0) || l->pending_observed < l->cfg.pending_timeout)
            return refuse(l, ev, err, "pending timeout not reached");
        l->intent = SLUICE_CANCEL_PENDING_TIMEOUT;
        l->cancel_sent = false;
        set_state(l, tr, SLUICE_FSM_CANCELLING, 0,
                  "pending timeout: observed pending %.0f s >= %.0f s", l->pending_observed,
                  l->cfg.pending_timeout);
        return SLUICE_OK;

    case SLUICE_EV_UNSCHEDULABLE:
        if (ev->detail == NULL || ev->detail[0] == '\0' ||
            strlen(ev->detail) >= SLUICE_FSM_NAME_MAX)
            return sluice_errorf(err, SLUICE_EINVAL, "context.detail: 1 to %d characters",
                                 SLUICE_FSM_NAME_MAX - 1);
        if (l->state != SLUICE_FSM_PENDING || l->intent != SLUICE_CANCEL_NONE)
            return refuse(l, ev, err, NULL);
        l->intent = SLUICE_CANCEL_UNSCHEDULABLE;
        copy_str(l->unschedulable, sizeof(l->unschedulable), ev->detail);
        l->cancel_sent = false;
        set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "pending reason %s can never clear; cancelling",
                  l->unschedulable);
        return SLUICE_OK;

    case SLUICE_EV_SECRET_UNAVAILABLE:
        if (!(l->state == SLUICE_FSM_ACCEPTED ||
              (l->state == SLUICE_FSM_SUBMITTING && l->n_job_ids == 0 && !l->uncertain)))
            return refuse(l, ev, err, NULL);
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                  "secret unavailable after restart");
        return SLUICE_OK;

    case SLUICE_EV_POOL_EXIT:
        if (ev->pool == NULL || ev->pool[0] == '\0' || strlen(ev->pool) >= SLUICE_FSM_NAME_MAX)
            return sluice_errorf(err, SLUICE_EINVAL, "context.pool: 1 to %d characters",
                                 SLUICE_FSM_NAME_MAX - 1);
        if (!observable(l->state))
            return refuse(l, ev, err, NULL);
        for (i = 0; i < l->n_pools; i++) {
            if (strcmp(l->pools[i].name, ev->pool) == 0)
                break;
        }
        if (i == l->n_pools) {
            if (l->n_pools == SLUICE_FSM_MAX_POOLS)
                return sluice_errorf(err, SLUICE_EINVAL, "context.pool: more than %d pools",
                                     SLUICE_FSM_MAX_POOLS);
            l->n_pools++;
            copy_str(l->pools[i].name, sizeof(l->pools[i].name), ev->pool);
        }
        if (ev->first) {
            /* One pool failed first: a newer record replaces an older. */
            for (size_t k = 0; k < l->n_pools; k++)
                l->pools[k].first = false;
        }
        l->pools[i].exit_code = ev->exit_code;
        l->pools[i].signal = ev->signal;
        l->pools[i].first = ev->first;
        l->pools[i].signalled = ev->signalled;
        note(tr, "pool '%s' exited %d (signal %d)%s%s", ev->pool, ev->exit_code, ev->signal,
             ev->first ? ", the first pool to fail" : "",
             ev->signalled ? ", the script was signalled" : "");
        return SLUICE_OK;

    case SLUICE_EV_POOL_EXITS_READ:
        if (!l->settling)
            return refuse(l, ev, err, "no final hetjob verdict is waiting");
        return apply_pool_exits_read(l, tr);

    case SLUICE_EV_COUNT_:
        break;
    }
    return sluice_errorf(err, SLUICE_EINVAL, "name: unknown event type %d", (int)ev->type);
}

sluice_err sluice_fsm_apply(sluice_fsm_launch_t *l,
                            const sluice_fsm_event_t *ev,
                            sluice_fsm_transition_t *out,
                            sluice_error_t *err)
{
    sluice_fsm_launch_t next;
    sluice_fsm_transition_t tr;
    sluice_err rc;

    if (l == NULL || ev == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launch and event are required");
    memset(&tr, 0, sizeof(tr));
    tr.from = l->state;
    if (!isfinite(ev->time))
        return sluice_errorf(err, SLUICE_EINVAL, "time: not a finite number");
    if ((unsigned)ev->type >= SLUICE_EV_COUNT_)
        return sluice_errorf(err, SLUICE_EINVAL, "name: unknown event type %d", (int)ev->type);
    if (l->state == SLUICE_FSM_DONE) {
        /* Terminal: recorded by the store, ignored here. */
        l->n_ignored++;
        tr.to = l->state;
        tr.result = l->result;
        tr.ignored = true;
        snprintf(tr.reason, sizeof(tr.reason), "ignored: launch already DONE");
        if (out != NULL)
            *out = tr;
        return SLUICE_OK;
    }
    next = *l;
    if ((rc = apply_event(&next, ev, &tr, err)) != SLUICE_OK)
        return rc;
    next.last_time = ev->time;
    next.last_seq = ev->seq;
    next.n_applied++;
    *l = next;
    tr.to = l->state;
    tr.result = l->result;
    if (out != NULL)
        *out = tr;
    return SLUICE_OK;
}

/* ---- what is due ------------------------------------------------------- */

unsigned sluice_fsm_due(const sluice_fsm_launch_t *l, double now)
{
    unsigned due = 0;

    switch (l->state) {
    case SLUICE_FSM_ACCEPTED:
        return SLUICE_DUE_SUBMIT;
    case SLUICE_FSM_SUBMITTING:
        if (l->uncertain)
            due |= SLUICE_DUE_RECONCILE;
        if (l->may_retry)
            due |= SLUICE_DUE_NEW_ATTEMPT;
        return due;
    case SLUICE_FSM_PENDING:
    case SLUICE_FSM_RUNNING:
    case SLUICE_FSM_CANCELLING:
        if (l->settling)
            return SLUICE_DUE_POOL_EXITS;
        if (l->left_queue) {
            if (!l->has_miss || now - l->last_miss_time >= l->cfg.miss_spacing)
                due |= SLUICE_DUE_ACCOUNTING_LOOKUP;
        } else {
            due |= SLUICE_DUE_LIVE_LOOKUP;
        }
        if (l->state == SLUICE_FSM_CANCELLING && !l->left_queue &&
            (!l->cancel_sent || now - l->cancel_sent_time >= l->cfg.cancel_resend))
            due |= SLUICE_DUE_CANCEL;
        if (l->state == SLUICE_FSM_PENDING && l->intent == SLUICE_CANCEL_NONE &&
            l->cfg.pending_timeout > 0 && l->pending_observed >= l->cfg.pending_timeout)
            due |= SLUICE_DUE_PENDING_TIMEOUT;
        return due;
    default:
        return 0;
    }
}

bool sluice_fsm_launch_equal(const sluice_fsm_launch_t *a, const sluice_fsm_launch_t *b)
{
    size_t i;

#define SAME(f) (a->f == b->f)
#define SAME_STR(f) (strcmp(a->f, b->f) == 0)
    if (!(SAME(cfg.miss_budget) && SAME(cfg.miss_spacing) && SAME(cfg.pending_timeout) &&
          SAME(cfg.cancel_resend) && SAME(cfg.requeue_allowed) && SAME(state) && SAME(result) &&
          SAME_STR(reason) && SAME(last_time) && SAME(last_seq) && SAME(n_applied) &&
          SAME(n_ignored) && SAME(attempt) && SAME_STR(job_name) && SAME_STR(comment) &&
          SAME(post_time) && SAME(uncertain) && SAME(may_retry) && SAME(n_job_ids) &&
          SAME(intent) && SAME_STR(caller) && SAME_STR(unschedulable) && SAME(cancel_sent) &&
          SAME(cancel_sent_time) && SAME(left_queue) && SAME(misses) && SAME(has_miss) &&
          SAME(last_miss_time) && SAME(has_pending) && SAME(first_pending) && SAME(prev_pending) &&
          SAME(last_pending) && SAME(pending_observed) && SAME(n_components) && SAME(n_pools) &&
          SAME(settling) && SAME(settle_time) && SAME(verdict) && SAME_STR(verdict_reason) &&
          SAME(unasked_cancel) && SAME(verdict_rest) && SAME(slurm_exit_code)))
        return false;
    for (i = 0; i < a->n_job_ids && i < SLUICE_FSM_MAX_JOBS; i++) {
        if (!SAME(job_ids[i]))
            return false;
    }
    for (i = 0; i < a->n_pools && i < SLUICE_FSM_MAX_POOLS; i++) {
        if (!SAME_STR(pools[i].name) || !SAME(pools[i].exit_code) || !SAME(pools[i].signal) ||
            !SAME(pools[i].first) || !SAME(pools[i].signalled))
            return false;
    }
#undef SAME
#undef SAME_STR
    return true;
}

/* ---- events: ownership and JSON ---------------------------------------- */

static void view_release(sluice_jobview_t *v)
{
    free(v->name);
    free(v->comment);
    free(v->user_name);
    free(v->partition);
    free(v->nodes);
    free(v->state_reason);
    free(v->state_description);
    memset(v, 0, sizeof(*v));
}

void sluice_fsm_event_clear(sluice_fsm_event_t *ev)
{
    size_t i;

    if (ev == NULL)
        return;
    free(ev->by);
    free(ev->job_name);
    free(ev->comment);
    free(ev->detail);
    free(ev->caller);
    free(ev->pool);
    if (ev->jobs != NULL) {
        for (i = 0; i < ev->n_jobs; i++)
            view_release(&ev->jobs[i]);
        free(ev->jobs);
    }
    memset(ev, 0, sizeof(*ev));
}

/* Context keys each event accepts ("by" is accepted everywhere). */
static const char *const *context_keys(sluice_fsm_event_type t)
{
    static const char *const none[] = {NULL};
    static const char *const started[] = {"attempt", "job_name", "comment", NULL};
    static const char *const resent[] = {"attempt", NULL};
    static const char *const submitted[] = {"job_ids", NULL};
    static const char *const detail[] = {"detail", NULL};
    static const char *const adopted[] = {"attempt", "job_ids", "source", NULL};
    static const char *const observed[] = {"lookup", "source", "jobs", "detail", NULL};
    static const char *const cancel[] = {"caller", NULL};
    static const char *const pool[] = {"pool", "exit_code", "signal", "first", "signalled", NULL};

    switch (t) {
    case SLUICE_EV_SUBMIT_STARTED:
        return started;
    case SLUICE_EV_SUBMIT_RESENT:
        return resent;
    case SLUICE_EV_SUBMITTED:
        return submitted;
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
    case SLUICE_EV_UNSCHEDULABLE:
        return detail;
    case SLUICE_EV_ADOPTED:
        return adopted;
    case SLUICE_EV_OBSERVED:
        return observed;
    case SLUICE_EV_CANCEL_REQUESTED:
        return cancel;
    case SLUICE_EV_POOL_EXIT:
        return pool;
    default:
        return none;
    }
}

/* jansson's iterators take a non-const object; they do not modify it. */
static json_t *mutable_json(const json_t *o)
{
    json_t *m;

    memcpy(&m, &o, sizeof(m));
    return m;
}

static bool in_list(const char *const *list, const char *key)
{
    for (; *list != NULL; list++) {
        if (strcmp(*list, key) == 0)
            return true;
    }
    return false;
}

static sluice_err
only_keys(const json_t *obj, const char *const *allowed, const char *path, sluice_error_t *err)
{
    const char *key;
    json_t *val;

    json_object_foreach(mutable_json(obj), key, val)
    {
        (void)val;
        if (!in_list(allowed, key))
            return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: unknown field", path, key);
    }
    return SLUICE_OK;
}

/* A string field: required or optional, length-capped, copied to *out. */
static sluice_err get_str(const json_t *obj,
                          const char *key,
                          bool required,
                          size_t max,
                          char **out,
                          const char *path,
                          sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);
    size_t len;

    if (v == NULL) {
        if (required)
            return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: required", path, key);
        return SLUICE_OK;
    }
    if (!json_is_string(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: must be a string", path, key);
    len = json_string_length(v);
    if (len >= max || strlen(json_string_value(v)) != len)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: longer than %zu bytes or has NUL", path,
                             key, max - 1);
    *out = strdup(json_string_value(v));
    if (*out == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s.%s: out of memory", path, key);
    return SLUICE_OK;
}

size_t sluice_fsm_text_fit(const char *s, size_t max)
{
    size_t len = strlen(s), n;
    int back;

    if (max == 0)
        return 0;
    if (len < max)
        return len;
    /* s[n] is the first byte left out: while it continues a sequence, the
     * cut is inside one, so the sequence goes too (at most 3 steps back:
     * invalid text is cut where it is). */
    n = max - 1;
    for (back = 0; back < 3 && n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80; back++)
        n--;
    if (((unsigned char)s[n] & 0xC0) == 0x80)
        n = max - 1;
    return n;
}

char *sluice_fsm_text_dup(const char *s, size_t max)
{
    return s != NULL ? strndup(s, sluice_fsm_text_fit(s, max)) : NULL;
}

/* get_str() for free text from Slurm: a longer string is cut to `max`
 * instead of refused, so a log written before the writers cut it (or by
 * another writer) still replays. */
static sluice_err get_text(const json_t *obj,
                           const char *key,
                           bool required,
                           size_t max,
                           char **out,
                           const char *path,
                           sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (v == NULL || !json_is_string(v) || json_string_length(v) < max)
        return get_str(obj, key, required, max, out, path, err);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: has NUL", path, key);
    *out = sluice_fsm_text_dup(json_string_value(v), max);
    if (*out == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s.%s: out of memory", path, key);
    return SLUICE_OK;
}

static sluice_err get_int(const json_t *obj,
                          const char *key,
                          bool required,
                          json_int_t min,
                          json_int_t max,
                          json_int_t *out,
                          bool *present,
                          const char *path,
                          sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (present != NULL)
        *present = v != NULL;
    if (v == NULL) {
        if (required)
            return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: required", path, key);
        return SLUICE_OK;
    }
    if (!json_is_integer(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: must be an integer", path, key);
    if (json_integer_value(v) < min || json_integer_value(v) > max)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: out of range [%lld, %lld]", path, key,
                             (long long)min, (long long)max);
    *out = json_integer_value(v);
    return SLUICE_OK;
}

static sluice_err get_ids(const json_t *ctx, sluice_fsm_event_t *ev, sluice_error_t *err)
{
    const json_t *a = json_object_get(ctx, "job_ids");
    size_t i;

    if (a == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_ids: required");
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_ids: an array of 1 to %d ids",
                             SLUICE_FSM_MAX_JOBS);
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);

        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "context.job_ids[%zu]: must be a positive integer", i);
        ev->job_ids[i] = (uint64_t)json_integer_value(v);
    }
    ev->n_job_ids = json_array_size(a);
    return SLUICE_OK;
}

static const char *const view_keys[] = {"job_id",
                                        "het_job_id",
                                        "het_job_offset",
                                        "state",
                                        "flags",
                                        "state_reason",
                                        "state_description",
                                        "nodes",
                                        "exit_code",
                                        "exit_signal",
                                        "derived_exit_code",
                                        "derived_exit_signal",
                                        "restart_count",
                                        "failed_unschedulable",
                                        NULL};

static sluice_err
view_from_json(const json_t *o, sluice_jobview_t *v, const char *path, sluice_error_t *err)
{
    const json_t *state, *flags, *f;
    json_int_t n = 0;
    bool present = false;
    sluice_err rc;
    size_t i;
    int idx;

    if (!json_is_object(o))
        return sluice_errorf(err, SLUICE_EINVAL, "%s: must be an object", path);
    if ((rc = only_keys(o, view_keys, path, err)) != SLUICE_OK)
        return rc;
    if ((rc = get_int(o, "job_id", true, 1, INT64_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->job_id = (uint64_t)n;
    n = 0;
    if ((rc = get_int(o, "het_job_id", false, 0, INT64_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->het_job_id = (uint64_t)n;
    n = 0;
    if ((rc = get_int(o, "het_job_offset", false, 0, UINT32_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->het_job_offset = (uint32_t)n;
    state = json_object_get(o, "state");
    if (!json_is_string(state))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.state: required string", path);
    idx = find_name(base_names, COUNT(base_names), json_string_value(state));
    if (idx <= 0)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.state: unknown Slurm base state", path);
    v->base = (sluice_job_base)idx;
    flags = json_object_get(o, "flags");
    if (flags != NULL) {
        if (!json_is_array(flags))
            return sluice_errorf(err, SLUICE_EINVAL, "%s.flags: must be an array", path);
        json_array_foreach(flags, i, f)
        {
            idx = json_is_string(f) ? find_name(flag_names, COUNT(flag_names), json_string_value(f))
                                    : -1;
            if (idx < 0)
                return sluice_errorf(err, SLUICE_EINVAL, "%s.flags[%zu]: unknown flag", path, i);
            v->flags |= UINT32_C(1) << idx;
        }
    }
    if ((rc = get_text(o, "state_reason", false, SLUICE_FSM_DETAIL_MAX, &v->state_reason, path,
                       err)) != SLUICE_OK)
        return rc;
    if ((rc = get_text(o, "state_description", false, SLUICE_FSM_DETAIL_MAX, &v->state_description,
                       path, err)) != SLUICE_OK)
        return rc;
    if ((rc = get_text(o, "nodes", false, SLUICE_FSM_DETAIL_MAX, &v->nodes, path, err)) !=
        SLUICE_OK)
        return rc;
    n = 0;
    if ((rc = get_int(o, "exit_code", false, 0, 255, &n, &present, path, err)) != SLUICE_OK)
        return rc;
    v->has_exit = present;
    v->exit_code = (int)n;
    n = 0;
    if ((rc = get_int(o, "exit_signal", false, 0, 255, &n, &present, path, err)) != SLUICE_OK)
        return rc;
    if (present && !v->has_exit)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.exit_signal: needs exit_code", path);
    v->exit_signal = (int)n;
    n = 0;
    if ((rc = get_int(o, "derived_exit_code", false, 0, 255, &n, &present, path, err)) != SLUICE_OK)
        return rc;
    v->has_derived = present;
    v->derived_exit_code = (int)n;
    n = 0;
    if ((rc = get_int(o, "derived_exit_signal", false, 0, 255, &n, &present, path, err)) !=
        SLUICE_OK)
        return rc;
    if (present && !v->has_derived)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.derived_exit_signal: needs derived_exit_code",
                             path);
    v->derived_exit_signal = (int)n;
    n = 0;
    if ((rc = get_int(o, "restart_count", false, 0, UINT32_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->restart_count = (uint32_t)n;
    f = json_object_get(o, "failed_unschedulable");
    if (f != NULL && !json_is_boolean(f))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.failed_unschedulable: must be a boolean",
                             path);
    v->failed_unschedulable = json_is_true(f);
    if (v->failed_unschedulable && v->base != SLUICE_JOB_FAILED)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.failed_unschedulable: only with FAILED", path);
    return SLUICE_OK;
}

static sluice_err get_jobs(const json_t *ctx, sluice_fsm_event_t *ev, sluice_error_t *err)
{
    const json_t *a = json_object_get(ctx, "jobs");
    char path[48];
    sluice_err rc;
    size_t i;

    if (ev->lookup != SLUICE_LOOKUP_FOUND) {
        if (a != NULL)
            return sluice_errorf(err, SLUICE_EINVAL, "context.jobs: only with lookup FOUND");
        return SLUICE_OK;
    }
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "context.jobs: an array of 1 to %d job records",
                             SLUICE_FSM_MAX_JOBS);
    ev->jobs = calloc(json_array_size(a), sizeof(*ev->jobs));
    if (ev->jobs == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "context.jobs: out of memory");
    ev->n_jobs = json_array_size(a);
    for (i = 0; i < ev->n_jobs; i++) {
        snprintf(path, sizeof(path), "context.jobs[%zu]", i);
        if ((rc = view_from_json(json_array_get(a, i), &ev->jobs[i], path, err)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static sluice_err parse_context(const json_t *ctx, sluice_fsm_event_t *ev, sluice_error_t *err)
{
    const char *const *keys = context_keys(ev->type);
    const char *key;
    json_t *val;
    json_int_t n = 0;
    char *text = NULL;
    const json_t *f;
    sluice_err rc;

    json_object_foreach(mutable_json(ctx), key, val)
    {
        (void)val;
        if (strcmp(key, "by") != 0 && !in_list(keys, key))
            return sluice_errorf(err, SLUICE_EINVAL, "context.%s: unknown field for %s", key,
                                 sluice_fsm_event_name(ev->type));
    }
    if ((rc = get_str(ctx, "by", false, SLUICE_FSM_NAME_MAX, &ev->by, "context", err)) != SLUICE_OK)
        return rc;
    switch (ev->type) {
    case SLUICE_EV_SUBMIT_STARTED:
        if ((rc = get_int(ctx, "attempt", true, 1, UINT32_MAX - 1, &n, NULL, "context", err)) !=
            SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        if ((rc = get_str(ctx, "job_name", true, SLUICE_FSM_MARKER_MAX, &ev->job_name, "context",
                          err)) != SLUICE_OK)
            return rc;
        return get_str(ctx, "comment", true, SLUICE_FSM_MARKER_MAX, &ev->comment, "context", err);
    case SLUICE_EV_SUBMIT_RESENT:
        if ((rc = get_int(ctx, "attempt", true, 1, UINT32_MAX - 1, &n, NULL, "context", err)) !=
            SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        return SLUICE_OK;
    case SLUICE_EV_SUBMITTED:
        return get_ids(ctx, ev, err);
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
        return get_text(ctx, "detail", true, SLUICE_FSM_DETAIL_MAX, &ev->detail, "context", err);
    case SLUICE_EV_UNSCHEDULABLE:
        return get_str(ctx, "detail", true, SLUICE_FSM_NAME_MAX, &ev->detail, "context", err);
    case SLUICE_EV_ADOPTED:
        if ((rc = get_int(ctx, "attempt", true, 1, UINT32_MAX - 1, &n, NULL, "context", err)) !=
            SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        if ((rc = get_ids(ctx, ev, err)) != SLUICE_OK)
            return rc;
        if ((rc = get_str(ctx, "source", true, 32, &text, "context", err)) != SLUICE_OK)
            return rc;
        rc = sluice_lookup_source_from_name(text, &ev->source)
                 ? SLUICE_OK
                 : sluice_errorf(err, SLUICE_EINVAL, "context.source: live or accounting");
        free(text);
        return rc;
    case SLUICE_EV_OBSERVED:
        if ((rc = get_str(ctx, "lookup", true, 32, &text, "context", err)) != SLUICE_OK)
            return rc;
        rc = sluice_lookup_from_name(text, &ev->lookup)
                 ? SLUICE_OK
                 : sluice_errorf(err, SLUICE_EINVAL,
                                 "context.lookup: FOUND, NOT_FOUND or UNAVAILABLE");
        free(text);
        text = NULL;
        if (rc != SLUICE_OK)
            return rc;
        if ((rc = get_str(ctx, "source", true, 32, &text, "context", err)) != SLUICE_OK)
            return rc;
        rc = sluice_lookup_source_from_name(text, &ev->source)
                 ? SLUICE_OK
                 : sluice_errorf(err, SLUICE_EINVAL, "context.source: live or accounting");
        free(text);
        if (rc != SLUICE_OK)
            return rc;
        if ((rc = get_text(ctx, "detail", false, SLUICE_FSM_DETAIL_MAX, &ev->detail, "context",
                           err)) != SLUICE_OK)
            return rc;
        return get_jobs(ctx, ev, err);
    case SLUICE_EV_CANCEL_REQUESTED:
        return get_str(ctx, "caller", true, SLUICE_FSM_NAME_MAX, &ev->caller, "context", err);
    case SLUICE_EV_POOL_EXIT:
        if ((rc = get_str(ctx, "pool", true, SLUICE_FSM_NAME_MAX, &ev->pool, "context", err)) !=
            SLUICE_OK)
            return rc;
        if ((rc = get_int(ctx, "exit_code", true, 0, 255, &n, NULL, "context", err)) != SLUICE_OK)
            return rc;
        ev->exit_code = (int)n;
        if ((rc = get_int(ctx, "signal", true, 0, 255, &n, NULL, "context", err)) != SLUICE_OK)
            return rc;
        ev->signal = (int)n;
        if ((f = json_object_get(ctx, "first")) != NULL && !json_is_boolean(f))
            return sluice_errorf(err, SLUICE_EINVAL, "context.first: must be a boolean");
        ev->first = json_is_true(f);
        if ((f = json_object_get(ctx, "signalled")) != NULL && !json_is_boolean(f))
            return sluice_errorf(err, SLUICE_EINVAL, "context.signalled: must be a boolean");
        ev->signalled = json_is_true(f);
        return SLUICE_OK;
    default:
        return SLUICE_OK;
    }
}

sluice_err
sluice_fsm_event_from_json(const json_t *entry, sluice_fsm_event_t *out, sluice_error_t *err)
{
    static const char *const top_keys[] = {"seq", "time", "name", "context", NULL};
    sluice_fsm_event_t ev;
    const json_t *name, *time, *ctx;
    json_int_t seq = 0;
    sluice_err rc;

    memset(&ev, 0, sizeof(ev));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    if (!json_is_object(entry)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "event: must be an object");
        goto out;
    }
    if ((rc = only_keys(entry, top_keys, "event", err)) != SLUICE_OK)
        goto out;
    if ((rc = get_int(entry, "seq", true, 0, INT64_MAX, &seq, NULL, "event", err)) != SLUICE_OK)
        goto out;
    ev.seq = seq;
    time = json_object_get(entry, "time");
    if (!json_is_number(time) || !isfinite(json_number_value(time))) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "time: required number");
        goto out;
    }
    ev.time = json_number_value(time);
    name = json_object_get(entry, "name");
    if (!json_is_string(name)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "name: required string");
        goto out;
    }
    if (!sluice_fsm_event_from_name(json_string_value(name), &ev.type)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "name: unknown event \"%.64s\"",
                           json_string_value(name));
        goto out;
    }
    ctx = json_object_get(entry, "context");
    if (!json_is_object(ctx)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "context: required object");
        goto out;
    }
    if ((rc = parse_context(ctx, &ev, err)) != SLUICE_OK)
        goto out;
    *out = ev;
    memset(&ev, 0, sizeof(ev));
out:
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* json_object_set_new that remembers failure. */
static void put(json_t *obj, const char *key, json_t *val, bool *ok)
{
    if (val == NULL || json_object_set_new(obj, key, val) != 0)
        *ok = false;
}

static json_t *ids_to_json(const uint64_t *ids, size_t n)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < n; i++) {
        if (json_array_append_new(a, json_integer((json_int_t)ids[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Free text as a JSON string, cut to SLUICE_FSM_DETAIL_MAX. */
static json_t *text_json(const char *s)
{
    return json_stringn(s, sluice_fsm_text_fit(s, SLUICE_FSM_DETAIL_MAX));
}

static json_t *view_to_json(const sluice_jobview_t *v)
{
    json_t *o = json_object(), *flags = json_array();
    bool ok = o != NULL && flags != NULL;
    unsigned i;

    put(o, "job_id", json_integer((json_int_t)v->job_id), &ok);
    if (v->het_job_id != 0)
        put(o, "het_job_id", json_integer((json_int_t)v->het_job_id), &ok);
    if (v->het_job_offset != 0)
        put(o, "het_job_offset", json_integer(v->het_job_offset), &ok);
    put(o, "state", json_string(base_name(v->base)), &ok);
    for (i = 0; ok && i < COUNT(flag_names); i++) {
        if ((v->flags & (UINT32_C(1) << i)) &&
            json_array_append_new(flags, json_string(flag_names[i])) != 0)
            ok = false;
    }
    if (json_array_size(flags) > 0) {
        put(o, "flags", flags, &ok);
        flags = NULL;
    }
    if (v->state_reason != NULL)
        put(o, "state_reason", text_json(v->state_reason), &ok);
    if (v->state_description != NULL && v->state_description[0] != '\0')
        put(o, "state_description", text_json(v->state_description), &ok);
    if (v->nodes != NULL)
        put(o, "nodes", text_json(v->nodes), &ok);
    if (v->has_exit) {
        put(o, "exit_code", json_integer(v->exit_code), &ok);
        put(o, "exit_signal", json_integer(v->exit_signal), &ok);
    }
    if (v->has_derived) {
        put(o, "derived_exit_code", json_integer(v->derived_exit_code), &ok);
        put(o, "derived_exit_signal", json_integer(v->derived_exit_signal), &ok);
    }
    if (v->restart_count != 0)
        put(o, "restart_count", json_integer(v->restart_count), &ok);
    if (v->failed_unschedulable)
        put(o, "failed_unschedulable", json_true(), &ok);
    json_decref(flags);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

sluice_err sluice_fsm_event_to_json(const sluice_fsm_event_t *ev, json_t **out, sluice_error_t *err)
{
    json_t *entry = NULL, *ctx = NULL, *jobs = NULL;
    sluice_fsm_event_t check;
    bool ok = true;
    sluice_err rc = SLUICE_OK;
    size_t i;

    memset(&check, 0, sizeof(check));
    if (ev == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "event and out are required");
    if (sluice_fsm_event_name(ev->type) == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "name: unknown event type %d", (int)ev->type);
    entry = json_object();
    ctx = json_object();
    if (entry == NULL || ctx == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "event: out of memory");
        goto out;
    }
    if (ev->by != NULL)
        put(ctx, "by", json_string(ev->by), &ok);
    switch (ev->type) {
    case SLUICE_EV_SUBMIT_STARTED:
        put(ctx, "attempt", json_integer(ev->attempt), &ok);
        put(ctx, "job_name", ev->job_name ? json_string(ev->job_name) : json_null(), &ok);
        put(ctx, "comment", ev->comment ? json_string(ev->comment) : json_null(), &ok);
        break;
    case SLUICE_EV_SUBMIT_RESENT:
        put(ctx, "attempt", json_integer(ev->attempt), &ok);
        break;
    case SLUICE_EV_ADOPTED:
        put(ctx, "attempt", json_integer(ev->attempt), &ok);
        put(ctx, "source", json_string(sluice_lookup_source_name(ev->source)), &ok);
        /* fall through */
    case SLUICE_EV_SUBMITTED:
        put(ctx, "job_ids",
            ids_to_json(ev->job_ids,
                        ev->n_job_ids > SLUICE_FSM_MAX_JOBS ? SLUICE_FSM_MAX_JOBS : ev->n_job_ids),
            &ok);
        break;
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
        put(ctx, "detail", ev->detail ? text_json(ev->detail) : json_null(), &ok);
        break;
    case SLUICE_EV_UNSCHEDULABLE:
        put(ctx, "detail", ev->detail ? json_string(ev->detail) : json_null(), &ok);
        break;
    case SLUICE_EV_OBSERVED:
        put(ctx, "lookup", json_string(sluice_lookup_name(ev->lookup)), &ok);
        put(ctx, "source", json_string(sluice_lookup_source_name(ev->source)), &ok);
        if (ev->detail != NULL)
            put(ctx, "detail", text_json(ev->detail), &ok);
        if (ev->lookup == SLUICE_LOOKUP_FOUND) {
            jobs = json_array();
            for (i = 0; jobs != NULL && ok && i < ev->n_jobs && ev->jobs != NULL; i++) {
                if (json_array_append_new(jobs, view_to_json(&ev->jobs[i])) != 0)
                    ok = false;
            }
            put(ctx, "jobs", jobs, &ok);
        }
        break;
    case SLUICE_EV_CANCEL_REQUESTED:
        put(ctx, "caller", ev->caller ? json_string(ev->caller) : json_null(), &ok);
        break;
    case SLUICE_EV_POOL_EXIT:
        put(ctx, "pool", ev->pool ? json_string(ev->pool) : json_null(), &ok);
        put(ctx, "exit_code", json_integer(ev->exit_code), &ok);
        put(ctx, "signal", json_integer(ev->signal), &ok);
        if (ev->first)
            put(ctx, "first", json_true(), &ok);
        if (ev->signalled)
            put(ctx, "signalled", json_true(), &ok);
        break;
    default:
        break;
    }
    put(entry, "seq", json_integer(ev->seq), &ok);
    put(entry, "time", json_real(ev->time), &ok);
    put(entry, "name", json_string(sluice_fsm_event_name(ev->type)), &ok);
    put(entry, "context", ctx, &ok);
    ctx = NULL;
    if (!ok) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "event: a field is missing or not encodable");
        goto out;
    }
    /* Only what parses back is written: the log never holds an entry that
     * replay would refuse. */
    if ((rc = sluice_fsm_event_from_json(entry, &check, err)) != SLUICE_OK)
        goto out;
    *out = entry;
    entry = NULL;
out:
    sluice_fsm_event_clear(&check);
    json_decref(ctx);
    json_decref(entry);
    return rc;
}

/* ---- replay ------------------------------------------------------------ */

sluice_err sluice_fsm_replay(const sluice_fsm_config_t *cfg,
                             const json_t *events,
                             sluice_fsm_launch_t *out,
                             sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_fsm_launch_t l;
    int64_t prev_seq = -1;
    sluice_err rc = SLUICE_OK;
    size_t i;

    memset(&ev, 0, sizeof(ev));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    sluice_fsm_launch_init(&l, cfg);
    if (!json_is_array(events))
        return sluice_errorf(err, SLUICE_EINVAL, "events: must be an array");
    for (i = 0; i < json_array_size(events); i++) {
        if ((rc = sluice_fsm_event_from_json(json_array_get(events, i), &ev, err)) != SLUICE_OK) {
            sluice_error_prefix(err, "events[%zu]", i);
            goto out;
        }
        if (ev.seq <= prev_seq) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "events[%zu].seq: %lld does not follow %lld", i,
                               (long long)ev.seq, (long long)prev_seq);
            goto out;
        }
        prev_seq = ev.seq;
        rc = sluice_fsm_apply(&l, &ev, NULL, err);
        if (rc == SLUICE_ESTATE) {
            rc = SLUICE_OK; /* refused live too: skipped the same way */
            sluice_error_clear(err);
        } else if (rc != SLUICE_OK) {
            sluice_error_prefix(err, "events[%zu]", i);
            goto out;
        }
        sluice_fsm_event_clear(&ev);
    }
    *out = l;
out:
    sluice_fsm_event_clear(&ev);
    return rc;
}
