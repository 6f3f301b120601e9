/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - the sluice command: the sysexit codes, the subcommand table entry
 * (main.c), the helpers every subcommand shares (cli.c) and the entry point
 * of each subcommand (cmd_<name>.c, one file per verb). */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stdio.h>

#include <sluice/ops.h>
#include <sluice/sluice.h>

/* sysexits(3) values used by every subcommand. */
enum {
    CLI_EX_OK = 0,
    CLI_EX_USAGE = 64,
    CLI_EX_DATAERR = 65,
    CLI_EX_UNAVAILABLE = 69,
    CLI_EX_SOFTWARE = 70,
    CLI_EX_IOERR = 74,
    CLI_EX_NOPERM = 77,
    CLI_EX_CONFIG = 78,
};

struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
};

/* Print "sluice: <message>" to stderr for an error struct and return the
 * sysexit that matches its code. */
int cli_fail(const sluice_error_t *err);

/* Route library log lines to stderr at `level` or more severe. */
void cli_log_to_stderr(int level);

int cmd_version(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_token(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_probe(int argc, char **argv);

#endif /* SLUICE_CLI_H */
