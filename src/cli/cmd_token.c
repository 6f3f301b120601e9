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
 * - Exit codes: 0 valid, 64 usage, 65 malformed token, 77 invalid or expired
 *   (sysexits; never 1).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/auth.h>

#include "cli.h"

#define MAX_STDIN_TOKEN (64 * 1024)

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: sluice token mint --key FILE --user USER [--lifespan SECONDS]\n"
               "                         [--alg HS256|RS256] [--kid KID]\n"
               "       sluice token show [FILE|-]\n"
               "       sluice token check --key FILE [--alg HS256|RS256] [FILE|-]\n"
               "\n"
               "Mint, inspect and verify Slurm JWTs.\n"
               "\n"
               "  mint   sign a token with an HS256 key file (Slurm's jwt_hs256.key) or an\n"
               "         RS256 private key (PEM) and print it\n"
               "  show   print a token's header and claims as JSON, and its time to expiry\n"
               "         (never the signature); the file may hold SLURM_JWT=<token>\n"
               "  check  verify a token's signature and expiry with a key (HS256: the key\n"
               "         file; RS256: the public key PEM); exit 0 valid, 77 invalid or\n"
               "         expired, 65 malformed\n"
               "\n"
               "A token is read from FILE, or from standard input when FILE is '-' or absent.\n");
}

static int need_value(int i, int argc, char **argv)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "sluice token: option %s needs a value\n", argv[i]);
        return 0;
    }
    return 1;
}

static int parse_alg(const char *s, sluice_jwt_alg *out)
{
    if (strcmp(s, "HS256") == 0 || strcmp(s, "hs256") == 0) {
        *out = SLUICE_JWT_HS256;
        return 1;
    }
    if (strcmp(s, "RS256") == 0 || strcmp(s, "rs256") == 0) {
        *out = SLUICE_JWT_RS256;
        return 1;
    }
    fprintf(stderr, "sluice token: --alg must be HS256 or RS256\n");
    return 0;
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

static int token_mint(int argc, char **argv)
{
    const char *key_path = NULL, *user = NULL, *kid = NULL;
    sluice_token_mint_options_t m = SLUICE_TOKEN_MINT_OPTIONS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    unsigned char *key = NULL;
    size_t key_len = 0;
    char *tok = NULL;
    char *end;
    int i, ex = CLI_EX_OK;

    m.alg = SLUICE_JWT_HS256;
    for (i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            usage(stdout);
            return CLI_EX_OK;
        } else if (strcmp(argv[i], "--key") == 0 && need_value(i, argc, argv)) {
            key_path = argv[++i];
        } else if (strcmp(argv[i], "--user") == 0 && need_value(i, argc, argv)) {
            user = argv[++i];
        } else if (strcmp(argv[i], "--kid") == 0 && need_value(i, argc, argv)) {
            kid = argv[++i];
        } else if (strcmp(argv[i], "--alg") == 0 && need_value(i, argc, argv)) {
            if (!parse_alg(argv[++i], &m.alg))
                return CLI_EX_USAGE;
        } else if (strcmp(argv[i], "--lifespan") == 0 && need_value(i, argc, argv)) {
            m.lifespan = strtol(argv[++i], &end, 10);
            if (*end != '\0' || m.lifespan <= 0) {
                fprintf(stderr, "sluice token mint: --lifespan must be a positive integer\n");
                return CLI_EX_USAGE;
            }
        } else {
            fprintf(stderr, "sluice token mint: unexpected argument '%s'\n", argv[i]);
            return CLI_EX_USAGE;
        }
    }
    if (key_path == NULL || user == NULL) {
        fprintf(stderr, "sluice token mint: --key and --user are required\n");
        return CLI_EX_USAGE;
    }
    if (sluice_key_load(key_path, 0, &key, &key_len, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    m.key = key;
    m.key_len = key_len;
    m.user = user;
    m.kid = kid;
    if (sluice_token_mint(&m, &tok, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    printf("%s\n", tok);
out:
    if (key != NULL) {
        memset(key, 0, key_len);
        free(key);
    }
    free(tok);
    return ex;
}

static int token_show(int argc, char **argv)
{
    const char *src = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    json_t *exp;
    char *tok = NULL;
    char *dump = NULL;
    int i, ex = CLI_EX_OK;

    for (i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            usage(stdout);
            return CLI_EX_OK;
        }
        if (src != NULL || (argv[i][0] == '-' && argv[i][1] != '\0')) {
            fprintf(stderr, "sluice token show: unexpected argument '%s'\n", argv[i]);
            return CLI_EX_USAGE;
        }
        src = argv[i];
    }
    if (read_token(src, &tok, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    if (sluice_token_inspect(tok, &j, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    exp = json_object_get(json_object_get(j, "claims"), "exp");
    if (json_is_integer(exp))
        json_object_set_new(j, "expires_in",
                            json_integer(json_integer_value(exp) - (json_int_t)time(NULL)));
    dump = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (dump == NULL) {
        fprintf(stderr, "sluice token show: out of memory\n");
        ex = CLI_EX_SOFTWARE;
        goto out;
    }
    printf("%s\n", dump);
out:
    free(dump);
    json_decref(j);
    free(tok);
    return ex;
}

static int token_check(int argc, char **argv)
{
    const char *key_path = NULL, *src = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_jwt_alg alg = 0;
    unsigned char *key = NULL;
    size_t key_len = 0;
    char *tok = NULL;
    sluice_err rc;
    int i, ex = CLI_EX_OK;

    for (i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            usage(stdout);
            return CLI_EX_OK;
        } else if (strcmp(argv[i], "--key") == 0 && need_value(i, argc, argv)) {
            key_path = argv[++i];
        } else if (strcmp(argv[i], "--alg") == 0 && need_value(i, argc, argv)) {
            if (!parse_alg(argv[++i], &alg))
                return CLI_EX_USAGE;
        } else if (src == NULL && (argv[i][0] != '-' || argv[i][1] == '\0')) {
            src = argv[i];
        } else {
            fprintf(stderr, "sluice token check: unexpected argument '%s'\n", argv[i]);
            return CLI_EX_USAGE;
        }
    }
    if (key_path == NULL) {
        fprintf(stderr, "sluice token check: --key is required\n");
        return CLI_EX_USAGE;
    }
    if (sluice_key_load(key_path, 0, &key, &key_len, &err) != SLUICE_OK) {
        ex = cli_fail(&err);
        goto out;
    }
    if (alg == 0)
        alg = key_len > 10 && memcmp(key, "-----BEGIN", 10) == 0 ? SLUICE_JWT_RS256
                                                                 : SLUICE_JWT_HS256;
    rc = read_token(src, &tok, &err);
    if (rc == SLUICE_OK)
        rc = sluice_token_verify(tok, alg, key, key_len, 0, &err);
    if (rc == SLUICE_OK) {
        printf("valid\n");
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
    free(tok);
    return ex;
}

int cmd_token(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EX_USAGE;
    }
    if (is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EX_OK;
    }
    if (strcmp(argv[1], "mint") == 0)
        return token_mint(argc - 1, argv + 1);
    if (strcmp(argv[1], "show") == 0)
        return token_show(argc - 1, argv + 1);
    if (strcmp(argv[1], "check") == 0)
        return token_check(argc - 1, argv + 1);
    fprintf(stderr, "sluice token: unknown subcommand '%s'\n", argv[1]);
    usage(stderr);
    return CLI_EX_USAGE;
}
