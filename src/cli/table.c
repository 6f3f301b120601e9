/* SPDX-License-Identifier: Apache-2.0 */
/* table.c - every command of `sluice` (see table.h), with the options it
 * takes (table_opts.c): the source of the parser, `--help`, `sluice help`,
 * the bash and zsh completions and the man pages.
 *
 * Notes:
 * - Help lines are written for an 80-column terminal; the man pages fill
 *   them again.
 * - A new option is one cli_opt_t in table_opts.c, named in the `opts` of
 *   each command that takes it; the command's own options reach its
 *   cmd_<verb>.c through the parser's callback, the shared ones (store,
 *   output, service, site) are filled in by the parser itself (args.h).
 */
#include <string.h>

#include "cli.h"
#include "table.h"
#include "table_opts.h"

/* ---- commands ----------------------------------------------------------- */

static const cli_opt_t *const version_opts[] = {&cli_opt_output, LOG_OPTS, NULL};
static const cli_spec_t c_version = {
    "version",
    "print the version of sluice and its library",
    {"[-o text|json]"},
    "Print the version of the command and of the library it runs on.  The two\n"
    "differ only when the binary runs against another shared library than the\n"
    "one it was built with.",
    version_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n",
    NULL,
    cmd_version,
    0};

static const cli_opt_t *const config_show_opts[] = {SITE_OPTS, &cli_opt_output, LOG_OPTS, NULL};
static const cli_spec_t c_config_show = {
    "config show",
    "show the effective site configuration and where each value came from",
    {"[--config FILE] [--set KEY=VALUE ...] [-o text|json]"},
    "Print the effective site configuration and where each value came from\n"
    "(default, file, env:<VARIABLE>, flag).  Precedence: --set > environment\n"
    "(SLUICE_<SECTION>_<KEY>, FORGE_*) > site file > default.  The last line,\n"
    "identity.user, is the Slurm user sluice acts as: rest.user, else the\n"
    "token's own (its `sun` claim); the token is read, nothing is sent.  Secret\n"
    "material never appears: the configuration holds only paths to it.",
    config_show_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n66\tthe site file does not exist\n74\tthe site file cannot be "
    "read\n78\tthe configuration is not valid\n",
    NULL,
    cmd_config_show,
    0};
static const cli_opt_t *const config_reference_opts[] = {&cli_opt_ref_format, LOG_OPTS, NULL};
static const cli_spec_t c_config_reference = {
    "config reference",
    "print the reference of every site key, made from the field table",
    {"[--format markdown|json-schema|man]"},
    "Print the reference of the site file's keys, made from the table the\n"
    "loader reads: markdown (one table per section: key, type, environment\n"
    "variable, --set key, description), a JSON Schema (draft 2020-12) of the\n"
    "site file, or the sluice.yaml(5) man page (roff).\n"
    "docs/config-reference.md and docs/sluice-site.schema.json are its output,\n"
    "and the installed sluice.yaml.5.  No site file is read.",
    config_reference_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n",
    NULL,
    cmd_config_reference,
    0};
static const cli_opt_t *const config_init_opts[] = {&cli_opt_init_output, &cli_opt_force, LOG_OPTS,
                                                    NULL};
static const cli_spec_t c_config_init = {
    "config init",
    "write a commented starting site file",
    {"[--out FILE [--force]]"},
    "Write a commented starting site file, made from the field table: the\n"
    "required keys (rest.url, storage.root, job_launcher.sandbox) with a\n"
    "\"<required: ...>\" placeholder that the loader refuses if it is left in,\n"
    "and the common keys commented out with their description and default.\n"
    "Fill it in, then check it with `sluice config show --config FILE`.\n"
    "\n"
    "To the standard output, or to --out FILE with mode 0640; an existing FILE is\n"
    "refused (exit 73) unless --force.",
    config_init_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n73\tFILE exists (use --force)\n74\tFILE cannot be "
    "written\n",
    NULL,
    cmd_config_init,
    0};
static const cli_spec_t *const config_subs[] = {&c_config_show, &c_config_init, &c_config_reference,
                                                NULL};
static const cli_spec_t c_config = {"config",
                                    "inspect the site configuration (config show, init, reference)",
                                    {"show [--config FILE] [--set KEY=VALUE ...] [-o text|json]",
                                     "init [--out FILE [--force]]",
                                     "reference [--format markdown|json-schema|man]"},
                                    "Inspect the site configuration.",
                                    NULL,
                                    NULL,
                                    CLI_VAL_NONE,
                                    0,
                                    0,
                                    "0\tok\n64\tusage error\n",
                                    config_subs,
                                    NULL,
                                    0};

static const cli_opt_t *const token_mint_opts[] = {&cli_opt_key, &cli_opt_user, &cli_opt_lifespan,
                                                   &cli_opt_alg, &cli_opt_kid,  &cli_opt_output,
                                                   LOG_OPTS,     NULL};
static const cli_spec_t c_token_mint = {
    "token mint",
    "sign a Slurm JWT with a key file and print it",
    {"--key FILE --user USER [--lifespan DURATION]\n"
     "[--alg HS256|RS256] [--kid KID] [-o text|json]"},
    "Sign a token with an HS256 key file (Slurm's jwt_hs256.key) or an RS256\n"
    "private key (PEM) and print it.  With -o json: the token, its header and\n"
    "its claims.  The key is never printed.",
    token_mint_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n66\tthe key file does not exist\n74\tthe key cannot be read\n",
    NULL,
    cmd_token_mint,
    0};
static const cli_opt_t *const token_show_opts[] = {&cli_opt_output, LOG_OPTS, NULL};
static const cli_spec_t c_token_show = {
    "token show",
    "print a token's header and claims (never its signature)",
    {"[-o text|json] [FILE|-]"},
    "Print a token's user, issue and expiry times and the time left, or with\n"
    "-o json its header and claims and `expires_in` (seconds).  Never the\n"
    "signature.  The token is read from FILE, or from standard input when FILE\n"
    "is '-' or absent; the file may hold SLURM_JWT=<token>.",
    token_show_opts,
    "FILE",
    CLI_VAL_INFILE,
    0,
    1,
    "0\tok\n64\tusage error\n65\tnot a token\n66\tthe file does not exist\n",
    NULL,
    cmd_token_show,
    0};
static const cli_opt_t *const token_check_opts[] = {&cli_opt_key, &cli_opt_alg, &cli_opt_output,
                                                    LOG_OPTS, NULL};
static const cli_spec_t c_token_check = {
    "token check",
    "verify a token's signature and expiry with a key",
    {"--key FILE [--alg HS256|RS256] [-o text|json] [FILE|-]"},
    "Verify a token's signature and expiry with a key (HS256: the key file;\n"
    "RS256: the public key PEM).  Without --alg the key decides: a PEM key\n"
    "means RS256, raw bytes HS256, so that an RSA public key is never used as\n"
    "an HMAC secret.  The token is read as by `token show`.",
    token_check_opts,
    "FILE",
    CLI_VAL_INFILE,
    0,
    1,
    "0\tvalid\n64\tusage error\n65\tnot a token\n66\ta file does not exist\n77\tinvalid or "
    "expired\n",
    NULL,
    cmd_token_check,
    0};
static const cli_spec_t *const token_subs[] = {&c_token_mint, &c_token_show, &c_token_check, NULL};
static const cli_spec_t c_token = {"token",
                                   "mint, show and check Slurm JWTs",
                                   {"mint --key FILE --user USER [--lifespan DURATION]",
                                    "show [-o text|json] [FILE|-]",
                                    "check --key FILE [--alg HS256|RS256] [FILE|-]"},
                                   "Mint, inspect and verify Slurm JWTs.  No subcommand prints "
                                   "a key.",
                                   NULL,
                                   NULL,
                                   CLI_VAL_NONE,
                                   0,
                                   0,
                                   "0\tok\n64\tusage error\n",
                                   token_subs,
                                   NULL,
                                   0};

static const cli_opt_t *const launch_opts[] = {
    &cli_opt_wait,      &cli_opt_heartbeat, &cli_opt_cluster, SITE_OPTS, &cli_opt_study_runtime,
    &cli_opt_state_dir, &cli_opt_output,    SERVICE_OPTS,     LOG_OPTS,  NULL};
static const cli_spec_t c_launch = {
    "launch",
    "submit a launch request and supervise it to the end (--wait)",
    {"REQUEST.json [--wait] [--cluster NAME] [--config FILE]\n"
     "[--set KEY=VALUE ...] [--study-runtime FILE]\n"
     "[--state-dir DIR] [-o text|json]",
     "REQUEST.json --server URL [--wait] [-o text|json]"},
    "Validate, render and submit a launch through slurmrestd, then supervise it\n"
    "until it ends, printing every transition (with -o json: one object per\n"
    "line).  The exit code is the result code.  Running the same request again\n"
    "resumes the same launch and never submits a second job; a launch that\n"
    "already ended prints its final state and exits with its result code.\n"
    "\n"
    "With --server (or $SLUICE_SERVER) the request goes to a running `sluice\n"
    "serve`, which validates, renders and supervises it; --wait then follows it\n"
    "there and prints the same lines, with the same exit code.  --config, --set,\n"
    "--study-runtime and --state-dir belong to the service's side then.\n"
    "Without --wait or --server: handed to the supervisor running on the store,\n"
    "or exit 69 if none runs (secret values and depends_on need --wait).\n"
    "REQUEST.json may be '-' for standard input.",
    launch_opts,
    "REQUEST.json",
    CLI_VAL_INFILE,
    1,
    1,
    "0\tSUCCEEDED\n1\tEXECUTION_ERROR\n9\tABORTED\n101-103\tdeclared by the workload\n"
    "104\tINFRASTRUCTURE_ERROR\n64\tusage error\n65\tthe request is not valid, another "
    "with its launch_id is stored, or another supervisor holds the store\n66\tthe request "
    "file does not exist\n69\tslurmrestd or the service is unavailable\n74\tthe request or "
    "the store cannot be read\n77\tpermission denied\n78\tthe configuration is not valid\n",
    NULL,
    cmd_launch,
    0};

static const cli_opt_t *const render_opts[] = {
    &cli_opt_cluster, SITE_OPTS, &cli_opt_study_runtime, &cli_opt_api_version, &cli_opt_output,
    LOG_OPTS,         NULL};
static const cli_spec_t c_render = {
    "render",
    "print the batch script and REST body of a launch request",
    {"REQUEST.json [--cluster NAME] [--config FILE]\n"
     "[--set KEY=VALUE ...] [--study-runtime FILE]\n"
     "[--api-version v0.0.NN] [-o text|json]"},
    "Render a launch request into its batch script and Slurm REST submit body\n"
    "and print them (the body of --api-version, else the site's rest.api_version).\n"
    "Nothing is written or submitted.  Secrets are printed by name only.",
    render_opts,
    "REQUEST.json",
    CLI_VAL_INFILE,
    1,
    1,
    "0\tok\n64\tusage error\n65\tthe request is not valid\n66\tthe request file does not "
    "exist\n74\tthe request cannot be read\n78\tthe configuration or study runtime is not "
    "valid\n",
    NULL,
    cmd_render,
    0};

static const cli_opt_t *const status_opts[] = {&cli_opt_state_dir, &cli_opt_output, SERVICE_OPTS,
                                               LOG_OPTS, NULL};
static const cli_spec_t c_status = {
    "status",
    "show one launch, its Slurm jobs and its event log",
    {"[--state-dir DIR | --server URL] [-o text|json] LAUNCH_ID"},
    "Show one launch from the store: state, result, reason, Slurm job ids and\n"
    "its event log.  It never talks to Slurm and never creates a store.  With\n"
    "-o json: the object of GET /v1/launches/{id}.",
    status_opts,
    "LAUNCH_ID",
    CLI_VAL_NONE,
    1,
    1,
    "0\tfound\n64\tusage error\n66\tno store at the state directory\n69\tno such launch, or the "
    "service is unavailable\n76\tthe service's answer is not the API's\n77\tpermission denied\n",
    NULL,
    cmd_status,
    0};

static const cli_opt_t *const ls_opts[] = {&cli_opt_state,
                                           &cli_opt_site,
                                           &cli_opt_study,
                                           &cli_opt_cluster_filter,
                                           &cli_opt_live,
                                           &cli_opt_terminal,
                                           &cli_opt_sort,
                                           &cli_opt_reverse,
                                           &cli_opt_limit,
                                           &cli_opt_cursor,
                                           &cli_opt_output,
                                           &cli_opt_state_dir,
                                           SERVICE_OPTS,
                                           LOG_OPTS,
                                           NULL};
static const cli_spec_t c_ls = {
    "ls",
    "list launches in the store, newest first",
    {"[--state-dir DIR | --server URL] [-o text|json]\n"
     "[--state STATE] [--site SITE] [--study STUDY] [--cluster NAME]\n"
     "[--live|--terminal] [--sort created|updated|state|id] [-r]\n"
     "[--limit N] [--cursor CURSOR]"},
    "List launches, newest first (--sort and --reverse choose another order),\n"
    "at most --limit of them.  With -o json: the object of GET /v1/launches\n"
    "(`items`, `next_cursor`).  --live and --terminal have no API parameter:\n"
    "use --state with --server.\n"
    "\n"
    "Neither the store nor the API sorts: ls reads every launch that matches\n"
    "the filters (locally or from the service) and sorts them itself.\n"
    "--sort created --reverse is the store's own order, oldest first: then ls\n"
    "reads one page and prints the cursor of the next, which --cursor takes.",
    ls_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n66\tno store at the state directory\n69\tthe service is "
    "unavailable\n76\tthe service's answer is not the API's\n77\tpermission denied\n",
    NULL,
    cmd_ls,
    0};

static const cli_opt_t *const logs_opts[] = {&cli_opt_follow, &cli_opt_stderr, &cli_opt_state_dir,
                                             SERVICE_OPTS,    LOG_OPTS,        NULL};
static const cli_spec_t c_logs = {
    "logs",
    "print (or follow with -f) a launch's job output",
    {"[--state-dir DIR | --server URL] [--stderr] [-f] LAUNCH_ID"},
    "Print a launch's job output (standard output, or standard error with\n"
    "--stderr) from the shared storage, or from the archive once the launch has\n"
    "ended.  -f follows the file until the launch ends.",
    logs_opts,
    "LAUNCH_ID",
    CLI_VAL_NONE,
    1,
    1,
    "0\tok\n64\tusage error\n66\tno store at the state directory\n69\tno such launch, or the "
    "service is unavailable\n74\tthe output cannot be read or written\n",
    NULL,
    cmd_logs,
    0};

static const cli_opt_t *const cancel_opts[] = {&cli_opt_state_dir, &cli_opt_output, SERVICE_OPTS,
                                               LOG_OPTS, NULL};
static const cli_spec_t c_cancel = {
    "cancel",
    "ask the supervisor to cancel a launch",
    {"[--state-dir DIR | --server URL] [-o text|json] LAUNCH_ID"},
    "Ask the supervisor (`sluice serve` or `sluice launch --wait`) to cancel a\n"
    "launch.  The request is recorded in the store with your user name; the\n"
    "supervisor checks that the Slurm job is ours (name, comment marker, user)\n"
    "before it sends anything.  Cancelling a finished launch changes nothing.\n"
    "With -o json: the launch, as DELETE /v1/launches/{id} answers.",
    cancel_opts,
    "LAUNCH_ID",
    CLI_VAL_NONE,
    1,
    1,
    "0\trequested, or the launch had already ended\n64\tusage error\n66\tno store at the "
    "state directory\n69\tno such launch, or the service is unavailable\n77\tpermission "
    "denied\n",
    NULL,
    cmd_cancel,
    0};

static const cli_opt_t *const serve_opts[] = {&cli_opt_listen,
                                              &cli_opt_tokens,
                                              &cli_opt_tls_cert,
                                              &cli_opt_tls_key,
                                              &cli_opt_socket,
                                              &cli_opt_socket_group,
                                              SITE_OPTS,
                                              &cli_opt_study_runtime,
                                              &cli_opt_state_dir,
                                              LOG_OPTS,
                                              NULL};
static const cli_spec_t c_serve = {
    "serve",
    "supervise launches and serve the HTTP API (/v1)",
    {"(--listen ADDR:PORT --tokens FILE | --socket PATH)\n"
     "[--tls-cert FILE --tls-key FILE] [--socket-group GROUP]\n"
     "[--config FILE] [--set KEY=VALUE ...] [--study-runtime FILE]\n"
     "[--state-dir DIR]"},
    "Supervise launches and serve the HTTP API (/v1) until SIGTERM or SIGINT.\n"
    "Each option has a site key (server.listen, server.tokens_file,\n"
    "server.socket, server.socket_group, server.tls_cert, server.tls_key); the\n"
    "option wins.  The study runtime file is re-read when it changes.",
    serve_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tstopped by SIGTERM or SIGINT\n64\tusage error\n65\tanother supervisor holds the "
    "store\n66\ta file does not exist\n69\tslurmrestd is unavailable\n74\tthe store cannot "
    "be opened\n77\tpermission denied\n78\tthe configuration is not valid\n",
    NULL,
    cmd_serve,
    0};

static const cli_opt_t *const check_opts[] = {
    SITE_OPTS, &cli_opt_output, &cli_opt_probe_job, &cli_opt_probe_timeout, LOG_OPTS, NULL};
static const cli_spec_t c_check = {
    "check",
    "preflight the site configuration against the cluster",
    {"[--config FILE] [--set KEY=VALUE ...] [-o text|json]\n"
     "[--probe-job [--probe-timeout DURATION]]"},
    "Check the site configuration against the cluster through slurmrestd:\n"
    "the Slurm user it acts as (rest.user, or the token's own), reachability,\n"
    "TLS, the negotiated API version and Slurm release, a token that\n"
    "authenticates, whether the server deprecates that version (a warning\n"
    "naming the release that removes it), accounting, the configured\n"
    "partition, and that each GPU series in the catalogue has a node whose\n"
    "features satisfy its constraint.  --probe-job also submits a one-node\n"
    "job that runs the configured srun (--version, and a one-task step that\n"
    "looks up the container runtime) and compares srun's version with\n"
    "slurmctld's.",
    check_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tevery check passed\n64\tusage error\n66\tthe site file does not exist\n69\tunavailable\n"
    "74\tthe probe's staging directory cannot be created\n77\tauthentication failed\n78\tthe "
    "configuration is not valid\n",
    NULL,
    cmd_check,
    0};

static const cli_opt_t *const probe_opts[] = {&cli_opt_ready, &cli_opt_timeout, &cli_opt_output,
                                              SERVICE_OPTS,   LOG_OPTS,         NULL};
static const cli_spec_t c_probe = {
    "probe",
    "ask a running service whether it is alive or ready (exit 0/69)",
    {"[--ready] [--server URL|unix:PATH] [--api-token-file FILE]\n"
     "[--api-ca FILE] [--timeout DURATION] [-o text|json]"},
    "Exit 0 when a running `sluice serve` answers GET /v1/healthz (or /v1/readyz\n"
    "with --ready) with 200; 69 otherwise.  For container health checks and\n"
    "Kubernetes exec probes, whose images carry no curl.  Over the Unix socket\n"
    "no token is needed.  With -o json: the service's answer.",
    probe_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tthe service answered 200\n64\tusage error\n66\tthe token file does not "
    "exist\n69\tany other answer, or none\n77\tthe service answered 401 (a token is needed)\n",
    NULL,
    cmd_probe,
    0};

static const cli_spec_t c_help = {
    "help",
    "show the help of sluice or of a command",
    {"[COMMAND [SUBCOMMAND]]"},
    "Print the help of a command (the same as `sluice COMMAND --help`), or the\n"
    "list of commands.",
    NULL,
    "COMMAND",
    CLI_VAL_COMMAND,
    0,
    2,
    "0\tok\n64\tno such command\n",
    NULL,
    NULL,
    0};

static const cli_spec_t c_gendoc = {
    "__gendoc",
    "print the completions or man pages (build time)",
    {"bash|zsh [FILE] | man DIR | man5 DIR"},
    "Write the bash or zsh completion script (to FILE, or standard output), the\n"
    "man pages of section 1 into DIR, or sluice.yaml.5 into DIR.  The build\n"
    "runs it; not for users.",
    NULL,
    "WHAT",
    CLI_VAL_NONE,
    1,
    2,
    "0\tok\n64\tusage error\n74\tDIR cannot be written\n",
    NULL,
    NULL,
    1};

/* `help` and `__gendoc` have no run function here: they read this table,
 * so main.c runs them (a file that this table named could not, without a
 * cycle between the two). */
const cli_spec_t *const cli_commands[] = {&c_version, &c_config, &c_token, &c_launch, &c_render,
                                          &c_status,  &c_ls,     &c_logs,  &c_cancel, &c_serve,
                                          &c_check,   &c_probe,  &c_help,  &c_gendoc, NULL};

const char *cli_leaf(const cli_spec_t *c)
{
    const char *sp = strrchr(c->name, ' ');

    return sp ? sp + 1 : c->name;
}

const cli_spec_t *cli_find(char *const *words, int n, int *used)
{
    const cli_spec_t *const *list = cli_commands;
    const cli_spec_t *found = NULL;
    int k = 0;

    *used = 0;
    while (k < n && list != NULL) {
        const cli_spec_t *next = NULL;

        for (size_t i = 0; list[i] != NULL && next == NULL; i++) {
            if (strcmp(cli_leaf(list[i]), words[k]) == 0)
                next = list[i];
        }
        if (next == NULL)
            break;
        found = next;
        *used = ++k;
        list = next->subs;
    }
    return found;
}
