/* SPDX-License-Identifier: Apache-2.0 */
/* test_buf.c - the capped buffer. */
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "base/buf.h"

Test(buf, appends_and_terminates)
{
    buf_t b;

    buf_init(&b, 0);
    cr_assert_str_eq(buf_str(&b), "");
    cr_assert_eq(buf_puts(&b, "abc"), SLUICE_OK);
    cr_assert_eq(buf_printf(&b, "-%d-", 42), SLUICE_OK);
    cr_assert_eq(buf_append(&b, "xyz", 2), SLUICE_OK);
    cr_assert_str_eq(buf_str(&b), "abc-42-xy");
    cr_assert_eq(b.len, 9);
    buf_free(&b);
}

Test(buf, cap_refuses_and_keeps_content)
{
    buf_t b;

    buf_init(&b, 8);
    cr_assert_eq(buf_puts(&b, "12345678"), SLUICE_OK);
    cr_assert_eq(buf_puts(&b, "9"), SLUICE_ETOOBIG);
    cr_assert_eq(buf_printf(&b, "%s", "x"), SLUICE_ETOOBIG);
    cr_assert_str_eq(buf_str(&b), "12345678");
    cr_assert_leq(b.cap, 9);
    buf_free(&b);
}

Test(buf, grows_across_many_appends)
{
    buf_t b;
    int i;

    buf_init(&b, 0);
    for (i = 0; i < 10000; i++)
        cr_assert_eq(buf_puts(&b, "0123456789"), SLUICE_OK);
    cr_assert_eq(b.len, 100000);
    cr_assert_eq(strspn(buf_str(&b), "0123456789"), 100000);
    buf_free(&b);
}

Test(buf, take_hands_over_and_resets)
{
    buf_t b;
    char *s;

    buf_init(&b, 0);
    s = buf_take(&b);
    cr_assert_str_eq(s, "");
    free(s);
    cr_assert_eq(buf_puts(&b, "hello"), SLUICE_OK);
    s = buf_take(&b);
    cr_assert_str_eq(s, "hello");
    cr_assert_null(b.data);
    cr_assert_eq(b.len, 0);
    free(s);
    buf_reset(&b);
    buf_free(&b);
}
