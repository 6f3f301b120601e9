/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c - Slurm JWT sources: token files, HS256/RS256 minting, environment.
 *
 * The only file of sluice that includes <jwt.h> (libjwt 1.10 API).  A token
 * source caches the current token and decides when to re-read (the file's
 * identity changed, or an invalidate after an AUTH failure) or re-mint (80%
 * of the lifetime passed).
 *
 * Notes:
 * - Claims are read without verifying the signature (sluice_token_inspect,
 *   expiry): the client may not hold the key.  That decoder is our own
 *   base64url + jansson code so that it can be fuzzed in isolation.
 * - Secrets never reach a log line or an error text: messages name the
 *   file or the claim, never the value.  Buffers holding secrets are wiped
 *   before they are freed.
 * - Verification checks the algorithm the caller expects before libjwt
 *   sees the token, so an RS256 public key is never used as an HMAC secret.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jwt.h>

#include <sluice/auth.h>
#include <sluice/log.h>

#include "auth.h"

#define MAX_TOKEN_FILE (64 * 1024)
#define DEFAULT_WARN_BEFORE 300

struct sluice_auth {
    pthread_mutex_t lock;
    sluice_auth_kind kind;
    char *user;
    char *path;
    char *env_name;
    char *kid;
    long lifespan;
    long warn_before;
    int strict;
    sluice_clock_fn clock;
    void *clock_arg;

    unsigned char *key; /* HS256 secret or RS256 PEM */
    size_t key_len;

    char *token; /* current token; NULL when none cached */
    int64_t iat; /* minted tokens: issue time */
    int64_t exp; /* 0 when unknown */
    int64_t warned_exp;
    struct stat ident; /* token file identity when it was read */
};

static void wipe_free(void *p, size_t n)
{
    if (p == NULL)
        return;
    explicit_bzero(p, n);
    free(p);
}

static void wipe_str(char *s)
{
    if (s != NULL)
        wipe_free(s, strlen(s));
}

static int64_t now_of(const sluice_auth_t *a)
{
    if (a->clock != NULL)
        return a->clock(a->clock_arg);
    return (int64_t)time(NULL);
}

/* ---- base64url and claim decoding ------------------------------------ */

static int b64val(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-' || c == '+')
        return 62;
    if (c == '_' || c == '/')
        return 63;
    return -1;
}

sluice_err auth_b64url_decode(const char *in, size_t len, char **out, size_t *out_len)
{
    char *dst;
    size_t i, n = 0;
    unsigned acc = 0;
    int bits = 0;

    while (len > 0 && in[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return SLUICE_EINVAL;
    dst = malloc(len * 3 / 4 + 2);
    if (dst == NULL)
        return SLUICE_ENOMEM;
    for (i = 0; i < len; i++) {
        int v = b64val((unsigned char)in[i]);
        if (v < 0) {
            free(dst);
            return SLUICE_EINVAL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            dst[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    dst[n] = '\0';
    *out = dst;
    *out_len = n;
    return SLUICE_OK;
}

static int is_token_char(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.' || c == '=';
}

/* A compact JWS: three base64url parts, the first two non-empty. */
static int token_shaped(const char *s, size_t len)
{
    size_t i, dots = 0, first = 0, second = 0;

    if (len == 0)
        return 0;
    for (i = 0; i < len; i++) {
        if (!is_token_char((unsigned char)s[i]))
            return 0;
        if (s[i] == '.') {
            dots++;
            if (dots == 1)
                first = i;
            else if (dots == 2)
                second = i;
        }
    }
    return dots == 2 && first > 0 && second > first + 1;
}

static sluice_err
decode_part(const char *p, size_t n, const char *what, json_t **out, sluice_error_t *err)
{
    char *raw = NULL;
    size_t raw_len = 0;
    json_error_t jerr;
    json_t *j;
    sluice_err rc;

    if ((rc = auth_b64url_decode(p, n, &raw, &raw_len)) != SLUICE_OK)
        return sluice_errorf(err, rc, "token: %s is not valid base64url", what);
    j = json_loadb(raw, raw_len, JSON_REJECT_DUPLICATES, &jerr);
    free(raw);
    if (j == NULL || !json_is_object(j)) {
        json_decref(j);
        return sluice_errorf(err, SLUICE_EINVAL, "token: %s is not a JSON object", what);
    }
    *out = j;
    return SLUICE_OK;
}

sluice_err
auth_decode(const char *token, json_t **header_out, json_t **claims_out, sluice_error_t *err)
{
    const char *d1, *d2;
    json_t *h = NULL;
    json_t *c = NULL;
    sluice_err rc;

    if (token == NULL || !token_shaped(token, strlen(token)))
        return sluice_errorf(err, SLUICE_EINVAL,
                             "token: not a JWT (want three base64url parts separated by '.')");
    d1 = strchr(token, '.');
    d2 = strchr(d1 + 1, '.');
    if ((rc = decode_part(token, (size_t)(d1 - token), "header", &h, err)) != SLUICE_OK)
        goto out;
    if ((rc = decode_part(d1 + 1, (size_t)(d2 - d1 - 1), "claims", &c, err)) != SLUICE_OK)
        goto out;
    if (header_out != NULL) {
        *header_out = h;
        h = NULL;
    }
    if (claims_out != NULL) {
        *claims_out = c;
        c = NULL;
    }
out:
    json_decref(h);
    json_decref(c);
    return rc;
}

int auth_claim_int(const json_t *claims, const char *name, int64_t *out)
{
    json_t *v = json_object_get(claims, name);

    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 1;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d > -9.2e18 && d < 9.2e18) {
            *out = (int64_t)d;
            return 1;
        }
    }
    return 0;
}

sluice_err sluice_token_inspect(const char *token, json_t **out, sluice_error_t *err)
{
    json_t *h = NULL;
    json_t *c = NULL;
    json_t *o = NULL;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "token: no output");
    if ((rc = auth_decode(token, &h, &c, err)) != SLUICE_OK)
        return rc;
    o = json_pack("{s:o s:o}", "header", h, "claims", c);
    if (o == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "token: out of memory");
    *out = o;
    return SLUICE_OK;
}

/* ---- token file text ------------------------------------------------- */

sluice_err sluice_token_parse(const char *text, size_t len, char **out, sluice_error_t *err)
{
    size_t i = 0;
    char *tok;

    if (text == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "token: no input");
    while (i < len) {
        size_t end = i, s, e;
        while (end < len && text[end] != '\n')
            end++;
        s = i;
        e = end;
        while (s < e && (text[s] == ' ' || text[s] == '\t' || text[s] == '\r'))
            s++;
        while (e > s && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
            e--;
        if (e - s >= 7 && memcmp(text + s, "export ", 7) == 0) {
            s += 7;
            while (s < e && text[s] == ' ')
                s++;
        }
        if (e - s >= 10 && memcmp(text + s, "SLURM_JWT=", 10) == 0) {
            s += 10;
            if (e - s >= 2 && (text[s] == '"' || text[s] == '\'') && text[e - 1] == text[s]) {
                s++;
                e--;
            }
        }
        if (e > s && text[s] != '#' && token_shaped(text + s, e - s)) {
            tok = malloc(e - s + 1);
            if (tok == NULL)
                return sluice_errorf(err, SLUICE_ENOMEM, "token: out of memory");
            memcpy(tok, text + s, e - s);
            tok[e - s] = '\0';
            *out = tok;
            return SLUICE_OK;
        }
        i = end + 1;
    }
    return sluice_errorf(err, SLUICE_EINVAL,
                         "token: no JWT found (want the raw token or a line SLURM_JWT=<token>)");
}

/* ---- files and permissions ------------------------------------------- */

static sluice_err
check_perms(const char *path, const struct stat *st, int is_key, int strict, sluice_error_t *err)
{
    uid_t me = geteuid();
    const char *what = is_key ? "key file" : "token file";

    if (!S_ISREG(st->st_mode))
        return sluice_errorf(err, SLUICE_EPERM, "%s %s: not a regular file", what, path);
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return sluice_errorf(err, SLUICE_EPERM, "%s %s: writable by group or others (mode %04o)",
                             what, path, (unsigned)(st->st_mode & 07777));
    if (st->st_uid != me && st->st_uid != 0)
        return sluice_errorf(err, SLUICE_EPERM,
                             "%s %s: owned by uid %ld, neither this user (uid %ld) nor root", what,
                             path, (long)st->st_uid, (long)me);
    if (is_key && (st->st_mode & S_IROTH))
        return sluice_errorf(err, SLUICE_EPERM,
                             "key file %s: readable by others (mode %04o); "
                             "whoever reads it can act as any user",
                             path, (unsigned)(st->st_mode & 07777));
    if (st->st_mode & (S_IRGRP | S_IROTH)) {
        if (strict)
            return sluice_errorf(err, SLUICE_EPERM,
                                 "%s %s: readable by group or others (mode %04o) and "
                                 "strict_permissions is set",
                                 what, path, (unsigned)(st->st_mode & 07777));
        sluice_log(SLUICE_LOG_WARNING, "%s %s: readable by group or others (mode %04o)", what, path,
                   (unsigned)(st->st_mode & 07777));
    }
    return SLUICE_OK;
}

static sluice_err read_secret_file(const char *path,
                                   int is_key,
                                   int strict,
                                   char **out,
                                   size_t *len_out,
                                   struct stat *st_out,
                                   sluice_error_t *err)
{
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    sluice_err rc = SLUICE_OK;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return sluice_errorf(err, errno == EACCES ? SLUICE_EPERM : SLUICE_EIO, "%s %s: %s",
                             is_key ? "key file" : "token file", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    if ((rc = check_perms(path, &st, is_key, strict, err)) != SLUICE_OK)
        goto out;
    if (st.st_size > MAX_TOKEN_FILE) {
        rc = sluice_errorf(err, SLUICE_ETOOBIG, "%s: larger than %d bytes", path, MAX_TOKEN_FILE);
        goto out;
    }
    data = malloc(MAX_TOKEN_FILE + 1);
    if (data == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, data + len, MAX_TOKEN_FILE - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = sluice_errorf(err, SLUICE_EIO, "%s: %s", path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len >= MAX_TOKEN_FILE) {
            rc = sluice_errorf(err, SLUICE_ETOOBIG, "%s: larger than %d bytes", path,
                               MAX_TOKEN_FILE);
            goto out;
        }
    }
    if (len == 0) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "%s: empty", path);
        goto out;
    }
    data[len] = '\0';
    *out = data;
    data = NULL;
    *len_out = len;
    if (st_out != NULL)
        *st_out = st;
out:
    if (data != NULL)
        wipe_free(data, MAX_TOKEN_FILE + 1);
    close(fd);
    return rc;
}

static sluice_err
load_token_file(const char *path, int strict, char **out, struct stat *st_out, sluice_error_t *err)
{
    char *data = NULL;
    size_t len = 0;
    sluice_err rc;

    if ((rc = read_secret_file(path, 0, strict, &data, &len, st_out, err)) != SLUICE_OK)
        return rc;
    rc = sluice_token_parse(data, len, out, err);
    if (rc != SLUICE_OK)
        sluice_error_prefix(err, "token file %s", path);
    wipe_free(data, len);
    return rc;
}

sluice_err
sluice_token_load(const char *path, int strict_permissions, char **out, sluice_error_t *err)
{
    if (path == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "token file: no path");
    return load_token_file(path, strict_permissions, out, NULL, err);
}

sluice_err sluice_key_load(const char *path,
                           int strict_permissions,
                           unsigned char **out,
                           size_t *len_out,
                           sluice_error_t *err)
{
    char *data = NULL;
    size_t len = 0;
    sluice_err rc;

    if (path == NULL || out == NULL || len_out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "key file: no path");
    if ((rc = read_secret_file(path, 1, strict_permissions, &data, &len, NULL, err)) != SLUICE_OK)
        return rc;
    *out = (unsigned char *)data;
    *len_out = len;
    return SLUICE_OK;
}

/* ---- minting and verification ---------------------------------------- */

sluice_err sluice_token_mint(const sluice_token_mint_options_t *o, char **out, sluice_error_t *err)
{
    jwt_t *jwt = NULL;
    char *enc = NULL;
    int64_t now;
    long life;
    sluice_err rc = SLUICE_OK;
    const char *kid;

    if (o == NULL || out == NULL || o->key == NULL || o->key_len == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "mint: a key is required");
    if (o->user == NULL || o->user[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "mint: a user (sun claim) is required");
    if (o->alg != SLUICE_JWT_HS256 && o->alg != SLUICE_JWT_RS256)
        return sluice_errorf(err, SLUICE_EINVAL, "mint: algorithm must be HS256 or RS256");
    if (o->lifespan < 0)
        return sluice_errorf(err, SLUICE_EINVAL, "mint: lifespan must be positive");
    life = o->lifespan > 0 ? o->lifespan : SLUICE_AUTH_DEFAULT_LIFESPAN;
    now = o->now > 0 ? o->now : (int64_t)time(NULL);
    kid = o->kid != NULL ? o->kid : (o->alg == SLUICE_JWT_RS256 ? "sluice" : NULL);

    if (jwt_new(&jwt) != 0 || jwt == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "mint: out of memory");
    if (jwt_add_grant_int(jwt, "iat", (long)now) != 0 ||
        jwt_add_grant_int(jwt, "exp", (long)(now + life)) != 0 ||
        jwt_add_grant(jwt, "sun", o->user) != 0) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "mint: cannot set the claims");
        goto out;
    }
    if (kid != NULL && jwt_add_header(jwt, "kid", kid) != 0) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "mint: cannot set the kid header");
        goto out;
    }
    if (jwt_set_alg(jwt, o->alg == SLUICE_JWT_HS256 ? JWT_ALG_HS256 : JWT_ALG_RS256, o->key,
                    (int)o->key_len) != 0) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "mint: the key is not usable for %s",
                           o->alg == SLUICE_JWT_HS256 ? "HS256" : "RS256");
        goto out;
    }
    enc = jwt_encode_str(jwt);
    if (enc == NULL) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "mint: signing failed (is the key a %s key?)",
                           o->alg == SLUICE_JWT_HS256 ? "HS256 secret" : "RSA private PEM");
        goto out;
    }
    *out = enc;
    enc = NULL;
out:
    wipe_str(enc);
    jwt_free(jwt);
    return rc;
}

sluice_err sluice_token_verify(const char *token,
                               sluice_jwt_alg alg,
                               const unsigned char *key,
                               size_t key_len,
                               int64_t now,
                               sluice_error_t *err)
{
    json_t *h = NULL;
    json_t *c = NULL;
    jwt_t *jwt = NULL;
    const char *got;
    const char *want = alg == SLUICE_JWT_RS256 ? "RS256" : "HS256";
    int64_t exp = 0;
    sluice_err rc;

    if (key == NULL || key_len == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "verify: a key is required");
    if ((rc = auth_decode(token, &h, &c, err)) != SLUICE_OK)
        return rc;
    got = json_string_value(json_object_get(h, "alg"));
    if (got == NULL || strcmp(got, want) != 0) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "verify: token algorithm is %s, expected %s",
                           got != NULL ? got : "missing", want);
        goto out;
    }
    if (!auth_claim_int(c, "exp", &exp)) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "verify: token has no exp claim");
        goto out;
    }
    if (jwt_decode(&jwt, token, key, (int)key_len) != 0 || jwt == NULL) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "verify: signature does not match the key");
        goto out;
    }
    if (now <= 0)
        now = (int64_t)time(NULL);
    if (exp <= now) {
        rc = sluice_errorf(err, SLUICE_EAUTH, "verify: token expired %lld s ago",
                           (long long)(now - exp));
        goto out;
    }
out:
    jwt_free(jwt);
    json_decref(h);
    json_decref(c);
    return rc;
}

/* ---- token source ---------------------------------------------------- */

static char *process_user(void)
{
    struct passwd pw, *res = NULL;
    char buf[4096];

    if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) == 0 && res != NULL)
        return strdup(res->pw_name);
    return NULL;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static void forget_token(sluice_auth_t *a)
{
    wipe_str(a->token);
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
    wipe_free(a->key, a->key_len);
    a->key = key;
    a->key_len = len;
    return SLUICE_OK;
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
                   (long long)(now - a->exp), a->path != NULL ? a->path : a->env_name);
    } else if (a->exp - now <= a->warn_before) {
        a->warned_exp = a->exp;
        sluice_log(SLUICE_LOG_WARNING, "slurm token expires in %lld s (source=%s)",
                   (long long)(a->exp - now), a->path != NULL ? a->path : a->env_name);
    }
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
        if ((rc = load_token_file(a->path, a->strict, &tok, &st, err)) != SLUICE_OK)
            return rc;
        if (a->token != NULL)
            sluice_log(SLUICE_LOG_INFO, "token file %s re-read", a->path);
        forget_token(a);
        a->token = tok;
        a->ident = st;
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
        a->token = tok;
        break;
    }
    case SLUICE_AUTH_HS256_KEY:
    case SLUICE_AUTH_RS256_KEY: {
        sluice_token_mint_options_t m;
        if (a->token != NULL && now - a->iat < a->lifespan * 8 / 10)
            break;
        if (a->key == NULL && (rc = load_key(a, err)) != SLUICE_OK)
            return rc;
        memset(&m, 0, sizeof(m));
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
        sluice_log(SLUICE_LOG_DEBUG, "minted a slurm token for user=%s lifespan=%ld", a->user,
                   a->lifespan);
        break;
    }
    default:
        return sluice_errorf(err, SLUICE_EINVAL, "auth: unknown token source kind");
    }
    note_expiry(a, now);
    return SLUICE_OK;
}

sluice_err
sluice_auth_new(sluice_auth_t **out, const sluice_auth_options_t *opts, sluice_error_t *err)
{
    sluice_auth_t *a = NULL;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: no options");
    if (opts->kind != SLUICE_AUTH_ENV && (opts->path == NULL || opts->path[0] == '\0'))
        return sluice_errorf(err, SLUICE_EINVAL, "auth: a token or key file path is required");
    if (opts->kind < SLUICE_AUTH_TOKEN_FILE || opts->kind > SLUICE_AUTH_ENV)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: unknown token source kind %d",
                             (int)opts->kind);
    if (opts->lifespan < 0 || opts->warn_before_expiry < 0)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "auth: lifespan and warn_before_expiry must "
                             "not be negative");
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory");
    pthread_mutex_init(&a->lock, NULL);
    a->kind = opts->kind;
    a->user = opts->user != NULL ? strdup(opts->user) : process_user();
    a->path = opts->path != NULL ? strdup(opts->path) : NULL;
    a->env_name = strdup(opts->env_name != NULL ? opts->env_name : "SLURM_JWT");
    a->kid = strdup(opts->kid != NULL ? opts->kid : "sluice");
    if (a->user == NULL || a->env_name == NULL || a->kid == NULL ||
        (opts->path != NULL && a->path == NULL)) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "auth: out of memory or unknown process user");
        goto out;
    }
    a->lifespan = opts->lifespan > 0 ? opts->lifespan : SLUICE_AUTH_DEFAULT_LIFESPAN;
    a->warn_before = opts->warn_before_expiry > 0 ? opts->warn_before_expiry : DEFAULT_WARN_BEFORE;
    a->strict = opts->strict_permissions;
    a->clock = opts->clock;
    a->clock_arg = opts->clock_arg;
    pthread_mutex_lock(&a->lock);
    rc = refresh_locked(a, err);
    pthread_mutex_unlock(&a->lock);
    if (rc != SLUICE_OK)
        goto out;
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
    pthread_mutex_destroy(&a->lock);
    free(a);
}

sluice_err sluice_auth_token(sluice_auth_t *a, char **out, sluice_error_t *err)
{
    sluice_err rc;
    char *copy = NULL;

    if (a == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "auth: no token source");
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
    wipe_str(tok);
    return rc;
}

void sluice_auth_headers_free(char **headers)
{
    size_t i;

    if (headers == NULL)
        return;
    for (i = 0; headers[i] != NULL; i++)
        wipe_str(headers[i]);
    free(headers);
}

void sluice_auth_invalidate(sluice_auth_t *a)
{
    if (a == NULL)
        return;
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
    pthread_mutex_lock(&a->lock);
    rc = refresh_locked(a, err);
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
    return a != NULL ? a->user : "";
}
