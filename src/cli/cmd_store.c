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

#include "cli.h"

typedef struct {
    const char *state_dir;
    int json;
} store_opts_t;

/* Parse the options shared by the store commands; returns the index of the
 * first operand, or -1 after printing a usage error (or -2 after --help). */
static int parse_common(int argc, char **argv, store_opts_t *o, const char *usage_text, int *rc_out)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            *rc_out = CLI_EX_OK;
            return -2;
        } else if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
            o->state_dir = argv[++i];
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

static void format_time(int64_t ms, char *buf, size_t size)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (ms <= 0 || gmtime_r(&t, &tm) == NULL) {
        snprintf(buf, size, "-");
        return;
    }
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *str_or(const json_t *obj, const char *key, const char *dflt)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : dflt;
}

static void print_job_ids(FILE *f, const json_t *ids)
{
    size_t i;
    json_t *v;

    if (!json_is_array(ids) || json_array_size(ids) == 0) {
        fputs("-", f);
        return;
    }
    json_array_foreach(ids, i, v)
    {
        if (i > 0)
            fputc(',', f);
        if (json_is_integer(v))
            fprintf(f, "%lld", (long long)json_integer_value(v));
        else if (json_is_string(v))
            fputs(json_string_value(v), f);
    }
}

static const char status_usage[] =
    "usage: sluice status [--state-dir DIR] [-o json|text] LAUNCH_ID\n"
    "\n"
    "Show one launch from the store: state, result, reason, Slurm job ids and its\n"
    "event log.  Exit 0 when found, 69 when the launch is unknown.\n";

int cmd_status(int argc, char **argv)
{
    store_opts_t o = {NULL, 0};
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL, *events = NULL;
    int rc = CLI_EX_OK, i;
    size_t k;
    json_t *ev;
    char when[64];

    if ((i = parse_common(argc, argv, &o, status_usage, &rc)) < 0)
        return rc;
    if (i != argc - 1) {
        fputs(status_usage, stderr);
        return CLI_EX_USAGE;
    }
    if ((rc = open_store(&o, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_get_launch(store, argv[i], &launch, &err) != SLUICE_OK ||
        sluice_store_read_events(store, argv[i], 1, 0, &events, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if (o.json) {
        json_object_del(launch, "render");
        json_object_set(launch, "events", events);
        char *text = json_dumps(launch, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (text)
            puts(text);
        free(text);
        goto out;
    }
    printf("launch     %s\n", str_or(launch, "launch_id", "?"));
    printf("site       %s\n", str_or(launch, "site", "-"));
    printf("state      %s\n", str_or(launch, "state", "?"));
    if (json_is_integer(json_object_get(launch, "result_code"))) {
        int code = (int)json_integer_value(json_object_get(launch, "result_code"));
        const char *name = sluice_result_name(code);
        printf("result     %s (%d)\n", name ? name : "?", code);
    }
    printf("reason     %s\n", str_or(launch, "reason", "-"));
    printf("attempt    %lld\n", (long long)json_integer_value(json_object_get(launch, "attempt")));
    printf("job ids    ");
    print_job_ids(stdout, json_object_get(launch, "job_ids"));
    printf("\nevents\n");
    json_array_foreach(events, k, ev)
    {
        char *ctx = json_dumps(json_object_get(ev, "context"), JSON_COMPACT | JSON_SORT_KEYS);
        format_time(json_integer_value(json_object_get(ev, "time")), when, sizeof(when));
        printf(
            "  %3lld %s %-18s %s%s%s\n", (long long)json_integer_value(json_object_get(ev, "seq")),
            when, str_or(ev, "name", "?"), ctx ? ctx : "{}",
            json_is_string(json_object_get(ev, "caller")) ? " by " : "", str_or(ev, "caller", ""));
        free(ctx);
    }
out:
    json_decref(launch);
    json_decref(events);
    sluice_store_close(store);
    return rc;
}

static const char ls_usage[] =
    "usage: sluice ls [--state-dir DIR] [-o json|text] [--state S] [--site S] [--study S]\n"
    "                 [--live|--terminal] [--limit N] [--cursor C]\n"
    "\n"
    "List launches in the store, oldest first, one page at a time.\n";

int cmd_ls(int argc, char **argv)
{
    store_opts_t o = {NULL, 0};
    sluice_store_filter_t f;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *list = NULL, *l;
    char *next = NULL;
    int rc = CLI_EX_OK, i;
    size_t k;
    char when[64];

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
    if ((rc = open_store(&o, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_list_launches(store, &f, &list, &next, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if (o.json) {
        json_t *page = json_pack("{s:O s:s?}", "launches", list, "next_cursor", next);
        char *text = page ? json_dumps(page, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
        if (text)
            puts(text);
        free(text);
        json_decref(page);
        goto out;
    }
    printf("%-32s %-12s %-6s %-20s %-14s %s\n", "LAUNCH", "STATE", "RESULT", "CREATED", "JOBS",
           "REASON");
    json_array_foreach(list, k, l)
    {
        json_t *res = json_object_get(l, "result_code");
        char result[16];

        if (json_is_integer(res))
            snprintf(result, sizeof(result), "%lld", (long long)json_integer_value(res));
        else
            snprintf(result, sizeof(result), "-");
        format_time(json_integer_value(json_object_get(l, "created_ms")), when, sizeof(when));
        printf("%-32s %-12s %-6s %-20s ", str_or(l, "launch_id", "?"), str_or(l, "state", "?"),
               result, when);
        print_job_ids(stdout, json_object_get(l, "job_ids"));
        printf(" %s\n", str_or(l, "reason", ""));
    }
    if (next)
        printf("(more: sluice ls --cursor '%s')\n", next);
out:
    free(next);
    json_decref(list);
    sluice_store_close(store);
    return rc;
}

static const char cancel_usage[] =
    "usage: sluice cancel [--state-dir DIR] LAUNCH_ID\n"
    "\n"
    "Ask the supervisor (`sluice serve` or `sluice launch --wait`) to cancel a\n"
    "launch.  The request is recorded in the store with your user name; the\n"
    "supervisor checks that the Slurm job is ours (name, comment marker, user)\n"
    "before it sends anything.  Cancelling a finished launch changes nothing.\n";

int cmd_cancel(int argc, char **argv)
{
    store_opts_t o = {NULL, 0};
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL, *ctx = NULL;
    struct passwd *pw;
    char caller[160];
    int rc = CLI_EX_OK, i;

    if ((i = parse_common(argc, argv, &o, cancel_usage, &rc)) < 0)
        return rc;
    if (i != argc - 1) {
        fputs(cancel_usage, stderr);
        return CLI_EX_USAGE;
    }
    if ((rc = open_store(&o, &store)) != CLI_EX_OK)
        return rc;
    if (sluice_store_get_launch(store, argv[i], &launch, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if (json_is_true(json_object_get(launch, "terminal"))) {
        printf("launch %s already ended (%s); nothing to cancel\n", argv[i],
               str_or(launch, "state", "?"));
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
