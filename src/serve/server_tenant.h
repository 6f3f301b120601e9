/* SPDX-License-Identifier: Apache-2.0 */
/* server_tenant.h - the API seen from one tenant (not installed): whose
 * launches a caller may name and list, the keys its ids become, the shape
 * launches and events take on the way out, and its limits.
 *
 * A caller's tenant is the entry of the site's `tenants:` that lists it,
 * else the default tenant ("").  A launch is stored under its key
 * (base/marker.h): the launch_id for the default tenant,
 * "<tenant>~<launch_id>" for a tenant.  So:
 * - a caller names launches by their launch_id, which the server turns
 *   into its own tenant's key (or by that key itself): another tenant's
 *   launch cannot be named, and is "no such launch" (404), never
 *   "forbidden" (which would say it exists);
 * - an admin names any launch: by its launch_id (its own tenant's) or by
 *   its key "<tenant>~<launch_id>";
 * - lists and event streams carry the caller's tenant as a filter (none
 *   for an admin);
 * - every launch and event the API sends shows the launch_id as its caller
 *   sent it, and "tenant" for a tenant's launch.
 */
#ifndef SLUICE_SERVER_TENANT_H
#define SLUICE_SERVER_TENANT_H

#include <stddef.h>

#include <jansson.h>

#include <sluice/accept.h>

#include "server_answer.h"
#include "server_int.h"

/* Set c->tenant from the site's tenants (c->name set). */
void server_tenant_of(const sluice_server_t *s, caller_t *c);
/* The key of the launch `id` a caller names into key[cap]: 0, or -1 when
 * the caller cannot name such a launch (the route answers 404). */
int server_tenant_key(const caller_t *c, const char *id, char *key, size_t cap);
/* The tenant filter of a caller's lists and streams: NULL for an admin
 * (every tenant), else its tenant ("" the default one). */
const char *server_tenant_filter(const caller_t *c);
/* 1 when a caller may see the launch stored under `key`. */
int server_tenant_sees(const caller_t *c, const char *key);
/* A POST body's launch_id and depends_on.launch_id made keys of the
 * caller's tenant, in place: 0, or -1 with a 422 in `out` naming the
 * field. */
int server_tenant_body(const caller_t *c, json_t *body, answer_t *out);
/* A launch, a launch summary or an event as the API sends it, in place:
 * a key's launch_id becomes the launch_id alone with "tenant" beside it
 * (at the top level), and every launch_id below (the request's,
 * depends_on's) loses its tenant part. */
void server_tenant_shape(json_t *v);
/* A launch's key as its tenant names it (borrowed from key). */
const char *server_tenant_bare(const char *key);
/* The caller's tenant limits against the store, for the accept `a` about
 * to be committed: 0, or -1 with a 429 (or the store's error) in `out`.
 * A repeat of a launch the tenant already has is never refused. */
int server_tenant_limits(sluice_server_t *s,
                         const caller_t *c,
                         const sluice_accept_t *a,
                         answer_t *out);

#endif /* SLUICE_SERVER_TENANT_H */
