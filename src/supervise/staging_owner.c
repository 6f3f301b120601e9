/* SPDX-License-Identifier: Apache-2.0 */
/* staging_owner.c - the store's identity and the staging marker that names
 * it (see staging_owner.h).
 *
 * Notes:
 * - The identity is written to a temporary file and linked into place, so
 *   two processes that open a new store at once agree on one identity (the
 *   loser reads the winner's).
 * - A marker is never overwritten: a launch directory keeps the identity
 *   of the store that made it.
 * - A staging directory without a marker (made before markers existed, or
 *   by hand) is of unknown origin and reported as an orphan, as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/jobfs.h"
#include "staging_owner.h"

/* Read an identity from `path` into out; 0, or -1 (errno set). */
static int read_id(const char *path, char *out)
{
    char buf[STAGING_OWNER_ID_LEN + 2];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    if (n < STAGING_OWNER_ID_LEN ||
        strspn(buf, "0123456789abcdef") != (size_t)STAGING_OWNER_ID_LEN) {
        errno = EINVAL;
        return -1;
    }
    memcpy(out, buf, STAGING_OWNER_ID_LEN);
    out[STAGING_OWNER_ID_LEN] = '\0';
    return 0;
}

static int write_all(int fd, const char *text)
{
    size_t len = strlen(text);

    return write(fd, text, len) == (ssize_t)len ? 0 : -1;
}

sluice_err staging_owner_store_id(const char *store_dir, char *out, sluice_error_t *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[STAGING_OWNER_ID_LEN / 2];
    char path[4200], tmp[4300], text[STAGING_OWNER_ID_LEN + 2];
    int fd;

    snprintf(path, sizeof(path), "%s/%s", store_dir, STAGING_OWNER_ID_FILE);
    if (read_id(path, out) == 0)
        return SLUICE_OK;
    if (errno != ENOENT)
        return sluice_errorf(err, SLUICE_ESTORE, "store identity %s: %s", path,
                             errno == EINVAL ? "not 32 hex digits" : strerror(errno));
    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
        return sluice_errorf(err, SLUICE_EIO, "store identity: getrandom: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(raw); i++) {
        text[2 * i] = hex[raw[i] >> 4];
        text[2 * i + 1] = hex[raw[i] & 15];
    }
    text[STAGING_OWNER_ID_LEN] = '\n';
    text[STAGING_OWNER_ID_LEN + 1] = '\0';
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    unlink(tmp);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return sluice_errorf(err, SLUICE_EIO, "store identity %s: %s", tmp, strerror(errno));
    if (write_all(fd, text) != 0 || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return sluice_errorf(err, SLUICE_EIO, "store identity %s: %s", tmp, strerror(e));
    }
    close(fd);
    /* link(2) never replaces: whoever links first wins, and all read it */
    if (link(tmp, path) != 0 && errno != EEXIST) {
        int e = errno;
        unlink(tmp);
        return sluice_errorf(err, SLUICE_EIO, "store identity %s: %s", path, strerror(e));
    }
    unlink(tmp);
    if (read_id(path, out) != 0)
        return sluice_errorf(err, SLUICE_ESTORE, "store identity %s: %s", path, strerror(errno));
    return SLUICE_OK;
}

sluice_err staging_owner_mark(int launch_fd, const char *shown, const char *id, sluice_error_t *err)
{
    char line[STAGING_OWNER_ID_LEN + 2];
    int fd;

    fd = openat(launch_fd, STAGING_OWNER_MARKER,
                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST ? SLUICE_OK
                               : sluice_errorf(err, SLUICE_EIO, "staging marker %s/%s: %s", shown,
                                               STAGING_OWNER_MARKER, strerror(errno));
    snprintf(line, sizeof(line), "%s\n", id);
    if (write_all(fd, line) != 0) {
        int e = errno;
        close(fd);
        unlinkat(launch_fd, STAGING_OWNER_MARKER, 0);
        return sluice_errorf(err, SLUICE_EIO, "staging marker %s/%s: %s", shown,
                             STAGING_OWNER_MARKER, strerror(e));
    }
    close(fd);
    return SLUICE_OK;
}

int staging_owner_foreign(int site_fd, const char *name, const char *id)
{
    char rel[300], text[STAGING_OWNER_ID_LEN + 2];
    size_t len = 0;

    if ((size_t)snprintf(rel, sizeof(rel), "%s/%s", name, STAGING_OWNER_MARKER) >= sizeof(rel) ||
        jobfs_read_small(site_fd, rel, text, sizeof(text), &len, NULL, NULL) != SLUICE_OK ||
        len < STAGING_OWNER_ID_LEN ||
        strspn(text, "0123456789abcdef") != (size_t)STAGING_OWNER_ID_LEN)
        return 0;
    text[STAGING_OWNER_ID_LEN] = '\0';
    return strcmp(text, id) != 0;
}
