/* SPDX-License-Identifier: Apache-2.0 */
/* gendoc.c - the top-level help and `sluice __gendoc`, which writes the
 * completions (gendoc_comp.c) and the man pages (gendoc_man.c), all made
 * from the table (see gendoc.h).
 *
 * Notes:
 * - Hidden commands (`__gendoc`) are left out of all of them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "gendoc.h"
#include "gendoc_int.h"

void cli_help_top(const cli_spec_t *const *cmds, FILE *f)
{
    fprintf(f, "usage: sluice [--help] [-V|--version] <command> [<args>]\n"
               "\n"
               "Launch and supervise Slurm jobs through slurmrestd.\n"
               "\n"
               "commands:\n");
    for (size_t i = 0; cmds[i] != NULL; i++)
        if (!cmds[i]->hidden)
            fprintf(f, "  %-10s %s\n", cmds[i]->name, cmds[i]->summary);
    fprintf(f, "\nOptions and operands come in any order; --opt VALUE and --opt=VALUE are the\n"
               "same, and -- ends the options.  Run 'sluice help <command>' or\n"
               "'sluice <command> --help' for the options of a command.\n");
}

static int gen_script(const char *path,
                      void (*gen)(FILE *, const cli_spec_t *const *),
                      const cli_spec_t *const *cmds)
{
    FILE *f = path != NULL ? fopen(path, "w") : stdout;

    if (f == NULL) {
        fprintf(stderr, "sluice __gendoc: %s: %s\n", path, strerror(errno));
        return CLI_EX_IOERR;
    }
    gen(f, cmds);
    if (path != NULL && fclose(f) != 0) {
        fprintf(stderr, "sluice __gendoc: %s: %s\n", path, strerror(errno));
        return CLI_EX_IOERR;
    }
    return CLI_EX_OK;
}

int cli_gendoc(const cli_spec_t *spec, const cli_spec_t *const *cmds, int argc, char **argv)
{
    cli_args_t a;
    const char *what, *path;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    what = a.operands[0];
    path = a.n_operands > 1 ? a.operands[1] : NULL;
    if (strcmp(what, "bash") == 0)
        return gen_script(path, gendoc_bash, cmds);
    if (strcmp(what, "zsh") == 0)
        return gen_script(path, gendoc_zsh, cmds);
    if (strcmp(what, "man") == 0 && path != NULL)
        return gendoc_man(path, cmds);
    if (strcmp(what, "man5") == 0 && path != NULL)
        return gendoc_man5(path);
    return cli_usage_error(spec, "expected bash [FILE], zsh [FILE], man DIR or man5 DIR");
}
