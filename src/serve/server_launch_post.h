/* SPDX-License-Identifier: Apache-2.0 */
/* server_launch_post.h - POST /v1/launches of `sluice serve` (not
 * installed): accept a launch request, or render it only (dry_run).
 */
#ifndef SLUICE_SERVER_LAUNCH_POST_H
#define SLUICE_SERVER_LAUNCH_POST_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* POST /v1/launches: 201 with the view of a new launch, 200 for a request
 * seen before (same launch id) or a dry run, else a problem answer.  Wipes
 * rq->body before it returns (it may hold secret values). */
void launch_post(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_LAUNCH_POST_H */
