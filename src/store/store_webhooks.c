/* SPDX-License-Identifier: Apache-2.0 */
/* store_webhooks.c - the webhook outbox: the cursor over the event log,
 * the bounded queue of deliveries, their attempts and the counters
 * (store_webhooks.h).
 *
 * Notes:
 * - The table `webhook_deliveries` and the `meta` keys `webhooks.*` come
 *   with store schema 3 (store.c, migrations[2]).
 * - A delivery's body is built once, when it is queued, and posted
 *   byte for byte on every attempt: the signature covers those bytes,
 *   and a retry is the same delivery (same delivery_id).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/marker.h"
#include "store_int.h"
#include "store_webhooks.h"

#define K_CURSOR "webhooks.cursor"
#define K_UID "webhooks.uid"
#define K_DELIVERED "webhooks.delivered"
#define K_RETRIES "webhooks.retries"
#define K_FAILED "webhooks.failed"
#define ERROR_MAX 512

/* ---- meta counters ------------------------------------------------------ */

/* The integer value of meta `key` (0 when absent: *found 0). */
static sluice_err
meta_get(sluice_store_t *s, const char *key, int64_t *v, int *found, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;
    int r;

    *v = 0;
    if (found != NULL)
        *found = 0;
    if ((rc = store_prepare(s, "SELECT CAST(value AS BIGINT) FROM meta WHERE key = ?1", &st,
                            err)) != SLUICE_OK)
        return rc;
    store_bind_text(st, 1, key);
    r = store_step(st);
    if (r == STORE_ROW) {
        *v = store_column_int64(st, 0);
        if (found != NULL)
            *found = 1;
    } else if (r != STORE_DONE) {
        rc = store_db_fail(s, err, "read meta");
    }
    store_finalize(st);
    return rc;
}

static sluice_err meta_set(sluice_store_t *s, const char *key, int64_t v, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    char text[32];
    sluice_err rc;

    snprintf(text, sizeof(text), "%" PRId64, v);
    if ((rc = store_prepare(s,
                            "INSERT INTO meta (key, value) VALUES (?1, ?2) "
                            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                            &st, err)) != SLUICE_OK)
        return rc;
    store_bind_text(st, 1, key);
    store_bind_text(st, 2, text);
    rc = store_step_done(s, st, err);
    store_finalize(st);
    return rc;
}

static sluice_err meta_add(sluice_store_t *s, const char *key, int64_t d, sluice_error_t *err)
{
    int64_t v = 0;
    sluice_err rc;

    if ((rc = meta_get(s, key, &v, NULL, err)) != SLUICE_OK)
        return rc;
    return meta_set(s, key, v + d, err);
}

/* One integer from a query without parameters. */
static sluice_err query_i64(sluice_store_t *s, const char *sql, int64_t *v, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if ((rc = store_prepare(s, sql, &st, err)) != SLUICE_OK)
        return rc;
    if (store_step(st) == STORE_ROW)
        *v = store_column_int64(st, 0);
    else
        rc = store_db_fail(s, err, "webhooks: read");
    store_finalize(st);
    return rc;
}

/* Run `call` inside BEGIN IMMEDIATE ... COMMIT under the store mutex. */
#define IN_WRITE_TXN(s, err, call)                                                                 \
    do {                                                                                           \
        pthread_mutex_lock(&(s)->mu);                                                              \
        rc = store_exec((s), "BEGIN IMMEDIATE", (err));                                            \
        if (rc == SLUICE_OK)                                                                       \
            rc = (call);                                                                           \
        if (rc == SLUICE_OK)                                                                       \
            rc = store_exec((s), "COMMIT", (err));                                                 \
        if (rc != SLUICE_OK)                                                                       \
            store_rollback(s);                                                                     \
        pthread_mutex_unlock(&(s)->mu);                                                            \
    } while (0)

/* ---- start -------------------------------------------------------------- */

static sluice_err
start_locked(sluice_store_t *s, int64_t now, int64_t *revived, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    int64_t cursor = 0, last = 0;
    int found = 0;
    sluice_err rc;

    unsigned char rnd[8];
    char uid[2 * sizeof(rnd) + 1];

    /* The store's uid: 16 random hex digits, kept once written. */
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return sluice_errorf(err, SLUICE_ESTORE, "webhooks: no random bytes: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(uid + 2 * i, 3, "%02x", rnd[i]);
    if ((rc = store_prepare(s,
                            "INSERT INTO meta (key, value) VALUES ('" K_UID
                            "', ?1) ON CONFLICT (key) DO NOTHING",
                            &st, err)) != SLUICE_OK)
        return rc;
    store_bind_text(st, 1, uid);
    rc = store_step_done(s, st, err);
    store_finalize(st);
    st = NULL;
    if (rc != SLUICE_OK)
        return rc;
    if ((rc = meta_get(s, K_CURSOR, &cursor, &found, err)) != SLUICE_OK)
        return rc;
    if (!found) {
        if ((rc = query_i64(s, "SELECT COALESCE(MAX(gseq), 0) FROM events", &last, err)) !=
                SLUICE_OK ||
            (rc = meta_set(s, K_CURSOR, last, err)) != SLUICE_OK)
            return rc;
    }
    if ((rc = store_prepare(s,
                            "UPDATE webhook_deliveries SET dead = 0, attempts = 0, "
                            "next_attempt_ms = ?1 WHERE dead = 1",
                            &st, err)) != SLUICE_OK)
        return rc;
    store_bind_int64(st, 1, now);
    rc = store_step_done(s, st, err);
    store_finalize(st);
    if (rc == SLUICE_OK)
        *revived = store_changes(s);
    return rc;
}

sluice_err
store_webhooks_start(sluice_store_t *s, int64_t now_ms, size_t *revived_out, sluice_error_t *err)
{
    int64_t revived = 0;
    sluice_err rc;

    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: store is NULL");
    if (now_ms == 0)
        now_ms = store_now_ms();
    IN_WRITE_TXN(s, err, start_locked(s, now_ms, &revived, err));
    if (rc == SLUICE_OK && revived_out != NULL)
        *revived_out = (size_t)revived;
    return rc;
}

/* ---- fill --------------------------------------------------------------- */

/* Columns of a fill row: 0 gseq, 1 launch_id, 2 state, 3 previous state,
 * 4 terminal, 5 result_code, 6 reason, 7 request, then the event columns
 * store_row_to_event() reads from 8: seq, time_ms, name, context, caller,
 * state, gseq; 15 the launch's state now. */
#define FILL_SQL                                                                                   \
    "SELECT e.gseq, e.launch_id, e.state, p.state, l.terminal, l.result_code, l.reason, "          \
    "t.request, e.seq, e.time_ms, e.name, e.context, e.caller, e.state, e.gseq, l.state "          \
    "FROM events e JOIN launches l ON l.launch_id = e.launch_id "                                  \
    "JOIN launch_texts t ON t.launch_id = e.launch_id "                                            \
    "LEFT JOIN events p ON p.launch_id = e.launch_id AND p.seq = e.seq - 1 "                       \
    "WHERE e.gseq > ?1 ORDER BY e.gseq LIMIT ?2"

/* The launch's own URL from its canonical request (NULL when none). */
static char *request_url(const char *request)
{
    json_t *r = request != NULL ? json_loads(request, 0, NULL) : NULL;
    const char *u = json_string_value(json_object_get(json_object_get(r, "webhook"), "url"));
    char *out = u != NULL ? strdup(u) : NULL;

    json_decref(r);
    return out;
}

/* The body of one delivery (compact text; caller frees). */
static char *make_body(store_stmt_t *st,
                       const char *delivery_id,
                       const char *launch_id,
                       int64_t gseq,
                       const char *state,
                       sluice_error_t *err)
{
    json_t *ev = NULL, *body = NULL, *code = json_null(), *reason = json_null();
    const char *cr, *id = marker_key_id(launch_id);
    char *text = NULL, tenant[MARKER_TENANT_MAX + 1];

    if (store_row_to_event(st, 8, launch_id, &ev, err) != SLUICE_OK)
        return NULL;
    /* A tenant's launch: the launch_id as its caller sent it, and the
     * tenant beside it (docs/api.md, "Tenants"), as the API shows it. */
    marker_key_tenant(launch_id, tenant, sizeof(tenant));
    json_object_set_new(ev, "launch_id", json_string(id));
    if (tenant[0] != '\0')
        json_object_set_new(ev, "tenant", json_string(tenant));
    if (store_column_int64(st, 4) == 1 && store_column_str(st, 15) != NULL &&
        strcmp(store_column_str(st, 15), state) == 0) {
        /* A terminal launch's state never changes again, so the transition
         * into it is this one: its result is the launch's. */
        if (!store_column_is_null(st, 5))
            code = json_integer(store_column_int64(st, 5));
        if ((cr = store_column_str(st, 6)) != NULL)
            reason = json_string(cr);
    } else if ((cr = json_string_value(
                    json_object_get(json_object_get(ev, "context"), "reason"))) != NULL) {
        reason = json_string(cr);
    }
    body = json_pack("{s:s, s:s, s:I, s:O, s:s, s:o, s:o}", "delivery_id", delivery_id, "launch_id",
                     id, "gseq", (json_int_t)gseq, "event", ev, "state", state, "result_code", code,
                     "reason", reason);
    if (body != NULL && tenant[0] != '\0')
        json_object_set_new(body, "tenant", json_string(tenant));
    if (body != NULL)
        text = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
    json_decref(body);
    json_decref(ev);
    if (text == NULL)
        sluice_errorf(err, SLUICE_ENOMEM, "webhooks: out of memory building a delivery");
    return text;
}

static sluice_err insert_row(sluice_store_t *s,
                             store_stmt_t *ev,
                             const char *uid,
                             const char *target,
                             const char *url,
                             int64_t now,
                             sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    const char *launch_id = store_column_str(ev, 1), *state = store_column_str(ev, 2);
    int64_t gseq = store_column_int64(ev, 0);
    char did[96];
    char *body;
    sluice_err rc;

    snprintf(did, sizeof(did), "%s-%" PRId64 "-%s", uid, gseq, target);
    if ((body = make_body(ev, did, launch_id, gseq, state, err)) == NULL)
        return err != NULL ? err->code : SLUICE_ENOMEM;
    if ((rc = store_prepare(s,
                            "INSERT INTO webhook_deliveries (delivery_id, url, launch_id, gseq, "
                            "event_name, body, attempts, next_attempt_ms, dead, created_ms) "
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, 0, ?7)",
                            &st, err)) == SLUICE_OK) {
        store_bind_text(st, 1, did);
        store_bind_text(st, 2, url);
        store_bind_text(st, 3, launch_id);
        store_bind_int64(st, 4, gseq);
        store_bind_text(st, 5, store_column_str(ev, 10));
        store_bind_text(st, 6, body);
        store_bind_int64(st, 7, now);
        rc = store_step_done(s, st, err);
    }
    store_finalize(st);
    free(body);
    return rc;
}

static sluice_err fill_locked(
    sluice_store_t *s, store_webhook_fill_t *f, size_t *queued, int *full, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    int64_t cursor = 0, count = 0, room, now = f->now_ms != 0 ? f->now_ms : store_now_ms();
    int64_t limit = f->max_events > 0 ? (int64_t)f->max_events : 256, looked = 0;
    char uid[40];
    char *lurl = NULL;
    sluice_err rc;
    int r;

    if ((rc = store_prepare(s, "SELECT value FROM meta WHERE key = '" K_UID "'", &st, err)) !=
        SLUICE_OK)
        goto out;
    if (store_step(st) != STORE_ROW || store_column_str(st, 0) == NULL) {
        rc = sluice_errorf(err, SLUICE_ESTATE, "webhooks: the outbox was not started");
        goto out;
    }
    snprintf(uid, sizeof(uid), "%s", store_column_str(st, 0));
    store_finalize(st);
    st = NULL;
    if ((rc = meta_get(s, K_CURSOR, &cursor, NULL, err)) != SLUICE_OK ||
        (rc = query_i64(s, "SELECT count(*) FROM webhook_deliveries", &count, err)) != SLUICE_OK)
        goto out;
    room = (int64_t)f->queue_max - count;
    if ((rc = store_prepare(s, FILL_SQL, &st, err)) != SLUICE_OK)
        goto out;
    store_bind_int64(st, 1, cursor);
    store_bind_int64(st, 2, limit);
    while ((r = store_step(st)) == STORE_ROW) {
        const char *state = store_column_str(st, 2), *prev = store_column_str(st, 3);
        int transition = state != NULL && (prev == NULL || strcmp(prev, state) != 0);
        int site = 0, own = 0;

        free(lurl);
        lurl = NULL;
        if (transition) {
            site = f->site_url != NULL;
            lurl = f->launch_url_ok != NULL ? request_url(store_column_str(st, 7)) : NULL;
            own = lurl != NULL && f->launch_url_ok(lurl, f->arg) &&
                  (f->site_url == NULL || strcmp(lurl, f->site_url) != 0);
            if (site + own > room) {
                *full = 1;
                break;
            }
            if ((site &&
                 (rc = insert_row(s, st, uid, "site", f->site_url, now, err)) != SLUICE_OK) ||
                (own && (rc = insert_row(s, st, uid, "launch", lurl, now, err)) != SLUICE_OK))
                goto out;
            room -= site + own;
            *queued += (size_t)(site + own);
        }
        cursor = store_column_int64(st, 0);
        looked++;
    }
    f->more = !*full && looked == limit;
    if (r != STORE_ROW && r != STORE_DONE) {
        rc = store_db_fail(s, err, "webhooks: read events");
        goto out;
    }
    store_finalize(st);
    st = NULL;
    rc = meta_set(s, K_CURSOR, cursor, err);
out:
    free(lurl);
    store_finalize(st);
    return rc;
}

sluice_err store_webhooks_fill(sluice_store_t *s,
                               store_webhook_fill_t *f,
                               size_t *queued_out,
                               int *full_out,
                               sluice_error_t *err)
{
    size_t queued = 0;
    int full = 0;
    sluice_err rc;

    if (s == NULL || f == NULL || f->queue_max < 1)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: store and a queue bound required");
    IN_WRITE_TXN(s, err, fill_locked(s, f, &queued, &full, err));
    if (queued_out != NULL)
        *queued_out = rc == SLUICE_OK ? queued : 0;
    if (full_out != NULL)
        *full_out = full;
    return rc;
}

/* ---- due rows and their outcome ----------------------------------------- */

void store_webhook_rows_free(store_webhook_row_t *rows, size_t n)
{
    size_t i;

    for (i = 0; rows != NULL && i < n; i++) {
        free(rows[i].delivery_id);
        free(rows[i].url);
        free(rows[i].launch_id);
        free(rows[i].event_name);
        free(rows[i].body);
    }
    free(rows);
}

static char *col_dup(store_stmt_t *st, int col)
{
    const char *v = store_column_str(st, col);

    return strdup(v != NULL ? v : "");
}

sluice_err store_webhooks_due(sluice_store_t *s,
                              int64_t now_ms,
                              size_t limit,
                              store_webhook_row_t **rows,
                              size_t *n,
                              int64_t *next_due_ms,
                              sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    store_webhook_row_t *out = NULL;
    size_t k = 0;
    int64_t next = INT64_MAX;
    sluice_err rc;
    int r;

    if (s == NULL || rows == NULL || n == NULL || limit == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: due: bad arguments");
    *rows = NULL;
    *n = 0;
    if ((out = calloc(limit, sizeof(*out))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "webhooks: out of memory");
    pthread_mutex_lock(&s->mu);
    rc = store_prepare(s,
                       "SELECT d.id, d.delivery_id, d.url, d.launch_id, d.event_name, d.body, "
                       "d.gseq, d.attempts, d.next_attempt_ms FROM webhook_deliveries d "
                       "JOIN (SELECT min(id) AS id FROM webhook_deliveries WHERE dead = 0 "
                       "GROUP BY url) h ON h.id = d.id ORDER BY d.next_attempt_ms, d.id",
                       &st, err);
    while (rc == SLUICE_OK && (r = store_step(st)) == STORE_ROW) {
        int64_t at = store_column_int64(st, 8);
        store_webhook_row_t *w = &out[k];

        if (at > now_ms) {
            next = at; /* ordered by time: the first not due is the earliest */
            break;
        }
        if (k == limit)
            continue;
        w->id = store_column_int64(st, 0);
        w->delivery_id = col_dup(st, 1);
        w->url = col_dup(st, 2);
        w->launch_id = col_dup(st, 3);
        w->event_name = col_dup(st, 4);
        w->body = col_dup(st, 5);
        w->gseq = store_column_int64(st, 6);
        w->attempts = store_column_int64(st, 7);
        w->next_attempt_ms = at;
        k++;
        if (!w->delivery_id || !w->url || !w->launch_id || !w->event_name || !w->body)
            rc = sluice_errorf(err, SLUICE_ENOMEM, "webhooks: out of memory");
    }
    if (rc == SLUICE_OK && r != STORE_ROW && r != STORE_DONE)
        rc = store_db_fail(s, err, "webhooks: read deliveries");
    store_finalize(st);
    pthread_mutex_unlock(&s->mu);
    if (rc != SLUICE_OK) {
        store_webhook_rows_free(out, k);
        return rc;
    }
    *rows = out;
    *n = k;
    if (next_due_ms != NULL)
        *next_due_ms = next;
    return SLUICE_OK;
}

static sluice_err delivered_locked(sluice_store_t *s, int64_t id, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if ((rc = store_prepare(s, "DELETE FROM webhook_deliveries WHERE id = ?1", &st, err)) !=
        SLUICE_OK)
        return rc;
    store_bind_int64(st, 1, id);
    rc = store_step_done(s, st, err);
    store_finalize(st);
    if (rc == SLUICE_OK)
        rc = meta_add(s, K_DELIVERED, 1, err);
    return rc;
}

sluice_err store_webhooks_delivered(sluice_store_t *s, int64_t id, sluice_error_t *err)
{
    sluice_err rc;

    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: store is NULL");
    IN_WRITE_TXN(s, err, delivered_locked(s, id, err));
    return rc;
}

static sluice_err failed_locked(sluice_store_t *s,
                                int64_t id,
                                int64_t next_ms,
                                bool dead,
                                const char *error,
                                sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    char text[ERROR_MAX + 1];
    sluice_err rc;

    snprintf(text, sizeof(text), "%s", error != NULL ? error : "");
    if ((rc = store_prepare(s,
                            "UPDATE webhook_deliveries SET attempts = attempts + 1, "
                            "next_attempt_ms = ?2, dead = ?3, last_error = ?4 WHERE id = ?1",
                            &st, err)) != SLUICE_OK)
        return rc;
    store_bind_int64(st, 1, id);
    store_bind_int64(st, 2, next_ms);
    store_bind_int64(st, 3, dead ? 1 : 0);
    store_bind_text(st, 4, text);
    rc = store_step_done(s, st, err);
    store_finalize(st);
    if (rc == SLUICE_OK)
        rc = meta_add(s, dead ? K_FAILED : K_RETRIES, 1, err);
    return rc;
}

sluice_err store_webhooks_failed(sluice_store_t *s,
                                 int64_t id,
                                 int64_t next_ms,
                                 bool dead,
                                 const char *error,
                                 sluice_error_t *err)
{
    sluice_err rc;

    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: store is NULL");
    IN_WRITE_TXN(s, err, failed_locked(s, id, next_ms, dead, error, err));
    return rc;
}

static sluice_err stats_locked(sluice_store_t *s, store_webhook_stats_t *o, sluice_error_t *err)
{
    sluice_err rc;

    if ((rc = query_i64(s, "SELECT count(*) FROM webhook_deliveries WHERE dead = 0", &o->pending,
                        err)) != SLUICE_OK ||
        (rc = query_i64(s, "SELECT count(*) FROM webhook_deliveries WHERE dead = 1", &o->dead,
                        err)) != SLUICE_OK ||
        (rc = query_i64(s, "SELECT COALESCE(MAX(gseq), 0) FROM events", &o->last_gseq, err)) !=
            SLUICE_OK ||
        (rc = meta_get(s, K_DELIVERED, &o->delivered, NULL, err)) != SLUICE_OK ||
        (rc = meta_get(s, K_RETRIES, &o->retries, NULL, err)) != SLUICE_OK ||
        (rc = meta_get(s, K_FAILED, &o->failed, NULL, err)) != SLUICE_OK)
        return rc;
    return meta_get(s, K_CURSOR, &o->cursor, NULL, err);
}

sluice_err store_webhooks_stats(sluice_store_t *s, store_webhook_stats_t *out, sluice_error_t *err)
{
    sluice_err rc;

    if (s == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "webhooks: stats: bad arguments");
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&s->mu);
    /* One read transaction: the counts and the counters agree. */
    if ((rc = store_exec(s, "BEGIN", err)) == SLUICE_OK) {
        rc = stats_locked(s, out, err);
        (void)store_exec(s, "COMMIT", NULL);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}
