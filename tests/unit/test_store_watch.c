/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_watch.c - the store reads behind watching launches: the
 * filtered feed and its next mark, one launch's feed with the gseq of its
 * terminal event, one launch with its events and version, and a list with
 * its resource version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/store.h>

#include "sluice_assert.h"
#include "store_backend.h"

static char tmp[128];
static sluice_store_t *st;

static void setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    strcpy(tmp, "/tmp/sluice-store-watch-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    store_backend_setup();
    cr_assert_sluice_ok(store_backend_open(&st, tmp, &err), &err);
}

static void teardown(void)
{
    char cmd[256];

    sluice_store_close(st);
    store_backend_teardown();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(store_watch, .init = setup, .fini = teardown, .timeout = 30);

static void make(const char *id, const char *site)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s}", "launch_id", id);
    sluice_store_launch_spec_t spec = {0};

    spec.launch_id = id;
    spec.site = site;
    spec.request = req;
    cr_assert_sluice_ok(sluice_store_create_launch(st, &spec, NULL, &err), &err);
    json_decref(req);
}

static void move(const char *id, const char *state, int terminal)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

    sum.state = state;
    sum.terminal = terminal;
    cr_assert_sluice_ok(
        sluice_store_append_event_and_update(st, id, "moved", NULL, NULL, 0, &sum, NULL, &err),
        &err);
}

static void note(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(sluice_store_append_event(st, id, "archived", NULL, NULL, 0, NULL, &err),
                        &err);
}

static int64_t gseq_at(json_t *evs, size_t i)
{
    return (int64_t)json_integer_value(json_object_get(json_array_get(evs, i), "gseq"));
}

Test(store_watch, filtered_feed_skips_what_does_not_match)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_event_filter_t f = {0};
    json_t *evs = NULL;
    int64_t next = -1;

    make("a", "site-1");     /* gseq 1 */
    make("b", "site-2");     /* 2 */
    move("a", "RUNNING", 0); /* 3 */
    move("b", "RUNNING", 0); /* 4 */
    move("a", "DONE", 1);    /* 5 */

    f.launch_id = "b";
    cr_assert_sluice_ok(sluice_store_events_filtered(st, 0, 10, &f, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 2);
    cr_expect_eq(gseq_at(evs, 0), 2);
    cr_expect_eq(gseq_at(evs, 1), 4);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(evs, 1), "launch_id")), "b");
    cr_expect_eq(next, 5, "every event up to the newest was looked at");
    json_decref(evs);

    memset(&f, 0, sizeof(f));
    f.site = "site-1";
    f.state = "DONE";
    cr_assert_sluice_ok(sluice_store_events_filtered(st, 0, 10, &f, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 1);
    cr_expect_eq(gseq_at(evs, 0), 5);
    json_decref(evs);

    /* a full batch: the mark is the last row, not the newest */
    cr_assert_sluice_ok(sluice_store_events_filtered(st, 0, 2, NULL, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 2);
    cr_expect_eq(next, 2);
    json_decref(evs);

    f.launch_id = "../x";
    cr_expect_eq(sluice_store_events_filtered(st, 0, 2, &f, &evs, &next, &err), SLUICE_EINVAL);
}

Test(store_watch, one_launch_feed_names_its_terminal_event)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL;
    int64_t done = -1;

    make("a", "site-1");     /* 1 */
    make("b", "site-1");     /* 2 */
    move("a", "RUNNING", 0); /* 3 */
    cr_assert_sluice_ok(sluice_store_launch_events_after(st, "a", 1, 0, &evs, &done, &err), &err);
    cr_assert_eq(json_array_size(evs), 1);
    cr_expect_eq(gseq_at(evs, 0), 3);
    cr_expect_eq(done, 0, "live");
    json_decref(evs);
    move("b", "RUNNING", 0); /* 4 */
    move("a", "DONE", 1);    /* 5 */
    note("a");               /* 6: after DONE */
    cr_assert_sluice_ok(sluice_store_launch_events_after(st, "a", 0, 0, &evs, &done, &err), &err);
    cr_assert_eq(json_array_size(evs), 4);
    cr_expect_eq(gseq_at(evs, 3), 6);
    cr_expect_eq(done, 5);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(evs, 2), "state")), "DONE");
    json_decref(evs);
    cr_expect_eq(sluice_store_launch_events_after(st, "nope", 0, 0, &evs, &done, &err),
                 SLUICE_ENOTFOUND);
}

Test(store_watch, launch_and_list_carry_their_versions)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *l = NULL, *evs = NULL, *items = NULL;
    int64_t v = -1;
    char *next = NULL;

    cr_assert_sluice_ok(sluice_store_list_launches_at(st, NULL, &items, &next, &v, &err), &err);
    cr_expect_eq(v, 0, "an empty store");
    json_decref(items);
    make("a", "site-1");     /* 1 */
    make("b", "site-1");     /* 2 */
    move("a", "RUNNING", 0); /* 3 */
    cr_assert_sluice_ok(sluice_store_read_launch(st, "b", &l, &evs, &v, &err), &err);
    cr_expect_eq(v, 2);
    cr_expect_eq(json_array_size(evs), 1);
    cr_expect_str_eq(json_string_value(json_object_get(l, "state")), "ACCEPTED");
    json_decref(l);
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_read_launch(st, "a", &l, &evs, &v, &err), &err);
    cr_expect_eq(v, 3);
    cr_expect_eq(gseq_at(evs, json_array_size(evs) - 1), v);
    json_decref(l);
    json_decref(evs);
    cr_expect_eq(sluice_store_read_launch(st, "nope", &l, &evs, &v, &err), SLUICE_ENOTFOUND);
    cr_assert_sluice_ok(sluice_store_list_launches_at(st, NULL, &items, &next, &v, &err), &err);
    cr_expect_eq(v, 3);
    cr_expect_eq(json_array_size(items), 2);
    json_decref(items);
    free(next);
}
