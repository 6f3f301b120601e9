/* SPDX-License-Identifier: Apache-2.0 */
/* ops.h - the real implementations of the launcher's two function tables:
 * the cluster through the slurmrestd client (declared in cluster.h, which
 * this header includes), and staging on the shared storage root through
 * the render module's staging rules.
 *
 * The launcher (launcher.h) is written against sluice_cluster_ops_t and
 * sluice_staging_ops_t so that its tests can use fakes; a program that runs
 * launches for real fills both tables with sluice_cluster_rest_ops() and
 * the functions below.
 */
#ifndef SLUICE_OPS_H
#define SLUICE_OPS_H

#include <sluice/client.h>
#include <sluice/cluster.h>
#include <sluice/common.h>
#include <sluice/config.h>
#include <sluice/launch.h>
#include <sluice/launcher.h>
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Staging hooks for launches rendered with `cfg` and stored in `store`
 * (both borrowed for the lifetime of the table).  The staging directory of
 * a launch is the one its stored render names
 * (`<storage.root>/<site>/<sha8>/attempt-<n>`); `prepare` creates it (or
 * reuses it when a previous cycle created it) and writes secrets.env
 * without an fsync per file; `sync` makes every such write durable with one
 * syncfs of the storage file system (directory entries included);
 * `write_peers` writes peers.env (the variables of docs/rendering.md);
 * `archive` keeps stdout.log and stderr.log of every attempt in the store
 * (the last store.log_max_bytes bytes of each, or a row saying why there
 * is nothing: missing, refused by the job-owned rule), copies them into the
 * artifact directory when there is one (those of every superseded attempt
 * k into its attempt-<k>/ subdirectory), and removes the launch's staging.  Caller frees with
 * sluice_staging_ops_free(). */
SLUICE_API sluice_err sluice_staging_ops_new(const sluice_config_t *cfg,
                                             sluice_store_t *store,
                                             sluice_staging_ops_t *out,
                                             sluice_error_t *err);

/* A site with tenants (sluice_config_tenant_count() of `site`, borrowed:
 * it must outlive the table): the staging of a launch "<tenant>~<id>" is
 * made owned by that tenant's slurm_user, mode 0700, its files (secrets.env
 * included) too, and that of a launch of the default tenant by rest.user;
 * the site directory is the service's, mode 0711.  An owner that cannot be
 * set (a user unknown on this host, a failed chown) fails the prepare: no
 * directory of a tenant is ever left the service's.  SLUICE_EPERM when
 * this process cannot chown, or could not reach what it gave away (root,
 * or CAP_CHOWN and CAP_DAC_OVERRIDE, are needed): the message names the
 * reason.  A site without tenants: nothing changes. */
SLUICE_API sluice_err sluice_staging_ops_use_tenants(sluice_staging_ops_t *ops,
                                                     const sluice_config_t *site,
                                                     sluice_error_t *err);

/* Release what sluice_staging_ops_new() allocated.  NULL-safe. */
SLUICE_API void sluice_staging_ops_free(sluice_staging_ops_t *ops);

/* Fill the site-derived knobs of launcher options from `cfg` (borrowed:
 * strings point into it): the Slurm user, site and job name prefix, the
 * accounting miss budget and spacing, the submit absence rule, the pending
 * timeout, the poll interval, the read/cancel budget (poll.rpc_per_sec), the
 * submit budget (submit.per_sec) and the POSTs in flight (submit.in_flight).
 * Store, ops tables, clock and callbacks
 * are left as they are. */
SLUICE_API void sluice_launcher_opts_from_config(const sluice_config_t *cfg,
                                                 sluice_launcher_opts_t *lo);

/* The secret values of a launch for sluice_launcher_accept(): the
 * request's own values, then every secret_env name of the launch and of
 * the study (may be NULL) read through `getenv_fn`.  `*out` is a new array
 * of `*n_out` entries whose strings are borrowed from the launch and the
 * environment (caller frees the array with free()).  SLUICE_EINVAL names
 * the variable that is not set (never a value). */
SLUICE_API sluice_err sluice_launch_collect_secrets(const sluice_launch_t *launch,
                                                    const sluice_study_t *study,
                                                    sluice_getenv_fn getenv_fn,
                                                    void *getenv_arg,
                                                    sluice_secret_t **out,
                                                    size_t *n_out,
                                                    sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_OPS_H */
