/* SPDX-License-Identifier: Apache-2.0 */
/* test_probe.c - `sluice probe` (the health check of the container and the
 * Kubernetes probes) against a real in-process sluice_server on a Unix
 * socket and on loopback TCP with a tokens file.  The command is run as the
 * built binary ($SLUICE_BIN), so its exit codes are what a probe sees. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sluice/config.h>
#include <sluice/launcher.h>
#include <sluice/server.h>
#include <sluice/sluice.h>
#include <sluice/store.h>

#include "fake_cluster.h"
#include "render_case.h"

#define cr_assert_sluice_ok(expr, errp)                                                            \
    do {                                                                                           \
        sluice_err rc_ = (expr);                                                                   \
        cr_assert_eq(rc_, SLUICE_OK, "%s: %s: %s", #expr, sluice_err_name(rc_), (errp)->text);     \
    } while (0)

#define TOKEN "tok-probe-0123456789abcdef0123"

static char tmp[128], sock[200], tokens[200];
static int64_t clock_now;
static fake_cluster_t *fc;
static sluice_store_t *store;
static sluice_config_t *cfg;
static sluice_launcher_t *launcher;
static sluice_server_t *server;
static uint16_t port;
static int not_ready;

static sluice_err ready_cb(void *arg, sluice_error_t *err)
{
    (void)arg;
    if (not_ready)
        return sluice_errorf(err, SLUICE_ETRANSPORT, "slurmrestd does not answer (test)");
    return SLUICE_OK;
}

static void setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co;
    sluice_launcher_opts_t lo;
    sluice_server_opts_t so;
    char path[512], state[256], root[300];
    const char *src = getenv("SLUICE_SOURCE_DIR");
    const char *sets[1];
    FILE *f;

    not_ready = 0;
    snprintf(tmp, sizeof(tmp), "/tmp/sluice-probe-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(path, sizeof(path), "%s/tests/golden/render/flower-gpu/site.yaml", src ? src : ".");
    snprintf(root, sizeof(root), "storage.root=%s/storage", tmp);
    sets[0] = root;
    memset(&co, 0, sizeof(co));
    co.path = path;
    co.overrides = sets;
    co.n_overrides = 1;
    cr_assert_sluice_ok(sluice_config_load(&co, &cfg, &err), &err);
    snprintf(state, sizeof(state), "%s/state", tmp);
    cr_assert_sluice_ok(sluice_store_open(&store, state, &err), &err);
    fc = calloc(1, sizeof(*fc));
    cr_assert_not_null(fc);
    fake_cluster_init(fc, &clock_now, "sluice");
    memset(&lo, 0, sizeof(lo));
    lo.store = store;
    lo.cluster = fake_cluster_ops(fc);
    lo.user = "sluice";
    lo.site = "site-1";
    cr_assert_sluice_ok(sluice_launcher_new(&launcher, &lo, &err), &err);
    snprintf(tokens, sizeof(tokens), "%s/tokens", tmp);
    f = fopen(tokens, "w");
    cr_assert_not_null(f);
    fprintf(f, "probe %s\n", TOKEN);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(sock, sizeof(sock), "%s/api.sock", tmp);
    memset(&so, 0, sizeof(so));
    so.launcher = launcher;
    so.store = store;
    so.cfg = cfg;
    so.listen = "127.0.0.1:0";
    so.tokens_file = tokens;
    so.socket_path = sock;
    so.getenv_fn = render_case_getenv;
    so.ready = ready_cb;
    cr_assert_sluice_ok(sluice_server_new(&server, &so, &err), &err);
    port = sluice_server_port(server);
    cr_assert_neq(port, 0);
}

static void teardown(void)
{
    char cmd[200];

    sluice_server_free(server);
    sluice_launcher_free(launcher);
    sluice_store_close(store);
    sluice_config_free(cfg);
    free(fc);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
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
             args, tmp);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TestSuite(probe, .init = setup, .fini = teardown, .timeout = 60);

Test(probe, healthz_and_readyz_over_the_unix_socket)
{
    char args[300];

    snprintf(args, sizeof(args), "--server unix:%s", sock);
    cr_expect_eq(probe(args), 0);
    snprintf(args, sizeof(args), "--ready --server unix:%s", sock);
    cr_expect_eq(probe(args), 0);
    not_ready = 1;
    cr_expect_eq(probe(args), 69, "readyz 503 must fail the probe");
    snprintf(args, sizeof(args), "--server unix:%s", sock);
    cr_expect_eq(probe(args), 0, "healthz does not depend on readiness");
}

Test(probe, tcp_needs_a_token_for_readyz_and_never_prints_it)
{
    char args[400], tokfile[256], out[4096];
    FILE *f;
    size_t n;

    snprintf(args, sizeof(args), "--server http://127.0.0.1:%u", (unsigned)port);
    cr_expect_eq(probe(args), 0, "healthz needs no token");
    snprintf(args, sizeof(args), "--ready --server http://127.0.0.1:%u", (unsigned)port);
    cr_expect_eq(probe(args), 77, "readyz without a token is 401 -> 77");
    snprintf(tokfile, sizeof(tokfile), "%s/client-token", tmp);
    f = fopen(tokfile, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s\n", TOKEN);
    fclose(f);
    snprintf(args, sizeof(args), "--ready --server http://127.0.0.1:%u --api-token-file %s",
             (unsigned)port, tokfile);
    cr_expect_eq(probe(args), 0);
    f = fopen(tokfile, "w");
    cr_assert_not_null(f);
    fprintf(f, "wrong-token-0123456789abcdef\n");
    fclose(f);
    cr_expect_eq(probe(args), 77);
    snprintf(out, sizeof(out), "%s/out", tmp);
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

    snprintf(args, sizeof(args), "--server unix:%s/nothing.sock --timeout 2", tmp);
    cr_expect_eq(probe(args), 69);
    cr_expect_eq(probe(""), 64, "no --server");
    cr_expect_eq(probe("--server unix:/x --timeout 0"), 64);
    cr_expect_eq(probe("--server unix:/x --bogus"), 64);
    cr_expect_eq(probe("--server http://192.0.2.1:8750"), 64, "plain http off loopback is refused");
}
