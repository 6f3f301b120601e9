/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_poll.c - the launcher's poller: what Slurm says about the jobs
 * of live launches.
 *
 * Purpose:
 *   One batched state read per cycle for every launch due a live lookup;
 *   a full read only for the jobs whose state or flags changed, a job
 *   first seen pending, and a job still pending after
 *   PENDING_REFRESH_POLLS unchanged polls (its state_reason is only in the
 *   full record); the pending reasons that never clear; the
 *   heartbeat that keeps a pending launch's timer honest; accounting
 *   lookups once a job has left the live queue; the adaptive interval
 *   between cycles.  What is seen is recorded through
 *   launcher_record_observed() (launcher.c).
 *
 * Notes:
 *   - Reads spend the launcher's read budget (launcher_take_token()); a
 *     launch over budget is read next cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/launcher.h>

#include "launcher_int.h"

#define UNAVAILABLE_RETRY_MS 5000
/* A job that stays pending is read in full again after this many unchanged
 * polls (60 s at the 2 s interval), so a reason that changes (Priority ->
 * BadConstraints after a node lost its feature) is seen. */
#define PENDING_REFRESH_POLLS 30

/* ---- pending reasons that never clear ------------------------------------ */

/* Slurm's job_state_reason_string() names (the same in v0.0.38 and in the
 * v0.0.40+ data_parser, which prints the same table).  Each means the job
 * asks for something the cluster's configuration or accounting does not
 * allow; Slurm keeps it pending until an administrator changes that
 * configuration (PartitionConfig and PartitionNodeLimit clear after a
 * partition update or reconfigure, BadConstraints after node features
 * change, the account and QOS reasons after an association change), which
 * a waiting launch cannot count on.  ReqNodeNotAvail counts only when no
 * unavailable node is listed (docs/state-machine.md). */
const char *const launcher_default_unschedulable[] = {
    "BadConstraints", "PartitionConfig", "PartitionNodeLimit",
    "InvalidAccount", "InvalidQOS",      "AccountNotAllowed",
    "QOSNotAllowed",  "ReqNodeNotAvail", NULL,
};

/* "ReqNodeNotAvail, UnavailableNodes:" with nothing after the colon: Slurm
 * waits for nodes it cannot name.  "UnavailableNodes:n[1-2]" (those nodes
 * may come back) and "May be reserved for other job" may clear. */
static bool no_node_listed(const char *text)
{
    const char *p = text != NULL ? strstr(text, "UnavailableNodes:") : NULL;

    if (p == NULL)
        return false;
    for (p += strlen("UnavailableNodes:"); *p != '\0'; p++) {
        if (*p != ' ' && *p != ')' && *p != '\n')
            return false;
    }
    return true;
}

/* Whether the record's reason is one of the site's never-clearing list;
 * `out` gets the name the launch's reason shows. */
static bool
reason_never_clears(const sluice_launcher_t *l, const sluice_jobview_t *v, char *out, size_t cap)
{
    const char *r = v->state_reason;
    size_t len;

    if (r == NULL)
        return false;
    /* Some tools hand over "Reason, detail"; Slurm's field is the name. */
    len = strcspn(r, ",");
    for (size_t k = 0; k < l->n_unsched; k++) {
        if (strlen(l->unsched[k]) != len || strncasecmp(l->unsched[k], r, len) != 0)
            continue;
        if (strcasecmp(l->unsched[k], "ReqNodeNotAvail") == 0) {
            if (!no_node_listed(v->state_description) && !no_node_listed(r))
                continue;
            snprintf(out, cap, "ReqNodeNotAvail with no node listed");
            return true;
        }
        snprintf(out, cap, "%.*s", (int)len, r);
        return true;
    }
    return false;
}

bool launcher_unschedulable(
    const sluice_launcher_t *l, const sluice_jobview_t *v, size_t n, char *out, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].base == SLUICE_JOB_PENDING && reason_never_clears(l, &v[i], out, cap))
            return true;
    }
    return false;
}

/* A job that never started: no node was ever allocated ("" in slurmctld's
 * record, "None assigned" in accounting) or no start time.  Slurm 24.11
 * fails such a job with start_time = end_time = the time it gave up, so
 * the start time alone does not tell. */
static bool never_started(const sluice_jobview_t *v)
{
    return v->start_time == 0 || v->nodes == NULL || v->nodes[0] == '\0' ||
           strcmp(v->nodes, "None assigned") == 0;
}

void launcher_mark_failed_unschedulable(const sluice_launcher_t *l, sluice_jobview_t *v, size_t n)
{
    char why[SLUICE_FSM_NAME_MAX];

    for (size_t i = 0; i < n; i++) {
        v[i].failed_unschedulable = v[i].base == SLUICE_JOB_FAILED && never_started(&v[i]) &&
                                    reason_never_clears(l, &v[i], why, sizeof(why));
    }
}

/* ---- the poller -------------------------------------------------------- */

/* v0.0.38 reports some flags in place of the base state: a job that timed
 * out reads "COMPLETING" until its epilog ends.  Give such a view the base
 * last seen for the same job, else the base its flag implies (a requeue or
 * hold flag: PENDING; a flag of an allocated job: RUNNING), so the state
 * machine keeps it live.  False when nothing tells (an unknown state name):
 * the caller then counts the lookup as UNAVAILABLE, which never ends a
 * launch. */
bool launcher_fill_hidden_bases(const sluice_jobview_t *prev,
                                size_t n_prev,
                                sluice_jobview_t *v,
                                size_t n)
{
    const uint32_t waiting = SLUICE_JOB_FLAG(REQUEUED) | SLUICE_JOB_FLAG(REQUEUE_HOLD) |
                             SLUICE_JOB_FLAG(REQUEUE_FED) | SLUICE_JOB_FLAG(RESV_DEL_HOLD) |
                             SLUICE_JOB_FLAG(SPECIAL_EXIT);
    const uint32_t allocated = SLUICE_JOB_FLAG(COMPLETING) | SLUICE_JOB_FLAG(STAGE_OUT) |
                               SLUICE_JOB_FLAG(CONFIGURING) | SLUICE_JOB_FLAG(SIGNALING) |
                               SLUICE_JOB_FLAG(RESIZING) | SLUICE_JOB_FLAG(STOPPED) |
                               SLUICE_JOB_FLAG(POWER_UP_NODE);
    bool all = true;

    for (size_t i = 0; i < n; i++) {
        if (v[i].base != SLUICE_JOB_BASE_UNKNOWN)
            continue;
        for (size_t k = 0; k < n_prev; k++) {
            if (prev[k].job_id == v[i].job_id && prev[k].base != SLUICE_JOB_BASE_UNKNOWN) {
                v[i].base = prev[k].base;
                break;
            }
        }
        if (v[i].base == SLUICE_JOB_BASE_UNKNOWN && (v[i].flags & waiting))
            v[i].base = SLUICE_JOB_PENDING;
        else if (v[i].base == SLUICE_JOB_BASE_UNKNOWN && (v[i].flags & allocated))
            v[i].base = SLUICE_JOB_RUNNING;
        if (v[i].base == SLUICE_JOB_BASE_UNKNOWN)
            all = false;
    }
    return all;
}

static int64_t heartbeat_ms(const sluice_launcher_t *l, const launch_t *L)
{
    int64_t h = (int64_t)launcher_to_ms(L->fsm.cfg.pending_timeout * 1000.0 / 20.0);

    if (h > 30000)
        h = 30000;
    if (h < l->o.poll_min_ms)
        h = l->o.poll_min_ms;
    return h;
}

static sluice_err poll_one(sluice_launcher_t *l,
                           launch_t *L,
                           sluice_lookup batch,
                           const sluice_job_state_t *st,
                           int64_t now,
                           sluice_error_t *err)
{
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    sluice_lookup r;
    sluice_err rc;

    if (batch == SLUICE_LOOKUP_UNAVAILABLE)
        return launcher_record_observed(l, L, SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, NULL,
                                        0, err);
    L->have_batch = true;
    L->batch_base = st->present ? st->base : SLUICE_JOB_BASE_UNKNOWN;
    if (!st->present) {
        L->have_state = false;
        return launcher_record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL, 0,
                                        err);
    }
    if (L->have_state && !L->last_unavailable && L->n_views > 0 && st->base == L->last_base &&
        st->flags == L->last_flags) {
        /* Unchanged.  A job that stays pending is read in full again now
         * and then (its reason may change); otherwise only a pending
         * launch needs a heartbeat (the timer). */
        if (L->fsm.state == SLUICE_FSM_PENDING && st->base == SLUICE_JOB_PENDING &&
            ++L->pending_polls >= PENDING_REFRESH_POLLS && launcher_take_token(l))
            goto full;
        if (L->fsm.state == SLUICE_FSM_PENDING && L->fsm.cfg.pending_timeout > 0 &&
            now - L->last_obs_ms >= heartbeat_ms(l, L))
            return launcher_record_observed(l, L, SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, L->views,
                                            L->n_views, err);
        return SLUICE_OK;
    }
    if (!L->have_state && st->base == SLUICE_JOB_PENDING && L->fsm.state == SLUICE_FSM_PENDING) {
        /* A job first seen pending, as the submit left it.  Its reason is
         * only in the full record (jobs/state has none), and a reason that
         * never clears ends the launch, so the full record is read once
         * now.  Over budget, the batched state is enough for the state
         * machine (the pending timer starts here) and the refresh above
         * reads the record later. */
        if (launcher_take_token(l))
            goto full;
        if ((v = calloc(1, sizeof(*v))) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        v->job_id = L->fsm.job_ids[0];
        v->base = st->base;
        v->flags = st->flags;
        launcher_views_free(L->views, L->n_views);
        L->views = v;
        L->n_views = 1;
        L->have_state = true;
        L->last_base = st->base;
        L->last_flags = st->flags;
        return launcher_record_observed(l, L, SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, v, 1, err);
    }
    if (!launcher_take_token(l))
        return SLUICE_OK; /* over budget: read it next cycle */
full:
    L->pending_polls = 0;
    r = l->cl.get_job(l->cl.arg, L->fsm.job_ids[0], &v, &n);
    if (r == SLUICE_LOOKUP_FOUND && n > 0) {
        /* Keep the base a flag hides (v0.0.38) before the old views go. */
        (void)launcher_fill_hidden_bases(L->views, L->n_views, v, n);
        launcher_views_free(L->views, L->n_views);
        L->views = v;
        L->n_views = n;
        L->have_state = true;
        L->last_base = st->base;
        L->last_flags = st->flags;
        rc = launcher_record_observed(l, L, r, SLUICE_SOURCE_LIVE, v, n, err);
        return rc;
    }
    launcher_views_free(v, n);
    if (r == SLUICE_LOOKUP_FOUND)
        r = SLUICE_LOOKUP_NOT_FOUND;
    return launcher_record_observed(l, L, r, SLUICE_SOURCE_LIVE, NULL, 0, err);
}

/* The one batched state read of a cycle, then full reads for the changed. */
sluice_err launcher_poll_live(sluice_launcher_t *l, int64_t now, sluice_error_t *err)
{
    launch_t **who = NULL;
    uint64_t *ids = NULL;
    sluice_job_state_t *st = NULL;
    size_t k = 0;
    sluice_lookup batch;
    sluice_err rc = SLUICE_OK;

    bool backlog = false;

    for (size_t i = 0; i < l->n; i++) {
        unsigned due = sluice_fsm_due(&l->v[i]->fsm, launcher_fsm_time(now));
        if ((due & SLUICE_DUE_LIVE_LOOKUP) && l->v[i]->fsm.n_job_ids > 0)
            k++;
        if (due & (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT))
            backlog = true;
    }
    /* While launches wait for their submit, the read waits too, up to one
     * poll interval after the last: an accept wakes a cycle at once, and a
     * read of the whole job table (v0.0.38) in every such cycle would stall
     * the submits behind it. */
    l->read_held_ms = 0;
    if (backlog && now >= l->last_read_ms && now - l->last_read_ms < l->o.poll_min_ms) {
        l->read_held_ms = l->last_read_ms + l->o.poll_min_ms; /* the next wait ends then */
        return SLUICE_OK;
    }
    if (k == 0 || !launcher_take_token(l))
        return SLUICE_OK;
    l->last_read_ms = now;
    who = calloc(k, sizeof(*who));
    ids = calloc(k, sizeof(*ids));
    st = calloc(k, sizeof(*st));
    if (who == NULL || ids == NULL || st == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    k = 0;
    for (size_t i = 0; i < l->n; i++) {
        launch_t *L = l->v[i];
        if ((sluice_fsm_due(&L->fsm, launcher_fsm_time(now)) & SLUICE_DUE_LIVE_LOOKUP) &&
            L->fsm.n_job_ids > 0) {
            who[k] = L;
            ids[k++] = L->fsm.job_ids[0];
        }
    }
    batch = l->cl.job_states(l->cl.arg, ids, k, st);
    for (size_t i = 0; i < k && rc == SLUICE_OK; i++)
        rc = poll_one(l, who[i], batch, &st[i], now, err);
out:
    free(who);
    free(ids);
    free(st);
    return rc;
}

sluice_err
launcher_do_accounting(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    sluice_lookup r;
    sluice_err rc;

    if (now < L->next_acct_ms || !launcher_take_token(l))
        return SLUICE_OK;
    r = l->cl.acct_job(l->cl.arg, L->fsm.job_ids[0], &v, &n);
    if (r == SLUICE_LOOKUP_UNAVAILABLE)
        L->next_acct_ms = now + UNAVAILABLE_RETRY_MS;
    rc = launcher_record_observed(l, L, r, SLUICE_SOURCE_ACCOUNTING, v, n, err);
    launcher_views_free(v, n);
    return rc;
}

/* The next cycle's interval (sluice_launcher_next_interval_ms()). */
void launcher_adapt_interval(sluice_launcher_t *l, int64_t now)
{
    bool ending = false;

    /* Adaptive interval: fast while things move, slower when idle. */
    for (size_t i = 0; i < l->n; i++) {
        const launch_t *L = l->v[i];
        sluice_fsm_state s = sluice_fsm_state_public(L->fsm.state);

        if (s == SLUICE_FSM_ACCEPTED || s == SLUICE_FSM_SUBMITTING || s == SLUICE_FSM_CANCELLING)
            l->activity = true;
        /* A job whose batch script has ended while slurmctld still
         * completes it (COMPLETING, STAGE_OUT) is final within moments. */
        if ((s == SLUICE_FSM_PENDING || s == SLUICE_FSM_RUNNING) && L->have_state &&
            (L->last_flags & LAUNCHER_ENDING_FLAGS) != 0)
            ending = true;
    }
    int64_t max = l->o.poll_max_ms;

    /* design.md: 2 s when jobs/state is there, 10 s on the whole table. */
    if (l->poll_auto && l->cl.states_are_cheap != NULL && l->cl.states_are_cheap(l->cl.arg) &&
        max > LAUNCHER_CHEAP_POLL_MAX_MS)
        max = LAUNCHER_CHEAP_POLL_MAX_MS > l->o.poll_min_ms ? LAUNCHER_CHEAP_POLL_MAX_MS
                                                            : l->o.poll_min_ms;
    if (l->activity)
        l->interval_ms = l->o.poll_min_ms;
    else if ((l->interval_ms *= 2) > max)
        l->interval_ms = max;
    l->activity = false;
    if (ending && l->interval_ms > LAUNCHER_ENDING_POLL_MS)
        l->interval_ms = LAUNCHER_ENDING_POLL_MS;
    /* A read held back for waiting submits is not put off by a whole
     * further interval: the wait ends when it is due. */
    if (l->read_held_ms != 0 && l->read_held_ms - now < l->interval_ms)
        l->interval_ms = l->read_held_ms > now ? l->read_held_ms - now : 0;
}
