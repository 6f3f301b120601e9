/* SPDX-License-Identifier: Apache-2.0 */
/* client_int.h - the inside of the slurmrestd client, shared by client.c
 * (the object, the exchange, negotiation) and client_ops.c (the
 * operations).
 *
 * Calls go one way: client_ops.c -> client.c.
 */
#ifndef SLUICE_CLIENT_INTERNAL_H
#define SLUICE_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <sluice/client.h>

#include "transport/http.h"
#include "restclass.h"
#include "slurmrest.h"

struct sluice_client {
    http_client_t *http;
    sluice_auth_t *auth;
    pthread_mutex_t lock; /* guards the negotiation fields */
    bool pinned;
    bool negotiated;
    sluice_rest_version version;
    char release[64];
    char cluster[128];
    char data_parser[64];
    size_t states_chunk;
    /* sluice_client_stats(): requests by http_class_t, exchanges by the
     * outcome restclass_classify() gave them */
    atomic_ullong n_kind[HTTP_CLASS_COUNT_];
    atomic_ullong n_class[SLUICE_OUTCOME_COUNT_];
};

typedef struct {
    http_method_t method;
    http_class_t klass;
    const char *path; /* may carry "?query" */
    const char *body;
    sluice_rest_version v;
    bool probe; /* a version probe: a router 404 means "version not served" */
} client_req_t;

/* dst = src (NULL: ""), truncated to size. */
void client_copy_str(char *dst, size_t size, const char *src);

/* One operation's HTTP part, with the retry rule.  On OUTCOME_OK,
 * *json_out (may be NULL) receives the decoded body as a new reference, or
 * NULL for an empty body (304).  Any other outcome is an error whose text
 * names the method, the path and the outcome. */
sluice_err client_exchange(sluice_client_t *c,
                           const client_req_t *r,
                           json_t **json_out,
                           sluice_call_t *call,
                           sluice_error_t *err);

/* Reset a call record; NULL `call` uses `scratch`.  Returns the one in use. */
sluice_call_t *client_call_init(sluice_call_t *call, sluice_call_t *scratch);

/* A local failure (building a request): no request was sent.  Sets the
 * outcome `o` and returns `rc`. */
sluice_err client_local_fail(sluice_call_t *call, sluice_outcome o, sluice_err rc);

/* A 2xx answer the adapter could not read: outcome PROTOCOL, err prefixed
 * with `what`. */
sluice_err client_proto_fail(sluice_call_t *call, sluice_error_t *err, const char *what);

/* Negotiate if needed; *v receives the version. */
sluice_err
client_ready(sluice_client_t *c, sluice_rest_version *v, sluice_call_t *call, sluice_error_t *err);

/* Send `method` to `path` (freed here) and hand the decoded body (*root, a
 * new reference or NULL) to the caller. */
sluice_err client_get_json(sluice_client_t *c,
                           sluice_rest_version v,
                           char *path,
                           http_class_t klass,
                           http_method_t method,
                           json_t **root,
                           sluice_call_t *call,
                           sluice_error_t *err);

#endif /* SLUICE_CLIENT_INTERNAL_H */
