/* SPDX-License-Identifier: Apache-2.0 */
/* server_sse.c - the event streams of `sluice serve`: GET /v1/events (every
 * event of the store after a mark, optionally filtered) and GET
 * /v1/launches/{id}/events (one launch's events), as `id: <gseq>`,
 * `event: <name>`, `data: <json>` frames, served from the shared feed of
 * recent events (server_feed.c) or, for a stream behind it or filtering on
 * site, read in batches through the server's own store connection.
 *
 * Notes:
 * - When nothing is new a stream returns ANSWER_STREAM_WAIT (server.c
 *   suspends the connection until the ticker, so a waiting watcher holds no
 *   worker thread); after 40 such waits it sends a `: keep-alive` comment
 *   so proxies and idle timers keep it open.
 * - Where a stream starts: Last-Event-ID (a reconnect), else ?after=N, else
 *   ?since=now (the newest gseq at the request), else the first event.
 * - A launch's stream ends once the event that made the launch terminal and
 *   every event before it were sent; it also ends when the launch is
 *   pruned while watched (a prune empties the feed, so the stream reads the
 *   store, which no longer knows the launch).
 * - A stream looks at the feed first (the ticker reads the store into it
 *   once per wake or tick, before it resumes the streams) and copies its
 *   events from there.  The site filter is not in the feed's rows: such a
 *   stream always reads the store.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/fsm.h>
#include <sluice/store.h>

#include "server_feed.h"
#include "server_ticker.h"
#include "server_sse.h"
#include "server_tenant.h"
#include "server_util.h"

#define SSE_BATCH 100

typedef struct {
    sluice_server_t *s;
    int64_t after;
    int one_launch;      /* 1: the stream of launch_id only, ends when it is done */
    char launch_id[136]; /* one_launch, or the launch_id filter ("" none) */
    char site[136];      /* the site filter ("" none) */
    char state[32];      /* the state filter ("" none) */
    int all_tenants;     /* 1: an admin's stream (every tenant's launches) */
    char tenant[33];     /* else the caller's tenant ("" the default one) */
    int64_t done_gseq;   /* one_launch: the terminal event's gseq, 0 while live */
    int64_t live_at;     /* one_launch, done_gseq 0: the launch was live at this gseq */
    int gone;            /* one_launch: the launch no longer exists */
    char *pending;
    size_t len, off, cap;
    unsigned idle;
    int counted; /* counted in s->streams */
} sse_t;

static void sse_free(void *cls)
{
    sse_t *e = cls;

    if (e->counted)
        atomic_fetch_sub(&e->s->streams, 1);
    free(e->pending);
    free(e);
}

/* Append the frames of `evs` to e->pending and move e->after past them;
 * -1 when out of memory (what was framed stays). */
static int sse_frame(sse_t *e, json_t *evs)
{
    json_t *ev;
    size_t i;

    json_array_foreach(evs, i, ev)
    {
        if (server_feed_frame(ev, &e->pending, &e->len, &e->cap) != 0)
            return -1;
        e->after = (int64_t)json_integer_value(json_object_get(ev, "gseq"));
    }
    return 0;
}

/* Frame the next batch of events after e->after into e->pending, read from
 * the store (a stream behind the feed, or filtering on site). */
static sluice_err sse_fill_store(sse_t *e, sluice_error_t *err)
{
    sluice_store_event_filter_t f;
    json_t *evs = NULL;
    int64_t next = e->after, head = server_feed_head(e->s->feed);
    size_t got;
    sluice_err rc;

    memset(&f, 0, sizeof(f));
    f.launch_id = e->launch_id[0] ? e->launch_id : NULL;
    f.site = e->site[0] ? e->site : NULL;
    f.state = e->state[0] ? e->state : NULL;
    f.tenant = e->all_tenants ? NULL : e->tenant;
    pthread_mutex_lock(&e->s->rmu);
    if (e->one_launch)
        rc = sluice_store_launch_events_after(e->s->rstore, e->launch_id, e->after, SSE_BATCH, &evs,
                                              &e->done_gseq, err);
    else
        rc = sluice_store_events_filtered(e->s->rstore, e->after, SSE_BATCH, &f, &evs, &next, err);
    pthread_mutex_unlock(&e->s->rmu);
    if (rc != SLUICE_OK)
        return rc;
    got = json_array_size(evs);
    /* A done launch's stream stops at its DONE event, even when later
     * events (archived) came in the same batch. */
    while (e->one_launch && e->done_gseq > 0 && json_array_size(evs) > 0 &&
           json_integer_value(json_object_get(json_array_get(evs, json_array_size(evs) - 1),
                                              "gseq")) > e->done_gseq)
        json_array_remove(evs, json_array_size(evs) - 1);
    if (sse_frame(e, evs) != 0) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "event stream: out of memory");
    } else if (!e->one_launch) {
        if (next > e->after)
            e->after = next; /* a filtered stream skips what did not match */
    } else {
        /* This read's snapshot holds every event up to the feed's head
         * (read before it): the launch was live there unless done, and,
         * when the batch was not full, nothing of it up to there is left
         * to send, so the stream can move on to the feed. */
        if (e->done_gseq == 0 && head > e->live_at)
            e->live_at = head;
        if (got < SSE_BATCH && head > e->after)
            e->after = head;
    }
    json_decref(evs);
    return rc;
}

/* Frame the next batch of events after e->after into e->pending: from the
 * shared feed when it holds them, else from the store. */
static sluice_err sse_fill(sse_t *e, sluice_error_t *err)
{
    feed_query_t q;
    int r = 0;

    e->len = e->off = 0;
    if (e->site[0] == '\0') {
        memset(&q, 0, sizeof(q));
        q.launch_id = e->launch_id[0] ? e->launch_id : NULL;
        q.state = e->state[0] ? e->state : NULL;
        q.tenant = e->all_tenants ? NULL : e->tenant;
        q.one_launch = e->one_launch;
        q.done_gseq = e->done_gseq;
        q.live_at = e->live_at;
        r = server_feed_read(e->s->feed, &e->after, &q, SSE_BATCH, &e->pending, &e->len, &e->cap);
        if (r < 0)
            return sluice_errorf(err, SLUICE_ENOMEM, "event stream: out of memory");
        e->done_gseq = q.done_gseq;
        e->live_at = q.live_at;
    }
    return r == 1 ? SLUICE_OK : sse_fill_store(e, err);
}

static ssize_t sse_reader(void *cls, char *buf, size_t max)
{
    sse_t *e = cls;
    size_t n;

    if (e->off == e->len) {
        sluice_error_t err = SLUICE_ERROR_INIT;

        if (e->gone || (e->one_launch && e->done_gseq > 0 && e->after >= e->done_gseq))
            return ANSWER_STREAM_END;
        switch (sse_fill(e, &err)) {
        case SLUICE_OK:
            break;
        case SLUICE_ENOTFOUND:
            return ANSWER_STREAM_END; /* pruned while watched */
        default:
            return ANSWER_STREAM_ERROR;
        }
        if (e->len == 0) {
            if (e->one_launch && e->done_gseq > 0 && e->after >= e->done_gseq)
                return ANSWER_STREAM_END;
            /* A comment now and then keeps proxies and idle timers happy. */
            if (++e->idle >= 40) {
                static const char ka[] = ": keep-alive\n\n";
                e->idle = 0;
                if (max >= sizeof(ka) - 1) {
                    memcpy(buf, ka, sizeof(ka) - 1);
                    return (ssize_t)(sizeof(ka) - 1);
                }
            }
            return ANSWER_STREAM_WAIT;
        }
    }
    e->idle = 0;
    n = e->len - e->off < max ? e->len - e->off : max;
    memcpy(buf, e->pending + e->off, n);
    e->off += n;
    return (ssize_t)n;
}

static void bad_query(answer_t *out, const char *field, const char *detail)
{
    answer_problem_ex(out, 400, "invalid-query", "Invalid query", detail, field, NULL);
}

/* Where a stream of `rq` starts (see Notes) into *from; 0, or -1 with a
 * 400 in `out`. */
static int sse_start(sluice_server_t *s, const req_t *rq, int64_t *from, answer_t *out)
{
    const char *last = req_header(rq, "Last-Event-ID");
    const char *after = req_arg(rq, "after");
    const char *since = req_arg(rq, "since");
    long long n;

    *from = 0;
    if (since != NULL && strcmp(since, "now") != 0) {
        bad_query(out, "since", "since must be `now`");
        return -1;
    }
    if (since != NULL && after != NULL) {
        bad_query(out, "since", "since and after cannot be combined");
        return -1;
    }
    if (last || after) {
        n = server_parse_count(last ? last : after);
        if (n < 0) {
            bad_query(out, last ? "Last-Event-ID" : "after",
                      "Last-Event-ID and after must be non-negative integers");
            return -1;
        }
        *from = n;
        return 0;
    }
    if (since != NULL) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_err rc;

        pthread_mutex_lock(&s->rmu);
        rc = sluice_store_last_gseq(s->rstore, from, &err);
        pthread_mutex_unlock(&s->rmu);
        if (rc != SLUICE_OK) {
            answer_error(out, &err);
            return -1;
        }
    }
    return 0;
}

static void sse_answer(answer_t *out, sse_t *e)
{
    /* One launch's events: woken when that launch has news (server.c). */
    uint64_t key = e->launch_id[0] != '\0' ? server_feed_key(e->launch_id) : 0;

    /* The first stream of an unwatched service catches the feed up (the
     * ticker reads it only while streams are open): its first read then
     * finds the feed current instead of waiting for a tick. */
    e->counted = 1;
    if (atomic_fetch_add(&e->s->streams, 1) == 0)
        server_ticker_catch_up(e->s);
    answer_stream(out, 200, 16 * 1024, sse_reader, e, sse_free);
    out->stream_key = key;
    answer_header(out, "Content-Type", "text/event-stream");
    answer_header(out, "Cache-Control", "no-store");
}

/* Copy filter value `v` of query parameter `name` into dst (size 136);
 * 0, or -1 with a 400 in `out` when it is empty or not a clean name. */
static int filter_value(const char *name, const char *v, char *dst, answer_t *out)
{
    char detail[160];

    if (v == NULL)
        return 0;
    if (v[0] == '\0' || strlen(v) > 128 || !server_valid_id(v, strlen(v))) {
        snprintf(detail, sizeof(detail),
                 "%s must be 1 to 128 characters from [A-Za-z0-9._-] (a %s name)", name,
                 strcmp(name, "site") == 0 ? "site" : "launch");
        bad_query(out, name, detail);
        return -1;
    }
    snprintf(dst, 136, "%s", v);
    return 0;
}

/* Copy the state filter of `rq` into e->state; 0, or -1 with a 400 in
 * `out` when it names no launcher state. */
static int state_filter(const req_t *rq, sse_t *e, answer_t *out)
{
    const char *v = req_arg(rq, "state");
    sluice_fsm_state st;

    if (v == NULL)
        return 0;
    if (!sluice_fsm_state_from_name(v, &st)) {
        bad_query(out, "state", "state must be a launcher state name such as RUNNING or DONE");
        return -1;
    }
    snprintf(e->state, sizeof(e->state), "%s", sluice_fsm_state_name(st));
    return 0;
}

void sse_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    int64_t from = 0;
    sse_t *e;

    if ((e = calloc(1, sizeof(*e))) == NULL)
        return; /* no answer */
    if (filter_value("launch_id", req_arg(rq, "launch_id"), e->launch_id, out) != 0 ||
        state_filter(rq, e, out) != 0 ||
        filter_value("site", req_arg(rq, "site"), e->site, out) != 0 ||
        sse_start(s, rq, &from, out) != 0) {
        free(e);
        return;
    }
    /* The caller's tenant's events only (an admin's: every tenant's); a
     * launch_id filter is a launch of that tenant. */
    e->all_tenants = server_tenant_filter(&rq->caller) == NULL;
    snprintf(e->tenant, sizeof(e->tenant), "%s", rq->caller.tenant);
    if (e->launch_id[0] != '\0') {
        char key[136];

        if (server_tenant_key(&rq->caller, e->launch_id, key, sizeof(key)) != 0) {
            bad_query(out, "launch_id",
                      "launch_id must be 1 to 128 characters from [A-Za-z0-9._-] (a launch name)");
            free(e);
            return;
        }
        snprintf(e->launch_id, sizeof(e->launch_id), "%s", key);
    }
    e->s = s;
    e->after = from;
    sse_answer(out, e);
}

void sse_launch_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int64_t from = 0;
    sse_t *e;

    if (sse_start(s, rq, &from, out) != 0)
        return;
    if ((e = calloc(1, sizeof(*e))) == NULL)
        return; /* no answer */
    e->s = s;
    e->after = from;
    e->one_launch = 1;
    e->all_tenants = 1; /* the route named the launch by the caller's key */
    snprintf(e->launch_id, sizeof(e->launch_id), "%s", rq->id);
    /* The first batch now, from the store: an unknown launch is a 404, not
     * an empty stream. */
    if (sse_fill_store(e, &err) != SLUICE_OK) {
        sse_free(e);
        answer_error(out, &err);
        return;
    }
    sse_answer(out, e);
}
