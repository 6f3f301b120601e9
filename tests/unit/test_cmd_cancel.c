/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_cancel.c - `sluice cancel` through the real binary ($SLUICE_BIN)
 * against a store filled through the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/store.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("cancel");
}

TestSuite(cmd_cancel, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

Test(cmd_cancel, cancel_appends_a_request_with_the_caller)
{
    cmd_add_launch("alpha");
    cr_assert_eq(cmd_sluice("cancel --state-dir '%s' alpha", cmd_dir), 0);
    cr_assert_eq(cmd_sluice("status --state-dir '%s' -o json alpha", cmd_dir), 0);
    cr_assert_not_null(strstr(cmd_output(), "cancel-asked"));
    cr_assert_not_null(strstr(cmd_output(), "cli:"));
    /* asked once, however often: a second cancel adds no event */
    cr_assert_eq(cmd_sluice("cancel --state-dir '%s' alpha", cmd_dir), 0);
    cr_assert_eq(cmd_sluice("status --state-dir '%s' -o json alpha", cmd_dir), 0);
    cr_assert_null(strstr(strstr(cmd_output(), "cancel-asked") + 1, "cancel-asked"));
}

Test(cmd_cancel, usage_errors_are_64_and_help_is_0)
{
    cr_assert_eq(cmd_sluice("cancel a b"), 64);
    cr_assert_eq(cmd_sluice("cancel --help"), 0);
}
