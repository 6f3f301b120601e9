/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_submit.h - the launcher's batched submit (not installed).
 *
 * Purpose:
 *   Every launch due a submit this cycle goes out in batches: selected
 *   (launcher_submit.c), staged and given its job descriptions
 *   (launcher_stage.c), marked SUBMITTING, POSTed, its answer recorded
 *   (launcher_submit.c).  A POST that provably never left is sent again,
 *   same attempt, while the submit budget of time lasts.
 *
 * Owns:
 *   launcher_submit_t: the submit's knobs, resolved once from
 *   sluice_launcher_opts_t (staging threads and POSTs at once, the time a
 *   POST that never left may be retried, how long submit rounds go on).
 *   Per launch: launch_t.submit (a POST that never left).  Made by
 *   launcher_submit_create(), freed by launcher_submit_destroy().  Its
 *   two files share the struct; no other file reads it.
 *
 * Called by:
 *   launcher.c (the step, the wait, recovery's orphans).  Calls the
 *   budget, the intake (launches accepted while a round runs),
 *   launcher_peers.c, launcher_record.c and below.
 */
#ifndef SLUICE_LAUNCHER_SUBMIT_H
#define SLUICE_LAUNCHER_SUBMIT_H

#include "launcher_int.h"

struct launcher_submit {
    unsigned in_flight; /* staging threads, and POSTs at once (submit_in_flight) */
    int64_t timeout_ms; /* a POST that never left is tried again for this long */
    int64_t round_ms;   /* submit rounds of one cycle go on for this long */
};

/* The submit of `l` (l->o's submit knobs are final).  SLUICE_ENOMEM with
 * nothing made. */
sluice_err
launcher_submit_create(launcher_submit_t **out, const sluice_launcher_t *l, sluice_error_t *err);
/* NULL-safe. */
void launcher_submit_destroy(launcher_submit_t *s);

/* ---- launcher_submit.c ---- */

/* Every launch due for a submit this cycle, batched. */
sluice_err launcher_submit_due(sluice_launcher_t *l, int64_t now, sluice_error_t *err);
/* The earliest resend of a POST that never left (a clock time in ms, after
 * `now`); -1 when none. */
int64_t launcher_submit_wake(const sluice_launcher_t *l, int64_t now);

/* ---- launcher_stage.c: the batched submit's staging ---- */

/* One launch of a submit batch. */
typedef struct {
    launch_t *L;
    uint32_t attempt;
    bool resend; /* the attempt's POST never left: same attempt, no new marker */
    char dep[SLUICE_FSM_DETAIL_MAX]; /* Slurm dependency when has_dep (or why it failed) */
    bool has_dep;
    bool staged;
    sluice_error_t perr; /* why staging failed */
    sluice_jobdesc_t *d;
    size_t n;
} batch_entry_t;

void launcher_batch_entry_clear(batch_entry_t *b);
/* Stage the chunk b[0..*n) and build its job descriptions; entries whose
 * staging or descriptions failed are cleared and compacted out (*n is what
 * is kept).  An error only for what stops the whole submit (no memory). */
sluice_err
launcher_chunk_prepare(sluice_launcher_t *l, batch_entry_t *b, size_t *n, sluice_error_t *err);
/* Recovery: warn about staging directories of no live launch (left in
 * place); how many there are. */
size_t launcher_report_orphans(sluice_launcher_t *l);

#endif /* SLUICE_LAUNCHER_SUBMIT_H */
