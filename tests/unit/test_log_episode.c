/* SPDX-License-Identifier: Apache-2.0 */
/* test_log_episode.c - once-per-episode warnings: an outage of any length
 * gives one line when it starts and one when it ends; the REST client
 * reports slurmrestd unreachable / back that way, with the transport's own
 * words. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/auth.h>
#include <sluice/client.h>
#include <sluice/log.h>

#include "base/log_episode.h"
#include "fake_slurmrestd.h"

static char lines[16][1024];
static int n_lines;

static void capture(const sluice_log_record_t *rec, void *arg)
{
    (void)arg;
    if (rec->level > SLUICE_LOG_WARNING || n_lines >= 16)
        return;
    snprintf(lines[n_lines++], sizeof(lines[0]), "%s: %s", rec->subsystem, rec->msg);
}

static void setup(void)
{
    n_lines = 0;
    log_episode_reset();
    sluice_log_set_records(capture, SLUICE_LOG_DEBUG, NULL);
}

static void teardown(void)
{
    sluice_log_set_records(NULL, SLUICE_LOG_WARNING, NULL);
}

TestSuite(log_episode, .init = setup, .fini = teardown);

Test(log_episode, many_failures_give_one_line_and_the_end_one_more)
{
    int i;

    for (i = 0; i < 52; i++)
        log_episode_fail("x/launcher_poll.c", "slurmrestd", "http://a", "down: try %d", i);
    cr_assert_eq(n_lines, 1);
    cr_assert(strstr(lines[0], "launcher_poll: down: try 0") == lines[0], "%s", lines[0]);
    cr_assert(log_episode_open("slurmrestd", "http://a"));
    /* Another key is another episode. */
    log_episode_fail("x/http.c", "slurmrestd", "http://b", "b down");
    cr_assert_eq(n_lines, 2);
    cr_assert_eq(log_episode_ok("x/http.c", "slurmrestd", "http://a", "a back"), 1);
    cr_assert_eq(n_lines, 3);
    cr_assert_not_null(strstr(lines[2], "a back: after 52 failures in "), "%s", lines[2]);
    /* Successes outside an episode are silent; a new failure opens a new one. */
    cr_assert_eq(log_episode_ok("x/http.c", "slurmrestd", "http://a", "a back"), 0);
    cr_assert_eq(n_lines, 3);
    cr_assert_eq(log_episode_fail("x/http.c", "slurmrestd", "http://a", "a down again"), 1);
    cr_assert_eq(n_lines, 4);
    cr_assert_not(log_episode_open("slurmrestd", "http://c"));
}

static char keypath[64];

static sluice_client_t *client_at(const char *url)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    sluice_client_t *c = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int fd;

    snprintf(keypath, sizeof(keypath), "/tmp/sluice-episode-key-XXXXXX");
    fd = mkstemp(keypath);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
    fchmod(fd, 0600);
    close(fd);
    ao.kind = SLUICE_AUTH_HS256_KEY;
    ao.path = keypath;
    ao.user = "alice";
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    co.url = url;
    co.api_version = "v0.0.43";
    co.query_timeout_ms = 2000;
    co.auth = auth;
    cr_assert_eq(sluice_client_new(&c, &co, &err), SLUICE_OK, "%s", err.text);
    return c;
}

Test(log_episode, client_logs_slurmrestd_unreachable_once_and_back_once)
{
    int port = fake_free_port();
    char url[64];
    sluice_client_t *c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_rest_ping_t ping;
    fake_server_t *fs;
    fake_response_t ok;
    int i;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    c = client_at(url);
    for (i = 0; i < 5; i++) {
        memset(&ping, 0, sizeof(ping));
        cr_assert_neq(sluice_client_ping(c, &ping, NULL, &err), SLUICE_OK);
    }
    /* The error names the real cause, not only "unavailable (not-sent)". */
    cr_assert_not_null(strstr(err.text, "onnect"), "%s", err.text);
    cr_assert_not_null(strstr(err.text, "127.0.0.1"), "%s", err.text);
    cr_assert_eq(n_lines, 1, "%d lines, first: %s", n_lines, lines[0]);
    cr_assert_not_null(strstr(lines[0], "client: slurmrestd unreachable at http://127.0.0.1:"),
                       "%s", lines[0]);

    memset(&ok, 0, sizeof(ok));
    ok.body = "{\"pings\":[],\"errors\":[],\"warnings\":[],\"meta\":{}}";
    fs = fake_start_port(port, &ok, 1);
    cr_assert_not_null(fs);
    sluice_error_clear(&err);
    (void)sluice_client_ping(c, &ping, NULL, &err);
    cr_assert_eq(n_lines, 2, "%d lines", n_lines);
    cr_assert_not_null(strstr(lines[1], "slurmrestd reachable again at http://127.0.0.1:"), "%s",
                       lines[1]);
    cr_assert_not_null(strstr(lines[1], "after 5 failures"), "%s", lines[1]);
    sluice_client_free(c);
    fake_stop(fs);
    unlink(keypath);
}
