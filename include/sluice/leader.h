/* SPDX-License-Identifier: Apache-2.0 */
/* leader.h - one leader among the replicas of `sluice serve` that share a
 * PostgreSQL store: the lease row in the store, the fence of the
 * launcher's writes, and the leader object that campaigns and renews on a
 * thread of its own.
 *
 * Notes:
 * - The lease is the one row of table `leadership`: an epoch that only
 *   grows, the holder (a replica id) and the time the lease ends, in the
 *   database's clock (PostgreSQL's clock_timestamp(); with SQLite, which
 *   has one supervisor per store anyway, this host's clock).
 * - A replica leads while its lease is fresh: it renews every renew_ms;
 *   another replica takes over (epoch + 1) only once the lease has ended.
 * - Fencing: a store handle with a fence epoch (sluice_store_set_fence)
 *   refuses every event append whose transaction finds another epoch in
 *   the table, and logs `fenced: epoch N, now M: <what> refused`.  Creating
 *   launches and asking for a cancel (any replica's writes) are never
 *   fenced.
 * - Log lines: `leadership: leader now (epoch N)`, `leadership: lost
 *   (reason)`.
 */
#ifndef SLUICE_LEADER_H
#define SLUICE_LEADER_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/common.h>
#include <sluice/error.h>
#include <sluice/lease.h>
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the leader object -------------------------------------------------- */

/* Options; start from SLUICE_LEADER_OPTS_INIT. */
typedef struct {
    unsigned int version;   /* SLUICE_LEADER_OPTS_VERSION: first, always */
    const char *replica_id; /* NULL or "": $SLUICE_REPLICA_ID, else <hostname>:<pid> */
    int64_t lease_ms;       /* 0: 8000 */
    int64_t renew_ms;       /* 0: 2000; must be less than lease_ms / 2 */
} sluice_leader_opts_t;

#define SLUICE_LEADER_OPTS_VERSION 1
#define SLUICE_LEADER_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_LEADER_OPTS_VERSION)

/* Initialise `opts` as SLUICE_LEADER_OPTS_INIT does, for `version`
 * (pass SLUICE_LEADER_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_leader_opts_init(sluice_leader_opts_t *opts,
                                              unsigned int version,
                                              sluice_error_t *err);

typedef enum {
    SLUICE_ROLE_STANDALONE = 0, /* no replicas: the only supervisor of its store */
    SLUICE_ROLE_FOLLOWER = 1,
    SLUICE_ROLE_LEADER = 2
} sluice_role;

/* "standalone", "follower", "leader"; static. */
SLUICE_API const char *sluice_role_name(sluice_role role);

/* What the leader object knows, copied out. */
typedef struct {
    sluice_role role;
    int64_t epoch;                      /* leading: ours; else the table's (0: unknown) */
    char leader[SLUICE_REPLICA_ID_MAX]; /* the holder when known, else "" */
    char replica[SLUICE_REPLICA_ID_MAX];
    int db_ok;        /* the last call to the database succeeded */
    char reason[256]; /* !db_ok: why (never a password) */
    uint64_t changes; /* times this replica became leader or stopped leading */
} sluice_leader_status_t;

typedef struct sluice_leader sluice_leader_t;

/* Make the leader object of the replica whose launcher writes through
 * `fenced` (borrowed; it must outlive the object).  It campaigns through a
 * handle of its own (sluice_store_reopen), so a busy launcher never delays
 * a renewal.  Until it leads, `fenced` refuses every append (fence -1).
 * Errors: SLUICE_EINVAL, SLUICE_ECONFIG (bad lease_ms / renew_ms, naming
 * ha.lease_ms / ha.renew_ms), SLUICE_ESTORE, SLUICE_ENOMEM.  Caller frees
 * with sluice_leader_free(). */
SLUICE_API sluice_err sluice_leader_new(sluice_leader_t **out,
                                        sluice_store_t *fenced,
                                        const sluice_leader_opts_t *opts,
                                        sluice_error_t *err);

/* Start the campaign thread.  Errors: SLUICE_ENOMEM (no thread). */
SLUICE_API sluice_err sluice_leader_start(sluice_leader_t *l, sluice_error_t *err);

/* One campaign or renewal now, on the caller's thread (what the thread
 * does every renew_ms; tests drive it with this). */
SLUICE_API void sluice_leader_tick(sluice_leader_t *l);

/* Stop the thread and release the lease when leading (a clean shutdown:
 * another replica takes over at its next campaign); the store handle
 * given to sluice_leader_new() is fenced with -1 from then on.  Idempotent;
 * NULL-safe. */
SLUICE_API void sluice_leader_stop(sluice_leader_t *l);

/* sluice_leader_stop(), then free.  NULL-safe. */
SLUICE_API void sluice_leader_free(sluice_leader_t *l);

/* The epoch this replica leads at while its lease is fresh, else 0. */
SLUICE_API int64_t sluice_leader_epoch(sluice_leader_t *l);

/* Copy the current status into *out. */
SLUICE_API void sluice_leader_status(sluice_leader_t *l, sluice_leader_status_t *out);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_LEADER_H */
