/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_logs.c - GET /v1/launches/{id}/logs/{stream} of a finished
 * launch (issue 30): the store's archived copy is served whatever this
 * host's state directory holds (X-Sluice-Log-Source: store), a copy cut to
 * store.log_max_bytes says what was cut (X-Sluice-Log-Omitted) and keeps
 * file offsets, a copy archived before the store kept logs is still served
 * from this host, and a log that cannot be read is 410 log-gone with the
 * reason, never an empty 200.  `sluice logs` on the local store says the
 * same.  Only loopback traffic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "http_client.h"
#include "server_fixture.h"
#include "sluice_assert.h"

static server_fixture_t fx;

static void setup(void)
{
    char why[256];

    cr_assert_eq(sfx_start_with(&fx, NULL, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_logs, .init = setup, .fini = teardown, .timeout = 60);

/* A launch `id` that has ended (cancelled before it was submitted), with
 * the launcher's `archived` event, and no archived log anywhere. */
static void finished(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    hc_response_t r;
    char path[512];

    cr_assert_eq(sfx_post(&fx, id), 201);
    snprintf(path, sizeof(path), "/v1/launches/%s", id);
    cr_assert_eq(hc_request(fx.port, "DELETE", path, SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 202, "%s", r.body);
    hc_response_clear(&r);
    for (int i = 0; i < 5; i++)
        cr_assert_sluice_ok(sluice_server_step(fx.server, &err), &err);
    cr_assert_eq(hc_request(fx.port, "GET", path, SFX_AUTH, NULL, 0, &r), 0);
    cr_assert(strstr(r.body, "\"terminal\":true") != NULL, "%s", r.body);
    hc_response_clear(&r);
    /* the fixture has no staging hooks: only the directory is made */
    snprintf(path, sizeof(path), "rm -rf '%s/artifacts/%s'", fx.state, id);
    cr_assert_eq(system(path), 0);
}

static void keep(const char *id, sluice_store_log_status status, const char *data, int64_t size)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_log_t lg = {0};

    lg.launch_id = id;
    lg.attempt = 0;
    lg.stream = "stdout";
    lg.status = status;
    lg.data = data;
    lg.len = data != NULL ? strlen(data) : 0;
    lg.size = size;
    lg.note = status == SLUICE_STORE_LOG_REFUSED ? "stdout.log: a symbolic link (refused)" : NULL;
    cr_assert_sluice_ok(sluice_store_put_log(fx.store, &lg, &err), &err);
}

static int get(const char *path, hc_response_t *r)
{
    cr_assert_eq(hc_request(fx.port, "GET", path, SFX_AUTH, NULL, 0, r), 0);
    return r->status;
}

static const char *header(const hc_response_t *r, const char *name)
{
    static char buf[128];

    return hc_header(r, name, buf, sizeof(buf)) != NULL ? buf : "(none)";
}

Test(server_logs, a_finished_launch_is_served_from_the_store)
{
    hc_response_t r;
    char *raw = NULL;

    finished("done-1");
    keep("done-1", SLUICE_STORE_LOG_STORED, "hello from the store\n", 21);
    cr_assert_eq(get("/v1/launches/done-1/logs/stdout", &r), 200, "%s", r.body);
    cr_expect_str_eq(r.body, "hello from the store\n");
    cr_expect_str_eq(header(&r, "X-Sluice-Log-Source"), "store");
    cr_expect_str_eq(header(&r, "X-Sluice-Log-Size"), "21");
    cr_expect_str_eq(header(&r, "X-Sluice-Log-Omitted"), "0");
    hc_response_clear(&r);
    cr_assert_eq(get("/v1/launches/done-1/logs/stdout?offset=11", &r), 200);
    cr_expect_str_eq(r.body, "the store\n");
    hc_response_clear(&r);
    cr_assert_eq(get("/v1/launches/done-1/logs/stdout?offset=21", &r), 200);
    cr_expect_eq(r.body_len, 0, "nothing after the end: an empty 200 of a readable log");
    hc_response_clear(&r);
    /* followed: the whole copy, then the stream ends */
    cr_expect_eq(hc_stream_until(fx.port, "/v1/launches/done-1/logs/stdout?follow=true", SFX_AUTH,
                                 "from the store", 5000, &raw),
                 0, "%s", raw ? raw : "");
    free(raw);
}

Test(server_logs, a_cut_copy_says_what_was_cut_and_keeps_file_offsets)
{
    hc_response_t r;

    finished("cut-1");
    keep("cut-1", SLUICE_STORE_LOG_STORED, "0123456789", 100); /* bytes 90..99 of 100 */
    cr_assert_eq(get("/v1/launches/cut-1/logs/stdout", &r), 200);
    cr_expect_str_eq(r.body, "0123456789", "a read below the cut starts at the cut");
    cr_expect_str_eq(header(&r, "X-Sluice-Log-Size"), "100");
    cr_expect_str_eq(header(&r, "X-Sluice-Log-Omitted"), "90");
    hc_response_clear(&r);
    cr_assert_eq(get("/v1/launches/cut-1/logs/stdout?offset=95", &r), 200);
    cr_expect_str_eq(r.body, "56789", "offsets are the job file's");
    hc_response_clear(&r);
}

Test(server_logs, an_unreadable_log_is_410_with_the_reason_never_an_empty_200)
{
    static const struct {
        const char *id;
        int status; /* -1: no row at all */
        const char *why;
    } cases[] = {
        {"gone-1", -1, "archived to"},
        {"gone-2", SLUICE_STORE_LOG_MISSING, "never wrote one"},
        {"gone-3", SLUICE_STORE_LOG_REFUSED, "a symbolic link"},
        {"gone-4", SLUICE_STORE_LOG_PRUNED, "retention.logs_max_age_s"},
    };
    hc_response_t r;
    char path[256], *raw = NULL;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        finished(cases[i].id);
        if (cases[i].status >= 0)
            keep(cases[i].id, (sluice_store_log_status)cases[i].status, NULL, 42);
        snprintf(path, sizeof(path), "/v1/launches/%s/logs/stdout", cases[i].id);
        cr_assert_eq(get(path, &r), 410, "%s: %d %s", cases[i].id, r.status, r.body);
        cr_expect(strstr(r.body, "urn:sluice:problem:log-gone") != NULL, "%s", r.body);
        cr_expect(strstr(r.body, cases[i].why) != NULL, "%s: %s", cases[i].id, r.body);
        cr_expect(strstr(r.body, cases[i].id) != NULL, "the detail names the launch: %s", r.body);
        hc_response_clear(&r);
        /* followed: the same answer, at once */
        snprintf(path, sizeof(path), "/v1/launches/%s/logs/stdout?follow=true", cases[i].id);
        hc_stream_until(fx.port, path, SFX_AUTH, "log-gone", 3000, &raw);
        cr_expect(raw != NULL && strstr(raw, " 410 ") != NULL, "%s", raw ? raw : "");
        free(raw);
        raw = NULL;
    }
    cr_assert_eq(get("/v1/launches/nope/logs/stdout", &r), 404);
    hc_response_clear(&r);
}

Test(server_logs, a_copy_archived_before_the_store_kept_logs_is_served_from_this_host)
{
    hc_response_t r;
    char path[512];

    finished("old-1");
    snprintf(path, sizeof(path), "%s/artifacts/old-1", fx.state);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/artifacts/old-1/stdout.log", fx.state);
    cr_assert_eq(sfx_write_file(path, "archived by 1ccc315\n", 0600), 0);
    cr_assert_eq(get("/v1/launches/old-1/logs/stdout", &r), 200, "%s", r.body);
    cr_expect_str_eq(r.body, "archived by 1ccc315\n");
    cr_expect_str_eq(header(&r, "X-Sluice-Log-Source"), "artifacts");
    hc_response_clear(&r);
    /* the store's copy, once there is one, comes first */
    keep("old-1", SLUICE_STORE_LOG_STORED, "from the store\n", 15);
    cr_assert_eq(get("/v1/launches/old-1/logs/stdout", &r), 200);
    cr_expect_str_eq(r.body, "from the store\n");
    hc_response_clear(&r);
}

/* `sluice logs` on the local store: the store's copy, and exit 74 with the
 * reason for a log that cannot be read. */
Test(server_logs, sluice_logs_reads_the_store_and_says_why_not)
{
    const char *bin = getenv("SLUICE_BIN");
    char cmd[1024], out[256] = "";
    FILE *p;
    size_t n;
    int st;

    cr_assert_not_null(bin, "SLUICE_BIN is not set");
    finished("cli-1");
    finished("cli-2");
    keep("cli-1", SLUICE_STORE_LOG_STORED, "stored bytes\n", 13);
    keep("cli-2", SLUICE_STORE_LOG_PRUNED, NULL, 7);
    snprintf(cmd, sizeof(cmd), "'%s' logs cli-1 --state-dir '%s' 2>&1", bin, fx.state);
    cr_assert_not_null(p = popen(cmd, "r"));
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", out);
    cr_expect_str_eq(out, "stored bytes\n");
    snprintf(cmd, sizeof(cmd), "'%s' logs cli-2 --state-dir '%s' 2>&1", bin, fx.state);
    cr_assert_not_null(p = popen(cmd, "r"));
    n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 74, "exit %d: %s", WEXITSTATUS(st), out);
    cr_expect(strstr(out, "removed by retention") != NULL, "%s", out);
}
