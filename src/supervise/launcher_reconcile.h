/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_reconcile.h - reconciliation of uncertain submits (not installed).
 *
 * Purpose:
 *   A submit whose answer is missing is looked up by its marker (the live
 *   queue, then accounting): its job is adopted, or absences are counted
 *   until the absence rule opens the next attempt.  Jobs of older attempts
 *   that surface late are cancelled.
 *
 * Owns:
 *   launcher_reconcile_t (launcher_reconcile.c): the absence rule's knobs
 *   (delay, number of lookups, spacing), resolved once to ms from
 *   sluice_launcher_opts_t.  Per launch: launch_t.recon (absences counted,
 *   the last lookups).  Made by launcher_reconcile_create(), freed by
 *   launcher_reconcile_destroy().
 *
 * Called by:
 *   launcher.c (a launch's due actions).  Calls the budget,
 *   launcher_owner.c, launcher_record.c and below.
 */
#ifndef SLUICE_LAUNCHER_RECONCILE_H
#define SLUICE_LAUNCHER_RECONCILE_H

#include "launcher_int.h"

/* The reconciliation of `l` (l->o's absence knobs are final).
 * SLUICE_ENOMEM with nothing made. */
sluice_err launcher_reconcile_create(launcher_reconcile_t **out,
                                     const sluice_launcher_t *l,
                                     sluice_error_t *err);
/* NULL-safe. */
void launcher_reconcile_destroy(launcher_reconcile_t *r);

/* Look for the job of an uncertain submit by its marker; adopt it, or count
 * one absence. */
sluice_err
launcher_do_reconcile(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err);
/* Jobs of older attempts that surface late are cancelled. */
sluice_err
launcher_do_old_attempts(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err);

#endif /* SLUICE_LAUNCHER_RECONCILE_H */
