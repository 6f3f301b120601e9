/* SPDX-License-Identifier: Apache-2.0 */
/* client_node.c - one node's record and its address: GET
 * /slurm/vX/node/{name} (the same path on every version, v0.0.38 too).
 *
 * Purpose:
 *   The launcher tells a dependent launch where its partner runs
 *   (peers.env).  A node's name is not always a name the other nodes can
 *   resolve; Slurm's NodeAddr is what slurmd itself is reached at, so that is
 *   the address sluice hands on.  The answer has the shape of GET nodes/
 *   (one record), read by sluice_rest_parse_nodes().
 *
 * Notes:
 *   - A node Slurm does not know is answered differently per release
 *     (22.05: HTTP 500 with error 2018; 24.11 and 26.05: HTTP 200, an
 *     errors[] entry "Failure to query node" and no record).  The client
 *     reports the outcome as the exchange classed it; sluice_client_node()
 *     turns an OK answer without the node's record into NOT_FOUND.
 *   - Kept apart from client_ops.c (its own concept; no shared state).
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/client.h>

#include "client_int.h"
#include "transport/http.h"

sluice_err sluice_client_node(sluice_client_t *c,
                              const char *name,
                              sluice_rest_nodes_t *out,
                              sluice_call_t *call,
                              sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;
    size_t i;

    call = client_call_init(call, &scratch);
    if (out == NULL)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED,
                                 sluice_errorf(err, SLUICE_EINVAL, "node: NULL result"));
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_node(v, name, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) !=
        SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_parse_nodes(v, root, out, err)) != SLUICE_OK) {
        json_decref(root);
        return client_proto_fail(call, err, "node");
    }
    json_decref(root);
    for (i = 0; i < out->n_nodes; i++) {
        if (out->nodes[i].name != NULL && strcmp(out->nodes[i].name, name) == 0)
            return SLUICE_OK;
    }
    sluice_rest_nodes_clear(out);
    call->outcome = SLUICE_OUTCOME_NOT_FOUND;
    return sluice_errorf(err, SLUICE_ENOTFOUND, "node %s: not in slurmctld's answer", name);
}
