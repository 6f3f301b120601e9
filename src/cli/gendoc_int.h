/* SPDX-License-Identifier: Apache-2.0 */
/* gendoc_int.h - what gendoc.c, gendoc_comp.c and gendoc_man.c share: the
 * writers of the completions and man pages that `sluice __gendoc` runs
 * (gendoc.h).  Private to those three files.
 */
#ifndef SLUICE_CLI_GENDOC_INT_H
#define SLUICE_CLI_GENDOC_INT_H

#include <stdio.h>

#include "table.h"

/* The bash and zsh completion scripts of `cmds` into f. */
void gendoc_bash(FILE *f, const cli_spec_t *const *cmds);
void gendoc_zsh(FILE *f, const cli_spec_t *const *cmds);

/* sluice.1 and one page per command and subcommand of `cmds` into `dir`
 * (it must exist); 0 or the exit code (printed). */
int gendoc_man(const char *dir, const cli_spec_t *const *cmds);

/* sluice.yaml.5 into `dir` (it must exist), the page the site layer makes
 * from its field table (site/config_ref.h); 0 or the exit code (printed). */
int gendoc_man5(const char *dir);

#endif /* SLUICE_CLI_GENDOC_INT_H */
