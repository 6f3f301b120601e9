/* SPDX-License-Identifier: Apache-2.0 */
/* store_webhooks.h - the webhook outbox in the store (internal; see
 * docs/api.md, "Webhooks", and supervise/webhooks.c, its one writer).
 *
 * The outbox is driven by the event log.  A cursor (a gseq, in the `meta`
 * table) says how far the events have been looked at; filling reads the
 * events after it, and for each *transition* (an event whose `state`
 * differs from the state of the launch's previous event: the first event,
 * every change, and so the terminal one) queues one delivery per target
 * (the site's URL, and the launch's own `webhook.url` when the policy
 * still allows it) into `webhook_deliveries`, and moves the cursor past
 * the event, in one write transaction.  So a crash queues every
 * transition once or not yet, never half.
 *
 * The queue is bounded: at most queue_max rows (waiting and dead).  When
 * it is full the cursor stops (backpressure): the events wait in the log,
 * nothing is dropped, and filling resumes as rows go.  Rows do not belong
 * to their launch (no foreign key): pruning a launch never removes a
 * queued delivery.  An event pruned before it was queued (the queue full
 * for the whole retention age) is never delivered; prune logs no such
 * case on its own, the depth metric shows the queue full long before.
 *
 * Deliveries of one URL go in queue order: only the oldest live row of a
 * URL is due (head of line), so a receiver sees a launch's transitions in
 * order.  A row that failed max_attempts times is dead: kept, counted,
 * no longer blocking its URL; store_webhooks_start() gives dead rows a new
 * round (a restart of the service retries them).
 *
 * The counters (delivered, retries, failed) live in `meta` and are written
 * in the same transaction as the row they count, so they survive restarts.
 *
 * Thread safety: as the store (store.h): every call takes the store mutex.
 */
#ifndef SLUICE_STORE_WEBHOOKS_H
#define SLUICE_STORE_WEBHOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/error.h>
#include <sluice/store.h>

/* The targets and the bound of one fill. */
typedef struct {
    const char *site_url; /* NULL: no site receiver */
    /* True when a launch's own webhook.url may receive now (the site's
     * current policy).  NULL: request URLs never receive. */
    bool (*launch_url_ok)(const char *url, void *arg);
    void *arg;
    size_t queue_max;  /* >= 1 */
    size_t max_events; /* events looked at in one call; 0: 256 */
    int64_t now_ms;    /* 0: now */
    bool more;         /* out: max_events were looked at; more may wait */
} store_webhook_fill_t;

/* One queued delivery (strings owned; free with store_webhook_rows_free). */
typedef struct {
    int64_t id;
    char *delivery_id;
    char *url;
    char *launch_id;
    char *event_name;
    char *body; /* the exact bytes to post (and sign) */
    int64_t gseq;
    int64_t attempts; /* failed attempts so far */
    int64_t next_attempt_ms;
} store_webhook_row_t;

typedef struct {
    int64_t pending;   /* rows waiting (due or not) */
    int64_t dead;      /* rows out of attempts */
    int64_t delivered; /* rows posted with a 2xx answer, ever */
    int64_t retries;   /* failed attempts that were scheduled again, ever */
    int64_t failed;    /* rows that went dead, ever */
    int64_t cursor;    /* events up to this gseq are queued or not transitions */
    int64_t last_gseq; /* the newest event: cursor < last_gseq means events wait */
} store_webhook_stats_t;

/* Begin: set the cursor to the newest event when there is none (history
 * before webhooks were first turned on is not sent) and give every dead
 * row a new round (attempts 0, due at now_ms, 0: now).  `revived_out` may
 * be NULL. */
sluice_err
store_webhooks_start(sluice_store_t *s, int64_t now_ms, size_t *revived_out, sluice_error_t *err);

/* Queue the transitions after the cursor (see above).  `*queued_out`
 * (may be NULL): rows added; `*full_out` (may be NULL): 1 when the bound
 * stopped the cursor. */
sluice_err store_webhooks_fill(sluice_store_t *s,
                               store_webhook_fill_t *f,
                               size_t *queued_out,
                               int *full_out,
                               sluice_error_t *err);

/* The heads of the live rows (per URL the oldest), at most `limit`, those
 * due at now_ms in *rows (new array; *n rows), and the earliest time a
 * head not yet due is due in *next_due_ms (INT64_MAX when none). */
sluice_err store_webhooks_due(sluice_store_t *s,
                              int64_t now_ms,
                              size_t limit,
                              store_webhook_row_t **rows,
                              size_t *n,
                              int64_t *next_due_ms,
                              sluice_error_t *err);

void store_webhook_rows_free(store_webhook_row_t *rows, size_t n);

/* A 2xx answer: delete the row, count it delivered. */
sluice_err store_webhooks_delivered(sluice_store_t *s, int64_t id, sluice_error_t *err);

/* A failed attempt: attempts + 1 and `error` (cut to 512 bytes; never a
 * secret: the HTTP status or the transport's redacted text); with `dead`
 * the row is dead (failed + 1), else due again at next_ms (retries + 1). */
sluice_err store_webhooks_failed(sluice_store_t *s,
                                 int64_t id,
                                 int64_t next_ms,
                                 bool dead,
                                 const char *error,
                                 sluice_error_t *err);

/* The queue depth and the counters. */
sluice_err store_webhooks_stats(sluice_store_t *s, store_webhook_stats_t *out, sluice_error_t *err);

#endif /* SLUICE_STORE_WEBHOOKS_H */
