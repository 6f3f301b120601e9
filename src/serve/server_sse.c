/* SPDX-License-Identifier: Apache-2.0 */
/* server_sse.c - the event stream of `sluice serve`: every event of the
 * store after a mark, as `id: <gseq>`, `event: <name>`, `data: <json>`
 * frames, read in batches through the server's own store connection.
 *
 * Notes:
 * - When nothing is new the stream returns ANSWER_STREAM_WAIT (server.c
 *   suspends the connection until the ticker); after 40 such waits it sends
 *   a `: keep-alive` comment so proxies and idle timers keep it open.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/store.h>

#include "server_sse.h"
#include "server_util.h"

#define SSE_BATCH 100

typedef struct {
    sluice_server_t *s;
    int64_t after;
    char *pending;
    size_t len, off;
    unsigned idle;
} sse_t;

static void sse_free(void *cls)
{
    sse_t *e = cls;

    free(e->pending);
    free(e);
}

/* Frame the next batch of events after e->after into e->pending; 0, or -1
 * when the store could not be read. */
static int sse_fill(sse_t *e)
{
    json_t *evs = NULL, *ev;
    int64_t next = e->after;
    size_t i, cap = 0;
    sluice_err rc;

    pthread_mutex_lock(&e->s->rmu);
    rc = sluice_store_events_since(e->s->rstore, e->after, SSE_BATCH, &evs, &next, NULL);
    pthread_mutex_unlock(&e->s->rmu);
    if (rc != SLUICE_OK)
        return -1;
    free(e->pending);
    e->pending = NULL;
    e->len = e->off = 0;
    json_array_foreach(evs, i, ev)
    {
        char *data = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
        const char *name = json_string_value(json_object_get(ev, "name"));
        size_t need;
        int w;

        if (data == NULL)
            break;
        need = strlen(data) + (name ? strlen(name) : 0) + 64;
        if (e->len + need > cap) {
            char *np = realloc(e->pending, cap + need + 4096);
            if (np == NULL) {
                free(data);
                break;
            }
            e->pending = np;
            cap += need + 4096;
        }
        w = snprintf(e->pending + e->len, cap - e->len, "id: %" PRId64 "\nevent: %s\ndata: %s\n\n",
                     (int64_t)json_integer_value(json_object_get(ev, "gseq")),
                     name ? name : "event", data);
        free(data);
        if (w < 0)
            break;
        e->len += (size_t)w;
        e->after = json_integer_value(json_object_get(ev, "gseq"));
    }
    json_decref(evs);
    if (e->len == 0)
        e->after = next > e->after ? next : e->after;
    return 0;
}

static ssize_t sse_reader(void *cls, char *buf, size_t max)
{
    sse_t *e = cls;
    size_t n;

    if (e->off == e->len) {
        if (sse_fill(e) != 0)
            return ANSWER_STREAM_ERROR;
        if (e->len == 0) {
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

void sse_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    const char *last = req_header(rq, "Last-Event-ID");
    const char *after = req_arg(rq, "after");
    long long from = 0;
    sse_t *e;

    if (last || after) {
        from = server_parse_count(last ? last : after);
        if (from < 0) {
            answer_problem_ex(out, 400, "invalid-query", "Invalid query",
                              "Last-Event-ID and after must be non-negative integers",
                              last ? "Last-Event-ID" : "after", NULL);
            return;
        }
    }
    if ((e = calloc(1, sizeof(*e))) == NULL)
        return; /* no answer */
    e->s = s;
    e->after = from;
    answer_stream(out, 200, 16 * 1024, sse_reader, e, sse_free);
    answer_header(out, "Content-Type", "text/event-stream");
    answer_header(out, "Cache-Control", "no-store");
}
