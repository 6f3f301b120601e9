/* SPDX-License-Identifier: Apache-2.0 */
/* table_opts.c - every option of `sluice` (see table_opts.h): its names,
 * value, completion kind and help line.  The commands that take each one
 * are in table.c.
 *
 * Notes:
 * - Help lines are written for an 80-column terminal; the man pages fill
 *   them again.
 * - An option shared by several commands is one cli_opt_t, so it means the
 *   same thing, with the same help and completion, everywhere.
 */
#include "table_opts.h"

const cli_opt_t cli_opt_output = {'o',
                                  "output",
                                  'o',
                                  "FORMAT",
                                  CLI_VAL_CHOICE,
                                  "text json",
                                  0,
                                  0,
                                  "text (default) or json (the API's field names)"};
const cli_opt_t cli_opt_log_level = {CLI_O_LOG_LEVEL,
                                     "log-level",
                                     0,
                                     "LEVEL",
                                     CLI_VAL_CHOICE,
                                     "error warning notice info debug",
                                     0,
                                     0,
                                     "log lines on stderr from LEVEL up (default:\n"
                                     "$SLUICE_LOG_LEVEL, else log.level, else warning)"};
const cli_opt_t cli_opt_log_format = {CLI_O_LOG_FORMAT,
                                      "log-format",
                                      0,
                                      "FORMAT",
                                      CLI_VAL_CHOICE,
                                      "text json journald",
                                      0,
                                      0,
                                      "log line format (default: $SLUICE_LOG_FORMAT,\n"
                                      "else log.format, else text)"};
const cli_opt_t cli_opt_state_dir = {CLI_O_STATE_DIR,
                                     "state-dir",
                                     0,
                                     "DIR",
                                     CLI_VAL_DIR,
                                     NULL,
                                     0,
                                     0,
                                     "the store (default: $SLUICE_STATE_DIR; else\n"
                                     "/var/lib/sluice as root, else $XDG_STATE_HOME/sluice)"};
const cli_opt_t cli_opt_server = {CLI_O_SERVER,
                                  "server",
                                  0,
                                  "URL|unix:PATH",
                                  CLI_VAL_WORD,
                                  NULL,
                                  1,
                                  0,
                                  "the service (default: $SLUICE_SERVER; none: the\nlocal store)"};
const cli_opt_t cli_opt_token_file = {CLI_O_TOKEN_FILE,
                                      "api-token-file",
                                      0,
                                      "FILE",
                                      CLI_VAL_INFILE,
                                      NULL,
                                      1,
                                      0,
                                      "bearer token (default: $SLUICE_API_TOKEN_FILE)"};
const cli_opt_t cli_opt_api_ca = {CLI_O_API_CA,
                                  "api-ca",
                                  0,
                                  "FILE",
                                  CLI_VAL_INFILE,
                                  NULL,
                                  1,
                                  0,
                                  "CA bundle for https (default: $SLUICE_API_CA)"};
const cli_opt_t cli_opt_config = {CLI_O_CONFIG,
                                  "config",
                                  0,
                                  "FILE",
                                  CLI_VAL_INFILE,
                                  NULL,
                                  0,
                                  0,
                                  "site YAML (default: $SLUICE_CONFIG; none if unset)"};
const cli_opt_t cli_opt_set = {CLI_O_SET,
                               "set",
                               0,
                               "KEY=VALUE",
                               CLI_VAL_SETKEY,
                               NULL,
                               0,
                               1,
                               "override one dotted site key, such as\nrest.url=https://h:6820"};
const cli_opt_t cli_opt_study_runtime = {CLI_O_STUDY_RUNTIME,
                                         "study-runtime",
                                         0,
                                         "FILE",
                                         CLI_VAL_INFILE,
                                         NULL,
                                         0,
                                         0,
                                         "study runtime file (format_version 2)"};
const cli_opt_t cli_opt_heartbeat = {CLI_O_HEARTBEAT,
                                     "heartbeat",
                                     0,
                                     "DURATION",
                                     CLI_VAL_DURATION,
                                     NULL,
                                     0,
                                     0,
                                     "off a terminal, print the state every DURATION\n"
                                     "(90, 30s, 5m; a bare number is seconds; default:\n"
                                     "$SLUICE_HEARTBEAT_S, else 5m; 0: never)"};
const cli_opt_t cli_opt_wait = {CLI_O_WAIT,
                                "wait",
                                0,
                                NULL,
                                CLI_VAL_NONE,
                                NULL,
                                0,
                                0,
                                "supervise in this process until the launch ends\n"
                                "(with --server: follow it there)"};
const cli_opt_t cli_opt_api_version = {CLI_O_API_VERSION,
                                       "api-version",
                                       0,
                                       "V",
                                       CLI_VAL_WORD,
                                       NULL,
                                       0,
                                       0,
                                       "REST version of the body, v0.0.NN (default v0.0.38)"};
const cli_opt_t cli_opt_state = {CLI_O_STATE,
                                 "state",
                                 0,
                                 "STATE",
                                 CLI_VAL_STATE,
                                 NULL,
                                 0,
                                 0,
                                 "only launches in this state (RUNNING, DONE, ...)"};
const cli_opt_t cli_opt_site = {
    CLI_O_SITE, "site", 0, "SITE", CLI_VAL_WORD, NULL, 0, 0, "only launches of this site"};
const cli_opt_t cli_opt_study = {
    CLI_O_STUDY, "study", 0, "STUDY", CLI_VAL_WORD, NULL, 0, 0, "only launches of this study"};
const cli_opt_t cli_opt_cluster_filter = {
    CLI_O_CLUSTER, "cluster", 0, "NAME", CLI_VAL_WORD, NULL, 0, 0, "only launches of this cluster"};
const cli_opt_t cli_opt_cluster = {CLI_O_CLUSTER,
                                   "cluster",
                                   0,
                                   "NAME",
                                   CLI_VAL_WORD,
                                   NULL,
                                   0,
                                   0,
                                   "cluster of a request naming none (first)"};
const cli_opt_t cli_opt_live = {CLI_O_LIVE,
                                "live",
                                0,
                                NULL,
                                CLI_VAL_NONE,
                                NULL,
                                0,
                                0,
                                "only launches that have not ended (local store only)"};
const cli_opt_t cli_opt_terminal = {CLI_O_TERMINAL,
                                    "terminal",
                                    0,
                                    NULL,
                                    CLI_VAL_NONE,
                                    NULL,
                                    0,
                                    0,
                                    "only launches that have ended (local store only)"};
const cli_opt_t cli_opt_limit = {CLI_O_LIMIT,
                                 "limit",
                                 0,
                                 "N",
                                 CLI_VAL_WORD,
                                 NULL,
                                 0,
                                 0,
                                 "print at most N (1-1000, default 100)"};
const cli_opt_t cli_opt_cursor = {
    CLI_O_CURSOR,
    "cursor",
    0,
    "CURSOR",
    CLI_VAL_WORD,
    NULL,
    0,
    0,
    "the next page: the cursor the previous page printed\n(with --sort created --reverse only)"};
const cli_opt_t cli_opt_sort = {CLI_O_SORT,
                                "sort",
                                0,
                                "FIELD",
                                CLI_VAL_CHOICE,
                                "created updated state id",
                                0,
                                0,
                                "order by FIELD: created (the default) and updated\n"
                                "newest first, state in the state machine's order,\n"
                                "id A to Z; ties newest first"};
const cli_opt_t cli_opt_reverse = {'r',
                                   "reverse",
                                   'r',
                                   NULL,
                                   CLI_VAL_NONE,
                                   NULL,
                                   0,
                                   0,
                                   "the other way round (--sort created --reverse:\n"
                                   "oldest first, the store's own order, in pages)"};
const cli_opt_t cli_opt_stderr = {CLI_O_STDERR,
                                  "stderr",
                                  0,
                                  NULL,
                                  CLI_VAL_NONE,
                                  NULL,
                                  0,
                                  0,
                                  "the job's standard error instead of its output"};
const cli_opt_t cli_opt_follow = {'f',
                                  "follow",
                                  'f',
                                  NULL,
                                  CLI_VAL_NONE,
                                  NULL,
                                  0,
                                  0,
                                  "print new output as it comes, until the launch ends"};
const cli_opt_t cli_opt_listen = {
    CLI_O_LISTEN,
    "listen",
    0,
    "ADDR:PORT",
    CLI_VAL_WORD,
    NULL,
    0,
    0,
    "address to listen on; without TLS only loopback\n(127.0.0.1, [::1])"};
const cli_opt_t cli_opt_tokens = {
    CLI_O_TOKENS,
    "tokens",
    0,
    "FILE",
    CLI_VAL_INFILE,
    NULL,
    0,
    0,
    "0600 file of bearer tokens, one\n`<caller-name> <token> [admin]` a line"};
const cli_opt_t cli_opt_tls_cert = {CLI_O_TLS_CERT,
                                    "tls-cert",
                                    0,
                                    "FILE",
                                    CLI_VAL_INFILE,
                                    NULL,
                                    0,
                                    0,
                                    "PEM certificate (chain): serve HTTPS on --listen"};
const cli_opt_t cli_opt_tls_key = {CLI_O_TLS_KEY,
                                   "tls-key",
                                   0,
                                   "FILE",
                                   CLI_VAL_INFILE,
                                   NULL,
                                   0,
                                   0,
                                   "PEM key of --tls-cert, not readable by others"};
const cli_opt_t cli_opt_socket = {
    CLI_O_SOCKET,
    "socket",
    0,
    "PATH",
    CLI_VAL_OUTFILE,
    NULL,
    0,
    0,
    "also (or only) serve on a Unix socket (mode:\nserver.socket_mode, 0660)"};
const cli_opt_t cli_opt_socket_group = {
    CLI_O_SOCKET_GROUP,
    "socket-group",
    0,
    "GROUP",
    CLI_VAL_WORD,
    NULL,
    0,
    0,
    "group of the socket (its members may use the API\nwithout a token)"};
const cli_opt_t cli_opt_probe_job = {CLI_O_PROBE_JOB,
                                     "probe-job",
                                     0,
                                     NULL,
                                     CLI_VAL_NONE,
                                     NULL,
                                     0,
                                     0,
                                     "submit the probe job (uses the cluster)"};
const cli_opt_t cli_opt_probe_timeout = {CLI_O_PROBE_TIMEOUT,
                                         "probe-timeout",
                                         0,
                                         "DURATION",
                                         CLI_VAL_DURATION,
                                         NULL,
                                         0,
                                         0,
                                         "wait at most this long for it (90, 2m; a bare\nnumber is "
                                         "seconds; default 60, 1s to 1h); then\nit is cancelled"};
const cli_opt_t cli_opt_ready = {CLI_O_READY,
                                 "ready",
                                 0,
                                 NULL,
                                 CLI_VAL_NONE,
                                 NULL,
                                 0,
                                 0,
                                 "probe /v1/readyz instead of /v1/healthz"};
const cli_opt_t cli_opt_timeout = {
    CLI_O_TIMEOUT,
    "timeout",
    0,
    "DURATION",
    CLI_VAL_DURATION,
    NULL,
    0,
    0,
    "give up after this long (10s, 1m; a bare number\nis seconds; default 5, 1s to 5m)"};
const cli_opt_t cli_opt_key = {CLI_O_KEY,
                               "key",
                               0,
                               "FILE",
                               CLI_VAL_INFILE,
                               NULL,
                               0,
                               0,
                               "HS256: the key file (Slurm's jwt_hs256.key);\nRS256: a PEM key"};
const cli_opt_t cli_opt_user = {
    CLI_O_USER, "user", 0, "USER", CLI_VAL_WORD, NULL, 0, 0, "the Slurm user the token names"};
const cli_opt_t cli_opt_lifespan = {
    CLI_O_LIFESPAN,
    "lifespan",
    0,
    "DURATION",
    CLI_VAL_DURATION,
    NULL,
    0,
    0,
    "how long the token is valid (30m, 2h, 1d; a bare\nnumber is seconds; default 1800)"};
const cli_opt_t cli_opt_alg = {CLI_O_ALG,
                               "alg",
                               0,
                               "ALG",
                               CLI_VAL_CHOICE,
                               "HS256 RS256",
                               0,
                               0,
                               "HS256 or RS256 (check: default from the key)"};
const cli_opt_t cli_opt_kid = {
    CLI_O_KID, "kid", 0, "KID", CLI_VAL_WORD, NULL, 0, 0, "key id for the token's header"};
const cli_opt_t cli_opt_ref_format = {
    CLI_O_FORMAT,
    "format",
    0,
    "FORMAT",
    CLI_VAL_CHOICE,
    "markdown json-schema man",
    0,
    0,
    "markdown (default), json-schema, or man: the\nsluice.yaml(5) page"};
const cli_opt_t cli_opt_init_output = {CLI_O_OUT,
                                       "out",
                                       0,
                                       "FILE",
                                       CLI_VAL_OUTFILE,
                                       NULL,
                                       0,
                                       0,
                                       "write FILE (mode 0640), not the standard output;\n"
                                       "an existing FILE is refused unless --force"};
const cli_opt_t cli_opt_force = {
    CLI_O_FORCE, "force", 0, NULL, CLI_VAL_NONE, NULL, 0, 0, "replace an existing --out FILE"};
