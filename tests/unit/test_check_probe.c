/* SPDX-License-Identifier: Apache-2.0 */
/* test_check_probe.c - `sluice check --probe-job` (the built binary,
 * $SLUICE_BIN) against the scripted fake slurmrestd.  The fake acts as the
 * cluster: when the probe job is submitted it runs the submitted script
 * under bash with the REST environment, in a storage root that the "cluster"
 * sees at another path (storage.cluster_root, a symlink here), with a stub
 * srun whose version and step behaviour each test chooses.  Then the row,
 * the exit code, the REST calls and the clean-up are checked: match,
 * version mismatch, srun not found, runtime found and missing, a failing
 * step, a failed job and a timeout that cancels the job. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "fake_slurmrestd.h"

static fake_server_t *fs;
static char tmp[128];
static int run_jobs; /* the fake cluster runs submitted scripts */

static const char stub_srun[] =
    "#!/bin/bash\n"
    "# stub srun: --version from srun.version; a step runs its command\n"
    "here=${BASH_SOURCE[0]%/*}\n"
    "if [ \"${1:-}\" = --version ]; then echo \"slurm $(<\"$here/srun.version\")\"; exit 0; fi\n"
    "while [ $# -gt 0 ] && [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
    "if [ -f \"$here/step.fail\" ]; then\n"
    "    echo 'srun: error: Insane message length' >&2\n"
    "    exit 1\n"
    "fi\n"
    "SLURMD_NODENAME=node01 exec \"$@\"\n";

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *d;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    d = calloc(1, (size_t)n + 1);
    if (fread(d, 1, (size_t)n, f) != (size_t)n)
        d[0] = '\0';
    fclose(f);
    return d;
}

/* The fake cluster: run the probe job's script as Slurm would. */
static void run_submitted(const fake_request_t *req, void *arg)
{
    json_t *body, *job, *env, *v;
    char cmd[8192], script[300];
    size_t i, n;

    (void)arg;
    if (!run_jobs || strcmp(req->method, "POST") != 0 || !strstr(req->target, "/job/submit"))
        return;
    body = json_loads(req->body, 0, NULL);
    job = json_object_get(body, "job");
    snprintf(script, sizeof(script), "%s/submitted.sh", tmp);
    write_file(script, json_string_value(json_object_get(job, "script")), 0700);
    n = (size_t)snprintf(cmd, sizeof(cmd), "cd '%s' && env -i",
                         json_string_value(json_object_get(job, "current_working_directory")));
    env = json_object_get(job, "environment");
    json_array_foreach(env, i, v)
    {
        n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", json_string_value(v));
    }
    snprintf(cmd + n, sizeof(cmd) - n, " /bin/bash '%s' >'%s/job.out' 2>&1", script, tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "fake cluster: the probe script failed\n");
    json_decref(body);
}

static void setup(void)
{
    char path[300];

    snprintf(tmp, sizeof(tmp), "/tmp/sluice-check-probe-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    fs = fake_start(0);
    cr_assert_not_null(fs);
    fake_set_hook(fs, run_submitted, NULL);
    run_jobs = 1;
    snprintf(path, sizeof(path), "%s/key", tmp);
    write_file(path, "0123456789abcdef0123456789abcdef", 0600);
    snprintf(path, sizeof(path), "%s/storage", tmp);
    cr_assert_eq(mkdir(path, 0700), 0);
    /* The cluster sees the storage root at another path. */
    snprintf(path, sizeof(path), "%s/cluster", tmp);
    cr_assert_eq(symlink("storage", path), 0);
    snprintf(path, sizeof(path), "%s/opt", tmp);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/opt/slurm", tmp);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/opt/slurm/bin", tmp);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/opt/slurm/bin/srun", tmp);
    write_file(path, stub_srun, 0700);
    snprintf(path, sizeof(path), "%s/opt/slurm/bin/srun.version", tmp);
    write_file(path, "23.11.10\n", 0600);
}

static void teardown(void)
{
    char cmd[300];

    fake_stop(fs);
    fs = NULL;
    if (getenv("KEEP_SCRATCH"))
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        cr_log_warn("cleanup of %s failed", tmp);
}

TestSuite(check_probe, .init = setup, .fini = teardown, .timeout = 60);

static char *fixture(const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];
    char *text;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/v0.0.40/%s.json", src, name);
    text = slurp(path);
    cr_assert_not_null(text, "%s", path);
    return text;
}

static void push(int status, const char *name)
{
    fake_response_t r;
    char *body = fixture(name);

    memset(&r, 0, sizeof(r));
    r.status = status;
    r.body = body;
    fake_push(fs, &r);
    free(body);
}

/* A served /openapi/v3 that lists v0.0.40 and deprecates nothing. */
static void push_openapi(void)
{
    fake_response_t r;

    memset(&r, 0, sizeof(r));
    r.status = 200;
    r.body = "{\"openapi\":\"3.0.2\",\"paths\":{\"/slurm/v0.0.40/diag/\":{\"get\":{}}}}";
    fake_push(fs, &r);
}

/* The answers of the checks before the probe, then the submit. */
static void push_preflight_and_submit(void)
{
    push(200, "diag_basic");     /* negotiation (pinned v0.0.40) */
    push(200, "diag_basic");     /* token */
    push_openapi();              /* deprecation: the server's document */
    push(404, "error_notfound"); /* accounting: nothing found is fine */
    push(200, "nodes_basic");
    push(200, "submit_ok"); /* job 200 */
}

/* Site file with `launcher` (job_launcher lines after the sandbox). */
static void write_site(const char *sandbox, const char *launcher)
{
    char path[300], text[4096];

    snprintf(text, sizeof(text),
             "site:\n  name: site-1\n"
             "rest:\n  url: %s\n  api_version: v0.0.40\n  user: alice\n  jwt_key_file: %s/key\n"
             "storage:\n  root: %s/storage\n  cluster_root: %s/cluster\n"
             "job_launcher:\n  sandbox: %s\n%s",
             fake_url(fs), tmp, tmp, tmp, sandbox, launcher);
    snprintf(path, sizeof(path), "%s/site.yaml", tmp);
    write_file(path, text, 0600);
}

/* Run `sluice check --config site.yaml --probe-job ARGS`; its exit code.
 * *out receives stdout and stderr (caller frees). */
static int check(const char *args, char **out)
{
    const char *bin = getenv("SLUICE_BIN");
    char cmd[2048], path[300];
    int st;

    cr_assert_not_null(bin, "SLUICE_BIN is set by ctest");
    snprintf(cmd, sizeof(cmd),
             "env -u SLUICE_CONFIG '%s' check --config '%s/site.yaml' --probe-job %s "
             ">'%s/check.out' 2>&1",
             bin, tmp, args, tmp);
    st = system(cmd);
    snprintf(path, sizeof(path), "%s/check.out", tmp);
    *out = slurp(path);
    cr_assert_not_null(*out);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The probe-job row of the text table ("" when absent). */
static const char *probe_line(const char *out, char *line, size_t n)
{
    const char *p = strstr(out, "\nprobe-job ");

    line[0] = '\0';
    if (p)
        snprintf(line, n, "%.*s", (int)strcspn(p + 1, "\n"), p + 1);
    return line;
}

/* Nothing of the probe is left in the storage root. */
static void assert_cleaned_up(void)
{
    char path[300];
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "%s/storage/site-1", tmp);
    d = opendir(path);
    cr_assert_not_null(d, "%s: the staging directory was never created", path);
    while ((e = readdir(d)) != NULL)
        cr_expect(strncmp(e->d_name, ".probe-", 7) != 0, "%s/%s was left behind", path, e->d_name);
    closedir(d);
}

static const fake_request_t *find_request(const char *method, const char *part)
{
    size_t i;

    for (i = 0; i < fake_request_count(fs); i++) {
        const fake_request_t *r = fake_request(fs, i);
        if (strcmp(r->method, method) == 0 && strstr(r->target, part))
            return r;
    }
    return NULL;
}

Test(check_probe, configured_srun_matches_the_controller)
{
    char launcher[600], want[600], line[600];
    const fake_request_t *sub;
    json_t *body, *job;
    char *out;

    snprintf(launcher, sizeof(launcher), "  executables:\n    srun: %s/opt/slurm/bin/srun\n", tmp);
    write_site("none", launcher);
    push_preflight_and_submit();
    push(200, "job_completed");
    cr_expect_eq(check("", &out), 0, "%s", out);
    snprintf(want, sizeof(want), "srun %s/opt/slurm/bin/srun 23.11.10 matches slurmctld 23.11.10",
             tmp);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "ok") && strstr(line, want), "row: %s\n%s", line, out);

    /* The job: named as a probe, the site's PATH led by srun's directory. */
    sub = find_request("POST", "/slurm/v0.0.40/job/submit");
    cr_assert_not_null(sub);
    body = json_loads(sub->body, 0, NULL);
    job = json_object_get(body, "job");
    cr_expect(
        strncmp(json_string_value(json_object_get(job, "name")), "sluice-site-1-probe-", 20) == 0,
        "%s", json_string_value(json_object_get(job, "name")));
    snprintf(want, sizeof(want), "PATH=%s/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin", tmp);
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(job, "environment"), 0)),
                     want);
    cr_expect(strstr(json_string_value(json_object_get(job, "current_working_directory")),
                     "/cluster/site-1/.probe-") != NULL,
              "the job works in the cluster-side staging directory");
    json_decref(body);
    cr_expect_not_null(find_request("GET", "/slurm/v0.0.40/job/200"));
    cr_expect_null(find_request("DELETE", "/job/"), "nothing to cancel");
    assert_cleaned_up();
    free(out);
}

Test(check_probe, version_mismatch_fails_78)
{
    char launcher[600], path[300], line[600];
    char *out;

    snprintf(path, sizeof(path), "%s/opt/slurm/bin/srun.version", tmp);
    write_file(path, "22.05.8\n", 0600);
    snprintf(launcher, sizeof(launcher), "  executables:\n    srun: %s/opt/slurm/bin/srun\n", tmp);
    write_site("none", launcher);
    push_preflight_and_submit();
    push(200, "job_completed");
    cr_expect_eq(check("", &out), 78, "%s", out);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "FAIL") && strstr(line, "version mismatch") &&
                  strstr(line, "is 22.05.8, slurmctld is 23.11.10"),
              "row: %s\n%s", line, out);
    assert_cleaned_up();
    free(out);
}

Test(check_probe, srun_not_found_fails_78)
{
    char launcher[600], want[600], line[600];
    char *out;

    snprintf(launcher, sizeof(launcher), "  executables:\n    srun: %s/nowhere/bin/srun\n", tmp);
    write_site("none", launcher);
    push_preflight_and_submit();
    push(200, "job_completed");
    cr_expect_eq(check("", &out), 78, "%s", out);
    snprintf(want, sizeof(want), "srun %s/nowhere/bin/srun not found by the job", tmp);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "FAIL") && strstr(line, want), "row: %s\n%s", line, out);
    assert_cleaned_up();
    free(out);
}

Test(check_probe, apptainer_found_and_missing_on_the_node)
{
    char launcher[900], want[600], path[300], line[600];
    char *out;

    snprintf(path, sizeof(path), "%s/opt/apptainer", tmp);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/opt/apptainer/apptainer", tmp);
    write_file(path, "#!/bin/sh\nexit 0\n", 0700);
    snprintf(launcher, sizeof(launcher),
             "  executables:\n    srun: %s/opt/slurm/bin/srun\n    apptainer: %s\n", tmp, path);
    write_site("apptainer", launcher);
    push_preflight_and_submit();
    push(200, "job_completed");
    cr_expect_eq(check("", &out), 0, "%s", out);
    snprintf(want, sizeof(want), "matches slurmctld 23.11.10; %s on node01", path);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "ok") && strstr(line, want), "row: %s\n%s", line, out);
    free(out);

    unlink(path);
    push_preflight_and_submit();
    push(200, "job_completed");
    cr_expect_eq(check("", &out), 78, "%s", out);
    snprintf(want, sizeof(want), "container runtime %s not found on node01", path);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "FAIL") && strstr(line, want), "row: %s\n%s", line, out);
    assert_cleaned_up();
    free(out);
}

Test(check_probe, failing_step_fails_69_with_srun_message)
{
    char launcher[600], path[300], line[600];
    char *out;

    snprintf(path, sizeof(path), "%s/opt/slurm/bin/step.fail", tmp);
    write_file(path, "", 0600);
    snprintf(launcher, sizeof(launcher), "  executables:\n    srun: %s/opt/slurm/bin/srun\n", tmp);
    write_site("none", launcher);
    push_preflight_and_submit();
    push(200, "job_completed");
    cr_expect_eq(check("", &out), 69, "%s", out);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "FAIL") && strstr(line, "one-task step failed (exit 1)") &&
                  strstr(line, "Insane message length"),
              "row: %s\n%s", line, out);
    assert_cleaned_up();
    free(out);
}

Test(check_probe, failed_job_is_reported_with_its_state)
{
    char line[600];
    char *out;

    run_jobs = 0;
    write_site("none", "");
    push_preflight_and_submit();
    push(200, "job_failed");
    cr_expect_eq(check("", &out), 69, "%s", out);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "FAIL") && strstr(line, "job 200 failed: FAILED"), "row: %s\n%s", line,
              out);
    assert_cleaned_up();
    free(out);
}

Test(check_probe, timeout_cancels_the_job)
{
    char line[600];
    char *out;
    int i;

    run_jobs = 0;
    write_site("none", "");
    push_preflight_and_submit();
    for (i = 0; i < 8; i++)
        push(200, "job_running");
    cr_expect_eq(check("--probe-timeout 2", &out), 69, "%s", out);
    probe_line(out, line, sizeof(line));
    cr_expect(strstr(line, "FAIL") && strstr(line, "timeout: job 200 still RUNNING") &&
                  strstr(line, "after 2 s"),
              "row: %s\n%s", line, out);
    cr_expect_not_null(find_request("DELETE", "/slurm/v0.0.40/job/200"), "the job was cancelled");
    assert_cleaned_up();
    free(out);
}

Test(check_probe, bad_timeout_is_usage)
{
    char *out;

    write_site("none", "");
    cr_expect_eq(check("--probe-timeout 0", &out), 64, "%s", out);
    free(out);
    cr_expect_eq(check("--probe-timeout 5x", &out), 64, "%s", out);
    free(out);
    cr_expect_eq(fake_request_count(fs), 0);
}
