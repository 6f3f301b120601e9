/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurmrest.c - the REST version adapters: paths, submit bodies per
 * version, and every parser against the fixtures of every version. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurmrest.h"

#include "jobdesc_cases.h"

#define T0 1767225600

static json_t *fixture(sluice_rest_version v, const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[4096];
    json_error_t jerr;
    json_t *j;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/%s/%s.json", src,
             sluice_rest_version_name(v), name);
    j = json_load_file(path, 0, &jerr);
    cr_assert_not_null(j, "%s: %s", path, jerr.text);
    return j;
}

static json_t *parse(const char *text)
{
    json_t *j = json_loads(text, 0, NULL);

    cr_assert_not_null(j, "bad test JSON: %s", text);
    return j;
}

#define V(x) sluice_rest_version_name(x)

/* ---- versions and paths ---- */

Test(slurmrest, version_names_and_parse)
{
    sluice_rest_version v;

    for (int i = 0; i < SLUICE_REST_VERSION_COUNT_; i++) {
        cr_assert_eq(sluice_rest_version_parse(V(i), &v, NULL), SLUICE_OK);
        cr_assert_eq(v, i);
    }
    cr_assert_eq(sluice_rest_version_parse("data_parser/v0.0.43", &v, NULL), SLUICE_OK);
    cr_assert_eq(v, SLUICE_REST_V0043);
    cr_assert_eq(sluice_rest_version_parse("openapi/v0.0.38", &v, NULL), SLUICE_OK);
    cr_assert_eq(v, SLUICE_REST_V0038);
    cr_assert_eq(sluice_rest_version_parse("0.0.45", &v, NULL), SLUICE_OK);
    cr_assert_eq(sluice_rest_version_parse("data_parser/v0.0.46", &v, NULL), SLUICE_OK);
    cr_assert_eq(v, SLUICE_REST_V0046);
    cr_assert_eq(SLUICE_REST_V0046, SLUICE_REST_VERSION_COUNT_ - 1, "v0.0.46 is the newest");
    cr_assert_eq(sluice_rest_version_parse("v0.0.39", &v, NULL), SLUICE_EUNSUPPORTED);
    cr_assert_eq(sluice_rest_version_parse("v0.0.47", &v, NULL), SLUICE_EUNSUPPORTED);
    cr_assert_eq(sluice_rest_version_parse("v0.0.4", &v, NULL), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_version_parse("v0.0.430", &v, NULL), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_version_parse("openapi/slurmctld", &v, NULL), SLUICE_EINVAL);
    cr_assert_str_eq(sluice_rest_version_name(SLUICE_REST_VERSION_COUNT_), "unknown");
}

#define PATH_IS(call, expect)                                                                      \
    do {                                                                                           \
        char *p_ = NULL;                                                                           \
        sluice_error_t e_ = SLUICE_ERROR_INIT;                                                     \
        cr_assert_eq(call, SLUICE_OK, "%s", e_.text);                                              \
        cr_assert_str_eq(p_, expect);                                                              \
        free(p_);                                                                                  \
    } while (0)

Test(slurmrest, paths_per_version)
{
    uint64_t ids[] = {5, 6};

    PATH_IS(sluice_rest_path_submit(SLUICE_REST_V0038, &p_, &e_), "/slurm/v0.0.38/job/submit");
    PATH_IS(sluice_rest_path_job(SLUICE_REST_V0043, 42, &p_, &e_), "/slurm/v0.0.43/job/42");
    PATH_IS(sluice_rest_path_jobs(SLUICE_REST_V0038, 1700000000, &p_, &e_),
            "/slurm/v0.0.38/jobs/?update_time=1700000000");
    PATH_IS(sluice_rest_path_jobs(SLUICE_REST_V0040, 1700000000, &p_, &e_),
            "/slurm/v0.0.40/jobs/?update_time=uts1700000000");
    PATH_IS(sluice_rest_path_jobs(SLUICE_REST_V0041, 7, &p_, &e_),
            "/slurm/v0.0.41/jobs/?update_time=uts7");
    PATH_IS(sluice_rest_path_jobs(SLUICE_REST_V0042, 7, &p_, &e_),
            "/slurm/v0.0.42/jobs/?update_time=7");
    PATH_IS(sluice_rest_path_jobs(SLUICE_REST_V0044, -1, &p_, &e_), "/slurm/v0.0.44/jobs/");
    PATH_IS(sluice_rest_path_jobs_state(SLUICE_REST_V0043, ids, 2, &p_, &e_),
            "/slurm/v0.0.43/jobs/state/?job_id=5&job_id=6");
    PATH_IS(sluice_rest_path_jobs_state(SLUICE_REST_V0045, NULL, 0, &p_, &e_),
            "/slurm/v0.0.45/jobs/state/");
    PATH_IS(sluice_rest_path_cancel(SLUICE_REST_V0038, 9, "SIGKILL", &p_, &e_),
            "/slurm/v0.0.38/job/9?signal=SIGKILL");
    PATH_IS(sluice_rest_path_cancel(SLUICE_REST_V0044, 9, NULL, &p_, &e_), "/slurm/v0.0.44/job/9");
    PATH_IS(sluice_rest_path_cancel(SLUICE_REST_V0044, 9, "B:USR1&x", &p_, &e_),
            "/slurm/v0.0.44/job/9?signal=B%3AUSR1%26x");
    PATH_IS(sluice_rest_path_acct_job(SLUICE_REST_V0038, 9, &p_, &e_), "/slurmdb/v0.0.38/job/9");
    PATH_IS(
        sluice_rest_path_acct_jobs(SLUICE_REST_V0038, "sluice-a b", "al+ce", 100, 200, &p_, &e_),
        "/slurmdb/v0.0.38/jobs/?job_name=sluice-a%20b&users=al%2Bce&start_time=100&end_time="
        "200");
    PATH_IS(sluice_rest_path_acct_jobs(SLUICE_REST_V0041, "n", NULL, 100, -1, &p_, &e_),
            "/slurmdb/v0.0.41/jobs/?job_name=n&start_time=uts100");
    PATH_IS(sluice_rest_path_acct_jobs(SLUICE_REST_V0043, NULL, "u", -1, 5, &p_, &e_),
            "/slurmdb/v0.0.43/jobs/?users=u&end_time=5");
    PATH_IS(sluice_rest_path_acct_jobs(SLUICE_REST_V0046, "n", "u", 100, 200, &p_, &e_),
            "/slurmdb/v0.0.46/jobs/?job_name=n&users=u&start_time=100&end_time=200");
    PATH_IS(sluice_rest_path_diag(SLUICE_REST_V0042, &p_, &e_), "/slurm/v0.0.42/diag/");
    PATH_IS(sluice_rest_path_nodes(SLUICE_REST_V0042, &p_, &e_), "/slurm/v0.0.42/nodes/");
    PATH_IS(sluice_rest_path_ping(SLUICE_REST_V0038, &p_, &e_), "/slurm/v0.0.38/ping/");
    /* one node: the same path on every version, the name percent-encoded */
    PATH_IS(sluice_rest_path_node(SLUICE_REST_V0038, "tb1", &p_, &e_), "/slurm/v0.0.38/node/tb1");
    PATH_IS(sluice_rest_path_node(SLUICE_REST_V0045, "gpu-07.a", &p_, &e_),
            "/slurm/v0.0.45/node/gpu-07.a");
    /* v0.0.46: the v0.0.45 paths (the documents list the same /slurm/ and
     * /slurmdb/ paths; only /util/ is absent from the generated one). */
    PATH_IS(sluice_rest_path_submit(SLUICE_REST_V0046, &p_, &e_), "/slurm/v0.0.46/job/submit");
    PATH_IS(sluice_rest_path_jobs_state(SLUICE_REST_V0046, NULL, 0, &p_, &e_),
            "/slurm/v0.0.46/jobs/state/");
    PATH_IS(sluice_rest_path_cancel(SLUICE_REST_V0046, 9, NULL, &p_, &e_), "/slurm/v0.0.46/job/9");
    PATH_IS(sluice_rest_path_jobs(SLUICE_REST_V0046, 7, &p_, &e_),
            "/slurm/v0.0.46/jobs/?update_time=7");
    PATH_IS(sluice_rest_path_diag(SLUICE_REST_V0046, &p_, &e_), "/slurm/v0.0.46/diag/");
    PATH_IS(sluice_rest_path_node(SLUICE_REST_V0042, "n/../x y", &p_, &e_),
            "/slurm/v0.0.42/node/n%2F..%2Fx%20y");
}

Test(slurmrest, path_errors)
{
    char *p = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    uint64_t bad[] = {3, 0};

    cr_assert_eq(sluice_rest_path_jobs_state(SLUICE_REST_V0038, bad, 1, &p, &err),
                 SLUICE_EUNSUPPORTED);
    cr_assert(strstr(err.text, "v0.0.38") != NULL);
    cr_assert_eq(sluice_rest_path_jobs_state(SLUICE_REST_V0043, bad, 2, &p, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_path_job(SLUICE_REST_V0043, 0, &p, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_path_job(SLUICE_REST_VERSION_COUNT_, 1, &p, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_path_cancel(SLUICE_REST_V0043, 1, "", &p, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_path_node(SLUICE_REST_V0043, "", &p, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_path_node(SLUICE_REST_V0043, NULL, &p, &err), SLUICE_EINVAL);
    cr_assert_null(p);
}

/* ---- submit bodies ---- */

static void desc(sluice_jobdesc_t *d, bool script)
{
    memset(d, 0, sizeof(*d));
    d->name = strdup("job");
    d->nodes = 2;
    d->time_limit = 15;
    d->mem_per_node_mib = 1024;
    d->gpus_per_node = 2;
    d->exclusive = true;
    d->hold = true;
    d->signal = strdup("B:USR1@90");
    d->workdir = strdup("/w");
    if (script)
        d->script = strdup("#!/bin/sh\ntrue\n");
    cr_assert_eq(sluice_jobdesc_setenv(d, "PATH", "/bin", NULL), SLUICE_OK);
}

static json_t *body_for(sluice_rest_version v, size_t n)
{
    sluice_jobdesc_t d[2];
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *body = NULL;

    desc(&d[0], true);
    desc(&d[1], false);
    cr_assert_eq(sluice_rest_submit_body(v, d, n, &body, &err), SLUICE_OK, "%s", err.text);
    sluice_jobdesc_clear(&d[0]);
    sluice_jobdesc_clear(&d[1]);
    return body;
}

Test(slurmrest, body_v0038_shapes)
{
    json_t *b = body_for(SLUICE_REST_V0038, 1);
    json_t *job = json_object_get(b, "job");

    cr_assert_str_eq(json_string_value(json_object_get(b, "script")), "#!/bin/sh\ntrue\n");
    cr_assert_null(json_object_get(job, "script"));
    cr_assert_str_eq(json_string_value(json_object_get(job, "nodes")), "2");
    cr_assert_eq(json_integer_value(json_object_get(job, "time_limit")), 15);
    cr_assert_eq(json_integer_value(json_object_get(job, "memory_per_node")), 1024);
    cr_assert_str_eq(json_string_value(json_object_get(job, "gres")), "gpu:2");
    cr_assert_str_eq(json_string_value(json_object_get(job, "exclusive")), "exclusive");
    cr_assert(json_is_true(json_object_get(job, "no_requeue")));
    cr_assert_null(json_object_get(job, "requeue"));
    cr_assert(json_is_true(json_object_get(job, "hold")));
    cr_assert_str_eq(json_string_value(json_object_get(job, "signal")), "B:USR1@90");
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(job, "environment"), "PATH")), "/bin");
    json_decref(b);

    b = body_for(SLUICE_REST_V0038, 2);
    cr_assert_eq(json_array_size(json_object_get(b, "jobs")), 2);
    cr_assert_not_null(json_object_get(b, "script"));
    json_decref(b);
}

Test(slurmrest, body_newer_shapes)
{
    for (int v = SLUICE_REST_V0040; v < SLUICE_REST_VERSION_COUNT_; v++) {
        json_t *b = body_for(v, 1);
        json_t *job = json_object_get(b, "job");

        cr_assert_null(json_object_get(b, "script"), "%s", V(v));
        cr_assert_str_eq(json_string_value(json_object_get(job, "script")), "#!/bin/sh\ntrue\n");
        cr_assert_eq(
            json_integer_value(json_object_get(json_object_get(job, "time_limit"), "number")), 15);
        cr_assert(json_is_true(json_object_get(json_object_get(job, "memory_per_node"), "set")));
        cr_assert_str_eq(json_string_value(json_object_get(job, "tres_per_node")), "gres/gpu:2");
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(job, "shared"), 0)),
                         "none");
        cr_assert_null(json_object_get(job, "exclusive"));
        cr_assert(json_is_false(json_object_get(job, "requeue")));
        cr_assert_str_eq(json_string_value(json_object_get(job, "kill_warning_signal")), "USR1");
        cr_assert_eq(json_integer_value(
                         json_object_get(json_object_get(job, "kill_warning_delay"), "number")),
                     90);
        cr_assert_str_eq(
            json_string_value(json_array_get(json_object_get(job, "kill_warning_flags"), 0)),
            "BATCH_JOB");
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(job, "environment"), 0)),
                         "PATH=/bin");
        json_decref(b);

        b = body_for(v, 2);
        cr_assert_not_null(
            json_object_get(json_array_get(json_object_get(b, "jobs"), 0), "script"));
        cr_assert_null(json_object_get(json_array_get(json_object_get(b, "jobs"), 1), "script"));
        json_decref(b);
    }
}

Test(slurmrest, body_typed_gres_and_errors)
{
    sluice_jobdesc_t d;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *b = NULL;

    desc(&d, true);
    d.gres_name = strdup("gpu:a100");
    cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0038, &d, 1, &b, &err), SLUICE_OK);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "job"), "gres")),
                     "gpu:a100:2");
    json_decref(b);
    cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0043, &d, 1, &b, &err), SLUICE_OK);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "job"), "tres_per_node")),
                     "gres/gpu:a100:2");
    json_decref(b);
    b = NULL;
    free(d.signal);
    d.signal = strdup("USR1@soon");
    cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0043, &d, 1, &b, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "jobs[0].signal") != NULL, "%s", err.text);
    free(d.signal);
    d.signal = NULL;
    d.nodes = 0;
    cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0038, &d, 1, &b, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "jobs[0].nodes") != NULL, "%s", err.text);
    d.nodes = 1;
    free(d.script);
    d.script = NULL;
    cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0044, &d, 1, &b, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0044, &d, 0, &b, &err), SLUICE_EINVAL);
    cr_assert_null(b);
    sluice_jobdesc_clear(&d);
}

/* ---- parsers against fixtures ---- */

static const struct {
    const char *fixture;
    uint64_t id;
    sluice_job_base base;
    bool has_exit;
    int code, sig;
    const char *reason;
} live_cases[] = {
    {"job_pending", 101, SLUICE_JOB_PENDING, false, 0, 0, "Priority"},
    {"job_running", 102, SLUICE_JOB_RUNNING, false, 0, 0, "None"},
    {"job_completed", 103, SLUICE_JOB_COMPLETED, true, 0, 0, "None"},
    {"job_failed", 104, SLUICE_JOB_FAILED, true, 3, 0, "NonZeroExitCode"},
    {"job_cancelled", 105, SLUICE_JOB_CANCELLED, true, 0, 15, "None"},
    {"job_timeout", 106, SLUICE_JOB_TIMEOUT, true, 0, 15, "TimeLimit"},
    {"job_nodefail", 107, SLUICE_JOB_NODE_FAIL, true, 0, 9, "NodeDown"},
};

/* A pending reason and slurmctld's description of it (ReqNodeNotAvail that
 * names no node) reach the job view on every version. */
Test(slurmrest, pending_reason_and_description_every_version)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        json_t *j = fixture(v, "job_pending_reqnode");
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;

        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s: %s", V(v),
                     err.text);
        cr_assert_eq(jobs.n_jobs, 1);
        cr_assert_eq(jobs.jobs[0].base, SLUICE_JOB_PENDING, "%s", V(v));
        cr_assert_str_eq(jobs.jobs[0].state_reason, "ReqNodeNotAvail", "%s", V(v));
        cr_assert_not_null(jobs.jobs[0].state_description, "%s", V(v));
        cr_assert_str_eq(jobs.jobs[0].state_description, "ReqNodeNotAvail, UnavailableNodes:", "%s",
                         V(v));
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

Test(slurmrest, live_jobs_every_version)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        for (size_t c = 0; c < sizeof(live_cases) / sizeof(live_cases[0]); c++) {
            json_t *j = fixture(v, live_cases[c].fixture);
            sluice_rest_jobs_t jobs = {0};
            sluice_error_t err = SLUICE_ERROR_INIT;
            const sluice_jobview_t *x;

            cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s %s: %s", V(v),
                         live_cases[c].fixture, err.text);
            cr_assert_eq(jobs.n_jobs, 1);
            x = &jobs.jobs[0];
            cr_assert_eq(x->job_id, live_cases[c].id);
            cr_assert_eq(x->base, live_cases[c].base, "%s %s", V(v), live_cases[c].fixture);
            cr_assert_eq(x->flags, 0);
            cr_assert_eq(x->has_exit, live_cases[c].has_exit, "%s %s", V(v), live_cases[c].fixture);
            cr_assert_eq(x->exit_code, live_cases[c].code, "%s %s", V(v), live_cases[c].fixture);
            cr_assert_eq(x->exit_signal, live_cases[c].sig, "%s %s", V(v), live_cases[c].fixture);
            cr_assert_str_eq(x->state_reason, live_cases[c].reason);
            cr_assert_str_eq(x->user_name, "alice");
            cr_assert_str_eq(x->comment, "sluice:demo-launch:1");
            cr_assert_eq(x->submit_time, T0);
            cr_assert_eq(x->het_job_id, 0);
            cr_assert_str_eq(jobs.env.release, v == 0 ? "22.05.8" : jobs.env.release);
            sluice_rest_jobs_clear(&jobs);
            json_decref(j);
        }
    }
}

Test(slurmrest, completing_hides_base_on_v0038_only)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        json_t *j = fixture(v, "job_completing");
        sluice_rest_jobs_t jobs = {0};

        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, NULL), SLUICE_OK);
        cr_assert_eq(jobs.jobs[0].flags, SLUICE_JOB_FLAG(COMPLETING));
        cr_assert_eq(jobs.jobs[0].base,
                     v == SLUICE_REST_V0038 ? SLUICE_JOB_BASE_UNKNOWN : SLUICE_JOB_FAILED, "%s",
                     V(v));
        cr_assert_eq(jobs.jobs[0].exit_code, 1);
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

Test(slurmrest, hetjob_and_list)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        json_t *j = fixture(v, "job_het");
        sluice_rest_jobs_t jobs = {0};

        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, NULL), SLUICE_OK);
        cr_assert_eq(jobs.n_jobs, 2);
        for (uint32_t k = 0; k < 2; k++) {
            cr_assert_eq(jobs.jobs[k].het_job_id, 110, "%s", V(v));
            cr_assert_eq(jobs.jobs[k].het_job_offset, k);
            cr_assert_eq(jobs.jobs[k].exit_code, 2);
        }
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
        j = fixture(v, "jobs_list");
        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, NULL), SLUICE_OK);
        cr_assert_eq(jobs.n_jobs, 3);
        cr_assert_not(sluice_rest_no_job_changes(&jobs.env));
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

Test(slurmrest, no_job_changes_warning)
{
    for (int v = SLUICE_REST_V0040; v < SLUICE_REST_VERSION_COUNT_; v++) {
        json_t *j = fixture(v, "jobs_nochanges");
        sluice_rest_jobs_t jobs = {0};

        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, NULL), SLUICE_OK);
        cr_assert_eq(jobs.n_jobs, 0);
        cr_assert(sluice_rest_no_job_changes(&jobs.env));
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

Test(slurmrest, accounting_every_version)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *j = fixture(v, "acct_completed");

        cr_assert_eq(sluice_rest_parse_acct_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(jobs.jobs[0].base, SLUICE_JOB_COMPLETED);
        cr_assert(jobs.jobs[0].has_exit);
        cr_assert_str_eq(jobs.jobs[0].user_name, "alice");
        cr_assert_str_eq(jobs.jobs[0].name, "sluice-demo");
        cr_assert_eq(jobs.jobs[0].start_time, T0 + 60);
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);

        /* dbv0.0.38 reports SUCCESS/0 for any normal exit (Slurm bug). */
        j = fixture(v, "acct_failed");
        cr_assert_eq(sluice_rest_parse_acct_jobs(v, j, &jobs, &err), SLUICE_OK);
        cr_assert_eq(jobs.jobs[0].base, SLUICE_JOB_FAILED);
        cr_assert_eq(jobs.jobs[0].exit_code, v == SLUICE_REST_V0038 ? 0 : 3, "%s", V(v));
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);

        j = fixture(v, "acct_requeued");
        cr_assert_eq(sluice_rest_parse_acct_jobs(v, j, &jobs, &err), SLUICE_OK);
        cr_assert_eq(jobs.n_jobs, 1, "%s", V(v));
        cr_assert_eq(jobs.jobs[0].base, SLUICE_JOB_COMPLETED);
        cr_assert_eq(jobs.jobs[0].submit_time, T0 + 900);
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);

        j = fixture(v, "acct_het");
        cr_assert_eq(sluice_rest_parse_acct_jobs(v, j, &jobs, &err), SLUICE_OK);
        cr_assert_eq(jobs.n_jobs, 2);
        cr_assert_eq(jobs.jobs[1].het_job_id, 110);
        cr_assert_eq(jobs.jobs[1].het_job_offset, 1);
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

Test(slurmrest, jobs_state_live_shape)
{
    for (int v = SLUICE_REST_V0040; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_job_states_t s = {0};
        json_t *j = fixture(v, "state_two");

        cr_assert_eq(sluice_rest_parse_job_states(v, j, &s, NULL), SLUICE_OK);
        cr_assert_eq(s.n_states, 2);
        cr_assert_eq(s.states[0].job_id, 5);
        cr_assert_eq(s.states[0].base, SLUICE_JOB_PENDING);
        cr_assert_eq(s.states[1].flags, SLUICE_JOB_FLAG(CONFIGURING));
        cr_assert_not(s.states[1].has_het_offset);
        sluice_rest_job_states_clear(&s);
        json_decref(j);
        j = fixture(v, "state_het");
        cr_assert_eq(sluice_rest_parse_job_states(v, j, &s, NULL), SLUICE_OK);
        cr_assert_eq(s.states[1].job_id, 1047);
        cr_assert(s.states[1].has_het_offset);
        cr_assert_eq(s.states[1].het_offset, 1);
        sluice_rest_job_states_clear(&s);
        json_decref(j);
    }
    cr_assert_eq(sluice_rest_parse_job_states(SLUICE_REST_V0038, NULL, NULL, NULL), SLUICE_EINVAL);
}

Test(slurmrest, submit_answers)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_submit_t s = {0};
        json_t *j = fixture(v, "submit_ok");
        long num = 0;
        const char *text = NULL;

        cr_assert_eq(sluice_rest_parse_submit(v, j, &s, NULL), SLUICE_OK);
        cr_assert_eq(s.job_id, 200);
        cr_assert_eq(s.env.n_errors, 0);
        cr_assert_not_null(s.step_id);
        sluice_rest_submit_clear(&s);
        json_decref(j);
        j = fixture(v, "submit_error");
        cr_assert_eq(sluice_rest_parse_submit(v, j, &s, NULL), SLUICE_OK);
        cr_assert_eq(s.job_id, 0);
        cr_assert(sluice_rest_first_error(&s.env, &num, &text));
        cr_assert_eq(num, 2000, "%s", V(v));
        cr_assert_str_eq(text, "Invalid partition name specified");
        sluice_rest_submit_clear(&s);
        json_decref(j);
    }
    for (int v = SLUICE_REST_V0040; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_submit_t s = {0};
        json_t *j = fixture(v, "submit_held");

        cr_assert_eq(sluice_rest_parse_submit(v, j, &s, NULL), SLUICE_OK);
        cr_assert_eq(s.job_id, 201);
        cr_assert_eq(s.env.n_warnings, 1);
        cr_assert(strstr(s.env.warnings[0], "held") != NULL);
        sluice_rest_submit_clear(&s);
        json_decref(j);
    }
}

Test(slurmrest, error_envelopes)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_envelope_t e = {0};
        json_t *j = fixture(v, "error_auth");
        long num = 0;
        const char *text = NULL;

        cr_assert_eq(sluice_rest_parse_envelope(v, j, &e, NULL), SLUICE_OK);
        cr_assert(sluice_rest_first_error(&e, &num, &text));
        cr_assert_eq(num, v == SLUICE_REST_V0038 ? -1 : 1007);
        sluice_rest_envelope_clear(&e);
        json_decref(j);
        j = fixture(v, "error_notfound");
        cr_assert_eq(sluice_rest_parse_envelope(v, j, &e, NULL), SLUICE_OK);
        cr_assert(sluice_rest_first_error(&e, &num, &text));
        cr_assert_eq(num, 2017);
        cr_assert_str_eq(text, "Invalid job id specified");
        sluice_rest_envelope_clear(&e);
        json_decref(j);
    }
    cr_assert_not(sluice_rest_first_error(NULL, NULL, NULL));
}

Test(slurmrest, diag_nodes_ping_meta)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_diag_t d = {0};
        sluice_rest_nodes_t n = {0};
        sluice_rest_ping_t p = {0};
        json_t *j = fixture(v, "diag_basic");

        cr_assert_eq(sluice_rest_parse_diag(v, j, &d, NULL), SLUICE_OK);
        cr_assert_eq(d.n_rpcs, 3);
        cr_assert_eq(sluice_rest_diag_rpc_count(&d, "REQUEST_JOB_INFO"), 42);
        cr_assert_eq(d.req_time, T0 + 100);
        sluice_rest_diag_clear(&d);
        json_decref(j);

        j = fixture(v, "nodes_basic");
        cr_assert_eq(sluice_rest_parse_nodes(v, j, &n, NULL), SLUICE_OK);
        cr_assert_eq(n.n_nodes, 2);
        cr_assert_str_eq(n.nodes[0].features, "pool_a,ssd");
        cr_assert_str_eq(n.nodes[1].name, "node2");
        cr_assert_str_eq(n.nodes[0].address, "127.0.0.11");
        cr_assert_null(n.nodes[1].address);
        sluice_rest_nodes_clear(&n);
        json_decref(j);

        j = fixture(v, "ping_ok");
        cr_assert_eq(sluice_rest_parse_ping(v, j, &p, NULL), SLUICE_OK);
        cr_assert_eq(p.n_controllers, 1);
        cr_assert_eq(p.n_responding, 1, "%s", V(v));
        cr_assert(p.primary_responding, "%s", V(v));
        cr_assert_not_null(p.env.release);
        if (v == SLUICE_REST_V0038) {
            cr_assert_null(p.env.data_parser);
        } else {
            sluice_rest_version got;
            cr_assert_eq(sluice_rest_version_parse(p.env.data_parser, &got, NULL), SLUICE_OK);
            cr_assert_eq(got, v);
            cr_assert_str_eq(p.env.cluster, "testbed");
        }
        sluice_rest_ping_clear(&p);
        json_decref(j);
    }
}

/* ---- leniency and protocol errors ---- */

Test(slurmrest, lenient_numbers_and_unknown_fields)
{
    json_t *j = parse("{\"jobs\":[{\"job_id\":{\"set\":true,\"infinite\":false,\"number\":7},"
                      "\"job_state\":[\"RUNNING\",\"SOMETHING_NEW\"],\"new_field\":[1,2],"
                      "\"submit_time\":12.0,\"start_time\":null,"
                      "\"end_time\":{\"set\":false,\"infinite\":true,\"number\":0},"
                      "\"exit_code\":5}]}");
    sluice_rest_jobs_t jobs = {0};

    cr_assert_eq(sluice_rest_parse_jobs(SLUICE_REST_V0043, j, &jobs, NULL), SLUICE_OK);
    cr_assert_eq(jobs.jobs[0].job_id, 7);
    cr_assert_eq(jobs.jobs[0].base, SLUICE_JOB_RUNNING);
    cr_assert_eq(jobs.jobs[0].submit_time, 12);
    cr_assert_eq(jobs.jobs[0].end_time, 0);
    cr_assert_eq(jobs.jobs[0].exit_code, 5);
    sluice_rest_jobs_clear(&jobs);
    json_decref(j);
}

Test(slurmrest, wrong_types_name_the_path)
{
    static const struct {
        int v;
        const char *json;
        const char *path;
    } rows[] = {
        {SLUICE_REST_V0043, "{\"jobs\":{}}", "jobs"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":1,\"job_state\":7}]}", "jobs[0].job_state"},
        {SLUICE_REST_V0038, "{\"jobs\":[{\"job_id\":1,\"job_state\":[\"RUNNING\"]}]}",
         "jobs[0].job_state"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":\"1\"}]}", "jobs[0].job_id"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":1,\"name\":3}]}", "jobs[0].name"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":1,\"exit_code\":\"x\"}]}", "jobs[0].exit_code"},
        {SLUICE_REST_V0042, "{\"errors\":[{\"error_number\":\"x\"}]}", "errors[0].error_number"},
        {SLUICE_REST_V0042, "{\"meta\":[]}", "meta"},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *j = parse(rows[i].json);
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;

        cr_assert_eq(sluice_rest_parse_jobs(rows[i].v, j, &jobs, &err), SLUICE_EPROTO, "row %zu",
                     i);
        cr_assert(strstr(err.text, rows[i].path) != NULL, "row %zu: %s", i, err.text);
        cr_assert_eq(jobs.n_jobs, 0);
        json_decref(j);
    }
}

/* The whole text, path and reason (base/jdec.h names the path): members of
 * the answer itself are named bare, null is as absent as a missing member. */
Test(slurmrest, error_texts_name_the_path_exactly)
{
    static const struct {
        int v;
        const char *json;
        const char *text;
    } rows[] = {
        {SLUICE_REST_V0043, "{\"jobs\":{}}", "jobs: expected an array"},
        {SLUICE_REST_V0043, "{\"errors\":7}", "errors: expected an array"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":0}]}",
         "jobs[0].job_id: missing or not positive"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":1,\"job_state\":[\"RUNNING\",3]}]}",
         "jobs[0].job_state[1]: expected a string"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":1,\"exit_code\":{\"signal\":[]}}]}",
         "jobs[0].exit_code.signal: expected an object"},
        {SLUICE_REST_V0043,
         "{\"jobs\":[{\"job_id\":1,\"exit_code\":{\"return_code\":{\"set\":1}}}]}",
         "jobs[0].exit_code.return_code: expected {set,infinite,number} with boolean flags"},
        {SLUICE_REST_V0038, "{\"meta\":{\"Slurm\":{\"release\":1}}}",
         "meta.slurm.release: expected a string"},
        {SLUICE_REST_V0043, "{\"jobs\":[{\"job_id\":1,\"name\":null,\"het_job_id\":null}]}", ""},
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *j = parse(rows[i].json);
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_err rc = sluice_rest_parse_jobs(rows[i].v, j, &jobs, &err);

        cr_assert_eq(rc, rows[i].text[0] ? SLUICE_EPROTO : SLUICE_OK, "row %zu", i);
        cr_assert_str_eq(err.text, rows[i].text, "row %zu", i);
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

Test(slurmrest, job_state_ids_are_checked)
{
    json_t *j = parse("{\"jobs\":[{\"job_id\":\"12+x\",\"state\":[\"PENDING\"]}]}");
    sluice_rest_job_states_t s = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_job_states(SLUICE_REST_V0044, j, &s, &err), SLUICE_EPROTO);
    cr_assert(strstr(err.text, "jobs[0].job_id") != NULL, "%s", err.text);
    json_decref(j);
    cr_assert_eq(sluice_rest_parse_job_states(SLUICE_REST_V0038, j, &s, &err), SLUICE_EUNSUPPORTED);
}

/* ---- another cluster, a federation (docs/state-machine.md, "Ownership") ---- */

/* A live record whose cluster differs from the answer's meta cluster, or
 * that carries federation fields, is another cluster's; the fixtures'
 * own records are not. */
Test(slurmrest, records_of_another_cluster_or_a_federation)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *j = fixture(v, "job_running");
        json_t *rec = json_array_get(json_object_get(j, "jobs"), 0);
        json_t *meta = json_object_get(j, "meta");
        json_t *sl = json_object_get(meta, v == SLUICE_REST_V0038 ? "Slurm" : "slurm");

        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert_not(jobs.jobs[0].other_cluster, "%s", V(v));
        sluice_rest_jobs_clear(&jobs);
        /* the local cluster's own name, and empty federation fields (as
         * every release reports them outside a federation) */
        json_object_set_new(rec, "cluster", json_string("testbed"));
        json_object_set_new(rec, "federation_origin", json_string(""));
        json_object_set_new(rec, "federation_siblings_active", json_string(""));
        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert_not(jobs.jobs[0].other_cluster, "%s", V(v));
        sluice_rest_jobs_clear(&jobs);
        json_object_set_new(rec, "federation_origin", json_string("fed1"));
        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert(jobs.jobs[0].other_cluster, "%s: federation_origin", V(v));
        sluice_rest_jobs_clear(&jobs);
        json_object_set_new(rec, "federation_origin", json_string(""));
        json_object_set_new(rec, "federation_siblings_viable", json_string("c1,c2"));
        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert(jobs.jobs[0].other_cluster, "%s: siblings", V(v));
        sluice_rest_jobs_clear(&jobs);
        json_object_del(rec, "federation_siblings_viable");
        json_object_set_new(rec, "cluster", json_string("elsewhere"));
        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        /* v0.0.38 answers name no cluster of their own: nothing to compare */
        cr_assert_eq(jobs.jobs[0].other_cluster, v != SLUICE_REST_V0038, "%s: cluster", V(v));
        sluice_rest_jobs_clear(&jobs);
        if (sl != NULL)
            json_object_set_new(sl, "cluster", json_string("elsewhere"));
        cr_assert_eq(sluice_rest_parse_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert_not(jobs.jobs[0].other_cluster, "%s: the answer's own cluster", V(v));
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

/* Accounting: the same id on two clusters is two jobs (never collapsed as
 * a requeue), and the one of another cluster says so. */
Test(slurmrest, accounting_same_id_on_another_cluster_is_another_job)
{
    for (int v = SLUICE_REST_V0040; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *j = fixture(v, "acct_completed");
        json_t *arr = json_object_get(j, "jobs");
        json_t *other = json_deep_copy(json_array_get(arr, 0));

        json_object_set_new(other, "cluster", json_string("elsewhere"));
        json_array_append_new(arr, other);
        cr_assert_eq(sluice_rest_parse_acct_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(jobs.n_jobs, 2, "%s", V(v));
        cr_assert_eq(jobs.jobs[0].job_id, jobs.jobs[1].job_id);
        cr_assert_not(jobs.jobs[0].other_cluster, "%s", V(v));
        cr_assert(jobs.jobs[1].other_cluster, "%s", V(v));
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

/* A reused id: accounting holds our old record and another user's newer
 * one.  Both are kept (the launcher picks its own); runs of one requeued
 * job still collapse. */
Test(slurmrest, accounting_reused_id_keeps_both_jobs)
{
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_jobs_t jobs = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *j = fixture(v, "acct_completed");
        json_t *arr = json_object_get(j, "jobs");
        json_t *other = json_deep_copy(json_array_get(arr, 0));
        json_t *tm = json_object_get(other, "time");

        json_object_set_new(other, "user", json_string("mallory"));
        json_object_set_new(tm, "submission", json_integer(T0 + 86400));
        json_array_append_new(arr, other);
        cr_assert_eq(sluice_rest_parse_acct_jobs(v, j, &jobs, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(jobs.n_jobs, 2, "%s", V(v));
        cr_assert_str_eq(jobs.jobs[0].user_name, "alice");
        cr_assert_str_eq(jobs.jobs[1].user_name, "mallory");
        sluice_rest_jobs_clear(&jobs);
        json_decref(j);
    }
}

/* A job id as a string: "<id>" or "<id>;<cluster>" (routed elsewhere). */
Test(slurmrest, submit_job_id_with_a_cluster_suffix)
{
    static const char *const bad[] = {"\"77;\"", "\"x;c\"", "\"77;a b\"", "\"77x\"",
                                      "\"0;c\"", "\"-5\"",  "\"77;c;d\""};

    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        sluice_rest_submit_t s = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *j = parse("{\"job_id\":\"77;cluster2\",\"step_id\":\"batch\"}");

        cr_assert_eq(sluice_rest_parse_submit(v, j, &s, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(s.job_id, 77);
        cr_assert_str_eq(s.cluster, "cluster2");
        sluice_rest_submit_clear(&s);
        json_decref(j);
        j = parse("{\"job_id\":\"78\"}");
        cr_assert_eq(sluice_rest_parse_submit(v, j, &s, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(s.job_id, 78);
        cr_assert_null(s.cluster);
        sluice_rest_submit_clear(&s);
        json_decref(j);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            char text[64];
            snprintf(text, sizeof(text), "{\"job_id\":%s}", bad[i]);
            j = parse(text);
            cr_assert_eq(sluice_rest_parse_submit(v, j, &s, &err), SLUICE_EPROTO, "%s", text);
            cr_assert_not_null(strstr(err.text, "job_id"), "%s", err.text);
            cr_assert_null(s.cluster);
            json_decref(j);
        }
    }
}

/* v0.0.46 takes the v0.0.45 body member for member: its document changed
 * nothing sluice writes (container_type, renamed runtime, is not written).
 * The golden bodies of v0.0.43 therefore stand for v0.0.46 too; the contract
 * test validates the v0.0.46 bodies against their own document. */
Test(slurmrest, v0046_body_is_the_v0045_body)
{
    for (size_t c = 0; c < jobdesc_case_count(); c++) {
        sluice_jobdesc_t d[JOBDESC_CASE_MAX_COMPONENTS];
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *b45 = NULL, *b46 = NULL;
        size_t n = jobdesc_case_build(c, d);

        cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0045, d, n, &b45, &err), SLUICE_OK,
                     "%s: %s", jobdesc_case_name(c), err.text);
        cr_assert_eq(sluice_rest_submit_body(SLUICE_REST_V0046, d, n, &b46, &err), SLUICE_OK,
                     "%s: %s", jobdesc_case_name(c), err.text);
        cr_expect(json_equal(b45, b46), "%s: the v0.0.46 body differs", jobdesc_case_name(c));
        cr_expect_null(json_object_get(json_object_get(b46, "job"), "container_type"), "%s",
                       jobdesc_case_name(c));
        json_decref(b45);
        json_decref(b46);
        for (size_t k = 0; k < n; k++)
            sluice_jobdesc_clear(&d[k]);
    }
}
