/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_token.c - `sluice token mint|show|check`: mint, inspect and verify
 * Slurm JWTs.
 *
 * Notes:
 * - `show` prints the header and the claims, never the signature; no
 *   subcommand prints a key.
 * - `check` picks the algorithm from the key (a PEM key means RS256, raw
 *   bytes mean HS256) unless --alg says otherwise, so an RSA public key is
 *   never used as an HMAC secret.
 * - `show` prints the user and times for people; -o json the header, the
 *   claims and `expires_in`.
 * - Exit codes: 0 valid, 64 usage, 65 malformed token, 66 a file that does
 *   not exist, 77 invalid or expired (sysexits; never 1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/auth.h>

#include "args.h"
#include "base/jdec.h"
#include "cli.h"
#include "print.h"

#define MAX_STDIN_TOKEN (64 * 1024)
/* --lifespan at most ten years: far past any use, short of an overflow of
 * iat + lifespan. */
#define CLI_LIFESPAN_MAX_S (3650L * 86400)

typedef struct {
    const char *key_path, *user, *kid;
    long lifespan;
    sluice_jwt_alg alg; /* 0: from the key (check) or HS256 (mint) */
} token_opts_t;

static int token_option(int id, const char *v, void *arg)
{
    token_opts_t *t = arg;

    switch (id) {
    case CLI_O_KEY:
        t->key_path = v;
        break;
    case CLI_O_USER:
        t->user = v;
        break;
    case CLI_O_KID:
        t->kid = v;
        break;
    case CLI_O_ALG: /* the table allows HS256 and RS256 only */
        t->alg = strcmp(v, "RS256") == 0 ? SLUICE_JWT_RS256 : SLUICE_JWT_HS256;
        break;
    case CLI_O_LIFESPAN:
        return cli_duration("token mint", "--lifespan", v, 1, CLI_LIFESPAN_MAX_S, &t->lifespan);
    default:
        return CLI_EX_SOFTWARE;
    }
    return CLI_EX_OK;
}

/* Read a token from a file (permission rules apply) or stdin ("-"). */
static sluice_err read_token(const char *src, char **out, sluice_error_t *err)
{
    char *data = NULL;
    size_t len = 0;
    sluice_err rc;

    if (src != NULL && strcmp(src, "-") != 0)
        return sluice_token_load(src, 0, out, err);
    data = malloc(MAX_STDIN_TOKEN + 1);
    if (data == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    len = fread(data, 1, MAX_STDIN_TOKEN, stdin);
    if (len >= MAX_STDIN_TOKEN) {
        free(data);
        return sluice_errorf(err, SLUICE_ETOOBIG, "standard input: token larger than %d bytes",
                             MAX_STDIN_TOKEN);
    }
    data[len] = '\0';
    rc = sluice_token_parse(data, len, out, err);
    free(data);
    return rc;
}

int cmd_token_mint(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    token_opts_t t;
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    unsigned char *key = NULL;
    size_t key_len = 0;
    char *tok = NULL;
    json_t *j = NULL;
    int ex = CLI_EX_OK;

    memset(&t, 0, sizeof(t));
    if (!cli_parse(spec, argc, argv, &a, token_option, &t, &ex))
        return ex;
    if (t.key_path == NULL || t.user == NULL)
        return cli_usage_error(spec, "--key and --user are required");
    if (sluice_key_load(t.key_path, 0, &key, &key_len, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    m.alg = t.alg ? t.alg : SLUICE_JWT_HS256;
    if (m.alg == SLUICE_JWT_HS256 && key_len < SLUICE_HS256_KEY_MIN) {
        /* RFC 7518, section 3.2: no shorter than SHA-256's 256-bit output. */
        sluice_errorf(&err, SLUICE_EINVAL,
                      "--key %s: an HS256 key of %zu bytes is too short: at least %d bytes "
                      "(256 bits, RFC 7518 section 3.2)",
                      t.key_path, key_len, SLUICE_HS256_KEY_MIN);
        ex = cli_fail(&err);
        goto out;
    }
    m.lifespan = t.lifespan;
    m.key = key;
    m.key_len = key_len;
    m.user = t.user;
    m.kid = t.kid;
    if (sluice_token_mint(&m, &tok, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    if (!a.json) {
        printf("%s\n", tok);
    } else if (sluice_token_inspect(tok, &j, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
    } else if (json_object_set_new(j, "token", json_string(tok)) != 0 ||
               cli_print_json(j, 1) != 0) {
        ex = CLI_EX_SOFTWARE;
    }
out:
    if (key != NULL) {
        memset(key, 0, key_len);
        free(key);
    }
    json_decref(j);
    free(tok);
    return ex;
}

/* `token show` for people: user, algorithm, issue and expiry times. */
static void show_text(const json_t *j, time_t now)
{
    jdec_t d;
    jdec_cur_t tok, claims, header;
    const char *kid;
    char when[64];
    time_t t;
    struct tm tm;

    jdec_peek_root(&d, &tok, j);
    jdec_member(&claims, &tok, "claims");
    jdec_member(&header, &tok, "header");
    kid = jdec_peek_string(&header, "kid");
    printf("user       %s\n", jdec_peek_string_or(&claims, "sun", "-"));
    printf("algorithm  %s\n", jdec_peek_string_or(&header, "alg", "-"));
    if (kid != NULL)
        printf("key id     %s\n", kid);
    if (json_is_integer(jdec_value(&claims, "iat"))) {
        t = (time_t)jdec_peek_int(&claims, "iat", 0);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        printf("issued     %s\n", when);
    }
    if (json_is_integer(jdec_value(&claims, "exp"))) {
        long long left = (long long)jdec_peek_int(&claims, "exp", 0) - (long long)now;
        t = (time_t)jdec_peek_int(&claims, "exp", 0);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
        if (left >= 0)
            printf("expires    %s (in %lld s)\n", when, left);
        else
            printf("expires    %s (expired %lld s ago)\n", when, -left);
    } else {
        printf("expires    never\n");
    }
}

int cmd_token_show(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    jdec_t d;
    jdec_cur_t view, claims;
    char *tok = NULL;
    time_t now = time(NULL);
    int ex = CLI_EX_OK;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &ex))
        return ex;
    if (read_token(a.n_operands ? a.operands[0] : NULL, &tok, &err) != SLUICE_OK ||
        sluice_token_inspect(tok, &j, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    if (!a.json) {
        show_text(j, now);
        goto out;
    }
    jdec_peek_root(&d, &view, j);
    jdec_member(&claims, &view, "claims");
    if (json_is_integer(jdec_value(&claims, "exp")))
        json_object_set_new(
            j, "expires_in",
            json_integer((json_int_t)(jdec_peek_int(&claims, "exp", 0) - (int64_t)now)));
    if (cli_print_json(j, 1) != 0)
        ex = CLI_EX_SOFTWARE;
out:
    json_decref(j);
    free(tok);
    return ex;
}

int cmd_token_check(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    token_opts_t t;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_jwt_alg alg;
    unsigned char *key = NULL;
    size_t key_len = 0;
    char *tok = NULL;
    json_t *j = NULL;
    sluice_err rc;
    int ex = CLI_EX_OK;

    memset(&t, 0, sizeof(t));
    if (!cli_parse(spec, argc, argv, &a, token_option, &t, &ex))
        return ex;
    if (t.key_path == NULL)
        return cli_usage_error(spec, "--key is required");
    alg = t.alg;
    if (sluice_key_load(t.key_path, 0, &key, &key_len, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    if (alg == 0)
        alg = key_len > 10 && memcmp(key, "-----BEGIN", 10) == 0 ? SLUICE_JWT_RS256
                                                                 : SLUICE_JWT_HS256;
    rc = read_token(a.n_operands ? a.operands[0] : NULL, &tok, &err);
    if (rc == SLUICE_OK)
        rc = sluice_token_verify(tok, alg, key, key_len, 0, &err);
    if (rc == SLUICE_OK && !a.json) {
        printf("valid\n");
    } else if (rc == SLUICE_OK) {
        j = json_pack("{s:b s:s}", "valid", 1, "alg", alg == SLUICE_JWT_RS256 ? "RS256" : "HS256");
        if (j == NULL || cli_print_json(j, 1) != 0)
            ex = CLI_EX_SOFTWARE;
    } else if (rc == SLUICE_EINVAL) {
        fprintf(stderr, "sluice: %s\n", err.text);
        ex = CLI_EX_DATAERR;
    } else if (rc == SLUICE_EAUTH) {
        fprintf(stderr, "sluice: invalid: %s\n", err.text);
        ex = CLI_EX_NOPERM;
    } else {
        ex = cli_fail(&err);
    }
out:
    if (key != NULL) {
        memset(key, 0, key_len);
        free(key);
    }
    json_decref(j);
    free(tok);
    return ex;
}
