/* SPDX-License-Identifier: Apache-2.0 */
/* launch_json.c - the canonical JSON of a launch.
 *
 * Notes:
 * - Built from the model, not from the input, so key order, spelling
 *   variants (profile alias, signal prefix, time format, memory units) and
 *   the input form (native or NVFlare) do not change it.
 * - Secret values never appear in it: only their names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/marker.h"
#include "launch_int.h"

static int set_new(json_t *obj, const char *key, json_t *v)
{
    return v == NULL ? -1 : json_object_set_new(obj, key, v);
}

static int set_str(json_t *obj, const char *key, const char *s)
{
    return s == NULL ? 0 : set_new(obj, key, json_string(s));
}

static json_t *strv_json(char *const *v, size_t n)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *canonical(const sluice_launch_t *l)
{
    const sluice_launch_spec_t *s = &l->spec;
    json_t *o = json_object(), *a = NULL, *x;
    size_t i;
    int bad = 0;

    if (o == NULL)
        return NULL;
    bad |= set_str(o, "launch_id", s->launch_id);
    bad |= set_str(o, "site", s->site);
    bad |= set_str(o, "study", s->study);
    bad |= set_str(o, "cluster", s->cluster);
    if (s->profile != SLUICE_LAUNCH_PROFILE_UNSET)
        bad |= set_str(o, "profile", sluice_launch_profile_name(s->profile));
    bad |= set_str(o, "image", s->image);
    bad |= set_str(o, "command", s->command);
    if (s->n_args > 0)
        bad |= set_new(o, "args", strv_json(s->args, s->n_args));
    bad |= set_str(o, "workdir", s->workdir);
    if (s->n_env > 0) {
        x = json_object();
        for (i = 0; x != NULL && i < s->n_env; i++)
            bad |= set_new(x, s->env[i].name, json_string(s->env[i].value));
        bad |= set_new(o, "env", x);
    }
    if (s->n_secret_env > 0)
        bad |= set_new(o, "secret_env", strv_json(s->secret_env, s->n_secret_env));
    if (l->n_secrets > 0)
        bad |= set_new(o, "secret_names", strv_json(l->secret_names, l->n_secrets));
    if (s->n_mounts > 0) {
        a = json_array();
        for (i = 0; a != NULL && i < s->n_mounts; i++)
            bad |= json_array_append_new(
                a, json_pack("{s:s s:s s:s}", "source", s->mounts[i].source, "target",
                             s->mounts[i].target, "mode", s->mounts[i].rw ? "rw" : "ro"));
        bad |= set_new(o, "mounts", a);
    }
    if (s->time_limit)
        bad |= set_new(o, "time_limit", json_integer(s->time_limit));
    if (s->pending_timeout)
        bad |= set_new(o, "pending_timeout", json_integer(s->pending_timeout));
    if (s->depends_on != NULL)
        bad |= set_new(o, "depends_on",
                       json_pack("{s:s s:s}", "launch_id", s->depends_on, "condition",
                                 sluice_launch_dep_name(s->depends_condition)));
    if (s->requeue)
        bad |= set_new(o, "requeue", json_true());
    if (s->exclusive)
        bad |= set_new(o, "exclusive", json_true());
    if (s->set_keep_going)
        bad |= set_new(o, "keep_going", json_boolean(s->keep_going));
    bad |= set_str(o, "signal", s->signal);
    bad |= set_str(o, "account", s->account);
    bad |= set_str(o, "qos", s->qos);
    bad |= set_str(o, "partition", s->partition);
    a = json_array();
    for (i = 0; a != NULL && i < s->n_pools; i++) {
        const sluice_launch_pool_t *p = &s->pools[i];

        x = json_pack("{s:s s:I s:I}", "name", p->name, "nodes", (json_int_t)p->nodes,
                      "gpus_per_node", (json_int_t)p->gpus_per_node);
        if (x == NULL) {
            bad = 1;
            break;
        }
        if (!p->default_series)
            bad |= set_str(x, "gpu_series", p->gpu_series);
        if (p->cpus_per_node)
            bad |= set_new(x, "cpus_per_node", json_integer(p->cpus_per_node));
        if (p->mem_per_node_mib)
            bad |= set_new(x, "mem_per_node_mib", json_integer((json_int_t)p->mem_per_node_mib));
        if (p->set_command)
            bad |= set_str(x, "command", p->command);
        if (p->set_args)
            bad |= set_new(x, "args", strv_json(p->args, p->n_args));
        bad |= set_str(x, "additional_node_command", p->additional_node_command);
        bad |= json_array_append_new(a, x);
    }
    bad |= set_new(o, "pools", a);
    if (s->webhook_url != NULL)
        bad |= set_new(o, "webhook", json_pack("{s:s}", "url", s->webhook_url));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *sluice_launch_to_json(const sluice_launch_t *l, sluice_error_t *err)
{
    json_t *o = NULL;
    char *text = NULL;

    if (l == NULL) {
        sluice_errorf(err, SLUICE_EINVAL, "sluice_launch_to_json: no launch");
        return NULL;
    }
    if ((o = canonical(l)) == NULL)
        goto out;
    text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
out:
    json_decref(o);
    if (text == NULL)
        sluice_errorf(err, SLUICE_ENOMEM, "launch: out of memory building the canonical JSON");
    return text;
}

json_t *sluice_launch_to_value(const sluice_launch_t *l, sluice_error_t *err)
{
    json_t *o;

    if (l == NULL) {
        sluice_errorf(err, SLUICE_EINVAL, "sluice_launch_to_value: no launch");
        return NULL;
    }
    if ((o = canonical(l)) == NULL)
        sluice_errorf(err, SLUICE_ENOMEM, "launch: out of memory building the canonical JSON");
    return o;
}
