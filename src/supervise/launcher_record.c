/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_record.c - the launcher's table of launches and their records:
 * tracking a launch, recording events in the store and folding stored
 * events back into each launch's state machine (the clock, budget and
 * table helpers every launcher file uses: launcher_util.c).
 *
 * Purpose:
 *   A launch's in-memory state is always the replay of its log: an event is
 *   appended to the store first, then folded back in (launcher_sync_launch),
 *   whether it came from this launcher, from another process (a CLI cancel)
 *   or from before a restart.  This file is the bottom of the launcher:
 *   launcher_intake.c, launcher_poll.c, launcher_submit.c,
 *   launcher_reconcile.c and launcher.c call it, and it calls none of them
 *   (only launcher_views.c and launcher_util.c below it).
 *
 * Notes:
 *   - Times: the store keeps epoch ms, the fsm epoch seconds (double).
 *     launcher_fsm_time() is the one conversion.
 *   - Events the fsm does not know (archived, cancel-refused,
 *     stale-job-cancelled, peers-written, submit-not-sent) are bookkeeping:
 *     stored for audit, read back by launcher_sync_launch, never given to
 *     the fsm.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#include "launcher_int.h"

static void count_event(sluice_launcher_t *l, const sluice_fsm_event_t *ev);

/* ---- folding stored events back in ------------------------------------- */

static bool is_fsm_event(const char *name)
{
    sluice_fsm_event_type t;

    return name != NULL && sluice_fsm_event_from_name(name, &t);
}

static void notify(sluice_launcher_t *l,
                   const launch_t *L,
                   const char *event,
                   const sluice_fsm_transition_t *tr,
                   int prev_result)
{
    sluice_launcher_transition_t t;
    int64_t t_ms = (int64_t)launcher_to_ms(L->fsm.last_time * 1000.0);

    if (sluice_fsm_state_public(tr->from) == sluice_fsm_state_public(tr->to) &&
        tr->result == prev_result)
        return;
    memset(&t, 0, sizeof(t));
    t.launch_id = L->id;
    t.event = event;
    t.from = sluice_fsm_state_public(tr->from);
    t.to = sluice_fsm_state_public(tr->to);
    t.result = tr->result;
    t.reason = launcher_fsm_reason(L);
    t.slurm_state = L->poll.n_views > 0 ? sluice_job_base_name(L->poll.views[0].base) : "";
    t.elapsed = (double)(t_ms - L->created_ms) / 1000.0;
    if (l->o.on_transition != NULL)
        l->o.on_transition(&t, l->o.transition_arg);
}

/* Fold a bookkeeping event (one the fsm does not know) stored at `seq`. */
static void fold_note(sluice_launcher_t *l, launch_t *L, const char *name, int64_t seq)
{
    L->next_seq = seq + 1;
    if (name == NULL)
        return;
    if (strcmp(name, "peers-written") == 0)
        L->peers.written = true;
    else if (strcmp(name, "archived") == 0)
        L->archived = true;
    else if (strcmp(name, "cancel-asked") == 0) {
        /* another writer's request: carried out as this launcher's own
         * cancel-requested after the fold (launcher.c: carry_out_asks) */
        L->cancel_ask_seq = seq;
        l->asks_pending = true;
    }
}

/* Fold an fsm event stored at ev->seq into L (the event stays the
 * caller's). */
static sluice_err fold_event(sluice_launcher_t *l,
                             launch_t *L,
                             const char *name,
                             const sluice_fsm_event_t *ev,
                             bool quiet,
                             sluice_error_t *err)
{
    sluice_fsm_transition_t tr;
    sluice_fsm_launch_t f;
    int prev_result = L->fsm.result;
    sluice_err rc;

    L->next_seq = ev->seq + 1;
    launcher_fsm_get(L, &f);
    rc = sluice_fsm_apply(&f, ev, &tr, err);
    if (rc == SLUICE_OK)
        rc = launcher_fsm_set(L, &f, err);
    if (rc == SLUICE_ESTATE) {
        sluice_log(SLUICE_LOG_DEBUG, "launch %s: event %lld (%s) not applicable: %s", L->id,
                   (long long)ev->seq, name, err != NULL ? err->text : "");
        sluice_error_clear(err);
        return SLUICE_OK;
    }
    if (rc != SLUICE_OK)
        return rc;
    if (!quiet)
        notify(l, L, name, &tr, prev_result);
    return SLUICE_OK;
}

/* Fold one stored entry {seq, time (ms), name, context, caller}. */
static sluice_err
fold_entry(sluice_launcher_t *l, launch_t *L, const json_t *entry, bool quiet, sluice_error_t *err)
{
    const char *name = json_string_value(json_object_get(entry, "name"));
    json_int_t seq = json_integer_value(json_object_get(entry, "seq"));
    json_int_t t_ms = json_integer_value(json_object_get(entry, "time"));
    json_t *fe = NULL;
    sluice_fsm_event_t ev;
    sluice_err rc;

    memset(&ev, 0, sizeof(ev));
    if (!is_fsm_event(name)) {
        fold_note(l, L, name, (int64_t)seq);
        return SLUICE_OK;
    }
    fe = json_pack("{s:I, s:f, s:s, s:O}", "seq", seq, "time", launcher_fsm_time((int64_t)t_ms),
                   "name", name, "context", json_object_get(entry, "context"));
    if (fe == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", L->id);
    rc = sluice_fsm_event_from_json(fe, &ev, err);
    json_decref(fe);
    if (rc != SLUICE_OK) {
        L->next_seq = (int64_t)seq + 1;
        return sluice_error_prefix(err, "launch %s: event %lld", L->id, (long long)seq);
    }
    rc = fold_event(l, L, name, &ev, quiet, err);
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* After this launcher appended an event to L's log at `seq` (`entry`: its
 * {seq, time, name, context} as sluice_fsm_event_to_json() made it for the
 * store): fold it in from that entry when it is the next one of the log
 * (nothing else was appended since L was last folded), exactly as reading
 * it back would (the same decode of the same context); else read the log
 * back from where L stands (another writer's entries come first). */
static sluice_err
fold_own(sluice_launcher_t *l, launch_t *L, const json_t *entry, int64_t seq, sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_err rc;

    if (seq <= 0 || seq != L->next_seq || entry == NULL)
        return launcher_sync_launch(l, L, false, err);
    memset(&ev, 0, sizeof(ev));
    if ((rc = sluice_fsm_event_from_json(entry, &ev, err)) != SLUICE_OK)
        return sluice_error_prefix(err, "launch %s: event %lld", L->id, (long long)seq);
    ev.seq = seq;
    rc = fold_event(l, L, sluice_fsm_event_name(ev.type), &ev, false, err);
    sluice_fsm_event_clear(&ev);
    return rc;
}

sluice_err launcher_sync_launch(sluice_launcher_t *l, launch_t *L, bool quiet, sluice_error_t *err)
{
    json_t *events = NULL;
    size_t i;
    json_t *e;
    sluice_err rc;

    rc = sluice_store_read_events(l->store, L->id, L->next_seq, 0, &events, err);
    if (rc != SLUICE_OK)
        return rc;
    json_array_foreach(events, i, e)
    {
        if ((rc = fold_entry(l, L, e, quiet, err)) != SLUICE_OK)
            break;
    }
    json_decref(events);
    return rc;
}

/* ---- recording --------------------------------------------------------- */

/* An fsm event ready for the store: its JSON and the summary it leads to
 * (computed on a copy of the launch's state).  The summary's strings point
 * into `copy` and `ids`, so the struct must stay put until it is stored. */
typedef struct {
    sluice_fsm_launch_t copy;
    sluice_store_summary_t sum;
    json_t *entry;
    json_t *ids;
    int64_t t;
} staged_t;

static void staged_clear(staged_t *s)
{
    json_decref(s->entry);
    json_decref(s->ids);
    s->entry = NULL;
    s->ids = NULL;
}

static sluice_err stage_event(
    sluice_launcher_t *l, launch_t *L, sluice_fsm_event_t *ev, staged_t *s, sluice_error_t *err)
{
    sluice_err rc;

    memset(s, 0, sizeof(*s));
    launcher_fsm_get(L, &s->copy);
    s->t = launcher_now_ms(l);
    ev->seq = L->fsm.last_seq + 1;
    ev->time = launcher_fsm_time(s->t);
    if ((rc = sluice_fsm_event_to_json(ev, &s->entry, err)) != SLUICE_OK)
        return rc;
    if (sluice_fsm_apply(&s->copy, ev, NULL, NULL) != SLUICE_OK)
        launcher_fsm_get(L, &s->copy);
    s->ids = json_array();
    for (size_t i = 0; s->ids != NULL && i < s->copy.n_job_ids; i++)
        json_array_append_new(s->ids, json_integer((json_int_t)s->copy.job_ids[i]));
    s->sum = (sluice_store_summary_t)SLUICE_STORE_SUMMARY_INIT;
    s->sum.state = sluice_fsm_state_name(sluice_fsm_state_public(s->copy.state));
    s->sum.terminal = s->copy.state == SLUICE_FSM_DONE;
    s->sum.set_result = s->sum.terminal;
    s->sum.result_code = s->copy.result;
    s->sum.reason = s->copy.reason;
    s->sum.attempt = (int)s->copy.attempt;
    s->sum.job_ids = s->ids;
    return SLUICE_OK;
}

/* What an operator must see at warning level, once per event (so once per
 * launch and attempt, never once per cycle): an uncertain submit, the
 * results of reconciling it, an accounting miss, a pending timeout.
 * `before` is the launch as it was before the event. */
static void
warn_event(const launch_t *L, const sluice_fsm_launch_t *before, const sluice_fsm_event_t *ev)
{
    switch (ev->type) {
    case SLUICE_EV_SUBMIT_UNCERTAIN:
        sluice_log(SLUICE_LOG_WARNING,
                   "launch %s: submit of attempt %u uncertain (%s): reconciling by its marker "
                   "before any new attempt",
                   L->id, (unsigned)L->fsm.attempt, ev->detail ? ev->detail : "no answer");
        break;
    case SLUICE_EV_ADOPTED:
        if (before->state == SLUICE_FSM_RECONCILING)
            sluice_log(SLUICE_LOG_WARNING,
                       "launch %s: reconciled: job %llu of attempt %u found in the %s view and "
                       "adopted",
                       L->id, ev->n_job_ids ? (unsigned long long)ev->job_ids[0] : 0ULL,
                       (unsigned)ev->attempt, sluice_lookup_source_name(ev->source));
        break;
    case SLUICE_EV_ABSENCE_CONFIRMED:
        sluice_log(SLUICE_LOG_WARNING,
                   "launch %s: reconciled: no job of attempt %u exists (absence confirmed); %s",
                   L->id, (unsigned)before->attempt,
                   L->fsm.state == SLUICE_FSM_DONE ? "the launch ends" : "a new attempt may start");
        break;
    case SLUICE_EV_OBSERVED:
        if (ev->source == SLUICE_SOURCE_ACCOUNTING && ev->lookup == SLUICE_LOOKUP_NOT_FOUND &&
            L->fsm.misses > before->misses)
            sluice_log(SLUICE_LOG_WARNING,
                       "launch %s: accounting has no record of job %llu (miss %u of %u)", L->id,
                       L->fsm.n_job_ids ? (unsigned long long)L->fsm.job_ids[0] : 0ULL,
                       L->fsm.misses, L->fsm.cfg.miss_budget);
        break;
    case SLUICE_EV_PENDING_TIMEOUT:
        sluice_log(SLUICE_LOG_WARNING,
                   "launch %s: pending for over %.0f s (pending_timeout): cancelling its job",
                   L->id, L->fsm.cfg.pending_timeout);
        break;
    default:
        break;
    }
}

/* Append an fsm event (summary computed on a copy), then fold it in. */
sluice_err launcher_record(sluice_launcher_t *l,
                           launch_t *L,
                           sluice_fsm_event_t *ev,
                           const char *caller,
                           sluice_error_t *err)
{
    staged_t s;
    sluice_fsm_launch_t before;
    int64_t seq = 0;
    sluice_err rc;

    launcher_fsm_get(L, &before);
    if ((rc = stage_event(l, L, ev, &s, err)) != SLUICE_OK)
        goto out;
    rc = sluice_store_append_event_and_update(l->store, L->id, sluice_fsm_event_name(ev->type),
                                              json_object_get(s.entry, "context"), caller, s.t,
                                              &s.sum, &seq, err);
    if (rc == SLUICE_ESTATE) {
        sluice_error_clear(err);
        rc = sluice_store_append_event(l->store, L->id, sluice_fsm_event_name(ev->type),
                                       json_object_get(s.entry, "context"), caller, s.t, &seq, err);
    }
out:
    if (rc != SLUICE_OK) {
        staged_clear(&s);
        return rc;
    }
    count_event(l, ev);
    l->activity = true;
    rc = fold_own(l, L, s.entry, seq, err);
    staged_clear(&s);
    warn_event(L, &before, ev);
    return rc;
}

/* Record one fsm event for each of `n` launches in ONE store transaction,
 * then fold each in.  Either every event is stored or none is. */
static sluice_err record_batch(sluice_launcher_t *l,
                               launch_t *const *who,
                               sluice_fsm_event_t *evs,
                               size_t n,
                               bool recoverable,
                               sluice_error_t *err)
{
    staged_t *s = NULL;
    sluice_store_append_t *items = NULL;
    size_t staged = 0;
    sluice_err rc = SLUICE_OK;

    if (n == 0)
        return SLUICE_OK;
    s = calloc(n, sizeof(*s));
    items = calloc(n, sizeof(*items));
    if (s == NULL || items == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    for (staged = 0; staged < n; staged++) {
        if ((rc = stage_event(l, who[staged], &evs[staged], &s[staged], err)) != SLUICE_OK) {
            staged++;
            goto out;
        }
        items[staged].launch_id = who[staged]->id;
        items[staged].name = sluice_fsm_event_name(evs[staged].type);
        items[staged].context = json_object_get(s[staged].entry, "context");
        items[staged].time_ms = s[staged].t;
        items[staged].summary = &s[staged].sum;
        items[staged].summary_if_live = 1;
    }
    rc = recoverable ? sluice_store_append_recoverable(l->store, items, n, err)
                     : sluice_store_append_many(l->store, items, n, err);
    if (rc != SLUICE_OK)
        goto out;
    l->activity = true;
    for (size_t i = 0; i < n && rc == SLUICE_OK; i++) {
        sluice_fsm_launch_t before;

        launcher_fsm_get(who[i], &before);
        rc = fold_own(l, who[i], s[i].entry, items[i].seq, err);
        warn_event(who[i], &before, &evs[i]);
    }
out:
    for (size_t i = 0; s != NULL && i < staged; i++)
        staged_clear(&s[i]);
    free(s);
    free(items);
    return rc;
}

sluice_err launcher_record_many(sluice_launcher_t *l,
                                launch_t *const *who,
                                sluice_fsm_event_t *evs,
                                size_t n,
                                sluice_error_t *err)
{
    return record_batch(l, who, evs, n, false, err);
}

sluice_err launcher_record_recoverable(sluice_launcher_t *l,
                                       launch_t *const *who,
                                       sluice_fsm_event_t *evs,
                                       size_t n,
                                       sluice_error_t *err)
{
    return record_batch(l, who, evs, n, true, err);
}

/* Append a bookkeeping event (steals `ctx`). */
sluice_err
launcher_note(sluice_launcher_t *l, launch_t *L, const char *name, json_t *ctx, sluice_error_t *err)
{
    int64_t seq = 0;
    sluice_err rc =
        sluice_store_append_event(l->store, L->id, name, ctx, NULL, launcher_now_ms(l), &seq, err);

    json_decref(ctx);
    if (rc != SLUICE_OK)
        return rc;
    if (seq > 0 && seq == L->next_seq) { /* the next entry of the log: no read back */
        fold_note(l, L, name, seq);
        return SLUICE_OK;
    }
    return launcher_sync_launch(l, L, true, err);
}

sluice_err launcher_record_simple(sluice_launcher_t *l,
                                  launch_t *L,
                                  sluice_fsm_event_type type,
                                  const char *detail,
                                  sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_err rc;

    memset(&ev, 0, sizeof(ev));
    ev.type = type;
    if (detail != NULL && (ev.detail = sluice_fsm_text_dup(detail, SLUICE_FSM_DETAIL_MAX)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    rc = launcher_record(l, L, &ev, NULL, err);
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* Copy views into an event (the event owns its copies).  Slurm's free text
 * is cut to what an event holds (a state description can list hundreds of
 * nodes), so what is folded live is what replay reads back. */
static sluice_err copy_views(const sluice_jobview_t *src, size_t n, sluice_jobview_t **out)
{
    sluice_jobview_t *v = calloc(n > 0 ? n : 1, sizeof(*v));

    if (v == NULL)
        return SLUICE_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        v[i] = src[i];
#define DUP(f) v[i].f = src[i].f != NULL ? strdup(src[i].f) : NULL
        DUP(name);
        DUP(comment);
        DUP(user_name);
        DUP(partition);
#undef DUP
#define CUT(f) v[i].f = sluice_fsm_text_dup(src[i].f, SLUICE_FSM_DETAIL_MAX)
        CUT(nodes);
        CUT(state_reason);
        CUT(state_description);
#undef CUT
    }
    *out = v;
    return SLUICE_OK;
}

/* The observed event of a lookup into *ev (zeroed first); *skip when
 * nothing is to be recorded (a repeated UNAVAILABLE: one record per
 * outage, it already broke the pending chain). */
static sluice_err observed_event(sluice_launcher_t *l,
                                 const launch_t *L,
                                 sluice_lookup lookup,
                                 sluice_lookup_source source,
                                 const sluice_jobview_t *views,
                                 size_t n,
                                 sluice_fsm_event_t *ev,
                                 bool *skip,
                                 sluice_error_t *err)
{
    memset(ev, 0, sizeof(*ev));
    *skip = lookup == SLUICE_LOOKUP_UNAVAILABLE && L->poll.last_unavailable;
    if (*skip)
        return SLUICE_OK;
    ev->type = SLUICE_EV_OBSERVED;
    ev->lookup = lookup;
    ev->source = source;
    if (lookup != SLUICE_LOOKUP_FOUND)
        return SLUICE_OK;
    if (copy_views(views, n, &ev->jobs) != SLUICE_OK)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    ev->n_jobs = n;
    launcher_mark_failed_unschedulable(l, ev->jobs, n);
    if (!launcher_fill_hidden_bases(L->poll.views, L->poll.n_views, ev->jobs, n)) {
        sluice_log(SLUICE_LOG_WARNING,
                   "launch %s: Slurm reported a job state sluice does not know; "
                   "counted as unavailable",
                   L->id);
        sluice_fsm_event_clear(ev);
        memset(ev, 0, sizeof(*ev));
        *skip = L->poll.last_unavailable;
        ev->type = SLUICE_EV_OBSERVED;
        ev->lookup = SLUICE_LOOKUP_UNAVAILABLE;
        ev->source = source;
    }
    return SLUICE_OK;
}

sluice_err launcher_record_observed(sluice_launcher_t *l,
                                    launch_t *L,
                                    sluice_lookup lookup,
                                    sluice_lookup_source source,
                                    const sluice_jobview_t *views,
                                    size_t n,
                                    sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    bool skip = false;
    sluice_err rc = observed_event(l, L, lookup, source, views, n, &ev, &skip, err);

    if (rc != SLUICE_OK || skip) {
        sluice_fsm_event_clear(&ev);
        return rc;
    }
    rc = launcher_record(l, L, &ev, NULL, err);
    if (rc == SLUICE_OK) {
        L->poll.last_unavailable = ev.lookup == SLUICE_LOOKUP_UNAVAILABLE;
        L->poll.last_obs_ms = launcher_now_ms(l);
    }
    sluice_fsm_event_clear(&ev);
    return rc;
}

sluice_err
launcher_record_heartbeats(sluice_launcher_t *l, launch_t **who, size_t n, sluice_error_t *err)
{
    sluice_fsm_event_t *evs;
    size_t m = 0;
    sluice_err rc = SLUICE_OK;

    if (n == 0)
        return SLUICE_OK;
    if ((evs = calloc(n, sizeof(*evs))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == SLUICE_OK; i++) {
        bool skip = false;

        rc = observed_event(l, who[i], SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, who[i]->poll.views,
                            who[i]->poll.n_views, &evs[m], &skip, err);
        if (rc == SLUICE_OK && !skip)
            who[m++] = who[i];
        else
            sluice_fsm_event_clear(&evs[m]);
    }
    if (rc == SLUICE_OK && m > 0)
        rc = launcher_record_many(l, who, evs, m, err);
    for (size_t i = 0; i < m; i++) {
        if (rc == SLUICE_OK) {
            who[i]->poll.last_unavailable = evs[i].lookup == SLUICE_LOOKUP_UNAVAILABLE;
            who[i]->poll.last_obs_ms = launcher_now_ms(l);
        }
        sluice_fsm_event_clear(&evs[i]);
    }
    free(evs);
    return rc;
}

/* ---- loading ----------------------------------------------------------- */

void launcher_terms_of_request(const json_t *request, launcher_terms_t *t)
{
    const json_t *dep = json_object_get(request, "depends_on");
    const json_t *pt = json_object_get(request, "pending_timeout");
    const json_t *names = json_object_get(request, "secret_names");

    memset(t, 0, sizeof(*t));
    t->id = json_string_value(json_object_get(request, "launch_id"));
    t->site = json_string_value(json_object_get(request, "site"));
    t->study = json_string_value(json_object_get(request, "study"));
    t->cluster = json_string_value(json_object_get(request, "cluster"));
    if (json_is_object(dep)) {
        t->dep_id = json_string_value(json_object_get(dep, "launch_id"));
        t->dep_cond = json_string_value(json_object_get(dep, "condition"));
        if (t->dep_id == NULL)
            t->dep_id = "";
    }
    t->needs_secrets = json_is_array(names) && json_array_size(names) > 0;
    if (json_is_integer(pt) && json_integer_value(pt) > 0)
        t->pending_timeout = json_integer_value(pt);
    t->requeue = json_is_true(json_object_get(request, "requeue"));
}

void launcher_terms_of_launch(const sluice_launch_t *launch,
                              const char *cluster,
                              launcher_terms_t *t)
{
    const sluice_launch_spec_t *s = sluice_launch_spec(launch);

    memset(t, 0, sizeof(*t));
    t->id = s->launch_id;
    t->site = s->site;
    t->study = s->study;
    t->cluster = cluster;
    if (s->depends_on != NULL) {
        t->dep_id = s->depends_on;
        t->dep_cond = sluice_launch_dep_name(s->depends_condition);
    }
    t->needs_secrets = sluice_launch_secret_count(launch) > 0;
    t->pending_timeout = s->pending_timeout;
    t->requeue = s->requeue;
}

sluice_err launcher_track(sluice_launcher_t *l,
                          const launcher_terms_t *t,
                          int64_t created_ms,
                          launch_t **out,
                          sluice_error_t *err)
{
    launch_t *L = NULL;
    sluice_fsm_config_t cfg;
    sluice_err rc = SLUICE_OK;

    if ((L = calloc(1, sizeof(*L))) == NULL || (L->id = strdup(t->id)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    L->site = launcher_dup_or(t->site, l->site);
    L->created_ms = created_ms;
    if (t->dep_id != NULL) {
        L->dep_id = launcher_dup_or(t->dep_id, "");
        L->dep_cond = launcher_dup_or(t->dep_cond, "after");
    }
    L->needs_secrets = t->needs_secrets;
    L->next_seq = 1;
    sluice_fsm_config_default(&cfg);
    cfg.miss_budget = l->o.miss_budget;
    cfg.miss_spacing = l->o.miss_spacing_s;
    cfg.pending_timeout = l->o.pending_timeout_s;
    if (t->pending_timeout > 0)
        cfg.pending_timeout = (double)t->pending_timeout;
    cfg.requeue_allowed = t->requeue;
    {
        sluice_fsm_launch_t f;
        sluice_fsm_launch_init(&f, &cfg);
        if ((rc = launcher_fsm_set(L, &f, err)) != SLUICE_OK)
            goto out;
    }
    if ((rc = launcher_sync_launch(l, L, true, err)) != SLUICE_OK)
        goto out;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        launch_t **v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = L;
    if (out != NULL)
        *out = L;
    L = NULL;
out:
    launcher_launch_free(L);
    return rc;
}

bool launcher_cluster_ours(const sluice_launcher_t *l, const char *cluster)
{
    if (l->cluster == NULL)
        return true;
    return cluster == NULL ? l->o.cluster_default : strcmp(cluster, l->cluster) == 0;
}

sluice_err
launcher_load_launch(sluice_launcher_t *l, const char *id, launch_t **out, sluice_error_t *err)
{
    json_t *row = NULL;
    sluice_err rc;

    if ((rc = sluice_store_get_launch(l->store, id, &row, err)) != SLUICE_OK)
        return rc;
    if (!launcher_cluster_ours(l, json_string_value(json_object_get(row, "cluster")))) {
        if (out != NULL) /* another launcher's: not tracked here */
            *out = NULL;
        json_decref(row);
        return SLUICE_OK;
    }
    {
        launcher_terms_t t;

        launcher_terms_of_request(json_object_get(row, "request"), &t);
        t.id = id;
        t.site = json_string_value(json_object_get(row, "site"));
        rc = launcher_track(l, &t, (int64_t)json_integer_value(json_object_get(row, "created_ms")),
                            out, err);
    }
    json_decref(row);
    return rc;
}

/* ---- counters for metrics ---------------------------------------------- */

/* Count one recorded event (after the store took it). */
static void count_event(sluice_launcher_t *l, const sluice_fsm_event_t *ev)
{
    struct launcher_counters *k = &l->counters;

    if (ev->type == SLUICE_EV_ADOPTED && ev->source == SLUICE_SOURCE_LIVE)
        atomic_fetch_add(&k->adoptions_live, 1);
    else if (ev->type == SLUICE_EV_ADOPTED)
        atomic_fetch_add(&k->adoptions_accounting, 1);
    else if (ev->type == SLUICE_EV_ABSENCE_CONFIRMED)
        atomic_fetch_add(&k->absences_confirmed, 1);
    else if (ev->type == SLUICE_EV_OBSERVED && ev->source == SLUICE_SOURCE_ACCOUNTING &&
             ev->lookup == SLUICE_LOOKUP_NOT_FOUND)
        atomic_fetch_add(&k->accounting_misses, 1);
}
