/* SPDX-License-Identifier: Apache-2.0 */
/* test_live_client.c - the slurmrestd client against the real testbed
 * (deploy/testbed of the release in SLUICE_TB_RELEASE: Slurm 22.05 on v0.0.38,
 * 24.11 on v0.0.42, 26.05 on v0.0.45; TCP and Unix socket).
 *
 * The testbed is found through the SLUICE_TB_* variables; when they are not
 * set, `deploy/testbed/env.sh` is run (as tests/e2e/smoke_testbed.sh does)
 * and its export lines are read.  A missing testbed is a failure, never a
 * skip.  Every request goes to 127.0.0.1 or the testbed's Unix socket.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <sluice/auth.h>
#include <sluice/client.h>

#include "slurm/slurmrest.h"

#define HINT                                                                                       \
    "the testbed is not available: run deploy/testbed/start.sh and "                               \
    "eval \"$(deploy/testbed/env.sh)\""

static char tmpfiles[4][64];
static size_t n_tmp;

/* Read `export K='V'` lines of env.sh into the environment. */
static void load_env_sh(void)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char cmd[1200];
    char line[4096];
    FILE *p;

    if (src == NULL)
        src = ".";
    snprintf(cmd, sizeof(cmd), "bash '%s/deploy/testbed/env.sh' 2>/dev/null", src);
    p = popen(cmd, "r");
    if (p == NULL)
        return;
    while (fgets(line, sizeof(line), p) != NULL) {
        char *eq, *val, *end;

        if (strncmp(line, "export ", 7) != 0 || (eq = strchr(line + 7, '=')) == NULL)
            continue;
        *eq = '\0';
        val = eq + 1;
        if (*val == '\'') {
            val++;
            end = strrchr(val, '\'');
            if (end != NULL)
                *end = '\0';
        } else {
            val[strcspn(val, "\n")] = '\0';
        }
        setenv(line + 7, val, 1);
    }
    pclose(p);
}

static const char *tb(const char *name)
{
    const char *v = getenv(name);

    cr_assert(v != NULL && v[0] != '\0', "%s is not set: %s", name, HINT);
    return v;
}

static void setup(void)
{
    if (getenv("SLUICE_TB_REST_URL") == NULL)
        load_env_sh();
    cr_assert_not_null(getenv("SLUICE_TB_REST_URL"), HINT);
    cr_assert(strncmp(tb("SLUICE_TB_REST_URL"), "http://127.", 11) == 0,
              "only loopback may be contacted: %s", tb("SLUICE_TB_REST_URL"));
    n_tmp = 0;
}

static void teardown(void)
{
    for (size_t i = 0; i < n_tmp; i++)
        unlink(tmpfiles[i]);
}

TestSuite(live_client, .init = setup, .fini = teardown, .timeout = 600);

/* A 0600 temp file holding `text`; removed at teardown. */
static const char *temp_file(const void *text, size_t len)
{
    char *path = tmpfiles[n_tmp++];
    int fd;

    snprintf(path, 64, "/tmp/sluice-e2e-XXXXXX");
    fd = mkstemp(path);
    cr_assert(fd >= 0);
    fchmod(fd, 0600);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void rewrite(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

/* The raw bytes of the testbed's HS256 key.  It belongs to SlurmUser, so
 * sluice_key_load() (which refuses files of other users) is not used. */
static unsigned char *read_key(size_t *len)
{
    FILE *f = fopen(tb("SLUICE_TB_JWT_KEY"), "rb");
    unsigned char *key = calloc(1, 4096);

    cr_assert_not_null(f, "cannot read %s", tb("SLUICE_TB_JWT_KEY"));
    *len = fread(key, 1, 4096, f);
    fclose(f);
    cr_assert_gt(*len, 0);
    return key;
}

/* A token for the job user minted with the testbed's HS256 key. */
static char *mint(long lifespan)
{
    sluice_token_mint_opts_t mo;
    sluice_error_t err = SLUICE_ERROR_INIT;
    unsigned char *key = NULL;
    size_t key_len = 0;
    char *tok = NULL;

    key = read_key(&key_len);
    mo = (sluice_token_mint_opts_t)SLUICE_TOKEN_MINT_OPTS_INIT;
    mo.alg = SLUICE_JWT_HS256;
    mo.key = key;
    mo.key_len = key_len;
    mo.user = tb("SLUICE_TB_USER");
    mo.lifespan = lifespan;
    cr_assert_eq(sluice_token_mint(&mo, &tok, &err), SLUICE_OK, "%s", err.text);
    free(key);
    return tok;
}

static sluice_client_t *client_with(const char *url, sluice_auth_kind kind, const char *path)
{
    sluice_auth_opts_t ao;
    sluice_client_opts_t co;
    sluice_auth_t *auth = NULL;
    sluice_client_t *c = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ao = (sluice_auth_opts_t)SLUICE_AUTH_OPTS_INIT;
    ao.kind = kind;
    ao.path = path;
    ao.user = tb("SLUICE_TB_USER");
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    co = (sluice_client_opts_t)SLUICE_CLIENT_OPTS_INIT;
    co.url = url;
    co.api_version = "auto";
    co.auth = auth;
    /* jobs_since reads the whole job table, and its size is what the
     * other suites running beside this one left in slurmctld (46 MB on
     * 24.11 in one CI run, which slurmrestd sent at ~2 MB/s under load):
     * the default 10 s would time the read out, not test it. */
    co.query_timeout_ms = 120000;
    cr_assert_eq(sluice_client_new(&c, &co, &err), SLUICE_OK, "%s", err.text);
    return c;
}

static char *unix_url(void)
{
    static char url[512];

    snprintf(url, sizeof(url), "unix:%s", tb("SLUICE_TB_REST_SOCKET"));
    return url;
}

static void fill_desc(sluice_jobdesc_t *d, const char *name, const char *constraint)
{
    char out[600];

    memset(d, 0, sizeof(*d));
    d->name = strdup(name);
    d->comment = strdup("sluice:e2e:1");
    d->partition = strdup(tb("SLUICE_TB_PARTITION"));
    d->time_limit = 5;
    d->nodes = 1;
    d->tasks_per_node = 1;
    d->constraint = constraint ? strdup(constraint) : NULL;
    d->workdir = strdup(tb("SLUICE_TB_CLUSTER_STORAGE_ROOT"));
    snprintf(out, sizeof(out), "%s/%s-%%j.out", tb("SLUICE_TB_CLUSTER_STORAGE_ROOT"), name);
    d->std_out = strdup(out);
    d->std_err = strdup(out);
    cr_assert_eq(sluice_jobdesc_setenv(d, "PATH", "/usr/bin:/bin", NULL), SLUICE_OK);
}

static uint64_t submit(sluice_client_t *c, sluice_jobdesc_t *descs, size_t n)
{
    sluice_rest_submit_t s = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    uint64_t id;

    cr_assert_eq(sluice_client_submit(c, descs, n, &s, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_OK);
    cr_assert_eq(call.requests, 1);
    id = s.job_id;
    cr_assert_gt(id, 0);
    sluice_rest_submit_clear(&s);
    return id;
}

/* Poll the live view until the leader's base state is `want` (or timeout). */
static sluice_job_base wait_state(sluice_client_t *c, uint64_t id, sluice_job_base want, int secs)
{
    sluice_job_base last = SLUICE_JOB_BASE_UNKNOWN;

    for (int i = 0; i < secs * 2; i++) {
        sluice_rest_jobs_t j = {0};
        sluice_error_t err = SLUICE_ERROR_INIT;

        if (sluice_client_get_job(c, id, &j, NULL, &err) == SLUICE_OK && j.n_jobs > 0)
            last = j.jobs[0].base;
        sluice_rest_jobs_clear(&j);
        if (last == want)
            break;
        usleep(500 * 1000);
    }
    return last;
}

static void run_lifecycle(const char *url, const char *tag)
{
    sluice_client_t *c = client_with(url, SLUICE_AUTH_TOKEN_FILE, tb("SLUICE_TB_TOKEN_FILE"));
    sluice_client_info_t info;
    sluice_jobdesc_t d;
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char name[64];
    int64_t t0 = (int64_t)time(NULL) - 5;
    uint64_t id;
    bool found = false;

    cr_assert_eq(sluice_client_negotiate(c, &call, &err), SLUICE_OK, "%s", err.text);
    sluice_client_info(c, &info);
    {
        /* The testbed's newest version, and its release's number. */
        sluice_rest_version want;
        const char *rel = tb("SLUICE_TB_RELEASE");

        cr_assert_eq(sluice_rest_version_parse(tb("SLUICE_TB_REST_VERSION"), &want, &err),
                     SLUICE_OK, "%s", err.text);
        cr_assert_eq(info.version, want, "negotiated %s, the testbed serves %s",
                     sluice_rest_version_name(info.version), tb("SLUICE_TB_REST_VERSION"));
        cr_assert(strncmp(info.release, rel, strlen(rel)) == 0 && info.release[strlen(rel)] == '.',
                  "release %s, the testbed runs %s", info.release, rel);
    }

    snprintf(name, sizeof(name), "sluice-e2e-%s-%ld", tag, (long)getpid());
    fill_desc(&d, name, NULL);
    free(d.script);
    d.script = strdup("#!/bin/sh\nsleep 120\n");
    id = submit(c, &d, 1);
    sluice_jobdesc_clear(&d);

    cr_assert_eq(wait_state(c, id, SLUICE_JOB_RUNNING, 60), SLUICE_JOB_RUNNING,
                 "job %" PRIu64 " never ran", id);

    /* list changes: everything since t0 contains the job */
    cr_assert_eq(sluice_client_jobs_since(c, t0, &j, &call, &err), SLUICE_OK, "%s", err.text);
    for (size_t i = 0; i < j.n_jobs; i++)
        found = found || j.jobs[i].job_id == id;
    cr_assert(found || call.no_changes == false, "job list misses %" PRIu64, id);
    cr_assert(found, "job %" PRIu64 " not in the changes since %" PRId64, id, t0);
    sluice_rest_jobs_clear(&j);

    /* jobs states (jobs/state on v0.0.40+, emulated on v0.0.38) */
    {
        sluice_rest_job_states_t st = {0};
        uint64_t ids[] = {id, 999999};
        cr_assert_eq(sluice_client_job_states(c, ids, 2, &st, &call, &err), SLUICE_OK, "%s",
                     err.text);
        cr_assert_eq(st.n_states, 1);
        cr_assert_eq(st.states[0].job_id, id);
        sluice_rest_job_states_clear(&st);
    }

    /* cancel a running sleep and observe CANCELLED */
    cr_assert_eq(sluice_client_cancel(c, id, "SIGKILL", &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(wait_state(c, id, SLUICE_JOB_CANCELLED, 60), SLUICE_JOB_CANCELLED);

    /* accounting lags: bounded retry */
    for (int i = 0; i < 60; i++) {
        sluice_rest_jobs_clear(&j);
        if (sluice_client_acct_job(c, id, &j, &call, &err) == SLUICE_OK)
            break;
        cr_assert(call.outcome == SLUICE_OUTCOME_NOT_FOUND, "%s", err.text);
        usleep(500 * 1000);
    }
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_OK, "accounting never showed %" PRIu64, id);
    cr_assert_eq(j.jobs[0].job_id, id);
    sluice_rest_jobs_clear(&j);
    for (int i = 0; i < 60; i++) {
        sluice_rest_jobs_clear(&j);
        if (sluice_client_acct_find(c, name, tb("SLUICE_TB_USER"), t0 - 300, t0 + 3600, &j, &call,
                                    &err) == SLUICE_OK)
            break;
        cr_assert(call.outcome == SLUICE_OUTCOME_NOT_FOUND, "%s", err.text);
        usleep(500 * 1000);
    }
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_OK, "no accounting record named %s", name);
    cr_assert_eq(j.jobs[0].job_id, id);
    cr_assert_str_eq(j.jobs[0].name, name);
    sluice_rest_jobs_clear(&j);

    /* unknown job */
    cr_assert_eq(sluice_client_get_job(c, 99999999, &j, &call, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_NOT_FOUND);
    sluice_client_free(c);
}

Test(live_client, lifecycle_over_tcp)
{
    run_lifecycle(tb("SLUICE_TB_REST_URL"), "tcp");
}

Test(live_client, lifecycle_over_unix_socket)
{
    run_lifecycle(unix_url(), "unix");
}

static void run_hetjob(const char *url, const char *tag)
{
    sluice_client_t *c = client_with(url, SLUICE_AUTH_TOKEN_FILE, tb("SLUICE_TB_TOKEN_FILE"));
    sluice_jobdesc_t d[2];
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char name[64];
    uint64_t id;
    bool seen[2] = {false, false};

    snprintf(name, sizeof(name), "sluice-e2e-het-%s-%ld", tag, (long)getpid());
    fill_desc(&d[0], name, "gpu_a100");
    fill_desc(&d[1], name, "gpu_h100");
    d[0].script = strdup("#!/bin/sh\nsleep 2\n");
    id = submit(c, d, 2);
    sluice_jobdesc_clear(&d[0]);
    sluice_jobdesc_clear(&d[1]);

    cr_assert_eq(sluice_client_get_job(c, id, &j, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(j.n_jobs, 2, "the leader id must return both components");
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(j.jobs[i].het_job_id, id);
        cr_assert_lt(j.jobs[i].het_job_offset, 2);
        seen[j.jobs[i].het_job_offset] = true;
    }
    cr_assert(seen[0] && seen[1]);
    sluice_rest_jobs_clear(&j);
    (void)sluice_client_cancel(c, id, NULL, NULL, NULL);
    sluice_client_free(c);
}

Test(live_client, hetjob_over_tcp)
{
    run_hetjob(tb("SLUICE_TB_REST_URL"), "tcp");
}

Test(live_client, hetjob_over_unix_socket)
{
    run_hetjob(unix_url(), "unix");
}

Test(live_client, token_file_rotated_mid_test)
{
    char *t1 = mint(600);
    char *t2 = NULL;
    const char *path = temp_file(t1, strlen(t1));
    sluice_client_t *c = client_with(tb("SLUICE_TB_REST_URL"), SLUICE_AUTH_TOKEN_FILE, path);
    sluice_rest_diag_t dg = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char line[4096];

    cr_assert_eq(sluice_client_diag(c, &dg, &call, &err), SLUICE_OK, "%s", err.text);
    sluice_rest_diag_clear(&dg);

    sleep(1); /* a different iat, so a different token */
    t2 = mint(900);
    cr_assert_str_neq(t1, t2);
    snprintf(line, sizeof(line), "SLURM_JWT=%s\n", t2);
    rewrite(path, line);
    cr_assert_eq(sluice_client_diag(c, &dg, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(call.requests, 1);
    sluice_rest_diag_clear(&dg);

    /* a bad token written by a rotation is AUTH (after the one retry) */
    rewrite(path, "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJ4In0.bm90LXNpZ25lZA\n");
    cr_assert_eq(sluice_client_diag(c, &dg, &call, &err), SLUICE_EAUTH);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_AUTH);
    cr_assert_eq(call.requests, 2);
    sluice_rest_diag_clear(&dg);

    /* rotated back to a good token: works again without a restart */
    rewrite(path, t2);
    cr_assert_eq(sluice_client_diag(c, &dg, &call, &err), SLUICE_OK, "%s", err.text);
    sluice_rest_diag_clear(&dg);
    sluice_client_free(c);
    free(t1);
    free(t2);
}

Test(live_client, hs256_minting_with_the_testbed_key)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    unsigned char *key = NULL;
    size_t key_len = 0;
    const char *copy;
    sluice_client_t *c;
    sluice_rest_diag_t dg = {0};
    sluice_rest_nodes_t nodes = {0};
    sluice_call_t call;

    /* the key belongs to SlurmUser; the auth module wants our own copy */
    key = read_key(&key_len);
    copy = temp_file(key, key_len);
    free(key);
    c = client_with(unix_url(), SLUICE_AUTH_HS256_KEY, copy);
    cr_assert_eq(sluice_client_diag(c, &dg, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_gt(dg.n_rpcs, 0);
    cr_assert_eq(sluice_client_nodes(c, &nodes, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_geq(nodes.n_nodes, 3);
    for (size_t i = 0; i < nodes.n_nodes; i++)
        if (strcmp(nodes.nodes[i].name, "tb1") == 0)
            cr_assert_eq(sluice_constraint_match("gpu_a100", nodes.nodes[i].features), 1);
    sluice_rest_diag_clear(&dg);
    sluice_rest_nodes_clear(&nodes);
    sluice_client_free(c);
}

Test(live_client, bad_token_is_auth)
{
    const char *bad = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDAsInN1biI6InNsdWljZXVzZXIifQ."
                      "YmFkLXNpZ25hdHVyZQ";
    const char *path = temp_file(bad, strlen(bad));
    sluice_client_t *c = client_with(tb("SLUICE_TB_REST_URL"), SLUICE_AUTH_TOKEN_FILE, path);
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_jobdesc_t d;
    sluice_rest_submit_t s = {0};

    cr_assert_eq(sluice_client_negotiate(c, &call, &err), SLUICE_EAUTH, "%s", err.text);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_AUTH);
    cr_assert_null(strstr(err.text, "YmFkLXNpZ25hdHVyZQ"));
    sluice_client_free(c);

    /* pinned: a submit with a bad token is uncertain, sent once */
    {
        sluice_auth_opts_t ao;
        sluice_client_opts_t co;
        sluice_auth_t *auth = NULL;

        ao = (sluice_auth_opts_t)SLUICE_AUTH_OPTS_INIT;
        ao.kind = SLUICE_AUTH_TOKEN_FILE;
        ao.path = path;
        ao.user = tb("SLUICE_TB_USER");
        cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
        co = (sluice_client_opts_t)SLUICE_CLIENT_OPTS_INIT;
        co.url = tb("SLUICE_TB_REST_URL");
        co.api_version = tb("SLUICE_TB_REST_VERSION");
        co.auth = auth;
        cr_assert_eq(sluice_client_new(&c, &co, &err), SLUICE_OK, "%s", err.text);
    }
    fill_desc(&d, "sluice-e2e-badtoken", NULL);
    d.script = strdup("#!/bin/sh\ntrue\n");
    cr_assert_neq(sluice_client_submit(c, &d, 1, &s, &call, &err), SLUICE_OK);
    /* negotiation (the pinned check) fails first with AUTH: nothing submitted */
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_AUTH);
    sluice_jobdesc_clear(&d);
    sluice_rest_submit_clear(&s);
    sluice_client_free(c);
}
