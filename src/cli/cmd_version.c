/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_version.c - `sluice version` (and `sluice --version`): the version of
 * the command and of the library it runs on.
 *
 * Notes:
 * - The two differ only when the binary runs against another shared
 *   library than the one it was built with.
 * - Exit codes: 0 ok, 64 for any argument other than --help.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_version(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: sluice version\n\nPrint the version of sluice and its library.\n");
        return CLI_EX_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "sluice version: unexpected argument '%s'\n", argv[1]);
        return CLI_EX_USAGE;
    }
    printf("sluice %s (library %s)\n", SLUICE_VERSION_STRING, sluice_version());
    return CLI_EX_OK;
}
