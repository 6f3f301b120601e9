/* SPDX-License-Identifier: Apache-2.0 */
/* staging_ops.c - the launcher's staging hooks on the shared storage root.
 *
 * Every hook finds the launch's staging directory in the render stored with
 * the launch (render once), so nothing here recomputes paths.
 *
 * Notes:
 * - prepare is idempotent: when a previous cycle created the attempt
 *   directory but the POST never left, the directory is reused and its
 *   secrets.env written again.
 * - A later attempt of the same launch (after a confirmed absence) runs in
 *   the rendered directory too, because the stored script and job
 *   descriptions name it; the earlier attempt's directory is first renamed
 *   to "<dir>.superseded-by-<n>" so its files stay for inspection, and its
 *   peers.env (if any) is carried into the new directory.  The archive
 *   keeps the logs of every attempt: in the store (sluice_store_put_log,
 *   one row per attempt and stream, the last store.log_max_bytes bytes of
 *   each, so that every replica serves them), and when the launcher gives
 *   an artifact directory (SQLite) as plain copies on this host, the final
 *   attempt's in artifacts/<id>/, attempt k's (superseded) in
 *   artifacts/<id>/attempt-<k>/.
 * - The archive reads stdout.log and stderr.log only (never secrets.env or
 *   any other file), by the job-owned rule (base/jobfs.h): a log that is
 *   not there or that the rule refuses is stored as a row that says so.
 * - peers.env is written to a temporary name and renamed, so a waiting
 *   dependent never reads half a file.
 * - prepare marks the launch directory with the store's identity, and the
 *   recovery's scan (list_staging) leaves out what another store marked
 *   (staging_owner.c).
 */
#define _GNU_SOURCE 1 /* openat, fstatat, renameat, fdopendir under -std=c11 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sluice/log.h>
#include <sluice/ops.h>
#include <sluice/render.h>

#include "base/buf.h"
#include "base/shquote.h"
#include "base/jobfs.h"
#include "request/staging.h"
#include "staging_ctx.h"
#include "staging_exits.h"
#include "staging_owner.h"

/* The stored render of a launch (new reference) or NULL with err set. */
static json_t *stored_render(staging_ctx_t *c, const char *launch_id, sluice_error_t *err)
{
    json_t *launch = NULL, *render;

    if (sluice_store_get_launch(c->store, launch_id, &launch, err) != SLUICE_OK)
        return NULL;
    render = json_object_get(launch, "render");
    if (!json_is_object(render)) {
        sluice_errorf(err, SLUICE_ESTORE, "launch %s: no render stored", launch_id);
        json_decref(launch);
        return NULL;
    }
    json_incref(render);
    json_decref(launch);
    return render;
}

static const char *staging_dir_of(const json_t *render)
{
    return json_string_value(json_object_get(json_object_get(render, "staging"), "service"));
}

/* peers.env of the attempt moved aside (`aside`, a sibling of `dir`), into
 * the new attempt's directory (`dirfd`): the partner was handed on once,
 * for the launch, and a later attempt waits for the same file.  Nothing to
 * do when there is none.  The old directory is job-owned: its file is read
 * by the jobfs rule. */
static sluice_err carry_peers(const char *dir, const char *aside, int dirfd, sluice_error_t *err)
{
    buf_t b;
    char chunk[4096];
    ssize_t n;
    int afd = -1, fd = -1;
    sluice_err rc;

    buf_init(&b, 1 << 22);
    if ((rc = staging_open_attempt(dir, aside, &afd, err)) == SLUICE_OK)
        rc = jobfs_open_file(afd, "peers.env", &fd, NULL, err);
    if (rc == SLUICE_ENOTFOUND) {
        rc = SLUICE_OK;
        goto out;
    }
    while (rc == SLUICE_OK && (n = read(fd, chunk, sizeof(chunk))) != 0) {
        if (n < 0)
            rc = errno == EINTR ? SLUICE_OK
                                : sluice_errorf(err, SLUICE_EIO, "staging: read %s/peers.env: %s",
                                                aside, strerror(errno));
        else if ((rc = buf_append(&b, chunk, (size_t)n)) != SLUICE_OK)
            rc = sluice_errorf(err, rc, "staging: %s/peers.env too large", aside);
    }
    if (rc == SLUICE_OK)
        rc = staging_write_file(dirfd, "peers.env", buf_str(&b), b.len, 0600, false, err);
out:
    if (fd >= 0)
        close(fd);
    if (afd >= 0)
        close(afd);
    buf_free(&b);
    return rc;
}

static sluice_err prepare(void *arg,
                          const char *launch_id,
                          uint32_t attempt,
                          const json_t *given,
                          const sluice_secret_t *secrets,
                          size_t n_secrets,
                          sluice_error_t *err)
{
    staging_ctx_t *c = arg;
    json_t *render = NULL;
    const char *dir, *script;
    sluice_render_t r;
    sluice_render_file_t file;
    const char **names = NULL, **values = NULL;
    char aside[300], attempt_name[256];
    int fd = -1, lfd = -1;
    sluice_error_t oerr = SLUICE_ERROR_INIT;
    const char *owner = NULL; /* the tenant's user (NULL: rest.user) */
    bool strict = false;
    size_t i;
    sluice_err rc = SLUICE_OK;

    aside[0] = '\0';
    /* The launcher's copy when it has one: no store read on the submit path. */
    if (given != NULL)
        render = json_incref((json_t *)(uintptr_t)given);
    else if ((render = stored_render(c, launch_id, err)) == NULL)
        return err ? err->code : SLUICE_ESTORE;
    dir = staging_dir_of(render);
    script = json_string_value(json_object_get(render, "script"));
    if (dir == NULL || script == NULL) {
        rc = sluice_errorf(err, SLUICE_ESTORE, "launch %s: stored render has no staging/script",
                           launch_id);
        goto out;
    }
    /* The launch directory and the attempt's name in it, then the attempt
     * directory itself (fd -1 when it is not there yet): job-owned, walked
     * from the storage root without following a link. */
    rc = staging_open_above(dir, 1, &lfd, attempt_name, sizeof(attempt_name), &oerr);
    if (rc == SLUICE_OK && (rc = jobfs_open_dir(lfd, attempt_name, &fd, &oerr)) != SLUICE_OK)
        sluice_error_prefix(&oerr, "staging %s", dir);
    if (rc == SLUICE_ENOTFOUND)
        rc = SLUICE_OK; /* not made yet */
    if (rc != SLUICE_OK) {
        if (err != NULL)
            *err = oerr;
        goto out;
    }
    if (attempt > (uint32_t)json_integer_value(json_object_get(render, "attempt")))
        snprintf(aside, sizeof(aside), "%s.superseded-by-%u", attempt_name, attempt);
    if (fd >= 0 && aside[0] != '\0') {
        /* A new attempt: keep the previous one's files aside (archived
         * with the launch as artifacts/<id>/attempt-<n-1>/). */
        struct stat st;
        close(fd);
        fd = -1;
        if (fstatat(lfd, aside, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
            renameat(lfd, attempt_name, lfd, aside) != 0) {
            rc = sluice_errorf(err, SLUICE_EIO, "staging: cannot move %s aside: %s", dir,
                               strerror(errno));
            goto out;
        }
    }
    if (fd >= 0) {
        if (unlinkat(fd, "secrets.env", 0) != 0 && errno != ENOENT) {
            rc = sluice_errorf(err, SLUICE_EIO, "staging: cannot replace %s/secrets.env: %s", dir,
                               strerror(errno));
            goto out;
        }
    } else {
        memset(&r, 0, sizeof(r));
        memset(&file, 0, sizeof(file));
        r.launch_id = (char *)(uintptr_t)launch_id;
        r.attempt = (unsigned)json_integer_value(json_object_get(render, "attempt"));
        r.sha8 = (char *)(uintptr_t)json_string_value(json_object_get(render, "sha8"));
        r.staging_service = (char *)(uintptr_t)dir;
        file.name = (char *)(uintptr_t) "job.sh";
        file.content = (char *)(uintptr_t)script;
        file.mode = 0700;
        r.files = &file;
        r.n_files = 1;
        if (r.sha8 == NULL) {
            rc = sluice_errorf(err, SLUICE_ESTORE, "launch %s: stored render has no sha8",
                               launch_id);
            goto out;
        }
        /* not fsync'd here: the launcher calls sync (one syncfs) before the
         * markers of the chunk are committed.  The launch directory comes
         * back open when the walk above did not open it. */
        if (lfd >= 0) {
            close(lfd);
            lfd = -1;
        }
        if ((rc = staging_owner_of(c, launch_id, &owner, &strict, err)) != SLUICE_OK ||
            (rc = staging_create_as(c->cfg, &r, owner, strict, true, false, &fd, &lfd, err)) !=
                SLUICE_OK)
            goto out;
        if (aside[0] != '\0' && (rc = carry_peers(dir, aside, fd, err)) != SLUICE_OK)
            goto out;
    }
    if (lfd < 0 && (rc = staging_open_above(dir, 1, &lfd, attempt_name, sizeof(attempt_name),
                                            err)) != SLUICE_OK)
        goto out;
    if ((rc = staging_owner_mark(lfd, dir, c->store_id, err)) != SLUICE_OK)
        goto out;
    if (n_secrets > 0) {
        names = calloc(n_secrets, sizeof(*names));
        values = calloc(n_secrets, sizeof(*values));
        if (names == NULL || values == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < n_secrets; i++) {
            names[i] = secrets[i].name;
            values[i] = secrets[i].value;
        }
        rc = staging_write_secret_pairs(fd, names, values, n_secrets, false, err);
    }
out:
    free(names);
    free(values);
    if (fd >= 0)
        close(fd);
    if (lfd >= 0)
        close(lfd);
    json_decref(render);
    return rc;
}

/* What the prepares before it wrote is durable: one syncfs of the storage
 * file system per chunk instead of an fsync per file. */
static sluice_err sync_staging(void *arg, sluice_error_t *err)
{
    staging_ctx_t *c = arg;

    return staging_sync_root(c->cfg, err);
}

static sluice_err read_pool_exits(void *arg,
                                  const char *launch_id,
                                  uint32_t attempt,
                                  sluice_pool_exit_t *out,
                                  size_t max,
                                  size_t *n_out,
                                  sluice_error_t *err)
{
    staging_ctx_t *c = arg;
    json_t *render;
    sluice_err rc;

    (void)attempt;
    *n_out = 0;
    if ((render = stored_render(c, launch_id, err)) == NULL)
        return err ? err->code : SLUICE_ESTORE;
    rc = staging_read_exits(launch_id, render, out, max, n_out, err);
    json_decref(render);
    return rc;
}

/* The name of pool `k` of a stored render ("pools": names, or objects
 * with a name), or NULL. */
static const char *pool_name(const json_t *render, size_t k)
{
    const json_t *p = json_array_get(json_object_get(render, "pools"), k);

    return json_is_string(p) ? json_string_value(p) : json_string_value(json_object_get(p, "name"));
}

/* NAME='value' and a newline. */
static sluice_err put_var(buf_t *b, const char *prefix, const char *stem, const char *value)
{
    if (buf_printf(b, "%s%s=", prefix, stem) != SLUICE_OK ||
        shquote_append(b, value) != SLUICE_OK || buf_puts(b, "\n") != SLUICE_OK)
        return SLUICE_ENOMEM;
    return SLUICE_OK;
}

/* The four variables of one component: <prefix>HOST (the first node's
 * address), NODE (its name), NODES and ADDRS (every node, blank-separated,
 * in the same order). */
static sluice_err put_component(buf_t *b, const char *prefix, const sluice_peer_component_t *c)
{
    buf_t names = BUF_INIT, addrs = BUF_INIT;
    sluice_err rc = SLUICE_OK;

    buf_init(&names, 1 << 20);
    buf_init(&addrs, 1 << 20);
    for (size_t i = 0; i < c->n_nodes && rc == SLUICE_OK; i++) {
        rc = buf_printf(&names, "%s%s", i ? " " : "", c->nodes[i].name);
        if (rc == SLUICE_OK)
            rc = buf_printf(&addrs, "%s%s", i ? " " : "", c->nodes[i].address);
    }
    if (rc == SLUICE_OK)
        rc = put_var(b, prefix, "HOST", c->nodes[0].address);
    if (rc == SLUICE_OK)
        rc = put_var(b, prefix, "NODE", c->nodes[0].name);
    if (rc == SLUICE_OK)
        rc = put_var(b, prefix, "NODES", buf_str(&names));
    if (rc == SLUICE_OK)
        rc = put_var(b, prefix, "ADDRS", buf_str(&addrs));
    buf_free(&names);
    buf_free(&addrs);
    return rc;
}

/* A node name or address goes into a blank-separated list: none may be
 * empty or hold a blank. */
static bool peers_ok(const sluice_peers_t *p)
{
    if (p == NULL || p->launch_id == NULL || p->n_components == 0 || p->components == NULL)
        return false;
    for (size_t k = 0; k < p->n_components; k++) {
        const sluice_peer_component_t *c = &p->components[k];
        if (c->n_nodes == 0 || c->nodes == NULL)
            return false;
        for (size_t i = 0; i < c->n_nodes; i++) {
            const char *n = c->nodes[i].name, *a = c->nodes[i].address;
            if (n == NULL || a == NULL || n[0] == '\0' || a[0] == '\0' || strpbrk(n, " \t\n") ||
                strpbrk(a, " \t\n"))
                return false;
        }
    }
    return true;
}

static sluice_err write_peers(void *arg,
                              const char *dependent_id,
                              uint32_t dependent_attempt,
                              const sluice_peers_t *p,
                              sluice_error_t *err)
{
    staging_ctx_t *c = arg;
    json_t *render, *partner = NULL;
    const char *dir;
    buf_t b;
    char stem[96];
    int fd = -1;
    sluice_err rc = SLUICE_OK;

    (void)dependent_attempt;
    if ((render = stored_render(c, dependent_id, err)) == NULL)
        return err ? err->code : SLUICE_ESTORE;
    dir = staging_dir_of(render);
    buf_init(&b, 1 << 22);
    if (dir == NULL || !peers_ok(p)) {
        rc = sluice_errorf(err, SLUICE_EINVAL,
                           "peers for %s: no nodes, or a node without an address", dependent_id);
        goto out;
    }
    /* The partner's pool names name the per-pool variables. */
    if ((partner = stored_render(c, p->launch_id, err)) == NULL) {
        rc = err ? err->code : SLUICE_ESTORE;
        goto out;
    }
    if ((rc = staging_open_attempt(dir, NULL, &fd, err)) != SLUICE_OK) {
        sluice_error_prefix(err, "peers for %s", dependent_id);
        goto out;
    }
    rc = buf_puts(&b, "# written by sluice when the partner launch ran: its job, and the names\n"
                      "# and addresses (NodeAddr) of its nodes (docs/rendering.md, peers.env)\n");
    if (rc == SLUICE_OK)
        rc = put_var(&b, "SLUICE_PEER_", "LAUNCH_ID", p->launch_id);
    if (rc == SLUICE_OK)
        rc = buf_printf(&b, "SLUICE_PEER_JOB_ID=%llu\n", (unsigned long long)p->job_id);
    if (rc == SLUICE_OK)
        rc = put_component(&b, "SLUICE_PEER_", &p->components[0]);
    for (size_t k = 0; k < p->n_components && rc == SLUICE_OK; k++) {
        const char *pool = pool_name(partner, k);
        size_t i, n = pool != NULL ? strlen(pool) : 0;

        if (n == 0 || n + 14 > sizeof(stem))
            continue;
        memcpy(stem, "SLUICE_PEER_", 12);
        for (i = 0; i < n; i++)
            stem[12 + i] = pool[i] == '-' ? '_' : (char)toupper((unsigned char)pool[i]);
        stem[12 + n] = '_';
        stem[13 + n] = '\0';
        rc = put_component(&b, stem, &p->components[k]);
    }
    if (rc != SLUICE_OK) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "peers for %s: out of memory", dependent_id);
        goto out;
    }
    unlinkat(fd, "peers.env.tmp", 0);
    if ((rc = staging_write_file(fd, "peers.env.tmp", buf_str(&b), b.len, 0600, true, err)) !=
        SLUICE_OK)
        goto out;
    if (renameat(fd, "peers.env.tmp", fd, "peers.env") != 0)
        rc = sluice_errorf(err, SLUICE_EIO, "peers: rename to %s/peers.env: %s", dir,
                           strerror(errno));
out:
    if (fd >= 0)
        close(fd);
    buf_free(&b);
    json_decref(partner);
    json_decref(render);
    return rc;
}

/* Record that log `stream` of `attempt` holds nothing to keep (`status`
 * MISSING or REFUSED, `note` why), unless a row of it is already there: an
 * archive tried again after it removed part of the staging must not
 * overwrite the bytes it stored the first time. */
static sluice_err keep_nothing(staging_ctx_t *c,
                               const char *launch_id,
                               uint32_t attempt,
                               const char *stream,
                               sluice_store_log_status status,
                               const char *note,
                               sluice_error_t *err)
{
    sluice_store_log_info_t info;
    sluice_store_log_t lg = {0};
    sluice_err rc = sluice_store_get_log(c->store, launch_id, stream, (int)attempt, &info, err);

    if (rc != SLUICE_ENOTFOUND)
        return rc; /* kept already, or the store failed */
    lg.launch_id = launch_id;
    lg.attempt = attempt;
    lg.stream = stream;
    lg.status = status;
    lg.note = note;
    return sluice_store_put_log(c->store, &lg, err);
}

/* The last bytes of the open log `fd` (`size` long when opened), at most
 * store.log_max_bytes of them, into the store as log `stream` of
 * `attempt`; the row says how much of the start was cut. */
static sluice_err keep_tail(staging_ctx_t *c,
                            const char *launch_id,
                            uint32_t attempt,
                            const char *stream,
                            int fd,
                            int64_t size,
                            sluice_error_t *err)
{
    int64_t cap = c->cfg->store.log_max_bytes > 0 ? c->cfg->store.log_max_bytes : 8L << 20;
    int64_t from = size > cap ? size - cap : 0;
    size_t want = (size_t)(size - from), got = 0;
    char *buf = malloc(want > 0 ? want : 1);
    sluice_store_log_t lg = {0};
    ssize_t n;
    sluice_err rc;

    if (buf == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "archive: %s of %s: out of memory", stream,
                             launch_id);
    while (got < want && (n = pread(fd, buf + got, want - got, (off_t)from + (off_t)got)) != 0) {
        if (n < 0 && errno != EINTR) {
            free(buf);
            return sluice_errorf(err, SLUICE_EIO, "archive: read %s.log: %s", stream,
                                 strerror(errno));
        }
        got += n > 0 ? (size_t)n : 0;
    }
    lg.launch_id = launch_id;
    lg.attempt = attempt;
    lg.stream = stream;
    lg.status = SLUICE_STORE_LOG_STORED;
    lg.size = from + (int64_t)got; /* a file cut short meanwhile ends where reading did */
    lg.data = buf;
    lg.len = got;
    if (from > 0)
        sluice_log(SLUICE_LOG_INFO,
                   "launch %s: archive: %s of attempt %u is %" PRId64
                   " bytes; the store keeps the last %zu (store.log_max_bytes)",
                   launch_id, stream, attempt, size, got);
    rc = sluice_store_put_log(c->store, &lg, err);
    free(buf);
    return rc;
}

/* Keep the job-owned log `name` (stdout.log, stderr.log) of the attempt
 * directory `from_fd`: its last bytes in the store (keep_tail), and unless
 * `to` is NULL a plain copy `to` (a new 0600 file) in this host's artifacts.  A file that
 * is not there, or that the jobfs rule refuses (a symlink, a FIFO, a hard
 * link: never followed or waited on, a warning), is a row that says so. */
static sluice_err keep_log(staging_ctx_t *c,
                           const char *launch_id,
                           uint32_t attempt,
                           int from_fd,
                           const char *name,
                           const char *to,
                           sluice_error_t *err)
{
    char chunk[65536], stream[8];
    int in = -1, out;
    ssize_t n;
    struct stat st;
    sluice_error_t oerr = SLUICE_ERROR_INIT;
    sluice_err rc = jobfs_open_file(from_fd, name, &in, &st, &oerr);

    snprintf(stream, sizeof(stream), "%.6s", name); /* "stdout" of "stdout.log" */
    if (rc == SLUICE_ENOTFOUND)
        return keep_nothing(c, launch_id, attempt, stream, SLUICE_STORE_LOG_MISSING, NULL, err);
    if (rc == SLUICE_EPERM) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: archive: not archived: %s", launch_id,
                   oerr.text);
        return keep_nothing(c, launch_id, attempt, stream, SLUICE_STORE_LOG_REFUSED, oerr.text,
                            err);
    }
    if (rc != SLUICE_OK) {
        if (err != NULL)
            *err = oerr;
        return sluice_error_prefix(err, "archive");
    }
    out = to != NULL ? open(to, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    if (to != NULL && out < 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "archive: %s: %s", to, strerror(errno));
        close(in);
        return rc;
    }
    while (out >= 0 && (n = read(in, chunk, sizeof(chunk))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = sluice_errorf(err, SLUICE_EIO, "archive: read %s: %s", name, strerror(errno));
            break;
        }
        if (write(out, chunk, (size_t)n) != n) {
            rc = sluice_errorf(err, SLUICE_EIO, "archive: write %s: %s", to, strerror(errno));
            break;
        }
    }
    if (out >= 0 && fsync(out) != 0 && rc == SLUICE_OK && errno != EINVAL)
        rc = sluice_errorf(err, SLUICE_EIO, "archive: fsync %s: %s", to, strerror(errno));
    if (out >= 0)
        close(out);
    if (rc == SLUICE_OK)
        rc = keep_tail(c, launch_id, attempt, stream, in, (int64_t)st.st_size, err);
    close(in);
    return rc;
}

/* stdout.log and stderr.log of the attempt directory `from_fd` (attempt
 * `attempt`): into the store, and copied into `to_dir` (created 0700)
 * unless it is NULL. */
static sluice_err keep_logs(staging_ctx_t *c,
                            const char *launch_id,
                            uint32_t attempt,
                            int from_fd,
                            const char *to_dir,
                            sluice_error_t *err)
{
    static const char *const logs[] = {"stdout.log", "stderr.log"};
    char dst[4400];
    sluice_err rc = SLUICE_OK;

    if (to_dir != NULL && mkdir(to_dir, 0700) != 0 && errno != EEXIST)
        return sluice_errorf(err, SLUICE_EIO, "archive: %s: %s", to_dir, strerror(errno));
    for (size_t i = 0; i < 2 && rc == SLUICE_OK; i++) {
        snprintf(dst, sizeof(dst), "%s/%s", to_dir != NULL ? to_dir : "", logs[i]);
        rc = keep_log(c, launch_id, attempt, from_fd, logs[i], to_dir != NULL ? dst : NULL, err);
    }
    return rc;
}

/* No attempt directory to read (nothing staged, or something else in its
 * place: `why`): both logs of `attempt` recorded as such. */
static sluice_err keep_none(
    staging_ctx_t *c, const char *launch_id, uint32_t attempt, const char *why, sluice_error_t *err)
{
    sluice_store_log_status status =
        why != NULL ? SLUICE_STORE_LOG_REFUSED : SLUICE_STORE_LOG_MISSING;
    sluice_err rc = keep_nothing(c, launch_id, attempt, "stdout", status, why, err);

    return rc == SLUICE_OK ? keep_nothing(c, launch_id, attempt, "stderr", status, why, err) : rc;
}

/* The logs of every attempt a later one superseded (prepare renamed its
 * directory to "<attempt>.superseded-by-<n>" in the launch directory
 * `launch_fd`: attempt n-1's files) into the store and
 * <artifact_dir>/attempt-<n-1>/. */
static sluice_err archive_superseded(staging_ctx_t *c,
                                     const char *launch_id,
                                     int launch_fd,
                                     const char *base,
                                     const char *artifact_dir,
                                     sluice_error_t *err)
{
    char to[4400];
    size_t blen = strlen(base);
    sluice_error_t oerr = SLUICE_ERROR_INIT;
    int dfd;
    DIR *d = NULL;
    struct dirent *e;
    sluice_err rc = SLUICE_OK;

    if ((dfd = fcntl(launch_fd, F_DUPFD_CLOEXEC, 0)) < 0 || (d = fdopendir(dfd)) == NULL) {
        if (dfd >= 0)
            close(dfd);
        return sluice_errorf(err, SLUICE_EIO, "archive: launch directory: %s", strerror(errno));
    }
    while (rc == SLUICE_OK && (e = readdir(d)) != NULL) {
        const char *tail = e->d_name + blen;
        char *end;
        unsigned long n;
        int afd = -1;

        if (strncmp(e->d_name, base, blen) != 0 || strncmp(tail, ".superseded-by-", 15) != 0)
            continue;
        n = strtoul(tail + 15, &end, 10);
        if (*end != '\0' || n < 2 || n > UINT32_MAX)
            continue;
        if ((rc = jobfs_open_dir(launch_fd, e->d_name, &afd, &oerr)) != SLUICE_OK) {
            if (rc == SLUICE_EPERM) {
                sluice_log(SLUICE_LOG_WARNING, "launch %s: archive: not archived: %s", launch_id,
                           oerr.text);
                rc = keep_none(c, launch_id, (uint32_t)(n - 1), oerr.text, err);
            } else if (err != NULL) {
                *err = oerr;
            }
            continue;
        }
        snprintf(to, sizeof(to), "%s/attempt-%lu", artifact_dir != NULL ? artifact_dir : "", n - 1);
        rc = keep_logs(c, launch_id, (uint32_t)(n - 1), afd, artifact_dir != NULL ? to : NULL, err);
        close(afd);
    }
    closedir(d);
    return rc;
}

static sluice_err archive(void *arg,
                          const char *launch_id,
                          uint32_t attempt,
                          const char *artifact_dir,
                          sluice_error_t *err)
{
    staging_ctx_t *c = arg;
    json_t *render;
    const char *dir;
    char attempt_name[256], launch_name[256];
    int lfd = -1, afd = -1, sfd = -1;
    sluice_error_t oerr = SLUICE_ERROR_INIT;
    sluice_err rc = SLUICE_OK;

    if ((render = stored_render(c, launch_id, err)) == NULL)
        return err ? err->code : SLUICE_ESTORE;
    if ((dir = staging_dir_of(render)) == NULL) {
        rc = keep_none(c, launch_id, attempt, NULL, err); /* nothing was staged */
        goto out;
    }
    rc = staging_open_above(dir, 1, &lfd, attempt_name, sizeof(attempt_name), err);
    if (rc == SLUICE_ENOTFOUND) {
        /* nothing staged, or removed already (the rows are there then) */
        rc = keep_none(c, launch_id, attempt, NULL, err);
        goto out;
    }
    if (rc != SLUICE_OK)
        goto out;
    /* The final attempt's logs at the top, every earlier one's beside. */
    rc = jobfs_open_dir(lfd, attempt_name, &afd, &oerr);
    if (rc == SLUICE_OK)
        rc = keep_logs(c, launch_id, attempt, afd, artifact_dir, err);
    else if (rc == SLUICE_ENOTFOUND || rc == SLUICE_EPERM) /* something else in its place */
        rc = keep_none(c, launch_id, attempt, rc == SLUICE_EPERM ? oerr.text : NULL, err);
    else if (err != NULL)
        *err = oerr;
    if (rc != SLUICE_OK ||
        (rc = archive_superseded(c, launch_id, lfd, attempt_name, artifact_dir, err)) != SLUICE_OK)
        goto out;
    /* Remove the whole launch directory (<sha8>/), every attempt in it,
     * relative to the site directory and without following a link. */
    if ((rc = staging_open_above(dir, 2, &sfd, launch_name, sizeof(launch_name), err)) != SLUICE_OK)
        goto out;
    if (jobfs_remove_tree(sfd, launch_name) != 0)
        rc = sluice_errorf(err, SLUICE_EIO, "archive: cannot remove staging %s: %s", dir,
                           strerror(errno));
out:
    if (sfd >= 0)
        close(sfd);
    if (afd >= 0)
        close(afd);
    if (lfd >= 0)
        close(lfd);
    json_decref(render);
    return rc;
}

sluice_err sluice_staging_ops_new(const sluice_config_t *cfg,
                                  sluice_store_t *store,
                                  sluice_staging_ops_t *out,
                                  sluice_error_t *err)
{
    staging_ctx_t *c;

    memset(out, 0, sizeof(*out));
    if (cfg == NULL || store == NULL || cfg->storage.root == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "staging ops: a config with storage.root and a "
                             "store are required");
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    c->cfg = cfg;
    c->store = store;
    {
        sluice_err rc = staging_owner_store_id(sluice_store_dir(store), c->store_id, err);
        if (rc != SLUICE_OK) {
            free(c);
            return rc;
        }
    }
    out->prepare = prepare;
    out->sync = sync_staging;
    out->read_pool_exits = read_pool_exits;
    out->write_peers = write_peers;
    out->archive = archive;
    out->list_staging = staging_list;
    out->arg = c;
    return SLUICE_OK;
}

void sluice_staging_ops_free(sluice_staging_ops_t *ops)
{
    if (ops == NULL)
        return;
    free(ops->arg);
    memset(ops, 0, sizeof(*ops));
}
