/* SPDX-License-Identifier: Apache-2.0 */
/* ci_guard.c - see ci_guard.h. */
#include "ci_guard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <criterion/criterion.h>

bool ci_guard_in_ci(void)
{
    const char *v = getenv("CI");

    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0;
}

bool ci_guard_update_golden(void)
{
    const char *u = getenv("UPDATE_GOLDEN");

    if (u == NULL || u[0] == '\0' || strcmp(u, "0") == 0)
        return false;
    if (ci_guard_in_ci())
        cr_assert_fail("UPDATE_GOLDEN=%s is set while CI=%s: golden files are never rewritten "
                       "in CI (a golden test that rewrites its expected files passes whatever "
                       "the code renders); unset UPDATE_GOLDEN",
                       u, getenv("CI"));
    return true;
}

void ci_guard_missing(const char *what, const char *why)
{
    if (ci_guard_in_ci())
        cr_assert_fail("%s: %s; CI=%s is set, where a missing prerequisite is a failure, "
                       "never a skip",
                       what, why, getenv("CI"));
    /* Criterion prints a skip's text only when verbose: CTest's
     * SKIP_REGULAR_EXPRESSION and the reader need it on stderr. */
    fprintf(stderr, "SKIP %s: %s (skipped outside CI; with CI=true this fails)\n", what, why);
    cr_skip_test("%s: %s (skipped outside CI; with CI=true this fails)", what, why);
}
