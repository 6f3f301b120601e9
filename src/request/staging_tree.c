/* SPDX-License-Identifier: Apache-2.0 */
/* staging_tree.c - a launch's staging directory read back by the service:
 * its attempt directory, the launch directory above it and the files in
 * them, opened as a job-owned tree (base/jobfs.h).
 *
 * Notes:
 * - The layout is staging.c's: <root>/<site>/<sha8>/attempt-<n>.  The
 *   storage root is the only trusted directory (the site configured it; the
 *   job user may own everything below, and so may rename or replace the
 *   site, launch and attempt directories); it is the stored path three
 *   components up, so neither the current configuration nor the path as a
 *   whole is ever followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/jobfs.h"
#include "staging.h"

/* Split `dir` into the trusted root (copied to `root`) and its last `keep`
 * components (copied to `rel`, joined by single slashes), with the last one
 * replaced by `sibling` when that is not NULL. */
static sluice_err split_staging(const char *dir,
                                unsigned keep,
                                const char *sibling,
                                char *root,
                                size_t root_cap,
                                char *rel,
                                size_t rel_cap,
                                sluice_error_t *err)
{
    size_t end, pos, cstart[4], cend[4], used = 0;
    unsigned k;
    int n;

    if (dir == NULL || dir[0] != '/' || keep == 0 || keep > 4)
        return sluice_errorf(err, SLUICE_EINVAL, "staging: %s is not an absolute path",
                             dir != NULL ? dir : "(none)");
    end = strlen(dir);
    while (end > 1 && dir[end - 1] == '/')
        end--;
    pos = end;
    for (k = 0; k < keep; k++) {
        cend[k] = pos;
        while (pos > 0 && dir[pos - 1] != '/')
            pos--;
        cstart[k] = pos;
        if (cstart[k] == cend[k])
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "staging: %s is not <root>/<site>/<launch>/<attempt>", dir);
        while (pos > 0 && dir[pos - 1] == '/')
            pos--;
    }
    n = snprintf(root, root_cap, "%.*s", (int)(pos > 0 ? pos : 1), pos > 0 ? dir : "/");
    if (n < 0 || (size_t)n >= root_cap)
        return sluice_errorf(err, SLUICE_EINVAL, "staging: %s: path too long", dir);
    rel[0] = '\0';
    for (k = keep; k-- > 0;) {
        const char *c = dir + cstart[k];
        int len = (int)(cend[k] - cstart[k]);
        if (k == 0 && sibling != NULL) {
            c = sibling;
            len = (int)strlen(sibling);
        }
        n = snprintf(rel + used, rel_cap - used, "%s%.*s", used ? "/" : "", len, c);
        if (n < 0 || (size_t)n >= rel_cap - used)
            return sluice_errorf(err, SLUICE_EINVAL, "staging: %s: path too long", dir);
        used += (size_t)n;
    }
    return SLUICE_OK;
}

/* Open the trusted root as configured (symlinks in it are the site's). */
static sluice_err open_root(const char *root, int *fd, sluice_error_t *err)
{
    if ((*fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return sluice_errorf(err, errno == ENOENT ? SLUICE_ENOTFOUND : SLUICE_EIO,
                             "staging: storage root %s: %s", root, strerror(errno));
    return SLUICE_OK;
}

sluice_err
staging_open_attempt(const char *staging_dir, const char *sibling, int *fd_out, sluice_error_t *err)
{
    char root[4096], rel[4096];
    int rfd = -1;
    sluice_err rc;

    *fd_out = -1;
    if (sibling != NULL && (sibling[0] == '\0' || strchr(sibling, '/') != NULL))
        return sluice_errorf(err, SLUICE_EINVAL, "staging: '%s' is not a directory name", sibling);
    if ((rc = split_staging(staging_dir, 3, sibling, root, sizeof(root), rel, sizeof(rel), err)) !=
            SLUICE_OK ||
        (rc = open_root(root, &rfd, err)) != SLUICE_OK)
        return rc;
    rc = jobfs_open_dir(rfd, rel, fd_out, err);
    close(rfd);
    if (rc != SLUICE_OK)
        sluice_error_prefix(err, "staging below %s", root);
    return rc;
}

sluice_err staging_open_above(
    const char *staging_dir, unsigned up, int *fd_out, char *child, size_t cap, sluice_error_t *err)
{
    char root[4096], rel[4096], *cut = NULL;
    int rfd = -1;
    unsigned k;
    sluice_err rc;

    *fd_out = -1;
    if (up < 1 || up > 3)
        return sluice_errorf(err, SLUICE_EINVAL, "staging: %u levels up is outside the tree", up);
    if ((rc = split_staging(staging_dir, 3, NULL, root, sizeof(root), rel, sizeof(rel), err)) !=
            SLUICE_OK ||
        (rc = open_root(root, &rfd, err)) != SLUICE_OK)
        return rc;
    /* rel is <site>/<sha8>/<attempt>: cut `up` components off its end, the
     * last one cut is the child. */
    for (k = 0; k < up; k++) {
        if (cut != NULL)
            *cut = '\0';
        cut = strrchr(rel, '/');
    }
    {
        const char *name = cut != NULL ? cut + 1 : rel;
        if ((size_t)snprintf(child, cap, "%s", name) >= cap) {
            close(rfd);
            return sluice_errorf(err, SLUICE_EINVAL, "staging: %s: name too long", staging_dir);
        }
    }
    if (cut != NULL)
        *cut = '\0';
    else
        rel[0] = '\0';
    rc = jobfs_open_dir(rfd, rel, fd_out, err);
    close(rfd);
    if (rc != SLUICE_OK)
        sluice_error_prefix(err, "staging below %s", root);
    return rc;
}

sluice_err staging_open_file(
    const char *staging_dir, const char *rel, int *fd_out, struct stat *st_out, sluice_error_t *err)
{
    int dfd = -1;
    sluice_err rc;

    *fd_out = -1;
    if ((rc = staging_open_attempt(staging_dir, NULL, &dfd, err)) != SLUICE_OK)
        return rc;
    rc = jobfs_open_file(dfd, rel, fd_out, st_out, err);
    close(dfd);
    if (rc != SLUICE_OK)
        sluice_error_prefix(err, "staging %s", staging_dir);
    return rc;
}
