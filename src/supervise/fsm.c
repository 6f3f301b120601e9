/* SPDX-License-Identifier: Apache-2.0 */
/* fsm.c - the launcher state machine: the pure update.
 *
 * Purpose:
 *   Owns sluice_fsm_apply(): turn the events the launcher records into one
 *   launch state and, at the end, one result code.  docs/state-machine.md
 *   is the rule set; tests/unit/test_fsm.c checks it rule by rule.
 *
 * Input:  a launch (plain data) and one event carrying its own time.
 * Output: the updated launch and a transition {from, to, result, reason}.
 *
 * Shape:
 *   1. the event's own fields are checked (SLUICE_EINVAL);
 *   2. the transition table (fsm_table.c) says whether the current state
 *      allows the event at all (SLUICE_ESTATE otherwise);
 *   3. the event's handler applies it to a copy of the launch, checking the
 *      guards the table cannot express (the attempt number, the pending
 *      timer, the cancel intent ...);
 *   4. the state it reached must be a row of the table; only then is the
 *      copy committed, and one debug line traces the transition.
 *
 * Notes:
 *   - No I/O, no clock: every time comes from an event or from the `now`
 *     argument of sluice_fsm_due() (fsm_table.c).  The trace goes through
 *     sluice_log().
 *   - A refused event leaves the launch byte-for-byte unchanged.
 *   - change_state() is the only writer of `state`; it runs the on-enter
 *     action of the state entered.  set_state() also records the reason;
 *     set_inner() moves between the inner states of SUBMITTING and keeps the
 *     launch's reason (the state callers see does not change).
 *   - A DONE launch is never changed again.
 *   - What a Slurm record means is status.c's; the JSON form is fsm_json.c's.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>
#include <sluice/log.h>

#include "fsm_int.h"

/* ---- the state setters ------------------------------------------------- */

static void vformat(char *dst, size_t cap, const char *fmt, va_list ap) SLUICE_PRINTF(3, 0);

static void vformat(char *dst, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(dst, cap, fmt, ap);

    if (n < 0)
        dst[0] = '\0';
    else if ((size_t)n >= cap && cap > 4)
        memcpy(dst + cap - 4, "...", 4);
}

/* ---- on-enter actions ------------------------------------------------- */

/* A new attempt starts without a job. */
static void enter_submitting(sluice_fsm_launch_t *l)
{
    l->n_job_ids = 0;
}

/* Every cancel intent starts with no DELETE sent. */
static void enter_cancelling(sluice_fsm_launch_t *l)
{
    l->cancel_sent = false;
}

/* Run when the state is entered (not on a move that keeps the state). */
static void (*const on_enter[SLUICE_FSM_STATE_COUNT_])(sluice_fsm_launch_t *l) = {
    [SLUICE_FSM_SUBMITTING] = enter_submitting,
    [SLUICE_FSM_CANCELLING] = enter_cancelling,
};

/* The only writer of l->state. */
static void change_state(sluice_fsm_launch_t *l, sluice_fsm_state to)
{
    if (l->state == to)
        return;
    l->state = to;
    if (on_enter[to] != NULL)
        on_enter[to](l);
}

static void set_state(sluice_fsm_launch_t *l,
                      sluice_fsm_transition_t *tr,
                      sluice_fsm_state to,
                      int result,
                      const char *fmt,
                      ...) SLUICE_PRINTF(5, 6);

/* Change state (and result), and record why. */
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
    change_state(l, to);
    l->result = to == SLUICE_FSM_DONE ? result : SLUICE_RESULT_UNKNOWN;
    memcpy(tr->reason, l->reason, sizeof(tr->reason));
}

static void set_inner(sluice_fsm_launch_t *l,
                      sluice_fsm_transition_t *tr,
                      sluice_fsm_state to,
                      const char *fmt,
                      ...) SLUICE_PRINTF(4, 5);

/* Move to another inner state of the same public state (SUBMITTING ->
 * RECONCILING -> RETRYING): the transition gets the reason, the launch
 * keeps its own, as it did when these states were flags. */
static void set_inner(
    sluice_fsm_launch_t *l, sluice_fsm_transition_t *tr, sluice_fsm_state to, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vformat(tr->reason, sizeof(tr->reason), fmt, ap);
    va_end(ap);
    change_state(l, to);
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
    if (l->intent == SLUICE_CANCEL_CALLER)
        set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "job %llu %s; cancel requested by %s",
                  (unsigned long long)ev->job_ids[0], how, l->caller);
    else
        set_state(l, tr, SLUICE_FSM_PENDING, 0, "job %llu %s (attempt %u)",
                  (unsigned long long)ev->job_ids[0], how, l->attempt);
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
    char why[SLUICE_FSM_REASON_MAX] = "";
    char best_desc[160] = "";
    char best_why[SLUICE_FSM_REASON_MAX] = "";
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
        cls = status_classify(&ev->jobs[i]);
        any_requeue |= status_requeued(&ev->jobs[i]);
        any_pending |= cls == STATUS_PENDING;
        any_live |= cls != STATUS_FINAL;
    }
    if (any_live) {
        status_describe(&ev->jobs[0], desc, sizeof(desc));
        if (any_pending)
            pending_tick(l, ev->time);
        else
            l->prev_pending = false;
        if (any_requeue && !l->cfg.requeue_allowed && l->intent == SLUICE_CANCEL_NONE) {
            l->intent = SLUICE_CANCEL_REQUEUE;
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
        v = status_component_verdict(l, &ev->jobs[i], why, sizeof(why));
        hard |= status_hard_infra(&ev->jobs[i]);
        if (status_unasked_cancel(l, &ev->jobs[i]))
            unasked = true;
        else if (status_verdict_rank(v) > status_verdict_rank(rest))
            rest = v;
        /* Among equal ranks an infrastructure state or flag names the
         * component: it is the verdict the exit files cannot change. */
        if (best < 0 || status_verdict_rank(v) > status_verdict_rank(best) ||
            (v == best && status_hard_infra(&ev->jobs[i]) &&
             !status_hard_infra(&ev->jobs[best_comp]))) {
            best = v;
            best_comp = (int)i;
            memcpy(best_why, why, sizeof(why));
            status_describe(&ev->jobs[i], best_desc, sizeof(best_desc));
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
    return sluice_errorf(
        err, SLUICE_ESTATE, "event %s not allowed in state %s%s%s", sluice_fsm_event_name(ev->type),
        sluice_fsm_state_name(sluice_fsm_state_public(l->state)), why ? ": " : "", why ? why : "");
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

/* ---- checks of an event's own fields ----------------------------------- */

static sluice_err check_marker(const sluice_fsm_event_t *ev, sluice_error_t *err)
{
    if (ev->job_name == NULL || ev->job_name[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_name: required");
    if (ev->comment == NULL || ev->comment[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "context.comment: required");
    if (strlen(ev->job_name) >= SLUICE_FSM_MARKER_MAX ||
        strlen(ev->comment) >= SLUICE_FSM_MARKER_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_name: marker too long");
    return SLUICE_OK;
}

static sluice_err check_caller(const sluice_fsm_event_t *ev, sluice_error_t *err)
{
    if (ev->caller == NULL || ev->caller[0] == '\0' || strlen(ev->caller) >= SLUICE_FSM_NAME_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "context.caller: 1 to %d characters",
                             SLUICE_FSM_NAME_MAX - 1);
    return SLUICE_OK;
}

static sluice_err check_reason(const sluice_fsm_event_t *ev, sluice_error_t *err)
{
    if (ev->detail == NULL || ev->detail[0] == '\0' || strlen(ev->detail) >= SLUICE_FSM_NAME_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "context.detail: 1 to %d characters",
                             SLUICE_FSM_NAME_MAX - 1);
    return SLUICE_OK;
}

static sluice_err check_text(const sluice_fsm_event_t *ev, sluice_error_t *err)
{
    if (ev->detail == NULL || ev->detail[0] == '\0' || strlen(ev->detail) >= SLUICE_FSM_DETAIL_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "context.detail: 1 to %d bytes",
                             SLUICE_FSM_DETAIL_MAX - 1);
    return SLUICE_OK;
}

static sluice_err check_pool(const sluice_fsm_event_t *ev, sluice_error_t *err)
{
    if (ev->pool == NULL || ev->pool[0] == '\0' || strlen(ev->pool) >= SLUICE_FSM_NAME_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "context.pool: 1 to %d characters",
                             SLUICE_FSM_NAME_MAX - 1);
    return SLUICE_OK;
}

/* ---- one handler per event --------------------------------------------- */
/* Each runs on the working copy, after the table allowed the event in the
 * current state; it checks the remaining guards and changes the launch. */

typedef sluice_err (*handler_fn)(sluice_fsm_launch_t *l,
                                 const sluice_fsm_event_t *ev,
                                 sluice_fsm_transition_t *tr,
                                 sluice_error_t *err);

static sluice_err on_accepted(sluice_fsm_launch_t *l,
                              const sluice_fsm_event_t *ev,
                              sluice_fsm_transition_t *tr,
                              sluice_error_t *err)
{
    (void)ev;
    (void)err;
    set_state(l, tr, SLUICE_FSM_ACCEPTED, 0, "accepted");
    return SLUICE_OK;
}

static sluice_err on_submit_started(sluice_fsm_launch_t *l,
                                    const sluice_fsm_event_t *ev,
                                    sluice_fsm_transition_t *tr,
                                    sluice_error_t *err)
{
    if (ev->attempt != l->attempt + 1)
        return sluice_errorf(err, SLUICE_ESTATE, "context.attempt: expected %u, got %u",
                             l->attempt + 1, ev->attempt);
    l->attempt = ev->attempt;
    copy_str(l->job_name, sizeof(l->job_name), ev->job_name);
    copy_str(l->comment, sizeof(l->comment), ev->comment);
    l->post_time = ev->time;
    set_state(l, tr, SLUICE_FSM_SUBMITTING, 0, "attempt %u: submitting %s", l->attempt,
              l->job_name);
    return SLUICE_OK;
}

/* The attempt's POST provably never left and goes again: the same marker, a
 * later POST time (the absence delay runs from it). */
static sluice_err on_submit_resent(sluice_fsm_launch_t *l,
                                   const sluice_fsm_event_t *ev,
                                   sluice_fsm_transition_t *tr,
                                   sluice_error_t *err)
{
    if (l->n_job_ids != 0)
        return refuse(l, ev, err, "no POST of this attempt is waiting to be sent");
    if (ev->attempt != l->attempt)
        return sluice_errorf(err, SLUICE_ESTATE,
                             "context.attempt: %u is not the current attempt %u", ev->attempt,
                             l->attempt);
    l->post_time = ev->time;
    note(tr, "attempt %u: POST sent again (the last one never left)", l->attempt);
    return SLUICE_OK;
}

static sluice_err on_job_known(sluice_fsm_launch_t *l,
                               const sluice_fsm_event_t *ev,
                               sluice_fsm_transition_t *tr,
                               sluice_error_t *err)
{
    if (ev->type == SLUICE_EV_ADOPTED && ev->attempt != l->attempt)
        return sluice_errorf(err, SLUICE_ESTATE,
                             "context.attempt: %u is not the current attempt %u", ev->attempt,
                             l->attempt);
    start_job(l, tr, ev, ev->type == SLUICE_EV_SUBMITTED ? "submitted" : "adopted");
    return SLUICE_OK;
}

static sluice_err on_submit_uncertain(sluice_fsm_launch_t *l,
                                      const sluice_fsm_event_t *ev,
                                      sluice_fsm_transition_t *tr,
                                      sluice_error_t *err)
{
    (void)err;
    set_inner(l, tr, SLUICE_FSM_RECONCILING, "submit outcome unknown%s%s; reconciling",
              ev->detail ? ": " : "", ev->detail ? ev->detail : "");
    return SLUICE_OK;
}

static sluice_err on_submit_rejected(sluice_fsm_launch_t *l,
                                     const sluice_fsm_event_t *ev,
                                     sluice_fsm_transition_t *tr,
                                     sluice_error_t *err)
{
    (void)err;
    if (l->intent == SLUICE_CANCEL_CALLER)
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_ABORTED,
                  "aborted by %s; submit rejected: %s", l->caller, ev->detail ? ev->detail : "");
    else
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR, "submit rejected: %s",
                  ev->detail ? ev->detail : "");
    return SLUICE_OK;
}

static sluice_err on_absence_confirmed(sluice_fsm_launch_t *l,
                                       const sluice_fsm_event_t *ev,
                                       sluice_fsm_transition_t *tr,
                                       sluice_error_t *err)
{
    (void)ev;
    (void)err;
    if (l->intent == SLUICE_CANCEL_CALLER) {
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_ABORTED,
                  "aborted by %s; no job of attempt %u exists", l->caller, l->attempt);
        return SLUICE_OK;
    }
    set_inner(l, tr, SLUICE_FSM_RETRYING, "no job of attempt %u exists; a new attempt is allowed",
              l->attempt);
    return SLUICE_OK;
}

static sluice_err on_observed(sluice_fsm_launch_t *l,
                              const sluice_fsm_event_t *ev,
                              sluice_fsm_transition_t *tr,
                              sluice_error_t *err)
{
    if (l->settling)
        return refuse(l, ev, err, NULL);
    return apply_observed(l, ev, tr, err);
}

static sluice_err on_cancel_requested(sluice_fsm_launch_t *l,
                                      const sluice_fsm_event_t *ev,
                                      sluice_fsm_transition_t *tr,
                                      sluice_error_t *err)
{
    (void)err;
    if (l->settling) {
        note(tr, "cancel by %s: the job had already finished", ev->caller);
        return SLUICE_OK;
    }
    if (l->intent != SLUICE_CANCEL_CALLER) {
        l->intent = SLUICE_CANCEL_CALLER;
        copy_str(l->caller, sizeof(l->caller), ev->caller);
    }
    switch (l->state) {
    case SLUICE_FSM_ACCEPTED:
    case SLUICE_FSM_RETRYING:
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_ABORTED,
                  "aborted by %s before a job existed", l->caller);
        return SLUICE_OK;
    case SLUICE_FSM_SUBMITTING:
    case SLUICE_FSM_RECONCILING:
        note(tr, "cancel by %s recorded; waiting for the submit outcome", l->caller);
        return SLUICE_OK;
    case SLUICE_FSM_CANCELLING:
        note(tr, "cancel by %s (already cancelling)", l->caller);
        return SLUICE_OK;
    default:
        set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "cancel requested by %s", l->caller);
        return SLUICE_OK;
    }
}

static sluice_err on_cancel_sent(sluice_fsm_launch_t *l,
                                 const sluice_fsm_event_t *ev,
                                 sluice_fsm_transition_t *tr,
                                 sluice_error_t *err)
{
    if (l->settling)
        return refuse(l, ev, err, NULL);
    l->cancel_sent = true;
    l->cancel_sent_time = ev->time;
    note(tr, "cancel sent");
    return SLUICE_OK;
}

/* A cancel for a pending job (timeout, unschedulable) that was not sent: the
 * launcher's fresh read before the DELETE showed the job started, so the
 * reason to cancel is gone and the launch goes on. */
static sluice_err on_cancel_withdrawn(sluice_fsm_launch_t *l,
                                      const sluice_fsm_event_t *ev,
                                      sluice_fsm_transition_t *tr,
                                      sluice_error_t *err)
{
    if (l->settling || l->cancel_sent ||
        (l->intent != SLUICE_CANCEL_PENDING_TIMEOUT && l->intent != SLUICE_CANCEL_UNSCHEDULABLE))
        return refuse(l, ev, err, NULL);
    l->intent = SLUICE_CANCEL_NONE;
    l->unschedulable[0] = '\0';
    set_state(l, tr, SLUICE_FSM_RUNNING, 0, "job started before the cancel was sent; running");
    return SLUICE_OK;
}

static sluice_err on_pending_timeout(sluice_fsm_launch_t *l,
                                     const sluice_fsm_event_t *ev,
                                     sluice_fsm_transition_t *tr,
                                     sluice_error_t *err)
{
    if (l->intent != SLUICE_CANCEL_NONE)
        return refuse(l, ev, err, NULL);
    if (!(l->cfg.pending_timeout > 0) || l->pending_observed < l->cfg.pending_timeout)
        return refuse(l, ev, err, "pending timeout not reached");
    l->intent = SLUICE_CANCEL_PENDING_TIMEOUT;
    set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "pending timeout: observed pending %.0f s >= %.0f s",
              l->pending_observed, l->cfg.pending_timeout);
    return SLUICE_OK;
}

static sluice_err on_unschedulable(sluice_fsm_launch_t *l,
                                   const sluice_fsm_event_t *ev,
                                   sluice_fsm_transition_t *tr,
                                   sluice_error_t *err)
{
    if (l->intent != SLUICE_CANCEL_NONE)
        return refuse(l, ev, err, NULL);
    l->intent = SLUICE_CANCEL_UNSCHEDULABLE;
    copy_str(l->unschedulable, sizeof(l->unschedulable), ev->detail);
    set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "pending reason %s can never clear; cancelling",
              l->unschedulable);
    return SLUICE_OK;
}

/* The launch this one depends on can no longer satisfy the condition
 * (docs/state-machine.md, "Dependencies"): DONE before any job; a job is
 * cancelled (intent DEPENDENCY). */
static sluice_err on_dependency_failed(sluice_fsm_launch_t *l,
                                       const sluice_fsm_event_t *ev,
                                       sluice_fsm_transition_t *tr,
                                       sluice_error_t *err)
{
    if (l->intent != SLUICE_CANCEL_NONE || l->settling)
        return refuse(l, ev, err, NULL);
    copy_str(l->dependency, sizeof(l->dependency), ev->detail);
    if (l->n_job_ids == 0) {
        set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
                  "dependency never satisfied: %s", l->dependency);
        return SLUICE_OK;
    }
    l->intent = SLUICE_CANCEL_DEPENDENCY;
    set_state(l, tr, SLUICE_FSM_CANCELLING, 0, "dependency never satisfied: %s; cancelling",
              l->dependency);
    return SLUICE_OK;
}

static sluice_err on_secret_unavailable(sluice_fsm_launch_t *l,
                                        const sluice_fsm_event_t *ev,
                                        sluice_fsm_transition_t *tr,
                                        sluice_error_t *err)
{
    if (l->n_job_ids != 0 && l->state != SLUICE_FSM_ACCEPTED)
        return refuse(l, ev, err, NULL);
    set_state(l, tr, SLUICE_FSM_DONE, SLUICE_RESULT_INFRASTRUCTURE_ERROR,
              "secret unavailable after restart");
    return SLUICE_OK;
}

static sluice_err on_pool_exit(sluice_fsm_launch_t *l,
                               const sluice_fsm_event_t *ev,
                               sluice_fsm_transition_t *tr,
                               sluice_error_t *err)
{
    size_t i, k;

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
        for (k = 0; k < l->n_pools; k++)
            l->pools[k].first = false;
    }
    l->pools[i].exit_code = ev->exit_code;
    l->pools[i].signal = ev->signal;
    l->pools[i].first = ev->first;
    l->pools[i].signalled = ev->signalled;
    l->pools[i].unknown = ev->unknown;
    copy_str(l->pools[i].raw, sizeof(l->pools[i].raw), ev->raw != NULL ? ev->raw : "");
    if (ev->unknown)
        note(tr, "pool '%s' failed, its status unknown (its exit file held '%s')%s%s", ev->pool,
             l->pools[i].raw, ev->first ? ", the first pool to fail" : "",
             ev->signalled ? ", the script was signalled" : "");
    else
        note(tr, "pool '%s' exited %d (signal %d)%s%s", ev->pool, ev->exit_code, ev->signal,
             ev->first ? ", the first pool to fail" : "",
             ev->signalled ? ", the script was signalled" : "");
    return SLUICE_OK;
}

static sluice_err on_pool_exits_read(sluice_fsm_launch_t *l,
                                     const sluice_fsm_event_t *ev,
                                     sluice_fsm_transition_t *tr,
                                     sluice_error_t *err)
{
    char why[STATUS_WHY_MAX];
    int result;

    if (!l->settling)
        return refuse(l, ev, err, "no final hetjob verdict is waiting");
    l->settling = false;
    result = status_exits_verdict(l, why, sizeof(why));
    set_state(l, tr, SLUICE_FSM_DONE, result, "%s", why);
    return SLUICE_OK;
}

/* Per event: the check of its own fields (run first: a malformed event is
 * SLUICE_EINVAL in any state), the text of a refusal by the table, and the
 * handler. */
static const struct {
    sluice_err (*check)(const sluice_fsm_event_t *ev, sluice_error_t *err);
    const char *refusal;
    handler_fn apply;
} handlers[SLUICE_EV_COUNT_] = {
    [SLUICE_EV_ACCEPTED] = {NULL, NULL, on_accepted},
    [SLUICE_EV_SUBMIT_STARTED] = {check_marker, "no attempt is allowed now", on_submit_started},
    [SLUICE_EV_SUBMITTED] = {check_ids, NULL, on_job_known},
    [SLUICE_EV_SUBMIT_UNCERTAIN] = {NULL, NULL, on_submit_uncertain},
    [SLUICE_EV_SUBMIT_REJECTED] = {NULL, NULL, on_submit_rejected},
    [SLUICE_EV_ADOPTED] = {check_ids, NULL, on_job_known},
    [SLUICE_EV_ABSENCE_CONFIRMED] = {NULL, "only after an uncertain submit", on_absence_confirmed},
    [SLUICE_EV_OBSERVED] = {NULL, NULL, on_observed},
    [SLUICE_EV_CANCEL_REQUESTED] = {check_caller, NULL, on_cancel_requested},
    [SLUICE_EV_CANCEL_SENT] = {NULL, NULL, on_cancel_sent},
    [SLUICE_EV_PENDING_TIMEOUT] = {NULL, NULL, on_pending_timeout},
    [SLUICE_EV_SECRET_UNAVAILABLE] = {NULL, NULL, on_secret_unavailable},
    [SLUICE_EV_POOL_EXIT] = {check_pool, NULL, on_pool_exit},
    [SLUICE_EV_POOL_EXITS_READ] = {NULL, "no final hetjob verdict is waiting", on_pool_exits_read},
    [SLUICE_EV_UNSCHEDULABLE] = {check_reason, NULL, on_unschedulable},
    [SLUICE_EV_SUBMIT_RESENT] = {NULL, "no POST of this attempt is waiting to be sent",
                                 on_submit_resent},
    [SLUICE_EV_CANCEL_WITHDRAWN] = {NULL, NULL, on_cancel_withdrawn},
    [SLUICE_EV_DEPENDENCY_FAILED] = {check_text, NULL, on_dependency_failed},
};

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
    if (handlers[ev->type].check != NULL && (rc = handlers[ev->type].check(ev, err)) != SLUICE_OK)
        return rc;
    if (!fsm_table_allows(l->state, ev->type))
        return refuse(l, ev, err, handlers[ev->type].refusal);
    next = *l;
    if ((rc = handlers[ev->type].apply(&next, ev, &tr, err)) != SLUICE_OK)
        return rc;
    if (!fsm_table_has(l->state, ev->type, next.state))
        return sluice_errorf(err, SLUICE_ESTATE,
                             "event %s: %s -> %s is not in the transition table",
                             sluice_fsm_event_name(ev->type), sluice_fsm_state_name(l->state),
                             sluice_fsm_state_name(next.state));
    next.last_time = ev->time;
    next.last_seq = ev->seq;
    next.n_applied++;
    *l = next;
    tr.to = l->state;
    tr.result = l->result;
    sluice_log(SLUICE_LOG_DEBUG, "fsm: %s --%s--> %s: %s", sluice_fsm_state_name(tr.from),
               sluice_fsm_event_name(ev->type), sluice_fsm_state_name(tr.to), tr.reason);
    if (out != NULL)
        *out = tr;
    return SLUICE_OK;
}
