/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_status.c - `sluice status LAUNCH_ID`: one launch from the local store
 * (or, with --server, from a running `sluice serve`): its state, result,
 * reason, Slurm job ids and event log.
 *
 * Notes:
 * - It never talks to Slurm: the local path prints the API's view of the
 *   store (sluice_launch_view_read()) without node addresses, which need
 *   the cluster.
 * - Exit codes: 0 found, 69 unknown launch, 64 usage (store_opts.c parses
 *   the shared options).
 */
#include <stdio.h>
#include <string.h>

#include <sluice/launch_view.h>

#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

static const char status_usage[] =
    "usage: sluice status [--state-dir DIR | --server URL] [-o json|text] LAUNCH_ID\n"
    "\n"
    "Show one launch from the store: state, result, reason, Slurm job ids and its\n"
    "event log.  Exit 0 when found, 69 when the launch is unknown.\n" REMOTE_USAGE;

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

static int status_remote(const cli_store_opts_t *o, const char *id)
{
    cli_remote_t *r = NULL;
    json_t *launch = NULL;
    int rc;

    if ((rc = cli_remote_open(&o->remote, &r)) != CLI_EX_OK)
        return rc;
    if ((rc = remote_get(r, id, &launch)) == CLI_EX_OK)
        cli_print_launch(launch, o->json);
    json_decref(launch);
    cli_remote_close(r);
    return rc;
}

int cmd_status(int argc, char **argv)
{
    cli_store_opts_t o;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL;
    int rc = CLI_EX_OK, i;

    memset(&o, 0, sizeof(o));
    if ((i = cli_store_parse(argc, argv, &o, status_usage, &rc)) < 0)
        return rc;
    if (i != argc - 1) {
        fputs(status_usage, stderr);
        return CLI_EX_USAGE;
    }
    if (cli_remote_wanted(&o.remote))
        return status_remote(&o, argv[i]);
    if ((rc = cli_store_open(&o, &store)) != CLI_EX_OK)
        return rc;
    /* the API's view (no node addresses here: they need the cluster) */
    if (sluice_launch_view_read(store, argv[i], NULL, NULL, &launch, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    cli_print_launch(launch, o.json);
out:
    json_decref(launch);
    sluice_store_close(store);
    return rc;
}
