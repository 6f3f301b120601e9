/* SPDX-License-Identifier: Apache-2.0 */
/* test_hostlist.c - Slurm hostlist expressions to node names. */
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "base/hostlist.h"

static void expect_names(const char *expr, const char *joined)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *names = NULL, *n;
    char buf[512] = "";
    size_t i;

    cr_assert_eq(hostlist_expand(expr, 100, &names, &err), SLUICE_OK, "%s: %s", expr, err.text);
    json_array_foreach(names, i, n)
    {
        if (i > 0)
            strcat(buf, " ");
        strcat(buf, json_string_value(n));
    }
    cr_expect_str_eq(buf, joined, "%s", expr);
    json_decref(names);
}

Test(hostlist, expands)
{
    expect_names("tb1", "tb1");
    expect_names("node[1-2]", "node1 node2");
    expect_names("tb[1-3,5],gpu07", "tb1 tb2 tb3 tb5 gpu07");
    expect_names("n[01-03]", "n01 n02 n03");
    expect_names("n[8-10]", "n8 n9 n10");
    expect_names("a[1,009-010]b", "a1b a009b a010b");
    expect_names("x,y", "x y");
}

Test(hostlist, refuses_malformed_and_huge)
{
    static const char *const bad[] = {"", "n[1-", "n[3-1]", "n[a]", "[1-2]", "n[1]]", "n[1]x[2]",
                                      "a,", "n[1,]", "n[1-2-3]",
                                      /* a ']' before the group (found by fuzz_hostlist) */
                                      "n2][2]", "a]b[1-2]"};
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *names = NULL;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        sluice_err rc = hostlist_expand(bad[i], 100, &names, &err);
        if (bad[i][0] == '\0') {
            /* nothing to expand: an empty list */
            cr_expect_eq(rc, SLUICE_OK);
            cr_expect_eq(json_array_size(names), 0);
            json_decref(names);
            names = NULL;
            continue;
        }
        cr_expect_eq(rc, SLUICE_EINVAL, "'%s' accepted", bad[i]);
        cr_expect(strstr(err.text, bad[i]) != NULL, "%s", err.text);
    }
    cr_expect_eq(hostlist_expand("n[1-1000000]", 1024, &names, &err), SLUICE_ETOOBIG);
    cr_expect_eq(hostlist_expand("a,b,c", 2, &names, &err), SLUICE_ETOOBIG);
}

Test(hostlist, first_name_of_any_list)
{
    static const char *const cases[][2] = {
        {"tb[2-3]", "tb2"},  {"a,b", "a"},
        {"n[01-03]", "n01"}, {"tb[5,7-9]", "tb5"},
        {"gpu07", "gpu07"},  {"x[1-1000000]", "x1"},
        {"a[9]b,c", "a9b"},  {"None assigned", "None assigned"},
    };
    sluice_error_t err = SLUICE_ERROR_INIT;
    char host[64], tiny[3];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_expect_eq(hostlist_first(cases[i][0], host, sizeof(host), &err), SLUICE_OK, "%s: %s",
                     cases[i][0], err.text);
        cr_expect_str_eq(host, cases[i][1]);
    }
    /* the whole expression is checked, not only its first name */
    cr_expect_eq(hostlist_first("a,n[3-1]", host, sizeof(host), &err), SLUICE_EINVAL);
    cr_expect(strstr(err.text, "a,n[3-1]") != NULL, "%s", err.text);
    cr_expect_eq(hostlist_first("", host, sizeof(host), &err), SLUICE_EINVAL);
    cr_expect_eq(hostlist_first("node1", tiny, sizeof(tiny), &err), SLUICE_ETOOBIG);
}
