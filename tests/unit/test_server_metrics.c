/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_metrics.c - /v1/metrics: valid Prometheus text (HELP and
 * TYPE before every family, well-formed samples, a complete histogram),
 * and every metric moves when its event happens: transitions, launcher
 * cycles, slurmrestd requests by kind and answers by class (through the
 * fake slurmrestd), token expiry, accounting misses, reconciliations
 * (adoptions from the live queue and from accounting, confirmed absences),
 * pruned launches, launches by state.  Only loopback traffic. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "fake_slurmrestd.h"
#include "serve/server_int.h"
#include "http_client.h"
#include "server_fixture.h"

static server_fixture_t fx;

static void init(void)
{
    char why[512] = "";
    cr_assert_eq(sfx_start(&fx, NULL, NULL, why, sizeof(why)), 0, "fixture: %s", why);
}

static void fini(void)
{
    sfx_stop(&fx);
}

TestSuite(metrics, .fini = fini, .timeout = 90);

static char *scrape(void)
{
    hc_response_t r;
    char hdr[128];
    char *text;

    cr_assert_eq(hc_request(fx.port, "GET", "/v1/metrics", SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_expect_str_eq(hc_header(&r, "Content-Type", hdr, sizeof(hdr)),
                     "text/plain; version=0.0.4; charset=utf-8");
    text = strdup(r.body);
    hc_response_clear(&r);
    return text;
}

/* The value of one sample ("name" or "name{labels}"); -1 when absent. */
static double value(const char *text, const char *sample)
{
    char needle[300];
    const char *p;

    snprintf(needle, sizeof(needle), "\n%s ", sample);
    if ((p = strstr(text, needle)) == NULL)
        return -1;
    return strtod(p + strlen(needle), NULL);
}

static double metric(const char *sample)
{
    char *text = scrape();
    double v = value(text, sample);

    free(text);
    return v;
}

static void post(const char *id)
{
    cr_assert_eq(sfx_post(&fx, id), 201, "POST %s", id);
}

/* One launcher cycle through the server, then one second passes. */
static void step(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_server_step(fx.server, &err), SLUICE_OK, "%s", err.text);
    fx.clock_ms += 1000;
}

static int is_done(const char *id)
{
    json_t *l = NULL;
    int done;

    cr_assert_eq(sluice_store_get_launch(fx.store, id, &l, NULL), SLUICE_OK);
    done = json_is_true(json_object_get(l, "terminal"));
    json_decref(l);
    return done;
}

/* Step until the launch is DONE; returns the steps taken. */
static int run_to_end(const char *id, int max_steps)
{
    int i;

    for (i = 0; i < max_steps && !is_done(id); i++)
        step();
    cr_assert(is_done(id), "%s not done after %d steps", id, max_steps);
    return i;
}

/* ---- the format ---------------------------------------------------------- */

static int name_ok(const char *s, size_t n)
{
    size_t i;

    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
        return 0;
    for (i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
            return 0;
    return 1;
}

/* Exposition format 0.0.4, checked line by line. */
static void check_exposition(const char *text)
{
    char help[64][96], type[64][96];
    size_t n_help = 0, n_type = 0, i;
    const char *line = text;
    int samples = 0;

    cr_assert(strlen(text) > 0 && text[strlen(text) - 1] == '\n', "no final newline");
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = (size_t)(end - line);
        char buf[512];

        cr_assert_lt(len, sizeof(buf));
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = end + 1;
        if (strncmp(buf, "# HELP ", 7) == 0) {
            size_t nl = strcspn(buf + 7, " ");
            cr_assert(name_ok(buf + 7, nl), "bad HELP: %s", buf);
            cr_assert(buf[7 + nl] == ' ' && buf[8 + nl] != '\0', "empty HELP: %s", buf);
            cr_assert_lt(n_help, 64u);
            snprintf(help[n_help++], 96, "%.*s", (int)nl, buf + 7);
        } else if (strncmp(buf, "# TYPE ", 7) == 0) {
            size_t nl = strcspn(buf + 7, " ");
            const char *t = buf + 8 + nl;
            cr_assert(name_ok(buf + 7, nl), "bad TYPE: %s", buf);
            cr_assert(strcmp(t, "counter") == 0 || strcmp(t, "gauge") == 0 ||
                          strcmp(t, "histogram") == 0 || strcmp(t, "summary") == 0,
                      "bad TYPE: %s", buf);
            cr_assert_lt(n_type, 64u);
            snprintf(type[n_type++], 96, "%.*s", (int)nl, buf + 7);
        } else {
            size_t nl = strcspn(buf, "{ ");
            char fam[96], *vend;
            const char *v;
            int seen_help = 0, seen_type = 0;

            cr_assert(name_ok(buf, nl), "bad sample: %s", buf);
            snprintf(fam, sizeof(fam), "%.*s", (int)nl, buf);
            /* a histogram's samples belong to its family */
            for (i = 0; i < n_type; i++) {
                size_t tl = strlen(type[i]);
                if (strcmp(fam, type[i]) == 0 ||
                    (strncmp(fam, type[i], tl) == 0 &&
                     (strcmp(fam + tl, "_bucket") == 0 || strcmp(fam + tl, "_sum") == 0 ||
                      strcmp(fam + tl, "_count") == 0)))
                    seen_type = 1, snprintf(fam, sizeof(fam), "%s", type[i]);
            }
            for (i = 0; i < n_help; i++)
                seen_help |= strcmp(fam, help[i]) == 0;
            cr_assert(seen_type && seen_help, "no HELP/TYPE before: %s", buf);
            if (buf[nl] == '{') {
                const char *close = strchr(buf + nl, '}');
                cr_assert_not_null(close, "unclosed labels: %s", buf);
                cr_assert(strstr(buf + nl, "=\"") != NULL, "bad labels: %s", buf);
                v = close + 1;
            } else {
                v = buf + nl;
            }
            cr_assert_eq(*v, ' ', "no value: %s", buf);
            strtod(v + 1, &vend);
            cr_assert(vend != v + 1 && *vend == '\0', "bad value: %s", buf);
            samples++;
        }
    }
    cr_assert_gt(samples, 10);
    /* one HELP and one TYPE per family */
    for (i = 0; i < n_type; i++)
        for (size_t k = i + 1; k < n_type; k++)
            cr_assert_str_neq(type[i], type[k], "TYPE twice");
}

Test(metrics, the_exposition_is_valid_and_the_histogram_complete, .init = init)
{
    char *text;
    double inf, count, prev = 0;
    static const char *const les[] = {"0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
                                      "0.5",   "1",    "2.5",   "5",    "10"};
    size_t i;

    post("fmt-1");
    step();
    step();
    text = scrape();
    check_exposition(text);
    for (i = 0; i < sizeof(les) / sizeof(les[0]); i++) {
        char s[96];
        double v;
        snprintf(s, sizeof(s), "sluice_launcher_cycle_seconds_bucket{le=\"%s\"}", les[i]);
        v = value(text, s);
        cr_expect_geq(v, prev, "%s not cumulative", s);
        prev = v;
    }
    inf = value(text, "sluice_launcher_cycle_seconds_bucket{le=\"+Inf\"}");
    count = value(text, "sluice_launcher_cycle_seconds_count");
    cr_expect_eq(count, 2);
    cr_expect_eq(inf, count);
    cr_expect_geq(inf, prev);
    cr_expect_gt(value(text, "sluice_launcher_cycle_seconds_sum"), 0);
    free(text);
}

/* ---- every metric moves -------------------------------------------------- */

Test(metrics, transitions_cycles_and_states_move, .init = init)
{
    double t0 = metric("sluice_transitions_total");
    int steps;

    cr_expect_eq(metric("sluice_launcher_cycle_seconds_count"), 0);
    cr_expect_eq(metric("sluice_launches{state=\"ACCEPTED\"}"), 0);
    post("st-1");
    cr_expect_eq(metric("sluice_launches{state=\"ACCEPTED\"}"), 1);
    steps = run_to_end("st-1", 30);
    cr_expect_eq(metric("sluice_launches{state=\"ACCEPTED\"}"), 0);
    cr_expect_eq(metric("sluice_launches{state=\"DONE\"}"), 1);
    /* ACCEPTED -> SUBMITTING -> PENDING -> RUNNING -> DONE at least */
    cr_expect_geq(metric("sluice_transitions_total") - t0, 4);
    cr_expect_eq(metric("sluice_launcher_cycle_seconds_count"), steps);
    cr_expect_eq(metric("sluice_launcher_cycle_errors_total"), 0);
    cr_expect_eq(metric("sluice_accounting_misses_total"), 0);
}

Test(metrics, an_uncertain_submit_adopted_from_the_live_queue, .init = init)
{
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"adopted-live\"}"), 0);
    fake_cluster_push_mode(fx.fc, FAKE_SUBMIT_LOST);
    post("lost-1");
    run_to_end("lost-1", 40);
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"adopted-live\"}"), 1);
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"adopted-accounting\"}"), 0);
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"absence-confirmed\"}"), 0);
}

Test(metrics, an_uncertain_submit_adopted_from_accounting, .init = init)
{
    fake_stage_t quick[] = {{SLUICE_JOB_COMPLETED, 0, 0, 0, 0}};

    fake_cluster_set_script(fx.fc, quick, 1);
    fake_cluster_push_mode(fx.fc, FAKE_SUBMIT_LOST);
    fx.fc->live_hidden = true; /* it runs and leaves before anyone looks */
    post("lost-2");
    run_to_end("lost-2", 40);
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"adopted-accounting\"}"), 1);
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"adopted-live\"}"), 0);
}

Test(metrics, a_confirmed_absence, .init = init)
{
    int i;

    fake_cluster_push_mode(fx.fc, FAKE_SUBMIT_DROP);
    post("drop-1");
    for (i = 0; i < 80; i++)
        step();
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"absence-confirmed\"}"), 0,
                 "confirmed before 60 s + 3 lookups");
    for (i = 0; i < 40 && fx.fc->n_submit < 2; i++)
        step();
    cr_assert_eq(fx.fc->n_submit, 2);
    cr_expect_eq(metric("sluice_submit_reconciliations_total{outcome=\"absence-confirmed\"}"), 1);
}

Test(metrics, accounting_misses, .init = init)
{
    /* The job leaves the queue without a final state and never reaches
     * accounting: each accounting read misses, until the budget (5) ends
     * the launch. */
    fake_stage_t vanish[] = {{SLUICE_JOB_RUNNING, 0, 0, 0, 2},
                             {SLUICE_JOB_BASE_UNKNOWN, 0, 0, 0, 1}};

    fake_cluster_set_script(fx.fc, vanish, 2);
    post("miss-1");
    cr_expect_eq(metric("sluice_accounting_misses_total"), 0);
    run_to_end("miss-1", 120);
    cr_expect_eq(metric("sluice_accounting_misses_total"), 5);
}

Test(metrics, pruned_launches, .init = init)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t n = 0;

    post("old-1");
    post("old-2");
    run_to_end("old-1", 30);
    run_to_end("old-2", 30);
    cr_expect_eq(metric("sluice_launches_pruned_total"), 0);
    cr_assert_eq(sluice_store_prune(fx.store, 1000, fx.clock_ms + 3600000, &n, &err), SLUICE_OK,
                 "%s", err.text);
    cr_assert_eq(n, 2);
    server_count_pruned(fx.server, n);
    cr_expect_eq(metric("sluice_launches_pruned_total"), 2);
    cr_expect_eq(metric("sluice_launches{state=\"DONE\"}"), 0);
}

/* ---- the REST client's counters and token expiry ------------------------- */

static fake_server_t *fs;
static sluice_client_t *client;
static char keypath[64];
static int64_t fake_now = 1700000000;

static int64_t ticking_clock(void *arg)
{
    (void)arg;
    return fake_now++;
}

static int64_t ttl_s(void *arg)
{
    (void)arg;
    return 1234;
}

static void with_client(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->client = client;
    so->token_ttl_s = ttl_s;
}

static char *fixture(const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];
    FILE *f;
    char *text;
    long len;

    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/v0.0.38/%s.json", src ? src : ".",
             name);
    f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)len + 1);
    cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return text;
}

static void push(int status, const char *body)
{
    fake_response_t r;

    memset(&r, 0, sizeof(r));
    r.status = status;
    r.body = body;
    fake_push(fs, &r);
}

static void init_client(void)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char why[512] = "";
    int fd;

    fs = fake_start(0);
    cr_assert_not_null(fs);
    snprintf(keypath, sizeof(keypath), "/tmp/sluice-metrics-key-XXXXXX");
    fd = mkstemp(keypath);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
    fchmod(fd, 0600);
    close(fd);
    ao.kind = SLUICE_AUTH_HS256_KEY;
    ao.path = keypath;
    ao.user = "alice";
    ao.clock = ticking_clock;
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    co.url = fake_url(fs);
    co.api_version = "v0.0.38";
    co.query_timeout_ms = 2000;
    co.submit_timeout_ms = 2000;
    co.cancel_timeout_ms = 2000;
    co.auth = auth;
    cr_assert_eq(sluice_client_new(&client, &co, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sfx_start(&fx, with_client, NULL, why, sizeof(why)), 0, "fixture: %s", why);
}

static void fini_client(void)
{
    sfx_stop(&fx);
    sluice_client_free(client);
    client = NULL;
    fake_stop(fs);
    fs = NULL;
    unlink(keypath);
}

static sluice_outcome get_job(void)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(&call, 0, sizeof(call));
    (void)sluice_client_get_job(client, 5, &j, &call, &err);
    sluice_rest_jobs_clear(&j);
    return call.outcome;
}

Test(metrics,
     slurmrestd_requests_by_kind_and_answers_by_class,
     .init = init_client,
     .fini = fini_client)
{
    char *text, *body;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_call_t call;

    text = scrape();
    check_exposition(text);
    cr_expect_eq(value(text, "sluice_slurmrestd_requests_total{kind=\"query\"}"), 0);
    cr_expect_eq(value(text, "sluice_token_expiry_seconds"), 1234);
    free(text);

    body = fixture("diag_basic");
    push(200, body); /* negotiation: one query, ok */
    free(body);
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    body = fixture("error_notfound");
    push(404, body);
    free(body);
    cr_expect_eq(get_job(), SLUICE_OUTCOME_NOT_FOUND);
    body = fixture("error_auth");
    push(401, body); /* refused, refreshed, retried once, refused again */
    push(401, body);
    free(body);
    cr_expect_eq(get_job(), SLUICE_OUTCOME_AUTH);
    push(502, "");
    cr_expect_eq(get_job(), SLUICE_OUTCOME_UNAVAILABLE);
    push(400, "{\"errors\":[{\"error_number\":2001,\"error\":\"bad\"}]}");
    cr_expect_eq(get_job(), SLUICE_OUTCOME_REJECTED);
    push(200, "{\"errors\":[]}");
    memset(&call, 0, sizeof(call));
    cr_expect_eq(sluice_client_cancel(client, 5, NULL, &call, &err), SLUICE_OK, "%s", err.text);

    text = scrape();
    cr_expect_eq(value(text, "sluice_slurmrestd_requests_total{kind=\"query\"}"), 6, "%s", text);
    cr_expect_eq(value(text, "sluice_slurmrestd_requests_total{kind=\"cancel\"}"), 1);
    cr_expect_eq(value(text, "sluice_slurmrestd_requests_total{kind=\"submit\"}"), 0);
    cr_expect_eq(value(text, "sluice_slurmrestd_responses_total{class=\"ok\"}"), 2);
    cr_expect_eq(value(text, "sluice_slurmrestd_responses_total{class=\"not-found\"}"), 1);
    cr_expect_eq(value(text, "sluice_slurmrestd_responses_total{class=\"auth\"}"), 2);
    cr_expect_eq(value(text, "sluice_slurmrestd_responses_total{class=\"unavailable\"}"), 1);
    cr_expect_eq(value(text, "sluice_slurmrestd_responses_total{class=\"rejected\"}"), 1);
    free(text);
}

Test(metrics, without_a_client_no_rpc_metrics_and_no_token_line, .init = init)
{
    char *text = scrape();

    cr_expect_null(strstr(text, "sluice_slurmrestd_"));
    cr_expect_null(strstr(text, "sluice_token_expiry_seconds"));
    free(text);
}

/* ---- the GET view cache --------------------------------------------------- */

static json_t *get_view(const char *id, int *status)
{
    hc_response_t r;
    char path[128];
    json_t *j;

    snprintf(path, sizeof(path), "/v1/launches/%s", id);
    cr_assert_eq(hc_request(fx.port, "GET", path, SFX_AUTH, NULL, 0, &r), 0);
    *status = r.status;
    j = json_loads(r.body, 0, NULL);
    cr_assert_not_null(j, "%s", r.body);
    hc_response_clear(&r);
    return j;
}

Test(metrics, a_cached_view_never_hides_a_change, .init = init)
{
    json_t *a, *b;
    int st;
    char *ta, *tb;
    hc_response_t r;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t n = 0;

    post("cache-1");
    a = get_view("cache-1", &st);
    cr_assert_eq(st, 200);
    b = get_view("cache-1", &st);
    cr_expect_eq(metric("sluice_http_launch_views_total{cache=\"hit\"}"), 1);
    cr_expect_eq(metric("sluice_http_launch_views_total{cache=\"miss\"}"), 1);
    ta = json_dumps(a, JSON_SORT_KEYS);
    tb = json_dumps(b, JSON_SORT_KEYS);
    cr_expect_str_eq(ta, tb);
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
    /* The launcher moves it: the next GET shows the new state. */
    step();
    a = get_view("cache-1", &st);
    cr_expect_str_neq(json_string_value(json_object_get(a, "state")), "ACCEPTED");
    json_decref(a);
    /* A cancel through the API shows at once. */
    cr_assert_eq(hc_request(fx.port, "DELETE", "/v1/launches/cache-1", SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 202, "%s", r.body);
    hc_response_clear(&r);
    a = get_view("cache-1", &st);
    ta = json_dumps(a, 0);
    cr_expect(strstr(ta, "cancel-asked") != NULL, "%s", ta);
    free(ta);
    json_decref(a);
    /* An event another process appends (a CLI cancel) shows within 1 s. */
    a = get_view("cache-1", &st);
    json_decref(a);
    cr_assert_eq(sluice_store_append_event(fx.store, "cache-1", "outside-note", NULL, "cli",
                                           fx.clock_ms, NULL, &err),
                 SLUICE_OK, "%s", err.text);
    usleep(1100 * 1000);
    a = get_view("cache-1", &st);
    ta = json_dumps(a, 0);
    cr_expect(strstr(ta, "outside-note") != NULL, "%s", ta);
    free(ta);
    json_decref(a);
    /* A prune writes no event; the retention pass reports it, and no kept
     * answer outlives it. */
    run_to_end("cache-1", 30);
    a = get_view("cache-1", &st);
    json_decref(a);
    cr_assert_eq(sluice_store_prune(fx.store, 1000, fx.clock_ms + 3600000, &n, &err), SLUICE_OK,
                 "%s", err.text);
    cr_assert_eq(n, 1);
    server_count_pruned(fx.server, n);
    a = get_view("cache-1", &st);
    cr_expect_eq(st, 404);
    json_decref(a);
}
