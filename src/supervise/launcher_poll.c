/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_poll.c - the launcher's poller: what Slurm says about the jobs
 * of live launches.
 *
 * Purpose:
 *   One batched state read per cycle for every launch due a live lookup;
 *   a full read only for the jobs whose state or flags changed, a job
 *   first seen pending, and a job still pending after
 *   PENDING_REFRESH_POLLS unchanged polls (its state_reason is only in the
 *   full record); the
 *   heartbeat that keeps a pending launch's timer honest; accounting
 *   lookups once a job has left the live queue; the adaptive interval
 *   between cycles.  What is seen is recorded through
 *   launcher_record_observed() (launcher_record.c).
 *
 * Ownership (launcher_owner.c): jobs/state answers ids and states only, no
 * name.  So the first sighting of a job id in the live view is read in
 * full, and its record must be the launch's (id, name, comment, user)
 * before any state-only read of that id is trusted; that trust lasts only
 * while the id stays in the live view (a read that does not show it, or
 * an unavailable one, ends it).  A full record that is not ours counts as
 * the job's absence from the live view; an accounting record that is not
 * ours as a miss.  Neither is ever cancelled.
 *
 * Notes:
 *   - Reads spend the launcher's read budget; a launch over budget is
 *     read next cycle.  The batched read comes first; the per-launch full
 *     reads leave the tokens reserved for this step's due cancels and
 *     reconciliations (launcher_take_spare_token()), so the reads of
 *     thousands of pending jobs never hold either back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/launcher.h>

#include "base/timing.h"
#include "launcher_budget.h"
#include "launcher_poll.h"

#define UNAVAILABLE_RETRY_MS 5000
/* A job that stays pending is read in full again after this many unchanged
 * polls (60 s at the 2 s interval), so a reason that changes (Priority ->
 * BadConstraints after a node lost its feature) is seen. */
#define PENDING_REFRESH_POLLS 30

/* ---- the poller's state ------------------------------------------------ */

struct launcher_poll {
    int64_t interval_ms;
    int64_t last_read_ms;      /* when the last batched state read ended */
    int64_t last_read_took_ms; /* how long it took */
    int64_t read_held_ms;      /* a held-back read is due then (0: none) */
    bool automatic;            /* no poll interval from the site: 2 s or 10 s by the status read */
};

sluice_err launcher_poll_create(launcher_poll_t **out,
                                const sluice_launcher_t *l,
                                bool automatic,
                                int64_t now,
                                sluice_error_t *err)
{
    launcher_poll_t *p;

    *out = NULL;
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    p->automatic = automatic;
    p->interval_ms = l->o.poll_min_ms;
    p->last_read_ms = now;
    *out = p;
    return SLUICE_OK;
}

void launcher_poll_destroy(launcher_poll_t *p)
{
    free(p);
}

int64_t launcher_poll_interval_ms(const sluice_launcher_t *l)
{
    return l->poll->interval_ms;
}

void launcher_poll_forget(sluice_launcher_t *l)
{
    l->poll->read_held_ms = 0;
}

/* ---- the poller -------------------------------------------------------- */

static int64_t heartbeat_ms(const sluice_launcher_t *l, const launch_t *L)
{
    int64_t h = (int64_t)launcher_to_ms(L->fsm.cfg.pending_timeout * 1000.0 / 20.0);

    if (h > 30000)
        h = 30000;
    if (h < l->o.poll_min_ms)
        h = l->o.poll_min_ms;
    return h;
}

/* What the batched read says about L.  A heartbeat (an unchanged pending
 * job observed again for its timer) is not recorded here: L is added to
 * beats[*nb] and the poll records them all in one commit. */
static sluice_err poll_one(sluice_launcher_t *l,
                           launch_t *L,
                           sluice_lookup batch,
                           const sluice_job_state_t *st,
                           int64_t now,
                           launch_t **beats,
                           size_t *nb,
                           sluice_error_t *err)
{
    const launcher_actor_t *A = launcher_actor(l, L->id);
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    sluice_lookup r;
    sluice_err rc;

    if (batch == SLUICE_LOOKUP_UNAVAILABLE) {
        L->own.ok = false; /* the id was out of sight */
        return launcher_record_observed(l, L, SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, NULL,
                                        0, err);
    }
    L->poll.have_batch = true;
    L->poll.batch_base = st->present ? st->base : SLUICE_JOB_BASE_UNKNOWN;
    if (!st->present) {
        L->poll.have_state = false;
        L->own.ok = false;
        return launcher_record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL, 0,
                                        err);
    }
    if (!L->own.ok || L->own.id != L->fsm.job_ids[0]) {
        /* The id's first sighting (or the first since it was out of
         * sight): its full record must be ours before its state is. */
        if (!launcher_take_spare_token(l))
            return SLUICE_OK; /* over budget: read it next cycle */
        goto full;
    }
    if (L->poll.have_state && !L->poll.last_unavailable && L->poll.n_views > 0 &&
        st->base == L->poll.last_base && st->flags == L->poll.last_flags) {
        /* Unchanged.  A job that stays pending is read in full again now
         * and then (its reason may change); otherwise only a pending
         * launch needs a heartbeat (the timer). */
        if (L->fsm.state == SLUICE_FSM_PENDING && st->base == SLUICE_JOB_PENDING &&
            ++L->poll.pending_polls >= PENDING_REFRESH_POLLS && launcher_take_spare_token(l))
            goto full;
        if (L->fsm.state == SLUICE_FSM_PENDING && L->fsm.cfg.pending_timeout > 0 &&
            now - L->poll.last_obs_ms >= heartbeat_ms(l, L))
            beats[(*nb)++] = L;
        return SLUICE_OK;
    }
    if (!L->poll.have_state && st->base == SLUICE_JOB_PENDING &&
        L->fsm.state == SLUICE_FSM_PENDING) {
        /* A job first seen pending, as the submit left it.  Its reason is
         * only in the full record (jobs/state has none), and a reason that
         * never clears ends the launch, so the full record is read once
         * now.  Over budget, the batched state is enough for the state
         * machine (the pending timer starts here) and the refresh above
         * reads the record later. */
        if (launcher_take_spare_token(l))
            goto full;
        if ((v = calloc(1, sizeof(*v))) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        v->job_id = L->fsm.job_ids[0];
        v->base = st->base;
        v->flags = st->flags;
        launcher_views_free(L->poll.views, L->poll.n_views);
        L->poll.views = v;
        L->poll.n_views = 1;
        L->poll.have_state = true;
        L->poll.last_base = st->base;
        L->poll.last_flags = st->flags;
        return launcher_record_observed(l, L, SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, v, 1, err);
    }
    if (!launcher_take_spare_token(l))
        return SLUICE_OK; /* over budget: read it next cycle */
full:
    L->poll.pending_polls = 0;
    r = A->cl.get_job(A->cl.arg, L->fsm.job_ids[0], &v, &n);
    if (r == SLUICE_LOOKUP_FOUND && n > 0) {
        const char *why = launcher_mismatch(l, L, v, n, SLUICE_SOURCE_LIVE);
        if (why != NULL) {
            /* The id names another job: ours is not in the live view. */
            launcher_views_free(v, n);
            L->poll.have_state = false;
            L->own.ok = false;
            if ((rc = launcher_not_ours(l, L, L->fsm.job_ids[0], SLUICE_SOURCE_LIVE, why, err)) !=
                SLUICE_OK)
                return rc;
            return launcher_record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL,
                                            0, err);
        }
        L->own.ok = true;
        L->own.id = L->fsm.job_ids[0];
        if (launcher_other_cluster(v, n)) {
            /* Ours, on another cluster or a federation: cancelled, and the
             * record ends the launch (status.c). */
            char reason[SLUICE_FSM_DETAIL_MAX];
            launcher_cancel_other_cluster(l, L, L->fsm.job_ids[0], NULL, reason, sizeof(reason));
        }
        /* Keep the base a flag hides (v0.0.38) before the old views go. */
        (void)launcher_fill_hidden_bases(L->poll.views, L->poll.n_views, v, n);
        launcher_views_free(L->poll.views, L->poll.n_views);
        L->poll.views = v;
        L->poll.n_views = n;
        L->poll.have_state = true;
        L->poll.last_base = st->base;
        L->poll.last_flags = st->flags;
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
    size_t k = 0, nb = 0;
    sluice_lookup *batches = NULL; /* each entry's read's answer */
    bool *read = NULL;             /* whether its group was read this cycle */
    sluice_err rc = SLUICE_OK;
    int64_t hold;
    uint64_t t_read;
    bool backlog = false;

    for (size_t i = 0; i < l->n; i++) {
        unsigned due = launcher_fsm_due(l->v[i], launcher_fsm_time(now));
        if ((due & SLUICE_DUE_LIVE_LOOKUP) && l->v[i]->fsm.n_job_ids > 0)
            k++;
        if (due & (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT))
            backlog = true;
    }
    /* While launches wait for their submit, the read waits too, up to one
     * poll interval after the end of the last, or twice as long as the last
     * read took when that is longer: an accept wakes a cycle at once, and a
     * read of the whole job table (v0.0.38: seconds on a table of
     * thousands) in every such cycle would stall the submits behind it. */
    l->poll->read_held_ms = 0;
    hold = l->o.poll_min_ms > 2 * l->poll->last_read_took_ms ? l->o.poll_min_ms
                                                             : 2 * l->poll->last_read_took_ms;
    /* The whole job table (v0.0.38) is read every poll_max (10 s) when
     * idle (design.md); during a submit burst it waits as long, so that a
     * burst is not split by reads of seconds each.  A stream of accepts
     * still gets a read at least that often. */
    if (l->cl.states_are_cheap != NULL && !l->cl.states_are_cheap(l->cl.arg) &&
        hold < l->o.poll_max_ms)
        hold = l->o.poll_max_ms;
    if (backlog && now >= l->poll->last_read_ms && now - l->poll->last_read_ms < hold) {
        l->poll->read_held_ms = l->poll->last_read_ms + hold; /* the next wait ends then */
        return SLUICE_OK;
    }
    if (k == 0 || !launcher_take_token(l))
        return SLUICE_OK;
    l->poll->last_read_ms = now;
    who = calloc(k, sizeof(*who));
    ids = calloc(k, sizeof(*ids));
    st = calloc(k, sizeof(*st));
    if (who == NULL || ids == NULL || st == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    /* Grouped by the identity that reads them (launcher_tenant.c): one
     * batched read per tenant with jobs due, each as that tenant.  A
     * tenant's jobs are not read with the site's identity: under
     * PrivateData=jobs it would not see them, and an unseen job must never
     * look gone.  Without tenants this is the one read of before. */
    k = 0;
    for (size_t a = 0; a <= l->n_actors; a++) {
        for (size_t i = 0; i < l->n; i++) {
            launch_t *L = l->v[i];
            if ((launcher_fsm_due(L, launcher_fsm_time(now)) & SLUICE_DUE_LIVE_LOOKUP) &&
                L->fsm.n_job_ids > 0 && launcher_actor_index(l, L->id) == a) {
                who[k] = L;
                ids[k++] = L->fsm.job_ids[0];
            }
        }
    }
    t_read = timing_now_ns();
    if ((batches = calloc(k, sizeof(*batches))) == NULL ||
        (read = calloc(k, sizeof(*read))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t g = 0, e; g < k; g = e) {
        size_t a = launcher_actor_index(l, who[g]->id);
        const launcher_actor_t *A = launcher_actor_at(l, a);
        sluice_lookup b;

        for (e = g + 1; e < k && launcher_actor_index(l, who[e]->id) == a; e++)
            ;
        if (g > 0 && !launcher_take_token(l))
            continue; /* over budget: read next cycle (batches[] stays unread) */
        b = A->cl.job_states(A->cl.arg, ids + g, e - g, st + g);
        for (size_t i = g; i < e; i++) {
            batches[i] = b;
            read[i] = true;
        }
    }
    /* The hold above counts from the END of the read: a read slower than
     * the interval (v0.0.38's whole table) would otherwise run again in the
     * very next cycle, and submits would get only the gaps between reads. */
    l->poll->last_read_ms = l->o.now_ms(l->o.clock_arg);
    l->poll->last_read_took_ms = l->poll->last_read_ms > now ? l->poll->last_read_ms - now : 0;
    timing_since(SLUICE_TIMING_READ, 1, t_read);
    /* who[] doubles as the heartbeats' list: entry i is read before any
     * heartbeat is written at an index <= i. */
    for (size_t i = 0; i < k && rc == SLUICE_OK; i++)
        if (read[i])
            rc = poll_one(l, who[i], batches[i], &st[i], now, who, &nb, err);
    if (rc == SLUICE_OK)
        rc = launcher_record_heartbeats(l, who, nb, err);
out:
    free(read);
    free(batches);
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
    const launcher_actor_t *A;
    sluice_err rc;

    if (now < L->poll.next_acct_ms || !launcher_take_token(l))
        return SLUICE_OK;
    A = launcher_actor(l, L->id); /* read as the launch's tenant */
    r = A->cl.acct_job(A->cl.arg, L->fsm.job_ids[0], &v, &n);
    if (r == SLUICE_LOOKUP_UNAVAILABLE)
        L->poll.next_acct_ms = now + UNAVAILABLE_RETRY_MS;
    if (r == SLUICE_LOOKUP_FOUND) {
        /* Accounting may hold an older or newer job with the same id (a
         * reused id, another cluster's): only ours counts. */
        const char *why = NULL;
        n = launcher_keep_owned(l, L, v, n, SLUICE_SOURCE_ACCOUNTING, &why);
        if (n == 0) {
            r = SLUICE_LOOKUP_NOT_FOUND;
            if ((rc = launcher_not_ours(l, L, L->fsm.job_ids[0], SLUICE_SOURCE_ACCOUNTING, why,
                                        err)) != SLUICE_OK) {
                launcher_views_free(v, n);
                return rc;
            }
        }
    }
    rc = launcher_record_observed(l, L, r, SLUICE_SOURCE_ACCOUNTING,
                                  r == SLUICE_LOOKUP_FOUND ? v : NULL,
                                  r == SLUICE_LOOKUP_FOUND ? n : 0, err);
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
        if ((s == SLUICE_FSM_PENDING || s == SLUICE_FSM_RUNNING) && L->poll.have_state &&
            (L->poll.last_flags & SLUICE_JOB_ENDING_FLAGS) != 0)
            ending = true;
    }
    int64_t max = l->o.poll_max_ms;

    /* design.md: 2 s when jobs/state is there, 10 s on the whole table. */
    if (l->poll->automatic && l->cl.states_are_cheap != NULL && l->cl.states_are_cheap(l->cl.arg) &&
        max > LAUNCHER_CHEAP_POLL_MAX_MS)
        max = LAUNCHER_CHEAP_POLL_MAX_MS > l->o.poll_min_ms ? LAUNCHER_CHEAP_POLL_MAX_MS
                                                            : l->o.poll_min_ms;
    if (l->activity)
        l->poll->interval_ms = l->o.poll_min_ms;
    else if ((l->poll->interval_ms *= 2) > max)
        l->poll->interval_ms = max;
    l->activity = false;
    if (ending && l->poll->interval_ms > LAUNCHER_ENDING_POLL_MS)
        l->poll->interval_ms = LAUNCHER_ENDING_POLL_MS;
    /* A read held back for waiting submits is not put off by a whole
     * further interval: the wait ends when it is due. */
    if (l->poll->read_held_ms != 0 && l->poll->read_held_ms - now < l->poll->interval_ms)
        l->poll->interval_ms = l->poll->read_held_ms > now ? l->poll->read_held_ms - now : 0;
}
