/* SPDX-License-Identifier: Apache-2.0 */
/* table.h - the one table of the `sluice` command's commands and options
 * (table.c), from which the parser (args.c), `--help`, the shell
 * completions and the man pages (gendoc.c) are all made.
 *
 * Notes:
 * - An option is one cli_opt_t, shared by every command that takes it, so
 *   `--state-dir` means the same thing, with the same help and the same
 *   completion, everywhere.
 * - A command with subcommands (`token`, `config`) has an entry of its own
 *   that lists them (`subs`) and one entry per subcommand, named
 *   "token mint", "config show", ...
 */
#ifndef SLUICE_CLI_TABLE_H
#define SLUICE_CLI_TABLE_H

#include <stddef.h>

/* What an option's value or an operand is, for the completions and for the
 * check that an input file exists. */
typedef enum {
    CLI_VAL_NONE = 0, /* a flag, or an operand with nothing to complete */
    CLI_VAL_WORD,     /* free text */
    CLI_VAL_INFILE,   /* an existing file (missing: exit 66) */
    CLI_VAL_OUTFILE,  /* a path that need not exist */
    CLI_VAL_DIR,      /* a directory */
    CLI_VAL_CHOICE,   /* one of `choices` */
    CLI_VAL_COMMAND,  /* a command name (`sluice help`) */
    CLI_VAL_DURATION, /* a time span, the site file's syntax (args.h cli_duration()) */
    CLI_VAL_STATE,    /* a launch state: the state machine's public names */
    CLI_VAL_SETKEY,   /* KEY=VALUE, KEY a site key --set takes (the field table) */
} cli_val_kind;

/* getopt_long's value of the options without a short letter. */
enum {
    CLI_O_STATE_DIR = 256,
    CLI_O_SERVER,
    CLI_O_TOKEN_FILE,
    CLI_O_API_CA,
    CLI_O_CONFIG,
    CLI_O_SET,
    CLI_O_STUDY_RUNTIME,
    CLI_O_WAIT,
    CLI_O_API_VERSION,
    CLI_O_STATE,
    CLI_O_SITE,
    CLI_O_STUDY,
    CLI_O_LIVE,
    CLI_O_TERMINAL,
    CLI_O_LIMIT,
    CLI_O_CURSOR,
    CLI_O_STDERR,
    CLI_O_LISTEN,
    CLI_O_TOKENS,
    CLI_O_TLS_CERT,
    CLI_O_TLS_KEY,
    CLI_O_SOCKET,
    CLI_O_SOCKET_GROUP,
    CLI_O_PROBE_JOB,
    CLI_O_PROBE_TIMEOUT,
    CLI_O_READY,
    CLI_O_TIMEOUT,
    CLI_O_KEY,
    CLI_O_USER,
    CLI_O_LIFESPAN,
    CLI_O_ALG,
    CLI_O_KID,
    CLI_O_HEARTBEAT,
    CLI_O_LOG_LEVEL,
    CLI_O_LOG_FORMAT,
    CLI_O_CLUSTER,
    CLI_O_FORMAT,
    CLI_O_SORT,
    CLI_O_FORCE,
    CLI_O_OUT,
};

typedef struct {
    int id;              /* getopt_long's val: the short letter or a CLI_O_* */
    const char *name;    /* long name, without "--" */
    char letter;         /* short name, or 0 */
    const char *value;   /* the value's name in the help ("DIR"); NULL: a flag */
    cli_val_kind kind;   /* CLI_VAL_NONE for a flag */
    const char *choices; /* CLI_VAL_CHOICE: the words, space-separated */
    int service;         /* 1: listed under "service options" (--server ...) */
    int repeat;          /* 1: may be given more than once (--set) */
    const char *help;    /* one line, may be continued with "\n" */
} cli_opt_t;

typedef struct cli_spec cli_spec_t;

/* Runs a command: `spec` is its entry, argv[0] its name. */
typedef int (*cli_run_fn)(const cli_spec_t *spec, int argc, char **argv);

struct cli_spec {
    const char *name;             /* "status", "token mint" */
    const char *summary;          /* one line, lower case, no full stop */
    const char *synopsis[3];      /* what follows "sluice <name>" on each usage line */
    const char *description;      /* paragraphs separated by a blank line */
    const cli_opt_t *const *opts; /* NULL-terminated; -h/--help is implied */
    const char *operand;          /* the operand's name ("LAUNCH_ID"), or NULL */
    cli_val_kind operand_kind;    /* what completes it */
    int min_operands, max_operands;
    const char *exit_status;       /* "CODE<TAB>meaning" lines */
    const cli_spec_t *const *subs; /* subcommands, NULL-terminated, or NULL */
    cli_run_fn run;                /* NULL for a command that only has subs */
    int hidden;                    /* 1: not in the help, completions or man pages */
};

/* Every top-level command, NULL-terminated, in the order of the help. */
extern const cli_spec_t *const cli_commands[];

/* The last word of an entry's name: "mint" for "token mint". */
const char *cli_leaf(const cli_spec_t *c);

/* The entry named by words[0] (and words[1] for a subcommand): the deepest
 * one that matches, *used set to how many words it took (0: none). */
const cli_spec_t *cli_find(char *const *words, int n, int *used);

#endif /* SLUICE_CLI_TABLE_H */
