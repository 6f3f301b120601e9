/* SPDX-License-Identifier: Apache-2.0 */
/* server_sse.h - GET /v1/events of `sluice serve`: the store's events as
 * Server-Sent Events (not installed).
 */
#ifndef SLUICE_SERVER_SSE_H
#define SLUICE_SERVER_SSE_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* An event stream from Last-Event-ID (or ?after=), else from the first
 * event; 400 when that is not a non-negative integer. */
void sse_get(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_SSE_H */
