/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_url.c - choosing the store: store.url and its password rules,
 * a URL shown without its password everywhere (errors, config show), a bad
 * URL, a bad password file and an unreachable server named clearly.  None
 * of these needs a running PostgreSQL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/config.h>
#include <sluice/store.h>

#include "site/config_model.h"
#include "sluice_assert.h"

#include "base/urlsafe.h"

#define PW "s3cret-Pw"

static char tmp[128];

static void setup(void)
{
    strcpy(tmp, "/tmp/sluice-store-url-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(store_url, .init = setup, .fini = teardown, .timeout = 60);

/* Open with `url` (and `pwfile`); must fail with `code`.  err.text is
 * returned in `text`. */
static void open_fails(const char *url, const char *pwfile, sluice_err code, char *text, size_t n)
{
    sluice_store_opts_t so = SLUICE_STORE_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;

    so.dir = tmp;
    so.url = url;
    so.password_file = pwfile;
    cr_assert_eq(sluice_store_open_with(&s, &so, &err), code, "%s: %s", url, err.text);
    cr_assert_null(s);
    snprintf(text, n, "%s", err.text);
}

Test(store_url, redaction_removes_every_password)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"postgresql://sluice:" PW "@db.example:5432/sluice",
         "postgresql://sluice@db.example:5432/sluice"},
        {"postgres://u:p@ss:w@rd@h/db", "postgres://u@h/db"},
        {"postgresql://u@h/db?sslmode=require&password=" PW "&x=1",
         "postgresql://u@h/db?sslmode=require&password=REDACTED&x=1"},
        {"postgresql://u@h/db", "postgresql://u@h/db"},
        {"postgresql:///sluice?host=/run/pg", "postgresql:///sluice?host=/run/pg"},
    };
    char out[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_str_eq(urlsafe_redact(cases[i].in, out, sizeof(out)), cases[i].out);
        cr_assert(strstr(out, PW) == NULL);
    }
    cr_assert(urlsafe_has_password("postgresql://u:x@h/db"));
    cr_assert(urlsafe_has_password("postgresql://u@h/db?password=x"));
    cr_assert(!urlsafe_has_password("postgresql://u@h/db?passfile=/x"));
    cr_assert(!urlsafe_has_password("postgresql://h:5432/db"));
    /* Truncation keeps the text terminated and still without it. */
    cr_assert_str_eq(urlsafe_redact("postgresql://u:" PW "@h/db", out, 16), "postgresql://u@");
}

Test(store_url, a_password_in_the_url_is_refused_and_never_shown)
{
    char text[512];

    open_fails("postgresql://sluice:" PW "@127.0.0.1:1/sluice", NULL, SLUICE_ECONFIG, text,
               sizeof(text));
    cr_assert(strstr(text, "store.url") != NULL, "%s", text);
    cr_assert(strstr(text, PW) == NULL, "%s", text);
    cr_assert(strstr(text, "postgresql://sluice@127.0.0.1:1/sluice") != NULL, "%s", text);
    open_fails("postgresql://sluice@127.0.0.1:1/sluice?password=" PW, NULL, SLUICE_ECONFIG, text,
               sizeof(text));
    cr_assert(strstr(text, PW) == NULL, "%s", text);
    /* libpq's percent-decoding does not hide it either. */
    open_fails("postgresql://sluice@127.0.0.1:1/sluice?%70assword=" PW, NULL, SLUICE_ECONFIG, text,
               sizeof(text));
    cr_assert(strstr(text, "password in the URL") != NULL, "%s", text);
}

Test(store_url, a_bad_url_is_a_config_error_naming_the_field)
{
    char text[512];

    open_fails("mysql://sluice@127.0.0.1/sluice", NULL, SLUICE_ECONFIG, text, sizeof(text));
    cr_assert(strstr(text, "store.url") != NULL, "%s", text);
    open_fails("postgresql://sluice@127.0.0.1:1/sluice?nosuchoption=1", NULL, SLUICE_ECONFIG, text,
               sizeof(text));
    cr_assert(strstr(text, "store.url") != NULL && strstr(text, "nosuchoption") != NULL, "%s",
              text);
}

Test(store_url, an_unreachable_server_names_host_port_database_and_reason)
{
    char text[512];

    /* Port 1 on loopback: nothing listens, the connection is refused. */
    open_fails("postgresql://sluice@127.0.0.1:1/nodb", NULL, SLUICE_ESTORE, text, sizeof(text));
    cr_assert(strstr(text, "store.url") != NULL, "%s", text);
    cr_assert(strstr(text, "host 127.0.0.1 port 1 database nodb") != NULL, "%s", text);
    cr_assert(strstr(text, "refused") != NULL, "libpq's reason: %s", text);
    /* The state directory is still made (the lock file lives there). */
    cr_assert_eq(access(tmp, F_OK), 0);
}

Test(store_url, a_password_file_must_be_private)
{
    char text[512], path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/pgpass", tmp);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("127.0.0.1:1:*:sluice:" PW "\n", f);
    fclose(f);
    cr_assert_eq(chmod(path, 0644), 0);
    open_fails("postgresql://sluice@127.0.0.1:1/sluice", path, SLUICE_ECONFIG, text, sizeof(text));
    cr_assert(strstr(text, "store.password_file") != NULL && strstr(text, "0644") != NULL, "%s",
              text);
    cr_assert(strstr(text, PW) == NULL, "%s", text);
    snprintf(path, sizeof(path), "%s/missing", tmp);
    open_fails("postgresql://sluice@127.0.0.1:1/sluice", path, SLUICE_ECONFIG, text, sizeof(text));
    cr_assert(strstr(text, "store.password_file") != NULL, "%s", text);
}

Test(store_url, config_takes_store_url_from_the_environment_and_refuses_a_password)
{
    static const char *const env_ok[] = {
        "SLUICE_STORE_URL=postgresql://sluice@127.0.0.1:55432/sluice", NULL};
    static const char *const env_pw[] = {
        "SLUICE_STORE_URL=postgresql://sluice:" PW "@127.0.0.1:55432/sluice", NULL};
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg = NULL;
    json_t *j = NULL;
    char *text;

    o.no_required = true;
    o.envp = env_ok;
    cr_assert_sluice_ok(sluice_config_load(&o, &cfg, &err), &err);
    cr_assert_str_eq(cfg->store.url, "postgresql://sluice@127.0.0.1:55432/sluice");
    cr_assert_eq(sluice_config_source(cfg, "store.url"), SLUICE_SRC_ENV);
    cr_assert_sluice_ok(sluice_config_to_json(cfg, &j, &err), &err);
    text = json_dumps(j, JSON_COMPACT);
    cr_assert(strstr(text, "\"store.url\"") != NULL || strstr(text, "\"url\"") != NULL, "%s", text);
    free(text);
    json_decref(j);
    sluice_config_free(cfg);
    cfg = NULL;
    o.envp = env_pw;
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "SLUICE_STORE_URL") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "store.url") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, PW) == NULL, "%s", err.text);
}
