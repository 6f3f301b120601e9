/* SPDX-License-Identifier: Apache-2.0 */
/* check_probe.h - the probe-job row of `sluice check --probe-job`. */
#ifndef SLUICE_CLI_CHECK_PROBE_H
#define SLUICE_CLI_CHECK_PROBE_H

#include <stdbool.h>

#include <sluice/client.h>

#define CHECK_PROBE_TIMEOUT_S 60L

/* The outcome of the probe job: status "ok", "FAIL" or "not checked", the
 * sysexit of a failure (0 otherwise) and the row's text. */
typedef struct {
    const char *status;
    int code;
    char detail[400];
} check_probe_row_t;

/* Render the probe job (sluice_render_probe()), create its staging
 * directory, submit it through `client` (negotiated already: `info` holds
 * the controller's release), wait at most `timeout_s` seconds for it to
 * end (cancelling it on timeout), read its report from the service side of
 * the storage root, compare srun's version with the controller's, and
 * remove the staging directory.  `tenants` (a site with tenants): the
 * staging is made by the tenants' rule (staging_create_as() strict), so
 * that the site directory stays one every tenant passes.  Fills *out;
 * never fails otherwise. */
void check_probe_job(sluice_client_t *client,
                     const sluice_config_t *cfg,
                     const sluice_client_info_t *info,
                     long timeout_s,
                     bool tenants,
                     check_probe_row_t *out);

/* check_probe_job() acting as a tenant: `client` acts as Slurm user
 * `user` (NULL: check_probe_job() itself), the job is charged to `account`
 * (NULL: the site's), the staging is given to `user` (as the launcher
 * gives it, mode 0700), and the row fails unless Slurm
 * names `user` as the job's user and the job ran as the uid `user` has on
 * this host (the uid contract). */
void check_probe_job_as(sluice_client_t *client,
                        const sluice_config_t *cfg,
                        const sluice_client_info_t *info,
                        long timeout_s,
                        const char *user,
                        const char *account,
                        bool tenants,
                        check_probe_row_t *out);

#endif /* SLUICE_CLI_CHECK_PROBE_H */
