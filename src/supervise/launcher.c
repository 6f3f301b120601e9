/* SPDX-License-Identifier: Apache-2.0 */
/* launcher.c - the supervisor: lifecycle, cancel, recording, archive,
 * recover, and the cycle that drives the rest (peers: launcher_peers.c).
 *
 * Purpose:
 *   Drive every live launch of one store through the state machine.  The
 *   fsm decides (sluice_fsm_due), the launcher acts, records the outcome in
 *   the store, then folds the stored event back in (sync_launch).  A
 *   launch's in-memory state is thus always the replay of its log, whether
 *   the event came from us, from another process (a CLI cancel) or from
 *   before a restart.
 *
 *   The launcher is split by concept (launcher_int.h names what each file
 *   owns): this file keeps the lifecycle, cancel, per-launch actions
 *   (cancel, pool exits, archive), pick-up, recovery and the step.  Five
 *   subsystems own state of their own, made in sluice_launcher_new() and
 *   destroyed in sluice_launcher_free(): the budget (launcher_budget.c),
 *   the poller (launcher_poll.c: reads job states), the submit
 *   (launcher_submit.c, launcher_stage.c: submits in batches), the
 *   reconciliation (launcher_reconcile.c: uncertain submits) and the
 *   intake (launcher_intake.c: accepts from any thread).
 *   launcher_peers.c judges dependencies and writes peers.env;
 *   launcher_record.c records events and folds them back in.  Calls go
 *   from this file down to those, never up.
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sluice/launcher.h>
#include <sluice/lease.h>
#include <sluice/log.h>

#include "base/marker.h"
#include "base/opts.h"
#include "launcher_budget.h"
#include "launcher_intake.h"
#include "launcher_poll.h"
#include "launcher_reconcile.h"
#include "launcher_submit.h"

#define DEFAULT_RPC_PER_SEC 50.0
#define DEFAULT_SUBMIT_PER_SEC 200.0
#define DEFAULT_IN_FLIGHT 4

static sluice_err take_in(sluice_launcher_t *l, bool clear_wake, sluice_error_t *err);

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
    bool automatic;
    int64_t now;
    sluice_err rc;

    if (out == NULL || opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: out, opts and opts->store required");
    if ((rc = opts_check_version("launcher", opts->version, SLUICE_LAUNCHER_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    if (opts->store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: out, opts and opts->store required");
    if (opts->cluster.submit == NULL || opts->cluster.get_job == NULL ||
        opts->cluster.job_states == NULL || opts->cluster.find_live_by_name == NULL ||
        opts->cluster.find_acct_by_name == NULL || opts->cluster.acct_job == NULL ||
        opts->cluster.cancel == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launcher: every cluster operation is required");
    if ((l = calloc(1, sizeof(*l))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    /* A version 1 caller's struct ends before `tenants`: copy only its own. */
    memcpy(&l->o, opts,
           opts->version == 1 ? offsetof(sluice_launcher_opts_t, tenants) : sizeof(*opts));
    l->store = opts->store;
    l->cl = opts->cluster;
    l->st = opts->staging;
    /* The Slurm identity every ownership check compares: the options', else
     * the cluster's (the token's user).  Without one nothing could ever be
     * adopted or cancelled, so there is no launcher. */
    if ((opts->user == NULL || opts->user[0] == '\0') && opts->cluster.user != NULL)
        l->user = launcher_dup_or(opts->cluster.user(opts->cluster.arg), "");
    else
        l->user = launcher_dup_or(opts->user, "");
    if (l->user != NULL && l->user[0] == '\0') {
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "launcher: no Slurm user (rest.user, or the token's own user): "
                           "ownership of a job cannot be checked");
        goto fail;
    }
    l->site = launcher_dup_or(opts->site, "default");
    l->prefix = launcher_dup_or(opts->job_name_prefix, "sluice");
    l->state_dir = launcher_dup_or(opts->state_dir, sluice_store_dir(opts->store));
    if (opts->cluster_name != NULL)
        l->cluster = launcher_dup_or(opts->cluster_name, "");
    if (l->user == NULL || l->site == NULL || l->prefix == NULL || l->state_dir == NULL ||
        (opts->cluster_name != NULL && l->cluster == NULL)) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = copy_reasons(l, opts, err)) != SLUICE_OK)
        goto fail;
    if ((rc = launcher_tenants_create(l, opts, err)) != SLUICE_OK)
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
    automatic = l->o.poll_max_ms <= 0;
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
        l->o.now_ms = launcher_real_now_ms;
    if (l->o.sleep_ms == NULL)
        l->o.sleep_ms = launcher_real_sleep_ms;
    /* The subsystems, in the order sluice_launcher_free() undoes. */
    now = launcher_now_ms(l);
    if ((rc = launcher_budget_create(&l->budget, l, now, err)) != SLUICE_OK ||
        (rc = launcher_poll_create(&l->poll, l, automatic, now, err)) != SLUICE_OK ||
        (rc = launcher_submit_create(&l->submit, l, err)) != SLUICE_OK ||
        (rc = launcher_reconcile_create(&l->reconcile, l, err)) != SLUICE_OK ||
        (rc = launcher_intake_create(&l->intake, err)) != SLUICE_OK)
        goto fail;
    if (!l->o.store_locked && (rc = sluice_store_lock_supervisor(l->store, err)) != SLUICE_OK)
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
        launcher_launch_free(l->v[i]);
    free(l->v);
    json_decref(l->node_addrs);
    launcher_intake_destroy(l, l->intake);
    launcher_reconcile_destroy(l->reconcile);
    launcher_submit_destroy(l->submit);
    launcher_poll_destroy(l->poll);
    launcher_budget_destroy(l->budget);
    if (l->store != NULL && !l->o.store_locked)
        sluice_store_unlock_supervisor(l->store);
    launcher_tenants_destroy(l);
    free(l->user);
    free(l->cluster);
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
    return l != NULL ? l->n + launcher_intake_new_count(l) : 0;
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
    if (wake >= 0 && wake - now < launcher_poll_interval_ms(l))
        return wake - now;
    return launcher_poll_interval_ms(l);
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

/* Record `caller`'s cancel of tracked launch L, unless it is over or the
 * caller's cancel is already recorded. */
static sluice_err
cancel_tracked(sluice_launcher_t *l, launch_t *L, const char *caller, sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_err rc;

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

/* Carry out the `cancel-asked` events other writers appended (the API's
 * DELETE, `sluice cancel`: sluice_store_request_cancel) as this launcher's
 * own cancel-requested, so that the state they lead to is recorded with
 * its summary.  An ask folded at recovery is carried out the same way; one
 * already answered (the intent is recorded) changes nothing. */
static sluice_err carry_out_asks(sluice_launcher_t *l, sluice_error_t *err)
{
    sluice_err rc = SLUICE_OK;

    if (!l->asks_pending)
        return SLUICE_OK;
    l->asks_pending = false;
    for (size_t i = 0; i < l->n && rc == SLUICE_OK; i++) {
        launch_t *L = l->v[i];
        json_t *ev = NULL;
        const char *caller;

        if (L->cancel_ask_seq == 0)
            continue;
        rc = sluice_store_read_events(l->store, L->id, L->cancel_ask_seq, 1, &ev, err);
        L->cancel_ask_seq = 0;
        if (rc != SLUICE_OK)
            break;
        caller = json_string_value(json_object_get(json_array_get(ev, 0), "caller"));
        rc = cancel_tracked(l, L, caller, err);
        json_decref(ev);
    }
    return rc;
}

sluice_err sluice_launcher_cancel(sluice_launcher_t *l,
                                  const char *launch_id,
                                  const char *caller,
                                  sluice_error_t *err)
{
    launch_t *L;
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
    if ((rc = launcher_sync_launch(l, L, false, err)) != SLUICE_OK)
        return rc;
    return cancel_tracked(l, L, caller, err);
}

/* ---- cancel ------------------------------------------------------------ */

/* Whether a fresh read shows a component that is no longer pending (a base
 * a v0.0.38 flag hides is filled in from the last records first). */
static bool started(const launch_t *L, sluice_jobview_t *v, size_t n)
{
    (void)launcher_fill_hidden_bases(L->poll.views, L->poll.n_views, v, n);
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
    const launcher_actor_t *A;

    if (L->fsm.n_job_ids == 0 || L->cancel_refused)
        return SLUICE_OK;
    if (!launcher_has_tokens(l, 2.0))
        return SLUICE_OK;
    id = L->fsm.job_ids[0];
    launcher_take_token(l);
    A = launcher_actor(l, L->id); /* read and cancelled as the launch's tenant */
    r = A->cl.get_job(A->cl.arg, id, &v, &n);
    if (r == SLUICE_LOOKUP_UNAVAILABLE)
        return SLUICE_OK;
    if (r == SLUICE_LOOKUP_NOT_FOUND)
        return launcher_record_observed(l, L, SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, NULL, 0,
                                        err);
    why = launcher_mismatch(l, L, v, n, SLUICE_SOURCE_LIVE); /* launcher_owner.c */
    if (why != NULL) {
        L->cancel_refused = true;
        L->own.ok = false;
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
        launcher_views_free(L->poll.views, L->poll.n_views);
        L->poll.views = v;
        L->poll.n_views = n;
        L->poll.have_state = false; /* the next batched read sets the cache again */
        return rc;
    }
    launcher_take_token(l);
    if (A->cl.cancel(A->cl.arg, id, 0, &cerr) != SLUICE_OK) {
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
        ev.unknown = pe[i].unknown;
        if (pe[i].unknown && (ev.raw = strndup(pe[i].raw, SLUICE_FSM_RAW_MAX - 1)) == NULL) {
            sluice_fsm_event_clear(&ev);
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        }
        rc = ev.pool != NULL ? launcher_record(l, L, &ev, NULL, err)
                             : sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        sluice_fsm_event_clear(&ev);
        if (rc != SLUICE_OK)
            return rc;
    }
    return launcher_record_simple(l, L, SLUICE_EV_POOL_EXITS_READ, NULL, err);
}

/* Logs go into the store, which every replica serves; with SQLite (a state
 * directory that lasts) also into <state>/artifacts/<id>/, not with replicas. */
static sluice_err do_archive(sluice_launcher_t *l, launch_t *L, sluice_error_t *err)
{
    char dir[4096];
    bool local = strcmp(sluice_store_backend(l->store), "postgresql") != 0;
    sluice_error_t herr = SLUICE_ERROR_INIT;

    snprintf(dir, sizeof(dir), "%s/artifacts", l->state_dir);
    if (local && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", dir, strerror(errno));
    snprintf(dir, sizeof(dir), "%s/artifacts/%s", l->state_dir, L->id);
    if (local && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", dir, strerror(errno));
    if (l->st.archive != NULL &&
        l->st.archive(l->st.arg, L->id, L->fsm.attempt, local ? dir : NULL, &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: archive: %s", L->id, herr.text);
        return SLUICE_OK; /* retried next cycle */
    }
    return launcher_note(l, L, "archived",
                         local ? json_pack("{s:s, s:s}", "logs", "store", "dir", dir)
                               : json_pack("{s:s, s:I}", "logs", "store", "epoch",
                                           (json_int_t)sluice_store_fence(l->store)),
                         err);
}

static sluice_err act_on(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err);

/* act_on() with one launch's own bad data kept to that launch: an event
 * the state machine refuses (SLUICE_EINVAL, SLUICE_ESTATE: input read from
 * Slurm or from the job's staging that does not fit) is logged once, when
 * it starts, and the cycle goes on with the other launches; everything
 * else (the store, memory) stops the cycle as before. */
static sluice_err act_contained(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    sluice_error_t lerr = SLUICE_ERROR_INIT;
    sluice_err rc = act_on(l, L, now, &lerr);

    if (rc == SLUICE_EINVAL || rc == SLUICE_ESTATE) {
        if (!L->faulted)
            sluice_log(SLUICE_LOG_WARNING, "launch %s: %s (this launch waits; the others go on)",
                       L->id, lerr.text);
        L->faulted = true;
        return SLUICE_OK;
    }
    if (rc == SLUICE_OK && L->faulted) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: its actions succeed again", L->id);
        L->faulted = false;
    }
    if (rc != SLUICE_OK && err != NULL)
        *err = lerr;
    return rc;
}

static sluice_err act_on(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    unsigned due = launcher_fsm_due(L, launcher_fsm_time(now));
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
        L->fsm.intent == SLUICE_CANCEL_NONE && L->poll.n_views > 0 &&
        !(L->poll.have_batch && L->poll.batch_base != L->poll.views[0].base) &&
        launcher_unschedulable(l, L->poll.views, L->poll.n_views, why, sizeof(why)))
        rc = launcher_record_simple(l, L, SLUICE_EV_UNSCHEDULABLE, why, err);
    due = launcher_fsm_due(L, launcher_fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_PENDING_TIMEOUT))
        rc = launcher_record_simple(l, L, SLUICE_EV_PENDING_TIMEOUT, NULL, err);
    due = launcher_fsm_due(L, launcher_fsm_time(now));
    if (rc == SLUICE_OK && (due & SLUICE_DUE_CANCEL))
        rc = do_cancel(l, L, err);
    due = launcher_fsm_due(L, launcher_fsm_time(now));
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
                    rc = launcher_load_launch(l, id, NULL, err);
            } else if (L != NULL && seq >= L->next_seq) {
                rc = launcher_sync_launch(l, L, false, err);
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
    if (rc == SLUICE_OK)
        rc = carry_out_asks(l, err);
    return rc;
}

sluice_err sluice_launcher_step(sluice_launcher_t *l, sluice_error_t *err)
{
    double t[5];
    int64_t now;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    now = launcher_now_ms(l);
    launcher_budget_refill(l, now);
    t[0] = launcher_mono_ms();
    if ((rc = take_in(l, true, err)) != SLUICE_OK)
        return rc;
    t[1] = launcher_mono_ms();
    /* The batched read first: it has priority in the budget; then the due
     * cancels and reconciliations (their tokens reserved now), then the
     * per-launch full reads. */
    launcher_reserve_for_actions(l, now);
    rc = launcher_poll_live(l, now, err);
    launcher_release_reserve(l);
    if (rc != SLUICE_OK)
        return rc;
    t[2] = launcher_mono_ms();
    if ((rc = launcher_submit_due(l, now, err)) != SLUICE_OK)
        return rc;
    t[3] = launcher_mono_ms();
    for (size_t i = 0; i < l->n && rc == SLUICE_OK && !l->dead; i++)
        if (l->v[i]->fsm.state != SLUICE_FSM_DONE)
            rc = act_contained(l, l->v[i], now, err);
    if (rc != SLUICE_OK)
        return rc;
    for (size_t i = 0; i < l->n && rc == SLUICE_OK; i++)
        rc = launcher_do_dependency(l, l->v[i], now, err);
    for (size_t i = 0; i < l->n && rc == SLUICE_OK;) {
        launch_t *L = l->v[i];
        if (L->fsm.state == SLUICE_FSM_DONE && !L->archived)
            rc = do_archive(l, L, err);
        if (rc == SLUICE_OK && L->archived && L->fsm.state == SLUICE_FSM_DONE)
            launcher_drop_launch(l, L);
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

static sluice_err recover_locked(sluice_launcher_t *l, size_t *orphans_out, sluice_error_t *err)
{
    json_t *live = NULL;
    json_t *row;
    size_t i;
    size_t orphans;
    sluice_err rc;

    if ((rc = check_alive(l, err)) != SLUICE_OK)
        return rc;
    /* The cursor first: what is appended from now on is picked up.  The
     * newest gseq in one indexed read (reading every event since 0 to find
     * it cost seconds with 100,000 finished launches in the store). */
    {
        int64_t last = 0;
        if ((rc = sluice_store_last_gseq(l->store, &last, err)) != SLUICE_OK)
            return rc;
        if (last > l->gseq)
            l->gseq = last;
    }
    if ((rc = sluice_store_list_live(l->store, &live, err)) != SLUICE_OK)
        return rc;
    json_array_foreach(live, i, row)
    {
        const char *id = json_string_value(json_object_get(row, "launch_id"));
        launch_t *L = id != NULL ? launcher_find_launch(l, id) : NULL;

        if (id == NULL ||
            !launcher_cluster_ours(l, json_string_value(json_object_get(row, "cluster"))))
            continue;    /* another cluster's launcher recovers it */
        if (L == NULL) { /* loading folds its whole log in */
            if ((rc = launcher_load_launch(l, id, &L, err)) != SLUICE_OK)
                goto out;
        } else if ((rc = launcher_sync_launch(l, L, true, err)) != SLUICE_OK) {
            goto out;
        }
        if (L->fsm.state == SLUICE_FSM_ACCEPTED && L->needs_secrets && !L->has_secrets) {
            rc = launcher_record_simple(l, L, SLUICE_EV_SECRET_UNAVAILABLE, NULL, err);
        } else if (L->fsm.state == SLUICE_FSM_SUBMITTING && L->fsm.n_job_ids == 0) {
            rc = launcher_record_simple(l, L, SLUICE_EV_SUBMIT_UNCERTAIN,
                                        "service restarted during submit", err);
        }
        if (rc != SLUICE_OK)
            goto out;
    }
    orphans = launcher_report_orphans(l);
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
    out->accepts = atomic_load(&k->accepts);
    out->accept_commits = atomic_load(&k->accept_commits);
}
