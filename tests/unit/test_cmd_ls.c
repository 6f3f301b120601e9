/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_ls.c - `sluice ls` through the real binary ($SLUICE_BIN)
 * against a store filled through the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/error.h>

#include <sluice/store.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("ls");
}

TestSuite(cmd_ls, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

Test(cmd_ls, ls_lists_launches_in_text_and_json)
{
    cmd_add_launch("alpha");
    cmd_add_launch("beta");
    cr_assert_eq(cmd_sluice("ls --state-dir '%s'", cmd_dir), 0);
    cr_assert_not_null(strstr(cmd_output(), "alpha"));
    cr_assert_not_null(strstr(cmd_output(), "ACCEPTED"));
    /* the store's order, in pages: oldest first, with the next page's cursor */
    cr_assert_eq(
        cmd_sluice("ls --state-dir '%s' -o json --limit 1 --sort created --reverse", cmd_dir), 0);
    cr_assert_not_null(strstr(cmd_output(), "\"next_cursor\""));
    cr_assert_not_null(strstr(cmd_output(), "alpha"));
    cr_assert_null(strstr(cmd_output(), "beta"));
    cr_assert_eq(cmd_sluice("ls --state-dir '%s' --terminal", cmd_dir), 0);
    cr_assert_null(strstr(cmd_output(), "alpha"));
}

Test(cmd_ls, usage_errors_are_64_and_help_is_0)
{
    cr_assert_eq(cmd_sluice("ls --bogus"), 64);
    cr_assert_eq(cmd_sluice("ls --limit 0"), 64);
    cr_assert_eq(cmd_sluice("ls --help"), 0);
}

/* Launch `id` created at `created_ms`; with `state`, an event at
 * `updated_ms` moves it there. */
static void add_at(const char *id, int64_t created_ms, const char *state, int64_t updated_ms)
{
    sluice_store_t *s = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s s:s}", "launch_id", id, "site", "tb");
    sluice_store_launch_spec_t spec = {id,   "tb",   NULL,       req,  NULL,
                                       NULL, "test", created_ms, NULL, NULL};
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

    cr_assert_eq(sluice_store_open(&s, cmd_dir, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_OK, "%s", err.text);
    if (state != NULL) {
        sum.state = state;
        sum.terminal = strcmp(state, "DONE") == 0;
        sum.set_result = sum.terminal;
        cr_assert_eq(sluice_store_append_event_and_update(s, id, "observed", NULL, NULL, updated_ms,
                                                          &sum, NULL, &err),
                     SLUICE_OK, "%s", err.text);
    }
    sluice_store_close(s);
    json_decref(req);
}

/* zulu oldest but updated last; kilo and mike created in the same
 * millisecond; one launch in each of four states. */
static void add_four(void)
{
    const int64_t t0 = 1767225600000; /* 2026-01-01 */

    add_at("zulu", t0 + 1000, "RUNNING", t0 + 9000);
    add_at("alpha", t0 + 2000, NULL, 0);
    add_at("mike", t0 + 3000, "DONE", t0 + 4000);
    add_at("kilo", t0 + 3000, "PENDING", t0 + 3500);
}

/* The launch ids of the last output, in the order printed: each name's
 * first place in the text, compared. */
static void expect_order(const char *args, const char *want)
{
    const char *names[] = {"alpha", "kilo", "mike", "zulu"};
    char got[64] = "";
    const char *out;
    size_t i, k;

    cr_assert_eq(cmd_sluice("ls --state-dir '%s' %s", cmd_dir, args), 0, "%s", cmd_output());
    out = cmd_output();
    for (k = 0; k < 4; k++) {
        const char *best = NULL, *name = NULL;
        for (i = 0; i < 4; i++) {
            const char *at = strstr(out, names[i]);
            /* the earliest name not taken yet */
            if (at != NULL && strstr(got, names[i]) == NULL && (best == NULL || at < best)) {
                best = at;
                name = names[i];
            }
        }
        if (name == NULL)
            break;
        strcat(got, k ? " " : "");
        strcat(got, name);
    }
    cr_expect_str_eq(got, want, "ls %s:\n%s", args, out);
}

Test(cmd_ls, newest_first_and_every_sort_key)
{
    add_four();
    expect_order("", "mike kilo alpha zulu");
    expect_order("--sort created", "mike kilo alpha zulu");
    expect_order("--sort updated", "zulu mike kilo alpha");
    expect_order("--sort state", "alpha kilo zulu mike");
    expect_order("--sort id", "alpha kilo mike zulu");
    expect_order("--sort=id -r", "zulu mike kilo alpha");
    expect_order("--sort state --reverse", "mike zulu kilo alpha");
    expect_order("-o json", "mike kilo alpha zulu");
    /* the store's own order: oldest first, ties by id */
    expect_order("--sort created --reverse", "zulu alpha kilo mike");
    /* filters first, then the order */
    expect_order("--live --sort id -r", "zulu kilo alpha");
}

Test(cmd_ls, limit_cuts_the_sorted_list_and_says_how_many_more)
{
    json_t *page;

    add_four();
    expect_order("--limit 2", "mike kilo");
    cr_expect_not_null(strstr(cmd_output(), "(2 more: raise --limit"), "%s", cmd_output());
    cr_expect_null(strstr(cmd_output(), "--cursor '"), "%s", cmd_output());
    cr_assert_eq(cmd_sluice("ls --state-dir '%s' --limit 2 -o json --sort updated", cmd_dir), 0);
    page = cmd_output_json();
    cr_expect_eq(json_array_size(json_object_get(page, "items")), 2);
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(page, "items"), 0), "launch_id")),
                     "zulu");
    cr_expect(json_is_null(json_object_get(page, "next_cursor")), "%s", cmd_output());
    json_decref(page);
}

Test(cmd_ls, cursor_pages_the_store_order_only)
{
    json_t *page;
    char cursor[512];

    add_four();
    cr_assert_eq(
        cmd_sluice("ls --state-dir '%s' --limit 2 -o json --sort created --reverse", cmd_dir), 0);
    page = cmd_output_json();
    cr_assert(json_is_string(json_object_get(page, "next_cursor")), "%s", cmd_output());
    snprintf(cursor, sizeof(cursor), "%s", json_string_value(json_object_get(page, "next_cursor")));
    json_decref(page);
    expect_order("--limit 2 --sort created --reverse", "zulu alpha");
    cr_expect_not_null(strstr(cmd_output(), "(more: sluice ls --cursor '"), "%s", cmd_output());
    {
        char args[700];
        snprintf(args, sizeof(args), "--sort created --reverse --cursor '%s'", cursor);
        expect_order(args, "kilo mike");
    }

    /* any other order refuses a cursor: 64, saying which order takes it */
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --cursor '%s'", cmd_dir, cursor), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice ls: --cursor pages in the store's order, "
                                            "oldest first: add --sort created --reverse"),
                       "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --sort id --cursor '%s'", cmd_dir, cursor),
                 64);
}

Test(cmd_ls, a_bad_sort_is_a_usage_error)
{
    add_four();
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --sort size", cmd_dir), 64);
    cr_expect_not_null(strstr(cmd_errors(), "sluice ls: option '--sort' expects one of: created "
                                            "updated state id; got 'size'"),
                       "%s", cmd_errors());
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --sort", cmd_dir), 64);
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --reverse=yes", cmd_dir), 64);
    cr_assert_eq(cmd_sluice_split("ls --state-dir '%s' --sort -created", cmd_dir), 64);
}

/* More launches than one page of the store (1000): ls reads them all
 * before it sorts, so the newest is first and none is lost. */
Test(cmd_ls, sorting_reads_every_page)
{
    enum { N = 2100 };
    const int64_t t0 = 1767225600000;
    sluice_store_t *s = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_launch_spec_t *specs = calloc(N, sizeof(*specs));
    sluice_store_create_result_t *res = calloc(N, sizeof(*res));
    char(*ids)[16] = calloc(N, sizeof(*ids));
    json_t *req = json_pack("{s:s}", "site", "tb"), *page;
    size_t i;

    cr_assert(specs != NULL && res != NULL && ids != NULL && req != NULL);
    for (i = 0; i < N; i++) {
        snprintf(ids[i], sizeof(ids[i]), "l%04zu", i);
        specs[i] = (sluice_store_launch_spec_t){
            ids[i], "tb", NULL, req, NULL, NULL, "test", t0 + (int64_t)i, NULL, NULL};
    }
    cr_assert_eq(sluice_store_open(&s, cmd_dir, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_store_create_many(s, specs, N, res, &err), SLUICE_OK, "%s", err.text);
    sluice_store_close(s);

    cr_assert_eq(cmd_sluice("ls --state-dir '%s' --limit 3 -o json", cmd_dir), 0);
    page = cmd_output_json();
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(page, "items"), 0), "launch_id")),
                     "l2099");
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(page, "items"), 2), "launch_id")),
                     "l2097");
    json_decref(page);
    cr_assert_eq(cmd_sluice("ls --state-dir '%s' --limit 10 --sort id -r", cmd_dir), 0);
    cr_expect_not_null(strstr(cmd_output(), "l2099 "), "%s", cmd_output());
    cr_expect_not_null(strstr(cmd_output(), "(2090 more: "), "%.200s", cmd_output());

    json_decref(req);
    free(ids);
    free(res);
    free(specs);
}
