/* SPDX-License-Identifier: Apache-2.0 */
/* sluice_assert.h - a Criterion assertion for calls that return sluice_err:
 * on failure it names the call, the error code and the error's text. */
#ifndef SLUICE_TEST_SLUICE_ASSERT_H
#define SLUICE_TEST_SLUICE_ASSERT_H

#include <criterion/criterion.h>

#include <sluice/sluice.h>

#define cr_assert_sluice_ok(expr, errp)                                                            \
    do {                                                                                           \
        sluice_err rc_ = (expr);                                                                   \
        cr_assert_eq(rc_, SLUICE_OK, "%s: %s: %s", #expr, sluice_err_name(rc_), (errp)->text);     \
    } while (0)

#endif
