/* SPDX-License-Identifier: Apache-2.0 */
/* test_api_contract.c - sluice's own API against openapi/sluice-v1.yaml.
 *
 * - lint: the document passes Redocly's linter (tests/contract/redocly.yaml,
 *   the recommended rules as errors, one rule off with its reason).
 * - routes: a real in-process server (launcher over the fake cluster) is
 *   driven through every route and every status the document lists; each
 *   answer (status, content type, headers, body, SSE events) is recorded
 *   and validate_api.mjs checks it against the document with ajv.  An
 *   answer the document does not list fails, and so does a documented
 *   status that no exchange produced (tests/contract/api-not-exercised.json
 *   names the few that cannot be produced in-process, with the reason).
 *
 * A missing node_modules is a failure (run `npm ci --prefix tests/contract`).
 */
#include <criterion/criterion.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "server_fixture.h"
#include "sluice_assert.h"
#include "http_client.h"

#define TOKEN SFX_TOKEN
#define AUTH "Authorization: Bearer " TOKEN "\r\n"
#define WRONG "Authorization: Bearer tok-alice-0123456789abcdeX\r\n"
#define JSON_AUTH AUTH "Content-Type: application/json\r\n"
#define TOKEN_BOB SFX_BOB_TOKEN
#define BOB "Authorization: Bearer " TOKEN_BOB "\r\n"
/* erin: the one caller of tenant tx, which may have one live launch */
#define ERIN "Authorization: Bearer tok-erin-0123456789abcdef\r\nContent-Type: application/json\r\n"

static bool is_dir(const char *p)
{
    struct stat st;

    return p != NULL && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *source_dir(void)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    return src;
}

static void need_node_modules(const char *src, const char *module)
{
    char mods[4096];

    snprintf(mods, sizeof(mods), "%s/tests/contract/node_modules/%s", src, module);
    cr_assert(is_dir(mods),
              "tests/contract/node_modules/%s is missing: run `npm ci --prefix tests/contract`",
              module);
}

/* Run `cmd`, echo its output to stderr; the exit status. */
static int run_echo(const char *cmd)
{
    char line[4096];
    FILE *p = popen(cmd, "r");
    int st;

    cr_assert_not_null(p, "cannot run %s", cmd);
    while (fgets(line, sizeof(line), p) != NULL)
        fputs(line, stderr);
    st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(api_contract, openapi_document_passes_the_linter, .timeout = 180)
{
    const char *src = source_dir();
    char cmd[8192];

    need_node_modules(src, "@redocly/cli");
    snprintf(cmd, sizeof(cmd),
             "cd '%s/tests/contract' && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true "
             "NO_COLOR=1 node node_modules/@redocly/cli/bin/cli.js lint --config redocly.yaml "
             "--format=codeframe '%s/openapi/sluice-v1.yaml' 2>&1",
             src, src);
    cr_assert_eq(run_echo(cmd), 0, "redocly lint found problems in openapi/sluice-v1.yaml");
}

/* ---- the recorded exchanges --------------------------------------------- */

static server_fixture_t fx;
static json_t *exchanges;
static int not_ready;

static sluice_err ready(void *arg, sluice_error_t *err)
{
    (void)arg;
    if (not_ready)
        return sluice_errorf(err, SLUICE_ETRANSPORT, "slurmrestd is not reachable (test)");
    return SLUICE_OK;
}

static void with_ready(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->ready = ready;
}

static void setup(void)
{
    char why[256];

    sfx_opts_t o;

    (void)source_dir(); /* the fixture reads the golden site from there */
    memset(&o, 0, sizeof(o));
    o.tweak = with_ready;
    o.extra_tokens = "erin tok-erin-0123456789abcdef\n";
    o.site_append = "tenants:\n"
                    "  - name: tx\n"
                    "    callers: [erin]\n"
                    "    slurm_user: sluice\n"
                    "    identity: proxy\n"
                    "    limits:\n"
                    "      live_launches: 1\n";
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
    exchanges = json_array();
}

static void teardown(void)
{
    json_decref(exchanges);
    sfx_stop(&fx);
}

/* "Name: value" lines after the status line into {lower-case name: value}. */
static json_t *header_object(const char *block)
{
    json_t *h = json_object();
    const char *p = strstr(block, "\r\n");

    while (p != NULL && p[2] != '\0' && p[2] != '\r') {
        const char *line = p + 2, *colon, *end = strstr(line, "\r\n");
        char name[128], value[1024];
        size_t n, i;

        if (end == NULL)
            end = line + strlen(line);
        colon = memchr(line, ':', (size_t)(end - line));
        if (colon != NULL && (size_t)(colon - line) < sizeof(name)) {
            n = (size_t)(colon - line);
            for (i = 0; i < n; i++)
                name[i] = (char)tolower((unsigned char)line[i]);
            name[n] = '\0';
            colon++;
            while (*colon == ' ')
                colon++;
            snprintf(value, sizeof(value), "%.*s", (int)(end - colon), colon);
            json_object_set_new(h, name, json_string(value));
        }
        p = *end ? end : NULL;
    }
    return h;
}

static void record_raw(const char *method,
                       const char *route,
                       const char *path,
                       int status,
                       const char *headers,
                       const char *body,
                       json_t *events /* stolen, may be NULL */)
{
    json_t *h = header_object(headers);
    const char *ctype = json_string_value(json_object_get(h, "content-type"));
    json_t *b = NULL;

    if (ctype != NULL && (strncmp(ctype, "application/json", 16) == 0 ||
                          strncmp(ctype, "application/problem+json", 24) == 0))
        b = json_loads(body, JSON_DECODE_ANY, NULL);
    if (b == NULL)
        b = json_string(body); /* a JSON type that was not JSON then fails the schema */
    cr_assert_not_null(b, "body of %s %s is not UTF-8", method, path);
    json_array_append_new(
        exchanges, json_pack("{s:s s:s s:s s:i s:s s:o s:o s:o}", "method", method, "route", route,
                             "path", path, "status", status, "content_type", ctype ? ctype : "",
                             "headers", h, "body", b, "events", events ? events : json_array()));
}

/* One request, recorded; returns the status (the response is kept in *r
 * when r is not NULL). */
static int ex(const char *method,
              const char *route,
              const char *path,
              const char *extra,
              const char *body,
              hc_response_t *keep)
{
    hc_response_t r;
    int status;

    cr_assert_eq(hc_request(fx.port, method, path, extra, body, body ? strlen(body) : 0, &r), 0,
                 "%s %s", method, path);
    record_raw(method, route, path, r.status, r.headers, r.body, NULL);
    status = r.status;
    if (keep != NULL)
        *keep = r;
    else
        hc_response_clear(&r);
    return status;
}

/* A stream read until `needle`: status, headers, the body so far and its
 * `data:` lines as events. */
static void ex_stream(const char *route, const char *path, const char *extra, const char *needle)
{
    char *raw = NULL, *sep, *body, *o, *line, *save = NULL;
    const char *p;
    json_t *events = json_array();
    int status = 0;
    size_t k = 0;

    cr_assert_eq(hc_stream_until(fx.port, path, extra, needle, 10000, &raw), 0, "%s: %s", path,
                 raw ? raw : "");
    cr_assert_eq(sscanf(raw, "HTTP/1.%*d %d", &status), 1);
    sep = strstr(raw, "\r\n\r\n");
    cr_assert_not_null(sep);
    sep[2] = '\0';
    body = sep + 4;
    o = calloc(1, strlen(body) + 1);
    cr_assert_not_null(o);
    if (strstr(raw, "chunked") != NULL) {
        /* the complete chunks so far */
        for (p = body; *p;) {
            char *e;
            unsigned long sz = strtoul(p, &e, 16);
            const char *crlf = strstr(p, "\r\n");
            if (crlf == NULL || e == p || sz == 0 || strlen(crlf + 2) < sz)
                break;
            memcpy(o + k, crlf + 2, sz);
            k += sz;
            p = crlf + 2 + sz;
            if (strncmp(p, "\r\n", 2) == 0)
                p += 2;
        }
    } else {
        k = strlen(body);
        memcpy(o, body, k);
    }
    o[k] = '\0';
    {
        char *copy = strdup(o);
        cr_assert_not_null(copy);
        for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (strncmp(line, "data: ", 6) == 0) {
                json_t *ev = json_loads(line + 6, 0, NULL);
                json_array_append_new(events, ev ? ev : json_string(line + 6));
            }
        }
        free(copy);
    }
    record_raw("GET", route, path, status, raw, o, events);
    free(o);
    free(raw);
}

static void step(int n)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int i;

    for (i = 0; i < n; i++)
        cr_assert_sluice_ok(sluice_server_step(fx.server, &err), &err);
}

Test(api_contract,
     every_route_and_status_matches_the_document,
     .init = setup,
     .fini = teardown,
     .timeout = 180)
{
    const char *src = source_dir();
    char req[1200], other[1200], path[1024], file[512], cmd[8192], *big;
    const char *L = "/v1/launches", *ONE = "/v1/launches/{launch_id}",
               *LOGS = "/v1/launches/{launch_id}/logs/{stream}", *EV = "/v1/events",
               *LEV = "/v1/launches/{launch_id}/events";
    hc_response_t r;
    json_t *j;
    const char *staging;
    size_t big_len = SLUICE_SERVER_MAX_BODY + 100;
    FILE *f;

    need_node_modules(src, "ajv");
    need_node_modules(src, "yaml");

    /* health, readiness, metrics */
    cr_expect_eq(ex("GET", "/v1/healthz", "/v1/healthz", NULL, NULL, NULL), 200);
    cr_expect_eq(ex("POST", "/v1/healthz", "/v1/healthz", NULL, "", NULL), 405);
    cr_expect_eq(ex("GET", "/v1/readyz", "/v1/readyz", AUTH, NULL, NULL), 200);
    not_ready = 1;
    cr_expect_eq(ex("GET", "/v1/readyz", "/v1/readyz", AUTH, NULL, NULL), 503);
    not_ready = 0;
    cr_expect_eq(ex("GET", "/v1/readyz", "/v1/readyz", NULL, NULL, NULL), 401);
    cr_expect_eq(ex("DELETE", "/v1/readyz", "/v1/readyz", AUTH, NULL, NULL), 405);
    cr_expect_eq(ex("GET", "/v1/metrics", "/v1/metrics", WRONG, NULL, NULL), 401);
    cr_expect_eq(ex("POST", "/v1/metrics", "/v1/metrics", JSON_AUTH, "{}", NULL), 405);
    cr_expect_eq(ex("GET", "/v1/status", "/v1/status", AUTH, NULL, NULL), 200);
    cr_expect_eq(ex("GET", "/v1/status", "/v1/status", NULL, NULL, NULL), 401);
    cr_expect_eq(ex("PUT", "/v1/status", "/v1/status", AUTH, NULL, NULL), 405);

    /* the status page: public files with their security headers */
    cr_expect_eq(ex("GET", "/ui", "/ui", NULL, NULL, &r), 200);
    {
        char etag[64], inm[128];
        cr_assert_not_null(hc_header(&r, "ETag", etag, sizeof(etag)));
        snprintf(inm, sizeof(inm), "If-None-Match: %s\r\n", etag);
        hc_response_clear(&r);
        cr_expect_eq(ex("GET", "/ui", "/ui", inm, NULL, NULL), 304);
    }
    cr_expect_eq(ex("GET", "/ui", "/ui/", NULL, NULL, NULL), 200);
    cr_expect_eq(ex("POST", "/ui", "/ui", JSON_AUTH, "{}", NULL), 405);
    cr_expect_eq(ex("GET", "/ui/{file}", "/ui/app.js", NULL, NULL, &r), 200);
    {
        char etag[64], inm[128];
        cr_assert_not_null(hc_header(&r, "ETag", etag, sizeof(etag)));
        snprintf(inm, sizeof(inm), "If-None-Match: %s\r\n", etag);
        hc_response_clear(&r);
        cr_expect_eq(ex("GET", "/ui/{file}", "/ui/app.js", inm, NULL, NULL), 304);
    }
    cr_expect_eq(ex("GET", "/ui/{file}", "/ui/app.css", NULL, NULL, NULL), 200);
    cr_expect_eq(ex("GET", "/ui/{file}", "/ui/favicon.svg", NULL, NULL, NULL), 200);
    cr_expect_eq(ex("GET", "/ui/{file}", "/ui/nope.js", NULL, NULL, NULL), 404);
    cr_expect_eq(ex("DELETE", "/ui/{file}", "/ui/app.js", NULL, NULL, NULL), 405);

    /* the OpenAPI document: public, and the same as the file read on its
     * own (check_openapi_served.py, PyYAML) with the binary's version */
    cr_expect_eq(ex("GET", "/v1/openapi.yaml", "/v1/openapi.yaml", NULL, NULL, NULL), 200);
    cr_expect_eq(ex("POST", "/v1/openapi.yaml", "/v1/openapi.yaml", NULL, "", NULL), 405);
    cr_expect_eq(ex("POST", "/v1/openapi.json", "/v1/openapi.json", AUTH, "", NULL), 405);
    cr_expect_eq(ex("GET", "/v1/openapi.json", "/v1/openapi.json", NULL, NULL, &r), 200);
    j = json_loads(r.body, 0, NULL);
    cr_assert_not_null(j, "%s", r.body);
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "info"), "version")),
                     SLUICE_VERSION_STRING);
    json_decref(j);
    snprintf(file, sizeof(file), "%s/openapi-served.json", fx.tmp);
    f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs(r.body, f);
    fclose(f);
    hc_response_clear(&r);
    snprintf(cmd, sizeof(cmd),
             "/usr/bin/python3 '%s/tests/contract/check_openapi_served.py' '%s' '%s'", src, src,
             file);
    cr_expect_eq(system(cmd), 0, "%s", cmd);

    /* create: accepted, the same again, dry run, and every refusal */
    sfx_request("c-1", "/bin/true", req, sizeof(req));
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, req, NULL), 201);
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, req, NULL), 200);
    sfx_request("dry-1", "/bin/true", other, sizeof(other));
    cr_expect_eq(ex("POST", L, "/v1/launches?dry_run=true", JSON_AUTH, other, &r), 200);
    j = json_loads(r.body, 0, NULL);
    staging = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "render"), "staging"), "service"));
    cr_assert_not_null(staging, "%s", r.body);
    snprintf(file, sizeof(file), "%s/stdout.log", staging);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", staging);
    cr_assert_eq(system(cmd), 0);
    json_decref(j);
    hc_response_clear(&r);
    f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs("first line\nsecond line\n", f);
    fclose(f);
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, other, NULL), 201);
    /* sym-1: its stdout.log a symlink (the log route refuses it) */
    sfx_request("sym-1", "/bin/sleep 1000", other, sizeof(other));
    cr_expect_eq(ex("POST", L, "/v1/launches?dry_run=true", JSON_AUTH, other, &r), 200);
    j = json_loads(r.body, 0, NULL);
    staging = json_string_value(
        json_object_get(json_object_get(json_object_get(j, "render"), "staging"), "service"));
    cr_assert_not_null(staging, "%s", r.body);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && ln -s /etc/hostname '%s/stdout.log'", staging,
             staging);
    cr_assert_eq(system(cmd), 0);
    json_decref(j);
    hc_response_clear(&r);
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, other, NULL), 201);
    sfx_request("c-1", "/bin/false", other, sizeof(other));
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, other, NULL), 409);
    /* a tenant's launch (its answer carries `tenant`), then its limit */
    sfx_request("t-1", "/bin/true", other, sizeof(other));
    cr_expect_eq(ex("POST", L, L, ERIN, other, NULL), 201);
    sfx_request("t-2", "/bin/true", other, sizeof(other));
    cr_expect_eq(ex("POST", L, L, ERIN, other, NULL), 429);
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, "{\"launch_id\":", NULL), 400);
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, "{\"launch_id\": \"x\"}", &r), 422);
    j = json_loads(r.body, 0, NULL);
    cr_expect_gt(json_array_size(json_object_get(j, "errors")), 1, "%s", r.body);
    json_decref(j);
    hc_response_clear(&r);
    cr_expect_eq(ex("POST", L, L, AUTH "Content-Type: text/plain\r\n", req, NULL), 415);
    cr_expect_eq(ex("POST", L, L, "Content-Type: application/json\r\n", req, NULL), 401);
    big = malloc(big_len + 1);
    cr_assert_not_null(big);
    memset(big, ' ', big_len);
    big[big_len] = '\0';
    cr_expect_eq(ex("POST", L, L, JSON_AUTH, big, NULL), 413);
    free(big);
    cr_expect_eq(ex("PUT", L, L, AUTH, NULL, NULL), 405);
    /* secret values over plain TCP: refused before anything is stored */
    cr_expect_eq(ex("POST", L, L, JSON_AUTH,
                    "{\"launch_id\": \"sec-1\", \"secrets\": {\"API_KEY\": \"v\"}}", NULL),
                 403);

    /* let the launches move: submitted, observed, ... */
    step(4);

    /* read */
    cr_expect_eq(ex("GET", L, "/v1/launches", AUTH, NULL, NULL), 200);
    cr_expect_eq(ex("GET", L, "/v1/launches?limit=1&site=site-1", AUTH, NULL, &r), 200);
    j = json_loads(r.body, 0, NULL);
    cr_assert(json_is_string(json_object_get(j, "next_cursor")), "%s", r.body);
    snprintf(path, sizeof(path), "/v1/launches?limit=1&cursor=%s",
             json_string_value(json_object_get(j, "next_cursor")));
    json_decref(j);
    hc_response_clear(&r);
    cr_expect_eq(ex("GET", L, path, AUTH, NULL, NULL), 200);
    cr_expect_eq(ex("GET", L, "/v1/launches?state=DONE&study=none", AUTH, NULL, NULL), 200);
    cr_expect_eq(ex("GET", L, "/v1/launches?limit=lots", AUTH, NULL, NULL), 400);
    cr_expect_eq(ex("GET", L, "/v1/launches", WRONG, NULL, NULL), 401);
    cr_expect_eq(ex("GET", ONE, "/v1/launches/c-1", AUTH, NULL, NULL), 200);
    cr_expect_eq(ex("GET", ONE, "/v1/launches/nope", AUTH, NULL, NULL), 404);
    cr_expect_eq(ex("GET", ONE, "/v1/launches/bad%ffid", AUTH, NULL, NULL), 400);
    cr_expect_eq(ex("GET", ONE, "/v1/launches/c-1", NULL, NULL, NULL), 401);
    cr_expect_eq(ex("GET", ONE, "/v1/launches/c-1", AUTH "If-None-Match: *\r\n", NULL, NULL), 304);
    cr_expect_eq(ex("POST", ONE, "/v1/launches/c-1", JSON_AUTH, "{}", NULL), 405);

    /* logs */
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/dry-1/logs/stdout", AUTH, NULL, NULL), 200);
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/dry-1/logs/stdout?offset=6", AUTH, NULL, NULL), 200);
    /* dry-1 has ended (the fake cluster ran it), and this fixture's launcher
     * archives nothing: its stderr has no copy to read, which is 410, never
     * an empty 200 */
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/dry-1/logs/stderr", AUTH, NULL, NULL), 410);
    /* a live log the job swapped for a symlink: refused */
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/sym-1/logs/stdout", AUTH, NULL, NULL), 409);
    ex_stream(LOGS, "/v1/launches/dry-1/logs/stdout?follow=true", AUTH, "second line\n");
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/dry-1/logs/stdout?offset=-1", AUTH, NULL, NULL),
                 400);
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/nope/logs/stdout", AUTH, NULL, NULL), 404);
    cr_expect_eq(ex("GET", LOGS, "/v1/launches/dry-1/logs/stdout", WRONG, NULL, NULL), 401);
    cr_expect_eq(ex("DELETE", LOGS, "/v1/launches/dry-1/logs/stdout", AUTH, NULL, NULL), 405);

    /* events */
    ex_stream(EV, "/v1/events", AUTH, "\"launch_id\":\"dry-1\"");
    ex_stream(EV, "/v1/events", AUTH "Last-Event-ID: 2\r\n", "id: 3\n");
    ex_stream(EV, "/v1/events?after=1", AUTH, "id: 2\n");
    cr_expect_eq(ex("GET", EV, "/v1/events?after=soon", AUTH, NULL, NULL), 400);
    cr_expect_eq(ex("GET", EV, "/v1/events", NULL, NULL, NULL), 401);
    /* one launch's stream, its resume and its problems */
    ex_stream(LEV, "/v1/launches/dry-1/events", AUTH, "id: ");
    ex_stream(LEV, "/v1/launches/dry-1/events?after=1", AUTH, "id: ");
    cr_expect_eq(ex("GET", LEV, "/v1/launches/dry-1/events?after=soon", AUTH, NULL, NULL), 400);
    cr_expect_eq(ex("GET", LEV, "/v1/launches/nope/events", AUTH, NULL, NULL), 404);
    cr_expect_eq(ex("GET", LEV, "/v1/launches/dry-1/events", NULL, NULL, NULL), 401);
    cr_expect_eq(ex("POST", LEV, "/v1/launches/dry-1/events", AUTH, NULL, NULL), 405);
    cr_expect_eq(ex("POST", EV, "/v1/events", JSON_AUTH, "{}", NULL), 405);

    /* cancel: another caller's launch (not an admin), accepted, again
     * (idempotent), unknown, unauthenticated */
    cr_expect_eq(ex("DELETE", ONE, "/v1/launches/dry-1", BOB, NULL, NULL), 403);
    cr_expect_eq(ex("DELETE", ONE, "/v1/launches/dry-1", AUTH, NULL, NULL), 202);
    cr_expect_eq(ex("DELETE", ONE, "/v1/launches/dry-1", AUTH, NULL, NULL), 202);
    cr_expect_eq(ex("DELETE", ONE, "/v1/launches/nope", AUTH, NULL, NULL), 404);
    cr_expect_eq(ex("DELETE", ONE, "/v1/launches/bad%00id", AUTH, NULL, NULL), 400);
    cr_expect_eq(ex("DELETE", ONE, "/v1/launches/dry-1", WRONG, NULL, NULL), 401);
    step(4);
    cr_expect_eq(ex("GET", ONE, "/v1/launches/dry-1", AUTH, NULL, NULL), 200);

    /* metrics last: every state seen so far */
    cr_expect_eq(ex("GET", "/v1/metrics", "/v1/metrics", AUTH, NULL, NULL), 200);

    /* kept in the build tree for whoever reads a failure */
    snprintf(file, sizeof(file), "%s/api-exchanges.json",
             getenv("SLUICE_BUILD_DIR") ? getenv("SLUICE_BUILD_DIR") : fx.tmp);
    cr_assert_eq(json_dump_file(exchanges, file, JSON_INDENT(1) | JSON_SORT_KEYS), 0);
    snprintf(cmd, sizeof(cmd),
             "node '%s/tests/contract/validate_api.mjs' '%s/openapi/sluice-v1.yaml' '%s' "
             "'%s/tests/contract/api-not-exercised.json' 2>&1",
             src, src, file, src);
    cr_assert_eq(run_echo(cmd), 0,
                 "answers of the API differ from openapi/sluice-v1.yaml (see the INVALID and "
                 "MISSING lines above)");
    cr_assert_geq(json_array_size(exchanges), 45);
}
