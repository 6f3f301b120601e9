/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_intake.h - the launcher's intake (not installed).
 *
 * Purpose:
 *   Accepts from any thread (sluice_launcher_accept()): concurrent accepts
 *   share one durable store commit (group commit) and queue their launches
 *   on the intake, which the launcher's thread drains at the start and
 *   the end of every cycle; the idle and the wake-up of that thread
 *   (sluice_launcher_idle(), sluice_launcher_wake()).
 *
 * Owns:
 *   launcher_intake_t (launcher_intake.c): the intake mutex and condition,
 *   the queue of accepted launches not yet tracked (their secret values and
 *   renders), the wake flag, the count of new launches, and the group
 *   commit's mutex, condition and queue of waiting accepts.  Per launch:
 *   launch_t.intake (the kept render, when it was handed over).  Made by
 *   launcher_intake_create(), freed by launcher_intake_destroy().
 *
 * Called by:
 *   launcher.c (the step, recovery), launcher_submit.c and
 *   launcher_stage.c (launches accepted while a round runs, the queue
 *   time), launcher_ha.c (discard).  Calls launcher_record.c (tracking)
 *   and below.
 *
 * Notes:
 *   - The only subsystem other threads enter: everything of it is taken
 *     under its mutexes or is atomic (see launcher_intake.c).
 */
#ifndef SLUICE_LAUNCHER_INTAKE_H
#define SLUICE_LAUNCHER_INTAKE_H

#include "launcher_int.h"

/* An empty intake: its mutexes and conditions made.  SLUICE_ENOMEM with
 * nothing made. */
sluice_err launcher_intake_create(launcher_intake_t **out, sluice_error_t *err);
/* Frees entries not yet drained (their secret values zeroed, their renders
 * counted off l->renders); NULL-safe. */
void launcher_intake_destroy(sluice_launcher_t *l, launcher_intake_t *in);
/* Free every entry on the intake (secrets wiped): a replica that does not
 * lead tracks nothing; the launches are in the store. */
void launcher_intake_discard(sluice_launcher_t *l);
void launcher_intake_lock(sluice_launcher_t *l);
void launcher_intake_unlock(sluice_launcher_t *l);
/* New launches on the intake, not yet tracked (any thread). */
size_t launcher_intake_new_count(const sluice_launcher_t *l);
/* With the intake lock held, on the launcher's thread: track every queued
 * launch and hand over its secret values.  clear_wake: the caller is about
 * to act on what it took (the start of a step); at the end of a step the
 * wake-up stays, so launches taken in then are submitted at once. */
sluice_err launcher_intake_drain(sluice_launcher_t *l, bool clear_wake, sluice_error_t *err);
/* launcher_intake_drain() under the intake lock, the wake flag kept: the
 * submit rounds take in launches accepted while a round ran. */
sluice_err launcher_intake_take(sluice_launcher_t *l, sluice_error_t *err);
/* The launch's first submit starts now: its time since the intake handed it
 * over is counted (timing.h: queue). */
void launcher_intake_queued(launch_t *L, uint64_t now_ns);

#endif /* SLUICE_LAUNCHER_INTAKE_H */
