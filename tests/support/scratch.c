/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.c - the scratch directory of a test (scratch.h). */
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "scratch.h"

void scratch_make(char *dir, size_t size, const char *tag)
{
    snprintf(dir, size, "/tmp/sluice-%s-XXXXXX", tag);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp %s", dir);
}

void scratch_remove(const char *dir)
{
    char cmd[600];

    if (dir[0] == '\0' || getenv("KEEP_SCRATCH") != NULL)
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cr_log_warn("cleanup of %s failed", dir);
}
