/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_ls.c - `sluice ls`: list launches of the local store (or, with
 * --server, of a running `sluice serve`), newest first by default, with
 * the filters --state, --site, --study, --cluster, --live/--terminal, the
 * order of --sort and --reverse, and --limit.
 *
 * Notes:
 * - It never talks to Slurm.
 * - Neither the store nor the API sorts: both give pages in the store's
 *   order, oldest first by (created_ms, launch_id).  So ls sorts here, the
 *   same for both paths: it reads every page of the matching launches
 *   (1000 at a time, following next_cursor), sorts them and prints the
 *   first --limit.  `--sort created --reverse` is the store's own order:
 *   then it reads one page and prints its cursor, and --cursor (any other
 *   order refuses it, 64) reads the next.
 * - Orders: created and updated newest first, state in the state
 *   machine's order (ACCEPTED ... DONE), id A to Z; ties newest first, then
 *   by id.  --reverse inverts the whole order, ties included.
 * - --live and --terminal have no API query parameter: with --server they
 *   are a usage error (64) that points to --state.
 * - Exit codes: 0 ok, 64 usage, 66 no store there (it never creates one),
 *   76 when the service's page has no items or its cursor goes nowhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/fsm.h>

#include "args.h"
#include "base/jdec.h"
#include "cli.h"
#include "print.h"
#include "remote.h"
#include "store_opts.h"

/* Pages at most this long are read to sort (the store's and the API's
 * largest). */
#define LS_PAGE_MAX 1000
#define LS_DEFAULT_LIMIT 100

typedef enum { LS_CREATED = 0, LS_UPDATED, LS_STATE, LS_ID } ls_key_t;

typedef struct {
    sluice_store_filter_t f;
    ls_key_t key;
    int reverse;
} ls_opts_t;

/* Where the pages come from: the local store or the service. */
typedef struct {
    sluice_store_t *store;
    cli_remote_t *remote;
} ls_source_t;

/* GET /v1/launches with the filters as its query: the page's items into
 * *items (new reference) and its cursor into *next (new, or NULL on the
 * last page; free()).  0 or the sysexit (printed). */
static int remote_page(cli_remote_t *r, const sluice_store_filter_t *f, json_t **items, char **next)
{
    const char *keys[] = {"state", "site", "study", "cluster", "cursor"};
    const char *vals[] = {f->state, f->site, f->study, f->cluster, f->cursor};
    char query[4096], esc[1024];
    size_t i, n = 0;
    json_t *page = NULL;
    jdec_t d;
    jdec_cur_t p, list;
    const char *cursor;
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
    rc = cli_remote_json(r, "GET", "/v1/launches", query[0] ? query : NULL, NULL, &status, &page);
    if (rc != CLI_EX_OK)
        goto out;
    jdec_peek_root(&d, &p, page);
    if (jdec_array(&p, "items", JDEC_SILENT, &list) != SLUICE_OK || list.v == NULL) {
        fprintf(stderr, "sluice ls: the service's answer has no items\n");
        rc = CLI_EX_PROTOCOL;
        goto out;
    }
    cursor = jdec_peek_string(&p, "next_cursor");
    if (cursor != NULL && (*next = strdup(cursor)) == NULL) {
        fprintf(stderr, "sluice ls: out of memory\n");
        rc = CLI_EX_SOFTWARE;
        goto out;
    }
    /* the same array as list.v, not const: the page is ours */
    *items = json_incref(json_object_get(page, "items"));
out:
    json_decref(page);
    return rc;
}

/* One page of either source; as remote_page(). */
static int read_page(ls_source_t *src, const sluice_store_filter_t *f, json_t **items, char **next)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    *items = NULL;
    *next = NULL;
    if (src->remote != NULL)
        return remote_page(src->remote, f, items, next);
    if (sluice_store_list_launches(src->store, f, items, next, &err) != SLUICE_OK)
        return cli_fail(&err);
    return CLI_EX_OK;
}

/* Every launch that matches f (its cursor and limit aside), in the
 * store's order, into *out (new reference).  0 or the sysexit. */
static int read_all(ls_source_t *src, const sluice_store_filter_t *f, json_t **out)
{
    sluice_store_filter_t pf = *f;
    json_t *all = json_array(), *items = NULL;
    char *cursor = NULL, *next = NULL;
    int rc = CLI_EX_OK;

    if (all == NULL)
        return CLI_EX_SOFTWARE;
    pf.limit = LS_PAGE_MAX;
    pf.cursor = NULL;
    for (;;) {
        if ((rc = read_page(src, &pf, &items, &next)) != CLI_EX_OK)
            break;
        if (json_array_extend(all, items) != 0) {
            rc = CLI_EX_SOFTWARE;
            break;
        }
        json_decref(items);
        items = NULL;
        if (next == NULL)
            break;
        /* a cursor that does not move would loop for ever */
        if (cursor != NULL && strcmp(cursor, next) == 0) {
            fprintf(stderr, "sluice ls: the next page's cursor is the last one's\n");
            rc = CLI_EX_PROTOCOL;
            break;
        }
        free(cursor);
        cursor = next;
        next = NULL;
        pf.cursor = cursor;
    }
    free(cursor);
    free(next);
    json_decref(items);
    if (rc != CLI_EX_OK) {
        json_decref(all);
        return rc;
    }
    *out = all;
    return CLI_EX_OK;
}

/* ---- the order ------------------------------------------------------------ */

/* The state's place in the state machine (sluice_fsm_state), unknown
 * names last. */
static int state_rank(const char *name)
{
    for (int s = 0; name != NULL && s < SLUICE_FSM_STATE_COUNT_; s++) {
        const char *n = sluice_fsm_state_name((sluice_fsm_state)s);
        if (n != NULL && strcmp(n, name) == 0)
            return s;
    }
    return SLUICE_FSM_STATE_COUNT_;
}

static int cmp_ll(long long a, long long b)
{
    return (a > b) - (a < b);
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "");
}

static ls_key_t sort_key;
static int sort_reverse;

/* The order of `sort_key` (see the notes at the top); --reverse inverts it. */
static int compare(const void *pa, const void *pb)
{
    json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    const char *ida = json_string_value(json_object_get(a, "launch_id"));
    const char *idb = json_string_value(json_object_get(b, "launch_id"));
    long long ca = json_integer_value(json_object_get(a, "created_ms"));
    long long cb = json_integer_value(json_object_get(b, "created_ms"));
    int c = 0;

    switch (sort_key) {
    case LS_UPDATED:
        c = -cmp_ll(json_integer_value(json_object_get(a, "updated_ms")),
                    json_integer_value(json_object_get(b, "updated_ms")));
        break;
    case LS_STATE:
        c = state_rank(json_string_value(json_object_get(a, "state"))) -
            state_rank(json_string_value(json_object_get(b, "state")));
        break;
    case LS_ID:
        c = cmp_str(ida, idb);
        break;
    case LS_CREATED:
        break;
    }
    /* ties: newest first, then by id (the store's order, inverted) */
    if (c == 0)
        c = -cmp_ll(ca, cb);
    if (c == 0)
        c = -cmp_str(ida, idb);
    return sort_reverse ? -c : c;
}

/* `all` sorted by o, its first `limit` into *out (new reference); *more is
 * how many were left out. */
static int sort_launches(const ls_opts_t *o, json_t *all, size_t limit, json_t **out, size_t *more)
{
    size_t n = json_array_size(all), i;
    json_t **v = NULL, *sorted = json_array();
    int rc = CLI_EX_OK;

    if (sorted == NULL || (n > 0 && (v = calloc(n, sizeof(*v))) == NULL)) {
        rc = CLI_EX_SOFTWARE;
        goto out;
    }
    for (i = 0; i < n; i++)
        v[i] = json_array_get(all, i);
    sort_key = o->key;
    sort_reverse = o->reverse;
    if (n > 1)
        qsort(v, n, sizeof(*v), compare);
    for (i = 0; i < n && i < limit; i++) {
        if (json_array_append(sorted, v[i]) != 0) {
            rc = CLI_EX_SOFTWARE;
            goto out;
        }
    }
    *more = n - i;
    *out = sorted;
    sorted = NULL;
out:
    free(v);
    json_decref(sorted);
    return rc;
}

/* ---- the command ---------------------------------------------------------- */

/* The filters and the order: the options of ls alone. */
static int ls_option(int id, const char *v, void *arg)
{
    ls_opts_t *o = arg;
    sluice_store_filter_t *f = &o->f;
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
    case CLI_O_SORT: /* the table allows these words only */
        o->key = strcmp(v, "updated") == 0 ? LS_UPDATED
                 : strcmp(v, "state") == 0 ? LS_STATE
                 : strcmp(v, "id") == 0    ? LS_ID
                                           : LS_CREATED;
        break;
    case 'r':
        o->reverse = 1;
        break;
    default:
        return CLI_EX_SOFTWARE;
    }
    return CLI_EX_OK;
}

int cmd_ls(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    ls_opts_t o;
    ls_source_t src = {NULL, NULL};
    json_t *all = NULL, *list = NULL;
    char *next = NULL;
    size_t more = 0, limit;
    int rc, store_order;

    memset(&o, 0, sizeof(o));
    if (!cli_parse(spec, argc, argv, &a, ls_option, &o, &rc))
        return rc;
    /* --cluster: exactly that name in the local store (a launch stored
     * before clusters has none); the service also counts those as the
     * first cluster's */
    o.f.cluster = a.site.cluster;
    store_order = o.key == LS_CREATED && o.reverse;
    if (o.f.cursor != NULL && !store_order)
        return cli_usage_error(spec, "--cursor pages in the store's order, oldest first: add "
                                     "--sort created --reverse");
    if (cli_remote_wanted(&a.remote)) {
        if (o.f.terminal != SLUICE_STORE_ANY)
            return cli_usage_error(spec, "--live and --terminal are not available with --server "
                                         "(use --state)");
        if ((rc = cli_remote_open(&a.remote, &src.remote)) != CLI_EX_OK)
            return rc;
    } else if ((rc = cli_store_open_existing(spec, a.state_dir, &src.store)) != CLI_EX_OK) {
        return rc;
    }
    if (store_order) {
        /* one page as the store gives it, with its cursor */
        if ((rc = read_page(&src, &o.f, &list, &next)) == CLI_EX_OK)
            cli_print_list(list, next, a.json);
        goto out;
    }
    limit = o.f.limit > 0 ? o.f.limit : LS_DEFAULT_LIMIT;
    if ((rc = read_all(&src, &o.f, &all)) != CLI_EX_OK ||
        (rc = sort_launches(&o, all, limit, &list, &more)) != CLI_EX_OK)
        goto out;
    cli_print_list(list, NULL, a.json);
    if (more > 0 && !a.json)
        printf("(%zu more: raise --limit, narrow with --state, --site or --study, or page "
               "oldest first with --sort created --reverse)\n",
               more);
out:
    free(next);
    json_decref(all);
    json_decref(list);
    cli_remote_close(src.remote);
    sluice_store_close(src.store);
    return rc;
}
