/* SPDX-License-Identifier: Apache-2.0 */
/* test_launcher_tenant.c - the launcher acts for a launch as its tenant
 * (the tenant part of its key, "<tenant>~<launch_id>"): submit, reads,
 * cancel and adoption through the tenant's cluster operations, and the
 * tenant's Slurm user in every ownership check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/launcher.h>
#include <sluice/store.h>

#include "base/marker.h"
#include "fake_cluster.h"
#include "sluice_assert.h"
#include "store_backend.h"

static char tmp[128];
static int64_t clock_now;
static fake_cluster_t *site_fc; /* the site's identity: user svc */
static fake_cluster_t *ta_fc;   /* tenant ta's identity: user alice */
static sluice_store_t *store;

static int64_t t_now(void *arg)
{
    (void)arg;
    return __atomic_load_n(&clock_now, __ATOMIC_SEQ_CST);
}

static void t_sleep(void *arg, int64_t ms)
{
    (void)arg;
    clock_now += ms;
}

static bool t_kill(void *arg, const char *point)
{
    (void)arg;
    (void)point;
    return false;
}

static sluice_err h_prepare(void *arg,
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

static sluice_err h_sync(void *arg, sluice_error_t *err)
{
    (void)arg, (void)err;
    return SLUICE_OK;
}

static sluice_err
h_archive(void *arg, const char *id, uint32_t attempt, const char *dir, sluice_error_t *err)
{
    (void)arg, (void)id, (void)attempt, (void)dir, (void)err;
    return SLUICE_OK;
}

static void setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    strcpy(tmp, "/tmp/sluice-launcher-tn-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    clock_now = 1700000000000;
    site_fc = calloc(1, sizeof(*site_fc));
    ta_fc = calloc(1, sizeof(*ta_fc));
    fake_cluster_init(site_fc, &clock_now, "svc");
    fake_cluster_init(ta_fc, &clock_now, "alice");
    store_backend_setup();
    cr_assert_sluice_ok(store_backend_open(&store, tmp, &err), &err);
}

static void teardown(void)
{
    char cmd[256];

    sluice_store_close(store);
    store_backend_teardown();
    free(site_fc);
    free(ta_fc);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(launcher_tenant, .init = setup, .fini = teardown, .timeout = 120);

static sluice_launcher_t *new_launcher(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_tenant_t t[1];
    sluice_launcher_t *l = NULL;

    memset(t, 0, sizeof(t));
    t[0].name = "ta";
    t[0].user = "alice";
    t[0].cluster = fake_cluster_ops(ta_fc);
    o.store = store;
    o.cluster = fake_cluster_ops(site_fc);
    o.staging.prepare = h_prepare;
    o.staging.sync = h_sync;
    o.staging.archive = h_archive;
    o.user = "svc";
    o.site = "site1";
    o.now_ms = t_now;
    o.sleep_ms = t_sleep;
    o.kill_at = t_kill;
    o.rpc_per_sec = 100000;
    o.tenants = t;
    o.n_tenants = 1;
    cr_assert_sluice_ok(sluice_launcher_new(&l, &o, &err), &err);
    cr_assert_sluice_ok(sluice_launcher_recover(l, NULL, &err), &err);
    return l;
}

static sluice_err try_accept(sluice_launcher_t *l, const char *id, sluice_error_t *err)
{
    sluice_launcher_request_t r;
    json_t *jobs = json_pack("[{s:s, s:s, s:i, s:s, s:b}]", "name", "x", "comment", "y", "nodes", 1,
                             "workdir", "/tmp", "hold", 0);
    json_t *render = json_pack("{s:s, s:o}", "script", "#!/bin/sh\ntrue\n", "jobs", jobs);
    json_t *req = json_pack("{s:s, s:s}", "launch_id", id, "site", "site1");
    int existed = -1;
    sluice_err rc;

    memset(&r, 0, sizeof(r));
    r.request = req;
    r.render = render;
    r.caller = "tester";
    rc = sluice_launcher_accept(l, &r, NULL, &existed, err);
    json_decref(req);
    json_decref(render);
    return rc;
}

static void accept_launch(sluice_launcher_t *l, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(try_accept(l, id, &err), &err);
}

static void step(sluice_launcher_t *l)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(sluice_launcher_step(l, &err), &err);
    __atomic_fetch_add(&clock_now, 1000, __ATOMIC_SEQ_CST);
}

static json_t *row(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *r = NULL;

    cr_assert_sluice_ok(sluice_store_get_launch(store, id, &r, &err), &err);
    return r;
}

static bool is_done(const char *id)
{
    json_t *r = row(id);
    bool t = json_is_true(json_object_get(r, "terminal"));

    json_decref(r);
    return t;
}

static int result_of(const char *id)
{
    json_t *r = row(id);
    int code = json_is_integer(json_object_get(r, "result_code"))
                   ? (int)json_integer_value(json_object_get(r, "result_code"))
                   : -1;

    json_decref(r);
    return code;
}

static size_t count_events(const char *id, const char *name)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL, *e;
    size_t i, k = 0;

    cr_assert_sluice_ok(sluice_store_read_events(store, id, 1, 0, &evs, &err), &err);
    json_array_foreach(evs, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            k++;
    }
    json_decref(evs);
    return k;
}

static void run_both(sluice_launcher_t *l, const char *a, const char *b)
{
    for (int i = 0; i < 60 && !(is_done(a) && is_done(b)); i++)
        step(l);
    cr_assert(is_done(a) && is_done(b));
}

/* "ta~x1" is submitted and read only through ta's operations, and its job
 * (user alice) is ours; "x2" (the default tenant) only through the site's. */
Test(launcher_tenant, a_tenant_launch_goes_through_the_tenant_identity)
{
    sluice_launcher_t *l = new_launcher();

    accept_launch(l, "ta~x1");
    accept_launch(l, "x2");
    run_both(l, "ta~x1", "x2");
    cr_assert_eq(result_of("ta~x1"), 0);
    cr_assert_eq(result_of("x2"), 0);
    cr_assert_eq(ta_fc->n_submit, 1, "ta~x1 was POSTed as ta");
    cr_assert_eq(site_fc->n_submit, 1, "x2 was POSTed as the site");
    cr_assert_eq(ta_fc->n_jobs, 1);
    cr_assert_eq(site_fc->n_jobs, 1);
    cr_assert_str_eq(ta_fc->jobs[0].user, "alice");
    cr_assert_neq(strstr(ta_fc->jobs[0].comment, "ta~x1"), NULL, "%s", ta_fc->jobs[0].comment);
    cr_assert_gt(ta_fc->n_states, 0, "ta's jobs are read as ta");
    cr_assert_eq(ta_fc->last_states_n, 1, "the site's job is never in ta's read");
    cr_assert_eq(site_fc->last_states_n, 1, "ta's job is never in the site's read");
    sluice_launcher_free(l);
}

/* A job of the tenant's launch whose record names another user (the
 * site's own, here) is not the tenant's: no cancel is sent. */
Test(launcher_tenant, cancel_refuses_a_job_of_another_user)
{
    sluice_launcher_t *l = new_launcher();
    sluice_error_t err = SLUICE_ERROR_INIT;
    fake_stage_t slow[] = {{SLUICE_JOB_RUNNING, 0, 0, 0, 10}, {SLUICE_JOB_COMPLETED, 0, 0, 0, 2}};

    fake_cluster_set_script(ta_fc, slow, 2);
    accept_launch(l, "ta~w1");
    step(l);
    step(l);
    cr_assert_eq(ta_fc->n_jobs, 1);
    snprintf(ta_fc->jobs[0].user, sizeof(ta_fc->jobs[0].user), "svc");
    cr_assert_sluice_ok(sluice_launcher_cancel(l, "ta~w1", "tester", &err), &err);
    for (int i = 0; i < 5; i++)
        step(l);
    cr_assert_eq(ta_fc->n_cancel, 0, "no DELETE was sent");
    cr_assert_eq(site_fc->n_cancel, 0);
    cr_assert_eq(count_events("ta~w1", "cancel-refused"), 1);
    sluice_launcher_free(l);
}

/* Its own job is cancelled as the tenant. */
Test(launcher_tenant, cancel_of_the_tenant_job_goes_as_the_tenant)
{
    sluice_launcher_t *l = new_launcher();
    sluice_error_t err = SLUICE_ERROR_INIT;
    fake_stage_t slow[] = {{SLUICE_JOB_RUNNING, 0, 0, 0, 10}, {SLUICE_JOB_COMPLETED, 0, 0, 0, 2}};

    fake_cluster_set_script(ta_fc, slow, 2);
    accept_launch(l, "ta~w2");
    step(l);
    step(l);
    cr_assert_sluice_ok(sluice_launcher_cancel(l, "ta~w2", "tester", &err), &err);
    for (int i = 0; i < 5; i++)
        step(l);
    cr_assert_eq(ta_fc->n_cancel, 1);
    cr_assert_eq(site_fc->n_cancel, 0);
    sluice_launcher_free(l);
}

/* An uncertain POST of the tenant is reconciled by name as the tenant: a
 * job carrying the marker but run by another user (the site's) is never
 * adopted; the tenant's own is. */
Test(launcher_tenant, adoption_takes_only_the_tenant_user_job)
{
    sluice_launcher_t *l = new_launcher();
    char name[SLUICE_FSM_MARKER_MAX], comment[SLUICE_FSM_MARKER_MAX];
    uint64_t foreign;

    fake_cluster_push_mode(ta_fc, FAKE_SUBMIT_DROP); /* nothing created, no answer */
    accept_launch(l, "ta~u1");
    step(l);
    cr_assert_eq(ta_fc->n_submit, 1);
    /* a job with ta~u1's marker, run as svc, in the tenant's view */
    marker_job_name(name, sizeof(name), "sluice", "site1", "ta~u1", 1);
    marker_comment(comment, sizeof(comment), "ta~u1", 1);
    foreign = fake_cluster_add_job(ta_fc, name, comment, "svc", 1);
    cr_assert_neq(foreign, 0);
    for (int i = 0; i < 200 && !is_done("ta~u1"); i++)
        step(l);
    cr_assert(is_done("ta~u1"));
    cr_assert_eq(count_events("ta~u1", "adopted"), 0, "the svc job is not ta's");
    cr_assert_gt(ta_fc->n_find_live, 0, "reconciled as ta");
    cr_assert_eq(site_fc->n_find_live, 0);
    cr_assert_eq(site_fc->n_find_acct, 0);
    sluice_launcher_free(l);

    teardown();
    setup();
    l = new_launcher();
    fake_cluster_push_mode(ta_fc, FAKE_SUBMIT_LOST); /* created as alice, answer lost */
    accept_launch(l, "ta~u2");
    for (int i = 0; i < 60 && !is_done("ta~u2"); i++)
        step(l);
    cr_assert_eq(result_of("ta~u2"), 0);
    cr_assert_eq(count_events("ta~u2", "adopted"), 1);
    sluice_launcher_free(l);
}

/* A launch of a tenant the launcher does not act for is refused at the
 * accept: it could never be submitted as anyone. */
Test(launcher_tenant, a_launch_of_an_unknown_tenant_is_refused)
{
    sluice_launcher_t *l = new_launcher();
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(try_accept(l, "zz~x1", &err), SLUICE_EINVAL);
    cr_assert_neq(strstr(err.text, "tenant"), NULL, "%s", err.text);
    for (int i = 0; i < 3; i++)
        step(l);
    cr_assert_eq(ta_fc->n_submit + site_fc->n_submit, 0);
    sluice_launcher_free(l);
}
