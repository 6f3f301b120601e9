/* SPDX-License-Identifier: Apache-2.0 */
/* test_auth_command.c - the token command (rest.jwt_command): its token is
 * used and renewed within the margin of its exp; a failing, hanging,
 * silent or babbling command is refused without a token in the error;
 * the site keys (exclusive, file only) and rest.jwt_kid in the header. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <sluice/auth.h>
#include <sluice/client.h>
#include <sluice/config.h>
#include <sluice/log.h>

#include "config_case.h"

#define KEY32 "k-test-hs256-0123456789abcdefghi"

static char dir[256];
static int64_t fake_now = 1700000000;

static int64_t test_clock(void *arg)
{
    (void)arg;
    return fake_now;
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sluice-authcmd-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    fake_now = 1700000000;
}

static void teardown(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
}

TestSuite(auth_command, .init = setup, .fini = teardown, .timeout = 30);

static char *path_of(const char *name)
{
    static char p[4][300];
    static int i;

    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
    return p[i];
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, mode), 0);
}

static char *mint(const char *user, long life, int64_t now)
{
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *tok = NULL;

    m.alg = SLUICE_JWT_HS256;
    m.key = (const unsigned char *)KEY32;
    m.key_len = strlen(KEY32);
    m.user = user;
    m.lifespan = life;
    m.now = now;
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_OK, "%s", err.text);
    return tok;
}

/* A script that counts its runs in dir/runs, then runs `body`. */
static const char *script(const char *body)
{
    char text[2048];
    const char *p = path_of("cmd.sh");

    snprintf(text, sizeof(text), "#!/bin/sh\necho run >> '%s/runs'\n%s\n", dir, body);
    write_text(p, text, 0700);
    return p;
}

static int runs(void)
{
    char line[64];
    int n = 0;
    FILE *f = fopen(path_of("runs"), "r");

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL)
        n++;
    fclose(f);
    return n;
}

/* The token the script prints: dir/tok, written by the test. */
static void set_token(const char *tok, const char *prefix)
{
    char text[4096];

    snprintf(text, sizeof(text), "%s%s\n", prefix, tok);
    write_text(path_of("tok"), text, 0600);
}

static sluice_err
command_source(const char *prog, long timeout_ms, sluice_auth_t **a, sluice_error_t *err)
{
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    const char *argv[] = {prog, NULL};

    o.kind = SLUICE_AUTH_COMMAND;
    o.argv = argv;
    o.command_timeout_ms = timeout_ms;
    o.clock = test_clock;
    return sluice_auth_new(a, &o, err);
}

static char *cat_script(void)
{
    static char body[512];

    snprintf(body, sizeof(body), "cat '%s/tok'", dir);
    return body;
}

Test(auth_command, its_token_is_used_and_names_the_user)
{
    char *tok = mint("alice", 3600, fake_now);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *got = NULL;
    const char *where = NULL;

    set_token(tok, "SLURM_JWT="); /* what `scontrol token` prints */
    cr_assert_eq(command_source(script(cat_script()), 0, &a, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok);
    cr_assert_str_eq(sluice_auth_user(a), "alice");
    cr_assert_eq(sluice_auth_source(a, &where), SLUICE_AUTH_COMMAND);
    cr_assert_str_eq(where, path_of("cmd.sh"));
    cr_assert_eq(runs(), 1, "ran once, not once per call");
    cr_assert_eq(sluice_auth_fetches(a), 1);
    free(got);
    free(tok);
    sluice_auth_free(a);
}

/* Renewed when within max(60 s, 10% of exp - iat) of exp. */
Test(auth_command, renewed_within_the_margin_of_exp)
{
    int64_t t0 = fake_now;
    char *tok1 = mint("alice", 3600, t0);       /* margin 360 s */
    char *tok2 = mint("alice", 300, t0 + 3300); /* margin 60 s */
    char *tok3 = mint("alice", 300, t0 + 3540);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *got = NULL;

    set_token(tok1, "");
    cr_assert_eq(command_source(script(cat_script()), 0, &a, &err), SLUICE_OK, "%s", err.text);
    set_token(tok2, "");
    fake_now = t0 + 3600 - 361;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok1, "outside the margin: the same token");
    cr_assert_eq(runs(), 1);
    free(got);
    fake_now = t0 + 3600 - 360;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok2, "within 10%% of 3600 s: renewed");
    cr_assert_eq(runs(), 2);
    free(got);
    /* tok2 lives 300 s: 10% is 30 s, so the margin is 60 s. */
    set_token(tok3, "");
    fake_now = t0 + 3600 - 61;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok2);
    free(got);
    fake_now = t0 + 3600 - 60;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok3, "within 60 s: renewed");
    cr_assert_eq(runs(), 3);
    free(got);
    /* After an authentication failure: run again at once. */
    sluice_auth_invalidate(a);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(runs(), 4);
    free(got);
    free(tok1);
    free(tok2);
    free(tok3);
    sluice_auth_free(a);
}

Test(auth_command, a_failing_command_shows_its_stderr_never_the_token)
{
    char *tok = mint("alice", 3600, fake_now);
    char body[1024];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;

    set_token(tok, "");
    /* It prints the token on stdout and on stderr, then fails. */
    snprintf(body, sizeof(body),
             "cat '%s/tok'\necho \"scontrol: error: Invalid user for token $(cat '%s/tok')\" >&2\n"
             "exit 1",
             dir, dir);
    cr_assert_eq(command_source(script(body), 0, &a, &err), SLUICE_EAUTH);
    cr_assert_null(a);
    cr_assert(strstr(err.text, "exited with status 1") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "Invalid user for token [redacted]") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "cmd.sh") != NULL, "%s", err.text);
    cr_assert_null(strstr(err.text, tok), "the token leaked: %s", err.text);
    cr_assert_null(strstr(err.text, strchr(tok, '.') + 1));
    free(tok);
}

Test(auth_command, a_hanging_command_is_killed_at_the_timeout)
{
    char body[512];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    struct timespec t0, t1;
    FILE *f;
    int pid = 0;
    long ms;

    /* A grandchild too: the whole process group goes. */
    snprintf(body, sizeof(body), "sleep 30 &\necho $! > '%s/pid'\nwait", dir);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(command_source(script(body), 400, &a, &err), SLUICE_EAUTH);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    cr_assert(ms >= 400 && ms < 3000, "took %ld ms", ms);
    cr_assert(strstr(err.text, "did not finish within 400 ms and was killed") != NULL, "%s",
              err.text);
    f = fopen(path_of("pid"), "r");
    cr_assert_not_null(f);
    cr_assert_eq(fscanf(f, "%d", &pid), 1);
    fclose(f);
    for (int i = 0; i < 50 && kill(pid, 0) == 0; i++) {
        char stat[64], state = 0;
        FILE *s;
        snprintf(stat, sizeof(stat), "/proc/%d/stat", pid);
        s = fopen(stat, "r");
        if (s != NULL && fscanf(s, "%*d %*s %c", &state) == 1 && state == 'Z') {
            fclose(s);
            break; /* killed, waiting for its new parent to reap it */
        }
        if (s != NULL)
            fclose(s);
        usleep(20000);
    }
    if (kill(pid, 0) == 0) {
        char stat[64], state = 0;
        FILE *s;
        snprintf(stat, sizeof(stat), "/proc/%d/stat", pid);
        s = fopen(stat, "r");
        cr_assert(s == NULL || (fscanf(s, "%*d %*s %c", &state) == 1 && state == 'Z'),
                  "the grandchild %d still runs", pid);
        if (s != NULL)
            fclose(s);
    }
}

Test(auth_command, empty_garbage_and_oversized_output_are_refused)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;

    cr_assert_eq(command_source(script("echo '  '"), 0, &a, &err), SLUICE_EAUTH);
    cr_assert(strstr(err.text, "printed no token") != NULL, "%s", err.text);
    cr_assert_eq(command_source(script("echo notatoken-secretvalue"), 0, &a, &err), SLUICE_EAUTH);
    cr_assert(strstr(err.text, "is not a JWT") != NULL, "%s", err.text);
    cr_assert_null(strstr(err.text, "secretvalue"));
    cr_assert_eq(command_source(script("echo eyJub3QiOiJqc29u.eyJhIjox.sig"), 0, &a, &err),
                 SLUICE_EAUTH, "token-shaped but its header is not JSON");
    cr_assert_eq(command_source(script("head -c 70000 /dev/zero | tr '\\0' a"), 0, &a, &err),
                 SLUICE_EAUTH);
    cr_assert(strstr(err.text, "printed more than 65536 bytes") != NULL, "%s", err.text);
    cr_assert_eq(command_source(script("echo x"), 0, &a, &err), SLUICE_EAUTH);
    {
        sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
        const char *rel[] = {"scontrol", "token", NULL};
        o.kind = SLUICE_AUTH_COMMAND;
        o.argv = rel;
        cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_EINVAL);
        cr_assert(strstr(err.text, "absolute path") != NULL, "%s", err.text);
    }
    cr_assert_null(a);
}

/* A failed renewal keeps the still-valid token, and a failed run is not
 * repeated for SLUICE_AUTH_COMMAND_RETRY_S. */
Test(auth_command, a_failed_renewal_keeps_the_valid_token_and_waits)
{
    int64_t t0 = fake_now;
    char *tok = mint("alice", 600, t0); /* margin 60 s */
    char body[512];
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *got = NULL;

    set_token(tok, "");
    snprintf(body, sizeof(body), "[ -e '%s/fail' ] && { echo down >&2; exit 3; }\ncat '%s/tok'",
             dir, dir);
    cr_assert_eq(command_source(script(body), 0, &a, &err), SLUICE_OK, "%s", err.text);
    write_text(path_of("fail"), "", 0600);
    fake_now = t0 + 550;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok, "the valid token stays in use");
    cr_assert_eq(runs(), 2);
    free(got);
    fake_now = t0 + 555;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(runs(), 2, "not run again within %d s", SLUICE_AUTH_COMMAND_RETRY_S);
    free(got);
    fake_now = t0 + 601; /* expired, and the retry pause is over */
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_EAUTH);
    cr_assert(strstr(err.text, "exited with status 3: down") != NULL, "%s", err.text);
    cr_assert_eq(runs(), 3);
    fake_now = t0 + 605;
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_EAUTH);
    cr_assert(strstr(err.text, "not run again before") != NULL, "%s", err.text);
    cr_assert_eq(runs(), 3);
    free(tok);
    sluice_auth_free(a);
}

/* Options of version 1 (before argv) are still accepted. */
Test(auth_command, auth_options_version_1_still_work)
{
    sluice_auth_opts_t o;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *tok = mint("alice", 3600, 0);

    set_token(tok, "");
    cr_assert_eq(sluice_auth_opts_init(&o, 1, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(o.version, 1);
    o.kind = SLUICE_AUTH_TOKEN_FILE;
    o.path = path_of("tok");
    cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_source(a, NULL), SLUICE_AUTH_TOKEN_FILE);
    sluice_auth_free(a);
    o.kind = SLUICE_AUTH_COMMAND; /* a version 1 struct has no argv */
    cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_EINVAL);
    free(tok);
}

/* ---- the site keys ------------------------------------------------------ */

#define SITE_HEAD "rest:\n  url: https://rest.example:6820\n"
#define SITE_TAIL "storage:\n  root: /s\njob_launcher:\n  sandbox: none\n"

static sluice_err
load(const char *yaml, const char *const *env, sluice_config_t **cfg, sluice_error_t *err)
{
    return config_case_load(yaml, env, NULL, 0, cfg, err);
}

Test(auth_command, site_keys_are_exclusive_and_from_the_file_only)
{
    static const char *const env[] = {"SLUICE_REST_JWT_COMMAND=/bin/true", NULL};
    const char *set[] = {"rest.jwt_command=/bin/true"};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(load(SITE_HEAD
                      "  jwt_command: [/usr/bin/scontrol, token, lifespan=3600]\n" SITE_TAIL,
                      NULL, &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    sluice_config_free(cfg);
    cfg = NULL;
    cr_assert_eq(load(SITE_HEAD
                      "  jwt_file: /run/jwt\n  jwt_command: [/usr/bin/scontrol, token]\n" SITE_TAIL,
                      NULL, &cfg, &err),
                 SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "rest.jwt_file and rest.jwt_command are both set") != NULL, "%s",
              err.text);
    cr_assert_eq(load(SITE_HEAD
                      "  jwt_key_file: /etc/k\n  user: svc\n  jwt_command: [/bin/x]\n" SITE_TAIL,
                      NULL, &cfg, &err),
                 SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "rest.jwt_key_file and rest.jwt_command are both set") != NULL, "%s",
              err.text);
    cr_assert_eq(load(SITE_HEAD "  jwt_command: [scontrol, token]\n" SITE_TAIL, NULL, &cfg, &err),
                 SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "absolute path") != NULL, "%s", err.text);
    cr_assert_eq(
        load(SITE_HEAD "  jwt_command: /usr/bin/scontrol token\n" SITE_TAIL, NULL, &cfg, &err),
        SLUICE_ECONFIG, "a string is not a command: no shell splits it");
    cr_assert_eq(load(SITE_HEAD SITE_TAIL, env, &cfg, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "cannot be set from the environment or --set") != NULL, "%s",
              err.text);
    cr_assert_eq(config_case_load(SITE_HEAD SITE_TAIL, NULL, set, 1, &cfg, &err), SLUICE_ECONFIG);
    cr_assert_eq(
        load(SITE_HEAD "  jwt_file: /run/jwt\n  jwt_kid: k1\n" SITE_TAIL, NULL, &cfg, &err),
        SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "rest.jwt_kid: only with rest.jwt_rs256_key_file") != NULL, "%s",
              err.text);
    cr_assert_null(cfg);
}

static void gen_rsa_pem(const char *path)
{
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    FILE *f = fopen(path, "w");

    cr_assert_not_null(pk);
    cr_assert_not_null(f);
    cr_assert(PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL));
    fclose(f);
    cr_assert_eq(chmod(path, 0600), 0);
    EVP_PKEY_free(pk);
}

Test(auth_command, jwt_kid_lands_in_the_header_of_minted_tokens)
{
    char yaml[1024];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *tok = NULL;
    json_t *j = NULL;

    gen_rsa_pem(path_of("rs.pem"));
    snprintf(yaml, sizeof(yaml),
             SITE_HEAD
             "  user: svc\n  jwt_rs256_key_file: %s\n  jwt_kid: site-key-2024\n" SITE_TAIL,
             path_of("rs.pem"));
    cr_assert_eq(load(yaml, NULL, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_client_auth_from_config(&a, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &tok, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_token_inspect(tok, &j, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "header"), "kid")),
                     "site-key-2024");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "header"), "alg")),
                     "RS256");
    json_decref(j);
    free(tok);
    sluice_auth_free(a);
    sluice_config_free(cfg);
}

/* The site's command reaches the token source through the client. */
Test(auth_command, the_site_command_gives_the_client_its_token)
{
    char *tok = mint("bob", 3600, 0);
    char yaml[1024];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *got = NULL;

    set_token(tok, "SLURM_JWT=");
    script(cat_script());
    snprintf(yaml, sizeof(yaml), SITE_HEAD "  jwt_command: ['%s', --flag]\n" SITE_TAIL,
             path_of("cmd.sh"));
    cr_assert_eq(load(yaml, NULL, &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_client_auth_from_config(&a, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, tok);
    cr_assert_str_eq(sluice_auth_user(a), "bob", "the user is the token's own");
    free(got);
    free(tok);
    sluice_auth_free(a);
    sluice_config_free(cfg);
}
