/* SPDX-License-Identifier: Apache-2.0 */
/* server_ha.h - `sluice serve` as one of several replicas (not installed):
 * the launcher only while leading, what a follower refuses, and the role
 * in /v1/readyz and /v1/metrics. */
#ifndef SLUICE_SERVER_HA_H
#define SLUICE_SERVER_HA_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "server_answer.h"
#include "server_int.h"

/* Before a cycle of cluster i's launcher, on its loop's thread: follow
 * the leader object (recover on becoming leader, forget on stopping) and
 * say whether the cycle may run.  Always true without a leader object. */
bool server_ha_may_step(sluice_server_t *s, size_t i);

/* A POST body with secret values on a replica that does not lead: answer
 * 503 naming the leader and return true.  False: go on. */
bool server_ha_refuse_accept(sluice_server_t *s, const json_t *body, answer_t *out);

/* An accept whose store write failed: 503 (nothing was accepted) and true
 * for a store error of a replica; false: the caller answers. */
bool server_ha_store_failed(sluice_server_t *s, const sluice_error_t *err, answer_t *out);

/* Add "role", "epoch", "leader" and "replica" to the readiness object
 * `obj`; when the database cannot be reached, copy the reason into
 * `why` (size bytes) and return false. */
bool server_ha_ready(sluice_server_t *s, json_t *obj, char *why, size_t size);

/* The sluice_leader* metrics and sluice_fenced_writes_total. */
void server_ha_metrics(sluice_server_t *s, FILE *m);

#endif /* SLUICE_SERVER_HA_H */
