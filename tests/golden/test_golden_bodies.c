/* SPDX-License-Identifier: Apache-2.0 */
/* test_golden_bodies.c - golden files for the REST adapters: for each case
 * in tests/support/jobdesc_cases.c, tests/golden/slurmrest/<case>/ holds the
 * neutral model (jobdesc.json, an array of components) and the submit
 * bodies for v0.0.38 and v0.0.43.  UPDATE_GOLDEN=1 rewrites them, except
 * under CI=true, where it fails the test (tests/support/ci_guard.h). */
#include <criterion/criterion.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "slurm/slurmrest.h"

#include "ci_guard.h"
#include "jobdesc_cases.h"

static void check(const char *dir, const char *file, json_t *got)
{
    char path[4096];
    json_error_t jerr;
    json_t *want;

    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (ci_guard_update_golden()) {
        cr_assert_eq(json_dump_file(got, path, JSON_INDENT(2) | JSON_SORT_KEYS), 0, "%s", path);
        return;
    }
    want = json_load_file(path, 0, &jerr);
    cr_assert_not_null(want, "%s: %s (run with UPDATE_GOLDEN=1 to create)", path, jerr.text);
    if (!json_equal(want, got)) {
        char *text = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS);
        cr_log_error("%s differs; got:\n%s", path, text != NULL ? text : "(null)");
        free(text);
        cr_assert_fail("%s differs from the golden file (UPDATE_GOLDEN=1 rewrites)", path);
    }
    json_decref(want);
}

Test(golden, slurmrest_bodies)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char dir[4096];

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    for (size_t c = 0; c < jobdesc_case_count(); c++) {
        sluice_jobdesc_t d[JOBDESC_CASE_MAX_COMPONENTS];
        size_t n = jobdesc_case_build(c, d);
        json_t *model = json_array();
        static const sluice_rest_version versions[] = {SLUICE_REST_V0038, SLUICE_REST_V0043};

        snprintf(dir, sizeof(dir), "%s/tests/golden/slurmrest/%s", src, jobdesc_case_name(c));
        if (mkdir(dir, 0755) != 0)
            cr_assert_eq(errno, EEXIST, "mkdir %s", dir);
        for (size_t k = 0; k < n; k++)
            cr_assert_eq(json_array_append_new(model, sluice_jobdesc_to_json(&d[k])), 0);
        check(dir, "jobdesc.json", model);
        json_decref(model);
        for (size_t i = 0; i < 2; i++) {
            sluice_error_t err = SLUICE_ERROR_INIT;
            json_t *body = NULL;
            char file[64];

            cr_assert_eq(sluice_rest_submit_body(versions[i], d, n, &body, &err), SLUICE_OK, "%s",
                         err.text);
            snprintf(file, sizeof(file), "%s.json", sluice_rest_version_name(versions[i]));
            check(dir, file, body);
            json_decref(body);
        }
        for (size_t k = 0; k < n; k++)
            sluice_jobdesc_clear(&d[k]);
    }
}
