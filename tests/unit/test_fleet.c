/* SPDX-License-Identifier: Apache-2.0 */
/* test_fleet.c - several clusters from one service (issue 17): the
 * request's `cluster` (parse and policy), launches.cluster in the store
 * (round trip, filters; both backends: unit.fleet.pg), and one launcher per
 * cluster on one store: accepts routed by cluster, recovery and pick-up
 * taking only their own cluster's launches (none stored: the first's), the
 * supervisor lock taken once by the caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/launch.h>
#include <sluice/launcher.h>
#include <sluice/store.h>

#include "fake_cluster.h"
#include "sluice_assert.h"
#include "store_backend.h"

#define USER "svc"

static char tmp[128];
static int64_t clock_now;
static fake_cluster_t *fc_east, *fc_west;
static sluice_store_t *store;

static void setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    strcpy(tmp, "/tmp/sluice-fleet-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    clock_now = 1700000000000;
    fc_east = calloc(1, sizeof(*fc_east));
    fc_west = calloc(1, sizeof(*fc_west));
    fake_cluster_init(fc_east, &clock_now, USER);
    fake_cluster_init(fc_west, &clock_now, USER);
    store_backend_setup();
    cr_assert_sluice_ok(store_backend_open(&store, tmp, &err), &err);
}

static void teardown(void)
{
    char cmd[256];

    sluice_store_close(store);
    store_backend_teardown();
    free(fc_east);
    free(fc_west);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(fleet, .init = setup, .fini = teardown, .timeout = 120);

/* ---- the request's `cluster` ------------------------------------------- */

static sluice_launch_policy_t policy(const char *const *clusters, size_t n)
{
    sluice_launch_policy_t p;

    memset(&p, 0, sizeof(p));
    p.default_profile = SLUICE_LAUNCH_PROFILE_NONE;
    p.pending_timeout = 600;
    p.clusters = clusters;
    p.n_clusters = n;
    return p;
}

static sluice_err
parse(const char *json, const sluice_launch_policy_t *p, sluice_launch_t **out, sluice_error_t *err)
{
    return sluice_launch_parse(out, json, strlen(json), p, 0, err);
}

/* The dependency rule for a canonical request object (its launch_id and
 * depends_on), as the accept pipeline calls it with the parsed launch. */
static sluice_err check_dep(sluice_launcher_t *l, const json_t *req, sluice_error_t *err)
{
    const json_t *dep = json_object_get(req, "depends_on");

    return sluice_launcher_check_dependency(l, json_string_value(json_object_get(req, "launch_id")),
                                            json_string_value(json_object_get(dep, "launch_id")),
                                            json_string_value(json_object_get(dep, "condition")),
                                            err);
}

#define REQ(more)                                                                                  \
    "{\"launch_id\": \"f1\", \"site\": \"s\", \"command\": \"/bin/true\", \"pools\": [{\"name\": " \
    "\"p\"}]" more "}"

Test(fleet, a_request_names_one_of_the_sites_clusters)
{
    static const char *const names[] = {"east", "west"};
    sluice_launch_policy_t p = policy(names, 2);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    json_t *canon;

    cr_assert_sluice_ok(parse(REQ(", \"cluster\": \"west\""), &p, &l, &err), &err);
    cr_assert_str_eq(sluice_launch_spec(l)->cluster, "west");
    canon = sluice_launch_to_value(l, &err);
    cr_assert_str_eq(json_string_value(json_object_get(canon, "cluster")), "west",
                     "the canonical request (and so its hash) carries the cluster");
    json_decref(canon);
    sluice_launch_free(l);
    l = NULL;
    cr_assert_sluice_ok(parse(REQ(""), &p, &l, &err), &err);
    cr_assert_null(sluice_launch_spec(l)->cluster, "absent: the first (resolved by the accept)");
    sluice_launch_free(l);
    l = NULL;

    cr_assert_eq(parse(REQ(", \"cluster\": \"north\""), &p, &l, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "cluster: unknown cluster \"north\" (known: east, west)");
    cr_assert_eq(parse(REQ(", \"cluster\": 7"), &p, &l, &err), SLUICE_EINVAL);
    cr_assert(strncmp(err.text, "cluster: ", 9) == 0, "%s", err.text);
    cr_assert_null(l);
}

Test(fleet, a_site_without_clusters_knows_only_default)
{
    sluice_launch_policy_t p = policy(NULL, 0);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;

    cr_assert_sluice_ok(parse(REQ(", \"cluster\": \"default\""), &p, &l, &err), &err);
    sluice_launch_free(l);
    l = NULL;
    cr_assert_eq(parse(REQ(", \"cluster\": \"east\""), &p, &l, &err), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "cluster: unknown cluster \"east\" (known: default)");
}

/* ---- the store ---------------------------------------------------------- */

static void create(const char *id, const char *cluster)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s, s:s, s:s?}", "launch_id", id, "site", "s", "cluster", cluster);
    json_t *render =
        json_pack("{s:s, s:[{s:s, s:s, s:i, s:s, s:b}]}", "script", "#!/bin/sh\ntrue\n", "jobs",
                  "name", "x", "comment", "y", "nodes", 1, "workdir", "/tmp", "hold", 0);
    sluice_store_launch_spec_t spec = {0};
    int existed = -1;

    spec.launch_id = id;
    spec.site = "s";
    spec.request = req;
    spec.render = render;
    spec.cluster = cluster;
    spec.time_ms = clock_now++;
    cr_assert_sluice_ok(sluice_store_create_launch(store, &spec, &existed, &err), &err);
    cr_assert_eq(existed, 0);
    json_decref(req);
    json_decref(render);
}

static size_t listed(const char *cluster, int or_null)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_filter_t f;
    json_t *items = NULL;
    size_t n;

    memset(&f, 0, sizeof(f));
    f.cluster = cluster;
    f.cluster_or_null = or_null;
    cr_assert_sluice_ok(sluice_store_list_launches(store, &f, &items, NULL, &err), &err);
    n = json_array_size(items);
    json_decref(items);
    return n;
}

Test(fleet, the_store_keeps_the_cluster_and_filters_by_it)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *row = NULL;

    create("old", NULL); /* stored before clusters: the first's */
    create("e1", "east");
    create("w1", "west");
    create("w2", "west");
    cr_assert_sluice_ok(sluice_store_get_launch(store, "w1", &row, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(row, "cluster")), "west");
    json_decref(row);
    cr_assert_sluice_ok(sluice_store_get_launch(store, "old", &row, &err), &err);
    cr_assert(json_is_null(json_object_get(row, "cluster")), "none stored: null");
    json_decref(row);
    cr_assert_eq(listed(NULL, 0), 4);
    cr_assert_eq(listed("west", 0), 2);
    cr_assert_eq(listed("east", 0), 1);
    cr_assert_eq(listed("east", 1), 2, "the first cluster's list takes those stored with none");
    cr_assert_eq(listed("north", 0), 0);
}

/* ---- one launcher per cluster on one store ------------------------------ */

static sluice_err no_staging(void *arg, char ***names, size_t *n, sluice_error_t *err)
{
    (void)arg, (void)err;
    *names = NULL;
    *n = 0;
    return SLUICE_OK;
}

static sluice_err ok_prepare(void *arg,
                             const char *id,
                             uint32_t attempt,
                             const json_t *render,
                             const sluice_secret_t *s,
                             size_t n,
                             sluice_error_t *err)
{
    (void)arg, (void)id, (void)attempt, (void)render, (void)s, (void)n, (void)err;
    return SLUICE_OK;
}

static sluice_err ok_sync(void *arg, sluice_error_t *err)
{
    (void)arg, (void)err;
    return SLUICE_OK;
}

static int64_t t_now(void *arg)
{
    (void)arg;
    return clock_now;
}

static sluice_launcher_t *launcher_of(fake_cluster_t *fc, const char *name, bool first)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_t *l = NULL;

    o.store = store;
    o.cluster = fake_cluster_ops(fc);
    o.staging.list_staging = no_staging;
    o.staging.prepare = ok_prepare;
    o.staging.sync = ok_sync;
    o.user = USER;
    o.site = "s";
    o.now_ms = t_now;
    o.cluster_name = name;
    o.cluster_default = first;
    o.store_locked = true;
    cr_assert_sluice_ok(sluice_launcher_new(&l, &o, &err), &err);
    cr_assert_sluice_ok(sluice_launcher_recover(l, NULL, &err), &err);
    return l;
}

static sluice_err
accept_on(sluice_launcher_t *l, const char *id, const char *cluster, sluice_error_t *err)
{
    json_t *req = json_pack("{s:s, s:s, s:s?}", "launch_id", id, "site", "s", "cluster", cluster);
    json_t *render =
        json_pack("{s:s, s:[{s:s, s:s, s:i, s:s, s:b}]}", "script", "#!/bin/sh\ntrue\n", "jobs",
                  "name", "x", "comment", "y", "nodes", 1, "workdir", "/tmp", "hold", 0);
    sluice_launcher_request_t r;
    int existed = 0;
    sluice_err rc;

    memset(&r, 0, sizeof(r));
    r.request = req;
    r.render = render;
    rc = sluice_launcher_accept(l, &r, NULL, &existed, err);
    json_decref(req);
    json_decref(render);
    return rc;
}

Test(fleet, each_launcher_takes_only_its_clusters_launches)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_t *east, *west;

    cr_assert_sluice_ok(sluice_store_lock_supervisor(store, &err), &err);
    /* Stored before the launchers start: recovery splits them. */
    create("old", NULL);
    create("e1", "east");
    create("w1", "west");
    east = launcher_of(fc_east, "east", true);
    west = launcher_of(fc_west, "west", false);
    cr_assert_eq(sluice_launcher_tracked(east), 2, "east recovers e1 and the one stored with none");
    cr_assert_eq(sluice_launcher_tracked(west), 1, "west recovers w1 only");

    /* Accepts: each launcher takes its own cluster's, refuses another's. */
    cr_assert_sluice_ok(accept_on(west, "w2", "west", &err), &err);
    cr_assert_eq(accept_on(east, "w3", "west", &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "cluster:") == err.text, "%s", err.text);
    cr_assert_eq(accept_on(west, "n1", NULL, &err), SLUICE_EINVAL,
                 "none named is the first's, not west's");
    cr_assert_sluice_ok(accept_on(east, "e2", "east", &err), &err);

    /* A step submits each on its own cluster; the pick-up of the other's
     * new launches (seq 1 in the store) leaves them alone. */
    for (int i = 0; i < 3; i++) {
        cr_assert_sluice_ok(sluice_launcher_step(east, &err), &err);
        cr_assert_sluice_ok(sluice_launcher_step(west, &err), &err);
        clock_now += 1000;
    }
    cr_assert_eq(fake_cluster_count_named(fc_west, "sluice-s-"), 2, "west got w1 and w2: %zu",
                 fake_cluster_count_named(fc_west, "sluice-s-"));
    cr_assert_eq(fake_cluster_count_named(fc_east, "sluice-s-"), 3, "east got old, e1, e2: %zu",
                 fake_cluster_count_named(fc_east, "sluice-s-"));

    /* A dependency names a job of the same slurmctld: a partner on
     * another cluster is refused at the accept. */
    {
        json_t *req =
            json_pack("{s:s, s:s, s:s, s:{s:s, s:s}}", "launch_id", "w9", "site", "s", "cluster",
                      "west", "depends_on", "launch_id", "e1", "condition", "afterany");
        cr_assert_eq(check_dep(west, req, &err), SLUICE_EINVAL);
        cr_assert(strstr(err.text, "another cluster") != NULL, "%s", err.text);
        json_object_set_new(req, "depends_on",
                            json_pack("{s:s, s:s}", "launch_id", "w1", "condition", "afterany"));
        cr_assert_sluice_ok(check_dep(west, req, &err), &err);
        json_decref(req);
    }

    /* The same id again with another cluster is another request. */
    cr_assert_eq(accept_on(east, "w2", "east", &err), SLUICE_ECONFLICT);

    /* Freeing a launcher that did not take the lock leaves it held. */
    sluice_launcher_free(east);
    sluice_launcher_free(west);
    {
        sluice_store_t *other = NULL;
        cr_assert_sluice_ok(store_backend_open(&other, tmp, &err), &err);
        cr_assert_eq(sluice_store_lock_supervisor(other, &err), SLUICE_ECONFLICT,
                     "still this process's: %s", err.text);
        sluice_store_close(other);
    }
    sluice_store_unlock_supervisor(store);
}
