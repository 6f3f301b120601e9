/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h - what the files of the store share (internal): the store
 * object, the statement accessors (store.c, a dispatch on the store's
 * backend: store_sqlite.c or store_pg.c), the input checks
 * (store_check.c), the row shaping (store_rows.c) and the directory and
 * lock files (store_files.c).
 *
 * Files of the store:
 *   store.c           opening by backend, closing, pruning, the statement
 *                     accessors (dispatch)
 *   store_sqlite.c    SQLite (its only user): checks of the file,
 *                     migrations, WAL, statements, the test hook
 *   store_pg.c        PostgreSQL (libpq's only user): connecting,
 *                     migrations, statements, the test hook
 *   store_launches.c  launches: create, get, list, list live
 *   store_events.c    event logs: append, read, replay, events since
 *   store_check.c     what may be stored (ids, names, no secrets, hash)
 *   store_rows.c      rows -> JSON objects
 *   store_files.c     the store directory, the database file, the lock
 *   store_lease.c     the leadership lease of replicas and the fence of
 *                     the launcher's writes
 *   store_logs.c      the archived logs of every attempt (launch_logs)
 *
 * Notes:
 * - A store_stmt_t is a prepared statement of the store's backend; only its
 *   accessors below touch it.  Callers hold store->mu across a transaction.
 * - The callers write one SQL text for both backends: `?N` parameters (the
 *   PostgreSQL backend turns them into `$N`), no SQLite-only functions, and
 *   these transaction words, which each backend gives the same meaning:
 *   "BEGIN IMMEDIATE" (a write transaction; writers are serialised, one at
 *   a time, so event gseqs become visible in commit order), "BEGIN" (a read
 *   transaction: its statements see one snapshot), "COMMIT", "SAVEPOINT x",
 *   "ROLLBACK TO x", "RELEASE x".
 */
#ifndef SLUICE_STORE_INT_H
#define SLUICE_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/error.h>
#include <sluice/store.h>

#define LIST_DEFAULT 100
#define LIST_MAX 1000

/* Columns of a launch summary, in the order store_row_to_launch() reads
 * them. */
#define SUMMARY_COLS                                                                               \
    "launch_id, site, study, state, result_code, reason, created_ms, updated_ms, attempt, "        \
    "job_ids, terminal, last_seq, summary_seq, request_hash, cluster"

struct sqlite3;          /* store_sqlite.c only */
struct store_stmt_cache; /* store_sqlite.c only: prepared statements kept */
struct store_pg;         /* store_pg.c only: the connection and its statements */
typedef struct store_ops store_ops_t;

struct sluice_store {
    const store_ops_t *ops; /* the backend's accessors */
    struct sqlite3 *db;     /* store_sqlite.c only */
    struct store_stmt_cache *stmts;
    struct store_pg *pg; /* store_pg.c only */
    pthread_mutex_t mu;
    char *dir;
    char *db_path;       /* SQLite: the file; PostgreSQL: the URL without a password */
    char *url;           /* PostgreSQL: as given (never with a password); else NULL */
    char *password_file; /* PostgreSQL: NULL or the password file's path */
    bool keep_schema;    /* sluice_store_opts_t.keep_schema: never migrate */
    bool relaxed;        /* SQLite: synchronous is NORMAL until the open transaction ends */
    char *lock_path;
    int lock_fd;                      /* -1 unless we hold the supervisor lock */
    sluice_store_commit_fn on_commit; /* under mu (sluice_store_on_commit) */
    void *commit_arg;
    atomic_llong fence_epoch;    /* store_lease.c: 0 = appends not fenced */
    atomic_llong fence_fresh_ms; /* store_lease.c: monotonic ms the lease is fresh until */
};

/* What store_exec() runs instead of "BEGIN IMMEDIATE" for a write whose
 * commit may wait for the next durable one: it survives a crash of the
 * process, but an OS crash or power loss may lose it (never a commit before
 * it, and a later durable commit makes it durable too: both backends keep
 * their log in commit order).  SQLite: synchronous NORMAL for this
 * transaction (the WAL is not synced at its commit); PostgreSQL:
 * synchronous_commit off for it. */
#define STORE_BEGIN_RELAXED "BEGIN IMMEDIATE RELAXED"

/* ---- statements (store.c, dispatching to the backend) ------------------ */

typedef struct store_stmt store_stmt_t; /* a prepared statement of the backend */

/* The first member of each backend's statement. */
struct store_stmt {
    const store_ops_t *ops;
};

/* What a backend implements; the functions below call it. */
struct store_ops {
    const char *name; /* "sqlite", "postgresql" */
    sluice_err (*db_fail)(const sluice_store_t *s, sluice_error_t *err, const char *what);
    sluice_err (*exec)(sluice_store_t *s, const char *sql, sluice_error_t *err);
    sluice_err (*prepare)(sluice_store_t *s,
                          const char *sql,
                          store_stmt_t **st,
                          sluice_error_t *err);
    sluice_err (*step_done)(sluice_store_t *s, store_stmt_t *st, sluice_error_t *err);
    void (*rollback)(sluice_store_t *s);
    int64_t (*changes)(sluice_store_t *s);
    void (*close)(sluice_store_t *s);
    void (*finalize)(store_stmt_t *st);
    int (*step)(store_stmt_t *st);
    void (*bind_text)(store_stmt_t *st, int i, const char *v);
    void (*bind_int64)(store_stmt_t *st, int i, int64_t v);
    void (*bind_blob)(store_stmt_t *st, int i, const void *v, size_t len);
    const char *(*column_str)(store_stmt_t *st, int col);
    const void *(*column_blob)(store_stmt_t *st, int col, size_t *len);
    size_t (*column_bytes)(store_stmt_t *st, int col);
    int64_t (*column_int64)(store_stmt_t *st, int col);
    int (*column_is_null)(store_stmt_t *st, int col);
};

#define STORE_ROW 1  /* store_step(): a row is ready */
#define STORE_DONE 0 /* store_step(): no more rows */

/* SLUICE_ESTORE "<db>: <what>: <the database's message>"; returns the
 * code. */
sluice_err store_db_fail(const sluice_store_t *s, sluice_error_t *err, const char *what);
/* Run one or more statements without results. */
sluice_err store_exec(sluice_store_t *s, const char *sql, sluice_error_t *err);
/* Prepare `sql` into *st (finalise with store_finalize()). */
sluice_err
store_prepare(sluice_store_t *s, const char *sql, store_stmt_t **st, sluice_error_t *err);
/* Step a statement that returns no row. */
sluice_err store_step_done(sluice_store_t *s, store_stmt_t *st, sluice_error_t *err);
/* ROLLBACK when a transaction is open. */
void store_rollback(sluice_store_t *s);
/* Rows changed by the last INSERT, UPDATE or DELETE. */
int64_t store_changes(sluice_store_t *s);
/* NULL-safe. */
void store_finalize(store_stmt_t *st);
/* STORE_ROW, STORE_DONE, or another value on error (store_db_fail()). */
int store_step(store_stmt_t *st);
/* Bind parameter i (1-based); a NULL text binds SQL NULL.  Text is copied. */
void store_bind_text(store_stmt_t *st, int i, const char *v);
void store_bind_int64(store_stmt_t *st, int i, int64_t v);
/* Bind bytes (a BLOB, PostgreSQL bytea); copied.  v NULL binds SQL NULL,
 * len 0 with v not NULL an empty value. */
void store_bind_blob(store_stmt_t *st, int i, const void *v, size_t len);
/* Column col of the current row; text is borrowed until the next step. */
const char *store_column_str(store_stmt_t *st, int col);
size_t store_column_bytes(store_stmt_t *st, int col);
int64_t store_column_int64(store_stmt_t *st, int col);
int store_column_is_null(store_stmt_t *st, int col);
/* The bytes of a BLOB (bytea) column of the current row and their count in
 * *len; borrowed until the next step.  NULL with *len 0 for SQL NULL or an
 * empty value (and, with PostgreSQL, when decoding ran out of memory). */
const void *store_column_blob(store_stmt_t *st, int col, size_t *len);

/* ---- backends ----------------------------------------------------------- */

/* Open the SQLite database of s->dir (s->db_path set) and set s->ops. */
sluice_err store_sqlite_open(sluice_store_t *s, sluice_error_t *err);
/* Connect to `url` (checked by store_pg_check_url()), check the server,
 * migrate; sets s->ops.  `password_file` may be NULL. */
sluice_err
store_pg_open(sluice_store_t *s, const char *url, const char *password_file, sluice_error_t *err);
/* store_pg_schema.c: store_pg_migrations[i] brings a PostgreSQL schema from
 * version i to i + 1 (the same versions as SQLite's). */
extern const char *const store_pg_migrations[];
extern const int store_pg_n_migrations;

/* ---- the leadership lease (store_lease.c) ------------------------------ */

/* The migration that creates the `leadership` table: one SQL text for both
 * backends (a macro, so the backends' migration tables need no symbol of
 * store_lease.c). */
#define STORE_LEASE_SCHEMA                                                                         \
    "CREATE TABLE IF NOT EXISTS leadership (id INTEGER PRIMARY KEY CHECK (id = 1),"                \
    "  epoch BIGINT NOT NULL, holder TEXT NOT NULL, lease_until_ms BIGINT NOT NULL);"
/* The migration that creates `launch_logs` (store_logs.c): the archived
 * copy of each log of each attempt, one row per (launch, attempt, stream);
 * it goes with its launch (ON DELETE CASCADE).  `status` is stored,
 * missing, refused or pruned; `data` holds the log's last bytes (all of it
 * when omitted is 0): bytes [omitted, size) of the file as the job left it.
 * The backends differ only in the types they are given. */
#define STORE_LOGS_SCHEMA(INT, BLOB, ID)                                                           \
    "CREATE TABLE IF NOT EXISTS launch_logs ("                                                     \
    "  launch_id TEXT " ID " NOT NULL REFERENCES launches (launch_id) ON DELETE CASCADE,"          \
    "  attempt " INT " NOT NULL CHECK (attempt >= 0),"                                             \
    "  stream TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),"                               \
    "  status TEXT NOT NULL CHECK (status IN ('stored', 'missing', 'refused', 'pruned')),"         \
    "  size " INT " NOT NULL CHECK (size >= 0),"                                                   \
    "  omitted " INT " NOT NULL CHECK (omitted >= 0 AND omitted <= size),"                         \
    "  data " BLOB ","                                                                             \
    "  note TEXT,"                                                                                 \
    "  archived_ms " INT " NOT NULL,"                                                              \
    "  PRIMARY KEY (launch_id, attempt, stream));"
/* The migration that moves a launch's two large texts, its request and
 * its render (the script and every job description: several KiB), out of
 * `launches` into `launch_texts`, written once at the accept and read only
 * by a launch's full read.  Every event updates its launch's row (last_seq,
 * state, updated_ms), and SQLite rewrites a whole row, overflow pages
 * included, on each update: with the texts in the row each event's commit
 * wrote them again.  The row goes with its launch (ON DELETE CASCADE). */
#define STORE_TEXTS_SCHEMA(ID)                                                                     \
    "CREATE TABLE IF NOT EXISTS launch_texts ("                                                    \
    "  launch_id TEXT " ID " PRIMARY KEY REFERENCES launches (launch_id) ON DELETE CASCADE,"       \
    "  request TEXT NOT NULL,"                                                                     \
    "  render TEXT);"                                                                              \
    "INSERT INTO launch_texts (launch_id, request, render)"                                        \
    "  SELECT launch_id, request, render FROM launches;"                                           \
    "ALTER TABLE launches DROP COLUMN request;"                                                    \
    "ALTER TABLE launches DROP COLUMN render;"
/* Inside the caller's write transaction (after BEGIN IMMEDIATE): with a
 * fence epoch set (sluice_store_set_fence), compare it with the table's
 * epoch; when they differ, log `fenced: epoch N, now M: <what> refused`
 * and return SLUICE_ECONFLICT (the caller rolls back).  `what` names the
 * write: event `name` of launch `launch_id`, `n` events in all. */
sluice_err store_fence_check_locked(
    sluice_store_t *s, const char *name, const char *launch_id, size_t n, sluice_error_t *err);

/* ---- checks (store_check.c) -------------------------------------------- */

/* One event's text, validated and serialised before the write lock is
 * taken. */
typedef struct {
    char *ctx;
    char *job_ids;
} store_append_text_t;

sluice_err store_check_launch_id(const char *id, sluice_error_t *err);
/* A tenant name as a filter may hold it: [a-z0-9][a-z0-9-]{0,31} (so that
 * "<tenant>~%" is a LIKE pattern with no wildcard of its own). */
bool store_tenant_ok(const char *tenant);
sluice_err store_check_event_name(const char *name, sluice_error_t *err);
/* Refuse any key named `secrets` or `secret_values` at any depth of v
 * (NULL is fine); `what` names v in the message. */
sluice_err store_refuse_secrets(const json_t *v, const char *what, sluice_error_t *err);
/* Canonical text of a JSON value: compact, keys sorted.  Caller frees. */
sluice_err store_json_text(const json_t *v, const char *what, char **out, sluice_error_t *err);
/* sha256 hex of the canonical {request, site, study}, put together around
 * the request's canonical text (store_check.c). */
sluice_err store_request_hash_text(const char *site,
                                   const char *study,
                                   const char *request_text,
                                   char hex[65],
                                   sluice_error_t *err);
sluice_err store_check_summary(const sluice_store_summary_t *sum, sluice_error_t *err);
/* Validate one event and serialise its context and job ids into *out
 * (free with store_append_text_free()). */
sluice_err store_append_prepare(const char *launch_id,
                                const char *name,
                                const json_t *context,
                                const sluice_store_summary_t *sum,
                                store_append_text_t *out,
                                sluice_error_t *err);
void store_append_text_free(store_append_text_t *t);

/* ---- rows (store_rows.c) ----------------------------------------------- */

/* Parse a JSON column of `type`; a SQL NULL is json null when `nullable`.
 * *out is a new reference. */
sluice_err store_column_json(store_stmt_t *st,
                             int col,
                             const char *launch_id,
                             const char *column,
                             json_type type,
                             int nullable,
                             json_t **out,
                             sluice_error_t *err);
/* A launch object (new reference) from a row of SUMMARY_COLS (+ request,
 * render when `full`). */
sluice_err store_row_to_launch(store_stmt_t *st, int full, json_t **out, sluice_error_t *err);
/* An event object (new reference) from columns [first..]: seq, time_ms,
 * name, context, caller, state, gseq; `launch_id` is for messages. */
sluice_err store_row_to_event(
    store_stmt_t *st, int first, const char *launch_id, json_t **out, sluice_error_t *err);

/* ---- reads inside the caller's transaction (store->mu held) ----------- */

/* The newest event gseq in the store, 0 when none (store_events.c). */
sluice_err store_newest_gseq_locked(sluice_store_t *store, int64_t *out, sluice_error_t *err);
/* sluice_store_read_events() without the mutex or a transaction; with
 * `check` the seqs must run from_seq..last_seq without a gap
 * (store_events.c). */
sluice_err store_read_events_locked(sluice_store_t *store,
                                    const char *launch_id,
                                    int64_t from_seq,
                                    size_t limit,
                                    int check,
                                    json_t **out,
                                    sluice_error_t *err);

/* ---- files (store_files.c) --------------------------------------------- */

/* Wall clock in ms. */
int64_t store_now_ms(void);
/* "<a>/<b>" as a new string (NULL when out of memory). */
char *store_path_join(const char *a, const char *b);
/* mkdir -p with mode 0700 for every directory created. */
sluice_err store_make_dirs(const char *dir, sluice_error_t *err);
/* Create the database file 0600 unless it exists (a regular file). */
sluice_err store_make_db_file(const char *path, sluice_error_t *err);
/* PostgreSQL's store.password_file: a regular file of ours that only we
 * may read (SLUICE_ECONFIG otherwise). */
sluice_err store_check_password_file(const char *path, sluice_error_t *err);

#endif /* SLUICE_STORE_INT_H */
