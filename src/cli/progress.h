/* SPDX-License-Identifier: Apache-2.0 */
/* progress.h - what `sluice launch --wait` shows between transitions
 * (progress.c): on a terminal, one status line on stderr, redrawn each
 * second, with the state, Slurm's reason, the elapsed time and the nodes
 * once running; off a terminal, a heartbeat line on stdout every
 * `heartbeat_s` seconds with the same facts.  Nothing with -o json (its
 * lines are the API's transitions only). */
#ifndef SLUICE_CLI_PROGRESS_H
#define SLUICE_CLI_PROGRESS_H

#include <jansson.h>

typedef struct {
    int tty;            /* stderr is a terminal: the status line */
    int json;           /* -o json: nothing */
    double heartbeat_s; /* off a terminal: a heartbeat this often (0: never) */
    double start;       /* monotonic seconds at init */
    double last_beat;   /* monotonic seconds of the last heartbeat (or start) */
    int drawn;          /* the status line is on the screen */
} cli_progress_t;

/* Heartbeats every 300 s unless the option or SLUICE_HEARTBEAT_S says. */
#define CLI_PROGRESS_HEARTBEAT_S 300.0

void cli_progress_init(cli_progress_t *p, int json, double heartbeat_s);

/* The launch's view (GET /v1/launches/{id}) now: redraw or beat when due. */
void cli_progress_tick(cli_progress_t *p, const json_t *view);

/* Erase the status line (before a transition line is printed). */
void cli_progress_clear(cli_progress_t *p);

/* One line of progress for `view` into buf: "PENDING    12.3s  Resources
 * (job 123)", "RUNNING    64.0s  on tb[1-2] (job 123)". */
void cli_progress_line(const json_t *view, double elapsed_s, char *buf, size_t size);

#endif /* SLUICE_CLI_PROGRESS_H */
