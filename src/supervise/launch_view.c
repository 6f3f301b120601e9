/* SPDX-License-Identifier: Apache-2.0 */
/* launch_view.c - the caller's view of one launch (see launch_view.h).
 *
 * Notes:
 * - Node names come from the `nodes` list of the newest `observed` event
 *   that carries jobs; "None assigned" (a pending job) lists none.  The
 *   same observation gives each component's state_reason (why a pending
 *   job waits) and state_description.
 */
#include <string.h>

#include <sluice/launch_view.h>

#include "base/hostlist.h"

static const json_t *newest_jobs(const json_t *events)
{
    for (size_t i = json_array_size(events); i > 0; i--) {
        const json_t *e = json_array_get(events, i - 1);
        const json_t *jobs = json_object_get(json_object_get(e, "context"), "jobs");
        const char *name = json_string_value(json_object_get(e, "name"));

        if (name != NULL && strcmp(name, "observed") == 0 && json_is_array(jobs) &&
            json_array_size(jobs) > 0)
            return jobs;
    }
    return NULL;
}

static json_t *nodes_of(const char *list, sluice_node_address_fn addr, void *addr_arg)
{
    json_t *nodes = json_array(), *names = NULL, *name;
    size_t k;

    if (nodes == NULL || list == NULL || list[0] == '\0' || strcmp(list, "None assigned") == 0 ||
        hostlist_expand(list, SLUICE_VIEW_MAX_NODES, &names, NULL) != SLUICE_OK)
        return nodes;
    json_array_foreach(names, k, name)
    {
        char buf[256];
        int known = addr != NULL && addr(addr_arg, json_string_value(name), buf, sizeof(buf)) == 1;

        if (json_array_append_new(
                nodes, json_pack("{s:O s:s?}", "name", name, "address", known ? buf : NULL)) != 0) {
            json_decref(nodes);
            nodes = NULL;
            break;
        }
    }
    json_decref(names);
    return nodes;
}

static json_t *components_of(const json_t *events, sluice_node_address_fn addr, void *addr_arg)
{
    json_t *out = json_array(), *job;
    const json_t *jobs = newest_jobs(events);
    size_t i;

    if (out == NULL)
        return NULL;
    json_array_foreach(jobs, i, job)
    {
        const char *list = json_string_value(json_object_get(job, "nodes"));
        json_t *nodes = nodes_of(list, addr, addr_arg);

        if (nodes == NULL ||
            json_array_append_new(
                out,
                json_pack("{s:i s:O? s:s? s:o s:O? s:O?}", "component", (int)i, "job_id",
                          json_object_get(job, "job_id"), "nodelist", list && list[0] ? list : NULL,
                          "nodes", nodes, "state_reason", json_object_get(job, "state_reason"),
                          "state_description", json_object_get(job, "state_description"))) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

json_t *sluice_launch_view_build(const json_t *launch,
                                 const json_t *events,
                                 sluice_node_address_fn addr,
                                 void *addr_arg)
{
    json_t *v = json_deep_copy(launch);
    json_t *creator = json_object_get(json_array_get(events, 0), "caller");
    json_t *comps = components_of(events, addr, addr_arg);
    json_t *evs = json_deep_copy(events);

    if (v == NULL || comps == NULL || evs == NULL || !json_is_object(v)) {
        json_decref(v);
        json_decref(comps);
        json_decref(evs);
        return NULL;
    }
    json_object_del(v, "render");
    if (json_object_set_new(v, "created_by",
                            json_is_string(creator) ? json_incref(creator) : json_null()) != 0 ||
        json_object_set_new(v, "components", comps) != 0 ||
        json_object_set_new(v, "events", evs) != 0) {
        json_decref(v);
        return NULL;
    }
    return v;
}

sluice_err sluice_launch_view_read(sluice_store_t *store,
                                   const char *id,
                                   sluice_node_address_fn addr,
                                   void *addr_arg,
                                   json_t **out,
                                   sluice_error_t *err)
{
    json_t *l = NULL, *ev = NULL;
    sluice_err rc;

    if ((rc = sluice_store_get_launch(store, id, &l, err)) == SLUICE_OK &&
        (rc = sluice_store_read_events(store, id, 1, 0, &ev, err)) == SLUICE_OK &&
        (*out = sluice_launch_view_build(l, ev, addr, addr_arg)) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launch %s: out of memory", id);
    json_decref(l);
    json_decref(ev);
    return rc;
}
