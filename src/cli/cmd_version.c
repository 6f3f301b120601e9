/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_version.c - `sluice version` (and `sluice --version`): the version of
 * the command and of the library it runs on.
 *
 * Notes:
 * - The two differ only when the binary runs against another shared
 *   library than the one it was built with.
 * - -o json: {"version": the command's, "library": the library's}.
 * - Exit codes: 0 ok, 64 usage.
 */
#include <stdio.h>

#include "args.h"
#include "cli.h"
#include "print.h"

int cmd_version(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    json_t *j;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    if (!a.json) {
        printf("sluice %s (library %s)\n", SLUICE_VERSION_STRING, sluice_version());
        return CLI_EX_OK;
    }
    j = json_pack("{s:s s:s}", "version", SLUICE_VERSION_STRING, "library", sluice_version());
    rc = j != NULL && cli_print_json(j, 1) == 0 ? CLI_EX_OK : CLI_EX_SOFTWARE;
    json_decref(j);
    return rc;
}
