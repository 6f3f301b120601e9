/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_intake.c - accepting launches from any thread while the
 * launcher's own thread runs its cycle, and waking that thread.
 *
 * Purpose:
 *   A service accepts launches on its HTTP threads while its launcher
 *   thread is busy with a cycle (staging, POSTs in flight, commits).  If
 *   an accept had to wait for the cycle, accepts and submits would take
 *   turns and neither would overlap the other.  So an accept here touches
 *   only the store (its own durable transaction) and a small queue, the
 *   intake; the launcher's thread drains the intake at the start and at
 *   the end of every cycle and tracks what it finds.
 *
 * Notes:
 *   - Lock order: intake mutex, then the store's own mutex (taken inside
 *     every store call).  Nothing takes the intake mutex while holding the
 *     store's.
 *   - The store write and the push onto the intake happen under one hold of
 *     the intake mutex.  The launcher's pick-up of other writers' events
 *     runs without it, but before it loads a launch it does not know from
 *     its `accepted` event, it takes the mutex and drains the intake: an
 *     accept whose store write it saw has pushed by then.  So the launcher
 *     never tracks an accepted launch from the store while the launch's
 *     secret values, which travel only through the intake (memory), are
 *     still on their way.
 *   - Group commit: concurrent accepts share one durable store transaction
 *     (sluice_store_create_many).  An accepting thread queues its launch;
 *     the first one that finds no group being written writes every launch
 *     queued by then (at most GROUP_MAX) and wakes the others; each caller
 *     returns only after the commit of the group that holds its launch, so
 *     an accept that returned is on disk (synchronous = FULL), as before.
 *     Lock order: the group mutex is never held while the intake or the
 *     store mutex is taken.
 *   - Secret values in an intake entry are owned copies, zeroed when freed
 *     or handed to the launch.
 *   - With an injected clock (tests), sluice_launcher_idle() sleeps through
 *     that clock and never blocks on the condition variable.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/launcher.h>

#include "base/timing.h"
#include "base/wipe.h"
#include "launcher_intake.h"

typedef struct launcher_intake_entry launcher_intake_entry_t;
typedef struct launcher_accept_waiter launcher_accept_waiter_t;

/* The intake: what accepting threads and the launcher's thread share. */
struct launcher_intake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    launcher_intake_entry_t *head; /* accepted launches not yet tracked (under mu) */
    launcher_intake_entry_t *tail;
    bool wake;           /* a step is wanted now (under mu) */
    atomic_size_t n_new; /* new launches on the intake */
    /* group commit: accepts waiting for a store write, and whether one
     * accepting thread is writing a group (under gmu) */
    pthread_mutex_t gmu;
    pthread_cond_t gcv;
    launcher_accept_waiter_t *gq_head, *gq_tail;
    bool g_writing;
    int made; /* how many of mu, cv, gmu, gcv are made (in that order) */
};

struct launcher_intake_entry {
    struct launcher_intake_entry *next;
    char *id;
    char *site;
    char *dep_id; /* NULL: no dependency */
    char *dep_cond;
    bool needs_secrets;
    int64_t pending_timeout;
    bool requeue;
    int64_t created_ms;
    uint64_t committed_ns;     /* monotonic: when its store write committed */
    launcher_render_t *render; /* NULL: past LAUNCHER_RENDERS_KEPT */
    bool existed;
    char **secret_names;
    char **secret_values;
    size_t n_secrets;
};

static void entry_free(sluice_launcher_t *l, launcher_intake_entry_t *e)
{
    if (e == NULL)
        return;
    if (e->render != NULL)
        atomic_fetch_sub(&l->renders, 1);
    for (size_t i = 0; i < e->n_secrets; i++) {
        if (e->secret_values != NULL && e->secret_values[i] != NULL)
            wipe_str(e->secret_values[i]);
        if (e->secret_values != NULL)
            free(e->secret_values[i]);
        if (e->secret_names != NULL)
            free(e->secret_names[i]);
    }
    free(e->secret_values);
    free(e->secret_names);
    launcher_render_free(e->render);
    free(e->id);
    free(e->site);
    free(e->dep_id);
    free(e->dep_cond);
    free(e);
}

sluice_err launcher_intake_create(launcher_intake_t **out, sluice_error_t *err)
{
    launcher_intake_t *in = NULL;
    pthread_condattr_t ca;
    bool have_ca = false;
    sluice_err rc = SLUICE_OK;

    *out = NULL;
    if ((in = calloc(1, sizeof(*in))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    if (pthread_mutex_init(&in->mu, NULL) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launcher: cannot create the intake mutex");
        goto out;
    }
    in->made++;
    if (pthread_condattr_init(&ca) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launcher: cannot create the intake condition");
        goto out;
    }
    have_ca = true;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_cond_init(&in->cv, &ca) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launcher: cannot create the intake condition");
        goto out;
    }
    in->made++;
    if (pthread_mutex_init(&in->gmu, NULL) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launcher: cannot create the accept group mutex");
        goto out;
    }
    in->made++;
    if (pthread_cond_init(&in->gcv, NULL) != 0) {
        rc =
            sluice_errorf(err, SLUICE_ENOMEM, "launcher: cannot create the accept group condition");
        goto out;
    }
    in->made++;
    *out = in;
    in = NULL;
out:
    if (have_ca)
        pthread_condattr_destroy(&ca);
    launcher_intake_destroy(NULL, in);
    return rc;
}

void launcher_intake_destroy(sluice_launcher_t *l, launcher_intake_t *in)
{
    launcher_intake_entry_t *e, *next;

    if (in == NULL)
        return;
    for (e = in->head; e != NULL; e = next) {
        next = e->next;
        entry_free(l, e);
    }
    if (in->made > 3)
        pthread_cond_destroy(&in->gcv);
    if (in->made > 2)
        pthread_mutex_destroy(&in->gmu);
    if (in->made > 1)
        pthread_cond_destroy(&in->cv);
    if (in->made > 0)
        pthread_mutex_destroy(&in->mu);
    free(in);
}

size_t launcher_intake_new_count(const sluice_launcher_t *l)
{
    return atomic_load(&l->intake->n_new);
}

void launcher_intake_discard(sluice_launcher_t *l)
{
    launcher_intake_entry_t *e, *next;

    pthread_mutex_lock(&l->intake->mu);
    e = l->intake->head;
    l->intake->head = l->intake->tail = NULL;
    atomic_store(&l->intake->n_new, 0);
    l->intake->wake = false;
    pthread_mutex_unlock(&l->intake->mu);
    for (; e != NULL; e = next) {
        next = e->next;
        entry_free(l, e);
    }
}

void launcher_intake_lock(sluice_launcher_t *l)
{
    pthread_mutex_lock(&l->intake->mu);
}

void launcher_intake_unlock(sluice_launcher_t *l)
{
    pthread_mutex_unlock(&l->intake->mu);
}

/* ---- accept ------------------------------------------------------------ */

/* The job descriptions of a render given as JSON, decoded once (the JSON
 * form of sluice_launcher_request_t): complete, job 0 with the script
 * (from the render's `script` when the job leaves it out). */
static sluice_err
decode_jobs(const json_t *render, sluice_jobdesc_t **out, size_t *n_out, sluice_error_t *err)
{
    const json_t *jobs = json_object_get(render, "jobs");
    const char *script = json_string_value(json_object_get(render, "script"));
    sluice_jobdesc_t *d;
    size_t i, n = json_array_size(jobs);
    sluice_err rc = SLUICE_OK;

    if (!json_is_object(render) || !json_is_array(jobs) || n == 0 || n > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "render: expected {script, jobs: [1..%d]}",
                             SLUICE_FSM_MAX_JOBS);
    if ((d = calloc(n, sizeof(*d))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n; i++)
        if ((rc = sluice_jobdesc_from_json(json_array_get(jobs, i), &d[i], err)) != SLUICE_OK) {
            sluice_error_prefix(err, "render.jobs[%zu]", i);
            break;
        }
    if (rc == SLUICE_OK && d[0].script == NULL && script != NULL &&
        (d[0].script = strdup(script)) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    if (rc != SLUICE_OK) {
        for (size_t k = 0; k < n; k++)
            sluice_jobdesc_clear(&d[k]);
        free(d);
        return rc;
    }
    *out = d;
    *n_out = n;
    return SLUICE_OK;
}

/* Copies of a typed render's job descriptions. */
static sluice_err
copy_jobs(const sluice_render_t *r, sluice_jobdesc_t **out, size_t *n_out, sluice_error_t *err)
{
    sluice_jobdesc_t *d;
    sluice_err rc = SLUICE_OK;

    if (r->n_jobs == 0 || r->n_jobs > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "render: expected 1..%d jobs",
                             SLUICE_FSM_MAX_JOBS);
    if ((d = calloc(r->n_jobs, sizeof(*d))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n_jobs && rc == SLUICE_OK; i++)
        rc = sluice_jobdesc_copy(&d[i], &r->jobs[i], err);
    if (rc == SLUICE_OK && d[0].script == NULL && r->script != NULL &&
        (d[0].script = strdup(r->script)) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    if (rc != SLUICE_OK) {
        for (size_t k = 0; k < r->n_jobs; k++)
            sluice_jobdesc_clear(&d[k]);
        free(d);
        return rc;
    }
    *out = d;
    *n_out = r->n_jobs;
    return SLUICE_OK;
}

/* The render as it is stored and handed to the launcher: the first job's
 * script is left out when it is the render's own `script` (the batch
 * script, ~6 KB), which the job descriptions get back from there
 * (launcher_stage.c), so it is not written, copied or read twice.  New
 * object; its members are shared with `render` (a typed accept's render is
 * never changed after it is made) unless `own` asks for a deep copy (a
 * JSON caller's render stays the caller's).  NULL when out of memory. */
static json_t *render_for_store(const json_t *render, bool own)
{
    const json_t *jobs;
    json_t *job0, *out = NULL, *jobs2 = NULL, *job2 = NULL;

    if (own)
        render = out = json_deep_copy(render);
    if (render == NULL)
        return NULL;
    jobs = json_object_get(render, "jobs");
    job0 = json_array_get(jobs, 0);
    if (!json_equal(json_object_get(job0, "script"), json_object_get(render, "script")))
        return own ? out : json_copy((json_t *)(uintptr_t)render);
    if (own) {
        if (json_object_del(job0, "script") != 0) {
            json_decref(out);
            return NULL;
        }
        return out;
    }
    if ((out = json_copy((json_t *)(uintptr_t)render)) == NULL ||
        (jobs2 = json_copy((json_t *)(uintptr_t)jobs)) == NULL ||
        (job2 = json_copy(job0)) == NULL || json_object_del(job2, "script") != 0 ||
        json_array_set(jobs2, 0, job2) != 0 || json_object_set(out, "jobs", jobs2) != 0) {
        json_decref(out);
        out = NULL;
    }
    json_decref(jobs2);
    json_decref(job2);
    return out;
}

/* The intake entry for an accepted launch, built before the store write so
 * that nothing can fail between the write and the push.  `render` is the
 * stored form (a reference is taken), `jobs` its descriptions (taken over;
 * NULL for a typed request: copied from req->rendered here). */
static sluice_err entry_new(sluice_launcher_t *l,
                            const sluice_launcher_request_t *req,
                            const launcher_terms_t *t,
                            json_t *render,
                            sluice_jobdesc_t **jobs,
                            size_t n_jobs,
                            launcher_intake_entry_t **out,
                            sluice_error_t *err)
{
    launcher_intake_entry_t *e = calloc(1, sizeof(*e));
    sluice_err rc;

    *out = NULL;
    if (e == NULL || (e->id = strdup(t->id)) == NULL ||
        (e->site = strdup(t->site ? t->site : l->site)) == NULL ||
        (t->dep_id != NULL &&
         ((e->dep_id = strdup(t->dep_id)) == NULL ||
          (e->dep_cond = strdup(t->dep_cond ? t->dep_cond : "after")) == NULL)))
        goto nomem;
    e->needs_secrets = t->needs_secrets;
    e->pending_timeout = t->pending_timeout;
    e->requeue = t->requeue;
    /* The render rides along for the first submit only while few are held
     * (LAUNCHER_RENDERS_KEPT): a burst of accepts past that reads it from
     * the store at its submit, so the memory per live launch stays small. */
    if (atomic_fetch_add(&l->renders, 1) < LAUNCHER_RENDERS_KEPT) {
        if ((e->render = calloc(1, sizeof(*e->render))) == NULL) {
            atomic_fetch_sub(&l->renders, 1);
            goto nomem;
        }
        e->render->json = json_incref(render);
        if (*jobs != NULL) {
            e->render->jobs = *jobs;
            e->render->n_jobs = n_jobs;
            *jobs = NULL;
        } else if ((rc = copy_jobs(req->rendered, &e->render->jobs, &e->render->n_jobs, err)) !=
                   SLUICE_OK) {
            entry_free(l, e);
            return rc;
        }
    } else {
        atomic_fetch_sub(&l->renders, 1);
    }
    if (req->n_secrets > 0) {
        e->secret_names = calloc(req->n_secrets, sizeof(char *));
        e->secret_values = calloc(req->n_secrets, sizeof(char *));
        if (e->secret_names == NULL || e->secret_values == NULL)
            goto nomem;
        for (size_t i = 0; i < req->n_secrets; i++) {
            e->n_secrets++;
            e->secret_names[i] = strdup(req->secrets[i].name);
            e->secret_values[i] = strdup(req->secrets[i].value);
            if (e->secret_names[i] == NULL || e->secret_values[i] == NULL)
                goto nomem;
        }
    }
    *out = e;
    return SLUICE_OK;
nomem:
    entry_free(l, e);
    return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
}

/* One accepting thread waiting for the store write of its launch (on that
 * thread's stack).  Group commit: the first waiter that finds no group
 * being written writes every waiter queued by then, in one transaction;
 * each thread returns only once the group holding its launch committed. */
struct launcher_accept_waiter {
    struct launcher_accept_waiter *next;
    sluice_store_launch_spec_t spec;
    launcher_intake_entry_t *e; /* pushed onto the intake on success */
    uint64_t queued_ns;
    sluice_store_create_result_t res;
    bool done;
};

#define GROUP_MAX 64

/* Write one group (called without gmu): one store transaction, then the
 * intake pushes, under one hold of the intake mutex (see the notes on
 * top: the launcher never sees a stored accept before its entry). */
static void write_group(sluice_launcher_t *l, launcher_accept_waiter_t **g, size_t n)
{
    sluice_store_launch_spec_t specs[GROUP_MAX];
    sluice_store_create_result_t res[GROUP_MAX];
    sluice_error_t gerr = SLUICE_ERROR_INIT;
    uint64_t t1, t2;
    bool pushed = false;

    for (size_t i = 0; i < n; i++)
        specs[i] = g[i]->spec;
    pthread_mutex_lock(&l->intake->mu);
    t1 = timing_now_ns();
    (void)sluice_store_create_many(l->store, specs, n, res, &gerr);
    t2 = timing_now_ns();
    atomic_fetch_add(&l->counters.accept_commits, 1);
    atomic_fetch_add(&l->counters.accepts, n);
    for (size_t i = 0; i < n; i++) {
        launcher_accept_waiter_t *w = g[i];
        launcher_intake_entry_t *e = w->e;

        w->res = res[i];
        timing_add(SLUICE_TIMING_ACCEPT_WAIT, 1, t1 > w->queued_ns ? t1 - w->queued_ns : 0);
        if (res[i].rc != SLUICE_OK || (res[i].existed && e->n_secrets == 0))
            continue;
        /* A known launch goes on the intake only to hand over secret values
         * (kept when it is still ACCEPTED and has none in memory). */
        e->existed = res[i].existed != 0;
        e->committed_ns = t2;
        if (l->intake->tail != NULL)
            l->intake->tail->next = e;
        else
            l->intake->head = e;
        l->intake->tail = e;
        if (!res[i].existed)
            atomic_fetch_add(&l->intake->n_new, 1);
        w->e = NULL;
        pushed = true;
    }
    if (pushed) {
        l->intake->wake = true;
        pthread_cond_broadcast(&l->intake->cv);
    }
    pthread_mutex_unlock(&l->intake->mu);
    timing_add(SLUICE_TIMING_ACCEPT_COMMIT, n, t2 - t1);
}

/* Queue `w` and return once its group is written (by this thread or by
 * another). */
static void group_commit(sluice_launcher_t *l, launcher_accept_waiter_t *w)
{
    pthread_mutex_lock(&l->intake->gmu);
    if (l->intake->gq_tail != NULL)
        l->intake->gq_tail->next = w;
    else
        l->intake->gq_head = w;
    l->intake->gq_tail = w;
    while (!w->done) {
        launcher_accept_waiter_t *g[GROUP_MAX];
        size_t n = 0;

        if (l->intake->g_writing) {
            pthread_cond_wait(&l->intake->gcv, &l->intake->gmu);
            continue;
        }
        /* This thread writes the next group: every waiter queued so far. */
        l->intake->g_writing = true;
        while (l->intake->gq_head != NULL && n < GROUP_MAX) {
            g[n++] = l->intake->gq_head;
            l->intake->gq_head = l->intake->gq_head->next;
        }
        if (l->intake->gq_head == NULL)
            l->intake->gq_tail = NULL;
        pthread_mutex_unlock(&l->intake->gmu);
        write_group(l, g, n);
        pthread_mutex_lock(&l->intake->gmu);
        for (size_t i = 0; i < n; i++)
            g[i]->done = true;
        l->intake->g_writing = false;
        pthread_cond_broadcast(&l->intake->gcv);
    }
    pthread_mutex_unlock(&l->intake->gmu);
}

/* The store's row of a request: its terms, its canonical text (typed
 * form only) and the render as stored; the time is the caller's to set. */
static void spec_of(const launcher_terms_t *t,
                    const sluice_launcher_request_t *req,
                    bool typed,
                    const json_t *render,
                    sluice_store_launch_spec_t *spec)
{
    memset(spec, 0, sizeof(*spec));
    spec->launch_id = t->id;
    spec->site = t->site;
    spec->study = t->study;
    spec->cluster = t->cluster;
    spec->request = req->request;
    spec->request_text = typed ? req->request_text : NULL;
    spec->render = render;
    spec->caller = req->caller;
}

sluice_err sluice_launcher_accept(sluice_launcher_t *l,
                                  const sluice_launcher_request_t *req,
                                  char **launch_id_out,
                                  int *existed_out,
                                  sluice_error_t *err)
{
    launcher_accept_waiter_t w;
    launcher_terms_t t;
    char *id_copy = NULL;
    json_t *render = NULL; /* render_for_store() */
    sluice_jobdesc_t *jobs = NULL;
    size_t n_jobs = 0;
    bool typed;
    sluice_err rc;

    if (l == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: required");
    if (atomic_load(&l->dead))
        return sluice_errorf(err, SLUICE_ESTATE, "launcher: stopped at a kill point");
    if (req == NULL || !json_is_object(req->request))
        return sluice_errorf(err, SLUICE_EINVAL, "request: expected an object");
    typed = req->launch != NULL && req->rendered != NULL && req->request_text != NULL;
    if (typed)
        launcher_terms_of_launch(req->launch,
                                 json_string_value(json_object_get(req->request, "cluster")), &t);
    else
        launcher_terms_of_request(req->request, &t);
    if (t.id == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "request.launch_id: required");
    /* The JSON form is decoded here, once: a render whose descriptions do
     * not decode is refused before anything is stored. */
    if (!typed && (rc = decode_jobs(req->render, &jobs, &n_jobs, err)) != SLUICE_OK)
        return rc;
    memset(&w, 0, sizeof(w));
    if (typed && !json_is_object(req->render)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "render: expected an object");
        goto out;
    }
    if ((render = render_for_store(req->render, !typed)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    spec_of(&t, req, typed, render, &w.spec);
    if (t.site == NULL)
        w.spec.site = l->site;
    if (!launcher_cluster_ours(l, w.spec.cluster)) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "cluster: a launch of cluster \"%s\" sent to the launcher of \"%s\"",
                           w.spec.cluster ? w.spec.cluster : "(the first)", l->cluster);
        goto out;
    }
    if (launcher_actor_index(l, t.id) == l->n_actors) {
        /* Its identity is unknown here: it could never be submitted. */
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "launch_id: the tenant of \"%s\" is not one this launcher acts for",
                           t.id);
        goto out;
    }
    w.spec.time_ms = l->o.now_ms(l->o.clock_arg);
    if ((id_copy = strdup(t.id)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = entry_new(l, req, &t, render, &jobs, n_jobs, &w.e, err)) != SLUICE_OK)
        goto out;
    w.e->created_ms = w.spec.time_ms;
    w.queued_ns = timing_now_ns();
    group_commit(l, &w);
    if ((rc = w.res.rc) != SLUICE_OK) {
        if (err != NULL)
            *err = w.res.err;
        goto out;
    }
    if (existed_out != NULL)
        *existed_out = w.res.existed;
    if (req->created != NULL && !w.res.existed) {
        /* Best effort: without it the caller reads the launch back. */
        sluice_error_t cerr = SLUICE_ERROR_INIT;
        memset(req->created, 0, sizeof(*req->created));
        if (sluice_store_created_launch(&w.spec, &w.res, &req->created->launch,
                                        &req->created->events, &req->created->version,
                                        &cerr) != SLUICE_OK)
            memset(req->created, 0, sizeof(*req->created));
    }
    if (launch_id_out != NULL) {
        *launch_id_out = id_copy;
        id_copy = NULL;
    }
out:
    entry_free(l, w.e);
    for (size_t i = 0; jobs != NULL && i < n_jobs; i++)
        sluice_jobdesc_clear(&jobs[i]);
    free(jobs);
    free(id_copy);
    json_decref(render);
    return rc;
}

sluice_err sluice_launcher_hand_over(sluice_store_t *store,
                                     const sluice_launcher_request_t *req,
                                     int *existed_out,
                                     sluice_error_t *err)
{
    sluice_store_launch_spec_t spec;
    launcher_terms_t t;
    json_t *render = NULL;
    sluice_err rc;

    if (store == NULL || req == NULL || !json_is_object(req->request) ||
        !json_is_object(req->render) || req->launch == NULL || req->rendered == NULL ||
        req->request_text == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "hand over: a store and a parsed, rendered request are required");
    if (req->n_secrets > 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "secrets: the launch uses %zu secret value%s, which would live only "
                             "in this process: it cannot be handed to a supervisor elsewhere",
                             req->n_secrets, req->n_secrets == 1 ? "" : "s");
    launcher_terms_of_launch(req->launch,
                             json_string_value(json_object_get(req->request, "cluster")), &t);
    if (t.id == NULL || t.site == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "request.launch_id and site: required");
    if ((render = render_for_store(req->render, false)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    spec_of(&t, req, true, render, &spec);
    rc = sluice_store_create_launch(store, &spec, existed_out, err);
    json_decref(render);
    return rc;
}

/* ---- the launcher's side ------------------------------------------------ */

/* Hand an entry's secret values to the launch (ownership moves). */
static void give_secrets(launch_t *L, launcher_intake_entry_t *e)
{
    if (L->has_secrets || e->n_secrets == 0 || L->fsm.state != SLUICE_FSM_ACCEPTED)
        return;
    L->secret_names = e->secret_names;
    L->secret_values = e->secret_values;
    L->n_secrets = e->n_secrets;
    e->secret_names = NULL;
    e->secret_values = NULL;
    e->n_secrets = 0;
    L->has_secrets = true;
    L->needs_secrets = true;
}

sluice_err launcher_intake_drain(sluice_launcher_t *l, bool clear_wake, sluice_error_t *err)
{
    launcher_intake_entry_t *e = l->intake->head;
    sluice_err rc = SLUICE_OK;

    l->intake->head = l->intake->tail = NULL;
    if (clear_wake)
        l->intake->wake = false;
    atomic_store(&l->intake->n_new, 0);
    while (e != NULL) {
        launcher_intake_entry_t *next = e->next;
        launch_t *L = launcher_find_launch(l, e->id);

        launcher_terms_t terms = {e->id,
                                  e->site,
                                  NULL,
                                  NULL,
                                  e->dep_id,
                                  e->dep_cond,
                                  e->needs_secrets,
                                  e->pending_timeout,
                                  e->requeue};

        if (L == NULL && !e->existed &&
            (rc = launcher_track(l, &terms, e->created_ms, &L, err)) != SLUICE_OK) {
            /* Put this entry and the rest back (secrets and all) for the
             * next step; the caller skips the pick-up, so nothing loads
             * these launches from the store without their secrets. */
            launcher_intake_entry_t *t = e;
            size_t fresh = 0;
            for (; t->next != NULL; t = t->next)
                fresh += !t->existed;
            fresh += !t->existed;
            t->next = l->intake->head;
            if (l->intake->head == NULL)
                l->intake->tail = t;
            l->intake->head = e;
            atomic_fetch_add(&l->intake->n_new, fresh);
            l->intake->wake = true;
            return rc;
        }
        if (L != NULL)
            give_secrets(L, e);
        if (L != NULL && !e->existed && e->committed_ns != 0) {
            L->intake.handed_ns = timing_now_ns();
            timing_add(SLUICE_TIMING_INTAKE_DELAY, 1,
                       L->intake.handed_ns > e->committed_ns ? L->intake.handed_ns - e->committed_ns
                                                             : 0);
        }
        /* Only a new launch's render: a repeated accept's render may differ
         * from the stored one (the request hash does not cover it). */
        if (L != NULL && !e->existed && L->intake.render == NULL &&
            L->fsm.state == SLUICE_FSM_ACCEPTED && L->fsm.attempt == 0) {
            L->intake.render = e->render; /* for staging and the job descriptions */
            e->render = NULL;
        }
        if (!e->existed)
            l->activity = true;
        entry_free(l, e);
        e = next;
    }
    return rc;
}

sluice_err launcher_intake_take(sluice_launcher_t *l, sluice_error_t *err)
{
    sluice_err rc;

    pthread_mutex_lock(&l->intake->mu);
    rc = launcher_intake_drain(l, false, err);
    pthread_mutex_unlock(&l->intake->mu);
    return rc;
}

void launcher_intake_queued(launch_t *L, uint64_t now_ns)
{
    if (L->intake.handed_ns == 0) /* not its first submit */
        return;
    timing_add(SLUICE_TIMING_QUEUE, 1,
               now_ns > L->intake.handed_ns ? now_ns - L->intake.handed_ns : 0);
    L->intake.handed_ns = 0;
}

void sluice_launcher_wake(sluice_launcher_t *l)
{
    if (l == NULL || l->intake == NULL)
        return;
    pthread_mutex_lock(&l->intake->mu);
    l->intake->wake = true;
    pthread_cond_broadcast(&l->intake->cv);
    pthread_mutex_unlock(&l->intake->mu);
}

bool sluice_launcher_idle(sluice_launcher_t *l, int64_t max_ms)
{
    struct timespec until;
    bool woke;

    if (l == NULL || l->intake == NULL)
        return false;
    if (!launcher_real_clock(l)) {
        pthread_mutex_lock(&l->intake->mu);
        woke = l->intake->wake;
        pthread_mutex_unlock(&l->intake->mu);
        if (!woke && max_ms > 0)
            l->o.sleep_ms(l->o.clock_arg, max_ms);
        return woke;
    }
    clock_gettime(CLOCK_MONOTONIC, &until);
    if (max_ms > 0) {
        until.tv_sec += (time_t)(max_ms / 1000);
        until.tv_nsec += (long)(max_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&l->intake->mu);
    while (!l->intake->wake && max_ms > 0) {
        if (pthread_cond_timedwait(&l->intake->cv, &l->intake->mu, &until) == ETIMEDOUT)
            break;
    }
    woke = l->intake->wake;
    pthread_mutex_unlock(&l->intake->mu);
    return woke;
}
