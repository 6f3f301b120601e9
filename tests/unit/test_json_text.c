/* SPDX-License-Identifier: Apache-2.0 */
/* test_json_text.c - json_text_dump() (src/base/json_text.c) writes what
 * jansson's json_dumps() writes, byte for byte: hand-picked documents (every
 * escape, non-ASCII, empty containers, key order, reals) and 2,000 random
 * ones from a fixed seed, with every flag combination it writes itself; a
 * flag it does not write is handed to jansson. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <jansson.h>

#include "base/json_text.h"

static const size_t all_flags[] = {
    JSON_COMPACT,   JSON_COMPACT | JSON_SORT_KEYS,  0,
    JSON_SORT_KEYS, JSON_COMPACT | JSON_ENCODE_ANY, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY,
};

static void assert_same(const json_t *v, const char *what)
{
    for (size_t i = 0; i < sizeof(all_flags) / sizeof(all_flags[0]); i++) {
        char *a = json_dumps(v, all_flags[i]), *b = json_text_dump(v, all_flags[i]);

        if (a == NULL || b == NULL)
            cr_assert_eq(a == NULL, b == NULL, "%s, flags %zx: one of them is NULL", what,
                         all_flags[i]);
        else
            cr_assert_str_eq(b, a, "%s, flags %zx", what, all_flags[i]);
        free(a);
        free(b);
    }
}

Test(json_text, hand_picked_documents_are_written_as_jansson_writes_them)
{
    static const char *const docs[] = {
        "{}",
        "[]",
        "{\"b\": 1, \"a\": 2, \"ab\": 3, \"\": 4}",
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\\u007f\"]",
        "{\"caf\\u00e9\": \"\\u2028\\u2029 \\ud83d\\ude00 \\u00ff\"}",
        "[1, -1, 0, 9223372036854775807, -9223372036854775808]",
        "[1.5, -0.25, 1e300, 3.141592653589793, 100.0, 1e-7]",
        "[true, false, null, [[[]]], {\"x\": {\"y\": {}}}]",
        "{\"script\": \"#!/bin/bash\\nset -eu\\necho \\\"$HOME\\\" 'x' \\\\ done\\n\"}",
        "{\"z\": [{\"b\": 1, \"a\": [2, {\"d\": 3, \"c\": 4}]}], \"a\": null}",
    };

    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_error_t e;
        json_t *v = json_loads(docs[i], JSON_ALLOW_NUL, &e);

        cr_assert_not_null(v, "doc %zu: %s", i, e.text);
        assert_same(v, docs[i]);
        json_decref(v);
    }
}

Test(json_text, a_scalar_needs_encode_any_and_a_foreign_flag_goes_to_jansson)
{
    json_t *s = json_string("a\tb"), *o = json_pack("{s:[i,i]}", "k", 1, 2);
    char *t = json_text_dump(s, JSON_COMPACT), *a, *b;

    cr_assert_null(t, "a scalar without JSON_ENCODE_ANY is refused, as by jansson");
    t = json_text_dump(s, JSON_COMPACT | JSON_ENCODE_ANY);
    cr_assert_str_eq(t, "\"a\\tb\"");
    free(t);
    a = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    b = json_text_dump(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    cr_assert_str_eq(b, a);
    free(a);
    free(b);
    json_decref(s);
    json_decref(o);
}

/* ---- random documents ------------------------------------------------- */

static uint64_t seed = 0x5eed1234abcdULL;

static uint32_t next_rand(void)
{
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(seed >> 33);
}

static json_t *random_string(void)
{
    static const char *const pieces[] = {"a",
                                         "Z",
                                         "0",
                                         " ",
                                         "\"",
                                         "\\",
                                         "/",
                                         "\n",
                                         "\t",
                                         "\x01",
                                         "\x1f",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe2\x80\xa8",
                                         "\xf0\x9f\x98\x80",
                                         "key",
                                         "$HOME",
                                         "'"};
    char buf[256];
    size_t n = next_rand() % 12, len = 0;

    for (size_t i = 0; i < n; i++) {
        const char *p = pieces[next_rand() % (sizeof(pieces) / sizeof(pieces[0]))];
        size_t pl = strlen(p);

        if (len + pl >= sizeof(buf))
            break;
        memcpy(buf + len, p, pl);
        len += pl;
    }
    if (next_rand() % 16 == 0 && len + 1 < sizeof(buf))
        buf[len++] = '\0'; /* a NUL inside the string */
    return json_stringn(buf, len);
}

static json_t *random_value(int depth)
{
    uint32_t k = next_rand() % (depth > 4 ? 6 : 8);
    json_t *v;

    switch (k) {
    case 0:
        return json_integer((json_int_t)next_rand() - (json_int_t)(1U << 31));
    case 1:
        return json_real((double)(int32_t)next_rand() / 64.0);
    case 2:
        return json_true();
    case 3:
        return json_false();
    case 4:
        return json_null();
    case 5:
        return random_string();
    case 6:
        v = json_array();
        for (uint32_t i = next_rand() % 5; i > 0; i--)
            json_array_append_new(v, random_value(depth + 1));
        return v;
    default:
        v = json_object();
        for (uint32_t i = next_rand() % 5; i > 0; i--) {
            json_t *key = random_string();

            json_object_setn_new(v, json_string_value(key), json_string_length(key),
                                 random_value(depth + 1));
            json_decref(key);
        }
        return v;
    }
}

Test(json_text, random_documents_are_written_as_jansson_writes_them)
{
    for (int i = 0; i < 2000; i++) {
        json_t *v = json_array();
        char what[32];

        json_array_append_new(v, random_value(0));
        snprintf(what, sizeof(what), "random document %d", i);
        assert_same(v, what);
        json_decref(v);
    }
}
