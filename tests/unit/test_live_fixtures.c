/* SPDX-License-Identifier: Apache-2.0 */
/* test_live_fixtures.c - every answer recorded from a live slurmrestd by
 * tests/fixtures/slurmrestd/record_live.sh
 * (<version>/<kind>_live<release>_<case>.json) goes through the adapter of
 * its kind and must say what its case means; the error answers also go
 * through sluice's REST classification.  Every version from v0.0.40 to
 * v0.0.46 must have recordings, and a case this file does not know fails.
 * v0.0.46's (and 26.11's v0.0.43-45: *_live2611_*) come from Slurm 26.11
 * built from SchedMD's repository on the testbed (docs/testbed.md), as no
 * distribution packages it yet.
 *
 * What the cases are (record_live.sh): "completed" ran `true`, "failed" ran
 * `exit 3`, "running" is a `sleep 120` that "cancelled" shows after the
 * DELETE, "pending" is a held job, "het" a two-component hetjob; the user is
 * sluiceuser, the job names are rec-ok, rec-fail, rec-run, rec-held and
 * rec-het with the comment "sluice:record:<name>".
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurmrest.h"

#include "slurm/restclass.h"
#include "sluice_assert.h"

#define USER "sluiceuser"

/* One recorded file: <dir>/<kind>_<tag>_<name>.json. */
typedef struct {
    sluice_rest_version v;
    char dir[4096];
    char kind[16];
    char tag[16];  /* "live2411" */
    char name[32]; /* the case, "completed" */
    char id[128];  /* "v0.0.43/job_live2605_completed.json", for messages */
    json_t *json;
} live_t;

static json_t *load(const char *path, bool must)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);

    if (must)
        cr_assert_not_null(j, "%s: %s", path, jerr.text);
    return j;
}

/* The recording of another case from the same release and version, or NULL
 * when that run did not keep one. */
static json_t *sibling(const live_t *f, const char *kind, const char *name)
{
    char path[4300];

    snprintf(path, sizeof(path), "%s/%s_%s_%s.json", f->dir, kind, f->tag, name);
    return load(path, false);
}

/* meta names the release of the tag ("live2605": 26.05.x) and the version of
 * the directory. */
static void check_meta(const live_t *f, const sluice_rest_envelope_t *e)
{
    const char *d = f->tag + 4;
    char prefix[8];
    sluice_rest_version got;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(prefix, sizeof(prefix), "%.2s.%.2s.", d, d + 2);
    cr_assert_not_null(e->release, "%s: no meta.slurm.release", f->id);
    cr_assert_eq(strncmp(e->release, prefix, strlen(prefix)), 0, "%s: release %s, tag says %s*",
                 f->id, e->release, prefix);
    if (f->v == SLUICE_REST_V0038)
        return; /* 22.05 names no data_parser: the URL's version is the plugin's */
    cr_assert_not_null(e->data_parser, "%s: no meta.plugin.data_parser", f->id);
    cr_assert_sluice_ok(sluice_rest_version_parse(e->data_parser, &got, &err), &err);
    cr_assert_eq(got, f->v, "%s: data_parser %s", f->id, e->data_parser);
}

static void no_errors(const live_t *f, const sluice_rest_envelope_t *e)
{
    long num = 0;
    const char *text = NULL;

    check_meta(f, e);
    cr_assert_not(sluice_rest_first_error(e, &num, &text), "%s: error %ld %s", f->id, num, text);
}

/* ---- slurmctld job views ------------------------------------------------- */

static void parse_jobs(const live_t *f, sluice_rest_jobs_t *jobs)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_jobs(f->v, f->json, jobs, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &jobs->env);
}

/* The one plain (not het) job of a job_ answer, named and owned as recorded. */
static const sluice_jobview_t *one_job(const live_t *f, sluice_rest_jobs_t *jobs, const char *name)
{
    const sluice_jobview_t *x;
    char comment[64];

    parse_jobs(f, jobs);
    cr_assert_eq(jobs->n_jobs, 1, "%s: %zu jobs", f->id, jobs->n_jobs);
    x = &jobs->jobs[0];
    cr_assert_gt(x->job_id, 0, "%s", f->id);
    cr_assert_str_eq(x->user_name, USER, "%s", f->id);
    cr_assert_not(x->other_cluster, "%s: the testbed's own job read as another cluster's", f->id);
    cr_assert_str_eq(x->name, name, "%s: name %s", f->id, x->name);
    snprintf(comment, sizeof(comment), "sluice:record:%s", name);
    cr_assert_str_eq(x->comment, comment, "%s", f->id);
    cr_assert_eq(x->het_job_id, 0, "%s: het_job_id %llu", f->id, (unsigned long long)x->het_job_id);
    cr_assert_eq(x->flags, 0, "%s: flags %#x", f->id, (unsigned)x->flags);
    cr_assert_gt(x->submit_time, 0, "%s", f->id);
    return x;
}

static void job_completed(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_job(f, &jobs, "rec-ok");

    cr_assert_eq(x->base, SLUICE_JOB_COMPLETED, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert(x->has_exit, "%s", f->id);
    cr_assert_eq(x->exit_code, 0, "%s", f->id);
    cr_assert_eq(x->exit_signal, 0, "%s", f->id);
    cr_assert_str_eq(x->state_reason, "None", "%s: reason %s", f->id, x->state_reason);
    cr_assert_gt(x->end_time, 0, "%s", f->id);
    sluice_rest_jobs_clear(&jobs);
}

static void job_failed(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_job(f, &jobs, "rec-fail");

    cr_assert_eq(x->base, SLUICE_JOB_FAILED, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert(x->has_exit, "%s", f->id);
    cr_assert_eq(x->exit_code, 3, "%s: exit %d", f->id, x->exit_code);
    cr_assert_eq(x->exit_signal, 0, "%s", f->id);
    cr_assert_str_eq(x->state_reason, "NonZeroExitCode", "%s: reason %s", f->id, x->state_reason);
    sluice_rest_jobs_clear(&jobs);
}

static void job_running(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_job(f, &jobs, "rec-run");

    cr_assert_eq(x->base, SLUICE_JOB_RUNNING, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert_str_eq(x->state_reason, "None", "%s: reason %s", f->id, x->state_reason);
    cr_assert_not_null(x->nodes, "%s", f->id);
    cr_assert_neq(x->nodes[0], '\0', "%s: no node", f->id);
    cr_assert_gt(x->start_time, 0, "%s", f->id);
    /* Live servers report SUCCESS/0 before the job ends (the generated
     * fixtures say PENDING): nothing to read from it but no failure either. */
    cr_assert_eq(x->exit_code, 0, "%s", f->id);
    cr_assert_eq(x->exit_signal, 0, "%s", f->id);
    sluice_rest_jobs_clear(&jobs);
}

static void job_pending(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_job(f, &jobs, "rec-held");

    cr_assert_eq(x->base, SLUICE_JOB_PENDING, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert_str_eq(x->state_reason, "JobHeldUser", "%s: reason %s", f->id, x->state_reason);
    cr_assert(x->nodes == NULL || x->nodes[0] == '\0', "%s: nodes %s", f->id, x->nodes);
    cr_assert_eq(x->exit_code, 0, "%s", f->id);
    cr_assert_eq(x->exit_signal, 0, "%s", f->id);
    sluice_rest_jobs_clear(&jobs);
}

static void job_cancelled(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_job(f, &jobs, "rec-run");
    json_t *running = sibling(f, "job", "running");

    cr_assert_eq(x->base, SLUICE_JOB_CANCELLED, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert(x->has_exit, "%s", f->id);
    cr_assert_eq(x->exit_signal, 15, "%s: signal %d", f->id, x->exit_signal);
    cr_assert_eq(x->exit_code, 0, "%s", f->id);
    if (running != NULL) {
        json_t *id = json_object_get(json_array_get(json_object_get(running, "jobs"), 0), "job_id");
        cr_assert_eq((json_int_t)x->job_id, json_integer_value(id),
                     "%s: not the job of job_%s_running", f->id, f->tag);
    }
    json_decref(running);
    sluice_rest_jobs_clear(&jobs);
}

/* The two components of a hetjob: leader first, offsets 0 and 1, the same
 * final state and exit code (the batch script's). */
static void check_het_pair(const live_t *f, const sluice_rest_jobs_t *jobs)
{
    uint64_t leader;

    cr_assert_eq(jobs->n_jobs, 2, "%s: %zu components", f->id, jobs->n_jobs);
    leader = jobs->jobs[0].job_id;
    for (uint32_t k = 0; k < 2; k++) {
        const sluice_jobview_t *x = &jobs->jobs[k];

        cr_assert_eq(x->het_job_id, leader, "%s: [%u] het_job_id %llu, leader %llu", f->id, k,
                     (unsigned long long)x->het_job_id, (unsigned long long)leader);
        cr_assert_eq(x->het_job_offset, k, "%s: [%u] offset %u", f->id, k, x->het_job_offset);
        cr_assert_str_eq(x->user_name, USER, "%s", f->id);
        cr_assert_not(x->other_cluster, "%s: [%u] read as another cluster's", f->id, k);
        cr_assert_str_eq(x->name, "rec-het", "%s: name %s", f->id, x->name);
        cr_assert(sluice_job_is_final(x->base, x->flags), "%s: [%u] %s", f->id, k,
                  sluice_job_base_name(x->base));
        cr_assert(x->has_exit, "%s", f->id);
    }
    cr_assert_neq(jobs->jobs[1].job_id, leader, "%s", f->id);
    cr_assert_eq(jobs->jobs[0].base, jobs->jobs[1].base, "%s", f->id);
    cr_assert_eq(jobs->jobs[0].exit_code, jobs->jobs[1].exit_code, "%s", f->id);
}

/* The component ids of job_<tag>_het in this directory, or false. */
static bool het_ids(const live_t *f, uint64_t ids[2])
{
    json_t *het = sibling(f, "job", "het");
    sluice_rest_jobs_t jobs = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (het == NULL)
        return false;
    cr_assert_eq(sluice_rest_parse_jobs(f->v, het, &jobs, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(jobs.n_jobs, 2, "%s: job_%s_het", f->id, f->tag);
    ids[0] = jobs.jobs[0].job_id;
    ids[1] = jobs.jobs[1].job_id;
    sluice_rest_jobs_clear(&jobs);
    json_decref(het);
    return true;
}

static void job_het(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};

    parse_jobs(f, &jobs);
    check_het_pair(f, &jobs);
    sluice_rest_jobs_clear(&jobs);
}

static void jobs_nochanges(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};

    parse_jobs(f, &jobs);
    cr_assert_eq(jobs.n_jobs, 0, "%s", f->id);
    cr_assert(sluice_rest_no_job_changes(&jobs.env), "%s: no \"No job changes\" warning", f->id);
    sluice_rest_jobs_clear(&jobs);
}

/* ---- jobs/state ------------------------------------------------------------ */

static void parse_states(const live_t *f, sluice_rest_job_states_t *s)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_job_states(f->v, f->json, s, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &s->env);
}

/* The job id of job_<tag>_<name> in this directory, or 0. */
static uint64_t job_id_of(const live_t *f, const char *name)
{
    json_t *j = sibling(f, "job", name);
    json_int_t id;

    if (j == NULL)
        return 0;
    id = json_integer_value(
        json_object_get(json_array_get(json_object_get(j, "jobs"), 0), "job_id"));
    json_decref(j);
    return (uint64_t)id;
}

/* Asked while the held job pended and the sleep ran: one of each. */
static void state_two(const live_t *f)
{
    sluice_rest_job_states_t s = {0};
    uint64_t held = job_id_of(f, "pending");
    uint64_t run = job_id_of(f, "running");
    size_t pending = 0, running = 0;

    parse_states(f, &s);
    cr_assert_eq(s.n_states, 2, "%s: %zu states", f->id, s.n_states);
    for (size_t k = 0; k < 2; k++) {
        const sluice_rest_job_state_t *x = &s.states[k];

        cr_assert_not(x->has_het_offset, "%s", f->id);
        if (x->base == SLUICE_JOB_PENDING) {
            pending++;
            cr_assert(held == 0 || x->job_id == held, "%s: pending id %llu", f->id,
                      (unsigned long long)x->job_id);
        } else if (x->base == SLUICE_JOB_RUNNING) {
            running++;
            cr_assert(run == 0 || x->job_id == run, "%s: running id %llu", f->id,
                      (unsigned long long)x->job_id);
        }
    }
    cr_assert_eq(pending, 1, "%s: %zu PENDING", f->id, pending);
    cr_assert_eq(running, 1, "%s: %zu RUNNING", f->id, running);
    sluice_rest_job_states_clear(&s);
}

/* "<id>+<offset>" for both components, each its own id. */
static void state_het(const live_t *f)
{
    sluice_rest_job_states_t s = {0};
    uint64_t ids[2];
    bool have = het_ids(f, ids);

    parse_states(f, &s);
    cr_assert_eq(s.n_states, 2, "%s: %zu states", f->id, s.n_states);
    for (uint32_t k = 0; k < 2; k++) {
        const sluice_rest_job_state_t *x = &s.states[k];

        cr_assert(x->has_het_offset, "%s: [%u] no offset", f->id, k);
        cr_assert_eq(x->het_offset, k, "%s: [%u] offset %u", f->id, k, x->het_offset);
        cr_assert(sluice_job_is_final(x->base, x->flags), "%s: [%u] %s", f->id, k,
                  sluice_job_base_name(x->base));
        if (have)
            cr_assert_eq(x->job_id, ids[k], "%s: [%u] id %llu, job_%s_het says %llu", f->id, k,
                         (unsigned long long)x->job_id, f->tag, (unsigned long long)ids[k]);
    }
    cr_assert_eq(s.states[0].base, s.states[1].base, "%s", f->id);
    sluice_rest_job_states_clear(&s);
}

/* ---- accounting ----------------------------------------------------------- */

static void parse_acct(const live_t *f, sluice_rest_jobs_t *jobs)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_acct_jobs(f->v, f->json, jobs, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &jobs->env);
}

/* An accounting record is the job that job_<tag>_<name> showed live. */
static void same_job(const live_t *f, const sluice_jobview_t *x, const char *name)
{
    uint64_t want = job_id_of(f, name);

    if (want != 0)
        cr_assert_eq(x->job_id, want, "%s: job %llu, job_%s_%s shows %llu", f->id,
                     (unsigned long long)x->job_id, f->tag, name, (unsigned long long)want);
}

static const sluice_jobview_t *
one_record(const live_t *f, sluice_rest_jobs_t *jobs, const char *name)
{
    const sluice_jobview_t *x;

    parse_acct(f, jobs);
    cr_assert_eq(jobs->n_jobs, 1, "%s: %zu records", f->id, jobs->n_jobs);
    x = &jobs->jobs[0];
    cr_assert_str_eq(x->user_name, USER, "%s", f->id);
    cr_assert_not(x->other_cluster, "%s: the testbed's own record read as another cluster's",
                  f->id);
    cr_assert_str_eq(x->name, name, "%s: name %s", f->id, x->name);
    cr_assert_eq(x->het_job_id, 0, "%s", f->id);
    cr_assert(x->has_exit, "%s", f->id);
    cr_assert_gt(x->submit_time, 0, "%s", f->id);
    cr_assert_gt(x->end_time, 0, "%s", f->id);
    return x;
}

static void acct_completed(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_record(f, &jobs, "rec-ok");

    cr_assert_eq(x->base, SLUICE_JOB_COMPLETED, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert_eq(x->exit_code, 0, "%s", f->id);
    cr_assert_eq(x->exit_signal, 0, "%s", f->id);
    same_job(f, x, "completed");
    sluice_rest_jobs_clear(&jobs);
}

static void acct_failed(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    const sluice_jobview_t *x = one_record(f, &jobs, "rec-fail");

    cr_assert_eq(x->base, SLUICE_JOB_FAILED, "%s: %s", f->id, sluice_job_base_name(x->base));
    cr_assert_eq(x->exit_code, 3, "%s: exit %d", f->id, x->exit_code);
    cr_assert_eq(x->exit_signal, 0, "%s", f->id);
    same_job(f, x, "failed");
    sluice_rest_jobs_clear(&jobs);
}

static void acct_het(const live_t *f)
{
    sluice_rest_jobs_t jobs = {0};
    uint64_t ids[2];

    parse_acct(f, &jobs);
    check_het_pair(f, &jobs);
    if (het_ids(f, ids)) {
        cr_assert_eq(jobs.jobs[0].job_id, ids[0], "%s", f->id);
        cr_assert_eq(jobs.jobs[1].job_id, ids[1], "%s", f->id);
    }
    sluice_rest_jobs_clear(&jobs);
}

/* ---- submit, cancel, diag, ping ------------------------------------------- */

static void submit_held(const live_t *f)
{
    sluice_rest_submit_t s = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;
    bool held = false;

    /* v0.0.40/41 also carry result.error_code 2042 ("Job is in held
     * state"): a deprecated copy that must not turn the answer into an
     * error. */
    cr_assert_eq(sluice_rest_parse_submit(f->v, f->json, &s, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &s.env);
    cr_assert_gt(s.job_id, 0, "%s: no job id", f->id);
    cr_assert_not_null(s.step_id, "%s", f->id);
    for (size_t k = 0; k < s.env.n_warnings; k++)
        held = held || strstr(s.env.warnings[k], "held") != NULL;
    cr_assert(held, "%s: no warning mentions held (%zu warnings)", f->id, s.env.n_warnings);
    sluice_rest_submit_clear(&s);
}

static void submit_error(const live_t *f)
{
    sluice_rest_submit_t s = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;
    long num = 0;
    const char *text = NULL;

    cr_assert_eq(sluice_rest_parse_submit(f->v, f->json, &s, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    check_meta(f, &s.env);
    cr_assert_eq(s.job_id, 0, "%s: job id %llu", f->id, (unsigned long long)s.job_id);
    cr_assert(sluice_rest_first_error(&s.env, &num, &text), "%s: no error", f->id);
    cr_assert_eq(num, 2000, "%s: error %ld", f->id, num);
    cr_assert_str_eq(text, "Invalid partition name specified", "%s", f->id);
    sluice_rest_submit_clear(&s);
}

static void cancel_ok(const live_t *f)
{
    sluice_rest_envelope_t e = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(sluice_rest_parse_envelope(f->v, f->json, &e, &err), &err);
    no_errors(f, &e);
    cr_assert_eq(e.n_warnings, 0, "%s: %zu warnings", f->id, e.n_warnings);
    sluice_rest_envelope_clear(&e);
}

static void diag_basic(const live_t *f)
{
    sluice_rest_diag_t d = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_diag(f->v, f->json, &d, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &d.env);
    cr_assert_gt(d.req_time, 0, "%s", f->id);
    cr_assert_gt(d.n_rpcs, 0, "%s", f->id);
    /* The recorder submitted before it asked. */
    cr_assert_gt(sluice_rest_diag_rpc_count(&d, "REQUEST_SUBMIT_BATCH_JOB"), 0, "%s", f->id);
    cr_assert_gt(sluice_rest_diag_rpc_count(&d, "REQUEST_JOB_INFO"), 0, "%s", f->id);
    sluice_rest_diag_clear(&d);
}

static void ping_ok(const live_t *f)
{
    sluice_rest_ping_t p = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_ping(f->v, f->json, &p, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &p.env);
    cr_assert_eq(p.n_controllers, 1, "%s", f->id);
    cr_assert_eq(p.n_responding, 1, "%s", f->id);
    cr_assert(p.primary_responding, "%s", f->id);
    sluice_rest_ping_clear(&p);
}

/* GET node/tb1 (the peers.env address lookup): one record, its name, and
 * the address Slurm reaches it at (the testbed's NodeAddr), which differs
 * from the host name it runs on. */
static void nodes_one(const live_t *f)
{
    sluice_rest_nodes_t n = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_rest_parse_nodes(f->v, f->json, &n, &err), SLUICE_OK, "%s: %s", f->id,
                 err.text);
    no_errors(f, &n.env);
    cr_assert_eq(n.n_nodes, 1, "%s", f->id);
    cr_assert_str_eq(n.nodes[0].name, "tb1", "%s", f->id);
    cr_assert_not_null(n.nodes[0].address, "%s", f->id);
    cr_assert_str_eq(n.nodes[0].address, "127.0.0.1", "%s", f->id);
    sluice_rest_nodes_clear(&n);
}

/* ---- error answers and their classification -------------------------------- */

/* The first error of an error answer, which meta still describes. */
static void first_error(const live_t *f, long want, const char *want_text)
{
    sluice_rest_envelope_t e = {0};
    sluice_error_t err = SLUICE_ERROR_INIT;
    long num = 0;
    const char *text = NULL;

    cr_assert_sluice_ok(sluice_rest_parse_envelope(f->v, f->json, &e, &err), &err);
    check_meta(f, &e);
    cr_assert(sluice_rest_first_error(&e, &num, &text), "%s: no error", f->id);
    cr_assert_eq(num, want, "%s: error %ld, want %ld", f->id, num, want);
    cr_assert_str_eq(text, want_text, "%s", f->id);
    sluice_rest_envelope_clear(&e);
}

/* How sluice classifies this body under an HTTP status.  The recorder keeps
 * no status, so callers try each one the release may send.  The client
 * takes the family from the REST version (v0.0.40/41: 23.02-24.05), while
 * these servers are 24.11+: both must agree. */
static void classify(const live_t *f, long status, sluice_outcome want)
{
    static const slurm_family_t families[] = {SLURM_FAMILY_23_02, SLURM_FAMILY_24_11};
    char *body = json_dumps(f->json, JSON_COMPACT);
    size_t len;

    cr_assert_not_null(body);
    len = strlen(body);
    for (size_t k = 0; k < sizeof(families) / sizeof(families[0]); k++) {
        for (int retry = 0; retry < 2; retry++) {
            rest_outcome_t o = {0};
            sluice_outcome got;

            o.status = status;
            o.xfer = HTTP_XFER_OK;
            o.error_number = restclass_error_number(body, len);
            o.family = families[k];
            o.authenticated = 1;
            o.after_refresh = retry;
            o.unrouted = restclass_unrouted(status, body, len);
            got = restclass_classify(&o);
            cr_assert_eq(got, want, "%s: HTTP %ld (family %d, retry %d) is %s, want %s", f->id,
                         status, (int)families[k], retry, sluice_outcome_name(got),
                         sluice_outcome_name(want));
        }
    }
    free(body);
}

/* A bad token: 1007 in the body; 401 or 511 must mean AUTH (refresh the
 * token) whatever the body says. */
static void error_auth(const live_t *f)
{
    first_error(f, 1007, "Protocol authentication error");
    classify(f, 401, SLUICE_OUTCOME_AUTH);
    classify(f, 511, SLUICE_OUTCOME_AUTH);
}

/* Job 999999: 2017, and a 404 with this body is the handler's verdict, not
 * the router's unknown URL. */
static void error_notfound(const live_t *f)
{
    first_error(f, 2017, "Invalid job id specified");
    classify(f, 404, SLUICE_OUTCOME_NOT_FOUND);
}

/* slurmdbd stopped: 7000 under HTTP 502 is an outage, never a missing job
 * nor a token problem. */
static void error_dbddown(const live_t *f)
{
    first_error(f, 7000, "Unable to connect to database");
    classify(f, 502, SLUICE_OUTCOME_UNAVAILABLE);
}

/* ---- the walk ----------------------------------------------------------------- */

static const struct {
    const char *kind;
    const char *name;
    void (*check)(const live_t *f);
} cases[] = {
    {"job", "completed", job_completed},
    {"job", "failed", job_failed},
    {"job", "running", job_running},
    {"job", "pending", job_pending},
    {"job", "cancelled", job_cancelled},
    {"job", "het", job_het},
    {"jobs", "nochanges", jobs_nochanges},
    {"state", "two", state_two},
    {"state", "het", state_het},
    {"acct", "completed", acct_completed},
    {"acct", "failed", acct_failed},
    {"acct", "het", acct_het},
    {"submit", "held", submit_held},
    {"submit", "error", submit_error},
    {"cancel", "ok", cancel_ok},
    {"diag", "basic", diag_basic},
    {"ping", "ok", ping_ok},
    {"nodes", "one", nodes_one},
    {"error", "auth", error_auth},
    {"error", "notfound", error_notfound},
    {"error", "dbddown", error_dbddown},
};

/* "<kind>_live<4 digits>_<case>.json" into f; false for any other name.  A
 * name with "_live" that does not parse is a failure, not a skip. */
static bool split_name(const char *file, live_t *f)
{
    const char *live = strstr(file, "_live");
    const char *dot = strrchr(file, '.');
    const char *d;
    const char *rest;

    if (live == NULL || dot == NULL || strcmp(dot, ".json") != 0)
        return false;
    d = live + 5;
    cr_assert(strspn(d, "0123456789") == 4 && d[4] == '_', "%s: not <kind>_live<YYMM>_<case>.json",
              file);
    rest = d + 5;
    cr_assert((size_t)(live - file) < sizeof(f->kind) && (size_t)(dot - rest) < sizeof(f->name) &&
                  dot > rest,
              "%s: kind or case too long or empty", file);
    snprintf(f->kind, sizeof(f->kind), "%.*s", (int)(live - file), file);
    snprintf(f->tag, sizeof(f->tag), "%.*s", 8, live + 1);
    snprintf(f->name, sizeof(f->name), "%.*s", (int)(dot - rest), rest);
    return true;
}

static size_t walk_version(const char *root, sluice_rest_version v)
{
    live_t f = {0};
    DIR *dir;
    struct dirent *ent;
    size_t count = 0;

    f.v = v;
    snprintf(f.dir, sizeof(f.dir), "%s/%s", root, sluice_rest_version_name(v));
    dir = opendir(f.dir);
    if (dir == NULL)
        return 0;
    while ((ent = readdir(dir)) != NULL) {
        char path[4400];
        size_t c;

        if (!split_name(ent->d_name, &f))
            continue;
        snprintf(f.id, sizeof(f.id), "%s/%s", sluice_rest_version_name(v), ent->d_name);
        for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            if (strcmp(cases[c].kind, f.kind) == 0 && strcmp(cases[c].name, f.name) == 0)
                break;
        }
        cr_assert_lt(c, sizeof(cases) / sizeof(cases[0]),
                     "%s: unknown live case %s_%s (teach test_live_fixtures.c what it means)", f.id,
                     f.kind, f.name);
        snprintf(path, sizeof(path), "%s/%s", f.dir, ent->d_name);
        f.json = load(path, true);
        cases[c].check(&f);
        json_decref(f.json);
        f.json = NULL;
        count++;
    }
    closedir(dir);
    return count;
}

Test(live_fixtures, every_recording_means_its_case)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char root[4096];
    size_t total = 0;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(root, sizeof(root), "%s/tests/fixtures/slurmrestd", src);
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        size_t n = walk_version(root, v);

        if (v >= SLUICE_REST_V0040)
            cr_assert_gt(n, 0, "%s has no live recording (record_live.sh)",
                         sluice_rest_version_name(v));
        cr_log_info("%s: %zu live recordings", sluice_rest_version_name(v), n);
        total += n;
    }
    cr_log_info("%zu live recordings checked", total);
}

/* The name parser accepts exactly the recorder's names. */
Test(live_fixtures, names)
{
    live_t f = {0};

    cr_assert(split_name("job_live2605_completed.json", &f));
    cr_assert_str_eq(f.kind, "job");
    cr_assert_str_eq(f.tag, "live2605");
    cr_assert_str_eq(f.name, "completed");
    cr_assert(split_name("error_live2411_dbddown.json", &f));
    cr_assert_str_eq(f.name, "dbddown");
    cr_assert_not(split_name("job_completed.json", &f));
    cr_assert_not(split_name("job_live2605_completed.json.orig", &f));
}
