/* SPDX-License-Identifier: Apache-2.0 */
/* test_yaml_json.c - YAML documents as JSON and back (sluice_yaml_to_json,
 * sluice_json_to_yaml): the YAML 1.2 core schema for plain scalars, quoted
 * scalars stay strings, key order kept, the site reader's refusals, and a
 * round trip that gives the same value. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/config.h>

static json_t *y2j(const char *text)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    cr_assert_eq(sluice_yaml_to_json("t.yaml", text, strlen(text), &j, &err), SLUICE_OK, "%s",
                 err.text);
    return j;
}

Test(yaml_json, core_schema_for_plain_scalars)
{
    json_t *j = y2j("a: null\nb: ~\nc:\nd: true\ne: False\nf: 42\ng: -7\nh: 0x1F\ni: 0o17\n"
                    "j: 1.5\nk: 2e3\nl: .5\nm: .inf\nn: yes\no: '42'\np: \"true\"\nq: !!str 12\n"
                    "r: 1.2.3\ns: 0x\nt: |\n  two\n  lines\n");
    char *s = json_dumps(j, JSON_COMPACT);

    cr_expect_str_eq(s, "{\"a\":null,\"b\":null,\"c\":null,\"d\":true,\"e\":false,\"f\":42,"
                        "\"g\":-7,\"h\":31,\"i\":15,\"j\":1.5,\"k\":2000.0,\"l\":0.5,"
                        "\"m\":\".inf\",\"n\":\"yes\",\"o\":\"42\",\"p\":\"true\",\"q\":\"12\","
                        "\"r\":\"1.2.3\",\"s\":\"0x\",\"t\":\"two\\nlines\\n\"}");
    free(s);
    json_decref(j);
}

Test(yaml_json, sequences_nesting_and_order)
{
    json_t *j = y2j("z: [1, two, {k: v}]\na:\n  - x: 1\n    y: [ ]\nm: {}\n");
    char *s = json_dumps(j, JSON_COMPACT);

    cr_expect_str_eq(s, "{\"z\":[1,\"two\",{\"k\":\"v\"}],\"a\":[{\"x\":1,\"y\":[]}],\"m\":{}}");
    free(s);
    json_decref(j);
}

Test(yaml_json, refusals_name_the_place)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;

    cr_expect_eq(sluice_yaml_to_json("t.yaml", "a: 1\na: 2\n", 10, &j, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "t.yaml:2:1: duplicate key") != NULL, "%s", err.text);
    cr_expect_null(j);
    cr_expect_eq(sluice_yaml_to_json("t.yaml", "a: &x 1\nb: *x\n", 14, &j, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "aliases") != NULL, "%s", err.text);
    cr_expect_eq(sluice_yaml_to_json("t.yaml", "a: [1\n", 6, &j, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "invalid YAML") != NULL, "%s", err.text);
    cr_assert_eq(sluice_yaml_to_json("t.yaml", "", 0, &j, &err), SLUICE_OK);
    cr_expect(json_is_null(j));
    json_decref(j);
}

Test(yaml_json, round_trip_gives_the_same_value)
{
    const char *src = "{\"s\":\"plain\",\"q\":\"true\",\"n\":\"12\",\"e\":\"\",\"c\":\"a: b\","
                      "\"h\":\"# not a comment\",\"m\":\"one\\ntwo\\n\",\"f\":1.0,\"i\":-3,"
                      "\"b\":false,\"z\":null,\"dash\":\"- x\",\"sp\":\" lead\","
                      "\"u\":\"caf\\u00e9\",\"a\":[[],{},[1,{\"k\":\"~\"}]],\"0x1\":\"0o7\"}";
    json_t *in = json_loads(src, 0, NULL), *back = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *yaml = NULL;

    cr_assert_not_null(in);
    cr_assert_eq(sluice_json_to_yaml(in, &yaml, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_yaml_to_json("back", yaml, strlen(yaml), &back, &err), SLUICE_OK, "%s\n%s",
                 err.text, yaml);
    cr_expect(json_equal(in, back), "%s", yaml);
    /* strings that would read as another type are quoted, others not */
    cr_expect(strstr(yaml, "s: plain\n") != NULL, "%s", yaml);
    cr_expect(strstr(yaml, "q: 'true'") != NULL, "%s", yaml);
    free(yaml);
    json_decref(in);
    json_decref(back);
}
