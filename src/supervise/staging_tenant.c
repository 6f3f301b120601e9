/* SPDX-License-Identifier: Apache-2.0 */
/* staging_tenant.c - whose a launch's staging is on a site with tenants
 * (sluice_staging_ops_use_tenants() in ops.h): the tenant named by the
 * launch key's, rest.user's for the default tenant, and what the process
 * and the site directory must allow for that.
 *
 * Notes:
 * - The tenant comes from the launch key only (marker.h): the HTTP layer
 *   qualified the caller's id, so a caller cannot name another tenant.
 * - Everything below the site directory stays job-owned for the service's
 *   reads (base/jobfs.h): giving it to the tenant changes who may write
 *   it, not how sluice reads it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/marker.h"
#include "staging_ctx.h"

sluice_err staging_owner_of(const staging_ctx_t *c,
                            const char *launch_id,
                            const char **user_out,
                            bool *strict_out,
                            sluice_error_t *err)
{
    char tenant[64];
    const sluice_tenant_t *t;

    *user_out = NULL;
    *strict_out = c->tenants_of != NULL;
    if (c->tenants_of == NULL || marker_key_tenant(launch_id, tenant, sizeof(tenant)) == 0)
        return SLUICE_OK; /* the default tenant: rest.user */
    if ((t = sluice_config_tenant_named(c->tenants_of, tenant)) == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "staging: launch %s names tenant %s, which the site does not have",
                             launch_id, tenant);
    *user_out = t->slurm_user;
    return SLUICE_OK;
}

/* The site directory, when it exists already (made before tenants, the
 * job user's and 0700), must let every tenant's job pass (o+x) and be no
 * job's: otherwise refused, naming the fix. */
static sluice_err site_dir_passable(const sluice_config_t *cfg, sluice_error_t *err)
{
    const char *site = cfg->site_name ? cfg->site_name : "default";
    struct stat st;
    int rfd = open(cfg->storage.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (rfd < 0)
        return SLUICE_OK; /* made later, with the right mode */
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

sluice_err sluice_staging_ops_use_tenants(sluice_staging_ops_t *ops,
                                          const sluice_config_t *site,
                                          sluice_error_t *err)
{
    staging_ctx_t *c;
    sluice_err rc;

    if (ops == NULL || ops->arg == NULL || site == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "staging ops: NULL argument");
    if (sluice_config_tenant_count(site) == 0)
        return SLUICE_OK;
    if ((rc = staging_can_chown(err)) != SLUICE_OK)
        return rc;
    c = ops->arg;
    if ((rc = site_dir_passable(c->cfg, err)) != SLUICE_OK)
        return rc;
    c->tenants_of = site;
    return SLUICE_OK;
}
