/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_store.c - the commands that read the store or append a request to it:
 * `sluice status`, `sluice ls` and `sluice cancel`.
 *
 * Notes:
 * - They never talk to Slurm.  `cancel` appends a `cancel-requested` event
 *   (with the caller, for the audit) that the supervisor holding the store
 *   lock carries out on its next cycle, after its ownership checks.
 * - The store is $SLUICE_STATE_DIR or the default (see `--state-dir`).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/launch_view.h>

#include "cli.h"
#include "print.h"
#include "remote.h"

typedef struct {
    const char *state_dir;
    int json;
    cli_remote_opts_t remote;
} store_opts_t;

/* Parse the options shared by the store commands; returns the index of the
 * first operand, or -1 after printing a usage error (or -2 after --help). */
static int parse_common(int argc, char **argv, store_opts_t *o, const char *usage_text, int *rc_out)
{
    int i, k;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            *rc_out = CLI_EX_OK;
            return -2;
        } else if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
            o->state_dir = argv[++i];
        } else if ((k = cli_remote_option(&o->remote, argc, argv, &i)) != 0) {
            if (k < 0) {
                *rc_out = CLI_EX_USAGE;
                return -1;
            }
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "json") == 0) {
                o->json = 1;
            } else if (strcmp(argv[i], "text") != 0) {
                fprintf(stderr, "sluice: -o: expected json or text, got '%s'\n", argv[i]);
                *rc_out = CLI_EX_USAGE;
                return -1;
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "sluice: unknown option '%s'\n\n", argv[i]);
            fputs(usage_text, stderr);
            *rc_out = CLI_EX_USAGE;
            return -1;
        } else {
            break;
        }
    }
    return i;
}

static int open_store(const store_opts_t *o, sluice_store_t **out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (sluice_store_open(out, o->state_dir, &err) != SLUICE_OK)
        return cli_fail(&err);
    return CLI_EX_OK;
}

static const char status_usage[] =
    "usage: sluice status [--state-dir DIR | --server URL] [-o json|text] LAUNCH_ID\n"
    "\n"
    "Show one launch from the store: state, result, reason, Slurm job ids and its\n"
    "event log.  Exit 0 when found, 69 when the launch is unknown.\n" REMOTE_USAGE;

/* GET /v1/launches/{id} into *out; 0 or the sysexit (printed). */
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

static int status_remote(store_opts_t *o, const char *id)
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
    store_opts_t o;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL;
    int rc = CLI_EX_OK, i;

    memset(&o, 0, sizeof(o));
    if ((i = parse_common(argc, argv, &o, status_usage, &rc)) < 0)
        return rc;
    if (i != argc - 1) {
        fputs(status_usage, stderr);
        return CLI_EX_USAGE;
    }
    if (cli_remote_wanted(&o.remote))
        return status_remote(&o, argv[i]);
    if ((rc = open_store(&o, &store)) != CLI_EX_OK)
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

static const char ls_usage[] =
    "usage: sluice ls [--state-dir DIR | --server URL] [-o json|text] [--state S] [--site S]\n"
    "                 [--study S] [--live|--terminal] [--limit N] [--cursor C]\n"
    "\n"
    "List launches in the store, oldest first, one page at a time.\n" REMOTE_USAGE;

static int ls_remote(store_opts_t *o, const sluice_store_filter_t *f)
{
    const char *keys[] = {"state", "site", "study", "cursor"};
    const char *vals[] = {f->state, f->site, f->study, f->cursor};
    char query[4096], esc[1024];
    size_t i, n = 0;
    cli_remote_t *r = NULL;
    json_t *page = NULL;
    long status = 0;
    int rc;

    query[0] = '\0';
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (vals[i] == NULL)
            continue;
        if (cli_remote_escape(vals[i], esc, sizeof(esc)) != 0) {
            fprintf(stderr, "sluice ls: --%s: value too long\n", keys[i]);
            return CLI_EX_USAGE;
        }
        n += (size_t)snprintf(query + n, sizeof(query) - n, "%s%s=%s", n ? "&" : "", keys[i], esc);
    }
    if (f->limit > 0)
        snprintf(query + n, sizeof(query) - n, "%slimit=%zu", n ? "&" : "", f->limit);
    if ((rc = cli_remote_open(&o->remote, &r)) != CLI_EX_OK)
        return rc;
    rc = cli_remote_json(r, "GET", "/v1/launches", query[0] ? query : NULL, NULL, &status, &page);
    if (rc == CLI_EX_OK) {
        if (!json_is_array(json_object_get(page, "items"))) {
            fprintf(stderr, "sluice ls: the service's answer has no items\n");
            rc = 76;
        } else {
            cli_print_list(json_object_get(page, "items"),
                           json_string_value(json_object_get(page, "next_cursor")), o->json);
        }
    }
    json_decref(page);
    cli_remote_close(r);
    return rc;
}

int cmd_ls(int argc, char **argv)
{
    store_opts_t o;
    sluice_store_filter_t f;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *list = NULL;
    char *next = NULL;
    int rc = CLI_EX_OK, i;

    memset(&o, 0, sizeof(o));
    memset(&f, 0, sizeof(f));
    /* Filters come first so that the shared parser does not call them
     * unknown options. */
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--state") == 0 && i + 1 < argc) {
            f.state = argv[i + 1];
        } else if (strcmp(argv[i], "--site") == 0 && i + 1 < argc) {
            f.site = argv[i + 1];
        } else if (strcmp(argv[i], "--study") == 0 && i + 1 < argc) {
            f.study = argv[i + 1];
        } else if (strcmp(argv[i], "--cursor") == 0 && i + 1 < argc) {
            f.cursor = argv[i + 1];
        } else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
            char *end = NULL;
            long n = strtol(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end != '\0' || n < 1 || n > 1000) {
                fprintf(stderr, "sluice ls: --limit: expected 1..1000, got '%s'\n", argv[i + 1]);
                return CLI_EX_USAGE;
            }
            f.limit = (size_t)n;
        } else if (strcmp(argv[i], "--live") == 0) {
            f.terminal = SLUICE_STORE_LIVE;
            continue;
        } else if (strcmp(argv[i], "--terminal") == 0) {
            f.terminal = SLUICE_STORE_TERMINAL;
            continue;
        } else {
            continue;
        }
        /* consume the value: shift the pair out of argv */
        memmove(&argv[i], &argv[i + 2], (size_t)(argc - i - 2) * sizeof(char *));
        argc -= 2;
        i--;
    }
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--live") == 0 || strcmp(argv[i], "--terminal") == 0) {
            memmove(&argv[i], &argv[i + 1], (size_t)(argc - i - 1) * sizeof(char *));
            argc--;
            i--;
        }
    }
    if ((i = parse_common(argc, argv, &o, ls_usage, &rc)) < 0)
        return rc;
    if (i != argc) {
        fputs(ls_usage, stderr);
        return CLI_EX_USAGE;
    }
    if (cli_remote_wanted(&o.remote)) {
        if (f.terminal != SLUICE_STORE_ANY) {
            fprintf(stderr, "sluice ls: --live and --terminal are not available with --server "
                            "(use --state)\n");
            return CLI_EX_USAGE;
        }
        return ls_remote(&o, &f);
    }
    if ((rc = open_store(&o, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_list_launches(store, &f, &list, &next, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    cli_print_list(list, next, o.json);
out:
    free(next);
    json_decref(list);
    sluice_store_close(store);
    return rc;
}

static const char cancel_usage[] =
    "usage: sluice cancel [--state-dir DIR | --server URL] LAUNCH_ID\n"
    "\n"
    "Ask the supervisor (`sluice serve` or `sluice launch --wait`) to cancel a\n"
    "launch.  The request is recorded in the store with your user name; the\n"
    "supervisor checks that the Slurm job is ours (name, comment marker, user)\n"
    "before it sends anything.  Cancelling a finished launch changes nothing.\n" REMOTE_USAGE;

static int cancel_remote(store_opts_t *o, const char *id)
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
    store_opts_t o;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL, *ctx = NULL;
    struct passwd *pw;
    char caller[160];
    int rc = CLI_EX_OK, i;

    memset(&o, 0, sizeof(o));
    if ((i = parse_common(argc, argv, &o, cancel_usage, &rc)) < 0)
        return rc;
    if (i != argc - 1) {
        fputs(cancel_usage, stderr);
        return CLI_EX_USAGE;
    }
    if (cli_remote_wanted(&o.remote))
        return cancel_remote(&o, argv[i]);
    if ((rc = open_store(&o, &store)) != CLI_EX_OK)
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
