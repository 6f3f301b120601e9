/* SPDX-License-Identifier: Apache-2.0 */
/* staging.c - the attempt's private staging directory and its secret file.
 *
 * Layout: <storage.root>/<site>/<sha8(launch_id)>/attempt-<n>/{job.sh,
 * secrets.env, exit/, stdout.log, stderr.log, peers.env}.
 *
 * Notes:
 * - Every directory below the storage root is created with mkdirat() and
 *   opened with O_NOFOLLOW|O_DIRECTORY relative to its parent, so a
 *   symlink planted anywhere below the root is refused, never followed.
 * - Files are created with O_CREAT|O_EXCL|O_NOFOLLOW: an existing file (or
 *   a symlink in its place) is an error.
 * - When the service runs as root, everything it creates here belongs to the
 *   Slurm job user (rest.user): the batch job runs as that user and must
 *   write its logs and exit files, and read (then delete) secrets.env.  A
 *   new file takes the owner of the directory it is created in.  A job user
 *   unknown on this host leaves ownership alone (with a warning).
 * - Tenants (staging_create_as() with `strict`): the launch's directories
 *   belong to the tenant's Slurm user (mode 0700), its files (secrets.env
 *   included) take that owner, and an owner that cannot be set is an
 *   error, never a service-owned directory.  The site directory is then
 *   the service's, mode 0711: every tenant's job passes through it to its
 *   own launch directory and none can list it.  `sluice serve` and
 *   `sluice check` refuse a site with tenants when the process cannot
 *   chown (staging_can_chown()).
 * - secrets.env holds NAME='value' lines (values shell-quoted); it is the
 *   only place a secret value is ever written.  Its buffer is wiped.
 */
#define _GNU_SOURCE /* syncfs */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/log.h>
#include <sluice/render.h>

#include "base/wipe.h"
#include "base/buf.h"
#include "base/shquote.h"
#include "staging.h"

/* Who owns what staging creates: nobody in particular (-1) unless the
 * service runs as root, then the Slurm job user. */
typedef struct {
    uid_t uid;
    gid_t gid;
    bool set;
} owner_t;

/* The job user's ids as last looked up, for OWNER_CACHE_S seconds: every
 * staging (one per launch) otherwise read nsswitch.conf and the passwd
 * database again.  A user added or changed on the host is seen within
 * that time; a user unknown here is looked up (and warned about) again
 * each time, as before. */
#define OWNER_CACHE_S 60

static struct {
    pthread_mutex_t mu;
    char user[256];
    owner_t o;
    time_t at; /* monotonic seconds of the lookup; 0: empty */
} owner_cache = {PTHREAD_MUTEX_INITIALIZER, "", {0, 0, false}, 0};

static time_t mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1; /* never 0 */
}

/* Effective capability bit `cap` of this process (/proc/self/status). */
static bool has_cap(unsigned cap)
{
    char line[256];
    unsigned long long eff = 0;
    bool found = false;
    FILE *f = fopen("/proc/self/status", "re");

    if (f == NULL)
        return geteuid() == 0;
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = sscanf(line, "CapEff: %llx", &eff) == 1;
    fclose(f);
    return found ? ((eff >> cap) & 1) != 0 : geteuid() == 0;
}

sluice_err staging_can_chown(sluice_error_t *err)
{
    /* CAP_CHOWN (0) gives the directories away; CAP_DAC_OVERRIDE (1) lets
     * the service still write secrets.env and peers.env into them and read
     * the logs and exit files back. */
    bool chown_ok = has_cap(0), dac_ok = has_cap(1);

    if (chown_ok && dac_ok)
        return SLUICE_OK;
    return sluice_errorf(err, SLUICE_EPERM,
                         "tenants: staging must belong to each tenant's Slurm user, and this "
                         "process (uid %ld) lacks %s%s%s: run sluice as root or grant it "
                         "CAP_CHOWN and CAP_DAC_OVERRIDE",
                         (long)geteuid(), chown_ok ? "" : "CAP_CHOWN (it cannot chown)",
                         !chown_ok && !dac_ok ? " and " : "",
                         dac_ok ? "" : "CAP_DAC_OVERRIDE (it could not reach what it gave away)");
}

/* The site directory, when it exists already (made before tenants, the
 * job user's and 0700), must let every tenant's job pass (o+x) and be no
 * job's: otherwise refused, naming the fix. */
sluice_err staging_site_dir_ok(const sluice_config_t *cfg, sluice_error_t *err)
{
    const char *site = cfg->site_name ? cfg->site_name : "default";
    struct stat st;
    int rfd = open(cfg->storage.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (rfd < 0)
        return SLUICE_OK; /* made later, with the right mode */
    /* Anyone who may write the root may rename the site directory away and
     * put one of their own in its place: world-writable needs the sticky
     * bit (docs/tenants.md, storage). */
    if (fstat(rfd, &st) == 0 && (st.st_mode & 0002) != 0 && (st.st_mode & S_ISVTX) == 0) {
        close(rfd);
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "tenants: storage.root %s (mode %04o) is writable by every user "
                             "without the sticky bit: a tenant's job could replace the site "
                             "directory; chmod o-w (or +t) it",
                             cfg->storage.root, (unsigned)(st.st_mode & 07777));
    }
    rc = fstatat(rfd, site, &st, AT_SYMLINK_NOFOLLOW);
    close(rfd);
    if (rc != 0)
        return SLUICE_OK;
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0001) == 0 ||
        (st.st_mode & 0022) != 0)
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "tenants: the site directory %s/%s (uid %ld, mode %04o) must be a "
                             "directory of the service's (uid %ld) with mode 0711, so that each "
                             "tenant's job reaches its own staging and none lists the others': "
                             "chown %ld and chmod 0711 it",
                             cfg->storage.root, site, (long)st.st_uid,
                             (unsigned)(st.st_mode & 07777), (long)geteuid(), (long)geteuid());
    return SLUICE_OK;
}

/* The owner of what staging makes for `user`: looked up when the service
 * runs as root, or always when `strict` (tenants), where a user unknown
 * on this host is an error (SLUICE_ECONFIG) instead of a warning. */
static sluice_err job_owner(
    const sluice_config_t *cfg, const char *user, bool strict, owner_t *o, sluice_error_t *err)
{
    struct passwd pw, *res = NULL;
    char pwbuf[4096];
    time_t now;
    bool hit = false;

    o->set = false;
    if (user == NULL)
        user = cfg->rest.user;
    if ((!strict && geteuid() != 0) || user == NULL)
        return SLUICE_OK;
    now = mono_s();
    pthread_mutex_lock(&owner_cache.mu);
    if (owner_cache.at != 0 && now - owner_cache.at < OWNER_CACHE_S &&
        strcmp(owner_cache.user, user) == 0) {
        *o = owner_cache.o;
        hit = true;
    }
    pthread_mutex_unlock(&owner_cache.mu);
    if (hit)
        return SLUICE_OK;
    if (getpwnam_r(user, &pw, pwbuf, sizeof(pwbuf), &res) != 0 || res == NULL) {
        if (strict)
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "staging: the tenant's Slurm user %s is not a local user: its "
                                 "staging cannot be given to it",
                                 user);
        /* A user known only to the cluster (a container beside a remote
         * site): the storage's own permissions decide. */
        sluice_log(SLUICE_LOG_WARNING,
                   "staging: running as root and rest.user %s is not a local user; staging "
                   "stays owned by root, so the job may not be able to write it",
                   cfg->rest.user);
        return SLUICE_OK;
    }
    o->uid = pw.pw_uid;
    o->gid = pw.pw_gid;
    o->set = true;
    if (strlen(user) < sizeof(owner_cache.user)) {
        pthread_mutex_lock(&owner_cache.mu);
        strcpy(owner_cache.user, user);
        owner_cache.o = *o;
        owner_cache.at = now;
        pthread_mutex_unlock(&owner_cache.mu);
    }
    return SLUICE_OK;
}

/* Open (creating when absent) the directory `name` below `parent`.
 * *created tells whether it was new. */
static sluice_err sub_dir(int parent,
                          const char *name,
                          const char *shown,
                          const owner_t *owner,
                          mode_t mode,
                          bool *created,
                          int *fd,
                          sluice_error_t *err)
{
    int d;

    *created = false;
    if (mkdirat(parent, name, mode) == 0)
        *created = true;
    else if (errno != EEXIST)
        return sluice_errorf(err, errno == EACCES ? SLUICE_EPERM : SLUICE_EIO,
                             "staging: cannot create %s: %s", shown, strerror(errno));
    d = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0)
        return sluice_errorf(err, errno == ELOOP || errno == ENOTDIR ? SLUICE_EPERM : SLUICE_EIO,
                             "staging: %s is not a directory (symlinks are refused): %s", shown,
                             strerror(errno));
    if (*created && fchmod(d, mode) != 0) {
        close(d);
        return sluice_errorf(err, SLUICE_EIO, "staging: chmod %s: %s", shown, strerror(errno));
    }
    if (*created && owner->set && fchown(d, owner->uid, owner->gid) != 0) {
        close(d);
        return sluice_errorf(err, SLUICE_EIO, "staging: chown %s: %s", shown, strerror(errno));
    }
    *fd = d;
    return SLUICE_OK;
}

sluice_err staging_write_file(int dirfd,
                              const char *name,
                              const char *data,
                              size_t len,
                              unsigned mode,
                              bool sync,
                              sluice_error_t *err)
{
    int fd =
        openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
    size_t off = 0;

    if (fd < 0)
        return sluice_errorf(err, SLUICE_EIO, "staging: cannot create %s: %s", name,
                             strerror(errno));
    if (fchmod(fd, (mode_t)mode) != 0)
        goto fail;
    {
        /* The directory's owner (the job user, a tenant's user) owns the
         * file; a directory of our own needs no chown. */
        struct stat dst;
        if (fstat(dirfd, &dst) != 0 ||
            (dst.st_uid != geteuid() && fchown(fd, dst.st_uid, dst.st_gid) != 0))
            goto fail;
    }
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        off += (size_t)w;
    }
    if (sync && fsync(fd) != 0 && errno != EINVAL)
        goto fail;
    if (close(fd) != 0)
        return sluice_errorf(err, SLUICE_EIO, "staging: close %s: %s", name, strerror(errno));
    return SLUICE_OK;
fail : {
    int e = errno;
    close(fd);
    unlinkat(dirfd, name, 0);
    return sluice_errorf(err, SLUICE_EIO, "staging: write %s: %s", name, strerror(e));
}
}

sluice_err sluice_staging_create(const sluice_config_t *cfg,
                                 const sluice_render_t *r,
                                 bool known_launch,
                                 int *dirfd_out,
                                 sluice_error_t *err)
{
    return staging_create(cfg, r, known_launch, true, dirfd_out, NULL, err);
}

sluice_err staging_sync_root(const sluice_config_t *cfg, sluice_error_t *err)
{
    int fd;

    if (cfg == NULL || cfg->storage.root == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "staging: no storage root");
    if ((fd = open(cfg->storage.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return sluice_errorf(err, SLUICE_EIO, "staging: storage root %s: %s", cfg->storage.root,
                             strerror(errno));
    if (syncfs(fd) != 0) {
        int e = errno;
        close(fd);
        return sluice_errorf(err, SLUICE_EIO, "staging: syncfs %s: %s", cfg->storage.root,
                             strerror(e));
    }
    close(fd);
    return SLUICE_OK;
}

sluice_err staging_create(const sluice_config_t *cfg,
                          const sluice_render_t *r,
                          bool known_launch,
                          bool sync,
                          int *dirfd_out,
                          int *launch_fd_out,
                          sluice_error_t *err)
{
    return staging_create_as(cfg, r, NULL, false, known_launch, sync, dirfd_out, launch_fd_out,
                             err);
}

sluice_err staging_create_as(const sluice_config_t *cfg,
                             const sluice_render_t *r,
                             const char *user,
                             bool strict,
                             bool known_launch,
                             bool sync,
                             int *dirfd_out,
                             int *launch_fd_out,
                             sluice_error_t *err)
{
    int root = -1, site = -1, launch = -1, att = -1, ex = -1;
    bool created = false;
    sluice_err rc = SLUICE_OK;
    owner_t owner, service = {0, 0, false};
    const char *site_name;
    char attempt[32], shown[4096];
    size_t i;

    if (!cfg || !r || !cfg->storage.root)
        return sluice_errorf(err, SLUICE_EINVAL, "staging: missing argument");
    /* <root>/<site>/<sha8>/attempt-<n>: the site is the path component
     * after the root in staging_service. */
    site_name = r->staging_service + strlen(cfg->storage.root);
    while (*site_name == '/')
        site_name++;
    snprintf(shown, sizeof(shown), "%.*s", (int)strcspn(site_name, "/"), site_name);
    if (!shown[0] || strchr(r->sha8, '/'))
        return sluice_errorf(err, SLUICE_EINVAL, "staging: unexpected staging path %s",
                             r->staging_service);
    if ((rc = job_owner(cfg, user, strict, &owner, err)) != SLUICE_OK)
        return rc;
    if (strict && !owner.set)
        return sluice_errorf(err, SLUICE_ECONFIG, "staging: launch %s has no owner", r->launch_id);
    root = open(cfg->storage.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return sluice_errorf(err, SLUICE_EIO, "staging: storage root %s: %s", cfg->storage.root,
                             strerror(errno));
    {
        char site_only[256];
        size_t sl = strcspn(site_name, "/");
        if (sl >= sizeof(site_only)) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "staging: site name too long");
            goto out;
        }
        memcpy(site_only, site_name, sl);
        site_only[sl] = '\0';
        snprintf(shown, sizeof(shown), "%s/%s", cfg->storage.root, site_only);
        /* With tenants the site directory is the service's and 0711: each
         * tenant's job passes through it, none lists it. */
        if ((rc = sub_dir(root, site_only, shown, strict ? &service : &owner, strict ? 0711 : 0700,
                          &created, &site, err)) != SLUICE_OK)
            goto out;
        snprintf(shown, sizeof(shown), "%s/%s/%s", cfg->storage.root, site_only, r->sha8);
    }
    if ((rc = sub_dir(site, r->sha8, shown, &owner, 0700, &created, &launch, err)) != SLUICE_OK)
        goto out;
    if (!created && !known_launch) {
        rc = sluice_errorf(err, SLUICE_ECONFLICT,
                           "staging: %s exists but belongs to no launch the store knows "
                           "(launch %s); refusing to reuse it",
                           shown, r->launch_id);
        goto out;
    }
    snprintf(attempt, sizeof(attempt), "attempt-%u", r->attempt);
    if ((rc = sub_dir(launch, attempt, r->staging_service, &owner, 0700, &created, &att, err)) !=
        SLUICE_OK)
        goto out;
    if (!created) {
        rc = sluice_errorf(err, SLUICE_ECONFLICT, "staging: %s already exists", r->staging_service);
        goto out;
    }
    if ((rc = sub_dir(att, "exit", "exit", &owner, 0700, &created, &ex, err)) != SLUICE_OK)
        goto out;
    for (i = 0; i < r->n_files; i++)
        if ((rc = staging_write_file(att, r->files[i].name, r->files[i].content,
                                     strlen(r->files[i].content), r->files[i].mode, sync, err)) !=
            SLUICE_OK)
            goto out;
    if (dirfd_out) {
        *dirfd_out = att;
        att = -1;
    }
    if (launch_fd_out) {
        *launch_fd_out = launch;
        launch = -1;
    }
out:
    if (ex >= 0)
        close(ex);
    if (att >= 0)
        close(att);
    if (launch >= 0)
        close(launch);
    if (site >= 0)
        close(site);
    if (root >= 0)
        close(root);
    return rc;
}

/* Zero the whole buffer (it held secret values), then free it. */
static void wipe_buf(buf_t *b)
{
    wipe(b->data, b->cap);
    buf_free(b);
}

static sluice_err add_line(buf_t *b, const char *name, const char *value)
{
    sluice_err rc;

    if ((rc = buf_printf(b, "%s=", name)) != SLUICE_OK ||
        (rc = shquote_append(b, value)) != SLUICE_OK)
        return rc;
    return buf_puts(b, "\n");
}

sluice_err sluice_staging_write_secrets(int dirfd,
                                        const sluice_launch_t *launch,
                                        const sluice_study_t *study,
                                        sluice_getenv_fn getenv_fn,
                                        void *getenv_arg,
                                        sluice_error_t *err)
{
    const sluice_launch_spec_t *s = sluice_launch_spec(launch);
    buf_t b = BUF_INIT;
    sluice_err rc = SLUICE_OK;
    size_t i, n = 0;

    buf_init(&b, 0);
    if (buf_puts(&b, "# sluice secrets (sourced and deleted by the batch script)\n") != SLUICE_OK)
        goto nomem;
    for (i = 0; i < sluice_launch_secret_count(launch); i++, n++) {
        const char *v = sluice_launch_secret_value(launch, i);
        if (!v) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "secrets: \"%s\": secret unavailable after restart",
                               sluice_launch_secret_name(launch, i));
            goto out;
        }
        if (add_line(&b, sluice_launch_secret_name(launch, i), v) != SLUICE_OK)
            goto nomem;
    }
    for (i = 0; i < s->n_secret_env; i++, n++) {
        const char *v = getenv_fn ? getenv_fn(s->secret_env[i], getenv_arg) : NULL;
        if (!v) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "secret_env: \"%s\" is not set in the service's environment",
                               s->secret_env[i]);
            goto out;
        }
        if (add_line(&b, s->secret_env[i], v) != SLUICE_OK)
            goto nomem;
    }
    for (i = 0; study && i < study->n_secret_env; i++, n++) {
        const char *v = getenv_fn ? getenv_fn(study->secret_env[i].source, getenv_arg) : NULL;
        if (!v) {
            rc = sluice_errorf(err, SLUICE_EINVAL,
                               "study.secret_env.%s: \"%s\" is not set in the service's "
                               "environment",
                               study->secret_env[i].name, study->secret_env[i].source);
            goto out;
        }
        if (add_line(&b, study->secret_env[i].name, v) != SLUICE_OK)
            goto nomem;
    }
    if (n > 0)
        rc = staging_write_file(dirfd, "secrets.env", b.data, b.len, 0600, true, err);
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "secrets: out of memory");
out:
    wipe_buf(&b);
    return rc;
}

sluice_err staging_write_secret_pairs(int dirfd,
                                      const char *const *names,
                                      const char *const *values,
                                      size_t n,
                                      bool sync,
                                      sluice_error_t *err)
{
    buf_t b = BUF_INIT;
    sluice_err rc = SLUICE_OK;
    size_t i;

    if (n == 0)
        return SLUICE_OK;
    buf_init(&b, 0);
    if (buf_puts(&b, "# sluice secrets (sourced and deleted by the batch script)\n") != SLUICE_OK)
        goto nomem;
    for (i = 0; i < n; i++) {
        if (values[i] == NULL) {
            rc = sluice_errorf(err, SLUICE_EINVAL, "secrets: \"%s\": secret unavailable", names[i]);
            goto out;
        }
        if (add_line(&b, names[i], values[i]) != SLUICE_OK)
            goto nomem;
    }
    rc = staging_write_file(dirfd, "secrets.env", b.data, b.len, 0600, sync, err);
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "secrets: out of memory");
out:
    wipe_buf(&b);
    return rc;
}
