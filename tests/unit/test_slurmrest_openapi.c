/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurmrest_openapi.c - what a server's OpenAPI document says about a
 * REST version (sluice_rest_openapi_ops), read from Slurm's real documents
 * in shared/openapi/slurmrestd, and the removal table.
 *
 * The documents are generated ones, each of one data parser: v0.0.40.json
 * (25.05.8) and v0.0.41.json (a 25.11 build) are of releases that deprecate
 * those parsers, so every operation carries "deprecated": true, as in what
 * slurmrestd serves; v0.0.46.json (26.11.0-0rc1) is of its newest. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "slurm/slurmrest.h"

#include "sluice_assert.h"

static json_t *document(const char *file)
{
    const char *shared = getenv("SLUICE_SHARED_DIR");
    char path[4096];
    struct stat st;
    json_error_t jerr;
    json_t *j;

    if (shared == NULL || stat(shared, &st) != 0 || !S_ISDIR(st.st_mode))
        cr_skip_test("SLUICE_SHARED_DIR (%s) is not a directory: Slurm's documents are absent",
                     shared != NULL ? shared : "unset");
    snprintf(path, sizeof(path), "%s/openapi/slurmrestd/%s", shared, file);
    j = json_load_file(path, 0, &jerr);
    cr_assert_not_null(j, "%s: %s", path, jerr.text);
    return j;
}

Test(slurmrest_openapi, a_deprecating_release_marks_every_operation)
{
    static const struct {
        const char *file;
        sluice_rest_version v;
        size_t operations; /* counted with jq from the document */
        size_t deprecated;
    } docs[] = {
        {"v0.0.40.json", SLUICE_REST_V0040, 58, 58},
        {"v0.0.41.json", SLUICE_REST_V0041, 59, 59},
        {"v0.0.43.json", SLUICE_REST_V0043, 62, 0},
        {"v0.0.46.json", SLUICE_REST_V0046, 72, 0},
    };

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_t *doc = document(docs[i].file);
        sluice_rest_openapi_ops_t o = {0, 0};
        sluice_error_t err = SLUICE_ERROR_INIT;

        cr_assert_sluice_ok(sluice_rest_openapi_ops(doc, docs[i].v, &o, &err), &err);
        cr_expect_eq(o.operations, docs[i].operations, "%s: %zu operations", docs[i].file,
                     o.operations);
        cr_expect_eq(o.deprecated, docs[i].deprecated, "%s: %zu deprecated", docs[i].file,
                     o.deprecated);
        /* another version's paths are not counted */
        cr_assert_sluice_ok(sluice_rest_openapi_ops(doc, SLUICE_REST_V0042, &o, &err), &err);
        cr_expect_eq(o.operations, 0, "%s lists v0.0.42 operations", docs[i].file);
        json_decref(doc);
    }
}

/* Hand-made documents: the path prefixes that count, and what is refused. */
Test(slurmrest_openapi, paths_and_malformed_documents)
{
    static const struct {
        const char *json;
        sluice_err rc;
        size_t operations, deprecated;
        const char *text;
    } cases[] = {
        {"{\"paths\":{\"/slurm/v0.0.43/diag/\":{\"get\":{\"deprecated\":true}},"
         "\"/slurmdb/v0.0.43/jobs/\":{\"get\":{},\"post\":{\"deprecated\":false},"
         "\"parameters\":[]},\"/slurm/v0.0.430/x\":{\"get\":{}},\"/slurm/v0.0.43\":{\"get\":{}},"
         "\"/util/v0.0.43/hostlist\":{\"post\":{}},\"/openapi/v3\":{\"get\":{}}}}",
         SLUICE_OK, 3, 1, NULL},
        {"[]", SLUICE_EPROTO, 0, 0, "openapi: expected an object"},
        {"{\"openapi\":\"3.0.2\"}", SLUICE_EPROTO, 0, 0, "openapi.paths: missing"},
        {"{\"paths\":[]}", SLUICE_EPROTO, 0, 0, "openapi.paths: expected an object"},
        {"{\"paths\":{\"/slurm/v0.0.43/diag/\":7}}", SLUICE_EPROTO, 0, 0,
         "openapi: paths[\"/slurm/v0.0.43/diag/\"]: expected an object"},
        {"{\"paths\":{\"/slurm/v0.0.43/diag/\":{\"get\":\"x\"}}}", SLUICE_EPROTO, 0, 0,
         "openapi: paths[\"/slurm/v0.0.43/diag/\"].get: expected an object"},
        {"{\"paths\":{\"/slurm/v0.0.43/diag/\":{\"get\":{\"deprecated\":\"yes\"}}}}", SLUICE_EPROTO,
         0, 0, "openapi: paths[\"/slurm/v0.0.43/diag/\"].get.deprecated: expected a boolean"},
        /* another version's malformed path is none of v0.0.43's business */
        {"{\"paths\":{\"/slurm/v0.0.44/diag/\":7}}", SLUICE_OK, 0, 0, NULL},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *doc = json_loads(cases[i].json, 0, NULL);
        sluice_rest_openapi_ops_t o = {99, 99};
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_err rc;

        cr_assert_not_null(doc, "case %zu: bad test JSON", i);
        rc = sluice_rest_openapi_ops(doc, SLUICE_REST_V0043, &o, &err);
        cr_expect_eq(rc, cases[i].rc, "case %zu: %s", i, err.text);
        if (rc == SLUICE_OK) {
            cr_expect_eq(o.operations, cases[i].operations, "case %zu", i);
            cr_expect_eq(o.deprecated, cases[i].deprecated, "case %zu", i);
        } else {
            cr_expect_str_eq(err.text, cases[i].text, "case %zu", i);
            cr_expect_eq(o.operations, 99, "case %zu: output touched on error", i);
        }
        json_decref(doc);
    }
    cr_assert_eq(
        sluice_rest_openapi_ops(NULL, SLUICE_REST_V0043, &(sluice_rest_openapi_ops_t){0}, NULL),
        SLUICE_EINVAL);
    {
        json_t *empty = json_object();
        cr_expect_eq(sluice_rest_openapi_ops(empty, SLUICE_REST_VERSION_COUNT_,
                                             &(sluice_rest_openapi_ops_t){0}, NULL),
                     SLUICE_EINVAL);
        json_decref(empty);
    }
}

/* Slurm's lifecycle table (rest_clients.shtml of 26.11, RELEASE_NOTES.md);
 * v0.0.46 has no announced removal. */
Test(slurmrest_openapi, removal_releases)
{
    static const char *const want[] = {"24.05", "25.11", "26.05", "26.11",
                                       "27.05", "27.11", "28.05", NULL};

    cr_assert_eq(sizeof(want) / sizeof(want[0]), (size_t)SLUICE_REST_VERSION_COUNT_);
    for (int v = 0; v < SLUICE_REST_VERSION_COUNT_; v++) {
        const char *got = sluice_rest_version_removed_in((sluice_rest_version)v);
        if (want[v] == NULL)
            cr_expect_null(got, "%s: %s", sluice_rest_version_name(v), got);
        else
            cr_expect_str_eq(got, want[v], "%s", sluice_rest_version_name(v));
    }
    cr_assert_null(sluice_rest_version_removed_in(SLUICE_REST_VERSION_COUNT_));
}
