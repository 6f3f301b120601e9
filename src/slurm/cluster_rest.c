/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_rest.c - the launcher's cluster operations over the slurmrestd
 * client: one table (sluice_cluster_rest_ops), bound to one
 * sluice_cluster_rest_t.
 *
 * Notes:
 * - A submit is never retried here (the client never retries a POST); its
 *   outcome is classified for the launcher's exactly-once rules.
 * - Job views handed to the launcher are malloc'd arrays it releases with
 *   sluice_jobview_clear() + free(); this file moves them out of the
 *   client's result structs without copying.
 * - Every operation's `arg` is the sluice_cluster_rest_t; all of them but
 *   submit_many run on its borrowed client (MAIN()).
 * - submit_many runs up to 16 POSTs at once: the calling thread with the
 *   borrowed client, each worker thread with a client of its own (curl
 *   handles are never shared between threads).
 *   Worker threads live for one batch; their clients live as long as the
 *   pool, so keep-alive connections are reused from batch to batch.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/cluster.h>
#include <sluice/log.h>

#define POOL_MAX 16

struct sluice_cluster_rest {
    sluice_client_t *main;            /* borrowed */
    const sluice_config_t *cfg;       /* borrowed; NULL: no extra clients */
    sluice_client_t *extra[POOL_MAX]; /* extra[0] unused: the calling thread has main */
    bool failed[POOL_MAX];            /* creation failed once: not retried */
};

/* The client every operation but submit_many uses. */
#define MAIN(a) (((sluice_cluster_rest_t *)(a))->main)

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

/* One POST on client `c`: the calling thread's (MAIN) or a worker's. */
static sluice_submit_outcome
submit_on(sluice_client_t *c, const sluice_jobdesc_t *descs, size_t n, sluice_submit_result_t *out)
{
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
            if (sub.cluster != NULL) /* "<id>;<cluster>": the launcher refuses it */
                snprintf(out->cluster, sizeof(out->cluster), "%s", sub.cluster);
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
    case SLUICE_OUTCOME_AUTH:
    case SLUICE_OUTCOME_UNAVAILABLE:
        /* The client reports these for a POST only when it certainly did
         * not leave this host (not sent, TLS, no usable token): it may go
         * again at once. */
        snprintf(out->detail, sizeof(out->detail), "%s", err.text);
        o = SLUICE_SUBMIT_UNAVAILABLE;
        break;
    default:
        /* UNCERTAIN, PROTOCOL, TOO_LARGE and anything else: bytes may have
         * left, so only the marker can tell. */
        snprintf(out->detail, sizeof(out->detail), "%s", err.text);
        o = SLUICE_SUBMIT_UNCERTAIN;
        break;
    }
    sluice_rest_submit_clear(&sub);
    return o;
}

static sluice_submit_outcome
op_submit(void *arg, const sluice_jobdesc_t *descs, size_t n, sluice_submit_result_t *out)
{
    return submit_on(MAIN(arg), descs, n, out);
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
    read(MAIN(arg), job_id, &jobs, &call, NULL);
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
    sluice_client_job_states(MAIN(arg), ids, n, &st, &call, NULL);
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
    sluice_client_jobs_since(MAIN(arg), -1, &jobs, &call, NULL);
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
    sluice_client_acct_find(MAIN(arg), name, user, window_start, window_end, &jobs, &call, NULL);
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
    return sluice_client_cancel(MAIN(arg), job_id, signal > 0 ? sig : NULL, &call, err);
}

/* jobs/state exists from v0.0.40 on; before negotiation nothing is known. */
static bool op_states_are_cheap(void *arg)
{
    sluice_client_info_t info;

    sluice_client_info(MAIN(arg), &info);
    return info.negotiated && info.version != SLUICE_REST_V0038;
}

/* One node's NodeAddr (GET node/{name}); a record without an address, or
 * one too long for `out`, is NOT_FOUND: never a guessed address. */
static sluice_lookup op_node_address(void *arg, const char *node, char *out, size_t cap)
{
    sluice_rest_nodes_t nodes;
    sluice_call_t call;
    sluice_lookup r;
    const char *addr = NULL;

    memset(&nodes, 0, sizeof(nodes));
    memset(&call, 0, sizeof(call));
    if (cap > 0)
        out[0] = '\0';
    sluice_client_node(MAIN(arg), node, &nodes, &call, NULL);
    r = lookup_of(&call);
    for (size_t i = 0; r == SLUICE_LOOKUP_FOUND && i < nodes.n_nodes && addr == NULL; i++) {
        if (nodes.nodes[i].name != NULL && strcmp(nodes.nodes[i].name, node) == 0)
            addr = nodes.nodes[i].address;
    }
    if (r == SLUICE_LOOKUP_FOUND &&
        (addr == NULL || addr[0] == '\0' || strlen(addr) >= cap || strpbrk(addr, " \t\n") != NULL))
        r = SLUICE_LOOKUP_NOT_FOUND;
    if (r == SLUICE_LOOKUP_FOUND)
        memcpy(out, addr, strlen(addr) + 1);
    sluice_rest_nodes_clear(&nodes);
    return r;
}

/* The token's user of client `c`: fixed for the client's life
 * (sluice_auth_new()). */
static const char *client_user(sluice_client_t *c)
{
    return sluice_auth_user(sluice_client_auth(c));
}

static const char *op_user(void *arg)
{
    return client_user(MAIN(arg));
}

/* ---- concurrent submits ----------------------------------------------- */

typedef struct {
    const sluice_submit_req_t *reqs;
    size_t n;
    sluice_submit_outcome *outcomes;
    sluice_submit_result_t *results;
    pthread_mutex_t mu;
    size_t next;
} batch_t;

typedef struct {
    batch_t *b;
    sluice_client_t *client;
} worker_t;

/* Take the next request of the batch; false when none is left. */
static bool batch_take(batch_t *b, size_t *i)
{
    bool ok;

    pthread_mutex_lock(&b->mu);
    ok = b->next < b->n;
    if (ok)
        *i = b->next++;
    pthread_mutex_unlock(&b->mu);
    return ok;
}

static void *submit_worker(void *arg)
{
    worker_t *w = arg;
    size_t i;

    while (batch_take(w->b, &i))
        w->b->outcomes[i] =
            submit_on(w->client, w->b->reqs[i].descs, w->b->reqs[i].n, &w->b->results[i]);
    return NULL;
}

static void pool_submit_many(void *arg,
                             const sluice_submit_req_t *reqs,
                             size_t n,
                             unsigned in_flight,
                             sluice_submit_outcome *outcomes,
                             sluice_submit_result_t *results)
{
    sluice_cluster_rest_t *r = arg;
    batch_t b;
    worker_t w[POOL_MAX];
    pthread_t th[POOL_MAX];
    bool started[POOL_MAX];
    size_t want = in_flight < 1 ? 1 : in_flight > POOL_MAX ? POOL_MAX : in_flight;

    if (want > n)
        want = n;
    memset(&b, 0, sizeof(b));
    b.reqs = reqs;
    b.n = n;
    b.outcomes = outcomes;
    b.results = results;
    pthread_mutex_init(&b.mu, NULL);
    memset(started, 0, sizeof(started));
    for (size_t k = 1; k < want; k++) {
        if (r->extra[k] == NULL && !r->failed[k] && r->cfg != NULL) {
            sluice_error_t err = SLUICE_ERROR_INIT;
            if (sluice_client_new_from_config(&r->extra[k], r->cfg, &err) != SLUICE_OK) {
                r->failed[k] = true;
                sluice_log(SLUICE_LOG_WARNING, "submit client %zu: %s (fewer POSTs in flight)", k,
                           err.text);
            } else if (strcmp(client_user(r->extra[k]), client_user(r->main)) != 0) {
                /* A token rotated to another user since: never submit as it. */
                sluice_log(SLUICE_LOG_ERR,
                           "critical: submit client %zu: the token now names user %s, not %s; "
                           "not used (fewer POSTs in flight)",
                           k, client_user(r->extra[k]), client_user(r->main));
                sluice_client_free(r->extra[k]);
                r->extra[k] = NULL;
                r->failed[k] = true;
            }
        }
        if (r->extra[k] == NULL)
            continue;
        w[k].b = &b;
        w[k].client = r->extra[k];
        started[k] = pthread_create(&th[k], NULL, submit_worker, &w[k]) == 0;
    }
    w[0].b = &b;
    w[0].client = r->main;
    submit_worker(&w[0]);
    for (size_t k = 1; k < want; k++)
        if (started[k])
            pthread_join(th[k], NULL);
    pthread_mutex_destroy(&b.mu);
}

sluice_err sluice_cluster_rest_new(sluice_cluster_rest_t **out,
                                   sluice_client_t *client,
                                   const sluice_config_t *cfg,
                                   sluice_error_t *err)
{
    sluice_cluster_rest_t *r;

    if (out == NULL || client == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "cluster ops: out and client are required");
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "cluster ops: out of memory");
    r->main = client;
    r->cfg = cfg;
    *out = r;
    return SLUICE_OK;
}

void sluice_cluster_rest_free(sluice_cluster_rest_t *r)
{
    if (r == NULL)
        return;
    for (size_t k = 0; k < POOL_MAX; k++)
        sluice_client_free(r->extra[k]);
    free(r);
}

void sluice_cluster_rest_ops(sluice_cluster_rest_t *r, sluice_cluster_ops_t *out)
{
    memset(out, 0, sizeof(*out));
    out->states_are_cheap = op_states_are_cheap;
    out->user = op_user;
    out->submit = op_submit;
    out->submit_many = pool_submit_many;
    out->get_job = op_get_job;
    out->job_states = op_job_states;
    out->find_live_by_name = op_find_live_by_name;
    out->find_acct_by_name = op_find_acct_by_name;
    out->acct_job = op_acct_job;
    out->cancel = op_cancel;
    out->node_address = op_node_address;
    out->arg = r;
}
