/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy_tenant.c - a tenant's request at the accept: the site's
 * policy and then the tenant's narrower lists, the tenant's account as the
 * default, defaults of the site that the tenant may not use, and a launch
 * key naming a tenant the site does not have. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/config.h>
#include <sluice/render.h>

#include "config_case.h"
#include "sluice_assert.h"

static char root[128];

static void setup(void)
{
    strcpy(root, "/tmp/sluice-poltn-XXXXXX");
    cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
    char cmd[200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", root);
}

TestSuite(policy_tenant, .init = setup, .fini = teardown, .timeout = 30);

/* Site: partitions gpu (its default) and cpu, accounts a1 (default), a2,
 * a3.  Tenant ta: partition cpu only, accounts a2 and a3, account a2.
 * Tenant tb: no lists, no account (the site's rule alone). */
static sluice_config_t *site(const char *site_partition)
{
    char yaml[2048];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(yaml, sizeof(yaml),
             "rest:\n  url: https://rest.example:6820\n  user: svc\n  jwt_file: /run/jwt\n"
             "storage:\n  root: %s\n"
             "job_launcher:\n  sandbox: none\n  sbatch_directives:\n    partition: %s\n"
             "    account: a1\n"
             "policy:\n  allowed_partitions: [gpu, cpu]\n  allowed_accounts: [a1, a2, a3]\n"
             "tenants:\n"
             "  - name: ta\n    callers: [ca]\n    slurm_user: alice\n    identity: proxy\n"
             "    account: a2\n    policy:\n      allowed_partitions: [cpu]\n"
             "      allowed_accounts: [a2, a3]\n      allowed_studies: [s1]\n"
             "  - name: tb\n    callers: [cb]\n    slurm_user: bob\n    identity: proxy\n",
             root, site_partition);
    cr_assert_eq(config_case_load(yaml, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    return cfg;
}

/* Prepare the request of launch `id` with `extra` members; the job's
 * partition and account into part/acct on success. */
static sluice_err prepare(const sluice_config_t *cfg,
                          const char *id,
                          const char *extra,
                          char *part,
                          char *acct,
                          sluice_error_t *err)
{
    sluice_accept_opts_t o = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_t *a = NULL;
    char req[1024];
    sluice_err rc;

    snprintf(req, sizeof(req),
             "{\"launch_id\": \"%s\", \"site\": \"default\"%s, \"time_limit\": "
             "\"00:10:00\"%s, \"pools\": [{\"name\": \"main\", \"cpus_per_node\": 1, "
             "\"mem_per_node_mib\": 1024, \"command\": \"/bin/true\"}]}",
             id, strstr(extra, "\"profile\"") ? "" : ", \"profile\": \"none\"", extra);
    o.caller = "tester";
    rc = sluice_accept_prepare(&a, NULL, cfg, req, strlen(req), &o, err);
    if (rc == SLUICE_OK) {
        const sluice_render_t *r = sluice_accept_render(a);
        snprintf(part, 32, "%s", r->jobs[0].partition ? r->jobs[0].partition : "(none)");
        snprintf(acct, 32, "%s", r->jobs[0].account ? r->jobs[0].account : "(none)");
    }
    sluice_accept_free(a);
    return rc;
}

Test(policy_tenant, the_tenant_lists_narrow_the_site_policy)
{
    sluice_config_t *cfg = site("cpu");
    sluice_error_t err = SLUICE_ERROR_INIT;
    char part[32], acct[32];

    /* the site allows gpu; ta may not */
    cr_assert_eq(prepare(cfg, "x1", ", \"partition\": \"gpu\"", part, acct, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(prepare(cfg, "tb~x1", ", \"partition\": \"gpu\"", part, acct, &err), SLUICE_OK,
                 "%s", err.text);
    cr_assert_eq(prepare(cfg, "ta~x1", ", \"partition\": \"gpu\"", part, acct, &err),
                 SLUICE_EINVAL);
    cr_assert_not_null(strstr(err.text, "partition"), "%s", err.text);
    cr_assert_eq(prepare(cfg, "ta~x2", ", \"partition\": \"cpu\"", part, acct, &err), SLUICE_OK,
                 "%s", err.text);
    cr_assert_str_eq(part, "cpu");
    /* a1 is the site's, not ta's */
    cr_assert_eq(prepare(cfg, "ta~x3", ", \"account\": \"a1\"", part, acct, &err), SLUICE_EINVAL);
    cr_assert_not_null(strstr(err.text, "account"), "%s", err.text);
    cr_assert_eq(prepare(cfg, "ta~x4", ", \"account\": \"a3\"", part, acct, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_str_eq(acct, "a3", "the request's own account wins");
    sluice_config_free(cfg);
}

Test(policy_tenant, the_tenant_account_is_the_default)
{
    sluice_config_t *cfg = site("cpu");
    sluice_error_t err = SLUICE_ERROR_INIT;
    char part[32], acct[32];

    cr_assert_eq(prepare(cfg, "ta~d1", "", part, acct, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(acct, "a2", "tenant ta's account, not the site's a1");
    cr_assert_eq(prepare(cfg, "tb~d1", "", part, acct, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(acct, "a1", "tb names no account: the site's");
    cr_assert_eq(prepare(cfg, "d1", "", part, acct, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(acct, "a1");
    sluice_config_free(cfg);
}

/* The site's default partition (gpu) is not one ta may use: a request of
 * ta naming none is refused rather than run there. */
Test(policy_tenant, a_site_default_outside_the_tenant_lists_is_refused)
{
    sluice_config_t *cfg = site("gpu");
    sluice_error_t err = SLUICE_ERROR_INIT;
    char part[32], acct[32];

    cr_assert_eq(prepare(cfg, "ta~p1", "", part, acct, &err), SLUICE_EINVAL);
    cr_assert_not_null(strstr(err.text, "\"gpu\""), "%s", err.text);
    cr_assert_not_null(strstr(err.text, "tenant ta"), "%s", err.text);
    cr_assert_eq(prepare(cfg, "tb~p1", "", part, acct, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(part, "gpu");
    sluice_config_free(cfg);
}

Test(policy_tenant, a_key_of_an_unknown_tenant_is_refused)
{
    sluice_config_t *cfg = site("cpu");
    sluice_error_t err = SLUICE_ERROR_INIT;
    char part[32], acct[32];

    cr_assert_eq(prepare(cfg, "zz~u1", "", part, acct, &err), SLUICE_EINVAL);
    cr_assert_not_null(strstr(err.text, "tenant \"zz\""), "%s", err.text);
    sluice_config_free(cfg);
}

/* sluice_launch_policy_narrow() alone: NULL (the default tenant) changes
 * nothing; a tenant's non-empty lists replace the site's. */
Test(policy_tenant, narrow_replaces_only_non_empty_lists)
{
    sluice_config_t *cfg = site("cpu");
    sluice_launch_policy_t p;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_tenant_t *ta = sluice_config_tenant_named(cfg, "ta");

    cr_assert_eq(sluice_config_launch_policy(sluice_config_cluster_at(cfg, 0), NULL, &p, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(p.n_partitions, 2);
    sluice_launch_policy_narrow(&p, NULL);
    cr_assert_eq(p.n_partitions, 2);
    sluice_launch_policy_narrow(&p, ta);
    cr_assert_eq(p.n_partitions, 1);
    cr_assert_str_eq(p.partitions[0], "cpu");
    cr_assert_eq(p.n_accounts, 2);
    cr_assert_eq(p.n_qos, 0, "ta has no qos list: the site's (none) stays");
    sluice_config_launch_policy_clear(&p);
    sluice_config_free(cfg);
}

static void touch(const char *rel)
{
    char p[300];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", root, rel);
    cr_assert_not_null(f = fopen(p, "w"), "%s", p);
    fclose(f);
}

static sluice_err
prepare_image(const sluice_config_t *cfg, const char *id, const char *image, sluice_error_t *err)
{
    char extra[400], part[32], acct[32];

    if (image == NULL)
        snprintf(extra, sizeof(extra), ", \"profile\": \"apptainer\"");
    else
        snprintf(extra, sizeof(extra), ", \"profile\": \"apptainer\", \"image\": \"%s/%s\"", root,
                 image);
    return prepare(cfg, id, extra, part, acct, err);
}

/* A job image must be allowed by the site and by the tenant, both
 * canonically: a link in the tenant's own directory to another tenant's
 * image is refused; the site's image stays trusted. */
Test(policy_tenant, a_job_image_must_be_the_tenant_s_canonically)
{
    char yaml[2048], p[300], q[300];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(p, sizeof(p), "%s/img", root);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/img/ta", root);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/img/tb", root);
    cr_assert_eq(mkdir(p, 0755), 0);
    touch("img/site.sif");
    touch("img/ta/ok.sif");
    touch("img/tb/secret.sif");
    snprintf(p, sizeof(p), "%s/img/tb/secret.sif", root);
    snprintf(q, sizeof(q), "%s/img/ta/evil.sif", root);
    cr_assert_eq(symlink(p, q), 0);
    snprintf(yaml, sizeof(yaml),
             "rest:\n  url: https://rest.example:6820\n  user: svc\n  jwt_file: /run/jwt\n"
             "storage:\n  root: %s\n"
             "job_launcher:\n  sandbox: apptainer\n  image: %s/img/site.sif\n"
             "policy:\n  allowed_profiles: [apptainer, none]\n  allowed_images: [%s/img/]\n"
             "tenants:\n"
             "  - name: ta\n    callers: [ca]\n    slurm_user: alice\n    identity: proxy\n"
             "    policy:\n      allowed_images: [%s/img/ta/]\n",
             root, root, root, root);
    cr_assert_eq(config_case_load(yaml, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(prepare_image(cfg, "ta~i1", "img/ta/ok.sif", &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(prepare_image(cfg, "ta~i2", NULL, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(prepare_image(cfg, "i3", "img/tb/secret.sif", &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(prepare_image(cfg, "ta~i4", "img/tb/secret.sif", &err), SLUICE_EINVAL);
    cr_assert_not_null(strstr(err.text, "tenant ta"), "%s", err.text);
    cr_assert_eq(prepare_image(cfg, "ta~i5", "img/ta/evil.sif", &err), SLUICE_EINVAL,
                 "a link to tb's image");
    cr_assert_not_null(strstr(err.text, "tenant ta"), "%s", err.text);
    sluice_config_free(cfg);
}

/* ta may name study s1 only; tb any study; a request naming none is a
 * plain launch for both. */
Test(policy_tenant, a_tenant_names_only_its_studies)
{
    static const char study[] =
        "format_version: 2\nstudies:\n  s1:\n    env: {M: one}\n  s2:\n    env: {M: two}\n";
    sluice_config_t *cfg = site("cpu");
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_study_runtime_t *rt = NULL;
    const char *ids[] = {"ta~s1", "ta~s2", "tb~s2", "ta~none"};
    const char *studies[] = {"s1", "s2", "s2", NULL};
    const sluice_err want[] = {SLUICE_OK, SLUICE_EINVAL, SLUICE_OK, SLUICE_OK};
    size_t i;

    cr_assert_sluice_ok(
        sluice_study_runtime_load("study.yaml", study, strlen(study), cfg, &rt, &err), &err);
    for (i = 0; i < 4; i++) {
        sluice_accept_opts_t o = SLUICE_ACCEPT_OPTS_INIT;
        sluice_accept_t *a = NULL;
        char req[1024], extra[64] = "";
        sluice_err rc;

        if (studies[i] != NULL)
            snprintf(extra, sizeof(extra), ", \"study\": \"%s\"", studies[i]);
        snprintf(req, sizeof(req),
                 "{\"launch_id\": \"%s\", \"site\": \"default\", \"profile\": \"none\", "
                 "\"time_limit\": \"00:10:00\"%s, \"pools\": [{\"name\": \"main\", "
                 "\"cpus_per_node\": 1, \"mem_per_node_mib\": 1024, \"command\": \"/bin/true\"}]}",
                 ids[i], extra);
        o.caller = "tester";
        o.rt = rt;
        rc = sluice_accept_prepare(&a, NULL, cfg, req, strlen(req), &o, &err);
        cr_expect_eq(rc, want[i], "%s: %s", ids[i], err.text);
        if (want[i] != SLUICE_OK)
            cr_expect_not_null(strstr(err.text, "policy.allowed_studies"), "%s", err.text);
        sluice_accept_free(a);
    }
    sluice_study_runtime_free(rt);
    sluice_config_free(cfg);
}
