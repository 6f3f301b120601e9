/* SPDX-License-Identifier: Apache-2.0 */
/* auth.h - internal helpers of the token module (auth_token.c), shared by
 * auth.c (libjwt), auth_source.c (the token source), the fuzz target and
 * the CLI. */
#ifndef SLUICE_AUTH_INTERNAL_H
#define SLUICE_AUTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <jansson.h>

#include <sluice/auth.h>
#include <sluice/error.h>

#include "base/wipe.h"

/* Decode base64url (padding and the standard alphabet tolerated).  *out is
 * NUL-terminated; caller frees with free().  SLUICE_EINVAL on bad input. */
sluice_err auth_b64url_decode(const char *in, size_t len, char **out, size_t *out_len);

/* Split a compact JWT and decode header and claims without verifying.
 * Either output may be NULL; outputs are new references. */
sluice_err
auth_decode(const char *token, json_t **header_out, json_t **claims_out, sluice_error_t *err);

/* Read an integer (or real) claim; 1 when present. */
int auth_claim_int(const json_t *claims, const char *name, int64_t *out);

/* Read the token file at `path` (permissions checked; `strict`: group or
 * other read access is an error, else a warning) and parse its token.
 * *out is a new allocation (caller wipes it with wipe_str_free());
 * *st_out (may be NULL) receives the file's identity as read. */
sluice_err auth_load_token_file(
    const char *path, int strict, char **out, struct stat *st_out, sluice_error_t *err);

/* True when s[0..len) has the shape of a compact JWS: three base64url
 * parts, the first two non-empty. */
int auth_token_shaped(const char *s, size_t len);

/* Run the token command `argv` (argv[0] absolute; no shell) with a timeout
 * (0: SLUICE_AUTH_COMMAND_TIMEOUT_MS) and take the token from its stdout
 * (sluice_token_parse() forms, decodable header and claims).  *out is a
 * new allocation (caller wipes it with wipe_str_free()).  SLUICE_EAUTH
 * when the command fails, times out (killed) or prints no token; the
 * error names argv[0] and quotes the first line of its stderr, never its
 * stdout. */
sluice_err
auth_run_command(const char *const *argv, long timeout_ms, char **out, sluice_error_t *err);

#endif /* SLUICE_AUTH_INTERNAL_H */
