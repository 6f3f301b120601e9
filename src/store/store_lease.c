/* SPDX-License-Identifier: Apache-2.0 */
/* store_lease.c - the leadership lease of replicas sharing one store (the
 * one row of table `leadership`) and the fence of the launcher's event
 * appends (leader.h).
 *
 * Notes:
 * - Every lease call is one write transaction ("BEGIN IMMEDIATE": on
 *   PostgreSQL the store's advisory transaction lock), so campaigns of two
 *   replicas never interleave, and an append's fence check (made inside
 *   its own write transaction) sees either the epoch before a takeover or
 *   the one after, never half of it.
 * - Times are the database's (PostgreSQL: clock_timestamp(), read inside
 *   the transaction), so the replicas' own clocks never decide who leads.
 *   SQLite has one process per store: the host's clock.
 * - The fence epoch and the freshness of the lease live on the store
 *   handle the launcher writes through; the leader object (leader.c) sets
 *   them from its own handle's campaigns.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sluice/lease.h>
#include <sluice/log.h>

#include "store_int.h"

static atomic_ullong fenced_total;

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The database's clock in epoch ms, inside the caller's transaction. */
static sluice_err db_now_locked(sluice_store_t *s, int64_t *out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if (strcmp(s->ops->name, "postgresql") != 0) {
        *out = store_now_ms();
        return SLUICE_OK;
    }
    if ((rc =
             store_prepare(s, "SELECT CAST(extract(epoch FROM clock_timestamp()) * 1000 AS BIGINT)",
                           &st, err)) != SLUICE_OK)
        return rc;
    if (store_step(st) == STORE_ROW)
        *out = store_column_int64(st, 0);
    else
        rc = store_db_fail(s, err, "lease: read the database clock");
    store_finalize(st);
    return rc;
}

/* The row into *out (epoch 0 when there is none), inside the caller's
 * transaction. */
static sluice_err read_locked(sluice_store_t *s, sluice_store_lease_t *out, sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if ((rc = store_prepare(s, "SELECT epoch, holder, lease_until_ms FROM leadership WHERE id = 1",
                            &st, err)) != SLUICE_OK)
        return rc;
    switch (store_step(st)) {
    case STORE_ROW:
        out->epoch = store_column_int64(st, 0);
        snprintf(out->holder, sizeof(out->holder), "%s",
                 store_column_str(st, 1) != NULL ? store_column_str(st, 1) : "");
        out->lease_until_ms = store_column_int64(st, 2);
        break;
    case STORE_DONE:
        out->epoch = 0;
        out->holder[0] = '\0';
        out->lease_until_ms = 0;
        break;
    default:
        rc = store_db_fail(s, err, "lease: read");
        break;
    }
    store_finalize(st);
    return rc;
}

/* Run `sql` with parameters ?1 = a, ?2 = b (text), ?3 = c, ?4 = d; *changed
 * is the number of rows it changed. */
static sluice_err write_locked(sluice_store_t *s,
                               const char *sql,
                               int64_t a,
                               const char *b,
                               int64_t c,
                               int64_t d,
                               int64_t *changed,
                               sluice_error_t *err)
{
    store_stmt_t *st = NULL;
    sluice_err rc;

    if ((rc = store_prepare(s, sql, &st, err)) != SLUICE_OK)
        return rc;
    store_bind_int64(st, 1, a);
    store_bind_text(st, 2, b);
    store_bind_int64(st, 3, c);
    store_bind_int64(st, 4, d);
    if ((rc = store_step_done(s, st, err)) == SLUICE_OK)
        *changed = store_changes(s);
    store_finalize(st);
    return rc;
}

/* The decision of sluice_store_lease_campaign() inside its transaction. */
static sluice_err campaign_locked(sluice_store_t *s,
                                  const char *replica,
                                  int64_t epoch,
                                  int64_t lease_ms,
                                  sluice_store_lease_t *out,
                                  sluice_error_t *err)
{
    int64_t now = 0, changed = 0;
    sluice_err rc;

    if ((rc = db_now_locked(s, &now, err)) != SLUICE_OK ||
        (rc = read_locked(s, out, err)) != SLUICE_OK)
        return rc;
    out->now_ms = now;
    out->leader = 0;
    if (epoch > 0) {
        /* Renew: only the epoch and holder we lead at. */
        if (out->epoch != epoch || strcmp(out->holder, replica) != 0)
            return SLUICE_OK;
        rc = write_locked(s,
                          "UPDATE leadership SET lease_until_ms = ?3 + ?4 "
                          "WHERE id = 1 AND epoch = ?1 AND holder = ?2",
                          epoch, replica, now, lease_ms, &changed, err);
    } else if (out->epoch == 0) {
        rc = write_locked(s,
                          "INSERT INTO leadership (id, epoch, holder, lease_until_ms) "
                          "VALUES (1, ?1, ?2, ?3 + ?4)",
                          1, replica, now, lease_ms, &changed, err);
        epoch = 1;
    } else if (out->lease_until_ms < now) {
        /* Ended: take it over at the next epoch. */
        rc = write_locked(s,
                          "UPDATE leadership SET epoch = ?1 + 1, holder = ?2, "
                          "lease_until_ms = ?3 + ?4 WHERE id = 1 AND epoch = ?1",
                          out->epoch, replica, now, lease_ms, &changed, err);
        epoch = out->epoch + 1;
    } else {
        return SLUICE_OK; /* another replica's lease runs */
    }
    if (rc != SLUICE_OK || changed != 1)
        return rc;
    out->leader = 1;
    out->epoch = epoch;
    snprintf(out->holder, sizeof(out->holder), "%s", replica);
    out->lease_until_ms = now + lease_ms;
    return SLUICE_OK;
}

static sluice_err check_replica(const char *replica, sluice_error_t *err)
{
    if (replica == NULL || replica[0] == '\0' || strlen(replica) >= SLUICE_REPLICA_ID_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "lease: a replica id of 1-%d bytes is required",
                             SLUICE_REPLICA_ID_MAX - 1);
    return SLUICE_OK;
}

sluice_err sluice_store_lease_campaign(sluice_store_t *store,
                                       const char *replica,
                                       int64_t epoch,
                                       int64_t lease_ms,
                                       sluice_store_lease_t *out,
                                       sluice_error_t *err)
{
    sluice_store_lease_t got;
    sluice_err rc;

    if (store == NULL || out == NULL || lease_ms <= 0 || epoch < 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "lease: store, out, a positive lease and an epoch >= 0 are required");
    if ((rc = check_replica(replica, err)) != SLUICE_OK)
        return rc;
    memset(&got, 0, sizeof(got));
    pthread_mutex_lock(&store->mu);
    rc = store_exec(store, "BEGIN IMMEDIATE", err);
    if (rc == SLUICE_OK)
        rc = campaign_locked(store, replica, epoch, lease_ms, &got, err);
    if (rc == SLUICE_OK)
        rc = store_exec(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        store_rollback(store);
    pthread_mutex_unlock(&store->mu);
    if (rc == SLUICE_OK)
        *out = got;
    return rc;
}

sluice_err
sluice_store_lease_read(sluice_store_t *store, sluice_store_lease_t *out, sluice_error_t *err)
{
    sluice_store_lease_t got;
    sluice_err rc;

    if (store == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "lease: store and out are required");
    memset(&got, 0, sizeof(got));
    pthread_mutex_lock(&store->mu);
    rc = store_exec(store, "BEGIN", err);
    if (rc == SLUICE_OK) {
        rc = db_now_locked(store, &got.now_ms, err);
        if (rc == SLUICE_OK)
            rc = read_locked(store, &got, err);
        (void)store_exec(store, "COMMIT", NULL);
    }
    pthread_mutex_unlock(&store->mu);
    if (rc == SLUICE_OK)
        *out = got;
    return rc;
}

sluice_err sluice_store_lease_release(sluice_store_t *store,
                                      const char *replica,
                                      int64_t epoch,
                                      sluice_error_t *err)
{
    int64_t changed = 0;
    sluice_err rc;

    if (store == NULL || epoch <= 0)
        return sluice_errorf(err, SLUICE_EINVAL, "lease release: store and an epoch are required");
    if ((rc = check_replica(replica, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&store->mu);
    rc = store_exec(store, "BEGIN IMMEDIATE", err);
    if (rc == SLUICE_OK)
        rc = write_locked(store,
                          "UPDATE leadership SET lease_until_ms = ?3 "
                          "WHERE id = 1 AND epoch = ?1 AND holder = ?2",
                          epoch, replica, 0, 0, &changed, err);
    if (rc == SLUICE_OK)
        rc = store_exec(store, "COMMIT", err);
    if (rc != SLUICE_OK)
        store_rollback(store);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

/* ---- the fence ---------------------------------------------------------- */

void sluice_store_set_fence(sluice_store_t *store, int64_t epoch, int64_t fresh_until_ms)
{
    if (store == NULL)
        return;
    atomic_store(&store->fence_fresh_ms, fresh_until_ms);
    atomic_store(&store->fence_epoch, epoch);
}

int64_t sluice_store_fence(const sluice_store_t *store)
{
    return store != NULL ? atomic_load(&store->fence_epoch) : 0;
}

int sluice_store_fence_fresh(const sluice_store_t *store)
{
    const sluice_store_t *s = store;

    if (s == NULL || atomic_load(&s->fence_epoch) == 0)
        return 1;
    return atomic_load(&s->fence_epoch) > 0 && mono_ms() < atomic_load(&s->fence_fresh_ms);
}

uint64_t sluice_store_fenced_total(void)
{
    return atomic_load(&fenced_total);
}

sluice_err store_fence_check_locked(
    sluice_store_t *s, const char *name, const char *launch_id, size_t n, sluice_error_t *err)
{
    sluice_store_lease_t row;
    int64_t mine = atomic_load(&s->fence_epoch);
    char what[256];
    sluice_err rc;

    if (mine == 0)
        return SLUICE_OK;
    memset(&row, 0, sizeof(row));
    if ((rc = read_locked(s, &row, err)) != SLUICE_OK)
        return rc;
    if (row.epoch == mine)
        return SLUICE_OK;
    if (n > 1)
        snprintf(what, sizeof(what), "%zu events (the first: %s of launch %s)", n, name, launch_id);
    else
        snprintf(what, sizeof(what), "event %s of launch %s", name, launch_id);
    atomic_fetch_add(&fenced_total, 1);
    sluice_log(SLUICE_LOG_WARNING, "fenced: epoch %" PRId64 ", now %" PRId64 ": %s refused", mine,
               row.epoch, what);
    return sluice_errorf(err, SLUICE_ECONFLICT,
                         "fenced: epoch %" PRId64 ", now %" PRId64
                         ": %s refused (another replica leads)",
                         mine, row.epoch, what);
}
