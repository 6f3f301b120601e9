/* SPDX-License-Identifier: Apache-2.0 */
/* test_auth_tenant.c - acting as a tenant's Slurm user: the proxy source
 * (options version 3), a token that must name the options' user, the
 * three tenant identities built from a site file, and version 2 callers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/auth.h>
#include <sluice/client.h>
#include <sluice/config.h>

#include "config_case.h"

#define KEY32 "k-test-hs256-0123456789abcdefghi"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/sluice-authtn-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cr_log_warn("could not remove %s", dir);
}

TestSuite(auth_tenant, .init = setup, .fini = teardown, .timeout = 30);

static const char *path_of(const char *name)
{
    static char p[4][300];
    static int i;

    i = (i + 1) % 4;
    snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
    return p[i];
}

static void write_file(const char *path, const char *text)
{
    char tmp[320];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    cr_assert_not_null(f = fopen(tmp, "w"));
    cr_assert_eq(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
    cr_assert_eq(chmod(tmp, 0600), 0);
    cr_assert_eq(rename(tmp, path), 0);
}

static char *mint(const char *user)
{
    sluice_token_mint_opts_t m = SLUICE_TOKEN_MINT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *tok = NULL;

    m.alg = SLUICE_JWT_HS256;
    m.key = (const unsigned char *)KEY32;
    m.key_len = strlen(KEY32);
    m.user = user;
    m.lifespan = 3600;
    cr_assert_eq(sluice_token_mint(&m, &tok, &err), SLUICE_OK, "%s", err.text);
    return tok;
}

static char *sun_of(const char *header_token)
{
    char user[SLUICE_TOKEN_USER_MAX];
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *tok = header_token + strlen("X-SLURM-USER-TOKEN: ");

    cr_assert_eq(sluice_token_user(tok, user, sizeof(user), NULL, &err), SLUICE_OK, "%s", err.text);
    return strdup(user);
}

static sluice_auth_t *file_source(const char *user, int must_name, sluice_error_t *err, int *rc)
{
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_auth_t *a = NULL;

    o.kind = SLUICE_AUTH_TOKEN_FILE;
    o.path = path_of("tok");
    o.user = user;
    o.token_names_user = must_name;
    *rc = sluice_auth_new(&a, &o, err);
    return a;
}

/* A proxy names its own user and sends the base's token: one token (one
 * fetch) serves the base and every proxy; an invalidation reaches the base. */
Test(auth_tenant, proxy_names_the_tenant_user_and_sends_the_base_token)
{
    char *site_tok = mint("slurm");
    sluice_auth_opts_t o = SLUICE_AUTH_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *base = NULL, *p = NULL;
    char **hb = NULL, **hp = NULL;
    unsigned long fetches;
    int rc;

    write_file(path_of("tok"), site_tok);
    base = file_source(NULL, 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    o.kind = SLUICE_AUTH_PROXY;
    o.base = base;
    o.user = "alice";
    cr_assert_eq(sluice_auth_new(&p, &o, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user(p), "alice");
    cr_assert_str_eq(sluice_auth_user(base), "slurm");
    cr_assert_eq(sluice_auth_headers(p, &hp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_headers(base, &hb, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(hp[0], "X-SLURM-USER-NAME: alice");
    cr_assert_str_eq(hb[0], "X-SLURM-USER-NAME: slurm");
    cr_assert_str_eq(hp[1], hb[1], "the proxy sends the base's token");
    {
        char *u = sun_of(hp[1]);
        cr_assert_str_eq(u, "slurm", "the token stays the site's (SlurmUser's)");
        free(u);
    }
    fetches = sluice_auth_fetches(base);
    cr_assert_eq(sluice_auth_fetches(p), fetches, "the proxy has no token of its own");
    cr_assert_eq(sluice_auth_source(p, NULL), SLUICE_AUTH_PROXY);
    sluice_auth_invalidate(p);
    sluice_auth_headers_free(hp);
    hp = NULL;
    cr_assert_eq(sluice_auth_headers(p, &hp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_fetches(base), fetches + 1, "the invalidation reached the base");
    sluice_auth_headers_free(hp);
    sluice_auth_headers_free(hb);
    sluice_auth_free(p);
    sluice_auth_free(base);
    free(site_tok);
}

Test(auth_tenant, a_proxy_needs_a_base_a_user_and_options_version_3)
{
    char *site_tok = mint("slurm");
    sluice_auth_opts_t o;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *base = NULL, *p = NULL, *pp = NULL;
    int rc;

    write_file(path_of("tok"), site_tok);
    base = file_source(NULL, 0, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_opts_init(&o, 3, &err), SLUICE_OK, "%s", err.text);
    o.kind = SLUICE_AUTH_PROXY;
    o.user = "alice";
    cr_assert_eq(sluice_auth_new(&p, &o, &err), SLUICE_EINVAL, "no base");
    o.base = base;
    o.user = NULL;
    cr_assert_eq(sluice_auth_new(&p, &o, &err), SLUICE_ECONFIG, "no user");
    cr_assert_null(p);
    o.user = "alice";
    cr_assert_eq(sluice_auth_new(&p, &o, &err), SLUICE_OK, "%s", err.text);
    o.base = p;
    cr_assert_eq(sluice_auth_new(&pp, &o, &err), SLUICE_EINVAL, "a proxy of a proxy");
    o.base = base;
    o.version = 2; /* a version 2 caller has no base member: the kind is unknown to it */
    cr_assert_eq(sluice_auth_new(&pp, &o, &err), SLUICE_EINVAL);
    cr_assert_null(pp);
    sluice_auth_free(p);
    sluice_auth_free(base);
    free(site_tok);
}

/* token_names_user: a token naming another user is refused, at the start
 * and after a rotation; without it (and for version 2 callers) the
 * options' user is trusted, as before. */
Test(auth_tenant, a_tenant_token_must_name_the_tenant_user)
{
    char *mine = mint("alice"), *theirs = mint("bob");
    sluice_auth_opts_t o;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char *got = NULL;
    int rc;

    write_file(path_of("tok"), theirs);
    a = file_source("alice", 1, &err, &rc);
    cr_assert_eq(rc, SLUICE_EAUTH, "%s", err.text);
    cr_assert_null(a);
    cr_assert_not_null(strstr(err.text, "names user bob, not alice"), "%s", err.text);
    cr_assert_null(strstr(err.text, theirs), "the token is never quoted");

    write_file(path_of("tok"), mine);
    a = file_source("alice", 1, &err, &rc);
    cr_assert_eq(rc, SLUICE_OK, "%s", err.text);
    write_file(path_of("tok"), theirs);
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_EAUTH, "a rotation to bob");
    cr_assert_null(got);
    sluice_auth_free(a);

    /* version 2 (no token_names_user): the options' user, whatever the token says */
    cr_assert_eq(sluice_auth_opts_init(&o, 2, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(o.version, 2);
    o.kind = SLUICE_AUTH_TOKEN_FILE;
    o.path = path_of("tok");
    o.user = "alice";
    cr_assert_eq(sluice_auth_new(&a, &o, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user(a), "alice");
    cr_assert_eq(sluice_auth_token(a, &got, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(got, theirs);
    free(got);
    sluice_auth_free(a);
    free(mine);
    free(theirs);
}

/* sluice_auth_opts_init(2) fills only the version 2 struct: a caller built
 * against it has no room for the version 3 members. */
Test(auth_tenant, opts_init_of_version_2_writes_no_version_3_member)
{
    struct {
        sluice_auth_opts_t o;
    } s;
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(&s, 0x5a, sizeof(s));
    cr_assert_eq(sluice_auth_opts_init(&s.o, 2, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(s.o.version, 2);
    cr_assert_eq(s.o.command_timeout_ms, 0);
    cr_assert_eq(((const unsigned char *)&s.o.base)[0], 0x5a, "past the version 2 struct");
    cr_assert_eq(sluice_auth_opts_init(&s.o, 3, &err), SLUICE_OK, "%s", err.text);
    cr_assert_null(s.o.base);
    cr_assert_eq(s.o.token_names_user, 0);
}

/* ---- the three identities from a site file ------------------------------ */

static sluice_config_t *site(const char *identity_lines)
{
    char yaml[2048];
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(yaml, sizeof(yaml),
             "rest:\n  url: https://rest.example:6820\n  user: slurm\n  jwt_key_file: %s\n"
             "storage:\n  root: /s\njob_launcher:\n  sandbox: none\n"
             "tenants:\n  - name: ta\n    callers: [ca]\n    slurm_user: alice\n%s",
             path_of("key"), identity_lines);
    cr_assert_eq(config_case_load(yaml, NULL, NULL, 0, &cfg, &err), SLUICE_OK, "%s", err.text);
    return cfg;
}

static void headers_of(const sluice_config_t *cfg, sluice_auth_t *base, char *name, char *sun)
{
    const sluice_tenant_t *t = sluice_config_tenant_named(cfg, "ta");
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;
    char **h = NULL;
    char *u;

    cr_assert_not_null(t);
    cr_assert_eq(sluice_client_auth_for_tenant(&a, sluice_config_cluster_at(cfg, 0), t, base, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_auth_headers(a, &h, &err), SLUICE_OK, "%s", err.text);
    snprintf(name, 64, "%s", h[0]);
    u = sun_of(h[1]);
    snprintf(sun, 64, "%s", u);
    free(u);
    sluice_auth_headers_free(h);
    sluice_auth_free(a);
}

Test(auth_tenant, each_identity_acts_as_the_tenant_user)
{
    char *alice = mint("alice"), *bob = mint("bob");
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg;
    sluice_auth_t *base = NULL, *a = NULL;
    char yaml[512], name[64], sun[64];

    write_file(path_of("key"), KEY32);
    /* mint: the cluster's key, sun = the tenant's user */
    cfg = site("    identity: mint\n");
    cr_assert_eq(sluice_client_auth_from_config(&base, sluice_config_cluster_at(cfg, 0), &err),
                 SLUICE_OK, "%s", err.text);
    headers_of(cfg, base, name, sun);
    cr_assert_str_eq(name, "X-SLURM-USER-NAME: alice");
    cr_assert_str_eq(sun, "alice");
    /* proxy: the site's token (sun = slurm), alice named */
    sluice_config_free(cfg);
    cfg = site("    identity: proxy\n");
    headers_of(cfg, base, name, sun);
    cr_assert_str_eq(name, "X-SLURM-USER-NAME: alice");
    cr_assert_str_eq(sun, "slurm");
    sluice_config_free(cfg);
    /* token_file: the tenant's file, which must name alice */
    write_file(path_of("alice.jwt"), alice);
    snprintf(yaml, sizeof(yaml), "    identity: token_file\n    jwt_file: %s\n",
             path_of("alice.jwt"));
    cfg = site(yaml);
    headers_of(cfg, NULL, name, sun);
    cr_assert_str_eq(name, "X-SLURM-USER-NAME: alice");
    cr_assert_str_eq(sun, "alice");
    write_file(path_of("alice.jwt"), bob);
    cr_assert_eq(sluice_client_auth_for_tenant(&a, sluice_config_cluster_at(cfg, 0),
                                               sluice_config_tenant_named(cfg, "ta"), NULL, &err),
                 SLUICE_EAUTH, "a token file of bob for tenant ta (alice)");
    cr_assert_not_null(strstr(err.text, "tenant ta"), "%s", err.text);
    cr_assert_null(a);
    sluice_config_free(cfg);
    sluice_auth_free(base);
    free(alice);
    free(bob);
}
