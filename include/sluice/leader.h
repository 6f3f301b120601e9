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
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the lease row ------------------------------------------------------ */

#define SLUICE_REPLICA_ID_MAX 128

/* The lease as one call found or left it. */
typedef struct {
    int leader;                         /* 1: the caller holds the lease at `epoch` */
    int64_t epoch;                      /* the table's epoch (0: no row yet) */
    char holder[SLUICE_REPLICA_ID_MAX]; /* the table's holder ("" when no row) */
    int64_t lease_until_ms;             /* the lease's end, database clock */
    int64_t now_ms;                     /* the database clock at the call */
} sluice_store_lease_t;

/* One campaign or renewal by `replica`, in one write transaction:
 * - `epoch` > 0 (the caller leads at it): renew (lease_until = now +
 *   lease_ms) if the table still holds that epoch and holder; else the
 *   caller is told it does not lead (it never takes over in this call);
 * - `epoch` == 0: take the lease (epoch + 1, or 1 when there is no row)
 *   when it has ended, else report the holder.
 * `*out` is filled on success.  Errors: SLUICE_EINVAL, SLUICE_ESTORE. */
SLUICE_API sluice_err sluice_store_lease_campaign(sluice_store_t *store,
                                                  const char *replica,
                                                  int64_t epoch,
                                                  int64_t lease_ms,
                                                  sluice_store_lease_t *out,
                                                  sluice_error_t *err);

/* Read the lease without changing it (out->leader is 0). */
SLUICE_API sluice_err sluice_store_lease_read(sluice_store_t *store,
                                              sluice_store_lease_t *out,
                                              sluice_error_t *err);

/* End `replica`'s lease at `epoch` now (a clean shutdown: another replica
 * takes over at its next campaign).  Nothing happens when the table holds
 * another epoch or holder. */
SLUICE_API sluice_err sluice_store_lease_release(sluice_store_t *store,
                                                 const char *replica,
                                                 int64_t epoch,
                                                 sluice_error_t *err);

/* Fence this handle's event appends with `epoch` (0: no fence; -1: refuse
 * every append until an epoch is set), and note that the lease is fresh
 * until `fresh_until_ms` (CLOCK_MONOTONIC, ms; see
 * sluice_store_fence_fresh).  Thread-safe. */
SLUICE_API void
sluice_store_set_fence(sluice_store_t *store, int64_t epoch, int64_t fresh_until_ms);

/* The fence epoch of this handle (0: none). */
SLUICE_API int64_t sluice_store_fence(const sluice_store_t *store);

/* 1 when this handle may act on the cluster: no fence, or a fence whose
 * lease is still fresh (CLOCK_MONOTONIC now < fresh_until_ms).  The
 * launcher asks before each POST. */
SLUICE_API int sluice_store_fence_fresh(const sluice_store_t *store);

/* Appends refused by a fence in this process so far. */
SLUICE_API uint64_t sluice_store_fenced_total(void);

/* ---- the leader object -------------------------------------------------- */

/* Options; start from SLUICE_LEADER_OPTS_INIT. */
typedef struct {
    const char *replica_id; /* NULL or "": $SLUICE_REPLICA_ID, else <hostname>:<pid> */
    int64_t lease_ms;       /* 0: 8000 */
    int64_t renew_ms;       /* 0: 2000; must be less than lease_ms / 2 */
} sluice_leader_opts_t;

#define SLUICE_LEADER_OPTS_INIT                                                                    \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

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
