/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_reconcile.c - a submit whose answer is missing, and jobs of
 * older attempts.
 *
 * Purpose:
 *   A launch whose POST has no proven answer (RECONCILING) is looked for by
 *   its marker (job name, comment, user: base/marker.c) in the live queue,
 *   then in accounting from a little before the POST; a job found is
 *   adopted, and only confirmed absence (the absence rule of the state
 *   machine) opens the next attempt.  Jobs of older attempts that surface
 *   late are cancelled.
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
#include "launcher_int.h"

/* Accounting is searched from this long before the POST. */
#define ACCT_WINDOW_BEFORE_S 300

static uint64_t leader_of(const sluice_jobview_t *v)
{
    return v->het_job_id != 0 ? v->het_job_id : v->job_id;
}

/* Views of our marker: name and user always, the comment when present. */
static size_t owned_leaders(const sluice_launcher_t *l,
                            const sluice_jobview_t *v,
                            size_t n,
                            const char *name,
                            const char *comment,
                            bool need_comment,
                            uint64_t *ids,
                            size_t max)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t id = leader_of(&v[i]);
        bool dup = false;
        if (!launcher_same_str(v[i].name, name) || !launcher_same_str(v[i].user_name, l->user))
            continue;
        if ((need_comment || v[i].comment != NULL) && !launcher_same_str(v[i].comment, comment))
            continue;
        for (size_t j = 0; j < k; j++)
            dup = dup || ids[j] == id;
        if (!dup && k < max)
            ids[k++] = id;
    }
    return k;
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
    int64_t spacing = (int64_t)launcher_to_ms(l->o.absence_spacing_s * 1000.0);
    int64_t post_ms = (int64_t)launcher_to_ms(L->fsm.post_time * 1000.0);
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    uint64_t ids[SLUICE_FSM_MAX_JOBS];
    size_t k;
    sluice_lookup r;
    sluice_err rc = SLUICE_OK;

    if (L->last_recon_ms != 0 && now - L->last_recon_ms < spacing)
        return SLUICE_OK;
    if (!launcher_has_tokens(l, 2.0))
        return SLUICE_OK;
    L->last_recon_ms = now;
    launcher_take_token(l);
    r = l->cl.find_live_by_name(l->cl.arg, L->fsm.job_name, l->user, &v, &n);
    if (r == SLUICE_LOOKUP_FOUND) {
        k = owned_leaders(l, v, n, L->fsm.job_name, L->fsm.comment, true, ids, SLUICE_FSM_MAX_JOBS);
        launcher_views_free(v, n);
        if (k > 0)
            return adopt(l, L, ids[0], SLUICE_SOURCE_LIVE, err);
        sluice_log(SLUICE_LOG_WARNING, "launch %s: a job named %s is not ours (comment/user)",
                   L->id, L->fsm.job_name);
    } else if (r == SLUICE_LOOKUP_UNAVAILABLE) {
        L->absent_count = 0;
        return SLUICE_OK;
    }
    launcher_take_token(l);
    v = NULL;
    n = 0;
    r = l->cl.find_acct_by_name(l->cl.arg, L->fsm.job_name, l->user,
                                post_ms / 1000 - ACCT_WINDOW_BEFORE_S, now / 1000 + 1, &v, &n);
    if (r == SLUICE_LOOKUP_FOUND) {
        k = owned_leaders(l, v, n, L->fsm.job_name, L->fsm.comment, false, ids,
                          SLUICE_FSM_MAX_JOBS);
        launcher_views_free(v, n);
        if (k > 0)
            return adopt(l, L, ids[0], SLUICE_SOURCE_ACCOUNTING, err);
    } else if (r == SLUICE_LOOKUP_UNAVAILABLE) {
        L->absent_count = 0;
        return SLUICE_OK;
    }
    /* A healthy absence; it counts only once the delay after the POST has passed. */
    if (now - post_ms >= (int64_t)launcher_to_ms(l->o.absence_delay_s * 1000.0))
        L->absent_count++;
    if (L->absent_count >= l->o.absence_lookups) {
        char detail[96];
        snprintf(detail, sizeof(detail), "%u healthy lookups found no job named %s",
                 L->absent_count, L->fsm.job_name);
        L->absent_count = 0;
        L->last_recon_ms = 0;
        sluice_log(SLUICE_LOG_NOTICE, "launch %s: absence confirmed: %s", L->id, detail);
        rc = launcher_record_simple(l, L, SLUICE_EV_ABSENCE_CONFIRMED, NULL, err);
    }
    return rc;
}

/* Jobs of older attempts that surface late are cancelled (we own the marker). */
sluice_err
launcher_do_old_attempts(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    int64_t spacing = (int64_t)launcher_to_ms(l->o.absence_spacing_s * 1000.0);
    sluice_err rc = SLUICE_OK;

    if (L->fsm.attempt < 2 || now - L->last_old_check_ms < spacing)
        return SLUICE_OK;
    L->last_old_check_ms = now;
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
        if (l->cl.find_live_by_name(l->cl.arg, name, l->user, &v, &n) != SLUICE_LOOKUP_FOUND)
            continue;
        for (size_t i = 0; i < n; i++) { /* only jobs still live need a cancel */
            if (sluice_job_base_is_terminal(v[i].base)) {
                free(v[i].name);
                v[i].name = NULL;
            }
        }
        k = owned_leaders(l, v, n, name, comment, true, ids, SLUICE_FSM_MAX_JOBS);
        launcher_views_free(v, n);
        for (size_t i = 0; i < k && rc == SLUICE_OK; i++) {
            sluice_error_t cerr = SLUICE_ERROR_INIT;
            if (l->cl.cancel(l->cl.arg, ids[i], 0, &cerr) != SLUICE_OK) {
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
