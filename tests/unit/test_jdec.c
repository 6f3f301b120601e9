/* SPDX-License-Identifier: Apache-2.0 */
/* test_jdec.c - the path-aware JSON decoder (src/base/jdec.h): every
 * getter, paths through nested objects and arrays, the cut of long paths
 * and keys, the three voices, lenient against strict, and the collector. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "base/jdec.h"
#include "sluice_assert.h"

static json_t *doc;
static jdec_t dec;
static jdec_cur_t root;
static sluice_error_t err;

/* A strict (or lenient) decoder in `voice` on `text`, its root named "". */
static void open_doc(const char *text, jdec_mode mode, jdec_voice voice, sluice_errlist_t *list)
{
    json_error_t jerr;

    json_decref(doc);
    doc = json_loads(text, JSON_ALLOW_NUL, &jerr);
    cr_assert_not_null(doc, "%s: %s", text, jerr.text);
    sluice_error_clear(&err);
    jdec_init(&dec, mode, voice,
              voice == JDEC_VOICE_EXPECT && mode == JDEC_LENIENT ? SLUICE_EPROTO : SLUICE_EINVAL,
              &err, list);
    jdec_root(&root, &dec, doc, "");
}

static void fini(void)
{
    json_decref(doc);
    doc = NULL;
}

TestSuite(jdec, .fini = fini, .timeout = 10);

/* The call fails with the decoder's code and exactly this text. */
#define cr_assert_fails(expr, want_)                                                               \
    do {                                                                                           \
        sluice_err rc_ = (expr);                                                                   \
        cr_assert_eq(rc_, dec.code, "%s: %s", #expr, sluice_err_name(rc_));                        \
        cr_assert_str_eq(err.text, (want_), "%s", #expr);                                          \
        sluice_error_clear(&err);                                                                  \
        dec.n_errors = 0;                                                                          \
    } while (0)

/* ---- paths --------------------------------------------------------------- */

Test(jdec, paths_name_nested_members_and_items)
{
    jdec_cur_t pools, pool, meta, plugin, jobs, job, res;
    uint64_t n = 0;
    const char *s = NULL;

    open_doc("{\"pools\":[{\"gpus_per_node\":1},{\"gpus_per_node\":\"8\"}],"
             "\"meta\":{\"plugin\":{\"name\":7}},"
             "\"jobs\":[{\"job_resources\":{\"nodes\":[]}}]}",
             JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    cr_assert_sluice_ok(jdec_array(&root, "pools", 0, &pools), &err);
    cr_assert_str_eq(pools.path, "pools");
    jdec_item(&pool, &pools, 0);
    cr_assert_sluice_ok(jdec_uint(&pool, "gpus_per_node", 0, 1, 8, &n), &err);
    cr_assert_eq(n, 1);
    jdec_item(&pool, &pools, 1);
    cr_assert_str_eq(pool.path, "pools[1]");
    cr_assert_fails(jdec_uint(&pool, "gpus_per_node", 0, 1, 8, &n),
                    "pools[1].gpus_per_node: expected an integer between 1 and 8, got \"8\" as a "
                    "string: drop the quotes");
    cr_assert_sluice_ok(jdec_object(&root, "meta", 0, &meta), &err);
    cr_assert_sluice_ok(jdec_object(&meta, "plugin", 0, &plugin), &err);
    cr_assert_fails(jdec_string(&plugin, "name", 0, SIZE_MAX, &s),
                    "meta.plugin.name: expected a string");
    cr_assert_sluice_ok(jdec_array(&root, "jobs", 0, &jobs), &err);
    jdec_item(&job, &jobs, 0);
    cr_assert_sluice_ok(jdec_object(&job, "job_resources", 0, &res), &err);
    cr_assert_fails(jdec_string(&res, "nodes", 0, SIZE_MAX, &s),
                    "jobs[0].job_resources.nodes: expected a string");
}

Test(jdec, a_named_root_prefixes_every_path)
{
    jdec_cur_t ctx;
    int64_t n = 0;

    open_doc("{\"attempt\":0}", JDEC_STRICT, JDEC_VOICE_LOG, NULL);
    jdec_root(&ctx, &dec, doc, "context");
    cr_assert_fails(jdec_int(&ctx, "attempt", 0, 1, 9, &n), "context.attempt: out of range [1, 9]");
    cr_assert_fails(jdec_fail(&ctx, NULL, "a reason of its own"), "context: a reason of its own");
    cr_assert_fails(jdec_fail(&root, NULL, "unnamed"), "unnamed");
}

Test(jdec, foreach_walks_every_item_and_nothing_else)
{
    jdec_cur_t a, item;
    size_t i, seen = 0;
    int64_t n = 0, sum = 0;

    open_doc("{\"a\":[1,2,3],\"o\":{\"x\":1}}", JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    cr_assert_sluice_ok(jdec_array(&root, "a", 0, &a), &err);
    JDEC_FOREACH(&a, i, item)
    {
        cr_assert_sluice_ok(jdec_int(&item, NULL, 0, 0, 9, &n), &err);
        sum += n;
        seen++;
    }
    cr_assert_eq(seen, 3);
    cr_assert_eq(sum, 6);
    cr_assert_str_eq(item.path, "a[2]");
    jdec_member(&a, &root, "o"); /* not an array: no items */
    seen = 0;
    JDEC_FOREACH(&a, i, item)
    seen++;
    cr_assert_eq(seen, 0);
    cr_assert_eq(jdec_len(&a), 0);
}

Test(jdec, peeks_read_what_is_there_and_never_fail)
{
    jdec_t view;
    jdec_cur_t v, jobs, job;

    open_doc("{\"s\":\"x\",\"n\":7,\"r\":2.9,\"big\":1e300,\"t\":true,\"f\":false,"
             "\"z\":null,\"o\":{},\"jobs\":[{\"state\":\"RUNNING\"}]}",
             JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    cr_assert_str_eq(jdec_peek_string_or(&root, "s", "-"), "x");
    cr_assert_str_eq(jdec_peek_string_or(&root, "n", "-"), "-");
    cr_assert_str_eq(jdec_peek_string_or(&root, "absent", "-"), "-");
    cr_assert_eq(jdec_peek_int(&root, "n", -1), 7);
    cr_assert_eq(jdec_peek_int(&root, "r", -1), -1, "strict: a real is no integer");
    cr_assert_eq(jdec_peek_int(&root, "s", -1), -1);
    cr_assert_eq(jdec_peek_int(&root, "z", -1), -1);
    cr_assert_eq(jdec_peek_int(&root, "o", -1), -1);
    cr_assert_eq(jdec_peek_int(&root, "absent", -1), -1);
    cr_assert(jdec_peek_true(&root, "t"));
    cr_assert_not(jdec_peek_true(&root, "f"));
    cr_assert_not(jdec_peek_true(&root, "s"));
    cr_assert_not(jdec_peek_true(&root, "absent"));
    cr_assert_eq(dec.n_errors, 0);
    cr_assert_str_eq(err.text, "");

    /* a view: lenient, no error kept anywhere */
    jdec_peek_root(&view, &v, doc);
    cr_assert_eq(view.mode, JDEC_LENIENT);
    cr_assert_null(view.err);
    cr_assert_eq(jdec_peek_int(&v, "n", -1), 7);
    cr_assert_eq(jdec_peek_int(&v, "r", -1), 2, "lenient: a real's integral part");
    cr_assert_eq(jdec_peek_int(&v, "big", -1), -1, "a real past int64 is no value");
    cr_assert_eq(jdec_peek_int(&v, "z", -1), -1);
    jdec_member(&jobs, &v, "jobs");
    jdec_item(&job, &jobs, 0);
    cr_assert_str_eq(jdec_peek_string_or(&job, "state", "?"), "RUNNING");
    jdec_item(&job, &jobs, 1);
    cr_assert_str_eq(jdec_peek_string_or(&job, "state", "?"), "?");
    cr_assert_eq(view.n_errors, 0);
}

Test(jdec, members_counts_an_object_and_nothing_else)
{
    jdec_cur_t o, a, absent;

    open_doc("{\"o\":{\"x\":1,\"y\":null},\"a\":[1,2],\"e\":{}}", JDEC_STRICT, JDEC_VOICE_REQUEST,
             NULL);
    jdec_member(&o, &root, "o");
    jdec_member(&a, &root, "a");
    jdec_member(&absent, &root, "absent");
    cr_assert_eq(jdec_members(&root), 3);
    cr_assert_eq(jdec_members(&o), 2, "a null member is a member");
    cr_assert_eq(jdec_members(&a), 0, "an array has items, not members");
    cr_assert_eq(jdec_members(&absent), 0);
    jdec_member(&o, &root, "e");
    cr_assert_eq(jdec_members(&o), 0);
}

Test(jdec, long_paths_end_in_dots_and_take_nothing_more)
{
    char key[200];
    jdec_cur_t a, b, c, d;

    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    open_doc("{}", JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    /* keys are cut to 68 bytes + "..." */
    jdec_member(&a, &root, key);
    cr_assert_eq(a.len, JDEC_KEY_ECHO - 1);
    cr_assert_eq(strncmp(a.path + JDEC_KEY_ECHO - 4, "...", 3), 0);
    jdec_member(&b, &a, key);
    jdec_member(&c, &b, key);
    jdec_member(&a, &c, key);
    jdec_member(&d, &a, key); /* 5 keys of 71 bytes and 4 dots: past the cap */
    cr_assert(d.cut);
    cr_assert_eq(d.len, JDEC_PATH_MAX - 1);
    cr_assert_eq(strlen(d.path), JDEC_PATH_MAX - 1);
    cr_assert_str_eq(d.path + JDEC_PATH_MAX - 4, "...");
    jdec_item(&a, &d, 3);
    cr_assert_str_eq(a.path, d.path);
    {
        char want[JDEC_PATH_MAX + 8];
        snprintf(want, sizeof(want), "%s: deep", d.path);
        cr_assert_fails(jdec_fail(&d, "more", "deep"), want);
    }
    /* a root path is cut the same way */
    memset(key, 'r', sizeof(key) - 1);
    jdec_root(&a, &dec, doc, key);
    cr_assert_eq(a.len, sizeof(key) - 1);
    jdec_root(&a, &dec, doc, NULL);
    cr_assert_str_eq(a.path, "");
}

Test(jdec, the_error_names_a_cut_path)
{
    char key[400], want[JDEC_PATH_MAX + 16];
    jdec_cur_t deep;

    memset(key, 'x', 330);
    key[330] = '\0';
    open_doc("{}", JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    jdec_root(&deep, &dec, doc, key);
    snprintf(want, sizeof(want), "%.*s...: required", JDEC_PATH_MAX - 4, key);
    cr_assert_fails(jdec_bool(&deep, "flag", JDEC_REQUIRED, &(bool){false}), want);
}

Test(jdec, keys_from_the_document_cannot_forge_lines)
{
    open_doc("{\"a\\nb\\u0001\":1}", JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    cr_assert_fails(jdec_keys(&root, (const char *const[]){"x", NULL}), "a?b?: unknown field");
}

/* ---- getters ------------------------------------------------------------- */

Test(jdec, strings_check_type_nul_length_and_emptiness)
{
    const char *s = NULL;
    char *copy = NULL;

    open_doc("{\"s\":\"abc\",\"n\":1,\"z\":\"a\\u0000b\",\"e\":\"\",\"null\":null}", JDEC_STRICT,
             JDEC_VOICE_REQUEST, NULL);
    cr_assert_sluice_ok(jdec_string(&root, "s", 0, 3, &s), &err);
    cr_assert_str_eq(s, "abc");
    cr_assert_eq(s, json_string_value(json_object_get(doc, "s")), "borrowed");
    cr_assert_fails(jdec_string(&root, "s", 0, 2, &s), "s: longer than 2 bytes");
    cr_assert_fails(jdec_string(&root, "n", 0, 9, &s), "n: expected a string");
    cr_assert_fails(jdec_string(&root, "z", 0, 9, &s), "z: contains a NUL byte");
    cr_assert_fails(jdec_string(&root, "e", JDEC_NONEMPTY, 9, &s), "e: must not be empty");
    cr_assert_sluice_ok(jdec_string(&root, "e", 0, 9, &s), &err);
    cr_assert_str_eq(s, "");
    cr_assert_fails(jdec_string(&root, "null", 0, 9, &s), "null: expected a string");
    s = "default";
    cr_assert_sluice_ok(jdec_string(&root, "null", JDEC_NULLABLE, 9, &s), &err);
    cr_assert_sluice_ok(jdec_string(&root, "absent", 0, 9, &s), &err);
    cr_assert_str_eq(s, "default", "an absent member leaves *out");
    cr_assert_fails(jdec_string(&root, "absent", JDEC_REQUIRED, 9, &s), "absent: required");
    cr_assert_sluice_ok(jdec_string(&root, "n", JDEC_SOFT, 9, &s), &err);
    cr_assert_str_eq(s, "default", "another type is absent under JDEC_SOFT");
    cr_assert_sluice_ok(jdec_strdup(&root, "s", 0, SIZE_MAX, &copy), &err);
    cr_assert_str_eq(copy, "abc");
    cr_assert_neq(copy, json_string_value(json_object_get(doc, "s")), "a copy");
    free(copy);
    cr_assert_eq(jdec_peek_string(&root, "s"), json_string_value(json_object_get(doc, "s")));
    cr_assert_null(jdec_peek_string(&root, "n"));
    cr_assert_null(jdec_peek_string(&root, "absent"));
}

Test(jdec, integers_check_type_and_range_in_each_voice)
{
    static const struct {
        jdec_voice voice;
        const char *type, *range, *open;
    } rows[] = {
        {JDEC_VOICE_REQUEST,
         "i: expected an integer between 1 and 9, got \"5\" as a string: drop the quotes",
         "big: expected an integer between 1 and 9 (got 12)",
         "neg: expected an integer >= 0 (got -3)"},
        {JDEC_VOICE_EXPECT, "i: expected an integer in 1..9", "big: expected an integer in 1..9",
         "neg: expected an integer in 0..18446744073709551615"},
        {JDEC_VOICE_LOG, "i: must be an integer", "big: out of range [1, 9]",
         "neg: out of range [0, 18446744073709551615]"},
    };

    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        int64_t n = 0;
        uint64_t u = 0;

        open_doc("{\"i\":\"5\",\"big\":12,\"neg\":-3,\"ok\":7,\"real\":7.5}", JDEC_STRICT,
                 rows[r].voice, NULL);
        cr_assert_sluice_ok(jdec_int(&root, "ok", 0, 1, 9, &n), &err);
        cr_assert_eq(n, 7);
        cr_assert_sluice_ok(jdec_uint(&root, "ok", 0, 7, 7, &u), &err);
        cr_assert_eq(u, 7);
        cr_assert_fails(jdec_int(&root, "i", 0, 1, 9, &n), rows[r].type);
        cr_assert_fails(jdec_uint(&root, "i", 0, 1, 9, &u), rows[r].type);
        cr_assert_fails(jdec_int(&root, "big", 0, 1, 9, &n), rows[r].range);
        cr_assert_fails(jdec_uint(&root, "big", 0, 1, 9, &u), rows[r].range);
        cr_assert_fails(jdec_uint(&root, "neg", 0, 0, UINT64_MAX, &u), rows[r].open);
        cr_assert_neq(jdec_int(&root, "real", 0, 0, 9, &n), SLUICE_OK, "a real is no integer");
        sluice_error_clear(&err);
        dec.n_errors = 0;
        n = 42;
        cr_assert_sluice_ok(jdec_int(&root, "absent", 0, 1, 9, &n), &err);
        cr_assert_eq(n, 42);
    }
    open_doc("{\"neg\":-3}", JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    {
        int64_t n = 0;
        cr_assert_sluice_ok(jdec_int(&root, "neg", 0, INT64_MIN, INT64_MAX, &n), &err);
        cr_assert_eq(n, -3);
        cr_assert_fails(jdec_int(&root, "neg", 0, 0, INT64_MAX, &n),
                        "neg: expected an integer >= 0 (got -3)");
    }
}

Test(jdec, booleans_numbers_objects_and_arrays)
{
    bool b = false;
    double d = 0;
    jdec_cur_t o;

    open_doc("{\"t\":true,\"f\":false,\"s\":\"x\",\"i\":3,\"r\":2.5,\"o\":{},\"a\":[]}",
             JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    cr_assert_sluice_ok(jdec_bool(&root, "t", 0, &b), &err);
    cr_assert(b);
    cr_assert_sluice_ok(jdec_bool(&root, "f", 0, &b), &err);
    cr_assert_not(b);
    cr_assert_fails(jdec_bool(&root, "s", 0, &b), "s: expected true or false");
    cr_assert_sluice_ok(jdec_number(&root, "i", 0, &d), &err);
    cr_assert_float_eq(d, 3.0, 1e-9);
    cr_assert_sluice_ok(jdec_number(&root, "r", 0, &d), &err);
    cr_assert_float_eq(d, 2.5, 1e-9);
    cr_assert_fails(jdec_number(&root, "s", 0, &d), "s: expected a number");
    cr_assert_sluice_ok(jdec_object(&root, "o", 0, &o), &err);
    cr_assert_eq(o.v, json_object_get(doc, "o"));
    cr_assert_fails(jdec_object(&root, "a", 0, &o), "a: expected an object");
    cr_assert_null(o.v, "a refused object reads as absent");
    cr_assert_str_eq(o.path, "a");
    cr_assert_sluice_ok(jdec_array(&root, "a", 0, &o), &err);
    cr_assert_fails(jdec_array(&root, "o", 0, &o), "o: expected an array");
    cr_assert_sluice_ok(jdec_object(&root, "absent", 0, &o), &err);
    cr_assert_null(o.v);
    cr_assert_str_eq(o.path, "absent");
    cr_assert_fails(jdec_object(&root, "absent", JDEC_REQUIRED, &o), "absent: required");
    cr_assert_sluice_ok(jdec_array(&root, "o", JDEC_SOFT, &o), &err);
    cr_assert_null(o.v);
    cr_assert_sluice_ok(jdec_object(&root, NULL, 0, &o), &err);
    cr_assert_str_eq(o.path, "");
}

Test(jdec, the_log_voice_words_every_getter)
{
    bool b;
    double d;
    const char *s;
    jdec_cur_t o;

    open_doc("{\"x\":[],\"long\":\"abcdef\",\"nul\":\"a\\u0000\"}", JDEC_STRICT, JDEC_VOICE_LOG,
             NULL);
    cr_assert_fails(jdec_bool(&root, "x", 0, &b), "x: must be a boolean");
    cr_assert_fails(jdec_number(&root, "x", 0, &d), "x: must be a number");
    cr_assert_fails(jdec_string(&root, "x", 0, 9, &s), "x: must be a string");
    cr_assert_fails(jdec_object(&root, "x", 0, &o), "x: must be an object");
    cr_assert_fails(jdec_array(&root, "long", 0, &o), "long: must be an array");
    cr_assert_fails(jdec_string(&root, "long", 0, 3, &s), "long: longer than 3 bytes or has NUL");
    cr_assert_fails(jdec_string(&root, "nul", 0, 3, &s), "nul: longer than 3 bytes or has NUL");
    cr_assert_fails(jdec_string(&root, "nul", 0, SIZE_MAX, &s), "nul: has NUL");
    cr_assert_fails(jdec_keys(&root, (const char *const[]){"x", "long", NULL}),
                    "nul: unknown field");
}

Test(jdec, enums_take_a_name_from_the_table)
{
    static const char *const names[] = {"FOUND", "NOT_FOUND", "UNAVAILABLE"};
    int i = -1;

    open_doc("{\"a\":\"NOT_FOUND\",\"b\":\"found\",\"c\":1}", JDEC_STRICT, JDEC_VOICE_LOG, NULL);
    cr_assert_sluice_ok(jdec_enum(&root, "a", 0, names, 3, &i), &err);
    cr_assert_eq(i, 1);
    cr_assert_fails(jdec_enum(&root, "b", 0, names, 3, &i), "b: FOUND, NOT_FOUND or UNAVAILABLE");
    cr_assert_fails(jdec_enum(&root, "c", 0, names, 3, &i), "c: must be a string");
    open_doc("{\"mode\":\"rx\"}", JDEC_STRICT, JDEC_VOICE_REQUEST, NULL);
    cr_assert_fails(jdec_enum(&root, "mode", 0, (const char *const[]){"ro", "rw"}, 2, &i),
                    "mode: expected \"ro\" or \"rw\"");
    cr_assert_fails(jdec_enum(&root, "mode", 0, (const char *const[]){"only"}, 1, &i),
                    "mode: expected \"only\"");
}

Test(jdec, keys_refuse_unknown_members_when_strict)
{
    static const char *const allowed[] = {"a", "b", NULL};

    open_doc("{\"a\":1,\"b\":2}", JDEC_STRICT, JDEC_VOICE_EXPECT, NULL);
    cr_assert_sluice_ok(jdec_keys(&root, allowed), &err);
    cr_assert_null(jdec_unknown_key(&root, allowed));
    open_doc("{\"a\":1,\"zz\":2,\"yy\":3}", JDEC_STRICT, JDEC_VOICE_EXPECT, NULL);
    cr_assert_str_eq(jdec_unknown_key(&root, allowed), "zz");
    cr_assert_fails(jdec_keys(&root, allowed), "zz: unknown key");
    open_doc("{\"a\":1,\"zz\":2}", JDEC_LENIENT, JDEC_VOICE_EXPECT, NULL);
    cr_assert_sluice_ok(jdec_keys(&root, allowed), &err);
}

Test(jdec, silent_getters_leave_the_words_to_the_caller)
{
    double t = 0;

    open_doc("{\"time\":\"x\"}", JDEC_STRICT, JDEC_VOICE_LOG, NULL);
    cr_assert_eq(jdec_number(&root, "time", JDEC_REQUIRED | JDEC_SILENT, &t), SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "");
    cr_assert_eq(dec.n_errors, 0);
    cr_assert_eq(jdec_number(&root, "none", JDEC_REQUIRED | JDEC_SILENT, &t), SLUICE_EINVAL);
    cr_assert_fails(jdec_fail(&root, "time", "required number"), "time: required number");
}

/* ---- lenient against strict ---------------------------------------------- */

Test(jdec, lenient_reads_null_as_absent_and_reals_as_integers)
{
    static const char *const text = "{\"n\":null,\"r\":7.9,\"huge\":1e300,\"z\":\"ab\\u0000cd\","
                                    "\"o\":null,\"x\":1}";
    const char *s = "default";
    int64_t n = 42;
    jdec_cur_t o;

    open_doc(text, JDEC_LENIENT, JDEC_VOICE_EXPECT, NULL);
    cr_assert_eq(dec.code, SLUICE_EPROTO);
    cr_assert_sluice_ok(jdec_string(&root, "n", 0, SIZE_MAX, &s), &err);
    cr_assert_str_eq(s, "default");
    cr_assert_not(jdec_present(&root, "n"));
    cr_assert(jdec_present(&root, "x"));
    cr_assert_sluice_ok(jdec_int(&root, "r", 0, INT64_MIN, INT64_MAX, &n), &err);
    cr_assert_eq(n, 7);
    n = 42;
    cr_assert_sluice_ok(jdec_int(&root, "n", 0, INT64_MIN, INT64_MAX, &n), &err);
    cr_assert_eq(n, 42);
    cr_assert_sluice_ok(jdec_int(&root, "huge", 0, INT64_MIN, INT64_MAX, &n), &err);
    cr_assert_eq(n, 42, "a real past int64 is absent");
    cr_assert_sluice_ok(jdec_string(&root, "z", 0, SIZE_MAX, &s), &err);
    cr_assert_str_eq(s, "ab", "read up to the NUL");
    cr_assert_sluice_ok(jdec_object(&root, "o", 0, &o), &err);
    cr_assert_null(o.v);
    cr_assert_fails(jdec_string(&root, "x", 0, SIZE_MAX, &s), "x: expected a string");
    cr_assert_fails(jdec_string(&root, "n", JDEC_REQUIRED, SIZE_MAX, &s), "n: required");

    open_doc(text, JDEC_STRICT, JDEC_VOICE_EXPECT, NULL);
    cr_assert(jdec_present(&root, "n"));
    cr_assert_fails(jdec_string(&root, "n", 0, SIZE_MAX, &s), "n: expected a string");
    cr_assert_fails(jdec_int(&root, "r", 0, 0, 9, &n), "r: expected an integer in 0..9");
    cr_assert_fails(jdec_string(&root, "z", 0, SIZE_MAX, &s), "z: contains a NUL byte");
    cr_assert_fails(jdec_object(&root, "o", 0, &o), "o: expected an object");
}

/* ---- the collector ------------------------------------------------------- */

Test(jdec, with_a_list_every_error_is_noted_and_the_first_kept)
{
    sluice_errlist_t list = SLUICE_ERRLIST_INIT;
    jdec_cur_t pools, pool;
    const char *s;
    uint64_t n;
    size_t i;

    open_doc(
        "{\"pools\":[{\"name\":1,\"nodes\":0},{\"name\":\"b\",\"nodes\":\"2\"}],\"x\":1,\"y\":2}",
        JDEC_STRICT, JDEC_VOICE_REQUEST, &list);
    cr_assert_eq(jdec_keys(&root, (const char *const[]){"pools", NULL}), SLUICE_EINVAL);
    cr_assert_sluice_ok(jdec_array(&root, "pools", 0, &pools), &err);
    JDEC_FOREACH(&pools, i, pool)
    {
        sluice_err rc = jdec_string(&pool, "name", 0, 32, &s);
        cr_assert_not(jdec_fatal(&dec, rc));
        rc = jdec_uint(&pool, "nodes", 0, 1, 64, &n);
        cr_assert_not(jdec_fatal(&dec, rc));
    }
    cr_assert_eq(dec.n_errors, 5);
    cr_assert_eq(list.n, 5);
    cr_assert_str_eq(err.text, "x: unknown field");
    cr_assert_str_eq(list.items[1].path, "y");
    cr_assert_str_eq(list.items[2].path, "pools[0].name");
    cr_assert_str_eq(list.items[2].reason, "expected a string");
    cr_assert_str_eq(list.items[3].reason, "expected an integer between 1 and 64 (got 0)");
    cr_assert_str_eq(list.items[4].path, "pools[1].nodes");
    cr_assert_eq(jdec_note(&dec, "a.b", "noted by %s", "text"), SLUICE_EINVAL);
    cr_assert_str_eq(list.items[5].reason, "noted by text");
    cr_assert_not(jdec_fatal(&dec, SLUICE_EINVAL));
    cr_assert(jdec_fatal(&dec, SLUICE_ESTORE));
    cr_assert_eq(jdec_oom(&dec, "pools[1]"), SLUICE_ENOMEM);
    cr_assert(jdec_fatal(&dec, SLUICE_OK));
    cr_assert_str_eq(err.text, "pools[1]: out of memory");
    sluice_errlist_clear(&list);
}

Test(jdec, members_are_walked_in_document_order)
{
    jdec_cur_t env, item;
    const char *key;
    void *it;
    char seen[64] = "";

    open_doc("{\"env\":{\"B\":\"1\",\"A\":2,\"C\\u0007\":\"3\"},\"s\":\"x\"}", JDEC_STRICT,
             JDEC_VOICE_REQUEST, NULL);
    cr_assert_sluice_ok(jdec_object(&root, "env", 0, &env), &err);
    JDEC_FOREACH_MEMBER(&env, it, key, item)
    {
        const char *s = NULL;

        strcat(seen, key);
        if (jdec_string(&item, NULL, 0, SIZE_MAX, &s) != SLUICE_OK)
            strcat(seen, "!");
    }
    cr_assert_str_eq(seen, "BA!C\a");
    cr_assert_str_eq(err.text, "env.A: expected a string");
    cr_assert_str_eq(item.path, "env.C?", "the key in the path is shown safely");
    jdec_member(&env, &root, "s");
    cr_assert_null(jdec_iter(&env), "no members but an object's");
}
