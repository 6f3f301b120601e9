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

/* Write the marker naming `id` into the launch directory `launch_fd`
 * (shown as `shown` in errors), unless one is there. */
sluice_err
staging_owner_mark(int launch_fd, const char *shown, const char *id, sluice_error_t *err);

/* 1 when the launch directory `name` below the site directory `site_fd`
 * carries a marker that names another store than `id`; 0 when it names
 * `id`, has none, or cannot be read as a job-owned file (base/jobfs.h). */
int staging_owner_foreign(int site_fd, const char *name, const char *id);

#endif /* SLUICE_SUPERVISE_STAGING_OWNER_H */
