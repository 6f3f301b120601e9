/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_ls.c - `sluice ls`: list launches of the local store (or, with
 * --server, of a running `sluice serve`), oldest first, one page at a time,
 * with the filters --state, --site, --study, --cluster, --live/--terminal and the
 * paging of --limit and --cursor.
 *
 * Notes:
 * - It never talks to Slurm.
 * - --live and --terminal have no API query parameter: with --server they
 *   are a usage error (64) that points to --state.
 * - Exit codes: 0 ok, 64 usage, 66 no store there (it never creates one),
 *   76 when the service's page has no items.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "base/jdec.h"
#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

/* GET /v1/launches with the filters as its query, printed as a page. */
static int ls_remote(const cli_args_t *a, const sluice_store_filter_t *f)
{
    const char *keys[] = {"state", "site", "study", "cluster", "cursor"};
    const char *vals[] = {f->state, f->site, f->study, f->cluster, f->cursor};
    char query[4096], esc[1024];
    size_t i, n = 0;
    cli_remote_t *r = NULL;
    json_t *page = NULL;
    jdec_t d;
    jdec_cur_t p, items;
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
    if ((rc = cli_remote_open(&a->remote, &r)) != CLI_EX_OK)
        return rc;
    rc = cli_remote_json(r, "GET", "/v1/launches", query[0] ? query : NULL, NULL, &status, &page);
    if (rc == CLI_EX_OK) {
        jdec_peek_root(&d, &p, page);
        if (jdec_array(&p, "items", JDEC_SILENT, &items) != SLUICE_OK || items.v == NULL) {
            fprintf(stderr, "sluice ls: the service's answer has no items\n");
            rc = CLI_EX_PROTOCOL;
        } else {
            cli_print_list(items.v, jdec_peek_string(&p, "next_cursor"), a->json);
        }
    }
    json_decref(page);
    cli_remote_close(r);
    return rc;
}

/* The filters: the options of ls alone. */
static int ls_option(int id, const char *v, void *arg)
{
    sluice_store_filter_t *f = arg;
    char *end = NULL;
    long n;

    switch (id) {
    case CLI_O_STATE:
        f->state = v;
        break;
    case CLI_O_SITE:
        f->site = v;
        break;
    case CLI_O_STUDY:
        f->study = v;
        break;
    case CLI_O_CURSOR:
        f->cursor = v;
        break;
    case CLI_O_LIVE:
        f->terminal = SLUICE_STORE_LIVE;
        break;
    case CLI_O_TERMINAL:
        f->terminal = SLUICE_STORE_TERMINAL;
        break;
    case CLI_O_LIMIT:
        n = strtol(v, &end, 10);
        if (end == v || *end != '\0' || n < 1 || n > 1000) {
            fprintf(stderr, "sluice ls: --limit: expected 1 to 1000, got '%s'\n", v);
            return CLI_EX_USAGE;
        }
        f->limit = (size_t)n;
        break;
    default:
        return CLI_EX_SOFTWARE;
    }
    return CLI_EX_OK;
}

int cmd_ls(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    sluice_store_filter_t f;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *list = NULL;
    char *next = NULL;
    int rc;

    memset(&f, 0, sizeof(f));
    if (!cli_parse(spec, argc, argv, &a, ls_option, &f, &rc))
        return rc;
    /* --cluster: exactly that name in the local store (a launch stored
     * before clusters has none); the service also counts those as the
     * first cluster's */
    f.cluster = a.site.cluster;
    if (cli_remote_wanted(&a.remote)) {
        if (f.terminal != SLUICE_STORE_ANY)
            return cli_usage_error(spec, "--live and --terminal are not available with --server "
                                         "(use --state)");
        return ls_remote(&a, &f);
    }
    if ((rc = cli_store_open_existing(spec, a.state_dir, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_list_launches(store, &f, &list, &next, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    cli_print_list(list, next, a.json);
out:
    free(next);
    json_decref(list);
    sluice_store_close(store);
    return rc;
}
