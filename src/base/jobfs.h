/* SPDX-License-Identifier: Apache-2.0 */
/* jobfs.h - files in a tree that a job owns, read and removed by the service
 * without trusting anything in it.
 *
 * A launch's staging directory belongs to the job user: its workload may
 * replace any file or directory in it at any moment, with a symlink to a
 * file only the service can read, a FIFO that blocks whoever opens it, a
 * hard link, or a tree deep enough to exhaust a recursive walk.  So:
 * - a path below a trusted directory fd is walked one component at a time
 *   with openat(O_NOFOLLOW|O_DIRECTORY): a symlink anywhere refuses the
 *   path, never follows it, and no component may be empty, "." or "..";
 * - a file is opened O_NOFOLLOW|O_NONBLOCK|O_NOCTTY (a FIFO or a device
 *   answers at once instead of blocking the open) and judged by fstat() of
 *   what was opened: a regular file, one link, owned by the owner of the
 *   directory that holds it or by the service's own user;
 * - a tree is removed with unlinkat() relative to directory fds, to a
 *   bounded depth.
 * Errors: SLUICE_ENOTFOUND when a component does not exist, SLUICE_EPERM
 * for what the rule refuses (the text says which rule), SLUICE_EIO for
 * anything else.  Texts name `rel` and never hold file content.
 */
#ifndef SLUICE_BASE_JOBFS_H
#define SLUICE_BASE_JOBFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include <sluice/error.h>

/* How deep jobfs_remove_tree() goes below the directory it removes. */
#define JOBFS_MAX_DEPTH 32

/* Open the directory `rel` ("a/b", "" for `dirfd` itself) below the trusted
 * directory `dirfd`.  *fd_out is the caller's to close. */
sluice_err jobfs_open_dir(int dirfd, const char *rel, int *fd_out, sluice_error_t *err);

/* Open the job-owned file `rel` below `dirfd` for reading.  *fd_out is the
 * caller's to close; `st_out` (may be NULL) receives its fstat(). */
sluice_err
jobfs_open_file(int dirfd, const char *rel, int *fd_out, struct stat *st_out, sluice_error_t *err);

/* Open the file `path` that the service itself made from job output (an
 * archived log) for reading, without following a link or blocking: the fd
 * (the caller's to close) when it is a regular file, else -1.  `st_out`
 * (may be NULL) receives its fstat(). */
int jobfs_open_copy(const char *path, struct stat *st_out);

/* Read at most cap - 1 bytes from the start of the job-owned file `rel`
 * below `dirfd` into `buf`, NUL-terminated; *len_out (may be NULL) is the
 * count.  A file longer than that is read in part: *truncated (may be NULL)
 * says so. */
sluice_err jobfs_read_small(int dirfd,
                            const char *rel,
                            char *buf,
                            size_t cap,
                            size_t *len_out,
                            bool *truncated,
                            sluice_error_t *err);

/* Remove `name` below `parent` (a file, or a directory and everything in
 * it, at most JOBFS_MAX_DEPTH levels), never following a link.  A name that
 * is already gone is success.  0, or -1 with errno set (ELOOP when the tree
 * is deeper than the limit). */
int jobfs_remove_tree(int parent, const char *name);

#endif /* SLUICE_BASE_JOBFS_H */
