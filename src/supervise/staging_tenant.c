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
    if ((rc = staging_site_dir_ok(c->cfg, err)) != SLUICE_OK)
        return rc;
    c->tenants_of = site;
    return SLUICE_OK;
}
