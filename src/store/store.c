/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - the store object whatever its backend: opening by URL (SQLite
 * in the state directory, or PostgreSQL), closing, pruning, the newest
 * gseq, and the statement accessors of store_int.h, each a call through
 * the store's backend table (store_sqlite.c, store_pg.c).
 *
 * Notes:
 * - The state directory exists with either backend: the supervisor lock
 *   file and the staging area live there.  With PostgreSQL it holds no
 *   database file.
 * - A store keeps its URL (never one with a password: store_pg.c refuses
 *   those) and its password file path, so that sluice_store_reopen() gives
 *   a second handle on the same database.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/log.h>
#include <sluice/store.h>

#include "base/opts.h"
#include "base/urlsafe.h"
#include "store_int.h"

#define DB_NAME "sluice.db"
#define LOCK_NAME "supervisor.lock"

/* ---- the statement accessors ------------------------------------------ */

sluice_err store_db_fail(const sluice_store_t *s, sluice_error_t *err, const char *what)
{
    return s->ops->db_fail(s, err, what);
}

sluice_err store_exec(sluice_store_t *s, const char *sql, sluice_error_t *err)
{
    return s->ops->exec(s, sql, err);
}

sluice_err store_prepare(sluice_store_t *s, const char *sql, store_stmt_t **st, sluice_error_t *err)
{
    *st = NULL;
    return s->ops->prepare(s, sql, st, err);
}

sluice_err store_step_done(sluice_store_t *s, store_stmt_t *st, sluice_error_t *err)
{
    return s->ops->step_done(s, st, err);
}

void store_rollback(sluice_store_t *s)
{
    s->ops->rollback(s);
}

int64_t store_changes(sluice_store_t *s)
{
    return s->ops->changes(s);
}

void store_finalize(store_stmt_t *st)
{
    if (st != NULL)
        st->ops->finalize(st);
}

int store_step(store_stmt_t *st)
{
    return st->ops->step(st);
}

void store_bind_text(store_stmt_t *st, int i, const char *v)
{
    st->ops->bind_text(st, i, v);
}

void store_bind_int64(store_stmt_t *st, int i, int64_t v)
{
    st->ops->bind_int64(st, i, v);
}

void store_bind_blob(store_stmt_t *st, int i, const void *v, size_t len)
{
    st->ops->bind_blob(st, i, v, len);
}

const void *store_column_blob(store_stmt_t *st, int col, size_t *len)
{
    return st->ops->column_blob(st, col, len);
}

const char *store_column_str(store_stmt_t *st, int col)
{
    return st->ops->column_str(st, col);
}

size_t store_column_bytes(store_stmt_t *st, int col)
{
    return st->ops->column_bytes(st, col);
}

int64_t store_column_int64(store_stmt_t *st, int col)
{
    return st->ops->column_int64(st, col);
}

int store_column_is_null(store_stmt_t *st, int col)
{
    return st->ops->column_is_null(st, col);
}

/* ---- opening and closing ---------------------------------------------- */

sluice_err
sluice_store_open_with(sluice_store_t **out, const sluice_store_opts_t *opts, sluice_error_t *err)
{
    sluice_store_t *s = NULL;
    char *defdir = NULL, shown[512];
    const char *dir, *url;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "store open: out and options are required");
    if ((rc = opts_check_version("store", opts->version, SLUICE_STORE_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    dir = opts->dir;
    url = opts->url != NULL && opts->url[0] != '\0' ? opts->url : NULL;
    if (url != NULL && !urlsafe_is_postgres(url)) {
        urlsafe_redact(url, shown, sizeof(shown));
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "store.url %s: not a postgresql:// or postgres:// URL (leave it "
                             "unset for SQLite in the state directory)",
                             shown);
    }
    if (dir == NULL) {
        if ((rc = sluice_store_default_dir(&defdir, err)) != SLUICE_OK)
            goto out;
        dir = defdir;
    }
    if (dir[0] == '\0') {
        rc = sluice_errorf(err, SLUICE_EINVAL, "store dir: empty path");
        goto out;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "store open: out of memory");
        goto out;
    }
    s->lock_fd = -1;
    pthread_mutex_init(&s->mu, NULL);
    s->dir = strdup(dir);
    s->lock_path = store_path_join(dir, LOCK_NAME);
    s->db_path = url != NULL ? strdup("") : store_path_join(dir, DB_NAME);
    if (url != NULL) {
        s->url = strdup(url);
        if (opts->password_file != NULL)
            s->password_file = strdup(opts->password_file);
    }
    if (s->dir == NULL || s->db_path == NULL || s->lock_path == NULL ||
        (url != NULL && s->url == NULL) ||
        (opts->password_file != NULL && url != NULL && s->password_file == NULL)) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "store open: out of memory");
        goto out;
    }
    if ((rc = store_make_dirs(dir, err)) != SLUICE_OK)
        goto out;
    s->keep_schema = opts->keep_schema != 0;
    if (url != NULL)
        rc = store_pg_open(s, url, s->password_file, err);
    else
        rc = store_sqlite_open(s, err);
    if (rc != SLUICE_OK)
        goto out;
    *out = s;
    s = NULL;
out:
    sluice_store_close(s);
    free(defdir);
    return rc;
}

sluice_err sluice_store_open(sluice_store_t **out, const char *dir, sluice_error_t *err)
{
    sluice_store_opts_t opts = SLUICE_STORE_OPTS_INIT;

    opts.dir = dir;
    return sluice_store_open_with(out, &opts, err);
}

sluice_err
sluice_store_reopen(sluice_store_t **out, const sluice_store_t *store, sluice_error_t *err)
{
    sluice_store_opts_t opts = SLUICE_STORE_OPTS_INIT;

    if (store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "store reopen: store is NULL");
    opts.dir = store->dir;
    opts.url = store->url;
    opts.password_file = store->password_file;
    return sluice_store_open_with(out, &opts, err);
}

void sluice_store_close(sluice_store_t *store)
{
    if (store == NULL)
        return;
    sluice_store_unlock_supervisor(store);
    if (store->ops != NULL)
        store->ops->close(store);
    pthread_mutex_destroy(&store->mu);
    free(store->dir);
    free(store->db_path);
    free(store->lock_path);
    free(store->url);
    free(store->password_file);
    free(store);
}

const char *sluice_store_dir(const sluice_store_t *store)
{
    return store != NULL ? store->dir : NULL;
}

const char *sluice_store_db_path(const sluice_store_t *store)
{
    return store != NULL ? store->db_path : NULL;
}

const char *sluice_store_backend(const sluice_store_t *store)
{
    return store != NULL && store->ops != NULL ? store->ops->name : NULL;
}

/* ---- pruning ---------------------------------------------------------- */

sluice_err sluice_store_prune(
    sluice_store_t *store, int64_t age_ms, int64_t now, size_t *count_out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    size_t n = 0;
    sluice_err rc;

    if (store == NULL || age_ms < 0)
        return sluice_errorf(err, SLUICE_EINVAL, "prune: store and a non-negative age required");
    if (now == 0)
        now = store_now_ms();
    pthread_mutex_lock(&store->mu);
    if ((rc = store_exec(store, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
        goto out;
    /* The events and the archived logs go with their launch (ON DELETE
     * CASCADE). */
    if ((rc = store_prepare(store, "DELETE FROM launches WHERE terminal = 1 AND updated_ms < ?1",
                            &st, err)) != SLUICE_OK)
        goto out;
    store_bind_int64(st, 1, now - age_ms);
    if ((rc = store_step_done(store, st, err)) != SLUICE_OK)
        goto out;
    n = (size_t)store_changes(store);
    if ((rc = store_exec(store, "COMMIT", err)) != SLUICE_OK)
        goto out;
    if (n > 0)
        sluice_log(SLUICE_LOG_INFO, "store %s: pruned %zu terminal launches", store->db_path, n);
    if (count_out != NULL)
        *count_out = n;
out:
    store_finalize(st);
    if (rc != SLUICE_OK)
        store_rollback(store);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* ---- the newest event ------------------------------------------------- */

sluice_err sluice_store_last_gseq(sluice_store_t *store, int64_t *out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "last gseq: store and out are required");
    pthread_mutex_lock(&store->mu);
    if ((rc = store_prepare(store, "SELECT COALESCE(MAX(gseq), 0) FROM events", &st, err)) ==
        SLUICE_OK) {
        if (store_step(st) == STORE_ROW)
            *out = store_column_int64(st, 0);
        else
            rc = store_db_fail(store, err, "last gseq");
    }
    store_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

sluice_err
sluice_store_opts_init(sluice_store_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_store_opts_t tmpl = SLUICE_STORE_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "store", version, SLUICE_STORE_OPTS_VERSION, err);
}
