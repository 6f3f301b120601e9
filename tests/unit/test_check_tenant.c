/* SPDX-License-Identifier: Apache-2.0 */
/* test_check_tenant.c - `sluice check` (the built binary, $SLUICE_BIN) on
 * a site with tenants, against the fake slurmrestd: one row per tenant
 * whose identity is checked live, with the headers each identity sends on
 * the wire (proxy: the tenant's user named, the site's token; mint: a
 * token of the tenant's user), and a refusal by Slurm shown as a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/auth.h>

#include "fake_slurmrestd.h"

static fake_server_t *fs;
static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sluice-checktn-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    fs = fake_start(0);
    cr_assert_not_null(fs);
}

static void teardown(void)
{
    char cmd[128];

    fake_stop(fs);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(check_tenant, .init = setup, .fini = teardown, .timeout = 60);

static void write_file(const char *name, const char *text, mode_t mode)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    cr_assert_not_null(f = fopen(path, "w"), "%s", path);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
}

static char *fixture(const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[512];
    json_error_t jerr;
    json_t *j;
    char *text;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is set by ctest");
    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/v0.0.43/%s.json", src, name);
    cr_assert_not_null(j = json_load_file(path, 0, &jerr), "%s: %s", path, jerr.text);
    text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return text;
}

static void push(int status, const char *body, const char *type)
{
    fake_response_t r;

    memset(&r, 0, sizeof(r));
    r.status = status;
    r.body = body;
    r.content_type = type;
    r.close_after = status != 200;
    fake_push(fs, &r);
}

/* The site's own checks (negotiation, token, openapi, accounting, nodes),
 * then tenant ta (proxy: negotiation and diag answered `ta_status`) and
 * tenant tb (mint: both answered 200). */
static void script(int ta_status)
{
    char *diag = fixture("diag_basic");
    char *nodes = fixture("nodes_basic");
    static const char auth_error[] =
        "{\"errors\":[{\"error_number\":1007,\"error\":\"Protocol authentication error\"}]}";

    push(200, diag, NULL);
    push(200, diag, NULL);
    push(200, "{\"openapi\":\"3.0.2\",\"paths\":{\"/slurm/v0.0.43/diag/\":{\"get\":{}}}}", NULL);
    push(200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    push(200, nodes, NULL);
    for (int i = 0; i < 2; i++)
        push(ta_status, ta_status == 200 ? diag : auth_error, NULL);
    for (int i = 0; i < 2; i++)
        push(200, diag, NULL);
    free(diag);
    free(nodes);
}

static int check(json_t **out)
{
    const char *bin = getenv("SLUICE_BIN");
    char site[1024], cmd[1024], path[128];
    json_error_t jerr;
    int st;

    cr_assert_not_null(bin, "SLUICE_BIN is set by ctest");
    write_file("key", "0123456789abcdef0123456789abcdef", 0600);
    snprintf(site, sizeof(site),
             "rest:\n  url: %s\n  api_version: v0.0.43\n  user: slurm\n  jwt_key_file: %s/key\n"
             "storage:\n  root: %s\njob_launcher:\n  sandbox: none\n"
             "tenants:\n"
             "  - name: ta\n    callers: [ca]\n    slurm_user: nobody\n    identity: proxy\n"
             "  - name: tb\n    callers: [cb]\n    slurm_user: daemon\n    identity: mint\n",
             fake_url(fs), dir, dir);
    write_file("site.yaml", site, 0600);
    snprintf(cmd, sizeof(cmd),
             "env -u SLUICE_CONFIG -u SLURM_JWT '%s' check --config '%s/site.yaml' -o json "
             ">'%s/out' 2>'%s/err'",
             bin, dir, dir, dir);
    st = system(cmd);
    snprintf(path, sizeof(path), "%s/out", dir);
    *out = json_load_file(path, 0, &jerr);
    cr_assert_not_null(*out, "check printed no JSON: %s", jerr.text);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_t *row_named(json_t *report, const char *name)
{
    size_t i;
    json_t *r;

    json_array_foreach(json_object_get(report, "checks"), i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "check")), name) == 0)
            return r;
    }
    cr_assert_fail("no %s row", name);
    return NULL;
}

static const char *status_of(json_t *report, const char *name)
{
    return json_string_value(json_object_get(row_named(report, name), "status"));
}

/* The user the header of request i names, and its token's `sun`. */
static void who(size_t i, char *name, char *sun)
{
    const fake_request_t *r = fake_request(fs, i);
    char tok[4096];
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_not_null(r, "request %zu", i);
    cr_assert(fake_header(r, "X-SLURM-USER-NAME", name, 64) >= 0, "request %zu: no user", i);
    cr_assert(fake_header(r, "X-SLURM-USER-TOKEN", tok, sizeof(tok)) >= 0);
    cr_assert_eq(sluice_token_user(tok, sun, 64, NULL, &err), SLUICE_OK, "%s", err.text);
}

Test(check_tenant, each_tenant_identity_is_checked_live_with_its_own_headers)
{
    json_t *report = NULL;
    char name[64], sun[64];
    int code;

    script(200);
    code = check(&report);
    cr_assert_str_eq(status_of(report, "tenant:ta/token"), "ok");
    cr_assert_str_eq(status_of(report, "tenant:tb/token"), "ok");
    cr_assert_str_eq(status_of(report, "tenant:ta/uid-contract"), "ok");
    cr_assert_str_eq(status_of(report, "tenants-staging"), geteuid() == 0 ? "ok" : "FAIL");
    cr_assert_eq(fake_request_count(fs), 9, "%zu requests", fake_request_count(fs));
    who(1, name, sun);
    cr_assert_str_eq(name, "slurm");
    cr_assert_str_eq(sun, "slurm");
    /* ta (proxy): the tenant's user named, the site's token */
    who(5, name, sun);
    cr_assert_str_eq(name, "nobody");
    cr_assert_str_eq(sun, "slurm");
    who(6, name, sun);
    cr_assert_str_eq(name, "nobody");
    /* tb (mint): a token of the tenant's own user */
    who(8, name, sun);
    cr_assert_str_eq(name, "daemon");
    cr_assert_str_eq(sun, "daemon");
    if (geteuid() == 0)
        cr_assert_eq(code, 0, "exit %d", code);
    json_decref(report);
}

Test(check_tenant, a_proxy_slurm_refuses_fails_its_row_with_exit_77)
{
    json_t *report = NULL;
    const char *detail;
    int code;

    script(401);
    code = check(&report);
    cr_assert_str_eq(status_of(report, "tenant:ta/token"), "FAIL");
    detail = json_string_value(json_object_get(row_named(report, "tenant:ta/token"), "detail"));
    cr_assert_not_null(strstr(detail, "SlurmUser"), "%s", detail);
    cr_assert_str_eq(status_of(report, "tenant:tb/token"), "ok");
    cr_assert_eq(code, 77, "exit %d", code);
    json_decref(report);
}

/* A site directory tenants cannot pass (made before tenants, 0700) fails
 * the tenants-staging row, naming the fix. */
Test(check_tenant, a_site_directory_tenants_cannot_pass_fails_with_exit_78)
{
    json_t *report = NULL;
    const char *detail;
    char path[128];
    int code;

    snprintf(path, sizeof(path), "%s/default", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    script(200);
    code = check(&report);
    cr_assert_str_eq(status_of(report, "tenants-staging"), "FAIL");
    detail = json_string_value(json_object_get(row_named(report, "tenants-staging"), "detail"));
    cr_assert_not_null(strstr(detail, "0711"), "%s", detail);
    cr_assert_neq(code, 0);
    json_decref(report);
}
