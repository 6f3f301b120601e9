/* SPDX-License-Identifier: Apache-2.0 */
/* store_opts.c - the option parsing and store opening shared by the commands
 * that read the store or append a request to it: `sluice status`, `sluice
 * ls` and `sluice cancel` (cmd_status.c, cmd_ls.c, cmd_cancel.c).
 *
 * Notes:
 * - The store is --state-dir, else $SLUICE_STATE_DIR, else the default
 *   (sluice_store_open()).
 * - Parsing stops at the first operand; options after it are the caller's
 *   to reject (its operand count check prints its usage).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "store_opts.h"

int cli_store_parse(int argc, char **argv, cli_store_opts_t *o, const char *usage_text, int *rc_out)
{
    int i, k;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            *rc_out = CLI_EX_OK;
            return -2;
        } else if (strcmp(argv[i], "--state-dir") == 0 && i + 1 < argc) {
            o->state_dir = argv[++i];
        } else if ((k = cli_remote_option(&o->remote, argc, argv, &i)) != 0) {
            if (k < 0) {
                *rc_out = CLI_EX_USAGE;
                return -1;
            }
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "json") == 0) {
                o->json = 1;
            } else if (strcmp(argv[i], "text") != 0) {
                fprintf(stderr, "sluice: -o: expected json or text, got '%s'\n", argv[i]);
                *rc_out = CLI_EX_USAGE;
                return -1;
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "sluice: unknown option '%s'\n\n", argv[i]);
            fputs(usage_text, stderr);
            *rc_out = CLI_EX_USAGE;
            return -1;
        } else {
            break;
        }
    }
    return i;
}

int cli_store_open(const cli_store_opts_t *o, sluice_store_t **out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (sluice_store_open(out, o->state_dir, &err) != SLUICE_OK)
        return cli_fail(&err);
    return CLI_EX_OK;
}
