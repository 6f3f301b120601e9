/* SPDX-License-Identifier: Apache-2.0 */
/* remote.h - the CLI's side of `--server URL|unix:/path`: status, ls,
 * cancel, logs and launch sent to a running `sluice serve` over its /v1 API
 * instead of the local store.
 *
 * Notes:
 * - Every byte goes through src/transport/http.c (libcurl stays there).  Plain http://
 *   is refused for a non-loopback host by that module, so a bearer token
 *   never travels in clear text off this machine.
 * - Exit codes (sysexits), the same as the local-store path where both
 *   exist: 400, 409, 413, 415 and 422 answers -> 65 (bad input); 401 and
 *   403 -> 77 (permission); 404 -> 69, like an unknown launch in the local
 *   store; 5xx, 503 and an unreachable server -> 69; a log that cannot be
 *   read (409 log-refused, 410 log-gone) -> 74, as `sluice logs` locally;
 *   an answer that is not what the API documents -> 76.
 * - The token (from --api-token-file or $SLUICE_API_TOKEN_FILE) is read once
 *   into memory, wiped on close and never printed.  A token file that does
 *   not exist is 66, one that is empty or malformed 78.
 * - The options themselves are parsed with every other (args.c).
 */
#ifndef SLUICE_CLI_REMOTE_H
#define SLUICE_CLI_REMOTE_H

#include <stddef.h>

#include <jansson.h>

typedef struct cli_remote cli_remote_t;

/* The service options (--server and the rest), filled by the parser. */
typedef struct {
    const char *server;     /* --server; NULL: $SLUICE_SERVER; NULL again: local store */
    const char *token_file; /* --api-token-file; NULL: $SLUICE_API_TOKEN_FILE */
    const char *ca_file;    /* --api-ca; NULL: $SLUICE_API_CA */
} cli_remote_opts_t;

/* Fill what the flags left unset from the environment; 1 when a server is
 * configured (the command then goes to it), 0 for the local store. */
int cli_remote_wanted(cli_remote_opts_t *o);

/* Connect (lazily: nothing is sent yet) and read the token.  Returns 0, or
 * the sysexit after printing the error. */
int cli_remote_open(const cli_remote_opts_t *o, cli_remote_t **out);

void cli_remote_close(cli_remote_t *r);

/* One JSON exchange.  `path` starts with "/v1/"; `query` is encoded,
 * without '?', or NULL; `body` is JSON text or NULL.  On a 2xx answer
 * *status gets it and *out the parsed body (new reference; NULL when the
 * body is empty) and 0 is returned.  Otherwise the problem is printed as
 * "sluice: <server>: <title>: <detail> (field ...)" and the sysexit
 * returned. */
int cli_remote_json(cli_remote_t *r,
                    const char *method,
                    const char *path,
                    const char *query,
                    const char *body,
                    long *status,
                    json_t **out);

/* A streaming GET: every byte of a 2xx answer goes to on_data (return
 * non-zero to stop).  Returns 0 when the stream ended or was stopped, else
 * the sysexit after printing the problem.  *ended is 1 when the server
 * closed the stream, 0 when on_data stopped it. */
int cli_remote_stream(cli_remote_t *r,
                      const char *path,
                      const char *query,
                      const char *accept,
                      const char *last_event_id,
                      int (*on_data)(const char *data, size_t len, void *arg),
                      void *arg,
                      int *ended);

/* Read the bearer token from `path` into `out`: the first line that is
 * neither empty nor a comment; a line of two words (the service's
 * `<caller> <token>` format) gives its second word.  A file writable by
 * group or others is refused.  Returns 0, or the sysexit after printing
 * the error (the token is never printed). */
int cli_remote_read_token(const char *path, char *out, size_t size);

/* The sysexit for an HTTP status of a problem answer (see Notes). */
int cli_remote_status_exit(long status);

/* Percent-encode `s` into `out` (at most `size` bytes with the NUL); 0, or
 * -1 when it does not fit. */
int cli_remote_escape(const char *s, char *out, size_t size);

/* `sluice launch --server`: POST the request file, and with `wait` follow
 * the launch to its end (launch_remote.c).  Returns the launch's result
 * code with `wait`, 0 without, or a sysexit after printing the error. */
int cli_launch_remote(
    const cli_remote_opts_t *o, const char *request_path, int wait, int json, double heartbeat_s);

#endif /* SLUICE_CLI_REMOTE_H */
