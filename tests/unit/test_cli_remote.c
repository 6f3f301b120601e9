/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_remote.c - the `sluice` command with --server against a real
 * in-process sluice_server (launcher over the fake cluster, driven by its
 * own thread): launch --wait, status, ls, cancel and logs print what the
 * local-store path prints, and problems become the documented exit codes.
 * Only loopback traffic. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "server_fixture.h"
#include "sluice_assert.h"

#define TOKEN SFX_TOKEN

/* The service on TCP and on <tmp>/api.sock; its launcher runs on its own
 * thread in real time and polls every 50-100 ms. */
static server_fixture_t fx;
static char url[64];

static void write_file(const char *path, const char *text, mode_t mode)
{
    cr_assert_eq(sfx_write_file(path, text, mode), 0, "%s", path);
}

static void setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    o.poll_min_ms = 50;
    o.poll_max_ms = 100;
    o.socket = true;
    o.drive = true;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)fx.port);
    unsetenv("SLUICE_SERVER");
    unsetenv("SLUICE_API_TOKEN_FILE");
    unsetenv("SLUICE_API_CA");
}

static void teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(cli_remote, .init = setup, .fini = teardown, .timeout = 120);

typedef struct {
    int code;
    char *out;
    char *err;
} run_t;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *d = NULL;
    size_t n = 0, cap = 0, r;

    cr_assert_not_null(f, "%s", path);
    do {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            d = realloc(d, cap);
            cr_assert_not_null(d);
        }
        r = fread(d + n, 1, cap - n - 1, f);
        n += r;
    } while (r > 0);
    fclose(f);
    d[n] = '\0';
    return d;
}

/* Run `$SLUICE_BIN <args>` through the shell; stdout and stderr apart. */
static run_t run(const char *fmt, ...)
{
    char args[4096], cmd[8192], out[300], err[300];
    const char *bin = getenv("SLUICE_BIN");
    va_list ap;
    run_t r;
    int st;

    cr_assert_not_null(bin, "SLUICE_BIN is not set");
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(out, sizeof(out), "%s/out", fx.tmp);
    snprintf(err, sizeof(err), "%s/err", fx.tmp);
    snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", bin, args, out, err);
    st = system(cmd);
    cr_assert(WIFEXITED(st), "%s", cmd);
    r.code = WEXITSTATUS(st);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

static void run_free(run_t *r)
{
    free(r->out);
    free(r->err);
}

static void request_file(const char *id, const char *command, char *path, size_t size)
{
    char text[1024];

    snprintf(path, size, "%s/%s.json", fx.tmp, id);
    write_file(path, sfx_request(id, command, text, sizeof(text)), 0600);
}

#define REMOTE "--server %s --api-token-file '%s'"

Test(cli_remote, launch_wait_prints_every_transition_and_exits_with_the_result)
{
    char req[300];
    run_t r;

    request_file("ok-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 0, "exit %d\n%s\n%s", r.code, r.out, r.err);
    cr_expect(strstr(r.out, "launch ok-1 accepted (site site-1, 1 pool)\n") == r.out, "%s", r.out);
    cr_expect(strstr(r.out, "] ACCEPTED") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "] RUNNING") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "] DONE") != NULL && strstr(r.out, "result=SUCCEEDED(0)") != NULL, "%s",
              r.out);
    cr_expect(strstr(r.out, "] ACCEPTED") < strstr(r.out, "] RUNNING"), "%s", r.out);
    cr_expect(strstr(r.out, "] RUNNING") < strstr(r.out, "] DONE"), "%s", r.out);
    run_free(&r);

    /* the same request again resumes the same launch: no second job */
    r = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s %s", r.out, r.err);
    cr_expect(strstr(r.out, "launch ok-1 already known: resuming it") == r.out, "%s", r.out);
    cr_expect_eq(fake_cluster_count_named(fx.fc, ""), 1);
    run_free(&r);

    /* -o json: one object per transition, the last one DONE */
    r = run("launch '%s' --wait -o json " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 0);
    cr_expect(strstr(r.out, "\"state\":\"DONE\"") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "accepted (") == NULL, "%s", r.out);
    run_free(&r);
}

/* The service's access log lines (request paths), for the test below. */
static pthread_mutex_t access_mu = PTHREAD_MUTEX_INITIALIZER;
static char access_seen[4096];

static void access_capture(const sluice_log_record_t *rec, void *arg)
{
    size_t n;

    (void)arg;
    if (strcmp(rec->subsystem, "access") != 0)
        return;
    pthread_mutex_lock(&access_mu);
    n = strlen(access_seen);
    snprintf(access_seen + n, sizeof(access_seen) - n, "%s\n", rec->msg);
    pthread_mutex_unlock(&access_mu);
}

Test(cli_remote, launch_wait_follows_the_launch_stream_not_the_global_one)
{
    char req[300], other[300];
    run_t r;
    int i, seen = 0;

    /* history of another launch the wait must not read */
    request_file("old-1", "/bin/true", other, sizeof(other));
    r = run("launch '%s' --wait " REMOTE, other, url, fx.token_file);
    cr_assert_eq(r.code, 0, "%s %s", r.out, r.err);
    run_free(&r);
    access_seen[0] = '\0';
    sluice_log_set_records(access_capture, SLUICE_LOG_INFO, NULL);
    request_file("new-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    /* A stream's line is logged when the service sees its connection end,
     * which may be after the command exited. */
    for (i = 0; i < 300; i++) {
        pthread_mutex_lock(&access_mu);
        seen = strstr(access_seen, "GET /v1/launches/new-1/events ") != NULL;
        pthread_mutex_unlock(&access_mu);
        if (seen)
            break;
        usleep(10 * 1000);
    }
    sluice_log_set_records(NULL, SLUICE_LOG_WARNING, NULL);
    cr_expect_eq(r.code, 0, "%s %s", r.out, r.err);
    cr_expect(strstr(r.out, "] DONE") != NULL, "%s", r.out);
    pthread_mutex_lock(&access_mu);
    cr_expect(strstr(access_seen, "GET /v1/launches/new-1/events 200") != NULL, "%s", access_seen);
    cr_expect(strstr(access_seen, "GET /v1/events") == NULL, "%s", access_seen);
    pthread_mutex_unlock(&access_mu);
    run_free(&r);
}

Test(cli_remote, launch_wait_exits_with_a_failed_jobs_code)
{
    fake_stage_t stages[] = {
        {SLUICE_JOB_RUNNING, 0, 0, 0, 1},
        {SLUICE_JOB_FAILED, 0, 1, 0, 2},
    };
    char req[300];
    run_t r;

    fake_cluster_set_script(fx.fc, stages, 2);
    request_file("bad-1", "/bin/false", req, sizeof(req));
    r = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 1, "exit %d\n%s\n%s", r.code, r.out, r.err);
    cr_expect(strstr(r.out, "result=EXECUTION_ERROR(1)") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_remote, status_and_ls_print_what_the_local_store_prints)
{
    char req[300];
    run_t local, remote;

    request_file("same-1", "/bin/true", req, sizeof(req));
    remote = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    cr_assert_eq(remote.code, 0, "%s", remote.err);
    run_free(&remote);
    request_file("same-2", "/bin/true", req, sizeof(req));
    remote = run("launch '%s' " REMOTE, req, url, fx.token_file);
    cr_assert_eq(remote.code, 0, "%s", remote.err);
    cr_expect_str_eq(remote.out, "launch same-2 accepted (site site-1, 1 pool)\n");
    run_free(&remote);

    local = run("status --state-dir '%s' same-1", fx.state);
    remote = run("status " REMOTE " same-1", url, fx.token_file);
    cr_expect_eq(local.code, 0, "%s", local.err);
    cr_expect_eq(remote.code, 0, "%s", remote.err);
    cr_expect_str_eq(remote.out, local.out);
    cr_expect(strstr(remote.out, "state      DONE\n") != NULL, "%s", remote.out);
    run_free(&local);
    run_free(&remote);

    local = run("status --state-dir '%s' -o json same-1", fx.state);
    remote = run("status -o json " REMOTE " same-1", url, fx.token_file);
    cr_expect_eq(remote.code, 0);
    {
        json_t *a = json_loads(local.out, 0, NULL), *b = json_loads(remote.out, 0, NULL);
        cr_assert_not_null(a, "%s", local.out);
        cr_assert_not_null(b, "%s", remote.out);
        cr_expect(json_equal(a, b), "local %s\nremote %s", local.out, remote.out);
        json_decref(a);
        json_decref(b);
    }
    run_free(&local);
    run_free(&remote);

    /* ls: same table, same filters and the same pages */
    sleep(1); /* let same-2 settle: both listings must see the same states */
    local = run("ls --state-dir '%s' --limit 1 --sort created --reverse", fx.state);
    remote = run("ls --limit 1 --sort created --reverse " REMOTE, url, fx.token_file);
    cr_expect_eq(remote.code, 0, "%s", remote.err);
    cr_expect_str_eq(remote.out, local.out);
    cr_expect(strstr(remote.out, "(more: sluice ls --cursor '") != NULL, "%s", remote.out);
    run_free(&local);
    run_free(&remote);
    /* sorted here on both paths: newest first, each key, --reverse */
    local = run("ls --state-dir '%s' --limit 1", fx.state);
    remote = run("ls --limit 1 " REMOTE, url, fx.token_file);
    cr_expect_eq(remote.code, 0, "%s", remote.err);
    cr_expect_str_eq(remote.out, local.out);
    cr_expect(strstr(remote.out, "same-2 ") != NULL, "newest first: %s", remote.out);
    cr_expect(strstr(remote.out, "(1 more: ") != NULL, "%s", remote.out);
    run_free(&local);
    run_free(&remote);
    {
        static const char *const orders[] = {"--sort updated", "--sort state -r",
                                             "--sort id --reverse", "--sort id -o json"};
        for (size_t k = 0; k < sizeof(orders) / sizeof(orders[0]); k++) {
            local = run("ls --state-dir '%s' %s", fx.state, orders[k]);
            remote = run("ls %s " REMOTE, orders[k], url, fx.token_file);
            cr_expect_eq(remote.code, 0, "%s: %s", orders[k], remote.err);
            cr_expect_str_eq(remote.out, local.out, "%s", orders[k]);
            run_free(&local);
            run_free(&remote);
        }
    }
    remote = run("ls --cursor abc " REMOTE, url, fx.token_file);
    cr_expect_eq(remote.code, 64, "%s", remote.err);
    run_free(&remote);
    local = run("ls --state-dir '%s' --site site-1 --state DONE -o json", fx.state);
    remote = run("ls --site site-1 --state DONE -o json " REMOTE, url, fx.token_file);
    cr_expect_eq(remote.code, 0, "%s", remote.err);
    cr_expect_str_eq(remote.out, local.out);
    run_free(&local);
    run_free(&remote);
    remote = run("ls --live " REMOTE, url, fx.token_file);
    cr_expect_eq(remote.code, 64, "%s", remote.err);
    run_free(&remote);
}

Test(cli_remote, environment_variables_select_the_service)
{
    run_t r;

    cr_assert_eq(setenv("SLUICE_SERVER", url, 1), 0);
    cr_assert_eq(setenv("SLUICE_API_TOKEN_FILE", fx.token_file, 1), 0);
    r = run("ls");
    unsetenv("SLUICE_SERVER");
    unsetenv("SLUICE_API_TOKEN_FILE");
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "LAUNCH", 6) == 0, "%s", r.out);
    run_free(&r);
}

Test(cli_remote, unix_socket_needs_no_token)
{
    char req[300];
    run_t r;

    request_file("sock-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' --wait --server 'unix:%s'", req, fx.sock);
    cr_expect_eq(r.code, 0, "%s %s", r.out, r.err);
    cr_expect(strstr(r.out, "result=SUCCEEDED(0)") != NULL, "%s", r.out);
    run_free(&r);
    r = run("status --server 'unix:%s' sock-1", fx.sock);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "launch     sock-1\n") == r.out, "%s", r.out);
    cr_expect(strstr(r.out, "by unix:") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_remote, cancel_is_recorded_and_then_says_the_launch_is_over)
{
    fake_stage_t stages[] = {{SLUICE_JOB_RUNNING, 0, 0, 0, 1000}};
    char req[300];
    run_t r;
    int i;

    fake_cluster_set_script(fx.fc, stages, 1);
    request_file("long-1", "sleep 1000", req, sizeof(req));
    r = run("launch '%s' " REMOTE, req, url, fx.token_file);
    cr_assert_eq(r.code, 0, "%s", r.err);
    run_free(&r);
    r = run("cancel " REMOTE " long-1", url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect_str_eq(
        r.out, "cancel of long-1 requested; the supervisor carries it out on its next cycle\n");
    run_free(&r);
    for (i = 0; i < 100; i++) {
        r = run("status " REMOTE " long-1", url, fx.token_file);
        if (strstr(r.out, "state      DONE") != NULL)
            break;
        run_free(&r);
        r.out = NULL;
        usleep(100 * 1000);
    }
    cr_assert_not_null(r.out, "the cancelled launch never ended");
    cr_expect(strstr(r.out, "result     ABORTED (9)") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "cancel-requested") != NULL && strstr(r.out, "by alice") != NULL, "%s",
              r.out);
    run_free(&r);
    r = run("cancel " REMOTE " long-1", url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "launch long-1 already ended (DONE); nothing to cancel\n");
    run_free(&r);
}

Test(cli_remote, logs_print_and_follow_through_the_service)
{
    char req[300], path[600];
    run_t r;
    json_t *l = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *staging;

    request_file("out-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    cr_assert_eq(r.code, 0, "%s", r.err);
    run_free(&r);
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "out-1", &l, &err), &err);
    staging = json_string_value(
        json_object_get(json_object_get(json_object_get(l, "render"), "staging"), "service"));
    cr_assert_not_null(staging);
    snprintf(path, sizeof(path), "mkdir -p '%s' '%s/artifacts/out-1'", staging, fx.state);
    cr_assert_eq(system(path), 0);
    snprintf(path, sizeof(path), "%s/stderr.log", staging);
    write_file(path, "live err\n", 0644);
    json_decref(l);
    snprintf(path, sizeof(path), "%s/artifacts/out-1/stdout.log", fx.state);
    write_file(path, "line one\nline two\n", 0644);

    r = run("logs " REMOTE " out-1", url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "line one\nline two\n");
    run_free(&r);
    /* -f on an ended launch prints the archive and returns */
    r = run("logs -f " REMOTE " out-1", url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "line one\nline two\n");
    run_free(&r);
    r = run("logs --stderr " REMOTE " out-1", url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "live err\n");
    run_free(&r);
    r = run("logs " REMOTE " nope", url, fx.token_file);
    cr_expect_eq(r.code, 69, "%s", r.err);
    run_free(&r);
}

Test(cli_remote, problems_become_clear_errors_with_sysexits)
{
    char req[300], bad[300], other[300];
    run_t r;

    /* unknown launch: 69, as in the local store */
    r = run("status " REMOTE " nope", url, fx.token_file);
    cr_expect_eq(r.code, 69, "%s", r.err);
    cr_expect(strstr(r.err, "404 Not found") != NULL, "%s", r.err);
    run_free(&r);
    r = run("status --state-dir '%s' nope", fx.state);
    cr_expect_eq(r.code, 69, "%s", r.err);
    run_free(&r);

    /* wrong or missing token: 77; the token never reaches the output */
    snprintf(bad, sizeof(bad), "%s/bad.token", fx.tmp);
    write_file(bad, "tok-wrong-0123456789abcdef\n", 0600);
    r = run("ls " REMOTE, url, bad);
    cr_expect_eq(r.code, 77, "%s", r.err);
    cr_expect(strstr(r.err, "401 Unauthorized") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "tok-wrong") == NULL && strstr(r.out, "tok-wrong") == NULL);
    run_free(&r);
    r = run("ls --server %s", url);
    cr_expect_eq(r.code, 77, "%s", r.err);
    run_free(&r);
    /* a token file others may write is refused before any request */
    write_file(bad, TOKEN "\n", 0666);
    r = run("ls " REMOTE, url, bad);
    cr_expect_eq(r.code, 77, "%s", r.err);
    cr_expect(strstr(r.err, "writable by group or others") != NULL, "%s", r.err);
    run_free(&r);

    /* the service's own tokens-file line format is accepted too */
    snprintf(other, sizeof(other), "%s/bob.token", fx.tmp);
    write_file(other, "# bob\nbob tok-bob-0123456789abcdef\n", 0600);
    r = run("ls " REMOTE, url, other);
    cr_expect_eq(r.code, 0, "%s", r.err);
    run_free(&r);

    /* invalid request: 65 and the field; a different body for a known id: 65 */
    snprintf(bad, sizeof(bad), "%s/invalid.json", fx.tmp);
    write_file(bad, "{\"launch_id\": \"x\"}", 0600);
    r = run("launch '%s' " REMOTE, bad, url, fx.token_file);
    cr_expect_eq(r.code, 65, "%s", r.err);
    cr_expect(strstr(r.err, "422 Invalid launch request") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "(field ") != NULL, "%s", r.err);
    run_free(&r);
    request_file("conf-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    run_free(&r);
    request_file("conf-1", "/bin/false", req, sizeof(req));
    r = run("launch '%s' " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 65, "%s", r.err);
    cr_expect(strstr(r.err, "409 Conflict") != NULL, "%s", r.err);
    run_free(&r);

    /* nobody listening: 69 */
    r = run("ls --server http://127.0.0.1:1 --api-token-file '%s'", fx.token_file);
    cr_expect_eq(r.code, 69, "%s", r.err);
    cr_expect(strstr(r.err, "cannot reach the service") != NULL, "%s", r.err);
    run_free(&r);
    /* plain http off loopback is refused before anything is sent: 64 */
    r = run("ls --server http://example.invalid:8080 --api-token-file '%s'", fx.token_file);
    cr_expect_eq(r.code, 64, "%s", r.err);
    cr_expect(strstr(r.err, "refused") != NULL, "%s", r.err);
    run_free(&r);
    /* service-side flags do not mix with --server */
    r = run("launch '%s' --config /dev/null " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 64, "%s", r.err);
    run_free(&r);
}

/* Every "elapsed_s": in `text` has at most three decimals (ms). */
static int elapsed_is_ms(const char *text)
{
    for (const char *p = strstr(text, "\"elapsed_s\":"); p != NULL;
         p = strstr(p + 1, "\"elapsed_s\":")) {
        const char *v = p + strlen("\"elapsed_s\":");
        size_t digits = strspn(v, "-0123456789");
        if (v[digits] == '.' && strspn(v + digits + 1, "0123456789") > 3)
            return 0;
    }
    return 1;
}

Test(cli_remote, json_lines_have_the_api_names_and_no_result_before_the_end)
{
    char req[300];
    run_t r;
    char *line, *save = NULL;
    int lines = 0, done = 0;

    request_file("json-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' --wait -o json " REMOTE, req, url, fx.token_file);
    cr_assert_eq(r.code, 0, "%s %s", r.out, r.err);
    cr_expect(elapsed_is_ms(r.out), "%s", r.out);
    for (line = strtok_r(r.out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, 0, NULL);
        const char *state;

        cr_assert_not_null(j, "%s", line);
        state = json_string_value(json_object_get(j, "state"));
        cr_assert_not_null(state, "%s", line);
        cr_expect_null(json_object_get(j, "result"), "%s", line);
        cr_expect(json_is_number(json_object_get(j, "elapsed_s")), "%s", line);
        if (strcmp(state, "DONE") == 0) {
            done++;
            cr_expect(json_is_integer(json_object_get(j, "result_code")), "%s", line);
            cr_expect_eq(json_integer_value(json_object_get(j, "result_code")), 0, "%s", line);
        } else {
            /* a live launch has no result yet: null, as in the API */
            cr_expect(json_is_null(json_object_get(j, "result_code")), "%s", line);
        }
        lines++;
        json_decref(j);
    }
    cr_expect_geq(lines, 2);
    cr_expect_eq(done, 1);
    run_free(&r);
}

Test(cli_remote, options_after_the_operand_as_the_readme_shows)
{
    char req[300];
    run_t r;
    json_t *j;

    request_file("order-1", "/bin/true", req, sizeof(req));
    r = run("launch '%s' --wait " REMOTE, req, url, fx.token_file);
    cr_assert_eq(r.code, 0, "%s", r.err);
    run_free(&r);
    /* sluice status LAUNCH_ID --server ... --api-token-file tok */
    r = run("status order-1 " REMOTE, url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "launch     order-1\n") == r.out, "%s", r.out);
    run_free(&r);
    r = run("status order-1 --server=%s --api-token-file='%s' --output=json", url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    j = json_loads(r.out, 0, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(j, "launch_id")), "order-1");
    json_decref(j);
    run_free(&r);
    /* cancel -o json: the launch as DELETE answers it */
    r = run("cancel order-1 -o json " REMOTE, url, fx.token_file);
    cr_expect_eq(r.code, 0, "%s", r.err);
    j = json_loads(r.out, 0, NULL);
    cr_expect(json_is_true(json_object_get(j, "terminal")), "%s", r.out);
    json_decref(j);
    run_free(&r);
    /* probe -o json: the service's own answer */
    r = run("probe --server 'unix:%s' -o json", fx.sock);
    cr_expect_eq(r.code, 0, "%s", r.err);
    j = json_loads(r.out, 0, NULL);
    cr_expect_str_eq(json_string_value(json_object_get(j, "status")), "ok", "%s", r.out);
    json_decref(j);
    run_free(&r);
    r = run("probe --output=json --server %s", url);
    cr_expect_eq(r.code, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"status\": \"ok\"") != NULL, "%s", r.out);
    run_free(&r);
}

Test(cli_remote, a_422_prints_every_field_error)
{
    char req[300];
    run_t r;

    snprintf(req, sizeof(req), "%s/many.json", fx.tmp);
    write_file(req,
               "{\"launch_id\": \"many-1\", \"site\": \"site-1\", \"profile\": \"none\", "
               "\"partition\": \"gpu\", \"pools\": [{\"name\": \"a\", \"nodes\": 0, "
               "\"command\": \"c\"}, {\"name\": \"b\", \"cpus_per_node\": 0, \"command\": \"c\"}], "
               "\"time_limit\": \"soon\"}",
               0600);
    r = run("launch '%s' " REMOTE, req, url, fx.token_file);
    cr_expect_eq(r.code, 65, "%s", r.err);
    cr_expect(strstr(r.err, "422 Invalid launch request: pools[0].nodes: ") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "\nsluice: pools[0].nodes: ") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "\nsluice: pools[1].cpus_per_node: ") != NULL, "%s", r.err);
    cr_expect(strstr(r.err, "\nsluice: time_limit: ") != NULL, "%s", r.err);
    run_free(&r);
}
