/* SPDX-License-Identifier: Apache-2.0 */
/* webhooks.h - the webhook delivery worker of a supervisor (internal;
 * docs/api.md, "Webhooks").
 *
 * One worker per supervisor (so one per store: the supervisor lock).  Its
 * thread fills the store's outbox from the event log (store_webhooks.h),
 * posts each due delivery with its signature, deletes it on a 2xx answer,
 * and otherwise schedules it again with exponential backoff and jitter
 * until webhooks.max_attempts, after which it is dead (kept, counted in
 * /v1/metrics, logged).  It wakes on webhooks_poke() (the supervisor calls
 * it for every transition), when a retry is due, and at least every
 * second (events appended by other processes).
 *
 * Notes:
 * - The secret (webhooks.secret_file, read once at start under the key
 *   file rules of sluice_key_load()) stays in this object's memory and is
 *   wiped when it is freed; it is never logged or stored.
 * - Logs name a receiver by its origin (scheme://host:port) only: a path
 *   may carry a token of the receiver's own.
 */
#ifndef SLUICE_SUPERVISE_WEBHOOKS_H
#define SLUICE_SUPERVISE_WEBHOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/leader.h>
#include <sluice/store.h>

typedef struct webhooks webhooks_t;

/* True when `cfg` turns webhooks on (webhooks.url, or
 * webhooks.allow_request_urls). */
bool webhooks_enabled(const sluice_config_t *cfg);

/* Read the secret, start the outbox (store_webhooks_start()) and, with
 * `thread`, the worker thread.  `store` and `cfg` are borrowed and must
 * outlive the worker.  *out is NULL when webhooks are off.  Errors: the
 * secret file's (SLUICE_EPERM for a file others may read or write,
 * SLUICE_EIO, SLUICE_EAUTH for an empty one), SLUICE_ESTORE. */
sluice_err webhooks_new(webhooks_t **out,
                        sluice_store_t *store,
                        const sluice_config_t *cfg,
                        bool thread,
                        sluice_error_t *err);

/* Start the worker thread of a `w` made without one, delivering only
 * while `leader` (borrowed, must outlive the worker; NULL: always) leads,
 * so that two replicas never post the same delivery.  NULL-safe; a no-op
 * when the thread runs.  Errors: SLUICE_ENOMEM. */
sluice_err webhooks_start(webhooks_t *w, sluice_leader_t *leader, sluice_error_t *err);

/* Wake the thread now (a transition was recorded).  NULL-safe; any
 * thread. */
void webhooks_poke(webhooks_t *w);

/* One pass at now_ms (0: now): fill, then post every due delivery once.
 * `*posted_out` (may be NULL): POSTs made.  What the thread runs; tests
 * call it without a thread. */
sluice_err webhooks_pass(webhooks_t *w, int64_t now_ms, size_t *posted_out, sluice_error_t *err);

/* Stop and join the thread, free the clients, wipe the secret.  Queued
 * deliveries stay in the store for the next start.  NULL-safe. */
void webhooks_free(webhooks_t *w);

#endif /* SLUICE_SUPERVISE_WEBHOOKS_H */
