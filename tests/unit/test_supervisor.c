/* SPDX-License-Identifier: Apache-2.0 */
/* test_supervisor.c - sluice_supervisor_open/close on a temporary store
 * with the fake slurmrestd as the site's REST endpoint: what it opens, the
 * store's lock while it is open, recovery of an accepted launch at the next
 * open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/sluice.h>
#include <sluice/supervisor.h>

#include "fake_slurmrestd.h"
#include "sluice_assert.h"

static char tmp[128];
static char state[256];
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

    snprintf(tmp, sizeof(tmp), "/tmp/sluice-sup-XXXXXX");
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
    snprintf(state, sizeof(state), "%s/state", tmp);
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

TestSuite(supervisor, .init = setup, .fini = teardown, .timeout = 30);

Test(supervisor, open_makes_store_client_and_launcher_and_close_frees_them)
{
    sluice_supervisor_opts_t o = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *sup = NULL;
    size_t orphans = 99;

    o.state_dir = state;
    cr_assert_sluice_ok(sluice_supervisor_open(&sup, cfg, &o, &orphans, &err), &err);
    cr_assert_not_null(sup);
    cr_expect_not_null(sluice_supervisor_launcher(sup));
    cr_expect_not_null(sluice_supervisor_client(sup));
    cr_assert_not_null(sluice_supervisor_store(sup));
    cr_expect_str_eq(sluice_store_dir(sluice_supervisor_store(sup)), state);
    cr_expect_eq(orphans, 0);
    cr_expect_eq(sluice_launcher_tracked(sluice_supervisor_launcher(sup)), 0);
    /* Opening and recovering an empty store asks the cluster nothing. */
    cr_expect_eq(fake_request_count(fs), 0);
    sluice_supervisor_close(sup);
    sluice_supervisor_close(NULL);
    cr_expect_null(sluice_supervisor_launcher(NULL));
}

Test(supervisor, a_second_supervisor_of_the_same_store_is_refused_until_the_first_closes)
{
    sluice_supervisor_opts_t o = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *a = NULL, *b = NULL;

    o.state_dir = state;
    cr_assert_sluice_ok(sluice_supervisor_open(&a, cfg, &o, NULL, &err), &err);
    cr_expect_eq(sluice_supervisor_open(&b, cfg, &o, NULL, &err), SLUICE_ECONFLICT, "%s", err.text);
    cr_expect_null(b);
    sluice_supervisor_close(a);
    cr_assert_sluice_ok(sluice_supervisor_open(&b, cfg, &o, NULL, &err), &err);
    sluice_supervisor_close(b);
}

Test(supervisor, an_accepted_launch_is_recovered_at_the_next_open)
{
    sluice_supervisor_opts_t o = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_supervisor_t *sup = NULL;
    const char *req = "{\"launch_id\": \"sup-1\", \"site\": \"site-1\", \"profile\": \"none\", "
                      "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
                      "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}";

    o.state_dir = state;
    cr_assert_sluice_ok(sluice_supervisor_open(&sup, cfg, &o, NULL, &err), &err);
    cr_assert_sluice_ok(sluice_accept(NULL, &outcome, NULL, sluice_supervisor_launcher(sup), cfg,
                                      req, strlen(req), &ao, &err),
                        &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_NEW);
    sluice_supervisor_close(sup);
    sup = NULL;

    cr_assert_sluice_ok(sluice_supervisor_open(&sup, cfg, &o, NULL, &err), &err);
    cr_expect_eq(sluice_launcher_tracked(sluice_supervisor_launcher(sup)), 1);
    outcome = SLUICE_ACCEPT_NONE;
    cr_assert_sluice_ok(sluice_accept(NULL, &outcome, NULL, sluice_supervisor_launcher(sup), cfg,
                                      req, strlen(req), &ao, &err),
                        &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_EXISTED);
    sluice_supervisor_close(sup);
}
