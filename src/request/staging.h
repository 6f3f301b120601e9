/* SPDX-License-Identifier: Apache-2.0 */
/* staging.h - internal helpers of the staging module shared with the
 * launcher's staging hooks (src/supervise/staging_ops.c). */
#ifndef SLUICE_STAGING_INTERNAL_H
#define SLUICE_STAGING_INTERNAL_H

#include <stddef.h>

#include <sluice/error.h>

#include <stdbool.h>
#include <sys/stat.h>

#include <sluice/render.h>

/* The staging module and the launcher's staging hooks read the site's
 * storage and launcher members (sluice_config_t is opaque in public). */
#include "site/config_model.h"

/* Create `name` in `dirfd` with O_CREAT|O_EXCL|O_NOFOLLOW and `mode`, write
 * `len` bytes and, when `sync`, fsync.  As root the file takes the
 * directory's owner.  A partial file is removed on failure. */
sluice_err staging_write_file(int dirfd,
                              const char *name,
                              const char *data,
                              size_t len,
                              unsigned mode,
                              bool sync,
                              sluice_error_t *err);

/* Write secrets.env (0600) from name/value pairs, shell-quoted; the buffer
 * holding the values is wiped.  Nothing is written when n is 0.  `sync` as
 * for staging_write_file. */
sluice_err staging_write_secret_pairs(int dirfd,
                                      const char *const *names,
                                      const char *const *values,
                                      size_t n,
                                      bool sync,
                                      sluice_error_t *err);

/* sluice_staging_create() with the fsync of each file left to the caller
 * when `sync` is false (the launcher syncs the file system once per batch
 * chunk: staging_sync_root()).  `launch_fd_out` (may be NULL) receives the
 * launch directory <root>/<site>/<sha8> it walked through, open, for the
 * caller to close: no second walk from the root to reach it. */
sluice_err staging_create(const sluice_config_t *cfg,
                          const sluice_render_t *r,
                          bool known_launch,
                          bool sync,
                          int *dirfd_out,
                          int *launch_fd_out,
                          sluice_error_t *err);

/* staging_create() for a launch whose staging belongs to Slurm user
 * `user` (NULL: rest.user, as staging_create()).  `strict` (a site with
 * tenants): the owner is set whoever runs the service (an unknown local
 * user or a failed chown is an error), and a new site directory is the
 * service's with mode 0711. */
sluice_err staging_create_as(const sluice_config_t *cfg,
                             const sluice_render_t *r,
                             const char *user,
                             bool strict,
                             bool known_launch,
                             bool sync,
                             int *dirfd_out,
                             int *launch_fd_out,
                             sluice_error_t *err);

/* SLUICE_OK when this process can give staging to a tenant's user and
 * still reach it: root with CAP_CHOWN and CAP_DAC_OVERRIDE, or a process
 * granted both.  SLUICE_EPERM names what is missing. */
sluice_err staging_can_chown(sluice_error_t *err);

/* SLUICE_OK when the site directory <storage.root>/<site> does not exist
 * yet (it is made right), or is the service's with no write for group
 * and others and search for others (0711): every tenant's job must reach
 * its own staging through it; and storage.root is not writable by every
 * user without the sticky bit.  SLUICE_ECONFIG names the directory, its
 * owner and mode, and the fix. */
sluice_err staging_site_dir_ok(const sluice_config_t *cfg, sluice_error_t *err);

/* syncfs() of the file system that holds the storage root: every staging
 * write before it is durable when it returns, directory entries included. */
sluice_err staging_sync_root(const sluice_config_t *cfg, sluice_error_t *err);

/* ---- reading staging back (staging_tree.c) ------------------------------
 * Everything below the storage root is job-owned (base/jobfs.h): these open
 * an attempt's directory, and files in it, without following a link or
 * blocking.  `staging_dir` is the service-side path of a stored render,
 * <root>/<site>/<sha8>/<attempt dir>; the root is the path three components
 * up and is opened as configured, everything below it is walked. */

/* The attempt directory `staging_dir` (or a sibling of it named
 * `sibling`, e.g. "attempt-1.superseded-by-2", when not NULL).  *fd_out is
 * the caller's to close. */
sluice_err staging_open_attempt(const char *staging_dir,
                                const char *sibling,
                                int *fd_out,
                                sluice_error_t *err);

/* The directory `up` levels above the attempt directory `staging_dir` (1:
 * the launch directory <root>/<site>/<sha8>; 2: the site directory; 3: the
 * storage root), and the name of its child on the way down (copied to
 * `child`, `cap` bytes: the attempt directory's name for 1, <sha8> for 2).
 * *fd_out is the caller's to close. */
sluice_err staging_open_above(const char *staging_dir,
                              unsigned up,
                              int *fd_out,
                              char *child,
                              size_t cap,
                              sluice_error_t *err);

/* Open the job-owned file `rel` ("stdout.log", "exit/a") of the attempt
 * directory `staging_dir` for reading; st_out may be NULL. */
sluice_err staging_open_file(const char *staging_dir,
                             const char *rel,
                             int *fd_out,
                             struct stat *st_out,
                             sluice_error_t *err);

#endif /* SLUICE_STAGING_INTERNAL_H */
