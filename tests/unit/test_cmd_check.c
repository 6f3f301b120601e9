/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_check.c - `sluice check` (the built binary, $SLUICE_BIN) against
 * the scripted fake slurmrestd on 127.0.0.1: the accounting row, and the
 * rows of each cluster of a site with `clusters:`.  A
 * slurmrestd started with `-s openapi/slurmctld` only answers every
 * /slurmdb/ URL with its router's plain-text 404; that is no accounting,
 * never "accounting ok". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "fake_slurmrestd.h"

static fake_server_t *fs;
static char dir[64];
static const char *site_version;

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sluice-check-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    fs = fake_start(0);
    cr_assert_not_null(fs);
    site_version = "v0.0.43"; /* the REST version the site file pins */
}

static void teardown(void)
{
    char cmd[128];

    fake_stop(fs);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(cmd_check, .init = setup, .fini = teardown, .timeout = 60);

static void write_file(const char *name, const char *text, mode_t mode)
{
    char path[128];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
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
    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/%s/%s.json", src, site_version,
             name);
    j = json_load_file(path, 0, &jerr);
    cr_assert_not_null(j, "%s: %s", path, jerr.text);
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

/* Run `sluice check -o json` on a site file for the fake, with `more`
 * (NULL: nothing) at its end; its exit code, and its JSON report in *out
 * (new reference). */
static int check_site(const char *more, json_t **out)
{
    const char *bin = getenv("SLUICE_BIN");
    char site[512];
    char cmd[1024];
    char path[128];
    json_error_t jerr;
    int st;

    cr_assert_not_null(bin, "SLUICE_BIN is set by ctest");
    write_file("key", "0123456789abcdef0123456789abcdef", 0600);
    snprintf(site, sizeof(site),
             "rest:\n  url: %s\n  api_version: %s\n  user: alice\n  jwt_key_file: %s/key\n"
             "storage:\n  root: %s\njob_launcher:\n  sandbox: none\n%s",
             fake_url(fs), site_version, dir, dir, more ? more : "");
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

static int check(json_t **out)
{
    return check_site(NULL, out);
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

/* A served OpenAPI document that lists v0.0.43 and deprecates nothing. */
#define OPENAPI_PLAIN "{\"openapi\":\"3.0.2\",\"paths\":{\"/slurm/v0.0.43/diag/\":{\"get\":{}}}}"

/* negotiation (pinned: one diag), the token check (diag), the server's
 * OpenAPI document (`openapi`, HTTP `openapi_status`), then the accounting
 * query answered by `acct`, then nodes. */
static void script_with(int openapi_status,
                        const char *openapi,
                        int acct_status,
                        const char *acct_body,
                        const char *acct_type)
{
    char *diag = fixture("diag_basic");
    char *nodes = fixture("nodes_basic");

    push(200, diag, NULL);
    push(200, diag, NULL);
    push(openapi_status, openapi, openapi_status == 200 ? NULL : "text/plain");
    push(acct_status, acct_body, acct_type);
    push(200, nodes, NULL);
    free(diag);
    free(nodes);
}

static void script(int acct_status, const char *acct_body, const char *acct_type)
{
    script_with(200, OPENAPI_PLAIN, acct_status, acct_body, acct_type);
}

Test(cmd_check, accounting_not_served_fails_with_exit_69)
{
    static const char *const bodies[] = {
        "Unable find requested URL",
        "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit "
        "'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes "
        "a list of all possible slurmrestd endpoints.",
    };

    for (size_t i = 0; i < 2; i++) {
        json_t *report = NULL;
        json_t *acct;
        const char *detail;
        int code;

        script(404, bodies[i], "text/plain");
        code = check(&report);
        acct = row_named(report, "accounting");
        detail = json_string_value(json_object_get(acct, "detail"));
        cr_assert_str_eq(json_string_value(json_object_get(acct, "status")), "FAIL", "body %zu: %s",
                         i, detail);
        cr_assert_eq(code, 69, "body %zu: exit %d", i, code);
        cr_assert_not_null(strstr(detail, "no accounting"), "%s", detail);
        cr_assert_not_null(strstr(detail, "/slurmdb/v0.0.43/"), "the URL is named: %s", detail);
        cr_assert_not_null(strstr(detail, fake_url(fs)), "the server is named: %s", detail);
        cr_assert_not_null(strstr(detail, "cannot confirm"), "%s", detail);
        cr_assert(json_is_false(json_object_get(report, "ok")));
        json_decref(report);
    }
}

Test(cmd_check, accounting_with_nothing_found_is_ok)
{
    json_t *report = NULL;
    int code;

    script(200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    code = check(&report);
    cr_assert_str_eq(json_string_value(json_object_get(row_named(report, "accounting"), "status")),
                     "ok");
    cr_assert_eq(code, 0, "exit %d", code);
    json_decref(report);
}

Test(cmd_check, every_cluster_is_checked_and_its_rows_name_it)
{
    json_t *report = NULL, *r;
    const char *name;
    size_t i, east = 0, west = 0;
    int code;

    /* east is the fake; west a port nothing listens on. */
    script(200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    code = check_site("clusters:\n"
                      "  - name: east\n"
                      "  - name: west\n"
                      "    rest: {url: \"http://127.0.0.1:1\"}\n",
                      &report);
    cr_assert_eq(code, 69, "exit %d", code);
    cr_assert(json_is_false(json_object_get(report, "ok")));
    cr_expect_str_eq(json_string_value(json_object_get(row_named(report, "config"), "status")),
                     "ok");
    cr_expect_null(json_object_get(row_named(report, "config"), "cluster"));
    r = row_named(report, "east/accounting");
    cr_expect_str_eq(json_string_value(json_object_get(r, "status")), "ok");
    cr_expect_str_eq(json_string_value(json_object_get(r, "cluster")), "east");
    r = row_named(report, "west/reachability");
    cr_expect_str_eq(json_string_value(json_object_get(r, "status")), "FAIL");
    cr_expect_str_eq(json_string_value(json_object_get(r, "cluster")), "west");
    json_array_foreach(json_object_get(report, "checks"), i, r)
    {
        name = json_string_value(json_object_get(r, "check"));
        east += strncmp(name, "east/", 5) == 0;
        west += strncmp(name, "west/", 5) == 0;
        cr_expect(strcmp(name, "config") == 0 || strchr(name, '/') != NULL, "%s", name);
    }
    cr_expect_geq(east, 6, "east has identity to partition: %zu rows", east);
    cr_expect_geq(west, 6, "west has identity to partition: %zu rows", west);
    json_decref(report);
}

/* ---- deprecation ----------------------------------------------------------- */

/* A stand-in for what slurmrestd 26.11 serves at /openapi/v3 (v0.0.43 to
 * v0.0.46), built from Slurm's real documents in shared/openapi/slurmrestd,
 * with every operation of `deprecate` (NULL: none) marked "deprecated": true.
 * Its limits: no 26.11 slurmrestd served it.  The v0.0.43-v0.0.45 documents
 * were generated by 25.11/26.11 release candidates, one parser each, and
 * the test itself sets the marks that 26.11's openapi.c (_populate_method)
 * sets on each method of a deprecated parser; the served document's info,
 * tags and components are left out (sluice reads only the paths); the fake
 * checks no token and answers it as one body.  New text. */
static char *standin_2611(const char *deprecate)
{
    static const char *const files[] = {"v0.0.43.json", "v0.0.44.json", "v0.0.45.json",
                                        "v0.0.46.json"};
    const char *shared = getenv("SLUICE_SHARED_DIR");
    json_t *out = json_pack("{s:s, s:{}}", "openapi", "3.0.2", "paths");
    json_t *paths = json_object_get(out, "paths");
    char path[4096], mine[2][64];
    struct stat st;
    char *text;

    if (shared == NULL || stat(shared, &st) != 0 || !S_ISDIR(st.st_mode))
        cr_skip_test("SLUICE_SHARED_DIR (%s) is not a directory: Slurm's documents are absent",
                     shared != NULL ? shared : "unset");
    snprintf(mine[0], sizeof(mine[0]), "/slurm/%s/", deprecate ? deprecate : "-");
    snprintf(mine[1], sizeof(mine[1]), "/slurmdb/%s/", deprecate ? deprecate : "-");
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        json_error_t jerr;
        json_t *doc, *item, *op;
        const char *key, *method;

        snprintf(path, sizeof(path), "%s/openapi/slurmrestd/%s", shared, files[i]);
        doc = json_load_file(path, 0, &jerr);
        cr_assert_not_null(doc, "%s: %s", path, jerr.text);
        json_object_foreach(json_object_get(doc, "paths"), key, item)
        {
            if (strncmp(key, mine[0], strlen(mine[0])) == 0 ||
                strncmp(key, mine[1], strlen(mine[1])) == 0) {
                json_object_foreach(item, method, op)
                {
                    if (json_is_object(op))
                        json_object_set_new(op, "deprecated", json_true());
                }
            }
            json_object_set(paths, key, item);
        }
        json_decref(doc);
    }
    text = json_dumps(out, JSON_COMPACT);
    cr_assert_not_null(text);
    json_decref(out);
    return text;
}

static const char *deprecation_detail(json_t *report, const char *status)
{
    json_t *row = row_named(report, "deprecation");
    const char *detail = json_string_value(json_object_get(row, "detail"));

    cr_assert_str_eq(json_string_value(json_object_get(row, "status")), status, "%s", detail);
    return detail;
}

Test(cmd_check, deprecated_version_warns_naming_its_removal_and_the_newer_ones)
{
    char *doc = standin_2611("v0.0.43");
    json_t *report = NULL;
    const char *detail;
    int code;

    script_with(200, doc, 200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    free(doc);
    code = check(&report);
    detail = deprecation_detail(report, "warn");
    cr_expect_not_null(strstr(detail, "v0.0.43 is deprecated by this server"), "%s", detail);
    cr_expect_not_null(strstr(detail, "all 62 of its operations"), "%s", detail);
    cr_expect_not_null(strstr(detail, "Slurm removes it in 27.05"), "%s", detail);
    cr_expect_not_null(strstr(detail, "Newer versions it serves: v0.0.44, v0.0.45, v0.0.46"), "%s",
                       detail);
    cr_expect_not_null(strstr(detail, "rest.api_version"), "%s", detail);
    cr_expect_eq(code, 0, "a warning is no failure: exit %d", code);
    cr_expect_str_eq(fake_request(fs, 2)->target, "/openapi/v3");
    json_decref(report);
}

Test(cmd_check, version_the_server_does_not_deprecate_is_ok)
{
    char *doc = standin_2611(NULL);
    json_t *report = NULL;
    const char *detail;

    script_with(200, doc, 200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    free(doc);
    cr_expect_eq(check(&report), 0);
    detail = deprecation_detail(report, "ok");
    cr_expect_not_null(strstr(detail, "v0.0.43 is not deprecated"), "%s", detail);
    json_decref(report);
}

/* A version whose removal Slurm has not announced yet. */
Test(cmd_check, deprecated_newest_version_names_a_later_release)
{
    char *doc;
    json_t *report = NULL;
    const char *detail;

    site_version = "v0.0.46";
    doc = standin_2611("v0.0.46");
    script_with(200, doc, 200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    free(doc);
    cr_expect_eq(check(&report), 0);
    detail = deprecation_detail(report, "warn");
    cr_expect_not_null(strstr(detail, "Slurm removes it in a later release"), "%s", detail);
    cr_expect_not_null(strstr(detail, "serves no newer version sluice supports"), "%s", detail);
    json_decref(report);
}

Test(cmd_check, unreadable_openapi_document_is_not_checked)
{
    json_t *report = NULL;
    const char *detail;

    script_with(404, "Invalid or unknown URL path", 200,
                "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    cr_expect_eq(check(&report), 0);
    detail = deprecation_detail(report, "not checked");
    cr_expect_not_null(strstr(detail, "/openapi/v3"), "%s", detail);
    cr_expect_str_eq(json_string_value(json_object_get(row_named(report, "accounting"), "status")),
                     "ok");
    json_decref(report);
}

/* render (like launch and serve) takes a site file with clusters: the
 * request's `cluster` (or --cluster) picks one, the first by default; an
 * unknown name is a usage error (--cluster, 64) or a request error naming
 * the field (65), both listing the known names. */
static int render_site(const char *args, const char *request, char *err, size_t cap)
{
    const char *bin = getenv("SLUICE_BIN");
    char cmd[1024], path[128];
    FILE *f;
    size_t n;
    int st;

    write_file("req.json", request, 0600);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && env -u SLUICE_CONFIG -u SLURM_JWT '%s' render req.json %s --config "
             "site.yaml -o json >'%s/out' 2>'%s/err'",
             dir, bin, args, dir, dir);
    st = system(cmd);
    snprintf(path, sizeof(path), "%s/err", dir);
    cr_assert_not_null(f = fopen(path, "r"));
    n = fread(err, 1, cap - 1, f);
    err[n] = '\0';
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cmd_check, render_takes_a_site_with_clusters)
{
#define REQ(more)                                                                                  \
    "{\"launch_id\": \"c1\", \"site\": \"default\", \"command\": \"/bin/true\", \"pools\": "       \
    "[{\"name\": \"p\"}]" more "}"
    char body[512], err[1024];
    json_t *report = NULL, *out = NULL;
    int rc;

    cr_assert_not_null(getenv("SLUICE_BIN"), "SLUICE_BIN is set by ctest");
    script(200, "{\"jobs\":[],\"errors\":[],\"warnings\":[]}", NULL);
    (void)check_site("clusters:\n  - name: east\n  - name: west\n", &report); /* site.yaml */
    json_decref(report);
    snprintf(body, sizeof(body), "%s", REQ(""));
    rc = render_site("", body, err, sizeof(err));
    cr_assert_eq(rc, 0, "render with clusters: exit %d: %s", rc, err);
    rc = render_site("--cluster west", body, err, sizeof(err));
    cr_assert_eq(rc, 0, "render --cluster west: exit %d: %s", rc, err);
    {
        char path[160];
        json_error_t jerr;
        snprintf(path, sizeof(path), "%s/out", dir);
        cr_assert_not_null(out = json_load_file(path, 0, &jerr), "%s", jerr.text);
        json_decref(out);
    }
    /* the body follows the site's rest.api_version (--api-version wins) */
    {
        char path[160];
        json_error_t jerr;
        snprintf(path, sizeof(path), "%s/out", dir);
        rc = render_site("--set rest.api_version=v0.0.42", body, err, sizeof(err));
        cr_assert_eq(rc, 0, "render at v0.0.42: exit %d: %s", rc, err);
        cr_assert_not_null(out = json_load_file(path, 0, &jerr), "%s", jerr.text);
        cr_expect_str_eq(json_string_value(json_object_get(out, "api_version")), "v0.0.42");
        json_decref(out);
        rc = render_site("--set rest.api_version=v0.0.42 --api-version v0.0.40", body, err,
                         sizeof(err));
        cr_assert_eq(rc, 0, "render --api-version: exit %d: %s", rc, err);
        cr_assert_not_null(out = json_load_file(path, 0, &jerr), "%s", jerr.text);
        cr_expect_str_eq(json_string_value(json_object_get(out, "api_version")), "v0.0.40");
        json_decref(out);
        rc = render_site("--set rest.api_version=auto", body, err, sizeof(err));
        cr_assert_eq(rc, 0, "render at auto: exit %d: %s", rc, err);
        cr_expect_not_null(strstr(err, "rest.api_version is auto"), "%s", err);
    }
    rc = render_site("--cluster north", body, err, sizeof(err));
    cr_assert_eq(rc, 64, "--cluster north: exit %d: %s", rc, err);
    cr_assert_not_null(strstr(err, "--cluster: unknown cluster \"north\" (known: east, west)"),
                       "%s", err);
    snprintf(body, sizeof(body), "%s", REQ(", \"cluster\": \"north\""));
    rc = render_site("", body, err, sizeof(err));
    cr_assert_eq(rc, 65, "cluster north in the request: exit %d: %s", rc, err);
    cr_assert_not_null(strstr(err, "cluster: unknown cluster \"north\" (known: east, west)"), "%s",
                       err);
    snprintf(body, sizeof(body), "%s", REQ(", \"cluster\": \"east\""));
#undef REQ
    rc = render_site("--cluster west", body, err, sizeof(err));
    cr_assert_eq(rc, 65, "request east, --cluster west: exit %d: %s", rc, err);
}
