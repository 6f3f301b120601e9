/* SPDX-License-Identifier: Apache-2.0 */
/* server_ticker.c - the ticker thread of `sluice serve`: it reads what is
 * new into the event feed and resumes the waiting streams (through
 * server.c, the file that calls libmicrohttpd).
 *
 * Notes:
 * - A round runs at each tick (follow_poll_ms) and when a commit asks for
 *   one (server_wake_streams).  A tick resumes every waiting stream; a wake
 *   between ticks resumes the streams that look at every round and the
 *   one-launch streams of the launches with news in the round
 *   (answer_t.stream_key), so that a burst of commits does not make
 *   hundreds of idle streams look once per round.
 * - Each round also closes the request heads older than head_timeout_s
 *   (server_conns.c).
 * - The feed is read only while an event stream is open (s->streams): a
 *   service nobody watches builds no frames.  The stream that opens first
 *   catches the feed up before its first read (server_sse.c), so it never
 *   waits a tick for what happened while nobody watched.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <sluice/log.h>

#include "server_conns.h"
#include "server_feed.h"
#include "server_int.h"
#include "server_ticker.h"
#include "server_util.h"

#define WAKE_GAP_MS 2u    /* wakes closer together than this are served as one */
#define WAKE_KEYS_MAX 512 /* launches with news in one round; more: wake all */

/* Resume every waiting stream each follow_poll_ms, and at once when a
 * commit asks for it (server_wake_streams); wakes that come within
 * WAKE_GAP_MS of the last one are served together, so a burst of commits
 * costs each waiting stream one look, not one per commit.  Each round
 * first reads what is new into the event feed (one store query for all
 * the event streams, server_feed.c), then counts itself and resumes. */
/* Read what is new into the event feed; a failure is logged (once until a
 * read works again) and the round goes on. */
void server_ticker_catch_up(sluice_server_t *s)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (server_feed_catch_up(s->feed, s->rstore, &s->rmu, &err) == SLUICE_OK) {
        s->feed_failing = 0;
    } else if (!s->feed_failing) {
        s->feed_failing = 1;
        sluice_log(SLUICE_LOG_WARNING, "event feed: %s (streams wait for the next round)",
                   err.text);
    }
}

void *server_ticker_main(void *arg)
{
    sluice_server_t *s = arg;
    int64_t next_tick = server_clock_ms(CLOCK_MONOTONIC) + s->o.follow_poll_ms;
    uint64_t keys[WAKE_KEYS_MAX];
    int64_t head;
    size_t nk;

    pthread_mutex_lock(&s->wait_mu);
    while (!atomic_load(&s->stopping)) {
        int64_t now;

        if (!s->wake_due) {
            struct timespec ts;
            int64_t at = next_tick;
            ts.tv_sec = (time_t)(at / 1000);
            ts.tv_nsec = (long)(at % 1000) * 1000000L;
            pthread_cond_timedwait(&s->wake_cv, &s->wait_mu, &ts);
        }
        now = server_clock_ms(CLOCK_MONOTONIC);
        if (!s->wake_due && now < next_tick)
            continue;
        s->wake_due = 0;
        pthread_mutex_unlock(&s->wait_mu);
        head = server_feed_head(s->feed);
        /* Nobody reads the feed while no stream is open: its frames would
         * be built for nothing (one store read and a JSON frame per event,
         * for every launch); the first stream to open catches it up. */
        if (atomic_load(&s->streams) > 0)
            server_ticker_catch_up(s);
        /* Request heads past head_timeout_s (server_conns.h). */
        conns_sweep(&s->tcp_l, s->o.head_timeout_s);
        conns_sweep(&s->unix_l, s->o.head_timeout_s);
        /* A wake between ticks resumes only the streams of the launches
         * with news (and those that look at every round): with hundreds of
         * one-launch streams, a burst of commits would otherwise have each
         * of them look (and find nothing) once per round. */
        nk = now >= next_tick || s->feed_failing
                 ? WAKE_KEYS_MAX + 1
                 : server_feed_keys_after(s->feed, head, keys, WAKE_KEYS_MAX);
        pthread_mutex_lock(&s->wait_mu);
        atomic_fetch_add(&s->round_gen, 1);
        s->resume_locked(s, nk > WAKE_KEYS_MAX ? NULL : keys, nk);
        if (now >= next_tick)
            next_tick = now + s->o.follow_poll_ms;
        pthread_mutex_unlock(&s->wait_mu);
        server_sleep_ms(WAKE_GAP_MS);
        pthread_mutex_lock(&s->wait_mu);
    }
    pthread_mutex_unlock(&s->wait_mu);
    return NULL;
}
