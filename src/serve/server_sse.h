/* SPDX-License-Identifier: Apache-2.0 */
/* server_sse.h - GET /v1/events and GET /v1/launches/{id}/events of
 * `sluice serve`: the store's events as Server-Sent Events (not installed).
 */
#ifndef SLUICE_SERVER_SSE_H
#define SLUICE_SERVER_SSE_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* GET /v1/events: every event (filtered by ?launch_id=, ?site=, ?state=)
 * from Last-Event-ID, else ?after=, else ?since=now, else the first event;
 * 400 invalid-query naming a bad parameter. */
void sse_get(sluice_server_t *s, req_t *rq, answer_t *out);
/* GET /v1/launches/{id}/events: launch rq->id's events from the same
 * marks; 404 for an unknown launch; the stream ends after the event that
 * made the launch terminal. */
void sse_launch_get(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_SSE_H */
