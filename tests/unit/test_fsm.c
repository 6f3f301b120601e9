/* SPDX-License-Identifier: Apache-2.0 */
/* test_fsm.c - the launcher state machine, rule by rule (docs/state-machine.md).
 *
 * Every scenario runs through step(), which records the event as the store
 * would (JSON log entry) before applying it, so most tests also check that
 * replaying the log gives exactly the live launch.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/fsm.h>

#define F(n) SLUICE_JOB_FLAG(n)

/* ---- helpers ----------------------------------------------------------- */

typedef struct {
    sluice_fsm_launch_t l;
    sluice_fsm_config_t cfg;
    json_t *log;
    int64_t seq;
    sluice_fsm_transition_t tr;
    sluice_error_t err;
} run_t;

static void run_init(run_t *r, const sluice_fsm_config_t *cfg)
{
    memset(r, 0, sizeof(*r));
    if (cfg != NULL)
        r->cfg = *cfg;
    else
        sluice_fsm_config_default(&r->cfg);
    sluice_fsm_launch_init(&r->l, &r->cfg);
    r->log = json_array();
}

/* Replay the recorded log and compare with the live launch, then free. */
static void run_done(run_t *r)
{
    sluice_fsm_launch_t replayed;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_fsm_replay(&r->cfg, r->log, &replayed, &err), SLUICE_OK, "%s", err.text);
    cr_assert(sluice_fsm_launch_equal(&r->l, &replayed), "replay differs from live");
    json_decref(r->log);
    r->log = NULL;
}

/* Record and apply one event. */
static sluice_err step(run_t *r, sluice_fsm_event_t ev)
{
    json_t *entry = NULL;

    ev.seq = r->seq++;
    sluice_error_clear(&r->err);
    /* The store records an event before it is applied; what cannot be
     * recorded is never applied. */
    if (sluice_fsm_event_to_json(&ev, &entry, &r->err) != SLUICE_OK)
        return r->err.code;
    json_array_append_new(r->log, entry);
    return sluice_fsm_apply(&r->l, &ev, &r->tr, &r->err);
}

static sluice_fsm_event_t E(sluice_fsm_event_type type, double t)
{
    sluice_fsm_event_t ev;

    memset(&ev, 0, sizeof(ev));
    ev.type = type;
    ev.time = t;
    return ev;
}

static sluice_fsm_event_t E_started(uint32_t attempt, double t)
{
    static char name[] = "sluice-site-0123abcd.1";
    static char comment[] = "sluice:launch-1:1";
    sluice_fsm_event_t ev = E(SLUICE_EV_SUBMIT_STARTED, t);

    ev.attempt = attempt;
    ev.job_name = name;
    ev.comment = comment;
    return ev;
}

static sluice_fsm_event_t E_ids(sluice_fsm_event_type type, uint64_t id, double t)
{
    sluice_fsm_event_t ev = E(type, t);

    ev.job_ids[0] = id;
    ev.n_job_ids = 1;
    ev.attempt = 1;
    return ev;
}

static sluice_fsm_event_t E_lookup(sluice_lookup lk, sluice_lookup_source src, double t)
{
    sluice_fsm_event_t ev = E(SLUICE_EV_OBSERVED, t);

    ev.lookup = lk;
    ev.source = src;
    return ev;
}

static sluice_fsm_event_t E_found(sluice_jobview_t *views, size_t n, double t)
{
    sluice_fsm_event_t ev = E_lookup(SLUICE_LOOKUP_FOUND, SLUICE_SOURCE_LIVE, t);

    ev.jobs = views;
    ev.n_jobs = n;
    return ev;
}

static sluice_fsm_event_t E_cancel(double t)
{
    static char caller[] = "alice";
    sluice_fsm_event_t ev = E(SLUICE_EV_CANCEL_REQUESTED, t);

    ev.caller = caller;
    return ev;
}

static sluice_jobview_t V(sluice_job_base base, uint32_t flags, bool has_exit, int code, int sig)
{
    sluice_jobview_t v;

    memset(&v, 0, sizeof(v));
    v.job_id = 42;
    v.base = base;
    v.flags = flags;
    v.has_exit = has_exit;
    v.exit_code = code;
    v.exit_signal = sig;
    return v;
}

/* A single job observed once in the given state. */
static sluice_err observe(run_t *r, sluice_jobview_t v, double t)
{
    return step(r, E_found(&v, 1, t));
}

/* NEW → ACCEPTED → SUBMITTING → PENDING (job 42 submitted at t=0). */
static void to_submitted(run_t *r)
{
    cr_assert_eq(step(r, E(SLUICE_EV_ACCEPTED, 0)), SLUICE_OK);
    cr_assert_eq(step(r, E_started(1, 0)), SLUICE_OK, "%s", r->err.text);
    cr_assert_eq(step(r, E_ids(SLUICE_EV_SUBMITTED, 42, 0)), SLUICE_OK, "%s", r->err.text);
    cr_assert_eq(r->l.state, SLUICE_FSM_PENDING);
}

static void to_running(run_t *r)
{
    to_submitted(r);
    cr_assert_eq(observe(r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 1), SLUICE_OK);
    cr_assert_eq(r->l.state, SLUICE_FSM_RUNNING);
}

TestSuite(fsm, .timeout = 30);

/* ---- names ------------------------------------------------------------- */

Test(fsm, name_tables_round_trip)
{
    int i, code;
    sluice_fsm_state s;
    sluice_fsm_event_type e;
    static const int codes[] = {0, 1, 9, 101, 102, 103, 104, 127};

    for (i = 0; i < SLUICE_FSM_STATE_COUNT_; i++) {
        cr_assert(sluice_fsm_state_from_name(sluice_fsm_state_name((sluice_fsm_state)i), &s));
        cr_assert_eq((int)s, i);
    }
    for (i = 0; i < SLUICE_EV_COUNT_; i++) {
        cr_assert(sluice_fsm_event_from_name(sluice_fsm_event_name((sluice_fsm_event_type)i), &e));
        cr_assert_eq((int)e, i);
    }
    for (i = 0; i < (int)(sizeof(codes) / sizeof(codes[0])); i++) {
        cr_assert_not_null(sluice_result_name(codes[i]), "%d", codes[i]);
        for (code = 0; code < i; code++)
            cr_assert_str_neq(sluice_result_name(codes[i]), sluice_result_name(codes[code]));
    }
    cr_assert_str_eq(sluice_result_name(104), "INFRASTRUCTURE_ERROR");
    cr_assert_str_eq(sluice_fsm_event_name(SLUICE_EV_PENDING_TIMEOUT), "pending-timeout");
    cr_assert_null(sluice_result_name(5));
    cr_assert_null(sluice_fsm_state_name(SLUICE_FSM_STATE_COUNT_));
    cr_assert_not(sluice_fsm_event_from_name("bogus", &e));
    cr_assert_not(sluice_fsm_state_from_name(NULL, &s));
}

/* ---- result mapping of a final job (one row per rule) ------------------ */

typedef struct {
    const char *what;
    sluice_job_base base;
    uint32_t flags;
    bool has_exit;
    int exit_code;
    int sig;
    bool has_derived;
    int derived;
    int expect;
    const char *reason_has;
} final_row;

static const final_row final_rows[] = {
    {"completed exit 0", SLUICE_JOB_COMPLETED, 0, true, 0, 0, false, 0, 0, "COMPLETED"},
    {"completed no exit info", SLUICE_JOB_COMPLETED, 0, false, 0, 0, false, 0, 0, "completed"},
    {"failed exit 1", SLUICE_JOB_FAILED, 0, true, 1, 0, false, 0, 1, "exit=1"},
    {"failed exit 2", SLUICE_JOB_FAILED, 0, true, 2, 0, false, 0, 1, "FAILED"},
    {"failed no exit info", SLUICE_JOB_FAILED, 0, false, 0, 0, false, 0, 1, "FAILED"},
    {"signal", SLUICE_JOB_FAILED, 0, true, 0, 9, false, 0, 1, "signal=9"},
    {"shell-reported signal", SLUICE_JOB_FAILED, 0, true, 137, 0, false, 0, 1, "128+9: SIGKILL"},
    {"shell-reported SIGTERM", SLUICE_JOB_FAILED, 0, true, 143, 0, false, 0, 1, "SIGTERM"},
    {"exit 101 kept", SLUICE_JOB_FAILED, 0, true, 101, 0, false, 0, 101, "101"},
    {"exit 102 kept", SLUICE_JOB_FAILED, 0, true, 102, 0, false, 0, 102, "102"},
    {"exit 103 kept", SLUICE_JOB_FAILED, 0, true, 103, 0, false, 0, 103, "103"},
    {"exit 104 infra", SLUICE_JOB_FAILED, 0, true, 104, 0, false, 0, 104, "104"},
    {"derived 102 used", SLUICE_JOB_FAILED, 0, true, 1, 0, true, 102, 102, "derived=102"},
    {"exit code before derived", SLUICE_JOB_FAILED, 0, true, 101, 0, true, 103, 101, "101"},
    {"derived 104 infra", SLUICE_JOB_FAILED, 0, true, 7, 0, true, 104, 104, "104"},
    {"boot fail", SLUICE_JOB_BOOT_FAIL, 0, false, 0, 0, false, 0, 104, "BOOT_FAIL"},
    {"deadline", SLUICE_JOB_DEADLINE, 0, false, 0, 0, false, 0, 104, "DEADLINE"},
    {"node fail", SLUICE_JOB_NODE_FAIL, 0, true, 0, 9, false, 0, 104, "NODE_FAIL"},
    {"oom", SLUICE_JOB_OUT_OF_MEMORY, 0, true, 0, 9, false, 0, 104, "OUT_OF_MEMORY"},
    {"preempted", SLUICE_JOB_PREEMPTED, 0, false, 0, 0, false, 0, 104, "PREEMPTED"},
    {"timeout", SLUICE_JOB_TIMEOUT, 0, true, 0, 15, false, 0, 104, "TIMEOUT"},
    {"timeout beats 101", SLUICE_JOB_TIMEOUT, 0, true, 101, 0, false, 0, 104, "TIMEOUT"},
    {"launch failed flag", SLUICE_JOB_FAILED, F(LAUNCH_FAILED), true, 1, 0, false, 0, 104,
     "LAUNCH_FAILED"},
    {"reconfig fail flag", SLUICE_JOB_COMPLETED, F(RECONFIG_FAIL), true, 0, 0, false, 0, 104,
     "RECONFIG_FAIL"},
    {"revoked flag", SLUICE_JOB_CANCELLED, F(REVOKED), false, 0, 0, false, 0, 104, "REVOKED"},
    {"special flags ignored", SLUICE_JOB_COMPLETED, F(UPDATE_DB) | F(RESV_DEL_HOLD), true, 0, 0,
     false, 0, 0, "COMPLETED"},
};

Test(fsm, final_job_results_by_rule)
{
    size_t i;

    for (i = 0; i < sizeof(final_rows) / sizeof(final_rows[0]); i++) {
        const final_row *row = &final_rows[i];
        sluice_jobview_t v = V(row->base, row->flags, row->has_exit, row->exit_code, row->sig);
        run_t r;

        v.has_derived = row->has_derived;
        v.derived_exit_code = row->derived;
        run_init(&r, NULL);
        to_running(&r);
        cr_assert_eq(observe(&r, v, 5), SLUICE_OK, "%s: %s", row->what, r.err.text);
        cr_assert_eq(r.l.state, SLUICE_FSM_DONE, "%s", row->what);
        cr_assert_eq(r.l.result, row->expect, "%s: got %d (%s)", row->what, r.l.result, r.l.reason);
        cr_assert(strstr(r.l.reason, row->reason_has) != NULL, "%s: reason '%s' lacks '%s'",
                  row->what, r.l.reason, row->reason_has);
        cr_assert_eq(r.tr.to, SLUICE_FSM_DONE);
        cr_assert_eq(r.tr.from, SLUICE_FSM_RUNNING);
        run_done(&r);
    }
}

/* ---- live states ------------------------------------------------------- */

typedef struct {
    const char *what;
    sluice_job_base base;
    uint32_t flags;
    bool requeue_allowed;
    sluice_fsm_state expect;
} live_row;

static const live_row live_rows[] = {
    {"pending", SLUICE_JOB_PENDING, 0, false, SLUICE_FSM_PENDING},
    {"held", SLUICE_JOB_PENDING, 0, false, SLUICE_FSM_PENDING},
    {"running", SLUICE_JOB_RUNNING, 0, false, SLUICE_FSM_RUNNING},
    {"suspended counts as running", SLUICE_JOB_SUSPENDED, 0, false, SLUICE_FSM_RUNNING},
    {"configuring is running", SLUICE_JOB_RUNNING, F(CONFIGURING) | F(POWER_UP_NODE), false,
     SLUICE_FSM_RUNNING},
    {"completing is not final", SLUICE_JOB_COMPLETED, F(COMPLETING), false, SLUICE_FSM_RUNNING},
    {"failed+completing is not final", SLUICE_JOB_FAILED, F(COMPLETING), false, SLUICE_FSM_RUNNING},
    {"stage out is not final", SLUICE_JOB_COMPLETED, F(STAGE_OUT), false, SLUICE_FSM_RUNNING},
    {"requeued (allowed) is pending", SLUICE_JOB_PENDING, F(REQUEUED), true, SLUICE_FSM_PENDING},
    {"requeue hold (allowed) is pending", SLUICE_JOB_PENDING, F(REQUEUE_HOLD), true,
     SLUICE_FSM_PENDING},
    {"requeued terminal base is pending", SLUICE_JOB_NODE_FAIL, F(REQUEUED), true,
     SLUICE_FSM_PENDING},
    {"requeued (not allowed) is cancelled", SLUICE_JOB_PENDING, F(REQUEUED), false,
     SLUICE_FSM_CANCELLING},
};

Test(fsm, live_states_stay_live)
{
    size_t i;

    for (i = 0; i < sizeof(live_rows) / sizeof(live_rows[0]); i++) {
        const live_row *row = &live_rows[i];
        sluice_fsm_config_t cfg;
        run_t r;

        sluice_fsm_config_default(&cfg);
        cfg.requeue_allowed = row->requeue_allowed;
        run_init(&r, &cfg);
        to_running(&r);
        cr_assert_eq(observe(&r, V(row->base, row->flags, false, 0, 0), 3), SLUICE_OK);
        cr_assert_eq(r.l.state, row->expect, "%s: got %s", row->what,
                     sluice_fsm_state_name(r.l.state));
        cr_assert_eq(r.l.result, SLUICE_RESULT_UNKNOWN);
        run_done(&r);
    }
}

Test(fsm, completing_then_final_ends)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    observe(&r, V(SLUICE_JOB_COMPLETED, F(COMPLETING), true, 0, 0), 3);
    cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    observe(&r, V(SLUICE_JOB_COMPLETED, 0, true, 0, 0), 4);
    cr_assert_eq(r.l.result, SLUICE_RESULT_SUCCEEDED);
    run_done(&r);
}

Test(fsm, requeue_not_allowed_ends_infrastructure_error)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    observe(&r, V(SLUICE_JOB_PENDING, F(REQUEUED), false, 0, 0), 3);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    cr_assert(sluice_fsm_due(&r.l, 3) & SLUICE_DUE_CANCEL);
    step(&r, E(SLUICE_EV_CANCEL_SENT, 4));
    observe(&r, V(SLUICE_JOB_CANCELLED, 0, true, 0, 15), 5);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "requeue") != NULL, "%s", r.l.reason);
    run_done(&r);
}

/* ---- lookups ----------------------------------------------------------- */

Test(fsm, unavailable_never_terminal_nor_a_miss)
{
    static const sluice_fsm_state from[] = {SLUICE_FSM_PENDING, SLUICE_FSM_RUNNING,
                                            SLUICE_FSM_CANCELLING};
    size_t k;
    int i;

    for (k = 0; k < 3; k++) {
        run_t r;

        run_init(&r, NULL);
        to_submitted(&r);
        if (from[k] != SLUICE_FSM_PENDING)
            observe(&r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 1);
        if (from[k] == SLUICE_FSM_CANCELLING)
            step(&r, E_cancel(2));
        cr_assert_eq(r.l.state, from[k]);
        step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 3));
        for (i = 0; i < 200; i++) {
            cr_assert_eq(step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE,
                                           i % 2 ? SLUICE_SOURCE_LIVE : SLUICE_SOURCE_ACCOUNTING,
                                           10 + 7 * i)),
                         SLUICE_OK);
            cr_assert_eq(r.l.state, from[k]);
            cr_assert_eq(r.l.misses, 0);
        }
        run_done(&r);
    }
}

Test(fsm, left_live_queue_reads_accounting)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    cr_assert(sluice_fsm_due(&r.l, 2) & SLUICE_DUE_LIVE_LOOKUP);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 2));
    cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    cr_assert_eq(r.l.misses, 0);
    cr_assert(sluice_fsm_due(&r.l, 2) & SLUICE_DUE_ACCOUNTING_LOOKUP);
    cr_assert_not(sluice_fsm_due(&r.l, 2) & SLUICE_DUE_LIVE_LOOKUP);
    {
        sluice_jobview_t v = V(SLUICE_JOB_COMPLETED, 0, true, 0, 0);
        sluice_fsm_event_t ev = E_found(&v, 1, 3);

        ev.source = SLUICE_SOURCE_ACCOUNTING;
        step(&r, ev);
    }
    cr_assert_eq(r.l.result, SLUICE_RESULT_SUCCEEDED);
    cr_assert(strstr(r.l.reason, "accounting") != NULL);
    run_done(&r);
}

static void accounting_miss(run_t *r, double t)
{
    cr_assert_eq(step(r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_ACCOUNTING, t)), SLUICE_OK,
                 "%s", r->err.text);
}

Test(fsm, five_spaced_misses_fail)
{
    run_t r;
    int i;

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 10));
    for (i = 0; i < 4; i++) {
        accounting_miss(&r, 10 + 6 * i);
        cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    }
    cr_assert_eq(r.l.misses, 4);
    cr_assert_not(sluice_fsm_due(&r.l, 33) & SLUICE_DUE_ACCOUNTING_LOOKUP);
    cr_assert(sluice_fsm_due(&r.l, 34) & SLUICE_DUE_ACCOUNTING_LOOKUP);
    accounting_miss(&r, 34);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "5 healthy misses") != NULL, "%s", r.l.reason);
    run_done(&r);
}

Test(fsm, misses_closer_than_spacing_do_not_count)
{
    run_t r;
    int i;

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 10));
    /* Every 5 s: counted at 0, 10, 20, 30 (4), not the ones between. */
    for (i = 0; i < 8; i++)
        accounting_miss(&r, 100 + 5 * i);
    cr_assert_eq(r.l.misses, 4);
    cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    run_done(&r);
}

Test(fsm, miss_budget_and_spacing_configurable)
{
    sluice_fsm_config_t cfg;
    run_t r;

    sluice_fsm_config_default(&cfg);
    cfg.miss_budget = 2;
    cfg.miss_spacing = 60;
    run_init(&r, &cfg);
    to_running(&r);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 10));
    accounting_miss(&r, 10);
    accounting_miss(&r, 50);
    cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    accounting_miss(&r, 70);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    run_done(&r);
}

Test(fsm, accounting_outage_keeps_miss_budget)
{
    run_t r;
    int i;

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 10));
    accounting_miss(&r, 10);
    accounting_miss(&r, 20);
    for (i = 0; i < 50; i++)
        step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_ACCOUNTING, 30 + i));
    cr_assert_eq(r.l.misses, 2);
    cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    run_done(&r);
}

Test(fsm, found_resets_misses)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 10));
    accounting_miss(&r, 10);
    accounting_miss(&r, 20);
    observe(&r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 25);
    cr_assert_eq(r.l.misses, 0);
    cr_assert_not(r.l.left_queue);
    run_done(&r);
}

/* ---- pending timer ----------------------------------------------------- */

static sluice_fsm_config_t timeout_cfg(double seconds)
{
    sluice_fsm_config_t cfg;

    sluice_fsm_config_default(&cfg);
    cfg.pending_timeout = seconds;
    return cfg;
}

Test(fsm, pending_timer_starts_at_first_pending_observation)
{
    sluice_fsm_config_t cfg = timeout_cfg(60);
    run_t r;

    run_init(&r, &cfg);
    to_submitted(&r); /* submitted at t=0 */
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 100);
    cr_assert(r.l.has_pending);
    cr_assert_eq(r.l.first_pending, 100);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 150);
    cr_assert_eq(r.l.pending_observed, 50);
    cr_assert_not(sluice_fsm_due(&r.l, 150) & SLUICE_DUE_PENDING_TIMEOUT);
    cr_assert_eq(step(&r, E(SLUICE_EV_PENDING_TIMEOUT, 150)), SLUICE_ESTATE);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 160);
    cr_assert(sluice_fsm_due(&r.l, 160) & SLUICE_DUE_PENDING_TIMEOUT);
    run_done(&r);
}

Test(fsm, pending_timer_pauses_while_unavailable)
{
    sluice_fsm_config_t cfg = timeout_cfg(60);
    run_t r;
    int i;

    run_init(&r, &cfg);
    to_submitted(&r);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 0);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 10);
    for (i = 0; i < 100; i++)
        step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, 20 + 10 * i));
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 2000);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 2010);
    cr_assert_eq(r.l.pending_observed, 20);
    cr_assert_not(sluice_fsm_due(&r.l, 2010) & SLUICE_DUE_PENDING_TIMEOUT);
    run_done(&r);
}

Test(fsm, pending_timeout_cancels_and_ends_infrastructure_error)
{
    sluice_fsm_config_t cfg = timeout_cfg(30);
    run_t r;
    int t;

    run_init(&r, &cfg);
    to_submitted(&r);
    for (t = 0; t <= 30; t += 10)
        observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), t);
    cr_assert(sluice_fsm_due(&r.l, 30) & SLUICE_DUE_PENDING_TIMEOUT);
    cr_assert_eq(step(&r, E(SLUICE_EV_PENDING_TIMEOUT, 30)), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    cr_assert(sluice_fsm_due(&r.l, 30) & SLUICE_DUE_CANCEL);
    step(&r, E(SLUICE_EV_CANCEL_SENT, 31));
    cr_assert_not(sluice_fsm_due(&r.l, 32) & SLUICE_DUE_CANCEL);
    cr_assert(sluice_fsm_due(&r.l, 31 + cfg.cancel_resend) & SLUICE_DUE_CANCEL);
    observe(&r, V(SLUICE_JOB_CANCELLED, 0, true, 0, 15), 33);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "pending timeout") != NULL, "%s", r.l.reason);
    run_done(&r);
}

Test(fsm, pending_time_counts_only_consecutive_healthy_pending)
{
    sluice_fsm_config_t cfg = timeout_cfg(0);
    run_t r;

    run_init(&r, &cfg);
    to_submitted(&r);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 0);
    step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, 5));
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 100);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 103);
    cr_assert_eq(r.l.pending_observed, 3);
    cr_assert_not(sluice_fsm_due(&r.l, 1e9) & SLUICE_DUE_PENDING_TIMEOUT); /* 0 = none */
    run_done(&r);
}

/* ---- cancel ------------------------------------------------------------ */

Test(fsm, caller_abort_is_aborted)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    cr_assert_eq(step(&r, E_cancel(5)), SLUICE_OK);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    cr_assert_eq(step(&r, E_cancel(6)), SLUICE_OK); /* idempotent */
    step(&r, E(SLUICE_EV_CANCEL_SENT, 6));
    observe(&r, V(SLUICE_JOB_CANCELLED, 0, true, 0, 15), 8);
    cr_assert_eq(r.l.result, SLUICE_RESULT_ABORTED);
    cr_assert(strstr(r.l.reason, "alice") != NULL, "%s", r.l.reason);
    run_done(&r);
}

Test(fsm, abort_wins_over_late_completed)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_cancel(5));
    observe(&r, V(SLUICE_JOB_COMPLETED, 0, true, 0, 0), 6);
    cr_assert_eq(r.l.result, SLUICE_RESULT_ABORTED);
    run_done(&r);
}

Test(fsm, abort_does_not_hide_infrastructure_failure)
{
    run_t r;

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_cancel(5));
    observe(&r, V(SLUICE_JOB_NODE_FAIL, 0, false, 0, 0), 6);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    run_done(&r);
}

Test(fsm, abort_before_submission)
{
    run_t r;

    run_init(&r, NULL);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    step(&r, E_cancel(1));
    cr_assert_eq(r.l.result, SLUICE_RESULT_ABORTED);
    run_done(&r);
}

Test(fsm, abort_during_submit_waits_for_job_then_cancels)
{
    run_t r;

    run_init(&r, NULL);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    step(&r, E_started(1, 0));
    step(&r, E_cancel(1));
    cr_assert_eq(r.l.state, SLUICE_FSM_SUBMITTING);
    step(&r, E_ids(SLUICE_EV_SUBMITTED, 42, 2));
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    cr_assert(sluice_fsm_due(&r.l, 2) & SLUICE_DUE_CANCEL);
    run_done(&r);
}

/* ---- submit exactly once ----------------------------------------------- */

Test(fsm, uncertain_submit_reconciles_and_adopts)
{
    run_t r;

    run_init(&r, NULL);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    cr_assert_eq(sluice_fsm_due(&r.l, 0), SLUICE_DUE_SUBMIT);
    step(&r, E_started(1, 0));
    cr_assert_eq(sluice_fsm_due(&r.l, 0), 0);
    {
        sluice_fsm_event_t ev = E(SLUICE_EV_SUBMIT_UNCERTAIN, 1);
        char detail[] = "timeout";

        ev.detail = detail;
        step(&r, ev);
    }
    cr_assert_eq(sluice_fsm_due(&r.l, 1), SLUICE_DUE_RECONCILE);
    cr_assert_eq(step(&r, E_ids(SLUICE_EV_ADOPTED, 77, 70)), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_PENDING);
    cr_assert_eq(r.l.job_ids[0], 77);
    run_done(&r);
}

Test(fsm, absence_confirmed_allows_exactly_one_new_attempt)
{
    run_t r;
    sluice_fsm_event_t unc = E(SLUICE_EV_SUBMIT_UNCERTAIN, 1);
    char detail[] = "connection dropped";

    unc.detail = detail;
    run_init(&r, NULL);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    step(&r, E_started(1, 0));
    cr_assert_eq(step(&r, E(SLUICE_EV_ABSENCE_CONFIRMED, 1)), SLUICE_ESTATE);
    step(&r, unc);
    cr_assert_eq(step(&r, E_started(2, 2)), SLUICE_ESTATE); /* no blind POST */
    step(&r, E(SLUICE_EV_ABSENCE_CONFIRMED, 90));
    cr_assert_eq(sluice_fsm_due(&r.l, 90), SLUICE_DUE_NEW_ATTEMPT);
    cr_assert_eq(step(&r, E_started(3, 91)), SLUICE_ESTATE);
    cr_assert_eq(step(&r, E_started(2, 91)), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.attempt, 2);
    step(&r, E_ids(SLUICE_EV_SUBMITTED, 43, 92));
    cr_assert_eq(r.l.state, SLUICE_FSM_PENDING);
    run_done(&r);
}

Test(fsm, proven_rejection_is_infrastructure_error)
{
    run_t r;
    sluice_fsm_event_t ev = E(SLUICE_EV_SUBMIT_REJECTED, 1);
    char detail[] = "Invalid partition name specified";

    ev.detail = detail;
    run_init(&r, NULL);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    step(&r, E_started(1, 0));
    step(&r, ev);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "Invalid partition") != NULL);
    run_done(&r);
}

Test(fsm, secret_unavailable_after_restart)
{
    run_t r;

    run_init(&r, NULL);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    step(&r, E(SLUICE_EV_SECRET_UNAVAILABLE, 1));
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert_str_eq(r.l.reason, "secret unavailable after restart");
    run_done(&r);
}

Test(fsm, events_invalid_for_the_state_are_refused_unchanged)
{
    run_t r;
    sluice_fsm_launch_t before;

    run_init(&r, NULL);
    before = r.l;
    cr_assert_eq(step(&r, E_ids(SLUICE_EV_SUBMITTED, 1, 0)), SLUICE_ESTATE);
    cr_assert(sluice_fsm_launch_equal(&before, &r.l));
    to_running(&r);
    before = r.l;
    cr_assert_eq(step(&r, E(SLUICE_EV_ACCEPTED, 3)), SLUICE_ESTATE);
    cr_assert_eq(step(&r, E(SLUICE_EV_CANCEL_SENT, 3)), SLUICE_ESTATE);
    cr_assert_eq(step(&r, E(SLUICE_EV_POOL_EXITS_READ, 3)), SLUICE_ESTATE);
    cr_assert(strstr(r.err.text, "pool-exits-read") != NULL, "%s", r.err.text);
    cr_assert(sluice_fsm_launch_equal(&before, &r.l));
    run_done(&r);
}

/* ---- terminal ---------------------------------------------------------- */

Test(fsm, terminal_state_never_changes)
{
    run_t r;
    char reason[SLUICE_FSM_REASON_MAX];
    int i;

    run_init(&r, NULL);
    to_running(&r);
    observe(&r, V(SLUICE_JOB_FAILED, 0, true, 3, 0), 5);
    cr_assert_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
    memcpy(reason, r.l.reason, sizeof(reason));
    for (i = 0; i < SLUICE_EV_COUNT_; i++) {
        sluice_fsm_event_t ev = E((sluice_fsm_event_type)i, 10 + i);

        cr_assert_eq(sluice_fsm_apply(&r.l, &ev, &r.tr, NULL), SLUICE_OK);
        cr_assert(r.tr.ignored);
        cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
        cr_assert_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
        cr_assert_str_eq(r.l.reason, reason);
    }
    observe(&r, V(SLUICE_JOB_COMPLETED, 0, true, 0, 0), 50);
    cr_assert_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
    cr_assert_eq(sluice_fsm_due(&r.l, 100), 0);
    json_decref(r.log);
}

/* ---- hetjob ------------------------------------------------------------ */

static sluice_err observe2(run_t *r, sluice_jobview_t a, sluice_jobview_t b, double t)
{
    sluice_jobview_t v[2] = {a, b};

    v[1].job_id = 43;
    v[1].het_job_id = 42;
    v[1].het_job_offset = 1;
    v[0].het_job_id = 42;
    return step(r, E_found(v, 2, t));
}

typedef struct {
    const char *what;
    sluice_job_base a, b;
    uint32_t fa, fb;
    int ea, eb;
    sluice_fsm_state state;
    int result;
    bool settling;
} het_row;

static const het_row het_rows[] = {
    {"both pending", SLUICE_JOB_PENDING, SLUICE_JOB_PENDING, 0, 0, 0, 0, SLUICE_FSM_PENDING, 127,
     false},
    {"one running one pending", SLUICE_JOB_RUNNING, SLUICE_JOB_PENDING, 0, 0, 0, 0,
     SLUICE_FSM_PENDING, 127, false},
    {"both running", SLUICE_JOB_RUNNING, SLUICE_JOB_RUNNING, 0, 0, 0, 0, SLUICE_FSM_RUNNING, 127,
     false},
    {"one final one running", SLUICE_JOB_FAILED, SLUICE_JOB_RUNNING, 0, 0, 1, 0, SLUICE_FSM_RUNNING,
     127, false},
    {"one completing", SLUICE_JOB_COMPLETED, SLUICE_JOB_COMPLETED, 0, F(COMPLETING), 0, 0,
     SLUICE_FSM_RUNNING, 127, false},
    {"all completed", SLUICE_JOB_COMPLETED, SLUICE_JOB_COMPLETED, 0, 0, 0, 0, SLUICE_FSM_DONE, 0,
     false},
    {"node fail in one", SLUICE_JOB_COMPLETED, SLUICE_JOB_NODE_FAIL, 0, 0, 0, 0, SLUICE_FSM_DONE,
     104, false},
    {"launch failed in one", SLUICE_JOB_FAILED, SLUICE_JOB_FAILED, F(LAUNCH_FAILED), 0, 1, 1,
     SLUICE_FSM_DONE, 104, false},
    {"failed: read pools", SLUICE_JOB_FAILED, SLUICE_JOB_FAILED, 0, 0, 3, 3, SLUICE_FSM_RUNNING,
     127, true},
    {"102: read pools", SLUICE_JOB_FAILED, SLUICE_JOB_FAILED, 0, 0, 102, 102, SLUICE_FSM_RUNNING,
     127, true},
};

Test(fsm, hetjob_combination_rule)
{
    size_t i;

    for (i = 0; i < sizeof(het_rows) / sizeof(het_rows[0]); i++) {
        const het_row *row = &het_rows[i];
        run_t r;

        run_init(&r, NULL);
        to_submitted(&r);
        cr_assert_eq(observe2(&r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0),
                              V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 1),
                     SLUICE_OK);
        cr_assert_eq(observe2(&r, V(row->a, row->fa, true, row->ea, 0),
                              V(row->b, row->fb, true, row->eb, 0), 2),
                     SLUICE_OK, "%s: %s", row->what, r.err.text);
        cr_assert_eq(r.l.state, row->state, "%s: got %s", row->what,
                     sluice_fsm_state_name(r.l.state));
        cr_assert_eq(r.l.result, row->result, "%s: got %d", row->what, r.l.result);
        cr_assert_eq(r.l.settling, row->settling, "%s", row->what);
        cr_assert_eq(r.l.n_components, 2);
        if (row->settling)
            cr_assert_eq(sluice_fsm_due(&r.l, 3), SLUICE_DUE_POOL_EXITS);
        run_done(&r);
    }
}

static sluice_fsm_event_t E_pool(char *pool, int code, int sig, double t)
{
    sluice_fsm_event_t ev = E(SLUICE_EV_POOL_EXIT, t);

    ev.pool = pool;
    ev.exit_code = code;
    ev.signal = sig;
    return ev;
}

Test(fsm, hetjob_failure_names_the_pool)
{
    char trainer[] = "trainer", rollout[] = "rollout";
    run_t r;

    run_init(&r, NULL);
    to_submitted(&r);
    observe2(&r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0), V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 1);
    observe2(&r, V(SLUICE_JOB_FAILED, 0, true, 3, 0), V(SLUICE_JOB_FAILED, 0, true, 3, 0), 9);
    cr_assert(r.l.settling);
    cr_assert_eq(step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, 9)),
                 SLUICE_ESTATE);
    step(&r, E_pool(trainer, 0, 0, 10));
    step(&r, E_pool(rollout, 3, 0, 10));
    cr_assert_eq(step(&r, E(SLUICE_EV_POOL_EXITS_READ, 11)), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_assert_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
    cr_assert(strstr(r.l.reason, "pool 'rollout' failed (exit 3") != NULL, "%s", r.l.reason);
    run_done(&r);
}

Test(fsm, hetjob_pool_with_workload_code)
{
    char trainer[] = "trainer", rollout[] = "rollout";
    run_t r;

    run_init(&r, NULL);
    to_submitted(&r);
    step(&r, E_pool(rollout, 0, 15, 8)); /* stopped by the script after trainer failed */
    step(&r, E_pool(trainer, 102, 0, 8));
    observe2(&r, V(SLUICE_JOB_FAILED, 0, true, 102, 0), V(SLUICE_JOB_FAILED, 0, true, 102, 0), 9);
    step(&r, E(SLUICE_EV_POOL_EXITS_READ, 11));
    cr_assert_eq(r.l.result, 102);
    cr_assert(strstr(r.l.reason, "pool 'trainer'") != NULL, "%s", r.l.reason);
    run_done(&r);
}

/* A pool whose exit file held no status (issue 27: a workload wrote 999
 * into exit/a and made it read-only) is that pool's failure with its status
 * unknown: the launch ends EXECUTION_ERROR, the reason names the pool and
 * quotes the file, and the event survives its JSON round trip.  An exit
 * code out of range is still refused by the codec. */
Test(fsm, hetjob_pool_with_unknown_status_fails_and_names_the_file)
{
    char a[] = "a", raw[] = "999";
    sluice_fsm_event_t ev = E_pool(a, 0, 0, 10), back;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    run_t r;

    ev.unknown = true;
    ev.raw = raw;
    cr_assert_eq(sluice_fsm_event_to_json(&ev, &j, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_fsm_event_from_json(j, &back, &err), SLUICE_OK, "%s", err.text);
    cr_expect(back.unknown);
    cr_expect_str_eq(back.raw, "999");
    sluice_fsm_event_clear(&back);
    json_object_set_new(json_object_get(j, "context"), "exit_code", json_integer(999));
    cr_expect_eq(sluice_fsm_event_from_json(j, &back, &err), SLUICE_EINVAL);
    json_decref(j);

    run_init(&r, NULL);
    to_submitted(&r);
    observe2(&r, V(SLUICE_JOB_FAILED, 0, true, 255, 0), V(SLUICE_JOB_FAILED, 0, true, 255, 0), 9);
    cr_assert(r.l.settling);
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(step(&r, E(SLUICE_EV_POOL_EXITS_READ, 11)), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_expect_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
    cr_expect(strstr(r.l.reason, "pool 'a' failed (status unknown: its exit file held '999'") !=
                  NULL,
              "%s", r.l.reason);
    run_done(&r);
}

Test(fsm, hetjob_without_exit_files_keeps_slurm_verdict)
{
    run_t r;

    run_init(&r, NULL);
    to_submitted(&r);
    observe2(&r, V(SLUICE_JOB_FAILED, 0, true, 1, 0), V(SLUICE_JOB_FAILED, 0, true, 1, 0), 9);
    step(&r, E(SLUICE_EV_POOL_EXITS_READ, 11));
    cr_assert_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
    cr_assert(strstr(r.l.reason, "no pool exit file") != NULL, "%s", r.l.reason);
    run_done(&r);
}

/* ---- CANCELLED that sluice did not ask for (the exit files decide) ------ */

typedef struct {
    const char *name;
    int exit_code;
    int signal;
    bool first;
} pool_row;

typedef struct {
    const char *what;
    size_t n_comp;
    sluice_job_base a, b; /* final bases of components 0 and 1 */
    int ea, eb;           /* their exit codes (the batch script's) */
    int sa;               /* component 0's signal */
    bool caller_abort;
    pool_row pools[3]; /* exit files, in render order (name NULL ends) */
    bool settles;
    int expect;
    const char *reason_has;
} unasked_row;

static const unasked_row unasked_rows[] = {
    {"b exits 3, a reads CANCELLED",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_FAILED,
     3,
     3,
     0,
     false,
     {{"a", 0, 15, false}, {"b", 3, 0, true}},
     true,
     SLUICE_RESULT_EXECUTION_ERROR,
     "pool 'b' failed (exit 3"},
    {"both CANCELLED, stop signals on a, b exits 3",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     15,
     false,
     {{"a", 0, 15, false}, {"b", 3, 0, true}},
     true,
     SLUICE_RESULT_EXECUTION_ERROR,
     "pool 'b' failed (exit 3"},
    {"a stopped by the script reads 137, b is first",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     9,
     false,
     {{"a", 0, 9, false}, {"b", 5, 0, true}},
     true,
     SLUICE_RESULT_EXECUTION_ERROR,
     "pool 'b' failed (exit 5"},
    {"no .first record (older render): stopped pools are passed over",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     15,
     false,
     {{"a", 0, 15, false}, {"b", 3, 0, false}},
     true,
     SLUICE_RESULT_EXECUTION_ERROR,
     "pool 'b' failed (exit 3"},
    {"b exits 102, component 0 CANCELLED",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_FAILED,
     102,
     102,
     0,
     false,
     {{"a", 0, 15, false}, {"b", 102, 0, true}},
     true,
     102,
     "pool 'b' failed (exit 102"},
    {"b exits 101, both CANCELLED",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     101,
     101,
     0,
     false,
     {{"a", 0, 15, false}, {"b", 101, 0, true}},
     true,
     101,
     "pool 'b'"},
    {"b exits 104, component 0 CANCELLED",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_FAILED,
     104,
     104,
     0,
     false,
     {{"a", 0, 15, false}, {"b", 104, 0, true}},
     true,
     SLUICE_RESULT_INFRASTRUCTURE_ERROR,
     "pool 'b' failed (exit 104"},
    {"both FAILED: as before",
     2,
     SLUICE_JOB_FAILED,
     SLUICE_JOB_FAILED,
     3,
     3,
     0,
     false,
     {{"a", 0, 15, false}, {"b", 3, 0, true}},
     true,
     SLUICE_RESULT_EXECUTION_ERROR,
     "pool 'b' failed (exit 3"},
    {"external cancel, no exit files",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     15,
     false,
     {{NULL, 0, 0, false}},
     true,
     SLUICE_RESULT_INFRASTRUCTURE_ERROR,
     "cancelled without the caller's intent"},
    {"external cancel, every pool stopped by TERM",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     15,
     false,
     {{"a", 0, 15, false}, {"b", 0, 15, false}},
     true,
     SLUICE_RESULT_INFRASTRUCTURE_ERROR,
     "cancelled without the caller's intent"},
    {"external cancel racing the script's record",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     15,
     false,
     {{"a", 0, 15, true}, {"b", 0, 15, false}},
     true,
     SLUICE_RESULT_INFRASTRUCTURE_ERROR,
     "stopped by signal 15"},
    {"single pool CANCELLED, its exit file says 3",
     1,
     SLUICE_JOB_CANCELLED,
     0,
     3,
     0,
     0,
     false,
     {{"main", 3, 0, true}},
     true,
     SLUICE_RESULT_EXECUTION_ERROR,
     "pool 'main' failed (exit 3"},
    {"single pool CANCELLED, exit 103",
     1,
     SLUICE_JOB_CANCELLED,
     0,
     103,
     0,
     0,
     false,
     {{"main", 103, 0, true}},
     true,
     103,
     "pool 'main'"},
    {"single pool: admin scancel, no exit file",
     1,
     SLUICE_JOB_CANCELLED,
     0,
     0,
     0,
     15,
     false,
     {{NULL, 0, 0, false}},
     true,
     SLUICE_RESULT_INFRASTRUCTURE_ERROR,
     "cancelled without the caller's intent"},
    {"caller abort wins",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_CANCELLED,
     3,
     3,
     0,
     true,
     {{"a", 0, 15, false}, {"b", 3, 0, true}},
     false,
     SLUICE_RESULT_ABORTED,
     "aborted by alice"},
    {"node failure is not explained away",
     2,
     SLUICE_JOB_CANCELLED,
     SLUICE_JOB_NODE_FAIL,
     3,
     0,
     0,
     false,
     {{"a", 0, 15, false}, {"b", 3, 0, true}},
     false,
     SLUICE_RESULT_INFRASTRUCTURE_ERROR,
     "NODE_FAIL"},
};

Test(fsm, unasked_cancel_is_the_failed_pools_result)
{
    size_t i, k;

    for (i = 0; i < sizeof(unasked_rows) / sizeof(unasked_rows[0]); i++) {
        const unasked_row *row = &unasked_rows[i];
        sluice_jobview_t v[2] = {V(SLUICE_JOB_RUNNING, 0, false, 0, 0),
                                 V(SLUICE_JOB_RUNNING, 0, false, 0, 0)};
        run_t r;

        v[1].job_id = 43;
        v[1].het_job_offset = 1;
        if (row->n_comp > 1)
            v[0].het_job_id = v[1].het_job_id = 42;
        run_init(&r, NULL);
        to_submitted(&r);
        cr_assert_eq(step(&r, E_found(v, row->n_comp, 1)), SLUICE_OK, "%s", row->what);
        if (row->caller_abort) {
            step(&r, E_cancel(2));
            step(&r, E(SLUICE_EV_CANCEL_SENT, 2));
        }
        v[0] = V(row->a, 0, true, row->ea, row->sa);
        v[1] = V(row->b, 0, true, row->eb, 0);
        v[1].job_id = 43;
        v[1].het_job_offset = 1;
        if (row->n_comp > 1)
            v[0].het_job_id = v[1].het_job_id = 42;
        cr_assert_eq(step(&r, E_found(v, row->n_comp, 9)), SLUICE_OK, "%s: %s", row->what,
                     r.err.text);
        cr_assert_eq(r.l.settling, row->settles, "%s: settling %d (%s)", row->what, r.l.settling,
                     r.l.reason);
        if (row->settles) {
            cr_assert_eq(sluice_fsm_due(&r.l, 9), SLUICE_DUE_POOL_EXITS, "%s", row->what);
            for (k = 0; k < 3 && row->pools[k].name != NULL; k++) {
                char name[16];
                sluice_fsm_event_t ev;

                snprintf(name, sizeof(name), "%s", row->pools[k].name);
                ev = E_pool(name, row->pools[k].exit_code, row->pools[k].signal, 10);
                ev.first = row->pools[k].first;
                cr_assert_eq(step(&r, ev), SLUICE_OK, "%s: %s", row->what, r.err.text);
            }
            cr_assert_eq(step(&r, E(SLUICE_EV_POOL_EXITS_READ, 11)), SLUICE_OK, "%s: %s", row->what,
                         r.err.text);
        }
        cr_assert_eq(r.l.state, SLUICE_FSM_DONE, "%s", row->what);
        cr_assert_eq(r.l.result, row->expect, "%s: got %d (%s)", row->what, r.l.result, r.l.reason);
        cr_assert(strstr(r.l.reason, row->reason_has) != NULL, "%s: reason '%s' lacks '%s'",
                  row->what, r.l.reason, row->reason_has);
        run_done(&r);
    }
}

/* An admin's scancel of a workload that handles SIGTERM and exits 1: the
 * script's exit/.signalled (pool-exit "signalled") without a .first record
 * is INFRASTRUCTURE_ERROR; a .first written before the signal still names
 * its pool; with neither record (an older render) the exit codes decide. */
Test(fsm, unasked_cancel_of_a_signalled_script_is_infrastructure_error)
{
    static const struct {
        const char *what;
        size_t n_pools;
        int code[2], sig[2];
        bool first_b, signalled;
        int expect;
        const char *reason_has;
    } rows[] = {
        {"one pool exits 1 after TERM",
         1,
         {1, 0},
         {0, 0},
         false,
         true,
         SLUICE_RESULT_INFRASTRUCTURE_ERROR,
         "the script was signalled before any pool failed"},
        {"a exits 1, b stopped",
         2,
         {1, 0},
         {0, 15},
         false,
         true,
         SLUICE_RESULT_INFRASTRUCTURE_ERROR,
         "cancelled without the caller's intent"},
        {"b failed first, then the signal",
         2,
         {0, 3},
         {15, 0},
         true,
         true,
         SLUICE_RESULT_EXECUTION_ERROR,
         "pool 'b' failed (exit 3"},
        {"old render: no record at all",
         1,
         {1, 0},
         {0, 0},
         false,
         false,
         SLUICE_RESULT_EXECUTION_ERROR,
         "pool 'a' failed (exit 1"},
    };
    char names[2][2] = {"a", "b"};

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        sluice_jobview_t v = V(SLUICE_JOB_RUNNING, 0, false, 0, 0);
        run_t r;

        run_init(&r, NULL);
        to_submitted(&r);
        cr_assert_eq(observe(&r, v, 1), SLUICE_OK);
        cr_assert_eq(observe(&r, V(SLUICE_JOB_CANCELLED, 0, true, 0, 15), 9), SLUICE_OK);
        cr_assert(r.l.settling, "%s: not settling (%s)", rows[i].what, r.l.reason);
        for (size_t k = 0; k < rows[i].n_pools; k++) {
            sluice_fsm_event_t ev = E_pool(names[k], rows[i].code[k], rows[i].sig[k], 10);

            ev.first = k == 1 && rows[i].first_b;
            ev.signalled = rows[i].signalled;
            cr_assert_eq(step(&r, ev), SLUICE_OK, "%s: %s", rows[i].what, r.err.text);
        }
        cr_assert_eq(step(&r, E(SLUICE_EV_POOL_EXITS_READ, 11)), SLUICE_OK);
        cr_assert_eq(r.l.state, SLUICE_FSM_DONE, "%s", rows[i].what);
        cr_assert_eq(r.l.result, rows[i].expect, "%s: got %d (%s)", rows[i].what, r.l.result,
                     r.l.reason);
        cr_assert(strstr(r.l.reason, rows[i].reason_has) != NULL, "%s: '%s' lacks '%s'",
                  rows[i].what, r.l.reason, rows[i].reason_has);
        run_done(&r);
    }
}

Test(fsm, first_pool_record_survives_the_log)
{
    char a[] = "a", b[] = "b";
    sluice_fsm_event_t ev = E_pool(b, 3, 0, 4);
    json_t *entry = NULL;
    sluice_fsm_event_t back;
    sluice_error_t err = SLUICE_ERROR_INIT;
    run_t r;

    ev.first = true;
    cr_assert_eq(sluice_fsm_event_to_json(&ev, &entry, &err), SLUICE_OK, "%s", err.text);
    cr_assert(json_is_true(json_object_get(json_object_get(entry, "context"), "first")));
    memset(&back, 0, sizeof(back));
    cr_assert_eq(sluice_fsm_event_from_json(entry, &back, &err), SLUICE_OK, "%s", err.text);
    cr_assert(back.first);
    sluice_fsm_event_clear(&back);
    json_decref(entry);

    /* A later record moves the mark; replay gives the same launch. */
    run_init(&r, NULL);
    to_running(&r);
    ev = E_pool(a, 0, 15, 4);
    ev.first = true;
    step(&r, ev);
    ev = E_pool(b, 3, 0, 5);
    ev.first = true;
    step(&r, ev);
    cr_assert_not(r.l.pools[0].first);
    cr_assert(r.l.pools[1].first);
    run_done(&r);
}

/* ---- pending reasons that never clear ----------------------------------- */

Test(fsm, unschedulable_cancels_and_ends_infrastructure_error)
{
    char why[] = "BadConstraints";
    sluice_fsm_event_t ev;
    run_t r;

    run_init(&r, NULL);
    to_submitted(&r);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 1);
    ev = E(SLUICE_EV_UNSCHEDULABLE, 2);
    ev.detail = why;
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    cr_assert_eq(r.l.intent, SLUICE_CANCEL_UNSCHEDULABLE);
    cr_assert(sluice_fsm_due(&r.l, 2) & SLUICE_DUE_CANCEL);
    cr_assert_eq(step(&r, ev), SLUICE_ESTATE, "only once, and only while pending");
    step(&r, E(SLUICE_EV_CANCEL_SENT, 3));
    observe(&r, V(SLUICE_JOB_CANCELLED, 0, true, 0, 15), 4);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE, "no exit files to wait for: sluice cancelled it");
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "pending reason BadConstraints can never clear") != NULL, "%s",
              r.l.reason);
    run_done(&r);

    /* A caller's abort recorded first wins; a running job is not touched. */
    run_init(&r, NULL);
    to_running(&r);
    cr_assert_eq(step(&r, ev), SLUICE_ESTATE);
    ev.detail = NULL;
    run_done(&r);
    run_init(&r, NULL);
    to_submitted(&r);
    cr_assert_eq(step(&r, ev), SLUICE_EINVAL, "detail required");
    run_done(&r);
}

/* ---- dependencies ------------------------------------------------------ */

/* dependency-failed: before any job the launch ends at once; with a job it
 * is cancelled and ends INFRASTRUCTURE_ERROR with the reason; not while a
 * cancel intent is there; detail required. */
Test(fsm, dependency_failed_ends_or_cancels_the_dependent)
{
    char why[] = "launch P ended EXECUTION_ERROR; afterok needs it to succeed";
    sluice_fsm_event_t ev = E(SLUICE_EV_DEPENDENCY_FAILED, 2);
    run_t r;

    ev.detail = why;
    run_init(&r, NULL);
    cr_assert_eq(step(&r, E(SLUICE_EV_ACCEPTED, 1)), SLUICE_OK);
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert_str_eq(r.l.reason, "dependency never satisfied: launch P ended EXECUTION_ERROR; "
                                 "afterok needs it to succeed");
    run_done(&r);

    run_init(&r, NULL);
    to_submitted(&r);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 1);
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    cr_assert_eq(r.l.intent, SLUICE_CANCEL_DEPENDENCY);
    cr_assert(sluice_fsm_due(&r.l, 2) & SLUICE_DUE_CANCEL);
    cr_assert_eq(step(&r, ev), SLUICE_ESTATE, "once");
    step(&r, E(SLUICE_EV_CANCEL_SENT, 3));
    observe(&r, V(SLUICE_JOB_CANCELLED, 0, true, 0, 15), 4);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "dependency never satisfied: launch P ended EXECUTION_ERROR") !=
                  NULL,
              "%s", r.l.reason);
    run_done(&r);

    /* a running dependent (after: waiting for peers.env) is cancelled too */
    run_init(&r, NULL);
    to_running(&r);
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING);
    run_done(&r);

    /* the caller's abort first: nothing to add */
    run_init(&r, NULL);
    to_running(&r);
    cr_assert_eq(step(&r, E_cancel(2)), SLUICE_OK);
    cr_assert_eq(step(&r, ev), SLUICE_ESTATE);
    ev.detail = NULL;
    cr_assert_eq(step(&r, ev), SLUICE_EINVAL, "detail required");
    run_done(&r);
}

/* A cancel for a waiting job that was not sent yet is withdrawn when the
 * launcher's fresh read shows the job started; a sent cancel, or the
 * caller's, is not. */
Test(fsm, cancel_for_a_waiting_job_is_withdrawn_once_it_started)
{
    char why[] = "BadConstraints";
    sluice_fsm_event_t ev = E(SLUICE_EV_UNSCHEDULABLE, 2);
    run_t r;

    ev.detail = why;
    run_init(&r, NULL);
    to_submitted(&r);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 1);
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    observe(&r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 3);
    cr_assert_eq(r.l.state, SLUICE_FSM_CANCELLING, "an observation alone does not withdraw");
    cr_assert_eq(step(&r, E(SLUICE_EV_CANCEL_WITHDRAWN, 4)), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_RUNNING);
    cr_assert_eq(r.l.intent, SLUICE_CANCEL_NONE);
    cr_assert_not(sluice_fsm_due(&r.l, 4) & SLUICE_DUE_CANCEL);
    observe(&r, V(SLUICE_JOB_COMPLETED, 0, true, 0, 0), 5);
    cr_assert_eq(r.l.result, SLUICE_RESULT_SUCCEEDED, "%s", r.l.reason);
    run_done(&r);

    run_init(&r, NULL);
    to_submitted(&r);
    observe(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), 1);
    step(&r, ev);
    step(&r, E(SLUICE_EV_CANCEL_SENT, 3));
    cr_assert_eq(step(&r, E(SLUICE_EV_CANCEL_WITHDRAWN, 4)), SLUICE_ESTATE, "the DELETE is out");
    run_done(&r);

    run_init(&r, NULL);
    to_running(&r);
    step(&r, E_cancel(3));
    cr_assert_eq(step(&r, E(SLUICE_EV_CANCEL_WITHDRAWN, 4)), SLUICE_ESTATE, "the caller's cancel");
    run_done(&r);
}

/* ---- JSON -------------------------------------------------------------- */

typedef struct {
    const char *json;
    const char *field;
} bad_row;

static const bad_row bad_rows[] = {
    {"[]", "event"},
    {"{\"seq\":0,\"time\":1,\"name\":\"bogus\",\"context\":{}}", "name"},
    {"{\"seq\":0,\"time\":1,\"name\":\"accepted\"}", "context"},
    {"{\"seq\":0,\"time\":\"x\",\"name\":\"accepted\",\"context\":{}}", "time"},
    {"{\"seq\":-1,\"time\":1,\"name\":\"accepted\",\"context\":{}}", "seq"},
    {"{\"seq\":0,\"time\":1,\"name\":\"accepted\",\"context\":{},\"x\":1}", "event.x"},
    {"{\"seq\":0,\"time\":1,\"name\":\"accepted\",\"context\":{\"attempt\":1}}", "context.attempt"},
    {"{\"seq\":0,\"time\":1,\"name\":\"submit-started\",\"context\":{\"attempt\":\"1\","
     "\"job_name\":\"a\",\"comment\":\"b\"}}",
     "context.attempt"},
    {"{\"seq\":0,\"time\":1,\"name\":\"submitted\",\"context\":{\"job_ids\":[0]}}",
     "context.job_ids[0]"},
    {"{\"seq\":0,\"time\":1,\"name\":\"observed\",\"context\":{\"lookup\":\"MAYBE\","
     "\"source\":\"live\"}}",
     "context.lookup"},
    {"{\"seq\":0,\"time\":1,\"name\":\"observed\",\"context\":{\"lookup\":\"FOUND\","
     "\"source\":\"live\",\"jobs\":[{\"job_id\":1,\"state\":\"DONE\"}]}}",
     "context.jobs[0].state"},
    {"{\"seq\":0,\"time\":1,\"name\":\"observed\",\"context\":{\"lookup\":\"FOUND\","
     "\"source\":\"live\",\"jobs\":[{\"job_id\":1,\"state\":\"FAILED\",\"flags\":[\"X\"]}]}}",
     "context.jobs[0].flags[0]"},
    {"{\"seq\":0,\"time\":1,\"name\":\"observed\",\"context\":{\"lookup\":\"NOT_FOUND\","
     "\"source\":\"live\",\"jobs\":[]}}",
     "context.jobs"},
    {"{\"seq\":0,\"time\":1,\"name\":\"pool-exit\",\"context\":{\"pool\":\"a\","
     "\"exit_code\":256,\"signal\":0}}",
     "context.exit_code"},
    {"{\"seq\":0,\"time\":1,\"name\":\"cancel-requested\",\"context\":{\"caller\":5}}",
     "context.caller"},
    {"{\"seq\":0,\"time\":1,\"name\":\"pool-exit\",\"context\":{\"pool\":\"a\","
     "\"exit_code\":3,\"signal\":0,\"first\":1}}",
     "context.first"},
};

Test(fsm, json_validation_names_the_field)
{
    size_t i;

    for (i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
        json_t *j = json_loads(bad_rows[i].json, 0, NULL);
        sluice_fsm_event_t ev;
        sluice_error_t err = SLUICE_ERROR_INIT;

        cr_assert_not_null(j, "row %zu does not parse", i);
        memset(&ev, 0, sizeof(ev));
        cr_assert_eq(sluice_fsm_event_from_json(j, &ev, &err), SLUICE_EINVAL, "row %zu", i);
        cr_assert(strstr(err.text, bad_rows[i].field) != NULL, "row %zu: '%s' lacks '%s'", i,
                  err.text, bad_rows[i].field);
        json_decref(j);
    }
}

/* A resend of a POST that never left moves the POST time, so the absence
 * delay of a later uncertain answer runs from the last POST; it is refused
 * once the outcome is uncertain or for another attempt. */
Test(fsm, submit_resent_moves_the_post_time)
{
    char detail[] = "timeout";
    run_t r;
    sluice_fsm_event_t ev, unc;

    run_init(&r, NULL);
    cr_assert_eq(step(&r, E(SLUICE_EV_ACCEPTED, 0)), SLUICE_OK);
    cr_assert_eq(step(&r, E_started(1, 10)), SLUICE_OK, "%s", r.err.text);
    ev = E(SLUICE_EV_SUBMIT_RESENT, 40);
    ev.attempt = 2;
    cr_assert_eq(step(&r, ev), SLUICE_ESTATE);
    ev.attempt = 1;
    cr_assert_eq(step(&r, ev), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_SUBMITTING);
    cr_assert_eq(r.l.attempt, 1);
    cr_assert_float_eq(r.l.post_time, 40.0, 1e-9);
    unc = E(SLUICE_EV_SUBMIT_UNCERTAIN, 41);
    unc.detail = detail;
    cr_assert_eq(step(&r, unc), SLUICE_OK, "%s", r.err.text);
    ev.time = 50;
    cr_assert_eq(step(&r, ev), SLUICE_ESTATE, "never after an uncertain answer");
    cr_assert_float_eq(r.l.post_time, 40.0, 1e-9);
    run_done(&r);
}

Test(fsm, json_round_trip_every_event)
{
    char pool[] = "trainer", detail[] = "x", by[] = "api:ops", reason[] = "Priority";
    char nodes[] = "n[1-2]";
    sluice_jobview_t views[2];
    sluice_fsm_event_t evs[SLUICE_EV_COUNT_];
    int i;

    views[0] = V(SLUICE_JOB_FAILED, F(COMPLETING) | F(REQUEUED), true, 3, 9);
    views[0].has_derived = true;
    views[0].derived_exit_code = 4;
    views[0].state_reason = reason;
    views[0].nodes = nodes;
    views[1] = V(SLUICE_JOB_PENDING, 0, false, 0, 0);
    views[1].het_job_id = 42;
    views[1].het_job_offset = 1;
    for (i = 0; i < SLUICE_EV_COUNT_; i++)
        evs[i] = E((sluice_fsm_event_type)i, 1.5 + i);
    evs[SLUICE_EV_SUBMIT_STARTED] = E_started(1, 2.5);
    evs[SLUICE_EV_SUBMITTED] = E_ids(SLUICE_EV_SUBMITTED, 9, 3.5);
    evs[SLUICE_EV_SUBMIT_UNCERTAIN].detail = detail;
    evs[SLUICE_EV_SUBMIT_REJECTED].detail = detail;
    evs[SLUICE_EV_SUBMIT_RESENT].attempt = 1;
    evs[SLUICE_EV_ADOPTED] = E_ids(SLUICE_EV_ADOPTED, 9, 6.5);
    evs[SLUICE_EV_ADOPTED].source = SLUICE_SOURCE_ACCOUNTING;
    evs[SLUICE_EV_OBSERVED] = E_found(views, 2, 8.5);
    evs[SLUICE_EV_CANCEL_REQUESTED] = E_cancel(9.5);
    evs[SLUICE_EV_POOL_EXIT] = E_pool(pool, 3, 0, 13.5);
    evs[SLUICE_EV_POOL_EXIT].signalled = true;
    evs[SLUICE_EV_UNSCHEDULABLE].detail = reason;
    evs[SLUICE_EV_DEPENDENCY_FAILED].detail = detail;
    evs[SLUICE_EV_ACCEPTED].by = by;
    for (i = 0; i < SLUICE_EV_COUNT_; i++) {
        json_t *a = NULL, *b = NULL;
        sluice_fsm_event_t back;
        sluice_error_t err = SLUICE_ERROR_INIT;

        evs[i].seq = i;
        cr_assert_eq(sluice_fsm_event_to_json(&evs[i], &a, &err), SLUICE_OK, "%d: %s", i, err.text);
        memset(&back, 0, sizeof(back));
        cr_assert_eq(sluice_fsm_event_from_json(a, &back, &err), SLUICE_OK, "%d: %s", i, err.text);
        cr_assert_eq(sluice_fsm_event_to_json(&back, &b, &err), SLUICE_OK, "%d: %s", i, err.text);
        cr_assert(json_equal(a, b), "event %d differs after a round trip", i);
        cr_assert_eq(back.type, evs[i].type);
        sluice_fsm_event_clear(&back);
        json_decref(a);
        json_decref(b);
    }
}

/* slurmctld FAILED the job before it started, with a reason that never
 * clears (the launcher marks the record): INFRASTRUCTURE_ERROR, even in a
 * hetjob and even after the caller's abort; the mark is only for FAILED. */
Test(fsm, failed_by_slurm_before_start_is_infrastructure_error)
{
    char reason[] = "BadConstraints";
    sluice_jobview_t v = V(SLUICE_JOB_FAILED, 0, true, 0, 1),
                     ok = V(SLUICE_JOB_COMPLETED, 0, true, 0, 0);
    json_t *bad = json_loads("{\"seq\":0,\"time\":1,\"name\":\"observed\",\"context\":{"
                             "\"lookup\":\"FOUND\",\"source\":\"live\",\"jobs\":[{\"job_id\":1,"
                             "\"state\":\"COMPLETED\",\"failed_unschedulable\":true}]}}",
                             0, NULL);
    sluice_fsm_event_t ev;
    sluice_error_t err = SLUICE_ERROR_INIT;
    run_t r;

    v.state_reason = reason;
    v.failed_unschedulable = true;
    run_init(&r, NULL);
    to_submitted(&r);
    cr_assert_eq(observe(&r, v, 20), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "slurmctld failed the job: BadConstraints can never be satisfied"),
              "%s", r.l.reason);
    run_done(&r);

    run_init(&r, NULL);
    to_submitted(&r);
    cr_assert_eq(step(&r, E_cancel(15)), SLUICE_OK);
    cr_assert_eq(observe2(&r, ok, v, 20), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR, "%s", r.l.reason);
    run_done(&r);

    memset(&ev, 0, sizeof(ev));
    cr_assert_eq(sluice_fsm_event_from_json(bad, &ev, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "failed_unschedulable") != NULL, "%s", err.text);
    json_decref(bad);
}

Test(fsm, text_fit_cuts_on_a_utf8_boundary)
{
    /* "ab" then U+00E9 (2 bytes), U+20AC (3 bytes), U+1F600 (4 bytes). */
    const char *s = "ab\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";
    char *d;

    cr_assert_eq(sluice_fsm_text_fit(s, 64), strlen(s));
    cr_assert_eq(sluice_fsm_text_fit(s, 3), 2);
    cr_assert_eq(sluice_fsm_text_fit(s, 4), 2, "inside the 2-byte sequence");
    cr_assert_eq(sluice_fsm_text_fit(s, 5), 4);
    cr_assert_eq(sluice_fsm_text_fit(s, 7), 4, "inside the 3-byte sequence");
    cr_assert_eq(sluice_fsm_text_fit(s, 8), 7);
    for (size_t max = 8; max < 11; max++)
        cr_assert_eq(sluice_fsm_text_fit(s, max), 7, "inside the 4-byte sequence (%zu)", max);
    cr_assert_eq(sluice_fsm_text_fit(s, 12), 11);
    cr_assert_eq(sluice_fsm_text_fit(s, 1), 0);
    d = sluice_fsm_text_dup(s, 10);
    cr_assert_str_eq(d, "ab\xc3\xa9\xe2\x82\xac");
    free(d);
    cr_assert_null(sluice_fsm_text_dup(NULL, 10));
}

/* A state description listing many nodes: the written event holds a cut
 * copy, and a log whose entry holds the whole text (written before the cut)
 * still replays. */
Test(fsm, long_slurm_text_is_cut_not_refused)
{
    char big[2001], *want;
    sluice_jobview_t v = V(SLUICE_JOB_PENDING, 0, false, 0, 0);
    sluice_fsm_event_t ev, back;
    sluice_fsm_launch_t l;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *a = NULL, *log, *entry;
    const char *text;

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "ReqNodeNotAvail, UnavailableNodes:node[", 39);
    big[SLUICE_FSM_DETAIL_MAX - 2] = '\xc3'; /* a 2-byte sequence across the limit */
    big[SLUICE_FSM_DETAIL_MAX - 1] = '\xa9';
    v.state_reason = big;
    v.state_description = big;
    v.nodes = big;
    ev = E_found(&v, 1, 5);
    ev.detail = big;
    cr_assert_eq(sluice_fsm_event_to_json(&ev, &a, &err), SLUICE_OK, "%s", err.text);
    text = json_string_value(
        json_object_get(json_array_get(json_object_get(json_object_get(a, "context"), "jobs"), 0),
                        "state_description"));
    cr_assert_eq(strlen(text), SLUICE_FSM_DETAIL_MAX - 2, "cut before the split sequence");
    cr_assert_eq(strncmp(text, big, strlen(text)), 0);
    json_decref(a);

    /* The whole text in the log, as an older sluice wrote it. */
    log = json_loads("[{\"seq\":1,\"time\":1,\"name\":\"accepted\",\"context\":{}},"
                     "{\"seq\":2,\"time\":2,\"name\":\"submit-started\",\"context\":"
                     "{\"attempt\":1,\"job_name\":\"n\",\"comment\":\"c\"}},"
                     "{\"seq\":3,\"time\":3,\"name\":\"submitted\",\"context\":"
                     "{\"job_ids\":[7]}}]",
                     0, NULL);
    entry = json_pack("{s:i, s:f, s:s, s:{s:s, s:s, s:s, s:[{s:i, s:s, s:s, s:s, s:s}]}}", "seq", 4,
                      "time", 4.0, "name", "observed", "context", "lookup", "FOUND", "source",
                      "live", "detail", big, "jobs", "job_id", 7, "state", "PENDING",
                      "state_reason", big, "state_description", big, "nodes", big);
    cr_assert_not_null(log);
    cr_assert_not_null(entry);
    memset(&back, 0, sizeof(back));
    cr_assert_eq(sluice_fsm_event_from_json(entry, &back, &err), SLUICE_OK, "%s", err.text);
    want = sluice_fsm_text_dup(big, SLUICE_FSM_DETAIL_MAX);
    cr_assert_str_eq(back.jobs[0].state_description, want);
    cr_assert_str_eq(back.jobs[0].state_reason, want);
    cr_assert_str_eq(back.jobs[0].nodes, want);
    cr_assert_str_eq(back.detail, want);
    free(want);
    sluice_fsm_event_clear(&back);
    json_array_append_new(log, entry);
    cr_assert_eq(sluice_fsm_replay(NULL, log, &l, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(l.state, SLUICE_FSM_PENDING);
    json_decref(log);
}

Test(fsm, replay_refuses_unordered_seq)
{
    json_t *log = json_loads("[{\"seq\":3,\"time\":1,\"name\":\"accepted\",\"context\":{}},"
                             "{\"seq\":3,\"time\":2,\"name\":\"cancel-sent\",\"context\":{}}]",
                             0, NULL);
    sluice_fsm_launch_t l;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_fsm_replay(NULL, log, &l, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "events[1].seq") != NULL, "%s", err.text);
    json_decref(log);
}

Test(fsm, replay_of_scripted_scenario_equals_live)
{
    char pool_a[] = "trainer", pool_b[] = "rollout";
    sluice_fsm_config_t cfg = timeout_cfg(600);
    sluice_fsm_event_t unc = E(SLUICE_EV_SUBMIT_UNCERTAIN, 1);
    char detail[] = "timeout";
    run_t r;

    unc.detail = detail;
    run_init(&r, &cfg);
    step(&r, E(SLUICE_EV_ACCEPTED, 0));
    step(&r, E_started(1, 0));
    step(&r, unc);
    step(&r, E_ids(SLUICE_EV_ADOPTED, 42, 61));
    observe2(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), V(SLUICE_JOB_PENDING, 0, false, 0, 0), 62);
    step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_LIVE, 64));
    observe2(&r, V(SLUICE_JOB_PENDING, 0, false, 0, 0), V(SLUICE_JOB_PENDING, 0, false, 0, 0), 66);
    observe2(&r, V(SLUICE_JOB_RUNNING, 0, false, 0, 0), V(SLUICE_JOB_RUNNING, 0, false, 0, 0), 68);
    step(&r, E_lookup(SLUICE_LOOKUP_NOT_FOUND, SLUICE_SOURCE_LIVE, 90));
    accounting_miss(&r, 90);
    step(&r, E_lookup(SLUICE_LOOKUP_UNAVAILABLE, SLUICE_SOURCE_ACCOUNTING, 92));
    {
        sluice_jobview_t v[2] = {V(SLUICE_JOB_FAILED, 0, true, 2, 0),
                                 V(SLUICE_JOB_FAILED, 0, true, 2, 0)};
        sluice_fsm_event_t ev = E_found(v, 2, 100);

        ev.source = SLUICE_SOURCE_ACCOUNTING;
        step(&r, ev);
    }
    step(&r, E_pool(pool_a, 2, 0, 101));
    step(&r, E_pool(pool_b, 0, 15, 101));
    step(&r, E(SLUICE_EV_POOL_EXITS_READ, 102));
    step(&r, E_cancel(103));
    cr_assert_eq(r.l.result, SLUICE_RESULT_EXECUTION_ERROR);
    cr_assert(strstr(r.l.reason, "trainer") != NULL, "%s", r.l.reason);
    cr_assert_eq(r.l.n_ignored, 1);
    cr_assert_eq(json_array_size(r.log), 16);
    run_done(&r);
}

/* ---- property: random sequences ---------------------------------------- */

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static sluice_jobview_t random_view(unsigned *s)
{
    static const uint32_t flag_choices[] = {0,
                                            0,
                                            0,
                                            SLUICE_JOB_FLAG(COMPLETING),
                                            SLUICE_JOB_FLAG(REQUEUED),
                                            SLUICE_JOB_FLAG(LAUNCH_FAILED),
                                            SLUICE_JOB_FLAG(STAGE_OUT)};
    static const int codes[] = {0, 0, 1, 2, 101, 102, 103, 104};
    sluice_jobview_t v =
        V((sluice_job_base)(1 + rnd(s) % (SLUICE_JOB_BASE_COUNT_ - 1)), flag_choices[rnd(s) % 7],
          rnd(s) % 2, codes[rnd(s) % 8], rnd(s) % 5 == 0 ? 9 : 0);

    if (!v.has_exit)
        v.exit_signal = 0;
    return v;
}

Test(fsm, random_sequences_keep_terminal_and_replay)
{
    static char caller[] = "bob", pool[] = "p0", name[] = "n.1", comment[] = "c:1";
    unsigned seed = 20240611u;
    int round, i;

    for (round = 0; round < 300; round++) {
        sluice_fsm_config_t cfg = timeout_cfg((double)(rnd(&seed) % 50));
        run_t r;
        bool done = false;
        int result = 0;
        char reason[SLUICE_FSM_REASON_MAX] = "";
        double t = 0;

        cfg.requeue_allowed = rnd(&seed) % 2;
        cfg.miss_budget = 1 + rnd(&seed) % 5;
        run_init(&r, &cfg);
        for (i = 0; i < 60; i++) {
            sluice_jobview_t views[2];
            sluice_fsm_event_t ev = E((sluice_fsm_event_type)(rnd(&seed) % SLUICE_EV_COUNT_), t);

            t += rnd(&seed) % 10;
            /* Bias toward a plausible lifecycle so that later states are reached. */
            if (i == 0)
                ev.type = SLUICE_EV_ACCEPTED;
            else if (rnd(&seed) % 2)
                ev.type = SLUICE_EV_OBSERVED;
            ev.attempt = 1 + (r.l.attempt && rnd(&seed) % 4 ? r.l.attempt : 0);
            ev.job_name = name;
            ev.comment = comment;
            ev.job_ids[0] = 1000 + round;
            ev.n_job_ids = 1;
            ev.caller = caller;
            ev.pool = pool;
            ev.exit_code = rnd(&seed) % 3;
            ev.lookup = (sluice_lookup)(rnd(&seed) % 3);
            ev.source = (sluice_lookup_source)(rnd(&seed) % 2);
            if (ev.lookup == SLUICE_LOOKUP_FOUND) {
                views[0] = random_view(&seed);
                views[1] = random_view(&seed);
                ev.jobs = views;
                ev.n_jobs = 1 + rnd(&seed) % 2;
            }
            step(&r, ev);
            if (done) {
                cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
                cr_assert_eq(r.l.result, result);
                cr_assert_str_eq(r.l.reason, reason);
            } else if (r.l.state == SLUICE_FSM_DONE) {
                done = true;
                result = r.l.result;
                memcpy(reason, r.l.reason, sizeof(reason));
                cr_assert_neq(result, SLUICE_RESULT_UNKNOWN);
                cr_assert_not_null(sluice_result_name(result));
            } else {
                cr_assert_eq(r.l.result, SLUICE_RESULT_UNKNOWN);
            }
        }
        run_done(&r);
    }
}

Test(fsm, invalid_events_are_never_encoded_nor_applied)
{
    sluice_fsm_launch_t l;
    sluice_fsm_event_t ev = E(SLUICE_EV_CANCEL_REQUESTED, 1);
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    sluice_fsm_launch_init(&l, NULL);
    cr_assert_eq(sluice_fsm_event_to_json(&ev, &j, &err), SLUICE_EINVAL);
    cr_assert_null(j);
    ev = E(SLUICE_EV_ACCEPTED, 0);
    sluice_fsm_apply(&l, &ev, NULL, NULL);
    ev = E(SLUICE_EV_CANCEL_REQUESTED, 1);
    cr_assert_eq(sluice_fsm_apply(&l, &ev, NULL, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "context.caller") != NULL, "%s", err.text);
    ev = E(SLUICE_EV_ACCEPTED, HUGE_VAL);
    cr_assert_eq(sluice_fsm_apply(&l, &ev, NULL, &err), SLUICE_EINVAL);
    cr_assert_eq(l.state, SLUICE_FSM_ACCEPTED);
}

Test(fsm, observed_found_needs_known_states)
{
    run_t r;
    sluice_jobview_t v = V(SLUICE_JOB_BASE_UNKNOWN, 0, false, 0, 0);
    sluice_fsm_event_t ev;

    run_init(&r, NULL);
    to_submitted(&r);
    ev = E_found(&v, 1, 2);
    cr_assert_eq(sluice_fsm_apply(&r.l, &ev, NULL, &r.err), SLUICE_EINVAL);
    ev = E_found(NULL, 0, 2);
    cr_assert_eq(sluice_fsm_apply(&r.l, &ev, NULL, &r.err), SLUICE_EINVAL);
    cr_assert_eq(r.l.state, SLUICE_FSM_PENDING);
    run_done(&r);
}

/* Our job's record on another cluster or in a federation: multi-cluster
 * routing is refused, the launch ends INFRASTRUCTURE_ERROR whatever the
 * state or the cancel intent, and replay agrees (the mark is stored). */
Test(fsm, record_of_another_cluster_ends_the_launch)
{
    sluice_jobview_t v = V(SLUICE_JOB_PENDING, 0, false, 0, 0);
    sluice_jobview_t c = V(SLUICE_JOB_CANCELLED, 0, true, 0, 15);
    json_t *bad = json_loads("{\"seq\":0,\"time\":1,\"name\":\"observed\",\"context\":{"
                             "\"lookup\":\"FOUND\",\"source\":\"live\",\"jobs\":[{\"job_id\":1,"
                             "\"state\":\"PENDING\",\"other_cluster\":1}]}}",
                             0, NULL);
    sluice_fsm_event_t ev;
    sluice_error_t err = SLUICE_ERROR_INIT;
    run_t r;

    v.other_cluster = true;
    run_init(&r, NULL);
    to_submitted(&r);
    cr_assert_eq(observe(&r, v, 5), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.state, SLUICE_FSM_DONE);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR);
    cr_assert(strstr(r.l.reason, "multi-cluster routing is unsupported") != NULL, "%s", r.l.reason);
    {
        json_t *ctx = json_object_get(json_array_get(r.log, 3), "context");
        json_t *job = json_array_get(json_object_get(ctx, "jobs"), 0);
        cr_assert(json_is_true(json_object_get(job, "other_cluster")),
                  "the mark is in the stored event");
    }
    run_done(&r);

    /* after the caller's cancel: still not ABORTED */
    c.other_cluster = true;
    run_init(&r, NULL);
    to_running(&r);
    cr_assert_eq(step(&r, E_cancel(6)), SLUICE_OK);
    cr_assert_eq(observe(&r, c, 7), SLUICE_OK, "%s", r.err.text);
    cr_assert_eq(r.l.result, SLUICE_RESULT_INFRASTRUCTURE_ERROR, "%s", r.l.reason);
    run_done(&r);

    memset(&ev, 0, sizeof(ev));
    cr_assert_eq(sluice_fsm_event_from_json(bad, &ev, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "other_cluster") != NULL, "%s", err.text);
    json_decref(bad);
}
