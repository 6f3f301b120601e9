/* SPDX-License-Identifier: Apache-2.0 */
/* test_render.c - rendering behaviour beyond the golden texts: hostile
 * values run under bash stay inert, fail-closed series, staging refusals,
 * secret handling. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/ops.h>
#include <sluice/store.h>

#include "base/marker.h"
#include "render_case.h"
#include "scratch.h"

static char scratch[256];

static void setup(void)
{
    scratch_make(scratch, sizeof(scratch), "render");
}

static void teardown(void)
{
    scratch_remove(scratch);
}

TestSuite(render, .init = setup, .fini = teardown, .timeout = 60);

static void case_dir(const char *name, char *out, size_t n)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    cr_assert_not_null(src);
    snprintf(out, n, "%s/tests/golden/render/%s", src, name);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

/* Replace every occurrence of `from` in `s` by `to` (new string). */
static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to), cap = strlen(s) * 2 + 4096, n = 0;
    char *o = malloc(cap);
    const char *p;

    while ((p = strstr(s, from)) != NULL) {
        memcpy(o + n, s, (size_t)(p - s));
        n += (size_t)(p - s);
        memcpy(o + n, to, nt);
        n += nt;
        s = p + nf;
    }
    strcpy(o + n, s);
    return o;
}

/* Read a NUL-separated file into a JSON array of strings. */
static json_t *read_nul_list(const char *path)
{
    size_t len = 0, i = 0;
    char *d = render_case_slurp(path, &len);
    json_t *a = json_array();

    cr_assert_not_null(d, "%s was not written", path);
    while (i < len) {
        json_array_append_new(a, json_string(d + i));
        i += strlen(d + i) + 1;
    }
    free(d);
    return a;
}

static const char stub_srun[] = "#!/bin/bash\n"
                                "# stub srun: record argv and the step's environment\n"
                                "printf '%s\\0' \"$@\" >\"$STUB_OUT/srun.argv\"\n"
                                "env -0 >\"$STUB_OUT/srun.env\"\n"
                                "rc_var=STUB_RC_$SLUICE_POOL\n"
                                "# STUB_TERM_RC: run until TERM, then exit with it (a workload\n"
                                "# that handles SIGTERM)\n"
                                "if [ -n \"${STUB_TERM_RC:-}\" ]; then\n"
                                "    sleep 30 & s=$!\n"
                                "    trap 'kill $s; exit $STUB_TERM_RC' TERM\n"
                                "    : >\"$STUB_OUT/srun.started\"\n"
                                "    wait $s\n"
                                "fi\n"
                                "exit \"${!rc_var:-0}\"\n";

static const char stub_scontrol[] = "#!/bin/bash\n"
                                    "echo scontrol >>\"$STUB_OUT/scontrol.calls\"\n"
                                    "echo node01; echo node02\n";

/* Write the stubs and the script (as job.sh) into the scratch dir. */
static void install_script(const char *script)
{
    char path[512];
    char *s;

    snprintf(path, sizeof(path), "%s/bin", scratch);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/bin/srun", scratch);
    write_file(path, stub_srun, 0700);
    snprintf(path, sizeof(path), "%s/bin/scontrol", scratch);
    write_file(path, stub_scontrol, 0700);
    snprintf(path, sizeof(path), "%s/bin/module", scratch);
    write_file(path, "#!/bin/sh\nexit 0\n", 0700);
    /* The script pins PATH; put the stubs first by rewriting that line. */
    s = replace_all(script, "export PATH='/usr/local/bin:/usr/bin:/bin'",
                    "export PATH=\"$STUB_BIN\"");
    snprintf(path, sizeof(path), "%s/job.sh", scratch);
    write_file(path, s, 0700);
    free(s);
}

static int run_script(const char *script, const char *extra_env)
{
    char cmd[2048];

    install_script(script);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && env -i STUB_BIN='%s/bin:/usr/bin:/bin' STUB_OUT='%s' "
             "SLURM_JOB_NODELIST='node[01-02]' %s /bin/bash job.sh >out.txt 2>err.txt",
             scratch, scratch, scratch, extra_env ? extra_env : "");
    return system(cmd);
}

static const char *env_value(json_t *env, const char *name)
{
    size_t i, n = strlen(name);
    json_t *v;

    json_array_foreach(env, i, v)
    {
        const char *s = json_string_value(v);
        if (strncmp(s, name, n) == 0 && s[n] == '=')
            return s + n + 1;
    }
    return NULL;
}

Test(render, hostile_values_are_inert_under_bash)
{
    char dir[4096], path[512];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_launch_spec_t *s;
    const sluice_launch_pool_t *p;
    json_t *argv, *env;
    char *script;
    size_t i, k;
    int fd, st;

    case_dir("hostile-none", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    s = sluice_launch_spec(c.launch);
    p = &s->pools[0];
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    fd = open(scratch, O_RDONLY | O_DIRECTORY);
    cr_assert_eq(sluice_staging_write_secrets(fd, c.launch, NULL, render_case_getenv, NULL, &err),
                 SLUICE_OK, "%s", err.text);
    close(fd);
    /* CUDA_HOME (forward_env) as the job has it after setup, not the
     * service's value that render_case_getenv() gives. */
    st = run_script(script, "CUDA_HOME=/opt/cuda-of-the-job");
    free(script);
    cr_assert_eq(st, 0, "the script failed (status %d)", st);

    /* srun's argv ends with the command and its arguments, byte for byte. */
    snprintf(path, sizeof(path), "%s/srun.argv", scratch);
    argv = read_nul_list(path);
    k = json_array_size(argv) - p->n_args - 1;
    cr_assert_str_eq(json_string_value(json_array_get(argv, k)), p->command);
    for (i = 0; i < p->n_args; i++)
        cr_expect_str_eq(json_string_value(json_array_get(argv, k + 1 + i)), p->args[i],
                         "argument %zu", i);
    json_decref(argv);

    /* The step's environment holds the intended values. */
    snprintf(path, sizeof(path), "%s/srun.env", scratch);
    env = read_nul_list(path);
    for (i = 0; i < s->n_env; i++) {
        const char *got = env_value(env, s->env[i].name);
        cr_assert_not_null(got, "%s missing", s->env[i].name);
        cr_expect_str_eq(got, s->env[i].value, "%s", s->env[i].name);
    }
    cr_expect_str_eq(env_value(env, "API_KEY"), sluice_launch_secret_value(c.launch, 0));
    cr_expect_str_eq(env_value(env, "CUDA_HOME"), "/opt/cuda-of-the-job");
    cr_expect_str_eq(env_value(env, "SLUICE_NODE_RANK"), "0");
    cr_expect_str_eq(env_value(env, "NVFL_NNODES"), "1");
    cr_expect_str_eq(env_value(env, "SLUICE_MASTER_ADDR"), "node01");
    cr_expect_null(env_value(env, "EVIL"));
    json_decref(env);

    /* No injected command ran; the secret file is gone; exit file written. */
    snprintf(path, sizeof(path), "%s/PWNED_sub", scratch);
    cr_expect_neq(access(path, F_OK), 0);
    {
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q PWNED", scratch);
        cr_expect_neq(system(cmd), 0, "an injected command ran");
    }
    snprintf(path, sizeof(path), "%s/secrets.env", scratch);
    cr_expect_neq(access(path, F_OK), 0, "secrets.env was not deleted");
    snprintf(path, sizeof(path), "%s/exit/main", scratch);
    {
        char *rc = render_case_slurp(path, NULL);
        cr_assert_not_null(rc);
        cr_expect_str_eq(rc, "0\n");
        free(rc);
    }
    render_case_clear(&c);
}

Test(render, failing_pool_is_named_and_its_code_returned)
{
    char dir[4096], path[512];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *script, *rc;
    int st;

    case_dir("flower-hetjob", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    st = run_script(script, "STUB_RC_supernode=7 SLURM_JOB_NODELIST_HET_GROUP_0=cn5 "
                            "SLURM_JOB_NODELIST_HET_GROUP_1='gpu[3-4]'");
    free(script);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7, "status %d", st);
    snprintf(path, sizeof(path), "%s/exit/supernode", scratch);
    rc = render_case_slurp(path, NULL);
    cr_assert_not_null(rc);
    cr_expect_str_eq(rc, "7\n");
    free(rc);
    /* The script's own record of the first pool that failed. */
    snprintf(path, sizeof(path), "%s/exit/.first", scratch);
    rc = render_case_slurp(path, NULL);
    cr_assert_not_null(rc, "exit/.first was not written");
    cr_expect_str_eq(rc, "supernode 7\n");
    free(rc);
    snprintf(path, sizeof(path), "%s/err.txt", scratch);
    rc = render_case_slurp(path, NULL);
    cr_expect(strstr(rc, "pool supernode failed with exit code 7") != NULL, "%s", rc);
    free(rc);
    render_case_clear(&c);
}

/* An outside cancel (TERM to the batch script) of a workload that handles
 * SIGTERM and exits 1: the pool reads 1, but the trap's exit/.signalled
 * tells that the script was signalled, and no .first is written. */
Test(render, signalled_script_leaves_its_record)
{
    char dir[4096], path[512], cmd[2048];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *script, *rc;
    struct stat st;
    int status;

    case_dir("flower-subprocess", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    install_script(script);
    free(script);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && (env -i STUB_BIN='%s/bin:/usr/bin:/bin' STUB_OUT='%s' "
             "SLURM_JOB_NODELIST='node[01-02]' STUB_TERM_RC=1 /bin/bash job.sh >out.txt "
             "2>err.txt & p=$!; for i in $(seq 400); do [ -f srun.started ] && break; "
             "sleep 0.05; done; kill -TERM $p; wait $p)",
             scratch, scratch, scratch);
    status = system(cmd);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
    snprintf(path, sizeof(path), "%s/exit/supernode", scratch);
    rc = render_case_slurp(path, NULL);
    cr_assert_not_null(rc);
    cr_expect_str_eq(rc, "1\n");
    free(rc);
    snprintf(path, sizeof(path), "%s/exit/.signalled", scratch);
    cr_assert_eq(stat(path, &st), 0, "exit/.signalled was not written");
    snprintf(path, sizeof(path), "%s/exit/.first", scratch);
    cr_assert_neq(stat(path, &st), 0, "exit/.first written while signalled");
    render_case_clear(&c);
}

/* With requeue on, a second run starts with none of the first run's exit
 * files: its own outcome is what the launcher reads. */
Test(render, requeued_run_clears_the_exit_files_of_the_run_before)
{
    char dir[4096], path[512];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *script, *rc;
    struct stat st;
    int status;

    case_dir("flower-requeue", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    snprintf(path, sizeof(path), "%s/exit", scratch);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/exit/supernode", scratch);
    write_file(path, "7\n", 0600);
    snprintf(path, sizeof(path), "%s/exit/.first", scratch);
    write_file(path, "supernode 7\n", 0600);
    snprintf(path, sizeof(path), "%s/exit/.signalled", scratch);
    write_file(path, "", 0600);
    status = run_script(script, "SLURM_RESTART_COUNT=1");
    free(script);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    snprintf(path, sizeof(path), "%s/exit/supernode", scratch);
    rc = render_case_slurp(path, NULL);
    cr_assert_not_null(rc);
    cr_expect_str_eq(rc, "0\n");
    free(rc);
    snprintf(path, sizeof(path), "%s/exit/.first", scratch);
    cr_assert_neq(stat(path, &st), 0, "the first run's exit/.first is still there");
    snprintf(path, sizeof(path), "%s/exit/.signalled", scratch);
    cr_assert_neq(stat(path, &st), 0, "the first run's exit/.signalled is still there");
    render_case_clear(&c);
}

Test(render, requeued_job_refuses_to_run)
{
    char dir[4096];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *script;
    int st;

    case_dir("flower-subprocess", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    st = run_script(script, "SLURM_RESTART_COUNT=1");
    free(script);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == SLUICE_RENDER_EXIT_REQUEUED, "status %d", st);
    render_case_clear(&c);
}

/* Slurm 26.11 sets SLURM_RESTART_COUNT in every batch job, 0 on the first
 * run; 22.05-26.05 leave it unset until a requeue.  Both are a first run
 * for the requeue guard, and the job runs its workload. */
Test(render, restart_count_zero_or_unset_is_a_first_run)
{
    static const char *const envs[] = {"SLURM_RESTART_COUNT=0", NULL};
    char dir[4096];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *script, *errs;
    char path[512];
    int st;

    case_dir("flower-subprocess", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
        st = run_script(script, envs[i]);
        snprintf(path, sizeof(path), "%s/err.txt", scratch);
        errs = render_case_slurp(path, NULL);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d: %s",
                  envs[i] ? envs[i] : "unset", st, errs ? errs : "");
        cr_expect_null(strstr(errs ? errs : "", "requeued"), "%s: %s", envs[i] ? envs[i] : "unset",
                       errs);
        free(errs);
    }
    free(script);
    render_case_clear(&c);
}

Test(render, missing_secret_file_fails_with_its_own_code)
{
    char dir[4096];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *script;
    int st;

    case_dir("hostile-none", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    script = replace_all(c.render->script, c.render->staging_cluster, scratch);
    st = run_script(script, NULL);
    free(script);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == SLUICE_RENDER_EXIT_SECRETS, "status %d", st);
    render_case_clear(&c);
}

Test(render, series_without_constraint_is_refused_naming_pool_and_series)
{
    char dir[4096];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_render_ctx_t ctx;
    sluice_render_t *r = NULL;
    size_t i;

    case_dir("hetjob-trainer-rollout", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    for (i = 0; i < c.cfg->n_gpu_series; i++)
        if (strcmp(c.cfg->gpu_series[i].name, "l40s") == 0)
            c.cfg->gpu_series[i].constraint[0] = '\0';
    memset(&ctx, 0, sizeof(ctx));
    ctx.stat_fn = NULL;
    cr_assert_eq(sluice_render(c.cfg, NULL, c.launch, &ctx, &r, &err), SLUICE_EINVAL);
    cr_assert_null(r);
    cr_expect(strstr(err.text, "rollout") && strstr(err.text, "l40s"), "%s", err.text);
    render_case_clear(&c);
}

/* A case dir in scratch: the study-apptainer site and study, a request
 * with one mount onto `target`. */
static sluice_err render_mount_onto(const char *target, render_case_t *c, sluice_error_t *err)
{
    char src[4096], dir[512], path[640], req[1024];
    char *text;
    static const char *const files[] = {"site.yaml", "study_runtime.yaml"};
    size_t i;

    snprintf(dir, sizeof(dir), "%s/mount-case", scratch);
    mkdir(dir, 0700);
    case_dir("study-apptainer", src, sizeof(src));
    for (i = 0; i < 2; i++) {
        char from[4200];
        snprintf(from, sizeof(from), "%s/%s", src, files[i]);
        text = render_case_slurp(from, NULL);
        cr_assert_not_null(text, "%s", from);
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        write_file(path, text, 0600);
        free(text);
    }
    snprintf(req, sizeof(req),
             "{\"launch_id\": \"atlas-m\", \"site\": \"site-1\", \"study\": \"cancer-atlas\",\n"
             " \"command\": \"/usr/bin/python3\",\n"
             " \"mounts\": [{\"source\": \"/cluster/data/other-images\", \"target\": \"%s\"}],\n"
             " \"pools\": [{\"name\": \"main\"}]}\n",
             target);
    snprintf(path, sizeof(path), "%s/request.json", dir);
    write_file(path, req, 0600);
    return render_case_run(dir, c, err);
}

Test(render, a_mount_target_used_twice_is_refused_even_across_request_and_study)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;

    /* Next to the dataset: both binds are rendered. */
    cr_assert_eq(render_mount_onto("/data/cancer-atlas/extra", &c, &err), SLUICE_OK, "%s",
                 err.text);
    cr_expect_not_null(strstr(c.render->script,
                              "'--bind' '/cluster/data/other-images:/data/cancer-atlas/extra:ro' "
                              "'--bind' '/cluster/data/atlas/images:/data/cancer-atlas/images:ro'"),
                       "%s", c.render->script);
    render_case_clear(&c);

    /* Onto the dataset's target: the later bind would hide the request's
     * mount, so nothing is rendered and the error names the target. */
    sluice_error_clear(&err);
    cr_assert_eq(render_mount_onto("/data/cancer-atlas/images", &c, &err), SLUICE_EINVAL);
    cr_expect_null(c.render);
    cr_expect(strstr(err.text, "study.datasets.images") &&
                  strstr(err.text, "mounts[0]: target /data/cancer-atlas/images is also the "
                                   "target of study.datasets.images"),
              "%s", err.text);
    render_case_clear(&c);

    /* Inside or above the dataset's target: the request's mount would
     * shadow (part of) the study's read-only dataset. */
    sluice_error_clear(&err);
    cr_assert_eq(render_mount_onto("/data/cancer-atlas/images/labels", &c, &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "mounts[0]: target /data/cancer-atlas/images/labels is inside the "
                               "target /data/cancer-atlas/images of study.datasets.images; refused "
                               "(a mount may not shadow a study's mount)");
    render_case_clear(&c);
    sluice_error_clear(&err);
    cr_assert_eq(render_mount_onto("/data/cancer-atlas", &c, &err), SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "mounts[0]: target /data/cancer-atlas is above the target "
                               "/data/cancer-atlas/images of study.datasets.images; refused (a "
                               "mount may not shadow a study's mount)");
    render_case_clear(&c);
}

static void use_scratch_root(render_case_t *c)
{
    free(c->cfg->storage.root);
    c->cfg->storage.root = strdup(scratch);
    free(c->cfg->storage.cluster_root);
    c->cfg->storage.cluster_root = strdup("/cluster/x");
}

static sluice_render_t *render_again(render_case_t *c)
{
    sluice_render_ctx_t ctx;
    sluice_render_t *r = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(&ctx, 0, sizeof(ctx));
    ctx.attempt = 1;
    cr_assert_eq(sluice_render(c->cfg, NULL, c->launch, &ctx, &r, &err), SLUICE_OK, "%s", err.text);
    return r;
}

Test(render, staging_is_private_and_refuses_unknown_launch_dirs)
{
    char dir[4096], path[1024];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_render_t *r;
    struct stat sb;
    int fd = -1;

    case_dir("flower-subprocess", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    use_scratch_root(&c);
    r = render_again(&c);
    cr_assert_eq(sluice_staging_create(c.cfg, r, false, &fd, &err), SLUICE_OK, "%s", err.text);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(stat(r->staging_service, &sb), 0);
    cr_expect_eq(sb.st_mode & 0777, 0700);
    snprintf(path, sizeof(path), "%s/job.sh", r->staging_service);
    cr_assert_eq(stat(path, &sb), 0);
    cr_expect_eq(sb.st_mode & 0777, 0600);
    /* Again, for a launch the store does not know: refused, naming it. */
    cr_assert_eq(sluice_staging_create(c.cfg, r, false, NULL, &err), SLUICE_ECONFLICT);
    cr_expect(strstr(err.text, r->sha8) != NULL, "%s", err.text);
    /* Known launch, same attempt: the attempt directory exists. */
    cr_assert_eq(sluice_staging_create(c.cfg, r, true, NULL, &err), SLUICE_ECONFLICT);
    sluice_render_free(r);
    render_case_clear(&c);
}

/* The launcher's staging hooks: `sync` syncs the storage file system once
 * (the hooks' prepare leaves its files to it); a storage root that is gone
 * is an error naming it. */
Test(render, staging_ops_sync_the_storage_root_and_name_it_on_failure)
{
    char dir[4096];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_staging_ops_t ops;
    sluice_store_t *store = NULL;

    case_dir("flower-subprocess", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    use_scratch_root(&c);
    cr_assert_eq(sluice_store_open(&store, scratch, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_ops_new(c.cfg, store, &ops, &err), SLUICE_OK, "%s", err.text);
    cr_assert_not_null(ops.sync);
    cr_assert_eq(ops.sync(ops.arg, &err), SLUICE_OK, "%s", err.text);
    free(c.cfg->storage.root);
    c.cfg->storage.root = strdup("/nonexistent/sluice-storage");
    cr_assert_eq(ops.sync(ops.arg, &err), SLUICE_EIO);
    cr_expect(strstr(err.text, "/nonexistent/sluice-storage") != NULL, "%s", err.text);
    sluice_staging_ops_free(&ops);
    sluice_store_close(store);
    render_case_clear(&c);
}

Test(render, staging_refuses_symlinks)
{
    char dir[4096], link[1024], target[1024];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_render_t *r;

    case_dir("flower-subprocess", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    use_scratch_root(&c);
    r = render_again(&c);
    snprintf(target, sizeof(target), "%s/elsewhere", scratch);
    cr_assert_eq(mkdir(target, 0700), 0);
    snprintf(link, sizeof(link), "%s/site-1", scratch);
    cr_assert_eq(symlink(target, link), 0);
    cr_assert_neq(sluice_staging_create(c.cfg, r, true, NULL, &err), SLUICE_OK);
    cr_expect(strstr(err.text, "symlink") != NULL, "%s", err.text);
    sluice_render_free(r);
    render_case_clear(&c);
}

Test(render, secrets_are_written_0600_once_and_never_rendered)
{
    char dir[4096], path[1024];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_render_t *r;
    json_t *j, *body = NULL;
    char *text, *file;
    const char *secret;
    struct stat sb;
    int fd = -1;

    case_dir("hostile-none", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    secret = sluice_launch_secret_value(c.launch, 0);
    cr_assert_not_null(secret);
    j = sluice_render_to_json(c.render);
    text = json_dumps(j, 0);
    cr_expect_null(strstr(text, "s3cr3t"));
    cr_expect_null(strstr(c.render->script, "s3cr3t"));
    free(text);
    json_decref(j);
    cr_assert_eq(
        sluice_rest_submit_body(SLUICE_REST_V0043, c.render->jobs, c.render->n_jobs, &body, &err),
        SLUICE_OK);
    text = json_dumps(body, 0);
    cr_expect_null(strstr(text, "s3cr3t"));
    free(text);
    json_decref(body);

    use_scratch_root(&c);
    r = render_again(&c);
    cr_assert_eq(sluice_staging_create(c.cfg, r, false, &fd, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_staging_write_secrets(fd, c.launch, NULL, render_case_getenv, NULL, &err),
                 SLUICE_OK, "%s", err.text);
    snprintf(path, sizeof(path), "%s/secrets.env", r->staging_service);
    cr_assert_eq(lstat(path, &sb), 0);
    cr_expect_eq(sb.st_mode & 0777, 0600);
    file = render_case_slurp(path, NULL);
    cr_expect(strstr(file, "API_KEY=") != NULL);
    free(file);
    /* O_EXCL: a second write fails, and the error carries no value. */
    cr_assert_neq(sluice_staging_write_secrets(fd, c.launch, NULL, render_case_getenv, NULL, &err),
                  SLUICE_OK);
    cr_expect_null(strstr(err.text, "s3cr3t"));
    close(fd);
    sluice_render_free(r);
    render_case_clear(&c);
}

Test(render, master_port_is_in_range_and_deterministic)
{
    char dir[4096];
    render_case_t c, d;
    sluice_error_t err = SLUICE_ERROR_INIT;

    case_dir("nvflare-multinode", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(render_case_run(dir, &d, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(c.render->master_port, d.render->master_port);
    cr_expect_geq(c.render->master_port, 29400);
    cr_expect_leq(c.render->master_port, 30399);
    render_case_clear(&c);
    render_case_clear(&d);
}

/* Every job of a render carries the marker's name and comment
 * (base/marker.c) and the render its sha8. */
Test(render, job_name_follows_the_marker_rule)
{
    char dir[4096];
    char name[200], comment[200], hex[MARKER_SHA8_SIZE];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;

    case_dir("nvflare-multinode", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    marker_sha8(c.render->launch_id, hex);
    cr_expect_str_eq(c.render->sha8, hex);
    marker_job_name(name, sizeof(name), c.cfg->job_name_prefix, sluice_launch_spec(c.launch)->site,
                    c.render->launch_id, c.render->attempt);
    marker_comment(comment, sizeof(comment), c.render->launch_id, c.render->attempt);
    cr_assert_gt(c.render->n_jobs, 0);
    for (size_t k = 0; k < c.render->n_jobs; k++) {
        cr_expect_str_eq(c.render->jobs[k].name, name);
        cr_expect_str_eq(c.render->jobs[k].comment, comment);
    }
    render_case_clear(&c);
}

/* ---- commands and PATH of the job ------------------------------------------ */

/* A case directory in scratch: `request` copied from a golden case, the
 * site of nvflare-multinode with `extra` (job_launcher lines) added. */
static void make_case(const char *request_case, const char *extra, char *out, size_t n)
{
    char from[4096], path[600];
    char *site, *req, *split, *text;
    size_t len;

    snprintf(out, n, "%s/case", scratch);
    mkdir(out, 0700);
    case_dir("nvflare-multinode", from, sizeof(from));
    strncat(from, "/site.yaml", sizeof(from) - strlen(from) - 1);
    site = render_case_slurp(from, NULL);
    cr_assert_not_null(site);
    split = strstr(site, "gpu_series:");
    cr_assert_not_null(split);
    len = strlen(site) + strlen(extra) + 1;
    text = malloc(len);
    snprintf(text, len, "%.*s%s%s", (int)(split - site), site, extra, split);
    snprintf(path, sizeof(path), "%s/site.yaml", out);
    write_file(path, text, 0600);
    free(text);
    free(site);
    case_dir(request_case, from, sizeof(from));
    strncat(from, "/request.json", sizeof(from) - strlen(from) - 1);
    req = render_case_slurp(from, NULL);
    cr_assert_not_null(req);
    snprintf(path, sizeof(path), "%s/request.json", out);
    write_file(path, req, 0600);
    free(req);
}

static const char *jobdesc_env(const sluice_jobdesc_t *d, const char *name)
{
    size_t i;

    for (i = 0; i < d->n_env; i++)
        if (strcmp(d->env[i].name, name) == 0)
            return d->env[i].value;
    return NULL;
}

/* The bug: Slurm under /opt/slurm/bin and an older srun first on the
 * default PATH.  The job must run the configured srun, whatever PATH holds. */
Test(render, configured_srun_is_the_one_that_runs)
{
    char dir[4096], good[512], path[512], line[600];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *s1, *s2, *s3;
    int st;

    case_dir("prefix-srun-none", dir, sizeof(dir));
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    snprintf(path, sizeof(path), "%s/opt", scratch);
    mkdir(path, 0700);
    snprintf(good, sizeof(good), "%s/opt/srun", scratch);
    write_file(good,
               "#!/bin/bash\n"
               "printf '%s\\0' \"$@\" >\"$STUB_OUT/prefix-srun.argv\"\n"
               "exit 0\n",
               0700);
    s1 = replace_all(c.render->script, c.render->staging_cluster, scratch);
    s2 = replace_all(s1, "'/opt/slurm/bin/srun'", good);
    /* run_script() puts its stubs (an srun among them) first on PATH. */
    s3 = replace_all(s2, "export PATH='/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin'",
                     "export PATH='/usr/local/bin:/usr/bin:/bin'");
    st = run_script(s3, NULL);
    free(s1);
    free(s2);
    free(s3);
    cr_assert_eq(st, 0, "the script failed (status %d)", st);
    snprintf(path, sizeof(path), "%s/prefix-srun.argv", scratch);
    cr_expect_eq(access(path, F_OK), 0, "the configured srun did not run");
    snprintf(path, sizeof(path), "%s/srun.argv", scratch);
    cr_expect_neq(access(path, F_OK), 0, "the srun found on PATH ran");

    /* Its directory leads the job's PATH, in the script and the REST body. */
    snprintf(line, sizeof(line), "export PATH='/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin' ");
    cr_expect_not_null(strstr(c.render->script, line));
    cr_expect_str_eq(jobdesc_env(&c.render->jobs[0], "PATH"),
                     "/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin");
    render_case_clear(&c);
}

Test(render, commands_and_path_follow_the_site)
{
    static const struct {
        const char *request;
        const char *extra;
        const char *in_script[3];
        const char *not_in_script;
        const char *path;
    } cases[] = {
        /* singularity is apptainer's compatibility name */
        {"nvflare-client",
         "  executables:\n    singularity: /opt/sing/bin/singularity\n",
         {"'/opt/sing/bin/singularity' 'exec'", " srun --nodes=1", NULL},
         "'apptainer' 'exec'",
         "/usr/local/bin:/usr/bin:/bin"},
        /* apptainer wins over singularity */
        {"nvflare-client",
         "  executables:\n    singularity: /opt/sing/bin/singularity\n"
         "    apptainer: /opt/app/bin/apptainer\n",
         {"'/opt/app/bin/apptainer' 'exec'", NULL, NULL},
         "singularity",
         "/usr/local/bin:/usr/bin:/bin"},
        /* srun's directory already on the default PATH: PATH unchanged */
        {"flower-subprocess",
         "  executables:\n    srun: /usr/bin/srun\n",
         {"sluice_step supernode '/usr/bin/srun' --nodes=1", NULL, NULL},
         NULL,
         "/usr/local/bin:/usr/bin:/bin"},
        /* job_path wins; srun's directory is not added to it */
        {"flower-subprocess",
         "  executables:\n    srun: /opt/slurm/bin/srun\n  job_path: /site/bin:/bin\n",
         {"export PATH='/site/bin:/bin' LANG='C.UTF-8'\n", "'/opt/slurm/bin/srun'", NULL},
         "/opt/slurm/bin:",
         "/site/bin:/bin"},
        /* enroot is run by pyxis inside slurmstepd, never by the script */
        {"hetjob-trainer-rollout",
         "  executables:\n    enroot: /opt/enroot/bin/enroot\n",
         {" srun --het-group=0", NULL, NULL},
         "/opt/enroot",
         "/usr/local/bin:/usr/bin:/bin"},
    };
    size_t i, k;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char dir[600];
        render_case_t c;
        sluice_error_t err = SLUICE_ERROR_INIT;
        char want[200];

        make_case(cases[i].request, cases[i].extra, dir, sizeof(dir));
        cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "case %zu: %s", i, err.text);
        for (k = 0; k < 3 && cases[i].in_script[k]; k++)
            cr_expect_not_null(strstr(c.render->script, cases[i].in_script[k]), "case %zu: %s", i,
                               cases[i].in_script[k]);
        if (cases[i].not_in_script)
            cr_expect_null(strstr(c.render->script, cases[i].not_in_script), "case %zu: %s", i,
                           cases[i].not_in_script);
        snprintf(want, sizeof(want), "export PATH='%s' LANG=", cases[i].path);
        cr_expect_not_null(strstr(c.render->script, want), "case %zu: %s", i, want);
        for (k = 0; k < c.render->n_jobs; k++)
            cr_expect_str_eq(jobdesc_env(&c.render->jobs[k], "PATH"), cases[i].path,
                             "case %zu, job %zu", i, k);
        render_case_clear(&c);
    }
}

Test(render, probe_job_uses_the_site_commands_and_a_dot_staging_dir)
{
    char dir[600];
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_render_t *r = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char site_path[700];
    const sluice_jobdesc_t *d;

    make_case("nvflare-client",
              "  executables:\n    srun: /opt/slurm/bin/srun\n"
              "    singularity: /opt/sing/bin/singularity\n",
              dir, sizeof(dir));
    snprintf(site_path, sizeof(site_path), "%s/site.yaml", dir);
    o.path = site_path;
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(sluice_render_probe(cfg, "Bad/Tag", &r, &err), SLUICE_EINVAL);
    cr_assert_null(r);
    cr_assert_eq(sluice_render_probe(cfg, "0a1b2c3d", &r, &err), SLUICE_OK, "%s", err.text);
    cr_expect_str_eq(r->sha8, ".probe-0a1b2c3d");
    cr_expect_str_eq(r->staging_service, "/srv/sluice/site-1/.probe-0a1b2c3d/attempt-1");
    cr_expect_str_eq(r->staging_cluster, "/cluster/sluice/site-1/.probe-0a1b2c3d/attempt-1");
    cr_assert_eq(r->n_jobs, 1);
    d = &r->jobs[0];
    cr_expect_str_eq(d->name, "sluice-site-1-probe-0a1b2c3d");
    cr_expect_eq(d->nodes, 1);
    cr_expect_eq(d->tasks_per_node, 1);
    cr_expect_eq(d->time_limit, 5, "5 minutes, under the site's 12 hours");
    cr_expect_str_eq(d->partition, "gpu");
    cr_expect_str_eq(jobdesc_env(d, "PATH"), "/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin");
    cr_expect_str_eq(d->std_out, "/cluster/sluice/site-1/.probe-0a1b2c3d/attempt-1/stdout.log");
    cr_expect_not_null(strstr(d->script, "\nsluice_srun='/opt/slurm/bin/srun'\n"));
    cr_expect_not_null(strstr(d->script, "\nsluice_runtime='/opt/sing/bin/singularity'\n"));
    cr_expect_not_null(strstr(d->script,
                              "export PATH='/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin' "
                              "LANG='C.UTF-8'\n"));
    sluice_render_free(r);
    sluice_config_free(cfg);
}
