/* SPDX-License-Identifier: Apache-2.0 */
/* test_auth.c - token sources, permission rules, minting, renewal, expiry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <sluice/auth.h>
#include <sluice/log.h>

static char dir[256];
static int64_t fake_now = 1700000000;
static char logged[16384];
static int warnings;

/* HS256 keys of SLUICE_HS256_KEY_MIN (32) bytes: sluice mints with no
 * shorter one (RFC 7518 section 3.2). */
#define KEY32 "k-test-hs256-0123456789abcdefghi"
#define SUPERSECRET "supersecretkey-0123456789abcdefg"
#define OLD_KEY "old-key-0123456789abcdefghijklmn"
#define NEW_KEY "new-key-0123456789abcdefghijklmn"

static int64_t test_clock(void *arg)
{
    (void)arg;
    return fake_now;
}

static void capture(int level, const char *msg, void *arg)
{
    (void)arg;
    if (level <= SLUICE_LOG_WARNING)
        warnings++;
    strncat(logged, msg, sizeof(logged) - strlen(logged) - 2);
    strcat(logged, "\n");
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sluice-auth-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    fake_now = 1700000000;
    logged[0] = '\0';
    warnings = 0;
    sluice_log_set(capture, SLUICE_LOG_DEBUG, NULL);
}

static void teardown(void)
{
    char cmd[300];

    sluice_log_set(NULL, 0, NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
}

TestSuite(auth, .init = setup, .fini = teardown, .timeout = 30);

static void write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    FILE *f;
    char tmp[300];

    /* Write then rename, as a token rotator does: a new inode each time. */
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    cr_assert_eq(chmod(tmp, mode), 0);
    cr_assert_eq(rename(tmp, path), 0);
}

static char *path_of(const char *name)
{
    static char p[4][300];
    static int i;

    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
    return p[i];
}

static char *mint_hs(const char *key, const char *user, long life, int64_t now)
{
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *tok = NULL;

    m.alg = SLUICE_JWT_HS256;
    m.key = (const unsigned char *)key;
    m.key_len = strlen(key);
    m.user = user;
    m.lifespan = life;
    m.now = now;
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_OK, "%s", err.text);
    return tok;
}

static int64_t claim(const char *tok, const char *part, const char *name)
{
    json_t *j = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int64_t v;

    cr_assert_eq(sluice_token_inspect(tok, &j, &err), SLUICE_OK, "%s", err.text);
    v = json_integer_value(json_object_get(json_object_get(j, part), name));
    json_decref(j);
    return v;
}

Test(auth, token_text_forms)
{
    char *tok = mint_hs(KEY32, "alice", 60, 0);
    char text[2048];
    char *got = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *forms[][2] = {{"", ""},
                              {"", "\n"},
                              {"  ", "  \r\n"},
                              {"SLURM_JWT=", "\n"},
                              {"export SLURM_JWT=", "\n"},
                              {"SLURM_JWT=\"", "\""},
                              {"# comment\n\nSLURM_JWT=", "\n"}};
    size_t i;

    for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        snprintf(text, sizeof(text), "%s%s%s", forms[i][0], tok, forms[i][1]);
        cr_assert_eq(sluice_token_parse(text, strlen(text), &got, &err), SLUICE_OK, "form %zu: %s",
                     i, err.text);
        cr_assert_str_eq(got, tok, "form %zu", i);
        free(got);
        got = NULL;
    }
    /* Not a JWT: refused, and the error does not quote the input. */
    snprintf(text, sizeof(text), "SLURM_JWT=notatoken-secretvalue\n");
    cr_assert_eq(sluice_token_parse(text, strlen(text), &got, &err), SLUICE_EINVAL);
    cr_assert_null(strstr(err.text, "secretvalue"));
    cr_assert_eq(sluice_token_parse("", 0, &got, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_token_parse("a.b", 3, &got, &err), SLUICE_EINVAL);
    cr_assert_null(got);
    free(tok);
}

static sluice_auth_t *file_source(const char *path, int strict, sluice_error_t *err, int *rc)
{
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_auth_t *a = NULL;

    o.kind = SLUICE_AUTH_TOKEN_FILE;
    o.path = path;
    o.user = "alice";
    o.strict_permissions = strict;
    o.clock = test_clock;
    *rc = sluice_auth_new(&a, &o, err);
    return a;
}

Test(auth, token_file_rotation_is_picked_up_without_restart)
{
    char *t1 = mint_hs(KEY32, "alice", 1800, fake_now);
    char *t2 = mint_hs(KEY32, "alice", 1800, fake_now + 5);
    char line[2048];
    char *got = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    int rc;

    snprintf(line, sizeof(line), "SLURM_JWT=%s\n", t1);
    write_file(path_of("tok"), line, strlen(line), 0600);
    a = file_source(path_of("tok"), 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, t1);
    free(got);
    write_file(path_of("tok"), t2, strlen(t2), 0600);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, t2);
    free(got);
    sluice_auth_free(a);
    cr_assert_null(strstr(logged, t1));
    cr_assert_null(strstr(logged, t2));
    free(t1);
    free(t2);
}

Test(auth, token_file_permission_rules)
{
    char *t = mint_hs(KEY32, "alice", 1800, fake_now);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    int rc;

    write_file(path_of("tok"), t, strlen(t), 0620);
    a = file_source(path_of("tok"), 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_EPERM);
    cr_assert_null(a);
    cr_assert_not_null(strstr(err.text, "writable"));

    write_file(path_of("tok"), t, strlen(t), 0602);
    a = file_source(path_of("tok"), 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_EPERM);

    /* group/world-readable: a warning, or an error when strict */
    write_file(path_of("tok"), t, strlen(t), 0644);
    warnings = 0;
    a = file_source(path_of("tok"), 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(warnings, 1);
    sluice_auth_free(a);
    a = file_source(path_of("tok"), 1, &err, &rc);
    cr_assert_eq(rc, SLUICE_EPERM);
    cr_assert_null(strstr(err.text, t));

    if (geteuid() == 0) {
        /* Owned by another non-root user: refused. */
        write_file(path_of("tok"), t, strlen(t), 0600);
        cr_assert_eq(chown(path_of("tok"), 65534, 65534), 0);
        a = file_source(path_of("tok"), 0, &err, &rc);
        cr_assert_eq(rc, SLUICE_EPERM);
        cr_assert_not_null(strstr(err.text, "owned by"));
    }
    free(t);
}

static sluice_auth_t *key_source(sluice_auth_kind kind,
                                 const char *path,
                                 int strict,
                                 const char *kid,
                                 sluice_error_t *err,
                                 int *rc)
{
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_auth_t *a = NULL;

    o.kind = kind;
    o.path = path;
    o.user = "alice";
    o.kid = kid;
    o.strict_permissions = strict;
    o.clock = test_clock;
    *rc = sluice_auth_new(&a, &o, err);
    return a;
}

Test(auth, key_file_permission_rules)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    int rc;

    write_file(path_of("key"), SUPERSECRET, strlen(SUPERSECRET), 0604);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_EPERM);
    cr_assert_null(a);
    cr_assert_not_null(strstr(err.text, "readable by others"));
    cr_assert_null(strstr(err.text, SUPERSECRET));

    write_file(path_of("key"), SUPERSECRET, strlen(SUPERSECRET), 0660);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_EPERM);

    write_file(path_of("key"), SUPERSECRET, strlen(SUPERSECRET), 0640);
    warnings = 0;
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(warnings, 1);
    sluice_auth_free(a);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 1, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_EPERM);
    cr_assert_null(strstr(logged, SUPERSECRET));
}

Test(auth, hs256_mint_has_iat_exp_sun_and_verifies)
{
    const char *key = "0123456789abcdef0123456789abcdef";
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    char *tok = NULL;
    json_t *j = NULL;
    int64_t exp = 0, left = 0;
    int rc;

    write_file(path_of("key"), key, strlen(key), 0600);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &tok, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(claim(tok, "claims", "iat"), fake_now);
    cr_assert_eq(claim(tok, "claims", "exp"), fake_now + 1800);
    cr_assert_eq(sluice_token_inspect(tok, &j, &err), SLUICE_OK);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "claims"), "sun")),
                     "alice");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "header"), "alg")),
                     "HS256");
    json_decref(j);

    cr_assert_eq(sluice_token_verify(tok, SLUICE_JWT_HS256, (const unsigned char *)key, strlen(key),
                                     fake_now + 1, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_token_verify(tok, SLUICE_JWT_HS256, (const unsigned char *)"wrong", 5,
                                     fake_now + 1, &err),
                 SLUICE_EAUTH);
    cr_assert_eq(sluice_token_verify(tok, SLUICE_JWT_HS256, (const unsigned char *)key, strlen(key),
                                     fake_now + 1800, &err),
                 SLUICE_EAUTH);
    cr_assert_not_null(strstr(err.text, "expired"));
    cr_assert_eq(sluice_token_verify("not.a.token", SLUICE_JWT_HS256, (const unsigned char *)key,
                                     strlen(key), fake_now, &err),
                 SLUICE_EINVAL);

    cr_assert_eq(sluice_auth_expiry(a, &exp, &left, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(exp, fake_now + 1800);
    cr_assert_eq(left, 1800);
    free(tok);
    sluice_auth_free(a);
}

/* Issue 27 C: an HS256 key shorter than SLUICE_HS256_KEY_MIN (32) bytes is
 * refused by mint and by a key source, which names the file and the
 * minimum (and never the key). */
Test(auth, an_hs256_key_shorter_than_32_bytes_is_refused)
{
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    static const char k31[] = "k-test-hs256-0123456789abcdefgh";
    sluice_auth_t *a;
    char *tok = NULL;
    int rc;

    cr_assert_eq(SLUICE_HS256_KEY_MIN, 32);
    m.alg = SLUICE_JWT_HS256;
    m.key = (const unsigned char *)"k";
    m.key_len = 1;
    m.user = "alice";
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_EINVAL);
    cr_assert_null(tok);
    cr_assert_not_null(strstr(err.text, "at least 32"), "%s", err.text);
    m.key = (const unsigned char *)k31;
    m.key_len = strlen(k31);
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_EINVAL);
    m.key = (const unsigned char *)KEY32;
    m.key_len = strlen(KEY32);
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_OK, "%s", err.text);
    free(tok);

    write_file(path_of("key"), k31, strlen(k31), 0600);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_ECONFIG, "%s", err.text);
    cr_assert_null(a);
    cr_assert_not_null(strstr(err.text, path_of("key")), "%s", err.text);
    cr_assert_not_null(strstr(err.text, "31 bytes is too short: at least 32 bytes"), "%s",
                       err.text);
    cr_assert_null(strstr(err.text, k31));
    /* A key rotated to a short one is refused when it is read again. */
    write_file(path_of("key"), KEY32, strlen(KEY32), 0600);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    write_file(path_of("key"), "short", 5, 0600);
    sluice_auth_invalidate(a);
    cr_assert_eq(sluice_auth_token(a, &tok, &err), SLUICE_ECONFIG);
    cr_assert_not_null(strstr(err.text, "at least 32"), "%s", err.text);
    sluice_auth_free(a);
}

Test(auth, hs256_renews_after_80_percent_of_lifetime)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    char *t1 = NULL, *t2 = NULL, *t3 = NULL;
    int64_t t0 = fake_now;
    int rc;

    write_file(path_of("key"), KEY32, strlen(KEY32), 0600);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &t1, &err), SLUICE_OK);
    fake_now = t0 + 1439;
    cr_assert_eq(sluice_auth_token(a, &t2, &err), SLUICE_OK);
    cr_assert_str_eq(t1, t2);
    fake_now = t0 + 1440;
    cr_assert_eq(sluice_auth_token(a, &t3, &err), SLUICE_OK);
    cr_assert_str_neq(t1, t3);
    cr_assert_eq(claim(t3, "claims", "iat"), t0 + 1440);
    free(t1);
    free(t2);
    free(t3);
    sluice_auth_free(a);
}

Test(auth, invalidate_rereads_a_rotated_key)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    char *t = NULL;
    int rc;

    write_file(path_of("key"), OLD_KEY, strlen(OLD_KEY), 0600);
    a = key_source(SLUICE_AUTH_HS256_KEY, path_of("key"), 0, NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    write_file(path_of("key"), NEW_KEY, strlen(NEW_KEY), 0600);
    sluice_auth_invalidate(a);
    cr_assert_eq(sluice_auth_token(a, &t, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_token_verify(t, SLUICE_JWT_HS256, (const unsigned char *)NEW_KEY,
                                     strlen(NEW_KEY), fake_now, &err),
                 SLUICE_OK, "%s", err.text);
    free(t);
    sluice_auth_free(a);
}

/* BIO memory is not NUL-terminated (strndup would read past it). */
static char *copy_mem(const char *p, size_t n)
{
    char *s = malloc(n + 1);

    cr_assert_not_null(s);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void gen_rsa(char **priv, char **pub)
{
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    BIO *b1 = BIO_new(BIO_s_mem());
    BIO *b2 = BIO_new(BIO_s_mem());
    char *p;
    long n;

    cr_assert_not_null(pk);
    cr_assert(PEM_write_bio_PrivateKey(b1, pk, NULL, NULL, 0, NULL, NULL));
    cr_assert(PEM_write_bio_PUBKEY(b2, pk));
    n = BIO_get_mem_data(b1, &p);
    *priv = copy_mem(p, (size_t)n);
    n = BIO_get_mem_data(b2, &p);
    *pub = copy_mem(p, (size_t)n);
    BIO_free(b1);
    BIO_free(b2);
    EVP_PKEY_free(pk);
}

Test(auth, rs256_mint_carries_kid_and_verifies_with_the_public_key)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    char *priv = NULL, *pub = NULL, *tok = NULL;
    json_t *j = NULL;
    int rc;

    gen_rsa(&priv, &pub);
    write_file(path_of("rsa.pem"), priv, strlen(priv), 0600);
    a = key_source(SLUICE_AUTH_RS256_KEY, path_of("rsa.pem"), 0, "site-key-1", &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &tok, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_token_inspect(tok, &j, &err), SLUICE_OK);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "header"), "kid")),
                     "site-key-1");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "header"), "alg")),
                     "RS256");
    json_decref(j);
    cr_assert_eq(sluice_token_verify(tok, SLUICE_JWT_RS256, (const unsigned char *)pub, strlen(pub),
                                     fake_now, &err),
                 SLUICE_OK, "%s", err.text);
    /* The public key is never accepted as an HMAC secret. */
    cr_assert_eq(sluice_token_verify(tok, SLUICE_JWT_HS256, (const unsigned char *)pub, strlen(pub),
                                     fake_now, &err),
                 SLUICE_EAUTH);
    cr_assert_null(strstr(logged, "PRIVATE"));
    free(tok);
    free(priv);
    free(pub);
    sluice_auth_free(a);
}

Test(auth, env_source_and_headers)
{
    char *t = mint_hs(KEY32, "bob", 1800, fake_now);
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char **h = NULL;
    char want[2048];

    setenv("SLUICE_TEST_JWT", t, 1);
    o.kind = SLUICE_AUTH_ENV;
    o.env_name = "SLUICE_TEST_JWT";
    o.user = "bob";
    o.clock = test_clock;
    cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_headers(a, &h, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(h[0], "X-SLURM-USER-NAME: bob");
    snprintf(want, sizeof(want), "X-SLURM-USER-TOKEN: %s", t);
    cr_assert_str_eq(h[1], want);
    cr_assert_null(h[2]);
    sluice_auth_headers_free(h);
    sluice_auth_free(a);

    unsetenv("SLUICE_TEST_JWT");
    cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_EAUTH);
    free(t);
}

Test(auth, expiry_warning_without_the_token)
{
    char *t = mint_hs(KEY32, "alice", 100, fake_now);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    int64_t exp = 0, left = 0;
    int rc;

    write_file(path_of("tok"), t, strlen(t), 0600);
    warnings = 0;
    a = file_source(path_of("tok"), 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(warnings, 1);
    cr_assert_not_null(strstr(logged, "expires in 100 s"), "%s", logged);
    cr_assert_null(strstr(logged, t));
    fake_now += 150;
    cr_assert_eq(sluice_auth_expiry(a, &exp, &left, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(exp, fake_now - 50);
    cr_assert_eq(left, -50);
    sluice_auth_free(a);
    free(t);
}

Test(auth, inspect_never_returns_the_signature)
{
    char *t = mint_hs(KEY32, "alice", 100, fake_now);
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    char *dump;
    const char *sig = strrchr(t, '.') + 1;

    cr_assert_eq(sluice_token_inspect(t, &j, &err), SLUICE_OK);
    dump = json_dumps(j, 0);
    cr_assert_null(strstr(dump, sig));
    cr_assert_null(json_object_get(j, "signature"));
    free(dump);
    json_decref(j);
    cr_assert_eq(sluice_token_inspect("eyJ.eyJ.x", &j, &err), SLUICE_EINVAL);
    free(t);
}

/* ---- identity: the user a token names ------------------------------------ */

/* A compact token with these claims (an unverified signature: sluice reads
 * claims without verifying). */
static char *raw_token(const char *claims_json)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const char *parts[2] = {"{\"alg\":\"HS256\",\"typ\":\"JWT\"}", claims_json};
    char *out = calloc(1, 4096);
    size_t k = 0;

    cr_assert_not_null(out);
    for (int p = 0; p < 2; p++) {
        const unsigned char *s = (const unsigned char *)parts[p];
        size_t n = strlen(parts[p]);
        for (size_t i = 0; i < n; i += 3) {
            unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) |
                         (i + 2 < n ? s[i + 2] : 0);
            out[k++] = tbl[(v >> 18) & 63];
            out[k++] = tbl[(v >> 12) & 63];
            if (i + 1 < n)
                out[k++] = tbl[(v >> 6) & 63];
            if (i + 2 < n)
                out[k++] = tbl[v & 63];
        }
        out[k++] = '.';
    }
    memcpy(out + k, "c2ln", 4);
    return out;
}

static sluice_auth_t *file_source_as(const char *user, sluice_error_t *err, int *rc)
{
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_auth_t *a = NULL;

    o.kind = SLUICE_AUTH_TOKEN_FILE;
    o.path = path_of("tok");
    o.user = user;
    o.clock = test_clock;
    *rc = sluice_auth_new(&a, &o, err);
    return a;
}

Test(auth, token_user_reads_sun_then_username)
{
    char user[SLUICE_TOKEN_USER_MAX];
    const char *claim = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *t = mint_hs(KEY32, "alice", 60, fake_now);
    char *u = raw_token("{\"exp\":1900000000,\"username\":\"carol\"}");
    char *both = raw_token("{\"sun\":\"dave\",\"username\":\"erin\"}");
    char *none = raw_token("{\"exp\":1900000000}");
    char *bad = raw_token("{\"sun\":\"two words\"}");
    char *num = raw_token("{\"sun\":1000}");

    cr_assert_eq(sluice_token_user(t, user, sizeof(user), &claim, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(user, "alice");
    cr_assert_str_eq(claim, "sun");
    cr_assert_eq(sluice_token_user(u, user, sizeof(user), &claim, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(user, "carol");
    cr_assert_str_eq(claim, "username");
    cr_assert_eq(sluice_token_user(both, user, sizeof(user), &claim, &err), SLUICE_OK);
    cr_assert_str_eq(user, "dave", "sun wins, as in slurmctld");
    cr_assert_eq(sluice_token_user(none, user, sizeof(user), NULL, &err), SLUICE_ENOTFOUND);
    cr_assert_not_null(strstr(err.text, "names no user"), "%s", err.text);
    cr_assert_eq(sluice_token_user(bad, user, sizeof(user), NULL, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_token_user(num, user, sizeof(user), NULL, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_token_user("not-a-token", user, sizeof(user), NULL, &err), SLUICE_EINVAL);
    free(t);
    free(u);
    free(both);
    free(none);
    free(bad);
    free(num);
}

/* No user in the options: the token's `sun` claim is the user, sent as
 * X-SLURM-USER-NAME; a token naming nobody is refused (no identity). */
Test(auth, user_is_taken_from_the_token_when_none_is_given)
{
    char *t = mint_hs(KEY32, "bob", 1800, fake_now);
    char *none = raw_token("{\"exp\":1900000000,\"iat\":1700000000}");
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    char **h = NULL;
    int rc;

    write_file(path_of("tok"), t, strlen(t), 0600);
    a = file_source_as(NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user(a), "bob");
    cr_assert_str_eq(sluice_auth_user_claim(a), "sun");
    cr_assert_eq(sluice_auth_headers(a, &h, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(h[0], "X-SLURM-USER-NAME: bob");
    sluice_auth_headers_free(h);
    sluice_auth_free(a);

    /* named by the options: kept, whatever the token says */
    a = file_source_as("alice", &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user(a), "alice");
    cr_assert_null(sluice_auth_user_claim(a));
    sluice_auth_free(a);

    write_file(path_of("tok"), none, strlen(none), 0600);
    a = file_source_as(NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_ECONFIG, "%s", err.text);
    cr_assert_null(a);
    cr_assert_not_null(strstr(err.text, "names no user"), "%s", err.text);
    cr_assert_null(strstr(err.text, none), "the token is never quoted");
    free(t);
    free(none);
}

/* A rotated token file that names another user is refused, not followed:
 * the identity taken from the first token never changes silently. */
Test(auth, rotated_token_for_another_user_is_refused)
{
    char *t1 = mint_hs(KEY32, "bob", 1800, fake_now);
    char *t2 = mint_hs(KEY32, "mallory", 1800, fake_now + 5);
    char *t3 = mint_hs(KEY32, "bob", 1800, fake_now + 10);
    char *t4 = raw_token("{\"exp\":1900000000}");
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a;
    char *got = NULL;
    int rc;

    write_file(path_of("tok"), t1, strlen(t1), 0600);
    a = file_source_as(NULL, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    write_file(path_of("tok"), t2, strlen(t2), 0600);
    logged[0] = '\0';
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_EAUTH);
    cr_assert_null(got);
    cr_assert_not_null(strstr(err.text, "names user mallory, not bob"), "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_EAUTH, "still refused");
    cr_assert_str_eq(sluice_auth_user(a), "bob");
    {
        /* logged once for that file */
        const char *first = strstr(logged, "names user mallory");
        cr_assert_not_null(first, "%s", logged);
        cr_assert_null(strstr(first + 1, "names user mallory"), "%s", logged);
    }
    cr_assert_null(strstr(logged, t2));
    write_file(path_of("tok"), t4, strlen(t4), 0600);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_EAUTH, "a token naming nobody");
    write_file(path_of("tok"), t3, strlen(t3), 0600);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, t3);
    free(got);
    sluice_auth_free(a);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
}

Test(auth, minted_token_needs_a_user)
{
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;

    write_file(path_of("key"), SUPERSECRET, strlen(SUPERSECRET), 0600);
    o.kind = SLUICE_AUTH_HS256_KEY;
    o.path = path_of("key");
    cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_ECONFIG);
    cr_assert_null(a);
    cr_assert_not_null(strstr(err.text, "needs a user"), "%s", err.text);
}
