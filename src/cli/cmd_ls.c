/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_ls.c - `sluice ls`: list launches of the local store (or, with
 * --server, of a running `sluice serve`), oldest first, one page at a time,
 * with the filters --state, --site, --study, --live/--terminal and the
 * paging of --limit and --cursor.
 *
 * Notes:
 * - It never talks to Slurm.
 * - The filters are taken out of argv before the shared options are parsed
 *   (store_opts.c), so that the shared parser does not call them unknown.
 * - --live and --terminal have no API query parameter: with --server they
 *   are a usage error (64) that points to --state.
 * - Exit codes: 0 ok, 64 usage, 76 when the service's page has no items.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

static const char ls_usage[] =
    "usage: sluice ls [--state-dir DIR | --server URL] [-o json|text] [--state S] [--site S]\n"
    "                 [--study S] [--live|--terminal] [--limit N] [--cursor C]\n"
    "\n"
    "List launches in the store, oldest first, one page at a time.\n" REMOTE_USAGE;

/* GET /v1/launches with the filters as its query, printed as a page. */
static int ls_remote(const cli_store_opts_t *o, const sluice_store_filter_t *f)
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
    cli_store_opts_t o;
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
    if ((i = cli_store_parse(argc, argv, &o, ls_usage, &rc)) < 0)
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
    if ((rc = cli_store_open(&o, &store)) != CLI_EX_OK)
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
