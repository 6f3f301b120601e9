/* SPDX-License-Identifier: Apache-2.0 */
/* test_cmd_token.c - `sluice token mint|show|check` through the real binary:
 * output shapes and sysexits exit codes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include <sluice/auth.h>

/* 32 bytes: the shortest HS256 key sluice mints with (SLUICE_HS256_KEY_MIN). */
#define KEY32 "k-test-hs256-0123456789abcdefghi"

static char dir[256];
static const char *bin;

static void setup(void)
{
    bin = getenv("SLUICE_BIN");
    if (bin == NULL)
        cr_skip_test("SLUICE_BIN is not set (run through ctest)");
    snprintf(dir, sizeof(dir), "/tmp/sluice-cli-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
}

TestSuite(cmd_token, .init = setup, .fini = teardown, .timeout = 60);

/* Run a shell command line built from fmt; returns the exit status. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
    char cmd[2048];
    va_list ap;
    int st;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    st = system(cmd);
    cr_assert(WIFEXITED(st), "%s", cmd);
    return WEXITSTATUS(st);
}

static void put(const char *name, const char *text, mode_t mode)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
}

static char *slurp(const char *name)
{
    static char buf[8192];
    char path[512];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "r");
    cr_assert_not_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(cmd_token, mint_show_check_round_trip)
{
    char *out;

    put("key", "cluster-secret-key-0123456789abcd", 0600);
    put("other", "another-key-0123456789abcdefghij", 0600);
    cr_assert_eq(
        run("'%s' token mint --key %s/key --user alice --lifespan 600 > %s/tok", bin, dir, dir), 0);
    out = slurp("tok");
    cr_assert_eq(strncmp(out, "eyJ", 3), 0, "%s", out);

    /* for people by default, the header and claims with -o json */
    cr_assert_eq(run("'%s' token show %s/tok > %s/show", bin, dir, dir), 0);
    out = slurp("show");
    cr_assert_not_null(strstr(out, "user       alice\n"), "%s", out);
    cr_assert_not_null(strstr(out, "algorithm  HS256\n"), "%s", out);
    cr_assert_not_null(strstr(out, "(in "), "%s", out);
    cr_assert_null(strstr(out, "cluster-secret-key"));
    cr_assert_eq(run("'%s' token show %s/tok -o json > %s/show", bin, dir, dir), 0);
    out = slurp("show");
    cr_assert_not_null(strstr(out, "\"sun\": \"alice\""), "%s", out);
    cr_assert_not_null(strstr(out, "\"expires_in\""), "%s", out);
    cr_assert_null(strstr(out, "cluster-secret-key"));

    cr_assert_eq(run("'%s' token check --key %s/key %s/tok >/dev/null", bin, dir, dir), 0);
    cr_assert_eq(run("'%s' token check --key %s/key - < %s/tok >/dev/null", bin, dir, dir), 0);
    cr_assert_eq(run("'%s' token check --key %s/other %s/tok 2>/dev/null", bin, dir, dir), 77);
}

Test(cmd_token, show_never_prints_the_signature)
{
    char *out;
    char sig[512];

    put("key", KEY32, 0600);
    cr_assert_eq(run("'%s' token mint --key %s/key --user bob > %s/tok", bin, dir, dir), 0);
    out = slurp("tok");
    snprintf(sig, sizeof(sig), "%s", strrchr(out, '.') + 1);
    sig[strcspn(sig, "\n")] = '\0';
    cr_assert_eq(run("sed 's/^/SLURM_JWT=/' %s/tok | '%s' token show - > %s/show", dir, bin, dir),
                 0);
    out = slurp("show");
    cr_assert_null(strstr(out, sig), "%s", out);
}

Test(cmd_token, expired_is_77_and_malformed_is_65)
{
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *tok = NULL;
    char *out;

    /* A correctly signed token that expired long ago. */
    m.alg = SLUICE_JWT_HS256;
    m.key = (const unsigned char *)KEY32;
    m.key_len = strlen(KEY32);
    m.user = "alice";
    m.lifespan = 60;
    m.now = 1000000000;
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_OK, "%s", err.text);
    put("key", KEY32, 0600);
    put("expired", tok, 0600);
    free(tok);
    put("garbage", "this is not a token\n", 0600);
    cr_assert_eq(run("'%s' token check --key %s/key %s/expired 2>%s/err", bin, dir, dir, dir), 77);
    out = slurp("err");
    cr_assert_not_null(strstr(out, "expired"), "%s", out);
    cr_assert_eq(run("'%s' token check --key %s/key %s/garbage 2>/dev/null", bin, dir, dir), 65);
    cr_assert_eq(run("'%s' token show %s/garbage 2>/dev/null", bin, dir), 65);
}

/* Issue 27 C: an HS256 key shorter than 32 bytes (RFC 7518 section 3.2)
 * is refused, naming the key file and the minimum; 32 bytes are enough. */
Test(cmd_token, mint_refuses_an_hs256_key_shorter_than_32_bytes)
{
    char *out;

    put("one", "k", 0600);
    put("k31", "k-test-hs256-0123456789abcdefgh", 0600);
    put("k32", KEY32, 0600);
    cr_assert_eq(
        run("'%s' token mint --key %s/one --user alice >%s/tok 2>%s/err", bin, dir, dir, dir), 65);
    out = slurp("err");
    cr_assert_not_null(strstr(out, "/one: an HS256 key of 1 bytes is too short: at least 32 bytes"),
                       "%s", out);
    cr_assert_eq(slurp("tok")[0], '\0', "no token printed");
    cr_assert_eq(
        run("'%s' token mint --key %s/k31 --user alice >/dev/null 2>%s/err", bin, dir, dir), 65);
    cr_assert_not_null(strstr(slurp("err"), "31 bytes"));
    cr_assert_eq(run("'%s' token mint --key %s/k32 --user alice >/dev/null", bin, dir), 0);
}

Test(cmd_token, usage_errors_are_64_and_help_is_0)
{
    cr_assert_eq(run("'%s' token >/dev/null 2>&1", bin), 64);
    cr_assert_eq(run("'%s' token frobnicate >/dev/null 2>&1", bin), 64);
    cr_assert_eq(run("'%s' token mint --user x >/dev/null 2>&1", bin), 64);
    cr_assert_eq(run("'%s' token check >/dev/null 2>&1", bin), 64);
    cr_assert_eq(run("'%s' token mint --key k --user u --alg ES256 >/dev/null 2>&1", bin), 64);
    cr_assert_eq(run("'%s' token --help >/dev/null", bin), 0);
    cr_assert_eq(run("'%s' token mint --help >/dev/null", bin), 0);
    cr_assert_eq(run("'%s' token show --help >/dev/null", bin), 0);
    cr_assert_eq(run("'%s' token check --help >/dev/null", bin), 0);
}

Test(cmd_token, world_readable_key_is_refused)
{
    put("key", "k", 0644);
    cr_assert_eq(run("'%s' token mint --key %s/key --user u >/dev/null 2>&1", bin, dir), 77);
}
