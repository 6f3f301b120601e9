/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_owner.c - whether a Slurm record is the launch's job.
 *
 * Purpose:
 *   The one ownership rule of the launcher (docs/state-machine.md,
 *   "Ownership"): a live record is ours when it carries the launch's job
 *   id, marker name, comment marker and our Slurm user; an accounting
 *   record when it carries the id, the name and the user (accounting keeps
 *   the comment only with AccountingStoreFlags=job_comment, so a comment is
 *   compared only where one was kept).  A record that fails the rule is
 *   another job (a job id Slurm reused after ours aged out): the launcher
 *   treats it as the job's absence from that view, logs it once and never
 *   cancels it.  A record of ours that belongs to another cluster or a
 *   federation is refused: the job is cancelled and the launch ends
 *   INFRASTRUCTURE_ERROR (status.c gives that verdict).
 *
 * Notes:
 *   - Called by the poller, reconciliation, the submit path and the cancel
 *     (launcher.c); calls only launcher_record.c and the cluster table.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#include "launcher_budget.h"

static uint64_t leader_of(const sluice_jobview_t *v)
{
    return v->het_job_id != 0 ? v->het_job_id : v->job_id;
}

const char *launcher_view_mismatch(const char *user,
                                   const sluice_jobview_t *v,
                                   uint64_t id,
                                   const char *name,
                                   const char *comment,
                                   sluice_lookup_source src)
{
    if (id != 0 && leader_of(v) != id)
        return "job id";
    if (!launcher_same_str(v->name, name))
        return "job name";
    if (!launcher_same_str(v->user_name, user))
        return "user";
    /* Accounting keeps the comment only with job_comment: an empty one is
     * not a mismatch there, a different one is. */
    if (src == SLUICE_SOURCE_ACCOUNTING && (v->comment == NULL || v->comment[0] == '\0'))
        return NULL;
    if (!launcher_same_str(v->comment, comment))
        return "comment marker";
    return NULL;
}

const char *launcher_mismatch(const sluice_launcher_t *l,
                              const launch_t *L,
                              const sluice_jobview_t *v,
                              size_t n,
                              sluice_lookup_source src)
{
    const char *why = NULL;

    if (n == 0)
        return "empty record";
    for (size_t i = 0; i < n && why == NULL; i++)
        why = launcher_view_mismatch(launcher_actor(l, L->id)->user, &v[i], L->fsm.job_ids[0],
                                     L->fsm.job_name, L->fsm.comment, src);
    return why;
}

size_t launcher_keep_owned(const sluice_launcher_t *l,
                           const launch_t *L,
                           sluice_jobview_t *v,
                           size_t n,
                           sluice_lookup_source src,
                           const char **why)
{
    size_t kept = 0;

    *why = n == 0 ? "empty record" : NULL;
    for (size_t i = 0; i < n; i++) {
        const char *w =
            launcher_view_mismatch(launcher_actor(l, L->id)->user, &v[i], L->fsm.job_ids[0],
                                   L->fsm.job_name, L->fsm.comment, src);
        if (w == NULL && v[i].other_cluster)
            w = "cluster"; /* the same id on another cluster: another job */
        if (w != NULL) {
            if (*why == NULL)
                *why = w;
            sluice_jobview_clear(&v[i]);
            continue;
        }
        if (kept != i) {
            v[kept] = v[i];
            memset(&v[i], 0, sizeof(v[i]));
        }
        kept++;
    }
    if (kept > 0)
        *why = NULL;
    return kept;
}

bool launcher_other_cluster(const sluice_jobview_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].other_cluster)
            return true;
    }
    return false;
}

sluice_err launcher_not_ours(sluice_launcher_t *l,
                             launch_t *L,
                             uint64_t id,
                             sluice_lookup_source src,
                             const char *why,
                             sluice_error_t *err)
{
    unsigned bit = 1u << (unsigned)src;

    if (L->own.not_ours_id == id && (L->own.not_ours_src & bit) != 0)
        return SLUICE_OK;
    if (L->own.not_ours_id != id) {
        L->own.not_ours_id = id;
        L->own.not_ours_src = 0;
    }
    L->own.not_ours_src |= bit;
    sluice_log(SLUICE_LOG_WARNING,
               "launch %s: the %s record of job %" PRIu64 " is not ours (its %s differs): the id "
               "names another job; treated as our job's absence there, never cancelled",
               L->id, sluice_lookup_source_name(src), id, why);
    return launcher_note(l, L, "job-not-ours",
                         json_pack("{s:I, s:s, s:s}", "job_id", (json_int_t)id, "source",
                                   sluice_lookup_source_name(src), "mismatch", why),
                         err);
}

void launcher_cancel_other_cluster(
    sluice_launcher_t *l, launch_t *L, uint64_t id, const char *cluster, char *out, size_t cap)
{
    sluice_error_t cerr = SLUICE_ERROR_INIT;
    char where[96];

    if (cluster != NULL && cluster[0] != '\0')
        snprintf(where, sizeof(where), "%" PRIu64 ";%s", id, cluster);
    else
        snprintf(where, sizeof(where), "%" PRIu64, id);
    const launcher_actor_t *A = launcher_actor(l, L->id);

    (void)launcher_take_token(l); /* a cancel of our own job goes even over budget */
    if (A->cl.cancel(A->cl.arg, id, 0, &cerr) == SLUICE_OK)
        snprintf(out, cap, "multi-cluster routing is unsupported: job %s cancelled", where);
    else
        snprintf(out, cap, "multi-cluster routing is unsupported: job %s (cancel failed: %s)",
                 where, cerr.text);
    sluice_log(SLUICE_LOG_ERR, "critical: launch %s: %s", L->id, out);
}
