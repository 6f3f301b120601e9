/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_ls.c - `sluice ls` through the real binary ($SLUICE_BIN)
 * against a store filled through the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/store.h>

#include "cmd_case.h"

static void setup(void)
{
    cmd_case_setup("ls");
}

TestSuite(cmd_ls, .init = setup, .fini = cmd_case_teardown, .timeout = 60);

Test(cmd_ls, ls_lists_launches_in_text_and_json)
{
    cmd_add_launch("alpha");
    cmd_add_launch("beta");
    cr_assert_eq(cmd_sluice("ls --state-dir '%s'", cmd_dir), 0);
    cr_assert_not_null(strstr(cmd_output(), "alpha"));
    cr_assert_not_null(strstr(cmd_output(), "ACCEPTED"));
    cr_assert_eq(cmd_sluice("ls --state-dir '%s' -o json --limit 1", cmd_dir), 0);
    cr_assert_not_null(strstr(cmd_output(), "\"next_cursor\""));
    cr_assert_not_null(strstr(cmd_output(), "alpha"));
    cr_assert_null(strstr(cmd_output(), "beta"));
    cr_assert_eq(cmd_sluice("ls --state-dir '%s' --terminal", cmd_dir), 0);
    cr_assert_null(strstr(cmd_output(), "alpha"));
}

Test(cmd_ls, usage_errors_are_64_and_help_is_0)
{
    cr_assert_eq(cmd_sluice("ls --bogus"), 64);
    cr_assert_eq(cmd_sluice("ls --limit 0"), 64);
    cr_assert_eq(cmd_sluice("ls --help"), 0);
}
