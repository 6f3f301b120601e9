/* SPDX-License-Identifier: Apache-2.0 */
/* gendoc.h - what is made from the whole table of commands (table.c): the
 * top-level help, the bash and zsh completions and the man pages. */
#ifndef SLUICE_CLI_GENDOC_H
#define SLUICE_CLI_GENDOC_H

#include <stdio.h>

#include "table.h"

/* `sluice --help`: the usage line and every command that is not hidden. */
void cli_help_top(const cli_spec_t *const *cmds, FILE *f);

/* `sluice __gendoc bash|zsh [FILE] | man DIR`: write a completion script
 * to FILE (or stdout), or sluice.1 and one sluice-<command>.1 per command
 * and subcommand into DIR (it must exist).  The build runs it (CMakeLists.txt); the result is
 * installed to share/bash-completion/completions/sluice, share/zsh/vendor-completions/ _sluice and
 * share/man/man1.  Returns the exit code. */
int cli_gendoc(const cli_spec_t *spec, const cli_spec_t *const *cmds, int argc, char **argv);

#endif /* SLUICE_CLI_GENDOC_H */
