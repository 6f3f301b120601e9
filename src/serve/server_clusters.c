/* SPDX-License-Identifier: Apache-2.0 */
/* server_clusters.c - the clusters of `sluice serve` (sluice_server_opts_t.
 * clusters): each cluster's launcher and the mutex of its cycles, the
 * launcher of a cluster by name (accepts are routed by the launch's
 * cluster), and waking every launcher (a cancel).
 *
 * Notes:
 * - Cluster 0 is o.launcher under s->mu, as with one cluster; cluster i > 0
 *   has s->cmu[i] (server.c makes them).
 * - Calls no other file of src/serve/ (server_driver.c and
 *   server_metrics.c both use it).
 */
#include <pthread.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/server.h>

#include "server_int.h"

size_t server_cluster_count(const sluice_server_t *s)
{
    return s->o.n_clusters > 0 ? s->o.n_clusters : 1;
}

sluice_launcher_t *server_cluster_launcher(const sluice_server_t *s, size_t i)
{
    return i == 0 ? s->o.launcher : s->o.clusters[i].launcher;
}

pthread_mutex_t *server_cluster_mu(sluice_server_t *s, size_t i)
{
    return i == 0 ? &s->mu : &s->cmu[i];
}

sluice_launcher_t *server_launcher_for(const sluice_server_t *s, const char *name)
{
    if (name == NULL || name[0] == '\0' || s->o.n_clusters == 0)
        return s->o.launcher;
    for (size_t i = 0; i < s->o.n_clusters; i++)
        if (strcmp(s->o.clusters[i].name, name) == 0)
            return server_cluster_launcher(s, i);
    return NULL;
}

void server_wake_launchers(const sluice_server_t *s)
{
    for (size_t i = 0; i < server_cluster_count(s); i++)
        sluice_launcher_wake(server_cluster_launcher(s, i));
}
