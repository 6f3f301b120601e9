/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_rest.c - the launcher's cluster operations over the slurmrestd
 * client.
 *
 * Notes:
 * - A submit is never retried here (the client never retries a POST); its
 *   outcome is classified for the launcher's exactly-once rules.
 * - Job views handed to the launcher are malloc'd arrays it releases with
 *   sluice_jobview_clear() + free(); this file moves them out of the
 *   client's result structs without copying.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/log.h>
#include <sluice/ops.h>

static sluice_lookup lookup_of(const sluice_call_t *call)
{
    switch (call->outcome) {
    case SLUICE_OUTCOME_OK:
        return SLUICE_LOOKUP_FOUND;
    case SLUICE_OUTCOME_NOT_FOUND:
        return SLUICE_LOOKUP_NOT_FOUND;
    default:
        return SLUICE_LOOKUP_UNAVAILABLE;
    }
}

/* Move the job views out of `jobs` into *views_out / *n_out. */
static void take_views(sluice_rest_jobs_t *jobs, sluice_jobview_t **views_out, size_t *n_out)
{
    *views_out = jobs->jobs;
    *n_out = jobs->n_jobs;
    jobs->jobs = NULL;
    jobs->n_jobs = 0;
}

static sluice_submit_outcome
op_submit(void *arg, const sluice_jobdesc_t *descs, size_t n, sluice_submit_result_t *out)
{
    sluice_client_t *c = arg;
    sluice_rest_submit_t sub;
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_submit_outcome o;

    memset(&sub, 0, sizeof(sub));
    memset(&call, 0, sizeof(call));
    memset(out, 0, sizeof(*out));
    sluice_client_submit(c, descs, n, &sub, &call, &err);
    switch (call.outcome) {
    case SLUICE_OUTCOME_OK:
        if (sub.job_id != 0) {
            out->job_id = sub.job_id;
            o = SLUICE_SUBMIT_OK;
        } else {
            /* A 200 without a job id proves nothing either way. */
            snprintf(out->detail, sizeof(out->detail), "submit answer carried no job id");
            o = SLUICE_SUBMIT_UNCERTAIN;
        }
        break;
    case SLUICE_OUTCOME_REJECTED:
        out->error_number = (int)call.slurm_errno;
        snprintf(out->detail, sizeof(out->detail), "%s",
                 call.slurm_error[0] ? call.slurm_error : err.text);
        o = SLUICE_SUBMIT_REJECTED;
        break;
    case SLUICE_OUTCOME_UNCERTAIN:
    case SLUICE_OUTCOME_PROTOCOL:
    case SLUICE_OUTCOME_TOO_LARGE:
        snprintf(out->detail, sizeof(out->detail), "%s", err.text);
        o = SLUICE_SUBMIT_UNCERTAIN;
        break;
    default:
        /* AUTH / UNAVAILABLE: the client reports these for a POST only when
         * it certainly did not leave this host. */
        snprintf(out->detail, sizeof(out->detail), "%s", err.text);
        o = SLUICE_SUBMIT_UNAVAILABLE;
        break;
    }
    sluice_rest_submit_clear(&sub);
    return o;
}

/* The signature shared by sluice_client_get_job() and _acct_job(). */
typedef sluice_err (*by_id_fn)(sluice_client_t *c,
                               uint64_t job_id,
                               sluice_rest_jobs_t *out,
                               sluice_call_t *call,
                               sluice_error_t *err);

/* Read one job (every hetjob component) from the live view or accounting. */
static sluice_lookup
read_by_id(void *arg, by_id_fn read, uint64_t job_id, sluice_jobview_t **views_out, size_t *n_out)
{
    sluice_rest_jobs_t jobs;
    sluice_call_t call;
    sluice_lookup r;

    memset(&jobs, 0, sizeof(jobs));
    memset(&call, 0, sizeof(call));
    *views_out = NULL;
    *n_out = 0;
    read(arg, job_id, &jobs, &call, NULL);
    r = lookup_of(&call);
    if (r == SLUICE_LOOKUP_FOUND && jobs.n_jobs == 0)
        r = SLUICE_LOOKUP_NOT_FOUND;
    if (r == SLUICE_LOOKUP_FOUND)
        take_views(&jobs, views_out, n_out);
    sluice_rest_jobs_clear(&jobs);
    return r;
}

static sluice_lookup
op_get_job(void *arg, uint64_t job_id, sluice_jobview_t **views_out, size_t *n_out)
{
    return read_by_id(arg, sluice_client_get_job, job_id, views_out, n_out);
}

static sluice_lookup
op_job_states(void *arg, const uint64_t *ids, size_t n, sluice_job_state_t *states)
{
    sluice_rest_job_states_t st;
    sluice_call_t call;
    sluice_lookup r;
    size_t i, k;

    memset(&st, 0, sizeof(st));
    memset(&call, 0, sizeof(call));
    for (i = 0; i < n; i++)
        memset(&states[i], 0, sizeof(states[i]));
    if (n == 0)
        return SLUICE_LOOKUP_FOUND;
    sluice_client_job_states(arg, ids, n, &st, &call, NULL);
    r = lookup_of(&call);
    if (r != SLUICE_LOOKUP_FOUND)
        goto out;
    /* The state of a hetjob is read on its leader (component 0, whose id
     * is the leader's); other components are read by get_job when the
     * leader's state changes. */
    for (i = 0; i < n; i++) {
        for (k = 0; k < st.n_states; k++) {
            if (st.states[k].job_id == ids[i] &&
                (!st.states[k].has_het_offset || st.states[k].het_offset == 0)) {
                states[i].present = true;
                states[i].base = st.states[k].base;
                states[i].flags = st.states[k].flags;
                break;
            }
        }
    }
out:
    sluice_rest_job_states_clear(&st);
    return r;
}

static bool owned_by(const sluice_jobview_t *v, const char *name, const char *user)
{
    return v->name && strcmp(v->name, name) == 0 &&
           (user == NULL || (v->user_name && strcmp(v->user_name, user) == 0));
}

/* Keep only the views that match; returns how many remain at the front. */
static size_t filter_views(sluice_jobview_t *v, size_t n, const char *name, const char *user)
{
    size_t i, kept = 0;

    for (i = 0; i < n; i++) {
        if (owned_by(&v[i], name, user)) {
            if (kept != i) {
                v[kept] = v[i];
                memset(&v[i], 0, sizeof(v[i]));
            }
            kept++;
        } else {
            sluice_jobview_clear(&v[i]);
        }
    }
    return kept;
}

static sluice_lookup op_find_live_by_name(
    void *arg, const char *name, const char *user, sluice_jobview_t **views_out, size_t *n_out)
{
    sluice_rest_jobs_t jobs;
    sluice_call_t call;
    sluice_lookup r;

    memset(&jobs, 0, sizeof(jobs));
    memset(&call, 0, sizeof(call));
    *views_out = NULL;
    *n_out = 0;
    sluice_client_jobs_since(arg, -1, &jobs, &call, NULL);
    r = lookup_of(&call);
    if (r == SLUICE_LOOKUP_FOUND) {
        jobs.n_jobs = filter_views(jobs.jobs, jobs.n_jobs, name, user);
        if (jobs.n_jobs == 0)
            r = SLUICE_LOOKUP_NOT_FOUND;
        else
            take_views(&jobs, views_out, n_out);
    }
    sluice_rest_jobs_clear(&jobs);
    return r;
}

static sluice_lookup op_find_acct_by_name(void *arg,
                                          const char *name,
                                          const char *user,
                                          int64_t window_start,
                                          int64_t window_end,
                                          sluice_jobview_t **views_out,
                                          size_t *n_out)
{
    sluice_rest_jobs_t jobs;
    sluice_call_t call;
    sluice_lookup r;

    memset(&jobs, 0, sizeof(jobs));
    memset(&call, 0, sizeof(call));
    *views_out = NULL;
    *n_out = 0;
    sluice_client_acct_find(arg, name, user, window_start, window_end, &jobs, &call, NULL);
    r = lookup_of(&call);
    if (r == SLUICE_LOOKUP_FOUND) {
        jobs.n_jobs = filter_views(jobs.jobs, jobs.n_jobs, name, user);
        if (jobs.n_jobs == 0)
            r = SLUICE_LOOKUP_NOT_FOUND;
        else
            take_views(&jobs, views_out, n_out);
    }
    sluice_rest_jobs_clear(&jobs);
    return r;
}

static sluice_lookup
op_acct_job(void *arg, uint64_t job_id, sluice_jobview_t **views_out, size_t *n_out)
{
    return read_by_id(arg, sluice_client_acct_job, job_id, views_out, n_out);
}

static sluice_err op_cancel(void *arg, uint64_t job_id, int signal, sluice_error_t *err)
{
    sluice_call_t call;
    char sig[16];

    memset(&call, 0, sizeof(call));
    if (signal > 0)
        snprintf(sig, sizeof(sig), "%d", signal);
    return sluice_client_cancel(arg, job_id, signal > 0 ? sig : NULL, &call, err);
}

void sluice_cluster_ops_rest(sluice_client_t *client, sluice_cluster_ops_t *out)
{
    memset(out, 0, sizeof(*out));
    out->submit = op_submit;
    out->get_job = op_get_job;
    out->job_states = op_job_states;
    out->find_live_by_name = op_find_live_by_name;
    out->find_acct_by_name = op_find_acct_by_name;
    out->acct_job = op_acct_job;
    out->cancel = op_cancel;
    out->arg = client;
}
