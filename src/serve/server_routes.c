/* SPDX-License-Identifier: Apache-2.0 */
/* server_routes.c - the routes of `sluice serve`'s /v1 API: a static table
 * of {method, path pattern, handler}, the matcher that takes the launch id
 * out of a path, and the dispatch (caller, query check, 404, 405).
 *
 * Notes:
 * - The order of the checks is part of the API: the path is matched first,
 *   but a public route (/v1/healthz) is answered without a caller and
 *   without the query check; every other path, even one without a route,
 *   needs a caller (401) before the query (400), then the launch id (400,
 *   404), then the route (404, 405).
 * - Allow lists the methods of the path's routes in table order.
 * - A path with {id} is matched segment by segment: the id is everything
 *   up to the next '/', checked as soon as the literal before it matched.
 * - A pattern ending in '*' matches every path that starts with the text
 *   before it (the status page's files, /ui/<file>); its handler reads
 *   the rest of rq->url itself.
 * - Each route takes only the query parameters its row lists (none when
 *   the row lists none); any other is 400 invalid-query naming it.  That
 *   check comes last, just before the handler; public routes skip it as
 *   they skip the query text check.
 * - One table: a route's method, pattern, access, handler and query
 *   parameters are one row.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "server_access.h"
#include "server_health.h"
#include "server_launch_post.h"
#include "server_launches.h"
#include "server_logs.h"
#include "server_openapi.h"
#include "server_routes.h"
#include "server_sse.h"
#include "server_status.h"
#include "server_tenant.h"
#include "server_text.h"
#include "server_ui.h"
#include "server_util.h"

typedef void (*route_fn)(sluice_server_t *s, req_t *rq, answer_t *out);

typedef struct {
    const char *method;
    const char *pattern; /* literal text and at most one {id}, or a prefix and '*' */
    int public_route;    /* 1: no caller needed, no query check */
    route_fn fn;
    const char *arg; /* handed to the handler as rq->route_arg */
    /* the query parameters it takes: space-separated names, matched without
     * regard to case as req_arg() looks them up; NULL: none */
    const char *params;
} route_t;

static const route_t routes[] = {
    {"GET", "/v1/healthz", 1, health_live, NULL, NULL},
    {"GET", "/v1/openapi.json", 1, openapi_get, "json", NULL},
    {"GET", "/v1/openapi.yaml", 1, openapi_get, "yaml", NULL},
    {"GET", "/v1/readyz", 0, health_ready, NULL, NULL},
    {"GET", "/v1/metrics", 0, health_metrics, NULL, NULL},
    {"GET", "/v1/status", 0, status_get, NULL, NULL},
    {"GET", "/v1/events", 0, sse_get, NULL, "after since launch_id state site"},
    {"GET", "/v1/launches", 0, launches_list, NULL, "limit cursor state site study cluster"},
    {"POST", "/v1/launches", 0, launch_post, NULL, "dry_run"},
    {"GET", "/v1/launches/{id}", 0, launches_get, NULL, NULL},
    {"GET", "/v1/launches/{id}/events", 0, sse_launch_get, NULL, "after since"},
    {"DELETE", "/v1/launches/{id}", 0, launches_cancel, NULL, NULL},
    {"GET", "/v1/launches/{id}/logs/stdout", 0, logs_get, "stdout", "offset follow"},
    {"GET", "/v1/launches/{id}/logs/stderr", 0, logs_get, "stderr", "offset follow"},
    /* the status page: static files, no data */
    {"GET", "/ui", 1, ui_get, NULL, NULL},
    {"GET", "/ui/*", 1, ui_get, NULL, NULL},
};
#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

/* 1 when route `r` takes the query parameter `name`. */
static int route_takes(const route_t *r, const char *name)
{
    size_t n = strlen(name);
    const char *p = r->params;

    while (p != NULL && *p != '\0') {
        size_t len = strcspn(p, " ");
        if (len == n && strncasecmp(p, name, n) == 0)
            return 1;
        p += len;
        p += strspn(p, " ");
    }
    return 0;
}

/* 0 when route `r` takes every query parameter of `rq`; else -1 with a
 * 400 in `out` naming the first one it does not. */
static int check_params(const route_t *r, const req_t *rq, answer_t *out)
{
    size_t i;
    char detail[256];

    for (i = 0; i < rq->n_args; i++) {
        const char *key = rq->args[i].key;

        if (route_takes(r, key))
            continue;
        if (strlen(key) > 64)
            key = "query";
        snprintf(detail, sizeof(detail), "query parameter %s is not known to %s %s", key, r->method,
                 r->pattern);
        answer_problem_ex(out, 400, "invalid-query", "Invalid query", detail, key, NULL);
        return -1;
    }
    return 0;
}

typedef enum {
    MATCH_NONE,      /* no route has this path: 404 */
    MATCH_BAD_ID,    /* the id in the path is not clean text: 400 */
    MATCH_NO_LAUNCH, /* the id cannot be a launch id: 404 */
    MATCH_METHOD,    /* the path has routes, none for this method: 405 */
    MATCH_OK,
} match_kind_t;

typedef struct {
    match_kind_t kind;
    const route_t *route; /* MATCH_OK */
    int public_route;     /* the path's routes are public */
    char allow[64];       /* MATCH_METHOD: "GET, POST" */
    const char *why;      /* MATCH_BAD_ID */
    char id[136];
} match_t;

/* How `url` compares with `pattern`: 1 when it matches (the id copied to
 * m->id), 0 when not, -1 when it reached {id} and the id there is bad
 * (m->kind says how). */
static int match_pattern(const char *pattern, const char *url, match_t *m)
{
    const char *hole = strstr(pattern, "{id}");
    size_t pre = hole ? (size_t)(hole - pattern) : strlen(pattern), idlen;

    if (hole == NULL && pre > 0 && pattern[pre - 1] == '*')
        return strncmp(pattern, url, pre - 1) == 0;
    if (hole == NULL)
        return strcmp(pattern, url) == 0;
    if (strncmp(pattern, url, pre) != 0)
        return 0;
    url += pre;
    idlen = strcspn(url, "/");
    if (!text_clean(url, idlen, &m->why)) {
        m->kind = MATCH_BAD_ID;
        return -1;
    }
    if (!server_valid_id(url, idlen)) {
        m->kind = MATCH_NO_LAUNCH;
        return -1;
    }
    if (strcmp(hole + 4, url + idlen) != 0)
        return 0;
    memcpy(m->id, url, idlen);
    m->id[idlen] = '\0';
    return 1;
}

static void match(const char *method, const char *url, match_t *m)
{
    size_t i, used = 0;

    memset(m, 0, sizeof(*m));
    m->kind = MATCH_NONE;
    for (i = 0; i < N_ROUTES; i++) {
        const route_t *r = &routes[i];
        int hit = match_pattern(r->pattern, url, m);

        if (hit < 0)
            return;
        if (hit == 0)
            continue;
        m->public_route = r->public_route;
        if (strcmp(r->method, method) == 0) {
            m->kind = MATCH_OK;
            m->route = r;
            return;
        }
        m->kind = MATCH_METHOD;
        used += (size_t)snprintf(m->allow + used, sizeof(m->allow) - used, "%s%s", used ? ", " : "",
                                 r->method);
        if (used >= sizeof(m->allow))
            used = sizeof(m->allow) - 1;
    }
}

/* Name the caller of `rq` into rq->caller; 0, or -1 with a 401 in `out`. */
static int identify(sluice_server_t *s, req_t *rq, answer_t *out)
{
    memset(&rq->caller, 0, sizeof(rq->caller));
    if (rq->unix_socket) {
        /* The socket's file mode guards the Unix listener; the peer's uid
         * names the caller. */
        if (server_peer_caller(rq->peer_fd, &rq->caller) != 0) {
            answer_problem(out, 401, "unauthorized", "Unauthorized",
                           "the peer of the Unix socket could not be identified");
            return -1;
        }
    } else {
        size_t len;
        const char *h = req_header_len(rq, "Authorization", &len);
        const token_t *t = server_authenticate(s, h, len);
        if (t == NULL) {
            answer_problem(out, 401, "unauthorized", "Unauthorized",
                           "a valid `Authorization: Bearer <token>` header is required");
            return -1;
        }
        snprintf(rq->caller.name, sizeof(rq->caller.name), "%s", t->name);
        rq->caller.admin = t->admin;
    }
    server_tenant_of(s, &rq->caller);
    return 0;
}

void routes_dispatch(sluice_server_t *s, req_t *rq, answer_t *out)
{
    match_t m;

    match(rq->method, rq->url, &m);
    if (!m.public_route) {
        const char *field = NULL, *why = NULL;
        char detail[256];

        if (identify(s, rq, out) != 0)
            return;
        if (req_check_args(rq, &field, &why) != 0) {
            snprintf(detail, sizeof(detail), "query parameter %s %s", field, why);
            answer_problem_ex(out, 400, "invalid-query", "Invalid query", detail, field, NULL);
            return;
        }
    }
    switch (m.kind) {
    case MATCH_NONE:
        answer_problem(out, 404, "not-found", "Not found", "no such route");
        return;
    case MATCH_BAD_ID: {
        char detail[96];
        snprintf(detail, sizeof(detail), "the launch id in the path %s", m.why);
        answer_problem_ex(out, 400, "invalid-id", "Invalid launch id", detail, "launch_id", NULL);
        return;
    }
    case MATCH_NO_LAUNCH:
        answer_problem(out, 404, "not-found", "Not found", "no such launch");
        return;
    case MATCH_METHOD:
        answer_problem_ex(out, 405, "method-not-allowed", "Method not allowed", NULL, NULL,
                          m.allow);
        return;
    case MATCH_OK:
        if (!m.public_route && check_params(m.route, rq, out) != 0)
            return;
        rq->id[0] = '\0';
        /* A launch is named by the caller's tenant's key: another tenant's
         * launch cannot be named, and is no such launch (404). */
        if (m.id[0] != '\0' && !m.public_route &&
            server_tenant_key(&rq->caller, m.id, rq->id, sizeof(rq->id)) != 0) {
            answer_problem(out, 404, "not-found", "Not found", "no such launch");
            return;
        }
        rq->route_arg = m.route->arg;
        m.route->fn(s, rq, out);
        return;
    }
}
