/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_status.c - the parsers of the cluster-status answers: diag
 * (statistics and RPC counts), nodes and ping.
 *
 * Notes:
 * - Their shape barely depends on the version; what does (ping's
 *   "ping"/"pinged"/"responding") comes from the version table row.
 * - Each parser reads the envelope first (slurmrest.c) and its members with
 *   the lenient getters (slurmrest_parse.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "slurmrest.h"
#include "slurmrest_parse.h"

/* ---- diag ----------------------------------------------------------------------- */

void sluice_rest_diag_clear(sluice_rest_diag_t *d)
{
    if (d == NULL)
        return;
    sluice_rest_envelope_clear(&d->env);
    for (size_t i = 0; i < d->n_rpcs; i++)
        free(d->rpcs[i].message_type);
    free(d->rpcs);
    memset(d, 0, sizeof(*d));
}

sluice_err sluice_rest_parse_diag(sluice_rest_version v,
                                  const json_t *resp,
                                  sluice_rest_diag_t *out,
                                  sluice_error_t *err)
{
    sluice_rest_diag_t d = {0};
    const json_t *stats;
    const json_t *rpcs;
    const json_t *item;
    bool has = false;
    size_t i;
    sluice_err rc;
    char path[64];

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "diag: NULL output");
    if ((rc = sluice_rest_parse_envelope(v, resp, &d.env, err)) != SLUICE_OK)
        goto out;
    stats = json_object_get(resp, "statistics");
    if (stats != NULL && !json_is_object(stats)) {
        rc = sluice_errorf(err, SLUICE_EPROTO, "statistics: expected an object");
        goto out;
    }
    rc = slurmrest_get_number(stats, "req_time", "statistics", &has, &d.req_time, err);
    if (rc != SLUICE_OK)
        goto out;
    rpcs = slurmrest_get_array(stats, "rpcs_by_message_type", "statistics", &rc, err);
    if (rc != SLUICE_OK)
        goto out;
    if (rpcs != NULL && json_array_size(rpcs) > 0) {
        d.rpcs = calloc(json_array_size(rpcs), sizeof(*d.rpcs));
        if (d.rpcs == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "diag: out of memory");
            goto out;
        }
    }
    json_array_foreach(rpcs, i, item)
    {
        sluice_rest_rpc_count_t *r = &d.rpcs[d.n_rpcs];
        int64_t count = 0;

        snprintf(path, sizeof(path), "statistics.rpcs_by_message_type[%zu]", i);
        if (!json_is_object(item)) {
            rc = sluice_errorf(err, SLUICE_EPROTO, "%s: expected an object", path);
            goto out;
        }
        d.n_rpcs++;
        rc = slurmrest_get_string(item, "message_type", path, &r->message_type, err);
        if (rc == SLUICE_OK)
            rc = slurmrest_get_number(item, "count", path, &has, &count, err);
        if (rc != SLUICE_OK)
            goto out;
        r->count = has && count > 0 ? (uint64_t)count : 0;
    }
    *out = d;
    memset(&d, 0, sizeof(d));
out:
    sluice_rest_diag_clear(&d);
    return rc;
}

uint64_t sluice_rest_diag_rpc_count(const sluice_rest_diag_t *d, const char *message_type)
{
    uint64_t sum = 0;

    if (d == NULL || message_type == NULL)
        return 0;
    for (size_t i = 0; i < d->n_rpcs; i++) {
        if (d->rpcs[i].message_type != NULL && strcmp(d->rpcs[i].message_type, message_type) == 0)
            sum += d->rpcs[i].count;
    }
    return sum;
}

/* ---- nodes ---------------------------------------------------------------------- */

void sluice_rest_nodes_clear(sluice_rest_nodes_t *n)
{
    if (n == NULL)
        return;
    sluice_rest_envelope_clear(&n->env);
    for (size_t i = 0; i < n->n_nodes; i++) {
        free(n->nodes[i].name);
        free(n->nodes[i].state);
        free(n->nodes[i].features);
        free(n->nodes[i].partitions);
        free(n->nodes[i].address);
    }
    free(n->nodes);
    memset(n, 0, sizeof(*n));
}

/* A string, or an array of strings joined with `sep` (v0.0.40+ csv_string,
 * node state flag arrays). */
static sluice_err joined(
    const json_t *obj, const char *key, const char *path, char sep, char **out, sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);
    const json_t *item;
    buf_t b = BUF_INIT;
    size_t i;
    sluice_err rc = SLUICE_OK;

    *out = NULL;
    if (!json_is_array(v))
        return slurmrest_get_string(obj, key, path, out, err);
    buf_init(&b, 0);
    json_array_foreach(v, i, item)
    {
        if (!json_is_string(item)) {
            buf_free(&b);
            return sluice_errorf(err, SLUICE_EPROTO, "%s.%s[%zu]: expected a string", path, key, i);
        }
        if (i > 0 && (rc = buf_append(&b, &sep, 1)) != SLUICE_OK)
            break;
        if ((rc = buf_puts(&b, json_string_value(item))) != SLUICE_OK)
            break;
    }
    if (rc == SLUICE_OK && (*out = buf_take(&b)) == NULL)
        rc = SLUICE_ENOMEM;
    buf_free(&b);
    if (rc != SLUICE_OK)
        return sluice_errorf(err, rc, "%s.%s: out of memory", path, key);
    return SLUICE_OK;
}

sluice_err sluice_rest_parse_nodes(sluice_rest_version v,
                                   const json_t *resp,
                                   sluice_rest_nodes_t *out,
                                   sluice_error_t *err)
{
    sluice_rest_nodes_t n = {0};
    const json_t *nodes;
    const json_t *item;
    size_t i;
    sluice_err rc;
    char path[48];

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "nodes: NULL output");
    if ((rc = sluice_rest_parse_envelope(v, resp, &n.env, err)) != SLUICE_OK)
        goto out;
    nodes = slurmrest_get_array(resp, "nodes", "", &rc, err);
    if (rc != SLUICE_OK)
        goto out;
    if (nodes != NULL && json_array_size(nodes) > 0) {
        n.nodes = calloc(json_array_size(nodes), sizeof(*n.nodes));
        if (n.nodes == NULL) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "nodes: out of memory");
            goto out;
        }
    }
    json_array_foreach(nodes, i, item)
    {
        sluice_rest_node_t *x = &n.nodes[n.n_nodes];

        snprintf(path, sizeof(path), "nodes[%zu]", i);
        if (!json_is_object(item)) {
            rc = sluice_errorf(err, SLUICE_EPROTO, "%s: expected an object", path);
            goto out;
        }
        n.n_nodes++;
        rc = slurmrest_get_string(item, "name", path, &x->name, err);
        if (rc == SLUICE_OK)
            rc = joined(item, "state", path, '+', &x->state, err);
        if (rc == SLUICE_OK)
            rc = joined(item, "features", path, ',', &x->features, err);
        if (rc == SLUICE_OK)
            rc = joined(item, "partitions", path, ',', &x->partitions, err);
        if (rc == SLUICE_OK)
            rc = slurmrest_get_string(item, "address", path, &x->address, err);
        if (rc != SLUICE_OK)
            goto out;
    }
    *out = n;
    memset(&n, 0, sizeof(n));
out:
    sluice_rest_nodes_clear(&n);
    return rc;
}

/* ---- ping ------------------------------------------------------------------------- */

void sluice_rest_ping_clear(sluice_rest_ping_t *p)
{
    if (p == NULL)
        return;
    sluice_rest_envelope_clear(&p->env);
    memset(p, 0, sizeof(*p));
}

sluice_err sluice_rest_parse_ping(sluice_rest_version v,
                                  const json_t *resp,
                                  sluice_rest_ping_t *out,
                                  sluice_error_t *err)
{
    const slurmrest_info_t *info = slurmrest_info(v);
    sluice_rest_ping_t p = {0};
    const json_t *pings;
    const json_t *item;
    size_t i;
    sluice_err rc;

    if (out == NULL || info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "ping: bad arguments");
    if ((rc = sluice_rest_parse_envelope(v, resp, &p.env, err)) != SLUICE_OK)
        goto out;
    pings = slurmrest_get_array(resp, "pings", "", &rc, err);
    if (rc != SLUICE_OK)
        goto out;
    json_array_foreach(pings, i, item)
    {
        const json_t *up;
        const char *mode;
        bool responding = false;
        bool primary;

        if (!json_is_object(item)) {
            rc = sluice_errorf(err, SLUICE_EPROTO, "pings[%zu]: expected an object", i);
            goto out;
        }
        p.n_controllers++;
        mode = json_string_value(json_object_get(item, "mode"));
        primary = mode != NULL && strcmp(mode, "primary") == 0;
        if (info->ping_responding && (up = json_object_get(item, "responding")) != NULL) {
            if (!json_is_boolean(up)) {
                rc = sluice_errorf(err, SLUICE_EPROTO, "pings[%zu].responding: expected a boolean",
                                   i);
                goto out;
            }
            responding = json_is_true(up);
            primary = json_is_true(json_object_get(item, "primary"));
        } else {
            /* "ping" on v0.0.38, "pinged" on v0.0.40/41 ("UP"/"DOWN"). */
            up = json_object_get(item, info->family == 38 ? "ping" : "pinged");
            if (up != NULL && !json_is_string(up)) {
                rc = sluice_errorf(err, SLUICE_EPROTO, "pings[%zu]: expected an UP/DOWN string", i);
                goto out;
            }
            responding = up != NULL && strcmp(json_string_value(up), "UP") == 0;
        }
        if (responding)
            p.n_responding++;
        if (responding && primary)
            p.primary_responding = true;
    }
    *out = p;
    memset(&p, 0, sizeof(p));
out:
    sluice_rest_ping_clear(&p);
    return rc;
}
