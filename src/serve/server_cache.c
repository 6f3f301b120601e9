/* SPDX-License-Identifier: Apache-2.0 */
/* server_cache.c - the read cache of GET /v1/launches/{id}.
 *
 * Building a view parses the stored request, render and every event of the
 * launch; under read load that dominates.  A built answer is kept in one
 * of the two slots of its id's pair (hash of the id: 2-way, so 1,000 live
 * launches read round robin keep ~99 % of their answers; one slot per id
 * kept only ~30 % at 512 slots) and served again while no event of that slot is newer
 * than the read that built it and it is younger than VIEW_MAX_AGE_S (a
 * prune removes rows without an event).  New events are read (one indexed
 * query) before an answer whenever this process wrote since the last look
 * (a launcher cycle, an accept, a cancel), so a change the service made
 * before a request started is always in its answer; events appended by
 * other processes (a CLI cancel) are looked for at least every VIEW_LOOK_S.
 *
 * Notes:
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

/* The first slot of the id's pair (the other is +1). */
static size_t view_slot(const char *id)
{
    uint32_t h = 2166136261u;

    for (; *id; id++)
        h = (h ^ (unsigned char)*id) * 16777619u;
    return (h % (VIEW_SLOTS / 2)) * 2;
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
            size_t k = lid ? view_slot(lid) : 0;
            if (lid && g > s->last_event[k])
                s->last_event[k] = g;
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
    size_t k = view_slot(id);
    int64_t upto = views_catch_up(s);
    char *text = NULL;

    if (upto >= 0) {
        pthread_mutex_lock(&s->vmu);
        for (size_t w = 0; w < 2 && text == NULL; w++) {
            view_slot_t *v = &s->views[k + w];
            if (v->text != NULL && strcmp(v->id, id) == 0 && s->last_event[k] <= v->built_at_gseq &&
                server_elapsed_s(&s->started) - v->built_s < VIEW_MAX_AGE_S) {
                text = strdup(v->text);
                *version_out = v->version;
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
    size_t k = view_slot(id);

    if (upto >= 0) {
        char *keep = strdup(text);
        view_slot_t *v;
        pthread_mutex_lock(&s->vmu);
        /* the id's own slot, else an empty one, else the older one */
        if (s->views[k + 1].text != NULL && strcmp(s->views[k + 1].id, id) == 0)
            v = &s->views[k + 1];
        else if (s->views[k].text != NULL && strcmp(s->views[k].id, id) == 0)
            v = &s->views[k];
        else if (s->views[k].text == NULL)
            v = &s->views[k];
        else if (s->views[k + 1].text == NULL)
            v = &s->views[k + 1];
        else
            v = &s->views[s->views[k].built_s <= s->views[k + 1].built_s ? k : k + 1];
        if (keep != NULL) {
            free(v->text);
            v->text = keep;
            snprintf(v->id, sizeof(v->id), "%s", id);
            v->built_at_gseq = upto;
            v->version = version;
            v->built_s = server_elapsed_s(&s->started);
        }
        pthread_mutex_unlock(&s->vmu);
    }
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
