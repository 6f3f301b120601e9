/* SPDX-License-Identifier: Apache-2.0 */
/* test_client.c - the slurmrestd client against the scripted fake server:
 * typed outcomes of the failure paths, the retry rule (POST never, GET and
 * DELETE once after a token refresh), version negotiation and jobs/state
 * chunking.  Only 127.0.0.1 and Unix sockets are contacted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <sluice/client.h>
#include <sluice/log.h>
#include <sluice/ops.h>

#include "fake_slurmrestd.h"
#include "site/config_model.h"

static fake_server_t *fs;
static sluice_client_t *client;
static sluice_cluster_rest_t *rest; /* the cluster ops of rest_ops() */
static char keypath[64];
static int64_t fake_now = 1700000000;

/* Every call advances the clock, so each minted token differs. */
static int64_t ticking_clock(void *arg)
{
    (void)arg;
    return fake_now++;
}

static void setup(void)
{
    int fd;

    fs = fake_start(0);
    cr_assert_not_null(fs);
    snprintf(keypath, sizeof(keypath), "/tmp/sluice-client-key-XXXXXX");
    fd = mkstemp(keypath);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
    fchmod(fd, 0600);
    close(fd);
}

static void teardown(void)
{
    sluice_cluster_rest_free(rest);
    rest = NULL;
    sluice_client_free(client);
    client = NULL;
    fake_stop(fs);
    fs = NULL;
    unlink(keypath);
}

TestSuite(client, .init = setup, .fini = teardown, .timeout = 30);

static char *fixture(const char *version, const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];
    FILE *f;
    char *text;
    long len;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(path, sizeof(path), "%s/tests/fixtures/slurmrestd/%s/%s.json", src, version, name);
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

static void push_fixture(int status, const char *version, const char *name)
{
    char *text = fixture(version, name);
    push(status, text);
    free(text);
}

static void make_client(const char *version, long query_ms, size_t max_response, size_t chunk)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ao.kind = SLUICE_AUTH_HS256_KEY;
    ao.path = keypath;
    ao.user = "alice";
    ao.clock = ticking_clock;
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    co.url = fake_url(fs);
    co.api_version = version;
    co.query_timeout_ms = query_ms;
    co.submit_timeout_ms = query_ms;
    co.cancel_timeout_ms = query_ms;
    co.max_response = max_response;
    co.states_chunk = chunk;
    co.auth = auth;
    cr_assert_eq(sluice_client_new(&client, &co, &err), SLUICE_OK, "%s", err.text);
}

/* A pinned v0.0.43 client for `url` (no fake behind it). */
static void make_client_at(const char *url)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ao.kind = SLUICE_AUTH_HS256_KEY;
    ao.path = keypath;
    ao.user = "alice";
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    co.url = url;
    co.api_version = "v0.0.43";
    co.auth = auth;
    cr_assert_eq(sluice_client_new(&client, &co, &err), SLUICE_OK, "%s", err.text);
}

/* A client pinned to `version` whose negotiation already happened. */
static void ready_client(const char *version, long query_ms)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(version, query_ms, 0, 0);
    push_fixture(200, version, "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
}

static sluice_jobdesc_t one_job(void)
{
    sluice_jobdesc_t d;

    memset(&d, 0, sizeof(d));
    d.name = strdup("sluice-t");
    d.nodes = 1;
    d.tasks_per_node = 1;
    d.workdir = strdup("/tmp");
    d.script = strdup("#!/bin/sh\ntrue\n");
    return d;
}

static sluice_outcome submit_outcome(sluice_call_t *call, sluice_error_t *err)
{
    sluice_jobdesc_t d = one_job();
    sluice_rest_submit_t s = {0};

    (void)sluice_client_submit(client, &d, 1, &s, call, err);
    sluice_rest_submit_clear(&s);
    sluice_jobdesc_clear(&d);
    return call->outcome;
}

static sluice_outcome get_outcome(sluice_call_t *call, sluice_error_t *err)
{
    sluice_rest_jobs_t j = {0};

    (void)sluice_client_get_job(client, 5, &j, call, err);
    sluice_rest_jobs_clear(&j);
    return call->outcome;
}

/* ---- success paths -------------------------------------------------------- */

Test(client, submit_ok_returns_the_job_id_with_one_post)
{
    sluice_jobdesc_t d = one_job();
    sluice_rest_submit_t s = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push_fixture(200, "v0.0.43", "submit_ok");
    cr_assert_eq(sluice_client_submit(client, &d, 1, &s, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_OK);
    cr_assert_eq(s.job_id, 200);
    cr_assert_eq(call.requests, 1);
    cr_assert_str_eq(fake_request(fs, 1)->method, "POST");
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.43/job/submit");
    sluice_rest_submit_clear(&s);
    sluice_jobdesc_clear(&d);
}

/* Every header line of a request, "Name: value" each ending CRLF, with no
 * name twice: 26.11's HTTP parser (llhttp) refuses what older ones let by. */
static void headers_once(const fake_request_t *r)
{
    char names[32][64];
    size_t n = 0;
    const char *p = r->headers;

    cr_assert_not_null(p, "%s %s: no headers", r->method, r->target);
    while (*p != '\0') {
        const char *eol = strstr(p, "\r\n");
        const char *colon = strchr(p, ':');
        size_t len;

        cr_assert_not_null(eol, "%s %s: a header line without CRLF: %s", r->method, r->target, p);
        cr_assert(colon != NULL && colon < eol, "%s %s: not a header: %.*s", r->method, r->target,
                  (int)(eol - p), p);
        len = (size_t)(colon - p);
        cr_assert_lt(n, 32);
        cr_assert_lt(len, sizeof(names[0]));
        snprintf(names[n], sizeof(names[n]), "%.*s", (int)len, p);
        for (size_t k = 0; k < n; k++)
            cr_assert(strcasecmp(names[k], names[n]) != 0, "%s %s: header %s twice", r->method,
                      r->target, names[n]);
        n++;
        p = eol + 2;
    }
    cr_assert_gt(n, 0, "%s %s: no header line", r->method, r->target);
}

Test(client, v0046_requests_send_each_header_once)
{
    sluice_jobdesc_t d = one_job();
    sluice_rest_submit_t s = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *doc = NULL;

    ready_client("v0.0.46", 5000);
    push_fixture(200, "v0.0.46", "submit_ok");
    cr_assert_eq(sluice_client_submit(client, &d, 1, &s, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(s.job_id, 200);
    push_fixture(200, "v0.0.46", "job_running");
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_OK, "%s", err.text);
    push(200, "{\"status\":[],\"errors\":[],\"warnings\":[]}");
    cr_assert_eq(sluice_client_cancel(client, 200, NULL, &call, &err), SLUICE_OK, "%s", err.text);
    push(200, "{\"openapi\":\"3.0.2\",\"paths\":{}}");
    cr_assert_eq(sluice_client_openapi(client, &doc, &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert(json_is_object(json_object_get(doc, "paths")));
    json_decref(doc);
    doc = NULL;
    push(200, "[1]");
    cr_assert_eq(sluice_client_openapi(client, &doc, &call, &err), SLUICE_EPROTO);
    cr_assert_str_eq(err.text, "openapi: expected an object");
    cr_assert_null(doc);
    cr_assert_eq(fake_request_count(fs), 6);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.46/job/submit");
    cr_assert_str_eq(fake_request(fs, 3)->method, "DELETE");
    cr_assert_str_eq(fake_request(fs, 4)->target, "/openapi/v3");
    for (size_t i = 0; i < fake_request_count(fs); i++)
        headers_once(fake_request(fs, i));
    sluice_rest_submit_clear(&s);
    sluice_jobdesc_clear(&d);
}

Test(client, get_job_not_found_on_404_and_on_2205_500_2017)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push_fixture(404, "v0.0.43", "error_notfound");
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_NOT_FOUND);
    cr_assert_eq(err.code, SLUICE_ENOTFOUND);
    cr_assert_eq(call.slurm_errno, 2017);
    cr_assert_eq(call.http_status, 404);
    sluice_client_free(client);
    client = NULL;

    ready_client("v0.0.38", 5000);
    push_fixture(500, "v0.0.38", "error_notfound");
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_NOT_FOUND);
    cr_assert_eq(call.requests, 1);
}

/* ---- failure paths: typed outcome and never a repeated POST --------------- */

Test(client, delay_past_the_timeout)
{
    fake_response_t r;
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 300);
    memset(&r, 0, sizeof(r));
    r.delay_ms = 1000;
    r.body = "{}";
    fake_push(fs, &r);
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN);
    cr_assert_eq(err.code, SLUICE_ETIMEDOUT);
    cr_assert_eq(call.requests, 1);
    fake_push(fs, &r);
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_UNAVAILABLE);
    cr_assert_eq(err.code, SLUICE_ETIMEDOUT);
    cr_assert_eq(call.requests, 1);
}

Test(client, server_errors_5xx)
{
    static const int codes[] = {500, 502, 503, 504};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t before;

    ready_client("v0.0.43", 5000);
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        before = fake_request_count(fs);
        push(codes[i], "{\"errors\":[{\"error_number\":1001,\"error\":\"comm\"}]}");
        cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN, "POST %d", codes[i]);
        cr_assert_eq(call.http_status, codes[i]);
        cr_assert_eq(call.slurm_errno, 1001);
        cr_assert_eq(fake_request_count(fs), before + 1, "POST %d was repeated", codes[i]);
        push(codes[i], "{}");
        cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_UNAVAILABLE, "GET %d", codes[i]);
        cr_assert_eq(fake_request_count(fs), before + 2);
    }
}

Test(client, auth_failure_post_is_uncertain_and_never_retried)
{
    static const int codes[] = {401, 511};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    for (size_t i = 0; i < 2; i++) {
        size_t before = fake_request_count(fs);
        push(codes[i], "{\"errors\":[{\"error_number\":1007,"
                       "\"error\":\"Protocol authentication error\"}]}");
        push_fixture(200, "v0.0.43", "submit_ok"); /* must never be consumed by a retry */
        cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN);
        cr_assert(call.auth_refreshed);
        cr_assert_eq(call.requests, 1);
        cr_assert_eq(fake_request_count(fs), before + 1);
        /* drain the unused answer with a GET */
        (void)get_outcome(&call, &err);
        cr_assert_eq(fake_request_count(fs), before + 2);
    }
}

Test(client, auth_failure_get_retried_once_with_a_fresh_token)
{
    static const int codes[] = {401, 511};
    char tok1[2048], tok2[2048];
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    for (size_t i = 0; i < 2; i++) {
        size_t before = fake_request_count(fs);
        push(codes[i], "Authentication failure");
        push_fixture(200, "v0.0.43", "job_running");
        cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_OK, "%s", err.text);
        cr_assert_eq(call.requests, 2);
        cr_assert(call.auth_refreshed);
        cr_assert_eq(fake_request_count(fs), before + 2);
        cr_assert(fake_header(fake_request(fs, before), "X-SLURM-USER-TOKEN", tok1, sizeof(tok1)));
        cr_assert(
            fake_header(fake_request(fs, before + 1), "X-SLURM-USER-TOKEN", tok2, sizeof(tok2)));
        cr_assert_str_neq(tok1, tok2, "the retry must carry a refreshed token");
    }
}

Test(client, auth_failure_twice_is_auth_and_stops)
{
    char tok[2048];
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push(511, "{}");
    push(511, "{}");
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_AUTH);
    cr_assert_eq(err.code, SLUICE_EAUTH);
    cr_assert_eq(call.requests, 2);
    cr_assert_eq(fake_request_count(fs), 3);
    cr_assert(fake_header(fake_request(fs, 2), "X-SLURM-USER-TOKEN", tok, sizeof(tok)));
    cr_assert_null(strstr(err.text, tok), "error text must never hold the token");
}

Test(client, delete_retried_once_after_auth)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.38", 5000);
    push(500, "{\"errors\":[{\"error_number\":-1,\"error\":\"Unspecified error\"}]}");
    push(200, "{\"errors\":[]}");
    cr_assert_eq(sluice_client_cancel(client, 7, "TERM", &call, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(call.requests, 2);
    cr_assert_str_eq(fake_request(fs, 1)->method, "DELETE");
    cr_assert_str_eq(fake_request(fs, 2)->method, "DELETE");
    cr_assert_not_null(strstr(fake_request(fs, 2)->target, "/slurm/v0.0.38/job/7"));
}

/* The cluster ops table over `c` (the table of the call before is gone). */
static void rest_ops(sluice_client_t *c, sluice_cluster_ops_t *ops)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    sluice_cluster_rest_free(rest);
    rest = NULL;
    cr_assert_eq(sluice_cluster_rest_new(&rest, c, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_cluster_rest_ops(rest, ops);
}

/* What the cluster ops table makes of one POST answered `status` + `body`. */
static sluice_submit_outcome ops_submit(int status, const char *body, sluice_submit_result_t *res)
{
    sluice_cluster_ops_t ops;
    sluice_jobdesc_t d = one_job();
    sluice_submit_outcome o;

    rest_ops(client, &ops);
    push(status, body);
    o = ops.submit(ops.arg, &d, 1, res);
    sluice_jobdesc_clear(&d);
    return o;
}

Test(client, submit_never_reads_not_found_and_never_resends_what_reached_slurmrestd)
{
    sluice_submit_result_t res;
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *nf;

    /* a handler's 404 with errors[] */
    ready_client("v0.0.43", 5000);
    push_fixture(404, "v0.0.43", "error_notfound");
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN, "%s", err.text);
    cr_assert_eq(call.requests, 1);
    nf = fixture("v0.0.43", "error_notfound");
    cr_assert_eq(ops_submit(404, nf, &res), SLUICE_SUBMIT_UNCERTAIN, "%s", res.detail);
    free(nf);
    sluice_client_free(client);
    client = NULL;

    /* 22.05's HTTP 500 + error 2017 */
    ready_client("v0.0.38", 5000);
    push_fixture(500, "v0.0.38", "error_notfound");
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN, "%s", err.text);
    cr_assert_eq(call.requests, 1);
    nf = fixture("v0.0.38", "error_notfound");
    cr_assert_eq(ops_submit(500, nf, &res), SLUICE_SUBMIT_UNCERTAIN, "%s", res.detail);
    free(nf);
    /* an unreadable 200 and a 503 stay uncertain; only a 4xx with errors[] rejects */
    cr_assert_eq(ops_submit(200, "<html>", &res), SLUICE_SUBMIT_UNCERTAIN, "%s", res.detail);
    cr_assert_eq(ops_submit(503, "{}", &res), SLUICE_SUBMIT_UNCERTAIN, "%s", res.detail);
}

Test(client, ops_submit_unavailable_only_when_the_post_never_left)
{
    sluice_cluster_ops_t ops;
    sluice_submit_result_t res;
    sluice_jobdesc_t d = one_job();

    ready_client("v0.0.43", 5000);
    fake_stop(fs);
    fs = NULL;
    rest_ops(client, &ops);
    cr_assert_eq(ops.submit(ops.arg, &d, 1, &res), SLUICE_SUBMIT_UNAVAILABLE, "%s", res.detail);
    sluice_jobdesc_clear(&d);
    fs = fake_start(0);
}

/* node_address (peers.env): GET node/{name} on every version; the address
 * is the record's NodeAddr; an unknown node or a record without an address
 * is NOT_FOUND, an outage UNAVAILABLE; never the name instead. */
Test(client, node_address_reads_nodeaddr_on_every_version)
{
    static const char *const versions[] = {"v0.0.38", "v0.0.42", "v0.0.45"};
    static const char *const live[] = {"nodes_live2205_one", "nodes_live2411_one",
                                       "nodes_live2605_one"};
    sluice_cluster_ops_t ops;
    char addr[64], want[64];

    for (size_t i = 0; i < 3; i++) {
        ready_client(versions[i], 5000);
        rest_ops(client, &ops);
        push_fixture(200, versions[i], live[i]);
        cr_assert_eq(ops.node_address(ops.arg, "tb1", addr, sizeof(addr)), SLUICE_LOOKUP_FOUND);
        cr_assert_str_eq(addr, "127.0.0.1");
        snprintf(want, sizeof(want), "/slurm/%s/node/tb1", versions[i]);
        cr_assert_str_eq(fake_request(fs, fake_request_count(fs) - 1)->target, want);
        /* a record of another node, or one without an address (fixture node2) */
        push_fixture(200, versions[i], "nodes_basic");
        cr_assert_eq(ops.node_address(ops.arg, "tb1", addr, sizeof(addr)), SLUICE_LOOKUP_NOT_FOUND);
        push_fixture(200, versions[i], "nodes_basic");
        cr_assert_eq(ops.node_address(ops.arg, "node2", addr, sizeof(addr)),
                     SLUICE_LOOKUP_NOT_FOUND, "node2 has no address: never its name");
        cr_assert_str_eq(addr, "");
        push_fixture(200, versions[i], "nodes_basic");
        cr_assert_eq(ops.node_address(ops.arg, "node1", addr, 4), SLUICE_LOOKUP_NOT_FOUND,
                     "does not fit: never cut");
        push(503, "{}");
        cr_assert_eq(ops.node_address(ops.arg, "tb1", addr, sizeof(addr)),
                     SLUICE_LOOKUP_UNAVAILABLE);
        sluice_client_free(client);
        client = NULL;
    }
    /* 24.11/26.05 answer an unknown node 200, errors[] and no record */
    ready_client("v0.0.42", 5000);
    rest_ops(client, &ops);
    push(200, "{\"nodes\": [], \"errors\": [{\"description\": \"Failure to query node "
              "nosuch\", \"error_number\": 0, \"error\": \"No error\", \"source\": "
              "\"_dump_nodes\"}], \"warnings\": [], \"meta\": {}}");
    cr_assert_eq(ops.node_address(ops.arg, "nosuch", addr, sizeof(addr)), SLUICE_LOOKUP_NOT_FOUND);
}

Test(client, rejected_submit_keeps_the_slurm_error)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push_fixture(400, "v0.0.43", "submit_error");
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_REJECTED);
    cr_assert_eq(err.code, SLUICE_ESLURM);
    cr_assert_eq(call.slurm_errno, 2000);
    cr_assert_str_eq(call.slurm_error, "Invalid partition name specified");
    cr_assert_eq(call.http_status, 400);
    cr_assert_eq(fake_request_count(fs), 2);
}

Test(client, not_modified_304_means_no_changes)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.38", 5000);
    push(304, NULL);
    cr_assert_eq(sluice_client_jobs_since(client, 1700000000, &j, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert(call.no_changes);
    cr_assert_eq(j.n_jobs, 0);
    cr_assert_not_null(strstr(fake_request(fs, 1)->target, "update_time=1700000000"));
    sluice_rest_jobs_clear(&j);
}

Test(client, no_changes_warning_on_newer_versions)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push_fixture(200, "v0.0.43", "jobs_nochanges");
    cr_assert_eq(sluice_client_jobs_since(client, 1700000000, &j, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert(call.no_changes);
    sluice_rest_jobs_clear(&j);
}

Test(client, truncated_and_invalid_json)
{
    static const char *bodies[] = {"{\"jobs\":[{\"job_id\":5", "<html>oops</html>"};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    for (size_t i = 0; i < 2; i++) {
        size_t before = fake_request_count(fs);
        push(200, bodies[i]);
        cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_PROTOCOL);
        cr_assert_eq(err.code, SLUICE_EPROTO);
        push(200, bodies[i]);
        cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN,
                     "a 200 we cannot read may still be an accepted job");
        cr_assert_eq(fake_request_count(fs), before + 2);
    }
}

Test(client, schema_violation_is_protocol)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push(200, "{\"jobs\":\"not a list\"}");
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_PROTOCOL);
}

Test(client, oversize_body_is_too_large)
{
    fake_response_t r;
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("v0.0.43", 5000, 4096, 0);
    push_fixture(200, "v0.0.43", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    memset(&r, 0, sizeof(r));
    r.body = "0123456789abcdef";
    r.repeat_body = 1024;
    fake_push(fs, &r);
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_TOO_LARGE);
    cr_assert_eq(err.code, SLUICE_ETOOBIG);
    fake_push(fs, &r);
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN);
    cr_assert_eq(call.requests, 1);
}

Test(client, connection_reset)
{
    fake_response_t r;
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t before;

    ready_client("v0.0.43", 5000);
    before = fake_request_count(fs);
    memset(&r, 0, sizeof(r));
    r.close_silently = 1;
    fake_push(fs, &r);
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNCERTAIN);
    cr_assert_eq(fake_request_count(fs), before + 1);
    fake_push(fs, &r);
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_UNAVAILABLE);
    cr_assert_eq(call.requests, 1);
}

Test(client, connection_refused_is_unavailable_even_for_a_post)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    fake_stop(fs);
    fs = NULL;
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNAVAILABLE,
                 "a request that was never sent is certainly not submitted");
    fs = fake_start(0);
}

Test(client, port_nobody_listens_on_is_not_sent_for_a_post)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;
    int port = fake_free_port();
    char url[64];

    cr_assert_gt(port, 0);
    make_client("v0.0.43", 5000, 0, 0);
    push_fixture(200, "v0.0.43", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_client_free(client);
    client = NULL;
    /* the same client setup, pointed at a port that refuses connections */
    fake_stop(fs);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    fs = fake_start_port(port, NULL, 0);
    cr_assert_not_null(fs);
    fake_stop(fs); /* bound once, closed: nothing listens now */
    fs = NULL;
    make_client_at(url);
    cr_assert_eq(submit_outcome(&call, &err), SLUICE_OUTCOME_UNAVAILABLE, "%s", err.text);
    cr_assert_eq(call.http_status, 0);
    cr_assert_not_null(strstr(err.text, "not-sent"), "%s", err.text);
    fs = fake_start(0);
}

/* ---- negotiation ---------------------------------------------------------- */

Test(client, auto_finds_v0043_and_records_meta)
{
    sluice_client_info_t info;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("auto", 5000, 0, 0);
    for (int i = 0; i < 3; i++)
        push(404, "Unable find requested URL");
    push_fixture(200, "v0.0.43", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_client_info(client, &info);
    cr_assert(info.negotiated);
    cr_assert_eq(info.version, SLUICE_REST_V0043);
    cr_assert_str_eq(info.release, "25.05.8");
    cr_assert_str_eq(info.cluster, "testbed");
    cr_assert_str_eq(info.data_parser, "data_parser/v0.0.43");
    cr_assert_eq(fake_request_count(fs), 4);
    cr_assert_str_eq(fake_request(fs, 0)->target, "/slurm/v0.0.46/diag/");
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.45/diag/");
    cr_assert_str_eq(fake_request(fs, 2)->target, "/slurm/v0.0.44/diag/");
    cr_assert_str_eq(fake_request(fs, 3)->target, "/slurm/v0.0.43/diag/");
    /* later operations use it without probing again */
    push_fixture(200, "v0.0.43", "job_running");
    cr_assert_eq(get_outcome(&(sluice_call_t){0}, &err), SLUICE_OUTCOME_OK, "%s", err.text);
    cr_assert_str_eq(fake_request(fs, 4)->target, "/slurm/v0.0.43/job/5");
}

/* A 26.11 server offers v0.0.43-v0.0.46: auto takes v0.0.46 with its first
 * probe. */
Test(client, auto_prefers_v0046_when_offered)
{
    sluice_client_info_t info;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("auto", 5000, 0, 0);
    push_fixture(200, "v0.0.46", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_client_info(client, &info);
    cr_assert_eq(info.version, SLUICE_REST_V0046);
    cr_assert_str_eq(info.data_parser, "data_parser/v0.0.46");
    cr_assert_str_eq(info.release, "26.11.0");
    cr_assert_eq(fake_request_count(fs), 1);
    cr_assert_str_eq(fake_request(fs, 0)->target, "/slurm/v0.0.46/diag/");
    push_fixture(200, "v0.0.46", "job_running");
    cr_assert_eq(get_outcome(&(sluice_call_t){0}, &err), SLUICE_OUTCOME_OK, "%s", err.text);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.46/job/5");
}

Test(client, pinned_v0046_is_verified_with_its_own_diag)
{
    sluice_client_info_t info;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("v0.0.46", 5000, 0, 0);
    push_fixture(200, "v0.0.46", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_client_info(client, &info);
    cr_assert_eq(info.version, SLUICE_REST_V0046);
    cr_assert_eq(fake_request_count(fs), 1);
    cr_assert_str_eq(fake_request(fs, 0)->target, "/slurm/v0.0.46/diag/");
}

/* The probes decide by the HTTP status alone: a 404 moves on whatever its
 * body says (25.11's text, 26.11's ESLURM_URL_INVALID_PATH text or JSON,
 * the retired 9006, a handler's 2017), and an answer that is not a 404
 * stops the walk whatever its body. */
Test(client, negotiation_reads_status_codes_never_error_text)
{
    static const char *const bodies[] = {
        "Invalid or unknown URL path",
        "{\"errors\":[{\"error_number\":11008,\"error\":\"Invalid or unknown URL path\"}]}",
        "{\"errors\":[{\"error_number\":9006,\"error\":\"Unable to find\"}]}",
        "{\"errors\":[{\"error_number\":2017,\"error\":\"Invalid job id specified\"}]}",
    };
    sluice_client_info_t info;
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("auto", 5000, 0, 0);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++)
        push(404, bodies[i]);
    push_fixture(200, "v0.0.42", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_client_info(client, &info);
    cr_assert_eq(info.version, SLUICE_REST_V0042);
    cr_assert_eq(fake_request_count(fs), 5);
    fake_stop(fs);
    fs = fake_start(0);
    sluice_client_free(client);
    client = NULL;
    /* a 401 whose body reads like an unknown URL is still AUTH: no walk */
    make_client("auto", 5000, 0, 0);
    push(401, bodies[0]);
    push(401, bodies[1]);
    cr_assert_eq(sluice_client_negotiate(client, &call, &err), SLUICE_EAUTH);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_AUTH);
    cr_assert_eq(fake_request_count(fs), 2, "the first probe and its one retry");
}

Test(client, auto_finds_v0038)
{
    sluice_client_info_t info;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client(NULL, 5000, 0, 0);
    for (int i = 0; i < 7; i++)
        push(404, "Unable find requested URL");
    push_fixture(200, "v0.0.38", "diag_basic");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_OK, "%s", err.text);
    sluice_client_info(client, &info);
    cr_assert_eq(info.version, SLUICE_REST_V0038);
    cr_assert_str_eq(info.release, "22.05.8");
    cr_assert_str_eq(info.cluster, "");
    cr_assert_str_eq(fake_request(fs, 6)->target, "/slurm/v0.0.40/diag/");
    cr_assert_str_eq(fake_request(fs, 7)->target, "/slurm/v0.0.38/diag/");
}

Test(client, unsupported_server_lists_what_it_offers)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("auto", 5000, 0, 0);
    for (int i = 0; i < 8; i++)
        push(404, "Unable find requested URL");
    push(200, "{\"openapi\":\"3.0.2\",\"paths\":{\"/slurm/v0.0.39/diag/\":{},"
              "\"/slurm/v0.0.39/jobs/\":{},\"/slurmdb/v0.0.39/jobs/\":{}}}");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.text, "offers v0.0.39;"), "%s", err.text);
    cr_assert_not_null(strstr(err.text, "v0.0.40-v0.0.46"), "%s", err.text);
    cr_assert_str_eq(fake_request(fs, 8)->target, "/openapi/v3");
}

Test(client, pinned_version_the_server_lacks)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("v0.0.45", 5000, 0, 0);
    push(404, "Unable find requested URL");
    push(404, "no listing");
    cr_assert_eq(sluice_client_negotiate(client, NULL, &err), SLUICE_EUNSUPPORTED);
    cr_assert_not_null(strstr(err.text, "v0.0.45"), "%s", err.text);
    cr_assert_not_null(strstr(err.text, "not available"), "%s", err.text);
}

Test(client, negotiation_with_a_bad_token_is_auth)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("auto", 5000, 0, 0);
    push(511, "{}");
    push(511, "{}");
    cr_assert_eq(sluice_client_negotiate(client, &call, &err), SLUICE_EAUTH);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_AUTH);
    cr_assert_eq(fake_request_count(fs), 2);
}

Test(client, pinned_version_unknown_to_sluice_is_refused_at_creation)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ao.kind = SLUICE_AUTH_HS256_KEY;
    ao.path = keypath;
    ao.user = "alice";
    cr_assert_eq(sluice_auth_new(&auth, &ao, &err), SLUICE_OK, "%s", err.text);
    co.url = fake_url(fs);
    co.api_version = "v0.0.39";
    co.auth = auth;
    cr_assert_eq(sluice_client_new(&client, &co, &err), SLUICE_EUNSUPPORTED);
    sluice_auth_free(auth);
}

/* ---- jobs/state ----------------------------------------------------------- */

Test(client, job_states_are_chunked)
{
    const uint64_t ids[] = {5, 6, 7, 8, 9};
    sluice_rest_job_states_t st = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("v0.0.43", 5000, 0, 2);
    push_fixture(200, "v0.0.43", "diag_basic");
    push(200, "{\"jobs\":[{\"job_id\":\"5\",\"state\":[\"PENDING\"]},"
              "{\"job_id\":\"6\",\"state\":[\"RUNNING\"]}]}");
    push(200, "{\"jobs\":[{\"job_id\":\"7\",\"state\":[\"COMPLETED\"]},"
              "{\"job_id\":\"8\",\"state\":[\"FAILED\"]}]}");
    push(200, "{\"jobs\":[{\"job_id\":\"9\",\"state\":[\"CANCELLED\"]}]}");
    cr_assert_eq(sluice_client_job_states(client, ids, 5, &st, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(st.n_states, 5);
    cr_assert_eq(call.requests, 3);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.43/jobs/state/?job_id=5&job_id=6");
    cr_assert_str_eq(fake_request(fs, 2)->target, "/slurm/v0.0.43/jobs/state/?job_id=7&job_id=8");
    cr_assert_str_eq(fake_request(fs, 3)->target, "/slurm/v0.0.43/jobs/state/?job_id=9");
    cr_assert_eq(st.states[4].job_id, 9);
    cr_assert_eq(st.states[4].base, SLUICE_JOB_CANCELLED);
    cr_assert_eq(st.states[2].base, SLUICE_JOB_COMPLETED);
    sluice_rest_job_states_clear(&st);
}

/* Without a chunk size, every tracked id goes into one request while the
 * query fits (one slurmctld RPC per poll cycle). */
Test(client, job_states_fit_in_one_request)
{
    enum { N = 1000 };
    uint64_t ids[N];
    sluice_rest_job_states_t st = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (size_t i = 0; i < N; i++)
        ids[i] = 1000001 + i;
    make_client("v0.0.43", 5000, 0, 0);
    push_fixture(200, "v0.0.43", "diag_basic");
    push(200, "{\"jobs\":[{\"job_id\":\"1000001\",\"state\":[\"PENDING\"]},"
              "{\"job_id\":\"1001000\",\"state\":[\"RUNNING\"]}]}");
    cr_assert_eq(sluice_client_job_states(client, ids, N, &st, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(call.requests, 1);
    cr_assert_eq(fake_request_count(fs), 2);
    cr_assert(strncmp(fake_request(fs, 1)->target,
                      "/slurm/v0.0.43/jobs/state/?job_id=1000001&job_id=1000002&", 56) == 0,
              "%s", fake_request(fs, 1)->target);
    cr_assert_eq(st.n_states, 2);
    sluice_rest_job_states_clear(&st);
}

/* A tracked set whose query would pass slurmrestd's limit (it would drop the
 * query and answer for every job) is read once unfiltered and filtered
 * here: still one request, only our jobs and our hetjob's components. */
Test(client, job_states_past_the_url_limit_read_all_and_filter)
{
    enum { N = 5000 };
    static uint64_t ids[N];
    sluice_rest_job_states_t st = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (size_t i = 0; i < N; i++)
        ids[i] = 2000000 + 2 * i; /* 2000000 is a hetjob leader, 2000001 its component */
    make_client("v0.0.43", 5000, 0, 0);
    push_fixture(200, "v0.0.43", "diag_basic");
    push(200, "{\"jobs\":[{\"job_id\":\"17\",\"state\":[\"RUNNING\"]},"
              "{\"job_id\":\"2000000+0\",\"state\":[\"RUNNING\"]},"
              "{\"job_id\":\"2000001+1\",\"state\":[\"RUNNING\"]},"
              "{\"job_id\":\"2000003\",\"state\":[\"PENDING\"]},"
              "{\"job_id\":\"2009998\",\"state\":[\"COMPLETED\"]}]}");
    cr_assert_eq(sluice_client_job_states(client, ids, N, &st, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(call.requests, 1);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.43/jobs/state/");
    cr_assert_eq(st.n_states, 3, "got %zu states", st.n_states);
    cr_assert_eq(st.states[0].job_id, 2000000);
    cr_assert_eq(st.states[1].job_id, 2000001);
    cr_assert_eq(st.states[1].het_offset, 1);
    cr_assert_eq(st.states[2].job_id, 2009998);
    cr_assert_eq(st.states[2].base, SLUICE_JOB_COMPLETED);
    sluice_rest_job_states_clear(&st);
}

/* So many ids that even the path could not hold them: still the one
 * unfiltered read, never a local refusal (which would leave every launch
 * without status). */
Test(client, job_states_of_a_hundred_thousand_jobs_read_all)
{
    enum { N = 100000 };
    static uint64_t ids[N];
    sluice_rest_job_states_t st = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (size_t i = 0; i < N; i++)
        ids[i] = 3000000 + i;
    make_client("v0.0.43", 5000, 0, 0);
    push_fixture(200, "v0.0.43", "diag_basic");
    push(200, "{\"jobs\":[{\"job_id\":\"3099999\",\"state\":[\"RUNNING\"]}]}");
    cr_assert_eq(sluice_client_job_states(client, ids, N, &st, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(call.requests, 1);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.43/jobs/state/");
    cr_assert_eq(st.n_states, 1);
    sluice_rest_job_states_clear(&st);
}

Test(client, job_states_chunk_failure_fails_the_call)
{
    const uint64_t ids[] = {5, 6, 7};
    sluice_rest_job_states_t st = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    make_client("v0.0.43", 5000, 0, 2);
    push_fixture(200, "v0.0.43", "diag_basic");
    push(200, "{\"jobs\":[{\"job_id\":\"5\",\"state\":[\"PENDING\"]}]}");
    push(503, "{}");
    cr_assert_neq(sluice_client_job_states(client, ids, 3, &st, &call, &err), SLUICE_OK);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_UNAVAILABLE);
    cr_assert_eq(st.n_states, 0);
    cr_assert_null(st.states);
}

Test(client, job_states_on_v0038_filter_the_job_list)
{
    const uint64_t ids[] = {101, 103, 999};
    sluice_rest_job_states_t st = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.38", 5000);
    push_fixture(200, "v0.0.38", "jobs_list");
    cr_assert_eq(sluice_client_job_states(client, ids, 3, &st, &call, &err), SLUICE_OK, "%s",
                 err.text);
    cr_assert_eq(st.n_states, 2);
    cr_assert_eq(st.states[0].job_id, 101);
    cr_assert_eq(st.states[0].base, SLUICE_JOB_PENDING);
    cr_assert_eq(st.states[1].job_id, 103);
    cr_assert_eq(st.states[1].base, SLUICE_JOB_COMPLETED);
    cr_assert_str_eq(fake_request(fs, 1)->target, "/slurm/v0.0.38/jobs/");
    sluice_rest_job_states_clear(&st);
}

/* ---- accounting ----------------------------------------------------------- */

Test(client, acct_find_newest_first_and_v0038_query)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.38", 5000);
    push_fixture(200, "v0.0.38", "acct_requeued");
    (void)sluice_client_acct_find(client, "sluice-x", NULL, 1000, 2000, &j, &call, &err);
    cr_assert(call.outcome == SLUICE_OUTCOME_OK || call.outcome == SLUICE_OUTCOME_NOT_FOUND);
    cr_assert_null(strstr(fake_request(fs, 1)->target, "users="), "dbv0.0.38 has no users key");
    cr_assert_not_null(strstr(fake_request(fs, 1)->target, "start_time=now-"));
    for (size_t i = 1; i < j.n_jobs; i++)
        cr_assert(j.jobs[i - 1].submit_time >= j.jobs[i].submit_time);
    sluice_rest_jobs_clear(&j);
}

Test(client, acct_nothing_found_is_not_found)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.38", 5000);
    push(200, "{\"errors\":[{\"error_number\":9003,\"error\":\"Nothing found with query\"}],"
              "\"jobs\":[]}");
    cr_assert_eq(sluice_client_acct_find(client, "x", "alice", 1, 2, &j, &call, &err),
                 SLUICE_ENOTFOUND);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_NOT_FOUND);
    push(500, "{\"errors\":[{\"error_number\":9003,\"error\":\"Nothing found with query\"}]}");
    cr_assert_eq(sluice_client_acct_job(client, 5, &j, &call, &err), SLUICE_ENOTFOUND);
    sluice_rest_jobs_clear(&j);
}

/* slurmrestd's router answers an unknown URL with a text/plain 404: "Unable
 * find requested URL" up to 25.05, slurm_strerror(ESLURM_REST_UNKNOWN_URL)
 * from 25.11 on.  On /slurmdb/ that means no slurmdbd plugin is loaded
 * (slurmrestd -s openapi/slurmctld): no verdict on any job. */
static const char *const router_404[] = {
    "Unable find requested URL",
    "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit "
    "'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes a "
    "list of all possible slurmrestd endpoints.",
};

static void push_router_404(const char *text)
{
    fake_response_t r;

    memset(&r, 0, sizeof(r));
    r.status = 404;
    r.body = text;
    r.content_type = "text/plain";
    r.close_after = 1; /* as slurmrestd does after every rejection */
    fake_push(fs, &r);
}

Test(client, acct_unknown_url_is_unavailable_never_not_found)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    for (size_t i = 0; i < sizeof(router_404) / sizeof(router_404[0]); i++) {
        push_router_404(router_404[i]);
        cr_assert_neq(sluice_client_acct_find(client, "x", "alice", 1, 2, &j, &call, &err),
                      SLUICE_OK);
        cr_assert_eq(call.outcome, SLUICE_OUTCOME_UNAVAILABLE, "acct_find, body %zu: %s", i,
                     sluice_outcome_name(call.outcome));
        cr_assert_neq(err.code, SLUICE_ENOTFOUND);
        cr_assert_eq(call.http_status, 404);
        cr_assert_not_null(strstr(err.text, "accounting is not served"), "%s", err.text);
        cr_assert_not_null(strstr(err.text, "/slurmdb/v0.0.43/jobs/"), "%s", err.text);
        push_router_404(router_404[i]);
        cr_assert_neq(sluice_client_acct_job(client, 5, &j, &call, &err), SLUICE_OK);
        cr_assert_eq(call.outcome, SLUICE_OUTCOME_UNAVAILABLE, "acct_job, body %zu: %s", i,
                     sluice_outcome_name(call.outcome));
        cr_assert_not_null(strstr(err.text, "accounting is not served"), "%s", err.text);
    }
    cr_assert_eq(j.n_jobs, 0);
    sluice_rest_jobs_clear(&j);
}

Test(client, acct_json_404_is_still_not_found)
{
    sluice_rest_jobs_t j = {0};
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    ready_client("v0.0.43", 5000);
    push_fixture(404, "v0.0.43", "error_notfound");
    cr_assert_eq(sluice_client_acct_job(client, 5, &j, &call, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(call.outcome, SLUICE_OUTCOME_NOT_FOUND);
    cr_assert_eq(call.slurm_errno, 2017);
    sluice_rest_jobs_clear(&j);
}

Test(client, live_unknown_url_after_negotiation_is_unavailable)
{
    sluice_call_t call;
    sluice_error_t err = SLUICE_ERROR_INIT;

    /* e.g. slurmrestd restarted without this version's plugin */
    ready_client("v0.0.43", 5000);
    push_router_404(router_404[0]);
    cr_assert_eq(get_outcome(&call, &err), SLUICE_OUTCOME_UNAVAILABLE, "%s", err.text);
    cr_assert_not_null(strstr(err.text, "serves no such URL"), "%s", err.text);
}

/* ---- constraints and names ------------------------------------------------ */

Test(client, constraint_matching)
{
    cr_assert_eq(sluice_constraint_match("gpu_a100", "gpu_a100,sluicetb"), 1);
    cr_assert_eq(sluice_constraint_match("gpu_h100", "gpu_a100,sluicetb"), 0);
    cr_assert_eq(sluice_constraint_match("gpu_a100&sluicetb", "sluicetb,gpu_a100"), 1);
    cr_assert_eq(sluice_constraint_match("gpu_a100&ib", "gpu_a100"), 0);
    cr_assert_eq(sluice_constraint_match("gpu_x|gpu_a100", "gpu_a100"), 1);
    cr_assert_eq(sluice_constraint_match("a&b|c", "c"), 1);
    cr_assert_eq(sluice_constraint_match("a&b|c", "a"), 0);
    cr_assert_eq(sluice_constraint_match(" a & b ", "a,b"), 1);
    cr_assert_eq(sluice_constraint_match("gpu_a100", NULL), 0);
    cr_assert_eq(sluice_constraint_match("[a|b]", "a"), -1);
    cr_assert_eq(sluice_constraint_match("a*2", "a"), -1);
    cr_assert_eq(sluice_constraint_match("(a&b)", "a,b"), -1);
    cr_assert_eq(sluice_constraint_match("a&", "a"), -1);
    cr_assert_eq(sluice_constraint_match("", "a"), -1);
    cr_assert_eq(sluice_constraint_match("!a", "a"), -1);
}

Test(client, outcome_names)
{
    cr_assert_str_eq(sluice_outcome_name(SLUICE_OUTCOME_OK), "ok");
    cr_assert_str_eq(sluice_outcome_name(SLUICE_OUTCOME_UNCERTAIN), "uncertain");
    cr_assert_str_eq(sluice_outcome_name(SLUICE_OUTCOME_TOO_LARGE), "too-large");
    cr_assert_str_eq(sluice_outcome_name((sluice_outcome)99), "unknown");
}

/* ---- identity --------------------------------------------------------------- */

#define TOKEN_NO_USER                                                                              \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE5MDAwMDAwMDAsImlhdCI6MTcwMDAwMDAwMH0.c2ln"
#define TOKEN_SUN_TOKUSER                                                                          \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                        \
    "eyJleHAiOjE5MDAwMDAwMDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoi"                                     \
    "dG9rdXNlciJ9.c2ln"

#define TOKEN_SUN_MALLORY                                                                          \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."                                                        \
    "eyJleHAiOjE5MDAwMDAwMDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoi"                                     \
    "bWFsbG9yeSJ9.c2ln"

/* A site file naming rest.url and the token file `tok`, plus `extra`. */
static sluice_config_t *site_with_token(const char *tok, const char *extra, char *path, size_t cap)
{
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    static const char *const no_env[] = {NULL};
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char text[1024];
    int fd;

    snprintf(path, cap, "/tmp/sluice-client-tok-XXXXXX");
    fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, tok, strlen(tok)), (ssize_t)strlen(tok));
    fchmod(fd, 0600);
    close(fd);
    snprintf(text, sizeof(text),
             "rest:\n  url: %s\n  api_version: v0.0.43\n  jwt_file: %s\n%s"
             "storage:\n  root: /tmp\njob_launcher:\n  sandbox: none\n",
             fake_url(fs), path, extra);
    o.text = text;
    o.text_len = strlen(text);
    o.text_name = "site.yaml";
    o.envp = no_env;
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_OK, "%s", err.text);
    return cfg;
}

/* rest.user unset: the token's `sun` claim is the Slurm user of the client
 * and of the cluster operations (the launcher's ownership checks). */
Test(client, user_is_taken_from_the_token_when_rest_user_is_unset)
{
    char path[64];
    sluice_config_t *cfg = site_with_token(TOKEN_SUN_TOKUSER, "", path, sizeof(path));
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_cluster_ops_t ops;

    const char *claim = NULL;

    cr_assert_null(cfg->rest.user);
    cr_assert_eq(sluice_client_new_from_config(&client, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user(sluice_client_auth(client)), "tokuser");
    cr_assert_str_eq(sluice_auth_user_claim(sluice_client_auth(client)), "sun");
    rest_ops(client, &ops);
    cr_assert_not_null(ops.user);
    cr_assert_str_eq(ops.user(ops.arg), "tokuser");
    /* completed, for staging and the launcher options */
    cr_assert_eq(sluice_client_resolve_user(cfg, &claim, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(cfg->rest.user, "tokuser");
    cr_assert_str_eq(claim, "sun");
    cr_assert_eq(sluice_config_source(cfg, "rest.user"), SLUICE_SRC_TOKEN);
    cr_assert_eq(sluice_client_resolve_user(cfg, &claim, &err), SLUICE_OK, "%s", err.text);
    cr_assert_null(claim, "already set: nothing read");
    /* A client made from the completed configuration still takes the user
     * from the token, so a token rotated to another user stays refused. */
    sluice_client_free(client);
    client = NULL;
    cr_assert_eq(sluice_client_new_from_config(&client, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user_claim(sluice_client_auth(client)), "sun");
    {
        char tmp_path[80];
        FILE *f;
        char *tok = NULL;

        /* rotated as a rotator does: a new file renamed over the old one */
        snprintf(tmp_path, sizeof(tmp_path), "%s.new", path);
        f = fopen(tmp_path, "w");
        cr_assert_not_null(f);
        fputs(TOKEN_SUN_MALLORY, f);
        fclose(f);
        cr_assert_eq(chmod(tmp_path, 0600), 0);
        cr_assert_eq(rename(tmp_path, path), 0);
        cr_assert_eq(sluice_auth_token(sluice_client_auth(client), &tok, &err), SLUICE_EAUTH);
        cr_assert_null(tok);
    }
    sluice_client_free(client);
    client = NULL;
    cr_assert_eq(sluice_client_new_from_config(&client, cfg, &err), SLUICE_EAUTH);
    cr_assert_not_null(strstr(err.text, "now names mallory, not tokuser"), "%s", err.text);
    sluice_config_free(cfg);
    unlink(path);
}

/* Neither rest.user nor a user in the token: the configuration is refused,
 * and the error names rest.user. */
Test(client, no_user_anywhere_refuses_the_configuration)
{
    char path[64];
    sluice_config_t *cfg = site_with_token(TOKEN_NO_USER, "", path, sizeof(path));
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_auth_t *a = NULL;

    cr_assert_eq(sluice_client_new_from_config(&client, cfg, &err), SLUICE_ECONFIG);
    cr_assert_null(client);
    cr_assert(strncmp(err.text, "rest.user: not set", 18) == 0, "%s", err.text);
    cr_assert_not_null(strstr(err.text, "rest.jwt_file"), "%s", err.text);
    cr_assert_null(strstr(err.text, TOKEN_NO_USER), "the token is never quoted");
    cr_assert_eq(sluice_client_auth_from_config(&a, cfg, &err), SLUICE_ECONFIG);
    cr_assert_eq(sluice_client_resolve_user(cfg, NULL, &err), SLUICE_ECONFIG);
    cr_assert_null(cfg->rest.user);
    sluice_config_free(cfg);
    unlink(path);

    /* rest.user set: the token need not name anyone */
    cfg = site_with_token(TOKEN_NO_USER, "  user: svc\n", path, sizeof(path));
    cr_assert_eq(sluice_client_new_from_config(&client, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_str_eq(sluice_auth_user(sluice_client_auth(client)), "svc");
    sluice_config_free(cfg);
    unlink(path);
}

/* A submit answer whose job id is "<id>;<cluster>" (the job went to another
 * cluster): the cluster ops report the id and the cluster, and the
 * launcher refuses it. */
Test(client, submit_answer_with_a_cluster_suffix_names_the_cluster)
{
    sluice_submit_result_t res;

    ready_client("v0.0.43", 5000);
    memset(&res, 0, sizeof(res));
    cr_assert_eq(ops_submit(200, "{\"job_id\":\"4242;elsewhere\",\"step_id\":\"batch\"}", &res),
                 SLUICE_SUBMIT_OK, "%s", res.detail);
    cr_assert_eq(res.job_id, 4242);
    cr_assert_str_eq(res.cluster, "elsewhere");
    memset(&res, 0, sizeof(res));
    cr_assert_eq(ops_submit(200, "{\"job_id\":4243,\"step_id\":\"batch\"}", &res),
                 SLUICE_SUBMIT_OK);
    cr_assert_eq(res.job_id, 4243);
    cr_assert_str_eq(res.cluster, "");
    cr_assert_eq(ops_submit(200, "{\"job_id\":\"4244;\",\"step_id\":\"batch\"}", &res),
                 SLUICE_SUBMIT_UNCERTAIN, "a garbled id proves nothing");
}
