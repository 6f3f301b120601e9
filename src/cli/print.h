/* SPDX-License-Identifier: Apache-2.0 */
/* print.h - what the launch, status, ls and cancel commands print, shared by
 * the local-store path and the `--server` path so that both say the same. */
#ifndef SLUICE_CLI_PRINT_H
#define SLUICE_CLI_PRINT_H

#include <jansson.h>

/* One transition line (text) or object (json, one per line). */
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

/* "launch ID accepted (site S, N pools, one hetjob)" */
void cli_print_accepted(const char *id, int existed, const char *site, size_t n_pools);

/* `sluice status`: `launch` is the API view (summary + "events", no
 * "render"). */
void cli_print_launch(const json_t *launch, int json);

/* `sluice ls`: one page of summaries and its next cursor (NULL: last). */
void cli_print_list(const json_t *items, const char *next_cursor, int json);

/* `sluice cancel` of a launch that already ended. */
void cli_print_cancel_over(const char *id, const char *state);

#endif /* SLUICE_CLI_PRINT_H */
