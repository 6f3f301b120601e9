/* SPDX-License-Identifier: Apache-2.0 */
/* server_feed.h - the shared feed of recent events behind `sluice serve`'s
 * event streams (not installed): read once from the store after a commit
 * (by the ticker, before it resumes the streams), kept as ready SSE frames
 * in a bounded ring, and handed to every stream whose position lies inside
 * it.  See server_feed.c for the rules.
 */
#ifndef SLUICE_SERVER_FEED_H
#define SLUICE_SERVER_FEED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/error.h>
#include <sluice/store.h>

#define FEED_MAX_EVENTS 4096u               /* events kept, at most */
#define FEED_MAX_BYTES (8u * 1024u * 1024u) /* frame text kept, at most */

typedef struct server_feed server_feed_t;

/* What one stream wants from the feed (server_feed_read). */
typedef struct {
    const char *launch_id; /* NULL: any launch */
    const char *state;     /* NULL: any state after the event */
    /* NULL: every tenant's launches; "": the default tenant's; else the
     * launches of that tenant (keys "<tenant>~..."). */
    const char *tenant;
    /* 1: launch_id's own stream, which ends with the event that made the
     * launch terminal (the first of its events whose state is DONE). */
    int one_launch;
    /* one_launch, in and out: that event's gseq once known, else 0. */
    int64_t done_gseq;
    /* one_launch with done_gseq 0, in and out: the launch was not yet
     * terminal at this gseq (no event of it up to here is the DONE one). */
    int64_t live_at;
} feed_query_t;

/* A new, empty feed that holds no event up to `head` (the store's newest
 * gseq: what came before is read from the store by the streams behind),
 * keeping at most max_events (0: FEED_MAX_EVENTS) events and max_bytes (0:
 * FEED_MAX_BYTES) of frame text.  NULL when out of memory.  Free with
 * server_feed_free (NULL-safe). */
server_feed_t *server_feed_new(int64_t head, size_t max_events, size_t max_bytes);
void server_feed_free(server_feed_t *f);

/* Read every event after the feed's head from `store` (under `store_mu`
 * when not NULL) into the ring, in batches (at most the ring's size in
 * one call).  Any thread, one at a time (the others wait); readers of the
 * ring are not held up by the store query.  `sluice serve`'s ticker calls
 * it once per round, before it resumes the waiting streams. */
sluice_err server_feed_catch_up(server_feed_t *f,
                                sluice_store_t *store,
                                pthread_mutex_t *store_mu,
                                sluice_error_t *err);

/* The gseq up to which the feed has read the store: every event up to it
 * was committed before the store's next snapshot (see Notes). */
int64_t server_feed_head(server_feed_t *f);

/* The key of launch `launch_id` for waking its own streams: a hash that is
 * never 0 (0 is a stream that looks at every round). */
uint64_t server_feed_key(const char *launch_id);
/* qsort/bsearch order of keys (uint64_t). */
int server_feed_key_cmp(const void *a, const void *b);

/* The keys of the launches with an event in the ring after gseq `after`,
 * sorted and without repeats, into keys[0..max); returns how many.  Returns
 * max + 1 (the caller wakes every stream) when there are more, or when the
 * ring no longer holds every event after `after` (dropped, or forgotten
 * after a prune). */
size_t server_feed_keys_after(server_feed_t *f, int64_t after, uint64_t *keys, size_t max);

/* Drop every kept event (after a prune: a deleted launch's events must not
 * be served from memory); streams behind the head then read the store. */
void server_feed_forget(server_feed_t *f);

/* Append to buf (*len bytes of *cap, realloc'd; caller-owned) the frames of
 * at most max_events events after *after that match `q`, and move *after
 * to the last event looked at.  1: served from the ring (perhaps nothing
 * new); 0: the ring does not hold every event the stream needs (it is
 * behind, ahead of the head, or filters on something the ring does not
 * keep): read the store; -1: out of memory (what was appended stays). */
int server_feed_read(server_feed_t *f,
                     int64_t *after,
                     feed_query_t *q,
                     size_t max_events,
                     char **buf,
                     size_t *len,
                     size_t *cap);

/* Append the SSE frame of event `ev` (an object of the store's feed: name,
 * gseq, ...) to buf as server_feed_read does: `id: <gseq>`, `event:
 * <name>`, `data: <compact JSON, sorted keys>`; 0, or -1 when out of
 * memory. */
int server_feed_frame(const json_t *ev, char **buf, size_t *len, size_t *cap);

#endif /* SLUICE_SERVER_FEED_H */
