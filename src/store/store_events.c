/* SPDX-License-Identifier: Apache-2.0 */
/* store_events.c - the event log of each launch: append one or many (with or
 * without a summary update), read a launch's events, replay them without
 * a gap, the global feed after a gseq (filtered or not) and one launch's
 * feed.
 *
 * Notes:
 * - An append takes the write lock (BEGIN IMMEDIATE) before it reads
 *   last_seq, so seqs are dense per launch; a terminal launch's summary
 *   never changes.
 * - After an append's commit the handle's commit callback runs (outside
 *   the handle's lock): `sluice serve` wakes its event streams with it. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/store.h>

#include "base/buf.h"
#include "store_int.h"

/* ---- events ----------------------------------------------------------- */

/* Insert one event and update its launch inside the caller's write
 * transaction.  `sum` NULL: a plain event.  With `sum` on a terminal
 * launch: SLUICE_ESTATE, or with `downgrade` the event is written without
 * the summary (a terminal state never changes). */
static sluice_err append_locked(sluice_store_t *store,
                                const char *launch_id,
                                const char *name,
                                const store_append_text_t *txt,
                                const char *caller,
                                int64_t time_ms,
                                const sluice_store_summary_t *sum,
                                int downgrade,
                                int64_t *seq_out,
                                sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    int64_t seq = 0;
    int terminal = 0;
    sluice_err rc;

    if ((rc = store_prepare(store, "SELECT last_seq, terminal FROM launches WHERE launch_id = ?1",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    switch (store_step(st)) {
    case STORE_ROW:
        seq = store_column_int64(st, 0) + 1;
        terminal = (int)store_column_int64(st, 1);
        break;
    case STORE_DONE:
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", launch_id);
        goto out;
    default:
        rc = store_db_fail(store, err, "read launch");
        goto out;
    }
    store_finalize(st);
    st = NULL;
    if (sum != NULL && terminal) {
        if (!downgrade) {
            rc = sluice_errorf(err, SLUICE_ESTATE,
                               "launch %s: already terminal; its state cannot change (event %s)",
                               launch_id, name);
            goto out;
        }
        sum = NULL;
    }
    if ((rc = store_prepare(store,
                            "INSERT INTO events (launch_id, seq, time_ms, name, context, caller, "
                            "state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(?7, (SELECT state "
                            "FROM launches WHERE launch_id = ?1)))",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    store_bind_int64(st, 2, seq);
    store_bind_int64(st, 3, time_ms);
    store_bind_text(st, 4, name);
    store_bind_text(st, 5, txt->ctx);
    store_bind_text(st, 6, caller);
    /* The state after this event: the summary's, or the launch's own when
     * the event does not change it. */
    store_bind_text(st, 7, sum != NULL ? sum->state : NULL);
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK)
        goto out;
    store_finalize(st);
    st = NULL;
    if (sum == NULL) {
        rc = store_prepare(
            store,
            "UPDATE launches SET last_seq = ?2, updated_ms = CASE WHEN updated_ms > ?3 "
            "THEN updated_ms ELSE ?3 END WHERE launch_id = ?1",
            &st, err);
    } else {
        rc = store_prepare(store,
                           "UPDATE launches SET last_seq = ?2, summary_seq = ?2, "
                           "updated_ms = CASE WHEN updated_ms > ?3 THEN updated_ms ELSE ?3 END, "
                           "state = ?4, terminal = ?5, "
                           "result_code = CASE WHEN ?6 <> 0 THEN ?7 ELSE result_code END, "
                           "reason = CASE WHEN ?8 <> 0 THEN ?9 ELSE reason END, "
                           "attempt = CASE WHEN ?10 >= 0 THEN ?10 ELSE attempt END, "
                           "job_ids = coalesce(?11, job_ids) WHERE launch_id = ?1",
                           &st, err);
    }
    if (rc != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    store_bind_int64(st, 2, seq);
    store_bind_int64(st, 3, time_ms);
    if (sum != NULL) {
        store_bind_text(st, 4, sum->state);
        store_bind_int64(st, 5, sum->terminal);
        store_bind_int64(st, 6, sum->set_result != 0);
        store_bind_int64(st, 7, sum->result_code);
        store_bind_int64(st, 8, sum->reason != NULL);
        store_bind_text(st, 9, sum->reason != NULL && sum->reason[0] != '\0' ? sum->reason : NULL);
        store_bind_int64(st, 10, sum->attempt);
        store_bind_text(st, 11, txt->job_ids);
    }
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK)
        goto out;
    if (seq_out != NULL)
        *seq_out = seq;
out:
    store_finalize(st);
    return rc;
}

/* The body shared by both append functions; `sum` NULL for a plain
 * event. */
static sluice_err append(sluice_store_t *store,
                         const char *launch_id,
                         const char *name,
                         const json_t *context,
                         const char *caller,
                         int64_t time_ms,
                         const sluice_store_summary_t *sum,
                         int64_t *seq_out,
                         sluice_error_t *err)
{
    store_append_text_t txt;
    sluice_store_commit_fn hook;
    void *hook_arg;
    int64_t seq = 0;
    sluice_err rc;

    if (store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "append event: store is NULL");
    if ((rc = store_append_prepare(launch_id, name, context, sum, &txt, err)) != SLUICE_OK)
        return rc;
    if (time_ms == 0)
        time_ms = store_now_ms();
    pthread_mutex_lock(&store->mu);
    /* IMMEDIATE takes the write lock now, so the seq read inside cannot be
     * taken by another writer before our insert. */
    rc = store_exec(store, "BEGIN IMMEDIATE", err);
    if (rc == SLUICE_OK)
        rc = store_fence_check_locked(store, name, launch_id, 1, err);
    if (rc == SLUICE_OK)
        rc = append_locked(store, launch_id, name, &txt, caller, time_ms, sum, 0, &seq, err);
    if (rc == SLUICE_OK)
        rc = store_exec(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        store_rollback(store);
    hook = rc == SLUICE_OK ? store->on_commit : NULL;
    hook_arg = store->commit_arg;
    pthread_mutex_unlock(&store->mu);
    if (hook != NULL)
        hook(hook_arg);
    store_append_text_free(&txt);
    if (rc == SLUICE_OK && seq_out != NULL)
        *seq_out = seq;
    return rc;
}

static sluice_err append_batch(sluice_store_t *store,
                               sluice_store_append_t *items,
                               size_t n,
                               bool relaxed,
                               sluice_error_t *err)
{
    store_append_text_t *txt = NULL;
    sluice_store_commit_fn hook;
    void *hook_arg;
    int64_t now = store_now_ms();
    size_t i, ready = 0;
    sluice_err rc = SLUICE_OK;

    if (store == NULL || (items == NULL && n > 0))
        return sluice_errorf(err, SLUICE_EINVAL, "append events: store and items are required");
    if (n == 0)
        return SLUICE_OK;
    if ((txt = calloc(n, sizeof(*txt))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "append events: out of memory");
    for (ready = 0; ready < n; ready++) {
        rc = store_append_prepare(items[ready].launch_id, items[ready].name, items[ready].context,
                                  items[ready].summary, &txt[ready], err);
        if (rc != SLUICE_OK) {
            sluice_error_prefix(err, "event %zu of %zu", ready + 1, n);
            goto out;
        }
    }
    pthread_mutex_lock(&store->mu);
    rc = store_exec(store, relaxed ? STORE_BEGIN_RELAXED : "BEGIN IMMEDIATE", err);
    if (rc == SLUICE_OK)
        rc = store_fence_check_locked(store, items[0].name, items[0].launch_id, n, err);
    for (i = 0; i < n && rc == SLUICE_OK; i++) {
        rc = append_locked(store, items[i].launch_id, items[i].name, &txt[i], items[i].caller,
                           items[i].time_ms != 0 ? items[i].time_ms : now, items[i].summary,
                           items[i].summary_if_live, &items[i].seq, err);
        if (rc != SLUICE_OK)
            sluice_error_prefix(err, "event %zu of %zu", i + 1, n);
    }
    if (rc == SLUICE_OK)
        rc = store_exec(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        store_rollback(store);
    hook = rc == SLUICE_OK ? store->on_commit : NULL;
    hook_arg = store->commit_arg;
    pthread_mutex_unlock(&store->mu);
    if (hook != NULL)
        hook(hook_arg);
out:
    if (rc != SLUICE_OK) {
        for (i = 0; i < n; i++)
            items[i].seq = 0;
    }
    for (i = 0; i < ready; i++)
        store_append_text_free(&txt[i]);
    free(txt);
    return rc;
}

sluice_err sluice_store_append_many(sluice_store_t *store,
                                    sluice_store_append_t *items,
                                    size_t n,
                                    sluice_error_t *err)
{
    return append_batch(store, items, n, false, err);
}

sluice_err sluice_store_append_recoverable(sluice_store_t *store,
                                           sluice_store_append_t *items,
                                           size_t n,
                                           sluice_error_t *err)
{
    return append_batch(store, items, n, true, err);
}

void sluice_store_on_commit(sluice_store_t *store, sluice_store_commit_fn fn, void *arg)
{
    if (store == NULL)
        return;
    pthread_mutex_lock(&store->mu);
    store->on_commit = fn;
    store->commit_arg = fn != NULL ? arg : NULL;
    pthread_mutex_unlock(&store->mu);
}

sluice_err sluice_store_append_event(sluice_store_t *store,
                                     const char *launch_id,
                                     const char *name,
                                     const json_t *context,
                                     const char *caller,
                                     int64_t time_ms,
                                     int64_t *seq_out,
                                     sluice_error_t *err)
{
    return append(store, launch_id, name, context, caller, time_ms, NULL, seq_out, err);
}

sluice_err sluice_store_append_event_and_update(sluice_store_t *store,
                                                const char *launch_id,
                                                const char *name,
                                                const json_t *context,
                                                const char *caller,
                                                int64_t time_ms,
                                                const sluice_store_summary_t *summary,
                                                int64_t *seq_out,
                                                sluice_error_t *err)
{
    if (summary == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "append event: summary is required");
    return append(store, launch_id, name, context, caller, time_ms, summary, seq_out, err);
}

/* Read a launch's events inside the caller's read transaction.  With
 * `check`, the seqs must run from_seq..last_seq without a gap. */
sluice_err store_read_events_locked(sluice_store_t *store,
                                    const char *launch_id,
                                    int64_t from_seq,
                                    size_t limit,
                                    int check,
                                    json_t **out,
                                    sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    json_t *arr = NULL, *ev;
    int64_t last_seq = 0, expect = 1;
    sluice_err rc;
    int r;

    if ((rc = store_prepare(store, "SELECT last_seq FROM launches WHERE launch_id = ?1", &st,
                            err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    r = store_step(st);
    if (r == STORE_DONE) {
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", launch_id);
        goto out;
    }
    if (r != STORE_ROW) {
        rc = store_db_fail(store, err, "read launch");
        goto out;
    }
    last_seq = store_column_int64(st, 0);
    store_finalize(st);
    st = NULL;
    if ((rc = store_prepare(store,
                            "SELECT seq, time_ms, name, context, caller, state, gseq FROM events "
                            "WHERE launch_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    store_bind_int64(st, 2, from_seq);
    store_bind_int64(st, 3, limit == 0 ? INT64_MAX : (int64_t)limit);
    if ((arr = json_array()) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "read events: out of memory");
        goto out;
    }
    expect = from_seq;
    while ((r = store_step(st)) == STORE_ROW) {
        if (check && store_column_int64(st, 0) != expect) {
            rc = sluice_errorf(err, SLUICE_ESTORE,
                               "launch %s: event log has a gap (seq %" PRId64 " missing)",
                               launch_id, expect);
            goto out;
        }
        expect++;
        if ((rc = store_row_to_event(st, 0, launch_id, &ev, err)) != SLUICE_OK)
            goto out;
        if (json_array_append_new(arr, ev) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "read events: out of memory");
            goto out;
        }
    }
    if (r != STORE_DONE) {
        rc = store_db_fail(store, err, "read events");
        goto out;
    }
    if (check && expect - 1 != last_seq) {
        rc = sluice_errorf(err, SLUICE_ESTORE,
                           "launch %s: event log ends at seq %" PRId64 " but last_seq is %" PRId64,
                           launch_id, expect - 1, last_seq);
        goto out;
    }
    *out = arr;
    arr = NULL;
out:
    store_finalize(st);
    json_decref(arr);
    return rc;
}

static sluice_err read_events(sluice_store_t *store,
                              const char *launch_id,
                              int64_t from_seq,
                              size_t limit,
                              int check,
                              json_t **out,
                              sluice_error_t *err)
{
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "read events: store and out are required");
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK)
        return rc;
    if (from_seq < 1)
        from_seq = 1;
    pthread_mutex_lock(&store->mu);
    /* One read transaction: last_seq and the rows come from one snapshot. */
    if ((rc = store_exec(store, "BEGIN", err)) == SLUICE_OK) {
        rc = store_read_events_locked(store, launch_id, from_seq, limit, check, out, err);
        (void)store_exec(store, "COMMIT", NULL);
    }
    pthread_mutex_unlock(&store->mu);
    return rc;
}

sluice_err sluice_store_read_events(sluice_store_t *store,
                                    const char *launch_id,
                                    int64_t from_seq,
                                    size_t limit,
                                    json_t **out,
                                    sluice_error_t *err)
{
    return read_events(store, launch_id, from_seq, limit, 0, out, err);
}

sluice_err
sluice_store_replay(sluice_store_t *store, const char *launch_id, json_t **out, sluice_error_t *err)
{
    return read_events(store, launch_id, 1, 0, 1, out, err);
}

/* Append an event object (with gseq and launch_id) to `arr` for each row
 * of `st` (columns gseq, launch_id, then store_row_to_event's); *next is
 * the gseq of the last row appended. */
static sluice_err
feed_rows(sluice_store_t *store, store_stmt_t *st, json_t *arr, int64_t *next, sluice_error_t *err)
{
    json_t *ev = NULL;
    sluice_err rc;
    int r;

    while ((r = store_step(st)) == STORE_ROW) {
        const char *id = store_column_str(st, 1);

        if (id == NULL)
            return sluice_errorf(err, SLUICE_ESTORE, "event gseq %" PRId64 ": launch_id is NULL",
                                 store_column_int64(st, 0));
        if ((rc = store_row_to_event(st, 2, id, &ev, err)) != SLUICE_OK)
            return rc;
        *next = store_column_int64(st, 0);
        if (json_object_set_new(ev, "gseq", json_integer(*next)) != 0 ||
            json_object_set_new(ev, "launch_id", json_string(id)) != 0 ||
            json_array_append(arr, ev) != 0) {
            json_decref(ev);
            return sluice_errorf(err, SLUICE_ENOMEM, "events: out of memory");
        }
        json_decref(ev);
    }
    if (r != STORE_DONE)
        return store_db_fail(store, err, "read events");
    return SLUICE_OK;
}

sluice_err sluice_store_events_since(sluice_store_t *store,
                                     int64_t after_gseq,
                                     size_t limit,
                                     json_t **out,
                                     int64_t *next_out,
                                     sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    json_t *arr = NULL, *ev = NULL;
    int64_t next = after_gseq;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "events since: store and out are required");
    if (limit == 0)
        limit = LIST_DEFAULT;
    pthread_mutex_lock(&store->mu);
    if ((rc = store_prepare(
             store,
             "SELECT gseq, launch_id, seq, time_ms, name, context, caller, state, gseq FROM events "
             "WHERE gseq > ?1 ORDER BY gseq LIMIT ?2",
             &st, err)) != SLUICE_OK)
        goto out;
    store_bind_int64(st, 1, after_gseq);
    store_bind_int64(st, 2, (int64_t)limit);
    if ((arr = json_array()) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "events since: out of memory");
        goto out;
    }
    if ((rc = feed_rows(store, st, arr, &next, err)) != SLUICE_OK)
        goto out;
    *out = arr;
    arr = NULL;
    if (next_out != NULL)
        *next_out = next;
out:
    store_finalize(st);
    pthread_mutex_unlock(&store->mu);
    json_decref(ev);
    json_decref(arr);
    return rc;
}

/* ---- filtered and per-launch feeds, snapshots ----------------------------- */

sluice_err store_newest_gseq_locked(sluice_store_t *store, int64_t *out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if ((rc = store_prepare(store, "SELECT COALESCE(MAX(gseq), 0) FROM events", &st, err)) !=
        SLUICE_OK)
        return rc;
    if (store_step(st) == STORE_ROW)
        *out = store_column_int64(st, 0);
    else
        rc = store_db_fail(store, err, "newest gseq");
    store_finalize(st);
    return rc;
}

/* The feed of events after `after` matching `f` inside the caller's read
 * transaction (see sluice_store_events_filtered()). */
static sluice_err feed_locked(sluice_store_t *store,
                              int64_t after,
                              size_t limit,
                              const sluice_store_event_filter_t *f,
                              json_t **out,
                              int64_t *next_out,
                              sluice_error_t *err)
{
    buf_t sql = BUF_INIT;
    store_stmt_t *st = NULL;
    json_t *arr = NULL, *ev = NULL;
    int64_t next = after;
    sluice_err rc;

    buf_init(&sql, 512);
    /* Parameters are numbered so that unused ones can simply stay NULL. */
    rc = buf_puts(&sql, "SELECT e.gseq, e.launch_id, e.seq, e.time_ms, e.name, e.context, "
                        "e.caller, e.state, e.gseq FROM events e");
    if (rc == SLUICE_OK && f->site != NULL)
        rc = buf_puts(&sql, " JOIN launches l ON l.launch_id = e.launch_id AND l.site = ?4");
    if (rc == SLUICE_OK)
        rc = buf_puts(&sql, " WHERE e.gseq > ?1");
    if (rc == SLUICE_OK && f->launch_id != NULL)
        rc = buf_puts(&sql, " AND e.launch_id = ?3");
    if (rc == SLUICE_OK && f->state != NULL)
        rc = buf_puts(&sql, " AND e.state = ?5");
    if (rc == SLUICE_OK && f->tenant != NULL)
        rc = buf_puts(&sql, f->tenant[0] == '\0' ? " AND e.launch_id NOT LIKE '%~%'"
                                                 : " AND e.launch_id LIKE ?6");
    if (rc == SLUICE_OK)
        rc = buf_puts(&sql, " ORDER BY e.gseq LIMIT ?2");
    if (rc != SLUICE_OK) {
        rc = sluice_errorf(err, rc, "events: query too long");
        goto out;
    }
    if ((rc = store_prepare(store, buf_str(&sql), &st, err)) != SLUICE_OK)
        goto out;
    store_bind_int64(st, 1, after);
    store_bind_int64(st, 2, (int64_t)limit);
    if (f->launch_id != NULL)
        store_bind_text(st, 3, f->launch_id);
    if (f->site != NULL)
        store_bind_text(st, 4, f->site);
    if (f->state != NULL)
        store_bind_text(st, 5, f->state);
    if (f->tenant != NULL && f->tenant[0] != '\0') {
        char pattern[40];

        if (!store_tenant_ok(f->tenant)) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "tenant: not a tenant name");
            goto out;
        }
        snprintf(pattern, sizeof(pattern), "%s~%%", f->tenant);
        store_bind_text(st, 6, pattern);
    }
    if ((arr = json_array()) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "events: out of memory");
        goto out;
    }
    if ((rc = feed_rows(store, st, arr, &next, err)) != SLUICE_OK)
        goto out;
    /* Fewer than asked: every event of this snapshot was looked at. */
    if (json_array_size(arr) < limit) {
        int64_t newest = 0;

        if ((rc = store_newest_gseq_locked(store, &newest, err)) != SLUICE_OK)
            goto out;
        if (newest > next)
            next = newest;
    }
    *out = arr;
    arr = NULL;
    if (next_out != NULL)
        *next_out = next;
out:
    store_finalize(st);
    buf_free(&sql);
    json_decref(ev);
    json_decref(arr);
    return rc;
}

sluice_err sluice_store_events_filtered(sluice_store_t *store,
                                        int64_t after_gseq,
                                        size_t limit,
                                        const sluice_store_event_filter_t *filter,
                                        json_t **out,
                                        int64_t *next_out,
                                        sluice_error_t *err)
{
    sluice_store_event_filter_t none = {0};
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "events: store and out are required");
    if (filter == NULL)
        filter = &none;
    if (filter->launch_id != NULL &&
        (rc = store_check_launch_id(filter->launch_id, err)) != SLUICE_OK)
        return rc;
    if (limit == 0)
        limit = LIST_DEFAULT;
    pthread_mutex_lock(&store->mu);
    if ((rc = store_exec(store, "BEGIN", err)) == SLUICE_OK) {
        rc = feed_locked(store, after_gseq, limit, filter, out, next_out, err);
        (void)store_exec(store, "COMMIT", NULL);
    }
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* The gseq of the event that made launch `id` terminal (0 while live), and
 * whether it is terminal (`terminal_out` may be NULL), or SLUICE_ENOTFOUND;
 * inside the caller's transaction. */
static sluice_err done_gseq_locked(
    sluice_store_t *store, const char *id, int64_t *out, int *terminal_out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    *out = 0;
    if ((rc = store_prepare(store,
                            "SELECT l.terminal, e.gseq FROM launches l LEFT JOIN events e "
                            "ON e.launch_id = l.launch_id AND e.seq = l.summary_seq "
                            "WHERE l.launch_id = ?1",
                            &st, err)) != SLUICE_OK)
        return rc;
    store_bind_text(st, 1, id);
    switch (store_step(st)) {
    case STORE_ROW:
        if (store_column_int64(st, 0) != 0 && !store_column_is_null(st, 1))
            *out = store_column_int64(st, 1);
        if (terminal_out != NULL)
            *terminal_out = store_column_int64(st, 0) != 0;
        break;
    case STORE_DONE:
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", id);
        break;
    default:
        rc = store_db_fail(store, err, "read launch");
        break;
    }
    store_finalize(st);
    return rc;
}

sluice_err sluice_store_launch_events_after(sluice_store_t *store,
                                            const char *launch_id,
                                            int64_t after_gseq,
                                            size_t limit,
                                            json_t **out,
                                            int64_t *done_gseq_out,
                                            sluice_error_t *err)
{
    sluice_store_event_filter_t f = {0};
    int64_t done = 0;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "launch events: store and out are required");
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK)
        return rc;
    if (limit == 0)
        limit = LIST_DEFAULT;
    f.launch_id = launch_id;
    pthread_mutex_lock(&store->mu);
    /* One snapshot: the terminal event and the rows agree. */
    if ((rc = store_exec(store, "BEGIN", err)) == SLUICE_OK) {
        rc = done_gseq_locked(store, launch_id, &done, NULL, err);
        if (rc == SLUICE_OK)
            rc = feed_locked(store, after_gseq, limit, &f, out, NULL, err);
        (void)store_exec(store, "COMMIT", NULL);
    }
    pthread_mutex_unlock(&store->mu);
    if (rc == SLUICE_OK && done_gseq_out != NULL)
        *done_gseq_out = done;
    return rc;
}

/* 1 when launch_id already has a cancel asked for or recorded (inside the
 * caller's transaction); -1 on a database error. */
static int has_cancel_request(sluice_store_t *store, const char *launch_id)
{
    store_stmt_t *st = NULL;
    int r;

    if (store_prepare(store,
                      "SELECT 1 FROM events WHERE launch_id = ?1 AND name IN ('cancel-asked', "
                      "'cancel-requested') LIMIT 1",
                      &st, NULL) != SLUICE_OK)
        return -1;
    store_bind_text(st, 1, launch_id);
    r = store_step(st);
    store_finalize(st);
    return r == STORE_ROW ? 1 : r == STORE_DONE ? 0 : -1;
}

sluice_err sluice_store_request_cancel(sluice_store_t *store,
                                       const char *launch_id,
                                       const char *caller,
                                       int *appended_out,
                                       sluice_error_t *err)
{
    store_append_text_t txt;
    json_t *ctx = NULL;
    int64_t seq = 0;
    int have = 0;
    sluice_err rc;

    if (appended_out != NULL)
        *appended_out = 0;
    if (store == NULL || launch_id == NULL || caller == NULL || caller[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL,
                             "cancel request: store, launch and caller are "
                             "required");
    if ((ctx = json_pack("{s:s}", "caller", caller)) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "cancel request: out of memory");
    rc = store_append_prepare(launch_id, "cancel-asked", ctx, NULL, &txt, err);
    json_decref(ctx);
    if (rc != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&store->mu);
    rc = store_exec(store, "BEGIN IMMEDIATE", err);
    if (rc == SLUICE_OK) {
        /* A terminal launch or one already asked to stop: nothing to add,
         * which makes a repeated request idempotent across processes. */
        int64_t done = 0;

        rc = done_gseq_locked(store, launch_id, &done, &have, err);
        if (rc == SLUICE_OK && !have && (have = has_cancel_request(store, launch_id)) < 0)
            rc = store_db_fail(store, err, "read cancel requests");
    }
    if (rc == SLUICE_OK && !have)
        rc = append_locked(store, launch_id, "cancel-asked", &txt, caller, store_now_ms(), NULL, 0,
                           &seq, err);
    if (rc == SLUICE_OK)
        rc = store_exec(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        store_rollback(store);
    pthread_mutex_unlock(&store->mu);
    store_append_text_free(&txt);
    if (rc == SLUICE_OK && appended_out != NULL)
        *appended_out = !have;
    return rc;
}
