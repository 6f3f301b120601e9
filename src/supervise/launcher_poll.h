/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_poll.h - the launcher's poller (not installed).
 *
 * Purpose:
 *   The one batched state read per cycle, full reads of the jobs that
 *   changed, the pending heartbeat, accounting lookups, and the adaptive
 *   interval until the next cycle.
 *
 * Owns:
 *   launcher_poll_t (launcher_poll.c): the interval, when the last batched
 *   read ended and how long it took, a held-back read, and whether the
 *   interval follows the cluster's status read (no site interval).  Per
 *   launch: launch_t.poll (the cache of its job's records).  Made by
 *   launcher_poll_create(), freed by launcher_poll_destroy().
 *
 * Called by:
 *   launcher.c (the step, the wait), launcher_ha.c (forget).  Calls the
 *   budget, launcher_owner.c, launcher_record.c and below.
 */
#ifndef SLUICE_LAUNCHER_POLL_H
#define SLUICE_LAUNCHER_POLL_H

#include "launcher_int.h"

/* The poller of `l` (l->o's intervals are final) starting at `now`, its
 * last read taken as done then.  automatic: the site set no poll interval
 * (the longest wait follows the cluster's status read).  SLUICE_ENOMEM
 * with nothing made. */
sluice_err launcher_poll_create(launcher_poll_t **out,
                                const sluice_launcher_t *l,
                                bool automatic,
                                int64_t now,
                                sluice_error_t *err);
/* NULL-safe. */
void launcher_poll_destroy(launcher_poll_t *p);

/* The one batched state read of a cycle, then full reads for the changed. */
sluice_err launcher_poll_live(sluice_launcher_t *l, int64_t now, sluice_error_t *err);
sluice_err
launcher_do_accounting(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err);
void launcher_adapt_interval(sluice_launcher_t *l, int64_t now);
/* The wait until the next cycle, as the last launcher_adapt_interval() set it. */
int64_t launcher_poll_interval_ms(const sluice_launcher_t *l);
/* A replica that stops leading: no read is held back any more. */
void launcher_poll_forget(sluice_launcher_t *l);

#endif /* SLUICE_LAUNCHER_POLL_H */
