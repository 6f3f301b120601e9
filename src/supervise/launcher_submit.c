/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_submit.c - the launcher's submit path: exactly once, in
 * batches (reconciliation when an answer is missing: launcher_reconcile.c).
 *
 * Purpose:
 *   Every launch due a submit this cycle is selected and goes out in
 *   chunks of four per in-flight slot: staged (up to submit_in_flight
 *   staging threads, then one staging `sync`), marked SUBMITTING in one
 *   durable commit, POSTed (submit_many when the cluster table has it, on a
 *   thread of its own while the next chunk is staged), and its answer
 *   committed with the rest of its chunk.  A launch whose POST has no proven
 *   answer goes to launcher_reconcile.c.
 *
 *   A POST that provably never left (SLUICE_SUBMIT_UNAVAILABLE: refused
 *   connect, TLS handshake failure, connect timeout, no usable token) is no
 *   uncertain submit: the launch stays SUBMITTING with the same attempt and
 *   marker, and the POST goes again with backoff (resend_due()) while its
 *   submit budget (job_launcher.submit_timeout) lasts; each resend records
 *   submit-resent first, so the absence delay runs from the last POST.  A
 *   budget spent without a POST sent ends the launch (submit-rejected).  The
 *   cycle never sleeps for a resend: the launcher's next wake-up is the
 *   earliest resend (launcher_submit_wake()).
 *
 * Notes:
 *   - A POST is never repeated blindly (see launcher.c): only one that
 *     provably was not sent is repeated.
 *   - Kill points (SLUICE_KILL_*) sit between the commits and the POSTs.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/leader.h>
#include <sluice/log.h>

#include "base/marker.h"
#include "base/timing.h"
#include "launcher_budget.h"
#include "launcher_intake.h"
#include "launcher_submit.h"

#define NOT_SENT_FIRST_MS 100 /* backoff after the first refused POST ... */
#define NOT_SENT_MAX_MS 5000  /* ... doubling up to this */

/* ---- the submit's state ------------------------------------------------ */

sluice_err
launcher_submit_create(launcher_submit_t **out, const sluice_launcher_t *l, sluice_error_t *err)
{
    launcher_submit_t *s;

    *out = NULL;
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    s->in_flight = l->o.submit_in_flight;
    s->timeout_ms = launcher_to_ms(l->o.submit_timeout_s * 1000.0);
    s->round_ms = l->o.poll_min_ms;
    *out = s;
    return SLUICE_OK;
}

void launcher_submit_destroy(launcher_submit_t *s)
{
    free(s);
}

/* ---- the batched submit ------------------------------------------------- */

/* Select a launch for this cycle's batch: *ready_out false when not this
 * cycle (dependency without a job yet, secrets lost, no submit budget).
 * The submit token is taken here; staging comes next (launcher_stage.c). */
static sluice_err batch_select(sluice_launcher_t *l,
                               launch_t *L,
                               batch_entry_t *b,
                               bool *ready_out,
                               bool *waited,
                               sluice_error_t *err)
{
    *ready_out = false;
    memset(b, 0, sizeof(*b));
    b->L = L;
    b->resend = L->submit.not_sent;
    b->attempt = L->submit.not_sent ? L->fsm.attempt : L->fsm.attempt + 1;
    switch (launcher_dependency(l, L, b->dep, sizeof(b->dep))) {
    case LAUNCHER_DEP_WAIT:
        *waited = true;
        return SLUICE_OK;
    case LAUNCHER_DEP_FAILED:
        /* A resend has no fsm way out before its answer: it goes without
         * the dependency and the rule for a launch with a job ends it. */
        if (!L->submit.not_sent)
            return launcher_record_simple(l, L, SLUICE_EV_DEPENDENCY_FAILED, b->dep, err);
        break;
    case LAUNCHER_DEP_SLURM:
        b->has_dep = true;
        break;
    case LAUNCHER_DEP_NONE:
        break;
    }
    if (L->needs_secrets && !L->has_secrets)
        return launcher_record_simple(l, L, SLUICE_EV_SECRET_UNAVAILABLE, NULL, err);
    if (!launcher_take_submit_token(l))
        return SLUICE_OK;
    *ready_out = true;
    return SLUICE_OK;
}

/* Kill point `point` once per launch of the batch. */
static bool killed_in_batch(sluice_launcher_t *l, const char *point, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (launcher_killed_at(l, point))
            return true;
    return false;
}

/* One chunk of a batch on its way through the submit: every launch
 * SUBMITTING (with its marker) in one durable commit, then the POSTs (up to
 * submit_in_flight at once), then every answer in one commit.  A launch
 * whose POST got no proven answer, or whose answer was never recorded (the
 * process died), is reconciled by its marker exactly as a single submit
 * is.  The POSTs of a chunk may run on a thread of their own while the
 * launcher stages the next chunk and records the previous one's answers. */
typedef struct {
    sluice_launcher_t *l;
    batch_entry_t *b; /* owned: the chunk's entries, moved out of the round's batch */
    size_t n;
    launch_t **who;
    sluice_fsm_event_t *evs;
    sluice_submit_req_t *reqs;
    sluice_submit_outcome *oc;
    sluice_submit_result_t *res;
    pthread_t th;
    bool threaded; /* the POSTs run on `th` */
    double t_mark, t_post0, t_post1;
} chunk_t;

static void chunk_free(chunk_t *c)
{
    for (size_t i = 0; c->evs != NULL && i < c->n; i++)
        sluice_fsm_event_clear(&c->evs[i]);
    for (size_t i = 0; c->b != NULL && i < c->n; i++)
        launcher_batch_entry_clear(&c->b[i]);
    free(c->b);
    free(c->who);
    free(c->evs);
    free(c->reqs);
    free(c->oc);
    free(c->res);
    memset(c, 0, sizeof(*c));
}

/* The markers of the chunk, durable before any of its POSTs leaves. */
static sluice_err chunk_mark(sluice_launcher_t *l, chunk_t *c, sluice_error_t *err)
{
    size_t n = c->n;
    size_t m = 0; /* events: a marker, or a resend's new POST time */
    double t0 = launcher_mono_ms();
    sluice_err rc;

    c->l = l;
    c->who = calloc(n, sizeof(*c->who));
    c->evs = calloc(n, sizeof(*c->evs));
    c->reqs = calloc(n, sizeof(*c->reqs));
    c->oc = calloc(n, sizeof(*c->oc));
    c->res = calloc(n, sizeof(*c->res));
    if (c->who == NULL || c->evs == NULL || c->reqs == NULL || c->oc == NULL || c->res == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        c->reqs[i].descs = c->b[i].d;
        c->reqs[i].n = c->b[i].n;
        if (c->b[i].resend) {
            /* Its marker (submit-started) is durable; the POST time moves. */
            c->who[m] = c->b[i].L;
            c->evs[m].type = SLUICE_EV_SUBMIT_RESENT;
            c->evs[m++].attempt = c->b[i].attempt;
            continue;
        }
        c->who[m] = c->b[i].L;
        c->evs[m].type = SLUICE_EV_SUBMIT_STARTED;
        c->evs[m].attempt = c->b[i].attempt;
        c->evs[m].job_name = strdup(c->b[i].d[0].name);
        c->evs[m].comment = strdup(c->b[i].d[0].comment);
        if (c->evs[m++].job_name == NULL || c->evs[m - 1].comment == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    }
    if (m > 0 && (rc = launcher_record_many(l, c->who, c->evs, m, err)) != SLUICE_OK)
        return rc;
    for (size_t i = 0; i < m; i++)
        sluice_fsm_event_clear(&c->evs[i]);
    c->t_mark = launcher_mono_ms() - t0;
    timing_add(SLUICE_TIMING_MARKER_COMMIT, m, (uint64_t)(c->t_mark * 1e6));
    if (killed_in_batch(l, SLUICE_KILL_BEFORE_POST, n))
        return sluice_errorf(err, SLUICE_ESTATE, "submit of %zu: killed at a kill point", n);
    return SLUICE_OK;
}

/* POST reqs[0..n) as actor A (launcher_tenant.c). */
static void post_as(const launcher_actor_t *A,
                    unsigned in_flight,
                    const sluice_submit_req_t *reqs,
                    size_t n,
                    sluice_submit_outcome *oc,
                    sluice_submit_result_t *res)
{
    if (A->cl.submit_many != NULL && n > 1) {
        A->cl.submit_many(A->cl.arg, reqs, n, in_flight, oc, res);
        return;
    }
    for (size_t i = 0; i < n; i++)
        oc[i] = A->cl.submit(A->cl.arg, reqs[i].descs, reqs[i].n, &res[i]);
}

/* The chunk's POSTs, each as its launch's tenant: one submit_many per
 * tenant of the chunk (without tenants, the one of before). */
static void post_by_tenant(chunk_t *c)
{
    sluice_launcher_t *l = c->l;
    size_t *act = calloc(c->n, sizeof(*act));
    size_t *idx = calloc(c->n, sizeof(*idx));
    sluice_submit_req_t *reqs = calloc(c->n, sizeof(*reqs));
    sluice_submit_outcome *oc = calloc(c->n, sizeof(*oc));
    sluice_submit_result_t *res = calloc(c->n, sizeof(*res));

    if (act == NULL || idx == NULL || reqs == NULL || oc == NULL || res == NULL) {
        /* No memory to group them: one POST at a time, each as its tenant. */
        for (size_t i = 0; i < c->n; i++)
            post_as(launcher_actor(l, c->b[i].L->id), 1, &c->reqs[i], 1, &c->oc[i], &c->res[i]);
        goto out;
    }
    for (size_t i = 0; i < c->n; i++)
        act[i] = launcher_actor_index(l, c->b[i].L->id);
    for (size_t a = 0; a <= l->n_actors; a++) {
        size_t m = 0;
        for (size_t i = 0; i < c->n; i++)
            if (act[i] == a) {
                idx[m] = i;
                reqs[m++] = c->reqs[i];
            }
        if (m == 0)
            continue;
        post_as(launcher_actor_at(l, a), l->submit->in_flight, reqs, m, oc, res);
        for (size_t j = 0; j < m; j++) {
            c->oc[idx[j]] = oc[j];
            c->res[idx[j]] = res[j];
        }
    }
out:
    free(act);
    free(idx);
    free(reqs);
    free(oc);
    free(res);
}

static void *chunk_post(void *arg)
{
    chunk_t *c = arg;

    c->t_post0 = launcher_mono_ms();
    post_by_tenant(c);
    c->t_post1 = launcher_mono_ms();
    timing_add(SLUICE_TIMING_POST, c->n, (uint64_t)((c->t_post1 - c->t_post0) * 1e6));
    return NULL;
}

/* Start the chunk's POSTs: on a thread when `background`, else here. */
static void chunk_post_start(chunk_t *c, bool background)
{
    c->threaded = background && pthread_create(&c->th, NULL, chunk_post, c) == 0;
    if (!c->threaded)
        chunk_post(c);
}

static void chunk_post_join(chunk_t *c)
{
    if (c->threaded)
        pthread_join(c->th, NULL);
    c->threaded = false;
}

/* The delay before the next try of a POST that was not sent: 0.1 s after
 * the first, doubling, at most NOT_SENT_MAX_MS. */
static int64_t not_sent_backoff_ms(unsigned tries)
{
    int64_t d = NOT_SENT_FIRST_MS;

    for (unsigned i = 1; i < tries && d < NOT_SENT_MAX_MS; i++)
        d *= 2;
    return d < NOT_SENT_MAX_MS ? d : NOT_SENT_MAX_MS;
}

/* The POST of L provably never left: plan the next try of the same
 * attempt, in memory (always, also when the audit note below fails).  The
 * last try falls on the end of the submit budget.  True when the budget is
 * spent: no further try. */
static bool plan_not_sent(sluice_launcher_t *l, launch_t *L, const char *detail, bool *first)
{
    int64_t now = l->o.now_ms(l->o.clock_arg);
    int64_t budget = l->submit->timeout_ms;
    int64_t end;

    *first = !L->submit.not_sent;
    if (*first) {
        L->submit.not_sent = true;
        L->submit.not_sent_since_ms = now;
        L->submit.not_sent_tries = 0;
    }
    L->submit.not_sent_tries++;
    end = L->submit.not_sent_since_ms + budget;
    if (now >= end) {
        sluice_log(SLUICE_LOG_WARNING,
                   "launch %s: attempt %" PRIu32 ": POST not sent for %.0f s (%s); "
                   "job_launcher.submit_timeout is spent",
                   L->id, L->fsm.attempt, (double)(now - L->submit.not_sent_since_ms) / 1000.0,
                   detail);
        return true;
    }
    L->submit.next_post_ms = now + not_sent_backoff_ms(L->submit.not_sent_tries);
    if (L->submit.next_post_ms > end)
        L->submit.next_post_ms = end;
    sluice_log(SLUICE_LOG_INFO,
               "launch %s: attempt %" PRIu32 ": POST not sent (%s); try %u in %" PRId64 " ms",
               L->id, L->fsm.attempt, detail, L->submit.not_sent_tries + 1,
               L->submit.next_post_ms - now);
    return false;
}

/* The audit event of the first POST of an attempt that never left. */
static sluice_err
note_not_sent(sluice_launcher_t *l, launch_t *L, const char *detail, sluice_error_t *err)
{
    return launcher_note(l, L, "submit-not-sent",
                         json_pack("{s:i, s:s}", "attempt", (int)L->fsm.attempt, "detail", detail),
                         err);
}

/* The answers of a chunk whose POSTs are done, in one commit.  A POST that
 * provably never left records nothing for the fsm (plan_not_sent), unless
 * the caller cancelled or the submit budget is spent: then submit-rejected.
 * Such a launch keeps not_sent until it is DONE, so a failed record is
 * retried; any other answer clears it (bytes may have left: never resent). */
static sluice_err chunk_answer(sluice_launcher_t *l, chunk_t *c, sluice_error_t *err)
{
    size_t n = c->n;
    size_t m = 0; /* answers for the fsm, compacted into who/evs */
    size_t k = 0;
    double t0;
    sluice_error_t nerr = SLUICE_ERROR_INIT;
    sluice_err nrc = SLUICE_OK; /* a failed submit-not-sent note: after the answers */
    bool spent;
    sluice_err rc;

    if (killed_in_batch(l, SLUICE_KILL_AFTER_POST, n))
        return sluice_errorf(err, SLUICE_ESTATE, "submit of %zu: killed at a kill point", n);
    for (size_t i = 0; i < n; i++) {
        sluice_fsm_event_t *ev = &c->evs[m];
        sluice_submit_result_t *res = &c->res[i];
        launch_t *L = c->b[i].L;
        res->detail[sizeof(res->detail) - 1] = '\0';
        memset(ev, 0, sizeof(*ev));
        L->recon.absent_count = 0;
        L->recon.last_recon_ms = 0;
        if (c->oc[i] == SLUICE_SUBMIT_UNAVAILABLE) {
            const char *why = res->detail[0] != '\0' ? res->detail : "not sent";
            bool first = false;
            spent = plan_not_sent(l, L, why, &first);
            if (L->fsm.intent != SLUICE_CANCEL_CALLER && !spent) {
                /* only the audit note may be skipped once one failed */
                if (first && nrc == SLUICE_OK)
                    nrc = note_not_sent(l, L, why, &nerr);
                continue;
            }
        } else {
            L->submit.not_sent = false;
        }
        c->who[m++] = L;
        switch (c->oc[i]) {
        case SLUICE_SUBMIT_OK:
            if (res->cluster[0] != '\0') {
                /* "<id>;<cluster>": the job went to another cluster.  Not
                 * adopted: cancelled (it carries our marker), and the
                 * launch ends. */
                char reason[SLUICE_FSM_DETAIL_MAX];
                res->cluster[sizeof(res->cluster) - 1] = '\0';
                launcher_cancel_other_cluster(l, L, res->job_id, res->cluster, reason,
                                              sizeof(reason));
                ev->type = SLUICE_EV_SUBMIT_REJECTED;
                ev->detail = strdup(reason);
                break;
            }
            ev->type = SLUICE_EV_SUBMITTED;
            ev->job_ids[0] = res->job_id;
            ev->n_job_ids = 1;
            break;
        case SLUICE_SUBMIT_REJECTED:
            ev->type = SLUICE_EV_SUBMIT_REJECTED;
            ev->detail = strdup(res->detail[0] != '\0' ? res->detail : "rejected");
            break;
        case SLUICE_SUBMIT_UNAVAILABLE:
            /* Not sent, and the caller cancelled meanwhile or the budget is
             * spent: no job can exist, so this is a proven rejection (it
             * ends ABORTED after the caller's cancel, else 104). */
            ev->type = SLUICE_EV_SUBMIT_REJECTED;
            if (L->fsm.intent == SLUICE_CANCEL_CALLER) {
                ev->detail = strdup("not sent, and cancelled before it could be");
            } else {
                char d[SLUICE_FSM_DETAIL_MAX];
                snprintf(d, sizeof(d),
                         "not sent: slurmrestd unreachable for %.0f s "
                         "(job_launcher.submit_timeout)",
                         (double)(l->o.now_ms(l->o.clock_arg) - L->submit.not_sent_since_ms) /
                             1000.0);
                ev->detail = strdup(d);
            }
            break;
        default:
            ev->type = SLUICE_EV_SUBMIT_UNCERTAIN;
            ev->detail = strdup(res->detail[0] != '\0' ? res->detail : "outcome unknown");
            break;
        }
    }
    if (killed_in_batch(l, SLUICE_KILL_AFTER_ANSWER, n))
        return sluice_errorf(err, SLUICE_ESTATE, "submit of %zu: killed at a kill point", n);
    if (m == 0)
        goto notes;
    n = m;
    t0 = launcher_mono_ms();
    /* Job ids only: a power loss that drops them leaves each launch at its
     * durable marker, and reconciliation adopts the job by that marker (the
     * path of a crash between POST and this commit).  A rejection or an
     * uncertain answer is committed durably. */
    while (k < n && c->evs[k].type == SLUICE_EV_SUBMITTED)
        k++;
    rc = k == n ? launcher_record_recoverable(l, c->who, c->evs, n, err)
                : launcher_record_many(l, c->who, c->evs, n, err);
    timing_add(SLUICE_TIMING_ANSWER_COMMIT, n, (uint64_t)((launcher_mono_ms() - t0) * 1e6));
    sluice_log(SLUICE_LOG_DEBUG, "submit chunk of %zu: markers %.1f, POSTs %.1f, answers %.1f ms",
               n, c->t_mark, c->t_post1 - c->t_post0, launcher_mono_ms() - t0);
    if (rc != SLUICE_OK && rc != SLUICE_ENOMEM) {
        /* The chunk could not be stored: try each answer on its own so one
         * bad launch does not leave the others without theirs. */
        sluice_log(SLUICE_LOG_WARNING, "submit of %zu: %s; recording one by one", n,
                   err != NULL ? err->text : "");
        sluice_error_clear(err);
        rc = SLUICE_OK;
        for (size_t i = 0; i < n; i++) {
            sluice_error_t e1 = SLUICE_ERROR_INIT;
            sluice_err r1 = launcher_record(l, c->who[i], &c->evs[i], NULL, &e1);
            if (r1 != SLUICE_OK && rc == SLUICE_OK) {
                rc = r1;
                if (err != NULL)
                    *err = e1;
            }
        }
    }
    if (rc != SLUICE_OK)
        return rc;
notes:
    if (nrc != SLUICE_OK && err != NULL)
        *err = nerr;
    return nrc;
}

/* Record the answers of a chunk whose POSTs went out, also after another
 * chunk failed (they must not be lost: those launches have jobs); the
 * first error is the one returned.  Nothing after a kill point. */
static sluice_err answer_after(sluice_launcher_t *l, chunk_t *c, sluice_err rc, sluice_error_t *err)
{
    sluice_error_t e2 = SLUICE_ERROR_INIT;
    sluice_err r2;

    if (l->dead)
        return rc;
    r2 = chunk_answer(l, c, rc == SLUICE_OK ? err : &e2);
    if (rc != SLUICE_OK && r2 != SLUICE_OK)
        sluice_log(SLUICE_LOG_WARNING, "submit of %zu: answers not recorded: %s", c->n, e2.text);
    return rc == SLUICE_OK ? r2 : rc;
}

/* The submit pipeline of one launcher_submit_due() call: at most one chunk
 * whose POSTs are out (on their thread) and whose answers are not recorded
 * yet, carried from one round to the next, so that the POSTs of a chunk
 * overlap the staging and marker commit of the next one, also when the next
 * one is made of launches accepted while they were out. */
typedef struct {
    chunk_t slot[2]; /* a POST thread holds its chunk's address: never copied */
    chunk_t *prev;   /* POSTs out or done, answers not recorded; NULL: none */
    int next;
} pipe_t;

/* Wait for the chunk in flight and record its answers (after `rc`, the
 * first error so far, which is what is returned unless it is OK). */
static sluice_err pipe_flush(sluice_launcher_t *l, pipe_t *p, sluice_err rc, sluice_error_t *err)
{
    if (p->prev == NULL)
        return rc;
    chunk_post_join(p->prev);
    rc = answer_after(l, p->prev, rc, err);
    chunk_free(p->prev);
    p->prev = NULL;
    return rc;
}

/* Whether recording the answers of chunk c (POSTs back) cancels a job
 * that went to another cluster (chunk_answer). */
static bool chunk_cancels_elsewhere(const chunk_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->oc[i] == SLUICE_SUBMIT_OK && c->res[i].cluster[0] != '\0')
            return true;
    return false;
}

/* Move entries b[0..n) into a new chunk of their own (the batch keeps
 * cleared entries); NULL when out of memory (b untouched). */
static batch_entry_t *chunk_take_entries(batch_entry_t *b, size_t n)
{
    batch_entry_t *own = calloc(n, sizeof(*own));

    if (own == NULL)
        return NULL;
    memcpy(own, b, n * sizeof(*own));
    for (size_t i = 0; i < n; i++) {
        b[i].d = NULL;
        b[i].n = 0;
    }
    return own;
}

/* The selected batch, in chunks of four POSTs per in-flight slot.  Within a
 * chunk the order of the single submit holds: staging, marker commit, POST,
 * answer commit.  Across chunks: while a chunk's POSTs are out, the next
 * chunk is staged and its markers committed, then (the POSTs back) its
 * POSTs start and the previous chunk's answers are committed.  The last
 * chunk stays in flight in `p` for the next round (pipe_flush ends it).
 * *posted counts the launches whose markers were committed.  Every entry of
 * b stays the caller's to clear (a chunk's entries are moved out of it). */
static sluice_err submit_batch(sluice_launcher_t *l,
                               pipe_t *p,
                               batch_entry_t *b,
                               size_t n,
                               size_t *posted,
                               sluice_error_t *err)
{
    size_t size = (size_t)l->submit->in_flight * 4;
    size_t off = 0;
    sluice_err rc = SLUICE_OK;

    *posted = 0;
    while (off < n && rc == SLUICE_OK && !l->dead) {
        size_t take = n - off < size ? n - off : size;
        size_t k = take;
        chunk_t *cur = &p->slot[p->next];

        /* failures are compacted out of b[off..off+take) */
        rc = launcher_chunk_prepare(l, b + off, &k, err);
        off += take;
        if (rc != SLUICE_OK || k == 0)
            continue;
        memset(cur, 0, sizeof(*cur));
        if ((cur->b = chunk_take_entries(b + off - take, k)) == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            break;
        }
        cur->n = k;
        /* A replica whose lease is not fresh posts nothing (leader.h): the
         * launches stay as they are for the next leader. */
        if (!sluice_store_fence_fresh(l->store)) {
            rc = sluice_errorf(err, SLUICE_ECONFLICT, "submit of %zu: not leading", k);
            chunk_free(cur);
            break;
        }
        /* The markers while the previous chunk's POSTs are out: the store,
         * not the cluster client, is what this thread uses meanwhile. */
        rc = chunk_mark(l, cur, err);
        if (rc != SLUICE_OK) {
            chunk_free(cur); /* no POST of it left: reconciled by its marker */
            break;
        }
        *posted += k;
        for (size_t i = 0; i < k; i++) /* marked: the cached render is done */
            launcher_render_drop(l, cur->b[i].L);
        if (p->prev != NULL) {
            chunk_post_join(p->prev);
            /* An answer that cancels a job on another cluster uses the
             * cluster client, which the next POSTs must not share: those
             * answers are recorded before the next chunk's POSTs start. */
            if (chunk_cancels_elsewhere(p->prev))
                rc = pipe_flush(l, p, rc, err);
        }
        if (!sluice_store_fence_fresh(l->store)) {
            if (rc == SLUICE_OK)
                rc = sluice_errorf(err, SLUICE_ECONFLICT,
                                   "submit of %zu: the lease went stale; not posted (the next "
                                   "leader reconciles by the marker)",
                                   k);
            chunk_free(cur);
            break;
        }
        chunk_post_start(cur, true);
        p->next ^= 1;
        rc = pipe_flush(l, p, rc, err); /* the previous chunk's answers */
        p->prev = cur;
    }
    return rc;
}

/* Whether L is in the chunk whose POSTs are out (its answer not recorded:
 * a resend of it must wait for that answer). */
static bool in_flight(const pipe_t *p, const launch_t *L)
{
    for (size_t i = 0; p->prev != NULL && i < p->prev->n; i++)
        if (p->prev->b[i].L == L)
            return true;
    return false;
}

/* A launch whose POST never left and whose next try is due at `now`. */
static bool resend_due(const launch_t *L, int64_t now)
{
    return L->submit.not_sent && L->fsm.state == SLUICE_FSM_SUBMITTING && L->fsm.n_job_ids == 0 &&
           now >= L->submit.next_post_ms;
}

/* One round: every launch due a submit (or a resend of a POST that never
 * left) in one batch, as far as the submit budget reaches.  *posted counts
 * the POSTs, *waited a launch that waits for its dependency's job. */
static sluice_err submit_round(sluice_launcher_t *l,
                               pipe_t *p,
                               int64_t now,
                               size_t *selected,
                               size_t *posted,
                               bool *waited,
                               sluice_error_t *err)
{
    batch_entry_t *b = NULL;
    size_t n = 0;
    double t0;
    sluice_err rc = SLUICE_OK;

    *selected = 0;
    *posted = 0;
    *waited = false;
    for (size_t i = 0; i < l->n && rc == SLUICE_OK; i++) {
        launch_t *L = l->v[i];
        bool ready = false;
        if (L->fsm.state == SLUICE_FSM_DONE)
            continue;
        if (L->submit.not_sent && L->fsm.intent == SLUICE_CANCEL_CALLER &&
            (L->fsm.state == SLUICE_FSM_SUBMITTING || L->fsm.state == SLUICE_FSM_RETRYING) &&
            L->fsm.n_job_ids == 0) {
            /* cancelled while its POST could not be sent: no job exists
             * (not_sent stays until recorded: a failure is retried) */
            rc = launcher_record_simple(l, L, SLUICE_EV_SUBMIT_REJECTED,
                                        "not sent, and cancelled before it could be", err);
            if (rc == SLUICE_OK)
                L->submit.not_sent = false;
            continue;
        }
        if (!resend_due(L, now) && !(launcher_fsm_due(L, launcher_fsm_time(now)) &
                                     (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT)))
            continue;
        if (L->submit.not_sent && in_flight(p, L))
            continue;
        if (b == NULL && (b = calloc(l->n, sizeof(*b))) == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            break;
        }
        rc = batch_select(l, L, &b[n], &ready, waited, err);
        if (ready)
            n++;
    }
    *selected = n;
    t0 = launcher_mono_ms();
    if (rc == SLUICE_OK && n > 0)
        rc = submit_batch(l, p, b, n, posted, err);
    if (n > 0)
        sluice_log(SLUICE_LOG_DEBUG, "submit batch of %zu: %zu POSTed in %.1f ms", n, *posted,
                   launcher_mono_ms() - t0);
    for (size_t i = 0; i < n; i++)
        launcher_batch_entry_clear(&b[i]);
    free(b);
    return rc;
}

/* The earliest next try of a POST that never left; -1 when none.  A try
 * that is due but did not go (no submit token, a staging error) is looked
 * at again after NOT_SENT_FIRST_MS, never in a busy loop. */
int64_t launcher_submit_wake(const sluice_launcher_t *l, int64_t now)
{
    int64_t wake = -1;

    for (size_t i = 0; i < l->n; i++) {
        const launch_t *L = l->v[i];
        int64_t t;
        if (!resend_due(L, L->submit.next_post_ms))
            continue;
        t = L->submit.next_post_ms > now ? L->submit.next_post_ms : now + NOT_SENT_FIRST_MS;
        if (wake < 0 || t < wake)
            wake = t;
    }
    return wake;
}

/* Every launch due for a submit this cycle goes into one batch, as far as
 * the submit budget reaches; POSTs that provably never left go again once
 * their backoff has passed.  A launch that waits for its dependency's job
 * gets another round once the batch gave that job an id.  Launches accepted
 * while a round ran go out in another round (the intake drained again), for
 * at most one poll interval, not after a whole cycle; the last chunk of a
 * round stays in flight while the next round is staged and marked.  Before
 * it returns, every POST is back and every answer recorded (the rest of
 * the cycle uses the cluster client).  Nothing here sleeps (the step may
 * hold the server's lock): the next resend is the launcher's next wake-up
 * (launcher_submit_wake()). */
sluice_err launcher_submit_due(sluice_launcher_t *l, int64_t now, sluice_error_t *err)
{
    int64_t start = now;
    int dep_rounds = 0;
    pipe_t p;
    sluice_err rc = SLUICE_OK;

    memset(&p, 0, sizeof(p));
    while (rc == SLUICE_OK && !l->dead) {
        size_t n = 0, posted = 0;
        bool waited = false;

        rc = submit_round(l, &p, now, &n, &posted, &waited, err);
        if (rc != SLUICE_OK)
            break;
        if (n == 0 && p.prev == NULL)
            break;
        if (waited && ++dep_rounds < 4) {
            /* the job id it waits for may be in the answers in flight */
            rc = pipe_flush(l, &p, rc, err);
            continue;
        }
        if (launcher_intake_new_count(l) == 0) {
            /* Nothing new yet: the answers of the chunk in flight, then
             * look again (accepts arrive while the POSTs are out). */
            rc = pipe_flush(l, &p, rc, err);
            if (rc != SLUICE_OK || launcher_intake_new_count(l) == 0)
                break;
        }
        if ((now = launcher_now_ms(l)) - start >= l->submit->round_ms)
            break;
        rc = launcher_intake_take(l, err);
        launcher_budget_refill(l, now);
    }
    return pipe_flush(l, &p, rc, err);
}
