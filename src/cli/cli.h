/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - the sluice command: the sysexit codes, the helpers every
 * subcommand shares (cli.c) and the entry point of each subcommand
 * (cmd_<name>.c, one file per verb), which the table (table.c) names. */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stdio.h>

#include <sluice/ops.h>
#include <sluice/sluice.h>

#include "table.h"

/* sysexits(3) values used by every subcommand. */
enum {
    CLI_EX_OK = 0,
    CLI_EX_USAGE = 64,
    CLI_EX_DATAERR = 65,
    CLI_EX_NOINPUT = 66,
    CLI_EX_UNAVAILABLE = 69,
    CLI_EX_SOFTWARE = 70,
    CLI_EX_CANTCREAT = 73,
    CLI_EX_IOERR = 74,
    CLI_EX_PROTOCOL = 76,
    CLI_EX_NOPERM = 77,
    CLI_EX_CONFIG = 78,
};

/* Print "sluice: <message>" to stderr for an error struct and return the
 * sysexit that matches its code. */
int cli_fail(const sluice_error_t *err);

/* The log lines on stderr (cli.c): level and format come from, strongest
 * first, --log-level / --log-format, SLUICE_LOG_LEVEL / SLUICE_LOG_FORMAT,
 * the site file's log.level / log.format, and the default (warning, text).
 * Each line carries an ISO-8601 UTC time, the level and the subsystem.
 *
 * cli_log_init() reads the environment at start: a bad value prints an
 * error naming the variable and returns CLI_EX_USAGE (else CLI_EX_OK).
 * cli_log_option() takes --log-level (level != 0) or --log-format (the
 * caller reports a bad value).
 * cli_log_site() applies a loaded site file's log keys where nothing
 * stronger set them (the values were checked when the file loaded). */
int cli_log_init(void);
int cli_log_option(int level, const char *value); /* 0, or -1: not a level/format */
void cli_log_site(const sluice_config_t *cfg);

/* The commands; `spec` is the command's entry in the table, argv[0] its
 * name.  Each returns its exit code. */
int cmd_version(const cli_spec_t *spec, int argc, char **argv);
int cmd_config_show(const cli_spec_t *spec, int argc, char **argv);
int cmd_config_reference(const cli_spec_t *spec, int argc, char **argv);
int cmd_config_init(const cli_spec_t *spec, int argc, char **argv);
int cmd_token_mint(const cli_spec_t *spec, int argc, char **argv);
int cmd_token_show(const cli_spec_t *spec, int argc, char **argv);
int cmd_token_check(const cli_spec_t *spec, int argc, char **argv);
int cmd_render(const cli_spec_t *spec, int argc, char **argv);
int cmd_status(const cli_spec_t *spec, int argc, char **argv);
int cmd_ls(const cli_spec_t *spec, int argc, char **argv);
int cmd_cancel(const cli_spec_t *spec, int argc, char **argv);
int cmd_check(const cli_spec_t *spec, int argc, char **argv);
int cmd_launch(const cli_spec_t *spec, int argc, char **argv);
int cmd_logs(const cli_spec_t *spec, int argc, char **argv);
int cmd_serve(const cli_spec_t *spec, int argc, char **argv);
int cmd_probe(const cli_spec_t *spec, int argc, char **argv);

#endif /* SLUICE_CLI_H */
