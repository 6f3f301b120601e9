/* SPDX-License-Identifier: Apache-2.0 */
/* print.c - output of launch, status, ls and cancel (see print.h).
 *
 * Notes:
 * - A launch, its events and a page of launches are read with
 *   base/jdec.h's peeks (jdec_peek_root()): what is missing or of another
 *   type prints as its default ("?", "-", ""), never as an error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/jdec.h"
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

static void print_job_ids(FILE *f, const jdec_cur_t *launch)
{
    jdec_cur_t ids, id;
    size_t i;

    jdec_member(&ids, launch, "job_ids");
    if (jdec_len(&ids) == 0) {
        fputs("-", f);
        return;
    }
    JDEC_FOREACH(&ids, i, id)
    {
        if (i > 0)
            fputc(',', f);
        if (json_is_integer(jdec_value(&id, NULL)))
            fprintf(f, "%lld", (long long)jdec_peek_int(&id, NULL, 0));
        else
            fputs(jdec_peek_string_or(&id, NULL, ""), f);
    }
}

const char *cli_observed_state(const jdec_cur_t *ev)
{
    jdec_cur_t ctx, jobs, job;

    jdec_member(&ctx, ev, "context");
    jdec_member(&jobs, &ctx, "jobs");
    jdec_item(&job, &jobs, 0);
    return jdec_peek_string(&job, "state");
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
    jdec_t d;
    jdec_cur_t all, ev;
    size_t i;
    const char *st;

    jdec_peek_root(&d, &all, events);
    i = jdec_len(&all);
    while (i-- > 0) {
        jdec_item(&ev, &all, i);
        if (strcmp(jdec_peek_string_or(&ev, "name", ""), "observed") != 0)
            continue;
        if ((st = cli_observed_state(&ev)) != NULL)
            return st;
    }
    return "";
}

void cli_transition_of(const json_t *launch,
                       const char *event,
                       const char *slurm_state,
                       cli_transition_t *t)
{
    jdec_t d;
    jdec_cur_t l, events, ev, set_by;
    int64_t at, summary_seq;
    bool found = false;
    size_t i;

    jdec_peek_root(&d, &l, launch);
    at = jdec_peek_int(&l, "updated_ms", 0);
    summary_seq = jdec_peek_int(&l, "summary_seq", -1);
    /* the event that set the summary: bookkeeping after it (`archived`)
     * moves updated_ms but changes nothing */
    jdec_member(&events, &l, "events");
    JDEC_FOREACH(&events, i, ev)
    {
        if (summary_seq >= 0 && jdec_peek_int(&ev, "seq", -1) == summary_seq) {
            set_by = ev;
            found = true;
        }
    }
    if (found) {
        at = jdec_peek_int(&set_by, "time", 0);
        if (event == NULL)
            event = jdec_peek_string(&set_by, "name");
    }
    memset(t, 0, sizeof(*t));
    t->launch_id = jdec_peek_string_or(&l, "launch_id", "?");
    t->event = event ? event : "";
    t->state = jdec_peek_string_or(&l, "state", "?");
    t->result = (int)jdec_peek_int(&l, "result_code", 127);
    t->slurm_state = slurm_state ? slurm_state : "";
    t->reason = jdec_peek_string_or(&l, "reason", "");
    t->elapsed = (double)(at - jdec_peek_int(&l, "created_ms", 0)) / 1000.0;
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
    jdec_t d;
    jdec_cur_t l, events, ev;
    size_t k;
    char when[64];

    if (json) {
        cli_print_json(launch, 1);
        return;
    }
    jdec_peek_root(&d, &l, launch);
    printf("launch     %s\n", jdec_peek_string_or(&l, "launch_id", "?"));
    printf("site       %s\n", jdec_peek_string_or(&l, "site", "-"));
    if (jdec_peek_string(&l, "cluster") != NULL)
        printf("cluster    %s\n", jdec_peek_string(&l, "cluster"));
    printf("state      %s\n", jdec_peek_string_or(&l, "state", "?"));
    if (json_is_integer(jdec_value(&l, "result_code"))) {
        int code = (int)jdec_peek_int(&l, "result_code", 0);
        const char *name = sluice_result_name(code);
        printf("result     %s (%d)\n", name ? name : "?", code);
    }
    printf("reason     %s\n", jdec_peek_string_or(&l, "reason", "-"));
    printf("attempt    %lld\n", (long long)jdec_peek_int(&l, "attempt", 0));
    printf("job ids    ");
    print_job_ids(stdout, &l);
    printf("\nevents\n");
    jdec_member(&events, &l, "events");
    JDEC_FOREACH(&events, k, ev)
    {
        char *ctx = json_dumps(jdec_value(&ev, "context"),
                               JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
        const char *caller = jdec_peek_string(&ev, "caller");

        format_time(jdec_peek_int(&ev, "time", 0), when, sizeof(when));
        printf("  %3lld %s %-18s %s%s%s\n", (long long)jdec_peek_int(&ev, "seq", 0), when,
               jdec_peek_string_or(&ev, "name", "?"), ctx ? ctx : "{}", caller ? " by " : "",
               caller ? caller : "");
        free(ctx);
    }
}

void cli_print_list(const json_t *items, const char *next_cursor, int json)
{
    jdec_t d;
    jdec_cur_t all, l;
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
    /* TENANT likewise when a launch of the page has one (an admin's list
     * of a site with `tenants:`; the store's own list shows keys). */
    int clusters = 0, tenants = 0;
    jdec_peek_root(&d, &all, items);
    JDEC_FOREACH(&all, k, l)
    {
        clusters |= jdec_peek_string(&l, "cluster") != NULL;
        tenants |= jdec_peek_string(&l, "tenant") != NULL;
    }
    printf("%-32s %-12s %-6s %-20s ", "LAUNCH", "STATE", "RESULT", "CREATED");
    if (tenants)
        printf("%-12s ", "TENANT");
    if (clusters)
        printf("%-12s ", "CLUSTER");
    printf("%-14s %s\n", "JOBS", "REASON");
    JDEC_FOREACH(&all, k, l)
    {
        char result[16];

        if (json_is_integer(jdec_value(&l, "result_code")))
            snprintf(result, sizeof(result), "%lld",
                     (long long)jdec_peek_int(&l, "result_code", 0));
        else
            snprintf(result, sizeof(result), "-");
        format_time(jdec_peek_int(&l, "created_ms", 0), when, sizeof(when));
        printf("%-32s %-12s %-6s %-20s ", jdec_peek_string_or(&l, "launch_id", "?"),
               jdec_peek_string_or(&l, "state", "?"), result, when);
        if (tenants)
            printf("%-12s ", jdec_peek_string_or(&l, "tenant", "-"));
        if (clusters)
            printf("%-12s ", jdec_peek_string_or(&l, "cluster", "-"));
        print_job_ids(stdout, &l);
        printf(" %s\n", jdec_peek_string_or(&l, "reason", ""));
    }
    if (next_cursor)
        printf("(more: sluice ls --cursor '%s')\n", next_cursor);
}

void cli_print_cancel_over(const char *id, const char *state)
{
    printf("launch %s already ended (%s); nothing to cancel\n", id, state ? state : "?");
}
