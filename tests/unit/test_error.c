/* SPDX-License-Identifier: Apache-2.0 */
/* test_error.c - error codes, names, sysexits and sluice_errorf(). */
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/error.h>

Test(error, errorf_returns_its_code_and_fills_text)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_errorf(&err, SLUICE_EINVAL, "pools[%d].nodes: must be >= 1", 2),
                 SLUICE_EINVAL);
    cr_assert_eq(err.code, SLUICE_EINVAL);
    cr_assert_str_eq(err.text, "pools[2].nodes: must be >= 1");
}

Test(error, errorf_accepts_null_error)
{
    cr_assert_eq(sluice_errorf(NULL, SLUICE_EAUTH, "x"), SLUICE_EAUTH);
}

Test(error, long_text_is_truncated_with_ellipsis)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char big[2000];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    sluice_errorf(&err, SLUICE_EINVAL, "%s", big);
    cr_assert_eq(strlen(err.text), sizeof(err.text) - 1);
    cr_assert_str_eq(err.text + sizeof(err.text) - 4, "...");
}

Test(error, prefix_keeps_code)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    sluice_errorf(&err, SLUICE_ECONFIG, "expected a mapping");
    cr_assert_eq(sluice_error_prefix(&err, "%s:%d", "site.yaml", 3), SLUICE_ECONFIG);
    cr_assert_str_eq(err.text, "site.yaml:3: expected a mapping");
}

Test(error, every_code_has_a_name_description_and_sysexit)
{
    int c;

    for (c = 0; c < SLUICE_ERR_COUNT_; c++) {
        cr_assert_neq(strcmp(sluice_err_name((sluice_err)c), "UNKNOWN"), 0);
        cr_assert_gt(strlen(sluice_strerror((sluice_err)c)), 0);
        if (c == SLUICE_OK)
            cr_assert_eq(sluice_err_sysexit((sluice_err)c), 0);
        else
            cr_assert(sluice_err_sysexit((sluice_err)c) >= 64 &&
                          sluice_err_sysexit((sluice_err)c) <= 78,
                      "%s exits %d, not a sysexits value", sluice_err_name((sluice_err)c),
                      sluice_err_sysexit((sluice_err)c));
    }
    cr_assert_str_eq(sluice_err_name((sluice_err)999), "UNKNOWN");
    cr_assert_str_eq(sluice_err_name(SLUICE_EAUTH), "EAUTH");
    cr_assert_eq(sluice_err_sysexit(SLUICE_ECONFIG), 78);
    cr_assert_eq(sluice_err_sysexit(SLUICE_EAUTH), 77);
    cr_assert_eq(sluice_err_sysexit(SLUICE_EINVAL), 65);
}

Test(error, clear_resets)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    sluice_errorf(&err, SLUICE_EIO, "x");
    err.http_status = 500;
    sluice_error_clear(&err);
    cr_assert_eq(err.code, SLUICE_OK);
    cr_assert_eq(err.http_status, 0);
    cr_assert_str_eq(err.text, "");
    sluice_error_clear(NULL);
}
