/* SPDX-License-Identifier: Apache-2.0 */
/* lease.h - the store's leadership lease and the fence of event appends:
 * the one row of table `leadership` that replicas of `sluice serve` sharing
 * a PostgreSQL store campaign for, and the epoch a store handle checks
 * before each launcher write.  The leader object that campaigns on a thread
 * of its own is leader.h (the supervise layer); this is the store's part.
 *
 * Notes:
 * - The lease: an epoch that only grows, the holder (a replica id) and the
 *   time the lease ends, in the database's clock (PostgreSQL's
 *   clock_timestamp(); with SQLite, this host's clock).
 * - Fencing: a store handle with a fence epoch (sluice_store_set_fence)
 *   refuses every event append whose transaction finds another epoch in
 *   the table, and logs `fenced: epoch N, now M: <what> refused`.  Creating
 *   launches and asking for a cancel (any replica's writes) are never
 *   fenced.
 */
#ifndef SLUICE_LEASE_H
#define SLUICE_LEASE_H

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

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_LEASE_H */
