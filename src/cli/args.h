/* SPDX-License-Identifier: Apache-2.0 */
/* args.h - the command line of every `sluice` command, parsed by its entry
 * in the table (table.h) with getopt_long, and the help made from it.
 *
 * Notes:
 * - GNU conventions: options and operands in any order, `--opt value` and
 *   `--opt=value`, `-o json` and `-ojson`, unambiguous abbreviations of long
 *   options, `--` ends the options.  The order does not depend on
 *   $POSIXLY_CORRECT.
 * - A usage error prints "sluice <command>: <what>" naming the option or the
 *   argument, then one line pointing to the command's --help (not the help
 *   itself), to stderr, and is exit 64.
 * - An input file named by an option or an operand (CLI_VAL_INFILE) that
 *   does not exist is exit 66 (EX_NOINPUT), before anything else is done
 *   but after the whole line has been found well-formed (a usage error
 *   wins).
 */
#ifndef SLUICE_CLI_ARGS_H
#define SLUICE_CLI_ARGS_H

#include <stdio.h>

#include "prepare.h"
#include "remote.h"
#include "table.h"

#define CLI_MAX_OPERANDS 4
#define CLI_MAX_INPUTS 8

/* What the parser fills in: the options shared by several commands, and
 * the operands in their order.  Borrows from argv. */
typedef struct {
    const char *state_dir;    /* --state-dir; NULL: $SLUICE_STATE_DIR or the default */
    int json;                 /* -o json */
    cli_remote_opts_t remote; /* --server, --api-token-file, --api-ca */
    cli_prepare_opts_t site;  /* --config, --set, --study-runtime (not request_path) */
    char *operands[CLI_MAX_OPERANDS];
    int n_operands;
    struct {
        const char *what; /* the option's name, NULL: the operand */
        const char *path;
    } inputs[CLI_MAX_INPUTS]; /* checked once the whole line parsed */
    int n_inputs;
} cli_args_t;

/* A command's own option (one that is not shared): `value` is NULL for a
 * flag.  Returns 0, or CLI_EX_USAGE after printing what is wrong with the
 * value ("sluice ls: --limit: expected 1 to 1000, got '0'"); the parser
 * then points to --help (cli_usage_hint()). */
typedef int (*cli_own_fn)(int id, const char *value, void *arg);

/* Parse argv (argv[0] is the command's name) by `spec` into *a (zeroed
 * first).  Returns 1 when the command should run; 0 when it is over, with
 * *rc: 0 after --help (printed to stdout), 64 after a usage error, 66 for a
 * missing input file (both printed to stderr).  `own` may be NULL when the
 * command has no options of its own. */
int cli_parse(const cli_spec_t *spec,
              int argc,
              char **argv,
              cli_args_t *a,
              cli_own_fn own,
              void *arg,
              int *rc);

/* The help of `spec`: usage lines, description, options, subcommands,
 * exit status. */
void cli_help(const cli_spec_t *spec, FILE *f);

/* Print "sluice <command>: <message>" and the line of cli_usage_hint() to
 * stderr; returns CLI_EX_USAGE. */
int cli_usage_error(const cli_spec_t *spec, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "Run 'sluice <command> --help' for its usage and options." to stderr:
 * what follows every usage error instead of the whole help. */
void cli_usage_hint(const cli_spec_t *spec);

/* A time span given by `what` (a flag, "--timeout", or a variable,
 * "SLUICE_HEARTBEAT_S") in the site file's duration syntax, parsed by the
 * one parser of it (base/syntax.h, syntax_duration()): a bare number is
 * seconds ("90"), or a number with s, m, h or d ("30s", "5m", "2h", "1d").
 * It must lie from `min` to `max` seconds.  Returns 0 with *seconds set;
 * otherwise prints "sluice <cmd>: <what>: <reason>; got '<text>'" to
 * stderr and returns CLI_EX_USAGE (the caller adds the hint, if any). */
int cli_duration(
    const char *cmd, const char *what, const char *text, long min, long max, long *seconds);

/* 0 when `path` exists; otherwise prints "sluice <command>: <what> <path>:
 * <reason>" and returns 66 (it does not exist) or 77 (a directory on its
 * way may not be searched).  "-" (standard input) always exists. */
int cli_check_input(const cli_spec_t *spec, const char *what, const char *path);

#endif /* SLUICE_CLI_ARGS_H */
