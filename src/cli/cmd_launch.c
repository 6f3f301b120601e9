/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_launch.c - `sluice launch REQUEST.json --wait`: the whole lifecycle in
 * one process.
 *
 * The request is validated and rendered once, accepted into the store
 * (idempotent on launch_id: running the same command again resumes the
 * same launch, it never submits a second job), submitted exactly once
 * through slurmrestd and supervised until it ends.  Each transition of
 * this launch is printed as it happens (the process supervises the store's
 * other live launches too, silently); the exit code is the launch's result
 * code (0, 1, 9, 101-104).  Usage and setup errors use sysexits (64, 65,
 * 66, 69, 74, 77, 78).
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
 * - A launch that had already ended when the request came again gets its
 *   final line (state, result, reason) from the store, as a live one gets
 *   it from its last transition, and the same exit code.
 */
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/accept.h>
#include <sluice/lease.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>

#include <sluice/launch_view.h>

#include "args.h"
#include "base/jdec.h"
#include "cli.h"
#include "prepare.h"
#include "print.h"
#include "progress.h"
#include "remote.h"
#include "store_opts.h"
#include "site/config_model.h"

typedef struct {
    int json;
    int wait;
    const char *id;   /* this launch: the supervisor runs the store's others too */
    int done_printed; /* its DONE line was printed */
    double heartbeat_s;
    const char *heartbeat_text; /* --heartbeat, checked after parsing */
    cli_progress_t progress;
} print_ctx_t;

static void on_transition(const sluice_launcher_transition_t *t, void *arg)
{
    print_ctx_t *pc = arg;
    cli_transition_t ct;

    if (pc->id == NULL || t->launch_id == NULL || strcmp(t->launch_id, pc->id) != 0)
        return;

    ct.launch_id = t->launch_id;
    ct.event = t->event ? t->event : "";
    ct.state = sluice_fsm_state_name(t->to);
    ct.result = t->result;
    ct.slurm_state = t->slurm_state ? t->slurm_state : "";
    ct.reason = t->reason ? t->reason : "";
    ct.elapsed = t->elapsed;
    cli_progress_clear(&pc->progress);
    cli_print_transition(&ct, pc->json);
    if (t->to == SLUICE_FSM_DONE)
        pc->done_printed = 1;
}

static int launch_option(int id, const char *v, void *arg)
{
    print_ctx_t *pc = arg;

    if (id == CLI_O_HEARTBEAT) {
        pc->heartbeat_text = v;
        return CLI_EX_OK;
    }
    if (id != CLI_O_WAIT)
        return CLI_EX_SOFTWARE;
    pc->wait = 1;
    return CLI_EX_OK;
}

/* Who supervises `store` now: 1 and `who` filled when a supervisor holds
 * its lock (a `sluice serve` or `launch --wait` on this state directory) or,
 * on a PostgreSQL store, when a replica holds a lease that has not ended;
 * 0 when none does; on an error (printed), minus its exit code. */
static int supervisor_of(sluice_store_t *store, const sluice_config_t *cfg, char *who, size_t cap)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_lease_t lease;

    if (sluice_store_lock_supervisor(store, &err) != SLUICE_OK) {
        if (err.code != SLUICE_ECONFLICT)
            return -cli_fail(&err);
        /* the lock's text names the holder: "... (pid N holds ...)" */
        const char *pid = strstr(err.text, "(pid ");
        snprintf(who, cap, "the supervisor running on this store%s%.*s%s", pid ? " (pid " : "",
                 pid ? (int)strspn(pid + 5, "0123456789") : 0, pid ? pid + 5 : "", pid ? ")" : "");
        return 1;
    }
    sluice_store_unlock_supervisor(store);
    if (cfg->store.url == NULL)
        return 0;
    memset(&lease, 0, sizeof(lease));
    if (sluice_store_lease_read(store, &lease, &err) != SLUICE_OK)
        return -cli_fail(&err);
    if (lease.holder[0] == '\0' || lease.lease_until_ms <= lease.now_ms)
        return 0;
    snprintf(who, cap, "replica %s, the leader of this store", lease.holder);
    return 1;
}

/* Whether the SQLite store of `state_dir` (NULL: the default directory)
 * has its database file; `where` gets the directory. */
static bool store_exists(const char *state_dir, char *where, size_t cap)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *dir = NULL, path[4200];

    if (state_dir == NULL && sluice_store_default_dir(&dir, &err) != SLUICE_OK)
        return true; /* let the open say what is wrong */
    snprintf(where, cap, "%s", state_dir != NULL ? state_dir : dir);
    snprintf(path, sizeof(path), "%s/%s", where, CLI_STORE_DB);
    free(dir);
    return access(path, F_OK) == 0;
}

/* `sluice launch REQUEST` without --wait or --server: the launch goes to the
 * supervisor that runs on the store (it takes it up from the store's
 * events), or nothing is stored and the command says plainly that none
 * runs. */
static int hand_over(cli_args_t *a, print_ctx_t *pc)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_opts_t so = SLUICE_STORE_OPTS_INIT;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NEW;
    sluice_store_t *store = NULL;
    cli_prepared_t p;
    const char *id;
    char who[512], where[4096];
    int rc, found;

    memset(&p, 0, sizeof(p));
    if ((rc = cli_prepare(&a->site, &p)) != CLI_EX_OK)
        return rc;
    id = sluice_accept_launch_id(p.accept);
    if (p.cfg->store.url == NULL && !store_exists(a->state_dir, where, sizeof(where))) {
        /* never leave an empty store behind: no store, no supervisor */
        fprintf(stderr,
                "sluice launch: no supervisor runs on the store %s (there is no store there), so "
                "nothing was stored: run it with --wait (this process supervises it to the end), "
                "start `sluice serve` on this store, or send it to a running service (--server)\n",
                where);
        rc = CLI_EX_UNAVAILABLE;
        goto out;
    }
    so.dir = a->state_dir;
    so.url = p.cfg->store.url;
    so.password_file = p.cfg->store.password_file;
    if (sluice_store_open_with(&store, &so, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if ((found = supervisor_of(store, p.cfg, who, sizeof(who))) < 0) {
        rc = -found;
        goto out;
    }
    if (found == 0) {
        fprintf(stderr,
                "sluice launch: no supervisor runs on the store %s, so nothing was stored: run "
                "it with --wait (this process supervises it to the end), start `sluice serve` on "
                "this store, or send it to a running service (--server)\n",
                sluice_store_dir(store));
        rc = CLI_EX_UNAVAILABLE;
        goto out;
    }
    if (sluice_accept_hand_over(p.accept, store, &outcome, NULL, &err) != SLUICE_OK) {
        if (err.code == SLUICE_EINVAL)
            fprintf(stderr,
                    "sluice launch: %s; run it with --wait, or send it to the service "
                    "(--server)\n",
                    err.text);
        rc = err.code == SLUICE_EINVAL ? CLI_EX_UNAVAILABLE : cli_fail(&err);
        goto out;
    }
    if (pc->json) {
        json_t *j = json_pack("{s:s, s:b, s:s}", "launch_id", id, "existed",
                              outcome == SLUICE_ACCEPT_EXISTED, "handed_to", who);
        char *text = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
        if (text != NULL)
            printf("%s\n", text);
        free(text);
        json_decref(j);
    } else {
        cli_print_accepted(id, outcome == SLUICE_ACCEPT_EXISTED, p.cfg->site_name,
                           p.render->n_jobs);
        printf("handed to %s%s; follow it with `sluice status %s`\n", who,
               outcome == SLUICE_ACCEPT_EXISTED ? " (already stored)" : ", which submits it", id);
    }
    rc = CLI_EX_OK;
out:
    sluice_store_close(store);
    cli_prepared_free(&p);
    return rc;
}

/* --heartbeat or $SLUICE_HEARTBEAT_S (`what`): a duration from 0 (never)
 * to a day, a bare number in seconds; unset or empty: the default.  0, or
 * CLI_EX_USAGE after saying why. */
static int heartbeat_of(const char *what, const char *text, double *out)
{
    long v = 0;

    if (text == NULL || text[0] == '\0') {
        *out = CLI_PROGRESS_HEARTBEAT_S;
        return CLI_EX_OK;
    }
    if (cli_duration("launch", what, text, 0, 86400, &v) != CLI_EX_OK)
        return CLI_EX_USAGE;
    *out = (double)v;
    return CLI_EX_OK;
}

/* What the loop of `launch --wait` looks at before each step. */
typedef struct {
    sluice_store_t *store;
    const char *id;
    print_ctx_t *pc;
    int *result;
    sluice_error_t *err; /* a failed read of the launch */
    sluice_err rc;
} wait_ctx_t;

/* Before each step: the launch's view; DONE ends the loop with its result
 * code, otherwise the status line is drawn and the launcher steps. */
static sluice_loop_next before_step(void *arg)
{
    wait_ctx_t *w = arg;
    json_t *view = NULL;
    jdec_t d;
    jdec_cur_t v;

    if ((w->rc = sluice_launch_view_read(w->store, w->id, NULL, NULL, &view, w->err)) != SLUICE_OK)
        return SLUICE_LOOP_STOP;
    jdec_peek_root(&d, &v, view);
    if (strcmp(jdec_peek_string_or(&v, "state", ""), "DONE") == 0) {
        *w->result = (int)jdec_peek_int(&v, "result_code", 127);
        json_decref(view);
        return SLUICE_LOOP_STOP;
    }
    cli_progress_tick(&w->pc->progress, view);
    json_decref(view);
    return SLUICE_LOOP_STEP;
}

/* The launcher's loop until the launch is DONE, the progress between steps
 * (the idle cut to a second while a status line is drawn). */
static sluice_err wait_with_progress(sluice_supervisor_t *sup,
                                     sluice_launcher_t *l,
                                     const char *id,
                                     print_ctx_t *pc,
                                     int *result,
                                     sluice_error_t *err)
{
    sluice_launcher_loop_t lo = SLUICE_LAUNCHER_LOOP_INIT;
    wait_ctx_t w = {sluice_supervisor_store(sup), id, pc, result, err, SLUICE_OK};
    sluice_err rc;

    lo.before = before_step;
    lo.arg = &w;
    lo.max_idle_ms = pc->progress.tty ? 1000 : 0;
    rc = sluice_launcher_loop(l, &lo, err);
    cli_progress_clear(&pc->progress);
    return rc != SLUICE_OK ? rc : w.rc;
}

/* The final line of a launch that ended before this process saw it end
 * (it had ended when the same request came again). */
static int print_final(sluice_store_t *store, const char *id, int json)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;
    cli_transition_t t;
    jdec_t d;
    jdec_cur_t v;

    if (sluice_launch_view_read(store, id, NULL, NULL, &view, &err) != SLUICE_OK)
        return cli_fail(&err);
    jdec_peek_root(&d, &v, view);
    cli_transition_of(view, NULL, cli_last_slurm_state(jdec_value(&v, "events")), &t);
    cli_print_transition(&t, json);
    json_decref(view);
    return CLI_EX_OK;
}

int cmd_launch(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    cli_prepared_t p;
    print_ctx_t pc;
    int rc = CLI_EX_OK, result = 127;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    const char *id;
    sluice_launcher_t *l = NULL; /* the launch's cluster's (borrowed from sup) */

    memset(&p, 0, sizeof(p));
    memset(&pc, 0, sizeof(pc));
    if (!cli_parse(spec, argc, argv, &a, launch_option, &pc, &rc))
        return rc;
    pc.json = a.json;
    if (pc.heartbeat_text != NULL &&
        heartbeat_of("--heartbeat", pc.heartbeat_text, &pc.heartbeat_s) != CLI_EX_OK) {
        cli_usage_hint(spec);
        return CLI_EX_USAGE;
    }
    if (pc.heartbeat_text == NULL &&
        heartbeat_of("SLUICE_HEARTBEAT_S", getenv("SLUICE_HEARTBEAT_S"), &pc.heartbeat_s) !=
            CLI_EX_OK)
        return CLI_EX_USAGE;
    a.site.request_path = a.operands[0];
    if (cli_remote_wanted(&a.remote)) {
        if (a.site.config_path || a.site.n_sets || a.site.study_path || a.state_dir)
            return cli_usage_error(spec, "--config, --set, --study-runtime and --state-dir "
                                         "belong to the service's side; not with --server");
        return cli_launch_remote(&a.remote, a.site.request_path, pc.wait, pc.json, pc.heartbeat_s);
    }
    if (!pc.wait)
        return hand_over(&a, &pc);
    a.site.read_secrets = 1; /* a secret_env that is not set fails before the store opens */
    if ((rc = cli_prepare(&a.site, &p)) != CLI_EX_OK)
        return rc;
    pc.id = sluice_accept_launch_id(p.accept);
    so.state_dir = a.state_dir;
    so.on_transition = on_transition;
    so.transition_arg = &pc;
    /* rest.user unset: the token's user, before staging and the launcher read
     * it.  The launch runs on its cluster's launcher (the only one driven
     * here). */
    if (cli_resolve_users(p.cfg, &err) != SLUICE_OK ||
        sluice_supervisor_open(&sup, p.cfg, &so, NULL, &err) != SLUICE_OK ||
        (l = sluice_supervisor_launcher_for(sup, sluice_accept_cluster(p.accept))) == NULL ||
        sluice_accept_commit(p.accept, &outcome, NULL, l, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    id = sluice_accept_launch_id(p.accept);
    if (!pc.json)
        cli_print_accepted(id, outcome == SLUICE_ACCEPT_EXISTED, p.cfg->site_name,
                           p.render->n_jobs);
    cli_progress_init(&pc.progress, pc.json, pc.heartbeat_s);
    if (wait_with_progress(sup, l, id, &pc, &result, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    rc = result;
    if (!pc.done_printed) {
        int prc = print_final(sluice_supervisor_store(sup), id, pc.json);
        if (prc != CLI_EX_OK)
            rc = prc;
    }
out:
    sluice_supervisor_close(sup);
    cli_prepared_free(&p);
    return rc;
}
