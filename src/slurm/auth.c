/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c - Slurm JWT minting (HS256/RS256) and verification.
 *
 * The only file of sluice that includes <jwt.h> (libjwt 1.10 API), and it
 * holds nothing else: reading tokens and keys is auth_token.c, the token
 * source with its caching policy is auth_source.c.
 *
 * Notes:
 * - Verification checks the algorithm the caller expects before libjwt
 *   sees the token, so an RS256 public key is never used as an HMAC secret.
 * - A minted token is wiped before it is freed on every error path.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jwt.h>

#include <sluice/auth.h>

#include "auth.h"
#include "base/opts.h"

/* ---- minting and verification ---------------------------------------- */

sluice_err sluice_token_mint(const sluice_token_mint_opts_t *o, char **out, sluice_error_t *err)
{
    jwt_t *jwt = NULL;
    char *enc = NULL;
    int64_t now;
    long life;
    sluice_err rc = SLUICE_OK;
    const char *kid;

    if (o == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "mint: options and out are required");
    if ((rc = opts_check_version("token_mint", o->version, SLUICE_TOKEN_MINT_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    if (o->key == NULL || o->key_len == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "mint: a key is required");
    if (o->user == NULL || o->user[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "mint: a user (sun claim) is required");
    if (o->alg != SLUICE_JWT_HS256 && o->alg != SLUICE_JWT_RS256)
        return sluice_errorf(err, SLUICE_EINVAL, "mint: algorithm must be HS256 or RS256");
    /* RFC 7518, section 3.2: the HMAC key must be at least as long as the
     * hash output, 256 bits for HS256; a shorter key weakens the
     * signature that lets anyone holding a token act as its user. */
    if (o->alg == SLUICE_JWT_HS256 && o->key_len < SLUICE_HS256_KEY_MIN)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "mint: the HS256 key is %zu bytes, at least %d are needed (256 bits, "
                             "RFC 7518 section 3.2)",
                             o->key_len, SLUICE_HS256_KEY_MIN);
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
    wipe_str_free(enc);
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

sluice_err sluice_token_mint_opts_init(sluice_token_mint_opts_t *opts,
                                       unsigned int version,
                                       sluice_error_t *err)
{
    static const sluice_token_mint_opts_t tmpl = SLUICE_TOKEN_MINT_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "token_mint", version,
                     SLUICE_TOKEN_MINT_OPTS_VERSION, err);
}
