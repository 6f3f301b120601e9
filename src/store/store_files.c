/* SPDX-License-Identifier: Apache-2.0 */
/* store_files.c - the store directory on disk: where it is by default, creating
 * it (0700) and the database file (0600), the supervisor lock file
 * (`supervisor.lock`: flock + the holder's pid), and the check of
 * PostgreSQL's password file (store.password_file).
 *
 * Notes:
 * - The lock is advisory and per open file: one supervisor per store.  The
 *   pid in the file is only for the message of the one refused. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/log.h>
#include <sluice/store.h>

#include "store_int.h"

int64_t store_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "<a>/<b>" as a new string (NULL when out of memory). */
char *store_path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = malloc(n);

    if (s != NULL)
        snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* ---- the directory and the database file ------------------------------ */

sluice_err sluice_store_default_dir(char **out, sluice_error_t *err)
{
    const char *env = getenv("SLUICE_STATE_DIR");
    const char *home;
    char *s = NULL;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "store dir: out is NULL");
    if (env != NULL && env[0] != '\0') {
        s = strdup(env);
    } else if (geteuid() == 0) {
        s = strdup("/var/lib/sluice");
    } else if ((env = getenv("XDG_STATE_HOME")) != NULL && env[0] == '/') {
        s = store_path_join(env, "sluice");
    } else {
        home = getenv("HOME");
        if (home == NULL || home[0] != '/') {
            struct passwd *pw = getpwuid(geteuid());

            home = pw != NULL ? pw->pw_dir : NULL;
        }
        if (home == NULL || home[0] != '/')
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "store dir: no home directory; set SLUICE_STATE_DIR");
        s = store_path_join(home, ".local/state/sluice");
    }
    if (s == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "store dir: out of memory");
    *out = s;
    return SLUICE_OK;
}

/* mkdir -p with mode 0700 for every directory created. */
sluice_err store_make_dirs(const char *dir, sluice_error_t *err)
{
    char *p = strdup(dir);
    char *q;
    struct stat sb;
    sluice_err rc = SLUICE_OK;

    if (p == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "store dir: out of memory");
    for (q = p + 1;; q++) {
        if (*q != '/' && *q != '\0')
            continue;
        char c = *q;

        *q = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            rc = sluice_errorf(err, SLUICE_EIO, "store dir %s: cannot create %s: %s", dir, p,
                               strerror(errno));
            goto out;
        }
        *q = c;
        if (c == '\0')
            break;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        rc = sluice_errorf(err, SLUICE_EIO, "store dir %s: not a directory", dir);
        goto out;
    }
    if ((sb.st_mode & 0077) != 0)
        sluice_log(SLUICE_LOG_WARNING, "store dir %s has mode %03o; 0700 is expected", dir,
                   (unsigned)(sb.st_mode & 0777));
out:
    free(p);
    return rc;
}

/* Create the database file 0600 if it does not exist, so SQLite (which
 * copies the database's mode to -wal and -shm) never creates it with the
 * umask's mode. */
sluice_err store_make_db_file(const char *path, sluice_error_t *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    struct stat sb;

    if (fd >= 0) {
        if (fchmod(fd, 0600) != 0) {
            int e = errno;

            close(fd);
            return sluice_errorf(err, SLUICE_EIO, "%s: chmod: %s", path, strerror(e));
        }
        close(fd);
        return SLUICE_OK;
    }
    if (errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "%s: cannot create: %s", path, strerror(errno));
    if (lstat(path, &sb) != 0)
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return sluice_errorf(err, SLUICE_ESTORE, "%s: not a regular file; refusing to use it",
                             path);
    if ((sb.st_mode & 0077) != 0)
        sluice_log(SLUICE_LOG_WARNING, "%s has mode %03o; 0600 is expected", path,
                   (unsigned)(sb.st_mode & 0777));
    return SLUICE_OK;
}

/* ---- the supervisor lock ---------------------------------------------- */

sluice_err sluice_store_lock_supervisor(sluice_store_t *store, sluice_error_t *err)
{
    char pidbuf[32];
    int fd = -1;
    ssize_t n;
    sluice_err rc = SLUICE_OK;

    if (store == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "supervisor lock: store is NULL");
    pthread_mutex_lock(&store->mu);
    if (store->lock_fd >= 0)
        goto out;
    fd = open(store->lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: cannot open: %s", store->lock_path,
                           strerror(errno));
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            rc = sluice_errorf(err, SLUICE_EIO, "%s: flock: %s", store->lock_path, strerror(errno));
            goto out;
        }
        n = pread(fd, pidbuf, sizeof(pidbuf) - 1, 0);
        pidbuf[n > 0 ? n : 0] = '\0';
        pidbuf[strcspn(pidbuf, "\n")] = '\0';
        rc = sluice_errorf(err, SLUICE_ECONFLICT,
                           "store %s already has a supervisor (pid %s holds %s); only one "
                           "supervisor may run per store",
                           store->dir, pidbuf[0] != '\0' ? pidbuf : "unknown", store->lock_path);
        goto out;
    }
    snprintf(pidbuf, sizeof(pidbuf), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pidbuf, strlen(pidbuf), 0) != (ssize_t)strlen(pidbuf)) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: cannot record pid: %s", store->lock_path,
                           strerror(errno));
        goto out;
    }
    store->lock_fd = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    pthread_mutex_unlock(&store->mu);
    return rc;
}

void sluice_store_unlock_supervisor(sluice_store_t *store)
{
    if (store == NULL)
        return;
    pthread_mutex_lock(&store->mu);
    if (store->lock_fd >= 0) {
        /* Truncate first so that nobody reads a stale pid after we let go. */
        if (ftruncate(store->lock_fd, 0) != 0)
            sluice_log(SLUICE_LOG_WARNING, "%s: cannot clear pid", store->lock_path);
        close(store->lock_fd);
        store->lock_fd = -1;
    }
    pthread_mutex_unlock(&store->mu);
}

/* The password file: a regular file of ours that only we may read.  An
 * operator's path from the site config (store.password_file), never a
 * request's or a job's and never under staging: it is stat()ed through a
 * link on purpose (Kubernetes mounts secrets as links) and judged by what
 * the link leads to, as the tokens file and the TLS key are
 * (serve/server_access.c). */
sluice_err store_check_password_file(const char *path, sluice_error_t *err)
{
    struct stat sb;

    if (stat(path, &sb) != 0)
        return sluice_errorf(err, SLUICE_ECONFIG, "store.password_file %s: %s", path,
                             strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return sluice_errorf(err, SLUICE_ECONFIG, "store.password_file %s: not a regular file",
                             path);
    if ((sb.st_mode & 077) != 0 || sb.st_uid != geteuid())
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "store.password_file %s: must be mode 0600 and owned by uid %ld "
                             "(it is mode %04o, uid %ld); refusing to use it",
                             path, (long)geteuid(), (unsigned)(sb.st_mode & 07777),
                             (long)sb.st_uid);
    return SLUICE_OK;
}
