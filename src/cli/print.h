/* SPDX-License-Identifier: Apache-2.0 */
/* print.h - what the launch, status, ls and cancel commands print, shared by
 * the local-store path and the `--server` path so that both say the same. */
#ifndef SLUICE_CLI_PRINT_H
#define SLUICE_CLI_PRINT_H

#include <jansson.h>

#include "base/jdec.h"

/* One transition line (text) or object (json, one per line: launch_id,
 * event, state, result_code (null until DONE), slurm_state and reason (null
 * when unknown), elapsed_s (seconds, to the millisecond)). */
typedef struct {
    const char *launch_id;
    const char *event;       /* the event that caused it, or "" */
    const char *state;       /* the new state's name */
    int result;              /* 127 until DONE */
    const char *slurm_state; /* "" when unknown */
    const char *reason;      /* "" when none */
    double elapsed;          /* seconds since acceptance */
} cli_transition_t;

void cli_print_transition(const cli_transition_t *t, int json);
/* The Slurm state an `observed` log entry carries (context.jobs[0].state),
 * or NULL: borrowed from the entry. */
const char *cli_observed_state(const jdec_cur_t *ev);

/* The transition line of a launch as it stands (the API's Launch): its
 * state, result and reason; elapsed from created_ms to the event that set
 * them (seq summary_seq in `events`; without it updated_ms); `event` NULL:
 * that event's name; `slurm_state` as known, or "". */
void cli_transition_of(const json_t *launch,
                       const char *event,
                       const char *slurm_state,
                       cli_transition_t *t);

/* The Slurm state of the newest `observed` event of a launch's event log
 * (the API's `events`), or "". */
const char *cli_last_slurm_state(const json_t *events);

/* Print a JSON value as the CLI prints every one: sorted keys, reals to 15
 * significant digits (0.202, never 0.20200000000000001), indented when
 * `pretty`, else on one line.  Returns 0, or -1 when it could not. */
int cli_print_json(const json_t *j, int pretty);

/* "launch ID accepted (site S, N pools, one hetjob)" */
void cli_print_accepted(const char *id, int existed, const char *site, size_t n_pools);

/* `sluice status`: `launch` is the API view (summary + "events", no
 * "render"). */
void cli_print_launch(const json_t *launch, int json);

/* `sluice ls`: one page of summaries and its next cursor (NULL: last); as
 * JSON the page of GET /v1/launches (`items`, `next_cursor`). */
void cli_print_list(const json_t *items, const char *next_cursor, int json);

/* `sluice cancel` of a launch that already ended. */
void cli_print_cancel_over(const char *id, const char *state);

#endif /* SLUICE_CLI_PRINT_H */
