/* SPDX-License-Identifier: Apache-2.0 */
/* server_health.h - the probes of `sluice serve` (not installed):
 * /v1/healthz, /v1/readyz and /v1/metrics.
 */
#ifndef SLUICE_SERVER_HEALTH_H
#define SLUICE_SERVER_HEALTH_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* GET /v1/healthz: 200 {"status":"ok"} while the process serves. */
void health_live(sluice_server_t *s, req_t *rq, answer_t *out);
/* GET /v1/readyz: 200 when the store directory is writable and the
 * cluster side is ready (opts.ready), else 503 saying which is not. */
void health_ready(sluice_server_t *s, req_t *rq, answer_t *out);
/* GET /v1/metrics: the Prometheus text (server_metrics.c); 503 when the
 * store could not be read. */
void health_metrics(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_HEALTH_H */
