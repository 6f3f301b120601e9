/* SPDX-License-Identifier: Apache-2.0 */
/* test_restclass.c - outcome classification, one row per rule. */
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "slurm/restclass.h"

#define NOERR REST_NO_ERROR_NUMBER

struct row {
    rest_outcome_t in;
    sluice_outcome want;
    int line;
};

#define ROW(status, xfer, errno_, family, authd, retry, want)                                      \
    {                                                                                              \
        {status, xfer, errno_, family, authd, retry, 0}, want, __LINE__                            \
    }
/* The router's "unknown URL" 404 (restclass_unrouted()). */
#define UNROUTED(status, family, want)                                                             \
    {                                                                                              \
        {status, HTTP_XFER_OK, NOERR, family, 1, 0, 1}, want, __LINE__                             \
    }

static struct row rows[] = {
    /* success */
    ROW(200, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_OK),
    ROW(304, HTTP_XFER_OK, NOERR, SLURM_FAMILY_22_05, 1, 0, SLUICE_OUTCOME_OK),
    /* 401 and 511 are AUTH everywhere */
    ROW(401, HTTP_XFER_OK, NOERR, SLURM_FAMILY_22_05, 1, 0, SLUICE_OUTCOME_AUTH),
    ROW(401, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 1, SLUICE_OUTCOME_AUTH),
    ROW(511, HTTP_XFER_OK, 1007, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_AUTH),
    /* 22.05: 500 with -1 on an authenticated call is AUTH */
    ROW(500, HTTP_XFER_OK, -1, SLURM_FAMILY_22_05, 1, 0, SLUICE_OUTCOME_AUTH),
    ROW(500, HTTP_XFER_OK, -1, SLURM_FAMILY_22_05, 0, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(500, HTTP_XFER_OK, 2017, SLURM_FAMILY_22_05, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(500, HTTP_XFER_OK, -1, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    /* 23.02-24.05: 7000 refreshes once, then is UNAVAILABLE */
    ROW(500, HTTP_XFER_OK, 7000, SLURM_FAMILY_23_02, 1, 0, SLUICE_OUTCOME_AUTH),
    ROW(500, HTTP_XFER_OK, 7000, SLURM_FAMILY_23_02, 1, 1, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(500, HTTP_XFER_OK, 1007, SLURM_FAMILY_23_02, 1, 0, SLUICE_OUTCOME_AUTH),
    ROW(500, HTTP_XFER_OK, 2000, SLURM_FAMILY_23_02, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(500, HTTP_XFER_OK, 7000, SLURM_FAMILY_22_05, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    /* 24.11+: DB connection failures are 502 */
    ROW(502, HTTP_XFER_OK, 7000, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(504, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(503, HTTP_XFER_OK, NOERR, SLURM_FAMILY_23_02, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    /* not found */
    ROW(404, HTTP_XFER_OK, 2017, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_NOT_FOUND),
    /* the router's 404: the URL is not served (no slurmdbd plugin): no verdict */
    UNROUTED(404, SLURM_FAMILY_22_05, SLUICE_OUTCOME_UNAVAILABLE),
    UNROUTED(404, SLURM_FAMILY_24_11, SLUICE_OUTCOME_UNAVAILABLE),
    /* rejections */
    ROW(400, HTTP_XFER_OK, 9001, SLURM_FAMILY_22_05, 1, 0, SLUICE_OUTCOME_REJECTED),
    ROW(422, HTTP_XFER_OK, 9000, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_REJECTED),
    ROW(415, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_REJECTED),
    ROW(405, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_REJECTED),
    ROW(429, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(408, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    /* transport failures are UNAVAILABLE whatever the status field says */
    ROW(0, HTTP_XFER_TIMEOUT, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(0, HTTP_XFER_DROPPED, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(0, HTTP_XFER_NOT_SENT, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(0, HTTP_XFER_TLS, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    ROW(200, HTTP_XFER_TOO_BIG, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
    /* unexpected statuses prove nothing */
    ROW(302, HTTP_XFER_OK, NOERR, SLURM_FAMILY_24_11, 1, 0, SLUICE_OUTCOME_UNAVAILABLE),
};

ParameterizedTestParameters(restclass, table)
{
    return cr_make_param_array(struct row, rows, sizeof(rows) / sizeof(rows[0]));
}

ParameterizedTest(struct row *r, restclass, table)
{
    sluice_outcome got = restclass_classify(&r->in);

    cr_assert_eq(got, r->want, "row at line %d: status %ld xfer %s errno %ld: got %s want %s",
                 r->line, r->in.status, http_xfer_name(r->in.xfer), r->in.error_number,
                 sluice_outcome_name(got), sluice_outcome_name(r->want));
}

Test(restclass, null_is_unavailable)
{
    cr_assert_eq(restclass_classify(NULL), SLUICE_OUTCOME_UNAVAILABLE);
    cr_assert_str_eq(sluice_outcome_name(SLUICE_OUTCOME_AUTH), "auth");
}

Test(restclass, error_number_from_bodies)
{
    const char *b1 = "{\"errors\":[{\"error_number\":7000,\"error\":\"db\"}],\"warnings\":[]}";
    const char *b2 = "{\"errors\":[{\"error_code\":-1}]}";
    const char *b3 = "{\"errors\":[]}";
    const char *b4 = "Authentication failure";

    cr_assert_eq(restclass_error_number(b1, strlen(b1)), 7000);
    cr_assert_eq(restclass_error_number(b2, strlen(b2)), -1);
    cr_assert_eq(restclass_error_number(b3, strlen(b3)), REST_NO_ERROR_NUMBER);
    cr_assert_eq(restclass_error_number(b4, strlen(b4)), REST_NO_ERROR_NUMBER);
    cr_assert_eq(restclass_error_number(NULL, 0), REST_NO_ERROR_NUMBER);
}

Test(restclass, router_404_is_told_from_a_verdict_by_its_body)
{
    const char *text = "Unable find requested URL";
    const char *json = "{\"errors\":[{\"error_number\":2017,\"error\":\"Invalid job id\"}]}";
    const char *url = "{\"errors\":[{\"error_number\":9006,\"error\":\"Unable to find\"}]}";
    const char *bare = "{\"jobs\":[]}";
    /* 26.11: 9006 retired, its router names ESLURM_URL_INVALID_PATH, whose
     * slurm_strerror() text is the whole plain-text body. */
    const char *path26 = "{\"errors\":[{\"error_number\":11008,\"error\":\"x\"}]}";
    const char *text26 = "Invalid or unknown URL path";

    cr_assert_eq(restclass_unrouted(404, text, strlen(text)), 1);
    cr_assert_eq(restclass_unrouted(404, text26, strlen(text26)), 1, "26.11 router text");
    cr_assert_eq(restclass_unrouted(404, path26, strlen(path26)), 1, "ESLURM_URL_INVALID_PATH");
    cr_assert_eq(restclass_unrouted(404, NULL, 0), 1);
    cr_assert_eq(restclass_unrouted(404, bare, strlen(bare)), 1, "JSON without errors[]");
    cr_assert_eq(restclass_unrouted(404, url, strlen(url)), 1, "ESLURM_REST_UNKNOWN_URL");
    cr_assert_eq(restclass_unrouted(404, json, strlen(json)), 0, "a job-not-found verdict");
    cr_assert_eq(restclass_unrouted(500, text, strlen(text)), 0);
}

/* The client classifies the body it parsed once (restclass_unrouted_of):
 * the same answer as from the text. */
Test(restclass, router_404_from_a_parsed_body_is_the_same)
{
    const char *bodies[] = {
        "Unable find requested URL",
        "{\"errors\":[{\"error_number\":2017,\"error\":\"Invalid job id\"}]}",
        "{\"errors\":[{\"error_number\":9006,\"error\":\"Unable to find\"}]}",
        "{\"errors\":[{\"error_number\":11008,\"error\":\"x\"}]}",
        "{\"errors\":[]}",
        "{\"jobs\":[]}",
        "",
    };

    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        json_t *root = json_loads(bodies[i], 0, NULL);
        for (long status = 403; status <= 405; status++)
            cr_expect_eq(restclass_unrouted_of(status, root),
                         restclass_unrouted(status, bodies[i], strlen(bodies[i])), "%ld %s", status,
                         bodies[i]);
        json_decref(root);
    }
}
