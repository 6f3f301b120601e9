/* SPDX-License-Identifier: Apache-2.0 */
/* cli.c - the helpers every subcommand shares (cli.h): an error struct
 * printed and mapped to its sysexit, and the library's log routed to
 * stderr.
 *
 * Notes:
 * - Exit codes follow sysexits(3) (sluice_err_sysexit()); never 1.
 */
#include <stdio.h>

#include "cli.h"

static void stderr_sink(int level, const char *msg, void *arg)
{
    (void)arg;
    fprintf(stderr, "sluice: %s: %s\n", sluice_log_level_name(level), msg);
}

void cli_log_to_stderr(int level)
{
    sluice_log_set(stderr_sink, level, NULL);
}

int cli_fail(const sluice_error_t *err)
{
    fprintf(stderr, "sluice: %s\n", err->text[0] ? err->text : sluice_strerror(err->code));
    return sluice_err_sysexit(err->code);
}
