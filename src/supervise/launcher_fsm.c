/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_fsm.c - a launch's state machine as the launcher keeps it
 * (launch_fsm_t in launcher_int.h): compact while the launch is live.
 *
 * Purpose:
 *   sluice_fsm_launch_t is plain data of about 3,000 bytes, most of it
 *   fixed text arrays (reason, marker, caller, pools, dependency) that stay
 *   empty while a launch is live.  At 10,000 live launches that was most
 *   of the launcher's memory (issue 16: <= 2 KiB per live launch).  Here
 *   the scalars live in place, the reason and the marker as heap strings,
 *   and the rest only once some of it is set (`cold`, a whole copy).
 *
 * Notes:
 *   - launcher_fsm_get() and launcher_fsm_set() are exact inverses: every
 *     field of sluice_fsm_launch_t goes through them (a launch's state
 *     after get(set(x)) equals x, sluice_fsm_launch_equal).
 *   - When `cold` is set it holds the whole state and is what get()
 *     returns; the fields in place are kept equal to it for direct reads.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>

#include "launcher_int.h"

static char empty_text[1] = "";

static void text_free(char *p)
{
    if (p != empty_text)
        free(p);
}

/* A copy of `s` for the struct ("" shares the one empty string). */
static char *text_dup(const char *s)
{
    return s[0] == '\0' ? empty_text : strdup(s);
}

/* True when every field kept only in `cold` is empty. */
static bool cold_empty(const sluice_fsm_launch_t *f)
{
    return f->caller[0] == '\0' && f->unschedulable[0] == '\0' && f->n_pools == 0 &&
           f->verdict_reason[0] == '\0' && f->dependency[0] == '\0';
}

void launcher_fsm_get(const launch_t *L, sluice_fsm_launch_t *out)
{
    const launch_fsm_t *h = &L->fsm;

    if (h->cold != NULL) {
        *out = *h->cold;
        return;
    }
    memset(out, 0, sizeof(*out));
    out->cfg = h->cfg;
    out->state = h->state;
    out->result = h->result;
    out->last_time = h->last_time;
    out->last_seq = h->last_seq;
    out->n_applied = h->n_applied;
    out->n_ignored = h->n_ignored;
    out->attempt = h->attempt;
    if (h->reason != NULL)
        snprintf(out->reason, sizeof(out->reason), "%s", h->reason);
    if (h->job_name != NULL)
        snprintf(out->job_name, sizeof(out->job_name), "%s", h->job_name);
    if (h->comment != NULL)
        snprintf(out->comment, sizeof(out->comment), "%s", h->comment);
    out->post_time = h->post_time;
    memcpy(out->job_ids, h->job_ids, sizeof(out->job_ids));
    out->n_job_ids = h->n_job_ids;
    out->intent = h->intent;
    out->cancel_sent = h->cancel_sent;
    out->cancel_sent_time = h->cancel_sent_time;
    out->left_queue = h->left_queue;
    out->misses = h->misses;
    out->has_miss = h->has_miss;
    out->last_miss_time = h->last_miss_time;
    out->has_pending = h->has_pending;
    out->first_pending = h->first_pending;
    out->prev_pending = h->prev_pending;
    out->last_pending = h->last_pending;
    out->pending_observed = h->pending_observed;
    out->n_components = h->n_components;
    out->n_pools = h->n_pools;
    out->settling = h->settling;
    out->settle_time = h->settle_time;
    out->verdict = h->verdict;
    out->unasked_cancel = h->unasked_cancel;
    out->verdict_rest = h->verdict_rest;
    out->slurm_exit_code = h->slurm_exit_code;
}

sluice_err launcher_fsm_set(launch_t *L, const sluice_fsm_launch_t *in, sluice_error_t *err)
{
    launch_fsm_t *h = &L->fsm;
    char *name = NULL, *comment = NULL, *reason = NULL;
    sluice_fsm_launch_t *cold = NULL;

    if (h->job_name == NULL || strcmp(h->job_name, in->job_name) != 0)
        if ((name = text_dup(in->job_name)) == NULL)
            goto nomem;
    if (h->comment == NULL || strcmp(h->comment, in->comment) != 0)
        if ((comment = text_dup(in->comment)) == NULL)
            goto nomem;
    if (h->reason == NULL || strcmp(h->reason, in->reason) != 0)
        if ((reason = text_dup(in->reason)) == NULL)
            goto nomem;
    if (!cold_empty(in)) {
        if ((cold = h->cold) == NULL && (cold = malloc(sizeof(*cold))) == NULL)
            goto nomem;
        *cold = *in;
    } else {
        free(h->cold);
    }
    h->cold = cold;
    if (name != NULL) {
        text_free(h->job_name);
        h->job_name = name;
    }
    if (comment != NULL) {
        text_free(h->comment);
        h->comment = comment;
    }
    if (reason != NULL) {
        text_free(h->reason);
        h->reason = reason;
    }
    h->cfg = in->cfg;
    h->state = in->state;
    h->result = in->result;
    h->last_time = in->last_time;
    h->last_seq = in->last_seq;
    h->n_applied = in->n_applied;
    h->n_ignored = in->n_ignored;
    h->attempt = in->attempt;
    h->post_time = in->post_time;
    memcpy(h->job_ids, in->job_ids, sizeof(h->job_ids));
    h->n_job_ids = in->n_job_ids;
    h->intent = in->intent;
    h->cancel_sent = in->cancel_sent;
    h->cancel_sent_time = in->cancel_sent_time;
    h->left_queue = in->left_queue;
    h->misses = in->misses;
    h->has_miss = in->has_miss;
    h->last_miss_time = in->last_miss_time;
    h->has_pending = in->has_pending;
    h->first_pending = in->first_pending;
    h->prev_pending = in->prev_pending;
    h->last_pending = in->last_pending;
    h->pending_observed = in->pending_observed;
    h->n_components = in->n_components;
    h->n_pools = in->n_pools;
    h->settling = in->settling;
    h->settle_time = in->settle_time;
    h->verdict = in->verdict;
    h->unasked_cancel = in->unasked_cancel;
    h->verdict_rest = in->verdict_rest;
    h->slurm_exit_code = in->slurm_exit_code;
    return SLUICE_OK;
nomem:
    text_free(name);
    text_free(comment);
    text_free(reason);
    return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", L->id);
}

unsigned launcher_fsm_due(const launch_t *L, double now)
{
    sluice_fsm_launch_t f;

    launcher_fsm_get(L, &f);
    return sluice_fsm_due(&f, now);
}

const char *launcher_fsm_reason(const launch_t *L)
{
    return L->fsm.reason != NULL ? L->fsm.reason : "";
}

void launcher_fsm_free(launch_t *L)
{
    text_free(L->fsm.job_name);
    text_free(L->fsm.comment);
    text_free(L->fsm.reason);
    free(L->fsm.cold);
    L->fsm.job_name = L->fsm.comment = L->fsm.reason = NULL;
    L->fsm.cold = NULL;
}
