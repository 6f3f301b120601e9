/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cancel.c - `sluice cancel LAUNCH_ID`: ask the supervisor (`sluice
 * serve` or `sluice launch --wait`) to cancel a launch, in the local store
 * or, with --server, through a running `sluice serve` (DELETE
 * /v1/launches/{id}).
 *
 * Notes:
 * - It never talks to Slurm.  Locally it appends a `cancel-requested` event
 *   (with the caller "cli:<user>", for the audit; once, however often it
 *   is asked: sluice_store_request_cancel) that the supervisor
 *   holding the store lock carries out on its next cycle, after its
 *   ownership checks.
 * - A launch that already ended is reported as such and left unchanged
 *   (exit 0); the --server path asks first so that it says the same.
 * - With -o json it prints the launch afterwards, as DELETE
 *   /v1/launches/{id} answers (the API's Launch object).
 * - Exit codes: 0 requested or already over, 69 unknown launch, 66 no store
 *   there (it never creates one), 64 usage.
 */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sluice/launch_view.h>

#include "args.h"
#include "base/jdec.h"
#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

static int cancel_remote(const cli_args_t *a, const char *id)
{
    cli_remote_t *r = NULL;
    json_t *launch = NULL;
    jdec_t d;
    jdec_cur_t l;
    char path[512], esc[400];
    long status = 0;
    int rc;

    if (cli_remote_escape(id, esc, sizeof(esc)) != 0) {
        fprintf(stderr, "sluice: launch id '%s' is too long\n", id);
        return CLI_EX_DATAERR;
    }
    snprintf(path, sizeof(path), "/v1/launches/%s", esc);
    if ((rc = cli_remote_open(&a->remote, &r)) != CLI_EX_OK)
        return rc;
    /* Ask first, so that an ended launch says so as it does locally. */
    if ((rc = cli_remote_json(r, "GET", path, NULL, NULL, &status, &launch)) != CLI_EX_OK)
        goto out;
    jdec_peek_root(&d, &l, launch);
    if (jdec_peek_true(&l, "terminal")) {
        if (a->json)
            cli_print_launch(launch, 1);
        else
            cli_print_cancel_over(id, jdec_peek_string(&l, "state"));
        goto out;
    }
    json_decref(launch);
    launch = NULL;
    if ((rc = cli_remote_json(r, "DELETE", path, NULL, NULL, &status, &launch)) != CLI_EX_OK)
        goto out;
    if (a->json)
        cli_print_launch(launch, 1);
    else
        printf("cancel of %s requested; the supervisor carries it out on its next cycle\n", id);
out:
    json_decref(launch);
    cli_remote_close(r);
    return rc;
}

/* -o json: the launch as it is now (the API's view); 0 or the sysexit. */
static int print_view(sluice_store_t *store, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;

    if (sluice_launch_view_read(store, id, NULL, NULL, &view, &err) != SLUICE_OK)
        return cli_fail(&err);
    cli_print_launch(view, 1);
    json_decref(view);
    return CLI_EX_OK;
}

int cmd_cancel(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL;
    jdec_t d;
    jdec_cur_t l;
    struct passwd *pw;
    const char *id;
    char caller[160];
    int rc;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    id = a.operands[0];
    if (cli_remote_wanted(&a.remote))
        return cancel_remote(&a, id);
    if ((rc = cli_store_open_existing(spec, a.state_dir, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_get_launch(store, id, &launch, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    jdec_peek_root(&d, &l, launch);
    if (jdec_peek_true(&l, "terminal")) {
        if (a.json)
            rc = print_view(store, id);
        else
            cli_print_cancel_over(id, jdec_peek_string(&l, "state"));
        goto out;
    }
    pw = getpwuid(getuid());
    snprintf(caller, sizeof(caller), "cli:%s", pw ? pw->pw_name : "unknown");
    if (sluice_store_request_cancel(store, id, caller, NULL, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if (a.json)
        rc = print_view(store, id);
    else
        printf("cancel of %s requested; the supervisor carries it out on its next cycle\n", id);
out:
    json_decref(launch);
    sluice_store_close(store);
    return rc;
}
