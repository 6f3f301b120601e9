/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - the durable record of launches and their event logs.
 *
 * A store is a directory (0700) holding one SQLite database, `sluice.db`
 * (0600, WAL mode), and the supervisor lock file `supervisor.lock`; or the
 * same directory (lock file only) and a PostgreSQL database named by a URL
 * (sluice_store_open_with()), with the same tables and guarantees.  It keeps:
 * - one row per launch: its request (never a secret value), the request's
 *   hash (idempotency), the render made at accept time ("render once"), and a
 *   cached summary (state, result code, reason, attempt, job ids, terminal);
 * - an append-only event log per launch: `{seq, time, name, context}` with
 *   seq = 1..n contiguous, time in epoch milliseconds, plus the caller who
 *   caused it (audit) and a global sequence number `gseq` for watchers;
 * - the archived stdout and stderr of each attempt of a finished launch
 *   (cut to the site's cap), so that every process on the store serves
 *   them.
 *
 * Notes:
 * - The store is generic: it does not know event names or states beyond the
 *   first event, `accepted`, and the first state, `ACCEPTED`.
 * - An event is committed (fsync, synchronous=FULL) before the call returns,
 *   so callers append first and apply second.  The cached summary changes
 *   only in the same transaction as the event that justifies it; a crash
 *   leaves either both or neither.  Once a launch is terminal its summary
 *   never changes again (events may still be appended, e.g. "archived").
 * - JSON values are validated on the way in (no `secrets`/`secret_values`
 *   key at any depth) and on the way out (a row whose JSON does not parse is
 *   reported as SLUICE_ESTORE naming the launch and the column).
 * - A database written by a newer sluice, a corrupt file, or a SQLite file
 *   that is not a sluice store is refused with SLUICE_ESTORE and left
 *   untouched.
 *
 * Thread safety: one store object owns one database connection and one
 * mutex; every function below may be called from any thread and calls on
 * one object are serialised.  Several processes may open the same store at
 * once (WAL readers never block the writer; writers wait up to the busy
 * timeout): only the supervisor (the holder of sluice_store_lock_supervisor)
 * should update summaries, any process may append request events such as
 * `cancel-asked` (sluice_store_request_cancel).
 */
#ifndef SLUICE_STORE_H
#define SLUICE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The schema version this library writes and reads. */
#define SLUICE_STORE_SCHEMA_VERSION 7

/* `PRAGMA application_id` of every sluice database ("SLCE"). */
#define SLUICE_STORE_APPLICATION_ID 0x534c4345

/* Opaque; caller frees with sluice_store_close(). */
typedef struct sluice_store sluice_store_t;

/* The default store directory: $SLUICE_STATE_DIR, else /var/lib/sluice when
 * running as root, else $XDG_STATE_HOME/sluice (an absolute
 * $XDG_STATE_HOME only), else $HOME/.local/state/sluice.  `*out` is a new
 * string; caller frees with free().  SLUICE_ECONFIG when no home directory
 * can be found. */
SLUICE_API sluice_err sluice_store_default_dir(char **out, sluice_error_t *err);

/* Open the store in `dir` (NULL: sluice_store_default_dir()), creating the
 * directory (0700) and the database (0600) when they do not exist, and
 * migrating an older schema (one transaction per migration).  Runs
 * `PRAGMA quick_check`.  SLUICE_ESTORE for a corrupt, foreign or newer
 * database (never modified), SLUICE_EIO for directory problems.  `*out` is
 * set only on success; caller frees with sluice_store_close(). */
SLUICE_API sluice_err sluice_store_open(sluice_store_t **out, const char *dir, sluice_error_t *err);

/* Where a store lives, for sluice_store_open_with().  Start from
 * SLUICE_STORE_OPTS_INIT and set what differs; every pointer is
 * borrowed for the call (the store keeps copies). */
typedef struct {
    unsigned int version;      /* SLUICE_STORE_OPTS_VERSION: first, always */
    const char *dir;           /* the state directory (lock file, staging); NULL: the
                                * default (sluice_store_default_dir()) */
    const char *url;           /* NULL or "": SQLite, `sluice.db` in `dir`;
                                * postgresql://... or postgres://...: PostgreSQL.  A
                                * password inside the URL is refused */
    const char *password_file; /* PostgreSQL only: NULL (libpq's own
                                * environment and PGPASSFILE), or a file
                                * (0600, owned by us) in PGPASSFILE format */
    /* 1: never migrate.  A store of an older schema is opened as it is, for
     * a reader that reads only what every schema has (the event log), such
     * as a benchmark watching the store of an older sluice's service; a
     * newer schema is still refused.  Writes and reads of what changed may
     * then fail.  0 (the default): migrate to this version at open. */
    unsigned int keep_schema;
} sluice_store_opts_t;

#define SLUICE_STORE_OPTS_VERSION 1
#define SLUICE_STORE_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_STORE_OPTS_VERSION)

/* Initialise `opts` as SLUICE_STORE_OPTS_INIT does, for `version`
 * (pass SLUICE_STORE_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_store_opts_init(sluice_store_opts_t *opts,
                                             unsigned int version,
                                             sluice_error_t *err);

/* Open the store that `opts` names.  Without a URL this is
 * sluice_store_open(opts->dir).  With a PostgreSQL URL: the state directory
 * is made as for SQLite (it holds the lock file), the server is connected
 * (its version must be 13 or newer), checked (a schema with tables that are
 * not a sluice store's, or a newer schema version, is refused and left
 * untouched) and migrated.  Errors never print a password: the URL is
 * shown without it.  SLUICE_ECONFIG for a bad URL or password file,
 * SLUICE_ESTORE for a server that cannot be reached (naming host, port and
 * database, and libpq's reason) or refuses.  `*out` is set only on
 * success; caller frees with sluice_store_close(). */
SLUICE_API sluice_err sluice_store_open_with(sluice_store_t **out,
                                             const sluice_store_opts_t *opts,
                                             sluice_error_t *err);

/* A second, independent handle on the store `store` is open on (same
 * directory, URL and password file).  Caller frees with
 * sluice_store_close(). */
SLUICE_API sluice_err sluice_store_reopen(sluice_store_t **out,
                                          const sluice_store_t *store,
                                          sluice_error_t *err);

/* "sqlite" or "postgresql"; static string. */
SLUICE_API const char *sluice_store_backend(const sluice_store_t *store);

/* Close the connection and release the supervisor lock if held.  NULL-safe. */
SLUICE_API void sluice_store_close(sluice_store_t *store);

/* The store directory and the database path (with PostgreSQL: the URL
 * without a password); borrowed, valid until sluice_store_close(). */
SLUICE_API const char *sluice_store_dir(const sluice_store_t *store);
SLUICE_API const char *sluice_store_db_path(const sluice_store_t *store);

/* Take the one-supervisor lock (flock on `<dir>/supervisor.lock`, never
 * blocks) and write our pid into the file.  Held until
 * sluice_store_unlock_supervisor() or sluice_store_close(), or until the
 * process dies.  Taking it twice on the same object is a no-op.
 * SLUICE_ECONFLICT when another open file (another process or another store
 * object) holds it; the text names the pid recorded in the lock file. */
SLUICE_API sluice_err sluice_store_lock_supervisor(sluice_store_t *store, sluice_error_t *err);

/* Release the supervisor lock if this object holds it.  NULL-safe. */
SLUICE_API void sluice_store_unlock_supervisor(sluice_store_t *store);

/* What a new launch is made of.  All pointers are borrowed for the call. */
typedef struct {
    const char *launch_id; /* required, [A-Za-z0-9._-]{1,128} */
    const char *site;      /* required */
    const char *study;     /* NULL when none */
    const json_t *request; /* required object; must hold no secret values */
    const json_t *render;  /* NULL or the render (script + job descriptions) */
    const json_t *context; /* NULL or the object stored in the `accepted` event */
    const char *caller;    /* NULL or who asked (audit) */
    int64_t time_ms;       /* epoch ms of acceptance; 0 = now */
    const char *cluster;   /* NULL: the site's first (or only) cluster */
    /* NULL, or `request`'s canonical text (compact, keys sorted, not
     * ASCII-escaped: json_dumps() with JSON_COMPACT | JSON_SORT_KEYS) made
     * by the caller: stored as it is and hashed, instead of serialising
     * `request` again.  It must be that text of `request`. */
    const char *request_text;
} sluice_store_launch_spec_t;

/* Record a new launch in state ACCEPTED together with its first event
 * (seq 1, `accepted`) in one transaction.  Idempotent on launch_id: when the
 * id exists with the same request (same site, study and request body: the
 * hash of their canonical JSON), nothing is written and `*existed_out` is 1;
 * with a different one the call fails with SLUICE_ECONFLICT.  A request,
 * render or context holding a key named `secrets` or `secret_values` at any
 * depth is refused with SLUICE_EINVAL (the text names the path).
 * `existed_out` may be NULL. */
SLUICE_API sluice_err sluice_store_create_launch(sluice_store_t *store,
                                                 const sluice_store_launch_spec_t *spec,
                                                 int *existed_out,
                                                 sluice_error_t *err);

/* The outcome of one launch of sluice_store_create_many(). */
typedef struct {
    sluice_err rc; /* SLUICE_OK: stored (or existed) once the call returned SLUICE_OK */
    int existed;   /* the same launch was already stored: nothing written */
    sluice_error_t err;
    /* When rc is SLUICE_OK: */
    int64_t gseq;          /* the `accepted` event's gseq (0 when it existed) */
    int64_t time_ms;       /* the time the row was (or would have been) made with */
    char request_hash[65]; /* the request's hash (hex), as the row holds it */
} sluice_store_create_result_t;

/* sluice_store_create_launch() for n launches in ONE write transaction:
 * one durable commit for the group (group commit of concurrent accepts).
 * Each launch is checked and written as sluice_store_create_launch() does,
 * and res[i] says how it went: a launch refused on its own (bad spec,
 * SLUICE_ECONFLICT) is rolled back to its savepoint and does not stop the
 * others; a later launch with an id written earlier in the same group is
 * an idempotent repeat (existed) or a conflict.  The call returns SLUICE_OK
 * once the transaction committed; otherwise (I/O, database) nothing of the
 * group is stored and every res[i] not refused on its own carries the
 * same error. */
SLUICE_API sluice_err sluice_store_create_many(sluice_store_t *store,
                                               const sluice_store_launch_spec_t *specs,
                                               size_t n,
                                               sluice_store_create_result_t *res,
                                               sluice_error_t *err);

/* The launch `spec` just created (`res`, SLUICE_OK and not `existed`)
 * and its events, as sluice_store_read_launch() reads them back at once:
 * the row with `render` null, and its one `accepted` event; `*version_out`
 * (may be NULL) is that event's gseq.  Built in memory, nothing is read:
 * the API answers a new launch without a read back.  New references, set
 * only on success; SLUICE_EINVAL when `res` is not a new launch. */
SLUICE_API sluice_err sluice_store_created_launch(const sluice_store_launch_spec_t *spec,
                                                  const sluice_store_create_result_t *res,
                                                  json_t **launch_out,
                                                  json_t **events_out,
                                                  int64_t *version_out,
                                                  sluice_error_t *err);

/* One launch as a JSON object (new reference; caller releases with
 * json_decref()): launch_id, site, study (null), cluster (null: the
 * first cluster), request, request_hash,
 * render (null), state, result_code (null), reason (null), created_ms,
 * updated_ms, attempt, job_ids (array), terminal (bool), last_seq (seq of the
 * newest event) and summary_seq (seq of the event that set the summary).
 * SLUICE_ENOTFOUND when the launch does not exist. */
SLUICE_API sluice_err sluice_store_get_launch(sluice_store_t *store,
                                              const char *launch_id,
                                              json_t **out,
                                              sluice_error_t *err);

/* What one tenant has in the store, for its limits
 * (sluice_store_tenant_usage()). */
typedef struct {
    int64_t live;            /* its launches not yet terminal */
    int64_t accepted_since;  /* its launches created at or after since_ms */
    int64_t oldest_since_ms; /* created_ms of the oldest of those; 0: none */
} sluice_store_usage_t;

/* The usage of `tenant` ("" the default tenant, else keys
 * "<tenant>~<launch_id>"), read in one transaction.  With requests_out
 * (may be NULL), also a new array of the live launches' stored requests
 * (the canonical request text, parsed; at most `max_requests` of them).
 * SLUICE_EINVAL for a bad tenant name. */
SLUICE_API sluice_err sluice_store_tenant_usage(sluice_store_t *store,
                                                const char *tenant,
                                                int64_t since_ms,
                                                size_t max_requests,
                                                sluice_store_usage_t *out,
                                                json_t **requests_out,
                                                sluice_error_t *err);

/* Tri-state filter on the terminal flag. */
enum { SLUICE_STORE_ANY = 0, SLUICE_STORE_LIVE = 1, SLUICE_STORE_TERMINAL = 2 };

/* Filters for sluice_store_list_launches(); zero-initialise, then set. */
typedef struct {
    const char *state;  /* NULL: any */
    const char *site;   /* NULL: any */
    const char *study;  /* NULL: any */
    int terminal;       /* SLUICE_STORE_ANY (the zero value), _LIVE or _TERMINAL */
    size_t limit;       /* 0: 100; at most 1000 */
    const char *cursor; /* NULL for the first page, else a previous next_cursor */
    /* NULL: any; else launches stored with this cluster, and with none
     * (NULL: the first cluster) too when cluster_or_null is set. */
    const char *cluster;
    int cluster_or_null;
    /* NULL: every tenant's launches; "": the default tenant's (keys
     * without '~'); else that tenant's (keys "<tenant>~<launch_id>"). */
    const char *tenant;
} sluice_store_filter_t;

/* Launch summaries (the objects of sluice_store_get_launch() without
 * `request` and `render`) ordered by (created_ms, launch_id), one page at a
 * time.  `*out` is a new array reference; `*next_cursor_out` (may be NULL)
 * is a new string for the next page (caller frees with free()) or NULL on
 * the last page.  SLUICE_EINVAL for a malformed cursor. */
SLUICE_API sluice_err sluice_store_list_launches(sluice_store_t *store,
                                                 const sluice_store_filter_t *filter,
                                                 json_t **out,
                                                 char **next_cursor_out,
                                                 sluice_error_t *err);

/* sluice_store_list_launches() that also gives, in `*version_out`, the
 * newest event gseq in the store (0 when there is none), read in the same
 * read transaction as the page: the page reflects every event up to it and
 * none after (a list's resource version). */
SLUICE_API sluice_err sluice_store_list_launches_at(sluice_store_t *store,
                                                    const sluice_store_filter_t *filter,
                                                    json_t **out,
                                                    char **next_cursor_out,
                                                    int64_t *version_out,
                                                    sluice_error_t *err);

/* Every non-terminal launch (summaries, oldest first) for recovery.
 * `*out` is a new array reference. */
SLUICE_API sluice_err sluice_store_list_live(sluice_store_t *store,
                                             json_t **out,
                                             sluice_error_t *err);

/* Append one event to a launch's log: the next seq is assigned inside a
 * write transaction (BEGIN IMMEDIATE), so concurrent appenders from any
 * process never collide, and the commit is durable when the call returns.
 * `name`: 1..64 characters from [A-Za-z0-9._-]; `context`: NULL ({}) or an
 * object (borrowed, secrets refused); `caller`: NULL or the audit name;
 * `time_ms`: epoch ms, 0 = now.  `seq_out` may be NULL.
 * SLUICE_ENOTFOUND when the launch does not exist. */
SLUICE_API sluice_err sluice_store_append_event(sluice_store_t *store,
                                                const char *launch_id,
                                                const char *name,
                                                const json_t *context,
                                                const char *caller,
                                                int64_t time_ms,
                                                int64_t *seq_out,
                                                sluice_error_t *err);

/* Ask for a launch to be cancelled, from any process: append a
 * `cancel-asked` event (context {"caller": caller}) in one write
 * transaction, unless the launch is terminal or a cancel was already asked
 * for or recorded, in which case nothing is written (*appended_out 0).  The
 * supervisor carries it out on its next cycle as its own `cancel-requested`
 * event (with the state it leads to).  SLUICE_ENOTFOUND when the launch
 * does not exist.  `appended_out` may be NULL. */
SLUICE_API sluice_err sluice_store_request_cancel(sluice_store_t *store,
                                                  const char *launch_id,
                                                  const char *caller,
                                                  int *appended_out,
                                                  sluice_error_t *err);

/* The cached summary written together with an event.  Zero-initialise with
 * SLUICE_STORE_SUMMARY_INIT, then set what changes. */
typedef struct {
    const char *state;     /* required: the launch's new state */
    int terminal;          /* 1 when `state` is terminal */
    int set_result;        /* 1: store result_code below; 0: keep */
    int result_code;       /* 0, 1, 9, 101..104, 127 */
    const char *reason;    /* NULL: keep; "" clears */
    int attempt;           /* < 0: keep */
    const json_t *job_ids; /* NULL: keep; else an array (borrowed) */
} sluice_store_summary_t;

#define SLUICE_STORE_SUMMARY_INIT                                                                  \
    {                                                                                              \
        NULL, 0, 0, 0, NULL, -1, NULL                                                              \
    }

/* Append an event and update the launch's summary in one transaction (see
 * sluice_store_append_event() for the event arguments).  SLUICE_ESTATE when
 * the launch is already terminal (nothing is written: a terminal state never
 * changes), SLUICE_EINVAL for a malformed summary. */
SLUICE_API sluice_err sluice_store_append_event_and_update(sluice_store_t *store,
                                                           const char *launch_id,
                                                           const char *name,
                                                           const json_t *context,
                                                           const char *caller,
                                                           int64_t time_ms,
                                                           const sluice_store_summary_t *summary,
                                                           int64_t *seq_out,
                                                           sluice_error_t *err);

/* One event of a batch for sluice_store_append_many().  Pointers are
 * borrowed for the call. */
typedef struct {
    const char *launch_id;
    const char *name;                      /* as sluice_store_append_event() */
    const json_t *context;                 /* NULL ({}) or an object; secrets refused */
    const char *caller;                    /* NULL or the audit name */
    int64_t time_ms;                       /* epoch ms, 0 = now */
    const sluice_store_summary_t *summary; /* NULL: a plain event */
    int summary_if_live;                   /* 1: on a terminal launch, write the event without the
                                              summary instead of failing the batch */
    int64_t seq;                           /* out: the seq assigned (0 when the batch failed) */
} sluice_store_append_t;

/* Append `n` events (to one or several launches, several to one launch in
 * order) in ONE write transaction and one durable commit: either every
 * event and every summary update is committed, or none is.  Each event
 * follows the rules of sluice_store_append_event() and
 * sluice_store_append_event_and_update(); a summary on a terminal launch
 * fails the whole batch with SLUICE_ESTATE unless its `summary_if_live` is
 * set.  The error text names the failing event ("event 3 of 8: ...").
 * `n` 0 writes nothing. */
SLUICE_API sluice_err sluice_store_append_many(sluice_store_t *store,
                                               sluice_store_append_t *items,
                                               size_t n,
                                               sluice_error_t *err);

/* sluice_store_append_many() for events the caller can rebuild from
 * elsewhere after they are lost (the launcher's "submitted" answers: the
 * job carries the marker committed durably before its POST, and
 * reconciliation finds it again).  The commit survives a crash of the
 * process, but not necessarily an OS crash or power loss: it is made
 * durable by the next durable commit (every other write), never out of
 * order (a commit that survives implies every earlier one did).  SQLite:
 * the WAL is not synced at this commit; PostgreSQL: synchronous_commit off
 * for its transaction.  Everything else as sluice_store_append_many(). */
SLUICE_API sluice_err sluice_store_append_recoverable(sluice_store_t *store,
                                                      sluice_store_append_t *items,
                                                      size_t n,
                                                      sluice_error_t *err);

/* Events of one launch with seq >= from_seq (1 = from the start), at most
 * `limit` of them (0: all), in seq order, as a new array reference of
 * objects {seq, time, name, context, caller}.  `time` is epoch ms. */
SLUICE_API sluice_err sluice_store_read_events(sluice_store_t *store,
                                               const char *launch_id,
                                               int64_t from_seq,
                                               size_t limit,
                                               json_t **out,
                                               sluice_error_t *err);

/* All events of one launch, in order, for rebuilding its state (new array
 * reference).  Checks that seqs run 1..n without a gap and that n is the
 * launch's last_seq; SLUICE_ESTORE otherwise.  SLUICE_ENOTFOUND for an
 * unknown launch. */
SLUICE_API sluice_err sluice_store_replay(sluice_store_t *store,
                                          const char *launch_id,
                                          json_t **out,
                                          sluice_error_t *err);

/* Events of every launch with gseq > after_gseq, oldest first, at most
 * `limit` (0: 100), as a new array reference of objects {gseq, launch_id,
 * seq, time, name, context, caller}.  `*next_out` (may be NULL) receives the
 * gseq to pass next time (after_gseq itself when nothing is new).  gseq
 * values are never reused, even after pruning. */
SLUICE_API sluice_err sluice_store_events_since(sluice_store_t *store,
                                                int64_t after_gseq,
                                                size_t limit,
                                                json_t **out,
                                                int64_t *next_out,
                                                sluice_error_t *err);

/* Filters for sluice_store_events_filtered(); zero-initialise, then set.
 * Pointers are borrowed for the call. */
typedef struct {
    const char *launch_id; /* NULL: any launch */
    const char *site;      /* NULL: any site (the launch's site) */
    const char *state;     /* NULL: any; else only events whose `state` (the
                              launch's state right after them) is this */
    const char *tenant;    /* as sluice_store_filter_t's */
} sluice_store_event_filter_t;

/* sluice_store_events_since() with filters: the events with gseq >
 * after_gseq that match `filter` (NULL: all), oldest first, at most `limit`
 * (0: 100).  `*next_out` (may be NULL) receives the gseq to pass next time:
 * the newest gseq read, or, when fewer than `limit` events matched, the
 * newest gseq in the store at the time of the read (events that did not
 * match are skipped for good).  The rows and that mark come from one read
 * transaction. */
SLUICE_API sluice_err sluice_store_events_filtered(sluice_store_t *store,
                                                   int64_t after_gseq,
                                                   size_t limit,
                                                   const sluice_store_event_filter_t *filter,
                                                   json_t **out,
                                                   int64_t *next_out,
                                                   sluice_error_t *err);

/* The events of launch `launch_id` with gseq > after_gseq, oldest first, at
 * most `limit` (0: 100), in the shape of sluice_store_events_since().
 * `*done_gseq_out` (may be NULL) receives the gseq of the event that made
 * the launch terminal, or 0 while it is live: a watcher that has sent that
 * event has sent all of the launch's transitions.  Both come from one read
 * transaction.  SLUICE_ENOTFOUND for an unknown (or pruned) launch. */
SLUICE_API sluice_err sluice_store_launch_events_after(sluice_store_t *store,
                                                       const char *launch_id,
                                                       int64_t after_gseq,
                                                       size_t limit,
                                                       json_t **out,
                                                       int64_t *done_gseq_out,
                                                       sluice_error_t *err);

/* One launch as sluice_store_get_launch() gives it but with `render` null
 * (not read: the API's view never shows it) (`*launch_out`), all its
 * events as sluice_store_read_events() gives them (`*events_out`) and the
 * gseq of its newest event (`*version_out`: its resource version), read in
 * one read transaction so the three agree.  Outputs are new references,
 * set only on success.  SLUICE_ENOTFOUND for an unknown launch. */
SLUICE_API sluice_err sluice_store_read_launch(sluice_store_t *store,
                                               const char *launch_id,
                                               json_t **launch_out,
                                               json_t **events_out,
                                               int64_t *version_out,
                                               sluice_error_t *err);

/* Delete terminal launches (with their events and archived logs) last updated before
 * now_ms - age_ms (now_ms 0 = now).  Non-terminal launches are never
 * deleted.  `count_out` (may be NULL) receives the number removed. */
SLUICE_API sluice_err sluice_store_prune(
    sluice_store_t *store, int64_t age_ms, int64_t now_ms, size_t *count_out, sluice_error_t *err);

/* ---- archived logs ------------------------------------------------------ */

/* What became of one log of one attempt when its launch was archived. */
typedef enum {
    SLUICE_STORE_LOG_STORED = 0, /* its bytes (the last of them, up to the site's cap) are kept */
    SLUICE_STORE_LOG_MISSING,    /* the job never wrote the file */
    SLUICE_STORE_LOG_REFUSED,    /* the file broke the job-owned rule (note): not read */
    SLUICE_STORE_LOG_PRUNED,     /* retention removed its bytes */
} sluice_store_log_status;

/* "stored", "missing", "refused", "pruned" (static; "?" for another value). */
SLUICE_API const char *sluice_store_log_status_name(sluice_store_log_status status);

/* One log to keep (sluice_store_put_log()); pointers borrowed for the call. */
typedef struct {
    const char *launch_id;
    uint32_t attempt;               /* the attempt whose log this is (0: never submitted) */
    const char *stream;             /* "stdout" or "stderr" */
    sluice_store_log_status status; /* STORED, MISSING or REFUSED */
    int64_t size;                   /* the log's length in bytes when archived */
    const void *data;               /* STORED: the log's last `len` bytes (size - len cut) */
    size_t len;
    const char *note; /* NULL, or why (REFUSED: the rule the file broke) */
    int64_t time_ms;  /* epoch ms of the archive; 0 = now */
} sluice_store_log_t;

/* Keep one log of one attempt of a launch (table launch_logs, deleted with
 * the launch by sluice_store_prune()), in one write transaction; a row of
 * the same launch, attempt and stream is replaced.  Job output is stored as
 * the job wrote it: the caller decides what may be kept (never a secret
 * file) and cuts it.  On a fenced handle (lease.h) it is refused like an
 * event append (SLUICE_ECONFLICT, `fenced:` logged).  SLUICE_ENOTFOUND for
 * an unknown launch, SLUICE_EINVAL for a bad stream or status or `len` >
 * `size`. */
SLUICE_API sluice_err sluice_store_put_log(sluice_store_t *store,
                                           const sluice_store_log_t *log,
                                           sluice_error_t *err);

/* What the store holds of one log. */
typedef struct {
    uint32_t attempt;
    sluice_store_log_status status;
    int64_t size;        /* the log's length when archived */
    int64_t omitted;     /* bytes at its start that are not kept (the cap); size when none is */
    int64_t archived_ms; /* epoch ms */
    char note[256];      /* "" or why */
} sluice_store_log_info_t;

/* The row of log `stream` ("stdout", "stderr") of launch `launch_id` for
 * `attempt` (< 0: the newest attempt that has one) into *out.
 * SLUICE_ENOTFOUND when there is none (a launch not archived yet, archived
 * by a sluice older than schema 6, or unknown). */
SLUICE_API sluice_err sluice_store_get_log(sluice_store_t *store,
                                           const char *launch_id,
                                           const char *stream,
                                           int attempt,
                                           sluice_store_log_info_t *out,
                                           sluice_error_t *err);

/* Copy up to `max` kept bytes of a log from `offset` (an offset in the
 * job's file: at least the row's `omitted`, else SLUICE_EINVAL) into buf;
 * *n_out is the count, 0 at the end (or for a log whose bytes are not kept).
 * At most 1 GiB per call.  SLUICE_ENOTFOUND when the row does not exist. */
SLUICE_API sluice_err sluice_store_read_log(sluice_store_t *store,
                                            const char *launch_id,
                                            const char *stream,
                                            uint32_t attempt,
                                            int64_t offset,
                                            void *buf,
                                            size_t max,
                                            size_t *n_out,
                                            sluice_error_t *err);

/* Drop the kept bytes of the logs of terminal launches last updated before
 * now_ms - age_ms (now_ms 0 = now): their rows stay, as PRUNED, so that a
 * read says why there is nothing.  Logs of launches that are not terminal
 * are never touched.  `count_out` (may be NULL): the launches whose logs
 * were pruned. */
SLUICE_API sluice_err sluice_store_prune_logs(
    sluice_store_t *store, int64_t age_ms, int64_t now_ms, size_t *count_out, sluice_error_t *err);

/* Called after each commit of sluice_store_append_event(),
 * sluice_store_append_event_and_update() or sluice_store_append_many()
 * through this handle, on the committing thread, once the handle's lock is
 * released (so `fn` may use the handle).  Other processes' commits and
 * other writes do not call it. */
typedef void (*sluice_store_commit_fn)(void *arg);

/* Set (fn NULL: clear) the commit callback of `store`; one per handle, a
 * new one replaces the old.  A commit already under way may still call the
 * old callback: clear it only when nothing else writes through the handle
 * (`sluice serve` clears its own after its HTTP daemon has stopped, with
 * the launcher stopped). */
SLUICE_API void sluice_store_on_commit(sluice_store_t *store, sluice_store_commit_fn fn, void *arg);

/* The newest event's gseq (0 for a store without events): where a watcher
 * that only cares about what comes next starts. */
SLUICE_API sluice_err sluice_store_last_gseq(sluice_store_t *store,
                                             int64_t *out,
                                             sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_STORE_H */
