/* SPDX-License-Identifier: Apache-2.0 */
/* table.c - every command and option of `sluice` (see table.h): the
 * source of the parser, `--help`, `sluice help`, the bash and zsh
 * completions and the man pages.
 *
 * Notes:
 * - Help lines are written for an 80-column terminal; the man pages fill
 *   them again.
 * - A new option is one cli_opt_t here, named in the `opts` of each command
 *   that takes it; the command's own options reach its cmd_<verb>.c through
 *   the parser's callback, the shared ones (store, output, service, site)
 *   are filled in by the parser itself (args.h).
 */
#include <string.h>

#include "cli.h"
#include "table.h"

/* ---- options ------------------------------------------------------------ */

static const cli_opt_t o_output = {'o',
                                   "output",
                                   'o',
                                   "FORMAT",
                                   CLI_VAL_CHOICE,
                                   "text json",
                                   0,
                                   0,
                                   "text (default) or json (the API's field names)"};
static const cli_opt_t o_log_level = {CLI_O_LOG_LEVEL,
                                      "log-level",
                                      0,
                                      "LEVEL",
                                      CLI_VAL_CHOICE,
                                      "error warning notice info debug",
                                      0,
                                      0,
                                      "log lines on stderr from LEVEL up (default:\n"
                                      "$SLUICE_LOG_LEVEL, else log.level, else warning)"};
static const cli_opt_t o_log_format = {CLI_O_LOG_FORMAT,
                                       "log-format",
                                       0,
                                       "FORMAT",
                                       CLI_VAL_CHOICE,
                                       "text json journald",
                                       0,
                                       0,
                                       "log line format (default: $SLUICE_LOG_FORMAT,\n"
                                       "else log.format, else text)"};
static const cli_opt_t o_state_dir = {CLI_O_STATE_DIR,
                                      "state-dir",
                                      0,
                                      "DIR",
                                      CLI_VAL_DIR,
                                      NULL,
                                      0,
                                      0,
                                      "the store (default: $SLUICE_STATE_DIR; else\n"
                                      "/var/lib/sluice as root, else $XDG_STATE_HOME/sluice)"};
static const cli_opt_t o_server = {CLI_O_SERVER,
                                   "server",
                                   0,
                                   "URL|unix:PATH",
                                   CLI_VAL_WORD,
                                   NULL,
                                   1,
                                   0,
                                   "the service (default: $SLUICE_SERVER; none: the\nlocal store)"};
static const cli_opt_t o_token_file = {CLI_O_TOKEN_FILE,
                                       "api-token-file",
                                       0,
                                       "FILE",
                                       CLI_VAL_INFILE,
                                       NULL,
                                       1,
                                       0,
                                       "bearer token (default: $SLUICE_API_TOKEN_FILE)"};
static const cli_opt_t o_api_ca = {CLI_O_API_CA,
                                   "api-ca",
                                   0,
                                   "FILE",
                                   CLI_VAL_INFILE,
                                   NULL,
                                   1,
                                   0,
                                   "CA bundle for https (default: $SLUICE_API_CA)"};
static const cli_opt_t o_config = {CLI_O_CONFIG,
                                   "config",
                                   0,
                                   "FILE",
                                   CLI_VAL_INFILE,
                                   NULL,
                                   0,
                                   0,
                                   "site YAML (default: $SLUICE_CONFIG; none if unset)"};
static const cli_opt_t o_set = {CLI_O_SET,
                                "set",
                                0,
                                "KEY=VALUE",
                                CLI_VAL_WORD,
                                NULL,
                                0,
                                1,
                                "override one dotted site key, such as\nrest.url=https://h:6820"};
static const cli_opt_t o_study_runtime = {CLI_O_STUDY_RUNTIME,
                                          "study-runtime",
                                          0,
                                          "FILE",
                                          CLI_VAL_INFILE,
                                          NULL,
                                          0,
                                          0,
                                          "study runtime file (format_version 2)"};
static const cli_opt_t o_heartbeat = {CLI_O_HEARTBEAT,
                                      "heartbeat",
                                      0,
                                      "SECONDS",
                                      CLI_VAL_WORD,
                                      NULL,
                                      0,
                                      0,
                                      "off a terminal, print the state every SECONDS\n"
                                      "(default: $SLUICE_HEARTBEAT_S, else 300; 0: never)"};
static const cli_opt_t o_wait = {CLI_O_WAIT,
                                 "wait",
                                 0,
                                 NULL,
                                 CLI_VAL_NONE,
                                 NULL,
                                 0,
                                 0,
                                 "supervise in this process until the launch ends\n"
                                 "(with --server: follow it there)"};
static const cli_opt_t o_api_version = {CLI_O_API_VERSION,
                                        "api-version",
                                        0,
                                        "V",
                                        CLI_VAL_WORD,
                                        NULL,
                                        0,
                                        0,
                                        "REST version of the body, v0.0.NN (default v0.0.38)"};
static const cli_opt_t o_state = {CLI_O_STATE,
                                  "state",
                                  0,
                                  "STATE",
                                  CLI_VAL_WORD,
                                  NULL,
                                  0,
                                  0,
                                  "only launches in this state (RUNNING, DONE, ...)"};
static const cli_opt_t o_site = {
    CLI_O_SITE, "site", 0, "SITE", CLI_VAL_WORD, NULL, 0, 0, "only launches of this site"};
static const cli_opt_t o_study = {
    CLI_O_STUDY, "study", 0, "STUDY", CLI_VAL_WORD, NULL, 0, 0, "only launches of this study"};
static const cli_opt_t o_cluster_filter = {
    CLI_O_CLUSTER, "cluster", 0, "NAME", CLI_VAL_WORD, NULL, 0, 0, "only launches of this cluster"};
static const cli_opt_t o_cluster = {CLI_O_CLUSTER,
                                    "cluster",
                                    0,
                                    "NAME",
                                    CLI_VAL_WORD,
                                    NULL,
                                    0,
                                    0,
                                    "cluster of a request naming none (first)"};
static const cli_opt_t o_live = {CLI_O_LIVE,
                                 "live",
                                 0,
                                 NULL,
                                 CLI_VAL_NONE,
                                 NULL,
                                 0,
                                 0,
                                 "only launches that have not ended (local store only)"};
static const cli_opt_t o_terminal = {CLI_O_TERMINAL,
                                     "terminal",
                                     0,
                                     NULL,
                                     CLI_VAL_NONE,
                                     NULL,
                                     0,
                                     0,
                                     "only launches that have ended (local store only)"};
static const cli_opt_t o_limit = {CLI_O_LIMIT,
                                  "limit",
                                  0,
                                  "N",
                                  CLI_VAL_WORD,
                                  NULL,
                                  0,
                                  0,
                                  "at most N per page (1-1000, default 100)"};
static const cli_opt_t o_cursor = {CLI_O_CURSOR,
                                   "cursor",
                                   0,
                                   "CURSOR",
                                   CLI_VAL_WORD,
                                   NULL,
                                   0,
                                   0,
                                   "the next page: the cursor the previous page printed"};
static const cli_opt_t o_stderr = {CLI_O_STDERR,
                                   "stderr",
                                   0,
                                   NULL,
                                   CLI_VAL_NONE,
                                   NULL,
                                   0,
                                   0,
                                   "the job's standard error instead of its output"};
static const cli_opt_t o_follow = {'f',
                                   "follow",
                                   'f',
                                   NULL,
                                   CLI_VAL_NONE,
                                   NULL,
                                   0,
                                   0,
                                   "print new output as it comes, until the launch ends"};
static const cli_opt_t o_listen = {
    CLI_O_LISTEN,
    "listen",
    0,
    "ADDR:PORT",
    CLI_VAL_WORD,
    NULL,
    0,
    0,
    "address to listen on; without TLS only loopback\n(127.0.0.1, [::1])"};
static const cli_opt_t o_tokens = {
    CLI_O_TOKENS,
    "tokens",
    0,
    "FILE",
    CLI_VAL_INFILE,
    NULL,
    0,
    0,
    "0600 file of bearer tokens, one\n`<caller-name> <token> [admin]` a line"};
static const cli_opt_t o_tls_cert = {CLI_O_TLS_CERT,
                                     "tls-cert",
                                     0,
                                     "FILE",
                                     CLI_VAL_INFILE,
                                     NULL,
                                     0,
                                     0,
                                     "PEM certificate (chain): serve HTTPS on --listen"};
static const cli_opt_t o_tls_key = {CLI_O_TLS_KEY,
                                    "tls-key",
                                    0,
                                    "FILE",
                                    CLI_VAL_INFILE,
                                    NULL,
                                    0,
                                    0,
                                    "PEM key of --tls-cert, not readable by others"};
static const cli_opt_t o_socket = {
    CLI_O_SOCKET,
    "socket",
    0,
    "PATH",
    CLI_VAL_OUTFILE,
    NULL,
    0,
    0,
    "also (or only) serve on a Unix socket (mode:\nserver.socket_mode, 0660)"};
static const cli_opt_t o_socket_group = {
    CLI_O_SOCKET_GROUP,
    "socket-group",
    0,
    "GROUP",
    CLI_VAL_WORD,
    NULL,
    0,
    0,
    "group of the socket (its members may use the API\nwithout a token)"};
static const cli_opt_t o_probe_job = {CLI_O_PROBE_JOB,
                                      "probe-job",
                                      0,
                                      NULL,
                                      CLI_VAL_NONE,
                                      NULL,
                                      0,
                                      0,
                                      "submit the probe job (uses the cluster)"};
static const cli_opt_t o_probe_timeout = {
    CLI_O_PROBE_TIMEOUT,
    "probe-timeout",
    0,
    "SECONDS",
    CLI_VAL_WORD,
    NULL,
    0,
    0,
    "wait at most this long for it (default 60,\n1-3600); then it is cancelled"};
static const cli_opt_t o_ready = {CLI_O_READY,
                                  "ready",
                                  0,
                                  NULL,
                                  CLI_VAL_NONE,
                                  NULL,
                                  0,
                                  0,
                                  "probe /v1/readyz instead of /v1/healthz"};
static const cli_opt_t o_timeout = {CLI_O_TIMEOUT,
                                    "timeout",
                                    0,
                                    "SECONDS",
                                    CLI_VAL_WORD,
                                    NULL,
                                    0,
                                    0,
                                    "give up after this long (default 5, 1-300)"};
static const cli_opt_t o_key = {CLI_O_KEY,
                                "key",
                                0,
                                "FILE",
                                CLI_VAL_INFILE,
                                NULL,
                                0,
                                0,
                                "HS256: the key file (Slurm's jwt_hs256.key);\nRS256: a PEM key"};
static const cli_opt_t o_user = {
    CLI_O_USER, "user", 0, "USER", CLI_VAL_WORD, NULL, 0, 0, "the Slurm user the token names"};
static const cli_opt_t o_lifespan = {CLI_O_LIFESPAN,
                                     "lifespan",
                                     0,
                                     "SECONDS",
                                     CLI_VAL_WORD,
                                     NULL,
                                     0,
                                     0,
                                     "how long the token is valid (default 1800)"};
static const cli_opt_t o_alg = {CLI_O_ALG,
                                "alg",
                                0,
                                "ALG",
                                CLI_VAL_CHOICE,
                                "HS256 RS256",
                                0,
                                0,
                                "HS256 or RS256 (check: default from the key)"};
static const cli_opt_t o_kid = {
    CLI_O_KID, "kid", 0, "KID", CLI_VAL_WORD, NULL, 0, 0, "key id for the token's header"};

#define SERVICE_OPTS &o_server, &o_token_file, &o_api_ca
#define SITE_OPTS &o_config, &o_set
/* Every command takes these. */
#define LOG_OPTS &o_log_level, &o_log_format

/* ---- commands ----------------------------------------------------------- */

static const cli_opt_t *const version_opts[] = {&o_output, LOG_OPTS, NULL};
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

static const cli_opt_t *const config_show_opts[] = {SITE_OPTS, &o_output, LOG_OPTS, NULL};
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
static const cli_opt_t o_ref_format = {CLI_O_FORMAT,
                                       "format",
                                       0,
                                       "FORMAT",
                                       CLI_VAL_CHOICE,
                                       "markdown json-schema",
                                       0,
                                       0,
                                       "markdown (default) or json-schema"};
static const cli_opt_t *const config_reference_opts[] = {&o_ref_format, LOG_OPTS, NULL};
static const cli_spec_t c_config_reference = {
    "config reference",
    "print the reference of every site key, made from the field table",
    {"[--format markdown|json-schema]"},
    "Print the reference of the site file's keys, made from the table the\n"
    "loader reads: markdown (one table per section: key, type, environment\n"
    "variable, --set key, description) or a JSON Schema (draft 2020-12) of\n"
    "the site file.  docs/config-reference.md and docs/sluice-site.schema.json\n"
    "are its output.  No site file is read.",
    config_reference_opts,
    NULL,
    CLI_VAL_NONE,
    0,
    0,
    "0\tok\n64\tusage error\n",
    NULL,
    cmd_config_reference,
    0};
static const cli_spec_t *const config_subs[] = {&c_config_show, &c_config_reference, NULL};
static const cli_spec_t c_config = {
    "config",
    "inspect the site configuration (config show, config reference)",
    {"show [--config FILE] [--set KEY=VALUE ...] [-o text|json]",
     "reference [--format markdown|json-schema]"},
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

static const cli_opt_t *const token_mint_opts[] = {&o_key, &o_user,   &o_lifespan, &o_alg,
                                                   &o_kid, &o_output, LOG_OPTS,    NULL};
static const cli_spec_t c_token_mint = {
    "token mint",
    "sign a Slurm JWT with a key file and print it",
    {"--key FILE --user USER [--lifespan SECONDS]\n"
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
static const cli_opt_t *const token_show_opts[] = {&o_output, LOG_OPTS, NULL};
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
static const cli_opt_t *const token_check_opts[] = {&o_key, &o_alg, &o_output, LOG_OPTS, NULL};
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
                                   {"mint --key FILE --user USER [--lifespan SECONDS]",
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
    &o_wait,      &o_heartbeat, &o_cluster,   SITE_OPTS, &o_study_runtime,
    &o_state_dir, &o_output,    SERVICE_OPTS, LOG_OPTS,  NULL};
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
    &o_cluster, SITE_OPTS, &o_study_runtime, &o_api_version, &o_output, LOG_OPTS, NULL};
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

static const cli_opt_t *const status_opts[] = {&o_state_dir, &o_output, SERVICE_OPTS, LOG_OPTS,
                                               NULL};
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

static const cli_opt_t *const ls_opts[] = {
    &o_state,  &o_site,   &o_study,     &o_cluster_filter, &o_live,  &o_terminal, &o_limit,
    &o_cursor, &o_output, &o_state_dir, SERVICE_OPTS,      LOG_OPTS, NULL};
static const cli_spec_t c_ls = {
    "ls",
    "list launches in the store",
    {"[--state-dir DIR | --server URL] [-o text|json]\n"
     "[--state STATE] [--site SITE] [--study STUDY] [--cluster NAME]\n"
     "[--live|--terminal] [--limit N] [--cursor CURSOR]"},
    "List launches, oldest first, one page at a time.  With -o json: the page of\n"
    "GET /v1/launches (`items`, `next_cursor`).  --live and --terminal have no\n"
    "API parameter: use --state with --server.",
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

static const cli_opt_t *const logs_opts[] = {&o_follow,    &o_stderr, &o_state_dir,
                                             SERVICE_OPTS, LOG_OPTS,  NULL};
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

static const cli_opt_t *const cancel_opts[] = {&o_state_dir, &o_output, SERVICE_OPTS, LOG_OPTS,
                                               NULL};
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

static const cli_opt_t *const serve_opts[] = {
    &o_listen, &o_tokens,        &o_tls_cert,  &o_tls_key, &o_socket, &o_socket_group,
    SITE_OPTS, &o_study_runtime, &o_state_dir, LOG_OPTS,   NULL};
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

static const cli_opt_t *const check_opts[] = {SITE_OPTS,        &o_output, &o_probe_job,
                                              &o_probe_timeout, LOG_OPTS,  NULL};
static const cli_spec_t c_check = {
    "check",
    "preflight the site configuration against the cluster",
    {"[--config FILE] [--set KEY=VALUE ...] [-o text|json]\n"
     "[--probe-job [--probe-timeout SECONDS]]"},
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

static const cli_opt_t *const probe_opts[] = {&o_ready,     &o_timeout, &o_output,
                                              SERVICE_OPTS, LOG_OPTS,   NULL};
static const cli_spec_t c_probe = {
    "probe",
    "ask a running service whether it is alive or ready (exit 0/69)",
    {"[--ready] [--server URL|unix:PATH] [--api-token-file FILE]\n"
     "[--api-ca FILE] [--timeout SECONDS] [-o text|json]"},
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
    {"bash|zsh [FILE] | man DIR"},
    "Write the bash or zsh completion script (to FILE, or standard output), or\n"
    "the man pages into DIR.  The build runs it; not for users.",
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

const cli_spec_t *cli_find(char *const *words, int n, int *used)
{
    const cli_spec_t *const *list = cli_commands;
    const cli_spec_t *found = NULL;
    const char *leaf;
    int k = 0;

    *used = 0;
    while (k < n && list != NULL) {
        const cli_spec_t *next = NULL;

        for (size_t i = 0; list[i] != NULL && next == NULL; i++) {
            /* the last word of the entry's name */
            leaf = strrchr(list[i]->name, ' ');
            leaf = leaf ? leaf + 1 : list[i]->name;
            if (strcmp(leaf, words[k]) == 0)
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
