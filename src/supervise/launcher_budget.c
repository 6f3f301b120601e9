/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_budget.c - the read and submit budgets of the launcher.
 *
 * Purpose:
 *   Two token buckets: reads and cancels toward slurmctld
 *   (sluice_launcher_opts_t.rpc_per_sec) and submits (submit_per_sec).
 *   The step refills both once (launcher_budget_refill), reserves two read
 *   tokens for each cancel and reconciliation due this step
 *   (launcher_reserve_for_actions), lets the poll take only what is above
 *   the reserve for its per-launch full reads (launcher_take_spare_token),
 *   then gives the reserve back (launcher_release_reserve).
 *
 * Notes:
 *   - A bucket holds at most one second's worth; a rate below one still
 *     allows one call.
 *   - Only the launcher's thread touches the budgets.
 */
#include <stdlib.h>

#include <sluice/launcher.h>

#include "launcher_budget.h"

struct launcher_budget {
    double reads; /* reads and cancels */
    int64_t reads_ms;
    /* Tokens the poll's per-launch full reads leave for the cancels and
     * reconciliations due this step (launcher_reserve_for_actions). */
    double reserved;
    double submits; /* submits: a budget of their own */
    int64_t submits_ms;
};

sluice_err launcher_budget_create(launcher_budget_t **out,
                                  const sluice_launcher_t *l,
                                  int64_t now,
                                  sluice_error_t *err)
{
    launcher_budget_t *b;

    *out = NULL;
    if ((b = calloc(1, sizeof(*b))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    b->reads = l->o.rpc_per_sec;
    b->reads_ms = now;
    b->submits = l->o.submit_per_sec;
    b->submits_ms = now;
    *out = b;
    return SLUICE_OK;
}

void launcher_budget_destroy(launcher_budget_t *b)
{
    free(b);
}

bool launcher_take_token(sluice_launcher_t *l)
{
    if (l->budget->reads < 1.0)
        return false;
    l->budget->reads -= 1.0;
    return true;
}

bool launcher_take_spare_token(sluice_launcher_t *l)
{
    if (l->budget->reads < 1.0 + l->budget->reserved)
        return false;
    l->budget->reads -= 1.0;
    return true;
}

void launcher_reserve_for_actions(sluice_launcher_t *l, int64_t now)
{
    double want = 0.0;

    for (size_t i = 0; i < l->n; i++) {
        const launch_t *L = l->v[i];

        unsigned due;

        if (L->fsm.state == SLUICE_FSM_DONE)
            continue;
        due = launcher_fsm_due(L, launcher_fsm_time(now));
        if (L->fsm.n_job_ids > 0 && !L->cancel_refused && (due & SLUICE_DUE_CANCEL))
            want += 2.0;
        else if (!(due & (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT)) &&
                 (due & SLUICE_DUE_RECONCILE))
            want += 2.0; /* the marker looked up live, then in accounting */
    }
    l->budget->reserved = want;
}

void launcher_release_reserve(sluice_launcher_t *l)
{
    l->budget->reserved = 0.0;
}

bool launcher_has_tokens(const sluice_launcher_t *l, double n)
{
    return l->budget->reads >= n;
}

bool launcher_take_submit_token(sluice_launcher_t *l)
{
    if (l->budget->submits < 1.0)
        return false;
    l->budget->submits -= 1.0;
    return true;
}

/* Refill one budget of `per_sec` tokens (never above one second's worth;
 * a rate below one still allows one call). */
static void refill(double *tokens, int64_t *since_ms, double per_sec, int64_t now)
{
    *tokens += (double)(now - *since_ms) / 1000.0 * per_sec;
    if (*tokens > per_sec)
        *tokens = per_sec;
    if (*tokens < 1.0 && per_sec < 1.0)
        *tokens = 1.0;
    *since_ms = now;
}

void launcher_budget_refill(sluice_launcher_t *l, int64_t now)
{
    refill(&l->budget->reads, &l->budget->reads_ms, l->o.rpc_per_sec, now);
    refill(&l->budget->submits, &l->budget->submits_ms, l->o.submit_per_sec, now);
}
