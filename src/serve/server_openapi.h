/* SPDX-License-Identifier: Apache-2.0 */
/* server_openapi.h - the OpenAPI document of `sluice serve` (not
 * installed): GET /v1/openapi.json and /v1/openapi.yaml.
 */
#ifndef SLUICE_SERVER_OPENAPI_H
#define SLUICE_SERVER_OPENAPI_H

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* GET /v1/openapi.json (rq->route_arg "json") or /v1/openapi.yaml ("yaml"):
 * the document built into the binary, bundled into one (the request schema
 * file's schemas under components.schemas), with info.version the
 * binary's version.  Public: no token.  500 if it could not be built. */
void openapi_get(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_OPENAPI_H */
