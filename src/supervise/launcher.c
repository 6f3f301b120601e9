/* SPDX-License-Identifier: Apache-2.0 */
/* launcher.c - the supervisor: lifecycle, cancel, recording, archive,
 * peers, recover, and the cycle that drives the rest.
 *
 * Purpose:
 *   Drive every live launch of one store through the state machine.  The
 *   fsm decides (sluice_fsm_due), the launcher acts, records the outcome in
 *   the store, then folds the stored event back in (sync_launch).  A
 *   launch's in-memory state is thus always the replay of its log, whether
 *   the event came from us, from another process (a CLI cancel) or from
 *   before a restart.
 *
 *   The launcher is split by concept (src/launcher_int.h names what each
 *   file owns): this file keeps the lifecycle, cancel, recording and
 *   folding events, per-launch actions (cancel, pool exits, peers,
 *   archive), pick-up, the step and stats; launcher_intake.c takes accepts
 *   from any thread; launcher_poll.c reads job states; launcher_submit.c
 *   submits in batches and reconciles.
 *
 * Notes:
 *   - Times: the store keeps epoch ms, the fsm epoch seconds (double).
 *     launcher_fsm_time() is the one conversion.
 *   - Events the fsm does not know (archived, cancel-refused,
 *     stale-job-cancelled, peers-written) are bookkeeping: stored for audit,
 *     read back by sync_launch, never given to the fsm.
 *   - A POST is never repeated blindly: a submit-started without an answer
 *     becomes submit-uncertain, and only the absence rule opens attempt+1.
 *     Only a POST that provably never left this host is sent again, for the
 *     same attempt (launcher_submit.c).
 *   - Events the fsm does not know also include submit-not-sent (audit of
 *     such a POST, once per attempt); each resend records submit-resent (an
 *     fsm event: it moves the POST time).
 *   - Every action is idempotent and safe to repeat after a crash.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/crypto.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#include "base/marker.h"
#include "launcher_int.h"

#define DEFAULT_RPC_PER_SEC 50.0
#define DEFAULT_SUBMIT_PER_SEC 200.0
#define DEFAULT_IN_FLIGHT 4

static void count_event(sluice_launcher_t *l, const sluice_fsm_event_t *ev);
static sluice_err take_in(sluice_launcher_t *l, bool clear_wake, sluice_error_t *err);

/* ---- small helpers ----------------------------------------------------- */

double launcher_fsm_time(int64_t ms)
{
    return (double)ms / 1000.0;
}

/* Seconds-scale values (already multiplied) back to whole ms; never negative here. */
int64_t launcher_to_ms(double x)
{
    return (int64_t)(x >= 0 ? x + 0.5 : x - 0.5);
}

static int64_t real_now_ms(void *arg)
{
    struct timespec ts;

    (void)arg;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void real_sleep_ms(void *arg, int64_t ms)
{
    struct timespec ts;

    (void)arg;
    if (ms <= 0)
        return;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

double launcher_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool launcher_real_clock(const sluice_launcher_t *l)
{
    return l->o.sleep_ms == real_sleep_ms;
}

static int64_t now_ms(const sluice_launcher_t *l)
{
    return l->o.now_ms(l->o.clock_arg);
}

static char *dup_or(const char *s, const char *dflt)
{
    return strdup(s != NULL && s[0] != '\0' ? s : dflt);
}

/* The marker is base/marker.c's (issue 12: one implementation). */
int sluice_launcher_job_name(char *buf,
                             size_t size,
                             const char *prefix,
                             const char *site,
                             const char *launch_id,
                             uint32_t attempt)
{
    return marker_job_name(buf, size, prefix, site, launch_id, attempt);
}

void launcher_views_free(sluice_jobview_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sluice_jobview_clear(&v[i]);
    free(v);
}

bool launcher_same_str(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

bool launcher_take_token(sluice_launcher_t *l)
{
    if (l->tokens < 1.0)
        return false;
    l->tokens -= 1.0;
    return true;
}

/* A kill point: true means "the process died here". */
bool launcher_killed_at(sluice_launcher_t *l, const char *point)
{
    const char *env;

    if (l->o.kill_at != NULL) {
        if (l->o.kill_at(l->o.kill_arg, point)) {
            l->dead = true;
            return true;
        }
        return false;
    }
    env = getenv("SLUICE_KILL_AT");
    if (env != NULL && strcmp(env, point) == 0)
        raise(SIGKILL);
    return false;
}

static void launch_free(launch_t *L)
{
    if (L == NULL)
        return;
    for (size_t i = 0; i < L->n_secrets; i++) {
        if (L->secret_values[i] != NULL)
            OPENSSL_cleanse(L->secret_values[i], strlen(L->secret_values[i]));
        free(L->secret_values[i]);
        free(L->secret_names[i]);
    }
    free(L->secret_values);
    free(L->secret_names);
    launcher_views_free(L->views, L->n_views);
    json_decref(L->render);
    free(L->id);
    free(L->site);
    free(L->dep_id);
    free(L->dep_cond);
    free(L);
}

launch_t *launcher_find_launch(const sluice_launcher_t *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i]->id, id) == 0)
            return l->v[i];
    return NULL;
}

static void drop_launch(sluice_launcher_t *l, launch_t *L)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i] == L) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
            l->n--;
            break;
        }
    }
    launch_free(L);
}

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

    if (tr->from == tr->to && tr->result == prev_result)
        return;
    memset(&t, 0, sizeof(t));
    t.launch_id = L->id;
    t.event = event;
    t.from = tr->from;
    t.to = tr->to;
    t.result = tr->result;
    t.reason = L->fsm.reason;
    t.slurm_state = L->n_views > 0 ? sluice_job_base_name(L->views[0].base) : "";
    t.elapsed = (double)(t_ms - L->created_ms) / 1000.0;
    if (l->o.on_transition != NULL)
        l->o.on_transition(&t, l->o.transition_arg);
    if (l->wait_fn != NULL && l->wait_id != NULL && strcmp(l->wait_id, L->id) == 0)
        l->wait_fn(&t, l->wait_arg);
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
    sluice_fsm_transition_t tr;
    int prev_result = L->fsm.result;
    sluice_err rc = SLUICE_OK;

    memset(&ev, 0, sizeof(ev));
    L->next_seq = (int64_t)seq + 1;
    if (!is_fsm_event(name)) {
        if (name == NULL)
            return SLUICE_OK;
        if (strcmp(name, "peers-written") == 0)
            L->peers_written = true;
        else if (strcmp(name, "archived") == 0)
            L->archived = true;
        return SLUICE_OK;
    }
    fe = json_pack("{s:I, s:f, s:s, s:O}", "seq", seq, "time", launcher_fsm_time((int64_t)t_ms),
                   "name", name, "context", json_object_get(entry, "context"));
    if (fe == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", L->id);
    rc = sluice_fsm_event_from_json(fe, &ev, err);
    json_decref(fe);
    if (rc != SLUICE_OK)
        return sluice_error_prefix(err, "launch %s: event %lld", L->id, (long long)seq);
    rc = sluice_fsm_apply(&L->fsm, &ev, &tr, err);
    sluice_fsm_event_clear(&ev);
    if (rc == SLUICE_ESTATE) {
        sluice_log(SLUICE_LOG_DEBUG, "launch %s: event %lld (%s) not applicable: %s", L->id,
                   (long long)seq, name, err != NULL ? err->text : "");
        sluice_error_clear(err);
        return SLUICE_OK;
    }
    if (rc != SLUICE_OK)
        return rc;
    if (!quiet)
        notify(l, L, name, &tr, prev_result);
    return SLUICE_OK;
}

static sluice_err sync_launch(sluice_launcher_t *l, launch_t *L, bool quiet, sluice_error_t *err)
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
    s->copy = L->fsm;
    s->t = now_ms(l);
    ev->seq = L->fsm.last_seq + 1;
    ev->time = launcher_fsm_time(s->t);
    if ((rc = sluice_fsm_event_to_json(ev, &s->entry, err)) != SLUICE_OK)
        return rc;
    if (sluice_fsm_apply(&s->copy, ev, NULL, NULL) != SLUICE_OK)
        s->copy = L->fsm;
    s->ids = json_array();
    for (size_t i = 0; s->ids != NULL && i < s->copy.n_job_ids; i++)
        json_array_append_new(s->ids, json_integer((json_int_t)s->copy.job_ids[i]));
    s->sum = (sluice_store_summary_t)SLUICE_STORE_SUMMARY_INIT;
    s->sum.state = sluice_fsm_state_name(s->copy.state);
    s->sum.terminal = s->copy.state == SLUICE_FSM_DONE;
    s->sum.set_result = s->sum.terminal;
    s->sum.result_code = s->copy.result;
    s->sum.reason = s->copy.reason;
    s->sum.attempt = (int)s->copy.attempt;
    s->sum.job_ids = s->ids;
    return SLUICE_OK;
}

/* Append an fsm event (summary computed on a copy), then fold it in. */
sluice_err launcher_record(sluice_launcher_t *l,
                           launch_t *L,
                           sluice_fsm_event_t *ev,
                           const char *caller,
                           sluice_error_t *err)
{
    staged_t s;
    sluice_err rc;

    if ((rc = stage_event(l, L, ev, &s, err)) != SLUICE_OK)
        goto out;
    rc = sluice_store_append_event_and_update(l->store, L->id, sluice_fsm_event_name(ev->type),
                                              json_object_get(s.entry, "context"), caller, s.t,
                                              &s.sum, NULL, err);
    if (rc == SLUICE_ESTATE) {
        sluice_error_clear(err);
        rc = sluice_store_append_event(l->store, L->id, sluice_fsm_event_name(ev->type),
                                       json_object_get(s.entry, "context"), caller, s.t, NULL, err);
    }
out:
    staged_clear(&s);
    if (rc != SLUICE_OK)
        return rc;
    count_event(l, ev);
    l->activity = true;
    return sync_launch(l, L, false, err);
}

/* Record one fsm event for each of `n` launches in ONE store transaction,
 * then fold each in.  Either every event is stored or none is. */
sluice_err launcher_record_many(sluice_launcher_t *l,
                                launch_t *const *who,
                                sluice_fsm_event_t *evs,
                                size_t n,
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
    if ((rc = sluice_store_append_many(l->store, items, n, err)) != SLUICE_OK)
        goto out;
    l->activity = true;
    for (size_t i = 0; i < n && rc == SLUICE_OK; i++)
        rc = sync_launch(l, who[i], false, err);
out:
    for (size_t i = 0; s != NULL && i < staged; i++)
        staged_clear(&s[i]);
    free(s);
    free(items);
    return rc;
}

/* Append a bookkeeping event (steals `ctx`). */
sluice_err
launcher_note(sluice_launcher_t *l, launch_t *L, const char *name, json_t *ctx, sluice_error_t *err)
{
    sluice_err rc =
        sluice_store_append_event(l->store, L->id, name, ctx, NULL, now_ms(l), NULL, err);

    json_decref(ctx);
    if (rc != SLUICE_OK)
        return rc;
    return sync_launch(l, L, true, err);
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

sluice_err launcher_record_observed(sluice_launcher_t *l,
                                    launch_t *L,
                                    sluice_lookup lookup,
                                    sluice_lookup_source source,
                                    const sluice_jobview_t *views,
                                    size_t n,
                                    sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_err rc;

    if (lookup == SLUICE_LOOKUP_UNAVAILABLE && L->last_unavailable)
        return SLUICE_OK; /* one record per outage: it already broke the pending chain */
    memset(&ev, 0, sizeof(ev));
    ev.type = SLUICE_EV_OBSERVED;
    ev.lookup = lookup;
    ev.source = source;
    if (lookup == SLUICE_LOOKUP_FOUND) {
        if (copy_views(views, n, &ev.jobs) != SLUICE_OK)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        ev.n_jobs = n;
        launcher_mark_failed_unschedulable(l, ev.jobs, n);
        if (!launcher_fill_hidden_bases(L->views, L->n_views, ev.jobs, n)) {
            sluice_log(SLUICE_LOG_WARNING,
                       "launch %s: Slurm reported a job state sluice does not know; "
                       "counted as unavailable",
                       L->id);
            sluice_fsm_event_clear(&ev);
            memset(&ev, 0, sizeof(ev));
            if (L->last_unavailable)
                return SLUICE_OK;
            ev.type = SLUICE_EV_OBSERVED;
            ev.lookup = lookup = SLUICE_LOOKUP_UNAVAILABLE;
            ev.source = source;
        }
    }
    rc = launcher_record(l, L, &ev, NULL, err);
    sluice_fsm_event_clear(&ev);
    if (rc == SLUICE_OK) {
        L->last_unavailable = lookup == SLUICE_LOOKUP_UNAVAILABLE;
        L->last_obs_ms = now_ms(l);
    }
    return rc;
}

/* ---- loading ----------------------------------------------------------- */

static void
fsm_config_for(const sluice_launcher_t *l, const json_t *request, sluice_fsm_config_t *cfg)
{
    const json_t *pt = json_object_get(request, "pending_timeout");

    sluice_fsm_config_default(cfg);
    cfg->miss_budget = l->o.miss_budget;
    cfg->miss_spacing = l->o.miss_spacing_s;
    cfg->pending_timeout = l->o.pending_timeout_s;
    if (json_is_integer(pt) && json_integer_value(pt) > 0)
        cfg->pending_timeout = (double)json_integer_value(pt);
    cfg->requeue_allowed = json_is_true(json_object_get(request, "requeue"));
}

sluice_err launcher_track(sluice_launcher_t *l,
                          const char *id,
                          const char *site,
                          int64_t created_ms,
                          const json_t *req,
                          launch_t **out,
                          sluice_error_t *err)
{
    const json_t *dep;
    const json_t *names;
    launch_t *L = NULL;
    sluice_fsm_config_t cfg;
    sluice_err rc = SLUICE_OK;

    if ((L = calloc(1, sizeof(*L))) == NULL || (L->id = strdup(id)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    L->site = dup_or(site, l->site);
    L->created_ms = created_ms;
    dep = json_object_get(req, "depends_on");
    if (json_is_object(dep)) {
        L->dep_id = dup_or(json_string_value(json_object_get(dep, "launch_id")), "");
        L->dep_cond = dup_or(json_string_value(json_object_get(dep, "condition")), "after");
    }
    names = json_object_get(req, "secret_names");
    L->needs_secrets = json_is_array(names) && json_array_size(names) > 0;
    L->next_seq = 1;
    fsm_config_for(l, req, &cfg);
    sluice_fsm_launch_init(&L->fsm, &cfg);
    if ((rc = sync_launch(l, L, true, err)) != SLUICE_OK)
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
    launch_free(L);
    return rc;
}

static sluice_err
load_launch(sluice_launcher_t *l, const char *id, launch_t **out, sluice_error_t *err)
{
    json_t *row = NULL;
    sluice_err rc;

    if ((rc = sluice_store_get_launch(l->store, id, &row, err)) != SLUICE_OK)
        return rc;
    rc = launcher_track(l, id, json_string_value(json_object_get(row, "site")),
                        (int64_t)json_integer_value(json_object_get(row, "created_ms")),
                        json_object_get(row, "request"), out, err);
    json_decref(row);
    return rc;
}

/* ---- lifecycle --------------------------------------------------------- */

/* The launcher's own copy of the pending reasons that never clear. */
static sluice_err
copy_reasons(sluice_launcher_t *l, const sluice_launcher_opts_t *opts, sluice_error_t *err)
{
    const char *const *src = opts->unschedulable_reasons;
    size_t n = opts->n_unschedulable_reasons;

    if (src == NULL) {
        src = launcher_default_unschedulable;
        for (n = 0; src[n] != NULL; n++)
            ;
    }
    l->o.unschedulable_reasons = NULL;
    if ((l->unsched = calloc(n > 0 ? n : 1, sizeof(*l->unsched))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    for (; l->n_unsched < n; l->n_unsched++) {
        if (src[l->n_unsched] == NULL ||
            (l->unsched[l->n_unsched] = strdup(src[l->n_unsched])) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    }
    return SLUICE_OK;
}

sluice_err sluice_launcher_new(sluice_launcher_t **out,
                               const sluice_launcher_opts_t *opts,
                               sluice_error_t *err)
{
    sluice_launcher_t *l = NULL;
    sluice_err rc;

    if (out == NULL || opts == NULL || opts->store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: out, opts and opts->store required");
    if (opts->cluster.submit == NULL || opts->cluster.get_job == NULL ||
        opts->cluster.job_states == NULL || opts->cluster.find_live_by_name == NULL ||
        opts->cluster.find_acct_by_name == NULL || opts->cluster.acct_job == NULL ||
        opts->cluster.cancel == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: every cluster operation is required");
    if ((l = calloc(1, sizeof(*l))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    l->o = *opts;
    l->store = opts->store;
    l->cl = opts->cluster;
    l->st = opts->staging;
    l->user = dup_or(opts->user, "");
    l->site = dup_or(opts->site, "default");
    l->prefix = dup_or(opts->job_name_prefix, "sluice");
    l->state_dir = dup_or(opts->state_dir, sluice_store_dir(opts->store));
    if (l->user == NULL || l->site == NULL || l->prefix == NULL || l->state_dir == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = copy_reasons(l, opts, err)) != SLUICE_OK)
        goto fail;
    if (l->o.miss_budget == 0)
        l->o.miss_budget = 5;
    if (!(l->o.miss_spacing_s > 0))
        l->o.miss_spacing_s = 6;
    if (!(l->o.absence_delay_s > 0))
        l->o.absence_delay_s = 60;
    if (l->o.absence_lookups == 0)
        l->o.absence_lookups = 3;
    if (!(l->o.absence_spacing_s > 0))
        l->o.absence_spacing_s = 10;
    if (!(l->o.pending_timeout_s > 0))
        l->o.pending_timeout_s = 600;
    if (l->o.poll_min_ms <= 0)
        l->o.poll_min_ms = 1000;
    /* No interval from the site: the longest wait follows the cluster's
     * status read (launcher_adapt_interval). */
    l->poll_auto = l->o.poll_max_ms <= 0;
    if (l->o.poll_max_ms < l->o.poll_min_ms)
        l->o.poll_max_ms = l->o.poll_min_ms > 10000 ? l->o.poll_min_ms : 10000;
    if (!(l->o.rpc_per_sec > 0))
        l->o.rpc_per_sec = DEFAULT_RPC_PER_SEC;
    if (!(l->o.submit_per_sec > 0))
        l->o.submit_per_sec = DEFAULT_SUBMIT_PER_SEC;
    if (l->o.submit_in_flight == 0)
        l->o.submit_in_flight = DEFAULT_IN_FLIGHT;
    if (l->o.submit_in_flight > MAX_IN_FLIGHT)
        l->o.submit_in_flight = MAX_IN_FLIGHT;
    if (!(l->o.submit_timeout_s > 0))
        l->o.submit_timeout_s = 30;
    if (l->o.now_ms == NULL)
        l->o.now_ms = real_now_ms;
    if (l->o.sleep_ms == NULL)
        l->o.sleep_ms = real_sleep_ms;
    l->tokens = l->o.rpc_per_sec;
    l->tokens_ms = now_ms(l);
    l->submit_tokens = l->o.submit_per_sec;
    l->submit_tokens_ms = l->tokens_ms;
    l->interval_ms = l->o.poll_min_ms;
    l->last_read_ms = l->tokens_ms;
    if ((rc = launcher_intake_init(l, err)) != SLUICE_OK)
        goto fail;
    if ((rc = sluice_store_lock_supervisor(l->store, err)) != SLUICE_OK)
        goto fail;
    *out = l;
    return SLUICE_OK;
fail:
    sluice_launcher_free(l);
    return rc;
}

void sluice_launcher_free(sluice_launcher_t *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->n; i++)
        launch_free(l->v[i]);
    free(l->v);
    launcher_intake_free(l);
    if (l->store != NULL)
        sluice_store_unlock_supervisor(l->store);
    free(l->user);
    free(l->site);
    free(l->prefix);
    free(l->state_dir);
    for (size_t i = 0; i < l->n_unsched; i++)
        free(l->unsched[i]);
    free(l->unsched);
    free(l);
}

size_t sluice_launcher_tracked(const sluice_launcher_t *l)
{
    return l != NULL ? l->n + atomic_load(&l->in_new) : 0;
}

/* The adaptive interval, cut short by the earliest resend of a POST that
 * never left (also after a cycle that failed half-way). */
int64_t sluice_launcher_next_interval_ms(const sluice_launcher_t *l)
{
    int64_t now, wake;

    if (l == NULL)
        return 1000;
    now = l->o.now_ms(l->o.clock_arg);
    wake = launcher_submit_wake(l, now);
    if (wake >= 0 && wake - now < l->interval_ms)
        return wake - now;
    return l->interval_ms;
}

static sluice_err check_alive(const sluice_launcher_t *l, sluice_error_t *err)
{
    if (l == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: required");
    if (l->dead)
        return sluice_errorf(err, SLUICE_ESTATE, "launcher: stopped at a kill point");
    return SLUICE_OK;
}

/* ---- accept and cancel ------------------------------------------------- */

sluice_err sluice_launcher_cancel(sluice_launcher_t *l,
                                  const char *launch_id,
                                  const char *caller,
                                  sluice_error_t *err)
{
    launch_t *L;
    sluice_fsm_event_t ev;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    if (launch_id == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launch_id: required");
    /* A launch accepted a moment ago may still be on the intake, or in the
     * store from another process: track it first, so the intent is kept. */
    if ((rc = take_in(l, false, err)) != SLUICE_OK)
        return rc;
    L = launcher_find_launch(l, launch_id);
    if (L == NULL) {
        json_t *row = NULL;
        /* Unknown or already DONE: DONE is idempotently fine. */
        if ((rc = sluice_store_get_launch(l->store, launch_id, &row, err)) != SLUICE_OK)
            return rc;
        json_decref(row);
        return SLUICE_OK;
    }
    if ((rc = sync_launch(l, L, false, err)) != SLUICE_OK)
        return rc;
    if (L->fsm.state == SLUICE_FSM_DONE || L->fsm.intent == SLUICE_CANCEL_CALLER)
        return SLUICE_OK;
    memset(&ev, 0, sizeof(ev));
    ev.type = SLUICE_EV_CANCEL_REQUESTED;
    ev.caller =
        strndup(caller != NULL && caller[0] != '\0' ? caller : "unknown", SLUICE_FSM_NAME_MAX - 1);
    if (ev.caller == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    rc = launcher_record(l, L, &ev, caller, err);
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* ---- cancel ------------------------------------------------------------ */

/* Whether a fresh read shows a component that is no longer pending (a base
 * a v0.0.38 flag hides is filled in from the last records first). */
static bool started(const launch_t *L, sluice_jobview_t *v, size_t n)
{
    (void)launcher_fill_hidden_bases(L->views, L->n_views, v, n);
    for (size_t i = 0; i < n; i++) {
        if (v[i].base != SLUICE_JOB_PENDING && v[i].base != SLUICE_JOB_BASE_UNKNOWN)
            return true;
    }
    return false;
}

static sluice_err do_cancel(sluice_launcher_t *l, launch_t *L, sluice_error_t *err)
{
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    uint64_t id;
    sluice_lookup r;
    sluice_error_t cerr = SLUICE_ERROR_INIT;
    sluice_err rc = SLUICE_OK;
    const char *why = NULL;

    if (L->fsm.n_job_ids == 0 || L->cancel_refused)
        return SLUICE_OK;
    if (l->tokens < 2.0)
        return SLUICE_OK;
    id = L->fsm.job_ids[0];
    launcher_take_token(l);
    r = l->cl.get_job(l->cl.arg, id, &v, &n);
    if (r == SLUICE_LOOKUP_UNAVAILABLE)
        return SLUICE_OK;
    if (r == SLUICE_LOOKUP_NOT_FOUND)
        return launcher_record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL, 0,
                                        err);
    for (size_t i = 0; i < n && why == NULL; i++) {
        if (!launcher_same_str(v[i].name, L->fsm.job_name))
            why = "job name";
        else if (!launcher_same_str(v[i].comment, L->fsm.comment))
            why = "comment marker";
        else if (!launcher_same_str(v[i].user_name, l->user))
            why = "user";
    }
    if (n == 0)
        why = "empty record";
    if (why != NULL) {
        L->cancel_refused = true;
        sluice_log(SLUICE_LOG_ERR,
                   "critical: launch %s: job %" PRIu64 " does not match our %s; cancel refused",
                   L->id, id, why);
        rc = launcher_note(l, L, "cancel-refused",
                           json_pack("{s:I, s:s}", "job_id", (json_int_t)id, "mismatch", why), err);
        goto out;
    }
    if ((L->fsm.intent == SLUICE_CANCEL_UNSCHEDULABLE ||
         L->fsm.intent == SLUICE_CANCEL_PENDING_TIMEOUT) &&
        !L->fsm.cancel_sent && started(L, v, n)) {
        /* The cancel is for a job that waits; this one no longer does (the
         * decision may have come from a record older than the batched
         * state).  The fresh read is the truth: record it, and go on. */
        rc = launcher_record_observed(l, L, SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, v, n, err);
        if (rc == SLUICE_OK && L->fsm.state == SLUICE_FSM_CANCELLING)
            rc = launcher_record_simple(l, L, SLUICE_EV_CANCEL_WITHDRAWN, NULL, err);
        launcher_views_free(L->views, L->n_views);
        L->views = v;
        L->n_views = n;
        L->have_state = false; /* the next batched read sets the cache again */
        return rc;
    }
    launcher_take_token(l);
    if (l->cl.cancel(l->cl.arg, id, 0, &cerr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: cancel of job %" PRIu64 ": %s", L->id, id,
                   cerr.text);
        goto out;
    }
    rc = launcher_record_simple(l, L, SLUICE_EV_CANCEL_SENT, NULL, err);
out:
    launcher_views_free(v, n);
    return rc;
}

/* ---- per-launch actions ------------------------------------------------ */

/* How long settling waits for exit files that cannot be read yet, counted
 * from the observation that started settling (replayed: a restart does not
 * start the wait again). */
#define POOL_EXITS_WAIT_S 30.0

static sluice_err do_pool_exits(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    sluice_pool_exit_t pe[SLUICE_FSM_MAX_POOLS];
    size_t n = 0;
    bool failed = false;
    sluice_err rc;

    if (l->st.read_pool_exits != NULL) {
        sluice_error_t herr = SLUICE_ERROR_INIT;
        if (l->st.read_pool_exits(l->st.arg, L->id, L->fsm.attempt, pe, SLUICE_FSM_MAX_POOLS, &n,
                                  &herr) != SLUICE_OK) {
            sluice_log(SLUICE_LOG_WARNING, "launch %s: pool exit files: %s", L->id, herr.text);
            n = 0;
            failed = true;
        }
    }
    /* A read that failed, or no file at all after an unasked CANCELLED
     * (the files may not be visible on the service's side of the shared
     * file system yet): read again next cycle, for a bounded time. */
    if ((failed || (n == 0 && L->fsm.unasked_cancel)) &&
        launcher_fsm_time(now) - L->fsm.settle_time < POOL_EXITS_WAIT_S)
        return SLUICE_OK;
    for (size_t i = 0; i < n && i < SLUICE_FSM_MAX_POOLS; i++) {
        sluice_fsm_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = SLUICE_EV_POOL_EXIT;
        ev.pool = strndup(pe[i].name, SLUICE_FSM_NAME_MAX - 1);
        ev.exit_code = pe[i].exit_code;
        ev.signal = pe[i].signal;
        ev.first = pe[i].first;
        ev.signalled = pe[i].signalled;
        rc = ev.pool != NULL ? launcher_record(l, L, &ev, NULL, err)
                             : sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        sluice_fsm_event_clear(&ev);
        if (rc != SLUICE_OK)
            return rc;
    }
    return launcher_record_simple(l, L, SLUICE_EV_POOL_EXITS_READ, NULL, err);
}

static sluice_err do_peers(sluice_launcher_t *l, launch_t *L, sluice_error_t *err)
{
    launch_t *D;
    sluice_error_t herr = SLUICE_ERROR_INIT;

    if (L->peers_written || L->dep_id == NULL || L->fsm.state == SLUICE_FSM_DONE)
        return SLUICE_OK;
    D = launcher_find_launch(l, L->dep_id);
    if (D == NULL || D->fsm.state != SLUICE_FSM_RUNNING || D->n_views == 0)
        return SLUICE_OK;
    if (l->st.write_peers != NULL &&
        l->st.write_peers(l->st.arg, L->id, L->fsm.attempt > 0 ? L->fsm.attempt : 1, D->id,
                          D->views, D->n_views, &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: peers.env: %s", L->id, herr.text);
        return SLUICE_OK;
    }
    return launcher_note(l, L, "peers-written",
                         json_pack("{s:s, s:s}", "first", D->id, "nodes",
                                   D->views[0].nodes != NULL ? D->views[0].nodes : ""),
                         err);
}

static sluice_err do_archive(sluice_launcher_t *l, launch_t *L, sluice_error_t *err)
{
    char dir[4096];
    sluice_error_t herr = SLUICE_ERROR_INIT;

    snprintf(dir, sizeof(dir), "%s/artifacts", l->state_dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", dir, strerror(errno));
    snprintf(dir, sizeof(dir), "%s/artifacts/%s", l->state_dir, L->id);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", dir, strerror(errno));
    if (l->st.archive != NULL &&
        l->st.archive(l->st.arg, L->id, L->fsm.attempt, dir, &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: archive: %s", L->id, herr.text);
        return SLUICE_OK; /* retried next cycle */
    }
    return launcher_note(l, L, "archived", json_pack("{s:s}", "dir", dir), err);
}

static sluice_err act_on(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    unsigned due = sluice_fsm_due(&L->fsm, launcher_fsm_time(now));
    sluice_err rc = SLUICE_OK;
    char why[SLUICE_FSM_NAME_MAX];

    /* Submits were batched by launcher_submit_due(). */
    if (!(due & (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT)) && (due & SLUICE_DUE_RECONCILE))
        rc = launcher_do_reconcile(l, L, now, err);
    if (rc == SLUICE_OK && L->fsm.state != SLUICE_FSM_DONE)
        rc = launcher_do_old_attempts(l, L, now, err);
    /* The records may be older than the batched state when the read budget
     * put the full read off: a job jobs/state shows started is not judged
     * by its old pending reason. */
    if (rc == SLUICE_OK && !l->o.wait_unschedulable && L->fsm.state == SLUICE_FSM_PENDING &&
        L->fsm.intent == SLUICE_CANCEL_NONE && L->n_views > 0 &&
        !(L->have_batch && L->batch_base != L->views[0].base) &&
        launcher_unschedulable(l, L->views, L->n_views, why, sizeof(why)))
        rc = launcher_record_simple(l, L, SLUICE_EV_UNSCHEDULABLE, why, err);
    due = sluice_fsm_due(&L->fsm, launcher_fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_PENDING_TIMEOUT))
        rc = launcher_record_simple(l, L, SLUICE_EV_PENDING_TIMEOUT, NULL, err);
    due = sluice_fsm_due(&L->fsm, launcher_fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_CANCEL))
        rc = do_cancel(l, L, err);
    due = sluice_fsm_due(&L->fsm, launcher_fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_POOL_EXITS))
        rc = do_pool_exits(l, L, now, err);
    if (rc == SLUICE_OK && (due & SLUICE_DUE_ACCOUNTING_LOOKUP) && L->fsm.n_job_ids > 0)
        rc = launcher_do_accounting(l, L, now, err);
    return rc;
}

/* Pick up events appended by other processes (a CLI cancel, an accept). */
static sluice_err pick_up(sluice_launcher_t *l, sluice_error_t *err)
{
    for (;;) {
        json_t *evs = NULL;
        int64_t next = l->gseq;
        size_t i;
        json_t *e;
        sluice_err rc = sluice_store_events_since(l->store, l->gseq, 500, &evs, &next, err);

        if (rc != SLUICE_OK)
            return rc;
        json_array_foreach(evs, i, e)
        {
            const char *id = json_string_value(json_object_get(e, "launch_id"));
            int64_t seq = (int64_t)json_integer_value(json_object_get(e, "seq"));
            launch_t *L = id != NULL ? launcher_find_launch(l, id) : NULL;

            if (L == NULL && id != NULL && seq == 1) {
                /* Maybe accepted on another thread of this process: its
                 * accept holds the intake lock from its store write to its
                 * push, so with the lock taken the entry is on the intake
                 * (with the launch's secrets) if it is ours at all. */
                launcher_intake_lock(l);
                rc = launcher_intake_drain(l, false, err);
                launcher_intake_unlock(l);
                L = rc == SLUICE_OK ? launcher_find_launch(l, id) : NULL;
                if (rc == SLUICE_OK && L == NULL)
                    rc = load_launch(l, id, NULL, err);
            } else if (L != NULL && seq >= L->next_seq) {
                rc = sync_launch(l, L, false, err);
            }
            if (rc != SLUICE_OK)
                break;
        }
        json_decref(evs);
        if (rc != SLUICE_OK)
            return rc;
        if (next == l->gseq)
            return SLUICE_OK;
        l->gseq = next;
    }
}

/* The intake (launches accepted on other threads), then the events of
 * other writers.  Only the drain holds the intake lock, so accepts never
 * wait for the pick-up; a launch accepted here is still always tracked
 * from its intake entry, secrets and all (see pick_up). */
static sluice_err take_in(sluice_launcher_t *l, bool clear_wake, sluice_error_t *err)
{
    sluice_err rc;

    launcher_intake_lock(l);
    rc = launcher_intake_drain(l, clear_wake, err);
    launcher_intake_unlock(l);
    if (rc == SLUICE_OK)
        rc = pick_up(l, err);
    return rc;
}

sluice_err sluice_launcher_step(sluice_launcher_t *l, sluice_error_t *err)
{
    double t[5];
    int64_t now;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    now = now_ms(l);
    l->tokens += (double)(now - l->tokens_ms) / 1000.0 * l->o.rpc_per_sec;
    if (l->tokens > l->o.rpc_per_sec)
        l->tokens = l->o.rpc_per_sec;
    if (l->tokens < 1.0 && l->o.rpc_per_sec < 1.0)
        l->tokens = 1.0;
    l->tokens_ms = now;
    l->submit_tokens += (double)(now - l->submit_tokens_ms) / 1000.0 * l->o.submit_per_sec;
    if (l->submit_tokens > l->o.submit_per_sec)
        l->submit_tokens = l->o.submit_per_sec;
    if (l->submit_tokens < 1.0 && l->o.submit_per_sec < 1.0)
        l->submit_tokens = 1.0;
    l->submit_tokens_ms = now;
    t[0] = launcher_mono_ms();
    if ((rc = take_in(l, true, err)) != SLUICE_OK)
        return rc;
    t[1] = launcher_mono_ms();
    /* The batched read first: it has priority in the budget. */
    if ((rc = launcher_poll_live(l, now, err)) != SLUICE_OK)
        return rc;
    t[2] = launcher_mono_ms();
    if ((rc = launcher_submit_due(l, now, err)) != SLUICE_OK)
        return rc;
    t[3] = launcher_mono_ms();
    for (size_t i = 0; i < l->n && rc == SLUICE_OK && !l->dead; i++)
        if (l->v[i]->fsm.state != SLUICE_FSM_DONE)
            rc = act_on(l, l->v[i], now, err);
    if (rc != SLUICE_OK)
        return rc;
    for (size_t i = 0; i < l->n && rc == SLUICE_OK; i++)
        rc = do_peers(l, l->v[i], err);
    for (size_t i = 0; i < l->n && rc == SLUICE_OK;) {
        launch_t *L = l->v[i];
        if (L->fsm.state == SLUICE_FSM_DONE && !L->archived)
            rc = do_archive(l, L, err);
        if (rc == SLUICE_OK && L->archived && L->fsm.state == SLUICE_FSM_DONE)
            drop_launch(l, L);
        else
            i++;
    }
    if (rc != SLUICE_OK)
        return rc;
    launcher_adapt_interval(l, now);
    t[4] = launcher_mono_ms();
    rc = take_in(l, false, err);
    sluice_log(SLUICE_LOG_DEBUG,
               "cycle: %zu tracked; intake %.1f, poll %.1f, submit %.1f, actions %.1f, "
               "intake %.1f ms",
               l->n, t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], launcher_mono_ms() - t[4]);
    return rc;
}

/* ---- recovery ---------------------------------------------------------- */

static size_t report_orphans(sluice_launcher_t *l)
{
    char **names = NULL;
    size_t n = 0;
    size_t orphans = 0;
    sluice_error_t herr = SLUICE_ERROR_INIT;

    if (l->st.list_staging == NULL)
        return 0;
    if (l->st.list_staging(l->st.arg, &names, &n, &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "staging scan: %s", herr.text);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        bool known = false;
        for (size_t j = 0; j < l->n && !known; j++) {
            char h[MARKER_SHA8_SIZE];
            marker_sha8(l->v[j]->id, h);
            known = strcmp(h, names[i]) == 0 || strcmp(l->v[j]->id, names[i]) == 0;
        }
        if (!known) {
            orphans++;
            sluice_log(SLUICE_LOG_WARNING,
                       "staging directory %s belongs to no live launch: left in place", names[i]);
        }
        free(names[i]);
    }
    free(names);
    return orphans;
}

static sluice_err recover_locked(sluice_launcher_t *l, size_t *orphans_out, sluice_error_t *err)
{
    json_t *live = NULL;
    json_t *row;
    size_t i;
    size_t orphans;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    /* The cursor first: what is appended from now on is picked up. */
    do {
        json_t *evs = NULL;
        int64_t next = l->gseq;
        if ((rc = sluice_store_events_since(l->store, l->gseq, 1000, &evs, &next, err)) !=
            SLUICE_OK)
            return rc;
        json_decref(evs);
        if (next == l->gseq)
            break;
        l->gseq = next;
    } while (1);
    if ((rc = sluice_store_list_live(l->store, &live, err)) != SLUICE_OK)
        return rc;
    json_array_foreach(live, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "launch_id"));
        launch_t *L = id != NULL ? launcher_find_launch(l, id) : NULL;

        if (id == NULL)
            continue;
        if (L == NULL && (rc = load_launch(l, id, &L, err)) != SLUICE_OK)
            goto out;
        if ((rc = sync_launch(l, L, true, err)) != SLUICE_OK)
            goto out;
        if (L->fsm.state == SLUICE_FSM_ACCEPTED && L->needs_secrets && !L->has_secrets) {
            rc = launcher_record_simple(l, L, SLUICE_EV_SECRET_UNAVAILABLE, NULL, err);
        } else if (L->fsm.state == SLUICE_FSM_SUBMITTING && !L->fsm.uncertain &&
                   !L->fsm.may_retry && L->fsm.n_job_ids == 0) {
            rc = launcher_record_simple(l, L, SLUICE_EV_SUBMIT_UNCERTAIN,
                                        "service restarted during submit", err);
        }
        if (rc != SLUICE_OK)
            goto out;
    }
    orphans = report_orphans(l);
    if (orphans_out != NULL)
        *orphans_out = orphans;
out:
    json_decref(live);
    return rc;
}

/* Under the intake lock: a launch accepted while the store is read is
 * tracked from its intake entry (with its secrets), never from the store
 * alone. */
sluice_err sluice_launcher_recover(sluice_launcher_t *l, size_t *orphans_out, sluice_error_t *err)
{
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    launcher_intake_lock(l);
    rc = launcher_intake_drain(l, false, err);
    if (rc == SLUICE_OK)
        rc = recover_locked(l, orphans_out, err);
    launcher_intake_unlock(l);
    return rc;
}

/* ---- loops ------------------------------------------------------------- */

sluice_err sluice_launcher_run(sluice_launcher_t *l, volatile int *stop, sluice_error_t *err)
{
    sluice_err rc;

    while (stop == NULL || !*stop) {
        if ((rc = sluice_launcher_step(l, err)) != SLUICE_OK) {
            if (l == NULL || l->dead || rc == SLUICE_ENOMEM)
                return rc;
            sluice_log(SLUICE_LOG_WARNING, "launcher cycle: %s", err != NULL ? err->text : "");
            sluice_error_clear(err);
        }
        (void)sluice_launcher_idle(l, sluice_launcher_next_interval_ms(l));
    }
    return SLUICE_OK;
}

sluice_err sluice_launcher_wait(sluice_launcher_t *l,
                                const char *launch_id,
                                sluice_launcher_transition_fn fn,
                                void *arg,
                                int *result_out,
                                sluice_error_t *err)
{
    json_t *row = NULL;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    if (launch_id == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launch_id: required");
    l->wait_id = launch_id;
    l->wait_fn = fn;
    l->wait_arg = arg;
    for (;;) {
        launch_t *L = launcher_find_launch(l, launch_id);
        if (L == NULL || L->fsm.state == SLUICE_FSM_DONE) {
            if ((rc = sluice_store_get_launch(l->store, launch_id, &row, err)) != SLUICE_OK)
                break;
            if (json_is_true(json_object_get(row, "terminal"))) {
                if (result_out != NULL)
                    *result_out = (int)json_integer_value(json_object_get(row, "result_code"));
                break;
            }
            json_decref(row);
            row = NULL;
        }
        if ((rc = sluice_launcher_step(l, err)) != SLUICE_OK)
            break;
        (void)sluice_launcher_idle(l, sluice_launcher_next_interval_ms(l));
    }
    json_decref(row);
    l->wait_id = NULL;
    l->wait_fn = NULL;
    l->wait_arg = NULL;
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

void sluice_launcher_stats(const sluice_launcher_t *l, sluice_launcher_stats_t *out)
{
    const struct launcher_counters *k = l != NULL ? &l->counters : NULL;

    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (k == NULL)
        return;
    out->adoptions_live = atomic_load(&k->adoptions_live);
    out->adoptions_accounting = atomic_load(&k->adoptions_accounting);
    out->absences_confirmed = atomic_load(&k->absences_confirmed);
    out->accounting_misses = atomic_load(&k->accounting_misses);
}
