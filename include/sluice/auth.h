/* SPDX-License-Identifier: Apache-2.0 */
/* auth.h - where the Slurm JWT comes from, and token inspection.
 *
 * A token source (sluice_auth_t) hands out the token that goes into the
 * X-SLURM-USER-TOKEN header.  Sources:
 * - a token file holding the raw token or a line "SLURM_JWT=<token>" (what
 *   `scontrol token` prints); re-read whenever its inode, size or mtime
 *   change, so rotation needs no restart;
 * - an HS256 key file (Slurm's jwt_hs256.key, at least SLUICE_HS256_KEY_MIN
 *   bytes): tokens are minted locally with iat, exp and sun, and renewed
 *   after 80% of their lifetime;
 * - an RS256 private key (PEM): minted like HS256, with a `kid` header;
 * - an environment variable (SLURM_JWT by default);
 * - a proxy (options version 3): the token of another source (SlurmUser
 *   or root) with X-SLURM-USER-NAME naming another user, Slurm's
 *   documented way for SlurmUser or root to act as someone else;
 * - a command (argv, run directly: no shell) that prints the token on its
 *   standard output, e.g. `scontrol token username=sluice lifespan=3600`
 *   (raw token or "SLURM_JWT=<token>", at most SLUICE_AUTH_COMMAND_OUTPUT_MAX
 *   bytes).  It runs when there is no token yet, when the token is within
 *   the renewal margin of its `exp` (the larger of 60 s and 10% of its
 *   lifetime, exp - iat), and after sluice_auth_invalidate(); it is killed
 *   (its whole process group) after the timeout.  A failed run is not
 *   retried for SLUICE_AUTH_COMMAND_RETRY_S seconds (the same error is
 *   returned), and while the previous token is still valid it stays in
 *   use.  The command runs under the source's lock, in the thread that
 *   asked for the token: other callers of the same source wait for it, at
 *   most the timeout.
 *
 * Notes:
 * - Whoever holds the HS256 key can mint a token for any user, root
 *   included: the key is as powerful as root on the cluster.
 * - No function logs a token or a key, and error text never contains one.
 * - Permission rules (token and key files): group- or world-writable, or
 *   owned by a user other than the process user and root => refused.
 *   Group/world-readable token file => warning (error under
 *   strict_permissions).  Key files: world-readable => always an error,
 *   group-readable => warning (error under strict_permissions).
 */
#ifndef SLUICE_AUTH_H
#define SLUICE_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shortest HS256 key sluice mints with, in bytes.  RFC 7518 section
 * 3.2 asks for an HMAC key at least as long as the hash's output: SHA-256
 * gives 256 bits, so 32 bytes; a shorter key makes the signature easier to
 * forge than the hash is to break.  sluice_token_mint() refuses a shorter
 * HS256 key, and so does an HS256 key source (naming its file). */
#define SLUICE_HS256_KEY_MIN 32

typedef enum {
    SLUICE_AUTH_TOKEN_FILE = 1,
    SLUICE_AUTH_HS256_KEY,
    SLUICE_AUTH_RS256_KEY,
    SLUICE_AUTH_ENV,
    SLUICE_AUTH_COMMAND, /* options version 2 */
    SLUICE_AUTH_PROXY,   /* options version 3: another source's token, another user named */
} sluice_auth_kind;

typedef enum {
    SLUICE_JWT_HS256 = 1,
    SLUICE_JWT_RS256,
} sluice_jwt_alg;

/* Seconds since the epoch; injectable for tests. */
typedef int64_t (*sluice_clock_fn)(void *arg);

#define SLUICE_AUTH_DEFAULT_LIFESPAN 1800

/* SLUICE_AUTH_COMMAND: the default timeout, the most output read (a
 * longer output is refused), and the pause after a failed run. */
#define SLUICE_AUTH_COMMAND_TIMEOUT_MS 30000
#define SLUICE_AUTH_COMMAND_OUTPUT_MAX (64 * 1024)
#define SLUICE_AUTH_COMMAND_RETRY_S 10

typedef struct sluice_auth sluice_auth_t;

/* Options; start from SLUICE_AUTH_OPTS_INIT and fill what you need.  Strings are copied by
 * sluice_auth_new(). */
typedef struct {
    unsigned int version; /* SLUICE_AUTH_OPTS_VERSION: first, always */
    sluice_auth_kind kind;
    const char *user;        /* X-SLURM-USER-NAME and the `sun` claim of minted tokens; NULL:
                                the token's own user (see sluice_auth_new()) */
    const char *path;        /* token file or key file */
    const char *env_name;    /* SLUICE_AUTH_ENV: variable name; NULL: "SLURM_JWT" */
    const char *kid;         /* RS256: the `kid` header; NULL: "sluice" */
    long lifespan;           /* minted tokens, seconds; 0: 1800 */
    long warn_before_expiry; /* seconds; 0: 300 */
    int strict_permissions;  /* readable-by-group/others is an error, not a warning */
    sluice_clock_fn clock;   /* NULL: time(NULL) */
    void *clock_arg;
    /* version 2: */
    const char *const *argv; /* SLUICE_AUTH_COMMAND: NULL-terminated, argv[0] an absolute
                                path; copied by sluice_auth_new() */
    long command_timeout_ms; /* SLUICE_AUTH_COMMAND: 0: SLUICE_AUTH_COMMAND_TIMEOUT_MS */
    /* version 3: */
    /* SLUICE_AUTH_PROXY: the source whose token is sent (borrowed: it must
     * outlive this one).  Its user must be SlurmUser or root on the
     * cluster: Slurm lets only those name another user in
     * X-SLURM-USER-NAME.  `user` (required) is the user named; every
     * token, renewal and invalidation is the base's, so one token serves
     * the base and all its proxies. */
    sluice_auth_t *base;
    /* SLUICE_AUTH_TOKEN_FILE, _ENV, _COMMAND with `user` set: a token that
     * names another user (its `sun`, else `username` claim), or none, is
     * refused with SLUICE_EAUTH, as when the user is taken from the first
     * token.  0 (and version 1 and 2): the options' user is trusted and the
     * token is the site's business. */
    int token_names_user;
} sluice_auth_opts_t;

/* Every field but `version` zero: each one's documented default.  Declare options as
 * `sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;` and set what differs. */
#define SLUICE_AUTH_OPTS_VERSION 3
#define SLUICE_AUTH_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_AUTH_OPTS_VERSION)

/* Initialise `opts` as SLUICE_AUTH_OPTS_INIT does, for `version`
 * (pass SLUICE_AUTH_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_auth_opts_init(sluice_auth_opts_t *opts,
                                            unsigned int version,
                                            sluice_error_t *err);

/* Create a token source.  The file (if any) is read and checked now; a
 * command is run now.
 *
 * The user (sluice_auth_user()) is opts->user when set.  Without it, a
 * token file, variable or command gives it: the first token's `sun` claim, else its
 * `username` claim (what slurmctld reads).  That user is then fixed for the
 * source's life: a later token (a rotated file) that names another user,
 * or none, is refused with SLUICE_EAUTH and never used, so the identity
 * never changes silently.  A minted token needs opts->user.
 *
 * *out: caller frees with sluice_auth_free().  Errors: SLUICE_EINVAL
 * (options), SLUICE_EPERM (file permissions), SLUICE_EIO, SLUICE_EAUTH (no
 * usable token or key), SLUICE_ECONFIG (no user: opts->user is NULL and the
 * token names none, or a key source without opts->user), SLUICE_ENOMEM.  */
SLUICE_API sluice_err sluice_auth_new(sluice_auth_t **out,
                                      const sluice_auth_opts_t *opts,
                                      sluice_error_t *err);

/* NULL-safe. */
SLUICE_API void sluice_auth_free(sluice_auth_t *auth);

/* The current token, re-read or re-minted when needed.  *out is a copy:
 * caller frees with free().  Thread-safe. */
SLUICE_API sluice_err sluice_auth_token(sluice_auth_t *auth, char **out, sluice_error_t *err);

/* The two request headers "X-SLURM-USER-NAME: <user>" and
 * "X-SLURM-USER-TOKEN: <token>" as a NULL-terminated array.  *out: caller
 * frees with sluice_auth_headers_free().  Thread-safe. */
SLUICE_API sluice_err sluice_auth_headers(sluice_auth_t *auth, char ***out, sluice_error_t *err);

/* NULL-safe; wipes the strings before freeing them. */
SLUICE_API void sluice_auth_headers_free(char **headers);

/* Forget the cached token after an AUTH-classified failure: the next call
 * re-reads the file/variable or mints a new token.  Thread-safe. */
SLUICE_API void sluice_auth_invalidate(sluice_auth_t *auth);

/* Expiry of the current token (its `exp` claim, read without verifying the
 * signature) and the seconds left (negative when expired).  Either output
 * may be NULL.  SLUICE_EAUTH when the token has no exp.  A command source
 * answers from the cached token without running the command (it runs only
 * when no token is cached), and SLUICE_ESTATE at once while a run holds
 * the source, so that readiness and metrics never wait for it. */
SLUICE_API sluice_err sluice_auth_expiry(sluice_auth_t *auth,
                                         int64_t *exp_out,
                                         int64_t *remaining_out,
                                         sluice_error_t *err);

/* The user name sent in X-SLURM-USER-NAME (borrowed; valid until free). */
SLUICE_API const char *sluice_auth_user(const sluice_auth_t *auth);

/* Where sluice_auth_user() came from: NULL when the options named it,
 * "sun" or "username" when it was taken from that claim of the first
 * token.  Static string. */
SLUICE_API const char *sluice_auth_user_claim(const sluice_auth_t *auth);

/* The kind of the source; *where_out (may be NULL) receives what it reads:
 * the token or key file, the variable's name, or the command's argv[0]
 * (borrowed; valid until sluice_auth_free()).  0 for NULL. */
SLUICE_API sluice_auth_kind sluice_auth_source(const sluice_auth_t *auth, const char **where_out);

/* How many tokens the source has taken in so far: reads of the file or the
 * variable, tokens minted, runs of the command that gave a token. */
SLUICE_API unsigned long sluice_auth_fetches(sluice_auth_t *auth);

/* The longest user name a token may name, NUL included. */
#define SLUICE_TOKEN_USER_MAX 256

/* The Slurm user a token names, as slurmctld reads it: the `sun` claim,
 * else `username` (read without verifying the signature).  `user` (cap
 * bytes) receives it, *claim_out (may be NULL) the claim's name (static).
 * SLUICE_ENOTFOUND when the token names no user; SLUICE_EINVAL for a
 * malformed token or a claim that is not a user name (a non-empty string
 * without spaces, ':' or '/'). */
SLUICE_API sluice_err sluice_token_user(
    const char *token, char *user, size_t cap, const char **claim_out, sluice_error_t *err);

/* Extract the token from the text of a token file: the raw token, or the
 * value of a line "SLURM_JWT=<token>" ("export " allowed).  *out: caller
 * frees with free().  SLUICE_EINVAL when no token-shaped value is found;
 * the error text never quotes the input. */
SLUICE_API sluice_err sluice_token_parse(const char *text,
                                         size_t len,
                                         char **out,
                                         sluice_error_t *err);

/* Read and parse a token file under the permission rules above.  *out:
 * caller frees with free(). */
SLUICE_API sluice_err sluice_token_load(const char *path,
                                        int strict_permissions,
                                        char **out,
                                        sluice_error_t *err);

/* Read a key file under the key permission rules.  *out (caller frees with
 * free()) receives the raw bytes, *len_out their count. */
SLUICE_API sluice_err sluice_key_load(const char *path,
                                      int strict_permissions,
                                      unsigned char **out,
                                      size_t *len_out,
                                      sluice_error_t *err);

/* Decode a token without verifying it: *out is a new reference to
 * {"header": {...}, "claims": {...}}; the signature is never included.
 * SLUICE_EINVAL when the token is malformed. */
SLUICE_API sluice_err sluice_token_inspect(const char *token, json_t **out, sluice_error_t *err);

typedef struct {
    unsigned int version; /* SLUICE_TOKEN_MINT_OPTS_VERSION: first, always */
    sluice_jwt_alg alg;
    const unsigned char *key; /* HS256: raw secret; RS256: private key PEM */
    size_t key_len;
    const char *user; /* `sun` claim; required */
    long lifespan;    /* 0: 1800 */
    const char *kid;  /* header `kid`; NULL: none for HS256, "sluice" for RS256 */
    int64_t now;      /* iat; 0: time(NULL) */
} sluice_token_mint_opts_t;

/* Every field but `version` zero: each one's documented default.  Declare options as
 * `sluice_token_mint_opts_t o = SLUICE_TOKEN_MINT_OPTS_INIT;` and set what differs. */
#define SLUICE_TOKEN_MINT_OPTS_VERSION 1
#define SLUICE_TOKEN_MINT_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_TOKEN_MINT_OPTS_VERSION)

/* Initialise `opts` as SLUICE_TOKEN_MINT_OPTS_INIT does, for `version`
 * (pass SLUICE_TOKEN_MINT_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_token_mint_opts_init(sluice_token_mint_opts_t *opts,
                                                  unsigned int version,
                                                  sluice_error_t *err);

/* Mint a token with claims iat, exp = iat + lifespan, sun.  *out: caller
 * frees with free().  SLUICE_EINVAL for an HS256 key shorter than
 * SLUICE_HS256_KEY_MIN bytes. */
SLUICE_API sluice_err sluice_token_mint(const sluice_token_mint_opts_t *opts,
                                        char **out,
                                        sluice_error_t *err);

/* Verify the signature of `token` with `key` for the expected algorithm
 * (HS256: raw secret; RS256: public key PEM) and that exp > now (now 0:
 * time(NULL)).  SLUICE_EINVAL malformed, SLUICE_EAUTH bad signature, wrong
 * algorithm or expired. */
SLUICE_API sluice_err sluice_token_verify(const char *token,
                                          sluice_jwt_alg alg,
                                          const unsigned char *key,
                                          size_t key_len,
                                          int64_t now,
                                          sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_AUTH_H */
