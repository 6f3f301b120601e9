/* SPDX-License-Identifier: Apache-2.0 */
/* server_ticker.h - the ticker thread of `sluice serve` (server_ticker.c)
 * (internal).  It resumes streams through s->resume_locked (server.c):
 * with s->wait_mu held, every waiting stream (keys NULL), or those that
 * look at every round and those of the launches in keys[0..n) (sorted,
 * server_feed_keys_after()). */
#ifndef SLUICE_SERVER_TICKER_H
#define SLUICE_SERVER_TICKER_H

#include <stddef.h>
#include <stdint.h>

#include "server_int.h"

/* The ticker thread's body (pthread_create with the server as `arg`); it
 * returns once s->stopping is set and it is woken. */
void *server_ticker_main(void *arg);

/* Read what is new into the event feed now (what a round does; a failure
 * is logged once until a read works again).  The first event stream to
 * open calls it: the ticker reads the feed only while streams are open. */
void server_ticker_catch_up(sluice_server_t *s);

#endif /* SLUICE_SERVER_TICKER_H */
