/* SPDX-License-Identifier: Apache-2.0 */
/* test_opts.c - the versioned options structs (docs/architecture.md, "The
 * public API and ABI"): each INIT sets the version, each _opts_init() knows
 * only the versions of this library, and every function that takes options
 * refuses an unknown version first, naming the struct and the version. */
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/sluice.h>

/* The text every refusal carries for `name` ("client") and `version`. */
static void assert_refused(sluice_err rc, const sluice_error_t *err, const char *name, unsigned v)
{
    char type[64], ver[64], hint[64];

    snprintf(type, sizeof(type), "sluice_%s_opts_t: ", name);
    snprintf(ver, sizeof(ver), "version %u is unknown", v);
    snprintf(hint, sizeof(hint), "sluice_%s_opts_init()", name);
    cr_assert_eq(rc, SLUICE_EINVAL, "%s: %s", name, sluice_err_name(rc));
    cr_assert_eq(err->code, SLUICE_EINVAL);
    cr_assert(strncmp(err->text, type, strlen(type)) == 0, "%s", err->text);
    cr_assert(strstr(err->text, ver) != NULL, "%s", err->text);
    cr_assert(strstr(err->text, hint) != NULL, "%s", err->text);
}

Test(opts, init_macros_set_the_version)
{
    sluice_accept_opts_t a = SLUICE_ACCEPT_OPTS_INIT;
    sluice_auth_opts_t au = SLUICE_AUTH_OPTS_INIT;
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_client_opts_t c = SLUICE_CLIENT_OPTS_INIT;
    sluice_config_opts_t cf = SLUICE_CONFIG_OPTS_INIT;
    sluice_launcher_opts_t l = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_leader_opts_t le = SLUICE_LEADER_OPTS_INIT;
    sluice_server_opts_t s = SLUICE_SERVER_OPTS_INIT;
    sluice_store_opts_t st = SLUICE_STORE_OPTS_INIT;
    sluice_supervisor_opts_t su = SLUICE_SUPERVISOR_OPTS_INIT;

    cr_assert_eq(a.version, SLUICE_ACCEPT_OPTS_VERSION);
    cr_assert_eq(au.version, SLUICE_AUTH_OPTS_VERSION);
    cr_assert_eq(m.version, SLUICE_TOKEN_MINT_OPTS_VERSION);
    cr_assert_eq(c.version, SLUICE_CLIENT_OPTS_VERSION);
    cr_assert_eq(cf.version, SLUICE_CONFIG_OPTS_VERSION);
    cr_assert_eq(l.version, SLUICE_LAUNCHER_OPTS_VERSION);
    cr_assert_eq(le.version, SLUICE_LEADER_OPTS_VERSION);
    cr_assert_eq(s.version, SLUICE_SERVER_OPTS_VERSION);
    cr_assert_eq(st.version, SLUICE_STORE_OPTS_VERSION);
    cr_assert_eq(su.version, SLUICE_SUPERVISOR_OPTS_VERSION);
    /* every other member zero: the documented defaults */
    cr_assert_null(c.url);
    cr_assert_null(st.dir);
    cr_assert_eq(le.lease_ms, 0);
}

Test(opts, init_function_knows_only_this_librarys_versions)
{
    sluice_client_opts_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(&c, 0x5a, sizeof(c));
    cr_assert_eq(sluice_client_opts_init(&c, SLUICE_CLIENT_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(c.version, SLUICE_CLIENT_OPTS_VERSION);
    cr_assert_null(c.url);
    cr_assert_null(c.auth);
    cr_assert_eq(c.connect_timeout_ms, 0);

    memset(&c, 0x5a, sizeof(c));
    assert_refused(sluice_client_opts_init(&c, SLUICE_CLIENT_OPTS_VERSION + 1, &err), &err,
                   "client", SLUICE_CLIENT_OPTS_VERSION + 1);
    cr_assert_eq(((unsigned char *)&c)[0], 0x5a, "a refused init leaves the struct untouched");
    assert_refused(sluice_client_opts_init(&c, 0, &err), &err, "client", 0);
    cr_assert_eq(sluice_client_opts_init(NULL, SLUICE_CLIENT_OPTS_VERSION, &err), SLUICE_EINVAL);
}

Test(opts, every_init_function)
{
    sluice_accept_opts_t a;
    sluice_auth_opts_t au;
    sluice_token_mint_opts_t m;
    sluice_config_opts_t cf;
    sluice_launcher_opts_t l;
    sluice_leader_opts_t le;
    sluice_server_opts_t s;
    sluice_store_opts_t st;
    sluice_supervisor_opts_t su;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_accept_opts_init(&a, SLUICE_ACCEPT_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_auth_opts_init(&au, SLUICE_AUTH_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_token_mint_opts_init(&m, SLUICE_TOKEN_MINT_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_config_opts_init(&cf, SLUICE_CONFIG_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_launcher_opts_init(&l, SLUICE_LAUNCHER_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_leader_opts_init(&le, SLUICE_LEADER_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_server_opts_init(&s, SLUICE_SERVER_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_store_opts_init(&st, SLUICE_STORE_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(sluice_supervisor_opts_init(&su, SLUICE_SUPERVISOR_OPTS_VERSION, &err), SLUICE_OK);
    cr_assert_eq(a.version + au.version + m.version + cf.version + l.version + le.version +
                     s.version + st.version + su.version,
                 6u + SLUICE_AUTH_OPTS_VERSION + SLUICE_CONFIG_OPTS_VERSION +
                     SLUICE_LAUNCHER_OPTS_VERSION);
    assert_refused(sluice_store_opts_init(&st, 7, &err), &err, "store", 7);
    assert_refused(sluice_token_mint_opts_init(&m, 0, &err), &err, "token_mint", 0);
}

/* A struct zeroed instead of started from its INIT (version 0), or made by
 * a newer header (a version this library does not know), is refused by the
 * function that takes it, before any other member is looked at. */
Test(opts, functions_refuse_an_unknown_version)
{
    static const char yaml[] = "site:\n  name: opts\n";
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    unsigned bad[] = {0, 2, 1000};
    size_t i;

    co.text = yaml;
    co.text_len = sizeof(yaml) - 1;
    co.no_required = true;
    cr_assert_eq(sluice_config_load(&co, &cfg, &err), SLUICE_OK, "%s", err.text);

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        unsigned v = bad[i];
        sluice_config_opts_t c2 = co;
        sluice_config_t *cfg2 = NULL;
        sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
        sluice_auth_t *auth = NULL;
        sluice_token_mint_opts_t mo = SLUICE_TOKEN_MINT_OPTS_INIT;
        char *tok = NULL;
        sluice_client_opts_t clo = SLUICE_CLIENT_OPTS_INIT;
        sluice_client_t *client = NULL;
        sluice_store_opts_t so = SLUICE_STORE_OPTS_INIT;
        sluice_store_t *store = NULL;
        sluice_leader_opts_t lo = SLUICE_LEADER_OPTS_INIT;
        sluice_leader_t *leader = NULL;
        sluice_launcher_opts_t lno = SLUICE_LAUNCHER_OPTS_INIT;
        sluice_launcher_t *launcher = NULL;
        sluice_supervisor_opts_t suo = SLUICE_SUPERVISOR_OPTS_INIT;
        sluice_supervisor_t *sup = NULL;
        sluice_accept_opts_t aco = SLUICE_ACCEPT_OPTS_INIT;
        sluice_accept_t *acc = NULL;
        sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
        sluice_server_opts_t sro = SLUICE_SERVER_OPTS_INIT;
        sluice_server_t *server = NULL;
        /* never dereferenced: the leader checks its options before it
         * looks at the store */
        sluice_store_t *not_a_store = (sluice_store_t *)&co;

        if (v == 1)
            continue;
        c2.version = v;
        if (v > SLUICE_CONFIG_OPTS_VERSION || v == 0) { /* config knows 1 and 2 */
            assert_refused(sluice_config_load(&c2, &cfg2, &err), &err, "config", v);
            cr_assert_null(cfg2);
        } else {
            cr_assert_eq(sluice_config_load(&c2, &cfg2, &err), SLUICE_OK, "%s", err.text);
            sluice_config_free(cfg2);
        }

        ao.version = v;
        ao.kind = SLUICE_AUTH_ENV;
        if (v > SLUICE_AUTH_OPTS_VERSION || v == 0) { /* auth knows 1 to 3 */
            assert_refused(sluice_auth_new(&auth, &ao, &err), &err, "auth", v);
            cr_assert_null(auth);
        }

        mo.version = v;
        mo.key = (const unsigned char *)"k-test-hs256-0123456789abcdefghi";
        mo.key_len = 32;
        mo.user = "alice";
        assert_refused(sluice_token_mint(&mo, &tok, &err), &err, "token_mint", v);
        cr_assert_null(tok);

        clo.version = v;
        clo.url = "http://127.0.0.1:1";
        assert_refused(sluice_client_new(&client, &clo, &err), &err, "client", v);
        cr_assert_null(client);

        so.version = v;
        so.dir = "/nonexistent/sluice-opts-test";
        assert_refused(sluice_store_open_with(&store, &so, &err), &err, "store", v);
        cr_assert_null(store);

        lo.version = v;
        assert_refused(sluice_leader_new(&leader, not_a_store, &lo, &err), &err, "leader", v);
        cr_assert_null(leader);

        lno.version = v;
        if (v > SLUICE_LAUNCHER_OPTS_VERSION || v == 0) { /* the launcher knows 1 and 2 */
            assert_refused(sluice_launcher_new(&launcher, &lno, &err), &err, "launcher", v);
            cr_assert_null(launcher);
        }

        suo.version = v;
        suo.state_dir = "/nonexistent/sluice-opts-test";
        assert_refused(sluice_supervisor_open(&sup, cfg, &suo, NULL, &err), &err, "supervisor", v);
        cr_assert_null(sup);

        aco.version = v;
        assert_refused(sluice_accept_prepare(&acc, &stage, cfg, "{}", 2, &aco, &err), &err,
                       "accept", v);
        cr_assert_null(acc);
        cr_assert_eq(stage, SLUICE_ACCEPT_STAGE_NONE, "the caller's mistake names no stage");

        sro.version = v;
        assert_refused(sluice_server_new(&server, &sro, &err), &err, "server", v);
        cr_assert_null(server);
    }
    sluice_config_free(cfg);
}
