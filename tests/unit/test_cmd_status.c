/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_status.c - `sluice status` through the real binary ($SLUICE_BIN)
 * against a store filled through the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/store.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("status");
}

TestSuite(cmd_status, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

Test(cmd_status, status_shows_the_event_log_and_unknown_is_69)
{
    cmd_add_launch("alpha");
    cr_assert_eq(cmd_sluice("status --state-dir '%s' alpha", cmd_dir), 0);
    cr_assert_not_null(strstr(cmd_output(), "accepted"));
    cr_assert_not_null(strstr(cmd_output(), "state      ACCEPTED"));
    cr_assert_eq(cmd_sluice("status --state-dir '%s' nope", cmd_dir), 69);
    cr_assert_not_null(strstr(cmd_output(), "not found"));
}

Test(cmd_status, usage_errors_are_64_and_help_is_0)
{
    cr_assert_eq(cmd_sluice("status"), 64);
    cr_assert_eq(cmd_sluice("status --help"), 0);
    cr_assert_not_null(strstr(cmd_output(), "usage: sluice status"));
}
