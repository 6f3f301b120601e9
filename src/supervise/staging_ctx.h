/* SPDX-License-Identifier: Apache-2.0 */
/* staging_ctx.h - the state behind the launcher's staging hooks
 * (staging_ops.c), shared by the files that implement them. */
#ifndef SLUICE_SUPERVISE_STAGING_CTX_H
#define SLUICE_SUPERVISE_STAGING_CTX_H

#include <stddef.h>

#include <sluice/ops.h>

#include "request/staging.h"
#include "staging_owner.h"

typedef struct {
    const sluice_config_t *cfg;
    sluice_store_t *store;
    char store_id[STAGING_OWNER_ID_LEN + 1];
    /* sluice_staging_ops_use_tenants(): the site whose tenants own their
     * launches' staging (borrowed), NULL: rest.user owns all of it */
    const sluice_config_t *tenants_of;
} staging_ctx_t;

/* sluice_staging_ops_t.list_staging (staging_list.c). */
sluice_err staging_list(void *arg, char ***names_out, size_t *n_out, sluice_error_t *err);

/* The Slurm user owning launch `launch_id`'s staging, into *user_out
 * (borrowed from the site config; NULL: rest.user), and whether the
 * tenants' strict rule applies (staging_create_as()).  SLUICE_EINVAL for
 * a key naming a tenant the site does not have (staging_ops.c). */
sluice_err staging_owner_of(const staging_ctx_t *c,
                            const char *launch_id,
                            const char **user_out,
                            bool *strict_out,
                            sluice_error_t *err);

#endif /* SLUICE_SUPERVISE_STAGING_CTX_H */
