/* SPDX-License-Identifier: Apache-2.0 */
/* test_render_container.c - rendered scripts run under bash with stand-ins
 * for Slurm and apptainer: what reaches the workload inside the
 * "container" (the task's GPU and Slurm variables, forward_env as setup
 * left it), what the ranks of a node group get, where an
 * application-owned fan-out starts; and the render-time rules of the
 * NVFlare launcher (parent URL, workspace mounts, site keys).
 *
 * The srun stand-in strips srun's options, sets what slurmstepd sets for a
 * task (SLURM_PROCID, SLURM_NODEID, CUDA_VISIBLE_DEVICES, ...) and runs the
 * command; apptainer is tests/e2e/lib/apptainer-standin, which applies
 * --cleanenv as apptainer does (only APPTAINERENV_* reaches the command). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "render_case.h"
#include "scratch.h"

static char scratch[256];

static void setup(void)
{
    scratch_make(scratch, sizeof(scratch), "render-ct");
}

static void teardown(void)
{
    scratch_remove(scratch);
}

TestSuite(render_container, .init = setup, .fini = teardown, .timeout = 60);

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
    size_t nf = strlen(from), nt = strlen(to), n = 0, count = 0;
    const char *p, *q = s;
    char *o;

    for (p = s; (p = strstr(p, from)) != NULL; p += nf)
        count++;
    o = malloc(strlen(s) + count * (nt + 1) + 1);
    cr_assert_not_null(o);
    while ((p = strstr(q, from)) != NULL) {
        memcpy(o + n, q, (size_t)(p - q));
        n += (size_t)(p - q);
        memcpy(o + n, to, nt);
        n += nt;
        q = p + nf;
    }
    strcpy(o + n, q);
    return o;
}

/* The example site (deploy/examples/site-render.yaml) with `from`
 * replaced by `to` (both may be NULL), and job images of the scratch
 * directory allowed (policy.allowed_images, BYOC). */
static char *site_text(const char *from, const char *to)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[4096], images[700];
    char *t, *o;

    cr_assert_not_null(src);
    snprintf(path, sizeof(path), "%s/deploy/examples/site-render.yaml", src);
    o = render_case_slurp(path, NULL);
    cr_assert_not_null(o, "%s", path);
    snprintf(images, sizeof(images), "allowed_images: [/srv/images/, %s/]", scratch);
    cr_assert_not_null(strstr(o, "allowed_images: [/srv/images/]"));
    t = replace_all(o, "allowed_images: [/srv/images/]", images);
    free(o);
    if (!from)
        return t;
    cr_assert_not_null(strstr(t, from), "site-render.yaml has no \"%s\"", from);
    o = replace_all(t, from, to);
    free(t);
    return o;
}

/* <scratch>/case with site.yaml and request.json (and study_runtime.yaml). */
static void
write_case(const char *site, const char *request, const char *study, char *dir, size_t n)
{
    char path[600];

    snprintf(dir, n, "%s/case", scratch);
    mkdir(dir, 0700);
    snprintf(path, sizeof(path), "%s/site.yaml", dir);
    write_file(path, site, 0600);
    snprintf(path, sizeof(path), "%s/request.json", dir);
    write_file(path, request, 0600);
    if (study) {
        snprintf(path, sizeof(path), "%s/study_runtime.yaml", dir);
        write_file(path, study, 0600);
    }
}

/* srun: record argv, drop srun's options (--chdir DIR is followed), set
 * what slurmstepd sets for the tasks and run them: STUB_RANKS tasks (rank
 * N's stdout in rankN.out), else one task in the foreground. */
static const char exec_srun[] =
    "#!/bin/bash\n"
    "printf '%s\\0' \"$@\" >\"$STUB_OUT/srun.argv\"\n"
    "while [ $# -gt 0 ]; do\n"
    "    case $1 in\n"
    "        --chdir) cd \"$2\"; shift 2 ;;\n"
    "        --*) shift ;;\n"
    "        *) break ;;\n"
    "    esac\n"
    "done\n"
    "export SLURM_STEP_ID=0 SLURMD_NODENAME=node01 SLURM_LOCALID=0\n"
    "if [ -n \"${STUB_GPUS:-}\" ]; then\n"
    "    export CUDA_VISIBLE_DEVICES=$STUB_GPUS GPU_DEVICE_ORDINAL=$STUB_GPUS\n"
    "fi\n"
    "if [ -n \"${STUB_RANKS:-}\" ]; then\n"
    "    rc=0\n"
    "    for ((i = 0; i < STUB_RANKS; i++)); do\n"
    "        SLURM_NODEID=$i SLURM_PROCID=$i \"$@\" >\"$STUB_OUT/rank$i.out\" || rc=$?\n"
    "    done\n"
    "    exit $rc\n"
    "fi\n"
    "export SLURM_NODEID=0 SLURM_PROCID=0\n"
    "exec \"$@\"\n";

/* Install the stand-ins and the script (staging = scratch, PATH = the
 * stand-ins first), run it with `env` (batch environment) and return its
 * wait status. */
static int run_with_standins(const char *script, const char *staging, const char *env)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[600], cmd[4096];
    char *s1, *s2, *standin;

    snprintf(path, sizeof(path), "%s/bin", scratch);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/bin/srun", scratch);
    write_file(path, exec_srun, 0700);
    snprintf(path, sizeof(path), "%s/bin/module", scratch);
    write_file(path, "#!/bin/sh\nexit 0\n", 0700);
    snprintf(path, sizeof(path), "%s/bin/scontrol", scratch);
    write_file(path, "#!/bin/sh\necho node01\n", 0700);
    snprintf(cmd, sizeof(cmd), "%s/tests/e2e/lib/apptainer-standin", src);
    standin = render_case_slurp(cmd, NULL);
    cr_assert_not_null(standin, "%s", cmd);
    snprintf(path, sizeof(path), "%s/bin/apptainer", scratch);
    write_file(path, standin, 0700);
    free(standin);
    s1 = replace_all(script, staging, scratch);
    s2 = replace_all(s1, "export PATH='/usr/local/bin:/usr/bin:/bin'", "export PATH=\"$STUB_BIN\"");
    snprintf(path, sizeof(path), "%s/job.sh", scratch);
    write_file(path, s2, 0700);
    free(s1);
    free(s2);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && env -i STUB_BIN='%s/bin:/usr/bin:/bin' STUB_OUT='%s' "
             "SLURM_JOB_NODELIST='node[01-02]' SLURM_JOB_ID=77 %s /bin/bash job.sh "
             ">out.txt 2>err.txt",
             scratch, scratch, scratch, env ? env : "");
    return system(cmd);
}

/* The value of NAME in a file of NAME=value lines (new string), or NULL. */
static char *env_line(const char *file, const char *name)
{
    char path[600];
    char *text, *p, *end, *v = NULL;
    size_t n = strlen(name);

    snprintf(path, sizeof(path), "%s/%s", scratch, file);
    text = render_case_slurp(path, NULL);
    cr_assert_not_null(text, "%s was not written", path);
    for (p = text; p && *p; p = end ? end + 1 : NULL) {
        end = strchr(p, '\n');
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            v = end ? strndup(p + n + 1, (size_t)(end - p - n - 1)) : strdup(p + n + 1);
            break;
        }
    }
    free(text);
    return v;
}

static void expect_env(const char *file, const char *name, const char *want)
{
    char *got = env_line(file, name);

    if (want) {
        cr_expect_not_null(got, "%s: %s is missing", file, name);
        if (got)
            cr_expect_str_eq(got, want, "%s: %s", file, name);
    } else {
        cr_expect_null(got, "%s: %s is there (%s)", file, name, got ? got : "");
    }
    free(got);
}

static void show_err(void)
{
    char path[600];
    char *e;

    snprintf(path, sizeof(path), "%s/err.txt", scratch);
    e = render_case_slurp(path, NULL);
    cr_log_error("stderr of the script: %s", e ? e : "(none)");
    free(e);
}

/* The gap: --cleanenv dropped what Slurm sets for the task, and forward_env
 * carried the service's value, exported before setup.  Now the task's GPU
 * and Slurm variables and the value setup left reach the container, and
 * nothing setup put into APPTAINERENV_* does. */
Test(render_container, apptainer_task_sees_slurm_gpus_and_forward_env_after_setup)
{
    char dir[600], img[600], req[1400];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *site;
    int st;

    snprintf(img, sizeof(img), "%s/img.sif", scratch);
    write_file(img, "not a SIF\n", 0644);
    site = site_text("    module load cuda\n",
                     "    module load cuda\n"
                     "    export CUDA_HOME=/opt/cuda-from-setup\n"
                     "    export APPTAINERENV_SETUP_LEAK=1 APPTAINER_BIND=/etc\n");
    snprintf(
        req, sizeof(req),
        "{\"launch_id\": \"gpu-env-1\", \"site\": \"site-1\", \"profile\": \"apptainer\",\n"
        " \"image\": \"%s\", \"command\": \"/bin/sh\",\n"
        " \"args\": [\"-c\", \"env >\\\"$SLUICE_STAGING/inner.env\\\"\"],\n"
        " \"pools\": [{\"name\": \"main\", \"gpu_series\": \"a100\", \"gpus_per_node\": 1}]}\n",
        img);
    write_case(site, req, NULL, dir, sizeof(dir));
    free(site);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    st = run_with_standins(c.render->script, c.render->staging_cluster,
                           "STUB_GPUS=1 LEAK_FROM_BATCH=1");
    if (st != 0)
        show_err();
    cr_assert_eq(st, 0, "the script failed (status %d)", st);
    /* what Slurm set for the task */
    expect_env("inner.env", "CUDA_VISIBLE_DEVICES", "1");
    expect_env("inner.env", "GPU_DEVICE_ORDINAL", "1");
    expect_env("inner.env", "SLURM_PROCID", "0");
    expect_env("inner.env", "SLURM_STEP_ID", "0");
    expect_env("inner.env", "SLURM_JOB_ID", "77");
    expect_env("inner.env", "SLURMD_NODENAME", "node01");
    /* forward_env: setup's value, not the service's (/usr/local/cuda-12.4) */
    expect_env("inner.env", "CUDA_HOME", "/opt/cuda-from-setup");
    expect_env("inner.env", "SLUICE_NODE_RANK", "0");
    expect_env("inner.env", "SLUICE_LAUNCH_ID", "gpu-env-1");
    /* nothing else of the batch environment, nothing setup mirrored */
    expect_env("inner.env", "LEAK_FROM_BATCH", NULL);
    expect_env("inner.env", "SETUP_LEAK", NULL);
    render_case_clear(&c);
}

/* A pool without GPUs gets no GPU variable, even when the batch
 * environment mirrored one (a stale APPTAINERENV_CUDA_VISIBLE_DEVICES). */
Test(render_container, apptainer_task_without_gpus_sees_none)
{
    char dir[600], img[600], req[1400];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *site;
    int st;

    snprintf(img, sizeof(img), "%s/img.sif", scratch);
    write_file(img, "not a SIF\n", 0644);
    site = site_text(NULL, NULL);
    snprintf(req, sizeof(req),
             "{\"launch_id\": \"cpu-env-1\", \"site\": \"site-1\", \"profile\": \"apptainer\",\n"
             " \"image\": \"%s\", \"command\": \"/bin/sh\",\n"
             " \"args\": [\"-c\", \"env >\\\"$SLUICE_STAGING/inner.env\\\"\"],\n"
             " \"pools\": [{\"name\": \"main\"}]}\n",
             img);
    write_case(site, req, NULL, dir, sizeof(dir));
    free(site);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    cr_expect_null(strstr(c.render->script, "'--nv'"));
    st = run_with_standins(c.render->script, c.render->staging_cluster,
                           "APPTAINERENV_CUDA_VISIBLE_DEVICES=3");
    if (st != 0)
        show_err();
    cr_assert_eq(st, 0, "the script failed (status %d)", st);
    expect_env("inner.env", "CUDA_VISIBLE_DEVICES", NULL);
    expect_env("inner.env", "SLURM_PROCID", "0");
    render_case_clear(&c);
}

/* A node group (additional_node_command): rank 0 keeps the request's own
 * secrets and NVFlare's job credentials; the other ranks do not, and get
 * NVFlare's Cell API bootstrap instead.  secret_env (the site's and the
 * study's kind of secret) reaches every rank, as in NVFlare. */
Test(render_container, node_group_credentials_stay_on_rank_0)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char dir[4096];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int fd, st;

    snprintf(dir, sizeof(dir), "%s/tests/golden/render/nvflare-multinode-credentials", src);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    fd = open(scratch, O_RDONLY | O_DIRECTORY);
    cr_assert_eq(sluice_staging_write_secrets(fd, c.launch, NULL, render_case_getenv, NULL, &err),
                 SLUICE_OK, "%s", err.text);
    close(fd);
    st = run_with_standins(c.render->script, c.render->staging_cluster, "STUB_RANKS=2");
    if (st != 0)
        show_err();
    cr_assert_eq(st, 0, "the script failed (status %d)", st);
    expect_env("rank0.out", "NVFLARE_JOB_AUTH_TOKEN", "tok-rank0-only");
    expect_env("rank0.out", "API_KEY", "key-rank0-only");
    expect_env("rank0.out", "DB_PASSWORD", "p@ss'w0rd$(touch /tmp/pwned)");
    expect_env("rank0.out", "NVFL_NODE_RANK", "0");
    expect_env("rank0.out", "CLIENT_API_TYPE", NULL);
    expect_env("rank1.out", "NVFLARE_JOB_AUTH_TOKEN", NULL);
    expect_env("rank1.out", "API_KEY", NULL);
    expect_env("rank1.out", "DB_PASSWORD", "p@ss'w0rd$(touch /tmp/pwned)");
    expect_env("rank1.out", "NVFL_NODE_RANK", "1");
    expect_env("rank1.out", "CLIENT_API_TYPE", "CELL_API");
    expect_env("rank1.out", "NVFLARE_CLIENT_API_BOOTSTRAP", "client_api_bootstrap_1.json");
    render_case_clear(&c);
}

/* Application-owned fan-out (nodes > 1, no additional_node_command): the
 * command runs in the batch step itself, where its own srun gets the whole
 * allocation; no step of sluice holds the nodes. */
Test(render_container, application_owned_fan_out_runs_in_the_batch_step)
{
    char dir[600], req[1400], run[600], path[700];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *site;
    int st;

    snprintf(run, sizeof(run), "%s/run", scratch);
    mkdir(run, 0700);
    site = site_text(NULL, NULL);
    snprintf(req, sizeof(req),
             "{\"launch_id\": \"fanout-1\", \"site\": \"site-1\", \"profile\": \"none\",\n"
             " \"workdir\": \"%s\", \"command\": \"/bin/sh\",\n"
             " \"args\": [\"-c\", \"{ pwd; echo \\\"$SLURM_JOB_NODELIST\\\"; } "
             ">\\\"$SLUICE_STAGING/direct.out\\\"\"],\n"
             " \"pools\": [{\"name\": \"main\", \"nodes\": 2}]}\n",
             run);
    write_case(site, req, NULL, dir, sizeof(dir));
    free(site);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    st = run_with_standins(c.render->script, c.render->staging_cluster, NULL);
    if (st != 0)
        show_err();
    cr_assert_eq(st, 0, "the script failed (status %d)", st);
    snprintf(path, sizeof(path), "%s/srun.argv", scratch);
    cr_expect_neq(access(path, F_OK), 0, "srun ran: the fan-out competes with a step of sluice");
    snprintf(path, sizeof(path), "%s/direct.out", scratch);
    {
        char *out = render_case_slurp(path, NULL), want[800];
        cr_assert_not_null(out, "the command did not run");
        snprintf(want, sizeof(want), "%s\nnode[01-02]\n", run);
        cr_expect_str_eq(out, want);
        free(out);
    }
    render_case_clear(&c);
}

/* NVFlare's parent URL: tcp:// and stcp:// on internal_port get
 * parent_host (bracketed when IPv6); anything else is left alone. */
Test(render_container, parent_url_gets_parent_host_only_where_nvflare_rewrites_it)
{
    static const struct {
        const char *arg, *want;
    } cases[] = {
        {"tcp://localhost:8102", "tcp://[fd00::5]:8102"},
        {"stcp://127.0.0.1:8102/cell?x=1", "stcp://[fd00::5]:8102/cell?x=1"},
        {"tcp://[::1]:8102", "tcp://[fd00::5]:8102"},
        {"tcp://localhost:9999", "tcp://localhost:9999"},
        {"tcp://user@localhost:8102", "tcp://user@localhost:8102"},
        {"grpc://localhost:8102", "grpc://localhost:8102"},
        {"shared-file://0/lustre/cellnet", "shared-file://0/lustre/cellnet"},
        {"tcp://localhost", "tcp://localhost"},
    };
    char dir[600], req[2000], want[200];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *site;
    size_t i, n = 0;

    site = site_text("  parent_host: nvflare-site1.internal\n", "  parent_host: fd00::5\n");
    n = (size_t)snprintf(req, sizeof(req),
                         "{\"launch_id\": \"url-1\", \"site\": \"site-1\", \"profile\": \"none\", "
                         "\"args\": [\"-m\", \"w\"");
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        n += (size_t)snprintf(req + n, sizeof(req) - n, ", \"%s\"", cases[i].arg);
    snprintf(req + n, sizeof(req) - n, "], \"resource_spec\": {\"num_of_gpus\": 0}}\n");
    write_case(site, req, NULL, dir, sizeof(dir));
    free(site);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(want, sizeof(want), " '%s'", cases[i].want);
        cr_expect_not_null(strstr(c.render->script, want), "case %zu: %s", i, want);
    }
    render_case_clear(&c);

    /* The native form keeps its arguments as sent. */
    site = site_text(NULL, NULL);
    write_case(site,
               "{\"launch_id\": \"url-2\", \"site\": \"site-1\", \"profile\": \"none\", "
               "\"command\": \"/bin/w\", \"args\": [\"tcp://localhost:8102\"], "
               "\"pools\": [{\"name\": \"main\"}]}\n",
               NULL, dir, sizeof(dir));
    free(site);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    cr_expect_not_null(strstr(c.render->script, " 'tcp://localhost:8102'"));
    render_case_clear(&c);
}

/* startup/ and local/ are bound from their real paths (the seed's
 * os.path.realpath), at their place in the workspace. */
Test(render_container, workspace_mounts_use_the_real_startup_and_local)
{
    char dir[600], ws[400], kit[400], path[700], want[1600], site_ws[500];
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *site;

    snprintf(ws, sizeof(ws), "%s/ws", scratch);
    snprintf(kit, sizeof(kit), "%s/kit-v2", scratch);
    cr_assert_eq(mkdir(ws, 0700), 0);
    cr_assert_eq(mkdir(kit, 0700), 0);
    snprintf(path, sizeof(path), "%s/local", ws);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/startup", ws);
    cr_assert_eq(symlink(kit, path), 0);
    snprintf(site_ws, sizeof(site_ws), "  workspace: %s\n", ws);
    site = site_text("  workspace: /lustre/proj123/nvflare/site-1\n", site_ws);
    write_case(site,
               "{\"launch_id\": \"ws-1\", \"site\": \"site-1\", \"args\": [\"-m\", \"w\"], "
               "\"resource_spec\": {\"num_of_gpus\": 0}}\n",
               NULL, dir, sizeof(dir));
    free(site);
    cr_assert_eq(render_case_run(dir, &c, &err), SLUICE_OK, "%s", err.text);
    snprintf(want, sizeof(want),
             "'--bind' '%s/sandbox:%s:rw' '--bind' '%s:%s/startup:ro' '--bind' "
             "'%s/local:%s/local:ro' '--bind' '/etc/resolv.conf:/etc/resolv.conf:ro'",
             c.render->staging_cluster, ws, kit, ws, ws, ws);
    cr_expect_not_null(strstr(c.render->script, want), "%s\nin\n%s", want, c.render->script);
    cr_expect_not_null(strstr(c.render->script, "mkdir -p -- \"$SLUICE_STAGING/sandbox\"\n"));
    render_case_clear(&c);
}

/* The new site and study keys refuse bad values, naming the key. */
Test(render_container, site_and_study_keys_are_checked)
{
    static const struct {
        const char *from, *to, *want;
    } cases[] = {
        {"  multi_node_port_range: \"29400-30399\"\n",
         "  multi_node_port_range: \"29400-30399\"\n  gpu_vendor: intel\n",
         "job_launcher.gpu_vendor: expected nvidia, amd or none"},
        {"    gpus_per_node: 8\n  l40s:", "    gpus_per_node: 8\n    gpu_vendor: arm\n  l40s:",
         "gpu_series.a100.gpu_vendor: expected nvidia, amd or none"},
        {"  workspace: /lustre/proj123/nvflare/site-1\n", "  workspace: lustre/ws\n",
         "job_launcher.workspace: expected an absolute path"},
    };
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *site = site_text(cases[i].from, cases[i].to);
        o.text = site;
        o.text_len = strlen(site);
        o.text_name = "site.yaml";
        cr_expect_eq(sluice_config_load(&o, &cfg, &err), SLUICE_ECONFIG, "case %zu", i);
        cr_expect_not_null(strstr(err.text, cases[i].want), "case %zu: %s", i, err.text);
        sluice_config_free(cfg);
        cfg = NULL;
        free(site);
    }
    {
        static const char bad[] = "format_version: 2\nstudies:\n  s:\n    slurm:\n"
                                  "      python_path: venv/bin/python\n";
        static const char good[] = "format_version: 2\nstudies:\n  s:\n    slurm:\n"
                                   "      python_path: /opt/venv/bin/python\n";
        cr_expect_eq(sluice_study_runtime_load("study.yaml", bad, strlen(bad), NULL, &rt, &err),
                     SLUICE_ECONFIG);
        cr_expect_str_eq(err.text,
                         "study.yaml:5:20: studies.s.slurm.python_path: expected an absolute path");
        cr_assert_eq(sluice_study_runtime_load("study.yaml", good, strlen(good), NULL, &rt, &err),
                     SLUICE_OK, "%s", err.text);
        cr_expect_str_eq(sluice_study_runtime_find(rt, "s")->python_path, "/opt/venv/bin/python");
        sluice_study_runtime_free(rt);
    }
}
