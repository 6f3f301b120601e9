/* SPDX-License-Identifier: Apache-2.0 */
/* test_webhook_rules.c - what a webhook URL may be (site/webhook_url.c),
 * the site's webhooks.* fields and their cross checks
 * (site/config_check.c), and a request's `webhook.url` against the site's
 * policy (request/launch_webhook.c): each refusal names the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/config.h>
#include <sluice/launch.h>
#include <sluice/render.h>

#include "site/config_model.h"
#include "site/webhook_url.h"

TestSuite(webhook_rules, .timeout = 30);

/* ---- the URL rule ------------------------------------------------------- */

Test(webhook_rules, urls)
{
    static const char *const good[] = {
        "https://hooks.example.com/sluice",
        "https://hooks.example.com",
        "https://h.example:8443/a/b/",
        "http://127.0.0.1:8080/hook",
        "http://localhost/x",
        "http://[::1]:9000/",
        "https://[2001:db8::1]/x",
        "http://127.3.4.5:1",
        "https://h/a.b/.well-known/x..y",
        "https://h/a/..b/c../%2e%2ex",
        "https://h/a%20b/%7Euser",
    };
    static const char *const bad[] = {
        "",
        "ftp://h/x",
        "hooks.example.com/x",
        "https://",
        "https:///x",
        "https://user:pw@hooks.example.com/x",
        "https://hooks.example.com/x?token=1",
        "https://hooks.example.com/x#f",
        "https://hooks.example.com/a//b",
        "https://hooks example.com/",
        "https://h:0/",
        "https://h:65536/",
        "https://h:80x/",
        "http://hooks.example.com/x", /* plain http off loopback */
        "http://10.0.0.1/x",
        "https://[::1/x",
        "unix:/run/x.sock",
        /* a path that is not what it seems (issue 27) */
        "https://h/allowed/../secret",
        "https://h/allowed/./x",
        "https://h/allowed/..",
        "https://h/allowed/.",
        "https://h/..",
        "https://h/allowed/%2e%2e/admin",
        "https://h/allowed/%2E%2E/admin",
        "https://h/allowed/.%2E/admin",
        "https://h/allowed/%2e./admin",
        "https://h/allowed/%2e/admin",
        "https://h/allowed/..;/admin",
        "https://h/allowed/..;jsessionid=1/admin",
        "https://h/allowed/.../admin",
        "https://h/allowed\\..\\admin",
        "https://h/allowed\\x",
        "https://h/allowed/..%2fadmin",
        "https://h/allowed%2F..%2Fadmin",
        "https://h/allowed%5c..%5cadmin",
        "https://h/allowed%5C",
        "https://h/allowed//admin",
        "https://h/allowed/%zz",
        "https://h/allowed/%2",
        "https://h/allowed/%",
        "https://h/allowed/%00",
        "https://h/allowed/%252e%252e/admin",
    };
    size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        cr_expect_null(webhook_url_problem(good[i], false), "%s: %s", good[i],
                       webhook_url_problem(good[i], false));
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_not_null(webhook_url_problem(bad[i], false), "%s accepted", bad[i]);
    cr_expect_null(webhook_url_problem("http://hooks.example.com/x", true),
                   "allowed with allow_insecure_http");
    cr_expect(strstr(webhook_url_problem("https://u:p@h/x", false), "password") != NULL);
    cr_expect(strstr(webhook_url_problem("https://h/a/%2E%2e/b", false), "'..'") != NULL);
    cr_expect(strstr(webhook_url_problem("https://h/a%2Fb", false), "%2F") != NULL);
    cr_expect(strstr(webhook_url_problem("https://h/a\\b", false), "backslash") != NULL);
}

Test(webhook_rules, prefixes_match_at_a_boundary_only)
{
    char *p[] = {(char *)"https://hooks.example.com", (char *)"https://ci.example.org/hooks/"};

    cr_expect(webhook_url_prefix_match("https://hooks.example.com", p[0]));
    cr_expect(webhook_url_prefix_match("https://hooks.example.com/a", p[0]));
    cr_expect_not(webhook_url_prefix_match("https://hooks.example.com.evil.net/", p[0]));
    cr_expect_not(webhook_url_prefix_match("https://hooks.example.com:444/", p[0]));
    cr_expect(webhook_url_prefix_match("https://ci.example.org/hooks/x", p[1]));
    cr_expect_not(webhook_url_prefix_match("https://ci.example.org/hooksx", p[1]));
    cr_expect(webhook_url_allowed("https://ci.example.org/hooks/1", p, 2));
    cr_expect_not(webhook_url_allowed("https://other.example/", p, 2));
    cr_expect_not(webhook_url_allowed("https://hooks.example.com/", p, 0));
}

/* ---- the site fields ---------------------------------------------------- */

static sluice_err load(const char *text, sluice_config_t **cfg, sluice_error_t *err)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    static const char *const no_env[] = {NULL};

    o.text = text;
    o.text_len = strlen(text);
    o.text_name = "site.yaml";
    o.envp = no_env;
    o.no_required = true;
    return sluice_config_load(&o, cfg, err);
}

Test(webhook_rules, site_fields_and_their_defaults)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg = NULL;
    json_t *shown = NULL;
    char *text;

    cr_assert_eq(load("site:\n  name: x\n", &cfg, &err), SLUICE_OK, "%s", err.text);
    cr_expect_null(cfg->webhooks.url);
    cr_expect_eq(cfg->webhooks.queue_max, 10000);
    cr_expect_eq(cfg->webhooks.timeout_s, 10);
    cr_expect_eq(cfg->webhooks.retry_initial_s, 5);
    cr_expect_eq(cfg->webhooks.retry_max_s, 3600);
    cr_expect_eq(cfg->webhooks.max_attempts, 20);
    cr_expect_not(cfg->webhooks.allow_request_urls);
    sluice_config_free(cfg);
    cfg = NULL;
    cr_assert_eq(load("webhooks:\n"
                      "  url: https://hooks.example.com/sluice\n"
                      "  secret_file: /etc/sluice/webhook.key\n"
                      "  queue_max: 50\n"
                      "  timeout_s: 3s\n"
                      "  retry_initial_s: 2\n"
                      "  retry_max_s: 10m\n"
                      "  max_attempts: 7\n"
                      "  allow_request_urls: true\n"
                      "  request_url_prefixes: [https://ci.example.org/hooks/]\n",
                      &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_expect_str_eq(cfg->webhooks.url, "https://hooks.example.com/sluice");
    cr_expect_eq(cfg->webhooks.queue_max, 50);
    cr_expect_eq(cfg->webhooks.timeout_s, 3);
    cr_expect_eq(cfg->webhooks.retry_max_s, 600);
    cr_expect_eq(cfg->webhooks.max_attempts, 7);
    cr_expect_eq(cfg->webhooks.request_url_prefixes.n, 1);
    cr_assert_eq(sluice_config_to_json(cfg, &shown, &err), SLUICE_OK, "%s", err.text);
    text = json_dumps(shown, JSON_COMPACT);
    cr_expect(strstr(text, "/etc/sluice/webhook.key") != NULL, "config show names the path");
    free(text);
    json_decref(shown);
    sluice_config_free(cfg);
}

Test(webhook_rules, bad_site_fields_name_the_field_and_the_reason)
{
    static const struct {
        const char *yaml, *want;
    } cases[] = {
        {"webhooks:\n  url: http://hooks.example.com/x\n  secret_file: /k\n",
         "site.yaml:2:8: webhooks.url: plain http:// only to a loopback host"},
        {"webhooks:\n  url: https://u:p@h.example/x\n  secret_file: /k\n",
         "webhooks.url: a user or password"},
        {"webhooks:\n  url: https://h.example/x\n", "webhooks.url: needs webhooks.secret_file"},
        {"webhooks:\n  allow_request_urls: true\n  secret_file: /k\n",
         "webhooks.allow_request_urls: needs webhooks.request_url_prefixes"},
        {"webhooks:\n  allow_request_urls: true\n  request_url_prefixes: [https://h/?a]\n"
         "  secret_file: /k\n",
         "webhooks.request_url_prefixes: 'https://h/?a': a query string"},
        {"webhooks:\n  allow_request_urls: true\n"
         "  request_url_prefixes: [https://h/ok/../]\n  secret_file: /k\n",
         "webhooks.request_url_prefixes: 'https://h/ok/../': a '.' or '..' path segment"},
        {"webhooks:\n  url: https://h/hooks/%2e%2e/admin\n  secret_file: /k\n",
         "webhooks.url: a '.' or '..' path segment"},
        {"webhooks:\n  retry_initial_s: 100\n  retry_max_s: 10\n",
         "webhooks.retry_initial_s: 100s is more than webhooks.retry_max_s (10s)"},
        {"webhooks:\n  queue_max: 0\n", "webhooks.queue_max: expected an integer from 1"},
        {"webhooks:\n  secret_file: relative.key\n", "webhooks.secret_file: expected an absolute"},
        {"webhooks:\n  timeout_s: 1h\n", "webhooks.timeout_s: expected a duration from 1s to 300s"},
        {"webhooks:\n  bogus: 1\n", "webhooks.bogus: unknown key"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_config_t *cfg = NULL;

        cr_expect_eq(load(cases[i].yaml, &cfg, &err), SLUICE_ECONFIG, "case %zu loaded", i);
        cr_expect(strstr(err.text, cases[i].want) != NULL, "case %zu: %s", i, err.text);
        sluice_config_free(cfg);
    }
}

/* ---- a request's webhook.url ------------------------------------------- */

static char *const prefixes[] = {(char *)"https://ci.example.org/hooks/",
                                 (char *)"http://127.0.0.1:8099"};

static sluice_launch_policy_t policy(bool allow)
{
    sluice_launch_policy_t p;

    memset(&p, 0, sizeof(p));
    p.default_profile = SLUICE_LAUNCH_PROFILE_NONE;
    p.allow_webhook_urls = allow;
    p.webhook_prefixes = prefixes;
    p.n_webhook_prefixes = 2;
    return p;
}

static sluice_err parse(const char *webhook,
                        const sluice_launch_policy_t *pol,
                        unsigned flags,
                        sluice_launch_t **l,
                        sluice_error_t *err)
{
    char json[1024];

    snprintf(json, sizeof(json),
             "{\"launch_id\":\"w\",\"site\":\"s\",\"command\":\"true\","
             "\"pools\":[{\"name\":\"main\"}],\"webhook\":%s}",
             webhook);
    return sluice_launch_parse(l, json, strlen(json), pol, flags, err);
}

Test(webhook_rules, a_request_url_needs_the_site_policy_and_a_listed_prefix)
{
    static const struct {
        const char *webhook, *want;
        bool allow;
    } cases[] = {
        {"{\"url\":\"https://ci.example.org/hooks/1\"}",
         "webhook.url: site policy does not allow a request to name a webhook URL", false},
        {"{\"url\":\"https://evil.example/x\"}", "webhook.url: not under a URL prefix", true},
        {"{\"url\":\"https://ci.example.org/hooksx\"}", "webhook.url: not under a URL prefix",
         true},
        {"{\"url\":\"http://10.1.1.1/x\"}", "webhook.url: plain http:// only to a loopback", true},
        {"{\"url\":42}", "webhook.url: expected a string", true},
        {"{}", "webhook.url: required", true},
        {"{\"url\":\"https://ci.example.org/hooks/1\",\"secret\":\"x\"}", "webhook.secret", true},
        {"\"https://ci.example.org/hooks/1\"", "webhook: expected an object", true},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_launch_policy_t pol = policy(cases[i].allow);
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_launch_t *l = NULL;

        cr_expect_eq(parse(cases[i].webhook, &pol, 0, &l, &err), SLUICE_EINVAL, "case %zu", i);
        cr_expect(strstr(err.text, cases[i].want) != NULL, "case %zu: %s", i, err.text);
        sluice_launch_free(l);
    }
}

/* Issue 27: a URL that starts with an allowed prefix but whose path climbs
 * out of it (a dot segment in any encoding, an encoded or back slash) is
 * refused, naming the field and the reason: the receiver, or a proxy on
 * the way, would resolve it to another path, and the site's signature
 * would go there. */
Test(webhook_rules, a_request_url_cannot_climb_out_of_its_prefix)
{
    static const struct {
        const char *url, *want;
    } cases[] = {
        {"https://ci.example.org/hooks/../secret", "webhook.url: a '.' or '..' path segment"},
        {"https://ci.example.org/hooks/%2e%2e/admin", "webhook.url: a '.' or '..' path segment"},
        {"https://ci.example.org/hooks/%2E%2E/admin", "webhook.url: a '.' or '..' path segment"},
        {"https://ci.example.org/hooks/.%2e/admin", "webhook.url: a '.' or '..' path segment"},
        {"https://ci.example.org/hooks/..;/admin", "webhook.url: a '.' or '..' path segment"},
        {"https://ci.example.org/hooks/./x", "webhook.url: a '.' or '..' path segment"},
        {"https://ci.example.org/hooks/..%2fadmin", "webhook.url: an encoded '/' or '\\'"},
        {"https://ci.example.org/hooks/..%5Cadmin", "webhook.url: an encoded '/' or '\\'"},
        {"https://ci.example.org/hooks/..\\admin", "webhook.url: a backslash"},
        {"https://ci.example.org/hooks//admin", "webhook.url: an empty path segment"},
        {"http://127.0.0.1:8099/..", "webhook.url: a '.' or '..' path segment"},
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_launch_policy_t pol = policy(true);
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_launch_t *l = NULL;
        json_t *o = json_pack("{s:s}", "url", cases[i].url);
        char *webhook = json_dumps(o, JSON_COMPACT);

        cr_assert_not_null(webhook);
        cr_expect(webhook_url_allowed(cases[i].url, prefixes, 2), "case %zu: under a prefix", i);
        cr_expect_eq(parse(webhook, &pol, 0, &l, &err), SLUICE_EINVAL, "case %zu accepted", i);
        cr_expect(strstr(err.text, cases[i].want) != NULL, "case %zu: %s", i, err.text);
        sluice_launch_free(l);
        free(webhook);
        json_decref(o);
    }
}

Test(webhook_rules, an_allowed_request_url_is_in_the_canonical_request)
{
    sluice_launch_policy_t pol = policy(true), off = policy(false);
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_t *l = NULL;
    char *json;

    cr_assert_eq(parse("{\"url\":\"http://127.0.0.1:8099/h\"}", &pol, 0, &l, &err), SLUICE_OK, "%s",
                 err.text);
    cr_expect_str_eq(sluice_launch_spec(l)->webhook_url, "http://127.0.0.1:8099/h");
    json = sluice_launch_to_json(l, &err);
    cr_assert_not_null(json);
    cr_expect(strstr(json, "\"webhook\":{\"url\":\"http://127.0.0.1:8099/h\"}") != NULL, "%s",
              json);
    free(json);
    sluice_launch_free(l);
    /* A stored launch keeps its URL when the policy changed since; the
     * worker checks the policy again before it sends anything. */
    l = NULL;
    cr_assert_eq(
        parse("{\"url\":\"http://127.0.0.1:8099/h\"}", &off, SLUICE_LAUNCH_PARSE_STORED, &l, &err),
        SLUICE_OK, "%s", err.text);
    sluice_launch_free(l);
}

Test(webhook_rules, the_site_config_becomes_the_request_policy)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg = NULL;
    sluice_launch_policy_t pol;

    cr_assert_eq(load("webhooks:\n  allow_request_urls: true\n  secret_file: /k\n"
                      "  request_url_prefixes: [https://ci.example.org/hooks/]\n",
                      &cfg, &err),
                 SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_config_launch_policy(cfg, NULL, &pol, &err), SLUICE_OK, "%s", err.text);
    cr_expect(pol.allow_webhook_urls);
    cr_expect_eq(pol.n_webhook_prefixes, 1);
    cr_expect_str_eq(pol.webhook_prefixes[0], "https://ci.example.org/hooks/");
    sluice_config_launch_policy_clear(&pol);
    sluice_config_free(cfg);
}
