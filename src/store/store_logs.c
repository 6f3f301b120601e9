/* SPDX-License-Identifier: Apache-2.0 */
/* store_logs.c - the archived logs of a launch (table `launch_logs`): one
 * row per attempt and stream, written when the launch is archived, read by
 * every replica that serves the launch, pruned by retention, deleted with
 * the launch.
 *
 * Notes:
 * - The store keeps what it is given: the caller (the archive hook,
 *   supervise/staging_ops.c) reads the job's file by the job-owned rule and
 *   cuts it to the site's cap.  A row says what was kept: `size` is the
 *   log's length when it was archived, `omitted` how many bytes at its
 *   start are not in `data`, so `data` is bytes [omitted, size).
 * - Offsets are offsets in the job's file, the same whether a log is read
 *   live or from here; a read below `omitted` is refused, never shifted.
 * - A write is one write transaction and, on a replica's launcher handle,
 *   fenced like an event append (store_fence_check_locked): an old leader
 *   stores nothing after another took over.  Writing a row again (an
 *   archive retried after a crash) replaces it.
 * - Ranges are read with substr() on the database side, so a followed
 *   stream never moves the whole log for each chunk.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <sluice/log.h>
#include <sluice/store.h>

#include "store_int.h"

static const char *const status_names[] = {"stored", "missing", "refused", "pruned"};

#define N_STATUS ((int)(sizeof(status_names) / sizeof(status_names[0])))

const char *sluice_store_log_status_name(sluice_store_log_status status)
{
    return (int)status >= 0 && (int)status < N_STATUS ? status_names[status] : "?";
}

static int status_of(const char *name)
{
    for (int i = 0; name != NULL && i < N_STATUS; i++)
        if (strcmp(name, status_names[i]) == 0)
            return i;
    return -1;
}

static sluice_err check_stream(const char *stream, sluice_error_t *err)
{
    if (stream == NULL || (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0))
        return sluice_errorf(err, SLUICE_EINVAL, "log stream: \"stdout\" or \"stderr\", not \"%s\"",
                             stream != NULL ? stream : "(null)");
    return SLUICE_OK;
}

sluice_err
sluice_store_put_log(sluice_store_t *store, const sluice_store_log_t *log, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    int stored;
    sluice_err rc;

    if (store == NULL || log == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "put log: store and log are required");
    if ((rc = store_check_launch_id(log->launch_id, err)) != SLUICE_OK ||
        (rc = check_stream(log->stream, err)) != SLUICE_OK)
        return rc;
    stored = log->status == SLUICE_STORE_LOG_STORED;
    if ((int)log->status < 0 || (int)log->status >= N_STATUS || log->size < 0 ||
        (stored && (int64_t)log->len > log->size) || (stored && log->len > 0 && log->data == NULL))
        return sluice_errorf(err, SLUICE_EINVAL,
                             "put log %s/%s: a known status, and for a stored log at most `size` "
                             "bytes",
                             log->launch_id, log->stream);
    pthread_mutex_lock(&store->mu);
    if ((rc = store_exec(store, "BEGIN IMMEDIATE", err)) != SLUICE_OK ||
        (rc = store_fence_check_locked(store, "archived-log", log->launch_id, 1, err)) != SLUICE_OK)
        goto out;
    rc = store_prepare(
        store,
        "INSERT INTO launch_logs (launch_id, attempt, stream, status, size, omitted, "
        "data, note, archived_ms) "
        "SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM launches WHERE launch_id = ?1 "
        "ON CONFLICT (launch_id, attempt, stream) DO UPDATE SET "
        "status = excluded.status, size = excluded.size, omitted = excluded.omitted, "
        "data = excluded.data, note = excluded.note, "
        "archived_ms = excluded.archived_ms",
        &st, err);
    if (rc != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, log->launch_id);
    store_bind_int64(st, 2, (int64_t)log->attempt);
    store_bind_text(st, 3, log->stream);
    store_bind_text(st, 4, status_names[log->status]);
    store_bind_int64(st, 5, log->size);
    store_bind_int64(st, 6, stored ? log->size - (int64_t)log->len : log->size);
    /* An empty log is an empty value, a log not stored SQL NULL. */
    store_bind_blob(st, 7, stored ? (log->data != NULL ? log->data : "") : NULL, log->len);
    store_bind_text(st, 8, log->note);
    store_bind_int64(st, 9, log->time_ms != 0 ? log->time_ms : store_now_ms());
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK)
        goto out;
    if (store_changes(store) == 0) {
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s not found", log->launch_id);
        goto out;
    }
    rc = store_exec(store, "COMMIT", err);
out:
    store_finalize(st);
    if (rc != SLUICE_OK)
        store_rollback(store);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

sluice_err sluice_store_get_log(sluice_store_t *store,
                                const char *launch_id,
                                const char *stream,
                                int attempt,
                                sluice_store_log_info_t *out,
                                sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    int step, status;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "get log: store and out are required");
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK ||
        (rc = check_stream(stream, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&store->mu);
    rc = store_prepare(store,
                       "SELECT attempt, status, size, omitted, archived_ms, note FROM launch_logs "
                       "WHERE launch_id = ?1 AND stream = ?2 AND (attempt = ?3 OR ?3 < 0) "
                       "ORDER BY attempt DESC LIMIT 1",
                       &st, err);
    if (rc != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    store_bind_text(st, 2, stream);
    store_bind_int64(st, 3, attempt);
    if ((step = store_step(st)) == STORE_DONE) {
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: no archived %s%s", launch_id, stream,
                           attempt >= 0 ? " of that attempt" : "");
        goto out;
    }
    if (step != STORE_ROW) {
        rc = store_db_fail(store, err, "read log");
        goto out;
    }
    if ((status = status_of(store_column_str(st, 1))) < 0) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "launch %s: launch_logs.status: unknown value",
                           launch_id);
        goto out;
    }
    memset(out, 0, sizeof(*out));
    out->attempt = (uint32_t)store_column_int64(st, 0);
    out->status = (sluice_store_log_status)status;
    out->size = store_column_int64(st, 2);
    out->omitted = store_column_int64(st, 3);
    out->archived_ms = store_column_int64(st, 4);
    if (!store_column_is_null(st, 5))
        snprintf(out->note, sizeof(out->note), "%s", store_column_str(st, 5));
out:
    store_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

sluice_err sluice_store_read_log(sluice_store_t *store,
                                 const char *launch_id,
                                 const char *stream,
                                 uint32_t attempt,
                                 int64_t offset,
                                 void *buf,
                                 size_t max,
                                 size_t *n_out,
                                 sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    const void *p;
    size_t n = 0;
    int step;
    int64_t omitted;
    sluice_err rc;

    if (store == NULL || n_out == NULL || (buf == NULL && max > 0) || offset < 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "read log: store, a buffer, n_out and an offset >= 0 are required");
    *n_out = 0;
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK ||
        (rc = check_stream(stream, err)) != SLUICE_OK)
        return rc;
    if (max > (size_t)1 << 30)
        max = (size_t)1 << 30;
    pthread_mutex_lock(&store->mu);
    /* substr() counts from 1, in bytes for a BLOB (bytea); a start past
     * the end gives an empty value. */
    rc = store_prepare(store,
                       "SELECT omitted, substr(data, CAST(?4 - omitted + 1 AS INTEGER), "
                       "CAST(?5 AS INTEGER)) FROM launch_logs "
                       "WHERE launch_id = ?1 AND stream = ?2 AND attempt = ?3",
                       &st, err);
    if (rc != SLUICE_OK)
        goto out;
    store_bind_text(st, 1, launch_id);
    store_bind_text(st, 2, stream);
    store_bind_int64(st, 3, (int64_t)attempt);
    store_bind_int64(st, 4, offset);
    store_bind_int64(st, 5, (int64_t)max);
    if ((step = store_step(st)) == STORE_DONE) {
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: no archived %s of attempt %" PRIu32,
                           launch_id, stream, attempt);
        goto out;
    }
    if (step != STORE_ROW) {
        rc = store_db_fail(store, err, "read log");
        goto out;
    }
    omitted = store_column_int64(st, 0);
    if (offset < omitted) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "launch %s: %s: offset %" PRId64 " is in the first %" PRId64
                           " bytes, which the store does not hold",
                           launch_id, stream, offset, omitted);
        goto out;
    }
    p = store_column_blob(st, 1, &n);
    if (n > max)
        n = max;
    if (n > 0)
        memcpy(buf, p, n);
    *n_out = n;
out:
    store_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

sluice_err sluice_store_prune_logs(
    sluice_store_t *store, int64_t age_ms, int64_t now, size_t *count_out, sluice_error_t *err)
{
    static const char *const old =
        "SELECT launch_id FROM launches WHERE terminal = 1 AND updated_ms < ?1";
    store_stmt_t *st = NULL;
    char sql[512];
    size_t n = 0;
    sluice_err rc;

    if (store == NULL || age_ms < 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "prune logs: store and a non-negative age required");
    if (now == 0)
        now = store_now_ms();
    pthread_mutex_lock(&store->mu);
    if ((rc = store_exec(store, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
        goto out;
    snprintf(sql, sizeof(sql),
             "SELECT COUNT(DISTINCT launch_id) FROM launch_logs WHERE status = 'stored' AND "
             "launch_id IN (%s)",
             old);
    if ((rc = store_prepare(store, sql, &st, err)) != SLUICE_OK)
        goto out;
    store_bind_int64(st, 1, now - age_ms);
    if (store_step(st) != STORE_ROW) {
        rc = store_db_fail(store, err, "prune logs");
        goto out;
    }
    n = (size_t)store_column_int64(st, 0);
    store_finalize(st);
    st = NULL;
    snprintf(sql, sizeof(sql),
             "UPDATE launch_logs SET status = 'pruned', data = NULL WHERE status = 'stored' AND "
             "launch_id IN (%s)",
             old);
    if ((rc = store_prepare(store, sql, &st, err)) != SLUICE_OK)
        goto out;
    store_bind_int64(st, 1, now - age_ms);
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK ||
        (rc = store_exec(store, "COMMIT", err)) != SLUICE_OK)
        goto out;
    if (n > 0)
        sluice_log(SLUICE_LOG_INFO, "store %s: pruned the archived logs of %zu launches",
                   store->db_path, n);
    if (count_out != NULL)
        *count_out = n;
out:
    store_finalize(st);
    if (rc != SLUICE_OK)
        store_rollback(store);
    pthread_mutex_unlock(&store->mu);
    return rc;
}
