/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_views.c - what the launcher reads out of Slurm's job records
 * before it records them: the pending reasons that never clear, the FAILED
 * records Slurm ended for such a reason, and the base state a v0.0.38 read
 * hides behind a flag.
 *
 * Notes:
 *   - Pure functions of the records and the launcher's options: no store,
 *     no REST.  launcher_record.c, launcher_poll.c and launcher.c use them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sluice/launcher.h>

#include "launcher_int.h"
/* ---- pending reasons that never clear ------------------------------------ */

/* Slurm's job_state_reason_string() names (the same in v0.0.38 and in the
 * v0.0.40+ data_parser, which prints the same table).  Each means the job
 * asks for something the cluster's configuration or accounting does not
 * allow; Slurm keeps it pending until an administrator changes that
 * configuration (PartitionConfig and PartitionNodeLimit clear after a
 * partition update or reconfigure, BadConstraints after node features
 * change, the account and QOS reasons after an association change), which
 * a waiting launch cannot count on.  ReqNodeNotAvail counts only when no
 * unavailable node is listed (docs/state-machine.md). */
const char *const launcher_default_unschedulable[] = {
    "BadConstraints", "PartitionConfig", "PartitionNodeLimit",
    "InvalidAccount", "InvalidQOS",      "AccountNotAllowed",
    "QOSNotAllowed",  "ReqNodeNotAvail", NULL,
};

/* "ReqNodeNotAvail, UnavailableNodes:" with nothing after the colon: Slurm
 * waits for nodes it cannot name.  "UnavailableNodes:n[1-2]" (those nodes
 * may come back) and "May be reserved for other job" may clear. */
static bool no_node_listed(const char *text)
{
    const char *p = text != NULL ? strstr(text, "UnavailableNodes:") : NULL;

    if (p == NULL)
        return false;
    for (p += strlen("UnavailableNodes:"); *p != '\0'; p++) {
        if (*p != ' ' && *p != ')' && *p != '\n')
            return false;
    }
    return true;
}

/* Whether the record's reason is one of the site's never-clearing list;
 * `out` gets the name the launch's reason shows. */
static bool
reason_never_clears(const sluice_launcher_t *l, const sluice_jobview_t *v, char *out, size_t cap)
{
    const char *r = v->state_reason;
    size_t len;

    if (r == NULL)
        return false;
    /* Some tools hand over "Reason, detail"; Slurm's field is the name. */
    len = strcspn(r, ",");
    for (size_t k = 0; k < l->n_unsched; k++) {
        if (strlen(l->unsched[k]) != len || strncasecmp(l->unsched[k], r, len) != 0)
            continue;
        if (strcasecmp(l->unsched[k], "ReqNodeNotAvail") == 0) {
            if (!no_node_listed(v->state_description) && !no_node_listed(r))
                continue;
            snprintf(out, cap, "ReqNodeNotAvail with no node listed");
            return true;
        }
        snprintf(out, cap, "%.*s", (int)len, r);
        return true;
    }
    return false;
}

bool launcher_unschedulable(
    const sluice_launcher_t *l, const sluice_jobview_t *v, size_t n, char *out, size_t cap)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i].base == SLUICE_JOB_PENDING && reason_never_clears(l, &v[i], out, cap))
            return true;
    }
    return false;
}

/* A job that never started: no node was ever allocated ("" in slurmctld's
 * record, "None assigned" in accounting) or no start time.  Slurm 24.11
 * fails such a job with start_time = end_time = the time it gave up, so
 * the start time alone does not tell. */
static bool never_started(const sluice_jobview_t *v)
{
    return v->start_time == 0 || v->nodes == NULL || v->nodes[0] == '\0' ||
           strcmp(v->nodes, "None assigned") == 0;
}

void launcher_mark_failed_unschedulable(const sluice_launcher_t *l, sluice_jobview_t *v, size_t n)
{
    char why[SLUICE_FSM_NAME_MAX];

    for (size_t i = 0; i < n; i++) {
        v[i].failed_unschedulable = v[i].base == SLUICE_JOB_FAILED && never_started(&v[i]) &&
                                    reason_never_clears(l, &v[i], why, sizeof(why));
    }
}

/* ---- bases a batched read hides ------------------------------------------ */

/* v0.0.38 reports some flags in place of the base state: a job that timed
 * out reads "COMPLETING" until its epilog ends.  Give such a view the base
 * last seen for the same job, else the base its flag implies (a requeue or
 * hold flag: PENDING; a flag of an allocated job: RUNNING), so the state
 * machine keeps it live.  False when nothing tells (an unknown state name):
 * the caller then counts the lookup as UNAVAILABLE, which never ends a
 * launch. */
bool launcher_fill_hidden_bases(const sluice_jobview_t *prev,
                                size_t n_prev,
                                sluice_jobview_t *v,
                                size_t n)
{
    const uint32_t waiting = SLUICE_JOB_FLAG(REQUEUED) | SLUICE_JOB_FLAG(REQUEUE_HOLD) |
                             SLUICE_JOB_FLAG(REQUEUE_FED) | SLUICE_JOB_FLAG(RESV_DEL_HOLD) |
                             SLUICE_JOB_FLAG(SPECIAL_EXIT);
    const uint32_t allocated = SLUICE_JOB_FLAG(COMPLETING) | SLUICE_JOB_FLAG(STAGE_OUT) |
                               SLUICE_JOB_FLAG(CONFIGURING) | SLUICE_JOB_FLAG(SIGNALING) |
                               SLUICE_JOB_FLAG(RESIZING) | SLUICE_JOB_FLAG(STOPPED) |
                               SLUICE_JOB_FLAG(POWER_UP_NODE);
    bool all = true;

    for (size_t i = 0; i < n; i++) {
        if (v[i].base != SLUICE_JOB_BASE_UNKNOWN)
            continue;
        for (size_t k = 0; k < n_prev; k++) {
            if (prev[k].job_id == v[i].job_id && prev[k].base != SLUICE_JOB_BASE_UNKNOWN) {
                v[i].base = prev[k].base;
                break;
            }
        }
        if (v[i].base == SLUICE_JOB_BASE_UNKNOWN && (v[i].flags & waiting))
            v[i].base = SLUICE_JOB_PENDING;
        else if (v[i].base == SLUICE_JOB_BASE_UNKNOWN && (v[i].flags & allocated))
            v[i].base = SLUICE_JOB_RUNNING;
        if (v[i].base == SLUICE_JOB_BASE_UNKNOWN)
            all = false;
    }
    return all;
}
