/* SPDX-License-Identifier: Apache-2.0 */
/* server_wake.c - server_wake_streams (server_wake.h): signal the ticker;
 * server.c reads the event feed and resumes the waiting connections.  Also
 * the store's commit callback that does the same.
 *
 * Notes:
 * - The ticker counts its rounds (round_gen), so a stream that looked for
 *   news before a round, and parks after it, is resumed at once (server.c
 *   compares it under wait_mu).
 */
#include <pthread.h>

#include "server_int.h"
#include "server_wake.h"

void server_wake_streams(struct sluice_server *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->wait_mu);
    s->wake_due = 1;
    pthread_cond_signal(&s->wake_cv);
    pthread_mutex_unlock(&s->wait_mu);
}

void server_wake_on_commit(void *arg)
{
    server_wake_streams(arg);
}
