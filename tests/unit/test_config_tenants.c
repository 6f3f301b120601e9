/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_tenants.c - `tenants:` in the site file
 * (site/config_tenants.c): the entries and their accessors, the default
 * tenant of unlisted callers, policy lists that must narrow the site's,
 * the identities and what each needs, every error naming its field; and
 * the launch keys of base/marker.h that tenants' launches are stored
 * under. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <sluice/config.h>

#include "base/marker.h"
#include "config_case.h"

#define TOP                                                                                        \
    "rest:\n"                                                                                      \
    "  url: https://rest.example:6820\n"                                                           \
    "  jwt_file: /etc/sluice/site.jwt\n"                                                           \
    "storage:\n"                                                                                   \
    "  root: /lustre/s\n"                                                                          \
    "job_launcher:\n"                                                                              \
    "  sandbox: none\n"                                                                            \
    "  sbatch_directives:\n"                                                                       \
    "    partition: batch\n"                                                                       \
    "    account: flare\n"                                                                         \
    "policy:\n"                                                                                    \
    "  allowed_partitions: [batch, gpu]\n"                                                         \
    "  allowed_accounts: [flare, vision]\n"                                                        \
    "  allowed_images: [/srv/images/]\n"

#define TWO                                                                                        \
    TOP "tenants:\n"                                                                               \
        "  - name: vision\n"                                                                       \
        "    callers: [alice, \"unix:ops\"]\n"                                                     \
        "    slurm_user: vision-svc\n"                                                             \
        "    identity: token_file\n"                                                               \
        "    jwt_file: /etc/sluice/tenants/vision.jwt\n"                                           \
        "    account: vision\n"                                                                    \
        "    policy:\n"                                                                            \
        "      allowed_partitions: [gpu]\n"                                                        \
        "      allowed_accounts: [vision]\n"                                                       \
        "      allowed_images: [/srv/images/vision/]\n"                                            \
        "      allowed_studies: [pathology]\n"                                                     \
        "    limits:\n"                                                                            \
        "      live_launches: 20\n"                                                                \
        "      gpus_in_flight: 64\n"                                                               \
        "  - name: nlp\n"                                                                          \
        "    callers: [bob]\n"                                                                     \
        "    slurm_user: nlp\n"                                                                    \
        "    identity: proxy\n"

Test(config_tenants, entries_and_accessors)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_tenant_t *t;

    cr_assert_eq(config_case_load(TWO, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_config_tenant_count(cfg), 2);
    t = sluice_config_tenant_at(cfg, 0);
    cr_expect_str_eq(t->name, "vision");
    cr_expect_str_eq(t->slurm_user, "vision-svc");
    cr_expect_eq(t->identity, SLUICE_TENANT_TOKEN_FILE);
    cr_expect_str_eq(t->jwt_file, "/etc/sluice/tenants/vision.jwt");
    cr_expect_str_eq(t->account, "vision");
    cr_expect_eq(t->n_callers, 2);
    cr_expect_str_eq(t->callers[1], "unix:ops");
    cr_expect_eq(t->n_allowed_partitions, 1);
    cr_expect_eq(t->n_allowed_studies, 1);
    cr_expect_str_eq(t->allowed_studies[0], "pathology");
    cr_expect_eq(t->limits.live_launches, 20);
    cr_expect_eq(t->limits.gpus_in_flight, 64);
    cr_expect_eq(t->limits.accepts_per_minute, 0, "unset is no limit");
    cr_expect_eq(sluice_config_tenant_of_caller(cfg, "alice"), t);
    cr_expect_eq(sluice_config_tenant_of_caller(cfg, "unix:ops"), t);
    cr_expect_str_eq(sluice_config_tenant_of_caller(cfg, "bob")->name, "nlp");
    cr_expect_null(sluice_config_tenant_of_caller(cfg, "carol"), "unlisted: the default tenant");
    cr_expect_null(sluice_config_tenant_named(cfg, "default"));
    cr_expect_eq(sluice_config_tenant_named(cfg, "nlp"), sluice_config_tenant_at(cfg, 1));
    cr_expect_eq(sluice_config_tenant_at(cfg, 1)->identity, SLUICE_TENANT_PROXY);
    cr_expect_null(sluice_config_tenant_at(cfg, 2));
    cr_expect_str_eq(sluice_tenant_identity_name(SLUICE_TENANT_MINT), "mint");
    sluice_config_free(cfg);
}

Test(config_tenants, a_site_without_tenants_has_none)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(config_case_load(TOP, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_expect_eq(sluice_config_tenant_count(cfg), 0);
    cr_expect_null(sluice_config_tenant_of_caller(cfg, "alice"));
    sluice_config_free(cfg);
}

/* Arrays, not pointers: Criterion copies parameters into each test's
 * process. */
typedef struct {
    char entry[320]; /* one tenant entry, after "tenants:\n" */
    char want[96];   /* in the error */
} bad_t;

ParameterizedTestParameters(config_tenants, bad_entries)
{
    static bad_t cases[] = {
        {"  - name: Vision\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n",
         "tenants[0].name: expected a tenant name"},
        {"  - name: default\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n",
         "tenants[0].name: \"default\" is the tenant of every caller"},
        {"  - name: v\n    slurm_user: v\n    identity: proxy\n", "tenants[0].callers: required"},
        {"  - name: v\n    callers: []\n    slurm_user: v\n    identity: proxy\n",
         "tenants[0].callers: expected at least one caller"},
        {"  - name: v\n    callers: [\"a b\"]\n    slurm_user: v\n    identity: proxy\n",
         "tenants[0].callers: 'a b': expected callers"},
        {"  - name: v\n    callers: [a]\n    identity: proxy\n", "tenants[0].slurm_user: required"},
        {"  - name: v\n    callers: [a]\n    slurm_user: Root!\n    identity: proxy\n",
         "tenants[0].slurm_user: expected a user name"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n", "tenants[0].identity: required"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: sudo\n",
         "tenants[0].identity: expected token_file, mint or proxy"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: token_file\n",
         "tenants[0].jwt_file: required"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    jwt_file: /x\n",
         "tenants[0].jwt_file: only for identity token_file"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: mint\n",
         "tenants[0].identity: mint needs the cluster's signing key"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    colour: red\n",
         "tenants[0].colour: unknown key"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    policy:\n      allowed_partitions: [debug]\n",
         "tenants[0].policy.allowed_partitions: 'debug' is not allowed by the site's"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    policy:\n      allowed_qos: [high]\n",
         "(empty: only the site's own value)"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    policy:\n      allowed_images: [/home/x.sif]\n",
         "tenants[0].policy.allowed_images: '/home/x.sif' is not allowed"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    account: flare\n    policy:\n      allowed_accounts: [vision]\n",
         "tenants[0].account: 'flare' is not in this tenant's policy.allowed_accounts"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    limits:\n      live_launches: -1\n",
         "tenants[0].limits.live_launches: expected an integer from 0"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    limits:\n      live_launches: \"5\"\n",
         "(without quotes)"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "    limits:\n      launches: 5\n",
         "tenants[0].limits.launches: unknown key"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "  - name: v\n    callers: [b]\n    slurm_user: w\n    identity: proxy\n",
         "tenants[1].name: \"v\" is already the name of tenants[0]"},
        {"  - name: v\n    callers: [a]\n    slurm_user: v\n    identity: proxy\n"
         "  - name: w\n    callers: [b, a]\n    slurm_user: w\n    identity: proxy\n",
         "caller \"a\" is already in tenants[0]"},
        {"  - name: v\n    callers: [a, a]\n    slurm_user: v\n    identity: proxy\n",
         "caller \"a\" is already in tenants[0]"},
    };
    return cr_make_param_array(bad_t, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(bad_t *c, config_tenants, bad_entries)
{
    char yaml[2048];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(yaml, sizeof(yaml), "%stenants:\n%s", TOP, c->entry);
    cr_assert_eq(config_case_load(yaml, NULL, NULL, 0, &cfg, &err), SLUICE_ECONFIG, "accepted: %s",
                 c->entry);
    cr_expect(strstr(err.text, c->want) != NULL, "want \"%s\" in: %s", c->want, err.text);
    cr_expect_null(cfg);
}

Test(config_tenants, mint_is_accepted_with_a_key_and_tenants_is_not_settable)
{
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *sets[] = {"tenants=x"};

    cr_assert_eq(config_case_load("rest:\n  url: https://rest.example:6820\n  user: sluice\n"
                                  "  jwt_key_file: /etc/slurm/jwt_hs256.key\n"
                                  "storage:\n  root: /lustre/s\njob_launcher:\n  sandbox: none\n"
                                  "tenants:\n  - name: v\n    callers: [a]\n    slurm_user: v\n"
                                  "    identity: mint\n",
                                  NULL, NULL, 0, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_expect_eq(sluice_config_tenant_at(cfg, 0)->identity, SLUICE_TENANT_MINT);
    sluice_config_free(cfg);
    cfg = NULL;
    cr_expect_neq(config_case_load(TOP, NULL, sets, 1, &cfg, &err), SLUICE_OK,
                  "--set cannot reach tenants");
    sluice_config_free(cfg);
}

Test(config_tenants, launch_keys)
{
    char buf[200], t[40];

    cr_expect(marker_launch_id_ok("run-1", 5));
    cr_expect(marker_launch_id_ok("vision~run-1", 12));
    cr_expect(!marker_launch_id_ok("Vision~run-1", 12), "a tenant name is lower case");
    cr_expect(!marker_launch_id_ok("~run-1", 6));
    cr_expect(!marker_launch_id_ok("vision~", 7));
    cr_expect(!marker_launch_id_ok("a~b~c", 5));
    cr_expect(!marker_launch_id_ok("vision~..", 9));
    cr_expect(!marker_bare_id_ok("vision~run-1", 12));
    cr_expect(marker_bare_id_ok("run-1", 5));
    cr_expect_eq(marker_key_make(buf, sizeof(buf), "vision", "run-1"), 12);
    cr_expect_str_eq(buf, "vision~run-1");
    marker_key_make(buf, sizeof(buf), "default", "run-1");
    cr_expect_str_eq(buf, "run-1");
    marker_key_make(buf, sizeof(buf), NULL, "run-1");
    cr_expect_str_eq(buf, "run-1");
    cr_expect_eq(marker_key_tenant("vision~run-1", t, sizeof(t)), 6);
    cr_expect_str_eq(t, "vision");
    cr_expect_eq(marker_key_tenant("run-1", t, sizeof(t)), 0);
    cr_expect_str_eq(t, "");
    cr_expect_str_eq(marker_key_id("vision~run-1"), "run-1");
    cr_expect_str_eq(marker_key_id("run-1"), "run-1");
    memset(buf, 'a', 128);
    buf[128] = '\0';
    cr_expect(marker_launch_id_ok(buf, 128));
    memcpy(buf, "v~", 2);
    cr_expect(marker_launch_id_ok(buf, 128), "a key is at most 128 characters in all");
    buf[128] = 'a';
    buf[129] = '\0';
    cr_expect(!marker_launch_id_ok(buf, 129));
}
