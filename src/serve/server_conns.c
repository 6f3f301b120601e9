/* SPDX-License-Identifier: Apache-2.0 */
/* server_conns.c - the open connections of each listener of `sluice serve`:
 * connections still sending their first request head (a list, oldest
 * first) and the others, counted apart; heads past head_timeout_s, or past
 * max_connections of them, are shut down.  No libmicrohttpd call: server.c
 * passes the socket in (see server_conns.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <sluice/log.h>

#include "server_conns.h"
#include "server_util.h"

struct server_conn {
    listener_t *li;
    server_conn_t *prev, *next; /* in li's heads, under li->conn_mu */
    int fd;
    int head;         /* 1: in li's heads */
    int64_t since_ms; /* accepted (CLOCK_MONOTONIC) */
};

/* With li->conn_mu held: out of the heads list. */
static void unlink_head(server_conn_t *c)
{
    listener_t *li = c->li;

    if (!c->head)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        li->heads_first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        li->heads_last = c->prev;
    c->prev = c->next = NULL;
    c->head = 0;
    li->n_heads--;
}

server_conn_t *conns_opened(listener_t *li, int fd, unsigned max_heads)
{
    server_conn_t *c = calloc(1, sizeof(*c));

    if (c == NULL) {
        shutdown(fd, SHUT_RDWR);
        return NULL;
    }
    c->li = li;
    c->fd = fd;
    c->head = 1;
    c->since_ms = server_clock_ms(CLOCK_MONOTONIC);
    pthread_mutex_lock(&li->conn_mu);
    if (li->n_heads >= max_heads && li->heads_first != NULL) {
        server_conn_t *old = li->heads_first;
        unlink_head(old);
        shutdown(old->fd, SHUT_RDWR);
        atomic_fetch_add(&li->s->head_evictions, 1);
    }
    c->prev = li->heads_last;
    if (li->heads_last)
        li->heads_last->next = c;
    else
        li->heads_first = c;
    li->heads_last = c;
    li->n_heads++;
    li->n_open++;
    pthread_mutex_unlock(&li->conn_mu);
    return c;
}

void conns_head_done(server_conn_t *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->li->conn_mu);
    unlink_head(c);
    pthread_mutex_unlock(&c->li->conn_mu);
}

void conns_closed(server_conn_t *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->li->conn_mu);
    unlink_head(c);
    c->li->n_open--;
    pthread_mutex_unlock(&c->li->conn_mu);
    free(c);
}

unsigned conns_established(listener_t *li)
{
    unsigned n;

    pthread_mutex_lock(&li->conn_mu);
    n = li->n_open - li->n_heads;
    pthread_mutex_unlock(&li->conn_mu);
    return n;
}

void conns_sweep(listener_t *li, unsigned timeout_s)
{
    int64_t cut = server_clock_ms(CLOCK_MONOTONIC) - (int64_t)timeout_s * 1000;
    unsigned n = 0;

    pthread_mutex_lock(&li->conn_mu);
    while (li->heads_first != NULL && li->heads_first->since_ms <= cut) {
        server_conn_t *c = li->heads_first;
        unlink_head(c);
        shutdown(c->fd, SHUT_RDWR);
        n++;
    }
    pthread_mutex_unlock(&li->conn_mu);
    if (n > 0) {
        atomic_fetch_add(&li->s->head_timeouts, n);
        sluice_log(SLUICE_LOG_INFO,
                   "http: %u connection%s on the %s listener sent no whole request head within "
                   "%u s; closed",
                   n, n == 1 ? "" : "s", li->unix_socket ? "Unix socket" : "TCP", timeout_s);
    }
}
