/* SPDX-License-Identifier: Apache-2.0 */
/* server_retention.c - retention of `sluice serve`: finished launches older
 * than launches_max_age_s leave the store (their archived logs with them),
 * the archived logs of finished launches older than logs_max_age_s leave
 * the store (their rows stay, saying so) and this host's log directories
 * older than that leave <store>/artifacts (sluice_server_prune, run by the
 * launcher loop every prune_interval_s).
 *
 * Notes:
 * - The store refuses to delete a launch that is not terminal and never
 *   prunes a live launch's logs; a log directory is kept while the store
 *   knows its launch as live or cannot say.
 * - Directories are removed without following a symlink (base/jobfs.h).
 * - A prune writes no event, so it drops every cached GET answer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/log.h>

#include "base/jobfs.h"

#include "server_cache.h"
#include "server_feed.h"
#include "server_int.h"
#include "server_util.h"

/* Archived log directories older than logs_max_age_s, unless the store
 * still knows their launch as live. */
static sluice_err prune_logs(sluice_server_t *s, int64_t now_ms, size_t *n_out, sluice_error_t *err)
{
    char dir[4200];
    int dfd;
    DIR *d;
    struct dirent *e;
    int64_t cutoff = now_ms - s->o.logs_max_age_s * 1000;
    sluice_err rc = SLUICE_OK;

    snprintf(dir, sizeof(dir), "%s/artifacts", sluice_store_dir(s->o.store));
    if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return errno == ENOENT ? SLUICE_OK
                               : sluice_errorf(err, SLUICE_EIO, "%s: %s", dir, strerror(errno));
    if ((d = fdopendir(dfd)) == NULL) {
        close(dfd);
        return sluice_errorf(err, SLUICE_EIO, "%s: %s", dir, strerror(errno));
    }
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        json_t *l = NULL;
        sluice_err g;
        int live;

        if (!server_valid_id(e->d_name, strlen(e->d_name)) ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            (int64_t)st.st_mtime * 1000 >= cutoff)
            continue;
        pthread_mutex_lock(&s->rmu);
        g = sluice_store_get_launch(s->rstore, e->d_name, &l, NULL);
        pthread_mutex_unlock(&s->rmu);
        live =
            g == SLUICE_OK ? !json_is_true(json_object_get(l, "terminal")) : g != SLUICE_ENOTFOUND;
        json_decref(l);
        if (live)
            continue; /* a live launch, or the store could not say: keep */
        if (jobfs_remove_tree(dfd, e->d_name) != 0) {
            rc = sluice_errorf(err, SLUICE_EIO, "retention: %s/%s: %s", dir, e->d_name,
                               strerror(errno));
            continue;
        }
        (*n_out)++;
    }
    closedir(d);
    return rc;
}

sluice_err sluice_server_prune(
    sluice_server_t *s, int64_t now_ms, size_t *launches_out, size_t *logs_out, sluice_error_t *err)
{
    size_t nl = 0, ng = 0, ns = 0;
    sluice_err rc = SLUICE_OK, rc2 = SLUICE_OK;

    if (s == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "no server");
    if (now_ms == 0)
        now_ms = server_clock_ms(CLOCK_REALTIME);
    pthread_mutex_lock(&s->prune_mu);
    if (s->o.launches_max_age_s > 0) {
        /* The store refuses to delete a launch that is not terminal. */
        pthread_mutex_lock(&s->mu);
        rc = sluice_store_prune(s->o.store, s->o.launches_max_age_s * 1000, now_ms, &nl, err);
        pthread_mutex_unlock(&s->mu);
    }
    if (s->o.logs_max_age_s > 0) {
        /* The store's copies (every replica's), then this host's. */
        pthread_mutex_lock(&s->mu);
        rc2 = sluice_store_prune_logs(s->o.store, s->o.logs_max_age_s * 1000, now_ms, &ns,
                                      rc == SLUICE_OK ? err : NULL);
        pthread_mutex_unlock(&s->mu);
        if (rc2 == SLUICE_OK)
            rc2 = prune_logs(s, now_ms, &ng, rc == SLUICE_OK ? err : NULL);
    }
    pthread_mutex_unlock(&s->prune_mu);
    if (nl > 0)
        server_count_pruned(s, nl); /* the metric, and no cached answer outlives it */
    atomic_fetch_add(&s->pruned_logs, ng + ns);
    if (nl > 0 || ng > 0 || ns > 0)
        sluice_log(SLUICE_LOG_INFO,
                   "retention: removed %zu finished launches, the stored logs of %zu and %zu log "
                   "directories",
                   nl, ns, ng);
    if (launches_out)
        *launches_out = nl;
    if (logs_out)
        *logs_out = ng + ns;
    return rc != SLUICE_OK ? rc : rc2;
}

void server_count_pruned(sluice_server_t *s, size_t n)
{
    if (s == NULL)
        return;
    atomic_fetch_add(&s->pruned, (unsigned long long)n);
    /* A prune writes no event: no kept answer, and no kept event of a
     * deleted launch, may outlive it. */
    server_cache_clear(s);
    server_feed_forget(s->feed);
}
