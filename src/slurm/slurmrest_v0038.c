/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_v0038.c - the v0.0.38 / dbv0.0.38 shapes (Slurm 22.05-23.11).
 *
 * Submit: top-level "script" (required; "script" inside "job" is an unknown
 * key there, and unknown keys are errors), "job" or "jobs", environment as
 * an object, bare integers, "exclusive": "exclusive", "gres": "gpu:N",
 * "no_requeue": true (any "requeue" value turns requeue on), "signal" as
 * sbatch's "[B:]SIG@TIME" string, "nodes" as a string ("N", which the live
 * server accepts although the document says [min,max]).
 *
 * Responses: job_state is one string in which flags hide the base state
 * (job_state_string(): "COMPLETING" wins over "FAILED"); exit_code is a raw
 * wait(2) status; slurmdbd's exit_code is {status, return_code, signal} and
 * reports SUCCESS/0 for any normal exit (a known bug), so the accounting
 * record's state decides success on this version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurmrest.h"
#include "slurmrest_parse.h"

static int put_str(json_t *o, const char *key, const char *s)
{
    if (s == NULL)
        return 0;
    return json_object_set_new(o, key, json_string(s));
}

static sluice_err component(const sluice_jobdesc_t *d, size_t i, json_t **out, sluice_error_t *err)
{
    json_t *o = json_object();
    json_t *env = json_object();
    char nodes[24];
    char *gres = NULL;
    int rc = 0;
    sluice_err src = SLUICE_OK;

    if (o == NULL || env == NULL)
        goto nomem;
    rc |= put_str(o, "name", d->name);
    rc |= put_str(o, "comment", d->comment);
    rc |= put_str(o, "partition", d->partition);
    rc |= put_str(o, "account", d->account);
    rc |= put_str(o, "qos", d->qos);
    rc |= put_str(o, "reservation", d->reservation);
    if (d->time_limit > 0)
        rc |= json_object_set_new(o, "time_limit", json_integer(d->time_limit));
    snprintf(nodes, sizeof(nodes), "%u", (unsigned)d->nodes);
    rc |= json_object_set_new(o, "nodes", json_string(nodes));
    if (d->tasks_per_node > 0)
        rc |= json_object_set_new(o, "tasks_per_node", json_integer(d->tasks_per_node));
    if (d->cpus_per_task > 0)
        rc |= json_object_set_new(o, "cpus_per_task", json_integer(d->cpus_per_task));
    if (d->mem_per_node_mib > 0)
        rc |= json_object_set_new(o, "memory_per_node",
                                  json_integer((json_int_t)d->mem_per_node_mib));
    if (d->gpus_per_node > 0) {
        if (slurmrest_gres(d, "", &gres) != SLUICE_OK)
            goto nomem;
        rc |= json_object_set_new(o, "gres", json_string(gres));
    }
    rc |= put_str(o, "constraints", d->constraint);
    rc |= put_str(o, "current_working_directory", d->workdir);
    rc |= put_str(o, "standard_output", d->std_out);
    rc |= put_str(o, "standard_error", d->std_err);
    if (d->hold)
        rc |= json_object_set_new(o, "hold", json_true());
    rc |= put_str(o, "dependency", d->dependency);
    if (d->requeue)
        rc |= json_object_set_new(o, "requeue", json_true());
    else
        rc |= json_object_set_new(o, "no_requeue", json_true());
    if (d->signal != NULL) {
        bool batch = false;
        char *name = NULL;
        long delay = -1;
        /* Validated here so every version refuses the same inputs. */
        if ((src = slurmrest_split_signal(d->signal, i, &batch, &name, &delay, err)) != 0)
            goto out;
        free(name);
        rc |= json_object_set_new(o, "signal", json_string(d->signal));
    }
    if (d->exclusive)
        rc |= json_object_set_new(o, "exclusive", json_string("exclusive"));
    for (size_t k = 0; k < d->n_env; k++)
        rc |= json_object_set_new(env, d->env[k].name, json_string(d->env[k].value));
    rc |= json_object_set_new(o, "environment", env);
    env = NULL;
    if (rc != 0)
        goto nomem;
    *out = o;
    o = NULL;
    goto out;
nomem:
    src = sluice_errorf(err, SLUICE_ENOMEM, "jobs[%zu]: out of memory (or invalid UTF-8)", i);
out:
    free(gres);
    json_decref(env);
    json_decref(o);
    return src;
}

sluice_err slurmrest_v0038_submit_body(const sluice_jobdesc_t *descs,
                                       size_t n,
                                       json_t **out,
                                       sluice_error_t *err)
{
    json_t *body = NULL;
    json_t *list = NULL;
    json_t *job = NULL;
    sluice_err rc = SLUICE_OK;

    for (size_t i = 0; i < n; i++) {
        if ((rc = slurmrest_check_desc(&descs[i], i, err)) != SLUICE_OK)
            return rc;
    }
    body = json_object();
    if (body == NULL || json_object_set_new(body, "script", json_string(descs[0].script)) != 0)
        goto nomem;
    if (n == 1) {
        if ((rc = component(&descs[0], 0, &job, err)) != SLUICE_OK)
            goto out;
        if (json_object_set_new(body, "job", job) != 0)
            goto nomem;
    } else {
        if ((list = json_array()) == NULL)
            goto nomem;
        for (size_t i = 0; i < n; i++) {
            if ((rc = component(&descs[i], i, &job, err)) != SLUICE_OK)
                goto out;
            if (json_array_append_new(list, job) != 0)
                goto nomem;
        }
        if (json_object_set_new(body, "jobs", list) != 0) {
            list = NULL;
            goto nomem;
        }
        list = NULL;
    }
    *out = body;
    body = NULL;
    goto out;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "submit body: out of memory (or invalid UTF-8)");
out:
    json_decref(list);
    json_decref(body);
    return rc;
}

static sluice_err strings(const jdec_cur_t *rec, const char *user_key, sluice_jobview_t *v)
{
    sluice_err rc;

    if ((rc = jdec_strdup(rec, "name", 0, SIZE_MAX, &v->name)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, user_key, 0, SIZE_MAX, &v->user_name)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, "partition", 0, SIZE_MAX, &v->partition)) != SLUICE_OK)
        return rc;
    return jdec_strdup(rec, "nodes", 0, SIZE_MAX, &v->nodes);
}

static sluice_err job_id(const jdec_cur_t *rec, sluice_jobview_t *v)
{
    bool has = false;
    int64_t id = 0;
    sluice_err rc = slurmrest_number(rec, "job_id", &has, &id);

    if (rc != SLUICE_OK)
        return rc;
    if (!has || id <= 0)
        return jdec_fail(rec, "job_id", "missing or not positive");
    v->job_id = (uint64_t)id;
    return SLUICE_OK;
}

sluice_err slurmrest_v0038_job(const jdec_cur_t *rec, sluice_jobview_t *v)
{
    jdec_cur_t state;
    const char *text = NULL;
    bool has = false;
    int64_t raw = 0;
    sluice_err rc;

    if ((rc = job_id(rec, v)) != SLUICE_OK)
        return rc;
    if ((rc = strings(rec, "user_name", v)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, "comment", 0, SIZE_MAX, &v->comment)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, "state_reason", 0, SIZE_MAX, &v->state_reason)) != SLUICE_OK)
        return rc;
    rc = jdec_strdup(rec, "state_description", 0, SIZE_MAX, &v->state_description);
    if (rc != SLUICE_OK)
        return rc;
    /* one string here (flags hide in it), never the later versions' array */
    if ((rc = jdec_string(rec, "job_state", 0, SIZE_MAX, &text)) != SLUICE_OK)
        return rc;
    jdec_member(&state, rec, "job_state");
    if ((rc = slurmrest_state_value(&state, &v->base, &v->flags)) != SLUICE_OK)
        return rc;
    v->het_job_id = (uint64_t)slurmrest_num_or_zero(rec, "het_job_id", &rc);
    v->het_job_offset = (uint32_t)slurmrest_num_or_zero(rec, "het_job_offset", &rc);
    v->submit_time = slurmrest_num_or_zero(rec, "submit_time", &rc);
    v->start_time = slurmrest_num_or_zero(rec, "start_time", &rc);
    v->end_time = slurmrest_num_or_zero(rec, "end_time", &rc);
    v->restart_count = (uint32_t)slurmrest_num_or_zero(rec, "restart_cnt", &rc);
    if (rc != SLUICE_OK)
        return rc;
    /* Raw wait status; only meaningful once the job has left the queue. */
    if ((rc = slurmrest_number(rec, "exit_code", &has, &raw)) != SLUICE_OK)
        return rc;
    if (has && v->base != SLUICE_JOB_PENDING && v->base != SLUICE_JOB_RUNNING) {
        v->has_exit = true;
        sluice_wait_status_split(raw, &v->exit_code, &v->exit_signal);
    }
    if ((rc = slurmrest_number(rec, "derived_exit_code", &has, &raw)) != SLUICE_OK)
        return rc;
    if (has && v->has_exit) {
        v->has_derived = true;
        sluice_wait_status_split(raw, &v->derived_exit_code, &v->derived_exit_signal);
    }
    return SLUICE_OK;
}

/* dbv0.0.38_job_exit_code: {status:"SUCCESS"|..., return_code, signal:{signal_id}} */
static sluice_err db_exit(const jdec_cur_t *rec, const char *key, bool *has, int *code, int *sig)
{
    const json_t *raw = jdec_value(rec, key);
    jdec_cur_t ec, signal;
    const char *status = NULL;
    bool h = false;
    int64_t n = 0;
    sluice_err rc;

    *has = false;
    if (!jdec_present(rec, key))
        return SLUICE_OK;
    if (json_is_integer(raw)) { /* tolerate a raw wait status */
        *has = true;
        sluice_wait_status_split(json_integer_value(raw), code, sig);
        return SLUICE_OK;
    }
    if ((rc = jdec_object(rec, key, 0, &ec)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_string(&ec, "status", 0, SIZE_MAX, &status)) != SLUICE_OK)
        return rc;
    if (status != NULL && strcmp(status, "PENDING") == 0)
        return SLUICE_OK;
    if ((rc = slurmrest_number(&ec, "return_code", &h, &n)) != SLUICE_OK)
        return rc;
    *code = h && n >= 0 ? (int)(n & 0xff) : 0;
    *sig = 0;
    if ((rc = jdec_object(&ec, "signal", JDEC_SOFT, &signal)) != SLUICE_OK)
        return rc;
    if ((rc = slurmrest_number(&signal, "signal_id", &h, &n)) != SLUICE_OK)
        return rc;
    if (h && n > 0 && n < 128)
        *sig = (int)n;
    *has = true;
    return SLUICE_OK;
}

sluice_err slurmrest_v0038_acct_job(const jdec_cur_t *rec, sluice_jobview_t *v)
{
    sluice_err rc;

    if ((rc = job_id(rec, v)) != SLUICE_OK)
        return rc;
    if ((rc = strings(rec, "user", v)) != SLUICE_OK)
        return rc;
    if ((rc = slurmrest_acct_common(rec, v)) != SLUICE_OK)
        return rc;
    rc = db_exit(rec, "exit_code", &v->has_exit, &v->exit_code, &v->exit_signal);
    if (rc != SLUICE_OK)
        return rc;
    return db_exit(rec, "derived_exit_code", &v->has_derived, &v->derived_exit_code,
                   &v->derived_exit_signal);
}
