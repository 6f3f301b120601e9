/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_reconcile.c - a submit whose answer is missing, and jobs of
 * older attempts.
 *
 * Purpose:
 *   A launch whose POST has no proven answer (RECONCILING) is looked for by
 *   its marker (job name, comment, user: base/marker.c) in the live queue,
 *   then in accounting from a little before the POST; a job found is
 *   adopted, and only confirmed absence (the absence rule of the state
 *   machine) opens the next attempt.  A job of ours found on another
 *   cluster or in a federation is not adopted: it is cancelled and the
 *   launch ends (submit-rejected, "multi-cluster routing is
 *   unsupported").  Jobs of older attempts that surface late are
 *   cancelled.  Which records are ours is launcher_owner.c's rule.
 *
 * Notes:
 *   - Reads spend the launcher's read budget (launcher_take_token()).
 *   - Calls only launcher_record.c and the cluster table: never the submit
 *     path or launcher.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#include "base/marker.h"
#include "launcher_budget.h"
#include "launcher_reconcile.h"

/* Accounting is searched from this long before the POST. */
#define ACCT_WINDOW_BEFORE_S 300

/* ---- the reconciliation's state ----------------------------------------- */

/* The absence rule's knobs in ms (sluice_launcher_opts_t.absence_*_s). */
struct launcher_reconcile {
    int64_t delay_ms;   /* lookups count as absences only this long after the POST */
    unsigned lookups;   /* absences that confirm it */
    int64_t spacing_ms; /* between two lookups of one launch */
};

sluice_err launcher_reconcile_create(launcher_reconcile_t **out,
                                     const sluice_launcher_t *l,
                                     sluice_error_t *err)
{
    launcher_reconcile_t *r;

    *out = NULL;
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    r->delay_ms = (int64_t)launcher_to_ms(l->o.absence_delay_s * 1000.0);
    r->lookups = l->o.absence_lookups;
    r->spacing_ms = (int64_t)launcher_to_ms(l->o.absence_spacing_s * 1000.0);
    *out = r;
    return SLUICE_OK;
}

void launcher_reconcile_destroy(launcher_reconcile_t *r)
{
    free(r);
}

static uint64_t leader_of(const sluice_jobview_t *v)
{
    return v->het_job_id != 0 ? v->het_job_id : v->job_id;
}

/* Leaders of the jobs that carry our marker (launcher_owner.c: name and
 * user, the comment in the live view and where accounting kept one).
 * *other (may be NULL) is set when one of them is on another cluster or
 * in a federation; its leader is then ids[0]. */
static size_t owned_leaders(const char *user,
                            const sluice_jobview_t *v,
                            size_t n,
                            const char *name,
                            const char *comment,
                            sluice_lookup_source src,
                            uint64_t *ids,
                            size_t max,
                            bool *other)
{
    size_t k = 0;

    if (other != NULL)
        *other = false;
    for (size_t i = 0; i < n; i++) {
        uint64_t id = leader_of(&v[i]);
        size_t j;
        if (launcher_view_mismatch(user, &v[i], 0, name, comment, src) != NULL)
            continue;
        for (j = 0; j < k && ids[j] != id; j++)
            ;
        if (j == k && k < max)
            ids[k++] = id;
        if (v[i].other_cluster && other != NULL && !*other && j < k) {
            uint64_t t = ids[0];
            ids[0] = ids[j];
            ids[j] = t;
            *other = true;
        }
    }
    return k;
}

/* Our job, found on another cluster or in a federation: never adopted;
 * cancelled, and the launch ends with the reason. */
static sluice_err refuse_other_cluster(
    sluice_launcher_t *l, launch_t *L, uint64_t id, sluice_lookup_source src, sluice_error_t *err)
{
    char reason[SLUICE_FSM_DETAIL_MAX];
    char detail[SLUICE_FSM_DETAIL_MAX + 32];

    launcher_cancel_other_cluster(l, L, id, NULL, reason, sizeof(reason));
    snprintf(detail, sizeof(detail), "%s (found in %s by its marker)", reason,
             sluice_lookup_source_name(src));
    return launcher_record_simple(l, L, SLUICE_EV_SUBMIT_REJECTED, detail, err);
}

static sluice_err
adopt(sluice_launcher_t *l, launch_t *L, uint64_t id, sluice_lookup_source src, sluice_error_t *err)
{
    sluice_fsm_event_t ev;

    memset(&ev, 0, sizeof(ev));
    ev.type = SLUICE_EV_ADOPTED;
    ev.attempt = L->fsm.attempt;
    ev.job_ids[0] = id;
    ev.n_job_ids = 1;
    ev.source = src;
    return launcher_record(l, L, &ev, NULL, err);
}

sluice_err
launcher_do_reconcile(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    /* Looked up by name and user as the launch's tenant: only its user's
     * jobs are adopted (owned_leaders). */
    const launcher_actor_t *A = launcher_actor(l, L->id);
    int64_t spacing = l->reconcile->spacing_ms;
    int64_t post_ms = (int64_t)launcher_to_ms(L->fsm.post_time * 1000.0);
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    uint64_t ids[SLUICE_FSM_MAX_JOBS];
    size_t k;
    sluice_lookup r;
    sluice_err rc = SLUICE_OK;

    if (L->recon.last_recon_ms != 0 && now - L->recon.last_recon_ms < spacing)
        return SLUICE_OK;
    if (!launcher_has_tokens(l, 2.0))
        return SLUICE_OK;
    L->recon.last_recon_ms = now;
    launcher_take_token(l);
    r = A->cl.find_live_by_name(A->cl.arg, L->fsm.job_name, A->user, &v, &n);
    if (r == SLUICE_LOOKUP_FOUND) {
        bool other = false;
        k = owned_leaders(A->user, v, n, L->fsm.job_name, L->fsm.comment, SLUICE_SOURCE_LIVE, ids,
                          SLUICE_FSM_MAX_JOBS, &other);
        launcher_views_free(v, n);
        if (other)
            return refuse_other_cluster(l, L, ids[0], SLUICE_SOURCE_LIVE, err);
        if (k > 0)
            return adopt(l, L, ids[0], SLUICE_SOURCE_LIVE, err);
        sluice_log(SLUICE_LOG_WARNING, "launch %s: a job named %s is not ours (comment/user)",
                   L->id, L->fsm.job_name);
    } else if (r == SLUICE_LOOKUP_UNAVAILABLE) {
        L->recon.absent_count = 0;
        return SLUICE_OK;
    }
    launcher_take_token(l);
    v = NULL;
    n = 0;
    r = A->cl.find_acct_by_name(A->cl.arg, L->fsm.job_name, A->user,
                                post_ms / 1000 - ACCT_WINDOW_BEFORE_S, now / 1000 + 1, &v, &n);
    if (r == SLUICE_LOOKUP_FOUND) {
        bool other = false;
        k = owned_leaders(A->user, v, n, L->fsm.job_name, L->fsm.comment, SLUICE_SOURCE_ACCOUNTING,
                          ids, SLUICE_FSM_MAX_JOBS, &other);
        launcher_views_free(v, n);
        if (other)
            return refuse_other_cluster(l, L, ids[0], SLUICE_SOURCE_ACCOUNTING, err);
        if (k > 0)
            return adopt(l, L, ids[0], SLUICE_SOURCE_ACCOUNTING, err);
    } else if (r == SLUICE_LOOKUP_UNAVAILABLE) {
        L->recon.absent_count = 0;
        return SLUICE_OK;
    }
    /* A healthy absence; it counts only once the delay after the POST has passed. */
    if (now - post_ms >= l->reconcile->delay_ms)
        L->recon.absent_count++;
    if (L->recon.absent_count >= l->reconcile->lookups) {
        char detail[96];
        snprintf(detail, sizeof(detail), "%u healthy lookups found no job named %s",
                 L->recon.absent_count, L->fsm.job_name);
        L->recon.absent_count = 0;
        L->recon.last_recon_ms = 0;
        sluice_log(SLUICE_LOG_NOTICE, "launch %s: absence confirmed: %s", L->id, detail);
        rc = launcher_record_simple(l, L, SLUICE_EV_ABSENCE_CONFIRMED, NULL, err);
    }
    return rc;
}

/* Jobs of older attempts that surface late are cancelled (we own the marker). */
sluice_err
launcher_do_old_attempts(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    const launcher_actor_t *A = launcher_actor(l, L->id);
    int64_t spacing = l->reconcile->spacing_ms;
    sluice_err rc = SLUICE_OK;

    if (L->fsm.attempt < 2 || now - L->recon.last_old_check_ms < spacing)
        return SLUICE_OK;
    L->recon.last_old_check_ms = now;
    for (uint32_t a = 1; a < L->fsm.attempt && rc == SLUICE_OK; a++) {
        char name[SLUICE_FSM_MARKER_MAX];
        char comment[SLUICE_FSM_MARKER_MAX];
        sluice_jobview_t *v = NULL;
        size_t n = 0;
        uint64_t ids[SLUICE_FSM_MAX_JOBS];
        size_t k;

        if (!launcher_take_token(l))
            break;
        marker_job_name(name, sizeof(name), l->prefix, L->site, L->id, a);
        marker_comment(comment, sizeof(comment), L->id, a);
        if (A->cl.find_live_by_name(A->cl.arg, name, A->user, &v, &n) != SLUICE_LOOKUP_FOUND)
            continue;
        /* Only a job Slurm is done with needs no cancel: a requeued or
         * completing one may run again (sluice_job_is_final()). */
        for (size_t i = 0; i < n; i++) {
            if (sluice_job_is_final(v[i].base, v[i].flags)) {
                free(v[i].name);
                v[i].name = NULL;
            }
        }
        k = owned_leaders(A->user, v, n, name, comment, SLUICE_SOURCE_LIVE, ids,
                          SLUICE_FSM_MAX_JOBS, NULL);
        launcher_views_free(v, n);
        for (size_t i = 0; i < k && rc == SLUICE_OK; i++) {
            sluice_error_t cerr = SLUICE_ERROR_INIT;
            if (A->cl.cancel(A->cl.arg, ids[i], 0, &cerr) != SLUICE_OK) {
                sluice_log(SLUICE_LOG_WARNING, "launch %s: cancel of stale job %" PRIu64 ": %s",
                           L->id, ids[i], cerr.text);
                continue;
            }
            sluice_log(SLUICE_LOG_NOTICE,
                       "launch %s: cancelled job %" PRIu64 " of older attempt %" PRIu32, L->id,
                       ids[i], a);
            rc = launcher_note(
                l, L, "stale-job-cancelled",
                json_pack("{s:I, s:i}", "job_id", (json_int_t)ids[i], "attempt", (int)a), err);
        }
    }
    return rc;
}
