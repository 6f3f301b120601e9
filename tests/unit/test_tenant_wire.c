/* SPDX-License-Identifier: Apache-2.0 */
/* test_tenant_wire.c - a launch keyed "<tenant>~<id>" leaves for
 * slurmrestd with its tenant's headers: the launcher over the real
 * cluster operations and clients (sluice_client_new_for_tenant()) against
 * the fake slurmrestd, as the supervisor builds them.  ta acts by proxy
 * (the site's token, alice named), tb by minting (a token of bob), and
 * the default tenant as rest.user (slurm). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/auth.h>
#include <sluice/client.h>
#include <sluice/cluster.h>
#include <sluice/launcher.h>
#include <sluice/store.h>

#include "config_case.h"
#include "fake_slurmrestd.h"
#include "sluice_assert.h"

static char dir[64];
static fake_server_t *fs;
static sluice_config_t *cfg;
static sluice_store_t *store;
static sluice_client_t *site_client, *tclient[2];
static sluice_cluster_rest_t *site_rest, *trest[2];

static sluice_err h_prepare(void *arg,
                            const char *id,
                            uint32_t attempt,
                            const json_t *render,
                            const sluice_secret_t *s,
                            size_t n,
                            sluice_error_t *err)
{
    (void)arg, (void)id, (void)attempt, (void)render, (void)s, (void)n, (void)err;
    return SLUICE_OK;
}

static sluice_err h_sync(void *arg, sluice_error_t *err)
{
    (void)arg, (void)err;
    return SLUICE_OK;
}

static sluice_err
h_archive(void *arg, const char *id, uint32_t attempt, const char *d, sluice_error_t *err)
{
    (void)arg, (void)id, (void)attempt, (void)d, (void)err;
    return SLUICE_OK;
}

static void setup(void)
{
    char yaml[1024], path[128];
    sluice_error_t err = SLUICE_ERROR_INIT;
    FILE *f;

    snprintf(dir, sizeof(dir), "/tmp/sluice-tnwire-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    fs = fake_start(0);
    cr_assert_not_null(fs);
    snprintf(path, sizeof(path), "%s/key", dir);
    cr_assert_not_null(f = fopen(path, "w"));
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
    snprintf(yaml, sizeof(yaml),
             "rest:\n  url: %s\n  api_version: v0.0.43\n  user: slurm\n  jwt_key_file: %s\n"
             "storage:\n  root: %s\njob_launcher:\n  sandbox: none\n"
             "tenants:\n"
             "  - name: ta\n    callers: [ca]\n    slurm_user: alice\n    identity: proxy\n"
             "  - name: tb\n    callers: [cb]\n    slurm_user: bob\n    identity: mint\n",
             fake_url(fs), path, dir);
    cr_assert_eq(config_case_load(yaml, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    snprintf(path, sizeof(path), "%s/state", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    cr_assert_sluice_ok(sluice_store_open(&store, path, &err), &err);
}

static void teardown(void)
{
    char cmd[128];

    for (int i = 0; i < 2; i++) {
        sluice_cluster_rest_free(trest[i]);
        sluice_client_free(tclient[i]);
        trest[i] = NULL;
        tclient[i] = NULL;
    }
    sluice_cluster_rest_free(site_rest);
    sluice_client_free(site_client);
    site_rest = NULL;
    site_client = NULL;
    sluice_store_close(store);
    sluice_config_free(cfg);
    fake_stop(fs);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(tenant_wire, .init = setup, .fini = teardown, .timeout = 60);

static sluice_launcher_t *new_launcher(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_tenant_t t[2];
    sluice_launcher_t *l = NULL;

    cr_assert_sluice_ok(sluice_client_new_from_config(&site_client, cfg, &err), &err);
    cr_assert_sluice_ok(sluice_cluster_rest_new(&site_rest, site_client, NULL, &err), &err);
    memset(t, 0, sizeof(t));
    for (size_t i = 0; i < 2; i++) {
        const sluice_tenant_t *tn = sluice_config_tenant_at(cfg, i);
        cr_assert_sluice_ok(sluice_client_new_for_tenant(&tclient[i], cfg, tn, site_client, &err),
                            &err);
        cr_assert_sluice_ok(sluice_cluster_rest_new(&trest[i], tclient[i], NULL, &err), &err);
        t[i].name = tn->name;
        t[i].user = tn->slurm_user;
        sluice_cluster_rest_ops(trest[i], &t[i].cluster);
    }
    o.store = store;
    sluice_cluster_rest_ops(site_rest, &o.cluster);
    o.staging.prepare = h_prepare;
    o.staging.sync = h_sync;
    o.staging.archive = h_archive;
    o.user = "slurm";
    o.site = "site1";
    o.rpc_per_sec = 100000;
    o.tenants = t;
    o.n_tenants = 2;
    cr_assert_sluice_ok(sluice_launcher_new(&l, &o, &err), &err);
    cr_assert_sluice_ok(sluice_launcher_recover(l, NULL, &err), &err);
    return l;
}

static void accept_launch(sluice_launcher_t *l, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_request_t r;
    json_t *jobs = json_pack("[{s:s, s:s, s:i, s:s, s:b}]", "name", "x", "comment", "y", "nodes", 1,
                             "workdir", "/tmp", "hold", 0);
    json_t *render = json_pack("{s:s, s:o}", "script", "#!/bin/sh\ntrue\n", "jobs", jobs);
    json_t *req = json_pack("{s:s, s:s}", "launch_id", id, "site", "site1");
    int existed = -1;

    memset(&r, 0, sizeof(r));
    r.request = req;
    r.render = render;
    r.caller = "tester";
    cr_assert_sluice_ok(sluice_launcher_accept(l, &r, NULL, &existed, &err), &err);
    json_decref(req);
    json_decref(render);
}

/* The headers of the last POST to a job/submit URL after request `from`:
 * the user named and its token's `sun`.  0 when there is none. */
static int submit_headers(size_t from, char *name, char *sun)
{
    int found = 0;

    for (size_t i = from; i < fake_request_count(fs); i++) {
        const fake_request_t *r = fake_request(fs, i);
        char tok[4096];
        sluice_error_t err = SLUICE_ERROR_INIT;

        if (strcmp(r->method, "POST") != 0 || strstr(r->target, "/job/submit") == NULL)
            continue;
        cr_assert(fake_header(r, "X-SLURM-USER-NAME", name, 64) >= 0);
        cr_assert(fake_header(r, "X-SLURM-USER-TOKEN", tok, sizeof(tok)) >= 0);
        cr_assert_eq(sluice_token_user(tok, sun, 64, NULL, &err), SLUICE_OK, "%s", err.text);
        found = 1;
    }
    return found;
}

static void push_fixture(const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[512];
    json_error_t jerr;
    json_t *j;
    fake_response_t r;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is set by ctest");
    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/v0.0.43/%s.json", src, name);
    cr_assert_not_null(j = json_load_file(path, 0, &jerr), "%s: %s", path, jerr.text);
    memset(&r, 0, sizeof(r));
    r.status = 200;
    r.body = json_dumps(j, JSON_COMPACT);
    fake_push(fs, &r);
    free((char *)(uintptr_t)r.body);
    json_decref(j);
}

/* One launch `id` on a fresh launcher: its client negotiates (diag) and
 * POSTs it (submit_ok); the headers of that POST. */
static void submit_one(const char *id, char *name, char *sun)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_t *l = new_launcher();
    size_t from = fake_request_count(fs);

    push_fixture("diag_basic");
    push_fixture("submit_ok");

    accept_launch(l, id);
    for (int i = 0; i < 3 && !submit_headers(from, name, sun); i++)
        cr_assert_sluice_ok(sluice_launcher_step(l, &err), &err);
    cr_assert(submit_headers(from, name, sun), "no submit of %s reached slurmrestd", id);
    sluice_launcher_free(l);
}

Test(tenant_wire, a_proxy_tenant_launch_names_its_user_with_the_site_token)
{
    char name[64], sun[64];

    submit_one("ta~w1", name, sun);
    cr_assert_str_eq(name, "alice", "proxy: the tenant's user is named");
    cr_assert_str_eq(sun, "slurm", "proxy: the site's token");
}

Test(tenant_wire, a_mint_tenant_launch_sends_a_token_of_its_user)
{
    char name[64], sun[64];

    submit_one("tb~w2", name, sun);
    cr_assert_str_eq(name, "bob");
    cr_assert_str_eq(sun, "bob", "mint: a token of the tenant's user");
}

Test(tenant_wire, a_default_tenant_launch_acts_as_rest_user)
{
    char name[64], sun[64];

    submit_one("w3", name, sun);
    cr_assert_str_eq(name, "slurm");
    cr_assert_str_eq(sun, "slurm");
}
