/* SPDX-License-Identifier: Apache-2.0 */
/* server_ha.c - `sluice serve` as one of several replicas on one
 * PostgreSQL store (leader.h): the launcher runs only while this replica
 * leads, a follower refuses what only the leader can do, and readiness and
 * metrics show the role.
 *
 * Notes:
 * - Every replica answers the whole API from the store: reads and streams
 *   (the ticker reads the event feed), accepts (durable on any replica:
 *   the store write), cancels (a `cancel-asked` event the leader carries
 *   out).  Secret values live only in the accepting process's memory, so a
 *   launch with `secrets` goes to the leader: a follower answers 503 and
 *   names it.
 * - The launcher follows the leader object between cycles, on its own
 *   thread and under s->mu: becoming leader recovers (adopts every live
 *   launch, reconciles SUBMITTING ones by the marker rule); stopping
 *   forgets everything tracked.  A cycle that runs while the lead is lost
 *   is refused by the store (the fence) and posts nothing (the launcher
 *   asks the fence before each POST).
 * - A follower forgets its intake before each wait: accepts are durable in
 *   the store, the leader picks them up.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/leader.h>
#include <sluice/log.h>

#include "server_ha.h"

bool server_ha_may_step(sluice_server_t *s, size_t i)
{
    sluice_leader_t *ld = s->o.leader;
    sluice_launcher_t *l = server_cluster_launcher(s, i);
    pthread_mutex_t *mu = server_cluster_mu(s, i);
    sluice_error_t e = SLUICE_ERROR_INIT;
    int64_t epoch;
    size_t n;

    if (ld == NULL)
        return true;
    if (i >= SERVER_HA_CLUSTERS)
        return false;
    epoch = sluice_leader_epoch(ld);
    if (epoch == s->ha_epoch[i] && epoch > 0)
        return true;
    pthread_mutex_lock(mu);
    sluice_launcher_forget(l);
    if (epoch > 0 && sluice_launcher_recover(l, NULL, &e) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "leadership: recovery at epoch %" PRId64 ": %s", epoch,
                   e.text);
        sluice_launcher_forget(l);
        pthread_mutex_unlock(mu);
        return false; /* tried again before the next cycle */
    }
    n = sluice_launcher_tracked(l);
    pthread_mutex_unlock(mu);
    if (epoch != s->ha_epoch[i] && epoch > 0)
        sluice_log(SLUICE_LOG_NOTICE,
                   "leadership: recovered at epoch %" PRId64 ": %zu live launches adopted", epoch,
                   n);
    if (epoch != s->ha_epoch[i])
        atomic_store(&s->views_dirty, 1);
    s->ha_epoch[i] = epoch;
    return epoch > 0;
}

bool server_ha_refuse_accept(sluice_server_t *s, const json_t *body, answer_t *out)
{
    sluice_leader_status_t st;
    char detail[512];

    if (s->o.leader == NULL || json_object_get(body, "secrets") == NULL ||
        sluice_leader_epoch(s->o.leader) > 0)
        return false;
    sluice_leader_status(s->o.leader, &st);
    snprintf(detail, sizeof(detail),
             "this replica (%s) does not lead; secret values are held only by the replica that "
             "accepts them, so send this launch to the leader (%s), or use secret_env names; "
             "nothing was stored",
             st.replica, st.leader[0] != '\0' ? st.leader : "unknown at the moment");
    answer_problem_more(out, 503, "not-leader", "Not the leader", detail, "secrets", NULL,
                        json_pack("{s:s s:s?}", "replica", st.replica, "leader",
                                  st.leader[0] != '\0' ? st.leader : NULL));
    answer_header(out, "Retry-After", "1");
    return true;
}

bool server_ha_store_failed(sluice_server_t *s, const sluice_error_t *err, answer_t *out)
{
    if (s->o.leader == NULL || err->code != SLUICE_ESTORE)
        return false;
    answer_problem(out, 503, "store-unavailable", "Store unavailable",
                   "the store cannot be written: nothing was accepted; send the request again "
                   "(the same launch_id is accepted once)");
    answer_header(out, "Retry-After", "1");
    return true;
}

bool server_ha_ready(sluice_server_t *s, json_t *obj, char *why, size_t size)
{
    sluice_leader_status_t st;

    if (s->o.leader == NULL) {
        json_object_set_new(obj, "role", json_string("standalone"));
        json_object_set_new(obj, "epoch", json_integer(0));
        json_object_set_new(obj, "leader", json_null());
        json_object_set_new(obj, "replica", json_null());
        return true;
    }
    sluice_leader_status(s->o.leader, &st);
    json_object_set_new(obj, "role", json_string(sluice_role_name(st.role)));
    json_object_set_new(obj, "epoch", json_integer(st.epoch));
    json_object_set_new(obj, "leader", st.leader[0] != '\0' ? json_string(st.leader) : json_null());
    json_object_set_new(obj, "replica", json_string(st.replica));
    if (st.db_ok)
        return true;
    snprintf(why, size, "store: the database cannot be reached (%s); this replica does not lead",
             st.reason);
    return false;
}

void server_ha_metrics(sluice_server_t *s, FILE *m)
{
    sluice_leader_status_t st;

    memset(&st, 0, sizeof(st));
    if (s->o.leader != NULL)
        sluice_leader_status(s->o.leader, &st);
    fprintf(m,
            "# HELP sluice_leader 1 while this replica leads (or is the only supervisor).\n"
            "# TYPE sluice_leader gauge\n"
            "sluice_leader %d\n"
            "# HELP sluice_leader_epoch The leadership epoch this replica knows (0: "
            "standalone).\n"
            "# TYPE sluice_leader_epoch gauge\n"
            "sluice_leader_epoch %" PRId64 "\n"
            "# HELP sluice_leader_changes_total Times this replica became leader or stopped "
            "leading.\n"
            "# TYPE sluice_leader_changes_total counter\n"
            "sluice_leader_changes_total %" PRIu64 "\n"
            "# HELP sluice_fenced_writes_total Launcher writes the store refused because another "
            "replica leads.\n"
            "# TYPE sluice_fenced_writes_total counter\n"
            "sluice_fenced_writes_total %" PRIu64 "\n",
            s->o.leader == NULL || st.role == SLUICE_ROLE_LEADER ? 1 : 0, st.epoch, st.changes,
            sluice_store_fenced_total());
}
