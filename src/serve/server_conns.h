/* SPDX-License-Identifier: Apache-2.0 */
/* server_conns.h - the open connections of each listener of `sluice serve`
 * (not installed): those still sending their first request head, counted
 * apart from the others, bounded in number and in time.
 *
 * Notes:
 * - A connection counts as a head from its accept until its first request
 *   head is whole (server.c calls conns_head_done); an answer to a request
 *   without a caller closes its connection (server.c), so every connection
 *   past its first request belongs to a caller.
 * - A head is closed by shutdown(2) on its socket, never close(2): the
 *   owner of the descriptor (libmicrohttpd) sees the end of the stream and
 *   closes the connection itself.  conns_closed runs before the descriptor
 *   is closed (libmicrohttpd's notification order), and the list is
 *   walked under li->conn_mu, so a shutdown never reaches a reused
 *   descriptor.
 */
#ifndef SLUICE_SERVER_CONNS_H
#define SLUICE_SERVER_CONNS_H

#include "server_int.h"

typedef struct server_conn server_conn_t;

/* A connection accepted by `li` on `fd` (a new record; NULL when out of
 * memory, and then the socket is shut down).  When li already holds
 * max_heads heads the oldest one is shut down to make room, so slow heads
 * cannot keep a new client out. */
server_conn_t *conns_opened(listener_t *li, int fd, unsigned max_heads);
/* Its first request head is whole: no longer a head (idempotent,
 * NULL-safe). */
void conns_head_done(server_conn_t *c);
/* Closed: uncounted and freed (NULL-safe). */
void conns_closed(server_conn_t *c);
/* The open connections of `li` past their first head. */
unsigned conns_established(listener_t *li);
/* Shut down every head of `li` older than timeout_s seconds. */
void conns_sweep(listener_t *li, unsigned timeout_s);

#endif /* SLUICE_SERVER_CONNS_H */
