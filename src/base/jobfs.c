/* SPDX-License-Identifier: Apache-2.0 */
/* jobfs.c - files in a tree that a job owns (see jobfs.h for the rule).
 *
 * Notes:
 * - The owner rule accepts the directory's owner (the job user, who made
 *   the file, or the service, which chowns what it writes to the
 *   directory's owner) and the service's own user (a service that could not
 *   hand staging to the job user).  A hard link has a link count above one
 *   whoever made it, so a link to a file outside the tree is refused even
 *   where the kernel's protected_hardlinks is off.
 * - O_NONBLOCK stays on the returned descriptor: it changes nothing for a
 *   regular file, and nothing else is returned.
 */
#define _GNU_SOURCE 1 /* O_NOFOLLOW, O_DIRECTORY, fstatat under -std=c11 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobfs.h"

#define OPEN_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
#define OPEN_FILE_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static sluice_err open_failed(const char *rel, int e, sluice_error_t *err)
{
    if (e == ENOENT)
        return sluice_errorf(err, SLUICE_ENOTFOUND, "%s: does not exist", rel);
    if (e == ELOOP || e == EMLINK)
        return sluice_errorf(err, SLUICE_EPERM,
                             "%s: a symbolic link in a job-owned tree (refused, never followed)",
                             rel);
    if (e == ENOTDIR)
        return sluice_errorf(err, SLUICE_EPERM, "%s: a path component is not a directory (refused)",
                             rel);
    return sluice_errorf(err, e == EACCES ? SLUICE_EPERM : SLUICE_EIO, "%s: %s", rel, strerror(e));
}

/* One path component as it may appear: not empty, not "." or "..". */
static bool component_ok(const char *c, size_t n)
{
    return n > 0 && !(c[0] == '.' && (n == 1 || (n == 2 && c[1] == '.')));
}

/* Every component of `rel` is one (no leading, trailing or double slash). */
static bool path_ok(const char *rel)
{
    while (*rel != '\0') {
        size_t n = strcspn(rel, "/");
        if (!component_ok(rel, n) || n >= 256)
            return false;
        rel += n;
        if (*rel == '/' && *++rel == '\0')
            return false;
    }
    return true;
}

sluice_err jobfs_open_dir(int dirfd, const char *rel, int *fd_out, sluice_error_t *err)
{
    int cur = -1, next;
    const char *p = rel != NULL ? rel : "";
    char comp[256];

    *fd_out = -1;
    if (!path_ok(p))
        return sluice_errorf(err, SLUICE_EPERM,
                             "%s: an empty, '.', '..' or over-long path component (refused)", p);
    if ((cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", p, strerror(errno));
    while (*p != '\0') {
        size_t n = strcspn(p, "/");

        memcpy(comp, p, n);
        comp[n] = '\0';
        next = openat(cur, comp, OPEN_DIR_FLAGS);
        if (next < 0) {
            int e = errno;
            close(cur);
            return open_failed(rel, e, err);
        }
        close(cur);
        cur = next;
        p += n;
        if (*p == '/')
            p++;
    }
    *fd_out = cur;
    return SLUICE_OK;
}

sluice_err
jobfs_open_file(int dirfd, const char *rel, int *fd_out, struct stat *st_out, sluice_error_t *err)
{
    char dir[4096];
    const char *name = rel, *slash;
    int pfd = -1, fd = -1;
    struct stat st, dst;
    sluice_err rc = SLUICE_OK;

    *fd_out = -1;
    if (rel == NULL || rel[0] == '\0' || !path_ok(rel))
        return sluice_errorf(err, SLUICE_EPERM,
                             "%s: an empty, '.', '..' or over-long path component (refused)",
                             rel != NULL ? rel : "");
    dir[0] = '\0';
    if ((slash = strrchr(rel, '/')) != NULL) {
        if ((size_t)(slash - rel) >= sizeof(dir))
            return sluice_errorf(err, SLUICE_EPERM, "%s: too long a path (refused)", rel);
        memcpy(dir, rel, (size_t)(slash - rel));
        dir[slash - rel] = '\0';
        name = slash + 1;
    }
    if (!component_ok(name, strlen(name)))
        return sluice_errorf(err, SLUICE_EPERM, "%s: not a file name (refused)", rel);
    if ((rc = jobfs_open_dir(dirfd, dir, &pfd, err)) != SLUICE_OK)
        return rc;
    if ((fd = openat(pfd, name, OPEN_FILE_FLAGS)) < 0) {
        rc = open_failed(rel, errno, err);
        goto out;
    }
    if (fstat(fd, &st) != 0 || fstat(pfd, &dst) != 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: fstat: %s", rel, strerror(errno));
        goto out;
    }
    if (!S_ISREG(st.st_mode))
        rc = sluice_errorf(err, SLUICE_EPERM, "%s: not a regular file (%s; refused)", rel,
                           S_ISFIFO(st.st_mode)   ? "a FIFO"
                           : S_ISDIR(st.st_mode)  ? "a directory"
                           : S_ISSOCK(st.st_mode) ? "a socket"
                                                  : "a device or other special file");
    else if (st.st_nlink != 1)
        rc = sluice_errorf(err, SLUICE_EPERM, "%s: has %lu hard links (refused: one expected)", rel,
                           (unsigned long)st.st_nlink);
    else if (st.st_uid != dst.st_uid && st.st_uid != geteuid())
        rc = sluice_errorf(err, SLUICE_EPERM,
                           "%s: owned by uid %lu, not by its directory's owner (uid %lu) nor "
                           "the service (refused)",
                           rel, (unsigned long)st.st_uid, (unsigned long)dst.st_uid);
out:
    if (pfd >= 0)
        close(pfd);
    if (rc != SLUICE_OK) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    if (st_out != NULL)
        *st_out = st;
    *fd_out = fd;
    return SLUICE_OK;
}

int jobfs_open_copy(const char *path, struct stat *st_out)
{
    struct stat st;
    int fd = open(path, OPEN_FILE_FLAGS);

    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return -1;
    }
    if (fd >= 0 && st_out != NULL)
        *st_out = st;
    return fd;
}

sluice_err jobfs_read_small(int dirfd,
                            const char *rel,
                            char *buf,
                            size_t cap,
                            size_t *len_out,
                            bool *truncated,
                            sluice_error_t *err)
{
    int fd = -1;
    size_t len = 0;
    ssize_t n;
    sluice_err rc;

    if (cap == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "%s: no room to read into", rel);
    buf[0] = '\0';
    if ((rc = jobfs_open_file(dirfd, rel, &fd, NULL, err)) != SLUICE_OK)
        return rc;
    while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = sluice_errorf(err, SLUICE_EIO, "%s: read: %s", rel, strerror(errno));
            break;
        }
        len += (size_t)n;
    }
    if (truncated != NULL) {
        char one;
        *truncated = rc == SLUICE_OK && len == cap - 1 && read(fd, &one, 1) == 1;
    }
    close(fd);
    buf[len] = '\0';
    if (len_out != NULL)
        *len_out = len;
    return rc;
}

static int remove_below(int parent, const char *name, unsigned depth)
{
    int fd;
    DIR *d;
    struct dirent *e;
    struct stat st;
    int rc = 0;

    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(parent, name, 0) != 0 && errno != ENOENT ? -1 : 0;
    if (depth > JOBFS_MAX_DEPTH) {
        errno = ELOOP;
        return -1;
    }
    if ((fd = openat(parent, name, OPEN_DIR_FLAGS)) < 0)
        return errno == ENOENT ? 0 : -1;
    if ((d = fdopendir(fd)) == NULL) {
        close(fd);
        return -1;
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        rc = remove_below(fd, e->d_name, depth + 1);
    }
    closedir(d);
    if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        rc = -1;
    return rc;
}

int jobfs_remove_tree(int parent, const char *name)
{
    if (name == NULL || !component_ok(name, strlen(name)) || strchr(name, '/') != NULL) {
        errno = EINVAL;
        return -1;
    }
    return remove_below(parent, name, 0);
}
