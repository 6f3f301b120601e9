/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_clusters.c - `clusters:` in the site file: the entries, what
 * each inherits from the top level (rest, storage and sbatch_directives
 * field by field, the token source and the client certificate whole,
 * gpu_series and executables replaced), the environment for the first cluster only, every
 * error with the field it names, the accessors, `config show` of the
 * clusters (secrets redacted), and a cluster's model rendering a launch.
 * The environment is always injected, never the process's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <sluice/config.h>
#include <sluice/launch.h>
#include <sluice/render.h>

#include "cmd_case.h"
#include "config_case.h"
#include "site/config_model.h"

/* The top level every case shares: rest, storage and the sandbox. */
#define TOP                                                                                        \
    "rest:\n"                                                                                      \
    "  url: https://rest.example:6820\n"                                                           \
    "  jwt_file: /etc/sluice/east.jwt\n"                                                           \
    "storage:\n"                                                                                   \
    "  root: /lustre/s\n"                                                                          \
    "job_launcher:\n"                                                                              \
    "  sandbox: none\n"                                                                            \
    "  sbatch_directives:\n"                                                                       \
    "    partition: batch\n"                                                                       \
    "    account: flare\n"

Test(config_clusters, without_clusters_the_config_is_its_one_cluster)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    cr_assert_eq(config_case_load(TOP, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(sluice_config_cluster_count(cfg), 1);
    cr_expect_eq(sluice_config_cluster_at(cfg, 0), cfg);
    cr_expect_null(sluice_config_cluster_at(cfg, 1));
    cr_expect_eq(sluice_config_cluster_named(cfg, NULL), cfg);
    cr_expect_eq(sluice_config_cluster_named(cfg, ""), cfg);
    cr_expect_eq(sluice_config_cluster_named(cfg, "default"), cfg);
    cr_expect_null(sluice_config_cluster_named(cfg, "east"));
    cr_expect_str_eq(sluice_config_cluster_name(cfg), "default");
    /* config show is as before: no "clusters" member. */
    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK, "%s", err.text);
    cr_expect_null(json_object_get(j, "clusters"));
    json_decref(j);
    sluice_config_free(cfg);
    cr_expect_eq(sluice_config_cluster_count(NULL), 0);
    cr_expect_null(sluice_config_cluster_at(NULL, 0));
    cr_expect_null(sluice_config_cluster_named(NULL, NULL));
    cr_expect_null(sluice_config_cluster_name(NULL));
}

Test(config_clusters, entries_inherit_the_top_level_block_by_block)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_config_t *east, *west;

    cr_assert_eq(config_case_load(TOP "clusters:\n"
                                      "  - name: east\n"
                                      "  - name: west\n"
                                      "    rest:\n"
                                      "      url: https://west.example:6820\n"
                                      "      api_version: v0.0.40\n"
                                      "    storage:\n"
                                      "      cluster_root: /gpfs/s\n"
                                      "    job_launcher:\n"
                                      "      sbatch_directives:\n"
                                      "        partition: gpu\n"
                                      "        time: \"2:00:00\"\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_config_cluster_count(cfg), 2);
    cr_expect_null(sluice_config_cluster_name(cfg));
    east = sluice_config_cluster_at(cfg, 0);
    west = sluice_config_cluster_at(cfg, 1);
    cr_assert_not_null(east);
    cr_assert_not_null(west);
    cr_expect_neq(east, cfg);
    cr_expect_eq(sluice_config_cluster_named(cfg, NULL), east);
    cr_expect_eq(sluice_config_cluster_named(cfg, "west"), west);
    cr_expect_null(sluice_config_cluster_named(cfg, "north"));
    cr_expect_str_eq(sluice_config_cluster_name(east), "east");
    cr_expect_str_eq(sluice_config_cluster_name(west), "west");
    /* A cluster is one cluster: itself. */
    cr_expect_eq(sluice_config_cluster_count(west), 1);
    cr_expect_eq(sluice_config_cluster_at(west, 0), west);
    cr_expect_eq(sluice_config_cluster_named(west, NULL), west);

    /* east: the top level unchanged. */
    cr_expect_str_eq(east->rest.url, "https://rest.example:6820");
    cr_expect_str_eq(east->rest.jwt_file, "/etc/sluice/east.jwt");
    cr_expect_str_eq(east->storage.root, "/lustre/s");
    cr_expect_str_eq(east->storage.cluster_root, "/lustre/s");
    cr_expect_str_eq(east->launcher.sbatch.partition, "batch");
    /* west: its own fields, the others inherited field by field. */
    cr_expect_str_eq(west->rest.url, "https://west.example:6820");
    cr_expect_str_eq(west->rest.api_version, "v0.0.40");
    cr_expect_str_eq(west->rest.jwt_file, "/etc/sluice/east.jwt");
    cr_expect_str_eq(west->storage.root, "/lustre/s");
    cr_expect_str_eq(west->storage.cluster_root, "/gpfs/s");
    cr_expect_str_eq(west->launcher.sbatch.partition, "gpu");
    cr_expect_str_eq(west->launcher.sbatch.account, "flare");
    cr_expect_eq(west->launcher.sbatch.time_minutes, 120);
    /* Every other block is the site's. */
    cr_expect_eq(west->launcher.sandbox, SLUICE_SANDBOX_NONE);
    cr_expect_eq(west->launcher.internal_port, 8102);
    cr_expect_str_eq(west->site_name, "default");
    cr_expect_eq(sluice_config_source(west, "rest.url"), SLUICE_SRC_FILE);
    cr_expect_eq(sluice_config_source(west, "rest.user"), SLUICE_SRC_DEFAULT);
    /* The site itself holds the top level. */
    cr_expect_str_eq(cfg->rest.url, "https://rest.example:6820");
    cr_expect_str_eq(cfg->launcher.sbatch.partition, "batch");
    sluice_config_free(cfg);
}

Test(config_clusters, the_token_source_and_the_client_certificate_are_taken_whole)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_config_t *k;

    cr_assert_eq(config_case_load("rest:\n"
                                  "  url: https://rest.example:6820\n"
                                  "  jwt_file: /etc/sluice/east.jwt\n"
                                  "  client_cert: /etc/sluice/c.pem\n"
                                  "  client_key: /etc/sluice/c.key\n"
                                  "storage:\n"
                                  "  root: /lustre/s\n"
                                  "  cluster_root: /cluster/s\n"
                                  "job_launcher:\n"
                                  "  sandbox: none\n"
                                  "clusters:\n"
                                  "  - name: east\n"
                                  "  - name: west\n"
                                  "    rest:\n"
                                  "      jwt_key_file: /etc/sluice/west.key\n"
                                  "      user: flare\n"
                                  "      client_cert: /etc/sluice/w.pem\n"
                                  "      client_key: /etc/sluice/w.key\n"
                                  "    storage:\n"
                                  "      root: /west/s\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    k = sluice_config_cluster_named(cfg, "west");
    cr_assert_not_null(k);
    cr_expect_null(k->rest.jwt_file);
    cr_expect_str_eq(k->rest.jwt_key_file, "/etc/sluice/west.key");
    cr_expect_str_eq(k->rest.client_cert, "/etc/sluice/w.pem");
    cr_expect_str_eq(k->rest.client_key, "/etc/sluice/w.key");
    cr_expect_eq(sluice_config_source(k, "rest.jwt_file"), SLUICE_SRC_DEFAULT);
    /* storage.root replaces the pair: cluster_root follows the new root. */
    cr_expect_str_eq(k->storage.root, "/west/s");
    cr_expect_str_eq(k->storage.cluster_root, "/west/s");
    k = sluice_config_cluster_named(cfg, "east");
    cr_expect_str_eq(k->rest.jwt_file, "/etc/sluice/east.jwt");
    cr_expect_str_eq(k->storage.cluster_root, "/cluster/s");
    sluice_config_free(cfg);
}

Test(config_clusters, gpu_series_replaces_the_catalogue)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_config_t *a, *b, *c;

    cr_assert_eq(config_case_load(TOP "gpu_series:\n"
                                      "  h100: {constraint: h100, gpus_per_node: 8}\n"
                                      "  a100: {constraint: a100}\n"
                                      "clusters:\n"
                                      "  - name: a\n"
                                      "  - name: b\n"
                                      "    gpu_series:\n"
                                      "      mi250: {constraint: mi250, gpu_vendor: amd}\n"
                                      "  - name: c\n"
                                      "    gpu_series: {}\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    a = sluice_config_cluster_at(cfg, 0);
    b = sluice_config_cluster_at(cfg, 1);
    c = sluice_config_cluster_at(cfg, 2);
    cr_assert_not_null(c);
    cr_expect_eq(a->n_gpu_series, 2);
    cr_expect_not_null(sluice_config_gpu_series(a, "h100"));
    cr_expect_eq(b->n_gpu_series, 1);
    cr_expect_null(sluice_config_gpu_series(b, "h100"));
    cr_expect_str_eq(sluice_config_gpu_series(b, "mi250")->gpu_vendor, "amd");
    cr_expect_eq(c->n_gpu_series, 0);
    sluice_config_free(cfg);
}

/* Another cluster's Slurm may be installed elsewhere: its own srun. */
Test(config_clusters, executables_replace_the_map)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_config_t *a, *b, *c;

    cr_assert_eq(config_case_load(TOP "  executables:\n"
                                      "    srun: /opt/slurm/bin/srun\n"
                                      "    apptainer: /opt/apptainer/bin/apptainer\n"
                                      "clusters:\n"
                                      "  - name: a\n"
                                      "  - name: b\n"
                                      "    job_launcher:\n"
                                      "      executables:\n"
                                      "        srun: /usr/bin/srun\n"
                                      "  - name: c\n"
                                      "    job_launcher:\n"
                                      "      executables: {}\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    a = sluice_config_cluster_at(cfg, 0);
    b = sluice_config_cluster_at(cfg, 1);
    c = sluice_config_cluster_at(cfg, 2);
    cr_assert_not_null(c);
    cr_expect_str_eq(sluice_config_executable(a, "srun"), "/opt/slurm/bin/srun");
    cr_expect_str_eq(sluice_config_executable(b, "srun"), "/usr/bin/srun");
    cr_expect_null(sluice_config_executable(b, "apptainer"));
    cr_expect_null(sluice_config_executable(c, "srun"));
    sluice_config_free(cfg);
    cfg = NULL;
    cr_expect_neq(config_case_load(TOP "clusters:\n"
                                       "  - name: a\n"
                                       "    job_launcher:\n"
                                       "      executables:\n"
                                       "        srun: bin/srun\n",
                                   NULL, NULL, 0, &cfg, &err),
                  SLUICE_OK);
    cr_expect(strstr(err.text, "clusters[0].job_launcher.executables") != NULL, "%s", err.text);
    sluice_config_free(cfg);
}

Test(config_clusters, the_environment_gives_rest_and_storage_to_the_first_cluster_only)
{
    static const char *const env[] = {"SLUICE_REST_URL=https://env.example:6820",
                                      "FORGE_STORAGE_ROOT=/env/s", "FORGE_SLURM_PARTITION=envpart",
                                      "SLUICE_JOB_LAUNCHER_QUERY_TIMEOUT=42", NULL};
    static const char *const sets[] = {"rest.api_version=v0.0.41", "submit.in_flight=2"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_config_t *first, *second;

    cr_assert_eq(config_case_load(TOP "clusters:\n"
                                      "  - name: east\n"
                                      "    rest: {url: \"https://east.example:6820\"}\n"
                                      "  - name: west\n"
                                      "    rest: {url: \"https://west.example:6820\"}\n",
                                  env, sets, 2, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    first = sluice_config_cluster_at(cfg, 0);
    second = sluice_config_cluster_at(cfg, 1);
    /* The first: the environment and --set win over its entry. */
    cr_expect_str_eq(first->rest.url, "https://env.example:6820");
    cr_expect_eq(sluice_config_source(first, "rest.url"), SLUICE_SRC_ENV);
    cr_expect_str_eq(first->storage.root, "/env/s");
    cr_expect_str_eq(first->launcher.sbatch.partition, "envpart");
    cr_expect_str_eq(first->rest.api_version, "v0.0.41");
    /* The others keep the file's per-cluster values. */
    cr_expect_str_eq(second->rest.url, "https://west.example:6820");
    cr_expect_str_eq(second->storage.root, "/lustre/s");
    cr_expect_str_eq(second->launcher.sbatch.partition, "batch");
    cr_expect_str_eq(second->rest.api_version, "auto");
    /* Site-wide keys reach every cluster. */
    cr_expect_eq(first->launcher.query_timeout_s, 42);
    cr_expect_eq(second->launcher.query_timeout_s, 42);
    cr_expect_eq(first->submit.in_flight, 2);
    cr_expect_eq(second->submit.in_flight, 2);
    sluice_config_free(cfg);
}

Test(config_clusters, the_top_level_needs_no_rest_url_when_every_entry_has_one)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(
        config_case_load("job_launcher:\n"
                         "  sandbox: none\n"
                         "clusters:\n"
                         "  - name: east\n"
                         "    rest: {url: \"https://east.example:6820\"}\n"
                         "    storage: {root: /east}\n"
                         "  - name: west\n"
                         "    rest: {url: \"unix:/run/west.sock\", jwt_file: /etc/west.jwt}\n"
                         "    storage: {root: /west}\n",
                         NULL, NULL, 0, &cfg, &err),
        SLUICE_OK, "%s", err.text);
    cr_expect_null(cfg->rest.url);
    cr_expect_str_eq(sluice_config_cluster_at(cfg, 1)->rest.url, "unix:/run/west.sock");
    sluice_config_free(cfg);
}

struct bad_case {
    const char *yaml;
    const char *message;
};

static const struct bad_case bad_cases[] = {
    /* The list and its entries. */
    {TOP "clusters: east\n",
     "site.yaml:11:11: clusters: expected a list of clusters ({name, rest, storage, "
     "job_launcher, gpu_series}), found a scalar"},
    {TOP "clusters: []\n", "site.yaml:11:11: clusters: expected at least one cluster"},
    {TOP "clusters:\n  - east\n",
     "site.yaml:12:5: clusters[0]: expected a mapping of name, rest, storage, job_launcher, "
     "gpu_series, found a scalar"},
    {TOP "clusters:\n  - rest: {url: \"https://e:1\"}\n",
     "site.yaml:12:5: clusters[0].name: required"},
    {TOP "clusters:\n  - name: East\n",
     "site.yaml:12:11: clusters[0].name: expected a cluster name: 1-32 characters from [a-z0-9-], "
     "the first a letter or digit"},
    {TOP "clusters:\n  - name: -east\n",
     "site.yaml:12:11: clusters[0].name: expected a cluster name: 1-32 characters from [a-z0-9-], "
     "the first a letter or digit"},
    {TOP "clusters:\n  - name: abcdefghijklmnopqrstuvwxyz0123456\n",
     "site.yaml:12:11: clusters[0].name: expected a cluster name: 1-32 characters from [a-z0-9-], "
     "the first a letter or digit"},
    {TOP "clusters:\n  - name: [a]\n",
     "site.yaml:12:11: clusters[0].name: expected a cluster name: 1-32 characters from [a-z0-9-], "
     "the first a letter or digit"},
    {TOP "clusters:\n  - name: east\n  - name: west\n  - name: east\n",
     "site.yaml:14:11: clusters[2].name: \"east\" is already the name of clusters[0]"},
    /* Unknown keys, at every level of an entry. */
    {TOP "clusters:\n  - name: east\n    policy: {}\n",
     "site.yaml:13:5: clusters[0].policy: unknown key (expected name, rest, storage, "
     "job_launcher, gpu_series)"},
    {TOP "clusters:\n  - name: east\n    rest: {ulr: \"https://e:1\"}\n",
     "site.yaml:13:12: clusters[0].rest.ulr: unknown key (did you mean clusters[0].rest.url?)"},
    {TOP "clusters:\n  - name: east\n    storage: {roots: /x}\n",
     "site.yaml:13:15: clusters[0].storage.roots: unknown key (did you mean "
     "clusters[0].storage.root?)"},
    {TOP "clusters:\n  - name: east\n    job_launcher: {sandbox: apptainer}\n",
     "site.yaml:13:20: clusters[0].job_launcher.sandbox: unknown key (a cluster sets only "
     "job_launcher.sbatch_directives and job_launcher.executables; the other job_launcher "
     "keys are the site's)"},
    {TOP "clusters:\n  - name: east\n    job_launcher:\n      sbatch_directives: {partitoin: x}\n",
     "site.yaml:14:27: clusters[0].job_launcher.sbatch_directives.partitoin: unknown key (did "
     "you mean clusters[0].job_launcher.sbatch_directives.partition?)"},
    {TOP "clusters:\n  - name: east\n    gpu_series:\n      h100: {gres: gpu}\n",
     "site.yaml:14:13: clusters[0].gpu_series.h100: constraint is required (fail-closed: a series "
     "without a Slurm constraint could land on any GPU node)"},
    /* Values, named with the entry. */
    {TOP "clusters:\n  - name: east\n  - name: west\n    rest: {url: \"ftp://w\"}\n",
     "site.yaml:14:17: clusters[1].rest.url: expected an https://, http:// (loopback) or unix:/ "
     "URL"},
    {TOP "clusters:\n  - name: east\n    rest: {jwt_lifespan: 5}\n",
     "site.yaml:13:26: clusters[0].rest.jwt_lifespan: expected a duration from 60s to 86400s, got "
     "5s"},
    {TOP "clusters:\n  - name: east\n    rest: {url: \"http://rest.example\"}\n",
     "site.yaml:13:17: clusters[0].rest.url: expected an https://, http:// (loopback) or unix:/ "
     "URL (plain http to another host needs rest.allow_insecure_http: true)"},
    {TOP "clusters:\n  - name: east\n    rest: {client_cert: /c.pem}\n",
     "site.yaml:13:25: clusters[0].rest.client_cert: rest.client_cert and rest.client_key go "
     "together"},
    {TOP "policy: {default_gpu_series: h100}\ngpu_series:\n  h100: {constraint: h100}\n"
         "clusters:\n  - name: east\n  - name: west\n    gpu_series: {}\n",
     "site.yaml:11:30: clusters[1].policy.default_gpu_series: \"h100\" is not a series of "
     "gpu_series (known: none)"},
    /* Every cluster ends up with a URL, a storage root, a token source and
     * a user where a key mints. */
    {"job_launcher:\n  sandbox: none\nstorage: {root: /s}\n"
     "clusters:\n  - name: east\n    rest: {url: \"https://e:1\"}\n  - name: west\n",
     "site.yaml:7:5: clusters[1].rest.url: required (set rest.url in this entry or at the top "
     "level)"},
    {"job_launcher:\n  sandbox: none\nrest: {url: \"https://e:1\"}\n"
     "clusters:\n  - name: east\n",
     "site.yaml:5:5: clusters[0].storage.root: required (set storage.root in this entry or at the "
     "top level)"},
    {"job_launcher:\n  sandbox: none\nrest: {url: \"https://e:1\"}\nstorage: {root: /s}\n"
     "clusters:\n  - name: east\n  - name: west\n",
     "site.yaml:7:5: clusters[1].rest.jwt_file: required: a cluster other than the first needs a "
     "token source (rest.jwt_file, rest.jwt_key_file, rest.jwt_rs256_key_file or rest.jwt_command, "
     "in this entry or at the top level); $SLURM_JWT is the first cluster's only"},
    {TOP "clusters:\n  - name: east\n  - name: west\n    rest: {jwt_key_file: /k}\n",
     "site.yaml:13:5: clusters[1].rest.user: required when rest.jwt_key_file mints the token (it "
     "names this user; set rest.user in this entry or at the top level)"},
    /* The top level still needs its sandbox. */
    {"rest: {url: \"https://e:1\"}\nstorage: {root: /s}\nclusters:\n  - name: east\n",
     "site.yaml: job_launcher.sandbox: required (enroot-pyxis, apptainer or none; or "
     "FORGE_SLURM_RUNTIME_PROFILE)"},
};

#define N_BAD (sizeof(bad_cases) / sizeof(bad_cases[0]))

/* Indices, not the cases: Criterion re-executes the test binary, so
 * pointers inside parameters would not survive (test_config.c). */
ParameterizedTestParameters(config_clusters, bad)
{
    static size_t idx[N_BAD];
    size_t i;

    for (i = 0; i < N_BAD; i++)
        idx[i] = i;
    return cr_make_param_array(size_t, idx, N_BAD);
}

ParameterizedTest(size_t *i, config_clusters, bad)
{
    const struct bad_case *bc = &bad_cases[*i];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(bc->yaml, NULL, NULL, 0, &cfg, &err), SLUICE_ECONFIG,
                 "case %zu loaded:\n%s", *i, bc->yaml);
    cr_expect_null(cfg);
    cr_expect_str_eq(err.text, bc->message, "case %zu:\n got  %s\n want %s", *i, err.text,
                     bc->message);
}

Test(config_clusters, config_show_lists_the_clusters_with_secrets_redacted)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL, *list, *west;
    char *text;

    cr_assert_eq(config_case_load(TOP "clusters:\n"
                                      "  - name: east\n"
                                      "  - name: west\n"
                                      "    rest:\n"
                                      "      url: \"https://flare:s3cret@west.example:6820\"\n"
                                      "      jwt_key_file: /etc/sluice/west.key\n"
                                      "      user: flare\n"
                                      "    gpu_series:\n"
                                      "      mi250: {constraint: mi250}\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK, "%s", err.text);
    list = json_object_get(j, "clusters");
    cr_assert(json_is_array(list));
    cr_assert_eq(json_array_size(list), 2);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "name")), "east");
    west = json_array_get(list, 1);
    cr_expect_str_eq(json_string_value(json_object_get(west, "name")), "west");
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(west, "config"), "rest"), "url")),
                     "https://flare:***@west.example:6820");
    cr_expect_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(west, "config"), "rest"), "jwt_key_file")),
                     "/etc/sluice/west.key");
    cr_expect_str_eq(
        json_string_value(json_object_get(json_object_get(west, "sources"), "rest.url")), "file");
    cr_expect_not_null(
        json_object_get(json_object_get(json_object_get(west, "config"), "gpu_series"), "mi250"));
    /* Only the per-cluster blocks: the others are the site's. */
    cr_expect_null(json_object_get(json_object_get(west, "config"), "policy"));
    text = json_dumps(j, JSON_COMPACT);
    cr_assert_not_null(text);
    cr_expect_null(strstr(text, "s3cret"), "%s", text);
    free(text);
    json_decref(j);
    sluice_config_free(cfg);
}

/* The command's text form: the top level as before, then each cluster as
 * clusters[i].<key>, its identity last; no password. */
Test(config_clusters, config_show_prints_each_cluster)
{
    char path[300];
    FILE *f;
    const char *out;

    cmd_case_setup("clusters");
    snprintf(path, sizeof(path), "%s/site.yaml", cmd_dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(TOP "clusters:\n"
              "  - name: east\n"
              "  - name: west\n"
              "    rest:\n"
              "      url: \"https://flare:s3cret@west.example:6820\"\n"
              "      user: flare\n",
          f);
    fclose(f);
    cr_assert_eq(cmd_sluice("config show --config '%s'", path), 0, "%s", cmd_output());
    out = cmd_output();
    cr_expect(strstr(out, "\nrest.url ") != NULL, "%s", out);
    cr_expect(strstr(out, "\nclusters[0].name                                 east                 "
                          "    (file; the default cluster)\n") != NULL,
              "%s", out);
    cr_expect(strstr(out, "\nclusters[1].rest.url                             "
                          "https://flare:***@west.example:6820 (file)\n") != NULL,
              "%s", out);
    cr_expect(strstr(out, "\nclusters[1].rest.user                            flare") != NULL, "%s",
              out);
    cr_expect(strstr(out, "\nclusters[1].identity.user                        flare") != NULL, "%s",
              out);
    cr_expect(strstr(out, "\nclusters[1].job_launcher.sbatch_directives.partition batch") != NULL,
              "%s", out);
    cr_expect_null(strstr(out, "s3cret"), "%s", out);
    cmd_case_teardown();
}

static int accept_image(const char *path, void *arg)
{
    (void)path;
    (void)arg;
    return 0;
}

Test(config_clusters, a_cluster_renders_a_launch_with_its_own_partition_and_storage)
{
    static const char req[] =
        "{\"launch_id\": \"two-1\", \"site\": \"default\", \"command\": \"/bin/true\", "
        "\"pools\": [{\"name\": \"p\"}]}";
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_config_t *west;
    sluice_launch_policy_t pol;
    sluice_launch_t *launch = NULL;
    sluice_render_ctx_t ctx;
    sluice_render_t *r = NULL;

    memset(&pol, 0, sizeof(pol));
    memset(&ctx, 0, sizeof(ctx));
    cr_assert_eq(config_case_load(TOP
                                  "clusters:\n"
                                  "  - name: east\n"
                                  "  - name: west\n"
                                  "    storage: {root: /west/s}\n"
                                  "    job_launcher:\n"
                                  "      sbatch_directives: {partition: gpu, account: westacct}\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    west = sluice_config_cluster_named(cfg, "west");
    cr_assert_eq(sluice_config_launch_policy(west, NULL, &pol, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_launch_parse(&launch, req, strlen(req), &pol, 0, &err), SLUICE_OK, "%s",
                 err.text);
    ctx.attempt = 1;
    ctx.stat_fn = accept_image;
    cr_assert_eq(sluice_render(west, NULL, launch, &ctx, &r, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(r->n_jobs, 1);
    cr_expect_str_eq(r->jobs[0].partition, "gpu");
    cr_expect_str_eq(r->jobs[0].account, "westacct");
    cr_expect_eq(strncmp(r->staging_service, "/west/s/", 8), 0, "%s", r->staging_service);
    cr_expect_eq(strncmp(r->staging_cluster, "/west/s/", 8), 0, "%s", r->staging_cluster);
    sluice_render_free(r);
    sluice_launch_free(launch);
    sluice_config_launch_policy_clear(&pol);
    sluice_config_free(cfg);
}
