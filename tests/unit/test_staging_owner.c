/* SPDX-License-Identifier: Apache-2.0 */
/* test_staging_owner.c - two stores (two services) that share one storage
 * root and site directory: each store's recovery reports the staging
 * directories that belong to no live launch of its own, and not the other
 * store's; a directory without a marker, or with its own marker and no
 * launch, is still reported.  The fake slurmrestd is the site's endpoint
 * and is never asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/ops.h>
#include <sluice/sluice.h>
#include <sluice/supervisor.h>

#include "fake_slurmrestd.h"
#include "sluice_assert.h"

static char tmp[128];
static char state_a[256], state_b[256], site_dir[256];
static fake_server_t *fs;
static sluice_config_t *cfg;

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
}

static void setup(void)
{
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[300], text[2048];

    snprintf(tmp, sizeof(tmp), "/tmp/sluice-owner-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    fs = fake_start(0);
    cr_assert_not_null(fs);
    snprintf(path, sizeof(path), "%s/key", tmp);
    write_file(path, "0123456789abcdef0123456789abcdef", 0600);
    snprintf(path, sizeof(path), "%s/storage", tmp);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(text, sizeof(text),
             "site:\n  name: site-1\n"
             "rest:\n  url: %s\n  api_version: v0.0.40\n  user: alice\n  jwt_key_file: %s/key\n"
             "storage:\n  root: %s/storage\n  cluster_root: %s/storage\n"
             "job_launcher:\n  sandbox: none\n",
             fake_url(fs), tmp, tmp, tmp);
    snprintf(path, sizeof(path), "%s/site.yaml", tmp);
    write_file(path, text, 0600);
    co.path = path;
    cr_assert_sluice_ok(sluice_config_load(&co, &cfg, &err), &err);
    snprintf(state_a, sizeof(state_a), "%s/state-a", tmp);
    snprintf(state_b, sizeof(state_b), "%s/state-b", tmp);
    snprintf(site_dir, sizeof(site_dir), "%s/storage/site-1", tmp);
}

static void teardown(void)
{
    char cmd[300];

    sluice_config_free(cfg);
    cfg = NULL;
    fake_stop(fs);
    fs = NULL;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        cr_log_warn("cleanup of %s failed", tmp);
}

TestSuite(staging_owner, .init = setup, .fini = teardown, .timeout = 30);

/* Accept launch `id` into the store in `state` and prepare its staging
 * (attempt 1), as its supervisor does before the submit. */
static void staged_launch(const char *state, const char *id)
{
    sluice_supervisor_opts_t o = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *sup = NULL;
    sluice_staging_ops_t ops;
    char req[512];

    snprintf(req, sizeof(req),
             "{\"launch_id\": \"%s\", \"site\": \"site-1\", \"profile\": \"none\", "
             "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
             "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
             id);
    o.state_dir = state;
    cr_assert_sluice_ok(sluice_supervisor_open(&sup, cfg, &o, NULL, &err), &err);
    cr_assert_sluice_ok(sluice_accept(NULL, &outcome, NULL, sluice_supervisor_launcher(sup), cfg,
                                      req, strlen(req), &ao, &err),
                        &err);
    cr_assert_sluice_ok(sluice_staging_ops_new(cfg, sluice_supervisor_store(sup), &ops, &err),
                        &err);
    cr_assert_sluice_ok(ops.prepare(ops.arg, id, 1, NULL, NULL, 0, &err), &err);
    sluice_staging_ops_free(&ops);
    sluice_supervisor_close(sup);
}

/* How many orphans a supervisor of the store in `state` reports. */
static size_t orphans_of(const char *state)
{
    sluice_supervisor_opts_t o = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *sup = NULL;
    size_t orphans = 99;

    o.state_dir = state;
    cr_assert_sluice_ok(sluice_supervisor_open(&sup, cfg, &o, &orphans, &err), &err);
    sluice_supervisor_close(sup);
    return orphans;
}

static size_t entries(const char *dir)
{
    char cmd[400], out[32];
    FILE *p;
    size_t n = 0;

    snprintf(cmd, sizeof(cmd), "ls '%s' | wc -l", dir);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    if (fgets(out, sizeof(out), p) != NULL)
        n = (size_t)strtoul(out, NULL, 10);
    pclose(p);
    return n;
}

Test(staging_owner, another_stores_staging_is_not_an_orphan_but_an_unmarked_one_is)
{
    char path[512], id_a[64], marker[64];
    struct stat st;
    FILE *f;

    staged_launch(state_a, "a-1");
    staged_launch(state_b, "b-1");
    cr_assert_eq(entries(site_dir), 2, "two launch directories in one site directory");
    /* each store knows its own live launch and leaves the other's alone */
    cr_expect_eq(orphans_of(state_a), 0);
    cr_expect_eq(orphans_of(state_b), 0);

    /* the identity is kept in the store, 0600, and named in its staging */
    snprintf(path, sizeof(path), "%s/store-id", state_a);
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(id_a, sizeof(id_a), f));
    fclose(f);
    cr_expect_eq(strlen(id_a), 33, "%s", id_a);
    snprintf(path, sizeof(path), "cat %s/*/.sluice-store", site_dir);
    f = popen(path, "r");
    cr_assert_not_null(f);
    {
        int found = 0;
        while (fgets(marker, sizeof(marker), f) != NULL)
            found += strcmp(marker, id_a) == 0;
        cr_expect_eq(found, 1, "one launch directory names store a");
    }
    pclose(f);

    /* a directory nobody marked is an orphan for both */
    snprintf(path, sizeof(path), "%s/deadbeef", site_dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_expect_eq(orphans_of(state_a), 1);
    cr_expect_eq(orphans_of(state_b), 1);
    /* one that names store b but holds no launch of b is b's orphan only */
    snprintf(path, sizeof(path), "%s/deadbeef/.sluice-store", site_dir);
    snprintf(marker, sizeof(marker), "%s", id_a);
    {
        char id_b[64];
        char idpath[300];
        FILE *g;

        snprintf(idpath, sizeof(idpath), "%s/store-id", state_b);
        g = fopen(idpath, "r");
        cr_assert_not_null(g);
        cr_assert_not_null(fgets(id_b, sizeof(id_b), g));
        fclose(g);
        cr_expect_str_neq(id_a, id_b, "two stores, two identities");
        write_file(path, id_b, 0600);
    }
    cr_expect_eq(orphans_of(state_a), 0);
    cr_expect_eq(orphans_of(state_b), 1);
}

Test(staging_owner, the_identity_survives_a_reopen)
{
    char path[300], first[64], second[64];
    FILE *f;

    cr_expect_eq(orphans_of(state_a), 0);
    snprintf(path, sizeof(path), "%s/store-id", state_a);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(first, sizeof(first), f));
    fclose(f);
    cr_expect_eq(orphans_of(state_a), 0);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(second, sizeof(second), f));
    fclose(f);
    cr_expect_str_eq(first, second);
}
