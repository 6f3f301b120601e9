/* SPDX-License-Identifier: Apache-2.0 */
/* server_cache.h - the read cache of GET /v1/launches/{id} (not installed).
 */
#ifndef SLUICE_SERVER_CACHE_H
#define SLUICE_SERVER_CACHE_H

#include <stdint.h>

#include "server_int.h"

/* A copy of the kept answer for launch `id` (caller frees) and its
 * resource version in *version_out, or NULL when none is current.
 * *upto_out is the event mark to build a new answer at (-1: the store
 * could not say; do not keep it). */
char *server_cache_get(sluice_server_t *s, const char *id, int64_t *upto_out, int64_t *version_out);
/* Keep a copy of `text` (resource version `version`) as the answer for
 * `id` built at mark `upto`. */
void server_cache_put(
    sluice_server_t *s, const char *id, int64_t upto, const char *text, int64_t version);
/* Drop every kept answer. */
void server_cache_clear(sluice_server_t *s);

#endif /* SLUICE_SERVER_CACHE_H */
