/* SPDX-License-Identifier: Apache-2.0 */
/* ci_guard.h - what a test may do only outside CI.  CI sets CI=true; there a
 * missing prerequisite is a failure and a golden file is never rewritten, so
 * that no check passes without the thing it checks.
 *
 * Notes:
 * - CI counts as set when it is non-empty and not "0" or "false" (any case).
 * - The functions that refuse end the test with cr_assert_fail(); the message
 *   names the variable and why it is refused.
 */
#ifndef SLUICE_TEST_CI_GUARD_H
#define SLUICE_TEST_CI_GUARD_H

#include <stdbool.h>

/* Whether the CI variable is set (see the notes). */
bool ci_guard_in_ci(void);

/* Whether UPDATE_GOLDEN asks to rewrite the golden files (non-empty and not
 * "0").  Under CI that request fails the test instead: a golden test that
 * rewrites what it compares against passes whatever the code does. */
bool ci_guard_update_golden(void);

/* A prerequisite of the test is missing (`what`, `why`): under CI the test
 * fails with that text, elsewhere it is skipped with it.  Does not return. */
void ci_guard_missing(const char *what, const char *why);

#endif /* SLUICE_TEST_CI_GUARD_H */
