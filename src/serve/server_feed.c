/* SPDX-License-Identifier: Apache-2.0 */
/* server_feed.c - the shared feed of recent events (server_feed.h): after a
 * wake (or a tick) the ticker reads what is new from the store ONCE
 * (sluice_store_events_since from the feed's head, in batches) and keeps
 * each event as its finished SSE frame, with the fields streams filter on
 * (launch id, the state after the event, gseq), in a bounded ring.  Every
 * stream whose position lies inside the ring is served from it: a filter
 * and a memcpy of the frame, no store access, no JSON work.  A stream
 * behind the ring's oldest event reads the store as before.
 *
 * Notes:
 * - The ring holds every event with base < gseq <= head, oldest first.
 *   That a read from the store after gseq G never turns up an event at or
 *   below G rests on SQLite: gseq is the events table's INTEGER PRIMARY
 *   KEY and writers are serialised (BEGIN IMMEDIATE), so gseqs are
 *   assigned in commit order and a reader never sees a gap filled later.
 *   A backend with concurrent writers (PostgreSQL sequences) breaks that:
 *   it will need to hold the head back to the oldest open writer.
 * - Bounds: at most FEED_MAX_EVENTS events and FEED_MAX_BYTES of frame
 *   text (per frame: the text, the launch id, ~60 bytes of bookkeeping);
 *   the oldest events go first, and base moves up to the newest of them.
 *   One catch-up reads at most the ring's size (a larger backlog leaves
 *   its older part to the store).
 * - Locks: `mu` guards the ring, base, head and epoch and is held only to
 *   search and copy (never during a store query); `amu` lets one thread at
 *   a time read the store into the ring.  A prune (server_feed_forget)
 *   empties the ring and counts an epoch, so a batch read before it is
 *   thrown away, not kept.
 * - Where a launch's stream ends matches sluice_store_launch_events_after:
 *   the event that made the launch terminal is its summary event, the
 *   first whose state is DONE (a DONE launch never changes state again;
 *   later events, such as archived, carry DONE too and stay off that
 *   stream).  The ring can tell that first DONE only when it holds every
 *   event since the launch was known to be live (feed_query_t.live_at).
 */
#define _GNU_SOURCE 1 /* strdup under -std=c11 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/json_text.h"
#include "server_feed.h"
#include "server_tenant.h"

#define FEED_BATCH 256 /* events per store query */

typedef struct {
    int64_t gseq;
    char *frame;           /* the frame text, '\0', then the launch id, '\0' */
    size_t len;            /* of the frame text */
    const char *launch_id; /* inside frame's block */
    char state[24];        /* the launch's state after the event ("" none) */
} feed_entry_t;

struct server_feed {
    pthread_mutex_t mu;
    feed_entry_t *ring; /* max_events slots; n from `first`, wrapping */
    size_t max_events, max_bytes;
    size_t first, n, bytes;
    int64_t base, head;
    uint64_t epoch;
    pthread_mutex_t amu; /* one catch-up at a time */
};

server_feed_t *server_feed_new(int64_t head, size_t max_events, size_t max_bytes)
{
    server_feed_t *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return NULL;
    f->max_events = max_events ? max_events : FEED_MAX_EVENTS;
    f->max_bytes = max_bytes ? max_bytes : FEED_MAX_BYTES;
    if ((f->ring = calloc(f->max_events, sizeof(*f->ring))) == NULL) {
        free(f);
        return NULL;
    }
    f->base = f->head = head;
    pthread_mutex_init(&f->mu, NULL);
    pthread_mutex_init(&f->amu, NULL);
    return f;
}

/* With mu held: drop the oldest event. */
static void drop_oldest(server_feed_t *f)
{
    feed_entry_t *e = &f->ring[f->first];

    f->base = e->gseq;
    f->bytes -= e->len;
    free(e->frame);
    memset(e, 0, sizeof(*e));
    f->first = (f->first + 1) % f->max_events;
    f->n--;
}

void server_feed_free(server_feed_t *f)
{
    if (f == NULL)
        return;
    while (f->n > 0)
        drop_oldest(f);
    free(f->ring);
    pthread_mutex_destroy(&f->mu);
    pthread_mutex_destroy(&f->amu);
    free(f);
}

int64_t server_feed_head(server_feed_t *f)
{
    int64_t h;

    pthread_mutex_lock(&f->mu);
    h = f->head;
    pthread_mutex_unlock(&f->mu);
    return h;
}

uint64_t server_feed_key(const char *launch_id)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, 64 bits */

    for (const unsigned char *p = (const unsigned char *)launch_id; p && *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h != 0 ? h : 1;
}

int server_feed_key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static size_t first_after(const server_feed_t *f, int64_t g);

size_t server_feed_keys_after(server_feed_t *f, int64_t after, uint64_t *keys, size_t max)
{
    size_t n = 0, i, k;

    pthread_mutex_lock(&f->mu);
    if (after < f->base) {
        pthread_mutex_unlock(&f->mu);
        return max + 1;
    }
    for (i = first_after(f, after); i < f->n; i++) {
        if (n == max) {
            n = max + 1;
            break;
        }
        keys[n++] = server_feed_key(f->ring[(f->first + i) % f->max_events].launch_id);
    }
    pthread_mutex_unlock(&f->mu);
    if (n > max)
        return n;
    qsort(keys, n, sizeof(*keys), server_feed_key_cmp);
    for (i = k = 0; i < n; i++)
        if (k == 0 || keys[k - 1] != keys[i])
            keys[k++] = keys[i];
    return k;
}

void server_feed_forget(server_feed_t *f)
{
    if (f == NULL)
        return;
    pthread_mutex_lock(&f->mu);
    while (f->n > 0)
        drop_oldest(f);
    f->base = f->head;
    f->epoch++;
    pthread_mutex_unlock(&f->mu);
}

/* Make room in *buf for `more` bytes; -1 when out of memory.  An empty
 * buffer gets just what is asked for (a feed entry keeps its block for
 * the ring's life); a growing one doubles. */
static int buf_room(char **buf, size_t len, size_t *cap, size_t more)
{
    char *nb;
    size_t want;

    if (len + more <= *cap)
        return 0;
    want = *cap ? *cap : len + more;
    while (want < len + more)
        want *= 2;
    if ((nb = realloc(*buf, want)) == NULL)
        return -1;
    *buf = nb;
    *cap = want;
    return 0;
}

/* server_feed_frame(), leaving room for `reserve` more bytes after it. */
/* 1 when the launch of key `id` is `tenant`'s ("" the default tenant's). */
static int of_tenant(const char *id, const char *tenant)
{
    size_t n = strlen(tenant);

    if (n == 0)
        return strchr(id, '~') == NULL;
    return strncmp(id, tenant, n) == 0 && id[n] == '~';
}

/* The event's text as the API sends it: a tenant's launch_id without its
 * tenant part, and "tenant" beside it (server_tenant.h). */
static char *event_text(const json_t *ev)
{
    const char *id = json_string_value(json_object_get(ev, "launch_id"));
    json_t *copy;
    char *data;

    if (id == NULL || strchr(id, '~') == NULL)
        return json_text_dump(ev, JSON_COMPACT | JSON_SORT_KEYS);
    if ((copy = json_deep_copy(ev)) == NULL)
        return NULL;
    server_tenant_shape(copy);
    data = json_text_dump(copy, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(copy);
    return data;
}

static int frame_append(const json_t *ev, char **buf, size_t *len, size_t *cap, size_t reserve)
{
    char *data = event_text(ev);
    const char *name = json_string_value(json_object_get(ev, "name"));
    int64_t gseq = (int64_t)json_integer_value(json_object_get(ev, "gseq"));
    size_t need;
    int w;

    if (data == NULL)
        return -1;
    if (name == NULL)
        name = "event";
    need = strlen(data) + strlen(name) + 64;
    if (buf_room(buf, *len, cap, need + reserve) != 0) {
        free(data);
        return -1;
    }
    w = snprintf(*buf + *len, *cap - *len, "id: %" PRId64 "\nevent: %s\ndata: %s\n\n", gseq, name,
                 data);
    free(data);
    if (w < 0 || (size_t)w >= *cap - *len)
        return -1;
    *len += (size_t)w;
    return 0;
}

int server_feed_frame(const json_t *ev, char **buf, size_t *len, size_t *cap)
{
    return frame_append(ev, buf, len, cap, 0);
}

/* Build the entry of event `ev` (outside every lock) in one block sized to
 * it (a frame is a few hundred bytes; a feed keeps thousands); -1 when out
 * of memory or when the event has no launch id. */
static int entry_of(const json_t *ev, feed_entry_t *out)
{
    const char *id = json_string_value(json_object_get(ev, "launch_id"));
    const char *state = json_string_value(json_object_get(ev, "state"));
    char *text = NULL;
    size_t len = 0, cap = 0, idlen;

    memset(out, 0, sizeof(*out));
    if (id == NULL)
        return -1;
    idlen = strlen(id);
    if (frame_append(ev, &text, &len, &cap, idlen + 2) != 0) {
        free(text);
        return -1;
    }
    text[len] = '\0';
    memcpy(text + len + 1, id, idlen + 1);
    out->gseq = (int64_t)json_integer_value(json_object_get(ev, "gseq"));
    out->frame = text;
    out->len = len;
    out->launch_id = text + len + 1;
    snprintf(out->state, sizeof(out->state), "%s", state ? state : "");
    return 0;
}

/* With mu held: add `e` (ownership moves) as the newest event, dropping the
 * oldest ones past the bounds. */
static void push_locked(server_feed_t *f, feed_entry_t *e)
{
    if (f->n == f->max_events)
        drop_oldest(f);
    f->ring[(f->first + f->n) % f->max_events] = *e;
    f->n++;
    f->bytes += e->len;
    f->head = e->gseq;
    while (f->n > 1 && f->bytes > f->max_bytes)
        drop_oldest(f);
    memset(e, 0, sizeof(*e));
}

/* Read one batch after the head into the ring; *more is 1 when the batch
 * was full (more may wait). */
static sluice_err catch_up_batch(server_feed_t *f,
                                 sluice_store_t *store,
                                 pthread_mutex_t *store_mu,
                                 int *more,
                                 sluice_error_t *err)
{
    feed_entry_t *es = NULL;
    json_t *evs = NULL;
    int64_t from, next = 0;
    uint64_t epoch;
    size_t i, n = 0;
    sluice_err rc;

    *more = 0;
    pthread_mutex_lock(&f->mu);
    from = f->head;
    epoch = f->epoch;
    pthread_mutex_unlock(&f->mu);
    if (store_mu)
        pthread_mutex_lock(store_mu);
    rc = sluice_store_events_since(store, from, FEED_BATCH, &evs, &next, err);
    if (store_mu)
        pthread_mutex_unlock(store_mu);
    if (rc != SLUICE_OK)
        return rc;
    n = json_array_size(evs);
    if (n > 0 && (es = calloc(n, sizeof(*es))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "event feed: out of memory");
        goto out;
    }
    for (i = 0; i < n; i++) {
        if (entry_of(json_array_get(evs, i), &es[i]) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "event feed: out of memory");
            goto out;
        }
    }
    pthread_mutex_lock(&f->mu);
    /* A prune since the read: its events may be in this batch; read again
     * next time instead. */
    if (f->epoch == epoch && f->head == from) {
        for (i = 0; i < n; i++)
            push_locked(f, &es[i]);
        *more = n == FEED_BATCH;
    }
    pthread_mutex_unlock(&f->mu);
out:
    for (i = 0; es != NULL && i < n; i++)
        free(es[i].frame);
    free(es);
    json_decref(evs);
    return rc;
}

sluice_err server_feed_catch_up(server_feed_t *f,
                                sluice_store_t *store,
                                pthread_mutex_t *store_mu,
                                sluice_error_t *err)
{
    sluice_err rc = SLUICE_OK;
    size_t batches = 0;
    int more = 1;

    pthread_mutex_lock(&f->amu);
    while (more && rc == SLUICE_OK && batches * FEED_BATCH < f->max_events) {
        rc = catch_up_batch(f, store, store_mu, &more, err);
        batches++;
    }
    pthread_mutex_unlock(&f->amu);
    return rc;
}

/* With mu held: the ring index of the first event with gseq > g (n when
 * none). */
static size_t first_after(const server_feed_t *f, int64_t g)
{
    size_t lo = 0, hi = f->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (f->ring[(f->first + mid) % f->max_events].gseq > g)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int server_feed_read(server_feed_t *f,
                     int64_t *after,
                     feed_query_t *q,
                     size_t max_events,
                     char **buf,
                     size_t *len,
                     size_t *cap)
{
    int64_t from = *after, looked;
    size_t i, sent = 0;
    int rc = 1;

    if (q->one_launch && q->launch_id == NULL)
        return 0;
    /* A live launch's stream must see every event since it was known live
     * to tell its DONE one. */
    if (q->one_launch && q->done_gseq == 0 && q->live_at < from)
        from = q->live_at;
    pthread_mutex_lock(&f->mu);
    if (from < f->base || *after > f->head) {
        pthread_mutex_unlock(&f->mu);
        return 0;
    }
    looked = from;
    for (i = first_after(f, from); i < f->n; i++) {
        const feed_entry_t *e = &f->ring[(f->first + i) % f->max_events];

        if (sent >= max_events)
            break;
        looked = e->gseq;
        if (q->launch_id && strcmp(e->launch_id, q->launch_id) != 0)
            continue;
        if (q->tenant != NULL && !of_tenant(e->launch_id, q->tenant))
            continue;
        if (q->one_launch) {
            if (q->done_gseq == 0 && strcmp(e->state, "DONE") == 0)
                q->done_gseq = e->gseq;
            if (e->gseq <= *after)
                continue; /* seen only to tell the DONE event */
            if (q->done_gseq > 0 && e->gseq > q->done_gseq) {
                looked = q->done_gseq;
                break;
            }
        } else if (q->state && strcmp(e->state, q->state) != 0) {
            continue;
        }
        if (buf_room(buf, *len, cap, e->len) != 0) {
            rc = -1;
            break;
        }
        memcpy(*buf + *len, e->frame, e->len);
        *len += e->len;
        sent++;
        if (q->one_launch && e->gseq == q->done_gseq)
            break; /* the stream ends here */
    }
    if (rc == 1 && i == f->n)
        looked = f->head; /* every event up to the head was looked at */
    pthread_mutex_unlock(&f->mu);
    if (rc == -1)
        return -1;
    if (looked > *after)
        *after = looked;
    if (q->one_launch && q->done_gseq == 0 && looked > q->live_at)
        q->live_at = looked;
    return 1;
}
