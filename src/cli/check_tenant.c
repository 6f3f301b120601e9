/* SPDX-License-Identifier: Apache-2.0 */
/* check_tenant.c - `sluice check` for each tenant of the site: its
 * identity live (a token, and Slurm accepting it as the tenant's user),
 * the uid contract of its staging, and with --probe-job a job of its own
 * (check_tenant.h).
 *
 * Notes:
 * - Slurm authenticates the pair of headers: X-SLURM-USER-NAME must be the
 *   token's user unless that user is SlurmUser or root (the proxy).  An
 *   authenticated diag with the tenant's user in the header is therefore
 *   Slurm accepting the identity as that user; --probe-job then shows a
 *   job of that user running as the uid its staging is given to.
 * - The token never reaches a row: rows name the identity, the user and
 *   the source only.
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sluice/auth.h>

#include "check_probe.h"
#include "check_tenant.h"
#include "cli.h"
#include "request/staging.h"

static int outcome_exit(sluice_outcome o)
{
    return o == SLUICE_OUTCOME_AUTH ? CLI_EX_NOPERM : CLI_EX_UNAVAILABLE;
}

static int error_exit(sluice_err e)
{
    return e == SLUICE_EPERM || e == SLUICE_EAUTH || e == SLUICE_EIO ? CLI_EX_NOPERM
                                                                     : CLI_EX_CONFIG;
}

static void uid_row(const sluice_tenant_t *t, const char *name, check_row_fn row, void *arg)
{
    struct passwd pw, *res = NULL;
    char buf[4096], text[400];

    if (getpwnam_r(t->slurm_user, &pw, buf, sizeof(buf), &res) != 0 || res == NULL) {
        snprintf(text, sizeof(text),
                 "%s has no account on this host: its staging cannot be given to it (a "
                 "launch of tenant %s fails at its staging)",
                 t->slurm_user, t->name);
        row(arg, name, "FAIL", CLI_EX_CONFIG, text);
        return;
    }
    snprintf(text, sizeof(text),
             "%s is uid %u here: its staging is given to uid %u (--probe-job shows its jobs run "
             "as that uid)",
             t->slurm_user, (unsigned)pw.pw_uid, (unsigned)pw.pw_uid);
    row(arg, name, "ok", 0, text);
}

/* The token row of tenant t; true when Slurm accepted the identity. */
static bool token_row(
    sluice_client_t *tc, const sluice_tenant_t *t, const char *name, check_row_fn row, void *arg)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_call_t call;
    sluice_rest_diag_t diag = {0};
    const char *id = sluice_tenant_identity_name(t->identity);
    char text[600];
    bool ok;

    memset(&call, 0, sizeof(call));
    ok = sluice_client_negotiate(tc, &call, &err) == SLUICE_OK &&
         sluice_client_diag(tc, &diag, &call, &err) == SLUICE_OK;
    sluice_rest_diag_clear(&diag);
    if (!ok) {
        snprintf(text, sizeof(text), "identity %s as %s: Slurm refused it: %s%s", id, t->slurm_user,
                 err.text,
                 t->identity == SLUICE_TENANT_PROXY && call.outcome == SLUICE_OUTCOME_AUTH
                     ? " (a proxy needs the cluster's own token to be SlurmUser's or root's)"
                     : "");
        row(arg, name, "FAIL", outcome_exit(call.outcome), text);
        return false;
    }
    snprintf(text, sizeof(text),
             "identity %s: Slurm accepts user %s (diag with X-SLURM-USER-NAME: %s)", id,
             t->slurm_user, sluice_auth_user(sluice_client_auth(tc)));
    row(arg, name, "ok", 0, text);
    return true;
}

void check_tenants(const sluice_config_t *site,
                   const sluice_config_t *cfg,
                   sluice_client_t *site_client,
                   bool probe,
                   long probe_timeout,
                   check_row_fn row,
                   void *arg)
{
    size_t n = sluice_config_tenant_count(site);
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (n == 0)
        return;
    if (staging_can_chown(&err) != SLUICE_OK)
        row(arg, "tenants-staging", "FAIL", CLI_EX_NOPERM, err.text);
    else if (staging_site_dir_ok(cfg, &err) != SLUICE_OK)
        row(arg, "tenants-staging", "FAIL", CLI_EX_CONFIG, err.text);
    else
        row(arg, "tenants-staging", "ok", 0,
            "this process can give each tenant its staging (mode 0700) and still reach it, "
            "through a site directory every tenant may pass (0711)");
    for (size_t i = 0; i < n; i++) {
        const sluice_tenant_t *t = sluice_config_tenant_at(site, i);
        sluice_client_t *tc = NULL;
        char name[96], text[600];
        bool accepted = false;

        snprintf(name, sizeof(name), "tenant:%s/token", t->name);
        err = (sluice_error_t)SLUICE_ERROR_INIT;
        if (sluice_client_new_for_tenant(&tc, cfg, t, site_client, &err) != SLUICE_OK) {
            snprintf(text, sizeof(text), "%s", err.text);
            row(arg, name, "FAIL", error_exit(err.code), text);
        } else {
            accepted = token_row(tc, t, name, row, arg);
        }
        snprintf(name, sizeof(name), "tenant:%s/uid-contract", t->name);
        uid_row(t, name, row, arg);
        if (probe) {
            snprintf(name, sizeof(name), "tenant:%s/probe-job", t->name);
            if (!accepted) {
                row(arg, name, "skipped", 0, "needs a token Slurm accepts");
            } else {
                check_probe_row_t pr;
                sluice_client_info_t info;
                memset(&pr, 0, sizeof(pr));
                sluice_client_info(tc, &info);
                check_probe_job_as(tc, cfg, &info, probe_timeout, t->slurm_user, t->account, true,
                                   &pr);
                row(arg, name, pr.status, pr.code, pr.detail);
            }
        }
        sluice_client_free(tc);
    }
}
