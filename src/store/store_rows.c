/* SPDX-License-Identifier: Apache-2.0 */
/* store_rows.c - rows of the store shaped into JSON objects: a launch summary
 * (SUMMARY_COLS, + request and render for one launch) and an event.
 *
 * Notes:
 * - Columns come through the statement accessors of store.c; a JSON
 *   column that does not parse, or holds the wrong type, is SLUICE_ESTORE
 *   naming the launch and the column (a damaged file is reported, not
 *   guessed at). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/store.h>

#include "store_int.h"

/* Parse a JSON column.  `type` is the JSON type the column must hold;
 * a SQL NULL becomes json null when `nullable`. */
sluice_err store_column_json(store_stmt_t *st,
                             int col,
                             const char *launch_id,
                             const char *column,
                             json_type type,
                             int nullable,
                             json_t **out,
                             sluice_error_t *err)
{
    const char *text;
    json_error_t jerr;
    json_t *v;

    if (store_column_is_null(st, col)) {
        if (!nullable)
            return sluice_errorf(err, SLUICE_ESTORE, "launch %s: column %s is NULL", launch_id,
                                 column);
        *out = json_null();
        return SLUICE_OK;
    }
    text = store_column_str(st, col);
    if (text == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: column %s: out of memory", launch_id,
                             column);
    v = json_loadb(text, store_column_bytes(st, col), JSON_DECODE_ANY, &jerr);
    if (v == NULL)
        return sluice_errorf(err, SLUICE_ESTORE, "launch %s: column %s holds invalid JSON: %s",
                             launch_id, column, jerr.text);
    if (json_typeof(v) != type) {
        json_decref(v);
        return sluice_errorf(err, SLUICE_ESTORE,
                             "launch %s: column %s holds JSON of the wrong type", launch_id,
                             column);
    }
    *out = v;
    return SLUICE_OK;
}

/* A launch object from a row of SUMMARY_COLS (+ request, render when
 * `full`). */
sluice_err store_row_to_launch(store_stmt_t *st, int full, json_t **out, sluice_error_t *err)
{
    const char *id = store_column_str(st, 0);
    json_t *job_ids = NULL, *request = NULL, *render = NULL, *obj = NULL;
    json_t *result;
    sluice_err rc;

    if (id == NULL || store_column_str(st, 1) == NULL || store_column_str(st, 3) == NULL ||
        store_column_str(st, 13) == NULL)
        return sluice_errorf(err, SLUICE_ESTORE, "launch %s: a required column is NULL",
                             id != NULL ? id : "?");
    if ((rc = store_column_json(st, 9, id, "job_ids", JSON_ARRAY, 0, &job_ids, err)) != SLUICE_OK)
        goto out;
    if (full) {
        if ((rc = store_column_json(st, 15, id, "request", JSON_OBJECT, 0, &request, err)) !=
            SLUICE_OK)
            goto out;
        if (store_column_is_null(st, 16))
            render = json_null();
        else if ((rc = store_column_json(st, 16, id, "render", JSON_OBJECT, 0, &render, err)) !=
                 SLUICE_OK)
            goto out;
    }
    result = store_column_is_null(st, 4) ? json_null() : json_integer(store_column_int64(st, 4));
    obj = json_pack(
        "{s:s, s:s, s:s?, s:s, s:o, s:s?, s:I, s:I, s:I, s:O, s:b, s:I, s:I, s:s, s:s?}",
        "launch_id", id, "site", store_column_str(st, 1), "study", store_column_str(st, 2), "state",
        store_column_str(st, 3), "result_code", result, "reason", store_column_str(st, 5),
        "created_ms", (json_int_t)store_column_int64(st, 6), "updated_ms",
        (json_int_t)store_column_int64(st, 7), "attempt", (json_int_t)store_column_int64(st, 8),
        "job_ids", job_ids, "terminal", (int)store_column_int64(st, 10) != 0, "last_seq",
        (json_int_t)store_column_int64(st, 11), "summary_seq",
        (json_int_t)store_column_int64(st, 12), "request_hash", store_column_str(st, 13), "cluster",
        store_column_str(st, 14));
    if (obj == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", id);
        goto out;
    }
    if (full && (json_object_set(obj, "request", request) != 0 ||
                 json_object_set(obj, "render", render) != 0)) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", id);
        goto out;
    }
    *out = obj;
    obj = NULL;
out:
    json_decref(obj);
    json_decref(job_ids);
    json_decref(request);
    json_decref(render);
    return rc;
}

/* An event object from columns [first..]: seq, time_ms, name, context,
 * caller, state, gseq; `launch_id` is for messages.  `state` is null for
 * an event stored before schema 2 whose state was not certain. */
sluice_err store_row_to_event(
    store_stmt_t *st, int first, const char *launch_id, json_t **out, sluice_error_t *err)
{
    json_t *context = NULL, *ev;
    const char *name = store_column_str(st, first + 2);
    sluice_err rc;

    if (name == NULL)
        return sluice_errorf(err, SLUICE_ESTORE, "launch %s: event name is NULL", launch_id);
    if ((rc = store_column_json(st, first + 3, launch_id, "context", JSON_OBJECT, 0, &context,
                                err)) != SLUICE_OK)
        return rc;
    ev = json_pack(
        "{s:I, s:I, s:s, s:o, s:s?, s:s?, s:I}", "seq", (json_int_t)store_column_int64(st, first),
        "time", (json_int_t)store_column_int64(st, first + 1), "name", name, "context", context,
        "caller", store_column_str(st, first + 4), "state", store_column_str(st, first + 5), "gseq",
        (json_int_t)store_column_int64(st, first + 6));
    if (ev == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", launch_id);
    *out = ev;
    return SLUICE_OK;
}

sluice_err sluice_store_created_launch(const sluice_store_launch_spec_t *spec,
                                       const sluice_store_create_result_t *res,
                                       json_t **launch_out,
                                       json_t **events_out,
                                       int64_t *version_out,
                                       sluice_error_t *err)
{
    json_t *l = NULL, *evs = NULL;

    if (spec == NULL || res == NULL || launch_out == NULL || events_out == NULL ||
        spec->launch_id == NULL || spec->site == NULL || !json_is_object(spec->request))
        return sluice_errorf(err, SLUICE_EINVAL, "created launch: spec, result and outputs");
    if (res->rc != SLUICE_OK || res->existed || res->gseq <= 0)
        return sluice_errorf(err, SLUICE_EINVAL, "launch %s: not a launch this call created",
                             spec->launch_id);
    /* The same members, under the same names, as store_row_to_launch() and
     * store_row_to_event() give a row read back (unit.store checks that
     * both agree). */
    l = json_pack("{s:s, s:s, s:s?, s:s, s:n, s:n, s:I, s:I, s:I, s:[], s:b, s:I, s:I, s:s, s:s?, "
                  "s:O, s:n}",
                  "launch_id", spec->launch_id, "site", spec->site, "study", spec->study, "state",
                  "ACCEPTED", "result_code", "reason", "created_ms", (json_int_t)res->time_ms,
                  "updated_ms", (json_int_t)res->time_ms, "attempt", (json_int_t)0, "job_ids",
                  "terminal", 0, "last_seq", (json_int_t)1, "summary_seq", (json_int_t)1,
                  "request_hash", res->request_hash, "cluster", spec->cluster, "request",
                  spec->request, "render");
    /* the context is copied (an `o` is stolen by json_pack, also when it fails) */
    evs = json_pack("[{s:I, s:I, s:s, s:o, s:s?, s:s, s:I}]", "seq", (json_int_t)1, "time",
                    (json_int_t)res->time_ms, "name", "accepted", "context",
                    spec->context != NULL ? json_deep_copy(spec->context) : json_object(), "caller",
                    spec->caller, "state", "ACCEPTED", "gseq", (json_int_t)res->gseq);
    if (l == NULL || evs == NULL) {
        json_decref(l);
        json_decref(evs);
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", spec->launch_id);
    }
    *launch_out = l;
    *events_out = evs;
    if (version_out != NULL)
        *version_out = res->gseq;
    return SLUICE_OK;
}
