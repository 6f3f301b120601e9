/* SPDX-License-Identifier: Apache-2.0 */
/* staging_owner.h - which store a launch's staging directory belongs to.
 *
 * Several services (two sites, two stores) may share one storage root and
 * even one site directory under it.  Each store has a random identity,
 * kept in its directory (`<state_dir>/store-id`, 32 hex digits, 0600,
 * made on first use), and each launch's staging directory
 * (`<root>/<site>/<sha8>/`) gets a marker file `.sluice-store` naming the
 * store that made it.  The recovery's scan then tells another store's
 * staging (left alone, not reported) from an orphan of its own or one of
 * unknown origin (reported).  See docs/operations.md.
 */
#ifndef SLUICE_SUPERVISE_STAGING_OWNER_H
#define SLUICE_SUPERVISE_STAGING_OWNER_H

#include <sluice/error.h>

#define STAGING_OWNER_MARKER ".sluice-store"
#define STAGING_OWNER_ID_FILE "store-id"
#define STAGING_OWNER_ID_LEN 32

/* The identity of the store in `store_dir` into `out` (33 bytes), made
 * (random, written once with O_EXCL semantics) when it has none yet. */
sluice_err staging_owner_store_id(const char *store_dir, char *out, sluice_error_t *err);

/* Write the marker naming `id` into the launch directory that holds the
 * attempt directory `attempt_dir` (its parent), unless one is there. */
sluice_err staging_owner_mark(const char *attempt_dir, const char *id, sluice_error_t *err);

/* 1 when the launch directory `launch_dir` carries a marker that names
 * another store than `id`; 0 when it names `id` or has none. */
int staging_owner_foreign(const char *launch_dir, const char *id);

#endif /* SLUICE_SUPERVISE_STAGING_OWNER_H */
