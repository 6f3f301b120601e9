/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch_errors.c - a launch request names every field error it has
 * (sluice_launch_parse_all): the checks go on after a bad field, the
 * errors come in the order of the request document, the first one is the
 * error struct's text, and a bad field never brings a second error about
 * itself from a check that reads it. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/error.h>
#include <sluice/launch.h>

static const char *const partitions[] = {"gpu", "cpu"};
static const char *const any[] = {"*"};
static const sluice_launch_series_t series[] = {
    {"a100", "gpu_a100", "gpu:a100", 8},
};

static char *const secret_env_allowed[] = {"GOOD"};

static sluice_launch_policy_t policy(void)
{
    sluice_launch_policy_t p;

    memset(&p, 0, sizeof(p));
    p.default_profile = SLUICE_LAUNCH_PROFILE_APPTAINER;
    p.allowed_profiles = SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_APPTAINER) |
                         SLUICE_LAUNCH_PROFILE_BIT(SLUICE_LAUNCH_PROFILE_NONE);
    p.partitions = partitions;
    p.n_partitions = 2;
    p.accounts = any;
    p.n_accounts = 1;
    p.qos = any;
    p.n_qos = 1;
    p.series = series;
    p.n_series = 1;
    p.pending_timeout = 600;
    p.secret_env_allowed = secret_env_allowed;
    p.n_secret_env_allowed = 1;
    return p;
}

/* Single quotes to double quotes (no test value needs a single quote). */
static char *q(const char *s)
{
    char *d = strdup(s), *p;

    cr_assert_not_null(d);
    for (p = d; *p; p++)
        if (*p == '\'')
            *p = '"';
    return d;
}

/* Parse `json` (single quotes) and expect exactly the `n` paths, in order;
 * the error struct names the first. */
static void expect_paths(const char *json, const char *const *paths, size_t n)
{
    sluice_launch_policy_t pol = policy();
    sluice_errlist_t errors = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char *j = q(json), first[600];
    size_t i;

    cr_assert_eq(sluice_launch_parse_all(&l, j, strlen(j), &pol, 0, &errors, &err), SLUICE_EINVAL,
                 "%s", json);
    cr_expect_null(l);
    for (i = 0; i < errors.n; i++)
        cr_log_info("%s: %s", errors.items[i].path, errors.items[i].reason);
    cr_assert_eq(errors.n, n, "%s: %zu errors, expected %zu (first: %s)", json, errors.n, n,
                 err.text);
    for (i = 0; i < n; i++)
        cr_expect_str_eq(errors.items[i].path, paths[i], "%s: error %zu", json, i);
    snprintf(first, sizeof(first), "%s: %s", errors.items[0].path, errors.items[0].reason);
    cr_expect_str_eq(err.text, first);
    sluice_errlist_clear(&errors);
    free(j);
}

#define HEAD "'launch_id':'x','site':'s','command':'c'"

Test(launch_errors, two_bad_pools_and_a_bad_time_limit_give_three)
{
    static const char *const paths[] = {"pools[0].nodes", "pools[2].gpus_per_node", "time_limit"};

    /* the time limit after the pools: request order, not the parser's */
    expect_paths("{" HEAD ",'pools':[{'name':'a','nodes':0},{'name':'b'},"
                 "{'name':'c','gpus_per_node':-1}],'time_limit':'soon'}",
                 paths, 3);
}

Test(launch_errors, order_follows_the_document)
{
    static const char *const paths[] = {"time_limit", "pools[0].nodes", "pools[2].gpus_per_node"};

    expect_paths("{" HEAD ",'time_limit':'soon','pools':[{'name':'a','nodes':0},{'name':'b'},"
                 "{'name':'c','gpus_per_node':-1}]}",
                 paths, 3);
}

Test(launch_errors, every_field_of_one_pool)
{
    static const char *const paths[] = {"pools[0].name", "pools[0].colour", "pools[0].nodes",
                                        "pools[0].mem_per_node_mib", "pools[0].gpu_series"};

    expect_paths("{" HEAD ",'pools':[{'name':'P','colour':1,'nodes':'2','mem_per_node_mib':0,"
                 "'gpu_series':'z80'}]}",
                 paths, 5);
}

Test(launch_errors, top_level_fields_unknown_keys_and_lists)
{
    /* a field the request lacks has no place in it: its error comes last */
    static const char *const paths[] = {
        "colour",  "env.LD_PRELOAD", "secret_env[1]", "mounts[0].source", "mounts[1]",
        "requeue", "signal",         "partition",     "args[1]",          "site",
    };

    expect_paths("{'launch_id':'x','command':'c','colour':1,'env':{'LD_PRELOAD':'x','OK':'y'},"
                 "'secret_env':['GOOD','bad name'],'mounts':[{'source':'rel','target':'/data'},7],"
                 "'requeue':'yes','signal':'NOPE','partition':'other','args':['a',5],"
                 "'pools':[{'name':'p'}]}",
                 paths, 10);
}

Test(launch_errors, a_bad_field_brings_no_echo)
{
    /* bad launch-wide command: the pools without their own are not also
     * "required because the launch has no command" */
    static const char *const p1[] = {"command"};
    /* bad profile: the mounts are not also refused for the default profile */
    static const char *const p2[] = {"profile", "pools[1].nodes"};
    /* bad gpus_per_node: no second error from the series check */
    static const char *const p3[] = {"pools[0].gpus_per_node"};

    expect_paths("{'launch_id':'x','site':'s','command':'','pools':[{'name':'a'},{'name':'b'}]}",
                 p1, 1);
    expect_paths("{" HEAD ",'profile':'docker','mounts':[{'source':'/a','target':'/b'}],"
                 "'pools':[{'name':'a'},{'name':'b','nodes':0}]}",
                 p2, 2);
    expect_paths("{" HEAD ",'pools':[{'name':'a','gpus_per_node':99,'gpu_series':'a100'}]}", p3, 1);
}

Test(launch_errors, missing_fields_follow_in_schema_order)
{
    /* launch_id and site are missing, pools[0].command is not there either:
     * after the errors of the fields that are, in the order found */
    static const char *const paths[] = {"pools[1].nodes", "launch_id", "site", "pools[0].command"};

    expect_paths("{'pools':[{'name':'a'},{'name':'b','nodes':0,'command':'c'}]}", paths, 4);
}

Test(launch_errors, cross_field_checks_still_run_on_good_fields)
{
    /* pool b is good apart from the fan-out rule, which still names it */
    static const char *const paths[] = {"pools[0].cpus_per_node", "pools[1].nodes"};

    expect_paths("{" HEAD ",'pools':[{'name':'a','cpus_per_node':0},{'name':'b','nodes':2}]}",
                 paths, 2);
}

Test(launch_errors, nvflare_form_lists_every_block_error)
{
    static const char *const paths[] = {"launcher_spec.s.slurm.nodes",
                                        "launcher_spec.s.slurm.mem_per_node",
                                        "launcher_spec.s.slurm.time"};

    expect_paths("{'launch_id':'x','site':'s','command':'c','profile':'none',"
                 "'resource_spec':{'num_of_gpus':0},'launcher_spec':{'s':{'slurm':{'nodes':0,"
                 "'mem_per_node':'lots','time':'soon'}}}}",
                 paths, 3);
}

Test(launch_errors, a_request_that_is_not_an_object_stops_at_once)
{
    sluice_launch_policy_t pol = policy();
    sluice_errlist_t errors = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;

    cr_assert_eq(sluice_launch_parse_all(&l, "[1]", 3, &pol, 0, &errors, &err), SLUICE_EINVAL);
    cr_expect_eq(errors.n, 0);
    cr_expect_str_eq(err.text, "request: expected a JSON object");
    cr_assert_eq(sluice_launch_parse_all(&l, "{\"a\":", 5, &pol, 0, &errors, &err), SLUICE_EINVAL);
    cr_expect_eq(errors.n, 0);
    cr_expect(strstr(err.text, "line 1, column") != NULL, "%s", err.text);
    sluice_errlist_clear(&errors);
}

Test(launch_errors, the_list_is_bounded)
{
    sluice_launch_policy_t pol = policy();
    sluice_errlist_t errors = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char body[8192];
    size_t used, i;

    used = (size_t)snprintf(body, sizeof(body), "{" HEAD ",\"pools\":[{\"name\":\"p\"}]");
    for (i = 0; i < SLUICE_ERRLIST_MAX + 10; i++)
        used += (size_t)snprintf(body + used, sizeof(body) - used, ",\"k%zu\":1", i);
    snprintf(body + used, sizeof(body) - used, "}");
    for (i = 0; body[i]; i++)
        if (body[i] == '\'')
            body[i] = '"';
    cr_assert_eq(sluice_launch_parse_all(&l, body, strlen(body), &pol, 0, &errors, &err),
                 SLUICE_EINVAL);
    cr_expect_eq(errors.n, SLUICE_ERRLIST_MAX);
    cr_expect_eq(errors.dropped, 10);
    cr_expect_str_eq(errors.items[0].path, "k0");
    cr_expect_str_eq(err.text, "k0: unknown field");
    sluice_errlist_clear(&errors);
}

Test(launch_errors, add_text_splits_the_path)
{
    sluice_errlist_t l = SLUICE_ERRLIST_INIT;

    cr_assert_eq(sluice_errlist_add_text(&l, "pools[1].nodes: must be >= 1"), SLUICE_OK);
    cr_assert_eq(sluice_errlist_add_text(&l, "study secret_env X: not set"), SLUICE_OK);
    cr_assert_eq(l.n, 2);
    cr_expect_str_eq(l.items[0].path, "pools[1].nodes");
    cr_expect_str_eq(l.items[0].reason, "must be >= 1");
    cr_expect_str_eq(l.items[1].path, "");
    cr_expect_str_eq(l.items[1].reason, "study secret_env X: not set");
    sluice_errlist_clear(&l);
    cr_expect_eq(l.n, 0);
    cr_expect_null(l.items);
}

/* The reasons of `json` (single quotes), "path: reason" each, in order. */
static void expect_texts(const char *json, const char *const *texts, size_t n)
{
    sluice_launch_policy_t pol = policy();
    sluice_errlist_t errors = SLUICE_ERRLIST_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char *j = q(json), line[600];
    size_t i;

    cr_assert_eq(sluice_launch_parse_all(&l, j, strlen(j), &pol, 0, &errors, &err), SLUICE_EINVAL,
                 "%s", json);
    cr_assert_eq(errors.n, n, "%s: %zu errors, expected %zu (first: %s)", json, errors.n, n,
                 err.text);
    for (i = 0; i < n; i++) {
        snprintf(line, sizeof(line), "%s: %s", errors.items[i].path, errors.items[i].reason);
        cr_expect_str_eq(line, texts[i], "%s: error %zu", json, i);
    }
    sluice_errlist_clear(&errors);
    free(j);
}

Test(launch_errors, a_misspelt_field_names_the_one_meant)
{
    static const char *const texts[] = {
        "partiton: unknown field (did you mean partition?)",
        "pools[0].gpus_per_nod: unknown field (did you mean gpus_per_node?)",
        "pools[0].colour: unknown field",
    };

    expect_texts("{" HEAD ",'partiton':'gpu','pools':[{'name':'a','gpus_per_nod':1,"
                 "'colour':'red'}]}",
                 texts, 3);
}

Test(launch_errors, nothing_close_gives_no_suggestion)
{
    static const char *const texts[] = {"zzzzzz: unknown field"};

    expect_texts("{" HEAD ",'zzzzzz':1,'pools':[{'name':'a'}]}", texts, 1);
}

Test(launch_errors, a_quoted_number_says_it_was_a_string)
{
    /* "four" is no number: the message is the plain one */
    static const char *const one[] = {
        "pools[0].nodes: expected an integer between 1 and 4096, got \"4\" as a string: drop the "
        "quotes",
        "pools[0].cpus_per_node: expected an integer between 1 and 65536"};

    expect_texts("{" HEAD ",'pools':[{'name':'a','nodes':'4','cpus_per_node':'four'}]}", one, 2);
}

Test(launch_errors, an_unknown_series_lists_the_known_ones)
{
    static const char *const texts[] = {"pools[0].gpu_series: pool \"a\": unknown GPU series "
                                        "\"v100\" (not in the site catalogue; known: a100)"};

    expect_texts("{" HEAD ",'pools':[{'name':'a','gpu_series':'v100','gpus_per_node':1}]}", texts,
                 1);
}
