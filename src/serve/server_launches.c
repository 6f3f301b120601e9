/* SPDX-License-Identifier: Apache-2.0 */
/* server_launches.c - reading and cancelling launches over `sluice serve`'s
 * API: the list, one launch (through the read cache of server_cache.c),
 * the cancel, and the API view they all answer with.
 *
 * Notes:
 * - Reads take rmu (the server's own store connection), so they never wait
 *   for a launcher cycle; the cancel takes mu, as it writes through the
 *   launcher.
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

#include "server_cache.h"
#include "server_launches.h"
#include "server_util.h"

sluice_err launches_view(sluice_server_t *s, const char *id, json_t **out, sluice_error_t *err)
{
    json_t *l = NULL, *ev = NULL;
    sluice_err rc;

    pthread_mutex_lock(&s->rmu);
    if ((rc = sluice_store_get_launch(s->rstore, id, &l, err)) == SLUICE_OK)
        rc = sluice_store_read_events(s->rstore, id, 1, 0, &ev, err);
    pthread_mutex_unlock(&s->rmu);
    if (rc == SLUICE_OK &&
        (*out = sluice_launch_view_build(l, ev, s->o.node_address, s->o.node_address_arg)) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", id);
    json_decref(l);
    json_decref(ev);
    return rc;
}

void launches_list(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_store_filter_t f;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *items = NULL;
    char *next = NULL;
    const char *lim = req_arg(rq, "limit");
    long long limit = lim ? server_parse_count(lim) : 0;
    sluice_err rc;

    memset(&f, 0, sizeof(f));
    if (limit < 0 || limit > 1000) {
        answer_problem_ex(out, 400, "invalid-query", "Invalid query",
                          "limit must be an integer from 1 to 1000", "limit", NULL);
        return;
    }
    f.limit = (size_t)limit;
    f.state = req_arg(rq, "state");
    f.site = req_arg(rq, "site");
    f.study = req_arg(rq, "study");
    f.cursor = req_arg(rq, "cursor");
    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_list_launches(s->rstore, &f, &items, &next, &err);
    pthread_mutex_unlock(&s->rmu);
    if (rc == SLUICE_EINVAL) {
        answer_problem_ex(out, 400, "invalid-query", "Invalid query", err.text, "cursor", NULL);
        return;
    }
    if (rc != SLUICE_OK) {
        answer_error(out, &err);
        return;
    }
    answer_json(out, 200, json_pack("{s:o s:s?}", "items", items, "next_cursor", next));
    free(next);
}

void launches_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *view = NULL;
    int64_t upto;
    char *text = server_cache_get(s, rq->id, &upto);

    if (text != NULL) {
        atomic_fetch_add(&s->view_hits, 1);
        answer_text(out, 200, "application/json", text);
        return;
    }
    atomic_fetch_add(&s->view_misses, 1);
    launches_view(s, rq->id, &view, &err);
    if (view == NULL) {
        answer_error(out, &err);
        return;
    }
    text = json_dumps(view, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(view);
    if (text == NULL)
        return; /* no answer */
    server_cache_put(s, rq->id, upto, text);
    answer_text(out, 200, "application/json", text);
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
    int forbidden = 0;
    sluice_err rc;

    pthread_mutex_lock(&s->mu);
    rc = sluice_store_get_launch(s->o.store, id, &view, &err);
    json_decref(view);
    view = NULL;
    if (rc == SLUICE_OK)
        rc = creator_of(s->o.store, id, creator, sizeof(creator), &err);
    /* Only the creator or an admin may cancel a launch. */
    if (rc == SLUICE_OK && !caller->admin && strcmp(creator, caller->name) != 0)
        forbidden = 1;
    else if (rc == SLUICE_OK)
        rc = sluice_launcher_cancel(s->o.launcher, id, caller->name, &err);
    atomic_store(&s->views_dirty, 1);
    pthread_mutex_unlock(&s->mu);
    if (rc == SLUICE_OK && !forbidden)
        sluice_launcher_wake(s->o.launcher); /* act on the intent now */
    if (forbidden) {
        snprintf(detail, sizeof(detail),
                 "launch %s was created by %s; only its creator or an admin may cancel it", id,
                 creator[0] ? creator : "an unrecorded caller");
        sluice_log(SLUICE_LOG_WARNING, "cancel of launch %s by %s refused (created by %s)", id,
                   caller->name, creator[0] ? creator : "?");
        answer_problem(out, 403, "forbidden", "Forbidden", detail);
        return;
    }
    if (rc == SLUICE_OK)
        rc = launches_view(s, id, &view, &err);
    if (rc != SLUICE_OK) {
        answer_error(out, &err);
        return;
    }
    answer_json(out, 202, view);
}
