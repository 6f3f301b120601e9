/* SPDX-License-Identifier: Apache-2.0 */
/* launch_view.h - one launch as callers see it, the same whether it is read
 * from the local store (`sluice status`) or through the service
 * (`GET /v1/launches/{id}`, `sluice status --server`).
 *
 * The view is the store's launch object without the render, plus:
 * - `created_by`: the caller on the launch's first event (`accepted`), or
 *   null;
 * - `components`: per component of the newest job observation, its job
 *   id, Slurm's node list and each node with its address (null when the
 *   optional lookup does not know it); [] before any job was seen;
 * - `events`: the whole event log.
 */
#ifndef SLUICE_LAUNCH_VIEW_H
#define SLUICE_LAUNCH_VIEW_H

#include <stddef.h>

#include <jansson.h>

#include <sluice/common.h>
#include <sluice/error.h>
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Address of a node: 1 with `buf` filled (NUL-terminated), 0 unknown. */
typedef int (*sluice_node_address_fn)(void *arg, const char *node, char *buf, size_t size);

/* At most this many node names are listed per component. */
#define SLUICE_VIEW_MAX_NODES 1024

/* Build the view from a launch object and its events (both borrowed; the
 * launch's `render` is left out).  `addr` may be NULL.  Returns a new
 * reference, or NULL when out of memory. */
SLUICE_API json_t *sluice_launch_view_build(const json_t *launch,
                                            const json_t *events,
                                            sluice_node_address_fn addr,
                                            void *addr_arg);

/* Read launch `id` and its events from `store` and build the view into
 * *out (new reference).  SLUICE_ENOTFOUND for an unknown id, the store's
 * errors otherwise. */
SLUICE_API sluice_err sluice_launch_view_read(sluice_store_t *store,
                                              const char *id,
                                              sluice_node_address_fn addr,
                                              void *addr_arg,
                                              json_t **out,
                                              sluice_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_LAUNCH_VIEW_H */
