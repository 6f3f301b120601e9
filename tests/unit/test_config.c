/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c - the config module: good files, every error class with its
 * exact message (file:line:col), precedence (flag > env > file > default),
 * the NVFlare slurm.yaml taken whole, FORGE_* variables and study runtime
 * files.  The environment is always injected, never the process's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <sluice/config.h>
#include <sluice/ops.h>
#include "site/config_model.h"
#include "slurm/slurmrest.h"

#include "config_case.h"
#include "transport/http.h"

static const char *const no_env[] = {NULL};

/* Minimal complete site so that error tests only vary one thing. */
#define BASE                                                                                       \
    "rest:\n"                                                                                      \
    "  url: https://rest.example:6820\n"                                                           \
    "storage:\n"                                                                                   \
    "  root: /lustre/s\n"                                                                          \
    "job_launcher:\n"                                                                              \
    "  sandbox: none\n"

static char *fixture(const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    size_t n;
    char *p;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    n = strlen(src) + strlen(name) + 32;
    p = malloc(n);
    cr_assert_not_null(p);
    snprintf(p, n, "%s/tests/fixtures/config/%s", src, name);
    return p;
}

Test(config, example_site_file_loads)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *path = fixture("site.yaml");
    const sluice_gpu_series_t *g;

    o.path = path;
    o.envp = no_env;
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->site_name, "hpc-east");
    cr_assert_str_eq(cfg->rest.url, "https://slurmrestd.internal:6820");
    cr_assert_eq(cfg->rest.jwt_lifespan_s, 1800);
    cr_assert_eq(cfg->launcher.sandbox, SLUICE_SANDBOX_ENROOT_PYXIS);
    cr_assert_eq(cfg->launcher.sbatch.time_minutes, 720);
    cr_assert_eq(cfg->launcher.setup.n, 2);
    cr_assert_str_eq(cfg->launcher.setup.items[1], "module load cuda");
    cr_assert_eq(cfg->launcher.poll_interval_s, 2);
    cr_assert_eq(cfg->launcher.pending_timeout_s, 600);
    cr_assert_str_eq(cfg->storage.cluster_root, "/lustre/sluice");
    cr_assert_eq(cfg->n_gpu_series, 2);
    g = sluice_config_gpu_series(cfg, "h100");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->constraint, "h100&ib");
    cr_assert_str_eq(g->gres, "gpu");
    cr_assert_eq(g->gpus_per_node, 8);
    cr_assert_eq(cfg->policy.allowed_profiles.n, 2);
    cr_assert_eq(cfg->policy.max_time_minutes, 4320);
    cr_assert_eq(cfg->accounting.miss_budget, 5);
    cr_assert_eq(cfg->submit.absence_lookups, 3);
    cr_assert_eq(cfg->warnings.n, 0);
    sluice_config_free(cfg);
    free(path);
}

Test(config, server_and_retention_blocks)
{
    static const char *const env[] = {"SLUICE_SERVER_THREADS=8", NULL};
    static const char *const sets[] = {"server.socket_mode=0600", "retention.logs_max_age_s=0"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    cr_assert_eq(config_case_load(BASE "server:\n"
                                       "  listen: \"0.0.0.0:8443\"\n"
                                       "  tokens_file: /etc/sluice/tokens\n"
                                       "  socket: /run/sluice/api.sock\n"
                                       "  socket_mode: 0640\n"
                                       "  socket_group: flare\n"
                                       "  tls_cert: /etc/sluice/cert.pem\n"
                                       "  tls_key: /etc/sluice/key.pem\n"
                                       "  threads: 2\n"
                                       "retention:\n"
                                       "  launches_max_age_s: 7d\n"
                                       "  logs_max_age_s: 0\n",
                                  env, sets, 2, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_expect_str_eq(cfg->server.listen, "0.0.0.0:8443");
    cr_expect_str_eq(cfg->server.tokens_file, "/etc/sluice/tokens");
    cr_expect_str_eq(cfg->server.socket, "/run/sluice/api.sock");
    cr_expect_eq(cfg->server.socket_mode, 0600); /* the flag wins */
    cr_expect_str_eq(cfg->server.socket_group, "flare");
    cr_expect_str_eq(cfg->server.tls_cert, "/etc/sluice/cert.pem");
    cr_expect_str_eq(cfg->server.tls_key, "/etc/sluice/key.pem");
    cr_expect_eq(cfg->server.threads, 8); /* the environment wins over the file */
    cr_expect_eq(cfg->retention.launches_max_age_s, 7 * 86400);
    cr_expect_eq(cfg->retention.logs_max_age_s, 0);
    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK, "%s", err.text);
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(j, "config"), "server"), "socket_mode")),
                     "0600");
    json_decref(j);
    sluice_config_free(cfg);
}

Test(config, defaults_apply)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->site_name, "default");
    cr_assert_str_eq(cfg->job_name_prefix, "sluice");
    cr_assert_str_eq(cfg->rest.api_version, "auto");
    cr_assert(cfg->rest.tls_verify);
    cr_assert_eq(cfg->launcher.internal_port, 8102);
    cr_assert_eq(cfg->launcher.submit_timeout_s, 30);
    cr_assert_eq(cfg->launcher.query_timeout_s, 10);
    cr_assert_eq(cfg->launcher.pending_timeout_s, 600);
    cr_assert_eq(cfg->launcher.port_range_lo, 29400);
    cr_assert_eq(cfg->launcher.port_range_hi, 30399);
    cr_assert_eq(cfg->accounting.miss_spacing_s, 6);
    cr_assert_eq(cfg->submit.absence_delay_s, 60);
    cr_assert_eq(cfg->submit.absence_spacing_s, 10);
    cr_assert_eq(cfg->server.socket_mode, 0660);
    cr_assert_eq(cfg->server.threads, 4);
    cr_assert_null(cfg->server.listen);
    cr_assert_null(cfg->server.socket_group);
    cr_assert_eq(cfg->retention.launches_max_age_s, 2592000);
    cr_assert_eq(cfg->retention.logs_max_age_s, 7776000);
    cr_assert_eq(sluice_config_source(cfg, "rest.url"), SLUICE_SRC_FILE);
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.internal_port"), SLUICE_SRC_DEFAULT);
    sluice_config_free(cfg);
}

#define EXEC_MSG                                                                                   \
    "expected an absolute normalised path to the command (no '.', '..', '//' or trailing '/'; "    \
    "no ':', quote, '$' or '\\')"
#define JOB_PATH_MSG                                                                               \
    "expected absolute directories joined by ':' (no empty entry, no '.' or '..', no trailing "    \
    "'/', no quote, '$', '\\' or control byte)"

struct bad_case {
    const char *yaml;
    const char *message;
};

static void check_bad(const struct bad_case *bc);

static const struct bad_case bad_cases[] = {
    {BASE "bogus: 1\n", "site.yaml:7:1: bogus: unknown key"},
    {BASE "  sbatch_directives:\n    partitoin: x\n",
     "site.yaml:8:5: job_launcher.sbatch_directives.partitoin: unknown key (did you mean "
     "job_launcher.sbatch_directives.partition?)"},
    {"rest:\n  url: ftp://x\n" BASE, "site.yaml:3:1: duplicate key 'rest' (first at line 1)"},
    {"rest:\n  url: ftp://h\nstorage:\n  root: /s\njob_launcher:\n  sandbox: none\n",
     "site.yaml:2:8: rest.url: expected an https://, http:// (loopback) or unix:/ URL"},
    {"rest:\n  url: http://rest.example\nstorage:\n  root: /s\njob_launcher:\n  sandbox: none\n",
     "site.yaml:2:8: rest.url: expected an https://, http:// (loopback) or unix:/ URL (plain "
     "http to another host needs rest.allow_insecure_http: true)"},
    {BASE "  internal_port: .inf\n",
     "site.yaml:7:18: job_launcher.internal_port: expected an integer, got a non-finite number"},
    {BASE "  internal_port: 70000\n",
     "site.yaml:7:18: job_launcher.internal_port: expected an integer from 1 to 65535, got "
     "70000"},
    {BASE "  internal_port: \"80\"\n",
     "site.yaml:7:18: job_launcher.internal_port: expected an integer from 1 to 65535, got \"80\" "
     "as a quoted string: drop the quotes"},
    {BASE "  internal_port: \"eighty\"\n",
     "site.yaml:7:18: job_launcher.internal_port: expected an integer from 1 to 65535"},
    {BASE "policy:\n  allow_requeue: \"true\"\n",
     "site.yaml:8:18: policy.allow_requeue: expected true or false, got \"true\" as a quoted "
     "string: drop the quotes"},
    /* An unknown key: the closest key of its section when one is clearly
     * meant, nothing when none is close or two are as close. */
    {BASE "  poll_intervall: 5s\n",
     "site.yaml:7:3: job_launcher.poll_intervall: unknown key (did you mean "
     "job_launcher.poll_interval?)"},
    {BASE "  colour: blue\n", "site.yaml:7:3: job_launcher.colour: unknown key"},
    {BASE "restt:\n  url: https://x\n", "site.yaml:7:1: restt: unknown key (did you mean rest?)"},
    {BASE "zebra: 1\n", "site.yaml:7:1: zebra: unknown key"},
    {BASE "  internal_port: [1]\n",
     "site.yaml:7:18: job_launcher.internal_port: expected a scalar, found a list"},
    {BASE "  image: relative/x.sif\n",
     "site.yaml:7:10: job_launcher.image: expected an absolute path"},
    {BASE "  multi_node_port_range: \"300-200\"\n",
     "site.yaml:7:26: job_launcher.multi_node_port_range: expected 1 <= START <= END <= 65535, "
     "got 300-200"},
    {BASE "  multi_node_port_range: \"8000-9000\"\n",
     "site.yaml:7:26: job_launcher.multi_node_port_range: must not contain "
     "job_launcher.internal_port (8102)"},
    {BASE "  pending_timeout: 5 minutes\n",
     "site.yaml:7:20: job_launcher.pending_timeout: expected a duration: seconds, or a number "
     "with s, m, h or d (\"30s\", \"5m\", \"2h\")"},
    {BASE "  forward_env: [OK, 1BAD]\n",
     "site.yaml:7:21: job_launcher.forward_env: '1BAD': expected variable names matching "
     "[A-Za-z_][A-Za-z0-9_]*"},
    {BASE "  sbatch_directives:\n    time: \"25:61:00:00\"\n",
     "site.yaml:8:11: job_launcher.sbatch_directives.time: expected minutes or a Slurm time (MM, "
     "MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS)"},
    {BASE "  sbatch_directives:\n    time: UNLIMITED\n",
     "site.yaml:8:11: job_launcher.sbatch_directives.time: no limit (UNLIMITED, INFINITE, -1) is "
     "refused: give a finite time"},
    {BASE "  sandbox: docker\n", "site.yaml:7:3: duplicate key 'sandbox' (first at line 6)"},
    {"rest:\n  url: https://h\nstorage:\n  root: /s\njob_launcher:\n  sandbox: docker\n",
     "site.yaml:6:12: job_launcher.sandbox: expected enroot-pyxis (alias pyxis), apptainer or "
     "none"},
    {BASE "a: &x [1, 2]\nb: *x\n", "site.yaml:8:4: YAML aliases are not allowed"},
    {"x: &a [1]\ny: *a\n", "site.yaml:2:4: YAML aliases are not allowed"},
    {BASE "gpu_series:\n  a100:\n    gres: gpu\n",
     "site.yaml:9:5: gpu_series.a100: constraint is required (fail-closed: a series without a "
     "Slurm constraint could land on any GPU node)"},
    {BASE "gpu_series:\n  a100:\n    constraint: \"a100 || rm -rf\"\n",
     "site.yaml:9:17: gpu_series.a100.constraint: expected a Slurm feature expression (letters, "
     "digits, _-.&|*[]():,!)"},
    {BASE "  executables:\n    bash: /bin/bash\n",
     "site.yaml:8:5: job_launcher.executables.bash: unknown command (expected one of sbatch, "
     "squeue, sacct, scancel, srun, enroot, apptainer, singularity)"},
    {BASE "  executables:\n    srun: bin/srun\n",
     "site.yaml:8:11: job_launcher.executables.srun: expected an absolute path"},
    {BASE "  executables:\n    srun: /opt/slurm/../bin/srun\n",
     "site.yaml:8:11: job_launcher.executables.srun: " EXEC_MSG},
    {BASE "  executables:\n    apptainer: \"/opt/app:tainer/bin/apptainer\"\n",
     "site.yaml:8:16: job_launcher.executables.apptainer: " EXEC_MSG},
    {BASE "  executables:\n    srun: \"/opt/slurm/bin/srun'\"\n",
     "site.yaml:8:11: job_launcher.executables.srun: " EXEC_MSG},
    {BASE "  executables:\n    enroot: /usr/bin/\n",
     "site.yaml:8:13: job_launcher.executables.enroot: " EXEC_MSG},
    {BASE "  job_path: \"/opt/slurm/bin::/usr/bin:/bin\"\n",
     "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"bin:/usr/bin\"\n", "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"/usr/bin:\"\n", "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"/usr/./bin:/bin\"\n",
     "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"/usr/bin/:/bin\"\n",
     "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"/usr/bin:/o'pt\"\n",
     "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"/usr/bin:$HOME/bin\"\n",
     "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: \"/usr/bin\\n/bin\"\n",
     "site.yaml:7:13: job_launcher.job_path: " JOB_PATH_MSG},
    {BASE "  job_path: [/usr/bin]\n",
     "site.yaml:7:13: job_launcher.job_path: expected a scalar, found a list"},
    {BASE "rest:\n", "site.yaml:7:1: duplicate key 'rest' (first at line 1)"},
    {BASE "policy:\n  allow_requeue: maybe\n",
     "site.yaml:8:18: policy.allow_requeue: expected true or false"},
    {BASE "site:\n  name: ../etc\n",
     "site.yaml:8:9: site.name: expected 1-64 characters from [A-Za-z0-9._-]"},
    {BASE "  image: /x.sif\n",
     "site.yaml:7:10: job_launcher.image: not allowed when job_launcher.sandbox is none"},
    {"- 1\n- 2\n", "site.yaml:1:1: (top level): expected a mapping, found a list"},
    {"a: [1\n", "site.yaml:2:1: invalid YAML: did not find expected ',' or ']'"},
    {"rest: {url: https://h}\n---\nb: 1\n", "site.yaml:2:1: only one YAML document is allowed"},
    {BASE "server:\n  socket_mode: \"0666\"\n",
     "site.yaml:8:16: server.socket_mode: mode 0666 is accessible by others; use 0660 or "
     "stricter"},
    {BASE "server:\n  socket_mode: 0468\n",
     "site.yaml:8:16: server.socket_mode: expected an octal file mode such as 0660"},
    {BASE "server:\n  socket_mode: 0060\n",
     "site.yaml:8:16: server.socket_mode: mode 0060 must give the owner read and write (0600 at "
     "least)"},
    {BASE "server:\n  tls_cert: cert.pem\n",
     "site.yaml:8:13: server.tls_cert: expected an absolute path"},
    {BASE "server:\n  max_connections: 5\n",
     "site.yaml:8:20: server.max_connections: expected an integer from 16 to 1000000, got 5"},
    {BASE "server:\n  threads: 0\n",
     "site.yaml:8:12: server.threads: expected an integer from 1 to 64, got 0"},
    {BASE "server:\n  lisen: 127.0.0.1:1\n",
     "site.yaml:8:3: server.lisen: unknown key (did you mean server.listen?)"},
    {BASE "retention:\n  launches_max_age_s: -1\n",
     "site.yaml:8:23: retention.launches_max_age_s: expected a duration: seconds, or a number "
     "with s, m, h or d (\"30s\", \"5m\", \"2h\")"},
    {BASE "submit:\n  in_flight: 17\n",
     "site.yaml:8:14: submit.in_flight: expected an integer from 1 to 16, got 17"},
    {BASE "submit:\n  in_flight: 0\n",
     "site.yaml:8:14: submit.in_flight: expected an integer from 1 to 16, got 0"},
    {BASE "submit:\n  per_sec: fast\n",
     "site.yaml:8:12: submit.per_sec: expected an integer from 1 to 100000"},
    {BASE "poll:\n  rpc_per_sec: 0\n",
     "site.yaml:8:16: poll.rpc_per_sec: expected an integer from 1 to 100000, got 0"},
    {BASE "poll:\n  rpc_per_second: 5\n",
     "site.yaml:8:3: poll.rpc_per_second: unknown key (did you mean poll.rpc_per_sec?)"},
    {BASE "ha:\n  renew_ms: 5000\n",
     "site.yaml:8:13: ha.renew_ms: 5000 ms must be less than half of ha.lease_ms (8000 ms)"},
    {BASE "ha:\n  lease_ms: 500\n",
     "site.yaml:8:13: ha.lease_ms: expected an integer from 1000 to 600000, got 500"},
    {BASE "ha:\n  renew_ms: 50\n",
     "site.yaml:8:13: ha.renew_ms: expected an integer from 100 to 300000, got 50"},
    {"storage:\n  root: /s\njob_launcher:\n  sandbox: none\n",
     "site.yaml: rest.url: required (set rest.url, FORGE_SLURM_REST_URL or --set rest.url=...)"},
    /* no Slurm identity: a minted token has no user of its own */
    {"rest:\n  url: https://rest.example:6820\n  jwt_key_file: /etc/slurm/jwt.key\nstorage:\n"
     "  root: /s\njob_launcher:\n  sandbox: none\n",
     "site.yaml: rest.user: required when rest.jwt_key_file mints the token (it names this user; "
     "set rest.user, FORGE_SLURM_REST_USER or --set rest.user=...)"},
    {"rest:\n  url: https://rest.example:6820\n  jwt_rs256_key_file: /etc/k.pem\nstorage:\n"
     "  root: /s\njob_launcher:\n  sandbox: none\n",
     "site.yaml: rest.user: required when rest.jwt_rs256_key_file mints the token (it names this "
     "user; set rest.user, FORGE_SLURM_REST_USER or --set rest.user=...)"},
};

/* Table-driven (a loop rather than ParameterizedTest: Criterion re-executes
 * the test binary, so pointers inside parameters would not survive). */
Test(config, rejects_with_exact_message)
{
    size_t i;

    for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
        check_bad(&bad_cases[i]);
}

static void check_bad(const struct bad_case *bc)
{
    sluice_config_t *cfg = (sluice_config_t *)0x1;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(bc->yaml, NULL, NULL, 0, &cfg, &err), SLUICE_ECONFIG, "%s",
                 bc->yaml);
    cr_assert_str_eq(err.text, bc->message);
    cr_assert_eq(cfg, (sluice_config_t *)0x1, "output touched on error");
}

/* rest.user is optional only where a token can name the user itself (a
 * token file or $SLURM_JWT: its `sun` claim, read when the client is made). */
Test(config, rest_user_optional_only_where_the_token_names_one)
{
    static const char *const user_env[] = {"FORGE_SLURM_REST_USER=svc", NULL};
    const char *key = "rest:\n  url: https://rest.example:6820\n  jwt_key_file: /etc/k\nstorage:\n"
                      "  root: /s\njob_launcher:\n  sandbox: none\n";
    const char *set_user[] = {"rest.user=svc"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_null(cfg->rest.user);
    sluice_config_free(cfg);
    cr_assert_eq(config_case_load("rest:\n  url: https://rest.example:6820\n  jwt_file: /run/jwt\n"
                                  "storage:\n  root: /s\njob_launcher:\n  sandbox: none\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    sluice_config_free(cfg);
    cr_assert_eq(config_case_load(key, user_env, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->rest.user, "svc");
    sluice_config_free(cfg);
    cr_assert_eq(config_case_load(key, NULL, set_user, 1, &cfg, &err), SLUICE_OK, "%s", err.text);
    sluice_config_free(cfg);
}

/* The token's user completes a configuration without rest.user: its
 * source is "token:<claim>", and a configured user is never replaced. */
Test(config, token_user_completes_rest_user)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_config_set_token_user(cfg, "", "sun", &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_config_set_token_user(cfg, "tokuser", "sun", &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_str_eq(cfg->rest.user, "tokuser");
    cr_assert_eq(sluice_config_source(cfg, "rest.user"), SLUICE_SRC_TOKEN);
    cr_assert_str_eq(sluice_config_source_name(SLUICE_SRC_TOKEN), "token");
    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "sources"), "rest.user")),
                     "token:sun");
    json_decref(j);
    cr_assert_eq(sluice_config_set_token_user(cfg, "tokuser", "sun", &err), SLUICE_OK);
    cr_assert_eq(sluice_config_set_token_user(cfg, "mallory", "sun", &err), SLUICE_ECONFIG);
    cr_assert_str_eq(cfg->rest.user, "tokuser");
    sluice_config_free(cfg);
}

Test(config, nul_byte_is_refused_with_position)
{
    static const char text[] = "rest:\n  url: https://h\0x\n";
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    o.text = text;
    o.text_len = sizeof(text) - 1;
    o.text_name = "site.yaml";
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "site.yaml:2:17: NUL bytes are not allowed");
    cr_assert_null(cfg);
}

Test(config, escaped_nul_in_scalar_is_refused)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load("rest:\n  user: \"a\\0b\"\n", NULL, NULL, 0, &cfg, &err),
                 SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "site.yaml:2:9: NUL bytes are not allowed");
}

Test(config, deep_nesting_is_capped)
{
    char text[200];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(text, '[', 60);
    text[60] = '\0';
    cr_assert_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "nested too deeply"), "%s", err.text);
}

Test(config, precedence_flag_over_env_over_file_over_default)
{
    static const char *const env[] = {"FORGE_SLURM_PARTITION=envpart",
                                      "FORGE_SLURM_REST_USER=envuser", NULL};
    static const char *const sets[] = {"job_launcher.sbatch_directives.partition=flagpart"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    cr_assert_eq(config_case_load(BASE "  sbatch_directives:\n    partition: filepart\n"
                                       "    account: fileacct\nrest:\n",
                                  env, sets, 1, &cfg, &err),
                 SLUICE_ECONFIG);
    cr_assert_eq(config_case_load(BASE "  sbatch_directives:\n    partition: filepart\n"
                                       "    account: fileacct\n",
                                  env, sets, 1, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->launcher.sbatch.partition, "flagpart");
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.sbatch_directives.partition"),
                 SLUICE_SRC_FLAG);
    cr_assert_str_eq(cfg->rest.user, "envuser");
    cr_assert_eq(sluice_config_source(cfg, "rest.user"), SLUICE_SRC_ENV);
    cr_assert_str_eq(cfg->launcher.sbatch.account, "fileacct");
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.sbatch_directives.account"),
                 SLUICE_SRC_FILE);
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.cancel_timeout"), SLUICE_SRC_DEFAULT);
    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "sources"), "rest.user")),
                     "env:FORGE_SLURM_REST_USER");
    json_decref(j);
    sluice_config_free(cfg);
}

/* The submit and poll budgets are separate knobs: defaults, YAML, and the
 * SLUICE_* variables (env over file). */
Test(config, submit_and_poll_budgets)
{
    static const char *const env[] = {"SLUICE_SUBMIT_PER_SEC=300", "SLUICE_POLL_RPC_PER_SEC=20",
                                      NULL};
    static const char *const bad_env[] = {"SLUICE_SUBMIT_IN_FLIGHT=99", NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->submit.in_flight, 4);
    cr_assert_eq(cfg->submit.per_sec, 200);
    cr_assert_eq(cfg->poll.rpc_per_sec, 50);
    sluice_config_free(cfg);
    cfg = NULL;
    cr_assert_eq(config_case_load(BASE "submit:\n  in_flight: 1\n  per_sec: 120\npoll:\n"
                                       "  rpc_per_sec: 10\n",
                                  env, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->submit.in_flight, 1);
    cr_assert_eq(cfg->submit.per_sec, 300);
    cr_assert_eq(cfg->poll.rpc_per_sec, 20);
    cr_assert_eq(sluice_config_source(cfg, "submit.per_sec"), SLUICE_SRC_ENV);
    cr_assert_eq(sluice_config_source(cfg, "submit.in_flight"), SLUICE_SRC_FILE);
    sluice_config_free(cfg);
    cfg = NULL;
    cr_assert_eq(config_case_load(BASE, bad_env, NULL, 0, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "environment SLUICE_SUBMIT_IN_FLIGHT: submit.in_flight: expected "
                               "an integer from 1 to 16, got 99");
    cr_assert_null(cfg);
}

Test(config, unschedulable_switch_and_reason_list)
{
    static const char *const env_off[] = {"SLUICE_JOB_LAUNCHER_FAIL_UNSCHEDULABLE=false",
                                          "SLUICE_JOB_LAUNCHER_UNSCHEDULABLE_REASONS="
                                          "BadConstraints,InvalidQOS",
                                          NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_opts_t lo = SLUICE_LAUNCHER_OPTS_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert(cfg->launcher.fail_unschedulable, "default is true");
    cr_assert_eq(cfg->launcher.unschedulable_reasons.n, 0);
    sluice_launcher_opts_from_config(cfg, &lo);
    cr_assert_not(lo.wait_unschedulable);
    cr_assert_null(lo.unschedulable_reasons, "empty list: the launcher's default");
    sluice_config_free(cfg);
    cfg = NULL;

    cr_assert_eq(config_case_load(BASE
                                  "  fail_unschedulable: false\n"
                                  "  unschedulable_reasons: [BadConstraints, PartitionConfig]\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_not(cfg->launcher.fail_unschedulable);
    cr_assert_eq(cfg->launcher.unschedulable_reasons.n, 2);
    cr_assert_str_eq(cfg->launcher.unschedulable_reasons.items[1], "PartitionConfig");
    sluice_config_free(cfg);
    cfg = NULL;

    cr_assert_eq(config_case_load(BASE, env_off, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_not(cfg->launcher.fail_unschedulable);
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.fail_unschedulable"), SLUICE_SRC_ENV);
    cr_assert_eq(cfg->launcher.unschedulable_reasons.n, 2);
    lo = (sluice_launcher_opts_t)SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_opts_from_config(cfg, &lo);
    cr_assert(lo.wait_unschedulable);
    cr_assert_eq(lo.n_unschedulable_reasons, 2);
    cr_assert_str_eq(lo.unschedulable_reasons[1], "InvalidQOS");
    sluice_config_free(cfg);
}

Test(config, sluice_env_wins_over_forge_env)
{
    static const char *const env[] = {"SLUICE_REST_USER=mine", "FORGE_SLURM_REST_USER=theirs",
                                      NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, env, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->rest.user, "mine");
    sluice_config_free(cfg);
}

static const char *fake_getenv(const char *name, void *arg)
{
    (void)arg;
    if (strcmp(name, "SLUICE_JOB_LAUNCHER_PENDING_TIMEOUT") == 0)
        return "2h";
    return NULL;
}

Test(config, getenv_callback_is_used)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    o.text = BASE;
    o.text_len = strlen(BASE);
    o.getenv_fn = fake_getenv;
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->launcher.pending_timeout_s, 7200);
    sluice_config_free(cfg);
}

Test(config, bad_env_value_names_the_variable)
{
    static const char *const env[] = {"FORGE_SLURM_TLS_VERIFY=perhaps", NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, env, NULL, 0, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text,
                     "environment FORGE_SLURM_TLS_VERIFY: rest.tls_verify: expected true or false");
    cr_assert_null(cfg);
}

Test(config, bad_flag_is_reported)
{
    static const char *const sets1[] = {"rest.nope=1"};
    static const char *const sets2[] = {"job_launcher.query_timeout=0"};
    static const char *const sets3[] = {"novalue"};
    static const char *const sets4[] = {"rest.api_verison=auto"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, sets1, 1, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "--set rest.nope: unknown key");
    cr_assert_eq(config_case_load(BASE, NULL, sets4, 1, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text,
                     "--set rest.api_verison: unknown key (did you mean rest.api_version?)");
    cr_assert_eq(config_case_load(BASE, NULL, sets2, 1, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "--set job_launcher.query_timeout: expected a duration from 1s "
                               "to 3600s, got 0s");
    cr_assert_eq(config_case_load(BASE, NULL, sets3, 1, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "--set 'novalue': expected key=value");
    cr_assert_null(cfg);
}

Test(config, forge_env_file_values)
{
    static const char *const env[] = {"FORGE_DEFAULT_FLEET_KIND=slurm",
                                      "FORGE_SLURM_REST_URL=https://slurmrestd.internal:6820",
                                      "FORGE_SLURM_REST_API_VERSION=v0.0.43",
                                      "FORGE_SLURM_REST_USER=starforge",
                                      "FORGE_SLURM_JWT_FILE=/run/secrets/slurm-jwt",
                                      "FORGE_SLURM_PARTITION=gpu",
                                      "FORGE_SLURM_RUNTIME_PROFILE=enroot-pyxis",
                                      "FORGE_STORAGE_ROOT=/lustre/starforge",
                                      "FORGE_SLURM_STORAGE_ROOT=",
                                      "FORGE_SLURM_TLS_VERIFY=1",
                                      NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load("", env, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->rest.url, "https://slurmrestd.internal:6820");
    cr_assert_str_eq(cfg->rest.api_version, "v0.0.43");
    cr_assert_str_eq(cfg->rest.user, "starforge");
    cr_assert_str_eq(cfg->rest.jwt_file, "/run/secrets/slurm-jwt");
    cr_assert_str_eq(cfg->launcher.sbatch.partition, "gpu");
    cr_assert_eq(cfg->launcher.sandbox, SLUICE_SANDBOX_ENROOT_PYXIS);
    cr_assert_str_eq(cfg->storage.root, "/lustre/starforge");
    cr_assert_str_eq(cfg->storage.cluster_root, "/lustre/starforge");
    cr_assert(cfg->rest.tls_verify);
    cr_assert_eq(cfg->warnings.n, 0);
    sluice_config_free(cfg);
}

Test(config, forge_cluster_root_translates)
{
    static const char *const env[] = {"FORGE_STORAGE_ROOT=/mnt/svc",
                                      "FORGE_SLURM_STORAGE_ROOT=/lustre/cluster",
                                      "FORGE_SLURM_TLS_VERIFY=0", NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, env, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->storage.root, "/mnt/svc");
    cr_assert_str_eq(cfg->storage.cluster_root, "/lustre/cluster");
    cr_assert_not(cfg->rest.tls_verify);
    sluice_config_free(cfg);
}

Test(config, nvflare_slurm_yaml_accepted_whole)
{
    static const char *const env[] = {"FORGE_SLURM_REST_URL=https://rest:6820",
                                      "FORGE_STORAGE_ROOT=/lustre/proj123", NULL};
    const char *names[] = {"nvflare-slurm.yaml", "nvflare-slurm-full.yaml"};
    size_t i, k;

    for (k = 0; k < 2; k++) {
        sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
        sluice_config_t *cfg = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        char *path = fixture(names[k]);
        bool saw_parent = false, saw_sbatch = false, saw_ics = false;

        o.path = path;
        o.envp = env;
        cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_OK, "%s: %s", names[k], err.text);
        cr_assert_str_eq(cfg->launcher.parent_host, "nvflare-site1.internal");
        cr_assert_str_eq(cfg->launcher.python_path,
                         k ? "/usr/local/bin/python" : "/usr/bin/python3");
        cr_assert_str_eq(cfg->launcher.sbatch.partition, "fl-gpu");
        cr_assert_eq(cfg->launcher.sbatch.time_minutes, 720);
        cr_assert_eq(cfg->launcher.setup.n, k ? 1 : 2);
        cr_assert_eq(cfg->launcher.pending_timeout_s, 600);
        for (i = 0; i < cfg->warnings.n; i++) {
            const char *w = cfg->warnings.items[i];
            if (strstr(w, "parent.environment_setup: not used by sluice"))
                saw_parent = true;
            if (strstr(w, "job_launcher.executables.sbatch: not used by sluice"))
                saw_sbatch = true;
            if (strstr(w, "internal_connection_security: accepted"))
                saw_ics = true;
        }
        cr_assert(saw_ics);
        if (k == 1) {
            cr_assert_eq(cfg->launcher.sandbox, SLUICE_SANDBOX_ENROOT_PYXIS);
            cr_assert(saw_parent && saw_sbatch);
            cr_assert_eq(cfg->launcher.n_executables, 5);
            cr_assert_eq(cfg->launcher.forward_env.n, 2);
            cr_assert_str_eq(cfg->launcher.sbatch.reservation, "fl-maint");
            cr_assert_eq(cfg->warnings.n, 7, "%zu warnings", cfg->warnings.n);
        } else {
            cr_assert_eq(cfg->launcher.sandbox, SLUICE_SANDBOX_APPTAINER);
        }
        sluice_config_free(cfg);
        free(path);
    }
}

Test(config, executables_and_job_path)
{
    static const char *const env[] = {"SLUICE_JOB_LAUNCHER_JOB_PATH=/opt/site/bin:/usr/bin:/bin",
                                      NULL};
    static const char *const bad_env[] = {"SLUICE_JOB_LAUNCHER_JOB_PATH=/opt/site/bin:bin", NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *sets[] = {"job_launcher.job_path=/usr/bin:/bin"};
    const char *bad_sets[] = {"job_launcher.job_path=/usr/bin:"};

    cr_assert_eq(config_case_load(BASE "  executables:\n    srun: /opt/slurm/bin/srun\n"
                                       "    apptainer: /opt/apptainer/1.3/bin/apptainer\n"
                                       "  job_path: /opt/slurm/bin:/usr/bin:/bin\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_config_executable(cfg, "srun"), "/opt/slurm/bin/srun");
    cr_assert_str_eq(sluice_config_executable(cfg, "apptainer"),
                     "/opt/apptainer/1.3/bin/apptainer");
    cr_assert_null(sluice_config_executable(cfg, "enroot"));
    cr_assert_str_eq(cfg->launcher.job_path, "/opt/slurm/bin:/usr/bin:/bin");
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.job_path"), SLUICE_SRC_FILE);
    sluice_config_free(cfg);

    cfg = NULL;
    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_null(cfg->launcher.job_path, "the default is chosen by the render");
    sluice_config_free(cfg);

    cfg = NULL;
    cr_assert_eq(config_case_load(BASE, env, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->launcher.job_path, "/opt/site/bin:/usr/bin:/bin");
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.job_path"), SLUICE_SRC_ENV);
    sluice_config_free(cfg);

    cfg = NULL;
    cr_assert_eq(config_case_load(BASE, env, sets, 1, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->launcher.job_path, "/usr/bin:/bin");
    sluice_config_free(cfg);

    cfg = NULL;
    cr_assert_eq(config_case_load(BASE, bad_env, NULL, 0, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "environment SLUICE_JOB_LAUNCHER_JOB_PATH: job_launcher.job_path: "
                               "" JOB_PATH_MSG);
    cr_assert_eq(config_case_load(BASE, NULL, bad_sets, 1, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "--set job_launcher.job_path: " JOB_PATH_MSG);
}

Test(config, port_range_list_and_default_shift)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE "  multi_node_port_range: [40000, 40100]\n", NULL, NULL, 0,
                                  &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->launcher.port_range_lo, 40000);
    cr_assert_eq(cfg->launcher.port_range_hi, 40100);
    sluice_config_free(cfg);
    cfg = NULL;
    cr_assert_eq(config_case_load(BASE "  internal_port: 29500\n", NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->launcher.port_range_lo, 30400);
    cr_assert_eq(cfg->launcher.port_range_hi, 31399);
    sluice_config_free(cfg);
}

struct time_case {
    const char *text;
    long minutes;
};

Test(config, slurm_times_and_durations)
{
    static const struct time_case times[] = {
        {"90", 90},
        {"\"30:00\"", 30},
        {"\"01:30:00\"", 90},
        {"\"1-00\"", 1440},
        {"\"2-12:30\"", 3630},
        {"\"7-00:00:00\"", 10080},
        {"\"00:00:30\"", 1},
        {"\"0:10:01\"", 11},
        /* Slurm's rule: parts add up, none is range-checked */
        {"\"25:61:00\"", 1561},
        {"\"1:60\"", 2},
        {"\"2-25\"", 4380},
    };
    static const struct time_case durs[] = {
        {"45", 45}, {"30s", 30}, {"5m", 300}, {"2h", 7200}, {"1d", 86400},
    };
    char text[512];
    size_t i;

    for (i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        sluice_config_t *cfg = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        snprintf(text, sizeof(text), BASE "  sbatch_directives:\n    time: %s\n", times[i].text);
        cr_assert_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(cfg->launcher.sbatch.time_minutes, times[i].minutes, "%s", times[i].text);
        sluice_config_free(cfg);
    }
    for (i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
        sluice_config_t *cfg = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        snprintf(text, sizeof(text), BASE "  pending_timeout: %s\n", durs[i].text);
        cr_assert_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
        cr_assert_eq(cfg->launcher.pending_timeout_s, durs[i].minutes, "%s", durs[i].text);
        sluice_config_free(cfg);
    }
}

Test(config, loopback_http_and_unix_urls)
{
    static const char *const urls[] = {"http://127.0.0.1:6820", "http://localhost:6820/",
                                       "http://[::1]:6820", "unix:/run/slurmrestd.sock"};
    char text[256];
    size_t i;

    for (i = 0; i < 4; i++) {
        sluice_config_t *cfg = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        snprintf(text, sizeof(text), "rest:\n  url: %s\nstorage:\n  root: /s\n", urls[i]);
        cr_assert_eq(config_case_load(text, NULL, NULL, 1 - 1, &cfg, &err), SLUICE_ECONFIG);
        cr_assert(strstr(err.text, "job_launcher.sandbox: required"), "%s", err.text);
        snprintf(text, sizeof(text),
                 "rest:\n  url: %s\nstorage:\n  root: /s\n"
                 "job_launcher: {sandbox: none}\n",
                 urls[i]);
        cr_assert_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s: %s",
                     urls[i], err.text);
        sluice_config_free(cfg);
    }
}

/* Issue 27 B: the site file and the HTTP client that will use rest.url
 * apply one loopback rule (base/urlsafe.h) to plain http://, so a file the
 * config accepts is never refused at run time, nor the other way round
 * ("127.0.0.1.nip.io" is a name that resolves anywhere, not a loopback
 * address). */
Test(config, plain_http_to_loopback_is_one_rule_for_the_file_and_the_client)
{
    static const struct {
        const char *url;
        bool loopback;
    } cases[] = {
        {"http://127.0.0.1:6820", true},
        {"http://127.9.8.7:6820/", true},
        {"http://localhost:6820", true},
        {"http://LocalHost:6820", true},
        {"http://[::1]:6820", true},
        {"http://[0:0:0:0:0:0:0:1]:6820", true},
        {"http://127.0.0.1.nip.io:6820", false},
        {"http://127.evil.example:6820", false},
        {"http://127.:6820", false},
        {"http://localhost.example.org:6820", false},
        {"http://[::2]:6820", false},
        {"http://128.0.0.1:6820", false},
        {"http://rest.example:6820", false},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_config_t *cfg = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        http_opts_t o;
        http_client_t *c = NULL;
        char text[256];

        snprintf(text, sizeof(text),
                 "rest:\n  url: %s\n"
                 "storage:\n  root: /s\n"
                 "job_launcher: {sandbox: none}\n",
                 cases[i].url);
        cr_expect_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err),
                     cases[i].loopback ? SLUICE_OK : SLUICE_ECONFIG, "config: %s: %s", cases[i].url,
                     err.text);
        if (!cases[i].loopback)
            cr_expect(strstr(err.text, "rest.url: expected an https://, http:// (loopback)") !=
                          NULL,
                      "%s: %s", cases[i].url, err.text);
        sluice_config_free(cfg);
        memset(&o, 0, sizeof(o));
        o.base_url = cases[i].url;
        cr_expect_eq(http_client_new(&c, &o, &err), cases[i].loopback ? SLUICE_OK : SLUICE_EINVAL,
                     "client: %s: %s", cases[i].url, err.text);
        http_client_free(c);
    }
}

Test(config, json_redacts_url_password_and_holds_no_secret)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    char *text;

    cr_assert_eq(config_case_load("rest:\n  url: https://bob:hunter2@rest:6820/\n"
                                  "  jwt_file: /run/secrets/jwt\n"
                                  "storage: {root: /s}\njob_launcher: {sandbox: apptainer}\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK);
    text = json_dumps(j, JSON_COMPACT);
    cr_assert_null(strstr(text, "hunter2"));
    cr_assert_not_null(strstr(text, "\"url\":\"https://bob:***@rest:6820/\""), "%s", text);
    cr_assert_not_null(strstr(text, "\"jwt_file\":\"/run/secrets/jwt\""));
    free(text);
    json_decref(j);
    sluice_config_free(cfg);
}

Test(config, missing_file_is_eio)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    o.path = "/nonexistent/site.yaml";
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_EIO);
    cr_assert_null(cfg);
}

/* ---- study runtime ---- */

Test(config, study_runtime_fixture)
{
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *path = fixture("study_runtime.yaml");
    const sluice_study_t *s;

    cr_assert_eq(sluice_study_runtime_load(path, NULL, 0, NULL, &rt, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(rt->n_studies, 2);
    s = sluice_study_runtime_find(rt, "pathology");
    cr_assert_not_null(s);
    cr_assert_str_eq(s->image, "/lustre/images/pathology.sif");
    cr_assert_eq(s->n_datasets, 2);
    cr_assert_str_eq(s->datasets[0].target, "/data/pathology/slides");
    cr_assert_str_eq(s->datasets[0].source, "/lustre/data/pathology/slides");
    cr_assert(s->datasets[0].read_only);
    cr_assert_not(s->datasets[1].read_only);
    cr_assert_eq(s->n_env, 1);
    cr_assert_str_eq(s->env_names[0], "MODEL_FAMILY");
    cr_assert_str_eq(s->env_values[0], "vit-large");
    cr_assert_eq(s->n_secret_env, 1);
    cr_assert_str_eq(s->secret_env[0].name, "DB_PASSWORD");
    cr_assert_str_eq(s->secret_env[0].source, "PATHOLOGY_DB_PASSWORD");
    cr_assert_str_eq(s->partition, "fl-gpu-large");
    cr_assert_str_eq(s->account, "pathology-project");
    s = sluice_study_runtime_find(rt, "radiology");
    cr_assert_eq(s->sandbox, SLUICE_SANDBOX_NONE);
    cr_assert_str_eq(s->secret_env[0].source, "RADIOLOGY_TOKEN");
    cr_assert(s->has_setup);
    cr_assert_str_eq(s->qos, "high");
    sluice_study_runtime_free(rt);
    free(path);
}

static const struct bad_case study_bad[] = {
    {"studies: {}\n", "study.yaml:1:1: format_version: required (format_version: 2)"},
    {"format_version: 1\n",
     "study.yaml:1:17: format_version: expected 2 (migrate study_data.yaml first)"},
    {"format_version: 2\nstudies:\n  s:\n    datasets:\n      d: {source: rel/x}\n",
     "study.yaml:5:19: studies.s.datasets.d.source: expected an absolute path"},
    {"format_version: 2\nstudies:\n  s:\n    datasets:\n      d: {source: /x, mode: rx}\n",
     "study.yaml:5:29: studies.s.datasets.d.mode: expected ro or rw"},
    {"format_version: 2\nstudies:\n  s:\n    env:\n      BAD-NAME: 1\n",
     "study.yaml:5:7: studies.s.env.BAD-NAME: expected a variable name matching "
     "[A-Za-z_][A-Za-z0-9_]*"},
    {"format_version: 2\nstudies:\n  s:\n    env:\n      SLURM_JOB_ID: 1\n",
     "study.yaml:5:7: studies.s.env.SLURM_JOB_ID: reserved prefix (SLURM_, SLUICE_, NVFL_)"},
    {"format_version: 2\nstudies:\n  s:\n    slurm:\n      nodes: 2\n",
     "study.yaml:5:7: studies.s.slurm.nodes: unknown key (expected sandbox, setup, partition, "
     "account, qos, python_path)"},
    {"format_version: 2\nstudies:\n  s:\n    slurm: {sandbox: none}\n    container: {image: "
     "/i.sif}\n",
     "study.yaml:5:24: studies.s: an image is not allowed when the effective sandbox is none"},
    {"format_version: 2\nstudies:\n  ../x: {}\n",
     "study.yaml:3:3: studies.../x: study names use [A-Za-z0-9._-]"},
};

static void check_study_bad(const struct bad_case *bc)
{
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(
        sluice_study_runtime_load("study.yaml", bc->yaml, strlen(bc->yaml), NULL, &rt, &err),
        SLUICE_ECONFIG, "%s", bc->yaml);
    cr_assert_str_eq(err.text, bc->message);
    cr_assert_null(rt);
}

Test(config, study_rejects_with_exact_message)
{
    size_t i;

    for (i = 0; i < sizeof(study_bad) / sizeof(study_bad[0]); i++)
        check_study_bad(&study_bad[i]);
}

Test(config, study_bare_site_rejects_datasets)
{
    static const char *yaml =
        "format_version: 2\nstudies:\n  s:\n    datasets:\n      d: {source: /x}\n";
    sluice_config_t *cfg = NULL;
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_study_runtime_load("study.yaml", yaml, strlen(yaml), cfg, &rt, &err),
                 SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "study.yaml:5:7: studies.s: datasets are not allowed when the "
                               "effective sandbox is none (no mount namespace)");
    sluice_config_free(cfg);
}

/* ---- policy keys of issue 13 ---- */

Test(config, policy_default_gpu_series_images_and_keep_going)
{
    static const struct bad_case bad[] = {
        {BASE "gpu_series:\n  a100: {constraint: a100}\npolicy:\n  default_gpu_series: h100\n",
         "site.yaml:10:23: policy.default_gpu_series: \"h100\" is not a series of gpu_series "
         "(known: a100)"},
        {BASE "policy:\n  default_gpu_series: h100\n",
         "site.yaml:8:23: policy.default_gpu_series: \"h100\" is not a series of gpu_series "
         "(known: none)"},
        {BASE "policy:\n  allowed_images: [images/]\n",
         "site.yaml:8:19: policy.allowed_images: 'images/': expected an absolute normalised path "
         "(a directory ends with '/'; no '.', '..', ':', quote, '$' or '\\')"},
        {BASE "policy:\n  allowed_images: [/lustre/../etc/]\n",
         "site.yaml:8:19: policy.allowed_images: '/lustre/../etc/': expected an absolute "
         "normalised path (a directory ends with '/'; no '.', '..', ':', quote, '$' or '\\')"},
        {BASE "policy:\n  allowed_images: [\"/a//b.sif\"]\n",
         "site.yaml:8:19: policy.allowed_images: '/a//b.sif': expected an absolute normalised "
         "path (a directory ends with '/'; no '.', '..', ':', quote, '$' or '\\')"},
        {BASE "policy:\n  allowed_secret_env: [\"1BAD\"]\n",
         "site.yaml:8:23: policy.allowed_secret_env: '1BAD': expected a variable name matching "
         "[A-Za-z_][A-Za-z0-9_]* (a variable name, or a prefix ending in '*')"},
        {BASE "policy:\n  keep_going: sometimes\n",
         "site.yaml:8:15: policy.keep_going: expected true or false"},
    };
    static const char good[] = BASE "gpu_series:\n  a100: {constraint: a100}\n"
                                    "policy:\n  default_gpu_series: a100\n"
                                    "  allowed_images: [/lustre/images/, /shared/x.sif]\n"
                                    "  keep_going: true\n  allow_keep_going: true\n";
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        check_bad(&bad[i]);
    cr_assert_eq(config_case_load(good, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_expect_str_eq(cfg->policy.default_gpu_series, "a100");
    cr_expect_eq(cfg->policy.allowed_images.n, 2);
    cr_expect_str_eq(cfg->policy.allowed_images.items[0], "/lustre/images/");
    cr_expect(cfg->policy.keep_going);
    cr_expect(cfg->policy.allow_keep_going);
    sluice_config_free(cfg);
    /* Defaults: no default series, no job image allowed, a failing pool
     * stops the others and a request may not change that. */
    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_expect_null(cfg->policy.default_gpu_series);
    cr_expect_eq(cfg->policy.allowed_images.n, 0);
    cr_expect_not(cfg->policy.keep_going);
    cr_expect_not(cfg->policy.allow_keep_going);
    sluice_config_free(cfg);
}

/* rest.api_version takes "auto" and exactly the versions of the REST table
 * (SLUICE_REST_VERSION_MAP): config keeps its own copy of the names (the
 * site layer sits below slurm/), so the two lists are checked here. */
Test(config, api_version_takes_exactly_the_rest_versions)
{
    static const char *const refused[] = {"v0.0.36", "v0.0.37", "v0.0.39", "v0.0.47",
                                          "0.0.46",  "V0.0.46", "latest"};
    char set[64];
    const char *sets[1] = {set};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        snprintf(set, sizeof(set), "rest.api_version=%s", sluice_rest_version_name(v));
        cr_assert_eq(config_case_load(BASE, no_env, sets, 1, &cfg, &err), SLUICE_OK, "%s: %s", set,
                     err.text);
        cr_assert_str_eq(cfg->rest.api_version, sluice_rest_version_name(v));
        sluice_config_free(cfg);
        cfg = NULL;
    }
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        snprintf(set, sizeof(set), "rest.api_version=%s", refused[i]);
        cr_assert_eq(config_case_load(BASE, no_env, sets, 1, &cfg, &err), SLUICE_ECONFIG, "%s",
                     set);
        cr_assert_not_null(strstr(err.text, "expected auto, v0.0.38 or v0.0.40 to v0.0.46"),
                           "%s: %s", set, err.text);
    }
}
