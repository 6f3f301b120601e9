/* SPDX-License-Identifier: Apache-2.0 */
/* server_logs.h - GET /v1/launches/{id}/logs/{stdout,stderr} of `sluice
 * serve` (not installed).
 */
#ifndef SLUICE_SERVER_LOGS_H
#define SLUICE_SERVER_LOGS_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* The job output named by rq->route_arg ("stdout" or "stderr") from
 * ?offset=: the store's archived copy once there is one, else the live
 * file (supervise/launch_logs.h); with ?follow=true a stream that ends once
 * the launch has finished and its archive has been read.  A log that
 * cannot be read is 409 log-refused or 410 log-gone, never an empty 200. */
void logs_get(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_LOGS_H */
