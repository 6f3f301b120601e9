/* SPDX-License-Identifier: Apache-2.0 */
/* launcher.c - the supervisor: accept, submit exactly once, reconcile,
 * poll, cancel, archive, recover.
 *
 * Purpose:
 *   Drive every live launch of one store through the state machine.  The
 *   fsm decides (sluice_fsm_due), this file acts, records the outcome in the
 *   store, then folds the stored event back in (sync_launch).  A launch's
 *   in-memory state is thus always the replay of its log, whether the event
 *   came from us, from another process (a CLI cancel) or from before a
 *   restart.
 *
 * Notes:
 *   - Times: the store keeps epoch ms, the fsm epoch seconds (double).
 *     fsm_time() is the one conversion.
 *   - Events the fsm does not know (archived, cancel-refused,
 *     stale-job-cancelled, peers-written) are bookkeeping: stored for audit,
 *     read back by sync_launch, never given to the fsm.
 *   - A POST is never repeated blindly: a submit-started without an answer
 *     becomes submit-uncertain, and only the absence rule opens attempt+1.
 *   - Every action is idempotent and safe to repeat after a crash.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/evp.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#define DEFAULT_RPC_PER_SEC 50.0
#define DEFAULT_SUBMIT_PER_SEC 200.0
#define DEFAULT_IN_FLIGHT 4
#define MAX_IN_FLIGHT 16
#define ACCT_WINDOW_BEFORE_S 300
#define UNAVAILABLE_RETRY_MS 5000
#define SLUICE_LAUNCH_SECRETS_MAX 256

typedef struct {
    char *id;
    char *site;
    sluice_fsm_launch_t fsm;
    int64_t next_seq; /* next store seq to fold in */
    int64_t created_ms;
    char *dep_id; /* depends_on.launch_id */
    char *dep_cond;
    bool needs_secrets;
    char **secret_names; /* owned copies (values zeroed on free) */
    char **secret_values;
    size_t n_secrets;
    bool has_secrets;
    bool peers_written;
    bool archived;
    bool cancel_refused;
    /* poll cache */
    bool have_state;
    sluice_job_base last_base;
    uint32_t last_flags;
    sluice_jobview_t *views;
    size_t n_views;
    bool last_unavailable;
    int64_t last_obs_ms;
    int64_t next_acct_ms;
    /* reconciliation */
    unsigned absent_count;
    int64_t last_recon_ms;
    int64_t last_old_check_ms;
} launch_t;

/* sluice_launcher_stats() (at the end of the file). */
struct launcher_counters {
    atomic_ullong adoptions_live, adoptions_accounting, absences_confirmed, accounting_misses;
};

struct sluice_launcher {
    sluice_store_t *store;
    sluice_cluster_ops_t cl;
    sluice_staging_ops_t st;
    sluice_launcher_opts_t o; /* copies of the knobs; strings below */
    char *user;
    char *site;
    char *prefix;
    char *state_dir;
    launch_t **v;
    size_t n;
    size_t cap;
    int64_t gseq;
    double tokens; /* reads and cancels */
    int64_t tokens_ms;
    double submit_tokens; /* submits: a budget of their own */
    int64_t submit_tokens_ms;
    int64_t interval_ms;
    bool activity;
    bool dead;
    /* sluice_launcher_wait() */
    const char *wait_id;
    sluice_launcher_transition_fn wait_fn;
    void *wait_arg;
    struct launcher_counters counters;
};

static void count_event(sluice_launcher_t *l, const sluice_fsm_event_t *ev);

/* ---- small helpers ----------------------------------------------------- */

static double fsm_time(int64_t ms)
{
    return (double)ms / 1000.0;
}

/* Seconds-scale values (already multiplied) back to whole ms; never negative here. */
static int64_t to_ms(double x)
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

static int64_t now_ms(const sluice_launcher_t *l)
{
    return l->o.now_ms(l->o.clock_arg);
}

static char *dup_or(const char *s, const char *dflt)
{
    return strdup(s != NULL && s[0] != '\0' ? s : dflt);
}

static void sha8(const char *text, char out[9])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    memset(out, 0, 9);
    if (EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen < 4)
        return;
    snprintf(out, 9, "%02x%02x%02x%02x", md[0], md[1], md[2], md[3]);
}

int sluice_launcher_job_name(char *buf,
                             size_t size,
                             const char *prefix,
                             const char *site,
                             const char *launch_id,
                             uint32_t attempt)
{
    char h[9];

    sha8(launch_id != NULL ? launch_id : "", h);
    return snprintf(buf, size, "%s-%.32s-%s.%" PRIu32, prefix != NULL ? prefix : "sluice",
                    site != NULL ? site : "default", h, attempt);
}

static void comment_for(char *buf, size_t size, const char *launch_id, uint32_t attempt)
{
    snprintf(buf, size, "sluice:%s:%" PRIu32, launch_id, attempt);
}

static void views_free(sluice_jobview_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sluice_jobview_clear(&v[i]);
    free(v);
}

static bool same_str(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static uint64_t leader_of(const sluice_jobview_t *v)
{
    return v->het_job_id != 0 ? v->het_job_id : v->job_id;
}

static bool take_token(sluice_launcher_t *l)
{
    if (l->tokens < 1.0)
        return false;
    l->tokens -= 1.0;
    return true;
}

/* A kill point: true means "the process died here". */
static bool killed_at(sluice_launcher_t *l, const char *point)
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
            memset(L->secret_values[i], 0, strlen(L->secret_values[i]));
        free(L->secret_values[i]);
        free(L->secret_names[i]);
    }
    free(L->secret_values);
    free(L->secret_names);
    views_free(L->views, L->n_views);
    free(L->id);
    free(L->site);
    free(L->dep_id);
    free(L->dep_cond);
    free(L);
}

static launch_t *find_launch(const sluice_launcher_t *l, const char *id)
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
    int64_t t_ms = (int64_t)to_ms(L->fsm.last_time * 1000.0);

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
    fe = json_pack("{s:I, s:f, s:s, s:O}", "seq", seq, "time", fsm_time((int64_t)t_ms), "name",
                   name, "context", json_object_get(entry, "context"));
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
    ev->time = fsm_time(s->t);
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
static sluice_err record(sluice_launcher_t *l,
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
static sluice_err record_many(sluice_launcher_t *l,
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
static sluice_err
note(sluice_launcher_t *l, launch_t *L, const char *name, json_t *ctx, sluice_error_t *err)
{
    sluice_err rc =
        sluice_store_append_event(l->store, L->id, name, ctx, NULL, now_ms(l), NULL, err);

    json_decref(ctx);
    if (rc != SLUICE_OK)
        return rc;
    return sync_launch(l, L, true, err);
}

static sluice_err record_simple(sluice_launcher_t *l,
                                launch_t *L,
                                sluice_fsm_event_type type,
                                const char *detail,
                                sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_err rc;

    memset(&ev, 0, sizeof(ev));
    ev.type = type;
    if (detail != NULL && (ev.detail = strndup(detail, SLUICE_FSM_DETAIL_MAX - 1)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    rc = record(l, L, &ev, NULL, err);
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* Copy views into an event (the event owns its copies). */
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
        DUP(nodes);
        DUP(state_reason);
#undef DUP
    }
    *out = v;
    return SLUICE_OK;
}

/* v0.0.38 reports some flags in place of the base state: a job that timed
 * out reads "COMPLETING" until its epilog ends.  Give such a view the base
 * last seen for the same job, else the base its flag implies (a requeue or
 * hold flag: PENDING; a flag of an allocated job: RUNNING), so the state
 * machine keeps it live.  False when nothing tells (an unknown state name):
 * the caller then counts the lookup as UNAVAILABLE, which never ends a
 * launch. */
static bool
fill_hidden_bases(const sluice_jobview_t *prev, size_t n_prev, sluice_jobview_t *v, size_t n)
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

static sluice_err record_observed(sluice_launcher_t *l,
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
        if (!fill_hidden_bases(L->views, L->n_views, ev.jobs, n)) {
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
    rc = record(l, L, &ev, NULL, err);
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

/* Start tracking launch `id` from its stored request (borrowed) and fold
 * its log in. */
static sluice_err track_launch(sluice_launcher_t *l,
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
    rc = track_launch(l, id, json_string_value(json_object_get(row, "site")),
                      (int64_t)json_integer_value(json_object_get(row, "created_ms")),
                      json_object_get(row, "request"), out, err);
    json_decref(row);
    return rc;
}

/* ---- lifecycle --------------------------------------------------------- */

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
    if (l->o.now_ms == NULL)
        l->o.now_ms = real_now_ms;
    if (l->o.sleep_ms == NULL)
        l->o.sleep_ms = real_sleep_ms;
    l->tokens = l->o.rpc_per_sec;
    l->tokens_ms = now_ms(l);
    l->submit_tokens = l->o.submit_per_sec;
    l->submit_tokens_ms = l->tokens_ms;
    l->interval_ms = l->o.poll_min_ms;
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
    if (l->store != NULL)
        sluice_store_unlock_supervisor(l->store);
    free(l->user);
    free(l->site);
    free(l->prefix);
    free(l->state_dir);
    free(l);
}

size_t sluice_launcher_tracked(const sluice_launcher_t *l)
{
    return l != NULL ? l->n : 0;
}

int64_t sluice_launcher_next_interval_ms(const sluice_launcher_t *l)
{
    return l != NULL ? l->interval_ms : 1000;
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

static sluice_err check_render(const json_t *render, sluice_error_t *err)
{
    const json_t *jobs = json_object_get(render, "jobs");
    const json_t *j;
    size_t i;
    sluice_jobdesc_t d;
    sluice_err rc;

    if (!json_is_object(render) || !json_is_array(jobs) || json_array_size(jobs) == 0 ||
        json_array_size(jobs) > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "render: expected {script, jobs: [1..%d]}",
                             SLUICE_FSM_MAX_JOBS);
    json_array_foreach(jobs, i, j)
    {
        if ((rc = sluice_jobdesc_from_json(j, &d, err)) != SLUICE_OK)
            return sluice_error_prefix(err, "render.jobs[%zu]", i);
        sluice_jobdesc_clear(&d);
    }
    return SLUICE_OK;
}

sluice_err sluice_launcher_accept(sluice_launcher_t *l,
                                  const sluice_launcher_request_t *req,
                                  char **launch_id_out,
                                  int *existed_out,
                                  sluice_error_t *err)
{
    sluice_store_launch_spec_t spec;
    const char *id;
    int existed = 0;
    launch_t *L = NULL;
    char *id_copy = NULL;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    if (req == NULL || !json_is_object(req->request))
        return sluice_errorf(err, SLUICE_EINVAL, "request: expected an object");
    id = json_string_value(json_object_get(req->request, "launch_id"));
    if (id == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "request.launch_id: required");
    if ((rc = check_render(req->render, err)) != SLUICE_OK)
        return rc;
    memset(&spec, 0, sizeof(spec));
    spec.launch_id = id;
    spec.site = json_string_value(json_object_get(req->request, "site"));
    if (spec.site == NULL)
        spec.site = l->site;
    spec.study = json_string_value(json_object_get(req->request, "study"));
    spec.request = req->request;
    spec.render = req->render;
    spec.caller = req->caller;
    spec.time_ms = now_ms(l);
    if ((rc = sluice_store_create_launch(l->store, &spec, &existed, err)) != SLUICE_OK)
        return rc;
    if ((id_copy = strdup(id)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    L = find_launch(l, id);
    if (L == NULL && !existed) {
        /* What was just stored is in hand: no need to read the row (and
         * parse its render) back. */
        if ((rc = track_launch(l, id, spec.site, spec.time_ms, req->request, &L, err)) != SLUICE_OK)
            goto out;
    }
    if (L != NULL && !L->has_secrets && req->n_secrets > 0 && L->fsm.state == SLUICE_FSM_ACCEPTED) {
        L->secret_names = calloc(req->n_secrets, sizeof(char *));
        L->secret_values = calloc(req->n_secrets, sizeof(char *));
        if (L->secret_names == NULL || L->secret_values == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < req->n_secrets; i++) {
            L->secret_names[i] = strdup(req->secrets[i].name);
            L->secret_values[i] = strdup(req->secrets[i].value);
            L->n_secrets++;
            if (L->secret_names[i] == NULL || L->secret_values[i] == NULL) {
                rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
                goto out;
            }
        }
        L->has_secrets = true;
        L->needs_secrets = true;
    }
    l->activity = true;
    if (existed_out != NULL)
        *existed_out = existed;
    if (launch_id_out != NULL) {
        *launch_id_out = id_copy;
        id_copy = NULL;
    }
out:
    free(id_copy);
    return rc;
}

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
    L = find_launch(l, launch_id);
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
    rc = record(l, L, &ev, caller, err);
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* ---- submit and reconciliation ----------------------------------------- */

static sluice_err load_descs(sluice_launcher_t *l,
                             launch_t *L,
                             uint32_t attempt,
                             const char *dependency,
                             sluice_jobdesc_t **out,
                             size_t *n_out,
                             sluice_error_t *err)
{
    json_t *row = NULL;
    const json_t *render;
    const json_t *jobs;
    const json_t *script;
    sluice_jobdesc_t *d = NULL;
    size_t n = 0;
    char name[SLUICE_FSM_MARKER_MAX];
    char comment[SLUICE_FSM_MARKER_MAX];
    sluice_err rc;

    if ((rc = sluice_store_get_launch(l->store, L->id, &row, err)) != SLUICE_OK)
        return rc;
    render = json_object_get(row, "render");
    jobs = json_object_get(render, "jobs");
    if (!json_is_array(jobs) || json_array_size(jobs) == 0) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "launch %s: stored render has no jobs", L->id);
        goto out;
    }
    if ((d = calloc(json_array_size(jobs), sizeof(*d))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    sluice_launcher_job_name(name, sizeof(name), l->prefix, L->site, L->id, attempt);
    comment_for(comment, sizeof(comment), L->id, attempt);
    for (n = 0; n < json_array_size(jobs); n++) {
        if ((rc = sluice_jobdesc_from_json(json_array_get(jobs, n), &d[n], err)) != SLUICE_OK)
            goto out;
        free(d[n].name);
        free(d[n].comment);
        d[n].name = strdup(name);
        d[n].comment = strdup(comment);
        if (dependency != NULL) {
            free(d[n].dependency);
            d[n].dependency = strdup(dependency);
        }
    }
    script = json_object_get(render, "script");
    if (d[0].script == NULL && json_is_string(script))
        d[0].script = strdup(json_string_value(script));
    *out = d;
    *n_out = n;
    d = NULL;
    n = 0;
out:
    for (size_t i = 0; d != NULL && i <= n && i < json_array_size(jobs); i++)
        sluice_jobdesc_clear(&d[i]);
    free(d);
    json_decref(row);
    return rc;
}

/* The Slurm dependency of a launch: NULL when none (or not resolvable), and
 * *wait set when the first launch has no job yet. */
static bool dependency_for(sluice_launcher_t *l, launch_t *L, char *buf, size_t size, bool *wait)
{
    launch_t *D;

    *wait = false;
    if (L->dep_id == NULL || L->dep_id[0] == '\0')
        return false;
    D = find_launch(l, L->dep_id);
    if (D == NULL || D->fsm.state == SLUICE_FSM_DONE)
        return false;
    if (D->fsm.n_job_ids == 0) {
        *wait = true;
        return false;
    }
    snprintf(buf, size, "%s:%" PRIu64, L->dep_cond, D->fsm.job_ids[0]);
    return true;
}

static bool take_submit_token(sluice_launcher_t *l)
{
    if (l->submit_tokens < 1.0)
        return false;
    l->submit_tokens -= 1.0;
    return true;
}

/* One launch of a submit batch. */
typedef struct {
    launch_t *L;
    uint32_t attempt;
    char dep[64]; /* Slurm dependency when has_dep */
    bool has_dep;
    bool staged;
    sluice_error_t perr; /* why staging failed */
    sluice_jobdesc_t *d;
    size_t n;
} batch_entry_t;

static void batch_entry_clear(batch_entry_t *b)
{
    for (size_t i = 0; i < b->n; i++)
        sluice_jobdesc_clear(&b->d[i]);
    free(b->d);
    b->d = NULL;
    b->n = 0;
}

/* Select a launch for this cycle's batch: *ready_out false when not this
 * cycle (dependency without a job yet, secrets lost, no submit budget).
 * The submit token is taken here; staging comes next (stage_batch). */
static sluice_err batch_select(sluice_launcher_t *l,
                               launch_t *L,
                               batch_entry_t *b,
                               bool *ready_out,
                               bool *waited,
                               sluice_error_t *err)
{
    bool wait = false;

    *ready_out = false;
    memset(b, 0, sizeof(*b));
    b->L = L;
    b->attempt = L->fsm.attempt + 1;
    b->has_dep = dependency_for(l, L, b->dep, sizeof(b->dep), &wait);
    if (wait) {
        *waited = true;
        return SLUICE_OK;
    }
    if (L->needs_secrets && !L->has_secrets)
        return record_simple(l, L, SLUICE_EV_SECRET_UNAVAILABLE, NULL, err);
    if (!take_submit_token(l))
        return SLUICE_OK;
    *ready_out = true;
    return SLUICE_OK;
}

/* The staging of one batch entry: its directory and 0600 secret file. */
static void stage_one(sluice_launcher_t *l, batch_entry_t *b)
{
    launch_t *L = b->L;
    sluice_secret_t sec[SLUICE_LAUNCH_SECRETS_MAX];
    size_t ns = L->n_secrets < SLUICE_LAUNCH_SECRETS_MAX ? L->n_secrets : SLUICE_LAUNCH_SECRETS_MAX;

    for (size_t i = 0; i < ns; i++) {
        sec[i].name = L->secret_names[i];
        sec[i].value = L->secret_values[i];
    }
    b->staged = l->st.prepare(l->st.arg, L->id, b->attempt, sec, ns, &b->perr) == SLUICE_OK;
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
 * once (each writes and fsyncs its own files; the durable writes overlap
 * as the POSTs do).  Launches whose staging failed are dropped from the
 * batch (logged; retried next cycle, their submit token is lost). */
static size_t stage_batch(sluice_launcher_t *l, batch_entry_t *b, size_t n)
{
    stage_work_t w;
    pthread_t th[MAX_IN_FLIGHT];
    size_t k = l->o.submit_in_flight < n ? l->o.submit_in_flight : n;
    size_t started = 0, kept = 0;

    if (l->st.prepare == NULL) {
        for (size_t i = 0; i < n; i++)
            b[i].staged = true;
        return n;
    }
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
            batch_entry_clear(&b[i]);
            continue;
        }
        if (kept != i)
            b[kept] = b[i];
        kept++;
    }
    return kept;
}

/* Kill point `point` once per launch of the batch. */
static bool killed_in_batch(sluice_launcher_t *l, const char *point, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (killed_at(l, point))
            return true;
    return false;
}

/* Submit a batch: every launch SUBMITTING (with its marker) in one durable
 * commit, then the POSTs (up to submit_in_flight at once), then every
 * answer in one commit.  A launch whose POST got no proven answer, or
 * whose answer was never recorded (the process died), is reconciled by
 * its marker exactly as a single submit is. */
static sluice_err
submit_batch(sluice_launcher_t *l, batch_entry_t *b, size_t n, sluice_error_t *err)
{
    launch_t **who = calloc(n, sizeof(*who));
    sluice_fsm_event_t *evs = calloc(n, sizeof(*evs));
    sluice_submit_req_t *reqs = calloc(n, sizeof(*reqs));
    sluice_submit_outcome *oc = calloc(n, sizeof(*oc));
    sluice_submit_result_t *res = calloc(n, sizeof(*res));
    sluice_err rc = SLUICE_OK;

    if (who == NULL || evs == NULL || reqs == NULL || oc == NULL || res == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        who[i] = b[i].L;
        evs[i].type = SLUICE_EV_SUBMIT_STARTED;
        evs[i].attempt = b[i].attempt;
        evs[i].job_name = strdup(b[i].d[0].name);
        evs[i].comment = strdup(b[i].d[0].comment);
        if (evs[i].job_name == NULL || evs[i].comment == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        reqs[i].descs = b[i].d;
        reqs[i].n = b[i].n;
    }
    /* The marker of every launch is durable before any POST leaves. */
    if ((rc = record_many(l, who, evs, n, err)) != SLUICE_OK)
        goto out;
    for (size_t i = 0; i < n; i++)
        sluice_fsm_event_clear(&evs[i]);
    if (killed_in_batch(l, SLUICE_KILL_BEFORE_POST, n))
        goto killed;
    if (l->cl.submit_many != NULL && n > 1) {
        l->cl.submit_many(l->cl.arg, reqs, n, l->o.submit_in_flight, oc, res);
    } else {
        for (size_t i = 0; i < n; i++)
            oc[i] = l->cl.submit(l->cl.arg, reqs[i].descs, reqs[i].n, &res[i]);
    }
    if (killed_in_batch(l, SLUICE_KILL_AFTER_POST, n))
        goto killed;
    for (size_t i = 0; i < n; i++) {
        sluice_fsm_event_t *ev = &evs[i];
        res[i].detail[sizeof(res[i].detail) - 1] = '\0';
        memset(ev, 0, sizeof(*ev));
        switch (oc[i]) {
        case SLUICE_SUBMIT_OK:
            ev->type = SLUICE_EV_SUBMITTED;
            ev->job_ids[0] = res[i].job_id;
            ev->n_job_ids = 1;
            break;
        case SLUICE_SUBMIT_REJECTED:
            ev->type = SLUICE_EV_SUBMIT_REJECTED;
            ev->detail = strdup(res[i].detail[0] != '\0' ? res[i].detail : "rejected");
            break;
        default:
            ev->type = SLUICE_EV_SUBMIT_UNCERTAIN;
            ev->detail = strdup(res[i].detail[0] != '\0' ? res[i].detail : "outcome unknown");
            break;
        }
        b[i].L->absent_count = 0;
        b[i].L->last_recon_ms = 0;
    }
    if (killed_in_batch(l, SLUICE_KILL_AFTER_ANSWER, n))
        goto killed;
    rc = record_many(l, who, evs, n, err);
    if (rc != SLUICE_OK && rc != SLUICE_ENOMEM) {
        /* The batch could not be stored: try each answer on its own so one
         * bad launch does not leave the others without theirs. */
        sluice_log(SLUICE_LOG_WARNING, "submit batch of %zu: %s; recording one by one", n,
                   err != NULL ? err->text : "");
        sluice_error_clear(err);
        rc = SLUICE_OK;
        for (size_t i = 0; i < n; i++) {
            sluice_error_t e1 = SLUICE_ERROR_INIT;
            sluice_err r1 = record(l, who[i], &evs[i], NULL, &e1);
            if (r1 != SLUICE_OK && rc == SLUICE_OK) {
                rc = r1;
                if (err != NULL)
                    *err = e1;
            }
        }
    }
    goto out;
killed:
    rc = sluice_errorf(err, SLUICE_ESTATE, "submit batch of %zu: killed at a kill point", n);
out:
    for (size_t i = 0; evs != NULL && i < n; i++)
        sluice_fsm_event_clear(&evs[i]);
    free(who);
    free(evs);
    free(reqs);
    free(oc);
    free(res);
    return rc;
}

/* Every launch due for a submit this cycle goes into one batch, as far as
 * the submit budget reaches.  A launch that waits for its dependency's job
 * gets another round once the batch gave that job an id. */
static sluice_err submit_due(sluice_launcher_t *l, int64_t now, sluice_error_t *err)
{
    sluice_err rc = SLUICE_OK;

    for (int round = 0; round < 4 && rc == SLUICE_OK && !l->dead; round++) {
        batch_entry_t *b = NULL;
        size_t n = 0;
        bool waited = false;

        for (size_t i = 0; i < l->n && rc == SLUICE_OK; i++) {
            launch_t *L = l->v[i];
            bool ready = false;
            if (L->fsm.state == SLUICE_FSM_DONE || !(sluice_fsm_due(&L->fsm, fsm_time(now)) &
                                                     (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT)))
                continue;
            if (b == NULL && (b = calloc(l->n, sizeof(*b))) == NULL) {
                rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
                break;
            }
            rc = batch_select(l, L, &b[n], &ready, &waited, err);
            if (ready)
                n++;
        }
        if (rc == SLUICE_OK && n > 0)
            n = stage_batch(l, b, n);
        for (size_t i = 0; i < n && rc == SLUICE_OK; i++)
            rc = load_descs(l, b[i].L, b[i].attempt, b[i].has_dep ? b[i].dep : NULL, &b[i].d,
                            &b[i].n, err);
        if (rc == SLUICE_OK && n > 0)
            rc = submit_batch(l, b, n, err);
        for (size_t i = 0; i < n; i++)
            batch_entry_clear(&b[i]);
        free(b);
        if (n == 0 || !waited)
            break;
    }
    return rc;
}

/* Views of our marker: name and user always, the comment when present. */
static size_t owned_leaders(const sluice_launcher_t *l,
                            const sluice_jobview_t *v,
                            size_t n,
                            const char *name,
                            const char *comment,
                            bool need_comment,
                            uint64_t *ids,
                            size_t max)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t id = leader_of(&v[i]);
        bool dup = false;
        if (!same_str(v[i].name, name) || !same_str(v[i].user_name, l->user))
            continue;
        if ((need_comment || v[i].comment != NULL) && !same_str(v[i].comment, comment))
            continue;
        for (size_t j = 0; j < k; j++)
            dup = dup || ids[j] == id;
        if (!dup && k < max)
            ids[k++] = id;
    }
    return k;
}

static sluice_err
adopt(sluice_launcher_t *l, launch_t *L, uint64_t id, sluice_lookup_source src, sluice_error_t *err)
{
    sluice_fsm_event_t ev;

    memset(&ev, 0, sizeof(ev));
    ev.type = SLUICE_EV_ADOPTED;
    ev.attempt = L->fsm.attempt;
    ev.job_ids[0] = id;
    ev.n_job_ids = 1;
    ev.source = src;
    return record(l, L, &ev, NULL, err);
}

static sluice_err do_reconcile(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    int64_t spacing = (int64_t)to_ms(l->o.absence_spacing_s * 1000.0);
    int64_t post_ms = (int64_t)to_ms(L->fsm.post_time * 1000.0);
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    uint64_t ids[SLUICE_FSM_MAX_JOBS];
    size_t k;
    sluice_lookup r;
    sluice_err rc = SLUICE_OK;

    if (L->last_recon_ms != 0 && now - L->last_recon_ms < spacing)
        return SLUICE_OK;
    if (l->tokens < 2.0)
        return SLUICE_OK;
    L->last_recon_ms = now;
    take_token(l);
    r = l->cl.find_live_by_name(l->cl.arg, L->fsm.job_name, l->user, &v, &n);
    if (r == SLUICE_LOOKUP_FOUND) {
        k = owned_leaders(l, v, n, L->fsm.job_name, L->fsm.comment, true, ids, SLUICE_FSM_MAX_JOBS);
        views_free(v, n);
        if (k > 0)
            return adopt(l, L, ids[0], SLUICE_SOURCE_LIVE, err);
        sluice_log(SLUICE_LOG_WARNING, "launch %s: a job named %s is not ours (comment/user)",
                   L->id, L->fsm.job_name);
    } else if (r == SLUICE_LOOKUP_UNAVAILABLE) {
        L->absent_count = 0;
        return SLUICE_OK;
    }
    take_token(l);
    v = NULL;
    n = 0;
    r = l->cl.find_acct_by_name(l->cl.arg, L->fsm.job_name, l->user,
                                post_ms / 1000 - ACCT_WINDOW_BEFORE_S, now / 1000 + 1, &v, &n);
    if (r == SLUICE_LOOKUP_FOUND) {
        k = owned_leaders(l, v, n, L->fsm.job_name, L->fsm.comment, false, ids,
                          SLUICE_FSM_MAX_JOBS);
        views_free(v, n);
        if (k > 0)
            return adopt(l, L, ids[0], SLUICE_SOURCE_ACCOUNTING, err);
    } else if (r == SLUICE_LOOKUP_UNAVAILABLE) {
        L->absent_count = 0;
        return SLUICE_OK;
    }
    /* A healthy absence; it counts only once the delay after the POST has passed. */
    if (now - post_ms >= (int64_t)to_ms(l->o.absence_delay_s * 1000.0))
        L->absent_count++;
    if (L->absent_count >= l->o.absence_lookups) {
        char detail[96];
        snprintf(detail, sizeof(detail), "%u healthy lookups found no job named %s",
                 L->absent_count, L->fsm.job_name);
        L->absent_count = 0;
        L->last_recon_ms = 0;
        sluice_log(SLUICE_LOG_NOTICE, "launch %s: absence confirmed: %s", L->id, detail);
        rc = record_simple(l, L, SLUICE_EV_ABSENCE_CONFIRMED, NULL, err);
    }
    return rc;
}

/* Jobs of older attempts that surface late are cancelled (we own the marker). */
static sluice_err
do_old_attempts(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    int64_t spacing = (int64_t)to_ms(l->o.absence_spacing_s * 1000.0);
    sluice_err rc = SLUICE_OK;

    if (L->fsm.attempt < 2 || now - L->last_old_check_ms < spacing)
        return SLUICE_OK;
    L->last_old_check_ms = now;
    for (uint32_t a = 1; a < L->fsm.attempt && rc == SLUICE_OK; a++) {
        char name[SLUICE_FSM_MARKER_MAX];
        char comment[SLUICE_FSM_MARKER_MAX];
        sluice_jobview_t *v = NULL;
        size_t n = 0;
        uint64_t ids[SLUICE_FSM_MAX_JOBS];
        size_t k;

        if (!take_token(l))
            break;
        sluice_launcher_job_name(name, sizeof(name), l->prefix, L->site, L->id, a);
        comment_for(comment, sizeof(comment), L->id, a);
        if (l->cl.find_live_by_name(l->cl.arg, name, l->user, &v, &n) != SLUICE_LOOKUP_FOUND)
            continue;
        for (size_t i = 0; i < n; i++) { /* only jobs still live need a cancel */
            if (sluice_job_base_is_terminal(v[i].base)) {
                free(v[i].name);
                v[i].name = NULL;
            }
        }
        k = owned_leaders(l, v, n, name, comment, true, ids, SLUICE_FSM_MAX_JOBS);
        views_free(v, n);
        for (size_t i = 0; i < k && rc == SLUICE_OK; i++) {
            sluice_error_t cerr = SLUICE_ERROR_INIT;
            if (l->cl.cancel(l->cl.arg, ids[i], 0, &cerr) != SLUICE_OK) {
                sluice_log(SLUICE_LOG_WARNING, "launch %s: cancel of stale job %" PRIu64 ": %s",
                           L->id, ids[i], cerr.text);
                continue;
            }
            sluice_log(SLUICE_LOG_NOTICE,
                       "launch %s: cancelled job %" PRIu64 " of older attempt %" PRIu32, L->id,
                       ids[i], a);
            rc =
                note(l, L, "stale-job-cancelled",
                     json_pack("{s:I, s:i}", "job_id", (json_int_t)ids[i], "attempt", (int)a), err);
        }
    }
    return rc;
}

/* ---- cancel ------------------------------------------------------------ */

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
    take_token(l);
    r = l->cl.get_job(l->cl.arg, id, &v, &n);
    if (r == SLUICE_LOOKUP_UNAVAILABLE)
        return SLUICE_OK;
    if (r == SLUICE_LOOKUP_NOT_FOUND)
        return record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL, 0, err);
    for (size_t i = 0; i < n && why == NULL; i++) {
        if (!same_str(v[i].name, L->fsm.job_name))
            why = "job name";
        else if (!same_str(v[i].comment, L->fsm.comment))
            why = "comment marker";
        else if (!same_str(v[i].user_name, l->user))
            why = "user";
    }
    if (n == 0)
        why = "empty record";
    if (why != NULL) {
        L->cancel_refused = true;
        sluice_log(SLUICE_LOG_ERR,
                   "critical: launch %s: job %" PRIu64 " does not match our %s; cancel refused",
                   L->id, id, why);
        rc = note(l, L, "cancel-refused",
                  json_pack("{s:I, s:s}", "job_id", (json_int_t)id, "mismatch", why), err);
        goto out;
    }
    take_token(l);
    if (l->cl.cancel(l->cl.arg, id, 0, &cerr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: cancel of job %" PRIu64 ": %s", L->id, id,
                   cerr.text);
        goto out;
    }
    rc = record_simple(l, L, SLUICE_EV_CANCEL_SENT, NULL, err);
out:
    views_free(v, n);
    return rc;
}

/* ---- per-launch actions ------------------------------------------------ */

static sluice_err do_pool_exits(sluice_launcher_t *l, launch_t *L, sluice_error_t *err)
{
    sluice_pool_exit_t pe[SLUICE_FSM_MAX_POOLS];
    size_t n = 0;
    sluice_err rc;

    if (l->st.read_pool_exits != NULL) {
        sluice_error_t herr = SLUICE_ERROR_INIT;
        if (l->st.read_pool_exits(l->st.arg, L->id, L->fsm.attempt, pe, SLUICE_FSM_MAX_POOLS, &n,
                                  &herr) != SLUICE_OK) {
            sluice_log(SLUICE_LOG_WARNING, "launch %s: pool exit files: %s", L->id, herr.text);
            n = 0;
        }
    }
    for (size_t i = 0; i < n && i < SLUICE_FSM_MAX_POOLS; i++) {
        sluice_fsm_event_t ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = SLUICE_EV_POOL_EXIT;
        ev.pool = strndup(pe[i].name, SLUICE_FSM_NAME_MAX - 1);
        ev.exit_code = pe[i].exit_code;
        ev.signal = pe[i].signal;
        rc = ev.pool != NULL ? record(l, L, &ev, NULL, err)
                             : sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        sluice_fsm_event_clear(&ev);
        if (rc != SLUICE_OK)
            return rc;
    }
    return record_simple(l, L, SLUICE_EV_POOL_EXITS_READ, NULL, err);
}

static sluice_err do_accounting(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    sluice_lookup r;
    sluice_err rc;

    if (now < L->next_acct_ms || !take_token(l))
        return SLUICE_OK;
    r = l->cl.acct_job(l->cl.arg, L->fsm.job_ids[0], &v, &n);
    if (r == SLUICE_LOOKUP_UNAVAILABLE)
        L->next_acct_ms = now + UNAVAILABLE_RETRY_MS;
    rc = record_observed(l, L, r, SLUICE_SOURCE_ACCOUNTING, v, n, err);
    views_free(v, n);
    return rc;
}

static sluice_err do_peers(sluice_launcher_t *l, launch_t *L, sluice_error_t *err)
{
    launch_t *D;
    sluice_error_t herr = SLUICE_ERROR_INIT;

    if (L->peers_written || L->dep_id == NULL || L->fsm.state == SLUICE_FSM_DONE)
        return SLUICE_OK;
    D = find_launch(l, L->dep_id);
    if (D == NULL || D->fsm.state != SLUICE_FSM_RUNNING || D->n_views == 0)
        return SLUICE_OK;
    if (l->st.write_peers != NULL &&
        l->st.write_peers(l->st.arg, L->id, L->fsm.attempt > 0 ? L->fsm.attempt : 1, D->id,
                          D->views, D->n_views, &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: peers.env: %s", L->id, herr.text);
        return SLUICE_OK;
    }
    return note(l, L, "peers-written",
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
    return note(l, L, "archived", json_pack("{s:s}", "dir", dir), err);
}

/* ---- the poller -------------------------------------------------------- */

static int64_t heartbeat_ms(const sluice_launcher_t *l, const launch_t *L)
{
    int64_t h = (int64_t)to_ms(L->fsm.cfg.pending_timeout * 1000.0 / 20.0);

    if (h > 30000)
        h = 30000;
    if (h < l->o.poll_min_ms)
        h = l->o.poll_min_ms;
    return h;
}

static sluice_err poll_one(sluice_launcher_t *l,
                           launch_t *L,
                           sluice_lookup batch,
                           const sluice_job_state_t *st,
                           int64_t now,
                           sluice_error_t *err)
{
    sluice_jobview_t *v = NULL;
    size_t n = 0;
    sluice_lookup r;
    sluice_err rc;

    if (batch == SLUICE_LOOKUP_UNAVAILABLE)
        return record_observed(l, L, SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, NULL, 0, err);
    if (!st->present) {
        L->have_state = false;
        return record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL, 0, err);
    }
    if (L->have_state && !L->last_unavailable && L->n_views > 0 && st->base == L->last_base &&
        st->flags == L->last_flags) {
        /* Unchanged: only a pending launch needs a heartbeat (the timer). */
        if (L->fsm.state == SLUICE_FSM_PENDING && L->fsm.cfg.pending_timeout > 0 &&
            now - L->last_obs_ms >= heartbeat_ms(l, L))
            return record_observed(l, L, SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, L->views,
                                   L->n_views, err);
        return SLUICE_OK;
    }
    if (!L->have_state && st->base == SLUICE_JOB_PENDING && L->fsm.state == SLUICE_FSM_PENDING) {
        /* A job first seen pending, as the submit left it: the batched
         * state says all the state machine needs (the pending timer starts
         * here), so no full read is spent on it.  The first change (it
         * starts, or leaves the queue) brings the full record. */
        if ((v = calloc(1, sizeof(*v))) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        v->job_id = L->fsm.job_ids[0];
        v->base = st->base;
        v->flags = st->flags;
        views_free(L->views, L->n_views);
        L->views = v;
        L->n_views = 1;
        L->have_state = true;
        L->last_base = st->base;
        L->last_flags = st->flags;
        return record_observed(l, L, SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, v, 1, err);
    }
    if (!take_token(l))
        return SLUICE_OK; /* over budget: read it next cycle */
    r = l->cl.get_job(l->cl.arg, L->fsm.job_ids[0], &v, &n);
    if (r == SLUICE_LOOKUP_FOUND && n > 0) {
        /* Keep the base a flag hides (v0.0.38) before the old views go. */
        (void)fill_hidden_bases(L->views, L->n_views, v, n);
        views_free(L->views, L->n_views);
        L->views = v;
        L->n_views = n;
        L->have_state = true;
        L->last_base = st->base;
        L->last_flags = st->flags;
        rc = record_observed(l, L, r, SLUICE_SOURCE_LIVE, v, n, err);
        return rc;
    }
    views_free(v, n);
    if (r == SLUICE_LOOKUP_FOUND)
        r = SLUICE_LOOKUP_NOT_FOUND;
    return record_observed(l, L, r, SLUICE_SOURCE_LIVE, NULL, 0, err);
}

/* The one batched state read of a cycle, then full reads for the changed. */
static sluice_err poll_live(sluice_launcher_t *l, int64_t now, sluice_error_t *err)
{
    launch_t **who = NULL;
    uint64_t *ids = NULL;
    sluice_job_state_t *st = NULL;
    size_t k = 0;
    sluice_lookup batch;
    sluice_err rc = SLUICE_OK;

    for (size_t i = 0; i < l->n; i++)
        if ((sluice_fsm_due(&l->v[i]->fsm, fsm_time(now)) & SLUICE_DUE_LIVE_LOOKUP) &&
            l->v[i]->fsm.n_job_ids > 0)
            k++;
    if (k == 0 || !take_token(l))
        return SLUICE_OK;
    who = calloc(k, sizeof(*who));
    ids = calloc(k, sizeof(*ids));
    st = calloc(k, sizeof(*st));
    if (who == NULL || ids == NULL || st == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    k = 0;
    for (size_t i = 0; i < l->n; i++) {
        launch_t *L = l->v[i];
        if ((sluice_fsm_due(&L->fsm, fsm_time(now)) & SLUICE_DUE_LIVE_LOOKUP) &&
            L->fsm.n_job_ids > 0) {
            who[k] = L;
            ids[k++] = L->fsm.job_ids[0];
        }
    }
    batch = l->cl.job_states(l->cl.arg, ids, k, st);
    for (size_t i = 0; i < k && rc == SLUICE_OK; i++)
        rc = poll_one(l, who[i], batch, &st[i], now, err);
out:
    free(who);
    free(ids);
    free(st);
    return rc;
}

static sluice_err act_on(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    unsigned due = sluice_fsm_due(&L->fsm, fsm_time(now));
    sluice_err rc = SLUICE_OK;

    /* Submits were batched by submit_due(). */
    if (!(due & (SLUICE_DUE_SUBMIT | SLUICE_DUE_NEW_ATTEMPT)) && (due & SLUICE_DUE_RECONCILE))
        rc = do_reconcile(l, L, now, err);
    if (rc == SLUICE_OK && L->fsm.state != SLUICE_FSM_DONE)
        rc = do_old_attempts(l, L, now, err);
    due = sluice_fsm_due(&L->fsm, fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_PENDING_TIMEOUT))
        rc = record_simple(l, L, SLUICE_EV_PENDING_TIMEOUT, NULL, err);
    due = sluice_fsm_due(&L->fsm, fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_CANCEL))
        rc = do_cancel(l, L, err);
    due = sluice_fsm_due(&L->fsm, fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_POOL_EXITS))
        rc = do_pool_exits(l, L, err);
    if (rc == SLUICE_OK && (due & SLUICE_DUE_ACCOUNTING_LOOKUP) && L->fsm.n_job_ids > 0)
        rc = do_accounting(l, L, now, err);
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
            launch_t *L = id != NULL ? find_launch(l, id) : NULL;

            if (L != NULL && seq >= L->next_seq)
                rc = sync_launch(l, L, false, err);
            else if (L == NULL && id != NULL && seq == 1)
                rc = load_launch(l, id, NULL, err);
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

sluice_err sluice_launcher_step(sluice_launcher_t *l, sluice_error_t *err)
{
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
    if ((rc = pick_up(l, err)) != SLUICE_OK)
        return rc;
    /* The batched read first: it has priority in the budget. */
    if ((rc = poll_live(l, now, err)) != SLUICE_OK)
        return rc;
    if ((rc = submit_due(l, now, err)) != SLUICE_OK)
        return rc;
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
    /* Adaptive interval: fast while things move, slower when idle. */
    for (size_t i = 0; i < l->n; i++) {
        sluice_fsm_state s = l->v[i]->fsm.state;
        if (s == SLUICE_FSM_ACCEPTED || s == SLUICE_FSM_SUBMITTING || s == SLUICE_FSM_CANCELLING)
            l->activity = true;
    }
    if (l->activity)
        l->interval_ms = l->o.poll_min_ms;
    else if ((l->interval_ms *= 2) > l->o.poll_max_ms)
        l->interval_ms = l->o.poll_max_ms;
    l->activity = false;
    return pick_up(l, err);
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
            char h[9];
            sha8(l->v[j]->id, h);
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

sluice_err sluice_launcher_recover(sluice_launcher_t *l, size_t *orphans_out, sluice_error_t *err)
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
        launch_t *L = id != NULL ? find_launch(l, id) : NULL;

        if (id == NULL)
            continue;
        if (L == NULL && (rc = load_launch(l, id, &L, err)) != SLUICE_OK)
            goto out;
        if ((rc = sync_launch(l, L, true, err)) != SLUICE_OK)
            goto out;
        if (L->fsm.state == SLUICE_FSM_ACCEPTED && L->needs_secrets && !L->has_secrets) {
            rc = record_simple(l, L, SLUICE_EV_SECRET_UNAVAILABLE, NULL, err);
        } else if (L->fsm.state == SLUICE_FSM_SUBMITTING && !L->fsm.uncertain &&
                   !L->fsm.may_retry && L->fsm.n_job_ids == 0) {
            rc = record_simple(l, L, SLUICE_EV_SUBMIT_UNCERTAIN, "service restarted during submit",
                               err);
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
        l->o.sleep_ms(l->o.clock_arg, l->interval_ms);
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
        launch_t *L = find_launch(l, launch_id);
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
        l->o.sleep_ms(l->o.clock_arg, l->interval_ms);
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
