/* SPDX-License-Identifier: Apache-2.0 */
/* server_access.h - who may talk to `sluice serve` and where it listens
 * (not installed): tokens, callers, TLS PEM files, listening sockets.
 */
#ifndef SLUICE_SERVER_ACCESS_H
#define SLUICE_SERVER_ACCESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <sluice/error.h>

#include "server_int.h"

/* Read the tokens file `path` into s->tokens (owned by the process's user
 * or root, mode 0600 or stricter, lines
 * `<caller> <token> [admin]`).  Errors name the line, never a token. */
sluice_err server_load_tokens(sluice_server_t *s, const char *path, sluice_error_t *err);
/* The tokens file's text[0..len) into tokens[*n..] (room for MAX_TOKENS in
 * all), as server_load_tokens() reads it; `name` (the file) is only for
 * the message when no line names a caller.  On an error, the entries
 * already added stay in tokens[0..*n): free them with
 * server_tokens_free().  Errors name the line, never a token. */
sluice_err server_parse_tokens(const char *name,
                               const char *text,
                               size_t len,
                               token_t *tokens,
                               size_t *n,
                               sluice_error_t *err);
/* Wipe and free tokens[0..n). */
void server_tokens_free(token_t *tokens, size_t n);
/* The tokens entry for an Authorization header value of `len` bytes as
 * sent (borrowed; valid until sluice_server_free), or NULL when it carries
 * no valid bearer token: the whole value must be "Bearer <token>", so a
 * NUL byte (len past its strlen) or anything after the token refuses. */
const token_t *server_authenticate(sluice_server_t *s, const char *authorization, size_t len);
/* The Unix socket peer on `fd` as a caller; 0, or -1 when unknown. */
int server_peer_caller(int fd, caller_t *out);
/* Wipe and free the tokens and the TLS key (at sluice_server_free). */
void server_access_free(sluice_server_t *s);
/* libmicrohttpd's logger (MHD_OPTION_EXTERNAL_LOGGER, cls the server): its
 * messages go to s->mhd_msg while s->starting, else to the debug log. */
void server_mhd_log(void *cls, const char *fmt, va_list ap);
/* Read a PEM file into a new buffer (caller wipes and frees). */
sluice_err
server_read_pem(const char *path, int is_key, char **out, size_t *len_out, sluice_error_t *err);
/* The checks of sluice_server_new's options that need no listener:
 * launcher, store and config given, a listen address or a socket, TLS
 * files in pairs and on a listen address, clusters[0] the launcher. */
sluice_err server_check_opts(const sluice_server_opts_t *opts, sluice_error_t *err);
/* Parse HOST:PORT or [ADDR]:PORT; plain HTTP only on loopback. */
sluice_err server_parse_listen(
    const char *listen, int tls, struct sockaddr_storage *ss, int *v6, sluice_error_t *err);
/* Listening sockets: the fd, or -1 with `err` set. */
int server_tcp_listen(const struct sockaddr_storage *ss,
                      int v6,
                      const char *listen_s,
                      sluice_error_t *err);
/* The port a listening TCP socket is bound to (0 when unknown). */
uint16_t server_bound_port(int fd);
int server_unix_listen(const char *path, unsigned mode, const char *group, sluice_error_t *err);

#endif /* SLUICE_SERVER_ACCESS_H */
