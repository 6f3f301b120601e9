/* SPDX-License-Identifier: Apache-2.0 */
/* server_status.h - GET /v1/status of `sluice serve` (not installed): the
 * service's health in one JSON object, for the status page and scripts.
 */
#ifndef SLUICE_SERVER_STATUS_H
#define SLUICE_SERVER_STATUS_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* GET /v1/status: 200 {"version", "uptime_s", "slurmrestd": {"state",
 * "detail"}, "token": {"expires_in_s"}, "poll": {"last_cycle_ms",
 * "avg_cycle_ms", "max_cycle_ms", "cycles", "errors", "interval_ms",
 * "since_last_cycle_ms"}, "tracked", "launches": {"<STATE>": n}}; 503 when
 * the store could not be read. */
void status_get(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_STATUS_H */
