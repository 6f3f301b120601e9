/* SPDX-License-Identifier: Apache-2.0 */
/* status.c - what a Slurm job record means for a launch.
 *
 * Purpose:
 *   Owns the mapping from Slurm's view of a job (sluice_jobview_t: base
 *   state, flags, exit codes) to the launcher's words: whether a component
 *   is pending, running or final, and the result (verdict) of a final one.
 *   Also owns the reading of the pool exit files (which pool failed first,
 *   and what that pool's own result is).  docs/state-machine.md, sections
 *   "Slurm base states", "Slurm state flags", "Hetjob rule" and "Which
 *   record tells the truth", is the rule set.
 *
 * Input:  one job record (or the pool exits a launch recorded).
 * Output: a class, a verdict (sluice_result value) and a one-line why.
 *
 * Notes:
 *   - Pure: no I/O, no clock, no state of its own.  fsm.c decides what the
 *     verdicts do to the launch.
 *   - Checked against Slurm's JOB_STATE table as the OpenAPI documents of
 *     v0.0.40 to v0.0.46 list it, the list jobdesc.h keeps (jobdesc.c says
 *     which version adds what); whether a job is final is
 *     sluice_job_is_final() there.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "fsm_int.h"

#define INFRA_FLAGS                                                                                \
    (SLUICE_JOB_FLAG(LAUNCH_FAILED) | SLUICE_JOB_FLAG(RECONFIG_FAIL) | SLUICE_JOB_FLAG(REVOKED))

bool status_requeued(const sluice_jobview_t *v)
{
    return (v->flags & SLUICE_JOB_REQUEUE_FLAGS) != 0;
}

/* Reference section 8.1: final is sluice_job_is_final() (base not
 * PENDING/RUNNING/SUSPENDED, no COMPLETING/STAGE_OUT flag, no requeue flag);
 * a requeued job is pending, and so is a PENDING one; the rest (running,
 * suspended, an ending flag) is running.  A record of another cluster or a
 * federation is final whatever its state: sluice refuses multi-cluster
 * routing (the launcher cancels the job).  The fsm refuses a record of
 * base UNKNOWN before it asks. */
status_class status_classify(const sluice_jobview_t *v)
{
    if (v->other_cluster || sluice_job_is_final(v->base, v->flags))
        return STATUS_FINAL;
    if (status_requeued(v) || v->base == SLUICE_JOB_PENDING)
        return STATUS_PENDING;
    return STATUS_RUNNING;
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

    for (i = 0; i < FSM_COUNT(names); i++)
        if (names[i].sig == sig)
            return names[i].name;
    return NULL;
}

/* "FAILED+LAUNCH_FAILED reason=NonZeroExitCode exit=3 signal=0".  The batch
 * script reports a pool killed by a signal the way a shell does, as exit
 * 128+N with no signal of its own; such an exit also names the signal:
 * "exit=137 signal=0 (128+9: SIGKILL)". */
void status_describe(const sluice_jobview_t *v, char *dst, size_t cap)
{
    size_t used;
    unsigned i;

    snprintf(dst, cap, "%s", fsm_base_name(v->base));
    for (i = 0; i < fsm_flag_count(); i++) {
        if (v->flags & (UINT32_C(1) << i)) {
            used = strlen(dst);
            snprintf(dst + used, cap - used, "+%s", fsm_flag_name(i));
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

int status_verdict_rank(int result)
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
bool status_hard_infra(const sluice_jobview_t *v)
{
    return (v->flags & INFRA_FLAGS) != 0 || infra_base(v->base) || failed_by_slurm(v) ||
           v->other_cluster;
}

/* CANCELLED although sluice did not cancel it.  That is an admin's scancel,
 * or Slurm ending a hetjob whose script stopped the other pools: only the
 * exit files tell the two apart. */
bool status_unasked_cancel(const sluice_fsm_launch_t *l, const sluice_jobview_t *v)
{
    return l->intent == SLUICE_CANCEL_NONE && v->base == SLUICE_JOB_CANCELLED &&
           !status_hard_infra(v);
}

/* The result of one final component, with its explanation in `why`. */
int status_component_verdict(const sluice_fsm_launch_t *l,
                             const sluice_jobview_t *v,
                             char *why,
                             size_t cap)
{
    int wc;
    bool failed;

    if (v->other_cluster) {
        snprintf(why, cap,
                 "multi-cluster routing is unsupported (the job went to another "
                 "cluster or a federation)");
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
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
        else if (l->intent == SLUICE_CANCEL_DEPENDENCY)
            snprintf(why, cap, "dependency never satisfied: %s", l->dependency);
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

/* How a pool ended, for a reason: "exit 3, signal 0", or the text of an
 * exit file that held no status. */
static const char *exit_text(const sluice_fsm_pool_exit_t *p, char *buf, size_t cap)
{
    if (p->unknown)
        snprintf(buf, cap, "status unknown: its exit file held '%s', not 0-255", p->raw);
    else
        snprintf(buf, cap, "exit %d, signal %d", p->exit_code, p->signal);
    return buf;
}

/* A pool ended by SIGTERM or SIGKILL: what the script's stop of the other
 * pools, or a cancel from outside, does to a pool. */
bool status_stopped_pool(const sluice_fsm_pool_exit_t *p)
{
    return !p->unknown && p->exit_code == 0 && (p->signal == SIGTERM || p->signal == SIGKILL);
}

/* The pool that failed first.  The script's own record (exit/.first) wins;
 * without one (a render from before it existed), the first failing pool
 * whose exit code equals the batch exit code, else the first failing one,
 * passing over stopped pools when `skip_stopped`.  *n_failed counts every
 * failing pool. */
const sluice_fsm_pool_exit_t *
status_failed_pool(const sluice_fsm_launch_t *l, bool skip_stopped, size_t *n_failed)
{
    const sluice_fsm_pool_exit_t *chosen = NULL;
    size_t i;

    *n_failed = 0;
    for (i = 0; i < l->n_pools; i++) {
        const sluice_fsm_pool_exit_t *p = &l->pools[i];

        if (p->exit_code == 0 && p->signal == 0 && !p->unknown)
            continue;
        (*n_failed)++;
        if (p->first)
            return p;
        if (skip_stopped && status_stopped_pool(p))
            continue;
        if (chosen == NULL)
            chosen = p;
        else if (chosen->exit_code != l->slurm_exit_code && p->exit_code == l->slurm_exit_code)
            chosen = p;
    }
    return chosen;
}

/* A failed pool's own result: its workload code, else EXECUTION_ERROR. */
int status_pool_verdict(const sluice_fsm_pool_exit_t *p)
{
    if (p->unknown)
        return SLUICE_RESULT_EXECUTION_ERROR;
    if (p->exit_code >= 101 && p->exit_code <= 103)
        return p->exit_code;
    if (p->exit_code == 104)
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    return SLUICE_RESULT_EXECUTION_ERROR;
}

/* A component read CANCELLED and sluice had not cancelled it: the pool the
 * exit files name is the failure; no such pool (an admin's scancel) leaves
 * INFRASTRUCTURE_ERROR. */
static int unasked_verdict(const sluice_fsm_launch_t *l, char *why, size_t cap)
{
    char how[SLUICE_FSM_RAW_MAX + 64];
    size_t n_failed = 0;
    const sluice_fsm_pool_exit_t *p = status_failed_pool(l, true, &n_failed);
    bool signalled = false;
    int result;

    for (size_t i = 0; i < l->n_pools; i++)
        signalled |= l->pools[i].signalled;
    if (signalled && (p == NULL || !p->first)) {
        /* The script's trap ran and it had recorded no failure before: an
         * outside cancel, whatever the pools exited with on their way out
         * (a workload that handles SIGTERM may exit 1). */
        snprintf(why, cap,
                 "cancelled without the caller's intent: the script was signalled before any "
                 "pool failed; %s",
                 l->verdict_reason);
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (p != NULL && status_stopped_pool(p)) {
        snprintf(why, cap, "pool '%s' was stopped by signal %d, no pool failed on its own; %s",
                 p->name, p->signal, l->verdict_reason);
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    if (p == NULL) {
        snprintf(why, cap, "no pool exit file names a failure; %s", l->verdict_reason);
        return SLUICE_RESULT_INFRASTRUCTURE_ERROR;
    }
    result = status_pool_verdict(p);
    if (status_verdict_rank(l->verdict_rest) > status_verdict_rank(result))
        result = l->verdict_rest;
    snprintf(why, cap,
             "pool '%s' failed (%s)%s; CANCELLED without a cancel by sluice follows that "
             "failure; %s",
             p->name, exit_text(p, how, sizeof(how)),
             n_failed > 1 ? " (other pools failed too)" : "", l->verdict_reason);
    return result;
}

int status_exits_verdict(const sluice_fsm_launch_t *l, char *why, size_t cap)
{
    size_t n_failed = 0;
    const sluice_fsm_pool_exit_t *chosen;
    char how[SLUICE_FSM_RAW_MAX + 64];

    if (l->unasked_cancel)
        return unasked_verdict(l, why, cap);
    chosen = status_failed_pool(l, false, &n_failed);
    if (chosen == NULL)
        snprintf(why, cap, "no pool exit file names a failure; %s", l->verdict_reason);
    else
        snprintf(why, cap, "pool '%s' failed (%s)%s; %s", chosen->name,
                 exit_text(chosen, how, sizeof(how)),
                 n_failed > 1 ? " (other pools failed too)" : "", l->verdict_reason);
    return l->verdict;
}
