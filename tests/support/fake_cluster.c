/* SPDX-License-Identifier: Apache-2.0 */
/* fake_cluster.c - the in-memory cluster of the launcher tests. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cluster.h"

static const fake_stage_t default_script[] = {
    {SLUICE_JOB_PENDING, 0, 0, 0, 1},
    {SLUICE_JOB_RUNNING, 0, 0, 0, 1},
    {SLUICE_JOB_COMPLETED, 0, 0, 0, 2},
};

void fake_cluster_init(fake_cluster_t *fc, const int64_t *clock_ms, const char *user)
{
    memset(fc, 0, sizeof(*fc));
    fc->next_id = 1000;
    fc->clock_ms = clock_ms;
    fc->user = user;
    fake_cluster_set_script(fc, default_script, 3);
}

void fake_cluster_set_script(fake_cluster_t *fc, const fake_stage_t *stages, size_t n)
{
    memcpy(fc->script, stages, n * sizeof(*stages));
    fc->n_script = n;
}

void fake_cluster_push_mode(fake_cluster_t *fc, fake_submit_mode mode)
{
    if (fc->n_modes < 16)
        fc->modes[fc->n_modes++] = mode;
}

fake_job_t *fake_cluster_job(fake_cluster_t *fc, uint64_t id)
{
    for (size_t i = 0; i < fc->n_jobs; i++)
        if (fc->jobs[i].id == id)
            return &fc->jobs[i];
    return NULL;
}

size_t fake_cluster_count_named(const fake_cluster_t *fc, const char *prefix)
{
    size_t k = 0;

    for (size_t i = 0; i < fc->n_jobs; i++)
        if (strncmp(fc->jobs[i].name, prefix, strlen(prefix)) == 0)
            k++;
    return k;
}

uint64_t fake_cluster_add_job(
    fake_cluster_t *fc, const char *name, const char *comment, const char *user, size_t n_comp)
{
    fake_job_t *j;

    if (fc->n_jobs == FAKE_MAX_JOBS)
        return 0;
    j = &fc->jobs[fc->n_jobs++];
    memset(j, 0, sizeof(*j));
    j->id = fc->next_id;
    fc->next_id += 10;
    snprintf(j->name, sizeof(j->name), "%s", name);
    snprintf(j->comment, sizeof(j->comment), "%s", comment);
    snprintf(j->user, sizeof(j->user), "%s", user);
    j->n_comp = n_comp > 0 ? n_comp : 1;
    memcpy(j->stages, fc->script, fc->n_script * sizeof(fc->script[0]));
    j->n_stages = fc->n_script;
    j->in_queue = !fc->live_hidden;
    j->in_acct = true;
    j->acct_hidden = fc->acct_hidden;
    j->submit_s = fc->clock_ms != NULL ? *fc->clock_ms / 1000 : 0;
    j->pending_reason = fc->pending_reason;
    j->pending_desc = fc->pending_desc;
    j->unstarted_reason = fc->unstarted_reason;
    j->acct_comment_empty = fc->acct_comment_empty;
    j->other_cluster = fc->other_cluster;
    return j->id;
}

static const fake_stage_t *stage(const fake_job_t *j)
{
    return &j->stages[j->pos];
}

static void views_of(const fake_job_t *j, bool acct, sluice_jobview_t **out, size_t *n_out)
{
    bool fc_comment_empty = j->acct_comment_empty;
    sluice_jobview_t *v = calloc(j->n_comp, sizeof(*v));
    const fake_stage_t *s = stage(j);

    for (size_t k = 0; v != NULL && k < j->n_comp; k++) {
        v[k].job_id = j->id + k;
        v[k].het_job_id = j->n_comp > 1 ? j->id : 0;
        v[k].het_job_offset = (uint32_t)k;
        v[k].name = strdup(acct && j->acct_name[0] ? j->acct_name : j->name);
        v[k].comment = !acct ? strdup(j->comment) : fc_comment_empty ? strdup("") : NULL;
        v[k].other_cluster = j->other_cluster;
        v[k].user_name = strdup(acct && j->acct_user[0] ? j->acct_user : j->user);
        v[k].partition = strdup("debug");
        v[k].nodes = s->base == SLUICE_JOB_PENDING ? NULL
                     : j->unstarted_reason != NULL ? strdup("")
                                                   : strdup("node[1-2]");
        bool pending = s->base == SLUICE_JOB_PENDING;

        v[k].state_reason = strdup(!pending ? (j->unstarted_reason ? j->unstarted_reason : "None")
                                   : j->pending_reason ? j->pending_reason
                                                       : "Priority");
        v[k].state_description =
            pending && j->pending_desc != NULL ? strdup(j->pending_desc) : NULL;
        v[k].base = (s->flags & FAKE_NO_BASE) ? SLUICE_JOB_BASE_UNKNOWN : s->base;
        v[k].flags = s->flags & ~FAKE_NO_BASE;
        v[k].has_exit = sluice_job_is_final(s->base, 0);
        v[k].exit_code = s->exit_code;
        v[k].exit_signal = s->signal;
        v[k].submit_time = j->submit_s;
        if (!pending && j->unstarted_reason != NULL)
            v[k].start_time = v[k].end_time = j->submit_s + 1;
    }
    *out = v;
    *n_out = v != NULL ? j->n_comp : 0;
}

static sluice_submit_outcome
f_submit(void *arg, const sluice_jobdesc_t *d, size_t n, sluice_submit_result_t *out)
{
    fake_cluster_t *fc = arg;
    fake_submit_mode mode = FAKE_SUBMIT_OK;
    uint64_t id;

    fc->n_submit++;
    if (fc->n_modes > 0) {
        mode = fc->modes[0];
        memmove(&fc->modes[0], &fc->modes[1], (fc->n_modes - 1) * sizeof(fc->modes[0]));
        fc->n_modes--;
    }
    if (mode == FAKE_SUBMIT_REJECT) {
        out->error_number = 2051;
        snprintf(out->detail, sizeof(out->detail), "Invalid account or account/partition");
        return SLUICE_SUBMIT_REJECTED;
    }
    if (mode == FAKE_SUBMIT_NOT_SENT) {
        snprintf(out->detail, sizeof(out->detail), "connect: connection refused (not sent)");
        return SLUICE_SUBMIT_UNAVAILABLE;
    }
    if (mode == FAKE_SUBMIT_DROP) {
        snprintf(out->detail, sizeof(out->detail), "connection dropped");
        return SLUICE_SUBMIT_UNCERTAIN;
    }
    id = fake_cluster_add_job(fc, d[0].name, d[0].comment, fc->user, n);
    if (d[0].dependency != NULL)
        snprintf(fake_cluster_job(fc, id)->dependency, 64, "%s", d[0].dependency);
    snprintf(fake_cluster_job(fc, id)->script, 64, "%s", d[0].script ? d[0].script : "");
    for (size_t k = 1; k < n; k++)
        fake_cluster_job(fc, id)->later_scripts |= d[k].script != NULL;
    if (mode == FAKE_SUBMIT_LOST) {
        snprintf(out->detail, sizeof(out->detail), "timeout waiting for the answer");
        return SLUICE_SUBMIT_UNCERTAIN;
    }
    if (mode == FAKE_SUBMIT_OTHER_CLUSTER) {
        fake_cluster_job(fc, id)->other_cluster = true;
        snprintf(out->cluster, sizeof(out->cluster), "elsewhere");
    }
    out->job_id = id;
    return SLUICE_SUBMIT_OK;
}

typedef struct {
    fake_cluster_t *fc;
    const sluice_submit_req_t *reqs;
    size_t n;
    size_t next;
    unsigned active;
    sluice_submit_outcome *oc;
    sluice_submit_result_t *res;
    pthread_mutex_t mu;
} fake_batch_t;

static void *f_worker(void *arg)
{
    fake_batch_t *b = arg;

    for (;;) {
        size_t i;
        struct timespec ts = {0, 2000000};
        pthread_mutex_lock(&b->mu);
        if (b->next >= b->n) {
            pthread_mutex_unlock(&b->mu);
            return NULL;
        }
        i = b->next++;
        b->active++;
        if (b->active > b->fc->max_active)
            b->fc->max_active = b->active;
        b->oc[i] = f_submit(b->fc, b->reqs[i].descs, b->reqs[i].n, &b->res[i]);
        pthread_mutex_unlock(&b->mu);
        nanosleep(&ts, NULL); /* the request on the wire */
        pthread_mutex_lock(&b->mu);
        b->active--;
        pthread_mutex_unlock(&b->mu);
    }
}

static void f_submit_many(void *arg,
                          const sluice_submit_req_t *reqs,
                          size_t n,
                          unsigned in_flight,
                          sluice_submit_outcome *oc,
                          sluice_submit_result_t *res)
{
    fake_cluster_t *fc = arg;
    fake_batch_t b;
    pthread_t th[16];
    size_t k = in_flight < 1 ? 1 : in_flight > 16 ? 16 : in_flight;

    fc->n_submit_many++;
    fc->last_in_flight = in_flight;
    if (n > fc->max_batch)
        fc->max_batch = (unsigned)n;
    if (k > n)
        k = n;
    memset(&b, 0, sizeof(b));
    b.fc = fc;
    b.reqs = reqs;
    b.n = n;
    b.oc = oc;
    b.res = res;
    pthread_mutex_init(&b.mu, NULL);
    for (size_t t = 0; t < k; t++)
        if (pthread_create(&th[t], NULL, f_worker, &b) != 0)
            abort();
    for (size_t t = 0; t < k; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&b.mu);
}

static void advance(fake_job_t *j)
{
    const fake_stage_t *s;

    if (!j->in_queue)
        return;
    j->polls++;
    s = stage(j);
    if (j->polls < s->polls)
        return;
    if (j->pos + 1 < j->n_stages) {
        j->pos++;
        j->polls = 0;
        if (stage(j)->base == SLUICE_JOB_BASE_UNKNOWN && stage(j)->flags == 0) {
            j->in_queue = false;
            j->in_acct = false;
        }
        return;
    }
    if (sluice_job_is_final(s->base, 0))
        j->in_queue = false;
}

static sluice_lookup f_job_states(void *arg, const uint64_t *ids, size_t n, sluice_job_state_t *st)
{
    fake_cluster_t *fc = arg;

    fc->n_states++;
    fc->last_states_n = n;
    if (fc->live_down)
        return SLUICE_LOOKUP_UNAVAILABLE;
    for (size_t i = 0; i < fc->n_jobs; i++)
        advance(&fc->jobs[i]);
    for (size_t i = 0; i < n; i++) {
        fake_job_t *j = fake_cluster_job(fc, ids[i]);
        memset(&st[i], 0, sizeof(st[i]));
        if (j != NULL && j->in_queue) {
            st[i].present = true;
            st[i].base =
                (stage(j)->flags & FAKE_NO_BASE) ? SLUICE_JOB_BASE_UNKNOWN : stage(j)->base;
            st[i].flags = stage(j)->flags & ~FAKE_NO_BASE;
        }
    }
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup f_get_job(void *arg, uint64_t id, sluice_jobview_t **v, size_t *n)
{
    fake_cluster_t *fc = arg;
    fake_job_t *j = fake_cluster_job(fc, id);

    fc->n_get++;
    if (fc->live_down)
        return SLUICE_LOOKUP_UNAVAILABLE;
    if (j == NULL || !j->in_queue)
        return SLUICE_LOOKUP_NOT_FOUND;
    views_of(j, false, v, n);
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup f_acct_job(void *arg, uint64_t id, sluice_jobview_t **v, size_t *n)
{
    fake_cluster_t *fc = arg;
    fake_job_t *j = fake_cluster_job(fc, id);

    fc->n_acct++;
    if (fc->acct_down)
        return SLUICE_LOOKUP_UNAVAILABLE;
    if (j != NULL)
        advance(j); /* a job still queued, read only here (its live record is not ours) */
    if (j == NULL || !j->in_acct || j->acct_hidden)
        return SLUICE_LOOKUP_NOT_FOUND;
    views_of(j, true, v, n);
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup find(fake_cluster_t *fc,
                          bool acct,
                          const char *name,
                          const char *user,
                          int64_t t0,
                          int64_t t1,
                          sluice_jobview_t **v,
                          size_t *n)
{
    sluice_jobview_t *all = NULL;
    size_t k = 0;

    for (size_t i = 0; i < fc->n_jobs; i++) {
        fake_job_t *j = &fc->jobs[i];
        sluice_jobview_t *jv = NULL;
        size_t jn = 0;
        if (strcmp(j->name, name) != 0 || strcmp(j->user, user) != 0)
            continue;
        if (acct ? (!j->in_acct || j->acct_hidden || j->submit_s < t0 || j->submit_s > t1)
                 : !j->in_queue)
            continue;
        views_of(j, acct, &jv, &jn);
        all = realloc(all, (k + jn) * sizeof(*all));
        memcpy(&all[k], jv, jn * sizeof(*jv));
        k += jn;
        free(jv);
    }
    *v = all;
    *n = k;
    return k > 0 ? SLUICE_LOOKUP_FOUND : SLUICE_LOOKUP_NOT_FOUND;
}

static sluice_lookup
f_find_live(void *arg, const char *name, const char *user, sluice_jobview_t **v, size_t *n)
{
    fake_cluster_t *fc = arg;

    fc->n_find_live++;
    if (fc->live_down)
        return SLUICE_LOOKUP_UNAVAILABLE;
    return find(fc, false, name, user, 0, 0, v, n);
}

static sluice_lookup f_find_acct(void *arg,
                                 const char *name,
                                 const char *user,
                                 int64_t t0,
                                 int64_t t1,
                                 sluice_jobview_t **v,
                                 size_t *n)
{
    fake_cluster_t *fc = arg;

    fc->n_find_acct++;
    if (fc->acct_down)
        return SLUICE_LOOKUP_UNAVAILABLE;
    return find(fc, true, name, user, t0, t1, v, n);
}

static sluice_err f_cancel(void *arg, uint64_t id, int signal, sluice_error_t *err)
{
    fake_cluster_t *fc = arg;
    fake_job_t *j = fake_cluster_job(fc, id);

    (void)signal;
    fc->n_cancel++;
    if (fc->live_down)
        return sluice_errorf(err, SLUICE_ETRANSPORT, "down");
    if (j == NULL || !j->in_queue)
        return sluice_errorf(err, SLUICE_ENOTFOUND, "no job %llu", (unsigned long long)id);
    j->cancels++;
    if (fc->cancel_noop)
        return SLUICE_OK;
    j->stages[j->pos + 1 < FAKE_MAX_STAGES ? j->pos + 1 : j->pos] =
        (fake_stage_t){SLUICE_JOB_CANCELLED, 0, 0, 15, 1};
    j->n_stages = j->pos + 2 <= FAKE_MAX_STAGES ? j->pos + 2 : j->n_stages;
    j->polls = 1 << 20;
    return SLUICE_OK;
}

static sluice_lookup f_node_address(void *arg, const char *node, char *out, size_t cap)
{
    fake_cluster_t *fc = arg;

    fc->n_node_lookups++;
    if (fc->nodes_down)
        return SLUICE_LOOKUP_UNAVAILABLE;
    if ((fc->no_addr_node != NULL && strcmp(node, fc->no_addr_node) == 0) ||
        strncmp(node, "node", 4) != 0)
        return SLUICE_LOOKUP_NOT_FOUND;
    snprintf(out, cap, "10.0.0.%s", node + 4);
    return SLUICE_LOOKUP_FOUND;
}

sluice_cluster_ops_t fake_cluster_ops(fake_cluster_t *fc)
{
    sluice_cluster_ops_t o;

    memset(&o, 0, sizeof(o));
    o.submit = f_submit;
    o.submit_many = fc->no_submit_many ? NULL : f_submit_many;
    o.get_job = f_get_job;
    o.job_states = f_job_states;
    o.find_live_by_name = f_find_live;
    o.find_acct_by_name = f_find_acct;
    o.acct_job = f_acct_job;
    o.cancel = f_cancel;
    o.node_address = f_node_address;
    o.arg = fc;
    return o;
}
