/* SPDX-License-Identifier: Apache-2.0 */
/* store_launches.c - launches in the store: create (idempotent on the request
 * hash), get one, list with filters and a cursor, list the live ones.
 *
 * Notes:
 * - A create writes the launch row and its `accepted` event in one write
 *   transaction; the same launch_id with another request is
 *   SLUICE_ECONFLICT.  sluice_store_create_many() writes a group of them
 *   in one transaction (one durable commit), each under a savepoint so that
 *   one refused launch leaves the others.
 * - A list reads its page and the newest gseq in one read transaction; a
 *   read of one launch reads it, its events and its version in another.
 * - The list cursor is "<created_ms>/<launch_id>" of the last row; a page
 *   asks one row more than its limit to know whether another exists. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/store.h>

#include "base/json_text.h"
#include "base/buf.h"
#include "base/marker.h"
#include "store_int.h"

/* ---- launches --------------------------------------------------------- */

/* One spec checked and turned into the texts it stores (outside any lock). */
typedef struct {
    char hash[65];
    char *request, *render, *context;
    int64_t t;
} create_texts_t;

static void create_texts_clear(create_texts_t *x)
{
    free(x->request);
    free(x->render);
    free(x->context);
    memset(x, 0, sizeof(*x));
}

/* The request's canonical text: the caller's when it made it (the accept
 * pipeline serialises the request once, for the column and the hash),
 * else serialised here. */
static sluice_err
request_text(const sluice_store_launch_spec_t *spec, char **out, sluice_error_t *err)
{
    if (spec->request_text == NULL)
        return store_json_text(spec->request, "request", out, err);
    if ((*out = strdup(spec->request_text)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "create launch: out of memory");
    return SLUICE_OK;
}

static sluice_err
create_check(const sluice_store_launch_spec_t *spec, create_texts_t *x, sluice_error_t *err)
{
    sluice_err rc;

    memset(x, 0, sizeof(*x));
    if (spec == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "create launch: spec is required");
    if ((rc = store_check_launch_id(spec->launch_id, err)) != SLUICE_OK)
        return rc;
    if (spec->site == NULL || spec->site[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "launch %s: site is required", spec->launch_id);
    if (!json_is_object(spec->request))
        return sluice_errorf(err, SLUICE_EINVAL, "launch %s: request must be a JSON object",
                             spec->launch_id);
    if ((spec->render != NULL && !json_is_object(spec->render)) ||
        (spec->context != NULL && !json_is_object(spec->context)))
        return sluice_errorf(err, SLUICE_EINVAL, "launch %s: render and context must be objects",
                             spec->launch_id);
    if ((rc = store_refuse_secrets(spec->request, "request", err)) != SLUICE_OK ||
        (rc = store_refuse_secrets(spec->render, "render", err)) != SLUICE_OK ||
        (rc = store_refuse_secrets(spec->context, "context", err)) != SLUICE_OK ||
        (rc = request_text(spec, &x->request, err)) != SLUICE_OK ||
        (rc = store_request_hash_text(spec->site, spec->study, x->request, x->hash, err)) !=
            SLUICE_OK)
        goto fail;
    /* The render is not hashed: its keys stay in the order it was built
     * (sorting the ~6 KB script's object is work for nobody). */
    if (spec->render != NULL &&
        (x->render = json_text_dump(spec->render, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "render: cannot serialise");
        goto fail;
    }
    if (spec->context != NULL)
        rc = store_json_text(spec->context, "context", &x->context, err);
    else if ((x->context = strdup("{}")) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "create launch: out of memory");
    if (rc != SLUICE_OK)
        goto fail;
    x->t = spec->time_ms != 0 ? spec->time_ms : store_now_ms();
    return SLUICE_OK;
fail:
    create_texts_clear(x);
    return rc;
}

/* The row and its `accepted` event, inside the caller's transaction.  An
 * existing id with the same hash sets *existed and writes nothing; with
 * another hash it is SLUICE_ECONFLICT (nothing written either). */
static sluice_err create_write(sluice_store_t *store,
                               const sluice_store_launch_spec_t *spec,
                               const create_texts_t *x,
                               int *existed,
                               int64_t *gseq,
                               sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    *existed = 0;
    *gseq = 0;
    if ((rc = store_prepare(store, "SELECT request_hash FROM launches WHERE launch_id = ?1", &st,
                            err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, spec->launch_id);
    switch (store_step(st)) {
    case STORE_ROW: {
        const char *old = store_column_str(st, 0);

        if (old == NULL || strcmp(old, x->hash) != 0)
            rc =
                sluice_errorf(err, SLUICE_ECONFLICT,
                              "launch %s already exists with a different request", spec->launch_id);
        else
            *existed = 1;
        goto out;
    }
    case STORE_DONE:
        break;
    default:
        rc = store_db_fail(store, err, "read launch");
        goto out;
    }
    store_finalize(st);
    st = NULL;
    if ((rc = store_prepare(store,
                            "INSERT INTO launches (launch_id, site, study, request_hash, "
                            "state, created_ms, updated_ms, attempt, job_ids, terminal, "
                            "last_seq, summary_seq, cluster) VALUES (?1, ?2, ?3, ?4, "
                            "'ACCEPTED', ?5, ?5, 0, '[]', 0, 1, 1, ?6)",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, spec->launch_id);
    store_bind_text(st, 2, spec->site);
    store_bind_text(st, 3, spec->study);
    store_bind_text(st, 4, x->hash);
    store_bind_int64(st, 5, x->t);
    store_bind_text(st, 6, spec->cluster);
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK)
        goto out;
    store_finalize(st);
    st = NULL;
    /* The large texts in their own table: the row above is rewritten by
     * every event, these never are (STORE_TEXTS_SCHEMA). */
    if ((rc = store_prepare(store,
                            "INSERT INTO launch_texts (launch_id, request, render) "
                            "VALUES (?1, ?2, ?3)",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, spec->launch_id);
    store_bind_text(st, 2, x->request);
    store_bind_text(st, 3, x->render);
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK)
        goto out;
    store_finalize(st);
    st = NULL;
    if ((rc = store_prepare(store,
                            "INSERT INTO events (launch_id, seq, time_ms, name, context, caller, "
                            "state) VALUES (?1, 1, ?2, 'accepted', ?3, ?4, 'ACCEPTED') "
                            "RETURNING gseq",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, spec->launch_id);
    store_bind_int64(st, 2, x->t);
    store_bind_text(st, 3, x->context);
    store_bind_text(st, 4, spec->caller);
    if (store_step(st) != STORE_ROW) {
        rc = store_db_fail(store, err, "write");
        goto out;
    }
    *gseq = store_column_int64(st, 0);
out:
    store_finalize(st);
    return rc;
}

sluice_err sluice_store_create_launch(sluice_store_t *store,
                                      const sluice_store_launch_spec_t *spec,
                                      int *existed_out,
                                      sluice_error_t *err)
{
    sluice_store_create_result_t res;
    sluice_err rc;

    if (store == NULL || spec == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "create launch: store and spec are required");
    rc = sluice_store_create_many(store, spec, 1, &res, err);
    if (rc == SLUICE_OK && (rc = res.rc) != SLUICE_OK && err != NULL)
        *err = res.err;
    if (rc == SLUICE_OK && existed_out != NULL)
        *existed_out = res.existed;
    return rc;
}

sluice_err sluice_store_create_many(sluice_store_t *store,
                                    const sluice_store_launch_spec_t *specs,
                                    size_t n,
                                    sluice_store_create_result_t *res,
                                    sluice_error_t *err)
{
    create_texts_t *x = NULL;
    size_t i;
    int locked = 0;
    sluice_err rc = SLUICE_OK;

    if (store == NULL || (n > 0 && (specs == NULL || res == NULL)))
        return sluice_errorf(err, SLUICE_EINVAL, "create launches: store, specs and results");
    if (n == 0)
        return SLUICE_OK;
    if ((x = calloc(n, sizeof(*x))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "create launches: out of memory");
    for (i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        res[i].rc = create_check(&specs[i], &x[i], &res[i].err);
    }
    pthread_mutex_lock(&store->mu);
    locked = 1;
    if ((rc = store_exec(store, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
        goto out;
    for (i = 0; i < n; i++) {
        if (res[i].rc != SLUICE_OK)
            continue;
        /* One item's failure (a conflict, a bad row) leaves the others. */
        if ((rc = store_exec(store, "SAVEPOINT one", err)) != SLUICE_OK)
            goto out;
        res[i].rc =
            create_write(store, &specs[i], &x[i], &res[i].existed, &res[i].gseq, &res[i].err);
        if (res[i].rc == SLUICE_OK) {
            memcpy(res[i].request_hash, x[i].hash, sizeof(res[i].request_hash));
            res[i].time_ms = x[i].t;
        }
        if (res[i].rc != SLUICE_OK && (rc = store_exec(store, "ROLLBACK TO one", err)) != SLUICE_OK)
            goto out;
        if ((rc = store_exec(store, "RELEASE one", err)) != SLUICE_OK)
            goto out;
    }
    rc = store_exec(store, "COMMIT", err);
out:
    if (locked) {
        if (rc != SLUICE_OK)
            store_rollback(store);
        pthread_mutex_unlock(&store->mu);
    }
    for (i = 0; i < n; i++) {
        if (rc != SLUICE_OK && res[i].rc == SLUICE_OK) { /* nothing of the batch is stored */
            res[i].rc = rc;
            res[i].existed = 0;
            res[i].gseq = 0;
            if (err != NULL)
                res[i].err = *err;
        }
        create_texts_clear(&x[i]);
    }
    free(x);
    return rc;
}

/* sluice_store_get_launch() inside the caller's transaction; without
 * `with_render` the render is left unread (null). */
static sluice_err get_launch_locked(sluice_store_t *store,
                                    const char *launch_id,
                                    int with_render,
                                    json_t **out,
                                    sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    json_t *obj = NULL;
    sluice_err rc;

    if ((rc = store_prepare(store,
                            with_render ? "SELECT " SUMMARY_COLS ", request, render FROM launches "
                                          "JOIN launch_texts USING (launch_id) "
                                          "WHERE launch_id = ?1"
                                        : "SELECT " SUMMARY_COLS ", request, NULL FROM launches "
                                          "JOIN launch_texts USING (launch_id) "
                                          "WHERE launch_id = ?1",
                            &st, err)) != SLUICE_OK)
        return rc;
    store_bind_text(st, 1, launch_id);
    switch (store_step(st)) {
    case STORE_ROW:
        rc = store_row_to_launch(st, 1, &obj, err);
        break;
    case STORE_DONE:
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", launch_id);
        break;
    default:
        rc = store_db_fail(store, err, "read launch");
        break;
    }
    if (rc == SLUICE_OK)
        *out = obj;
    store_finalize(st);
    return rc;
}

sluice_err sluice_store_get_launch(sluice_store_t *store,
                                   const char *launch_id,
                                   json_t **out,
                                   sluice_error_t *err)
{
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "get launch: store and out are required");
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&store->mu);
    rc = get_launch_locked(store, launch_id, 1, out, err);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* Collect summaries from a prepared query into a new array. */
static sluice_err
collect_launches(sluice_store_t *store, store_stmt_t *st, json_t **out, sluice_error_t *err)
{
    json_t *arr = json_array(), *obj;
    sluice_err rc = SLUICE_OK;
    int r;

    if (arr == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "list launches: out of memory");
    while ((r = store_step(st)) == STORE_ROW) {
        if ((rc = store_row_to_launch(st, 0, &obj, err)) != SLUICE_OK)
            goto out;
        if (json_array_append_new(arr, obj) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "list launches: out of memory");
            goto out;
        }
    }
    if (r != STORE_DONE) {
        rc = store_db_fail(store, err, "list launches");
        goto out;
    }
    *out = arr;
    arr = NULL;
out:
    json_decref(arr);
    return rc;
}

sluice_err sluice_store_list_launches(sluice_store_t *store,
                                      const sluice_store_filter_t *filter,
                                      json_t **out,
                                      char **next_cursor_out,
                                      sluice_error_t *err)
{
    return sluice_store_list_launches_at(store, filter, out, next_cursor_out, NULL, err);
}

sluice_err sluice_store_list_launches_at(sluice_store_t *store,
                                         const sluice_store_filter_t *filter,
                                         json_t **out,
                                         char **next_cursor_out,
                                         int64_t *version_out,
                                         sluice_error_t *err)
{
    int64_t version = 0;
    int in_txn = 0;
    sluice_store_filter_t none = {0};
    buf_t sql = BUF_INIT;
    store_stmt_t *st = NULL;
    json_t *arr = NULL;
    char *next = NULL;
    long long cur_created = 0;
    const char *cur_id = NULL;
    char pattern[40];
    size_t limit;
    int locked = 0;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "list launches: store and out are required");
    if (filter == NULL)
        filter = &none;
    limit = filter->limit == 0 ? LIST_DEFAULT : filter->limit;
    if (limit > LIST_MAX)
        limit = LIST_MAX;
    if (filter->cursor != NULL) {
        char *end = NULL;

        errno = 0;
        cur_created = strtoll(filter->cursor, &end, 10);
        if (errno != 0 || end == filter->cursor || *end != '/' ||
            !marker_launch_id_ok(end + 1, strlen(end + 1))) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "cursor: malformed");
            goto out;
        }
        cur_id = end + 1;
    }
    buf_init(&sql, 4096);
    /* Parameters are numbered so that unused ones can simply stay NULL. */
    if ((rc = buf_puts(&sql, "SELECT " SUMMARY_COLS " FROM launches WHERE 1 = 1")) != SLUICE_OK)
        goto oom;
    if (filter->state != NULL && (rc = buf_puts(&sql, " AND state = ?1")) != SLUICE_OK)
        goto oom;
    if (filter->site != NULL && (rc = buf_puts(&sql, " AND site = ?2")) != SLUICE_OK)
        goto oom;
    if (filter->study != NULL && (rc = buf_puts(&sql, " AND study = ?3")) != SLUICE_OK)
        goto oom;
    if (filter->cluster != NULL &&
        (rc = buf_puts(&sql, filter->cluster_or_null ? " AND (cluster = ?7 OR cluster IS NULL)"
                                                     : " AND cluster = ?7")) != SLUICE_OK)
        goto oom;
    if (filter->tenant != NULL &&
        (rc = buf_puts(&sql, filter->tenant[0] == '\0' ? " AND launch_id NOT LIKE '%~%'"
                                                       : " AND launch_id LIKE ?8")) != SLUICE_OK)
        goto oom;
    if (filter->terminal == SLUICE_STORE_LIVE &&
        (rc = buf_puts(&sql, " AND terminal = 0")) != SLUICE_OK)
        goto oom;
    if (filter->terminal == SLUICE_STORE_TERMINAL &&
        (rc = buf_puts(&sql, " AND terminal = 1")) != SLUICE_OK)
        goto oom;
    if (cur_id != NULL &&
        (rc = buf_puts(&sql, " AND (created_ms > ?4 OR (created_ms = ?4 AND launch_id > ?5))")) !=
            SLUICE_OK)
        goto oom;
    if ((rc = buf_puts(&sql, " ORDER BY created_ms, launch_id LIMIT ?6")) != SLUICE_OK)
        goto oom;

    pthread_mutex_lock(&store->mu);
    locked = 1;
    /* One read transaction: the page and the version come from one
     * snapshot. */
    if ((rc = store_exec(store, "BEGIN", err)) != SLUICE_OK)
        goto out;
    in_txn = 1;
    if ((rc = store_newest_gseq_locked(store, &version, err)) != SLUICE_OK)
        goto out;
    if ((rc = store_prepare(store, buf_str(&sql), &st, err)) != SLUICE_OK)
        goto out;
    if (filter->state != NULL)
        store_bind_text(st, 1, filter->state);
    if (filter->site != NULL)
        store_bind_text(st, 2, filter->site);
    if (filter->study != NULL)
        store_bind_text(st, 3, filter->study);
    if (filter->cluster != NULL)
        store_bind_text(st, 7, filter->cluster);
    if (filter->tenant != NULL && filter->tenant[0] != '\0') {
        if (!store_tenant_ok(filter->tenant)) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "tenant: not a tenant name");
            goto out;
        }
        snprintf(pattern, sizeof(pattern), "%s~%%", filter->tenant);
        store_bind_text(st, 8, pattern);
    }
    if (cur_id != NULL) {
        store_bind_int64(st, 4, cur_created);
        store_bind_text(st, 5, cur_id);
    }
    /* One row more than asked tells whether another page exists. */
    store_bind_int64(st, 6, (int64_t)limit + 1);
    if ((rc = collect_launches(store, st, &arr, err)) != SLUICE_OK)
        goto out;
    if (json_array_size(arr) > limit) {
        json_t *last;
        char tmp[200];

        json_array_remove(arr, limit);
        last = json_array_get(arr, limit - 1);
        snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT "/%s",
                 json_integer_value(json_object_get(last, "created_ms")),
                 json_string_value(json_object_get(last, "launch_id")));
        if ((next = strdup(tmp)) == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "list launches: out of memory");
            goto out;
        }
    }
    *out = arr;
    arr = NULL;
    if (next_cursor_out != NULL) {
        *next_cursor_out = next;
        next = NULL;
    }
    if (version_out != NULL)
        *version_out = version;
    goto out;
oom:
    rc = sluice_errorf(err, rc, "list launches: query too long");
out:
    store_finalize(st);
    if (in_txn)
        (void)store_exec(store, "COMMIT", NULL);
    if (locked)
        pthread_mutex_unlock(&store->mu);
    buf_free(&sql);
    json_decref(arr);
    free(next);
    return rc;
}

sluice_err sluice_store_list_live(sluice_store_t *store, json_t **out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "list live: store and out are required");
    pthread_mutex_lock(&store->mu);
    if ((rc = store_prepare(store,
                            "SELECT " SUMMARY_COLS " FROM launches WHERE terminal = 0 "
                            "ORDER BY created_ms, launch_id",
                            &st, err)) != SLUICE_OK)
        goto out;
    rc = collect_launches(store, st, out, err);
out:
    store_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

sluice_err sluice_store_read_launch(sluice_store_t *store,
                                    const char *launch_id,
                                    json_t **launch_out,
                                    json_t **events_out,
                                    int64_t *version_out,
                                    sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    json_t *l = NULL, *ev = NULL;
    int64_t version = 0;
    sluice_err rc;

    if (store == NULL || launch_out == NULL || events_out == NULL || version_out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "read launch: store and outputs are required");
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&store->mu);
    if ((rc = store_exec(store, "BEGIN", err)) != SLUICE_OK)
        goto out;
    rc = get_launch_locked(store, launch_id, 0, &l, err);
    if (rc == SLUICE_OK)
        rc = store_read_events_locked(store, launch_id, 1, 0, 0, &ev, err);
    if (rc == SLUICE_OK)
        rc = store_prepare(store, "SELECT COALESCE(MAX(gseq), 0) FROM events WHERE launch_id = ?1",
                           &st, err);
    if (rc == SLUICE_OK) {
        store_bind_text(st, 1, launch_id);
        if (store_step(st) == STORE_ROW)
            version = store_column_int64(st, 0);
        else
            rc = store_db_fail(store, err, "launch version");
    }
    store_finalize(st);
    (void)store_exec(store, "COMMIT", NULL);
out:
    pthread_mutex_unlock(&store->mu);
    if (rc == SLUICE_OK) {
        *launch_out = l;
        *events_out = ev;
        *version_out = version;
        l = ev = NULL;
    }
    json_decref(l);
    json_decref(ev);
    return rc;
}
