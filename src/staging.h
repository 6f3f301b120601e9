/* SPDX-License-Identifier: Apache-2.0 */
/* staging.h - internal helpers of the staging module shared with the
 * launcher's staging hooks (src/staging_ops.c). */
#ifndef SLUICE_STAGING_INTERNAL_H
#define SLUICE_STAGING_INTERNAL_H

#include <stddef.h>

#include <sluice/error.h>

/* Create `name` in `dirfd` with O_CREAT|O_EXCL|O_NOFOLLOW and `mode`, write
 * `len` bytes and fsync.  As root the file takes the directory's owner.
 * A partial file is removed on failure. */
sluice_err staging_write_file(
    int dirfd, const char *name, const char *data, size_t len, unsigned mode, sluice_error_t *err);

/* Write secrets.env (0600) from name/value pairs, shell-quoted; the buffer
 * holding the values is wiped.  Nothing is written when n is 0. */
sluice_err staging_write_secret_pairs(
    int dirfd, const char *const *names, const char *const *values, size_t n, sluice_error_t *err);

#endif /* SLUICE_STAGING_INTERNAL_H */
