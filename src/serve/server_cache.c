/* SPDX-License-Identifier: Apache-2.0 */
/* server_cache.c - the read cache of GET /v1/launches/{id}.
 *
 * Building a view parses the stored request, render and every event of the
 * launch; under read load that dominates.  A built answer is kept in one
 * of the VIEW_WAYS slots of its id's set (a hash of the id picks the set:
 * 8-way over 512 sets, so 1,000 live launches read round robin all stay
 * kept; 2-way over 2,048 pairs let the 9-19 % of ids whose pair had a
 * third id evict each other on every round) and served again while no event of
 * its id's event bucket is newer than the read that built it and it is
 * younger than its lifetime (VIEW_MAX_AGE_S less up to a quarter, spread
 * by the id's hash so that answers built together do not all expire in
 * the same second; a prune removes rows without an event).  New events
 * are read (one indexed query) before an answer whenever this process
 * wrote since the last look (a launcher cycle, an accept, a cancel), so a
 * change the service made before a request started is always in its
 * answer; events appended by other processes (a CLI cancel) are looked
 * for at least every VIEW_LOOK_S.
 *
 * Notes:
 * - last_event[] is indexed by an event bucket of the id (another part of
 *   its hash than the set), not by slot: an event is noted whether or not
 *   its id has a kept answer, so an answer built from a read older than
 *   the event can never be kept as current.  Ids sharing a bucket only
 *   cost each other a rebuild.
 * - vmu guards the slots, last_event and seen_gseq; lookmu serialises the
 *   looks; rmu guards the server's read connection to the store.
 * - server_launches.c builds the answer (and counts hits and misses);
 *   this file only keeps and hands out copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server_cache.h"
#include "server_util.h"

/* A kept answer's age bounds the staleness a change without an event (a
 * prune by another process) can cause; other processes' events are looked
 * for every VIEW_LOOK_S. */
#define VIEW_MAX_AGE_S 60.0
#define VIEW_LOOK_S 1.0
#define VIEW_WAYS 8u
#define VIEW_SETS (VIEW_SLOTS / VIEW_WAYS)

/* Where id `id` lives: the first slot of its set, its event bucket and
 * its answers' lifetime. */
typedef struct {
    size_t set;
    size_t bucket;
    double max_age_s;
} view_key_t;

static view_key_t view_key(const char *id)
{
    uint32_t h = 2166136261u;
    view_key_t k;

    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 16777619u;
    k.set = (h % VIEW_SETS) * VIEW_WAYS;
    k.bucket = ((h >> 16) ^ (h * 2654435761u)) % VIEW_SLOTS;
    k.max_age_s = VIEW_MAX_AGE_S - VIEW_MAX_AGE_S / 4.0 * (double)((h >> 24) & 0xffu) / 255.0;
    return k;
}

/* 1 when slot `v` holds a current answer for an id with key `k` (with
 * vmu held; `now` from server_elapsed_s(&s->started)). */
static int
view_current(const sluice_server_t *s, const view_slot_t *v, const view_key_t *k, double now)
{
    return v->text != NULL && s->last_event[k->bucket] <= v->built_at_gseq &&
           now - v->built_s < k->max_age_s;
}

/* Note every event appended since the last look; returns the gseq up to
 * which every event has been noted, or -1 when the store cannot say. */
static int64_t views_catch_up_now(sluice_server_t *s)
{
    int64_t from, next, upto;

    pthread_mutex_lock(&s->vmu);
    from = s->seen_gseq;
    pthread_mutex_unlock(&s->vmu);
    for (;;) {
        json_t *evs = NULL, *ev;
        size_t i;
        sluice_err rc;

        pthread_mutex_lock(&s->rmu);
        rc = sluice_store_events_since(s->rstore, from, 500, &evs, &next, NULL);
        pthread_mutex_unlock(&s->rmu);
        if (rc != SLUICE_OK)
            return -1;
        pthread_mutex_lock(&s->vmu);
        json_array_foreach(evs, i, ev)
        {
            const char *lid = json_string_value(json_object_get(ev, "launch_id"));
            int64_t g = (int64_t)json_integer_value(json_object_get(ev, "gseq"));
            size_t b = lid ? view_key(lid).bucket : 0;
            if (lid && g > s->last_event[b])
                s->last_event[b] = g;
        }
        if (next > s->seen_gseq)
            s->seen_gseq = next;
        upto = s->seen_gseq;
        pthread_mutex_unlock(&s->vmu);
        i = json_array_size(evs);
        json_decref(evs);
        if (i == 0 || next <= from)
            return upto;
        from = next;
    }
}

/* Look for new events when this process wrote or VIEW_LOOK_S passed;
 * returns as views_catch_up_now(), or the current mark when no look was
 * due.  Waiting requests queue on lookmu, so none answers from before a
 * write that finished before it started. */
static int64_t views_catch_up(sluice_server_t *s)
{
    int64_t upto;
    double now;

    pthread_mutex_lock(&s->lookmu);
    now = server_elapsed_s(&s->started);
    if (atomic_exchange(&s->views_dirty, 0) || now - s->looked_s >= VIEW_LOOK_S) {
        if ((upto = views_catch_up_now(s)) < 0)
            atomic_store(&s->views_dirty, 1);
        else
            s->looked_s = now;
    } else {
        pthread_mutex_lock(&s->vmu);
        upto = s->seen_gseq;
        pthread_mutex_unlock(&s->vmu);
    }
    pthread_mutex_unlock(&s->lookmu);
    return upto;
}

char *server_cache_get(sluice_server_t *s, const char *id, int64_t *upto_out, int64_t *version_out)
{
    view_key_t k = view_key(id);
    int64_t upto = views_catch_up(s);
    char *text = NULL;
    double now;

    if (upto >= 0) {
        pthread_mutex_lock(&s->vmu);
        now = server_elapsed_s(&s->started);
        for (size_t w = 0; w < VIEW_WAYS; w++) {
            const view_slot_t *v = &s->views[k.set + w];
            if (v->text != NULL && strcmp(v->id, id) == 0) {
                if (view_current(s, v, &k, now)) {
                    text = strdup(v->text);
                    *version_out = v->version;
                }
                break; /* an id has at most one slot */
            }
        }
        pthread_mutex_unlock(&s->vmu);
    }
    *upto_out = upto;
    return text;
}

void server_cache_put(
    sluice_server_t *s, const char *id, int64_t upto, const char *text, int64_t version)
{
    view_key_t k = view_key(id);
    char *keep;
    view_slot_t *v = NULL;
    double now;

    if (upto < 0 || (keep = strdup(text)) == NULL)
        return;
    pthread_mutex_lock(&s->vmu);
    now = server_elapsed_s(&s->started);
    /* the id's own slot, else an empty one, else one whose answer is no
     * longer current (of any id of the set), else the oldest */
    for (size_t w = 0; w < VIEW_WAYS && v == NULL; w++) {
        view_slot_t *c = &s->views[k.set + w];
        if (c->text != NULL && strcmp(c->id, id) == 0)
            v = c;
    }
    for (size_t w = 0; w < VIEW_WAYS && v == NULL; w++) {
        view_slot_t *c = &s->views[k.set + w];
        if (c->text == NULL)
            v = c;
    }
    for (size_t w = 0; w < VIEW_WAYS && v == NULL; w++) {
        view_slot_t *c = &s->views[k.set + w];
        view_key_t ck = view_key(c->id);
        if (!view_current(s, c, &ck, now))
            v = c;
    }
    if (v == NULL) {
        v = &s->views[k.set];
        for (size_t w = 1; w < VIEW_WAYS; w++)
            if (s->views[k.set + w].built_s < v->built_s)
                v = &s->views[k.set + w];
    }
    free(v->text);
    v->text = keep;
    snprintf(v->id, sizeof(v->id), "%s", id);
    v->built_at_gseq = upto;
    v->version = version;
    v->built_s = now;
    pthread_mutex_unlock(&s->vmu);
}

void server_cache_clear(sluice_server_t *s)
{
    size_t i;

    pthread_mutex_lock(&s->vmu);
    for (i = 0; i < VIEW_SLOTS; i++) {
        free(s->views[i].text);
        s->views[i].text = NULL;
    }
    pthread_mutex_unlock(&s->vmu);
}
