/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - launches and their event logs in SQLite (the only user of it).
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

#include "base/buf.h"
#include "base/marker.h"
#include "store.h"

#define DB_NAME "sluice.db"
#define LOCK_NAME "supervisor.lock"
#define BUSY_TIMEOUT_MS 10000
#define STORE_CACHE_KIB_SQL "-512" /* negative: KiB, i.e. 512 KiB */
#define MAX_JSON_DEPTH 128
#define LIST_DEFAULT 100
#define LIST_MAX 1000

struct sluice_store {
    sqlite3 *db;
    pthread_mutex_t mu;
    char *dir;
    char *db_path;
    char *lock_path;
    int lock_fd; /* -1 unless we hold the supervisor lock */
};

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
};

#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* Columns of a launch summary, in the order row_to_launch() reads them. */
#define SUMMARY_COLS                                                                               \
    "launch_id, site, study, state, result_code, reason, created_ms, updated_ms, attempt, "        \
    "job_ids, terminal, last_seq, summary_seq, request_hash"

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "<a>/<b>" as a new string (NULL when out of memory). */
static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);

    if (s != NULL)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* ---- errors and small SQLite helpers ---------------------------------- */

static sluice_err db_fail(const sluice_store_t *s, sluice_error_t *err, const char *what)
{
    return sluice_errorf(err, SLUICE_ESTORE, "%s: %s: %s", s->db_path, what, sqlite3_errmsg(s->db));
}

static sluice_err exec_sql(sluice_store_t *s, const char *sql, sluice_error_t *err)
{
    char *msg = NULL;
    sluice_err rc = SLUICE_OK;

    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK)
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: %s", s->db_path,
                           msg != NULL ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
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
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
    if (v == NULL)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
}

/* ---- input validation ------------------------------------------------- */

/* The launch_id rule is base/marker.c's (issue 12: one implementation). */
static sluice_err check_launch_id(const char *id, sluice_error_t *err)
{
    return marker_check_launch_id("launch_id", id, err);
}

static sluice_err check_event_name(const char *name, sluice_error_t *err)
{
    size_t n = name != NULL ? strlen(name) : 0;

    if (n == 0 || n > 64 ||
        strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "event name: must be 1-64 characters of [A-Za-z0-9._-]");
    return SLUICE_OK;
}

/* Refuse any key named `secrets` or `secret_values` at any depth: secret
 * values are kept in memory and in the attempt's secret file, never here.
 * `path` holds the JSON path so far (for the message). */
static sluice_err check_no_secrets(
    const json_t *v, const char *what, char *path, size_t path_size, int depth, sluice_error_t *err)
{
    size_t len = strlen(path);
    sluice_err rc = SLUICE_OK;

    if (depth > MAX_JSON_DEPTH)
        return sluice_errorf(err, SLUICE_ETOOBIG, "%s%s: nested deeper than %d levels", what, path,
                             MAX_JSON_DEPTH);
    if (json_is_object(v)) {
        const char *key;
        json_t *child;

        json_object_foreach((json_t *)(uintptr_t)v, key, child)
        {
            if (strcmp(key, "secrets") == 0 || strcmp(key, "secret_values") == 0)
                return sluice_errorf(err, SLUICE_EINVAL,
                                     "%s%s.%s: secret values are never stored; pass them "
                                     "in memory only",
                                     what, path, key);
            snprintf(path + len, path_size - len, ".%s", key);
            rc = check_no_secrets(child, what, path, path_size, depth + 1, err);
            path[len] = '\0';
            if (rc != SLUICE_OK)
                return rc;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *child;

        json_array_foreach(v, i, child)
        {
            snprintf(path + len, path_size - len, "[%zu]", i);
            rc = check_no_secrets(child, what, path, path_size, depth + 1, err);
            path[len] = '\0';
            if (rc != SLUICE_OK)
                return rc;
        }
    }
    return SLUICE_OK;
}

static sluice_err refuse_secrets(const json_t *v, const char *what, sluice_error_t *err)
{
    char path[512] = "";

    if (v == NULL)
        return SLUICE_OK;
    return check_no_secrets(v, what, path, sizeof(path), 0, err);
}

/* Canonical text of a JSON value: compact, keys sorted.  Caller frees. */
static sluice_err json_text(const json_t *v, const char *what, char **out, sluice_error_t *err)
{
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

    if (s == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s: cannot serialise", what);
    *out = s;
    return SLUICE_OK;
}

/* sha256 hex of the canonical {site, study, request}. */
static sluice_err
request_hash(const sluice_store_launch_spec_t *spec, char hex[65], sluice_error_t *err)
{
    json_t *whole = NULL;
    char *text = NULL;
    sluice_err rc = SLUICE_OK;

    whole = json_pack("{s:s, s:s?, s:O}", "site", spec->site, "study", spec->study, "request",
                      spec->request);
    if (whole == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "request hash: out of memory");
        goto out;
    }
    if ((rc = json_text(whole, "request", &text, err)) != SLUICE_OK)
        goto out;
    if (!marker_sha256_hex(text, hex))
        rc = sluice_errorf(err, SLUICE_ESTORE, "request hash: sha256 failed");
out:
    free(text);
    json_decref(whole);
    return rc;
}

/* ---- reading rows ----------------------------------------------------- */

/* Parse a JSON column.  `type` is the JSON type the column must hold;
 * a SQL NULL becomes json null when `nullable`. */
static sluice_err column_json(sqlite3_stmt *st,
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

    if (sqlite3_column_type(st, col) == SQLITE_NULL) {
        if (!nullable)
            return sluice_errorf(err, SLUICE_ESTORE, "launch %s: column %s is NULL", launch_id,
                                 column);
        *out = json_null();
        return SLUICE_OK;
    }
    text = (const char *)sqlite3_column_text(st, col);
    if (text == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: column %s: out of memory", launch_id,
                             column);
    v = json_loadb(text, (size_t)sqlite3_column_bytes(st, col), JSON_DECODE_ANY, &jerr);
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

static const char *column_str(sqlite3_stmt *st, int col)
{
    return (const char *)sqlite3_column_text(st, col);
}

/* A launch object from a row of SUMMARY_COLS (+ request, render when
 * `full`). */
static sluice_err row_to_launch(sqlite3_stmt *st, int full, json_t **out, sluice_error_t *err)
{
    const char *id = column_str(st, 0);
    json_t *job_ids = NULL, *request = NULL, *render = NULL, *obj = NULL;
    json_t *result;
    sluice_err rc;

    if (id == NULL || column_str(st, 1) == NULL || column_str(st, 3) == NULL ||
        column_str(st, 13) == NULL)
        return sluice_errorf(err, SLUICE_ESTORE, "launch %s: a required column is NULL",
                             id != NULL ? id : "?");
    if ((rc = column_json(st, 9, id, "job_ids", JSON_ARRAY, 0, &job_ids, err)) != SLUICE_OK)
        goto out;
    if (full) {
        if ((rc = column_json(st, 14, id, "request", JSON_OBJECT, 0, &request, err)) != SLUICE_OK)
            goto out;
        if (sqlite3_column_type(st, 15) == SQLITE_NULL)
            render = json_null();
        else if ((rc = column_json(st, 15, id, "render", JSON_OBJECT, 0, &render, err)) !=
                 SLUICE_OK)
            goto out;
    }
    result = sqlite3_column_type(st, 4) == SQLITE_NULL ? json_null()
                                                       : json_integer(sqlite3_column_int64(st, 4));
    obj = json_pack("{s:s, s:s, s:s?, s:s, s:o, s:s?, s:I, s:I, s:I, s:O, s:b, s:I, s:I, s:s}",
                    "launch_id", id, "site", column_str(st, 1), "study", column_str(st, 2), "state",
                    column_str(st, 3), "result_code", result, "reason", column_str(st, 5),
                    "created_ms", (json_int_t)sqlite3_column_int64(st, 6), "updated_ms",
                    (json_int_t)sqlite3_column_int64(st, 7), "attempt",
                    (json_int_t)sqlite3_column_int64(st, 8), "job_ids", job_ids, "terminal",
                    sqlite3_column_int(st, 10) != 0, "last_seq",
                    (json_int_t)sqlite3_column_int64(st, 11), "summary_seq",
                    (json_int_t)sqlite3_column_int64(st, 12), "request_hash", column_str(st, 13));
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
 * caller; `launch_id` is for messages. */
static sluice_err
row_to_event(sqlite3_stmt *st, int first, const char *launch_id, json_t **out, sluice_error_t *err)
{
    json_t *context = NULL, *ev;
    const char *name = column_str(st, first + 2);
    sluice_err rc;

    if (name == NULL)
        return sluice_errorf(err, SLUICE_ESTORE, "launch %s: event name is NULL", launch_id);
    if ((rc = column_json(st, first + 3, launch_id, "context", JSON_OBJECT, 0, &context, err)) !=
        SLUICE_OK)
        return rc;
    ev = json_pack("{s:I, s:I, s:s, s:o, s:s?}", "seq", (json_int_t)sqlite3_column_int64(st, first),
                   "time", (json_int_t)sqlite3_column_int64(st, first + 1), "name", name, "context",
                   context, "caller", column_str(st, first + 4));
    if (ev == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", launch_id);
    *out = ev;
    return SLUICE_OK;
}

/* ---- directory, files, opening ---------------------------------------- */

sluice_err sluice_store_default_dir(char **out, sluice_error_t *err)
{
    const char *env = getenv("SLUICE_STATE_DIR");
    const char *home;
    char *s = NULL;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "store dir: out is NULL");
    if (env != NULL && env[0] != '\0') {
        s = strdup(env);
    } else if (geteuid() == 0) {
        s = strdup("/var/lib/sluice");
    } else if ((env = getenv("XDG_STATE_HOME")) != NULL && env[0] == '/') {
        s = path_join(env, "sluice");
    } else {
        home = getenv("HOME");
        if (home == NULL || home[0] != '/') {
            struct passwd *pw = getpwuid(geteuid());

            home = pw != NULL ? pw->pw_dir : NULL;
        }
        if (home == NULL || home[0] != '/')
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "store dir: no home directory; set SLUICE_STATE_DIR");
        s = path_join(home, ".local/state/sluice");
    }
    if (s == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "store dir: out of memory");
    *out = s;
    return SLUICE_OK;
}

/* mkdir -p with mode 0700 for every directory created. */
static sluice_err make_dirs(const char *dir, sluice_error_t *err)
{
    char *p = strdup(dir);
    char *q;
    struct stat sb;
    sluice_err rc = SLUICE_OK;

    if (p == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "store dir: out of memory");
    for (q = p + 1;; q++) {
        if (*q != '/' && *q != '\0')
            continue;
        char c = *q;

        *q = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            rc = sluice_errorf(err, SLUICE_EIO, "store dir %s: cannot create %s: %s", dir, p,
                               strerror(errno));
            goto out;
        }
        *q = c;
        if (c == '\0')
            break;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        rc = sluice_errorf(err, SLUICE_EIO, "store dir %s: not a directory", dir);
        goto out;
    }
    if ((sb.st_mode & 0077) != 0)
        sluice_log(SLUICE_LOG_WARNING, "store dir %s has mode %03o; 0700 is expected", dir,
                   (unsigned)(sb.st_mode & 0777));
out:
    free(p);
    return rc;
}

/* Create the database file 0600 if it does not exist, so SQLite (which
 * copies the database's mode to -wal and -shm) never creates it with the
 * umask's mode. */
static sluice_err make_db_file(const char *path, sluice_error_t *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat sb;

    if (fd >= 0) {
        if (fchmod(fd, 0600) != 0) {
            int e = errno;

            close(fd);
            return sluice_errorf(err, SLUICE_EIO, "%s: chmod: %s", path, strerror(e));
        }
        close(fd);
        return SLUICE_OK;
    }
    if (errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "%s: cannot create: %s", path, strerror(errno));
    if (lstat(path, &sb) != 0)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return sluice_errorf(err, SLUICE_ESTORE, "%s: not a regular file; refusing to use it",
                             path);
    if ((sb.st_mode & 0077) != 0)
        sluice_log(SLUICE_LOG_WARNING, "%s has mode %03o; 0600 is expected", path,
                   (unsigned)(sb.st_mode & 0777));
    return SLUICE_OK;
}

/* Decide, by reading only, whether the file may be used.  `*fresh_out` is 1
 * for an empty database that we may initialise. */
static sluice_err check_file(sluice_store_t *s, int *fresh_out, sluice_error_t *err)
{
    int64_t app_id = 0, version = 0, objects = 0;
    sqlite3_stmt *st = NULL;
    const char *res;
    sluice_err rc;

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
        if (version >= N_MIGRATIONS)
            break;
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

sluice_err sluice_store_open(sluice_store_t **out, const char *dir, sluice_error_t *err)
{
    sluice_store_t *s = NULL;
    char *defdir = NULL;
    int64_t one = 0;
    int fresh = 0;
    sqlite3_stmt *st = NULL;
    sluice_err rc = SLUICE_OK;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "store open: out is NULL");
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
    s->db_path = path_join(dir, DB_NAME);
    s->lock_path = path_join(dir, LOCK_NAME);
    if (s->dir == NULL || s->db_path == NULL || s->lock_path == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "store open: out of memory");
        goto out;
    }
    if ((rc = make_dirs(dir, err)) != SLUICE_OK)
        goto out;
    if ((rc = make_db_file(s->db_path, err)) != SLUICE_OK)
        goto out;
    if (sqlite3_open_v2(s->db_path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "%s: cannot open: %s", s->db_path,
                           s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
        goto out;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if ((rc = check_file(s, &fresh, err)) != SLUICE_OK)
        goto out;
    /* From here on the file is ours (or empty) and may be written. */
    if ((rc = switch_to_wal(s, err)) != SLUICE_OK)
        goto out;
    /* A bounded page cache: the store's working set is the live launches'
     * rows and recent events, and finished launches must not cost resident
     * memory (SQLite's default is 2 MiB per connection). */
    if ((rc = exec_sql(s,
                       "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; "
                       "PRAGMA cache_size = " STORE_CACHE_KIB_SQL,
                       err)) != SLUICE_OK)
        goto out;
    if ((rc = query_int(s, "PRAGMA foreign_keys", &one, err)) != SLUICE_OK)
        goto out;
    if (one != 1) {
        rc =
            sluice_errorf(err, SLUICE_ESTORE, "%s: SQLite without foreign key support", s->db_path);
        goto out;
    }
    if ((rc = migrate(s, err)) != SLUICE_OK)
        goto out;
    if (fresh)
        sluice_log(SLUICE_LOG_NOTICE, "store %s: created (schema %d)", s->db_path,
                   SLUICE_STORE_SCHEMA_VERSION);
    *out = s;
    s = NULL;
out:
    sqlite3_finalize(st);
    sluice_store_close(s);
    free(defdir);
    return rc;
}

void sluice_store_close(sluice_store_t *store)
{
    if (store == NULL)
        return;
    sluice_store_unlock_supervisor(store);
    if (store->db != NULL)
        sqlite3_close_v2(store->db);
    pthread_mutex_destroy(&store->mu);
    free(store->dir);
    free(store->db_path);
    free(store->lock_path);
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

/* ---- the supervisor lock ---------------------------------------------- */

sluice_err sluice_store_lock_supervisor(sluice_store_t *store, sluice_error_t *err)
{
    char pidbuf[32];
    int fd = -1;
    ssize_t n;
    sluice_err rc = SLUICE_OK;

    if (store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "supervisor lock: store is NULL");
    pthread_mutex_lock(&store->mu);
    if (store->lock_fd >= 0)
        goto out;
    fd = open(store->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: cannot open: %s", store->lock_path,
                           strerror(errno));
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            rc = sluice_errorf(err, SLUICE_EIO, "%s: flock: %s", store->lock_path, strerror(errno));
            goto out;
        }
        n = pread(fd, pidbuf, sizeof(pidbuf) - 1, 0);
        pidbuf[n > 0 ? n : 0] = '\0';
        pidbuf[strcspn(pidbuf, "\n")] = '\0';
        rc = sluice_errorf(err, SLUICE_ECONFLICT,
                           "store %s already has a supervisor (pid %s holds %s); only one "
                           "supervisor may run per store",
                           store->dir, pidbuf[0] != '\0' ? pidbuf : "unknown", store->lock_path);
        goto out;
    }
    snprintf(pidbuf, sizeof(pidbuf), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pidbuf, strlen(pidbuf), 0) != (ssize_t)strlen(pidbuf)) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: cannot record pid: %s", store->lock_path,
                           strerror(errno));
        goto out;
    }
    store->lock_fd = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

void sluice_store_unlock_supervisor(sluice_store_t *store)
{
    if (store == NULL)
        return;
    pthread_mutex_lock(&store->mu);
    if (store->lock_fd >= 0) {
        /* Truncate first so that nobody reads a stale pid after we let go. */
        if (ftruncate(store->lock_fd, 0) != 0)
            sluice_log(SLUICE_LOG_WARNING, "%s: cannot clear pid", store->lock_path);
        close(store->lock_fd);
        store->lock_fd = -1;
    }
    pthread_mutex_unlock(&store->mu);
}

/* ---- launches --------------------------------------------------------- */

sluice_err sluice_store_create_launch(sluice_store_t *store,
                                      const sluice_store_launch_spec_t *spec,
                                      int *existed_out,
                                      sluice_error_t *err)
{
    char hash[65];
    char *request = NULL, *render = NULL, *context = NULL;
    sqlite3_stmt *st = NULL;
    int64_t t;
    int locked = 0, existed = 0;
    sluice_err rc;

    if (store == NULL || spec == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "create launch: store and spec are required");
    if ((rc = check_launch_id(spec->launch_id, err)) != SLUICE_OK)
        goto out;
    if (spec->site == NULL || spec->site[0] == '\0') {
        rc = sluice_errorf(err, SLUICE_EINVAL, "launch %s: site is required", spec->launch_id);
        goto out;
    }
    if (!json_is_object(spec->request)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "launch %s: request must be a JSON object",
                           spec->launch_id);
        goto out;
    }
    if ((spec->render != NULL && !json_is_object(spec->render)) ||
        (spec->context != NULL && !json_is_object(spec->context))) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "launch %s: render and context must be objects",
                           spec->launch_id);
        goto out;
    }
    if ((rc = refuse_secrets(spec->request, "request", err)) != SLUICE_OK ||
        (rc = refuse_secrets(spec->render, "render", err)) != SLUICE_OK ||
        (rc = refuse_secrets(spec->context, "context", err)) != SLUICE_OK)
        goto out;
    if ((rc = request_hash(spec, hash, err)) != SLUICE_OK)
        goto out;
    if ((rc = json_text(spec->request, "request", &request, err)) != SLUICE_OK)
        goto out;
    if (spec->render != NULL && (rc = json_text(spec->render, "render", &render, err)) != SLUICE_OK)
        goto out;
    if (spec->context != NULL)
        rc = json_text(spec->context, "context", &context, err);
    else if ((context = strdup("{}")) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "create launch: out of memory");
    if (rc != SLUICE_OK)
        goto out;
    t = spec->time_ms != 0 ? spec->time_ms : now_ms();

    pthread_mutex_lock(&store->mu);
    locked = 1;
    if ((rc = exec_sql(store, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
        goto out;
    if ((rc = prepare(store, "SELECT request_hash FROM launches WHERE launch_id = ?1", &st, err)) !=
        SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, spec->launch_id, -1, SQLITE_TRANSIENT);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW: {
        const char *old = column_str(st, 0);

        if (old == NULL || strcmp(old, hash) != 0) {
            rc =
                sluice_errorf(err, SLUICE_ECONFLICT,
                              "launch %s already exists with a different request", spec->launch_id);
            goto out;
        }
        existed = 1;
        break;
    }
    case SQLITE_DONE:
        break;
    default:
        rc = db_fail(store, err, "read launch");
        goto out;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (existed) {
        rc = exec_sql(store, "COMMIT", err);
        goto out;
    }
    if ((rc = prepare(store,
                      "INSERT INTO launches (launch_id, site, study, request, request_hash, "
                      "render, state, created_ms, updated_ms, attempt, job_ids, terminal, "
                      "last_seq, summary_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'ACCEPTED', ?7, "
                      "?7, 0, '[]', 0, 1, 1)",
                      &st, err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, spec->launch_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, spec->site, -1, SQLITE_TRANSIENT);
    bind_text_or_null(st, 3, spec->study);
    sqlite3_bind_text(st, 4, request, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, hash, -1, SQLITE_TRANSIENT);
    bind_text_or_null(st, 6, render);
    sqlite3_bind_int64(st, 7, t);
    if ((rc = step_done(store, st, err)) != SLUICE_OK)
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = prepare(store,
                      "INSERT INTO events (launch_id, seq, time_ms, name, context, caller) "
                      "VALUES (?1, 1, ?2, 'accepted', ?3, ?4)",
                      &st, err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, spec->launch_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, t);
    sqlite3_bind_text(st, 3, context, -1, SQLITE_TRANSIENT);
    bind_text_or_null(st, 4, spec->caller);
    if ((rc = step_done(store, st, err)) != SLUICE_OK)
        goto out;
    rc = exec_sql(store, "COMMIT", err);
out:
    sqlite3_finalize(st);
    if (locked) {
        if (rc != SLUICE_OK)
            rollback(store);
        pthread_mutex_unlock(&store->mu);
    }
    free(request);
    free(render);
    free(context);
    if (rc == SLUICE_OK && existed_out != NULL)
        *existed_out = existed;
    return rc;
}

sluice_err sluice_store_get_launch(sluice_store_t *store,
                                   const char *launch_id,
                                   json_t **out,
                                   sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    json_t *obj = NULL;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "get launch: store and out are required");
    if ((rc = check_launch_id(launch_id, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&store->mu);
    if ((rc = prepare(store,
                      "SELECT " SUMMARY_COLS ", request, render FROM launches WHERE launch_id = ?1",
                      &st, err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, launch_id, -1, SQLITE_TRANSIENT);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        rc = row_to_launch(st, 1, &obj, err);
        break;
    case SQLITE_DONE:
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", launch_id);
        break;
    default:
        rc = db_fail(store, err, "read launch");
        break;
    }
    if (rc == SLUICE_OK)
        *out = obj;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* Collect summaries from a prepared query into a new array. */
static sluice_err
collect_launches(sluice_store_t *store, sqlite3_stmt *st, json_t **out, sluice_error_t *err)
{
    json_t *arr = json_array(), *obj;
    sluice_err rc = SLUICE_OK;
    int r;

    if (arr == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "list launches: out of memory");
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if ((rc = row_to_launch(st, 0, &obj, err)) != SLUICE_OK)
            goto out;
        if (json_array_append_new(arr, obj) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "list launches: out of memory");
            goto out;
        }
    }
    if (r != SQLITE_DONE) {
        rc = db_fail(store, err, "list launches");
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
    sluice_store_filter_t none = {0};
    buf_t sql = BUF_INIT;
    sqlite3_stmt *st = NULL;
    json_t *arr = NULL;
    char *next = NULL;
    long long cur_created = 0;
    const char *cur_id = NULL;
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
    if ((rc = buf_puts(&sql, "SELECT " SUMMARY_COLS " FROM launches WHERE 1")) != SLUICE_OK)
        goto oom;
    if (filter->state != NULL && (rc = buf_puts(&sql, " AND state = ?1")) != SLUICE_OK)
        goto oom;
    if (filter->site != NULL && (rc = buf_puts(&sql, " AND site = ?2")) != SLUICE_OK)
        goto oom;
    if (filter->study != NULL && (rc = buf_puts(&sql, " AND study = ?3")) != SLUICE_OK)
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
    if ((rc = prepare(store, buf_str(&sql), &st, err)) != SLUICE_OK)
        goto out;
    if (filter->state != NULL)
        sqlite3_bind_text(st, 1, filter->state, -1, SQLITE_TRANSIENT);
    if (filter->site != NULL)
        sqlite3_bind_text(st, 2, filter->site, -1, SQLITE_TRANSIENT);
    if (filter->study != NULL)
        sqlite3_bind_text(st, 3, filter->study, -1, SQLITE_TRANSIENT);
    if (cur_id != NULL) {
        sqlite3_bind_int64(st, 4, cur_created);
        sqlite3_bind_text(st, 5, cur_id, -1, SQLITE_TRANSIENT);
    }
    /* One row more than asked tells whether another page exists. */
    sqlite3_bind_int64(st, 6, (sqlite3_int64)limit + 1);
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
    goto out;
oom:
    rc = sluice_errorf(err, rc, "list launches: query too long");
out:
    sqlite3_finalize(st);
    if (locked)
        pthread_mutex_unlock(&store->mu);
    buf_free(&sql);
    json_decref(arr);
    free(next);
    return rc;
}

sluice_err sluice_store_list_live(sluice_store_t *store, json_t **out, sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "list live: store and out are required");
    pthread_mutex_lock(&store->mu);
    if ((rc = prepare(store,
                      "SELECT " SUMMARY_COLS " FROM launches WHERE terminal = 0 "
                      "ORDER BY created_ms, launch_id",
                      &st, err)) != SLUICE_OK)
        goto out;
    rc = collect_launches(store, st, out, err);
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* ---- events ----------------------------------------------------------- */

static sluice_err check_summary(const sluice_store_summary_t *sum, sluice_error_t *err)
{
    size_t n = sum->state != NULL ? strlen(sum->state) : 0;

    if (n == 0 || n > 64)
        return sluice_errorf(err, SLUICE_EINVAL, "summary.state: required, at most 64 characters");
    if (sum->terminal != 0 && sum->terminal != 1)
        return sluice_errorf(err, SLUICE_EINVAL, "summary.terminal: must be 0 or 1");
    if (sum->job_ids != NULL && !json_is_array(sum->job_ids))
        return sluice_errorf(err, SLUICE_EINVAL, "summary.job_ids: must be an array");
    return SLUICE_OK;
}

/* One event's text, validated and serialised before the write lock is
 * taken. */
typedef struct {
    char *ctx;
    char *job_ids;
} append_text_t;

static void append_text_free(append_text_t *t)
{
    free(t->ctx);
    free(t->job_ids);
    t->ctx = NULL;
    t->job_ids = NULL;
}

/* Validate one event and serialise its context and job ids. */
static sluice_err append_prepare(const char *launch_id,
                                 const char *name,
                                 const json_t *context,
                                 const sluice_store_summary_t *sum,
                                 append_text_t *out,
                                 sluice_error_t *err)
{
    sluice_err rc;

    memset(out, 0, sizeof(*out));
    if ((rc = check_launch_id(launch_id, err)) != SLUICE_OK ||
        (rc = check_event_name(name, err)) != SLUICE_OK)
        return rc;
    if (context != NULL && !json_is_object(context))
        return sluice_errorf(err, SLUICE_EINVAL, "launch %s: event %s: context must be an object",
                             launch_id, name);
    if ((rc = refuse_secrets(context, "context", err)) != SLUICE_OK)
        return rc;
    if (sum != NULL && (rc = check_summary(sum, err)) != SLUICE_OK)
        return rc;
    if (context != NULL)
        rc = json_text(context, "context", &out->ctx, err);
    else if ((out->ctx = strdup("{}")) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "append event: out of memory");
    if (rc == SLUICE_OK && sum != NULL && sum->job_ids != NULL)
        rc = json_text(sum->job_ids, "job_ids", &out->job_ids, err);
    if (rc != SLUICE_OK)
        append_text_free(out);
    return rc;
}

/* Insert one event and update its launch inside the caller's write
 * transaction.  `sum` NULL: a plain event.  With `sum` on a terminal
 * launch: SLUICE_ESTATE, or with `downgrade` the event is written without
 * the summary (a terminal state never changes). */
static sluice_err append_locked(sluice_store_t *store,
                                const char *launch_id,
                                const char *name,
                                const append_text_t *txt,
                                const char *caller,
                                int64_t time_ms,
                                const sluice_store_summary_t *sum,
                                int downgrade,
                                int64_t *seq_out,
                                sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    int64_t seq = 0;
    int terminal = 0;
    sluice_err rc;

    if ((rc = prepare(store, "SELECT last_seq, terminal FROM launches WHERE launch_id = ?1", &st,
                      err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, launch_id, -1, SQLITE_TRANSIENT);
    switch (sqlite3_step(st)) {
    case SQLITE_ROW:
        seq = sqlite3_column_int64(st, 0) + 1;
        terminal = sqlite3_column_int(st, 1);
        break;
    case SQLITE_DONE:
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", launch_id);
        goto out;
    default:
        rc = db_fail(store, err, "read launch");
        goto out;
    }
    sqlite3_finalize(st);
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
    if ((rc = prepare(store,
                      "INSERT INTO events (launch_id, seq, time_ms, name, context, caller) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                      &st, err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, launch_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_int64(st, 3, time_ms);
    sqlite3_bind_text(st, 4, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, txt->ctx, -1, SQLITE_TRANSIENT);
    bind_text_or_null(st, 6, caller);
    if ((rc = step_done(store, st, err)) != SLUICE_OK)
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    if (sum == NULL) {
        rc = prepare(store,
                     "UPDATE launches SET last_seq = ?2, updated_ms = max(updated_ms, ?3) "
                     "WHERE launch_id = ?1",
                     &st, err);
    } else {
        rc = prepare(store,
                     "UPDATE launches SET last_seq = ?2, summary_seq = ?2, "
                     "updated_ms = max(updated_ms, ?3), state = ?4, terminal = ?5, "
                     "result_code = CASE WHEN ?6 THEN ?7 ELSE result_code END, "
                     "reason = CASE WHEN ?8 THEN ?9 ELSE reason END, "
                     "attempt = CASE WHEN ?10 >= 0 THEN ?10 ELSE attempt END, "
                     "job_ids = coalesce(?11, job_ids) WHERE launch_id = ?1",
                     &st, err);
    }
    if (rc != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, launch_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_int64(st, 3, time_ms);
    if (sum != NULL) {
        sqlite3_bind_text(st, 4, sum->state, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st, 5, sum->terminal);
        sqlite3_bind_int(st, 6, sum->set_result != 0);
        sqlite3_bind_int(st, 7, sum->result_code);
        sqlite3_bind_int(st, 8, sum->reason != NULL);
        bind_text_or_null(st, 9,
                          sum->reason != NULL && sum->reason[0] != '\0' ? sum->reason : NULL);
        sqlite3_bind_int(st, 10, sum->attempt);
        bind_text_or_null(st, 11, txt->job_ids);
    }
    if ((rc = step_done(store, st, err)) != SLUICE_OK)
        goto out;
    if (seq_out != NULL)
        *seq_out = seq;
out:
    sqlite3_finalize(st);
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
    append_text_t txt;
    int64_t seq = 0;
    sluice_err rc;

    if (store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "append event: store is NULL");
    if ((rc = append_prepare(launch_id, name, context, sum, &txt, err)) != SLUICE_OK)
        return rc;
    if (time_ms == 0)
        time_ms = now_ms();
    pthread_mutex_lock(&store->mu);
    /* IMMEDIATE takes the write lock now, so the seq read inside cannot be
     * taken by another writer before our insert. */
    rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    if (rc == SLUICE_OK)
        rc = append_locked(store, launch_id, name, &txt, caller, time_ms, sum, 0, &seq, err);
    if (rc == SLUICE_OK)
        rc = exec_sql(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        rollback(store);
    pthread_mutex_unlock(&store->mu);
    append_text_free(&txt);
    if (rc == SLUICE_OK && seq_out != NULL)
        *seq_out = seq;
    return rc;
}

sluice_err sluice_store_append_many(sluice_store_t *store,
                                    sluice_store_append_t *items,
                                    size_t n,
                                    sluice_error_t *err)
{
    append_text_t *txt = NULL;
    int64_t now = now_ms();
    size_t i, ready = 0;
    sluice_err rc = SLUICE_OK;

    if (store == NULL || (items == NULL && n > 0))
        return sluice_errorf(err, SLUICE_EINVAL, "append events: store and items are required");
    if (n == 0)
        return SLUICE_OK;
    if ((txt = calloc(n, sizeof(*txt))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "append events: out of memory");
    for (ready = 0; ready < n; ready++) {
        rc = append_prepare(items[ready].launch_id, items[ready].name, items[ready].context,
                            items[ready].summary, &txt[ready], err);
        if (rc != SLUICE_OK) {
            sluice_error_prefix(err, "event %zu of %zu", ready + 1, n);
            goto out;
        }
    }
    pthread_mutex_lock(&store->mu);
    rc = exec_sql(store, "BEGIN IMMEDIATE", err);
    for (i = 0; i < n && rc == SLUICE_OK; i++) {
        rc = append_locked(store, items[i].launch_id, items[i].name, &txt[i], items[i].caller,
                           items[i].time_ms != 0 ? items[i].time_ms : now, items[i].summary,
                           items[i].summary_if_live, &items[i].seq, err);
        if (rc != SLUICE_OK)
            sluice_error_prefix(err, "event %zu of %zu", i + 1, n);
    }
    if (rc == SLUICE_OK)
        rc = exec_sql(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        rollback(store);
    pthread_mutex_unlock(&store->mu);
out:
    if (rc != SLUICE_OK) {
        for (i = 0; i < n; i++)
            items[i].seq = 0;
    }
    for (i = 0; i < ready; i++)
        append_text_free(&txt[i]);
    free(txt);
    return rc;
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
static sluice_err read_events_locked(sluice_store_t *store,
                                     const char *launch_id,
                                     int64_t from_seq,
                                     size_t limit,
                                     int check,
                                     json_t **out,
                                     sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    json_t *arr = NULL, *ev;
    int64_t last_seq = 0, expect = 1;
    sluice_err rc;
    int r;

    if ((rc = prepare(store, "SELECT last_seq FROM launches WHERE launch_id = ?1", &st, err)) !=
        SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, launch_id, -1, SQLITE_TRANSIENT);
    r = sqlite3_step(st);
    if (r == SQLITE_DONE) {
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "launch %s: not found", launch_id);
        goto out;
    }
    if (r != SQLITE_ROW) {
        rc = db_fail(store, err, "read launch");
        goto out;
    }
    last_seq = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = prepare(store,
                      "SELECT seq, time_ms, name, context, caller FROM events "
                      "WHERE launch_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3",
                      &st, err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_text(st, 1, launch_id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, from_seq);
    sqlite3_bind_int64(st, 3, limit == 0 ? -1 : (sqlite3_int64)limit);
    if ((arr = json_array()) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "read events: out of memory");
        goto out;
    }
    expect = from_seq;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        if (check && sqlite3_column_int64(st, 0) != expect) {
            rc = sluice_errorf(err, SLUICE_ESTORE,
                               "launch %s: event log has a gap (seq %" PRId64 " missing)",
                               launch_id, expect);
            goto out;
        }
        expect++;
        if ((rc = row_to_event(st, 0, launch_id, &ev, err)) != SLUICE_OK)
            goto out;
        if (json_array_append_new(arr, ev) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "read events: out of memory");
            goto out;
        }
    }
    if (r != SQLITE_DONE) {
        rc = db_fail(store, err, "read events");
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
    sqlite3_finalize(st);
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
    if ((rc = check_launch_id(launch_id, err)) != SLUICE_OK)
        return rc;
    if (from_seq < 1)
        from_seq = 1;
    pthread_mutex_lock(&store->mu);
    /* One read transaction: last_seq and the rows come from one snapshot. */
    if ((rc = exec_sql(store, "BEGIN", err)) == SLUICE_OK) {
        rc = read_events_locked(store, launch_id, from_seq, limit, check, out, err);
        sqlite3_exec(store->db, "COMMIT", NULL, NULL, NULL);
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

sluice_err sluice_store_events_since(sluice_store_t *store,
                                     int64_t after_gseq,
                                     size_t limit,
                                     json_t **out,
                                     int64_t *next_out,
                                     sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    json_t *arr = NULL, *ev = NULL;
    int64_t next = after_gseq;
    sluice_err rc;
    int r;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "events since: store and out are required");
    if (limit == 0)
        limit = LIST_DEFAULT;
    pthread_mutex_lock(&store->mu);
    if ((rc = prepare(store,
                      "SELECT gseq, launch_id, seq, time_ms, name, context, caller FROM events "
                      "WHERE gseq > ?1 ORDER BY gseq LIMIT ?2",
                      &st, err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, after_gseq);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
    if ((arr = json_array()) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "events since: out of memory");
        goto out;
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = column_str(st, 1);

        if (id == NULL) {
            rc = sluice_errorf(err, SLUICE_ESTORE, "event gseq %lld: launch_id is NULL",
                               (long long)sqlite3_column_int64(st, 0));
            goto out;
        }
        if ((rc = row_to_event(st, 2, id, &ev, err)) != SLUICE_OK)
            goto out;
        next = sqlite3_column_int64(st, 0);
        if (json_object_set_new(ev, "gseq", json_integer(next)) != 0 ||
            json_object_set_new(ev, "launch_id", json_string(id)) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "events since: out of memory");
            goto out;
        }
        r = json_array_append_new(arr, ev); /* steals ev, also on failure */
        ev = NULL;
        if (r != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "events since: out of memory");
            goto out;
        }
    }
    if (r != SQLITE_DONE) {
        rc = db_fail(store, err, "read events");
        goto out;
    }
    *out = arr;
    arr = NULL;
    if (next_out != NULL)
        *next_out = next;
out:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&store->mu);
    json_decref(ev);
    json_decref(arr);
    return rc;
}

/* ---- pruning ---------------------------------------------------------- */

sluice_err sluice_store_prune(
    sluice_store_t *store, int64_t age_ms, int64_t now, size_t *count_out, sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    size_t n = 0;
    sluice_err rc;

    if (store == NULL || age_ms < 0)
        return sluice_errorf(err, SLUICE_EINVAL, "prune: store and a non-negative age required");
    if (now == 0)
        now = now_ms();
    pthread_mutex_lock(&store->mu);
    if ((rc = exec_sql(store, "BEGIN IMMEDIATE", err)) != SLUICE_OK)
        goto out;
    /* The events go with their launch (ON DELETE CASCADE). */
    if ((rc = prepare(store, "DELETE FROM launches WHERE terminal = 1 AND updated_ms < ?1", &st,
                      err)) != SLUICE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, now - age_ms);
    if ((rc = step_done(store, st, err)) != SLUICE_OK)
        goto out;
    n = (size_t)sqlite3_changes(store->db);
    if ((rc = exec_sql(store, "COMMIT", err)) != SLUICE_OK)
        goto out;
    if (n > 0)
        sluice_log(SLUICE_LOG_INFO, "store %s: pruned %zu terminal launches", store->db_path, n);
    if (count_out != NULL)
        *count_out = n;
out:
    sqlite3_finalize(st);
    if (rc != SLUICE_OK)
        rollback(store);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* ---- test hook -------------------------------------------------------- */

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

/* ---- the newest event ------------------------------------------------- */

sluice_err sluice_store_last_gseq(sluice_store_t *store, int64_t *out, sluice_error_t *err)
{
    sqlite3_stmt *st = NULL;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "last gseq: store and out are required");
    pthread_mutex_lock(&store->mu);
    if ((rc = prepare(store, "SELECT COALESCE(MAX(gseq), 0) FROM events", &st, err)) == SLUICE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            *out = (int64_t)sqlite3_column_int64(st, 0);
        else
            rc = db_fail(store, err, "last gseq");
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&store->mu);
    return rc;
}
