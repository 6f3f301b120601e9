/* SPDX-License-Identifier: Apache-2.0 */
/* leader.c - the leader object of a replica (leader.h): a thread that
 * campaigns for the store's lease, renews it while it leads, and keeps the
 * fence of the launcher's store handle in step.
 *
 * Purpose:
 *   Replicas of `sluice serve` share one PostgreSQL store; exactly one of
 *   them may submit, poll and cancel.  This object decides whether this
 *   replica is that one.  The serve loop asks sluice_leader_epoch() before
 *   every launcher cycle; the launcher asks its store handle
 *   (sluice_store_fence_fresh) before every POST; the store refuses every
 *   event append of an epoch the table no longer holds.
 *
 * Notes:
 * - Campaigns run through a store handle of the object's own, on its own
 *   thread: a launcher busy with the store or with Slurm never delays a
 *   renewal.
 * - Leading ends at once when a renewal fails or finds another epoch, and
 *   by itself when the last successful renewal (monotonic clock, taken
 *   before the call) is older than lease_ms - renew_ms / 2, so a replica
 *   that cannot reach the database stops before another can take over.
 * - On losing the lead the launcher's handle keeps the lost epoch as its
 *   fence, no longer fresh (no POST; an append passes only while no other
 *   replica took over); a clean stop fences it with -1 (every append
 *   refused).
 * - A database that cannot be reached is logged once, and once more when
 *   it answers again.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/leader.h>
#include <sluice/log.h>

#include "base/opts.h"

#define DEFAULT_LEASE_MS 8000
#define DEFAULT_RENEW_MS 2000

struct sluice_leader {
    sluice_store_t *fenced; /* borrowed: the launcher's handle */
    sluice_store_t *own;    /* campaigns */
    int64_t lease_ms, renew_ms, margin_ms;
    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;
    pthread_t th;
    bool started, stop;
    int64_t epoch;       /* > 0 while leading */
    int64_t fresh_until; /* monotonic ms */
    bool down_logged;
    sluice_leader_status_t st;
};

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *sluice_role_name(sluice_role role)
{
    switch (role) {
    case SLUICE_ROLE_LEADER:
        return "leader";
    case SLUICE_ROLE_FOLLOWER:
        return "follower";
    default:
        return "standalone";
    }
}

/* The replica id: the option, else $SLUICE_REPLICA_ID, else
 * <hostname>:<pid>. */
static sluice_err pick_id(char *buf, size_t size, const char *opt, sluice_error_t *err)
{
    const char *env = getenv("SLUICE_REPLICA_ID");
    char host[256];

    if (opt == NULL || opt[0] == '\0')
        opt = env;
    if (opt != NULL && opt[0] != '\0') {
        if (strlen(opt) >= size)
            return sluice_errorf(err, SLUICE_ECONFIG, "ha.replica_id: at most %zu bytes", size - 1);
        snprintf(buf, size, "%s", opt);
        return SLUICE_OK;
    }
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, size, "%.100s:%ld", host, (long)getpid());
    return SLUICE_OK;
}

sluice_err sluice_leader_new(sluice_leader_t **out,
                             sluice_store_t *fenced,
                             const sluice_leader_opts_t *opts,
                             sluice_error_t *err)
{
    static const sluice_leader_opts_t defaults = SLUICE_LEADER_OPTS_INIT;
    sluice_leader_t *l = NULL;
    pthread_condattr_t ca;
    sluice_err rc;

    if (out == NULL || fenced == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "leader: out and a store are required");
    if (opts == NULL)
        opts = &defaults;
    if ((rc = opts_check_version("leader", opts->version, SLUICE_LEADER_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    if ((l = calloc(1, sizeof(*l))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "leader: out of memory");
    l->lease_ms = opts->lease_ms > 0 ? opts->lease_ms : DEFAULT_LEASE_MS;
    l->renew_ms = opts->renew_ms > 0 ? opts->renew_ms : DEFAULT_RENEW_MS;
    l->margin_ms = l->renew_ms / 2;
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    l->fenced = fenced;
    l->st.role = SLUICE_ROLE_FOLLOWER;
    if (opts->lease_ms < 0 || l->lease_ms < 1000) {
        rc = sluice_errorf(err, SLUICE_ECONFIG, "ha.lease_ms: %" PRId64 " ms is less than 1000",
                           opts->lease_ms);
        goto fail;
    }
    if (opts->renew_ms < 0 || l->renew_ms * 2 >= l->lease_ms) {
        rc = sluice_errorf(err, SLUICE_ECONFIG,
                           "ha.renew_ms: %" PRId64 " ms must be less than half of ha.lease_ms "
                           "(%" PRId64 " ms)",
                           l->renew_ms, l->lease_ms);
        goto fail;
    }
    if ((rc = pick_id(l->st.replica, sizeof(l->st.replica), opts->replica_id, err)) != SLUICE_OK ||
        (rc = sluice_store_reopen(&l->own, fenced, err)) != SLUICE_OK)
        goto fail;
    l->st.db_ok = 1;
    sluice_store_set_fence(fenced, -1, 0); /* a follower until it wins */
    *out = l;
    return SLUICE_OK;
fail:
    sluice_leader_free(l);
    return rc;
}

/* Under l->mu: stop leading now.  The handle keeps the lost epoch as its
 * fence, no longer fresh: no POST, and every append is checked against
 * the table (refused once another replica took over). */
static void lose_locked(sluice_leader_t *l, const char *reason)
{
    sluice_log(SLUICE_LOG_WARNING, "leadership: lost (%s)", reason);
    sluice_store_set_fence(l->fenced, l->epoch, 0);
    l->epoch = 0;
    l->fresh_until = 0;
    l->st.role = SLUICE_ROLE_FOLLOWER;
    l->st.changes++;
}

void sluice_leader_tick(sluice_leader_t *l)
{
    sluice_error_t e = SLUICE_ERROR_INIT;
    sluice_store_lease_t got;
    int64_t mine, t0 = mono_ms();
    char why[sizeof(e.text) + 64];
    sluice_err rc;

    if (l == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    mine = l->epoch;
    pthread_mutex_unlock(&l->mu);
    memset(&got, 0, sizeof(got));
    rc = sluice_store_lease_campaign(l->own, l->st.replica, mine, l->lease_ms, &got, &e);
    pthread_mutex_lock(&l->mu);
    if (rc != SLUICE_OK) {
        l->st.db_ok = 0;
        snprintf(l->st.reason, sizeof(l->st.reason), "%s", e.text);
        if (!l->down_logged)
            sluice_log(SLUICE_LOG_ERR, "leadership: the database cannot be reached: %s", e.text);
        l->down_logged = true;
        if (l->epoch > 0) {
            snprintf(why, sizeof(why), "database: %s", e.text);
            lose_locked(l, why);
        }
    } else {
        if (l->down_logged)
            sluice_log(SLUICE_LOG_NOTICE, "leadership: the database answers again");
        l->down_logged = false;
        l->st.db_ok = 1;
        l->st.reason[0] = '\0';
        if (got.leader) {
            if (l->epoch == 0) {
                sluice_log(SLUICE_LOG_NOTICE, "leadership: leader now (epoch %" PRId64 ")",
                           got.epoch);
                l->st.changes++;
            }
            l->epoch = got.epoch;
            l->fresh_until = t0 + l->lease_ms - l->margin_ms;
            l->st.role = SLUICE_ROLE_LEADER;
            sluice_store_set_fence(l->fenced, got.epoch, l->fresh_until);
        } else if (l->epoch > 0) {
            snprintf(why, sizeof(why), "epoch %" PRId64 " is held by %s", got.epoch, got.holder);
            lose_locked(l, why);
        }
        l->st.epoch = got.epoch;
        snprintf(l->st.leader, sizeof(l->st.leader), "%s", got.holder);
    }
    if (l->epoch > 0 && mono_ms() >= l->fresh_until)
        lose_locked(l, "the lease was not renewed in time");
    pthread_mutex_unlock(&l->mu);
}

static void *run(void *arg)
{
    sluice_leader_t *l = arg;
    int64_t follow_ms = l->renew_ms / 4 < 100    ? 100
                        : l->renew_ms / 4 > 1000 ? 1000
                                                 : l->renew_ms / 4;

    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        int64_t wait, due;
        struct timespec ts;

        pthread_mutex_unlock(&l->mu);
        sluice_leader_tick(l);
        pthread_mutex_lock(&l->mu);
        /* Leading: renew every renew_ms, and wake at the end of freshness
         * to stop by itself.  Following: campaign often, so that a lease
         * that ended is taken over soon. */
        wait = l->epoch > 0 ? l->renew_ms : follow_ms;
        due = mono_ms() + wait;
        ts.tv_sec = (time_t)(due / 1000);
        ts.tv_nsec = (long)(due % 1000) * 1000000L;
        while (!l->stop && mono_ms() < due)
            if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) == ETIMEDOUT)
                break;
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

sluice_err sluice_leader_start(sluice_leader_t *l, sluice_error_t *err)
{
    if (l == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "leader: required");
    if (l->started)
        return SLUICE_OK;
    l->stop = false;
    if (pthread_create(&l->th, NULL, run, l) != 0)
        return sluice_errorf(err, SLUICE_ENOMEM, "leader: cannot start the campaign thread");
    l->started = true;
    return SLUICE_OK;
}

void sluice_leader_stop(sluice_leader_t *l)
{
    if (l == NULL)
        return;
    if (l->started) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_signal(&l->cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->th, NULL);
        l->started = false;
    }
    if (l->epoch > 0) {
        sluice_error_t e = SLUICE_ERROR_INIT;

        sluice_store_set_fence(l->fenced, -1, 0);
        if (sluice_store_lease_release(l->own, l->st.replica, l->epoch, &e) == SLUICE_OK)
            sluice_log(SLUICE_LOG_NOTICE, "leadership: released (epoch %" PRId64 ")", l->epoch);
        else
            sluice_log(SLUICE_LOG_WARNING, "leadership: release: %s", e.text);
        pthread_mutex_lock(&l->mu);
        l->epoch = 0;
        l->fresh_until = 0;
        l->st.role = SLUICE_ROLE_FOLLOWER;
        pthread_mutex_unlock(&l->mu);
    }
}

void sluice_leader_free(sluice_leader_t *l)
{
    if (l == NULL)
        return;
    sluice_leader_stop(l);
    sluice_store_close(l->own);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

int64_t sluice_leader_epoch(sluice_leader_t *l)
{
    int64_t epoch = 0;

    if (l == NULL)
        return 0;
    pthread_mutex_lock(&l->mu);
    if (l->epoch > 0 && mono_ms() < l->fresh_until)
        epoch = l->epoch;
    pthread_mutex_unlock(&l->mu);
    return epoch;
}

void sluice_leader_status(sluice_leader_t *l, sluice_leader_status_t *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (l == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    *out = l->st;
    if (l->epoch > 0 && mono_ms() >= l->fresh_until)
        out->role = SLUICE_ROLE_FOLLOWER;
    pthread_mutex_unlock(&l->mu);
}

sluice_err
sluice_leader_opts_init(sluice_leader_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_leader_opts_t tmpl = SLUICE_LEADER_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "leader", version, SLUICE_LEADER_OPTS_VERSION, err);
}
