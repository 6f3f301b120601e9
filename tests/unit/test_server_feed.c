/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_feed.c - the shared feed of recent events behind the event
 * streams (server_feed.c): its ring over a bare store (catch-up in
 * batches, eviction by count and bytes, filters, where a launch's stream
 * ends, a prune), then over `sluice serve` on 127.0.0.1:<any>: a stream
 * behind the feed reads the store and misses nothing, its frames are the
 * feed's byte for byte, and many concurrent streams each get every event
 * once; a plain append through the service's store handle wakes waiting
 * streams (the store's commit callback).  Only loopback traffic. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/server.h>
#include <sluice/sluice.h>
#include <sluice/store.h>

#include "http_client.h"
#include "serve/server_feed.h"
#include "server_fixture.h"
#include "store_backend.h"
#include "sluice_assert.h"
#include "store_case.h"

/* ---- the ring over a bare store ---------------------------------------- */

static char tmp[128];
static sluice_store_t *st;

static void store_setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    strcpy(tmp, "/tmp/sluice-feed-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    store_backend_setup();
    cr_assert_sluice_ok(store_backend_open(&st, tmp, &err), &err);
}

static void store_teardown(void)
{
    char cmd[256];

    sluice_store_close(st);
    store_backend_teardown();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(server_feed, .init = store_setup, .fini = store_teardown, .timeout = 60);

static void make(const char *id)
{
    store_case_make_launch(st, id, "site-1");
}

static void move(const char *id, const char *state)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

    sum.state = state;
    sum.terminal = strcmp(state, "DONE") == 0;
    cr_assert_sluice_ok(
        sluice_store_append_event_and_update(st, id, "moved", NULL, NULL, 0, &sum, NULL, &err),
        &err);
}

static void note(const char *id, const char *name)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(sluice_store_append_event(st, id, name, NULL, NULL, 0, NULL, &err), &err);
}

static int64_t last_gseq(sluice_store_t *s)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    int64_t g = 0;

    cr_assert_sluice_ok(sluice_store_last_gseq(s, &g, &err), &err);
    return g;
}

/* Catch the feed up as the ticker does. */
static void catch_up(server_feed_t *f)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(server_feed_catch_up(f, st, NULL, &err), &err);
}

/* The `id:` values of the frames in text[0..len), into ids (at most max);
 * their count. */
static size_t frame_ids(const char *text, size_t len, int64_t *ids, size_t max)
{
    size_t n = 0, i;

    for (i = 0; i + 4 <= len; i++) {
        if ((i == 0 || text[i - 1] == '\n') && strncmp(text + i, "id: ", 4) == 0) {
            cr_assert_lt(n, max);
            ids[n++] = strtoll(text + i + 4, NULL, 10);
        }
    }
    return n;
}

/* server_feed_read, then a '\0' after the text (the tests read it as a
 * string). */
static int rd(server_feed_t *f,
              int64_t *after,
              feed_query_t *q,
              size_t max,
              char **buf,
              size_t *len,
              size_t *cap)
{
    int r = server_feed_read(f, after, q, max, buf, len, cap);

    if (*len + 1 > *cap) {
        cr_assert_not_null(*buf = realloc(*buf, *len + 1));
        *cap = *len + 1;
    }
    (*buf)[*len] = '\0';
    return r;
}

/* The frames the store gives for the events after `after` (all of them),
 * as the feed frames them. */
static char *store_frames(int64_t after, int64_t upto)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL, *ev;
    char *buf = NULL;
    size_t len = 0, cap = 0, i;

    cr_assert_sluice_ok(sluice_store_events_since(st, after, 10000, &evs, NULL, &err), &err);
    json_array_foreach(evs, i, ev)
    {
        if (json_integer_value(json_object_get(ev, "gseq")) > upto)
            break;
        cr_assert_eq(server_feed_frame(ev, &buf, &len, &cap), 0);
    }
    json_decref(evs);
    if (buf == NULL)
        buf = calloc(1, 1);
    else
        buf[len] = '\0';
    return buf;
}

Test(server_feed, catch_up_keeps_store_frames_and_evicts_the_oldest)
{
    server_feed_t *f;
    feed_query_t q;
    char *buf = NULL, *want;
    size_t len = 0, cap = 0, n;
    int64_t after, start, ids[64];
    int i;

    make("a");
    start = last_gseq(st);
    f = server_feed_new(start, 8, 0);
    cr_assert_not_null(f);
    for (i = 0; i < 20; i++)
        note("a", "tick");
    catch_up(f);
    cr_assert_eq(server_feed_head(f), last_gseq(st));
    /* Only the newest 8 are kept: a stream at the start is behind. */
    memset(&q, 0, sizeof(q));
    after = start;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 0);
    cr_assert_eq(len, 0);
    after = last_gseq(st) - 8;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    cr_assert_eq(after, last_gseq(st));
    n = frame_ids(buf, len, ids, 64);
    cr_assert_eq(n, 8);
    /* The frames are the store's, byte for byte. */
    want = store_frames(last_gseq(st) - 8, last_gseq(st));
    cr_assert_eq(len, strlen(want));
    cr_assert(memcmp(buf, want, len) == 0, "%.*s\n---\n%s", (int)len, buf, want);
    free(want);
    /* max_events caps one read; the rest comes next time. */
    len = 0;
    after = last_gseq(st) - 8;
    cr_assert_eq(rd(f, &after, &q, 3, &buf, &len, &cap), 1);
    cr_assert_eq(frame_ids(buf, len, ids, 64), 3);
    cr_assert_eq(after, ids[2]);
    /* Nothing new: served (empty), the mark stays at the head. */
    len = 0;
    after = last_gseq(st);
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    cr_assert_eq(len, 0);
    cr_assert_eq(after, last_gseq(st));
    /* Ahead of the head (a future Last-Event-ID): the store decides. */
    after = last_gseq(st) + 5;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 0);
    free(buf);
    server_feed_free(f);
}

Test(server_feed, a_byte_cap_keeps_at_least_the_newest)
{
    server_feed_t *f;
    feed_query_t q;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int64_t after, ids[8];

    make("a");
    f = server_feed_new(last_gseq(st), 0, 10); /* smaller than any frame */
    cr_assert_not_null(f);
    note("a", "one");
    note("a", "two");
    catch_up(f);
    memset(&q, 0, sizeof(q));
    after = last_gseq(st) - 2;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 0);
    after = last_gseq(st) - 1;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    cr_assert_eq(frame_ids(buf, len, ids, 8), 1);
    cr_assert_eq(ids[0], last_gseq(st));
    free(buf);
    server_feed_free(f);
}

Test(server_feed, a_backlog_comes_in_whole_up_to_the_ring_size)
{
    server_feed_t *f;
    feed_query_t q;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int64_t after, ids[1024];
    int i;

    make("a");
    f = server_feed_new(last_gseq(st), 1000, 0);
    cr_assert_not_null(f);
    /* more than one store batch (256) */
    for (i = 0; i < 600; i++)
        note("a", "burst");
    catch_up(f);
    cr_assert_eq(server_feed_head(f), last_gseq(st));
    memset(&q, 0, sizeof(q));
    after = last_gseq(st) - 600;
    cr_assert_eq(rd(f, &after, &q, 1000, &buf, &len, &cap), 1);
    cr_assert_eq(frame_ids(buf, len, ids, 1024), 600);
    /* more than the ring: the newest 1,000 are kept, the rest is behind */
    for (i = 0; i < 1500; i++)
        note("a", "flood");
    catch_up(f);
    catch_up(f);
    cr_assert_eq(server_feed_head(f), last_gseq(st));
    len = 0;
    after = last_gseq(st) - 1001;
    cr_assert_eq(rd(f, &after, &q, 1000, &buf, &len, &cap), 0);
    after = last_gseq(st) - 1000;
    cr_assert_eq(rd(f, &after, &q, 1000, &buf, &len, &cap), 1);
    cr_assert_eq(frame_ids(buf, len, ids, 1024), 1000);
    free(buf);
    server_feed_free(f);
}

Test(server_feed, filters_on_launch_and_state)
{
    server_feed_t *f;
    feed_query_t q;
    char *buf = NULL;
    size_t len = 0, cap = 0, n, i;
    int64_t after, start, ids[32];

    make("a");
    make("b");
    start = last_gseq(st);
    f = server_feed_new(start, 0, 0);
    cr_assert_not_null(f);
    move("a", "SUBMITTING");
    move("b", "SUBMITTING");
    move("a", "PENDING");
    note("b", "noted");
    move("b", "RUNNING");
    catch_up(f);
    memset(&q, 0, sizeof(q));
    q.launch_id = "b";
    after = start;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    n = frame_ids(buf, len, ids, 32);
    cr_assert_eq(n, 3);
    cr_assert_eq(ids[0], start + 2);
    cr_assert_eq(ids[1], start + 4);
    cr_assert_eq(ids[2], start + 5);
    for (i = 0; i < n; i++)
        cr_assert_not_null(strstr(buf, "\"launch_id\":\"b\""));
    cr_assert_null(strstr(buf, "\"launch_id\":\"a\""));
    /* What did not match is skipped for good: the mark is the head. */
    cr_assert_eq(after, last_gseq(st));
    len = 0;
    memset(&q, 0, sizeof(q));
    q.state = "SUBMITTING";
    after = start;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    n = frame_ids(buf, len, ids, 32);
    /* a's SUBMITTING, b's SUBMITTING and the note b got while SUBMITTING */
    cr_assert_eq(n, 3);
    cr_assert_eq(ids[0], start + 1);
    cr_assert_eq(ids[1], start + 2);
    cr_assert_eq(ids[2], start + 4);
    free(buf);
    server_feed_free(f);
}

/* A launch's stream from `after` (live at `live_at`) read in one go: its
 * frames' ids into ids, their count; *done the DONE event's gseq. */
static size_t launch_read(server_feed_t *f,
                          const char *id,
                          int64_t after,
                          int64_t live_at,
                          int64_t *done,
                          int64_t *ids,
                          size_t max)
{
    feed_query_t q;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    memset(&q, 0, sizeof(q));
    q.launch_id = id;
    q.one_launch = 1;
    q.done_gseq = *done;
    q.live_at = live_at;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    n = frame_ids(buf, len, ids, max);
    free(buf);
    *done = q.done_gseq;
    return n;
}

Test(server_feed, a_launch_stream_ends_at_its_done_event)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    server_feed_t *f;
    json_t *evs = NULL;
    int64_t start, done = 0, store_done = 0, ids[32];
    size_t n;

    make("a");
    make("b");
    start = last_gseq(st);
    f = server_feed_new(start, 0, 0);
    cr_assert_not_null(f);
    move("a", "SUBMITTING");
    move("b", "SUBMITTING");
    move("a", "DONE");
    note("a", "archived"); /* bookkeeping after DONE carries DONE too */
    note("b", "noted");
    note("a", "archived");
    catch_up(f);
    cr_assert_sluice_ok(
        sluice_store_launch_events_after(st, "a", start, 0, &evs, &store_done, &err), &err);
    json_decref(evs);
    cr_assert_eq(store_done, start + 3);
    n = launch_read(f, "a", start, start, &done, ids, 32);
    cr_assert_eq(n, 2);
    cr_assert_eq(ids[0], start + 1);
    cr_assert_eq(ids[1], start + 3);
    cr_assert_eq(done, store_done, "the feed's DONE event is the store's");
    /* A stream that already had the SUBMITTING event, still knowing the
     * launch live from the start, ends at DONE too. */
    done = 0;
    n = launch_read(f, "a", start + 1, start, &done, ids, 32);
    cr_assert_eq(n, 1);
    cr_assert_eq(ids[0], start + 3);
    cr_assert_eq(done, store_done);
    /* One past DONE (a reconnect) that knew it live only at the start:
     * nothing more, and it learns where the stream ended. */
    done = 0;
    n = launch_read(f, "a", start + 4, start, &done, ids, 32);
    cr_assert_eq(n, 0);
    cr_assert_eq(done, store_done);
    /* With DONE known from the store, nothing after it either. */
    done = store_done;
    n = launch_read(f, "a", start, start, &done, ids, 32);
    cr_assert_eq(n, 2);
    cr_assert_eq(ids[1], store_done);
    server_feed_free(f);
}

Test(server_feed, a_prune_empties_the_ring)
{
    server_feed_t *f;
    feed_query_t q;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int64_t after, start;

    make("a");
    start = last_gseq(st);
    f = server_feed_new(start, 0, 0);
    cr_assert_not_null(f);
    note("a", "one");
    catch_up(f);
    server_feed_forget(f);
    cr_assert_eq(server_feed_head(f), last_gseq(st));
    memset(&q, 0, sizeof(q));
    after = start;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 0);
    note("a", "two");
    catch_up(f);
    after = last_gseq(st) - 1;
    cr_assert_eq(rd(f, &after, &q, 100, &buf, &len, &cap), 1);
    cr_assert_not_null(strstr(buf, "event: two\n"));
    free(buf);
    server_feed_free(f);
}

/* The ticker wakes a one-launch stream only when its launch has news: the
 * keys are those of the launches with events after the given gseq. */
Test(server_feed, keys_name_the_launches_with_news_and_overflow_wakes_all)
{
    server_feed_t *f;
    uint64_t keys[8], want[2];
    int64_t start, mid;

    make("a");
    make("b");
    make("c");
    start = last_gseq(st);
    f = server_feed_new(start, 4, 0);
    cr_assert_not_null(f);
    cr_assert_neq(server_feed_key("a"), 0);
    cr_assert_neq(server_feed_key("a"), server_feed_key("b"));
    note("a", "one");
    note("b", "one");
    note("a", "two");
    catch_up(f);
    cr_assert_eq(server_feed_keys_after(f, start, keys, 8), 2);
    want[0] = server_feed_key("a");
    want[1] = server_feed_key("b");
    if (want[0] > want[1]) {
        uint64_t t = want[0];
        want[0] = want[1];
        want[1] = t;
    }
    cr_assert(keys[0] == want[0] && keys[1] == want[1], "sorted, each launch once, no c");
    mid = last_gseq(st);
    cr_assert_eq(server_feed_keys_after(f, mid, keys, 8), 0, "nothing after the head");
    cr_assert_eq(server_feed_keys_after(f, start, keys, 1), 2, "more than max: max + 1");
    /* More events than the ring holds: the oldest after `mid` are gone,
     * so every stream is woken. */
    for (int i = 0; i < 5; i++)
        note("c", "many");
    catch_up(f);
    cr_assert_eq(server_feed_keys_after(f, mid, keys, 8), 9);
    cr_assert_eq(server_feed_keys_after(f, last_gseq(st) - 1, keys, 8), 1);
    cr_assert_eq(keys[0], server_feed_key("c"));
    /* After a prune the ring holds nothing before the head. */
    mid = last_gseq(st) - 1;
    server_feed_forget(f);
    cr_assert_eq(server_feed_keys_after(f, mid, keys, 8), 9);
    server_feed_free(f);
}

/* ---- over `sluice serve` ----------------------------------------------- */

static server_fixture_t fx;

static void serve_setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

static void serve_teardown(void)
{
    cr_assert_eq(sfx_stop(&fx), 0);
}

TestSuite(server_feed_serve, .init = serve_setup, .fini = serve_teardown, .timeout = 120);

static void post(const char *id)
{
    cr_assert_eq(sfx_post(&fx, id), 201, "POST %s", id);
}

static void step(int n)
{
    while (n-- > 0)
        cr_assert_sluice_ok(sluice_server_step(fx.server, NULL),
                            &(sluice_error_t)SLUICE_ERROR_INIT);
}

static int terminal(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *l = NULL;
    int t;

    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, id, &l, &err), &err);
    t = json_is_true(json_object_get(l, "terminal"));
    json_decref(l);
    return t;
}

/* Cancel every launch in ids and step the launcher until all are
 * terminal. */
static void finish_all(const char *const *ids, size_t n)
{
    hc_response_t r;
    char path[256];
    size_t i, left;
    int k;

    for (i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/v1/launches/%s", ids[i]);
        cr_assert_eq(hc_request(fx.port, "DELETE", path, SFX_AUTH, NULL, 0, &r), 0);
        cr_assert_eq(r.status, 202, "%s", r.body);
        hc_response_clear(&r);
    }
    for (k = 0; k < 40; k++) {
        step(1);
        for (i = 0, left = 0; i < n; i++)
            left += !terminal(ids[i]);
        if (left == 0)
            return;
    }
    cr_assert_fail("launches did not finish");
}

/* The data of a chunked body (`raw`, NUL-terminated; a last chunk cut
 * short keeps what came), as a new string. */
static char *dechunk(const char *raw)
{
    char *out = malloc(strlen(raw) + 1), *end;
    size_t n = 0, size, have;

    cr_assert_not_null(out);
    for (;;) {
        size = (size_t)strtoul(raw, &end, 16);
        if (end == raw || strncmp(end, "\r\n", 2) != 0 || size == 0)
            break;
        raw = end + 2;
        have = strlen(raw);
        if (have > size)
            have = size;
        memcpy(out + n, raw, have);
        n += have;
        raw += have;
        if (have < size || strncmp(raw, "\r\n", 2) != 0)
            break;
        raw += 2;
    }
    out[n] = '\0';
    return out;
}

/* Read an open stream until it ends, until `needle` was seen in its data
 * (NULL: the end only) or until nothing came for timeout_ms; the data
 * (caller frees). */
static char *drain_for(int fd, const char *needle, int timeout_ms)
{
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap), *body = NULL;
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t k;

    cr_assert_not_null(buf);
    for (;;) {
        const char *head;

        if (n + 4096 > cap) {
            cap *= 2;
            cr_assert_not_null(buf = realloc(buf, cap));
        }
        buf[n] = '\0';
        if (needle && (head = strstr(buf, "\r\n\r\n")) != NULL) {
            free(body);
            body = dechunk(head + 4);
            if (strstr(body, needle))
                break;
        }
        if (poll(&p, 1, timeout_ms) != 1 || (k = read(fd, buf + n, cap - n - 1)) <= 0)
            break;
        n += (size_t)k;
    }
    buf[n] = '\0';
    cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%.300s", buf);
    cr_assert_not_null(strstr(buf, "\r\n\r\n"));
    free(body);
    body = dechunk(strstr(buf, "\r\n\r\n") + 4);
    free(buf);
    return body;
}

static char *drain(int fd, const char *needle)
{
    return drain_for(fd, needle, 10000);
}

/* The gseqs the store has for `launch_id` (NULL: every launch) after
 * `after`, up to `upto`, into ids; their count. */
static size_t
store_ids(const char *launch_id, int64_t after, int64_t upto, int64_t *ids, size_t max)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_event_filter_t flt = {0};
    json_t *evs = NULL, *ev;
    size_t i, n = 0;

    flt.launch_id = launch_id;
    cr_assert_sluice_ok(
        sluice_store_events_filtered(fx.store, after, 10000, &flt, &evs, NULL, &err), &err);
    json_array_foreach(evs, i, ev)
    {
        int64_t g = (int64_t)json_integer_value(json_object_get(ev, "gseq"));

        if (g > upto)
            break;
        cr_assert_lt(n, max);
        ids[n++] = g;
    }
    json_decref(evs);
    return n;
}

/* The frames' ids in body (chunked transfer framing is none: the server
 * streams raw), those up to `upto`. */
static size_t body_ids(const char *body, int64_t upto, int64_t *ids, size_t max)
{
    size_t n = frame_ids(body, strlen(body), ids, max);

    while (n > 0 && ids[n - 1] > upto)
        n--;
    return n;
}

static void
expect_same(const int64_t *got, size_t ng, const int64_t *want, size_t nw, const char *w)
{
    size_t i;

    cr_assert_eq(ng, nw, "%s: %zu events, the store has %zu", w, ng, nw);
    for (i = 0; i < nw; i++)
        cr_assert_eq(got[i], want[i], "%s: event %zu is gseq %lld, the store's %lld", w, i,
                     (long long)got[i], (long long)want[i]);
}

Test(server_feed_serve, many_streams_each_get_every_event_once)
{
    static const char *const ids[] = {"m-0", "m-1", "m-2", "m-3", "m-4", "m-5"};
    enum { NL = 6, PER = 5, NS = NL * PER + NL + 2 };
    int fds[NS];
    char path[256], needle[64];
    int64_t mark, last, got[512], want[512], done;
    size_t i, ng, nw;

    for (i = 0; i < NL; i++)
        post(ids[i]);
    step(1);
    mark = last_gseq(fx.store);
    /* PER watchers of each launch, one filtered /v1/events per launch, two
     * of every event: more streams than worker threads. */
    for (i = 0; i < NS; i++) {
        if (i < NL * PER)
            snprintf(path, sizeof(path), "/v1/launches/%s/events?after=%lld", ids[i % NL],
                     (long long)mark);
        else if (i < NL * PER + NL)
            snprintf(path, sizeof(path), "/v1/events?launch_id=%s&after=%lld", ids[i % NL],
                     (long long)mark);
        else
            snprintf(path, sizeof(path), "/v1/events?after=%lld", (long long)mark);
        cr_assert_geq(fds[i] = hc_open_get(fx.port, path, SFX_AUTH), 0);
    }
    usleep(200 * 1000);
    step(2);
    finish_all(ids, NL);
    last = last_gseq(fx.store);
    for (i = 0; i < NS; i++) {
        const char *id = i < NL * PER + NL ? ids[i % NL] : NULL;
        int64_t upto = last;
        char *body;

        if (i < NL * PER) {
            json_t *evs = NULL;
            sluice_error_t err = SLUICE_ERROR_INIT;

            cr_assert_sluice_ok(
                sluice_store_launch_events_after(fx.store, id, mark, 0, &evs, &done, &err), &err);
            json_decref(evs);
            cr_assert_gt(done, mark);
            upto = done;
            body = drain(fds[i], NULL); /* the stream ends by itself */
        } else {
            if (id != NULL) {
                nw = store_ids(id, mark, last, want, 512);
                cr_assert_gt(nw, 0);
                upto = want[nw - 1];
            }
            snprintf(needle, sizeof(needle), "id: %lld\n", (long long)upto);
            body = drain(fds[i], needle);
        }
        close(fds[i]);
        nw = store_ids(id, mark, upto, want, 512);
        ng = body_ids(body, upto, got, 512);
        snprintf(path, sizeof(path), "stream %zu (%s)", i, id ? id : "all");
        expect_same(got, ng, want, nw, path);
        if (i < NL * PER) {
            /* ended at DONE: nothing after it, however long we wait */
            ng = frame_ids(body, strlen(body), got, 512);
            cr_assert_eq(got[ng - 1], upto, "%s ends at its DONE event", path);
            cr_assert_not_null(strstr(body, "\"state\":\"DONE\""));
        }
        free(body);
    }
}

Test(server_feed_serve, a_stream_behind_the_feed_reads_the_store)
{
    static const char *const ids[] = {"b-0", "b-1"};
    sluice_server_opts_t so;
    sluice_server_t *late = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[256], needle[64], *body, *ring_body;
    int64_t mark, last, got[512], want[512];
    size_t ng, nw;
    int fd, ring_fd;
    uint16_t port;

    mark = last_gseq(fx.store);
    post(ids[0]);
    post(ids[1]);
    step(2);
    /* A watcher of everything on the first server (fed from its feed). */
    snprintf(path, sizeof(path), "/v1/events?after=%lld", (long long)mark);
    cr_assert_geq(ring_fd = hc_open_get(fx.port, path, SFX_AUTH), 0);
    /* A second server started now: its feed begins at the store's newest
     * event, so a stream from before that reads the store, then moves on
     * to the feed without a gap or a repeat. */
    sfx_server_opts(&fx, &so);
    so.listen = "127.0.0.1:0";
    so.tokens_file = fx.tokens;
    cr_assert_sluice_ok(sluice_server_new(&late, &so, &err), &err);
    port = sluice_server_port(late);
    snprintf(path, sizeof(path), "/v1/events?after=%lld", (long long)mark);
    cr_assert_geq(fd = hc_open_get(port, path, SFX_AUTH), 0);
    usleep(100 * 1000);
    finish_all(ids, 2);
    last = last_gseq(fx.store);
    snprintf(needle, sizeof(needle), "id: %lld\n", (long long)last);
    body = drain(fd, needle);
    ring_body = drain(ring_fd, needle);
    close(fd);
    close(ring_fd);
    nw = store_ids(NULL, mark, last, want, 512);
    ng = body_ids(body, last, got, 512);
    expect_same(got, ng, want, nw, "behind the feed");
    ng = body_ids(ring_body, last, got, 512);
    expect_same(got, ng, want, nw, "from the feed");
    /* The same frames, byte for byte, whichever way they came. */
    {
        const char *a = strstr(body, "id: "), *b = strstr(ring_body, "id: ");
        const char *ea = strstr(body, needle), *eb = strstr(ring_body, needle);

        cr_assert(a && b && ea && eb);
        cr_assert_eq(ea - a, eb - b, "%.*s\n---\n%.*s", (int)(ea - a), a, (int)(eb - b), b);
        cr_assert(memcmp(a, b, (size_t)(ea - a)) == 0, "%s\n---\n%s", a, b);
    }
    free(body);
    free(ring_body);
    /* A launch's stream from the start, on the late server: all from the
     * store, up to its DONE event. */
    snprintf(path, sizeof(path), "/v1/launches/%s/events", ids[1]);
    cr_assert_geq(fd = hc_open_get(port, path, SFX_AUTH), 0);
    body = drain(fd, NULL);
    close(fd);
    {
        json_t *evs = NULL;
        int64_t done = 0;

        cr_assert_sluice_ok(
            sluice_store_launch_events_after(fx.store, ids[1], 0, 0, &evs, &done, &err), &err);
        json_decref(evs);
        nw = store_ids(ids[1], 0, done, want, 512);
        ng = frame_ids(body, strlen(body), got, 512);
        expect_same(got, ng, want, nw, "launch stream behind the feed");
    }
    free(body);
    sluice_server_free(late);
}

/* ---- a commit wakes the streams ---------------------------------------- */

static void count_commit(void *arg)
{
    (*(int *)arg)++;
}

Test(server_feed, the_store_calls_its_commit_callback_after_each_append)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_append_t items[2];
    int calls = 0;

    make("a");
    sluice_store_on_commit(st, count_commit, &calls);
    note("a", "one");
    cr_assert_eq(calls, 1);
    memset(items, 0, sizeof(items));
    items[0].launch_id = "a";
    items[0].name = "two";
    items[1].launch_id = "a";
    items[1].name = "three";
    cr_assert_sluice_ok(sluice_store_append_many(st, items, 2, &err), &err);
    cr_assert_eq(calls, 2, "one commit, one call");
    /* A failed append commits nothing and calls nothing. */
    cr_assert_neq(sluice_store_append_event(st, "nope", "x", NULL, NULL, 0, NULL, &err), SLUICE_OK);
    cr_assert_eq(calls, 2);
    sluice_store_on_commit(st, NULL, NULL);
    note("a", "four");
    cr_assert_eq(calls, 2);
}

static void slow_ticker(sluice_server_opts_t *so, void *arg)
{
    (void)arg;
    so->follow_poll_ms = 20000;
}

static void wake_setup(void)
{
    sfx_opts_t o;
    char why[256];

    memset(&o, 0, sizeof(o));
    o.real_clock = true;
    o.tweak = slow_ticker;
    cr_assert_eq(sfx_start_with(&fx, &o, why, sizeof(why)), 0, "%s", why);
}

TestSuite(server_feed_wake, .init = wake_setup, .fini = serve_teardown, .timeout = 60);

/* The ticker is at 20 s: only the store's commit callback can bring an
 * event that is no launcher transition (a plain append through the
 * service's store handle) to a waiting stream within the 5 s drain. */
Test(server_feed_wake, a_plain_append_reaches_a_waiting_stream)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[128], *body;
    int fd;

    post("w-1");
    snprintf(path, sizeof(path), "/v1/launches/w-1/events?after=%lld",
             (long long)last_gseq(fx.store));
    cr_assert_geq(fd = hc_open_get(fx.port, path, SFX_AUTH), 0);
    usleep(300 * 1000); /* the stream is suspended by then */
    cr_assert_sluice_ok(
        sluice_store_append_event(fx.store, "w-1", "plain-note", NULL, "cli", 0, NULL, &err), &err);
    body = drain_for(fd, "event: plain-note\n", 5000);
    close(fd);
    cr_assert_not_null(strstr(body, "event: plain-note\n"), "%s", body);
    free(body);
}
