/* SPDX-License-Identifier: Apache-2.0 */
/* server_launches.c - reading and cancelling launches over `sluice serve`'s
 * API: the list, one launch (through the read cache of server_cache.c),
 * the cancel, and the API view they all answer with.
 *
 * Notes:
 * - Reads take rmu (the server's own store connection), so they never wait
 *   for a launcher cycle; so does the cancel, which appends its request
 *   to the store (sluice_store_request_cancel) for the launcher to fold in.
 * - Every write marks the read cache dirty (views_dirty) before it answers,
 *   so no later read answers from before it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/fsm.h>
#include <sluice/launch_view.h>
#include <sluice/launcher.h>
#include <sluice/log.h>
#include <sluice/store.h>

#include "base/json_text.h"
#include "server_cache.h"
#include "server_launches.h"
#include "server_tenant.h"
#include "server_util.h"
#include "server_wake.h"

/* The node addresses of one launch's cluster (opts.node_address_in). */
typedef struct {
    const sluice_server_t *s;
    const char *cluster;
} view_addr_t;

static int view_addr(void *arg, const char *node, char *buf, size_t size)
{
    const view_addr_t *va = arg;

    return va->s->o.node_address_in(va->s->o.node_address_arg, va->cluster, node, buf, size);
}

sluice_err launches_view_of(sluice_server_t *s,
                            const json_t *l,
                            const json_t *ev,
                            int64_t version,
                            json_t **out,
                            sluice_error_t *err)
{
    view_addr_t va;

    va.s = s;
    va.cluster = json_string_value(json_object_get(l, "cluster"));
    if ((*out = s->o.node_address_in != NULL
                    ? sluice_launch_view_build(l, ev, view_addr, &va)
                    : sluice_launch_view_build(l, ev, s->o.node_address, s->o.node_address_arg)) ==
            NULL ||
        json_object_set_new(*out, "resource_version", json_integer(version)) != 0) {
        json_decref(*out);
        *out = NULL;
        return sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory",
                             json_string_value(json_object_get(l, "launch_id")));
    }
    server_tenant_shape(*out);
    return SLUICE_OK;
}

sluice_err launches_view_at(
    sluice_server_t *s, const char *id, json_t **out, int64_t *version_out, sluice_error_t *err)
{
    json_t *l = NULL, *ev = NULL;
    int64_t version = 0;
    sluice_err rc;

    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_read_launch(s->rstore, id, &l, &ev, &version, err);
    pthread_mutex_unlock(&s->rmu);
    /* The view leaves the render out (it is the bulk of the launch: the
     * script and every job description); dropped here, it is not deep
     * copied by the build only to be deleted from the copy. */
    if (rc == SLUICE_OK)
        json_object_del(l, "render");
    if (rc == SLUICE_OK)
        rc = launches_view_of(s, l, ev, version, out, err);
    if (rc == SLUICE_OK && version_out != NULL)
        *version_out = version;
    json_decref(l);
    json_decref(ev);
    return rc;
}

sluice_err launches_view(sluice_server_t *s, const char *id, json_t **out, sluice_error_t *err)
{
    return launches_view_at(s, id, out, NULL, err);
}

static void bad_query(answer_t *out, const char *field, const char *detail)
{
    answer_problem_ex(out, 400, "invalid-query", "Invalid query", detail, field, NULL);
}

/* 0 when query parameter `name` is absent or a clean name; else -1 with a
 * 400 in `out`. */
static int check_name(const req_t *rq, const char *name, answer_t *out)
{
    const char *v = req_arg(rq, name);
    char detail[128];

    if (v == NULL || (v[0] != '\0' && strlen(v) <= 128 && server_valid_id(v, strlen(v))))
        return 0;
    snprintf(detail, sizeof(detail), "%s must be 1 to 128 characters from [A-Za-z0-9._-]", name);
    bad_query(out, name, detail);
    return -1;
}

void launches_list(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_store_filter_t f;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *items = NULL;
    char *next = NULL;
    const char *lim = req_arg(rq, "limit");
    long long limit = lim ? server_parse_count(lim) : 0;
    int64_t version = 0;
    sluice_fsm_state state;
    sluice_err rc;

    memset(&f, 0, sizeof(f));
    /* A present limit is 1..1000: limit=0 is a mistake, not "the default". */
    if (lim != NULL && (limit < 1 || limit > 1000)) {
        bad_query(out, "limit", "limit must be an integer from 1 to 1000");
        return;
    }
    f.limit = (size_t)limit;
    f.state = req_arg(rq, "state");
    if (f.state != NULL && !sluice_fsm_state_from_name(f.state, &state)) {
        bad_query(out, "state", "state must be a launcher state name such as RUNNING or DONE");
        return;
    }
    if (check_name(rq, "site", out) != 0 || check_name(rq, "study", out) != 0)
        return;
    f.site = req_arg(rq, "site");
    f.study = req_arg(rq, "study");
    f.cursor = req_arg(rq, "cursor");
    f.tenant = server_tenant_filter(&rq->caller);
    if (check_name(rq, "cluster", out) != 0)
        return;
    if ((f.cluster = req_arg(rq, "cluster")) != NULL) {
        if (server_launcher_for(s, f.cluster) == NULL ||
            (s->o.n_clusters == 0 && strcmp(f.cluster, "default") != 0)) {
            bad_query(out, "cluster", "cluster must name one of the site's clusters");
            return;
        }
        /* a launch stored with none is the first cluster's */
        f.cluster_or_null = server_launcher_for(s, f.cluster) == s->o.launcher;
        if (s->o.n_clusters == 0)
            f.cluster = NULL; /* one cluster: every launch is its */
    }
    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_list_launches_at(s->rstore, &f, &items, &next, &version, &err);
    pthread_mutex_unlock(&s->rmu);
    if (rc == SLUICE_EINVAL) {
        bad_query(out, "cursor", err.text);
        return;
    }
    if (rc != SLUICE_OK) {
        answer_error(out, &err);
        return;
    }
    {
        size_t i;
        json_t *it;

        json_array_foreach(items, i, it) server_tenant_shape(it);
    }
    answer_json(out, 200,
                json_pack("{s:o s:s? s:I}", "items", items, "next_cursor", next, "resource_version",
                          (json_int_t)version));
    free(next);
}

/* 1 when If-None-Match of `rq` names the entity tag of `version` (a list
 * of tags, weak or strong, or `*`). */
static int not_modified(const req_t *rq, int64_t version)
{
    const char *h = req_header(rq, "If-None-Match");
    char tag[32];
    size_t n;

    if (h == NULL)
        return 0;
    n = (size_t)snprintf(tag, sizeof(tag), "\"%lld\"", (long long)version);
    while (*h != '\0') {
        size_t len;

        h += strspn(h, " \t,");
        if (strncmp(h, "W/", 2) == 0)
            h += 2;
        len = strcspn(h, " \t,");
        if ((len == 1 && h[0] == '*') || (len == n && strncmp(h, tag, n) == 0))
            return 1;
        h += len;
    }
    return 0;
}

/* The answer of GET /v1/launches/{id}: `text` (taken) with its ETag, or
 * 304 when the caller has that version. */
static void answer_view(const req_t *rq, answer_t *out, char *text, int64_t version)
{
    char tag[32];

    snprintf(tag, sizeof(tag), "\"%lld\"", (long long)version);
    if (not_modified(rq, version)) {
        free(text);
        answer_empty(out, 304);
        answer_header(out, "Cache-Control", "no-store");
    } else {
        answer_text(out, 200, "application/json", text);
    }
    answer_header(out, "ETag", tag);
}

void launches_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;
    int64_t upto, version = 0;
    char *text = server_cache_get(s, rq->id, &upto, &version);

    if (text != NULL) {
        atomic_fetch_add(&s->view_hits, 1);
        answer_view(rq, out, text, version);
        return;
    }
    atomic_fetch_add(&s->view_misses, 1);
    launches_view_at(s, rq->id, &view, &version, &err);
    if (view == NULL) {
        answer_error(out, &err);
        return;
    }
    text = json_text_dump(view, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(view);
    if (text == NULL)
        return; /* no answer */
    server_cache_put(s, rq->id, upto, text, version);
    answer_view(rq, out, text, version);
}

/* The creator of a launch (the caller of its `accepted` event) copied into
 * buf; "" when none was recorded. */
static sluice_err
creator_of(sluice_store_t *st, const char *id, char *buf, size_t size, sluice_error_t *err)
{
    json_t *ev = NULL;
    const char *who;
    sluice_err rc;

    buf[0] = '\0';
    if ((rc = sluice_store_read_events(st, id, 1, 1, &ev, err)) != SLUICE_OK)
        return rc;
    who = json_string_value(json_object_get(json_array_get(ev, 0), "caller"));
    snprintf(buf, size, "%s", who ? who : "");
    json_decref(ev);
    return SLUICE_OK;
}

void launches_cancel(sluice_server_t *s, req_t *rq, answer_t *out)
{
    const char *id = rq->id;
    const caller_t *caller = &rq->caller;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;
    char creator[SLUICE_FSM_NAME_MAX], detail[320];
    int appended = 0;
    sluice_err rc;

    /* Not under s->mu (held for a whole launcher cycle): the request is
     * one durable append to the store, as `sluice cancel` makes it, and
     * the launcher folds it in at its next cycle (woken below). */
    pthread_mutex_lock(&s->rmu);
    rc = creator_of(s->rstore, id, creator, sizeof(creator), &err);
    pthread_mutex_unlock(&s->rmu);
    if (rc != SLUICE_OK) {
        answer_error(out, &err);
        return;
    }
    /* Only the creator or an admin may cancel a launch. */
    if (!caller->admin && strcmp(creator, caller->name) != 0) {
        snprintf(detail, sizeof(detail),
                 "launch %s was created by %s; only its creator or an admin may cancel it",
                 server_tenant_bare(id), creator[0] ? creator : "an unrecorded caller");
        sluice_log(SLUICE_LOG_WARNING, "cancel of launch %s by %s refused (created by %s)", id,
                   caller->name, creator[0] ? creator : "?");
        answer_problem(out, 403, "forbidden", "Forbidden", detail);
        return;
    }
    rc = sluice_store_request_cancel(s->rstore, id, caller->name[0] ? caller->name : "unknown",
                                     &appended, &err);
    atomic_store(&s->views_dirty, 1);
    if (rc == SLUICE_OK && appended) {
        server_wake_streams(s);
        server_wake_launchers(s); /* act on the intent now (the launch's cluster's) */
    }
    if (rc == SLUICE_OK)
        rc = launches_view(s, id, &view, &err);
    if (rc != SLUICE_OK) {
        answer_error(out, &err);
        return;
    }
    answer_json(out, 202, view);
}
