/* SPDX-License-Identifier: Apache-2.0 */
/* server_metrics.h - the Prometheus text of /v1/metrics and the
 * launcher-cycle histogram (not installed).
 */
#ifndef SLUICE_SERVER_METRICS_H
#define SLUICE_SERVER_METRICS_H

#include <jansson.h>

#include <sluice/error.h>

#include "server_int.h"

/* Count one launcher cycle that took `took` seconds and ended with `rc`. */
void server_metrics_cycle(sluice_server_t *s, double took, sluice_err rc);
/* The number of launches in the store by public state, every state
 * present (0 when none): {"ACCEPTED": n, ...} in *out (caller owns).
 * SLUICE_ESTORE when the store could not be read, SLUICE_ENOMEM. */
sluice_err server_metrics_launch_counts(sluice_server_t *s, const char *tenant, json_t **out);
/* The body of GET /v1/metrics in *text_out (caller frees).  SLUICE_ESTORE
 * when the store could not be read, SLUICE_ENOMEM. */
sluice_err server_metrics_render(sluice_server_t *s, char **text_out);

#endif /* SLUICE_SERVER_METRICS_H */
