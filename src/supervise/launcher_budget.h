/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_budget.h - the launcher's budgets (not installed).
 *
 * Purpose:
 *   Two token buckets the launcher spends on slurmrestd: reads and
 *   cancels (sluice_launcher_opts_t.rpc_per_sec), and submits
 *   (submit_per_sec), each refilled once a step for the time since the
 *   last refill, never above one second's worth.  A step reserves tokens
 *   for its due cancels and reconciliations before the poll spends the
 *   rest on full reads.
 *
 * Owns:
 *   launcher_budget_t (launcher_budget.c): both buckets, their refill
 *   times, and the step's reserve.  Made by launcher_budget_create(),
 *   freed by launcher_budget_destroy().
 *
 * Called by:
 *   launcher.c (refill, reserve, cancels), launcher_poll.c,
 *   launcher_submit.c, launcher_reconcile.c, launcher_owner.c,
 *   launcher_peers.c.  Calls launcher_util.c and launcher_fsm.c only.
 */
#ifndef SLUICE_LAUNCHER_BUDGET_H
#define SLUICE_LAUNCHER_BUDGET_H

#include "launcher_int.h"

/* Both budgets of `l` full at `now` (l->o's rates are final), in *out.
 * SLUICE_ENOMEM with nothing made. */
sluice_err launcher_budget_create(launcher_budget_t **out,
                                  const sluice_launcher_t *l,
                                  int64_t now,
                                  sluice_error_t *err);
/* NULL-safe. */
void launcher_budget_destroy(launcher_budget_t *b);

/* One read/cancel token of the budget; false when spent. */
bool launcher_take_token(sluice_launcher_t *l);
/* One token for a per-launch full read of the poll, only while more than
 * the reserve for this step's due cancels and reconciliations is left. */
bool launcher_take_spare_token(sluice_launcher_t *l);
/* Reserve two tokens for every launch whose cancel (the fresh read and the
 * DELETE) or reconciliation (the marker looked up live, then in accounting)
 * is due at `now`, before the poll spends the budget on full reads: neither
 * is ever starved by the reads of pending jobs. */
void launcher_reserve_for_actions(sluice_launcher_t *l, int64_t now);
/* The poll is done: the reserve is given back to the step's actions. */
void launcher_release_reserve(sluice_launcher_t *l);
/* True when at least `n` read/cancel tokens are left (none taken). */
bool launcher_has_tokens(const sluice_launcher_t *l, double n);
/* One submit token of the submit budget; false when spent. */
bool launcher_take_submit_token(sluice_launcher_t *l);
/* Fill both budgets for the time since the last refill (once a step). */
void launcher_budget_refill(sluice_launcher_t *l, int64_t now);

#endif /* SLUICE_LAUNCHER_BUDGET_H */
