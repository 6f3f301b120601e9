/* SPDX-License-Identifier: Apache-2.0 */
/* print.c - output of launch, status, ls and cancel (see print.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "print.h"

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

int cli_print_json(const json_t *j, int pretty)
{
    size_t flags =
        JSON_SORT_KEYS | JSON_REAL_PRECISION(15) | (pretty ? JSON_INDENT(2) : JSON_COMPACT);
    char *text = json_dumps(j, flags | JSON_ENCODE_ANY);

    if (text == NULL)
        return -1;
    printf("%s\n", text);
    free(text);
    return 0;
}

void cli_print_transition(const cli_transition_t *t, int json)
{
    if (json) {
        int done = t->state != NULL && strcmp(t->state, "DONE") == 0;
        /* milliseconds, as every time of the API */
        double elapsed =
            (double)(int64_t)(t->elapsed * 1000.0 + (t->elapsed < 0 ? -0.5 : 0.5)) / 1000.0;
        json_t *o =
            json_pack("{s:s s:s s:s s:o s:s? s:s? s:f}", "launch_id", t->launch_id, "event",
                      t->event ? t->event : "", "state", t->state ? t->state : "?", "result_code",
                      done ? json_integer(t->result) : json_null(), "slurm_state",
                      t->slurm_state && t->slurm_state[0] ? t->slurm_state : NULL, "reason",
                      t->reason && t->reason[0] ? t->reason : NULL, "elapsed_s", elapsed);
        if (o != NULL)
            cli_print_json(o, 0);
        json_decref(o);
    } else {
        printf("[%7.1fs] %-10s", t->elapsed, t->state ? t->state : "?");
        if (t->slurm_state && t->slurm_state[0])
            printf(" slurm=%s", t->slurm_state);
        if (t->state && strcmp(t->state, "DONE") == 0) {
            const char *rn = sluice_result_name(t->result);
            printf(" result=%s(%d)", rn ? rn : "?", t->result);
        }
        if (t->reason && t->reason[0])
            printf(" %s", t->reason);
        printf("\n");
    }
    fflush(stdout);
}

const char *cli_last_slurm_state(const json_t *events)
{
    size_t i = json_array_size(events);

    while (i-- > 0) {
        const json_t *ev = json_array_get(events, i);
        const char *name = json_string_value(json_object_get(ev, "name"));
        const char *st;

        if (name == NULL || strcmp(name, "observed") != 0)
            continue;
        st = json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(ev, "context"), "jobs"), 0), "state"));
        if (st != NULL)
            return st;
    }
    return "";
}

void cli_transition_of(const json_t *launch,
                       const char *event,
                       const char *slurm_state,
                       cli_transition_t *t)
{
    const json_t *rc = json_object_get(launch, "result_code");
    const json_t *events = json_object_get(launch, "events"), *ev, *set_by = NULL;
    int64_t at = json_integer_value(json_object_get(launch, "updated_ms"));
    size_t i;

    /* the event that set the summary: bookkeeping after it (`archived`)
     * moves updated_ms but changes nothing */
    json_array_foreach(events, i, ev)
    {
        if (json_equal(json_object_get(ev, "seq"), json_object_get(launch, "summary_seq")))
            set_by = ev;
    }
    if (set_by != NULL) {
        at = json_integer_value(json_object_get(set_by, "time"));
        if (event == NULL)
            event = json_string_value(json_object_get(set_by, "name"));
    }
    memset(t, 0, sizeof(*t));
    t->launch_id = str_or(launch, "launch_id", "?");
    t->event = event ? event : "";
    t->state = str_or(launch, "state", "?");
    t->result = json_is_integer(rc) ? (int)json_integer_value(rc) : 127;
    t->slurm_state = slurm_state ? slurm_state : "";
    t->reason = str_or(launch, "reason", "");
    t->elapsed = (double)(at - json_integer_value(json_object_get(launch, "created_ms"))) / 1000.0;
}

void cli_print_accepted(const char *id, int existed, const char *site, size_t n_pools)
{
    printf("launch %s %s (site %s, %zu pool%s%s)\n", id,
           existed ? "already known: resuming it" : "accepted", site, n_pools,
           n_pools == 1 ? "" : "s", n_pools > 1 ? ", one hetjob" : "");
    fflush(stdout);
}

void cli_print_launch(const json_t *launch, int json)
{
    const json_t *events = json_object_get(launch, "events");
    json_t *ev;
    size_t k;
    char when[64];

    if (json) {
        cli_print_json(launch, 1);
        return;
    }
    printf("launch     %s\n", str_or(launch, "launch_id", "?"));
    printf("site       %s\n", str_or(launch, "site", "-"));
    if (json_is_string(json_object_get(launch, "cluster")))
        printf("cluster    %s\n", str_or(launch, "cluster", "-"));
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
        char *ctx = json_dumps(json_object_get(ev, "context"),
                               JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        format_time(json_integer_value(json_object_get(ev, "time")), when, sizeof(when));
        printf(
            "  %3lld %s %-18s %s%s%s\n", (long long)json_integer_value(json_object_get(ev, "seq")),
            when, str_or(ev, "name", "?"), ctx ? ctx : "{}",
            json_is_string(json_object_get(ev, "caller")) ? " by " : "", str_or(ev, "caller", ""));
        free(ctx);
    }
}

void cli_print_list(const json_t *items, const char *next_cursor, int json)
{
    json_t *l;
    size_t k;
    char when[64];

    if (json) {
        /* the page of GET /v1/launches: next_cursor is null on the last */
        json_t *page = json_pack("{s:O s:s?}", "items", items, "next_cursor", next_cursor);
        if (page != NULL)
            cli_print_json(page, 1);
        json_decref(page);
        return;
    }
    /* CLUSTER only when a launch of the page names one (a site with
     * `clusters:`); a launch stored with none is the first cluster's: "-". */
    int clusters = 0;
    json_array_foreach(items, k, l) clusters |= json_is_string(json_object_get(l, "cluster"));
    printf("%-32s %-12s %-6s %-20s ", "LAUNCH", "STATE", "RESULT", "CREATED");
    if (clusters)
        printf("%-12s ", "CLUSTER");
    printf("%-14s %s\n", "JOBS", "REASON");
    json_array_foreach(items, k, l)
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
        if (clusters)
            printf("%-12s ", str_or(l, "cluster", "-"));
        print_job_ids(stdout, json_object_get(l, "job_ids"));
        printf(" %s\n", str_or(l, "reason", ""));
    }
    if (next_cursor)
        printf("(more: sluice ls --cursor '%s')\n", next_cursor);
}

void cli_print_cancel_over(const char *id, const char *state)
{
    printf("launch %s already ended (%s); nothing to cancel\n", id, state ? state : "?");
}
