/* SPDX-License-Identifier: Apache-2.0 */
/* supervisor.h - everything a process needs to supervise launches for real,
 * opened and closed as one: the store, the slurmrestd client, the cluster
 * operations over it (with submit.in_flight POSTs at once), the staging
 * operations on the storage root, and the launcher, recovered.
 *
 * `sluice serve`, `sluice launch --wait` and the benchmarks open one; the
 * launcher inside is driven by the caller (sluice_launcher_step/run/wait,
 * or the server's loop) and takes launches with sluice_accept().
 *
 * Notes:
 * - Opening takes the store's supervisor lock once (SLUICE_ECONFLICT when
 *   another process holds it), makes one launcher per cluster of the site,
 *   and recovers every live launch (each by its cluster's launcher) before
 *   it returns: a launch caught mid-submit gets `submit-uncertain`, one whose
 *   secrets were lost ends.
 * - One process, one supervisor per store.  Other processes may read and
 *   request (status, cancel) beside it.
 */
#ifndef SLUICE_SUPERVISOR_H
#define SLUICE_SUPERVISOR_H

#include <stddef.h>

#include <sluice/client.h>
#include <sluice/common.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/launcher.h>
#include <sluice/leader.h>
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Options; start from SLUICE_SUPERVISOR_OPTS_INIT.  Borrowed for the
 * lifetime of the supervisor. */
typedef struct {
    unsigned int version; /* SLUICE_SUPERVISOR_OPTS_VERSION: first, always */
    /* The store directory; NULL: the store's default ($SLUICE_STATE_DIR,
     * /var/lib/sluice for root, else $XDG_STATE_HOME/sluice). */
    const char *state_dir;
    /* Called on the launcher's thread for every transition (may be NULL). */
    sluice_launcher_transition_fn on_transition;
    void *transition_arg;
    /* POSTs in flight; 0: the site's submit.in_flight. */
    unsigned submit_in_flight;
    /* 1: one of several replicas (`sluice serve`) when the store is
     * PostgreSQL: the supervisor makes and starts a leader object
     * (leader.h, the site's ha.* keys) and does not recover; the caller
     * recovers when it leads (sluice_server_opts_t.leader).  Ignored with
     * SQLite. */
    int replicas;
} sluice_supervisor_opts_t;

/* Every field but `version` zero: each one's documented default. */
#define SLUICE_SUPERVISOR_OPTS_VERSION 1
#define SLUICE_SUPERVISOR_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_SUPERVISOR_OPTS_VERSION)

/* Initialise `opts` as SLUICE_SUPERVISOR_OPTS_INIT does, for `version`
 * (pass SLUICE_SUPERVISOR_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_supervisor_opts_init(sluice_supervisor_opts_t *opts,
                                                  unsigned int version,
                                                  sluice_error_t *err);

typedef struct sluice_supervisor sluice_supervisor_t;

/* Open the store, make the client and the cluster and staging operations
 * from `cfg` (borrowed: it must outlive the supervisor), make the launcher
 * with the site's options (sluice_launcher_opts_from_config) and recover
 * it.  `*orphans_out` (may be NULL) receives the number of orphan staging
 * directories recovery found.  A `cfg` without rest.user takes the Slurm
 * user from the token: call sluice_client_resolve_user() on it first, so
 * that staging (as root: owned by that user) sees it too; the launcher
 * takes it from the client either way.  Errors: SLUICE_ECONFLICT (the
 * store's lock is held), SLUICE_ESTORE, SLUICE_ECONFIG (also: no Slurm
 * user), SLUICE_EAUTH (no usable Slurm token), SLUICE_ENOMEM, and
 * recovery's.  Caller frees with sluice_supervisor_close(). */
SLUICE_API sluice_err sluice_supervisor_open(sluice_supervisor_t **out,
                                             const sluice_config_t *cfg,
                                             const sluice_supervisor_opts_t *opts,
                                             size_t *orphans_out,
                                             sluice_error_t *err);

/* Free every cluster's launcher, operations and client, then release the
 * lock and close the store, in that order.  Never writes to the store or
 * a cluster.  NULL-safe. */
SLUICE_API void sluice_supervisor_close(sluice_supervisor_t *sup);

/* Borrowed; valid until sluice_supervisor_close().  With several clusters
 * these are the first cluster's. */
SLUICE_API sluice_launcher_t *sluice_supervisor_launcher(const sluice_supervisor_t *sup);
SLUICE_API sluice_store_t *sluice_supervisor_store(const sluice_supervisor_t *sup);
/* The client of the launcher's thread (and of readiness checks); never
 * share it with another thread while the launcher runs. */
SLUICE_API sluice_client_t *sluice_supervisor_client(const sluice_supervisor_t *sup);
/* The leader object (borrowed), or NULL when standalone. */
SLUICE_API sluice_leader_t *sluice_supervisor_leader(const sluice_supervisor_t *sup);

/* Several clusters (the site's `clusters:`): one launcher (with its own
 * client, cluster and staging operations, poller and budgets) per cluster,
 * in the site's order; a site without `clusters:` has one.  Each launcher
 * is driven on a thread of its own if the caller wants an outage of one
 * cluster never to delay another.  Borrowed; NULL past the count. */
SLUICE_API size_t sluice_supervisor_cluster_count(const sluice_supervisor_t *sup);
SLUICE_API sluice_launcher_t *sluice_supervisor_launcher_at(const sluice_supervisor_t *sup,
                                                            size_t i);
SLUICE_API sluice_client_t *sluice_supervisor_client_at(const sluice_supervisor_t *sup, size_t i);
SLUICE_API const sluice_config_t *sluice_supervisor_cluster_config(const sluice_supervisor_t *sup,
                                                                   size_t i);
/* The launcher of the cluster named `cluster` (NULL or "": the first), or
 * NULL when no cluster has the name (sluice_accept_cluster()'s name goes
 * here). */
SLUICE_API sluice_launcher_t *sluice_supervisor_launcher_for(const sluice_supervisor_t *sup,
                                                             const char *cluster);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SUPERVISOR_H */
