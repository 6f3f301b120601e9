/* SPDX-License-Identifier: Apache-2.0 */
/* staging_list.c - the recovery's scan of the site's staging directory
 * (sluice_staging_ops_t.list_staging): every launch directory but those
 * another store marked (staging_owner.c).  Walked from the storage root
 * without following a link (base/jobfs.h): everything below it is
 * job-owned.
 */
#define _GNU_SOURCE 1 /* fdopendir under -std=c11 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/log.h>

#include "base/jobfs.h"
#include "staging_ctx.h"
#include "staging_owner.h"

sluice_err staging_list(void *arg, char ***names_out, size_t *n_out, sluice_error_t *err)
{
    staging_ctx_t *c = arg;
    const char *site = c->cfg->site_name ? c->cfg->site_name : "default";
    DIR *d;
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    int rfd, sfd = -1, dfd;
    sluice_err rc;

    *names_out = NULL;
    *n_out = 0;
    /* The root as configured, the site directory below it without following
     * a link (base/jobfs.h). */
    if ((rfd = open(c->cfg->storage.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return errno == ENOENT ? SLUICE_OK
                               : sluice_errorf(err, SLUICE_EIO, "staging: %s: %s",
                                               c->cfg->storage.root, strerror(errno));
    rc = jobfs_open_dir(rfd, site, &sfd, err);
    close(rfd);
    if (rc != SLUICE_OK)
        return rc == SLUICE_ENOTFOUND
                   ? SLUICE_OK
                   : sluice_error_prefix(err, "staging: %s", c->cfg->storage.root);
    if ((dfd = fcntl(sfd, F_DUPFD_CLOEXEC, 0)) < 0 || (d = fdopendir(dfd)) == NULL) {
        if (dfd >= 0)
            close(dfd);
        close(sfd);
        return sluice_errorf(err, SLUICE_EIO, "staging: %s/%s: %s", c->cfg->storage.root, site,
                             strerror(errno));
    }
    while ((e = readdir(d)) != NULL) {
        char **grown;
        if (e->d_name[0] == '.')
            continue;
        if (staging_owner_foreign(sfd, e->d_name, c->store_id)) {
            sluice_log(SLUICE_LOG_DEBUG, "staging directory %s/%s/%s belongs to another store",
                       c->cfg->storage.root, site, e->d_name);
            continue;
        }
        grown = realloc(names, (n + 1) * sizeof(*names));
        if (grown == NULL || (grown[n] = strdup(e->d_name)) == NULL) {
            size_t i;
            names = grown ? grown : names;
            for (i = 0; i < n; i++)
                free(names[i]);
            free(names);
            closedir(d);
            close(sfd);
            return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        }
        names = grown;
        n++;
    }
    closedir(d);
    close(sfd);
    *names_out = names;
    *n_out = n;
    return SLUICE_OK;
}
