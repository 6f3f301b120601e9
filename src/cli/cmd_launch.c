/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_launch.c - `sluice launch REQUEST.json --wait`: the whole lifecycle in
 * one process.
 *
 * The request is validated and rendered once, accepted into the store
 * (idempotent on launch_id: running the same command again resumes the
 * same launch, it never submits a second job), submitted exactly once
 * through slurmrestd and supervised until it ends.  Each transition is
 * printed as it happens; the exit code is the launch's result code (0, 1,
 * 9, 101-104).  Usage and setup errors use sysexits (64, 65, 69, 74, 77,
 * 78).
 *
 * Notes:
 * - The wiring is the library's: sluice_accept_prepare() judges and
 *   renders the request (cli_prepare), sluice_supervisor_open() opens the
 *   store, the REST client and cluster operations (submit.in_flight POSTs
 *   at once, as `sluice serve`), staging and the recovered launcher, and
 *   sluice_accept_commit() stores the launch.
 * - This process is the supervisor while it runs: it holds the store's
 *   lock, so a second `launch --wait` on the same store is refused.  Other
 *   commands (status, ls, cancel) work beside it.
 * - Secret values (the request's `secrets` and the `secret_env` names read
 *   from this environment) stay in memory and reach only the attempt's
 *   0600 secrets.env.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/accept.h>
#include <sluice/supervisor.h>

#include "cli.h"
#include "prepare.h"
#include "print.h"
#include "remote.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: sluice launch REQUEST.json --wait [--config FILE] [--set KEY=VALUE ...]\n"
               "                     [--study-runtime FILE] [--state-dir DIR] [-o text|json]\n"
               "       sluice launch REQUEST.json --server URL [--wait] [-o text|json]\n"
               "\n"
               "Validate, render and submit a launch through slurmrestd, then supervise it\n"
               "until it ends, printing every transition.  The exit code is the result code:\n"
               "0 succeeded, 1 execution error, 9 aborted, 101-103 declared by the workload,\n"
               "104 infrastructure error.  Running the same request again resumes the same\n"
               "launch; it never submits a second job.\n"
               "\n"
               "options:\n"
               "  --wait                supervise in this process until the launch ends\n"
               "                        (or POST the request to a running `sluice serve`)\n"
               "  --config FILE         site YAML (default: $SLUICE_CONFIG)\n"
               "  --set KEY=VALUE       override one dotted site key\n"
               "  --study-runtime FILE  study runtime file (format_version 2)\n"
               "  --state-dir DIR       the store (default: $SLUICE_STATE_DIR, /var/lib/sluice\n"
               "                        for root, else $XDG_STATE_HOME/sluice)\n"
               "  -o, --output FMT      text (default) or json (one object per transition)\n"
               "  -h, --help            show this help\n"
               "\n"
               "With --server (or $SLUICE_SERVER) the request goes to a running `sluice\n"
               "serve`, which validates, renders and supervises it; --wait then follows it\n"
               "there and prints the same lines, with the same exit code.\n" REMOTE_USAGE);
}

typedef struct {
    int json;
} print_ctx_t;

static void on_transition(const sluice_launcher_transition_t *t, void *arg)
{
    print_ctx_t *pc = arg;
    cli_transition_t ct;

    ct.launch_id = t->launch_id;
    ct.event = t->event ? t->event : "";
    ct.state = sluice_fsm_state_name(t->to);
    ct.result = t->result;
    ct.slurm_state = t->slurm_state ? t->slurm_state : "";
    ct.reason = t->reason ? t->reason : "";
    ct.elapsed = t->elapsed;
    cli_print_transition(&ct, pc->json);
}

int cmd_launch(int argc, char **argv)
{
    cli_prepare_opts_t po;
    cli_remote_opts_t ro;
    cli_prepared_t p;
    print_ctx_t pc = {0};
    const char *state_dir = NULL;
    int wait = 0, rc = CLI_EX_OK, a, k, result = 127;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    const char *id;

    memset(&po, 0, sizeof(po));
    memset(&ro, 0, sizeof(ro));
    memset(&p, 0, sizeof(p));
    for (a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return CLI_EX_OK;
        } else if ((k = cli_prepare_option(&po, argc, argv, &a)) != 0 ||
                   (k = cli_remote_option(&ro, argc, argv, &a)) != 0) {
            if (k < 0)
                return CLI_EX_USAGE;
        } else if (strcmp(arg, "--wait") == 0) {
            wait = 1;
        } else if (strcmp(arg, "--state-dir") == 0 && a + 1 < argc) {
            state_dir = argv[++a];
        } else if ((strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) && a + 1 < argc) {
            a++;
            if (strcmp(argv[a], "json") == 0) {
                pc.json = 1;
            } else if (strcmp(argv[a], "text") != 0) {
                fprintf(stderr, "sluice launch: -o expects text or json, not '%s'\n", argv[a]);
                return CLI_EX_USAGE;
            }
        } else if ((arg[0] != '-' || strcmp(arg, "-") == 0) && !po.request_path) {
            po.request_path = arg;
        } else {
            fprintf(stderr, "sluice launch: unexpected argument '%s'\n", arg);
            usage(stderr);
            return CLI_EX_USAGE;
        }
    }
    if (!po.request_path) {
        usage(stderr);
        return CLI_EX_USAGE;
    }
    if (cli_remote_wanted(&ro)) {
        if (po.config_path || po.n_sets || po.study_path || state_dir) {
            fprintf(stderr, "sluice launch: --config, --set, --study-runtime and --state-dir "
                            "belong to the service's side; not with --server\n");
            return CLI_EX_USAGE;
        }
        return cli_launch_remote(&ro, po.request_path, wait, pc.json);
    }
    if (!wait) {
        fprintf(stderr,
                "sluice launch: a launch needs a supervisor: run it with --wait (this "
                "process supervises it to the end), or POST it to a running `sluice serve`\n");
        return CLI_EX_USAGE;
    }
    po.read_secrets = 1; /* a secret_env that is not set fails before the store opens */
    if ((rc = cli_prepare(&po, &p)) != CLI_EX_OK)
        return rc;
    so.state_dir = state_dir;
    so.on_transition = on_transition;
    so.transition_arg = &pc;
    /* rest.user unset: the token's user, before staging and the launcher read it */
    if (sluice_client_resolve_user(p.cfg, NULL, &err) != SLUICE_OK ||
        sluice_supervisor_open(&sup, p.cfg, &so, NULL, &err) != SLUICE_OK ||
        sluice_accept_commit(p.accept, &outcome, NULL, sluice_supervisor_launcher(sup), &err) !=
            SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    id = sluice_accept_launch_id(p.accept);
    if (!pc.json)
        cli_print_accepted(id, outcome == SLUICE_ACCEPT_EXISTED, p.cfg->site_name,
                           p.render->n_jobs);
    if (sluice_launcher_wait(sluice_supervisor_launcher(sup), id, NULL, NULL, &result, &err) !=
        SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    rc = result;
out:
    sluice_supervisor_close(sup);
    cli_prepared_free(&p);
    return rc;
}
