/* SPDX-License-Identifier: Apache-2.0 */
/* server_tenant.c - the API seen from one tenant: keys, filters, the shape
 * of what is sent, and the per-tenant limits (server_tenant.h).
 *
 * Notes:
 * - The limits are read from the store the launches are in, so replicas
 *   that share it count the same launches; two accepts on two replicas at
 *   the same instant can each pass (one over a limit at most per replica).
 *   On one replica, s->tenant_mu makes the check and the commit of one
 *   tenant's POSTs one at a time.
 * - nodes and GPUs in flight are summed over the stored requests of the
 *   tenant's live launches (their pools' nodes and gpus_per_node), read in
 *   the same snapshot as the counts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <sluice/config.h>
#include <sluice/store.h>

#include "base/marker.h"
#include "server_tenant.h"

void server_tenant_of(const sluice_server_t *s, caller_t *c)
{
    const sluice_tenant_t *t = sluice_config_tenant_of_caller(s->o.cfg, c->name);

    snprintf(c->tenant, sizeof(c->tenant), "%s", t != NULL ? t->name : "");
}

int server_tenant_key(const caller_t *c, const char *id, char *key, size_t cap)
{
    int n;

    if (strchr(id, '~') != NULL) {
        char t[MARKER_TENANT_MAX + 1];

        /* A key: an admin's for any launch; a caller's for its own
         * tenant's only (the status page names launches so). */
        n = snprintf(key, cap, "%s", id);
        if (n < 0 || (size_t)n >= cap || !marker_launch_id_ok(key, strlen(key)))
            return -1;
        marker_key_tenant(key, t, sizeof(t));
        return c->admin || (c->tenant[0] != '\0' && strcmp(t, c->tenant) == 0) ? 0 : -1;
    }
    if (!marker_bare_id_ok(id, strlen(id)))
        return -1;
    n = marker_key_make(key, cap, c->tenant, id);
    return n >= 0 && (size_t)n < cap && n <= MARKER_LAUNCH_ID_MAX ? 0 : -1;
}

const char *server_tenant_filter(const caller_t *c)
{
    return c->admin ? NULL : c->tenant;
}

int server_tenant_sees(const caller_t *c, const char *key)
{
    char t[MARKER_TENANT_MAX + 1];

    if (c->admin)
        return 1;
    marker_key_tenant(key, t, sizeof(t));
    return strcmp(t, c->tenant) == 0;
}

const char *server_tenant_bare(const char *key)
{
    return marker_key_id(key);
}

/* The launch_id at `field` of object `o` made a key: 0, or -1 with a 422. */
static int qualify(const caller_t *c, json_t *o, const char *field, answer_t *out)
{
    json_t *v = json_object_get(o, "launch_id");
    const char *id = json_string_value(v);
    char key[MARKER_LAUNCH_ID_MAX + 1], detail[256];
    size_t room;

    if (id == NULL)
        return 0; /* the parse names a missing or wrong-typed launch_id */
    if (c->admin && strchr(id, '~') != NULL)
        return 0; /* an admin's key, checked by the parse */
    if (strchr(id, '~') != NULL) {
        snprintf(detail, sizeof(detail), "%s: " MARKER_LAUNCH_ID_RULE, field);
        answer_problem_ex(out, 422, "invalid-request", "Invalid request", detail, field, NULL);
        return -1;
    }
    if (c->tenant[0] == '\0')
        return 0;
    room = MARKER_LAUNCH_ID_MAX - strlen(c->tenant) - 1;
    if (strlen(id) > room) {
        snprintf(detail, sizeof(detail),
                 "%s: at most %zu characters for a launch of tenant %s (its key, \"%s~\" and the "
                 "launch_id, is at most %d)",
                 field, room, c->tenant, c->tenant, MARKER_LAUNCH_ID_MAX);
        answer_problem_ex(out, 422, "invalid-request", "Invalid request", detail, field, NULL);
        return -1;
    }
    if (!marker_bare_id_ok(id, strlen(id)))
        return 0; /* the parse says what is wrong with it */
    marker_key_make(key, sizeof(key), c->tenant, id);
    if (json_object_set_new(o, "launch_id", json_string(key)) != 0) {
        answer_problem(out, 500, "internal", "Internal error", "out of memory");
        return -1;
    }
    return 0;
}

int server_tenant_body(const caller_t *c, json_t *body, answer_t *out)
{
    json_t *dep = json_object_get(body, "depends_on");

    if (qualify(c, body, "launch_id", out) != 0)
        return -1;
    if (json_is_object(dep) && qualify(c, dep, "depends_on.launch_id", out) != 0)
        return -1;
    return 0;
}

/* Every launch_id string below v loses its tenant part. */
static void strip_below(json_t *v, int depth)
{
    const char *k;
    json_t *x;
    size_t i;

    if (depth > 16)
        return;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x) strip_below(x, depth + 1);
        return;
    }
    if (!json_is_object(v))
        return;
    json_object_foreach(v, k, x)
    {
        const char *s = json_string_value(x);

        if (strcmp(k, "launch_id") == 0 && s != NULL && strchr(s, '~') != NULL)
            json_string_set(x, marker_key_id(s));
        else
            strip_below(x, depth + 1);
    }
}

void server_tenant_shape(json_t *v)
{
    const char *key = json_string_value(json_object_get(v, "launch_id"));
    char t[MARKER_TENANT_MAX + 1];

    if (key == NULL || strchr(key, '~') == NULL) {
        strip_below(v, 0); /* a default tenant's launch may depend on nothing else */
        return;
    }
    marker_key_tenant(key, t, sizeof(t));
    json_object_set_new(v, "tenant", json_string(t));
    strip_below(v, 0);
}

/* nodes and GPUs of one canonical request (its pools). */
static void request_size(const json_t *req, int64_t *nodes, int64_t *gpus)
{
    const json_t *p;
    size_t i;

    json_array_foreach(json_object_get(req, "pools"), i, p)
    {
        int64_t n = (int64_t)json_integer_value(json_object_get(p, "nodes"));
        int64_t g = (int64_t)json_integer_value(json_object_get(p, "gpus_per_node"));

        *nodes += n;
        *gpus += n * g;
    }
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A 429 naming the limit; retry_s > 0 adds Retry-After. */
static void refuse(answer_t *out,
                   const char *tenant,
                   const char *limit,
                   long max,
                   int64_t have,
                   int64_t asked,
                   long retry_s,
                   const char *what)
{
    char detail[320], field[96], after[24];

    snprintf(field, sizeof(field), "limits.%s", limit);
    if (asked > 0)
        snprintf(detail, sizeof(detail),
                 "tenant %s: limits.%s is %ld; %" PRId64 " %s in flight and this launch asks "
                 "for %" PRId64 "; nothing was stored",
                 tenant, limit, max, have, what, asked);
    else
        snprintf(detail, sizeof(detail),
                 "tenant %s: limits.%s is %ld and %" PRId64 " %s; nothing was stored", tenant,
                 limit, max, have, what);
    answer_problem_more(out, 429, "tenant-limit", "Tenant limit reached", detail, field, NULL,
                        json_pack("{s:s s:s s:I s:I}", "tenant", tenant, "limit", limit, "max",
                                  (json_int_t)max, "in_use", (json_int_t)have));
    if (retry_s > 0) {
        snprintf(after, sizeof(after), "%ld", retry_s);
        answer_header(out, "Retry-After", after);
    }
}

int server_tenant_limits(sluice_server_t *s,
                         const caller_t *c,
                         const sluice_accept_t *a,
                         answer_t *out)
{
    const sluice_tenant_t *t = sluice_config_tenant_named(s->o.cfg, c->tenant);
    const sluice_tenant_limits_t *lim;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_usage_t u;
    json_t *reqs = NULL, *have = NULL, *r;
    int64_t nodes = 0, gpus = 0, my_nodes = 0, my_gpus = 0, since;
    size_t i;
    sluice_err rc;
    int ret = -1;

    if (t == NULL)
        return 0;
    lim = &t->limits;
    if (lim->live_launches == 0 && lim->nodes_in_flight == 0 && lim->gpus_in_flight == 0 &&
        lim->accepts_per_minute == 0)
        return 0;
    since = now_ms() - 60000;
    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_get_launch(s->rstore, sluice_accept_launch_id(a), &have, &err);
    if (rc == SLUICE_ENOTFOUND)
        rc = sluice_store_tenant_usage(s->rstore, c->tenant, since,
                                       lim->nodes_in_flight || lim->gpus_in_flight ? 100000 : 0, &u,
                                       &reqs, &err);
    pthread_mutex_unlock(&s->rmu);
    if (rc == SLUICE_OK && have != NULL) {
        ret = 0; /* a repeat: the accept answers with what exists */
        goto out;
    }
    if (rc != SLUICE_OK) {
        answer_error(out, &err);
        goto out;
    }
    json_array_foreach(reqs, i, r) request_size(r, &nodes, &gpus);
    request_size(sluice_accept_request_json(a), &my_nodes, &my_gpus);
    if (lim->live_launches > 0 && u.live + 1 > lim->live_launches) {
        refuse(out, t->name, "live_launches", lim->live_launches, u.live, 0, 0,
               "launches are live");
        goto out;
    }
    if (lim->nodes_in_flight > 0 && nodes + my_nodes > lim->nodes_in_flight) {
        refuse(out, t->name, "nodes_in_flight", lim->nodes_in_flight, nodes, my_nodes, 0,
               "nodes are");
        goto out;
    }
    if (lim->gpus_in_flight > 0 && gpus + my_gpus > lim->gpus_in_flight) {
        refuse(out, t->name, "gpus_in_flight", lim->gpus_in_flight, gpus, my_gpus, 0, "GPUs are");
        goto out;
    }
    if (lim->accepts_per_minute > 0 && u.accepted_since + 1 > lim->accepts_per_minute) {
        int64_t wait = u.oldest_since_ms + 60000 - now_ms();
        refuse(out, t->name, "accepts_per_minute", lim->accepts_per_minute, u.accepted_since, 0,
               wait > 0 ? (long)((wait + 999) / 1000) : 1, "were accepted in the last minute");
        goto out;
    }
    ret = 0;
out:
    json_decref(reqs);
    json_decref(have);
    return ret;
}
