/* SPDX-License-Identifier: Apache-2.0 */
/* server_launches.h - the launch routes of `sluice serve` but the create
 * (not installed): GET /v1/launches, GET and DELETE /v1/launches/{id}, and
 * the API view of a launch that every launch answer carries.
 */
#ifndef SLUICE_SERVER_LAUNCHES_H
#define SLUICE_SERVER_LAUNCHES_H

#include <stdint.h>

#include <jansson.h>

#include <sluice/error.h>

#include "server_answer.h"
#include "server_int.h"
#include "server_req.h"

/* The API view of launch `id` (launch_view.h) in *out: a new reference.
 * Reads through the server's own store connection (rmu, never mu: a read
 * does not wait for a launcher cycle).  SLUICE_ENOTFOUND, SLUICE_ESTORE,
 * SLUICE_ENOMEM. */
sluice_err launches_view(sluice_server_t *s, const char *id, json_t **out, sluice_error_t *err);
/* launches_view() with the launch's resource version (the gseq of its
 * newest event, read in the same store snapshot as the view) in
 * *version_out (may be NULL); the view carries it as "resource_version". */
sluice_err launches_view_at(
    sluice_server_t *s, const char *id, json_t **out, int64_t *version_out, sluice_error_t *err);
/* The view of launch `l` (render left out) with events `ev`, as
 * launches_view_at() makes it from what it read: for a launch known
 * without a read (the accept that created it). */
sluice_err launches_view_of(sluice_server_t *s,
                            const json_t *l,
                            const json_t *ev,
                            int64_t version,
                            json_t **out,
                            sluice_error_t *err);

/* GET /v1/launches: a page of launches (limit, state, site, study, cursor)
 * with the store's resource version; 400 invalid-query for a bad one. */
void launches_list(sluice_server_t *s, req_t *rq, answer_t *out);
/* GET /v1/launches/{id}: the view, from the read cache when it is current,
 * with ETag "<resource version>"; 304 when If-None-Match names it. */
void launches_get(sluice_server_t *s, req_t *rq, answer_t *out);
/* DELETE /v1/launches/{id}: record the cancel intent (creator or admin
 * only, else 403) and wake the launcher; 202 with the view. */
void launches_cancel(sluice_server_t *s, req_t *rq, answer_t *out);

#endif /* SLUICE_SERVER_LAUNCHES_H */
