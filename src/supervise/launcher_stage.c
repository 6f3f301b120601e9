/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_stage.c - the first step of the launcher's batched submit
 * (launcher_submit.c): a chunk's staging directories and secret files (up
 * to submit_in_flight staging threads, then one staging `sync`), and the
 * job descriptions each launch's POST sends, built from its render.
 *
 * Notes:
 *   - A launch whose staging or descriptions fail is dropped from its chunk
 *     (logged, retried next cycle), never in the way of the others.
 *   - Nothing here writes the store or talks to the cluster.
 *   - Also the recovery's report of staging directories that belong to no
 *     live launch (launcher_report_orphans).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#include "base/marker.h"
#include "base/timing.h"
#include "launcher_intake.h"
#include "launcher_submit.h"

#define SLUICE_LAUNCH_SECRETS_MAX 256

/* The job descriptions of L's POST at `attempt`: the kept render's (made
 * once at the accept), else decoded from the stored render (after a
 * restart, or past LAUNCHER_RENDERS_KEPT), each with the attempt's marker
 * and the dependency filled in. */
static sluice_err load_descs(sluice_launcher_t *l,
                             launch_t *L,
                             uint32_t attempt,
                             const char *dependency,
                             sluice_jobdesc_t **out,
                             size_t *n_out,
                             sluice_error_t *err)
{
    json_t *row = NULL;
    const json_t *render = NULL;
    const json_t *jobs = NULL;
    const json_t *script;
    sluice_jobdesc_t *d = NULL;
    size_t n = 0, total;
    char name[SLUICE_FSM_MARKER_MAX];
    char comment[SLUICE_FSM_MARKER_MAX];
    sluice_err rc = SLUICE_OK;

    if (L->intake.render != NULL) {
        total = L->intake.render->n_jobs;
    } else {
        if ((rc = sluice_store_get_launch(l->store, L->id, &row, err)) != SLUICE_OK)
            return rc;
        render = json_object_get(row, "render");
        jobs = json_object_get(render, "jobs");
        total = json_array_size(jobs);
        if (!json_is_array(jobs) || total == 0) {
            rc = sluice_errorf(err, SLUICE_ESTORE, "launch %s: stored render has no jobs", L->id);
            goto out;
        }
    }
    if ((d = calloc(total, sizeof(*d))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    marker_job_name(name, sizeof(name), l->prefix, L->site, L->id, attempt);
    marker_comment(comment, sizeof(comment), L->id, attempt);
    for (n = 0; n < total; n++) {
        if (L->intake.render != NULL)
            rc = sluice_jobdesc_copy(&d[n], &L->intake.render->jobs[n], err);
        else
            rc = sluice_jobdesc_from_json(json_array_get(jobs, n), &d[n], err);
        if (rc != SLUICE_OK)
            goto out;
        free(d[n].name);
        free(d[n].comment);
        d[n].name = strdup(name);
        d[n].comment = strdup(comment);
        if (dependency != NULL) {
            free(d[n].dependency);
            d[n].dependency = strdup(dependency);
        }
        if (d[n].name == NULL || d[n].comment == NULL ||
            (dependency != NULL && d[n].dependency == NULL)) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            n++;
            goto out;
        }
    }
    script = json_object_get(render, "script");
    if (d[0].script == NULL && json_is_string(script) &&
        (d[0].script = strdup(json_string_value(script))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    *out = d;
    *n_out = n;
    d = NULL;
    n = 0;
out:
    for (size_t i = 0; d != NULL && i <= n && i < total; i++)
        sluice_jobdesc_clear(&d[i]);
    free(d);
    json_decref(row);
    return rc;
}

void launcher_batch_entry_clear(batch_entry_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        sluice_jobdesc_clear(&b->d[i]);
    free(b->d);
    b->d = NULL;
    b->n = 0;
}

/* The staging of one batch entry: its directory and 0600 secret file. */
static void stage_one(sluice_launcher_t *l, batch_entry_t *b)
{
    launch_t *L = b->L;
    sluice_secret_t sec[SLUICE_LAUNCH_SECRETS_MAX];
    size_t ns = L->n_secrets < SLUICE_LAUNCH_SECRETS_MAX ? L->n_secrets : SLUICE_LAUNCH_SECRETS_MAX;

    if (b->resend) { /* staged before the POST that never left; untouched since */
        b->staged = true;
        return;
    }
    for (size_t i = 0; i < ns; i++) {
        sec[i].name = L->secret_names[i];
        sec[i].value = L->secret_values[i];
    }
    b->staged = l->st.prepare(l->st.arg, L->id, b->attempt,
                              L->intake.render ? L->intake.render->json : NULL, sec, ns,
                              &b->perr) == SLUICE_OK;
}

typedef struct {
    sluice_launcher_t *l;
    batch_entry_t *b;
    size_t n;
    size_t next;
    pthread_mutex_t mu;
} stage_work_t;

static void *stage_worker(void *arg)
{
    stage_work_t *w = arg;

    for (;;) {
        size_t i;
        pthread_mutex_lock(&w->mu);
        i = w->next++;
        pthread_mutex_unlock(&w->mu);
        if (i >= w->n)
            return NULL;
        stage_one(w->l, &w->b[i]);
    }
}

/* Staging of every selected launch, up to submit_in_flight of them at
 * once (each writes its own files; the chunk's one `sync` makes them
 * durable).  Launches whose staging failed are dropped from the
 * batch (logged; retried next cycle, their submit token is lost). */
static size_t stage_batch(sluice_launcher_t *l, batch_entry_t *b, size_t n)
{
    stage_work_t w;
    pthread_t th[MAX_IN_FLIGHT];
    size_t k = l->submit->in_flight < n ? l->submit->in_flight : n;
    size_t started = 0, kept = 0;

    if (l->st.prepare == NULL) {
        for (size_t i = 0; i < n; i++)
            b[i].staged = true;
        return n;
    }
    /* (a resend needs no staging: stage_one passes it through) */
    memset(&w, 0, sizeof(w));
    w.l = l;
    w.b = b;
    w.n = n;
    pthread_mutex_init(&w.mu, NULL);
    for (size_t t = 1; t < k; t++)
        if (pthread_create(&th[started], NULL, stage_worker, &w) == 0)
            started++;
    stage_worker(&w);
    for (size_t t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&w.mu);
    for (size_t i = 0; i < n; i++) {
        if (!b[i].staged) {
            sluice_log(SLUICE_LOG_WARNING, "launch %s: staging attempt %" PRIu32 ": %s", b[i].L->id,
                       b[i].attempt, b[i].perr.text);
            launcher_batch_entry_clear(&b[i]);
            continue;
        }
        if (kept != i)
            b[kept] = b[i];
        kept++;
    }
    return kept;
}

/* Stage a chunk and build its job descriptions; entries whose staging
 * failed are dropped (stage_batch).  Returns the entries kept. */
sluice_err
launcher_chunk_prepare(sluice_launcher_t *l, batch_entry_t *b, size_t *n, sluice_error_t *err)
{
    uint64_t t0 = timing_now_ns();
    sluice_err rc = SLUICE_OK;

    for (size_t i = 0; i < *n; i++)
        launcher_intake_queued(b[i].L, t0);
    *n = stage_batch(l, b, *n);
    if (*n > 0 && l->st.sync != NULL) {
        sluice_error_t serr = SLUICE_ERROR_INIT;
        if (l->st.sync(l->st.arg, &serr) != SLUICE_OK) {
            /* Not provably on disk: no POST for this chunk (retried). */
            sluice_log(SLUICE_LOG_WARNING, "staging of %zu launches not synced: %s", *n, serr.text);
            for (size_t i = 0; i < *n; i++)
                launcher_batch_entry_clear(&b[i]);
            *n = 0;
        }
    }
    /* A launch whose job descriptions cannot be built (a damaged stored
     * render, a store read error) is dropped from the chunk, as a staging
     * failure is: logged, retried next cycle, never in the way of others. */
    {
        size_t kept = 0;
        for (size_t i = 0; i < *n; i++) {
            sluice_error_t derr = SLUICE_ERROR_INIT;
            sluice_err r1 = load_descs(l, b[i].L, b[i].attempt, b[i].has_dep ? b[i].dep : NULL,
                                       &b[i].d, &b[i].n, &derr);
            if (r1 == SLUICE_ENOMEM && rc == SLUICE_OK) {
                rc = r1;
                if (err != NULL)
                    *err = derr;
            }
            if (r1 != SLUICE_OK) {
                sluice_log(SLUICE_LOG_WARNING, "launch %s: job descriptions: %s", b[i].L->id,
                           derr.text);
                launcher_batch_entry_clear(&b[i]);
                continue;
            }
            if (kept != i) {
                b[kept] = b[i];
                b[i].d = NULL; /* moved */
                b[i].n = 0;
            }
            kept++;
        }
        *n = kept;
    }
    timing_since(SLUICE_TIMING_STAGING, *n, t0);
    return rc;
}

/* ---- orphans (recovery) ------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

#define ORPHANS_NAMED 10 /* orphans named one by one; the rest are counted */

/* Staging directories that belong to no live launch: warned about (the
 * first ORPHANS_NAMED by name, then a count) and left in place.  A
 * directory is named by the launch id or its marker hash; both are looked
 * up in one sorted table, so a root with thousands of old directories
 * costs a sort and a search each, not a hash per pair. */
size_t launcher_report_orphans(sluice_launcher_t *l)
{
    char **names = NULL, **known = NULL;
    char(*hashes)[MARKER_SHA8_SIZE] = NULL;
    size_t n = 0, nk = 0, orphans = 0;
    sluice_error_t herr = SLUICE_ERROR_INIT;

    if (l->st.list_staging == NULL)
        return 0;
    if (l->st.list_staging(l->st.arg, &names, &n, &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "staging scan: %s", herr.text);
        return 0;
    }
    if (n > 0 && l->n > 0 &&
        ((known = calloc(2 * l->n, sizeof(*known))) == NULL ||
         (hashes = calloc(l->n, sizeof(*hashes))) == NULL)) {
        sluice_log(SLUICE_LOG_WARNING, "staging scan: out of memory");
        goto out;
    }
    for (size_t j = 0; n > 0 && j < l->n; j++) {
        marker_sha8(l->v[j]->id, hashes[j]);
        known[nk++] = hashes[j];
        known[nk++] = l->v[j]->id;
    }
    if (nk > 0)
        qsort(known, nk, sizeof(*known), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (nk > 0 && bsearch(&names[i], known, nk, sizeof(*known), cmp_str) != NULL)
            continue;
        if (++orphans <= ORPHANS_NAMED)
            sluice_log(SLUICE_LOG_WARNING,
                       "staging directory %s belongs to no live launch: left in place", names[i]);
    }
    if (orphans > ORPHANS_NAMED)
        sluice_log(SLUICE_LOG_WARNING,
                   "staging: %zu directories in all belong to no live launch (the first %d "
                   "named above): left in place",
                   orphans, ORPHANS_NAMED);
out:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(known);
    free(hashes);
    return orphans;
}
