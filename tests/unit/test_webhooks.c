/* SPDX-License-Identifier: Apache-2.0 */
/* test_webhooks.c - the webhook outbox in the store (store_webhooks.c) and
 * the delivery worker (webhooks.c) against the scripted loopback server:
 * transitions queued once and in order from the event log, the cursor,
 * the bound (backpressure, nothing dropped), delete on 2xx, retries and
 * dead rows, per-URL order, restarts, and the signed POST itself.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/config.h>
#include <sluice/leader.h>
#include <sluice/store.h>

#include "base/marker.h"
#include "fake_slurmrestd.h"
#include "scratch.h"
#include "sluice_assert.h"
#include "store/store_webhooks.h"
#include "store_backend.h"
#include "supervise/webhooks.h"

static char dir[256];

static void setup(void)
{
    scratch_make(dir, sizeof(dir), "webhooks");
    store_backend_setup();
}

static void teardown(void)
{
    store_backend_teardown();
    scratch_remove(dir);
}

TestSuite(webhooks, .init = setup, .fini = teardown, .timeout = 60);

#define SECRET "0123456789abcdef-webhook-secret"

static sluice_store_t *open_store(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;

    cr_assert_sluice_ok(store_backend_open(&s, dir, &err), &err);
    return s;
}

/* Launch `id` (with its own webhook URL when `url`), accepted at t. */
static void make_launch(sluice_store_t *s, const char *id, const char *url, int64_t t)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_launch_spec_t spec;
    json_t *req = json_pack("{s:s, s:s}", "launch_id", id, "command", "true");

    if (url != NULL)
        json_object_set_new(req, "webhook", json_pack("{s:s}", "url", url));
    memset(&spec, 0, sizeof(spec));
    spec.launch_id = id;
    spec.site = "x";
    spec.request = req;
    spec.time_ms = t;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, NULL, &err), &err);
    json_decref(req);
}

static void to_state(sluice_store_t *s, const char *id, const char *ev, const char *state, int term)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

    sum.state = state;
    sum.terminal = term;
    if (term) {
        sum.set_result = 1;
        sum.result_code = 0;
        sum.reason = "COMPLETED";
    }
    cr_assert_sluice_ok(
        sluice_store_append_event_and_update(s, id, ev, NULL, NULL, 0, &sum, NULL, &err), &err);
}

static void note(sluice_store_t *s, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(sluice_store_append_event(s, id, "note", NULL, NULL, 0, NULL, &err), &err);
}

/* accepted, submit-started, (note), submitted, (note), finished. */
static void run_launch(sluice_store_t *s, const char *id, const char *url)
{
    make_launch(s, id, url, 0);
    to_state(s, id, "submit-started", "SUBMITTING", 0);
    note(s, id);
    to_state(s, id, "submitted", "PENDING", 0);
    note(s, id);
    to_state(s, id, "finished", "DONE", 1);
}

static size_t fill(sluice_store_t *s, const char *url, size_t max, int *full)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    store_webhook_fill_t f;
    size_t n = 0;

    memset(&f, 0, sizeof(f));
    f.site_url = url;
    f.queue_max = max;
    cr_assert_sluice_ok(store_webhooks_fill(s, &f, &n, full, &err), &err);
    return n;
}

static void due(sluice_store_t *s, int64_t now, store_webhook_row_t **rows, size_t *n)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(store_webhooks_due(s, now, 100, rows, n, NULL, &err), &err);
}

static store_webhook_stats_t stats(sluice_store_t *s)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    store_webhook_stats_t st;

    cr_assert_sluice_ok(store_webhooks_stats(s, &st, &err), &err);
    return st;
}

static void start(sluice_store_t *s)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(store_webhooks_start(s, 0, NULL, &err), &err);
}

static void delivered(sluice_store_t *s, int64_t id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(store_webhooks_delivered(s, id, &err), &err);
}

static json_t *body_of(const store_webhook_row_t *r)
{
    json_t *b = json_loads(r->body, 0, NULL);

    cr_assert_not_null(b, "body is JSON: %s", r->body);
    return b;
}

#define FAR (INT64_C(1) << 60)

/* ---- the outbox in the store ------------------------------------------- */

Test(webhooks, each_transition_is_queued_once_in_order_with_its_body)
{
    sluice_store_t *s = open_store();
    store_webhook_row_t *rows = NULL;
    static const char *const names[] = {"accepted", "submit-started", "submitted", "finished"};
    static const char *const states[] = {"ACCEPTED", "SUBMITTING", "PENDING", "DONE"};
    size_t n = 0, i;
    int full = 0;
    json_t *b;

    start(s);
    run_launch(s, "w1", NULL);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 4, "4 transitions, 2 notes");
    cr_assert_eq(full, 0);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 0, "the cursor moved past them");
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 1, "one URL: only its oldest delivery is due");
    for (i = 0; i < 4; i++) {
        store_webhook_row_t *r;

        if (i > 0)
            due(s, FAR, &rows, &n);
        cr_assert_eq(n, 1);
        r = &rows[0];
        cr_assert_str_eq(r->event_name, names[i]);
        cr_assert_str_eq(r->url, "http://127.0.0.1:9/h");
        cr_assert_str_eq(r->launch_id, "w1");
        b = body_of(r);
        cr_assert_str_eq(json_string_value(json_object_get(b, "delivery_id")), r->delivery_id);
        cr_assert_str_eq(json_string_value(json_object_get(b, "launch_id")), "w1");
        cr_assert_str_eq(json_string_value(json_object_get(b, "state")), states[i]);
        cr_assert_eq(json_integer_value(json_object_get(b, "gseq")), r->gseq);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "event"), "name")),
                         names[i]);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "event"), "state")),
                         states[i]);
        if (i == 3) {
            cr_assert_eq(json_integer_value(json_object_get(b, "result_code")), 0);
            cr_assert_str_eq(json_string_value(json_object_get(b, "reason")), "COMPLETED");
        } else {
            cr_assert(json_is_null(json_object_get(b, "result_code")));
        }
        json_decref(b);
        delivered(s, r->id);
        store_webhook_rows_free(rows, n);
    }
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 0);
    store_webhook_rows_free(rows, n);
    cr_assert_eq(stats(s).delivered, 4);
    cr_assert_eq(stats(s).pending, 0);
    sluice_store_close(s);
}

Test(webhooks, a_tenants_launch_is_sent_with_its_launch_id_and_tenant)
{
    sluice_store_t *s = open_store();
    store_webhook_row_t *rows = NULL;
    size_t n = 0;
    int full = 0;
    json_t *b;

    start(s);
    run_launch(s, "vision~w2", NULL);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 4);
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 1);
    b = body_of(&rows[0]);
    cr_expect_str_eq(json_string_value(json_object_get(b, "launch_id")), "w2");
    cr_expect_str_eq(json_string_value(json_object_get(b, "tenant")), "vision");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(b, "event"), "launch_id")),
                     "w2");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(b, "event"), "tenant")),
                     "vision");
    cr_expect(strstr(rows[0].body, "vision~") == NULL, "no key in the body: %s", rows[0].body);
    json_decref(b);
    store_webhook_rows_free(rows, n);
    sluice_store_close(s);
}

Test(webhooks, history_before_the_first_start_is_not_sent)
{
    sluice_store_t *s = open_store();
    int full = 0;

    run_launch(s, "old", NULL);
    start(s);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 0);
    run_launch(s, "new", NULL);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 4);
    sluice_store_close(s);
}

Test(webhooks, a_long_log_is_read_in_batches_that_say_more_is_waiting)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    store_webhook_fill_t f;
    size_t n = 0, total = 0, batches = 0;

    start(s);
    run_launch(s, "m1", NULL); /* 6 events, 4 transitions */
    memset(&f, 0, sizeof(f));
    f.site_url = "http://127.0.0.1:9/h";
    f.queue_max = 100;
    f.max_events = 2;
    do {
        cr_assert_sluice_ok(store_webhooks_fill(s, &f, &n, NULL, &err), &err);
        total += n;
        batches++;
    } while (f.more);
    cr_assert_eq(total, 4);
    cr_assert_eq(batches, 4, "2 + 2 + 2 events, then an empty batch says no more");
    sluice_store_close(s);
}

Test(webhooks, a_full_queue_stops_the_cursor_and_loses_nothing)
{
    sluice_store_t *s = open_store();
    store_webhook_row_t *rows = NULL;
    size_t n = 0, total = 0, rounds = 0;
    int full = 0;
    int64_t last_gseq = 0;

    start(s);
    run_launch(s, "b1", NULL);
    run_launch(s, "b2", NULL);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 3, &full), 3);
    cr_assert_eq(full, 1);
    cr_assert_lt(stats(s).cursor, stats(s).last_gseq, "events wait in the log");
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 3, &full), 0, "still full");
    /* Drain one at a time: every transition of both launches arrives, in
     * gseq order. */
    for (;;) {
        total += fill(s, "http://127.0.0.1:9/h", 3, &full);
        due(s, FAR, &rows, &n);
        if (n == 0)
            break;
        cr_assert_gt(rows[0].gseq, last_gseq, "in order");
        last_gseq = rows[0].gseq;
        delivered(s, rows[0].id);
        store_webhook_rows_free(rows, n);
        rounds++;
    }
    store_webhook_rows_free(rows, n);
    cr_assert_eq(rounds, 8, "4 transitions per launch, none lost");
    cr_assert_eq(total, 5, "the 5 that did not fit at first");
    cr_assert_eq(stats(s).cursor, stats(s).last_gseq);
    sluice_store_close(s);
}

Test(webhooks, failures_back_off_then_the_row_is_dead_and_a_start_revives_it)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    store_webhook_row_t *rows = NULL;
    size_t n = 0, revived = 0;
    int64_t next = 0;
    int full = 0;

    start(s);
    make_launch(s, "f1", NULL, 0);
    to_state(s, "f1", "submit-started", "SUBMITTING", 0);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/a", 100, &full), 2);
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 1);
    cr_assert_sluice_ok(store_webhooks_failed(s, rows[0].id, 5000, false, "HTTP 500", &err), &err);
    store_webhook_rows_free(rows, n);
    /* Not due before its time; the head still blocks the URL. */
    cr_assert_sluice_ok(store_webhooks_due(s, 4999, 100, &rows, &n, &next, &err), &err);
    cr_assert_eq(n, 0);
    cr_assert_eq(next, 5000);
    store_webhook_rows_free(rows, n);
    due(s, 5000, &rows, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(rows[0].attempts, 1);
    cr_assert_str_eq(rows[0].event_name, "accepted");
    cr_assert_sluice_ok(store_webhooks_failed(s, rows[0].id, 0, true, "HTTP 500", &err), &err);
    store_webhook_rows_free(rows, n);
    /* Dead: kept and counted, no longer blocking its URL. */
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(rows[0].event_name, "submit-started");
    store_webhook_rows_free(rows, n);
    cr_assert_eq(stats(s).dead, 1);
    cr_assert_eq(stats(s).pending, 1);
    cr_assert_eq(stats(s).retries, 1);
    cr_assert_eq(stats(s).failed, 1);
    cr_assert_sluice_ok(store_webhooks_start(s, 7, &revived, &err), &err);
    cr_assert_eq(revived, 1);
    cr_assert_eq(stats(s).dead, 0);
    cr_assert_eq(stats(s).pending, 2);
    sluice_store_close(s);
}

static bool only_hooks_example(const char *url, void *arg)
{
    (void)arg;
    return strncmp(url, "https://hooks.example/", 22) == 0;
}

Test(webhooks, each_url_has_its_own_head_and_launch_urls_follow_the_policy)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    store_webhook_row_t *rows = NULL;
    store_webhook_fill_t f;
    size_t n = 0, queued = 0, i;
    int site = 0, own = 0;

    start(s);
    make_launch(s, "own", "https://hooks.example/own", 0);
    make_launch(s, "denied", "https://evil.example/x", 0);
    memset(&f, 0, sizeof(f));
    f.site_url = "http://127.0.0.1:9/site";
    f.queue_max = 100;
    cr_assert_sluice_ok(store_webhooks_fill(s, &f, &queued, NULL, &err), &err);
    cr_assert_eq(queued, 2, "without a policy only the site's URL receives");
    to_state(s, "own", "submit-started", "SUBMITTING", 0);
    to_state(s, "denied", "submit-started", "SUBMITTING", 0);
    f.launch_url_ok = only_hooks_example;
    cr_assert_sluice_ok(store_webhooks_fill(s, &f, &queued, NULL, &err), &err);
    cr_assert_eq(queued, 3, "own: site + its URL; denied: site only");
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 2, "one head per URL");
    for (i = 0; i < n; i++) {
        if (strcmp(rows[i].url, "http://127.0.0.1:9/site") == 0) {
            site++;
            cr_assert_str_eq(rows[i].event_name, "accepted");
        } else {
            own++;
            cr_assert_str_eq(rows[i].url, "https://hooks.example/own");
            cr_assert_str_eq(rows[i].launch_id, "own");
            cr_assert(strstr(rows[i].delivery_id, "-launch") != NULL);
        }
    }
    cr_assert_eq(site, 1);
    cr_assert_eq(own, 1);
    store_webhook_rows_free(rows, n);
    sluice_store_close(s);
}

Test(webhooks, the_queue_and_its_counters_survive_close_and_reopen)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    store_webhook_row_t *rows = NULL;
    size_t n = 0, pruned = 0;
    int full = 0;
    char first[96];

    start(s);
    run_launch(s, "r1", NULL);
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 4);
    due(s, FAR, &rows, &n);
    snprintf(first, sizeof(first), "%s", rows[0].delivery_id);
    delivered(s, rows[0].id);
    store_webhook_rows_free(rows, n);
    sluice_store_close(s);

    s = open_store();
    start(s); /* a restart: the cursor is kept, not reset to the newest event */
    cr_assert_eq(fill(s, "http://127.0.0.1:9/h", 100, &full), 0);
    cr_assert_eq(stats(s).pending, 3);
    cr_assert_eq(stats(s).delivered, 1);
    due(s, FAR, &rows, &n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(rows[0].event_name, "submit-started");
    cr_assert_str_neq(rows[0].delivery_id, first);
    store_webhook_rows_free(rows, n);
    /* Pruning the (terminal) launch leaves its deliveries queued. */
    cr_assert_sluice_ok(sluice_store_prune(s, 0, FAR, &pruned, &err), &err);
    cr_assert_eq(pruned, 1);
    cr_assert_eq(stats(s).pending, 3);
    sluice_store_close(s);
}

/* ---- the worker -------------------------------------------------------- */

static char *write_secret(const char *text, mode_t mode)
{
    char *path = malloc(512);
    FILE *f;

    snprintf(path, 512, "%s/hook.key", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
    return path;
}

static sluice_config_t *webhook_cfg(const char *url, const char *secret_path, const char *extra)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg = NULL;
    static const char *const no_env[] = {NULL};
    char text[2048];

    snprintf(text, sizeof(text), "webhooks:\n  url: %s\n  secret_file: %s\n%s", url, secret_path,
             extra != NULL ? extra : "");
    o.text = text;
    o.text_len = strlen(text);
    o.envp = no_env;
    o.no_required = true;
    cr_assert_sluice_ok(sluice_config_load(&o, &cfg, &err), &err);
    return cfg;
}

Test(webhooks, the_worker_posts_signed_deliveries_and_deletes_them_on_2xx)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    fake_server_t *fs = fake_start(0);
    fake_response_t ok = {.status = 204, .body = ""};
    sluice_store_t *s = open_store();
    sluice_config_t *cfg;
    webhooks_t *w = NULL;
    char url[256], *key = write_secret(SECRET "\n", 0600);
    char v[256], ts[32], hex[MARKER_SHA256_HEX_SIZE], *text;
    size_t posted = 0, i;
    static const char *const names[] = {"accepted", "submit-started", "submitted", "finished"};

    cr_assert_not_null(fs);
    snprintf(url, sizeof(url), "%s/hook", fake_url(fs));
    cfg = webhook_cfg(url, key, NULL);
    cr_assert_sluice_ok(webhooks_new(&w, s, cfg, false, &err), &err);
    cr_assert_not_null(w);
    run_launch(s, "p1", NULL);
    for (i = 0; i < 4; i++)
        fake_push(fs, &ok);
    for (i = 0; i < 4; i++) {
        cr_assert_sluice_ok(webhooks_pass(w, 0, &posted, &err), &err);
        cr_assert_eq(posted, 1, "one URL: one delivery per pass, in order");
    }
    cr_assert_sluice_ok(webhooks_pass(w, 0, &posted, &err), &err);
    cr_assert_eq(posted, 0);
    cr_assert_eq(fake_request_count(fs), 4);
    for (i = 0; i < 4; i++) {
        const fake_request_t *r = fake_request(fs, i);
        json_t *b = json_loads(r->body, 0, NULL);

        cr_assert_str_eq(r->method, "POST");
        cr_assert_str_eq(r->target, "/hook");
        cr_assert(fake_header(r, "X-Sluice-Event", v, sizeof(v)));
        cr_assert_str_eq(v, names[i]);
        cr_assert(fake_header(r, "X-Sluice-Delivery", v, sizeof(v)));
        cr_assert_str_eq(v, json_string_value(json_object_get(b, "delivery_id")));
        cr_assert(fake_header(r, "Content-Type", v, sizeof(v)));
        cr_assert_str_eq(v, "application/json");
        /* The signature: HMAC-SHA256(secret without its newline,
         * "<timestamp>.<body>"). */
        cr_assert(fake_header(r, "X-Sluice-Timestamp", ts, sizeof(ts)));
        cr_assert(fake_header(r, "X-Sluice-Signature", v, sizeof(v)));
        text = malloc(strlen(ts) + 1 + r->body_len + 1);
        cr_assert_not_null(text);
        snprintf(text, strlen(ts) + 1 + r->body_len + 1, "%s.%.*s", ts, (int)r->body_len, r->body);
        cr_assert(marker_hmac_sha256_hex(SECRET, strlen(SECRET), text, strlen(text), hex));
        cr_assert_str_eq(v + 7, hex);
        cr_assert_eq(strncmp(v, "sha256=", 7), 0);
        free(text);
        json_decref(b);
    }
    cr_assert_eq(stats(s).delivered, 4);
    cr_assert_eq(stats(s).pending, 0);
    webhooks_free(w);
    sluice_config_free(cfg);
    sluice_store_close(s);
    fake_stop(fs);
    free(key);
}

/* Replicas: a follower's worker posts nothing; once its replica leads,
 * it delivers what is due. */
Test(webhooks, with_replicas_only_the_leaders_worker_posts)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    fake_server_t *fs = fake_start(0);
    fake_response_t ok = {.status = 204, .body = ""};
    sluice_store_t *s = open_store(), *sa = open_store(), *sb = open_store();
    sluice_leader_opts_t oa = SLUICE_LEADER_OPTS_INIT, ob = SLUICE_LEADER_OPTS_INIT;
    sluice_leader_t *a = NULL, *b = NULL;
    sluice_config_t *cfg;
    webhooks_t *w = NULL;
    char url[256], *key = write_secret(SECRET "\n", 0600);
    size_t i;

    cr_assert_not_null(fs);
    oa.replica_id = "replica-a";
    ob.replica_id = "replica-b";
    cr_assert_sluice_ok(sluice_leader_new(&a, sa, &oa, &err), &err);
    cr_assert_sluice_ok(sluice_leader_new(&b, sb, &ob, &err), &err);
    sluice_leader_tick(a);
    sluice_leader_tick(b);
    cr_assert_gt(sluice_leader_epoch(a), 0, "a leads");
    cr_assert_eq(sluice_leader_epoch(b), 0, "b follows");
    snprintf(url, sizeof(url), "%s/hook", fake_url(fs));
    cfg = webhook_cfg(url, key, NULL);
    cr_assert_sluice_ok(webhooks_new(&w, s, cfg, false, &err), &err);
    cr_assert_sluice_ok(webhooks_start(w, b, &err), &err);
    run_launch(s, "r1", NULL);
    for (i = 0; i < 4; i++)
        fake_push(fs, &ok);
    webhooks_poke(w);
    usleep(1500 * 1000); /* more than one idle wake of the worker */
    cr_assert_eq(fake_request_count(fs), 0, "a follower's worker posts nothing");
    sluice_leader_stop(a); /* releases the lease */
    sluice_leader_tick(b);
    cr_assert_gt(sluice_leader_epoch(b), 0, "b leads once a has let go");
    webhooks_poke(w);
    for (i = 0; i < 100 && fake_request_count(fs) < 4; i++)
        usleep(100 * 1000);
    cr_assert_eq(fake_request_count(fs), 4, "the leader's worker delivers all four");
    webhooks_free(w);
    sluice_leader_free(b);
    sluice_leader_free(a);
    sluice_config_free(cfg);
    sluice_store_close(sb);
    sluice_store_close(sa);
    sluice_store_close(s);
    fake_stop(fs);
    free(key);
}

Test(webhooks, the_worker_retries_a_failure_later_and_gives_up_after_max_attempts)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    fake_server_t *fs = fake_start(0);
    fake_response_t bad = {.status = 500, .body = "{}"}, ok = {.status = 200, .body = "{}"};
    sluice_store_t *s = open_store();
    sluice_config_t *cfg;
    webhooks_t *w = NULL;
    store_webhook_row_t *rows = NULL;
    char url[256], *key = write_secret(SECRET, 0600);
    size_t posted = 0, n = 0;
    int64_t next = 0;

    snprintf(url, sizeof(url), "%s/", fake_url(fs));
    cfg = webhook_cfg(url, key, "  max_attempts: 2\n  retry_initial_s: 60\n");
    cr_assert_sluice_ok(webhooks_new(&w, s, cfg, false, &err), &err);
    make_launch(s, "x1", NULL, 0);
    fake_push(fs, &bad);
    cr_assert_sluice_ok(webhooks_pass(w, 0, &posted, &err), &err);
    cr_assert_eq(posted, 1);
    cr_assert_str_eq(fake_request(fs, 0)->target, "/", "a trailing slash is kept");
    /* Backed off: 30 to 60 s (equal jitter of 60 s). */
    cr_assert_sluice_ok(webhooks_pass(w, 0, &posted, &err), &err);
    cr_assert_eq(posted, 0, "not due yet");
    cr_assert_sluice_ok(store_webhooks_due(s, 0, 10, &rows, &n, &next, &err), &err);
    store_webhook_rows_free(rows, n);
    cr_assert_eq(stats(s).retries, 1);
    fake_push(fs, &bad);
    cr_assert_sluice_ok(webhooks_pass(w, FAR, &posted, &err), &err);
    cr_assert_eq(posted, 1);
    cr_assert_eq(stats(s).dead, 1, "two attempts: dead, kept");
    cr_assert_eq(stats(s).failed, 1);
    webhooks_free(w);
    /* A restart gives it a new round; this time the receiver takes it. */
    w = NULL;
    cr_assert_sluice_ok(webhooks_new(&w, s, cfg, false, &err), &err);
    fake_push(fs, &ok);
    cr_assert_sluice_ok(webhooks_pass(w, 0, &posted, &err), &err);
    cr_assert_eq(posted, 1);
    cr_assert_eq(stats(s).delivered, 1);
    cr_assert_eq(stats(s).dead, 0);
    cr_assert_eq(fake_request_count(fs), 3);
    webhooks_free(w);
    sluice_config_free(cfg);
    sluice_store_close(s);
    fake_stop(fs);
    free(key);
}

/* Issue 27: a launch's URL under an allowed prefix whose path climbs out
 * of it is never posted to (so the site's signature never reaches another
 * path); an allowed one is posted to exactly its path. */
Test(webhooks, a_launch_url_that_climbs_out_of_its_prefix_is_never_posted)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    fake_server_t *fs = fake_start(0);
    fake_response_t ok = {.status = 204, .body = ""};
    sluice_store_t *s = open_store();
    sluice_config_t *cfg;
    webhooks_t *w = NULL;
    char url[256], extra[512], bad1[256], bad2[256], bad3[256], good[256];
    char *key = write_secret(SECRET, 0600);
    size_t posted = 0, i, n_site = 0, n_good = 0;

    cr_assert_not_null(fs);
    snprintf(url, sizeof(url), "%s/site", fake_url(fs));
    snprintf(extra, sizeof(extra),
             "  allow_request_urls: true\n  request_url_prefixes: [%s/allowed/]\n", fake_url(fs));
    snprintf(bad1, sizeof(bad1), "%s/allowed/../secret", fake_url(fs));
    snprintf(bad2, sizeof(bad2), "%s/allowed/%%2e%%2e/admin", fake_url(fs));
    snprintf(bad3, sizeof(bad3), "%s/allowed/..%%2Fadmin", fake_url(fs));
    snprintf(good, sizeof(good), "%s/allowed/own", fake_url(fs));
    cfg = webhook_cfg(url, key, extra);
    cr_assert_sluice_ok(webhooks_new(&w, s, cfg, false, &err), &err);
    make_launch(s, "e1", bad1, 0);
    make_launch(s, "e2", bad2, 0);
    make_launch(s, "e3", bad3, 0);
    make_launch(s, "g1", good, 0);
    for (i = 0; i < 16; i++)
        fake_push(fs, &ok);
    for (i = 0; i < 16; i++) {
        cr_assert_sluice_ok(webhooks_pass(w, 0, &posted, &err), &err);
        if (posted == 0)
            break;
    }
    for (i = 0; i < fake_request_count(fs); i++) {
        const char *t = fake_request(fs, i)->target;

        if (strcmp(t, "/site") == 0)
            n_site++;
        else if (strcmp(t, "/allowed/own") == 0)
            n_good++;
        else
            cr_assert_fail("a delivery went to %s", t);
    }
    cr_assert_eq(n_site, 4, "the site's receiver hears of every launch");
    cr_assert_eq(n_good, 1, "the allowed launch URL, exactly as matched");
    webhooks_free(w);
    sluice_config_free(cfg);
    sluice_store_close(s);
    fake_stop(fs);
    free(key);
}

Test(webhooks, the_secret_file_must_be_private_and_long_enough)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_config_t *cfg;
    webhooks_t *w = NULL;
    char *key = write_secret(SECRET, 0644);

    cfg = webhook_cfg("http://127.0.0.1:9/h", key, NULL);
    cr_assert_eq(webhooks_new(&w, s, cfg, false, &err), SLUICE_EPERM, "%s", err.text);
    cr_assert(strstr(err.text, "webhooks.secret_file") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, SECRET) == NULL, "never the secret itself");
    cr_assert_null(w);
    free(key);
    key = write_secret("short\n", 0600);
    cr_assert_eq(webhooks_new(&w, s, cfg, false, &err), SLUICE_EAUTH, "%s", err.text);
    cr_assert(strstr(err.text, "shorter than 16") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "short\n") == NULL);
    sluice_config_free(cfg);
    sluice_store_close(s);
    free(key);
}

Test(webhooks, off_unless_the_site_turns_them_on)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    static const char *const no_env[] = {NULL};
    sluice_config_t *cfg = NULL;
    sluice_store_t *s = open_store();
    webhooks_t *w = (webhooks_t *)&err;

    o.text = "site:\n  name: x\n";
    o.text_len = strlen(o.text);
    o.envp = no_env;
    o.no_required = true;
    cr_assert_sluice_ok(sluice_config_load(&o, &cfg, &err), &err);
    cr_assert_not(webhooks_enabled(cfg));
    cr_assert_sluice_ok(webhooks_new(&w, s, cfg, true, &err), &err);
    cr_assert_null(w);
    webhooks_poke(w);
    webhooks_free(w);
    sluice_config_free(cfg);
    sluice_store_close(s);
}
