/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - entry point of the `sluice` command: the global options, the
 * dispatch through the table (table.c) and `sluice help`.
 *
 * Notes:
 * - Exit codes follow sysexits(3) for every error (64 usage, 65 bad input,
 *   66 no input, 69 unavailable, 77 permission, 78 config); never 1.
 * - Each command parses its own options by its table entry (args.c); the
 *   helpers they share are in cli.c (see README.md).
 * - `help` and `__gendoc` read the whole table, so they are run from here
 *   rather than named by it.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "base/suggest.h"
#include "cli.h"
#include "gendoc.h"
#include "table.h"

/* `sluice help [COMMAND [SUBCOMMAND]]` */
static int run_help(const cli_spec_t *spec, int argc, char **argv)
{
    const cli_spec_t *found;
    cli_args_t a;
    int rc, used;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    if (a.n_operands == 0) {
        cli_help_top(cli_commands, stdout);
        return CLI_EX_OK;
    }
    found = cli_find(a.operands, a.n_operands, &used);
    if (found == NULL || used != a.n_operands || found->hidden) {
        fprintf(stderr, "sluice help: no command '%s%s%s'\n\n", a.operands[0],
                a.n_operands > 1 ? " " : "", a.n_operands > 1 ? a.operands[1] : "");
        cli_help_top(cli_commands, stderr);
        return CLI_EX_USAGE;
    }
    cli_help(found, stdout);
    return CLI_EX_OK;
}

/* The command of `list` (its last word; not the hidden __gendoc) that
 * `word` clearly misspells, or NULL. */
static const char *near_command(const cli_spec_t *const *list, const char *word)
{
    suggest_t sg;
    const char *leaf;

    suggest_init(&sg, word);
    for (size_t i = 0; list[i] != NULL; i++) {
        leaf = strrchr(list[i]->name, ' ');
        leaf = leaf ? leaf + 1 : list[i]->name;
        if (leaf[0] != '_')
            suggest_add(&sg, leaf);
    }
    return suggest_best(&sg);
}

/* A command that only has subcommands (token, config): its help, or a
 * usage error. */
static int run_group(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    int rc;

    if (argc > 1 && argv[1][0] != '-' && near_command(spec->subs, argv[1]) != NULL)
        return cli_usage_error(spec, "unknown command '%s' (did you mean %s?)", argv[1],
                               near_command(spec->subs, argv[1]));
    if (argc > 1 && argv[1][0] != '-')
        return cli_usage_error(spec, "unknown command '%s'", argv[1]);
    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    return cli_usage_error(spec, "a command is required");
}

int main(int argc, char **argv)
{
    static char version_word[] = "version";
    char *version_argv[] = {version_word, NULL};
    const cli_spec_t *spec;
    int used;

    if (cli_log_init() != CLI_EX_OK)
        return CLI_EX_USAGE;
    if (argc < 2) {
        cli_help_top(cli_commands, stderr);
        return CLI_EX_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        cli_help_top(cli_commands, stdout);
        return CLI_EX_OK;
    }
    if ((strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) && argc == 2) {
        spec = cli_find(version_argv, 1, &used);
        return spec->run(spec, 1, version_argv);
    }
    spec = cli_find(argv + 1, argc - 1, &used);
    if (spec == NULL) {
        const char *near = near_command(cli_commands, argv[1]);
        if (near != NULL)
            fprintf(stderr, "sluice: unknown command '%s' (did you mean %s?)\n", argv[1], near);
        else
            fprintf(stderr, "sluice: unknown command '%s'\n", argv[1]);
        fprintf(stderr, "Run 'sluice --help' for the commands.\n");
        return CLI_EX_USAGE;
    }
    /* the command sees its last word as argv[0] */
    argc -= used;
    argv += used;
    if (spec->run != NULL)
        return spec->run(spec, argc, argv);
    if (strcmp(spec->name, "help") == 0)
        return run_help(spec, argc, argv);
    if (strcmp(spec->name, "__gendoc") == 0)
        return cli_gendoc(spec, cli_commands, argc, argv);
    return run_group(spec, argc, argv);
}
