/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_status.c - `sluice status LAUNCH_ID`: one launch from the local store
 * (or, with --server, from a running `sluice serve`): its state, result,
 * reason, Slurm job ids and event log.
 *
 * Notes:
 * - It never talks to Slurm: the local path prints the API's view of the
 *   store (sluice_launch_view_read()) without node addresses, which need
 *   the cluster.
 * - Exit codes: 0 found, 69 unknown launch, 66 no store there (it never
 *   creates one), 64 usage.  Options and help come from the table.
 */
#include <stdio.h>
#include <string.h>

#include <sluice/launch_view.h>

#include "args.h"
#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

/* GET /v1/launches/{id} into *out (new reference); 0 or the sysexit
 * (printed). */
static int remote_get(cli_remote_t *r, const char *id, json_t **out)
{
    char path[512], esc[400];
    long status = 0;

    if (cli_remote_escape(id, esc, sizeof(esc)) != 0) {
        fprintf(stderr, "sluice: launch id '%s' is too long\n", id);
        return CLI_EX_DATAERR;
    }
    snprintf(path, sizeof(path), "/v1/launches/%s", esc);
    return cli_remote_json(r, "GET", path, NULL, NULL, &status, out);
}

static int status_remote(const cli_args_t *a, const char *id)
{
    cli_remote_t *r = NULL;
    json_t *launch = NULL;
    int rc;

    if ((rc = cli_remote_open(&a->remote, &r)) != CLI_EX_OK)
        return rc;
    if ((rc = remote_get(r, id, &launch)) == CLI_EX_OK) {
        /* the service's store mark, not part of the launch: the local
         * status has none */
        json_object_del(launch, "resource_version");
        cli_print_launch(launch, a->json);
    }
    json_decref(launch);
    cli_remote_close(r);
    return rc;
}

int cmd_status(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    if (cli_remote_wanted(&a.remote))
        return status_remote(&a, a.operands[0]);
    if ((rc = cli_store_open_existing(spec, a.state_dir, &store)) != CLI_EX_OK)
        return rc;
    /* the API's view (no node addresses here: they need the cluster) */
    if (sluice_launch_view_read(store, a.operands[0], NULL, NULL, &launch, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    cli_print_launch(launch, a.json);
out:
    json_decref(launch);
    sluice_store_close(store);
    return rc;
}
