/* SPDX-License-Identifier: Apache-2.0 */
/* fsm_int.h - what the four files of the state machine share.
 *
 * Owns nothing; declares the internal interface between:
 *   - fsm_table.c: the name tables and the transition table (and lookups in them),
 *                  and the due actions (sluice_fsm_due: what each state asks for);
 *   - status.c:    a Slurm job record (and the pool exit files) -> a verdict;
 *   - fsm.c:       the pure update (sluice_fsm_apply);
 *   - fsm_json.c:  the event codec (events <-> JSON) and replay.
 *
 * Notes:
 *   - Everything here is pure: no I/O, no clock, no global mutable state.
 *   - Returned strings are static and never freed.
 */
#ifndef SLUICE_SUPERVISE_FSM_INT_H
#define SLUICE_SUPERVISE_FSM_INT_H

#include <stdbool.h>
#include <stddef.h>

#include <sluice/fsm.h>
#include <sluice/jobdesc.h>

#define FSM_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- names (fsm_table.c) ----------------------------------------------- */

/* Slurm's base state name ("UNKNOWN" outside the table). */
const char *fsm_base_name(sluice_job_base b);
/* The base state for a name; false for an unknown name or "UNKNOWN". */
bool fsm_base_from_name(const char *name, sluice_job_base *out);
/* Slurm's state flags: bit i of sluice_jobview_t.flags is fsm_flag_name(i). */
size_t fsm_flag_count(void);
const char *fsm_flag_name(size_t i);
/* The bit index of a flag name, -1 for an unknown one. */
int fsm_flag_from_name(const char *name);

/* ---- the transition table (fsm_table.c) -------------------------------- */

/* One allowed move: event `event` in state `from` may leave the launch in
 * `to` (`to` == `from`: the event is applied and the state stays).  The
 * rows mirror the table "Transition table" of docs/state-machine.md; a
 * unit test checks that both hold exactly the same rows.  DONE has no row:
 * every event there is accepted and ignored. */
typedef struct {
    sluice_fsm_state from;
    sluice_fsm_event_type event;
    sluice_fsm_state to;
} fsm_row_t;

/* The whole table (static; `*n_out` rows). */
const fsm_row_t *fsm_table_rows(size_t *n_out);
/* Whether some row allows `event` in `from`. */
bool fsm_table_allows(sluice_fsm_state from, sluice_fsm_event_type event);
/* Whether the row (from, event, to) exists. */
bool fsm_table_has(sluice_fsm_state from, sluice_fsm_event_type event, sluice_fsm_state to);

/* ---- Slurm record -> verdict (status.c) -------------------------------- */

/* How a component counts for the launch state. */
typedef enum { STATUS_PENDING, STATUS_RUNNING, STATUS_FINAL } status_class;

/* A requeue flag (REQUEUED, REQUEUE_HOLD, SPECIAL_EXIT) is set. */
bool status_requeued(const sluice_jobview_t *v);
/* Reference section 8.1: pending, running (or finishing), or final. */
status_class status_classify(const sluice_jobview_t *v);
/* "FAILED+LAUNCH_FAILED reason=NonZeroExitCode exit=3 signal=0" into dst. */
void status_describe(const sluice_jobview_t *v, char *dst, size_t cap);
/* Ranking of results: INFRASTRUCTURE_ERROR > 101..103 > EXECUTION_ERROR >
 * ABORTED > SUCCEEDED. */
int status_verdict_rank(int result);
/* An infrastructure flag or base state, or FAILED by slurmctld before it
 * started: no exit file changes that verdict. */
bool status_hard_infra(const sluice_jobview_t *v);
/* CANCELLED although the launch has no cancel intent. */
bool status_unasked_cancel(const sluice_fsm_launch_t *l, const sluice_jobview_t *v);
/* The result of one final component; `why` receives its explanation. */
int status_component_verdict(const sluice_fsm_launch_t *l,
                             const sluice_jobview_t *v,
                             char *why,
                             size_t cap);

/* A pool ended by SIGTERM or SIGKILL (stopped, not failed on its own). */
bool status_stopped_pool(const sluice_fsm_pool_exit_t *p);
/* The pool that failed first (borrowed from `l`, NULL for none);
 * *n_failed_out counts every failing pool. */
const sluice_fsm_pool_exit_t *
status_failed_pool(const sluice_fsm_launch_t *l, bool skip_stopped, size_t *n_failed_out);
/* A failed pool's own result: its workload code, else EXECUTION_ERROR. */
int status_pool_verdict(const sluice_fsm_pool_exit_t *p);
/* The result of a settling launch once its pool exit files are read (the
 * stored verdict, or the failed pool's after an unasked CANCELLED); `why`
 * receives the reason, which names the pool.  Give `why` room beyond
 * SLUICE_FSM_REASON_MAX: the caller cuts it. */
#define STATUS_WHY_MAX (2 * SLUICE_FSM_REASON_MAX + 128)
int status_exits_verdict(const sluice_fsm_launch_t *l, char *why, size_t cap);

#endif /* SLUICE_SUPERVISE_FSM_INT_H */
