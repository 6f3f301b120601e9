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
 *   - The field checks are hand-written rather than json_unpack_ex()
 *     formats: every error text names the field in the log's own path form
 *     ("context.attempt: out of range [1, ...]"), which jansson's messages
 *     do not give.
 *   - jansson ownership: every json_t returned is a new reference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>

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

/* Context keys each event accepts ("by" is accepted everywhere). */
static const char *const *context_keys(sluice_fsm_event_type t)
{
    static const char *const none[] = {NULL};
    static const char *const started[] = {"attempt", "job_name", "comment", NULL};
    static const char *const resent[] = {"attempt", NULL};
    static const char *const submitted[] = {"job_ids", NULL};
    static const char *const detail[] = {"detail", NULL};
    static const char *const adopted[] = {"attempt", "job_ids", "source", NULL};
    static const char *const observed[] = {"lookup", "source", "jobs", "detail", NULL};
    static const char *const cancel[] = {"caller", NULL};
    static const char *const pool[] = {"pool",      "exit_code", "signal", "first",
                                       "signalled", "unknown",   "raw",    NULL};

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

/* jansson's iterators take a non-const object; they do not modify it. */
static json_t *mutable_json(const json_t *o)
{
    json_t *m;

    memcpy(&m, &o, sizeof(m));
    return m;
}

static bool in_list(const char *const *list, const char *key)
{
    for (; *list != NULL; list++) {
        if (strcmp(*list, key) == 0)
            return true;
    }
    return false;
}

static sluice_err
only_keys(const json_t *obj, const char *const *allowed, const char *path, sluice_error_t *err)
{
    const char *key;
    json_t *val;

    json_object_foreach(mutable_json(obj), key, val)
    {
        (void)val;
        if (!in_list(allowed, key))
            return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: unknown field", path, key);
    }
    return SLUICE_OK;
}

/* A string field: required or optional, length-capped, copied to *out. */
static sluice_err get_str(const json_t *obj,
                          const char *key,
                          bool required,
                          size_t max,
                          char **out,
                          const char *path,
                          sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);
    size_t len;

    if (v == NULL) {
        if (required)
            return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: required", path, key);
        return SLUICE_OK;
    }
    if (!json_is_string(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: must be a string", path, key);
    len = json_string_length(v);
    if (len >= max || strlen(json_string_value(v)) != len)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: longer than %zu bytes or has NUL", path,
                             key, max - 1);
    *out = strdup(json_string_value(v));
    if (*out == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s.%s: out of memory", path, key);
    return SLUICE_OK;
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

/* get_str() for free text from Slurm: a longer string is cut to `max`
 * instead of refused, so a log written before the writers cut it (or by
 * another writer) still replays. */
static sluice_err get_text(const json_t *obj,
                           const char *key,
                           bool required,
                           size_t max,
                           char **out,
                           const char *path,
                           sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (v == NULL || !json_is_string(v) || json_string_length(v) < max)
        return get_str(obj, key, required, max, out, path, err);
    if (strlen(json_string_value(v)) != json_string_length(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: has NUL", path, key);
    *out = sluice_fsm_text_dup(json_string_value(v), max);
    if (*out == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s.%s: out of memory", path, key);
    return SLUICE_OK;
}

static sluice_err get_int(const json_t *obj,
                          const char *key,
                          bool required,
                          json_int_t min,
                          json_int_t max,
                          json_int_t *out,
                          bool *present,
                          const char *path,
                          sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (present != NULL)
        *present = v != NULL;
    if (v == NULL) {
        if (required)
            return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: required", path, key);
        return SLUICE_OK;
    }
    if (!json_is_integer(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: must be an integer", path, key);
    if (json_integer_value(v) < min || json_integer_value(v) > max)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.%s: out of range [%lld, %lld]", path, key,
                             (long long)min, (long long)max);
    *out = json_integer_value(v);
    return SLUICE_OK;
}

static sluice_err get_ids(const json_t *ctx, sluice_fsm_event_t *ev, sluice_error_t *err)
{
    const json_t *a = json_object_get(ctx, "job_ids");
    size_t i;

    if (a == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_ids: required");
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "context.job_ids: an array of 1 to %d ids",
                             SLUICE_FSM_MAX_JOBS);
    for (i = 0; i < json_array_size(a); i++) {
        const json_t *v = json_array_get(a, i);

        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "context.job_ids[%zu]: must be a positive integer", i);
        ev->job_ids[i] = (uint64_t)json_integer_value(v);
    }
    ev->n_job_ids = json_array_size(a);
    return SLUICE_OK;
}

static const char *const view_keys[] = {
    "job_id",        "het_job_id",           "het_job_offset",    "state",
    "flags",         "state_reason",         "state_description", "nodes",
    "exit_code",     "exit_signal",          "derived_exit_code", "derived_exit_signal",
    "restart_count", "failed_unschedulable", "other_cluster",     NULL};

static sluice_err
view_from_json(const json_t *o, sluice_jobview_t *v, const char *path, sluice_error_t *err)
{
    const json_t *state, *flags, *f;
    json_int_t n = 0;
    bool present = false;
    sluice_err rc;
    size_t i;
    int idx;

    if (!json_is_object(o))
        return sluice_errorf(err, SLUICE_EINVAL, "%s: must be an object", path);
    if ((rc = only_keys(o, view_keys, path, err)) != SLUICE_OK)
        return rc;
    if ((rc = get_int(o, "job_id", true, 1, INT64_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->job_id = (uint64_t)n;
    n = 0;
    if ((rc = get_int(o, "het_job_id", false, 0, INT64_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->het_job_id = (uint64_t)n;
    n = 0;
    if ((rc = get_int(o, "het_job_offset", false, 0, UINT32_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->het_job_offset = (uint32_t)n;
    state = json_object_get(o, "state");
    if (!json_is_string(state))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.state: required string", path);
    if (!fsm_base_from_name(json_string_value(state), &v->base))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.state: unknown Slurm base state", path);
    flags = json_object_get(o, "flags");
    if (flags != NULL) {
        if (!json_is_array(flags))
            return sluice_errorf(err, SLUICE_EINVAL, "%s.flags: must be an array", path);
        json_array_foreach(flags, i, f)
        {
            idx = json_is_string(f) ? fsm_flag_from_name(json_string_value(f)) : -1;
            if (idx < 0)
                return sluice_errorf(err, SLUICE_EINVAL, "%s.flags[%zu]: unknown flag", path, i);
            v->flags |= UINT32_C(1) << idx;
        }
    }
    if ((rc = get_text(o, "state_reason", false, SLUICE_FSM_DETAIL_MAX, &v->state_reason, path,
                       err)) != SLUICE_OK)
        return rc;
    if ((rc = get_text(o, "state_description", false, SLUICE_FSM_DETAIL_MAX, &v->state_description,
                       path, err)) != SLUICE_OK)
        return rc;
    if ((rc = get_text(o, "nodes", false, SLUICE_FSM_DETAIL_MAX, &v->nodes, path, err)) !=
        SLUICE_OK)
        return rc;
    n = 0;
    if ((rc = get_int(o, "exit_code", false, 0, 255, &n, &present, path, err)) != SLUICE_OK)
        return rc;
    v->has_exit = present;
    v->exit_code = (int)n;
    n = 0;
    if ((rc = get_int(o, "exit_signal", false, 0, 255, &n, &present, path, err)) != SLUICE_OK)
        return rc;
    if (present && !v->has_exit)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.exit_signal: needs exit_code", path);
    v->exit_signal = (int)n;
    n = 0;
    if ((rc = get_int(o, "derived_exit_code", false, 0, 255, &n, &present, path, err)) != SLUICE_OK)
        return rc;
    v->has_derived = present;
    v->derived_exit_code = (int)n;
    n = 0;
    if ((rc = get_int(o, "derived_exit_signal", false, 0, 255, &n, &present, path, err)) !=
        SLUICE_OK)
        return rc;
    if (present && !v->has_derived)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.derived_exit_signal: needs derived_exit_code",
                             path);
    v->derived_exit_signal = (int)n;
    n = 0;
    if ((rc = get_int(o, "restart_count", false, 0, UINT32_MAX, &n, NULL, path, err)) != SLUICE_OK)
        return rc;
    v->restart_count = (uint32_t)n;
    f = json_object_get(o, "failed_unschedulable");
    if (f != NULL && !json_is_boolean(f))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.failed_unschedulable: must be a boolean",
                             path);
    v->failed_unschedulable = json_is_true(f);
    if (v->failed_unschedulable && v->base != SLUICE_JOB_FAILED)
        return sluice_errorf(err, SLUICE_EINVAL, "%s.failed_unschedulable: only with FAILED", path);
    f = json_object_get(o, "other_cluster");
    if (f != NULL && !json_is_boolean(f))
        return sluice_errorf(err, SLUICE_EINVAL, "%s.other_cluster: must be a boolean", path);
    v->other_cluster = json_is_true(f);
    return SLUICE_OK;
}

static sluice_err get_jobs(const json_t *ctx, sluice_fsm_event_t *ev, sluice_error_t *err)
{
    const json_t *a = json_object_get(ctx, "jobs");
    char path[48];
    sluice_err rc;
    size_t i;

    if (ev->lookup != SLUICE_LOOKUP_FOUND) {
        if (a != NULL)
            return sluice_errorf(err, SLUICE_EINVAL, "context.jobs: only with lookup FOUND");
        return SLUICE_OK;
    }
    if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SLUICE_FSM_MAX_JOBS)
        return sluice_errorf(err, SLUICE_EINVAL, "context.jobs: an array of 1 to %d job records",
                             SLUICE_FSM_MAX_JOBS);
    ev->jobs = calloc(json_array_size(a), sizeof(*ev->jobs));
    if (ev->jobs == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "context.jobs: out of memory");
    ev->n_jobs = json_array_size(a);
    for (i = 0; i < ev->n_jobs; i++) {
        snprintf(path, sizeof(path), "context.jobs[%zu]", i);
        if ((rc = view_from_json(json_array_get(a, i), &ev->jobs[i], path, err)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static sluice_err parse_context(const json_t *ctx, sluice_fsm_event_t *ev, sluice_error_t *err)
{
    const char *const *keys = context_keys(ev->type);
    const char *key;
    json_t *val;
    json_int_t n = 0;
    char *text = NULL;
    const json_t *f;
    sluice_err rc;

    json_object_foreach(mutable_json(ctx), key, val)
    {
        (void)val;
        if (strcmp(key, "by") != 0 && !in_list(keys, key))
            return sluice_errorf(err, SLUICE_EINVAL, "context.%s: unknown field for %s", key,
                                 sluice_fsm_event_name(ev->type));
    }
    if ((rc = get_str(ctx, "by", false, SLUICE_FSM_NAME_MAX, &ev->by, "context", err)) != SLUICE_OK)
        return rc;
    switch (ev->type) {
    case SLUICE_EV_SUBMIT_STARTED:
        if ((rc = get_int(ctx, "attempt", true, 1, UINT32_MAX - 1, &n, NULL, "context", err)) !=
            SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        if ((rc = get_str(ctx, "job_name", true, SLUICE_FSM_MARKER_MAX, &ev->job_name, "context",
                          err)) != SLUICE_OK)
            return rc;
        return get_str(ctx, "comment", true, SLUICE_FSM_MARKER_MAX, &ev->comment, "context", err);
    case SLUICE_EV_SUBMIT_RESENT:
        if ((rc = get_int(ctx, "attempt", true, 1, UINT32_MAX - 1, &n, NULL, "context", err)) !=
            SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        return SLUICE_OK;
    case SLUICE_EV_SUBMITTED:
        return get_ids(ctx, ev, err);
    case SLUICE_EV_SUBMIT_UNCERTAIN:
    case SLUICE_EV_SUBMIT_REJECTED:
        return get_text(ctx, "detail", true, SLUICE_FSM_DETAIL_MAX, &ev->detail, "context", err);
    case SLUICE_EV_UNSCHEDULABLE:
        return get_str(ctx, "detail", true, SLUICE_FSM_NAME_MAX, &ev->detail, "context", err);
    case SLUICE_EV_DEPENDENCY_FAILED:
        return get_str(ctx, "detail", true, SLUICE_FSM_DETAIL_MAX, &ev->detail, "context", err);
    case SLUICE_EV_ADOPTED:
        if ((rc = get_int(ctx, "attempt", true, 1, UINT32_MAX - 1, &n, NULL, "context", err)) !=
            SLUICE_OK)
            return rc;
        ev->attempt = (uint32_t)n;
        if ((rc = get_ids(ctx, ev, err)) != SLUICE_OK)
            return rc;
        if ((rc = get_str(ctx, "source", true, 32, &text, "context", err)) != SLUICE_OK)
            return rc;
        rc = sluice_lookup_source_from_name(text, &ev->source)
                 ? SLUICE_OK
                 : sluice_errorf(err, SLUICE_EINVAL, "context.source: live or accounting");
        free(text);
        return rc;
    case SLUICE_EV_OBSERVED:
        if ((rc = get_str(ctx, "lookup", true, 32, &text, "context", err)) != SLUICE_OK)
            return rc;
        rc = sluice_lookup_from_name(text, &ev->lookup)
                 ? SLUICE_OK
                 : sluice_errorf(err, SLUICE_EINVAL,
                                 "context.lookup: FOUND, NOT_FOUND or UNAVAILABLE");
        free(text);
        text = NULL;
        if (rc != SLUICE_OK)
            return rc;
        if ((rc = get_str(ctx, "source", true, 32, &text, "context", err)) != SLUICE_OK)
            return rc;
        rc = sluice_lookup_source_from_name(text, &ev->source)
                 ? SLUICE_OK
                 : sluice_errorf(err, SLUICE_EINVAL, "context.source: live or accounting");
        free(text);
        if (rc != SLUICE_OK)
            return rc;
        if ((rc = get_text(ctx, "detail", false, SLUICE_FSM_DETAIL_MAX, &ev->detail, "context",
                           err)) != SLUICE_OK)
            return rc;
        return get_jobs(ctx, ev, err);
    case SLUICE_EV_CANCEL_REQUESTED:
        return get_str(ctx, "caller", true, SLUICE_FSM_NAME_MAX, &ev->caller, "context", err);
    case SLUICE_EV_POOL_EXIT:
        if ((rc = get_str(ctx, "pool", true, SLUICE_FSM_NAME_MAX, &ev->pool, "context", err)) !=
            SLUICE_OK)
            return rc;
        if ((rc = get_int(ctx, "exit_code", true, 0, 255, &n, NULL, "context", err)) != SLUICE_OK)
            return rc;
        ev->exit_code = (int)n;
        if ((rc = get_int(ctx, "signal", true, 0, 255, &n, NULL, "context", err)) != SLUICE_OK)
            return rc;
        ev->signal = (int)n;
        if ((f = json_object_get(ctx, "first")) != NULL && !json_is_boolean(f))
            return sluice_errorf(err, SLUICE_EINVAL, "context.first: must be a boolean");
        ev->first = json_is_true(f);
        if ((f = json_object_get(ctx, "signalled")) != NULL && !json_is_boolean(f))
            return sluice_errorf(err, SLUICE_EINVAL, "context.signalled: must be a boolean");
        ev->signalled = json_is_true(f);
        if ((f = json_object_get(ctx, "unknown")) != NULL && !json_is_boolean(f))
            return sluice_errorf(err, SLUICE_EINVAL, "context.unknown: must be a boolean");
        ev->unknown = json_is_true(f);
        if ((rc = get_str(ctx, "raw", false, SLUICE_FSM_RAW_MAX, &ev->raw, "context", err)) !=
            SLUICE_OK)
            return rc;
        if (ev->raw != NULL && !ev->unknown)
            return sluice_errorf(err, SLUICE_EINVAL, "context.raw: only with unknown");
        if (ev->unknown && (ev->exit_code != 0 || ev->signal != 0))
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "context.unknown: exit_code and signal must be 0");
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
    const json_t *name, *time, *ctx;
    json_int_t seq = 0;
    sluice_err rc;

    memset(&ev, 0, sizeof(ev));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    if (!json_is_object(entry)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "event: must be an object");
        goto out;
    }
    if ((rc = only_keys(entry, top_keys, "event", err)) != SLUICE_OK)
        goto out;
    if ((rc = get_int(entry, "seq", true, 0, INT64_MAX, &seq, NULL, "event", err)) != SLUICE_OK)
        goto out;
    ev.seq = seq;
    time = json_object_get(entry, "time");
    if (!json_is_number(time) || !isfinite(json_number_value(time))) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "time: required number");
        goto out;
    }
    ev.time = json_number_value(time);
    name = json_object_get(entry, "name");
    if (!json_is_string(name)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "name: required string");
        goto out;
    }
    if (!sluice_fsm_event_from_name(json_string_value(name), &ev.type)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "name: unknown event \"%.64s\"",
                           json_string_value(name));
        goto out;
    }
    ctx = json_object_get(entry, "context");
    if (!json_is_object(ctx)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "context: required object");
        goto out;
    }
    if ((rc = parse_context(ctx, &ev, err)) != SLUICE_OK)
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
