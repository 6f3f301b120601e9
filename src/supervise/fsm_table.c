/* SPDX-License-Identifier: Apache-2.0 */
/* fsm_table.c - the state machine's data: names and the transition table.
 *
 * Purpose:
 *   Owns every table of the state machine: the names of states, events,
 *   results, lookups, sources and Slurm's base states and flags (from the
 *   X-macros in fsm.h and jobdesc.h), the public face of each state, and
 *   the transition table: which (state, event) pairs are allowed and which
 *   states they may lead to.  docs/state-machine.md, "Transition table", is
 *   the same table in words; tests/unit/test_fsm_table.c checks that the
 *   two hold the same rows.
 *
 * Notes:
 *   - Tables and their lookups (Slurm's names through jobdesc.c); fsm.c
 *     consults the transition table before and after each update.
 *   - sluice_fsm_due() is here too: per state, the side effects it asks the
 *     launcher for (a table in code).
 *   - DONE has no row: a terminal launch accepts and ignores every event.
 */
#include <string.h>

#include "fsm_int.h"

/* ---- name tables ------------------------------------------------------- */

static const char *const state_names[] = {
#define STATE_NAME(id, name) name,
    SLUICE_FSM_STATE_MAP(STATE_NAME)
#undef STATE_NAME
};

static const char *const event_names[] = {
#define EVENT_NAME(id, name) name,
    SLUICE_FSM_EVENT_MAP(EVENT_NAME)
#undef EVENT_NAME
};

static const struct {
    int code;
    const char *name;
} result_names[] = {
#define RESULT_NAME(id, code) {code, #id},
    SLUICE_RESULT_MAP(RESULT_NAME)
#undef RESULT_NAME
};

static const char *const lookup_names[] = {"FOUND", "NOT_FOUND", "UNAVAILABLE"};
static const char *const source_names[] = {"live", "accounting"};

static int find_name(const char *const *tab, size_t n, const char *name)
{
    size_t i;

    if (name == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        if (strcmp(tab[i], name) == 0)
            return (int)i;
    }
    return -1;
}

const char *sluice_fsm_state_name(sluice_fsm_state state)
{
    if ((unsigned)state >= FSM_COUNT(state_names))
        return NULL;
    return state_names[state];
}

const char *sluice_fsm_event_name(sluice_fsm_event_type type)
{
    if ((unsigned)type >= FSM_COUNT(event_names))
        return NULL;
    return event_names[type];
}

const char *sluice_result_name(int code)
{
    size_t i;

    for (i = 0; i < FSM_COUNT(result_names); i++) {
        if (result_names[i].code == code)
            return result_names[i].name;
    }
    return NULL;
}

const char *sluice_lookup_name(sluice_lookup lookup)
{
    if ((unsigned)lookup >= FSM_COUNT(lookup_names))
        return NULL;
    return lookup_names[lookup];
}

const char *sluice_lookup_source_name(sluice_lookup_source source)
{
    if ((unsigned)source >= FSM_COUNT(source_names))
        return NULL;
    return source_names[source];
}

bool sluice_fsm_state_from_name(const char *name, sluice_fsm_state *out)
{
    int i = find_name(state_names, FSM_COUNT(state_names), name);

    if (i < 0)
        return false;
    *out = (sluice_fsm_state)i;
    return true;
}

bool sluice_fsm_event_from_name(const char *name, sluice_fsm_event_type *out)
{
    int i = find_name(event_names, FSM_COUNT(event_names), name);

    if (i < 0)
        return false;
    *out = (sluice_fsm_event_type)i;
    return true;
}

bool sluice_lookup_from_name(const char *name, sluice_lookup *out)
{
    int i = find_name(lookup_names, FSM_COUNT(lookup_names), name);

    if (i < 0)
        return false;
    *out = (sluice_lookup)i;
    return true;
}

bool sluice_lookup_source_from_name(const char *name, sluice_lookup_source *out)
{
    int i = find_name(source_names, FSM_COUNT(source_names), name);

    if (i < 0)
        return false;
    *out = (sluice_lookup_source)i;
    return true;
}

/* Slurm's base and flag names are jobdesc.c's tables (one copy). */
const char *fsm_base_name(sluice_job_base b)
{
    return sluice_job_base_name(b);
}

bool fsm_base_from_name(const char *name, sluice_job_base *out)
{
    sluice_job_base b = sluice_job_base_parse(name);

    if (b == SLUICE_JOB_BASE_UNKNOWN)
        return false;
    *out = b;
    return true;
}

size_t fsm_flag_count(void)
{
    return SLUICE_JOB_FLAG_COUNT_;
}

const char *fsm_flag_name(size_t i)
{
    return i < SLUICE_JOB_FLAG_COUNT_ ? sluice_job_flag_name(UINT32_C(1) << i) : NULL;
}

int fsm_flag_from_name(const char *name)
{
    uint32_t bit = sluice_job_flag_parse(name);
    int i = 0;

    if (bit == 0)
        return -1;
    while ((bit >> i) != 1)
        i++;
    return i;
}

/* ---- public face of a state -------------------------------------------- */

sluice_fsm_state sluice_fsm_state_public(sluice_fsm_state state)
{
    switch (state) {
    case SLUICE_FSM_RECONCILING:
    case SLUICE_FSM_RETRYING:
        return SLUICE_FSM_SUBMITTING;
    default:
        return state;
    }
}

/* ---- the transition table ---------------------------------------------- */

#define ROW(from, event, to)                                                                       \
    {                                                                                              \
        SLUICE_FSM_##from, SLUICE_EV_##event, SLUICE_FSM_##to                                      \
    }

/* One row per (state, event, next state), in the order of the doc. */
static const fsm_row_t rows[] = {
    ROW(NEW, ACCEPTED, ACCEPTED),

    ROW(ACCEPTED, SUBMIT_STARTED, SUBMITTING),
    ROW(ACCEPTED, CANCEL_REQUESTED, DONE),
    ROW(ACCEPTED, SECRET_UNAVAILABLE, DONE),
    ROW(ACCEPTED, DEPENDENCY_FAILED, DONE),

    ROW(SUBMITTING, SUBMIT_RESENT, SUBMITTING),
    ROW(SUBMITTING, SUBMITTED, PENDING),
    ROW(SUBMITTING, SUBMITTED, CANCELLING),
    ROW(SUBMITTING, ADOPTED, PENDING),
    ROW(SUBMITTING, ADOPTED, CANCELLING),
    ROW(SUBMITTING, SUBMIT_UNCERTAIN, RECONCILING),
    ROW(SUBMITTING, SUBMIT_REJECTED, DONE),
    ROW(SUBMITTING, CANCEL_REQUESTED, SUBMITTING),
    ROW(SUBMITTING, SECRET_UNAVAILABLE, DONE),

    ROW(RECONCILING, SUBMITTED, PENDING),
    ROW(RECONCILING, SUBMITTED, CANCELLING),
    ROW(RECONCILING, ADOPTED, PENDING),
    ROW(RECONCILING, ADOPTED, CANCELLING),
    ROW(RECONCILING, SUBMIT_UNCERTAIN, RECONCILING),
    ROW(RECONCILING, SUBMIT_REJECTED, DONE),
    ROW(RECONCILING, ABSENCE_CONFIRMED, RETRYING),
    ROW(RECONCILING, ABSENCE_CONFIRMED, DONE),
    ROW(RECONCILING, CANCEL_REQUESTED, RECONCILING),

    ROW(RETRYING, SUBMIT_STARTED, SUBMITTING),
    ROW(RETRYING, CANCEL_REQUESTED, DONE),
    ROW(RETRYING, SECRET_UNAVAILABLE, DONE),
    ROW(RETRYING, DEPENDENCY_FAILED, DONE),

    ROW(PENDING, OBSERVED, PENDING),
    ROW(PENDING, OBSERVED, RUNNING),
    ROW(PENDING, OBSERVED, CANCELLING),
    ROW(PENDING, OBSERVED, DONE),
    ROW(PENDING, CANCEL_REQUESTED, PENDING),
    ROW(PENDING, CANCEL_REQUESTED, CANCELLING),
    ROW(PENDING, PENDING_TIMEOUT, CANCELLING),
    ROW(PENDING, UNSCHEDULABLE, CANCELLING),
    ROW(PENDING, DEPENDENCY_FAILED, CANCELLING),
    ROW(PENDING, POOL_EXIT, PENDING),
    ROW(PENDING, POOL_EXITS_READ, DONE),

    ROW(RUNNING, OBSERVED, PENDING),
    ROW(RUNNING, OBSERVED, RUNNING),
    ROW(RUNNING, OBSERVED, CANCELLING),
    ROW(RUNNING, OBSERVED, DONE),
    ROW(RUNNING, CANCEL_REQUESTED, RUNNING),
    ROW(RUNNING, CANCEL_REQUESTED, CANCELLING),
    ROW(RUNNING, POOL_EXIT, RUNNING),
    ROW(RUNNING, DEPENDENCY_FAILED, CANCELLING),
    ROW(RUNNING, POOL_EXITS_READ, DONE),

    ROW(CANCELLING, OBSERVED, CANCELLING),
    ROW(CANCELLING, OBSERVED, DONE),
    ROW(CANCELLING, CANCEL_REQUESTED, CANCELLING),
    ROW(CANCELLING, CANCEL_SENT, CANCELLING),
    ROW(CANCELLING, CANCEL_WITHDRAWN, RUNNING),
    ROW(CANCELLING, POOL_EXIT, CANCELLING),
    ROW(CANCELLING, POOL_EXITS_READ, DONE),
};

#undef ROW

const fsm_row_t *fsm_table_rows(size_t *n_out)
{
    *n_out = FSM_COUNT(rows);
    return rows;
}

bool fsm_table_allows(sluice_fsm_state from, sluice_fsm_event_type event)
{
    size_t i;

    for (i = 0; i < FSM_COUNT(rows); i++) {
        if (rows[i].from == from && rows[i].event == event)
            return true;
    }
    return false;
}

bool fsm_table_has(sluice_fsm_state from, sluice_fsm_event_type event, sluice_fsm_state to)
{
    size_t i;

    for (i = 0; i < FSM_COUNT(rows); i++) {
        if (rows[i].from == from && rows[i].event == event && rows[i].to == to)
            return true;
    }
    return false;
}

/* ---- configuration and launch ------------------------------------------ */

void sluice_fsm_config_default(sluice_fsm_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->miss_budget = 5;
    cfg->miss_spacing = 6.0;
    cfg->pending_timeout = 600.0;
    cfg->cancel_resend = 30.0;
    cfg->requeue_allowed = false;
}

void sluice_fsm_launch_init(sluice_fsm_launch_t *l, const sluice_fsm_config_t *cfg)
{
    memset(l, 0, sizeof(*l));
    if (cfg != NULL)
        l->cfg = *cfg;
    else
        sluice_fsm_config_default(&l->cfg);
    if (l->cfg.miss_budget == 0)
        l->cfg.miss_budget = 1;
    l->state = SLUICE_FSM_NEW;
    l->result = SLUICE_RESULT_UNKNOWN;
    l->last_seq = -1;
}

/* ---- what is due ------------------------------------------------------- */

unsigned sluice_fsm_due(const sluice_fsm_launch_t *l, double now)
{
    unsigned due = 0;

    switch (l->state) {
    case SLUICE_FSM_ACCEPTED:
        return SLUICE_DUE_SUBMIT;
    case SLUICE_FSM_RECONCILING:
        return SLUICE_DUE_RECONCILE;
    case SLUICE_FSM_RETRYING:
        return SLUICE_DUE_NEW_ATTEMPT;
    case SLUICE_FSM_PENDING:
    case SLUICE_FSM_RUNNING:
    case SLUICE_FSM_CANCELLING:
        if (l->settling)
            return SLUICE_DUE_POOL_EXITS;
        if (l->left_queue) {
            if (!l->has_miss || now - l->last_miss_time >= l->cfg.miss_spacing)
                due |= SLUICE_DUE_ACCOUNTING_LOOKUP;
        } else {
            due |= SLUICE_DUE_LIVE_LOOKUP;
        }
        if (l->state == SLUICE_FSM_CANCELLING && !l->left_queue &&
            (!l->cancel_sent || now - l->cancel_sent_time >= l->cfg.cancel_resend))
            due |= SLUICE_DUE_CANCEL;
        if (l->state == SLUICE_FSM_PENDING && l->intent == SLUICE_CANCEL_NONE &&
            l->cfg.pending_timeout > 0 && l->pending_observed >= l->cfg.pending_timeout)
            due |= SLUICE_DUE_PENDING_TIMEOUT;
        return due;
    default:
        return 0;
    }
}

bool sluice_fsm_launch_equal(const sluice_fsm_launch_t *a, const sluice_fsm_launch_t *b)
{
    size_t i;

#define SAME(f) (a->f == b->f)
#define SAME_STR(f) (strcmp(a->f, b->f) == 0)
    if (!(SAME(cfg.miss_budget) && SAME(cfg.miss_spacing) && SAME(cfg.pending_timeout) &&
          SAME(cfg.cancel_resend) && SAME(cfg.requeue_allowed) && SAME(state) && SAME(result) &&
          SAME_STR(reason) && SAME(last_time) && SAME(last_seq) && SAME(n_applied) &&
          SAME(n_ignored) && SAME(attempt) && SAME_STR(job_name) && SAME_STR(comment) &&
          SAME(post_time) && SAME(n_job_ids) && SAME(intent) && SAME_STR(caller) &&
          SAME_STR(unschedulable) && SAME(cancel_sent) && SAME(cancel_sent_time) &&
          SAME(left_queue) && SAME(misses) && SAME(has_miss) && SAME(last_miss_time) &&
          SAME(has_pending) && SAME(first_pending) && SAME(prev_pending) && SAME(last_pending) &&
          SAME(pending_observed) && SAME(n_components) && SAME(n_pools) && SAME(settling) &&
          SAME(settle_time) && SAME(verdict) && SAME_STR(verdict_reason) && SAME(unasked_cancel) &&
          SAME(verdict_rest) && SAME(slurm_exit_code) && SAME_STR(dependency)))
        return false;
    for (i = 0; i < a->n_job_ids && i < SLUICE_FSM_MAX_JOBS; i++) {
        if (!SAME(job_ids[i]))
            return false;
    }
    for (i = 0; i < a->n_pools && i < SLUICE_FSM_MAX_POOLS; i++) {
        if (!SAME_STR(pools[i].name) || !SAME(pools[i].exit_code) || !SAME(pools[i].signal) ||
            !SAME(pools[i].first) || !SAME(pools[i].signalled) || !SAME(pools[i].unknown) ||
            !SAME_STR(pools[i].raw))
            return false;
    }
#undef SAME
#undef SAME_STR
    return true;
}
