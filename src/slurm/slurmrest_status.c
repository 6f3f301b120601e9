/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_status.c - the parsers of the cluster-status answers: diag
 * (statistics and RPC counts), nodes and ping.
 *
 * Notes:
 * - Their shape barely depends on the version; what does (ping's
 *   "ping"/"pinged"/"responding") comes from the version table row.
 * - Each parser reads the envelope first (slurmrest.c) and its members with
 *   a lenient decoder (slurmrest_decoder(), base/jdec.h).
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
    jdec_t dec;
    jdec_cur_t root, stats, rpcs, item;
    bool has = false;
    size_t i;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "diag: NULL output");
    if ((rc = sluice_rest_parse_envelope(v, resp, &d.env, err)) != SLUICE_OK)
        goto out;
    slurmrest_decoder(&dec, err);
    jdec_root(&root, &dec, resp, "");
    if ((rc = jdec_object(&root, "statistics", 0, &stats)) != SLUICE_OK)
        goto out;
    if ((rc = slurmrest_number(&stats, "req_time", &has, &d.req_time)) != SLUICE_OK)
        goto out;
    if ((rc = jdec_array(&stats, "rpcs_by_message_type", 0, &rpcs)) != SLUICE_OK)
        goto out;
    if (jdec_len(&rpcs) > 0 && (d.rpcs = calloc(jdec_len(&rpcs), sizeof(*d.rpcs))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "diag: out of memory");
        goto out;
    }
    JDEC_FOREACH(&rpcs, i, item)
    {
        sluice_rest_rpc_count_t *r = &d.rpcs[d.n_rpcs];
        int64_t count = 0;

        if (!json_is_object(item.v)) {
            rc = jdec_fail(&item, NULL, "expected an object");
            goto out;
        }
        d.n_rpcs++;
        rc = jdec_strdup(&item, "message_type", 0, SIZE_MAX, &r->message_type);
        if (rc == SLUICE_OK)
            rc = slurmrest_number(&item, "count", &has, &count);
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
static sluice_err joined(const jdec_cur_t *obj, const char *key, char sep, char **out)
{
    jdec_cur_t list, item;
    const char *text;
    buf_t b = BUF_INIT;
    size_t i;
    sluice_err rc = SLUICE_OK;

    *out = NULL;
    if (!json_is_array(jdec_value(obj, key)))
        return jdec_strdup(obj, key, 0, SIZE_MAX, out);
    jdec_member(&list, obj, key);
    buf_init(&b, 0);
    JDEC_FOREACH(&list, i, item)
    {
        if ((text = jdec_peek_string(&item, NULL)) == NULL) {
            buf_free(&b);
            return jdec_fail(&item, NULL, "expected a string");
        }
        if (i > 0 && (rc = buf_append(&b, &sep, 1)) != SLUICE_OK)
            break;
        if ((rc = buf_puts(&b, text)) != SLUICE_OK)
            break;
    }
    if (rc == SLUICE_OK && (*out = buf_take(&b)) == NULL)
        rc = SLUICE_ENOMEM;
    buf_free(&b);
    if (rc != SLUICE_OK)
        return jdec_oom(obj->d, list.path);
    return SLUICE_OK;
}

sluice_err sluice_rest_parse_nodes(sluice_rest_version v,
                                   const json_t *resp,
                                   sluice_rest_nodes_t *out,
                                   sluice_error_t *err)
{
    sluice_rest_nodes_t n = {0};
    jdec_t d;
    jdec_cur_t root, nodes, item;
    size_t i;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "nodes: NULL output");
    if ((rc = sluice_rest_parse_envelope(v, resp, &n.env, err)) != SLUICE_OK)
        goto out;
    slurmrest_decoder(&d, err);
    jdec_root(&root, &d, resp, "");
    if ((rc = jdec_array(&root, "nodes", 0, &nodes)) != SLUICE_OK)
        goto out;
    if (jdec_len(&nodes) > 0 && (n.nodes = calloc(jdec_len(&nodes), sizeof(*n.nodes))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "nodes: out of memory");
        goto out;
    }
    JDEC_FOREACH(&nodes, i, item)
    {
        sluice_rest_node_t *x = &n.nodes[n.n_nodes];

        if (!json_is_object(item.v)) {
            rc = jdec_fail(&item, NULL, "expected an object");
            goto out;
        }
        n.n_nodes++;
        rc = jdec_strdup(&item, "name", 0, SIZE_MAX, &x->name);
        if (rc == SLUICE_OK)
            rc = joined(&item, "state", '+', &x->state);
        if (rc == SLUICE_OK)
            rc = joined(&item, "features", ',', &x->features);
        if (rc == SLUICE_OK)
            rc = joined(&item, "partitions", ',', &x->partitions);
        if (rc == SLUICE_OK)
            rc = jdec_strdup(&item, "address", 0, SIZE_MAX, &x->address);
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
    jdec_t d;
    jdec_cur_t root, pings, item;
    size_t i;
    sluice_err rc;

    if (out == NULL || info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "ping: bad arguments");
    if ((rc = sluice_rest_parse_envelope(v, resp, &p.env, err)) != SLUICE_OK)
        goto out;
    slurmrest_decoder(&d, err);
    jdec_root(&root, &d, resp, "");
    if ((rc = jdec_array(&root, "pings", 0, &pings)) != SLUICE_OK)
        goto out;
    JDEC_FOREACH(&pings, i, item)
    {
        const char *mode = jdec_peek_string(&item, "mode");
        const char *up;
        const char *key = info->family == 38 ? "ping" : "pinged";
        bool responding = false;
        bool primary = mode != NULL && strcmp(mode, "primary") == 0;

        if (!json_is_object(item.v)) {
            rc = jdec_fail(&item, NULL, "expected an object");
            goto out;
        }
        p.n_controllers++;
        if (info->ping_responding && jdec_present(&item, "responding")) {
            if ((rc = jdec_bool(&item, "responding", 0, &responding)) != SLUICE_OK)
                goto out;
            primary = json_is_true(jdec_value(&item, "primary"));
        } else {
            /* "ping" on v0.0.38, "pinged" on v0.0.40/41 ("UP"/"DOWN"). */
            up = jdec_peek_string(&item, key);
            if (up == NULL && jdec_present(&item, key)) {
                rc = jdec_fail(&item, NULL, "expected an UP/DOWN string");
                goto out;
            }
            responding = up != NULL && strcmp(up, "UP") == 0;
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
