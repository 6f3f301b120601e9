/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch_view.c - the caller's view of a launch (launch_view.h). */
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/launch_view.h>

static int addr_of(void *arg, const char *node, char *buf, size_t size)
{
    (void)arg;
    if (strcmp(node, "tb2") == 0)
        return 0;
    snprintf(buf, size, "127.0.0.%s", node + 2);
    return 1;
}

static json_t *events_with(const char *nodes0, const char *nodes1)
{
    json_t *ev =
        json_pack("[{s:i, s:s, s:s, s:{}}, {s:i, s:s, s:n, s:{s:s, s:[{s:i, s:s}]}}]", "seq", 1,
                  "name", "accepted", "caller", "alice", "context", "seq", 2, "name", "observed",
                  "caller", "context", "lookup", "FOUND", "jobs", "job_id", 7, "state", "PENDING");
    json_t *jobs = json_pack("[{s:i, s:s, s:s}, {s:i, s:s, s:s}]", "job_id", 8, "state", "RUNNING",
                             "nodes", nodes0, "job_id", 9, "state", "RUNNING", "nodes", nodes1);

    json_array_append_new(ev,
                          json_pack("{s:i, s:s, s:n, s:{s:s, s:o}}", "seq", 3, "name", "observed",
                                    "caller", "context", "lookup", "FOUND", "jobs", jobs));
    json_array_append_new(
        ev, json_pack("{s:i, s:s, s:n, s:{}}", "seq", 4, "name", "archived", "caller", "context"));
    return ev;
}

Test(launch_view, newest_observation_gives_components_nodes_and_addresses)
{
    json_t *launch = json_pack("{s:s, s:s, s:{s:s}}", "launch_id", "L1", "state", "RUNNING",
                               "render", "script", "#!/bin/bash");
    json_t *ev = events_with("tb[1-2]", "tb3");
    json_t *v = sluice_launch_view_build(launch, ev, addr_of, NULL);
    json_t *c0, *c1;

    cr_assert_not_null(v);
    cr_expect_null(json_object_get(v, "render"));
    cr_expect_str_eq(json_string_value(json_object_get(v, "created_by")), "alice");
    cr_expect_eq(json_array_size(json_object_get(v, "events")), 4);
    cr_assert_eq(json_array_size(json_object_get(v, "components")), 2);
    c0 = json_array_get(json_object_get(v, "components"), 0);
    c1 = json_array_get(json_object_get(v, "components"), 1);
    cr_expect_eq(json_integer_value(json_object_get(c0, "job_id")), 8);
    cr_expect_str_eq(json_string_value(json_object_get(c0, "nodelist")), "tb[1-2]");
    cr_assert_eq(json_array_size(json_object_get(c0, "nodes")), 2);
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(c0, "nodes"), 0), "address")),
                     "127.0.0.1");
    cr_expect(
        json_is_null(json_object_get(json_array_get(json_object_get(c0, "nodes"), 1), "address")));
    cr_expect_eq(json_integer_value(json_object_get(c1, "component")), 1);
    cr_expect_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(c1, "nodes"), 0), "name")),
        "tb3");
    /* the launch passed in is not changed */
    cr_expect_not_null(json_object_get(launch, "render"));
    json_decref(v);
    json_decref(ev);
    json_decref(launch);
}

Test(launch_view, no_lookup_means_null_addresses_and_pending_means_no_nodes)
{
    json_t *launch = json_pack("{s:s}", "launch_id", "L2");
    json_t *ev = events_with("None assigned", "tb1");
    json_t *v = sluice_launch_view_build(launch, ev, NULL, NULL);
    json_t *comps = json_object_get(v, "components");

    cr_assert_not_null(v);
    cr_expect_eq(json_array_size(json_object_get(json_array_get(comps, 0), "nodes")), 0);
    cr_expect(json_is_null(json_object_get(
        json_array_get(json_object_get(json_array_get(comps, 1), "nodes"), 0), "address")));
    json_decref(v);
    json_decref(ev);
    json_decref(launch);
}

Test(launch_view, pending_component_shows_its_reason)
{
    json_t *launch = json_pack("{s:s}", "launch_id", "L3");
    json_t *ev = json_pack(
        "[{s:i, s:s, s:s, s:{}}, {s:i, s:s, s:n, s:{s:s, s:[{s:i, s:s, s:s, s:s}]}}]", "seq", 1,
        "name", "accepted", "caller", "alice", "context", "seq", 2, "name", "observed", "caller",
        "context", "lookup", "FOUND", "jobs", "job_id", 7, "state", "PENDING", "state_reason",
        "ReqNodeNotAvail", "state_description", "ReqNodeNotAvail, UnavailableNodes:");
    json_t *v = sluice_launch_view_build(launch, ev, NULL, NULL);
    json_t *c0 = json_array_get(json_object_get(v, "components"), 0);

    cr_assert_not_null(c0);
    cr_expect_str_eq(json_string_value(json_object_get(c0, "state_reason")), "ReqNodeNotAvail");
    cr_expect_str_eq(json_string_value(json_object_get(c0, "state_description")),
                     "ReqNodeNotAvail, UnavailableNodes:");
    json_decref(v);
    json_decref(ev);
    json_decref(launch);
}

Test(launch_view, no_events_gives_no_creator_and_no_components)
{
    json_t *launch = json_pack("{s:s}", "launch_id", "L3");
    json_t *ev = json_array();
    json_t *v = sluice_launch_view_build(launch, ev, NULL, NULL);

    cr_assert_not_null(v);
    cr_expect(json_is_null(json_object_get(v, "created_by")));
    cr_expect_eq(json_array_size(json_object_get(v, "components")), 0);
    json_decref(v);
    json_decref(ev);
    json_decref(launch);
}
