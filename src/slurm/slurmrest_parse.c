/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_parse.c - the helpers every slurmrestd version adapter shares:
 * lenient member getters, state names into base + flags, the accounting
 * fields that every version shapes alike, the checks and text pieces of a
 * job description that both submit families use, and a record's cluster
 * identity (another cluster, a federation, a "<id>;<cluster>" job id).
 *
 * Notes:
 * - The bottom of the adapter stack: slurmrest.c dispatches to the version
 *   adapters, and they (and slurmrest.c) call in here.  Nothing in this file
 *   calls back into slurmrest.c or an adapter.
 * - Parsing is lenient (unknown members are ignored, numbers may be bare or
 *   {set,infinite,number}) but a member of the wrong JSON type is an
 *   SLUICE_EPROTO error that names its path, e.g. "jobs[2].job_state".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurmrest_parse.h"

/* ---- lenient getters --------------------------------------------------------- */

static sluice_err
wrong_type(sluice_error_t *err, const char *path, const char *key, const char *want)
{
    return sluice_errorf(err, SLUICE_EPROTO, "%s%s%s: expected %s", path, key[0] ? "." : "", key,
                         want);
}

sluice_err slurmrest_get_string(
    const json_t *obj, const char *key, const char *path, char **out, sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return SLUICE_OK;
    if (!json_is_string(v))
        return wrong_type(err, path, key, "a string");
    *out = strdup(json_string_value(v));
    if (*out == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s.%s: out of memory", path, key);
    return SLUICE_OK;
}

static sluice_err number_value(const json_t *v,
                               const char *path,
                               const char *key,
                               bool *present,
                               int64_t *out,
                               sluice_error_t *err)
{
    *present = false;
    *out = 0;
    if (v == NULL || json_is_null(v))
        return SLUICE_OK;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        *present = true;
        return SLUICE_OK;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d < (double)INT64_MIN || d > (double)INT64_MAX)
            return SLUICE_OK; /* "Infinity" style: no finite value */
        *out = (int64_t)d;
        *present = true;
        return SLUICE_OK;
    }
    if (json_is_object(v)) {
        const json_t *set = json_object_get(v, "set");
        const json_t *inf = json_object_get(v, "infinite");
        const json_t *num = json_object_get(v, "number");
        if ((set != NULL && !json_is_boolean(set)) || (inf != NULL && !json_is_boolean(inf)))
            return wrong_type(err, path, key, "{set,infinite,number} with boolean flags");
        if (num != NULL && !json_is_number(num) && !json_is_null(num))
            return wrong_type(err, path, key, "{set,infinite,number} with a numeric number");
        if (json_is_true(inf) || json_is_false(set) || num == NULL || json_is_null(num))
            return SLUICE_OK;
        *out =
            json_is_integer(num) ? (int64_t)json_integer_value(num) : (int64_t)json_real_value(num);
        *present = true;
        return SLUICE_OK;
    }
    return wrong_type(err, path, key, "a number or {set,infinite,number}");
}

sluice_err slurmrest_get_number(const json_t *obj,
                                const char *key,
                                const char *path,
                                bool *present,
                                int64_t *out,
                                sluice_error_t *err)
{
    return number_value(json_object_get(obj, key), path, key, present, out, err);
}

const json_t *slurmrest_get_array(
    const json_t *obj, const char *key, const char *path, sluice_err *rc, sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    *rc = SLUICE_OK;
    if (v == NULL || json_is_null(v))
        return NULL;
    if (!json_is_array(v)) {
        *rc = wrong_type(err, path, key, "an array");
        return NULL;
    }
    return v;
}

void slurmrest_state_name(const char *name, sluice_job_base *base, uint32_t *flags)
{
    sluice_job_base b = sluice_job_base_parse(name);

    if (b != SLUICE_JOB_BASE_UNKNOWN) {
        if (*base == SLUICE_JOB_BASE_UNKNOWN)
            *base = b;
        return;
    }
    *flags |= sluice_job_flag_parse(name);
}

sluice_err slurmrest_state_value(const json_t *state,
                                 const char *path,
                                 sluice_job_base *base,
                                 uint32_t *flags,
                                 sluice_error_t *err)
{
    size_t i;
    const json_t *item;

    *base = SLUICE_JOB_BASE_UNKNOWN;
    *flags = 0;
    if (state == NULL || json_is_null(state))
        return SLUICE_OK;
    if (json_is_string(state)) {
        slurmrest_state_name(json_string_value(state), base, flags);
        return SLUICE_OK;
    }
    if (!json_is_array(state))
        return sluice_errorf(err, SLUICE_EPROTO, "%s: expected a state string or array", path);
    json_array_foreach(state, i, item)
    {
        if (!json_is_string(item))
            return sluice_errorf(err, SLUICE_EPROTO, "%s[%zu]: expected a string", path, i);
        slurmrest_state_name(json_string_value(item), base, flags);
    }
    return SLUICE_OK;
}

/* ---- shared by the accounting parsers of every version ---------------------------- */

int64_t slurmrest_num_or_zero(
    const json_t *obj, const char *key, const char *path, sluice_err *rc, sluice_error_t *err)
{
    bool has = false;
    int64_t n = 0;

    if (*rc == SLUICE_OK)
        *rc = slurmrest_get_number(obj, key, path, &has, &n, err);
    return has ? n : 0;
}

/* `obj` must be absent, null or an object. */
static sluice_err
object_or_null(const json_t *obj, const char *path, const char *key, sluice_error_t *err)
{
    if (obj != NULL && !json_is_object(obj) && !json_is_null(obj))
        return sluice_errorf(err, SLUICE_EPROTO, "%s.%s: expected an object", path, key);
    return SLUICE_OK;
}

sluice_err
slurmrest_acct_common(const json_t *rec, const char *path, sluice_jobview_t *v, sluice_error_t *err)
{
    const json_t *state = json_object_get(rec, "state");
    const json_t *het = json_object_get(rec, "het");
    const json_t *tm = json_object_get(rec, "time");
    const json_t *comment = json_object_get(rec, "comment");
    char sub[96];
    sluice_err rc;

    if ((rc = object_or_null(state, path, "state", err)) != SLUICE_OK)
        return rc;
    snprintf(sub, sizeof(sub), "%s.state", path);
    if ((rc = slurmrest_get_string(state, "reason", sub, &v->state_reason, err)) != SLUICE_OK)
        return rc;
    snprintf(sub, sizeof(sub), "%s.state.current", path);
    rc = slurmrest_state_value(json_object_get(state, "current"), sub, &v->base, &v->flags, err);
    if (rc != SLUICE_OK)
        return rc;
    if ((rc = object_or_null(comment, path, "comment", err)) != SLUICE_OK)
        return rc;
    snprintf(sub, sizeof(sub), "%s.comment", path);
    if ((rc = slurmrest_get_string(comment, "job", sub, &v->comment, err)) != SLUICE_OK)
        return rc;
    if ((rc = object_or_null(het, path, "het", err)) != SLUICE_OK)
        return rc;
    snprintf(sub, sizeof(sub), "%s.het", path);
    v->het_job_id = (uint64_t)slurmrest_num_or_zero(het, "job_id", sub, &rc, err);
    v->het_job_offset = (uint32_t)slurmrest_num_or_zero(het, "job_offset", sub, &rc, err);
    if (rc != SLUICE_OK)
        return rc;
    if ((rc = object_or_null(tm, path, "time", err)) != SLUICE_OK)
        return rc;
    snprintf(sub, sizeof(sub), "%s.time", path);
    v->submit_time = slurmrest_num_or_zero(tm, "submission", sub, &rc, err);
    v->start_time = slurmrest_num_or_zero(tm, "start", sub, &rc, err);
    v->end_time = slurmrest_num_or_zero(tm, "end", sub, &rc, err);
    return rc;
}

/* ---- job descriptions (both submit families) --------------------------------------- */

sluice_err slurmrest_check_desc(const sluice_jobdesc_t *d, size_t i, sluice_error_t *err)
{
    if (d->nodes == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "jobs[%zu].nodes: must be at least 1", i);
    if (i == 0 && (d->script == NULL || d->script[0] == '\0'))
        return sluice_errorf(err, SLUICE_EINVAL, "jobs[0].script: missing");
    if (d->n_env > 0 && d->env == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "jobs[%zu].env: NULL array", i);
    return SLUICE_OK;
}

sluice_err slurmrest_gres(const sluice_jobdesc_t *d, const char *prefix, char **out)
{
    const char *name = d->gres_name != NULL && d->gres_name[0] != '\0' ? d->gres_name : "gpu";
    int len = snprintf(NULL, 0, "%s%s:%" PRIu32, prefix, name, d->gpus_per_node);

    *out = malloc((size_t)len + 1);
    if (*out == NULL)
        return SLUICE_ENOMEM;
    snprintf(*out, (size_t)len + 1, "%s%s:%" PRIu32, prefix, name, d->gpus_per_node);
    return SLUICE_OK;
}

sluice_err slurmrest_split_signal(
    const char *spec, size_t i, bool *batch_only, char **name, long *delay, sluice_error_t *err)
{
    const char *p = spec;
    const char *at;
    size_t len;

    *batch_only = false;
    *name = NULL;
    *delay = -1;
    if (strncmp(p, "B:", 2) == 0) {
        *batch_only = true;
        p += 2;
    }
    at = strchr(p, '@');
    len = at != NULL ? (size_t)(at - p) : strlen(p);
    if (len == 0 || len > 16)
        goto bad;
    for (size_t k = 0; k < len; k++) {
        if (!isalnum((unsigned char)p[k]))
            goto bad;
    }
    if (at != NULL) {
        char *end = NULL;
        errno = 0;
        if (!isdigit((unsigned char)at[1]))
            goto bad;
        *delay = strtol(at + 1, &end, 10);
        if (errno != 0 || *end != '\0' || *delay > 65533)
            goto bad;
    }
    *name = strndup(p, len);
    if (*name == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "jobs[%zu].signal: out of memory", i);
    return SLUICE_OK;
bad:
    return sluice_errorf(err, SLUICE_EINVAL,
                         "jobs[%zu].signal: \"%.40s\" is not [B:]NAME[@SECONDS] (e.g. USR1@120)", i,
                         spec);
}

/* ---- cluster identity ------------------------------------------------------ */

/* A cluster name as Slurm writes it: printable, no spaces or ';', short. */
static bool cluster_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c >= 0x7f || c == ';')
            return false;
    }
    return true;
}

sluice_err slurmrest_split_job_id(
    const char *text, const char *path, int64_t *id, char **cluster, sluice_error_t *err)
{
    char *end = NULL;
    unsigned long long v;

    *cluster = NULL;
    if (text == NULL || !isdigit((unsigned char)text[0]))
        goto bad;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || v == 0 || v > INT64_MAX)
        goto bad;
    if (*end == ';') {
        if (!cluster_name_ok(end + 1))
            goto bad;
        if ((*cluster = strdup(end + 1)) == NULL)
            return sluice_errorf(err, SLUICE_ENOMEM, "%s: out of memory", path);
    } else if (*end != '\0') {
        goto bad;
    }
    *id = (int64_t)v;
    return SLUICE_OK;
bad:
    return sluice_errorf(err, SLUICE_EPROTO, "%s: expected a job id or \"<id>;<cluster>\"", path);
}

/* A string member that is set and not empty. */
static bool has_text(const json_t *rec, const char *key)
{
    const char *v = json_string_value(json_object_get(rec, key));

    return v != NULL && v[0] != '\0';
}

bool slurmrest_other_cluster(const json_t *rec, const char *local)
{
    const char *cluster = json_string_value(json_object_get(rec, "cluster"));

    if (has_text(rec, "federation_origin") || has_text(rec, "federation_siblings_active") ||
        has_text(rec, "federation_siblings_viable"))
        return true;
    return cluster != NULL && cluster[0] != '\0' && local != NULL && local[0] != '\0' &&
           strcmp(cluster, local) != 0;
}
