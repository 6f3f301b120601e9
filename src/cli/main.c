/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - entry point of the `sluice` command: global options and the
 * subcommand table.
 *
 * Notes:
 * - Exit codes follow sysexits(3) for every error (64 usage, 65 bad input,
 *   69 unavailable, 77 permission, 78 config); never 1.
 * - Each subcommand lives in its own cmd_<name>.c and parses its own flags;
 *   the helpers they share are in cli.c (see README.md).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_command commands[] = {
    {"version", "print the version of sluice and its library", cmd_version},
    {"config", "show the effective site configuration (config show)", cmd_config},
    {"token", "mint, show and check Slurm JWTs", cmd_token},
    {"launch", "submit a launch request and supervise it to the end (--wait)", cmd_launch},
    {"render", "print the batch script and REST body of a launch request", cmd_render},
    {"status", "show one launch, its Slurm jobs and its event log", cmd_status},
    {"ls", "list launches in the store", cmd_ls},
    {"logs", "print (or follow with -f) a launch's job output", cmd_logs},
    {"cancel", "ask the supervisor to cancel a launch", cmd_cancel},
    {"serve", "supervise launches and serve the HTTP API (/v1)", cmd_serve},
    {"check", "preflight the site configuration against the cluster", cmd_check},
    {"probe", "ask a running service whether it is alive or ready (exit 0/69)", cmd_probe},
};

static const size_t n_commands = sizeof(commands) / sizeof(commands[0]);

static void usage(FILE *f)
{
    size_t i;

    fprintf(f, "usage: sluice [--help] [--version] <command> [<args>]\n"
               "\n"
               "Launch and supervise Slurm jobs through slurmrestd.\n"
               "\n"
               "commands:\n");
    for (i = 0; i < n_commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'sluice <command> --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
    size_t i;

    cli_log_to_stderr(SLUICE_LOG_WARNING);
    if (argc < 2) {
        usage(stderr);
        return CLI_EX_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EX_OK;
    }
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv);
    for (i = 0; i < n_commands; i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "sluice: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_EX_USAGE;
}
