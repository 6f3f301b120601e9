/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_v0040.c - the data_parser shapes of v0.0.40 through v0.0.46.
 *
 * Submit: the script goes in "job.script" / "jobs[0].script" (the top-level
 * "script" is marked deprecated in the v0.0.41-v0.0.44 documents), the
 * environment is a "K=V" array, counts the documents type as
 * {set,infinite,number} use that form, exclusivity is "shared": ["none"]
 * ("exclusive" is deprecated in .40/.41 and gone from .42), GPUs are
 * "tres_per_node": "gres/gpu:N", requeue is a plain boolean and the warning
 * signal is kill_warning_signal/_delay/_flags.  Per-version differences that
 * matter to sluice live in slurmrest_info_t (slurmrest.c).
 *
 * Responses: job_state is an array (base first, then flags); exit codes are
 * process_exit_code_verbose {status[], return_code, signal{id,name}}; most
 * numbers may be bare or {set,infinite,number}.
 *
 * v0.0.46 (Slurm 26.11; checked against its generated document and
 * data_parser/v0.0.46): the paths and every member written here or read
 * below are v0.0.45's.  What changed is outside them: job_desc_msg and
 * job_info name the runtime plugin "runtime" instead of "container_type"
 * (sluice sets and reads neither), update_node_msg lost reason_uid,
 * partition_info some memory and oversubscribe members, and the job flags
 * gained RESET_SPREAD_SEGMENTS and RESET_CONSOLIDATE_SEGMENTS.
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

static json_t *no_val(json_int_t n)
{
    return json_pack("{s:b, s:b, s:I}", "set", 1, "infinite", 0, "number", n);
}

static sluice_err env_array(const sluice_jobdesc_t *d, json_t **out)
{
    json_t *a = json_array();

    if (a == NULL)
        return SLUICE_ENOMEM;
    for (size_t k = 0; k < d->n_env; k++) {
        size_t len = strlen(d->env[k].name) + strlen(d->env[k].value) + 2;
        char *kv = malloc(len);
        if (kv == NULL) {
            json_decref(a);
            return SLUICE_ENOMEM;
        }
        snprintf(kv, len, "%s=%s", d->env[k].name, d->env[k].value);
        if (json_array_append_new(a, json_string(kv)) != 0) {
            free(kv);
            json_decref(a);
            return SLUICE_ENOMEM;
        }
        free(kv);
    }
    *out = a;
    return SLUICE_OK;
}

static sluice_err component(const sluice_jobdesc_t *d, size_t i, json_t **out, sluice_error_t *err)
{
    json_t *o = json_object();
    json_t *env = NULL;
    char nodes[24];
    char *gres = NULL;
    char *signame = NULL;
    int rc = 0;
    sluice_err src = SLUICE_OK;

    if (o == NULL)
        goto nomem;
    if (i == 0)
        rc |= json_object_set_new(o, "script", json_string(d->script));
    rc |= put_str(o, "name", d->name);
    rc |= put_str(o, "comment", d->comment);
    rc |= put_str(o, "partition", d->partition);
    rc |= put_str(o, "account", d->account);
    rc |= put_str(o, "qos", d->qos);
    rc |= put_str(o, "reservation", d->reservation);
    if (d->time_limit > 0)
        rc |= json_object_set_new(o, "time_limit", no_val(d->time_limit));
    snprintf(nodes, sizeof(nodes), "%u", (unsigned)d->nodes);
    rc |= json_object_set_new(o, "nodes", json_string(nodes));
    if (d->tasks_per_node > 0)
        rc |= json_object_set_new(o, "tasks_per_node", json_integer(d->tasks_per_node));
    if (d->cpus_per_task > 0)
        rc |= json_object_set_new(o, "cpus_per_task", json_integer(d->cpus_per_task));
    if (d->mem_per_node_mib > 0)
        rc |= json_object_set_new(o, "memory_per_node", no_val((json_int_t)d->mem_per_node_mib));
    if (d->gpus_per_node > 0) {
        if (slurmrest_gres(d, "gres/", &gres) != SLUICE_OK)
            goto nomem;
        rc |= json_object_set_new(o, "tres_per_node", json_string(gres));
    }
    rc |= put_str(o, "constraints", d->constraint);
    rc |= put_str(o, "current_working_directory", d->workdir);
    rc |= put_str(o, "standard_output", d->std_out);
    rc |= put_str(o, "standard_error", d->std_err);
    if (d->hold)
        rc |= json_object_set_new(o, "hold", json_true());
    rc |= put_str(o, "dependency", d->dependency);
    rc |= json_object_set_new(o, "requeue", json_boolean(d->requeue));
    if (d->signal != NULL) {
        bool batch = false;
        long delay = -1;
        if ((src = slurmrest_split_signal(d->signal, i, &batch, &signame, &delay, err)) != 0)
            goto out;
        rc |= json_object_set_new(o, "kill_warning_signal", json_string(signame));
        if (delay >= 0)
            rc |= json_object_set_new(o, "kill_warning_delay", no_val(delay));
        if (batch)
            rc |= json_object_set_new(o, "kill_warning_flags", json_pack("[s]", "BATCH_JOB"));
    }
    if (d->exclusive)
        rc |= json_object_set_new(o, "shared", json_pack("[s]", "none"));
    if (env_array(d, &env) != SLUICE_OK)
        goto nomem;
    rc |= json_object_set_new(o, "environment", env);
    if (rc != 0)
        goto nomem;
    *out = o;
    o = NULL;
    goto out;
nomem:
    src = sluice_errorf(err, SLUICE_ENOMEM, "jobs[%zu]: out of memory (or invalid UTF-8)", i);
out:
    free(gres);
    free(signame);
    json_decref(o);
    return src;
}

sluice_err slurmrest_v0040_submit_body(const slurmrest_info_t *info,
                                       const sluice_jobdesc_t *descs,
                                       size_t n,
                                       json_t **out,
                                       sluice_error_t *err)
{
    json_t *body = NULL;
    json_t *list = NULL;
    json_t *job = NULL;
    sluice_err rc = SLUICE_OK;

    (void)info; /* the body has the same shape on every version of the family */
    for (size_t i = 0; i < n; i++) {
        if ((rc = slurmrest_check_desc(&descs[i], i, err)) != SLUICE_OK)
            return rc;
    }
    if ((body = json_object()) == NULL)
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
        rc = json_object_set_new(body, "jobs", list) != 0 ? SLUICE_ENOMEM : SLUICE_OK;
        list = NULL;
        if (rc != SLUICE_OK)
            goto nomem;
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

/* process_exit_code_verbose, or a bare number (treated as a return code). */
static sluice_err
verbose_exit(const jdec_cur_t *rec, const char *key, bool *has, int *code, int *sig)
{
    const json_t *raw = jdec_value(rec, key);
    jdec_cur_t ec, status, item, signal;
    const char *name;
    bool pending = false;
    bool h = false;
    int64_t n = 0;
    size_t i;
    sluice_err rc;

    *has = false;
    *code = 0;
    *sig = 0;
    if (!jdec_present(rec, key))
        return SLUICE_OK;
    if (json_is_integer(raw)) {
        *has = true;
        *code = (int)(json_integer_value(raw) & 0xff);
        return SLUICE_OK;
    }
    if ((rc = jdec_object(rec, key, 0, &ec)) != SLUICE_OK)
        return rc;
    jdec_member(&status, &ec, "status");
    if ((name = jdec_peek_string(&status, NULL)) != NULL) {
        pending = strcmp(name, "PENDING") == 0;
    } else if (json_is_array(status.v)) {
        JDEC_FOREACH(&status, i, item)
        {
            if ((name = jdec_peek_string(&item, NULL)) == NULL)
                return jdec_fail(&item, NULL, "expected a string");
            if (strcmp(name, "PENDING") == 0)
                pending = true;
        }
    } else if (jdec_present(&status, NULL)) {
        return jdec_fail(&status, NULL, "expected an array");
    }
    if ((rc = slurmrest_number(&ec, "return_code", &h, &n)) != SLUICE_OK)
        return rc;
    if (h && n >= 0)
        *code = (int)(n & 0xff);
    if ((rc = jdec_object(&ec, "signal", 0, &signal)) != SLUICE_OK)
        return rc;
    if ((rc = slurmrest_number(&signal, "id", &h, &n)) != SLUICE_OK)
        return rc;
    if (h && n > 0 && n < 128)
        *sig = (int)n;
    *has = !pending;
    if (pending) {
        *code = 0;
        *sig = 0;
    }
    return SLUICE_OK;
}

static sluice_err common(const jdec_cur_t *rec, const char *user_key, sluice_jobview_t *v)
{
    bool has = false;
    int64_t id = 0;
    sluice_err rc;

    if ((rc = slurmrest_number(rec, "job_id", &has, &id)) != SLUICE_OK)
        return rc;
    if (!has || id <= 0)
        return jdec_fail(rec, "job_id", "missing or not positive");
    v->job_id = (uint64_t)id;
    if ((rc = jdec_strdup(rec, "name", 0, SIZE_MAX, &v->name)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, user_key, 0, SIZE_MAX, &v->user_name)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, "partition", 0, SIZE_MAX, &v->partition)) != SLUICE_OK)
        return rc;
    return jdec_strdup(rec, "nodes", 0, SIZE_MAX, &v->nodes);
}

sluice_err
slurmrest_v0040_job(const slurmrest_info_t *info, const jdec_cur_t *rec, sluice_jobview_t *v)
{
    jdec_cur_t state;
    sluice_err rc;

    (void)info;
    if ((rc = common(rec, "user_name", v)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, "comment", 0, SIZE_MAX, &v->comment)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(rec, "state_reason", 0, SIZE_MAX, &v->state_reason)) != SLUICE_OK)
        return rc;
    rc = jdec_strdup(rec, "state_description", 0, SIZE_MAX, &v->state_description);
    if (rc != SLUICE_OK)
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
    rc = verbose_exit(rec, "exit_code", &v->has_exit, &v->exit_code, &v->exit_signal);
    if (rc != SLUICE_OK)
        return rc;
    return verbose_exit(rec, "derived_exit_code", &v->has_derived, &v->derived_exit_code,
                        &v->derived_exit_signal);
}

sluice_err
slurmrest_v0040_acct_job(const slurmrest_info_t *info, const jdec_cur_t *rec, sluice_jobview_t *v)
{
    sluice_err rc;

    (void)info;
    if ((rc = common(rec, "user", v)) != SLUICE_OK)
        return rc;
    if ((rc = slurmrest_acct_common(rec, v)) != SLUICE_OK)
        return rc;
    v->restart_count = (uint32_t)slurmrest_num_or_zero(rec, "restart_cnt", &rc);
    if (rc != SLUICE_OK)
        return rc;
    rc = verbose_exit(rec, "exit_code", &v->has_exit, &v->exit_code, &v->exit_signal);
    if (rc != SLUICE_OK)
        return rc;
    return verbose_exit(rec, "derived_exit_code", &v->has_derived, &v->derived_exit_code,
                        &v->derived_exit_signal);
}
