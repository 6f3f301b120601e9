/* SPDX-License-Identifier: Apache-2.0 */
/* auth_source.c - the token source (sluice_auth_t): where the token comes
 * from (a token file, the environment, a command, or minted from an
 * HS256/RS256 key),
 * the cached current token, and when it is re-read or re-minted.
 *
 * Caching policy: a token file is re-read when its identity (device,
 * inode, size, mtime) changed; an environment token is read once; a minted
 * token is re-minted after 80% of its lifetime; a command runs again when
 * the token is within renew_margin() of its exp (a failed run waits
 * SLUICE_AUTH_COMMAND_RETRY_S, keeping a token that is still valid).  sluice_auth_invalidate()
 * (after an AUTH failure) drops the cached token, and for keys the key, so
 * the next use reads everything again.
 *
 * Identity: the user is the options' user, or the first token's own (its
 * `sun`, else `username` claim); a user taken from a token is fixed, and
 * a later token that names another user is refused, never used.  With
 * token_names_user (version 3) the options' user is held to the same
 * rule.  A proxy (SLUICE_AUTH_PROXY) has no token of its own: it asks its
 * base for every token and names its own user in X-SLURM-USER-NAME.
 *
 * Notes:
 * - Every entry point that reads or drops the token takes the source's
 *   lock; refresh_locked() runs with it held.
 * - The token never reaches a log line: messages name the source (file or
 *   variable) and the expiry only.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/auth.h>
#include <sluice/log.h>

#include "auth.h"
#include "base/opts.h"

#define DEFAULT_WARN_BEFORE 300

struct sluice_auth {
    pthread_mutex_t lock;
    sluice_auth_kind kind;
    char *user;             /* NULL only until the first token names it */
    const char *user_claim; /* "sun"/"username": taken from the first token; NULL: options */
    char *path;
    char *env_name;
    char *kid;
    char **argv; /* SLUICE_AUTH_COMMAND, NULL-terminated */
    long cmd_timeout_ms;
    int64_t retry_after;    /* a failed command runs again from then on */
    sluice_error_t cmd_err; /* why it failed (names argv[0] and its stderr, never a token) */
    unsigned long fetches;
    long lifespan;
    long warn_before;
    int strict;
    bool must_name;      /* token_names_user: the options' user must be the token's */
    sluice_auth_t *base; /* SLUICE_AUTH_PROXY: the source of every token (borrowed) */
    sluice_clock_fn clock;
    void *clock_arg;

    unsigned char *key; /* HS256 secret or RS256 PEM */
    size_t key_len;

    char *token; /* current token; NULL when none cached */
    int64_t iat; /* minted tokens: issue time */
    int64_t exp; /* 0 when unknown */
    int64_t warned_exp;
    struct stat ident;   /* token file identity when it was read */
    struct stat refused; /* the last token file refused for its user (logged once) */
};

static int64_t now_of(const sluice_auth_t *a)
{
    if (a->clock != NULL)
        return a->clock(a->clock_arg);
    return (int64_t)time(NULL);
}

/* ---- token source ---------------------------------------------------- */

static const char *source_name(const sluice_auth_t *a)
{
    if (a->kind == SLUICE_AUTH_COMMAND)
        return a->argv[0];
    if (a->kind == SLUICE_AUTH_PROXY)
        return source_name(a->base);
    return a->path != NULL ? a->path : a->env_name;
}

/* A command's token is renewed this long before its exp: the larger of
 * 60 s and 10% of its lifetime (exp - iat). */
static int64_t renew_margin(const sluice_auth_t *a)
{
    int64_t tenth = a->exp > a->iat ? (a->exp - a->iat) / 10 : 0;

    return tenth > 60 ? tenth : 60;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void forget_token(sluice_auth_t *a)
{
    wipe_str_free(a->token);
    a->token = NULL;
    a->exp = 0;
    a->iat = 0;
}

static sluice_err load_key(sluice_auth_t *a, sluice_error_t *err)
{
    unsigned char *key = NULL;
    size_t len = 0;
    sluice_err rc;

    if ((rc = sluice_key_load(a->path, a->strict, &key, &len, err)) != SLUICE_OK)
        return rc;
    /* RFC 7518, section 3.2: an HS256 key is at least the size of the
     * SHA-256 output, 256 bits (SLUICE_HS256_KEY_MIN bytes). */
    if (a->kind == SLUICE_AUTH_HS256_KEY && len < SLUICE_HS256_KEY_MIN) {
        wipe_free(key, len);
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "key file %s: an HS256 key of %zu bytes is too short: at least %d "
                             "bytes (256 bits, RFC 7518 section 3.2)",
                             a->path, len, SLUICE_HS256_KEY_MIN);
    }
    wipe_free(a->key, a->key_len);
    a->key = key;
    a->key_len = len;
    return SLUICE_OK;
}

/* The user of a token just read.  The first one names the source's user
 * when the options did not; after that a token must name that same user.
 * Called with a->lock held (or before the source is shared). */
static sluice_err
check_user(sluice_auth_t *a, const char *tok, const struct stat *st, sluice_error_t *err)
{
    char user[SLUICE_TOKEN_USER_MAX];
    const char *claim = NULL;
    sluice_error_t uerr = SLUICE_ERROR_INIT;
    sluice_err rc;

    if (a->user != NULL && a->user_claim == NULL && !a->must_name)
        return SLUICE_OK; /* named by the options: the token is the site's business */
    rc = sluice_token_user(tok, user, sizeof(user), &claim, &uerr);
    if (a->user == NULL) {
        if (rc != SLUICE_OK)
            return sluice_errorf(err, SLUICE_ECONFIG,
                                 "auth: no user given, and the token from %s cannot name one: %s",
                                 source_name(a), uerr.text);
        if ((a->user = strdup(user)) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
        a->user_claim = claim;
        sluice_log(SLUICE_LOG_INFO, "slurm user %s taken from the `%s` claim of the token from %s",
                   a->user, claim, source_name(a));
        return SLUICE_OK;
    }
    if (rc == SLUICE_OK && strcmp(user, a->user) == 0)
        return SLUICE_OK;
    if (st == NULL || !same_file(st, &a->refused)) {
        if (st != NULL)
            a->refused = *st;
        sluice_log(SLUICE_LOG_ERR,
                   "critical: the token from %s names %s%s, not %s (%s): refused; restart "
                   "sluice to change its Slurm identity",
                   source_name(a), rc == SLUICE_OK ? "user " : "",
                   rc == SLUICE_OK ? user : "no user", a->user,
                   a->user_claim != NULL ? "the user taken from the first token"
                                         : "the user it must name");
    }
    return sluice_errorf(
        err, SLUICE_EAUTH, "auth: the token from %s names %s%s, not %s (%s); refused",
        source_name(a), rc == SLUICE_OK ? "user " : "", rc == SLUICE_OK ? user : "no user", a->user,
        a->user_claim != NULL ? "the user taken from the first token" : "the user it must name");
}

static void note_expiry(sluice_auth_t *a, int64_t now)
{
    json_t *c = NULL;
    int64_t exp = 0;

    if (a->exp == 0 && auth_decode(a->token, NULL, &c, NULL) == SLUICE_OK &&
        auth_claim_int(c, "exp", &exp))
        a->exp = exp;
    json_decref(c);
    if (a->exp == 0 || a->warned_exp == a->exp)
        return;
    if (a->exp <= now) {
        a->warned_exp = a->exp;
        sluice_log(SLUICE_LOG_WARNING, "slurm token expired %lld s ago (source=%s)",
                   (long long)(now - a->exp), source_name(a));
    } else if (a->exp - now <= a->warn_before) {
        a->warned_exp = a->exp;
        sluice_log(SLUICE_LOG_WARNING, "slurm token expires in %lld s (source=%s)",
                   (long long)(a->exp - now), source_name(a));
    }
}

/* Run the command for a new token; keep the current one while it is valid
 * when the run fails.  Called with a->lock held. */
static sluice_err run_command_locked(sluice_auth_t *a, int64_t now, sluice_error_t *err)
{
    sluice_error_t cerr = SLUICE_ERROR_INIT;
    json_t *c = NULL;
    char *tok = NULL;
    int64_t v = 0;
    bool valid = a->token != NULL && (a->exp == 0 || a->exp > now);
    sluice_err rc;

    if (now < a->retry_after) {
        if (valid)
            return SLUICE_OK;
        return sluice_errorf(err, a->cmd_err.code, "%s (not run again before %lld s)",
                             a->cmd_err.text, (long long)(a->retry_after - now));
    }
    if ((rc = auth_run_command((const char *const *)a->argv, a->cmd_timeout_ms, &tok, &cerr)) ==
        SLUICE_OK)
        rc = check_user(a, tok, NULL, &cerr);
    if (rc != SLUICE_OK) {
        wipe_str_free(tok);
        a->retry_after = now + SLUICE_AUTH_COMMAND_RETRY_S;
        a->cmd_err = cerr;
        if (!valid)
            return sluice_errorf(err, cerr.code, "%s", cerr.text);
        sluice_log(SLUICE_LOG_WARNING,
                   "renewing the slurm token failed, the current one stays in use (expires in "
                   "%lld s): %s",
                   (long long)(a->exp - now), cerr.text);
        return SLUICE_OK;
    }
    forget_token(a);
    a->token = tok;
    a->retry_after = 0;
    a->fetches++;
    if (auth_decode(tok, NULL, &c, NULL) == SLUICE_OK) {
        a->exp = auth_claim_int(c, "exp", &v) ? v : 0;
        a->iat = auth_claim_int(c, "iat", &v) && v <= now ? v : now;
    }
    json_decref(c);
    if (a->exp != 0)
        sluice_log(SLUICE_LOG_INFO, "rest.jwt_command %s gave a slurm token; it expires in %lld s",
                   a->argv[0], (long long)(a->exp - now));
    else
        sluice_log(SLUICE_LOG_WARNING,
                   "rest.jwt_command %s gave a slurm token without exp: it is renewed only after "
                   "an authentication failure",
                   a->argv[0]);
    return SLUICE_OK;
}

/* Make a->token current.  Called with a->lock held. */
static sluice_err refresh_locked(sluice_auth_t *a, sluice_error_t *err)
{
    int64_t now = now_of(a);
    sluice_err rc = SLUICE_OK;
    char *tok = NULL;
    struct stat st;

    switch (a->kind) {
    case SLUICE_AUTH_TOKEN_FILE:
        if (a->token != NULL && stat(a->path, &st) == 0 && same_file(&st, &a->ident))
            break;
        if ((rc = auth_load_token_file(a->path, a->strict, &tok, &st, err)) != SLUICE_OK)
            return rc;
        if ((rc = check_user(a, tok, &st, err)) != SLUICE_OK) {
            wipe_str_free(tok);
            forget_token(a); /* the old one is not used either: the file has changed */
            return rc;
        }
        if (a->token != NULL)
            sluice_log(SLUICE_LOG_INFO, "token file %s re-read", a->path);
        forget_token(a);
        a->token = tok;
        a->ident = st;
        a->fetches++;
        break;
    case SLUICE_AUTH_ENV: {
        const char *v;
        if (a->token != NULL)
            break;
        v = getenv(a->env_name);
        if (v == NULL || v[0] == '\0')
            return sluice_errorf(err, SLUICE_EAUTH, "environment variable %s is not set",
                                 a->env_name);
        if ((rc = sluice_token_parse(v, strlen(v), &tok, err)) != SLUICE_OK) {
            sluice_error_prefix(err, "environment variable %s", a->env_name);
            return rc;
        }
        if ((rc = check_user(a, tok, NULL, err)) != SLUICE_OK) {
            wipe_str_free(tok);
            return rc;
        }
        a->token = tok;
        a->fetches++;
        break;
    }
    case SLUICE_AUTH_HS256_KEY:
    case SLUICE_AUTH_RS256_KEY: {
        sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
        if (a->token != NULL && now - a->iat < a->lifespan * 8 / 10)
            break;
        if (a->key == NULL && (rc = load_key(a, err)) != SLUICE_OK)
            return rc;
        m.alg = a->kind == SLUICE_AUTH_HS256_KEY ? SLUICE_JWT_HS256 : SLUICE_JWT_RS256;
        m.key = a->key;
        m.key_len = a->key_len;
        m.user = a->user;
        m.lifespan = a->lifespan;
        m.kid = a->kind == SLUICE_AUTH_RS256_KEY ? a->kid : NULL;
        m.now = now;
        if ((rc = sluice_token_mint(&m, &tok, err)) != SLUICE_OK)
            return rc;
        forget_token(a);
        a->token = tok;
        a->iat = now;
        a->exp = now + a->lifespan;
        a->fetches++;
        sluice_log(SLUICE_LOG_DEBUG, "minted a slurm token for user=%s lifespan=%ld", a->user,
                   a->lifespan);
        break;
    }
    case SLUICE_AUTH_COMMAND:
        if (a->token != NULL && (a->exp == 0 || now < a->exp - renew_margin(a)))
            break;
        if ((rc = run_command_locked(a, now, err)) != SLUICE_OK)
            return rc;
        break;
    default:
        return sluice_errorf(err, SLUICE_EINVAL, "auth: unknown token source kind");
    }
    note_expiry(a, now);
    return SLUICE_OK;
}

static sluice_err copy_argv(sluice_auth_t *a, const char *const *argv, sluice_error_t *err)
{
    size_t n = 0;

    while (argv[n] != NULL)
        n++;
    if ((a->argv = calloc(n + 1, sizeof(*a->argv))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
    for (size_t i = 0; i < n; i++)
        if ((a->argv[i] = strdup(argv[i])) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
    return SLUICE_OK;
}

sluice_err sluice_auth_new(sluice_auth_t **out, const sluice_auth_opts_t *opts, sluice_error_t *err)
{
    sluice_auth_t *a = NULL;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: no options");
    if ((rc = opts_check_version("auth", opts->version, SLUICE_AUTH_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    if (opts->kind < SLUICE_AUTH_TOKEN_FILE || opts->kind > SLUICE_AUTH_PROXY ||
        (opts->kind == SLUICE_AUTH_COMMAND && opts->version < 2) ||
        (opts->kind == SLUICE_AUTH_PROXY && opts->version < 3))
        return sluice_errorf(err, SLUICE_EINVAL, "auth: unknown token source kind %d",
                             (int)opts->kind);
    if (opts->kind == SLUICE_AUTH_COMMAND) {
        if (opts->argv == NULL || opts->argv[0] == NULL || opts->argv[0][0] != '/')
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "auth: a token command needs an argv whose first item is an "
                                 "absolute path");
        if (opts->command_timeout_ms < 0)
            return sluice_errorf(err, SLUICE_EINVAL, "auth: command_timeout_ms is negative");
    } else if (opts->kind == SLUICE_AUTH_PROXY) {
        if (opts->base == NULL || opts->base->kind == SLUICE_AUTH_PROXY)
            return sluice_errorf(err, SLUICE_EINVAL,
                                 "auth: a proxy needs a base source that is not itself a proxy");
    } else if (opts->kind != SLUICE_AUTH_ENV && (opts->path == NULL || opts->path[0] == '\0')) {
        return sluice_errorf(err, SLUICE_EINVAL, "auth: a token or key file path is required");
    }
    if (opts->lifespan < 0 || opts->warn_before_expiry < 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "auth: lifespan and warn_before_expiry must "
                             "not be negative");
    if ((opts->kind == SLUICE_AUTH_HS256_KEY || opts->kind == SLUICE_AUTH_RS256_KEY) &&
        (opts->user == NULL || opts->user[0] == '\0'))
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "auth: a minted token needs a user (its `sun` claim); none given");
    if (opts->kind == SLUICE_AUTH_PROXY && (opts->user == NULL || opts->user[0] == '\0'))
        return sluice_errorf(err, SLUICE_ECONFIG,
                             "auth: a proxy needs the user it names (X-SLURM-USER-NAME)");
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
    pthread_mutex_init(&a->lock, NULL);
    a->kind = opts->kind;
    a->user = opts->user != NULL && opts->user[0] != '\0' ? strdup(opts->user) : NULL;
    a->path = opts->path != NULL ? strdup(opts->path) : NULL;
    a->env_name = strdup(opts->env_name != NULL ? opts->env_name : "SLURM_JWT");
    a->kid = strdup(opts->kid != NULL ? opts->kid : "sluice");
    if ((opts->user != NULL && opts->user[0] != '\0' && a->user == NULL) || a->env_name == NULL ||
        a->kid == NULL || (opts->path != NULL && a->path == NULL)) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
        goto out;
    }
    if (opts->kind == SLUICE_AUTH_COMMAND && (rc = copy_argv(a, opts->argv, err)) != SLUICE_OK)
        goto out;
    if (opts->kind == SLUICE_AUTH_COMMAND) /* version 2: checked above */
        a->cmd_timeout_ms = opts->command_timeout_ms;
    a->lifespan = opts->lifespan > 0 ? opts->lifespan : SLUICE_AUTH_DEFAULT_LIFESPAN;
    a->warn_before = opts->warn_before_expiry > 0 ? opts->warn_before_expiry : DEFAULT_WARN_BEFORE;
    a->strict = opts->strict_permissions;
    if (opts->version >= 3) {
        a->base = opts->kind == SLUICE_AUTH_PROXY ? opts->base : NULL;
        a->must_name = opts->token_names_user != 0 && a->user != NULL;
    }
    a->clock = opts->clock;
    a->clock_arg = opts->clock_arg;
    if (a->kind != SLUICE_AUTH_PROXY) {
        pthread_mutex_lock(&a->lock);
        rc = refresh_locked(a, err);
        pthread_mutex_unlock(&a->lock);
        if (rc != SLUICE_OK)
            goto out;
    }
    *out = a;
    a = NULL;
out:
    sluice_auth_free(a);
    return rc;
}

void sluice_auth_free(sluice_auth_t *a)
{
    if (a == NULL)
        return;
    forget_token(a);
    wipe_free(a->key, a->key_len);
    free(a->user);
    free(a->path);
    free(a->env_name);
    free(a->kid);
    for (size_t i = 0; a->argv != NULL && a->argv[i] != NULL; i++)
        free(a->argv[i]);
    free(a->argv);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

sluice_err sluice_auth_token(sluice_auth_t *a, char **out, sluice_error_t *err)
{
    sluice_err rc;
    char *copy = NULL;

    if (a == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: no token source");
    if (a->kind == SLUICE_AUTH_PROXY)
        return sluice_auth_token(a->base, out, err);
    pthread_mutex_lock(&a->lock);
    rc = refresh_locked(a, err);
    if (rc == SLUICE_OK) {
        copy = strdup(a->token);
        if (copy == NULL)
            rc = sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
    }
    pthread_mutex_unlock(&a->lock);
    if (rc == SLUICE_OK)
        *out = copy;
    return rc;
}

sluice_err sluice_auth_headers(sluice_auth_t *a, char ***out, sluice_error_t *err)
{
    char *tok = NULL;
    char **h = NULL;
    size_t n;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: no output");
    if ((rc = sluice_auth_token(a, &tok, err)) != SLUICE_OK)
        return rc;
    h = calloc(3, sizeof(*h));
    if (h == NULL)
        goto nomem;
    n = strlen("X-SLURM-USER-NAME: ") + strlen(a->user) + 1;
    if ((h[0] = malloc(n)) == NULL)
        goto nomem;
    snprintf(h[0], n, "X-SLURM-USER-NAME: %s", a->user);
    n = strlen("X-SLURM-USER-TOKEN: ") + strlen(tok) + 1;
    if ((h[1] = malloc(n)) == NULL)
        goto nomem;
    snprintf(h[1], n, "X-SLURM-USER-TOKEN: %s", tok);
    *out = h;
    h = NULL;
    rc = SLUICE_OK;
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
out:
    sluice_auth_headers_free(h);
    wipe_str_free(tok);
    return rc;
}

void sluice_auth_headers_free(char **headers)
{
    size_t i;

    if (headers == NULL)
        return;
    for (i = 0; headers[i] != NULL; i++)
        wipe_str_free(headers[i]);
    free(headers);
}

void sluice_auth_invalidate(sluice_auth_t *a)
{
    if (a == NULL)
        return;
    if (a->kind == SLUICE_AUTH_PROXY) {
        sluice_auth_invalidate(a->base); /* the token is the base's */
        return;
    }
    pthread_mutex_lock(&a->lock);
    forget_token(a);
    if (a->kind == SLUICE_AUTH_HS256_KEY || a->kind == SLUICE_AUTH_RS256_KEY) {
        /* Re-read the key too: it may have been rotated. */
        wipe_free(a->key, a->key_len);
        a->key = NULL;
        a->key_len = 0;
    }
    memset(&a->ident, 0, sizeof(a->ident));
    pthread_mutex_unlock(&a->lock);
}

sluice_err
sluice_auth_expiry(sluice_auth_t *a, int64_t *exp_out, int64_t *remaining_out, sluice_error_t *err)
{
    sluice_err rc;
    int64_t exp = 0, now = 0;

    if (a == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: no token source");
    if (a->kind == SLUICE_AUTH_PROXY)
        return sluice_auth_expiry(a->base, exp_out, remaining_out, err);
    if (a->kind != SLUICE_AUTH_COMMAND) {
        pthread_mutex_lock(&a->lock);
        rc = refresh_locked(a, err);
    } else if (pthread_mutex_trylock(&a->lock) != 0) {
        /* A command source: never wait for a run (readiness and metrics
         * ask), and never start one while a token is cached. */
        return sluice_errorf(err, SLUICE_ESTATE, "auth: the token command is running");
    } else {
        rc = a->token != NULL ? SLUICE_OK : refresh_locked(a, err);
    }
    if (rc == SLUICE_OK) {
        exp = a->exp;
        now = now_of(a);
        if (exp == 0)
            rc = sluice_errorf(err, SLUICE_EAUTH, "auth: the token has no exp claim");
    }
    pthread_mutex_unlock(&a->lock);
    if (rc != SLUICE_OK)
        return rc;
    if (exp_out != NULL)
        *exp_out = exp;
    if (remaining_out != NULL)
        *remaining_out = exp - now;
    return SLUICE_OK;
}

const char *sluice_auth_user(const sluice_auth_t *a)
{
    return a != NULL && a->user != NULL ? a->user : "";
}

const char *sluice_auth_user_claim(const sluice_auth_t *a)
{
    return a != NULL ? a->user_claim : NULL;
}

sluice_auth_kind sluice_auth_source(const sluice_auth_t *a, const char **where_out)
{
    if (a == NULL)
        return (sluice_auth_kind)0;
    if (where_out != NULL)
        *where_out = source_name(a);
    return a->kind;
}

unsigned long sluice_auth_fetches(sluice_auth_t *a)
{
    unsigned long n;

    if (a == NULL)
        return 0;
    if (a->kind == SLUICE_AUTH_PROXY)
        return sluice_auth_fetches(a->base);
    pthread_mutex_lock(&a->lock);
    n = a->fetches;
    pthread_mutex_unlock(&a->lock);
    return n;
}

sluice_err
sluice_auth_opts_init(sluice_auth_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_auth_opts_t tmpl = SLUICE_AUTH_OPTS_INIT;
    /* Version 1 ends before argv, version 2 before base: a caller built for
     * either has the smaller struct. */
    size_t size = version == 1   ? offsetof(sluice_auth_opts_t, argv)
                  : version == 2 ? offsetof(sluice_auth_opts_t, base)
                                 : sizeof(tmpl);

    sluice_err rc = opts_init(opts, &tmpl, size, "auth", version, SLUICE_AUTH_OPTS_VERSION, err);

    if (rc == SLUICE_OK)
        opts->version = version;
    return rc;
}
