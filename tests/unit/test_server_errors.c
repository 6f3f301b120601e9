/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_errors.c - the error answers of `sluice serve` that a client
 * programs against: a 422 lists every field error (`errors[]`, request
 * order, `field`/`detail` the first), a malformed body is a 400 naming line
 * and column (as the CLI does), and the OpenAPI document is served as JSON
 * and YAML without a token, with the binary's version.  Only loopback
 * traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/sluice.h>

#include "http_client.h"
#include "server_fixture.h"

#define AUTH SFX_AUTH
#define JSON_AUTH SFX_JSON_AUTH

static server_fixture_t fx;

static void setup(void)
{
    char why[256];

    cr_assert_eq(sfx_start(&fx, NULL, NULL, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    sfx_stop(&fx);
}

TestSuite(server_errors, .init = setup, .fini = teardown, .timeout = 120);

static json_t *post(const char *body, int *status)
{
    hc_response_t r;
    json_t *j;
    json_error_t jerr;

    cr_assert_eq(hc_request(fx.port, "POST", "/v1/launches", JSON_AUTH, body, strlen(body), &r), 0);
    *status = r.status;
    j = json_loads(r.body, 0, &jerr);
    cr_assert_not_null(j, "%s: %s", r.body, jerr.text);
    hc_response_clear(&r);
    return j;
}

Test(server_errors, a_422_lists_every_field_error_in_request_order)
{
    const char *body =
        "{\"launch_id\": \"many-errors\", \"site\": \"site-1\", \"profile\": \"none\", "
        "\"partition\": \"gpu\", \"pools\": [{\"name\": \"a\", \"nodes\": 0, \"command\": \"c\"}, "
        "{\"name\": \"b\", \"command\": \"c\"}, {\"name\": \"c\", \"gpus_per_node\": -1, "
        "\"command\": \"c\"}], \"time_limit\": \"soon\"}";
    static const char *const paths[] = {"pools[0].nodes", "pools[2].gpus_per_node", "time_limit"};
    int status = 0;
    json_t *p = post(body, &status), *errors = json_object_get(p, "errors");
    char first[600];
    size_t i;

    cr_expect_eq(status, 422);
    cr_expect_str_eq(json_string_value(json_object_get(p, "type")),
                     "urn:sluice:problem:invalid-request");
    cr_assert(json_is_array(errors));
    cr_assert_eq(json_array_size(errors), 3, "%s", json_dumps(p, 0));
    for (i = 0; i < 3; i++) {
        json_t *e = json_array_get(errors, i);

        cr_expect_str_eq(json_string_value(json_object_get(e, "path")), paths[i]);
        cr_expect(json_string_length(json_object_get(e, "reason")) > 0);
        cr_expect_eq(json_object_size(e), 2);
    }
    cr_expect_str_eq(json_string_value(json_object_get(p, "field")), "pools[0].nodes");
    snprintf(first, sizeof(first), "pools[0].nodes: %s",
             json_string_value(json_object_get(json_array_get(errors, 0), "reason")));
    cr_expect_str_eq(json_string_value(json_object_get(p, "detail")), first);
    json_decref(p);
}

Test(server_errors, a_single_error_is_a_list_of_one)
{
    char req[1200], *brace;
    int status = 0;
    json_t *p, *errors;

    /* a study the service does not know: found before the parse */
    sfx_request("one-error", "/bin/true", req, sizeof(req));
    brace = strrchr(req, '}');
    snprintf(brace, sizeof(req) - (size_t)(brace - req), ", \"study\": \"atlas\"}");
    p = post(req, &status);
    errors = json_object_get(p, "errors");
    cr_expect_eq(status, 422);
    cr_assert_eq(json_array_size(errors), 1, "%s", json_dumps(p, 0));
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(errors, 0), "path")),
                     "study");
    cr_expect_str_eq(json_string_value(json_object_get(p, "field")), "study");
    json_decref(p);
}

Test(server_errors, malformed_json_names_line_and_column)
{
    const char *body = "{\n  \"launch_id\": \"x\",\n  \"site\": ]\n}";
    int status = 0;
    json_t *p = post(body, &status);
    const char *detail = json_string_value(json_object_get(p, "detail"));

    cr_expect_eq(status, 400);
    cr_expect_str_eq(json_string_value(json_object_get(p, "type")),
                     "urn:sluice:problem:malformed-json");
    cr_expect_eq(json_integer_value(json_object_get(p, "line")), 3, "%s", detail);
    cr_expect_eq(json_integer_value(json_object_get(p, "column")), 11, "%s", detail);
    cr_expect(strstr(detail, "line 3, column 11") != NULL, "%s", detail);
    /* the reason, as the CLI gives it, never the body's text */
    cr_expect(strstr(detail, "unexpected token") != NULL, "%s", detail);
    cr_expect(strstr(detail, "near") == NULL, "%s", detail);
    json_decref(p);

    p = post("{\"launch_id\": \"a\", \"launch_id\": \"b\"}", &status);
    detail = json_string_value(json_object_get(p, "detail"));
    cr_expect_eq(status, 400);
    cr_expect(strstr(detail, "duplicate object key") != NULL, "%s", detail);
    cr_expect(strstr(detail, "launch_id") == NULL, "%s", detail);
    json_decref(p);
}

static json_t *get_doc(const char *path, const char *want_type, char **text)
{
    hc_response_t r;
    char hdr[128];
    json_t *j = NULL;
    json_error_t jerr;
    sluice_error_t err = SLUICE_ERROR_INIT;

    /* no Authorization header: a public route */
    cr_assert_eq(hc_request(fx.port, "GET", path, NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s: %d %s", path, r.status, r.body);
    cr_expect_str_eq(hc_header(&r, "Content-Type", hdr, sizeof(hdr)), want_type);
    if (strcmp(want_type, "application/json") == 0)
        cr_assert_not_null(j = json_loads(r.body, 0, &jerr), "%s", jerr.text);
    else
        cr_assert_eq(sluice_yaml_to_json("served", r.body, strlen(r.body), &j, &err), SLUICE_OK,
                     "%s", err.text);
    if (text != NULL)
        *text = strdup(r.body);
    hc_response_clear(&r);
    return j;
}

static int count_refs(json_t *j, const char *prefix)
{
    const char *k;
    json_t *v;
    size_t i;
    int n = 0;

    if (json_is_array(j)) {
        json_array_foreach(j, i, v) n += count_refs(v, prefix);
        return n;
    }
    json_object_foreach(j, k, v)
    {
        if (strcmp(k, "$ref") == 0 && json_is_string(v) &&
            strncmp(json_string_value(v), prefix, strlen(prefix)) == 0)
            n++;
        n += count_refs(v, prefix);
    }
    return n;
}

Test(server_errors, the_openapi_document_is_served_with_the_binary_version)
{
    json_t *j = get_doc("/v1/openapi.json", "application/json", NULL), *y;
    json_t *schemas = json_object_get(json_object_get(j, "components"), "schemas");
    json_t *paths = json_object_get(j, "paths");

    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "info"), "version")),
                     sluice_version());
    cr_expect_str_eq(sluice_version(), SLUICE_VERSION_STRING);
    cr_expect_str_eq(json_string_value(json_object_get(j, "openapi")), "3.1.0");
    cr_expect_not_null(json_object_get(paths, "/v1/openapi.json"));
    cr_expect_not_null(json_object_get(paths, "/v1/launches"));
    /* one piece: the request schemas are inside, every $ref is local */
    cr_expect_not_null(json_object_get(schemas, "LaunchRequest"));
    cr_expect_not_null(json_object_get(schemas, "FieldError"));
    cr_expect_eq(count_refs(j, "./"), 0);
    cr_expect_gt(count_refs(j, "#/components/schemas/LaunchRequest"), 0);
    /* core schema: booleans are JSON booleans, quoted numbers strings */
    cr_expect(json_is_true(json_object_get(
        json_object_get(json_object_get(json_object_get(j, "components"), "parameters"),
                        "LaunchId"),
        "required")));
    cr_expect(json_is_object(json_object_get(
        json_object_get(json_object_get(paths, "/v1/healthz"), "get"), "responses")));
    cr_expect_not_null(json_object_get(
        json_object_get(json_object_get(json_object_get(paths, "/v1/healthz"), "get"), "responses"),
        "200"));

    /* the YAML answer is the same value */
    y = get_doc("/v1/openapi.yaml", "application/yaml", NULL);
    cr_expect(json_equal(j, y), "the YAML and the JSON documents differ");
    json_decref(y);
    json_decref(j);
}

Test(server_errors, the_openapi_document_needs_no_token_and_only_get)
{
    hc_response_t r;

    cr_assert_eq(hc_request(fx.port, "POST", "/v1/openapi.json", NULL, "", 0, &r), 0);
    cr_expect_eq(r.status, 405);
    hc_response_clear(&r);
    /* another route still needs one */
    cr_assert_eq(hc_request(fx.port, "GET", "/v1/launches", NULL, NULL, 0, &r), 0);
    cr_expect_eq(r.status, 401);
    hc_response_clear(&r);
}
