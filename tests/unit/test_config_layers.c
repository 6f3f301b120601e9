/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_layers.c - issue 31's site-file items in the library: what an
 * unset value means in sluice_config_to_json() ("effective"), every error
 * of the file, the environment and --set in one load (errlist), and --set
 * and the environment reaching the entries of job_launcher.executables and
 * gpu_series, the file-only keys refused by name.  The environment is
 * always injected, never the process's own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <jansson.h>

#include <sluice/config.h>
#include "site/config_int.h"

#include "config_case.h"

static const char *const no_env[] = {NULL};

#define BASE                                                                                       \
    "rest:\n"                                                                                      \
    "  url: https://rest.example:6820\n"                                                           \
    "storage:\n"                                                                                   \
    "  root: /lustre/s\n"                                                                          \
    "job_launcher:\n"                                                                              \
    "  sandbox: none\n"

/* sluice_config_load() of `text` with an error list; the load's code. */
static sluice_err load_all(const char *text,
                           const char *const *envp,
                           const char *const *sets,
                           size_t n_sets,
                           sluice_errlist_t *errs,
                           sluice_error_t *err)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_err rc;

    o.text = text;
    o.text_len = strlen(text);
    o.text_name = "site.yaml";
    o.envp = envp ? envp : no_env;
    o.overrides = sets;
    o.n_overrides = n_sets;
    o.errors = errs;
    rc = sluice_config_load(&o, &cfg, err);
    sluice_config_free(cfg);
    return rc;
}

static json_t *shown(const sluice_config_t *cfg)
{
    json_t *j = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_config_to_json(cfg, &j, &err), SLUICE_OK, "%s", err.text);
    return j;
}

/* ---- 1. what unset values mean ---------------------------------------- */

Test(config_layers, every_meaning_names_a_field)
{
    size_t i;

    cr_assert_gt(cfg_meaning_count(), 20);
    for (i = 0; i < cfg_meaning_count(); i++)
        cr_expect_not_null(cfg_find_field(cfg_meaning_path(i)), "%s", cfg_meaning_path(i));
}

/* A field whose description says what its unset (or 0, or empty) value
 * does has words for it in config show. */
Test(config_layers, every_field_described_as_unset_has_a_meaning)
{
    static const char *const says[] = {"unset,", "Unset,", "empty,", "Empty,", "0 keeps"};
    char buf[512];
    size_t i, k;

    for (i = 0; i < CFG_N_FIELDS; i++) {
        for (k = 0; k < sizeof(says) / sizeof(says[0]); k++) {
            if (strstr(cfg_fields[i].doc, says[k]) == NULL)
                continue;
            cr_expect_not_null(cfg_meaning(NULL, &cfg_fields[i], buf, sizeof(buf)),
                               "%s says \"%s\" but config show has no words for it",
                               cfg_fields[i].path, says[k]);
        }
    }
}

Test(config_layers, show_gives_the_effective_default_beside_the_raw_value)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j, *conf, *eff;

    cr_assert_eq(config_case_load(BASE, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    j = shown(cfg);
    conf = json_object_get(json_object_get(j, "config"), "job_launcher");
    eff = json_object_get(j, "effective");
    /* the raw values stay what they were: consumers of "config" see no change */
    cr_assert(json_is_null(json_object_get(conf, "gpu_vendor")));
    cr_assert_eq(json_integer_value(json_object_get(conf, "poll_interval")), 0);
    cr_assert_str_eq(json_string_value(json_object_get(eff, "job_launcher.gpu_vendor")), "nvidia");
    cr_assert_str_eq(json_string_value(json_object_get(eff, "job_launcher.poll_interval")),
                     "auto: 2s, 10s on v0.0.38");
    cr_assert_str_eq(json_string_value(json_object_get(eff, "log.level")), "warning");
    cr_assert_str_eq(json_string_value(json_object_get(eff, "store.url")),
                     "SQLite in the state directory");
    cr_assert_str_eq(json_string_value(json_object_get(eff, "job_launcher.job_path")),
                     "/usr/local/bin:/usr/bin:/bin");
    /* a set value has no words: it means itself */
    cr_assert_null(json_object_get(eff, "rest.url"));
    cr_assert_null(json_object_get(eff, "site.name"));
    json_decref(j);
    sluice_config_free(cfg);
}

Test(config_layers, a_set_value_drops_its_meaning)
{
    static const char *const sets[] = {"job_launcher.gpu_vendor=amd",
                                       "job_launcher.poll_interval=5s",
                                       "job_launcher.executables.srun=/opt/slurm/bin/srun"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j, *eff;

    cr_assert_eq(config_case_load(BASE, NULL, sets, 3, &cfg, &err), SLUICE_OK, "%s", err.text);
    j = shown(cfg);
    eff = json_object_get(j, "effective");
    cr_assert_null(json_object_get(eff, "job_launcher.gpu_vendor"));
    cr_assert_null(json_object_get(eff, "job_launcher.poll_interval"));
    /* the job's PATH follows srun's directory, as the renderer does */
    cr_assert_str_eq(json_string_value(json_object_get(eff, "job_launcher.job_path")),
                     "/opt/slurm/bin:/usr/local/bin:/usr/bin:/bin");
    json_decref(j);
    sluice_config_free(cfg);
}

Test(config_layers, each_cluster_has_its_own_effective_block)
{
    static const char text[] = "job_launcher:\n  sandbox: none\n"
                               "clusters:\n"
                               "  - name: a\n    rest: {url: https://a.example}\n"
                               "    storage: {root: /a}\n"
                               "  - name: b\n    rest: {url: https://b.example, jwt_file: /b/t}\n"
                               "    storage: {root: /b}\n";
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j, *k;

    cr_assert_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    j = shown(cfg);
    k = json_array_get(json_object_get(j, "clusters"), 1);
    cr_assert_not_null(k);
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(k, "effective"), "rest.user")),
        "the token's own user");
    json_decref(j);
    sluice_config_free(cfg);
}

/* ---- 3. every error in one run ---------------------------------------- */

Test(config_layers, every_error_of_the_file_in_one_load)
{
    static const char text[] = "rest:\n"
                               "  url: https://rest.example:6820\n"
                               "  bogus: 1\n"
                               "storage:\n"
                               "  root: relative/path\n"
                               "job_launcher:\n"
                               "  sandbox: none\n"
                               "  setup: {a: 1}\n"
                               "  internal_port: 70000\n";
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(load_all(text, NULL, NULL, 0, &errs, &err), SLUICE_ECONFIG);
    /* the first one is the message a load without a list gives */
    cr_assert_str_eq(err.text, "site.yaml:3:3: rest.bogus: unknown key");
    cr_assert_eq(errs.n, 4, "%zu", errs.n);
    cr_assert_str_eq(errs.items[0].reason, err.text);
    cr_assert_str_eq(errs.items[0].path, "rest.bogus");
    cr_assert_str_eq(errs.items[1].path, "storage.root");
    cr_assert_str_eq(errs.items[1].reason,
                     "site.yaml:5:9: storage.root: expected an absolute path");
    cr_assert_str_eq(errs.items[2].path, "job_launcher.setup");
    cr_assert(strstr(errs.items[2].reason, "site.yaml:8:10: job_launcher.setup: ") ==
                  errs.items[2].reason,
              "%s", errs.items[2].reason);
    cr_assert_str_eq(errs.items[3].reason, "site.yaml:9:18: job_launcher.internal_port: expected "
                                           "an integer from 1 to 65535, got 70000");
    cr_assert_eq(errs.dropped, 0);
    sluice_errlist_clear(&errs);
}

Test(config_layers, without_a_list_the_first_error_is_the_message)
{
    static const char text[] = BASE "  bogus: 1\n  internal_port: 0\n";
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(text, NULL, NULL, 0, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_null(cfg);
    cr_assert(strncmp(err.text, "site.yaml:7:3: job_launcher.bogus: unknown key", 46) == 0, "%s",
              err.text);
}

/* A caller built against version 1 of the options has no `errors`: the
 * library must not read past its struct. */
Test(config_layers, version_1_options_are_not_given_a_list)
{
    static const char text[] = BASE "  bogus: 1\n  internal_port: 0\n";
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    o.version = 1;
    o.text = text;
    o.text_len = strlen(text);
    o.envp = no_env;
    o.errors = &errs;
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_eq(errs.n, 0);
    cr_assert_not_null(strstr(err.text, "job_launcher.bogus: unknown key"), "%s", err.text);
}

Test(config_layers, the_environment_and_set_errors_join_the_file_s)
{
    static const char *const env[] = {"SLUICE_JOB_LAUNCHER_POLL_INTERVAL=soon",
                                      "SLUICE_REST_JWT_COMMAND=/bin/true", NULL};
    static const char *const sets[] = {"job_launcher.nope=1", "server.threads=0", "noequals"};
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t i;
    bool saw_argv = false;

    cr_assert_eq(load_all(BASE "  bogus: 1\n", env, sets, 3, &errs, &err), SLUICE_ECONFIG);
    cr_assert_eq(errs.n, 6, "%zu", errs.n);
    cr_assert_str_eq(err.text, "site.yaml:7:3: job_launcher.bogus: unknown key");
    for (i = 0; i < errs.n; i++)
        saw_argv |= strstr(errs.items[i].reason, "rest.jwt_command: cannot be set from the "
                                                 "environment or --set: set in the site file "
                                                 "only") != NULL;
    cr_assert(saw_argv);
    cr_assert_not_null(strstr(errs.items[3].reason, "--set job_launcher.nope: unknown key"), "%s",
                       errs.items[3].reason);
    cr_assert_not_null(strstr(errs.items[5].reason, "--set 'noequals': expected key=value"), "%s",
                       errs.items[5].reason);
    sluice_errlist_clear(&errs);
}

Test(config_layers, the_list_is_capped_and_says_how_many_were_left_out)
{
    char text[8192];
    size_t used, i;
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    used = (size_t)snprintf(text, sizeof(text), "%s", BASE);
    for (i = 0; i < SLUICE_ERRLIST_MAX + 6; i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used, "  bogus%zu: 1\n", i);
    cr_assert_eq(load_all(text, NULL, NULL, 0, &errs, &err), SLUICE_ECONFIG);
    cr_assert_eq(errs.n, SLUICE_ERRLIST_MAX);
    cr_assert_eq(errs.dropped, 6);
    sluice_errlist_clear(&errs);
}

/* The checks across fields wait for good fields: a bad field is the one
 * error, not a "required" that follows from it. */
Test(config_layers, cross_field_checks_wait_for_good_fields)
{
    static const char text[] = "rest:\n  url: ftp://x\nstorage:\n  root: /s\n";
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(load_all(text, NULL, NULL, 0, &errs, &err), SLUICE_ECONFIG);
    cr_assert_eq(errs.n, 1);
    cr_assert_not_null(strstr(err.text, "rest.url: expected an https://"), "%s", err.text);
    sluice_errlist_clear(&errs);
}

/* Arrays, not pointers: Criterion copies parameters into each test's
 * process. */
typedef struct {
    char body[256]; /* after BASE */
    size_t n;       /* errors */
    char first[96]; /* in the first one */
} many_t;

ParameterizedTestParameters(config_layers, counted)
{
    static many_t cases[] = {
        {"  poll_interval: -1\n  submit_timeout: x\n", 2, "job_launcher.poll_interval:"},
        {"  image: rel\n  gpu_vendor: intel\n  python_path: x\n", 3, "job_launcher.image:"},
        {"  executables: {srun: bin/srun}\n  forward_env: [\"1x\"]\n", 2,
         "job_launcher.executables.srun:"},
        {"  sbatch_directives: {time: forever, qos: \"\", nope: 1}\n", 3,
         "job_launcher.sbatch_directives.time"},
        {"policy:\n  max_time_minutes: \"10\"\nlog: {level: loud, format: xml}\n", 3,
         "got \"10\" as a quoted string"},
        {"  poll_interval: 2s\n", 0, ""},
    };
    return cr_make_param_array(many_t, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(many_t *c, config_layers, counted)
{
    char text[512];
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_err rc;

    snprintf(text, sizeof(text), "%s%s", BASE, c->body);
    rc = load_all(text, NULL, NULL, 0, &errs, &err);
    cr_assert_eq(errs.n, c->n, "%s: %zu errors (%s)", c->body, errs.n, err.text);
    cr_assert_eq(rc, c->n ? SLUICE_ECONFIG : SLUICE_OK);
    if (c->n)
        cr_assert_not_null(strstr(err.text, c->first), "%s", err.text);
    sluice_errlist_clear(&errs);
}

/* ---- 4. --set and the environment reach the maps' entries -------------- */

Test(config_layers, set_adds_and_replaces_one_executable)
{
    static const char *const sets[] = {"job_launcher.executables.srun=/usr/bin/srun",
                                       "job_launcher.executables.enroot=/opt/enroot/bin/enroot"};
    static const char text[] = BASE "  executables:\n    srun: /opt/slurm/bin/srun\n"
                                    "    apptainer: /opt/apptainer/bin/apptainer\n";
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(text, NULL, sets, 2, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->launcher.n_executables, 3);
    cr_assert_str_eq(sluice_config_executable(cfg, "srun"), "/usr/bin/srun");
    cr_assert_str_eq(sluice_config_executable(cfg, "apptainer"), "/opt/apptainer/bin/apptainer");
    cr_assert_str_eq(sluice_config_executable(cfg, "enroot"), "/opt/enroot/bin/enroot");
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.executables"), SLUICE_SRC_FLAG);
    sluice_config_free(cfg);
}

Test(config_layers, the_environment_reaches_an_executable)
{
    static const char *const env[] = {"SLUICE_JOB_LAUNCHER_EXECUTABLES_SRUN=/opt/s/bin/srun", NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, env, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_config_executable(cfg, "srun"), "/opt/s/bin/srun");
    cr_assert_eq(sluice_config_source(cfg, "job_launcher.executables"), SLUICE_SRC_ENV);
    sluice_config_free(cfg);
}

Test(config_layers, set_builds_and_changes_a_gpu_series)
{
    static const char *const sets[] = {"gpu_series.b200.constraint=b200&ib",
                                       "gpu_series.b200.gpus_per_node=8",
                                       "gpu_series.h100.gpu_vendor=amd"};
    static const char text[] = BASE "gpu_series:\n  h100: {constraint: h100, gpus_per_node: 4, "
                                    "gres: \"gpu:h100\"}\n";
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_gpu_series_t *g;

    cr_assert_eq(config_case_load(text, NULL, sets, 3, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(cfg->n_gpu_series, 2);
    cr_assert_not_null(g = sluice_config_gpu_series(cfg, "b200"));
    cr_assert_str_eq(g->constraint, "b200&ib");
    cr_assert_str_eq(g->gres, "gpu");
    cr_assert_eq(g->gpus_per_node, 8);
    /* one field changed, the entry's others kept */
    cr_assert_not_null(g = sluice_config_gpu_series(cfg, "h100"));
    cr_assert_str_eq(g->constraint, "h100");
    cr_assert_str_eq(g->gres, "gpu:h100");
    cr_assert_eq(g->gpus_per_node, 4);
    cr_assert_str_eq(g->gpu_vendor, "amd");
    sluice_config_free(cfg);
}

/* A --set of a map entry reaches the first cluster, as the per-cluster
 * fields do; the other clusters keep their own. */
Test(config_layers, set_of_a_series_reaches_the_first_cluster)
{
    static const char text[] = "job_launcher:\n  sandbox: none\n"
                               "clusters:\n"
                               "  - name: a\n    rest: {url: https://a.example}\n"
                               "    storage: {root: /a}\n"
                               "  - name: b\n    rest: {url: https://b.example, jwt_file: /b/t}\n"
                               "    storage: {root: /b}\n";
    static const char *const sets[] = {"gpu_series.x.constraint=x"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(text, NULL, sets, 1, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_not_null(sluice_config_gpu_series(sluice_config_cluster_at(cfg, 0), "x"));
    cr_assert_null(sluice_config_gpu_series(sluice_config_cluster_at(cfg, 1), "x"));
    sluice_config_free(cfg);
}

typedef struct {
    char set[128];
    char want[160]; /* in the error */
} badset_t;

ParameterizedTestParameters(config_layers, bad_entry_sets)
{
    static badset_t cases[] = {
        {"job_launcher.executables.srun=bin/srun",
         "--set job_launcher.executables.srun: expected an absolute path"},
        {"job_launcher.executables.docker=/usr/bin/docker",
         "--set job_launcher.executables.docker: unknown command"},
        {"job_launcher.executables.srun=/usr/bin/../srun",
         "--set job_launcher.executables.srun: expected an absolute normalised path"},
        {"gpu_series.b200.gpus_per_node=8",
         "--set gpu_series.b200: constraint is required (fail-closed"},
        {"gpu_series.b200.colour=red", "--set gpu_series.b200.colour: unknown key"},
        {"gpu_series.b200=x", "--set gpu_series.b200: expected gpu_series.NAME.FIELD"},
        {"gpu_series.bad name.constraint=x", "--set gpu_series.bad name: series names use"},
        {"gpu_series.b200.gpus_per_node=0",
         "--set gpu_series.b200.gpus_per_node: expected an integer from 1 to 1024"},
        {"tenants.vision.slurm_user=v",
         "--set tenants.vision.slurm_user: cannot be set from the environment or --set: set in "
         "the site file only"},
        {"clusters[0].rest.url=https://x", "set in the site file only"},
        {"rest.jwt_command=/bin/true",
         "--set rest.jwt_command: cannot be set from the environment or --set: set in the site "
         "file only"},
        {"gpu_series=x", "--set gpu_series: cannot be set from the environment or --set"},
    };
    return cr_make_param_array(badset_t, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(badset_t *c, config_layers, bad_entry_sets)
{
    const char *sets[1] = {c->set};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(BASE, NULL, sets, 1, &cfg, &err), SLUICE_ECONFIG, "%s", c->set);
    cr_assert_null(cfg);
    cr_assert_not_null(strstr(err.text, c->want), "%s: %s", c->set, err.text);
}

/* A failed --set of an entry leaves the file's entries as they were (the
 * load fails, but the model must not lose or leak them on the way). */
Test(config_layers, a_bad_entry_set_keeps_the_others_in_the_error)
{
    static const char *const sets[] = {"job_launcher.executables.srun=rel",
                                       "gpu_series.h100.gres=bad gres"};
    static const char text[] = BASE "  executables: {srun: /usr/bin/srun}\n"
                                    "gpu_series:\n  h100: {constraint: h100}\n";
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(load_all(text, NULL, sets, 2, &errs, &err), SLUICE_ECONFIG);
    cr_assert_eq(errs.n, 2);
    cr_assert_not_null(strstr(errs.items[1].reason, "--set gpu_series.h100.gres: expected a gres"),
                       "%s", errs.items[1].reason);
    sluice_errlist_clear(&errs);
}

/* The entries of `clusters:` go on after a bad one too: each entry's bad
 * fields, and an entry of a bad shape, in the one run. */
Test(config_layers, every_cluster_entry_s_errors_in_one_load)
{
    static const char text[] = "job_launcher:\n  sandbox: none\n"
                               "clusters:\n"
                               "  - name: a\n    rest: {url: ftp://a, bogus: 1}\n"
                               "    storage: {root: /a}\n"
                               "  - name: A!\n"
                               "  - name: c\n    rest: {url: https://c.example, jwt_file: /c/t}\n"
                               "    storage: {root: rel}\n";
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(load_all(text, NULL, NULL, 0, &errs, &err), SLUICE_ECONFIG);
    cr_assert_eq(errs.n, 4, "%zu: %s", errs.n, err.text);
    cr_assert_str_eq(err.text, errs.items[0].reason);
    cr_assert_not_null(strstr(errs.items[0].reason, "clusters[0].rest.url: expected"), "%s",
                       errs.items[0].reason);
    cr_assert_not_null(strstr(errs.items[1].reason, "clusters[0].rest.bogus: unknown key"), "%s",
                       errs.items[1].reason);
    cr_assert_not_null(strstr(errs.items[2].reason, "clusters[1].name: expected a cluster name"),
                       "%s", errs.items[2].reason);
    cr_assert_not_null(strstr(errs.items[3].reason, "clusters[2].storage.root: expected an "
                                                    "absolute path"),
                       "%s", errs.items[3].reason);
    sluice_errlist_clear(&errs);
}
