/* SPDX-License-Identifier: Apache-2.0 */
/* fsm_json.c - the event codec (events <-> JSON) and replay of an event log.
 *
 * Purpose:
 *   Owns the on-disk form of the launcher's events: one log entry is
 *   {seq, time, name, context}, parsed strictly (unknown keys and names,
 *   wrong types, out-of-range numbers and too long strings are SLUICE_EINVAL
 *   naming the field, e.g. "context.jobs[0].state: unknown Slurm base
 *   state"), and written only when it parses back.  Also owns the ownership
 *   of an event's strings (sluice_fsm_event_clear) and the fold of a whole
 *   log through sluice_fsm_apply() (sluice_fsm_replay).
 *
 * Notes:
 *   - Free text from Slurm (state_reason, state_description, nodes, detail)
 *     is cut on a UTF-8 boundary to SLUICE_FSM_DETAIL_MAX, not refused, so
 *     a log written before the writers cut it still loads.
 *   - The fields are read with base/jdec.h (strict, the log's words: "must
 *     be a string", "out of range [1, ...]"): every error text names the
 *     field in the log's own path form ("context.attempt: ..."), which
 *     json_unpack_ex()'s messages do not give.
 *   - jansson ownership: every json_t returned is a new reference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>

#include "base/jdec.h"
#include "fsm_int.h"

/* ---- events: ownership and JSON ---------------------------------------- */

void sluice_fsm_event_clear(sluice_fsm_event_t *ev)
{
    size_t i;

    if (ev == NULL)
        return;
    free(ev->by);
    free(ev->job_name);
    free(ev->comment);
    free(ev->detail);
    free(ev->caller);
    free(ev->pool);
    free(ev->raw);
    if (ev->jobs != NULL) {
        for (i = 0; i < ev->n_jobs; i++)
            sluice_jobview_clear(&ev->jobs[i]);
        free(ev->jobs);
    }
    memset(ev, 0, sizeof(*ev));
}

/* Context keys each event accepts ("by" everywhere). */
static const char *const *context_keys(sluice_fsm_event_type t)
{
    static const char *const none[] = {"by", NULL};
    static const char *const started[] = {"by", "attempt", "job_name", "comment", NULL};
    static const char *const resent[] = {"by", "attempt", NULL};
    static const char *const submitted[] = {"by", "job_ids", NULL};
    static const char *const detail[] = {"by", "detail", NULL};
    static const char *const adopted[] = {"by", "attempt", "job_ids", "source", NULL};
    static const char *const observed[] = {"by", "lookup", "source", "jobs", "detail", NULL};
    static const char *const cancel[] = {"by", "caller", NULL};
    static const char *const pool[] = {"by",        "pool",    "exit_code", "signal", "first",
                                       "signalled", "unknown", "raw",       NULL};

    switch (t) {
    case SLUICE_EV_SUBMIT_STARTED:
        return started;
    case SLUICE_EV_SUBMIT_RESENT:
        return resent;
    case SLUICE_EV_SUBMITTED:
        return submitted;
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
    case SLUICE_EV_UNSCHEDULABLE:
    case SLUICE_EV_DEPENDENCY_FAILED:
        return detail;
    case SLUICE_EV_ADOPTED:
        return adopted;
    case SLUICE_EV_OBSERVED:
        return observed;
    case SLUICE_EV_CANCEL_REQUESTED:
        return cancel;
    case SLUICE_EV_POOL_EXIT:
        return pool;
    default:
        return none;
    }
}

size_t sluice_fsm_text_fit(const char *s, size_t max)
{
    size_t len = strlen(s), n;
    int back;

    if (max == 0)
        return 0;
    if (len < max)
        return len;
    /* s[n] is the first byte left out: while it continues a sequence, the
     * cut is inside one, so the sequence goes too (at most 3 steps back:
     * invalid text is cut where it is). */
    n = max - 1;
    for (back = 0; back < 3 && n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80; back++)
        n--;
    if (((unsigned char)s[n] & 0xC0) == 0x80)
        n = max - 1;
    return n;
}

char *sluice_fsm_text_dup(const char *s, size_t max)
{
    return s != NULL ? strndup(s, sluice_fsm_text_fit(s, max)) : NULL;
}

/* Free text from Slurm: a string of max - 1 bytes at most, but a longer
 * one is cut to that instead of refused, so a log written before the
 * writers cut it (or by another writer) still replays. */
static sluice_err
text_field(const jdec_cur_t *c, const char *key, bool required, size_t max, char **out)
{
    const json_t *v = jdec_value(c, key);
    const char *s = NULL;
    jdec_cur_t at;
    sluice_err rc;

    if (!json_is_string(v) || json_string_length(v) < max)
        return jdec_strdup(c, key, required ? JDEC_REQUIRED : 0, max - 1, out);
    if ((rc = jdec_string(c, key, 0, SIZE_MAX, &s)) != SLUICE_OK) /* "has NUL" */
        return rc;
    if ((*out = sluice_fsm_text_dup(s, max)) == NULL) {
        jdec_member(&at, c, key);
        return jdec_oom(c->d, at.path);
    }
    return SLUICE_OK;
}

static sluice_err job_ids_field(const jdec_cur_t *ctx, sluice_fsm_event_t *ev)
{
    jdec_cur_t a, item;
    int64_t id = 0;
    size_t i;

    if (!jdec_present(ctx, "job_ids"))
        return jdec_fail(ctx, "job_ids", "required");
    if (jdec_array(ctx, "job_ids", JDEC_SILENT, &a) != SLUICE_OK || jdec_len(&a) == 0 ||
        jdec_len(&a) > SLUICE_FSM_MAX_JOBS)
        return jdec_fail(ctx, "job_ids", "an array of 1 to %d ids", SLUICE_FSM_MAX_JOBS);
    JDEC_FOREACH(&a, i, item)
    {
        if (jdec_int(&item, NULL, JDEC_SILENT, 1, INT64_MAX, &id) != SLUICE_OK)
            return jdec_fail(&item, NULL, "must be a positive integer");
        ev->job_ids[i] = (uint64_t)id;
    }
    ev->n_job_ids = jdec_len(&a);
    return SLUICE_OK;
}

static const char *const view_keys[] = {
    "job_id",        "het_job_id",           "het_job_offset",    "state",
    "flags",         "state_reason",         "state_description", "nodes",
    "exit_code",     "exit_signal",          "derived_exit_code", "derived_exit_signal",
    "restart_count", "failed_unschedulable", "other_cluster",     NULL};

static sluice_err view_from_json(const jdec_cur_t *item, sluice_jobview_t *v)
{
    jdec_cur_t o, flags, f;
    const char *name = NULL;
    int64_t n = 0;
    bool present = false;
    sluice_err rc;
    size_t i;
    int idx;

    if ((rc = jdec_object(item, NULL, JDEC_REQUIRED, &o)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_keys(&o, view_keys)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_int(&o, "job_id", JDEC_REQUIRED, 1, INT64_MAX, &n)) != SLUICE_OK)
        return rc;
    v->job_id = (uint64_t)n;
    n = 0;
    if ((rc = jdec_int(&o, "het_job_id", 0, 0, INT64_MAX, &n)) != SLUICE_OK)
        return rc;
    v->het_job_id = (uint64_t)n;
    n = 0;
    if ((rc = jdec_int(&o, "het_job_offset", 0, 0, UINT32_MAX, &n)) != SLUICE_OK)
        return rc;
    v->het_job_offset = (uint32_t)n;
    if ((name = jdec_peek_string(&o, "state")) == NULL)
        return jdec_fail(&o, "state", "required string");
    if (!fsm_base_from_name(name, &v->base))
        return jdec_fail(&o, "state", "unknown Slurm base state");
    if ((rc = jdec_array(&o, "flags", 0, &flags)) != SLUICE_OK)
        return rc;
    JDEC_FOREACH(&flags, i, f)
    {
        name = jdec_peek_string(&f, NULL);
        if ((idx = name != NULL ? fsm_flag_from_name(name) : -1) < 0)
            return jdec_fail(&f, NULL, "unknown flag");
        v->flags |= UINT32_C(1) << idx;
    }
    if ((rc = text_field(&o, "state_reason", false, SLUICE_FSM_DETAIL_MAX, &v->state_reason)) !=
        SLUICE_OK)
        return rc;
    if ((rc = text_field(&o, "state_description", false, SLUICE_FSM_DETAIL_MAX,
                         &v->state_description)) != SLUICE_OK)
        return rc;
    if ((rc = text_field(&o, "nodes", false, SLUICE_FSM_DETAIL_MAX, &v->nodes)) != SLUICE_OK)
        return rc;
    n = 0;
    present = jdec_present(&o, "exit_code");
    if ((rc = jdec_int(&o, "exit_code", 0, 0, 255, &n)) != SLUICE_OK)
        return rc;
    v->has_exit = present;
    v->exit_code = (int)n;
    n = 0;
    present = jdec_present(&o, "exit_signal");
    if ((rc = jdec_int(&o, "exit_signal", 0, 0, 255, &n)) != SLUICE_OK)
        return rc;
    if (present && !v->has_exit)
        return jdec_fail(&o, "exit_signal", "needs exit_code");
    v->exit_signal = (int)n;
    n = 0;
    present = jdec_present(&o, "derived_exit_code");
    if ((rc = jdec_int(&o, "derived_exit_code", 0, 0, 255, &n)) != SLUICE_OK)
        return rc;
    v->has_derived = present;
    v->derived_exit_code = (int)n;
    n = 0;
    present = jdec_present(&o, "derived_exit_signal");
    if ((rc = jdec_int(&o, "derived_exit_signal", 0, 0, 255, &n)) != SLUICE_OK)
        return rc;
    if (present && !v->has_derived)
        return jdec_fail(&o, "derived_exit_signal", "needs derived_exit_code");
    v->derived_exit_signal = (int)n;
    n = 0;
    if ((rc = jdec_int(&o, "restart_count", 0, 0, UINT32_MAX, &n)) != SLUICE_OK)
        return rc;
    v->restart_count = (uint32_t)n;
    if ((rc = jdec_bool(&o, "failed_unschedulable", 0, &v->failed_unschedulable)) != SLUICE_OK)
        return rc;
    if (v->failed_unschedulable && v->base != SLUICE_JOB_FAILED)
        return jdec_fail(&o, "failed_unschedulable", "only with FAILED");
    return jdec_bool(&o, "other_cluster", 0, &v->other_cluster);
}

static sluice_err jobs_field(const jdec_cur_t *ctx, sluice_fsm_event_t *ev)
{
    jdec_cur_t a, item;
    sluice_err rc;
    size_t i;

    if (ev->lookup != SLUICE_LOOKUP_FOUND) {
        if (jdec_present(ctx, "jobs"))
            return jdec_fail(ctx, "jobs", "only with lookup FOUND");
        return SLUICE_OK;
    }
    if (jdec_array(ctx, "jobs", JDEC_SILENT, &a) != SLUICE_OK || jdec_len(&a) == 0 ||
        jdec_len(&a) > SLUICE_FSM_MAX_JOBS)
        return jdec_fail(ctx, "jobs", "an array of 1 to %d job records", SLUICE_FSM_MAX_JOBS);
    if ((ev->jobs = calloc(jdec_len(&a), sizeof(*ev->jobs))) == NULL)
        return jdec_oom(ctx->d, a.path);
    ev->n_jobs = jdec_len(&a);
    JDEC_FOREACH(&a, i, item)
    {
        if ((rc = view_from_json(&item, &ev->jobs[i])) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

/* An enum field of the log, by the name functions of fsm_table.c. */
#define GET_NAME(ctx, key, from_name, out, why)                                                    \
    do {                                                                                           \
        const char *name_ = NULL;                                                                  \
        if ((rc = jdec_string((ctx), (key), JDEC_REQUIRED, 31, &name_)) != SLUICE_OK)              \
            return rc;                                                                             \
        if (!from_name(name_, (out)))                                                              \
            return jdec_fail((ctx), (key), why);                                                   \
    } while (0)

static sluice_err parse_context(const jdec_cur_t *ctx, sluice_fsm_event_t *ev)
{
    const char *key = jdec_unknown_key(ctx, context_keys(ev->type));
    int64_t n = 0;
    sluice_err rc;

    if (key != NULL)
        return jdec_fail(ctx, key, "unknown field for %s", sluice_fsm_event_name(ev->type));
    if ((rc = jdec_strdup(ctx, "by", 0, SLUICE_FSM_NAME_MAX - 1, &ev->by)) != SLUICE_OK)
        return rc;
    switch (ev->type) {
    case SLUICE_EV_SUBMIT_STARTED:
        if ((rc = jdec_int(ctx, "attempt", JDEC_REQUIRED, 1, UINT32_MAX - 1, &n)) != SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        if ((rc = jdec_strdup(ctx, "job_name", JDEC_REQUIRED, SLUICE_FSM_MARKER_MAX - 1,
                              &ev->job_name)) != SLUICE_OK)
            return rc;
        return jdec_strdup(ctx, "comment", JDEC_REQUIRED, SLUICE_FSM_MARKER_MAX - 1, &ev->comment);
    case SLUICE_EV_SUBMIT_RESENT:
        if ((rc = jdec_int(ctx, "attempt", JDEC_REQUIRED, 1, UINT32_MAX - 1, &n)) != SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        return SLUICE_OK;
    case SLUICE_EV_SUBMITTED:
        return job_ids_field(ctx, ev);
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
        return text_field(ctx, "detail", true, SLUICE_FSM_DETAIL_MAX, &ev->detail);
    case SLUICE_EV_UNSCHEDULABLE:
        return jdec_strdup(ctx, "detail", JDEC_REQUIRED, SLUICE_FSM_NAME_MAX - 1, &ev->detail);
    case SLUICE_EV_DEPENDENCY_FAILED:
        return jdec_strdup(ctx, "detail", JDEC_REQUIRED, SLUICE_FSM_DETAIL_MAX - 1, &ev->detail);
    case SLUICE_EV_ADOPTED:
        if ((rc = jdec_int(ctx, "attempt", JDEC_REQUIRED, 1, UINT32_MAX - 1, &n)) != SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        if ((rc = job_ids_field(ctx, ev)) != SLUICE_OK)
            return rc;
        GET_NAME(ctx, "source", sluice_lookup_source_from_name, &ev->source, "live or accounting");
        return SLUICE_OK;
    case SLUICE_EV_OBSERVED:
        GET_NAME(ctx, "lookup", sluice_lookup_from_name, &ev->lookup,
                 "FOUND, NOT_FOUND or UNAVAILABLE");
        GET_NAME(ctx, "source", sluice_lookup_source_from_name, &ev->source, "live or accounting");
        if ((rc = text_field(ctx, "detail", false, SLUICE_FSM_DETAIL_MAX, &ev->detail)) !=
            SLUICE_OK)
            return rc;
        return jobs_field(ctx, ev);
    case SLUICE_EV_CANCEL_REQUESTED:
        return jdec_strdup(ctx, "caller", JDEC_REQUIRED, SLUICE_FSM_NAME_MAX - 1, &ev->caller);
    case SLUICE_EV_POOL_EXIT:
        if ((rc = jdec_strdup(ctx, "pool", JDEC_REQUIRED, SLUICE_FSM_NAME_MAX - 1, &ev->pool)) !=
            SLUICE_OK)
            return rc;
        if ((rc = jdec_int(ctx, "exit_code", JDEC_REQUIRED, 0, 255, &n)) != SLUICE_OK)
            return rc;
        ev->exit_code = (int)n;
        if ((rc = jdec_int(ctx, "signal", JDEC_REQUIRED, 0, 255, &n)) != SLUICE_OK)
            return rc;
        ev->signal = (int)n;
        if ((rc = jdec_bool(ctx, "first", 0, &ev->first)) != SLUICE_OK ||
            (rc = jdec_bool(ctx, "signalled", 0, &ev->signalled)) != SLUICE_OK ||
            (rc = jdec_bool(ctx, "unknown", 0, &ev->unknown)) != SLUICE_OK)
            return rc;
        if ((rc = jdec_strdup(ctx, "raw", 0, SLUICE_FSM_RAW_MAX - 1, &ev->raw)) != SLUICE_OK)
            return rc;
        if (ev->raw != NULL && !ev->unknown)
            return jdec_fail(ctx, "raw", "only with unknown");
        if (ev->unknown && (ev->exit_code != 0 || ev->signal != 0))
            return jdec_fail(ctx, "unknown", "exit_code and signal must be 0");
        return SLUICE_OK;
    default:
        return SLUICE_OK;
    }
}

sluice_err
sluice_fsm_event_from_json(const json_t *entry, sluice_fsm_event_t *out, sluice_error_t *err)
{
    static const char *const top_keys[] = {"seq", "time", "name", "context", NULL};
    sluice_fsm_event_t ev;
    jdec_t d;
    jdec_cur_t event, top, ctx;
    const char *name = NULL;
    int64_t seq = 0;
    sluice_err rc;

    memset(&ev, 0, sizeof(ev));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    /* the entry is "event" for its own checks; its members are named bare */
    jdec_init(&d, JDEC_STRICT, JDEC_VOICE_LOG, SLUICE_EINVAL, err, NULL);
    jdec_root(&event, &d, entry, "event");
    jdec_root(&top, &d, entry, "");
    if (!json_is_object(entry)) {
        rc = jdec_fail(&event, NULL, "must be an object");
        goto out;
    }
    if ((rc = jdec_keys(&event, top_keys)) != SLUICE_OK)
        goto out;
    if ((rc = jdec_int(&event, "seq", JDEC_REQUIRED, 0, INT64_MAX, &seq)) != SLUICE_OK)
        goto out;
    ev.seq = seq;
    if (jdec_number(&top, "time", JDEC_REQUIRED | JDEC_SILENT, &ev.time) != SLUICE_OK) {
        rc = jdec_fail(&top, "time", "required number");
        goto out;
    }
    if ((name = jdec_peek_string(&top, "name")) == NULL) {
        rc = jdec_fail(&top, "name", "required string");
        goto out;
    }
    if (!sluice_fsm_event_from_name(name, &ev.type)) {
        rc = jdec_fail(&top, "name", "unknown event \"%.64s\"", name);
        goto out;
    }
    if (jdec_object(&top, "context", JDEC_REQUIRED | JDEC_SILENT, &ctx) != SLUICE_OK) {
        rc = jdec_fail(&top, "context", "required object");
        goto out;
    }
    if ((rc = parse_context(&ctx, &ev)) != SLUICE_OK)
        goto out;
    *out = ev;
    memset(&ev, 0, sizeof(ev));
out:
    sluice_fsm_event_clear(&ev);
    return rc;
}

/* json_object_set_new that remembers failure. */
static void put(json_t *obj, const char *key, json_t *val, bool *ok)
{
    if (val == NULL || json_object_set_new(obj, key, val) != 0)
        *ok = false;
}

static json_t *ids_to_json(const uint64_t *ids, size_t n)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < n; i++) {
        if (json_array_append_new(a, json_integer((json_int_t)ids[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Free text as a JSON string, cut to SLUICE_FSM_DETAIL_MAX. */
static json_t *text_json(const char *s)
{
    return json_stringn(s, sluice_fsm_text_fit(s, SLUICE_FSM_DETAIL_MAX));
}

static json_t *view_to_json(const sluice_jobview_t *v)
{
    json_t *o = json_object(), *flags = json_array();
    bool ok = o != NULL && flags != NULL;
    unsigned i;

    put(o, "job_id", json_integer((json_int_t)v->job_id), &ok);
    if (v->het_job_id != 0)
        put(o, "het_job_id", json_integer((json_int_t)v->het_job_id), &ok);
    if (v->het_job_offset != 0)
        put(o, "het_job_offset", json_integer(v->het_job_offset), &ok);
    put(o, "state", json_string(fsm_base_name(v->base)), &ok);
    for (i = 0; ok && i < fsm_flag_count(); i++) {
        if ((v->flags & (UINT32_C(1) << i)) &&
            json_array_append_new(flags, json_string(fsm_flag_name(i))) != 0)
            ok = false;
    }
    if (json_array_size(flags) > 0) {
        put(o, "flags", flags, &ok);
        flags = NULL;
    }
    if (v->state_reason != NULL)
        put(o, "state_reason", text_json(v->state_reason), &ok);
    if (v->state_description != NULL && v->state_description[0] != '\0')
        put(o, "state_description", text_json(v->state_description), &ok);
    if (v->nodes != NULL)
        put(o, "nodes", text_json(v->nodes), &ok);
    if (v->has_exit) {
        put(o, "exit_code", json_integer(v->exit_code), &ok);
        put(o, "exit_signal", json_integer(v->exit_signal), &ok);
    }
    if (v->has_derived) {
        put(o, "derived_exit_code", json_integer(v->derived_exit_code), &ok);
        put(o, "derived_exit_signal", json_integer(v->derived_exit_signal), &ok);
    }
    if (v->restart_count != 0)
        put(o, "restart_count", json_integer(v->restart_count), &ok);
    if (v->failed_unschedulable)
        put(o, "failed_unschedulable", json_true(), &ok);
    if (v->other_cluster)
        put(o, "other_cluster", json_true(), &ok);
    json_decref(flags);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

sluice_err sluice_fsm_event_to_json(const sluice_fsm_event_t *ev, json_t **out, sluice_error_t *err)
{
    json_t *entry = NULL, *ctx = NULL, *jobs = NULL;
    sluice_fsm_event_t check;
    bool ok = true;
    sluice_err rc = SLUICE_OK;
    size_t i;

    memset(&check, 0, sizeof(check));
    if (ev == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "event and out are required");
    if (sluice_fsm_event_name(ev->type) == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "name: unknown event type %d", (int)ev->type);
    entry = json_object();
    ctx = json_object();
    if (entry == NULL || ctx == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "event: out of memory");
        goto out;
    }
    if (ev->by != NULL)
        put(ctx, "by", json_string(ev->by), &ok);
    switch (ev->type) {
    case SLUICE_EV_SUBMIT_STARTED:
        put(ctx, "attempt", json_integer(ev->attempt), &ok);
        put(ctx, "job_name", ev->job_name ? json_string(ev->job_name) : json_null(), &ok);
        put(ctx, "comment", ev->comment ? json_string(ev->comment) : json_null(), &ok);
        break;
    case SLUICE_EV_SUBMIT_RESENT:
        put(ctx, "attempt", json_integer(ev->attempt), &ok);
        break;
    case SLUICE_EV_ADOPTED:
        put(ctx, "attempt", json_integer(ev->attempt), &ok);
        put(ctx, "source", json_string(sluice_lookup_source_name(ev->source)), &ok);
        /* fall through */
    case SLUICE_EV_SUBMITTED:
        put(ctx, "job_ids",
            ids_to_json(ev->job_ids,
                        ev->n_job_ids > SLUICE_FSM_MAX_JOBS ? SLUICE_FSM_MAX_JOBS : ev->n_job_ids),
            &ok);
        break;
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
        put(ctx, "detail", ev->detail ? text_json(ev->detail) : json_null(), &ok);
        break;
    case SLUICE_EV_UNSCHEDULABLE:
    case SLUICE_EV_DEPENDENCY_FAILED:
        put(ctx, "detail", ev->detail ? json_string(ev->detail) : json_null(), &ok);
        break;
    case SLUICE_EV_OBSERVED:
        put(ctx, "lookup", json_string(sluice_lookup_name(ev->lookup)), &ok);
        put(ctx, "source", json_string(sluice_lookup_source_name(ev->source)), &ok);
        if (ev->detail != NULL)
            put(ctx, "detail", text_json(ev->detail), &ok);
        if (ev->lookup == SLUICE_LOOKUP_FOUND) {
            jobs = json_array();
            for (i = 0; jobs != NULL && ok && i < ev->n_jobs && ev->jobs != NULL; i++) {
                if (json_array_append_new(jobs, view_to_json(&ev->jobs[i])) != 0)
                    ok = false;
            }
            put(ctx, "jobs", jobs, &ok);
        }
        break;
    case SLUICE_EV_CANCEL_REQUESTED:
        put(ctx, "caller", ev->caller ? json_string(ev->caller) : json_null(), &ok);
        break;
    case SLUICE_EV_POOL_EXIT:
        put(ctx, "pool", ev->pool ? json_string(ev->pool) : json_null(), &ok);
        put(ctx, "exit_code", json_integer(ev->exit_code), &ok);
        put(ctx, "signal", json_integer(ev->signal), &ok);
        if (ev->first)
            put(ctx, "first", json_true(), &ok);
        if (ev->signalled)
            put(ctx, "signalled", json_true(), &ok);
        if (ev->unknown)
            put(ctx, "unknown", json_true(), &ok);
        if (ev->raw != NULL)
            put(ctx, "raw", json_string(ev->raw), &ok);
        break;
    default:
        break;
    }
    put(entry, "seq", json_integer(ev->seq), &ok);
    put(entry, "time", json_real(ev->time), &ok);
    put(entry, "name", json_string(sluice_fsm_event_name(ev->type)), &ok);
    put(entry, "context", ctx, &ok);
    ctx = NULL;
    if (!ok) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "event: a field is missing or not encodable");
        goto out;
    }
    /* Only what parses back is written: the log never holds an entry that
     * replay would refuse. */
    if ((rc = sluice_fsm_event_from_json(entry, &check, err)) != SLUICE_OK)
        goto out;
    *out = entry;
    entry = NULL;
out:
    sluice_fsm_event_clear(&check);
    json_decref(ctx);
    json_decref(entry);
    return rc;
}

/* ---- replay ------------------------------------------------------------ */

sluice_err sluice_fsm_replay(const sluice_fsm_config_t *cfg,
                             const json_t *events,
                             sluice_fsm_launch_t *out,
                             sluice_error_t *err)
{
    sluice_fsm_event_t ev;
    sluice_fsm_launch_t l;
    int64_t prev_seq = -1;
    sluice_err rc = SLUICE_OK;
    size_t i;

    memset(&ev, 0, sizeof(ev));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    sluice_fsm_launch_init(&l, cfg);
    if (!json_is_array(events))
        return sluice_errorf(err, SLUICE_EINVAL, "events: must be an array");
    for (i = 0; i < json_array_size(events); i++) {
        if ((rc = sluice_fsm_event_from_json(json_array_get(events, i), &ev, err)) != SLUICE_OK) {
            sluice_error_prefix(err, "events[%zu]", i);
            goto out;
        }
        if (ev.seq <= prev_seq) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "events[%zu].seq: %lld does not follow %lld", i,
                               (long long)ev.seq, (long long)prev_seq);
            goto out;
        }
        prev_seq = ev.seq;
        rc = sluice_fsm_apply(&l, &ev, NULL, err);
        if (rc == SLUICE_ESTATE) {
            rc = SLUICE_OK; /* refused live too: skipped the same way */
            sluice_error_clear(err);
        } else if (rc != SLUICE_OK) {
            sluice_error_prefix(err, "events[%zu]", i);
            goto out;
        }
        sluice_fsm_event_clear(&ev);
    }
    *out = l;
out:
    sluice_fsm_event_clear(&ev);
    return rc;
}
