/* SPDX-License-Identifier: Apache-2.0 */
/* jobdesc.c - the neutral job model: cleanup, environment, JSON view, and
 * the Slurm state name tables.
 *
 * Notes: the base and flag tables come from the X-macro lists in jobdesc.h,
 * which follow Slurm's JOB_STATE table (base states first, then flags in
 * Slurm's order) as the OpenAPI documents of v0.0.40 to v0.0.46 list it
 * (../shared/openapi/slurmrestd): one list for every version sluice reads,
 * EXPEDITING from v0.0.44 on; UPDATE_DB is flag bit 9 as releases before
 * 24.11 named it (Slurm removed it then).  v0.0.38 sends one state string
 * instead, which the adapter reads into the same names.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/jobdesc.h>

static const char *const base_names[] = {"UNKNOWN",
#define BASE_NAME(n) #n,
                                         SLUICE_JOB_BASE_MAP(BASE_NAME)
#undef BASE_NAME
};

static const char *const flag_names[] = {
#define FLAG_NAME(n) #n,
    SLUICE_JOB_FLAG_MAP(FLAG_NAME)
#undef FLAG_NAME
};

void sluice_jobdesc_clear(sluice_jobdesc_t *d)
{
    if (d == NULL)
        return;
    free(d->name);
    free(d->comment);
    free(d->partition);
    free(d->account);
    free(d->qos);
    free(d->reservation);
    free(d->gres_name);
    free(d->constraint);
    free(d->workdir);
    free(d->std_out);
    free(d->std_err);
    free(d->dependency);
    free(d->signal);
    for (size_t i = 0; i < d->n_env; i++) {
        free(d->env[i].name);
        free(d->env[i].value);
    }
    free(d->env);
    free(d->script);
    memset(d, 0, sizeof(*d));
}

/* strdup of NULL is NULL; *bad is set when a copy fails. */
static char *dup_or_null(const char *s, bool *bad)
{
    char *c;

    if (s == NULL)
        return NULL;
    if ((c = strdup(s)) == NULL)
        *bad = true;
    return c;
}

sluice_err
sluice_jobdesc_copy(sluice_jobdesc_t *dst, const sluice_jobdesc_t *src, sluice_error_t *err)
{
    bool bad = false;

    if (dst == NULL || src == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "jobdesc_copy: NULL argument");
    *dst = *src; /* the numbers and flags; every pointer is replaced below */
    dst->name = dup_or_null(src->name, &bad);
    dst->comment = dup_or_null(src->comment, &bad);
    dst->partition = dup_or_null(src->partition, &bad);
    dst->account = dup_or_null(src->account, &bad);
    dst->qos = dup_or_null(src->qos, &bad);
    dst->reservation = dup_or_null(src->reservation, &bad);
    dst->gres_name = dup_or_null(src->gres_name, &bad);
    dst->constraint = dup_or_null(src->constraint, &bad);
    dst->workdir = dup_or_null(src->workdir, &bad);
    dst->std_out = dup_or_null(src->std_out, &bad);
    dst->std_err = dup_or_null(src->std_err, &bad);
    dst->dependency = dup_or_null(src->dependency, &bad);
    dst->signal = dup_or_null(src->signal, &bad);
    dst->script = dup_or_null(src->script, &bad);
    dst->env = NULL;
    dst->n_env = 0;
    if (!bad && src->n_env > 0) {
        if ((dst->env = calloc(src->n_env, sizeof(*dst->env))) == NULL)
            bad = true;
        for (size_t i = 0; !bad && i < src->n_env; i++, dst->n_env++) {
            dst->env[i].name = dup_or_null(src->env[i].name, &bad);
            dst->env[i].value = dup_or_null(src->env[i].value, &bad);
        }
    }
    if (bad) {
        sluice_jobdesc_clear(dst);
        return sluice_errorf(err, SLUICE_ENOMEM, "jobdesc_copy: out of memory");
    }
    return SLUICE_OK;
}

sluice_err
sluice_jobdesc_setenv(sluice_jobdesc_t *d, const char *name, const char *value, sluice_error_t *err)
{
    sluice_envvar_t *grown = NULL;
    char *n = NULL;
    char *v = NULL;

    if (d == NULL || name == NULL || value == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "jobdesc_setenv: NULL argument");
    if (name[0] == '\0' || strchr(name, '=') != NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "environment: name must be non-empty and contain no '='");
    n = strdup(name);
    v = strdup(value);
    if (n == NULL || v == NULL)
        goto nomem;
    grown = realloc(d->env, (d->n_env + 1) * sizeof(*grown));
    if (grown == NULL)
        goto nomem;
    d->env = grown;
    d->env[d->n_env].name = n;
    d->env[d->n_env].value = v;
    d->n_env++;
    return SLUICE_OK;
nomem:
    free(n);
    free(v);
    return sluice_errorf(err, SLUICE_ENOMEM, "environment: out of memory");
}

/* Set key to a string, or to JSON null when s is NULL. */
static int set_str(json_t *obj, const char *key, const char *s)
{
    return json_object_set_new(obj, key, s != NULL ? json_string(s) : json_null());
}

json_t *sluice_jobdesc_to_json(const sluice_jobdesc_t *d)
{
    json_t *o = NULL;
    json_t *env = NULL;
    int rc = 0;

    if (d == NULL)
        return NULL;
    o = json_object();
    env = json_array();
    if (o == NULL || env == NULL)
        goto fail;
    rc |= set_str(o, "name", d->name);
    rc |= set_str(o, "comment", d->comment);
    rc |= set_str(o, "partition", d->partition);
    rc |= set_str(o, "account", d->account);
    rc |= set_str(o, "qos", d->qos);
    rc |= set_str(o, "reservation", d->reservation);
    rc |= json_object_set_new(o, "time_limit", json_integer((json_int_t)d->time_limit));
    rc |= json_object_set_new(o, "nodes", json_integer((json_int_t)d->nodes));
    rc |= json_object_set_new(o, "tasks_per_node", json_integer((json_int_t)d->tasks_per_node));
    rc |= json_object_set_new(o, "cpus_per_task", json_integer((json_int_t)d->cpus_per_task));
    rc |= json_object_set_new(o, "mem_per_node_mib", json_integer((json_int_t)d->mem_per_node_mib));
    rc |= json_object_set_new(o, "gpus_per_node", json_integer((json_int_t)d->gpus_per_node));
    rc |= set_str(o, "gres_name", d->gres_name);
    rc |= set_str(o, "constraint", d->constraint);
    rc |= set_str(o, "workdir", d->workdir);
    rc |= set_str(o, "std_out", d->std_out);
    rc |= set_str(o, "std_err", d->std_err);
    rc |= json_object_set_new(o, "hold", json_boolean(d->hold));
    rc |= set_str(o, "dependency", d->dependency);
    rc |= json_object_set_new(o, "requeue", json_boolean(d->requeue));
    rc |= set_str(o, "signal", d->signal);
    rc |= json_object_set_new(o, "exclusive", json_boolean(d->exclusive));
    for (size_t i = 0; i < d->n_env; i++) {
        json_t *e = json_pack("{s:s, s:s}", "name", d->env[i].name, "value", d->env[i].value);
        if (e == NULL || json_array_append_new(env, e) != 0)
            goto fail;
    }
    rc |= json_object_set_new(o, "env", env);
    env = NULL;
    rc |= set_str(o, "script", d->script);
    if (rc != 0)
        goto fail;
    return o;
fail:
    json_decref(env);
    json_decref(o);
    return NULL;
}

const char *sluice_job_base_name(sluice_job_base base)
{
    if ((int)base < 0 || base >= SLUICE_JOB_BASE_COUNT_)
        return "UNKNOWN";
    return base_names[base];
}

sluice_job_base sluice_job_base_parse(const char *name)
{
    if (name == NULL)
        return SLUICE_JOB_BASE_UNKNOWN;
    for (int i = 1; i < SLUICE_JOB_BASE_COUNT_; i++) {
        if (strcmp(name, base_names[i]) == 0)
            return (sluice_job_base)i;
    }
    return SLUICE_JOB_BASE_UNKNOWN;
}

uint32_t sluice_job_flag_parse(const char *name)
{
    if (name == NULL)
        return 0;
    for (int i = 0; i < SLUICE_JOB_FLAG_COUNT_; i++) {
        if (strcmp(name, flag_names[i]) == 0)
            return UINT32_C(1) << i;
    }
    return 0;
}

const char *sluice_job_flag_name(uint32_t bit)
{
    for (int i = 0; i < SLUICE_JOB_FLAG_COUNT_; i++) {
        if (bit == (UINT32_C(1) << i))
            return flag_names[i];
    }
    return NULL;
}

bool sluice_job_is_final(sluice_job_base base, uint32_t flags)
{
    if (flags & (SLUICE_JOB_REQUEUE_FLAGS | SLUICE_JOB_ENDING_FLAGS))
        return false;
    switch (base) {
    case SLUICE_JOB_BASE_UNKNOWN:
    case SLUICE_JOB_PENDING:
    case SLUICE_JOB_RUNNING:
    case SLUICE_JOB_SUSPENDED:
        return false;
    default:
        return (int)base > 0 && base < SLUICE_JOB_BASE_COUNT_;
    }
}

void sluice_jobview_clear(sluice_jobview_t *v)
{
    if (v == NULL)
        return;
    free(v->name);
    free(v->comment);
    free(v->user_name);
    free(v->partition);
    free(v->nodes);
    free(v->state_reason);
    free(v->state_description);
    memset(v, 0, sizeof(*v));
}

void sluice_wait_status_split(int64_t status, int *exit_code, int *signal)
{
    int code = 0;
    int sig = 0;

    /* POSIX layout: low 7 bits = terminating signal, bits 8-15 = exit code
     * of a normal exit.  Negative or oversized values (NO_VAL) carry none. */
    if (status >= 0 && status <= 0xffff) {
        sig = (int)(status & 0x7f);
        if (sig == 0x7f) /* stopped, not terminated */
            sig = 0;
        if (sig == 0)
            code = (int)((status >> 8) & 0xff);
    }
    if (exit_code != NULL)
        *exit_code = code;
    if (signal != NULL)
        *signal = sig;
}
