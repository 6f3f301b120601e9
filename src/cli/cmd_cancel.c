/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cancel.c - `sluice cancel LAUNCH_ID`: ask the supervisor (`sluice
 * serve` or `sluice launch --wait`) to cancel a launch, in the local store
 * or, with --server, through a running `sluice serve` (DELETE
 * /v1/launches/{id}).
 *
 * Notes:
 * - It never talks to Slurm.  Locally it appends a `cancel-requested` event
 *   (with the caller "cli:<user>", for the audit) that the supervisor
 *   holding the store lock carries out on its next cycle, after its
 *   ownership checks.
 * - A launch that already ended is reported as such and left unchanged
 *   (exit 0); the --server path asks first so that it says the same.
 * - Exit codes: 0 requested or already over, 69 unknown launch, 64 usage.
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

static const char cancel_usage[] =
    "usage: sluice cancel [--state-dir DIR | --server URL] LAUNCH_ID\n"
    "\n"
    "Ask the supervisor (`sluice serve` or `sluice launch --wait`) to cancel a\n"
    "launch.  The request is recorded in the store with your user name; the\n"
    "supervisor checks that the Slurm job is ours (name, comment marker, user)\n"
    "before it sends anything.  Cancelling a finished launch changes nothing.\n" REMOTE_USAGE;

static int cancel_remote(const cli_store_opts_t *o, const char *id)
{
    cli_remote_t *r = NULL;
    json_t *launch = NULL;
    char path[512], esc[400];
    long status = 0;
    int rc;

    if (cli_remote_escape(id, esc, sizeof(esc)) != 0) {
        fprintf(stderr, "sluice: launch id '%s' is too long\n", id);
        return CLI_EX_DATAERR;
    }
    snprintf(path, sizeof(path), "/v1/launches/%s", esc);
    if ((rc = cli_remote_open(&o->remote, &r)) != CLI_EX_OK)
        return rc;
    /* Ask first, so that an ended launch says so as it does locally. */
    if ((rc = cli_remote_json(r, "GET", path, NULL, NULL, &status, &launch)) != CLI_EX_OK)
        goto out;
    if (json_is_true(json_object_get(launch, "terminal"))) {
        cli_print_cancel_over(id, json_string_value(json_object_get(launch, "state")));
        goto out;
    }
    json_decref(launch);
    launch = NULL;
    if ((rc = cli_remote_json(r, "DELETE", path, NULL, NULL, &status, &launch)) != CLI_EX_OK)
        goto out;
    printf("cancel of %s requested; the supervisor carries it out on its next cycle\n", id);
out:
    json_decref(launch);
    cli_remote_close(r);
    return rc;
}

int cmd_cancel(int argc, char **argv)
{
    cli_store_opts_t o;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL, *ctx = NULL;
    struct passwd *pw;
    char caller[160];
    int rc = CLI_EX_OK, i;

    memset(&o, 0, sizeof(o));
    if ((i = cli_store_parse(argc, argv, &o, cancel_usage, &rc)) < 0)
        return rc;
    if (i != argc - 1) {
        fputs(cancel_usage, stderr);
        return CLI_EX_USAGE;
    }
    if (cli_remote_wanted(&o.remote))
        return cancel_remote(&o, argv[i]);
    if ((rc = cli_store_open(&o, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_get_launch(store, argv[i], &launch, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if (json_is_true(json_object_get(launch, "terminal"))) {
        cli_print_cancel_over(argv[i], json_string_value(json_object_get(launch, "state")));
        goto out;
    }
    pw = getpwuid(getuid());
    snprintf(caller, sizeof(caller), "cli:%s", pw ? pw->pw_name : "unknown");
    ctx = json_pack("{s:s}", "caller", caller);
    if (ctx == NULL || sluice_store_append_event(store, argv[i], "cancel-requested", ctx, caller, 0,
                                                 NULL, &err) != SLUICE_OK) {
        if (ctx == NULL)
            sluice_errorf(&err, SLUICE_ENOMEM, "out of memory");
        rc = cli_fail(&err);
        goto out;
    }
    printf("cancel of %s requested; the supervisor carries it out on its next cycle\n", argv[i]);
out:
    json_decref(ctx);
    json_decref(launch);
    sluice_store_close(store);
    return rc;
}
