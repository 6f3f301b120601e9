/* SPDX-License-Identifier: Apache-2.0 */
/* test_contract.c - every submit body the adapters build, for every version,
 * and every response fixture, validated against Slurm's OpenAPI documents
 * by tests/contract/validate.mjs (ajv), with the documented allow-list.
 *
 * Skips only when the shared folder with the documents is absent and CI is
 * not set; under CI=true that is a failure too (tests/support/ci_guard.h).
 * A missing node_modules is always a failure (run `npm ci --prefix
 * tests/contract`).
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "slurm/slurmrest.h"

#include "ci_guard.h"
#include "jobdesc_cases.h"

static bool is_dir(const char *p)
{
    struct stat st;

    return p != NULL && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static size_t write_bodies(const char *dir)
{
    size_t count = 0;
    char path[4096];

    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        snprintf(path, sizeof(path), "%s/%s", dir, sluice_rest_version_name(v));
        cr_assert_eq(mkdir(path, 0700), 0, "mkdir %s", path);
        for (size_t c = 0; c < jobdesc_case_count(); c++) {
            sluice_jobdesc_t d[JOBDESC_CASE_MAX_COMPONENTS];
            sluice_error_t err = SLUICE_ERROR_INIT;
            json_t *body = NULL;
            size_t n = jobdesc_case_build(c, d);

            cr_assert_eq(sluice_rest_submit_body(v, d, n, &body, &err), SLUICE_OK, "%s %s: %s",
                         sluice_rest_version_name(v), jobdesc_case_name(c), err.text);
            snprintf(path, sizeof(path), "%s/%s/body_%s.json", dir, sluice_rest_version_name(v),
                     jobdesc_case_name(c));
            cr_assert_eq(json_dump_file(body, path, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
            json_decref(body);
            for (size_t k = 0; k < n; k++)
                sluice_jobdesc_clear(&d[k]);
            count++;
        }
    }
    return count;
}

Test(contract, bodies_and_fixtures_match_openapi, .timeout = 120)
{
    const char *shared = getenv("SLUICE_SHARED_DIR");
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char specs[4096], mods[4096], cmd[16384], line[4096];
    char tmpl[] = "/tmp/sluice-contract-XXXXXX";
    size_t ok = 0, allowed = 0, invalid = 0;
    FILE *p;
    int status;

    if (!is_dir(shared)) {
        char why[4200];

        snprintf(why, sizeof(why),
                 "%s is not a directory, so Slurm's OpenAPI documents are absent and no body "
                 "or fixture can be validated",
                 shared != NULL ? shared : "(unset)");
        ci_guard_missing("SLUICE_SHARED_DIR", why);
    }
    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(specs, sizeof(specs), "%s/openapi/slurmrestd", shared);
    cr_assert(is_dir(specs), "%s is missing", specs);
    snprintf(mods, sizeof(mods), "%s/tests/contract/node_modules/ajv", src);
    cr_assert(is_dir(mods),
              "tests/contract/node_modules is missing: run `npm ci --prefix tests/contract`");
    cr_assert_not_null(mkdtemp(tmpl));
    cr_log_info("bodies written: %zu", write_bodies(tmpl));

    snprintf(cmd, sizeof(cmd),
             "node '%s/tests/contract/validate.mjs' '%s' '%s/tests/contract/allowlist.json' '%s' "
             "'%s/tests/fixtures/slurmrestd' 2>&1",
             src, specs, src, tmpl, src);
    p = popen(cmd, "r");
    cr_assert_not_null(p, "cannot run node");
    while (fgets(line, sizeof(line), p) != NULL) {
        fputs(line, stderr);
        if (strncmp(line, "ok ", 3) == 0)
            ok++;
        else if (strncmp(line, "allowed ", 8) == 0)
            allowed++;
        else if (strncmp(line, "INVALID ", 8) == 0)
            invalid++;
    }
    status = pclose(p);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", tmpl);
    cr_assert_eq(invalid, 0, "%zu file(s) do not match their OpenAPI schema", invalid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "validator failed (status %d)",
              status);
    cr_assert_geq(ok + allowed, (size_t)SLUICE_REST_VERSION_COUNT_ * jobdesc_case_count() + 150,
                  "too few files validated (%zu)", ok + allowed);
}

/* The undeclared-member check of validate.mjs can fail: v0.0.46 renamed
 * job_desc_msg's container_type to runtime, so a body that still says
 * container_type is INVALID against v0.0.46 and ok against v0.0.45, and
 * runtime is the other way round. */
Test(contract, a_member_the_version_does_not_declare_is_invalid, .timeout = 60)
{
    static const struct {
        const char *version;
        const char *member;
        bool valid;
    } cases[] = {
        {"v0.0.45", "container_type", true},
        {"v0.0.46", "container_type", false},
        {"v0.0.45", "runtime", false},
        {"v0.0.46", "runtime", true},
    };
    const char *shared = getenv("SLUICE_SHARED_DIR");
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char tmpl[] = "/tmp/sluice-contract-XXXXXX";
    char path[4096], cmd[16384], line[4096];

    if (!is_dir(shared))
        cr_skip_test("SLUICE_SHARED_DIR (%s) is not a directory: contract validation skipped",
                     shared != NULL ? shared : "unset");
    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    cr_assert_not_null(mkdtemp(tmpl));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *body = json_pack("{s:{s:s, s:[s], s:s}}", "job", "script", "#!/bin/sh\ntrue\n",
                                 "environment", "PATH=/bin", cases[i].member, "");
        FILE *p;
        bool invalid = false, ok = false;

        cr_assert_not_null(body);
        snprintf(path, sizeof(path), "%s/%s", tmpl, cases[i].version);
        cr_assert(is_dir(path) || mkdir(path, 0700) == 0, "mkdir %s", path);
        snprintf(path, sizeof(path), "%s/%s/body_member.json", tmpl, cases[i].version);
        cr_assert_eq(json_dump_file(body, path, JSON_INDENT(2)), 0);
        json_decref(body);
        snprintf(cmd, sizeof(cmd),
                 "node '%s/tests/contract/validate.mjs' '%s/openapi/slurmrestd' "
                 "'%s/tests/contract/allowlist.json' '%s' 2>&1",
                 src, shared, src, path);
        p = popen(cmd, "r");
        cr_assert_not_null(p, "cannot run node");
        while (fgets(line, sizeof(line), p) != NULL) {
            ok = ok || strncmp(line, "ok ", 3) == 0;
            if (strncmp(line, "INVALID ", 8) == 0)
                invalid = strstr(line, cases[i].member) != NULL && strstr(line, "undeclared");
        }
        pclose(p);
        cr_expect_eq(ok, cases[i].valid, "%s %s: ok", cases[i].version, cases[i].member);
        cr_expect_eq(invalid, !cases[i].valid, "%s %s: INVALID naming the member", cases[i].version,
                     cases[i].member);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
    if (system(cmd) != 0)
        cr_log_info("could not remove %s", tmpl);
}
