/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_parse.c - the helpers every slurmrestd version adapter shares:
 * the answer decoder and Slurm's numbers, state names into base + flags,
 * the accounting fields that every version shapes alike, the checks and
 * text pieces of a job description that both submit families use, and a
 * record's cluster identity (another cluster, a federation, a
 * "<id>;<cluster>" job id).
 *
 * Notes:
 * - The bottom of the adapter stack: slurmrest.c dispatches to the version
 *   adapters, and they (and slurmrest.c) call in here.  Nothing in this file
 *   calls back into slurmrest.c or an adapter.
 * - Answers are read with base/jdec.h in lenient mode (slurmrest_decoder():
 *   null is absent, unknown members are ignored, numbers may be bare or
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

/* ---- reading answers --------------------------------------------------------- */

void slurmrest_decoder(jdec_t *d, sluice_error_t *err)
{
    jdec_init(d, JDEC_LENIENT, JDEC_VOICE_EXPECT, SLUICE_EPROTO, err, NULL);
}

/* A bare number: an integer, or a real's integral part when it is finite
 * and fits (else no value). */
static void whole(const json_t *v, bool *present, int64_t *out)
{
    double d;

    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        *present = true;
        return;
    }
    d = json_real_value(v);
    if (!isfinite(d) || d < (double)INT64_MIN || d >= (double)INT64_MAX)
        return; /* "Infinity" style: no finite value */
    *out = (int64_t)d;
    *present = true;
}

sluice_err slurmrest_number(const jdec_cur_t *c, const char *key, bool *present, int64_t *out)
{
    const json_t *v = jdec_value(c, key);
    const json_t *set, *inf, *num;
    jdec_cur_t o;

    *present = false;
    *out = 0;
    if (!jdec_present(c, key))
        return SLUICE_OK;
    if (json_is_number(v)) {
        whole(v, present, out);
        return SLUICE_OK;
    }
    if (!json_is_object(v))
        return jdec_fail(c, key, "expected a number or {set,infinite,number}");
    jdec_member(&o, c, key);
    set = jdec_value(&o, "set");
    inf = jdec_value(&o, "infinite");
    num = jdec_value(&o, "number");
    if ((set != NULL && !json_is_boolean(set)) || (inf != NULL && !json_is_boolean(inf)))
        return jdec_fail(c, key, "expected {set,infinite,number} with boolean flags");
    if (num != NULL && !json_is_number(num) && !json_is_null(num))
        return jdec_fail(c, key, "expected {set,infinite,number} with a numeric number");
    if (json_is_true(inf) || json_is_false(set) || num == NULL || json_is_null(num))
        return SLUICE_OK;
    whole(num, present, out);
    return SLUICE_OK;
}

int64_t slurmrest_num_or_zero(const jdec_cur_t *c, const char *key, sluice_err *rc)
{
    bool has = false;
    int64_t n = 0;

    if (*rc == SLUICE_OK)
        *rc = slurmrest_number(c, key, &has, &n);
    return has ? n : 0;
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

sluice_err slurmrest_state_value(const jdec_cur_t *state, sluice_job_base *base, uint32_t *flags)
{
    jdec_cur_t item;
    const char *name;
    size_t i;

    *base = SLUICE_JOB_BASE_UNKNOWN;
    *flags = 0;
    if (!jdec_present(state, NULL))
        return SLUICE_OK;
    if ((name = jdec_peek_string(state, NULL)) != NULL) {
        slurmrest_state_name(name, base, flags);
        return SLUICE_OK;
    }
    if (!json_is_array(state->v))
        return jdec_fail(state, NULL, "expected a state string or array");
    JDEC_FOREACH(state, i, item)
    {
        if ((name = jdec_peek_string(&item, NULL)) == NULL)
            return jdec_fail(&item, NULL, "expected a string");
        slurmrest_state_name(name, base, flags);
    }
    return SLUICE_OK;
}

/* ---- shared by the accounting parsers of every version ---------------------------- */

sluice_err slurmrest_acct_common(const jdec_cur_t *rec, sluice_jobview_t *v)
{
    jdec_cur_t state, current, comment, het, tm;
    sluice_err rc;

    if ((rc = jdec_object(rec, "state", 0, &state)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(&state, "reason", 0, SIZE_MAX, &v->state_reason)) != SLUICE_OK)
        return rc;
    jdec_member(&current, &state, "current");
    if ((rc = slurmrest_state_value(&current, &v->base, &v->flags)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_object(rec, "comment", 0, &comment)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(&comment, "job", 0, SIZE_MAX, &v->comment)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_object(rec, "het", 0, &het)) != SLUICE_OK)
        return rc;
    v->het_job_id = (uint64_t)slurmrest_num_or_zero(&het, "job_id", &rc);
    v->het_job_offset = (uint32_t)slurmrest_num_or_zero(&het, "job_offset", &rc);
    if (rc != SLUICE_OK)
        return rc;
    if ((rc = jdec_object(rec, "time", 0, &tm)) != SLUICE_OK)
        return rc;
    v->submit_time = slurmrest_num_or_zero(&tm, "submission", &rc);
    v->start_time = slurmrest_num_or_zero(&tm, "start", &rc);
    v->end_time = slurmrest_num_or_zero(&tm, "end", &rc);
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
static bool has_text(const jdec_cur_t *rec, const char *key)
{
    const char *v = jdec_peek_string(rec, key);

    return v != NULL && v[0] != '\0';
}

bool slurmrest_other_cluster(const jdec_cur_t *rec, const char *local)
{
    const char *cluster = jdec_peek_string(rec, "cluster");

    if (has_text(rec, "federation_origin") || has_text(rec, "federation_siblings_active") ||
        has_text(rec, "federation_siblings_viable"))
        return true;
    return cluster != NULL && cluster[0] != '\0' && local != NULL && local[0] != '\0' &&
           strcmp(cluster, local) != 0;
}
