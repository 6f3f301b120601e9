/* SPDX-License-Identifier: Apache-2.0 */
/* server_wake.h - asking for waiting event streams to be resumed now (not
 * installed).  The ticker in server.c does the resuming (it alone calls
 * libmicrohttpd); this file only signals it, so the
 * launcher's thread, the metrics hook and the request handlers can ask
 * without calling up into server.c.
 */
#ifndef SLUICE_SERVER_WAKE_H
#define SLUICE_SERVER_WAKE_H

struct sluice_server;

/* A commit happened (a launcher transition or cycle, a POST or DELETE):
 * waiting streams should look now instead of at the next tick.  Any
 * thread; cheap (a count and a signal; the ticker serves a burst of wakes
 * as one).  NULL-safe. */
void server_wake_streams(struct sluice_server *s);

/* server_wake_streams(arg) as the store's commit callback
 * (sluice_store_on_commit): every event the service's own handle commits
 * wakes the streams, not only a launcher transition or cycle. */
void server_wake_on_commit(void *arg);

#endif /* SLUICE_SERVER_WAKE_H */
