/* SPDX-License-Identifier: Apache-2.0 */
/* check_tenant.h - the tenant rows of `sluice check`. */
#ifndef SLUICE_CLI_CHECK_TENANT_H
#define SLUICE_CLI_CHECK_TENANT_H

#include <stdbool.h>

#include <sluice/client.h>
#include <sluice/config.h>

/* One row: its name, status ("ok", "FAIL", "warn", "skipped"), the
 * sysexit of a failure (0 otherwise) and its text. */
typedef void (*check_row_fn)(
    void *arg, const char *name, const char *status, int code, const char *detail);

/* The rows of the tenants of `site` on cluster `cfg`, whose own client is
 * `site_client` (negotiated; a proxy borrows its token source), through
 * `row`: "tenants-staging" (this process can give each tenant its
 * staging), then for each tenant "tenant:<name>/token" (its identity gets
 * a token and Slurm accepts it as the tenant's user: diag with that
 * user's headers), "tenant:<name>/uid-contract" (the user has a uid on
 * this host to give staging to) and, with `probe`,
 * "tenant:<name>/probe-job" (check_probe_job_as()).  Nothing for a site
 * without tenants. */
void check_tenants(const sluice_config_t *site,
                   const sluice_config_t *cfg,
                   sluice_client_t *site_client,
                   bool probe,
                   long probe_timeout,
                   check_row_fn row,
                   void *arg);

#endif /* SLUICE_CLI_CHECK_TENANT_H */
