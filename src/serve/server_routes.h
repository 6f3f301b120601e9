/* SPDX-License-Identifier: Apache-2.0 */
/* server_routes.h - the route table of `sluice serve` and the dispatch of a
 * request through it (not installed).
 */
#ifndef SLUICE_SERVER_ROUTES_H
#define SLUICE_SERVER_ROUTES_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* Answer `rq` into `out` (initialised with answer_init): find its route,
 * name its caller (bearer token on TCP, the peer's uid on the Unix socket)
 * unless the route is public, check the query text, and run the handler.
 * 401 without a valid caller, 400 for bad query text or a bad launch id in
 * the path, 404 for no route or an impossible launch id, 405 with Allow
 * for a path whose route takes other methods.  Fills rq->id, route_arg and
 * caller. */
void routes_dispatch(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_ROUTES_H */
