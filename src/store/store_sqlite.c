/* SPDX-License-Identifier: Apache-2.0 */
/* store_sqlite.c - the store's SQLite backend (the only user of SQLite):
 * opening and checking the file, migrations, WAL, the statement accessors
 * behind store_int.h (store_sqlite_ops), the test hook.
 *
 * Layout of a store directory: `sluice.db` (+ `-wal`, `-shm` while open) and
 * `supervisor.lock`.  The schema is versioned with `PRAGMA user_version`;
 * `migrations[i]` turns version i into version i + 1 and runs in its own
 * write transaction, so a crash during an upgrade leaves the older version
 * intact.  `PRAGMA application_id` marks the file as ours.
 *
 * Notes:
 * - Every check that decides whether a file may be used (application_id,
 *   user_version, quick_check) is a read; nothing is written to a file we are
 *   about to refuse.  Switching to WAL and migrating come after the checks.
 * - `launches.last_seq` is the seq of the newest event and
 *   `launches.summary_seq` the seq of the event that last set the summary.
 *   Both change only in the transaction that inserts that event, which is
 *   what makes "summary matches its event" hold across crashes.
 * - `events.gseq` is an AUTOINCREMENT key: values are never reused after a
 *   prune, so a watcher's cursor never skips or repeats an event.  The per
 *   launch key (launch_id, seq) is a UNIQUE constraint.
 * - One connection per store object, opened SQLITE_OPEN_FULLMUTEX, and a
 *   mutex held across every public call, because a transaction spans
 *   several SQLite calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include <sluice/log.h>
#include <sluice/store.h>

#include "store.h"
#include "store_int.h"

#define BUSY_TIMEOUT_MS 10000
#define STORE_CACHE_KIB_SQL "-512" /* negative: KiB, i.e. 512 KiB */
/* migrations[i] brings a database from version i to version i + 1. */
static const char *const migrations[] = {
    /* 0 -> 1: the first schema. */
    "CREATE TABLE meta ("
    "  key TEXT PRIMARY KEY,"
    "  value TEXT NOT NULL);"
    "CREATE TABLE launches ("
    "  launch_id TEXT PRIMARY KEY,"
    "  site TEXT NOT NULL,"
    "  study TEXT,"
    "  request TEXT NOT NULL,"
    "  request_hash TEXT NOT NULL,"
    "  render TEXT,"
    "  state TEXT NOT NULL,"
    "  result_code INTEGER,"
    "  reason TEXT,"
    "  created_ms INTEGER NOT NULL,"
    "  updated_ms INTEGER NOT NULL,"
    "  attempt INTEGER NOT NULL DEFAULT 0,"
    "  job_ids TEXT NOT NULL DEFAULT '[]',"
    "  terminal INTEGER NOT NULL DEFAULT 0 CHECK (terminal IN (0, 1)),"
    "  last_seq INTEGER NOT NULL,"
    "  summary_seq INTEGER NOT NULL);"
    "CREATE INDEX launches_by_created ON launches (created_ms, launch_id);"
    "CREATE INDEX launches_by_terminal ON launches (terminal, updated_ms);"
    "CREATE TABLE events ("
    "  gseq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  launch_id TEXT NOT NULL REFERENCES launches (launch_id) ON DELETE CASCADE,"
    "  seq INTEGER NOT NULL CHECK (seq >= 1),"
    "  time_ms INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  context TEXT NOT NULL,"
    "  caller TEXT,"
    "  UNIQUE (launch_id, seq));"
    "INSERT INTO meta (key, value) VALUES ('schema_created_by', 'sluice store v1');",
    /* 1 -> 2: each event records the launch's state right after it, so
     * that watchers can filter on it and need no replay.  Older events get
     * the state where it is certain: `accepted` is ACCEPTED, and a launch's
     * newest event has the launch's state; the others stay NULL. */
    "ALTER TABLE events ADD COLUMN state TEXT;"
    "UPDATE events SET state = 'ACCEPTED' WHERE name = 'accepted';"
    "UPDATE events SET state = (SELECT l.state FROM launches l "
    "  WHERE l.launch_id = events.launch_id AND l.last_seq = events.seq) "
    "  WHERE state IS NULL;",
    /* 2 -> 3: the webhook outbox (store_webhooks.c): one row per queued
     * delivery, independent of its launch (pruning a launch leaves its
     * deliveries); the cursor and the counters are `webhooks.*` keys of
     * meta, written by store_webhooks_start() and after. */
    "CREATE TABLE IF NOT EXISTS webhook_deliveries ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  delivery_id TEXT NOT NULL UNIQUE,"
    "  url TEXT NOT NULL,"
    "  launch_id TEXT NOT NULL,"
    "  gseq INTEGER NOT NULL,"
    "  event_name TEXT NOT NULL,"
    "  body TEXT NOT NULL,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  next_attempt_ms INTEGER NOT NULL,"
    "  dead INTEGER NOT NULL DEFAULT 0 CHECK (dead IN (0, 1)),"
    "  last_error TEXT,"
    "  created_ms INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS webhook_deliveries_by_url ON webhook_deliveries (dead, url, id);",
    /* 3 -> 4: the cluster of a launch (several clusters from one service);
     * NULL is the site's first cluster, so older rows keep theirs. */
    "ALTER TABLE launches ADD COLUMN cluster TEXT;",
    STORE_LEASE_SCHEMA, /* 4 -> 5: the leadership lease (store_lease.c) */
    /* 5 -> 6: the archived logs (store_logs.c) */
    STORE_LOGS_SCHEMA("INTEGER", "BLOB", ""),
    /* 6 -> 7: the request and the render in a table of their own */
    STORE_TEXTS_SCHEMA(""),
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* ---- errors and small SQLite helpers ---------------------------------- */

static sluice_err db_fail(const sluice_store_t *s, sluice_error_t *err, const char *what)
{
    return sluice_errorf(err, SLUICE_ESTORE, "%s: %s: %s", s->db_path, what, sqlite3_errmsg(s->db));
}

static sluice_err exec_cached(sluice_store_t *s, const char *sql, sluice_error_t *err);

/* Run `sql`: one statement (no ';') from the statement cache, so that the
 * BEGIN and COMMIT of every transaction are parsed once; anything longer,
 * and every PRAGMA, through sqlite3_exec().  A PRAGMA acts when it is
 * prepared, not when it is stepped: a cached one would do nothing again. */
static sluice_err exec_plain(sluice_store_t *s, const char *sql, sluice_error_t *err)
{
    char *msg = NULL;
    sluice_err rc = SLUICE_OK;

    if (s->stmts != NULL && strchr(sql, ';') == NULL && strncmp(sql, "PRAGMA", 6) != 0)
        return exec_cached(s, sql, err);

    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK)
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: %s", s->db_path,
                           msg != NULL ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return rc;
}

/* Back to synchronous FULL once the relaxed transaction is over (SQLite
 * refuses to change it inside one).  A failure leaves NORMAL in place: it
 * is logged, and the next relaxed begin or this connection's close ends it. */
static void relaxed_end(sluice_store_t *s)
{
    sluice_error_t e = SLUICE_ERROR_INIT;

    if (!s->relaxed || !sqlite3_get_autocommit(s->db))
        return;
    if (exec_plain(s, "PRAGMA synchronous = FULL", &e) != SLUICE_OK)
        sluice_log(SLUICE_LOG_WARNING, "store: %s", e.text);
    else
        s->relaxed = false;
}

/* STORE_BEGIN_RELAXED (store_int.h): in WAL mode, synchronous NORMAL
 * writes the commit's frames without syncing the WAL; the next commit made
 * at FULL syncs them with its own. */
static sluice_err exec_sql(sluice_store_t *s, const char *sql, sluice_error_t *err)
{
    sluice_err rc;

    if (strcmp(sql, STORE_BEGIN_RELAXED) == 0) {
        if ((rc = exec_plain(s, "PRAGMA synchronous = NORMAL", err)) != SLUICE_OK)
            return rc;
        s->relaxed = true;
        if ((rc = exec_plain(s, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
            relaxed_end(s);
        return rc;
    }
    rc = exec_plain(s, sql, err);
    if (s->relaxed)
        relaxed_end(s);
    return rc;
}

static sluice_err
prepare(sluice_store_t *s, const char *sql, sqlite3_stmt **st, sluice_error_t *err)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_fail(s, err, "prepare");
    return SLUICE_OK;
}

/* Run a statement that returns no row. */
static sluice_err step_done(sluice_store_t *s, sqlite3_stmt *st, sluice_error_t *err)
{
    if (sqlite3_step(st) != SQLITE_DONE)
        return db_fail(s, err, "write");
    return SLUICE_OK;
}

/* Read one integer from a query that has no parameters. */
static sluice_err query_int(sluice_store_t *s, const char *sql, int64_t *out, sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    sluice_err rc;

    if ((rc = prepare(s, sql, &st, err)) != SLUICE_OK)
        goto out;
    if (sqlite3_step(st) != SQLITE_ROW) {
        rc = db_fail(s, err, sql);
        goto out;
    }
    *out = sqlite3_column_int64(st, 0);
out:
    sqlite3_finalize(st);
    return rc;
}

static void rollback(sluice_store_t *s)
{
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    relaxed_end(s);
}

static const char *column_str(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

/* ---- the statement accessors of store_int.h ---------------------------- */

/* A store_stmt_t: a SQLite statement, and the cache slot it came from.
 * The store keeps the statements it prepared (up to STMT_CACHE, by SQL
 * text) and hands one out again once the last user finalised it: each
 * append, read and commit otherwise spent a good part of its CPU parsing
 * the same SQL again.  A statement asked for while its cached copy is in
 * use (a nested query of the same text) is prepared on its own and
 * finalised as before.  Callers hold store->mu, so the cache needs no lock
 * of its own. */
#define STMT_CACHE 48

struct lite_stmt {
    store_stmt_t base; /* first: a store_stmt_t * is a struct lite_stmt * */
    sqlite3_stmt *raw;
    struct stmt_slot *slot; /* NULL: not cached, finalised by store_finalize */
};

static const store_ops_t lite_ops;

struct stmt_slot {
    char *sql;
    uint64_t hash;
    uint64_t used; /* the cache's clock at the last hand-out */
    bool busy;
    struct lite_stmt st;
};

struct store_stmt_cache {
    struct stmt_slot slot[STMT_CACHE];
    uint64_t clock;
};

#define LITE(st) ((struct lite_stmt *)(st))
#define RAW(st) (LITE(st)->raw)

static uint64_t sql_hash(const char *sql)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */

    for (; *sql != '\0'; sql++)
        h = (h ^ (unsigned char)*sql) * 1099511628211ull;
    return h;
}

static void stmt_cache_free(struct store_stmt_cache *c)
{
    for (size_t i = 0; c != NULL && i < STMT_CACHE; i++) {
        sqlite3_finalize(c->slot[i].st.raw);
        free(c->slot[i].sql);
    }
    free(c);
}

static sluice_err
lite_prepare(sluice_store_t *s, const char *sql, store_stmt_t **st, sluice_error_t *err)
{
    struct store_stmt_cache *c = s->stmts;
    struct stmt_slot *victim = NULL;
    struct lite_stmt *one;
    uint64_t h = sql_hash(sql);
    sqlite3_stmt *raw = NULL;
    sluice_err rc;

    *st = NULL;
    for (size_t i = 0; c != NULL && i < STMT_CACHE; i++) {
        struct stmt_slot *sl = &c->slot[i];
        if (sl->sql != NULL && sl->hash == h && !sl->busy && strcmp(sl->sql, sql) == 0) {
            sl->busy = true;
            sl->used = ++c->clock;
            *st = &sl->st.base;
            return SLUICE_OK;
        }
        if (!sl->busy && (victim == NULL || sl->used < victim->used))
            victim = sl;
    }
    if ((rc = prepare(s, sql, &raw, err)) != SLUICE_OK)
        return rc;
    if (victim != NULL) {
        char *copy = strdup(sql);
        if (copy != NULL) {
            sqlite3_finalize(victim->st.raw);
            free(victim->sql);
            victim->sql = copy;
            victim->hash = h;
            victim->busy = true;
            victim->used = ++c->clock;
            victim->st.base.ops = &lite_ops;
            victim->st.raw = raw;
            victim->st.slot = victim;
            *st = &victim->st.base;
            return SLUICE_OK;
        }
    }
    if ((one = calloc(1, sizeof(*one))) == NULL) {
        sqlite3_finalize(raw);
        return sluice_errorf(err, SLUICE_ENOMEM, "%s: prepare: out of memory", s->db_path);
    }
    one->base.ops = &lite_ops;
    one->raw = raw;
    *st = &one->base;
    return SLUICE_OK;
}

static sluice_err lite_step_done(sluice_store_t *s, store_stmt_t *st, sluice_error_t *err)
{
    return step_done(s, RAW(st), err);
}

static int64_t lite_changes(sluice_store_t *s)
{
    return (int64_t)sqlite3_changes(s->db);
}

static void lite_finalize(store_stmt_t *base)
{
    struct lite_stmt *st = LITE(base);

    if (st->slot == NULL) {
        sqlite3_finalize(st->raw);
        free(st);
        return;
    }
    /* Back into the cache: reset, its bindings cleared (no text of one
     * call is kept for the next). */
    sqlite3_reset(st->raw);
    sqlite3_clear_bindings(st->raw);
    st->slot->busy = false;
}

static sluice_err exec_cached(sluice_store_t *s, const char *sql, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;
    int r;

    if ((rc = lite_prepare(s, sql, &st, err)) != SLUICE_OK)
        return rc;
    while ((r = sqlite3_step(RAW(st))) == SQLITE_ROW)
        ;
    if (r != SQLITE_DONE)
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: %s", s->db_path, sqlite3_errmsg(s->db));
    lite_finalize(st);
    return rc;
}

static int lite_step(store_stmt_t *st)
{
    int r = sqlite3_step(RAW(st));

    return r == SQLITE_ROW ? STORE_ROW : r == SQLITE_DONE ? STORE_DONE : -1;
}

static void lite_bind_text(store_stmt_t *st, int i, const char *v)
{
    if (v == NULL)
        sqlite3_bind_null(RAW(st), i);
    else
        sqlite3_bind_text(RAW(st), i, v, -1, SQLITE_TRANSIENT);
}

static void lite_bind_int64(store_stmt_t *st, int i, int64_t v)
{
    sqlite3_bind_int64(RAW(st), i, (sqlite3_int64)v);
}

static void lite_bind_blob(store_stmt_t *st, int i, const void *v, size_t len)
{
    if (v == NULL)
        sqlite3_bind_null(RAW(st), i);
    else if (len == 0)
        sqlite3_bind_zeroblob(RAW(st), i, 0); /* empty, not NULL */
    else
        sqlite3_bind_blob64(RAW(st), i, v, (sqlite3_uint64)len, SQLITE_TRANSIENT);
}

static const void *lite_column_blob(store_stmt_t *st, int col, size_t *len)
{
    const void *p = sqlite3_column_blob(RAW(st), col);

    *len = p != NULL ? (size_t)sqlite3_column_bytes(RAW(st), col) : 0;
    return p;
}

static const char *lite_column_str(store_stmt_t *st, int col)
{
    return column_str(RAW(st), col);
}

static size_t lite_column_bytes(store_stmt_t *st, int col)
{
    return (size_t)sqlite3_column_bytes(RAW(st), col);
}

static int64_t lite_column_int64(store_stmt_t *st, int col)
{
    return (int64_t)sqlite3_column_int64(RAW(st), col);
}

static int lite_column_is_null(store_stmt_t *st, int col)
{
    return sqlite3_column_type(RAW(st), col) == SQLITE_NULL;
}

static void lite_close(sluice_store_t *s)
{
    stmt_cache_free(s->stmts);
    s->stmts = NULL;
    if (s->db != NULL)
        sqlite3_close_v2(s->db);
    s->db = NULL;
}

static const store_ops_t lite_ops = {
    .name = "sqlite",
    .db_fail = db_fail,
    .exec = exec_sql,
    .prepare = lite_prepare,
    .step_done = lite_step_done,
    .rollback = rollback,
    .changes = lite_changes,
    .close = lite_close,
    .finalize = lite_finalize,
    .step = lite_step,
    .bind_text = lite_bind_text,
    .bind_int64 = lite_bind_int64,
    .bind_blob = lite_bind_blob,
    .column_str = lite_column_str,
    .column_blob = lite_column_blob,
    .column_bytes = lite_column_bytes,
    .column_int64 = lite_column_int64,
    .column_is_null = lite_column_is_null,
};

/* The files this process has already passed quick_check on (dev, inode),
 * so that a second connection to the same store (sluice serve's reader)
 * does not read the whole file again: with 100,000 finished launches each
 * check took ~0.2 s of the startup.  Every process still checks each store
 * at its first open, and again whenever the file changed since (size or
 * mtime), so a file damaged between two opens is still refused. */
#define CHECKED_MAX 8
static struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime; /* a file changed since its check is checked again */
} checked[CHECKED_MAX];
static size_t n_checked;
static pthread_mutex_t checked_mu = PTHREAD_MUTEX_INITIALIZER;

static bool was_checked(const char *path, struct stat *sb)
{
    bool yes = false;

    if (stat(path, sb) != 0)
        return false;
    pthread_mutex_lock(&checked_mu);
    for (size_t i = 0; i < n_checked && !yes; i++)
        yes = checked[i].dev == sb->st_dev && checked[i].ino == sb->st_ino &&
              checked[i].size == sb->st_size && checked[i].mtime.tv_sec == sb->st_mtim.tv_sec &&
              checked[i].mtime.tv_nsec == sb->st_mtim.tv_nsec;
    pthread_mutex_unlock(&checked_mu);
    return yes;
}

static void mark_checked(const struct stat *sb)
{
    pthread_mutex_lock(&checked_mu);
    size_t i = n_checked < CHECKED_MAX ? n_checked++ : (size_t)(sb->st_ino % CHECKED_MAX);

    checked[i].dev = sb->st_dev;
    checked[i].ino = sb->st_ino;
    checked[i].size = sb->st_size;
    checked[i].mtime = sb->st_mtim;
    pthread_mutex_unlock(&checked_mu);
}

/* Decide, by reading only, whether the file may be used.  `*fresh_out` is 1
 * for an empty database that we may initialise. */
static sluice_err check_file(sluice_store_t *s, int *fresh_out, sluice_error_t *err)
{
    int64_t app_id = 0, version = 0, objects = 0;
    sqlite3_stmt *st = NULL;
    struct stat sb;
    const char *res;
    sluice_err rc;

    memset(&sb, 0, sizeof(sb));
    /* The three reads share one read transaction: another process may be
     * creating the store at this moment, and reading its application_id
     * before and its schema after that commit would call our own new store
     * foreign. */
    if (exec_sql(s, "BEGIN", err) != SLUICE_OK ||
        query_int(s, "PRAGMA application_id", &app_id, err) != SLUICE_OK ||
        query_int(s, "PRAGMA user_version", &version, err) != SLUICE_OK ||
        query_int(s, "SELECT count(*) FROM sqlite_master", &objects, err) != SLUICE_OK ||
        exec_sql(s, "COMMIT", err) != SLUICE_OK) {
        rollback(s);
        return sluice_errorf(err, SLUICE_ESTORE,
                             "%s: not a readable SQLite database (corrupt or not a database: "
                             "%s); refusing to use it, the file is left as it is",
                             s->db_path, sqlite3_errmsg(s->db));
    }
    if (app_id != SLUICE_STORE_APPLICATION_ID) {
        if (app_id == 0 && version == 0 && objects == 0) {
            *fresh_out = 1;
            return SLUICE_OK;
        }
        return sluice_errorf(err, SLUICE_ESTORE,
                             "%s: not a sluice store (application_id 0x%08" PRIx64 ", %" PRId64
                             " schema objects); refusing to use it",
                             s->db_path, (uint64_t)app_id & 0xffffffffu, objects);
    }
    if (version > SLUICE_STORE_SCHEMA_VERSION)
        return sluice_errorf(err, SLUICE_ESTORE,
                             "%s: schema version %" PRId64
                             " is newer than this sluice's version %d; refusing to open it "
                             "(upgrade sluice; the file is left as it is)",
                             s->db_path, version, SLUICE_STORE_SCHEMA_VERSION);
    *fresh_out = 0;
    if (was_checked(s->db_path, &sb))
        return SLUICE_OK;
    if ((rc = prepare(s, "PRAGMA quick_check", &st, err)) != SLUICE_OK) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: quick_check failed: %s; refusing to use it",
                           s->db_path, sqlite3_errmsg(s->db));
        goto out;
    }
    if (sqlite3_step(st) != SQLITE_ROW || (res = column_str(st, 0)) == NULL) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: quick_check failed: %s; refusing to use it",
                           s->db_path, sqlite3_errmsg(s->db));
        goto out;
    }
    if (strcmp(res, "ok") != 0) {
        rc = sluice_errorf(err, SLUICE_ESTORE,
                           "%s: corrupt (quick_check: %s); refusing to use it, the file is "
                           "left as it is",
                           s->db_path, res);
        goto out;
    }
    if (sb.st_ino != 0 || stat(s->db_path, &sb) == 0)
        mark_checked(&sb);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Apply the pending migrations, each in its own write transaction.  The
 * version is re-read inside the transaction so that two processes opening
 * a new store at once apply each migration once. */
static sluice_err migrate(sluice_store_t *s, sluice_error_t *err)
{
    char sql[128];
    int64_t version = 0;
    sluice_err rc = SLUICE_OK;

    for (;;) {
        if ((rc = exec_sql(s, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
            goto out;
        if ((rc = query_int(s, "PRAGMA user_version", &version, err)) != SLUICE_OK)
            goto out;
        if (version > SLUICE_STORE_SCHEMA_VERSION) {
            rc = sluice_errorf(err, SLUICE_ESTORE,
                               "%s: schema version %" PRId64
                               " is newer than this sluice's version %d; refusing to open it",
                               s->db_path, version, SLUICE_STORE_SCHEMA_VERSION);
            goto out;
        }
        if (version >= N_MIGRATIONS || (s->keep_schema && version > 0))
            break; /* (keep_schema: as it is; a fresh file still gets its schema) */
        sluice_log(SLUICE_LOG_NOTICE, "store %s: migrating schema %" PRId64 " -> %" PRId64,
                   s->db_path, version, version + 1);
        if ((rc = exec_sql(s, migrations[version], err)) != SLUICE_OK)
            goto out;
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %" PRId64 "; PRAGMA application_id = %d",
                 version + 1, SLUICE_STORE_APPLICATION_ID);
        if ((rc = exec_sql(s, sql, err)) != SLUICE_OK)
            goto out;
        if ((rc = exec_sql(s, "COMMIT", err)) != SLUICE_OK)
            goto out;
    }
    rc = exec_sql(s, "COMMIT", err);
out:
    if (rc != SLUICE_OK)
        rollback(s);
    return rc;
}

/* Put the database in WAL mode.  Changing the journal mode needs a lock
 * that SQLite does not wait for with the busy handler, so when several
 * processes open a new store at once, the losers retry here for up to the
 * busy timeout. */
static sluice_err switch_to_wal(sluice_store_t *s, sluice_error_t *err)
{
    const struct timespec pause = {0, 20 * 1000 * 1000};
    int waited_ms = 0;

    for (;;) {
        sqlite3_stmt *st = NULL;
        const char *mode;
        int step;

        if (prepare(s, "PRAGMA journal_mode = WAL", &st, err) != SLUICE_OK)
            return err ? err->code : SLUICE_ESTORE;
        step = sqlite3_step(st);
        mode = step == SQLITE_ROW ? column_str(st, 0) : NULL;
        if (mode != NULL && strcmp(mode, "wal") == 0) {
            sqlite3_finalize(st);
            return SLUICE_OK;
        }
        sqlite3_finalize(st);
        if ((step & 0xff) != SQLITE_BUSY && (step & 0xff) != SQLITE_LOCKED)
            break;
        if (waited_ms >= BUSY_TIMEOUT_MS)
            break;
        nanosleep(&pause, NULL);
        waited_ms += 20;
    }
    return sluice_errorf(err, SLUICE_ESTORE, "%s: cannot switch to WAL mode: %s", s->db_path,
                         sqlite3_errmsg(s->db));
}

sluice_err store_sqlite_open(sluice_store_t *s, sluice_error_t *err)
{
    int64_t one = 0;
    int fresh = 0;
    sluice_err rc = SLUICE_OK;

    s->ops = &lite_ops;
    s->stmts = calloc(1, sizeof(*s->stmts)); /* NULL: statements are not kept */
    if ((rc = store_make_db_file(s->db_path, err)) != SLUICE_OK)
        return rc;
    if (sqlite3_open_v2(s->db_path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK)
        return sluice_errorf(err, SLUICE_ESTORE, "%s: cannot open: %s", s->db_path,
                             s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if ((rc = check_file(s, &fresh, err)) != SLUICE_OK)
        return rc;
    /* From here on the file is ours (or empty) and may be written. */
    if ((rc = switch_to_wal(s, err)) != SLUICE_OK)
        return rc;
    /* A bounded page cache: the store's working set is the live launches'
     * rows and recent events, and finished launches must not cost resident
     * memory (SQLite's default is 2 MiB per connection). */
    if ((rc = exec_sql(s,
                       "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; "
                       "PRAGMA cache_size = " STORE_CACHE_KIB_SQL,
                       err)) != SLUICE_OK)
        return rc;
    if ((rc = query_int(s, "PRAGMA foreign_keys", &one, err)) != SLUICE_OK)
        return rc;
    if (one != 1)
        return sluice_errorf(err, SLUICE_ESTORE, "%s: SQLite without foreign key support",
                             s->db_path);
    if ((rc = migrate(s, err)) != SLUICE_OK)
        return rc;
    if (fresh)
        sluice_log(SLUICE_LOG_NOTICE, "store %s: created (schema %d)", s->db_path,
                   SLUICE_STORE_SCHEMA_VERSION);
    return SLUICE_OK;
}

/* ---- test hook -------------------------------------------------------- */

int store_debug_synchronous(sluice_store_t *s)
{
    sluice_error_t e = SLUICE_ERROR_INIT;
    int64_t v = -1;

    if (s == NULL || s->ops != &lite_ops)
        return -1;
    pthread_mutex_lock(&s->mu);
    if (query_int(s, "PRAGMA synchronous", &v, &e) != SLUICE_OK)
        v = -1;
    pthread_mutex_unlock(&s->mu);
    return (int)v;
}

sluice_err store_debug_exec_file(const char *db_path, const char *sql, sluice_error_t *err)
{
    sqlite3 *db = NULL;
    char *msg = NULL;
    sluice_err rc = SLUICE_OK;

    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: %s", db_path,
                           db != NULL ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: %s", db_path,
                           msg != NULL ? msg : sqlite3_errmsg(db));
out:
    sqlite3_free(msg);
    sqlite3_close_v2(db);
    return rc;
}
