/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_peers.c - a launch that depends on another (`depends_on`): the
 * rule of each condition, the Slurm dependency of its submit, and the
 * partner's nodes and addresses handed on in peers.env.
 *
 * Purpose:
 *   docs/state-machine.md, "Dependencies", is the rule set; in short:
 *   - accept: the partner must be a launch the store knows; one that has
 *     already ended is refused when the condition can never be met (`after`:
 *     it must run; `afterok`: it must succeed);
 *   - before the submit: a partner without a job yet is waited for; one with
 *     a job gives the Slurm dependency "<condition>:<job id>"; one that has
 *     ended meets the condition (afterok after SUCCEEDED, afterany) and the
 *     launch is submitted without one, or never will (dependency-failed);
 *   - with a job: a partner that ends without meeting the condition (afterok:
 *     not SUCCEEDED; after: before peers.env was written) ends the launch
 *     (dependency-failed: its job is cancelled);
 *   - `after`: once the partner runs, every node of its job is looked up
 *     through slurmrestd (GET node/{name}: Slurm's NodeAddr) and peers.env is
 *     written with names and addresses.  An address that cannot be read is
 *     tried again next cycle (a warning every 30 s), never guessed: the
 *     dependent's script waits for peers.env for a bounded time and exits 98.
 *
 * Notes:
 *   - The partner is found in memory while it is tracked, else in the store
 *     (a partner that ended and was archived, or after a restart).
 *   - Addresses read are kept for PEERS_ADDR_FRESH_MS (node -> [addr, ms]),
 *     so a partner with more nodes than one cycle's read budget is read over
 *     several cycles; an older entry is read again.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/launcher.h>
#include <sluice/log.h>

#include "base/hostlist.h"
#include "launcher_budget.h"

#define PEERS_ADDR_FRESH_MS (300 * 1000)
#define PEERS_WARN_EVERY_MS (30 * 1000)
#define PEERS_MAX_NODES 4096 /* per component */
#define PEERS_ADDR_MAX 256

/* What is known of the partner. */
typedef struct {
    bool readable; /* false: the store could not be read now */
    bool known;
    bool done;
    int result;
    uint64_t job_id; /* 0: none yet */
    launch_t *D;     /* tracked in memory, or NULL */
} partner_t;

static bool has_dep(const launch_t *L)
{
    return L->dep_id != NULL && L->dep_id[0] != '\0';
}

static bool cond_is(const launch_t *L, const char *cond)
{
    return L->dep_cond != NULL && strcmp(L->dep_cond, cond) == 0;
}

/* The partner's stored row: known, done and result. */
static void partner_from_row(const json_t *row, partner_t *p)
{
    const json_t *ids = json_object_get(row, "job_ids");

    p->known = true;
    p->done = json_is_true(json_object_get(row, "terminal"));
    p->result = json_is_integer(json_object_get(row, "result_code"))
                    ? (int)json_integer_value(json_object_get(row, "result_code"))
                    : SLUICE_RESULT_UNKNOWN;
    if (json_array_size(ids) > 0 && json_is_integer(json_array_get(ids, 0)))
        p->job_id = (uint64_t)json_integer_value(json_array_get(ids, 0));
}

static void partner_of(sluice_launcher_t *l, const launch_t *L, partner_t *p)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *row = NULL;
    sluice_err rc;

    memset(p, 0, sizeof(*p));
    p->readable = true;
    if ((p->D = launcher_find_launch(l, L->dep_id)) != NULL) {
        p->known = true;
        p->done = p->D->fsm.state == SLUICE_FSM_DONE;
        p->result = p->D->fsm.result;
        p->job_id = p->D->fsm.n_job_ids > 0 ? p->D->fsm.job_ids[0] : 0;
        return;
    }
    rc = sluice_store_get_launch(l->store, L->dep_id, &row, &err);
    if (rc == SLUICE_OK)
        partner_from_row(row, p);
    else if (rc != SLUICE_ENOTFOUND) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: its partner %s cannot be read now: %s", L->id,
                   L->dep_id, err.text);
        p->readable = false;
    }
    json_decref(row);
}

/* The partner has ended: NONE when the condition is met, FAILED (why in
 * `buf`) when it never will be.  `peers`: peers.env was written. */
static launcher_dep_t
ended(const launch_t *L, const partner_t *p, bool peers, char *buf, size_t cap)
{
    const char *res = sluice_result_name(p->result);

    if (res == NULL)
        res = "UNKNOWN";
    if (cond_is(L, "afterany"))
        return LAUNCHER_DEP_NONE;
    if (cond_is(L, "afterok")) {
        if (p->result == SLUICE_RESULT_SUCCEEDED)
            return LAUNCHER_DEP_NONE;
        snprintf(buf, cap, "launch %s ended %s; afterok needs it to succeed", L->dep_id, res);
        return LAUNCHER_DEP_FAILED;
    }
    if (peers)
        return LAUNCHER_DEP_NONE;
    snprintf(buf, cap,
             "launch %s ended %s before its nodes were handed on (after needs it running)",
             L->dep_id, res);
    return LAUNCHER_DEP_FAILED;
}

launcher_dep_t launcher_dependency(sluice_launcher_t *l, launch_t *L, char *buf, size_t cap)
{
    partner_t p;

    if (!has_dep(L))
        return LAUNCHER_DEP_NONE;
    partner_of(l, L, &p);
    if (!p.readable)
        return LAUNCHER_DEP_WAIT;
    if (!p.known) {
        snprintf(buf, cap, "launch %s is not known to this service", L->dep_id);
        return LAUNCHER_DEP_FAILED;
    }
    if (p.done)
        return ended(L, &p, false, buf, cap);
    if (p.job_id == 0)
        return LAUNCHER_DEP_WAIT;
    snprintf(buf, cap, "%s:%" PRIu64, L->dep_cond != NULL ? L->dep_cond : "after", p.job_id);
    return LAUNCHER_DEP_SLURM;
}

/* ---- node addresses ------------------------------------------------------- */

/* A fresh cached address of `node`, or NULL. */
static const char *cached_addr(const sluice_launcher_t *l, const char *node, int64_t now)
{
    const json_t *e = json_object_get(l->node_addrs, node);
    int64_t at = (int64_t)json_integer_value(json_array_get(e, 1));

    if (e == NULL || now - at > PEERS_ADDR_FRESH_MS || now < at)
        return NULL;
    return json_string_value(json_array_get(e, 0));
}

/* The address of `node`: from the cache, else one lookup (a read token).
 * NULL when it cannot be read now; *why then says how. */
static const char *node_addr(sluice_launcher_t *l, const char *node, int64_t now, const char **why)
{
    char addr[PEERS_ADDR_MAX];
    const char *have = cached_addr(l, node, now);
    sluice_lookup r;

    if (have != NULL)
        return have;
    if (l->cl.node_address == NULL) {
        *why = "no address lookup in the cluster operations";
        return NULL;
    }
    if (!launcher_take_token(l)) {
        *why = "read budget spent this cycle";
        return NULL;
    }
    r = l->cl.node_address(l->cl.arg, node, addr, sizeof(addr));
    if (r != SLUICE_LOOKUP_FOUND) {
        *why = r == SLUICE_LOOKUP_NOT_FOUND ? "slurmrestd knows no address for it"
                                            : "slurmrestd unavailable";
        return NULL;
    }
    if (l->node_addrs == NULL && (l->node_addrs = json_object()) == NULL)
        return NULL;
    if (json_object_set_new(l->node_addrs, node, json_pack("[s, I]", addr, (json_int_t)now)) != 0) {
        *why = "out of memory";
        return NULL;
    }
    return cached_addr(l, node, now);
}

/* The view of component k (hetjob offset k), else the k-th view. */
static const sluice_jobview_t *component(const launch_t *D, size_t k)
{
    for (size_t i = 0; i < D->poll.n_views; i++)
        if (D->poll.views[i].het_job_id != 0 && D->poll.views[i].het_job_offset == k)
            return &D->poll.views[i];
    return &D->poll.views[k];
}

typedef struct {
    json_t *names[SLUICE_FSM_MAX_JOBS]; /* expanded node names per component */
    sluice_peer_node_t *nodes[SLUICE_FSM_MAX_JOBS];
    sluice_peer_component_t comp[SLUICE_FSM_MAX_JOBS];
    size_t n;
} peer_set_t;

static void peer_set_clear(peer_set_t *s)
{
    for (size_t k = 0; k < s->n; k++) {
        json_decref(s->names[k]);
        free(s->nodes[k]);
    }
    memset(s, 0, sizeof(*s));
}

/* Every node of every component of D with its address.  false (nothing to
 * write yet) when one cannot be read: logged at most every 30 s. */
static bool gather(sluice_launcher_t *l, launch_t *L, launch_t *D, int64_t now, peer_set_t *s)
{
    const char *why = NULL, *missing = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (size_t k = 0; k < D->poll.n_views && k < SLUICE_FSM_MAX_JOBS; k++, s->n++) {
        const sluice_jobview_t *v = component(D, k);
        size_t n;

        if (v->nodes == NULL || v->nodes[0] == '\0' ||
            hostlist_expand(v->nodes, PEERS_MAX_NODES, &s->names[k], &err) != SLUICE_OK) {
            why = v->nodes == NULL || v->nodes[0] == '\0' ? "no nodes listed" : err.text;
            missing = "component nodes";
            s->n++;
            break;
        }
        n = json_array_size(s->names[k]);
        if ((s->nodes[k] = calloc(n > 0 ? n : 1, sizeof(*s->nodes[k]))) == NULL) {
            why = "out of memory";
            s->n++;
            break;
        }
        for (size_t i = 0; i < n; i++) {
            const char *name = json_string_value(json_array_get(s->names[k], i));
            const char *a = node_addr(l, name, now, &why);
            if (a == NULL) {
                missing = name;
                break;
            }
            s->nodes[k][i].name = name;
            s->nodes[k][i].address = a;
        }
        s->comp[k].nodes = s->nodes[k];
        s->comp[k].n_nodes = n;
        if (missing != NULL) {
            s->n++;
            break;
        }
    }
    if (missing == NULL && why == NULL)
        return true;
    if (L->peers.warned_ms == 0 || now - L->peers.warned_ms >= PEERS_WARN_EVERY_MS) {
        L->peers.warned_ms = now;
        sluice_log(SLUICE_LOG_WARNING,
                   "launch %s: peers.env not written yet: the address of %s of launch %s "
                   "cannot be read (%s); trying again next cycle",
                   L->id, missing != NULL ? missing : "a node", D->id, why != NULL ? why : "?");
    }
    return false;
}

/* Write peers.env for L once D runs and every address is known. */
static sluice_err
hand_on(sluice_launcher_t *l, launch_t *L, launch_t *D, int64_t now, sluice_error_t *err)
{
    sluice_error_t herr = SLUICE_ERROR_INIT;
    peer_set_t s;
    sluice_peers_t peers;
    const sluice_jobview_t *lead;
    json_t *addrs;
    sluice_err rc = SLUICE_OK;

    if (l->st.write_peers == NULL)
        return SLUICE_OK;
    memset(&s, 0, sizeof(s));
    if (!gather(l, L, D, now, &s))
        goto out;
    memset(&peers, 0, sizeof(peers));
    peers.launch_id = D->id;
    lead = component(D, 0);
    peers.job_id = lead->het_job_id ? lead->het_job_id : lead->job_id;
    peers.components = s.comp;
    peers.n_components = s.n;
    if (l->st.write_peers(l->st.arg, L->id, L->fsm.attempt > 0 ? L->fsm.attempt : 1, &peers,
                          &herr) != SLUICE_OK) {
        sluice_log(SLUICE_LOG_WARNING, "launch %s: peers.env: %s", L->id, herr.text);
        goto out;
    }
    addrs = json_array();
    for (size_t i = 0; addrs != NULL && s.n > 0 && i < s.comp[0].n_nodes; i++)
        json_array_append_new(addrs, json_string(s.comp[0].nodes[i].address));
    rc = launcher_note(l, L, "peers-written",
                       json_pack("{s:s, s:s, s:o*}", "first", D->id, "nodes",
                                 lead->nodes != NULL ? lead->nodes : "", "addresses", addrs),
                       err);
out:
    peer_set_clear(&s);
    return rc;
}

sluice_err
launcher_do_dependency(sluice_launcher_t *l, launch_t *L, int64_t now, sluice_error_t *err)
{
    char why[SLUICE_FSM_DETAIL_MAX];
    partner_t p;

    if (!has_dep(L) || L->peers.dep_settled || L->fsm.intent != SLUICE_CANCEL_NONE ||
        L->fsm.settling ||
        (L->fsm.state != SLUICE_FSM_PENDING && L->fsm.state != SLUICE_FSM_RUNNING))
        return SLUICE_OK;
    if (cond_is(L, "afterany") || (cond_is(L, "after") && L->peers.written)) {
        L->peers.dep_settled = true;
        return SLUICE_OK;
    }
    partner_of(l, L, &p);
    if (!p.readable)
        return SLUICE_OK;
    if (!p.known) {
        snprintf(why, sizeof(why), "launch %s is not known to this service", L->dep_id);
        return launcher_record_simple(l, L, SLUICE_EV_DEPENDENCY_FAILED, why, err);
    }
    if (p.done) {
        if (ended(L, &p, L->peers.written, why, sizeof(why)) == LAUNCHER_DEP_NONE) {
            L->peers.dep_settled = true;
            return SLUICE_OK;
        }
        return launcher_record_simple(l, L, SLUICE_EV_DEPENDENCY_FAILED, why, err);
    }
    if (cond_is(L, "after") && p.D != NULL && p.D->fsm.state == SLUICE_FSM_RUNNING &&
        p.D->poll.n_views > 0)
        return hand_on(l, L, p.D, now, err);
    return SLUICE_OK;
}

/* ---- at accept ------------------------------------------------------------ */

sluice_err sluice_launcher_check_dependency(sluice_launcher_t *l,
                                            const char *self,
                                            const char *dep_id,
                                            const char *condition,
                                            sluice_error_t *err)
{
    launch_t L;
    partner_t p;
    json_t *row = NULL;
    char why[SLUICE_FSM_DETAIL_MAX];
    sluice_err rc;

    if (l == NULL || dep_id == NULL)
        return SLUICE_OK;
    memset(&L, 0, sizeof(L));
    memset(&p, 0, sizeof(p));
    L.dep_id = (char *)(uintptr_t)dep_id;
    L.dep_cond = (char *)(uintptr_t)condition;
    if (condition == NULL || condition[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "depends_on: launch_id and condition required");
    /* A repeat of a stored launch: the launcher's idempotency decides. */
    if (self != NULL && sluice_store_get_launch(l->store, self, &row, NULL) == SLUICE_OK) {
        json_decref(row);
        return SLUICE_OK;
    }
    rc = sluice_store_get_launch(l->store, L.dep_id, &row, err);
    if (rc == SLUICE_ENOTFOUND) {
        sluice_error_clear(err);
        return sluice_errorf(err, SLUICE_EINVAL,
                             "depends_on.launch_id: no launch \"%s\" is known to this service "
                             "(a launch may only depend on one accepted before it)",
                             L.dep_id);
    }
    if (rc != SLUICE_OK)
        return rc;
    /* A Slurm dependency names a job of the same slurmctld: the partner
     * must be this launcher's cluster's (none stored: the first), as the
     * request is (it is committed through its cluster's launcher). */
    if (!launcher_cluster_ours(l, json_string_value(json_object_get(row, "cluster")))) {
        json_decref(row);
        return sluice_errorf(err, SLUICE_EINVAL,
                             "depends_on.launch_id: launch \"%s\" runs on another cluster (a "
                             "launch may only depend on one of its own cluster)",
                             L.dep_id);
    }
    partner_from_row(row, &p);
    json_decref(row);
    if (p.done && ended(&L, &p, false, why, sizeof(why)) == LAUNCHER_DEP_FAILED)
        return sluice_errorf(err, SLUICE_EINVAL, "depends_on.launch_id: %s", why);
    return SLUICE_OK;
}
