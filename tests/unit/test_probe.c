/* SPDX-License-Identifier: Apache-2.0 */
/* test_probe.c - `sluice probe` (the health check of the container and the
 * Kubernetes probes) against a real in-process sluice_server on a Unix
 * socket and on loopback TCP with a tokens file.  The command is run as the
 * built binary ($SLUICE_BIN), so its exit codes are what a probe sees. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "server_fixture.h"

#define TOKEN SFX_TOKEN

static server_fixture_t fx;
static int not_ready;

static sluice_err ready_cb(void *arg, sluice_error_t *err)
{
    (void)arg;
    if (not_ready)
        return sluice_errorf(err, SLUICE_ETRANSPORT, "slurmrestd does not answer (test)");
    return SLUICE_OK;
}

static void with_ready(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->ready = ready_cb;
}

/* The fixture's server, also on its Unix socket (fx.sock), with a
 * readiness check. */
static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    not_ready = 0;
    memset(&o, 0, sizeof(o));
    o.socket = true;
    o.tweak = with_ready;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
    cr_assert_neq(fx.port, 0);
}

static void teardown(void)
{
    sfx_stop(&fx);
}

/* Run `sluice probe ARGS`; its exit code, or -1.  stdout/stderr go to
 * out_file (appended), so a token leak can be looked for. */
static int probe(const char *args)
{
    const char *bin = getenv("SLUICE_BIN");
    char cmd[1200];
    int st;

    cr_assert_not_null(bin, "SLUICE_BIN is set by ctest");
    snprintf(cmd, sizeof(cmd),
             "env -u SLUICE_SERVER -u SLUICE_API_TOKEN_FILE '%s' probe %s >>'%s/out' 2>&1", bin,
             args, fx.tmp);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TestSuite(probe, .init = setup, .fini = teardown, .timeout = 60);

Test(probe, healthz_and_readyz_over_the_unix_socket)
{
    char args[300];

    snprintf(args, sizeof(args), "--server unix:%s", fx.sock);
    cr_expect_eq(probe(args), 0);
    snprintf(args, sizeof(args), "--ready --server unix:%s", fx.sock);
    cr_expect_eq(probe(args), 0);
    not_ready = 1;
    cr_expect_eq(probe(args), 69, "readyz 503 must fail the probe");
    snprintf(args, sizeof(args), "--server unix:%s", fx.sock);
    cr_expect_eq(probe(args), 0, "healthz does not depend on readiness");
}

Test(probe, tcp_needs_a_token_for_readyz_and_never_prints_it)
{
    char args[400], tokfile[256], out[4096];
    FILE *f;
    size_t n;

    snprintf(args, sizeof(args), "--server http://127.0.0.1:%u", (unsigned)fx.port);
    cr_expect_eq(probe(args), 0, "healthz needs no token");
    snprintf(args, sizeof(args), "--ready --server http://127.0.0.1:%u", (unsigned)fx.port);
    cr_expect_eq(probe(args), 77, "readyz without a token is 401 -> 77");
    snprintf(tokfile, sizeof(tokfile), "%s/client-token", fx.tmp);
    f = fopen(tokfile, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s\n", TOKEN);
    fclose(f);
    snprintf(args, sizeof(args), "--ready --server http://127.0.0.1:%u --api-token-file %s",
             (unsigned)fx.port, tokfile);
    cr_expect_eq(probe(args), 0);
    f = fopen(tokfile, "w");
    cr_assert_not_null(f);
    fprintf(f, "wrong-token-0123456789abcdef\n");
    fclose(f);
    cr_expect_eq(probe(args), 77);
    snprintf(out, sizeof(out), "%s/out", fx.tmp);
    f = fopen(out, "r");
    cr_assert_not_null(f);
    n = fread(out, 1, sizeof(out) - 1, f);
    fclose(f);
    out[n] = '\0';
    cr_expect_null(strstr(out, TOKEN), "the token leaked: %s", out);
}

Test(probe, unreachable_and_bad_usage)
{
    char args[300];

    snprintf(args, sizeof(args), "--server unix:%s/nothing.sock --timeout 2", fx.tmp);
    cr_expect_eq(probe(args), 69);
    cr_expect_eq(probe(""), 64, "no --server");
    cr_expect_eq(probe("--server unix:/x --timeout 0"), 64);
    cr_expect_eq(probe("--server unix:/x --bogus"), 64);
    cr_expect_eq(probe("--server http://192.0.2.1:8750"), 64, "plain http off loopback is refused");
}
