/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest.c - the slurmrestd version table, URL paths, the response
 * envelope, and the submit, jobs and jobs/state entry points that dispatch
 * to the version adapters (slurmrest_v0038.c, slurmrest_v0040.c).
 *
 * Notes:
 * - Calls go one way: this file -> the adapters -> slurmrest_parse.c (the
 *   answer decoder and shared parsers).  The cluster-status parsers
 *   (diag, nodes, ping) live in slurmrest_status.c.
 * - Parsing is lenient (base/jdec.h through slurmrest_decoder(): unknown
 *   members are ignored, null is absent, numbers may be bare or
 *   {set,infinite,number}) but a member of the wrong JSON type is an
 *   SLUICE_EPROTO error that names its path, e.g. "jobs[2].job_state".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "slurmrest.h"
#include "slurmrest_parse.h"

/* Paths are short; the cap only guards against absurd job-id lists. */
#define PATH_MAX_LEN (1024 * 1024)

/* removed_in: Slurm's "Data Parser Lifecycle" (doc/html/rest_clients.shtml
 * of 26.11; RELEASE_NOTES.md: v0.0.43 "will be removed in Slurm 27.05");
 * v0.0.38 is absent from 24.05's tree (slurmrestd-api.md 1.1).  v0.0.46 has
 * no announced removal yet. */
static const slurmrest_info_t versions[] = {
    {SLUICE_REST_V0038, "v0.0.38", 38, false, false, false, false, "24.05"},
    {SLUICE_REST_V0040, "v0.0.40", 40, true, true, false, true, "25.11"},
    {SLUICE_REST_V0041, "v0.0.41", 40, true, true, false, true, "26.05"},
    {SLUICE_REST_V0042, "v0.0.42", 40, false, false, true, true, "26.11"},
    {SLUICE_REST_V0043, "v0.0.43", 40, false, false, true, true, "27.05"},
    {SLUICE_REST_V0044, "v0.0.44", 40, false, false, true, true, "27.11"},
    {SLUICE_REST_V0045, "v0.0.45", 40, false, false, true, true, "28.05"},
    {SLUICE_REST_V0046, "v0.0.46", 40, false, false, true, true, NULL},
};

const slurmrest_info_t *slurmrest_info(sluice_rest_version v)
{
    if ((int)v < 0 || v >= SLUICE_REST_VERSION_COUNT_)
        return NULL;
    return &versions[v];
}

const char *sluice_rest_version_name(sluice_rest_version v)
{
    const slurmrest_info_t *info = slurmrest_info(v);

    return info != NULL ? info->name : "unknown";
}

sluice_err
sluice_rest_version_parse(const char *text, sluice_rest_version *out, sluice_error_t *err)
{
    const char *p = text;
    const char *slash;
    unsigned minor = 0;
    int used = 0;

    if (text == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "rest version: NULL argument");
    slash = strrchr(p, '/');
    if (slash != NULL)
        p = slash + 1;
    if (p[0] == 'v')
        p++;
    if (sscanf(p, "0.0.%2u%n", &minor, &used) != 1 || p[used] != '\0' || used != 6)
        return sluice_errorf(err, SLUICE_EINVAL, "rest version: \"%.64s\" is not v0.0.NN", text);
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        if (strcmp(versions[i].name + 1, p) == 0) {
            *out = versions[i].v;
            return SLUICE_OK;
        }
    }
    return sluice_errorf(err, SLUICE_EUNSUPPORTED, "rest version: v0.0.%02u is not supported",
                         minor);
}

/* ---- URL paths ------------------------------------------------------------ */

static sluice_err encode(buf_t *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    sluice_err rc = SLUICE_OK;

    for (const unsigned char *p = (const unsigned char *)s; *p != '\0' && rc == SLUICE_OK; p++) {
        if (isalnum(*p) || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            rc = buf_append(b, p, 1);
        } else {
            char esc[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rc = buf_append(b, esc, 3);
        }
    }
    return rc;
}

static sluice_err put_time(buf_t *b, const slurmrest_info_t *info, int64_t t)
{
    return buf_printf(b, "%s%" PRId64, info->uts_time_query ? "uts" : "", t);
}

static sluice_err finish(buf_t *b, sluice_err rc, char **out, sluice_error_t *err)
{
    if (rc == SLUICE_OK) {
        *out = buf_take(b);
        if (*out == NULL)
            rc = SLUICE_ENOMEM;
    }
    buf_free(b);
    if (rc != SLUICE_OK)
        return sluice_errorf(err, rc, "rest path: %s", sluice_strerror(rc));
    return SLUICE_OK;
}

static sluice_err
path_start(sluice_rest_version v, char **out, const slurmrest_info_t **info, sluice_error_t *err)
{
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: NULL output");
    *info = slurmrest_info(v);
    if (*info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: unknown version %d", (int)v);
    return SLUICE_OK;
}

static sluice_err simple_path(
    sluice_rest_version v, const char *api, const char *what, char **out, sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/%s/%s/%s", api, info->name, what);
    return finish(&b, rc, out, err);
}

sluice_err sluice_rest_path_submit(sluice_rest_version v, char **out, sluice_error_t *err)
{
    return simple_path(v, "slurm", "job/submit", out, err);
}

sluice_err sluice_rest_path_diag(sluice_rest_version v, char **out, sluice_error_t *err)
{
    return simple_path(v, "slurm", "diag/", out, err);
}

sluice_err sluice_rest_path_nodes(sluice_rest_version v, char **out, sluice_error_t *err)
{
    return simple_path(v, "slurm", "nodes/", out, err);
}

sluice_err sluice_rest_path_ping(sluice_rest_version v, char **out, sluice_error_t *err)
{
    return simple_path(v, "slurm", "ping/", out, err);
}

/* GET /slurm/vX/node/{name}: the same path on every version (v0.0.38 too). */
sluice_err
sluice_rest_path_node(sluice_rest_version v, const char *name, char **out, sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    if (name == NULL || name[0] == '\0' || strlen(name) > SLUICE_REST_NODE_NAME_MAX)
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: node name empty or longer than %d",
                             SLUICE_REST_NODE_NAME_MAX);
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/slurm/%s/node/", info->name);
    if (rc == SLUICE_OK)
        rc = encode(&b, name);
    return finish(&b, rc, out, err);
}

static sluice_err
id_path(sluice_rest_version v, const char *prefix, uint64_t job_id, char **out, sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    if (job_id == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: job id 0");
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/%s/%s/job/%" PRIu64, prefix, info->name, job_id);
    return finish(&b, rc, out, err);
}

sluice_err
sluice_rest_path_job(sluice_rest_version v, uint64_t job_id, char **out, sluice_error_t *err)
{
    return id_path(v, "slurm", job_id, out, err);
}

sluice_err
sluice_rest_path_acct_job(sluice_rest_version v, uint64_t job_id, char **out, sluice_error_t *err)
{
    return id_path(v, "slurmdb", job_id, out, err);
}

sluice_err sluice_rest_path_cancel(
    sluice_rest_version v, uint64_t job_id, const char *signal, char **out, sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    if (job_id == 0)
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: job id 0");
    if (signal != NULL && signal[0] == '\0')
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: empty signal");
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/slurm/%s/job/%" PRIu64, info->name, job_id);
    if (rc == SLUICE_OK && signal != NULL) {
        rc = buf_puts(&b, "?signal=");
        if (rc == SLUICE_OK)
            rc = encode(&b, signal);
    }
    return finish(&b, rc, out, err);
}

sluice_err
sluice_rest_path_jobs(sluice_rest_version v, int64_t update_time, char **out, sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/slurm/%s/jobs/", info->name);
    if (rc == SLUICE_OK && update_time >= 0) {
        rc = buf_puts(&b, "?update_time=");
        if (rc == SLUICE_OK)
            rc = put_time(&b, info, update_time);
    }
    return finish(&b, rc, out, err);
}

sluice_err sluice_rest_path_jobs_state(
    sluice_rest_version v, const uint64_t *job_ids, size_t n, char **out, sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    if (!info->jobs_state)
        return sluice_errorf(err, SLUICE_EUNSUPPORTED, "rest path: %s has no jobs/state endpoint",
                             info->name);
    if (n > 0 && job_ids == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "rest path: NULL job id list");
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/slurm/%s/jobs/state/", info->name);
    /* Repeated keys: a literal comma list is refused (400/422, live 25.05). */
    for (size_t i = 0; i < n && rc == SLUICE_OK; i++) {
        if (job_ids[i] == 0) {
            buf_free(&b);
            return sluice_errorf(err, SLUICE_EINVAL, "rest path: job_ids[%zu] is 0", i);
        }
        rc = buf_printf(&b, "%cjob_id=%" PRIu64, i == 0 ? '?' : '&', job_ids[i]);
    }
    return finish(&b, rc, out, err);
}

sluice_err sluice_rest_path_acct_jobs(sluice_rest_version v,
                                      const char *job_name,
                                      const char *user,
                                      int64_t start_time,
                                      int64_t end_time,
                                      char **out,
                                      sluice_error_t *err)
{
    const slurmrest_info_t *info = NULL;
    buf_t b = BUF_INIT;
    sluice_err rc;
    char sep = '?';

    if ((rc = path_start(v, out, &info, err)) != SLUICE_OK)
        return rc;
    buf_init(&b, PATH_MAX_LEN);
    rc = buf_printf(&b, "/slurmdb/%s/jobs/", info->name);
    if (rc == SLUICE_OK && job_name != NULL) {
        rc = buf_printf(&b, "%cjob_name=", sep);
        if (rc == SLUICE_OK)
            rc = encode(&b, job_name);
        sep = '&';
    }
    if (rc == SLUICE_OK && user != NULL) {
        rc = buf_printf(&b, "%cusers=", sep);
        if (rc == SLUICE_OK)
            rc = encode(&b, user);
        sep = '&';
    }
    if (rc == SLUICE_OK && start_time >= 0) {
        rc = buf_printf(&b, "%cstart_time=", sep);
        if (rc == SLUICE_OK)
            rc = put_time(&b, info, start_time);
        sep = '&';
    }
    if (rc == SLUICE_OK && end_time >= 0) {
        rc = buf_printf(&b, "%cend_time=", sep);
        if (rc == SLUICE_OK)
            rc = put_time(&b, info, end_time);
    }
    return finish(&b, rc, out, err);
}

/* ---- submit body ----------------------------------------------------------- */

sluice_err sluice_rest_submit_body(sluice_rest_version v,
                                   const sluice_jobdesc_t *descs,
                                   size_t n,
                                   json_t **out,
                                   sluice_error_t *err)
{
    const slurmrest_info_t *info = slurmrest_info(v);

    if (info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "submit body: unknown version %d", (int)v);
    if (descs == NULL || n == 0 || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "submit body: no job description");
    if (n > 128) /* MAX_HET_JOB_COMPONENTS */
        return sluice_errorf(err, SLUICE_EINVAL, "submit body: %zu components (at most 128)", n);
    if (info->family == 38)
        return slurmrest_v0038_submit_body(descs, n, out, err);
    return slurmrest_v0040_submit_body(info, descs, n, out, err);
}

/* ---- envelope ---------------------------------------------------------------- */

void sluice_rest_envelope_clear(sluice_rest_envelope_t *e)
{
    if (e == NULL)
        return;
    for (size_t i = 0; i < e->n_errors; i++) {
        free(e->errors[i].error);
        free(e->errors[i].description);
    }
    free(e->errors);
    for (size_t i = 0; i < e->n_warnings; i++)
        free(e->warnings[i]);
    free(e->warnings);
    free(e->release);
    free(e->cluster);
    free(e->data_parser);
    free(e->plugin_type);
    memset(e, 0, sizeof(*e));
}

static sluice_err parse_meta(const jdec_cur_t *root, sluice_rest_envelope_t *e)
{
    jdec_cur_t meta, plugin, slurm;
    const json_t *named;
    sluice_err rc;

    if ((rc = jdec_object(root, "meta", 0, &meta)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_object(&meta, "plugin", JDEC_SOFT, &plugin)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(&plugin, "type", 0, SIZE_MAX, &e->plugin_type)) != SLUICE_OK)
        return rc;
    if ((rc = jdec_strdup(&plugin, "data_parser", 0, SIZE_MAX, &e->data_parser)) != SLUICE_OK)
        return rc;
    /* v0.0.38/39 say "Slurm", v0.0.40+ "slurm" (named "meta.slurm" either way). */
    if ((named = jdec_value(&meta, "slurm")) == NULL)
        named = jdec_value(&meta, "Slurm");
    jdec_root(&slurm, root->d, json_is_object(named) ? named : NULL, "meta.slurm");
    if ((rc = jdec_strdup(&slurm, "release", 0, SIZE_MAX, &e->release)) != SLUICE_OK)
        return rc;
    return jdec_strdup(&slurm, "cluster", 0, SIZE_MAX, &e->cluster);
}

sluice_err sluice_rest_parse_envelope(sluice_rest_version v,
                                      const json_t *resp,
                                      sluice_rest_envelope_t *out,
                                      sluice_error_t *err)
{
    sluice_rest_envelope_t e = {0};
    jdec_t d;
    jdec_cur_t root, errors, warnings, item;
    size_t i;
    sluice_err rc;

    if (slurmrest_info(v) == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "envelope: bad arguments");
    if (!json_is_object(resp))
        return sluice_errorf(err, SLUICE_EPROTO, "response: expected a JSON object");
    slurmrest_decoder(&d, err);
    jdec_root(&root, &d, resp, "");
    if ((rc = parse_meta(&root, &e)) != SLUICE_OK)
        goto out;
    if ((rc = jdec_array(&root, "errors", 0, &errors)) != SLUICE_OK)
        goto out;
    if (jdec_len(&errors) > 0 &&
        (e.errors = calloc(jdec_len(&errors), sizeof(*e.errors))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "errors: out of memory");
        goto out;
    }
    JDEC_FOREACH(&errors, i, item)
    {
        sluice_rest_error_t *x = &e.errors[e.n_errors];
        bool has = false;
        int64_t num = 0;

        if (!json_is_object(item.v)) {
            rc = jdec_fail(&item, NULL, "expected an object");
            goto out;
        }
        e.n_errors++;
        rc = slurmrest_number(&item, "error_number", &has, &num);
        if (rc == SLUICE_OK && !has) /* v0.0.38 submit path */
            rc = slurmrest_number(&item, "error_code", &has, &num);
        if (rc == SLUICE_OK)
            rc = jdec_strdup(&item, "error", 0, SIZE_MAX, &x->error);
        if (rc == SLUICE_OK)
            rc = jdec_strdup(&item, "description", 0, SIZE_MAX, &x->description);
        if (rc != SLUICE_OK)
            goto out;
        x->number = has ? (long)num : 0;
    }
    if ((rc = jdec_array(&root, "warnings", 0, &warnings)) != SLUICE_OK)
        goto out;
    if (jdec_len(&warnings) > 0 &&
        (e.warnings = calloc(jdec_len(&warnings), sizeof(*e.warnings))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "warnings: out of memory");
        goto out;
    }
    JDEC_FOREACH(&warnings, i, item)
    {
        char *text = NULL;

        if (jdec_peek_string(&item, NULL) != NULL) {
            text = strdup(jdec_peek_string(&item, NULL));
        } else if (json_is_object(item.v)) {
            if ((rc = jdec_strdup(&item, "description", 0, SIZE_MAX, &text)) != SLUICE_OK)
                goto out;
            if (text == NULL)
                text = strdup("");
        } else {
            rc = jdec_fail(&item, NULL, "expected an object");
            goto out;
        }
        if (text == NULL) {
            rc = jdec_oom(&d, item.path);
            goto out;
        }
        e.warnings[e.n_warnings++] = text;
    }
    *out = e;
    memset(&e, 0, sizeof(e));
out:
    sluice_rest_envelope_clear(&e);
    return rc;
}

bool sluice_rest_first_error(const sluice_rest_envelope_t *e, long *number, const char **text)
{
    const sluice_rest_error_t *x;

    if (e == NULL || e->n_errors == 0)
        return false;
    x = &e->errors[0];
    if (number != NULL)
        *number = x->number;
    if (text != NULL)
        *text = x->error != NULL && x->error[0] != '\0' ? x->error
                : x->description != NULL                ? x->description
                                                        : "";
    return true;
}

bool sluice_rest_no_job_changes(const sluice_rest_envelope_t *e)
{
    if (e == NULL)
        return false;
    for (size_t i = 0; i < e->n_warnings; i++) {
        if (strstr(e->warnings[i], "No job changes") != NULL)
            return true;
    }
    return false;
}

/* ---- submit ------------------------------------------------------------------- */

void sluice_rest_submit_clear(sluice_rest_submit_t *s)
{
    if (s == NULL)
        return;
    sluice_rest_envelope_clear(&s->env);
    free(s->step_id);
    free(s->user_msg);
    free(s->cluster);
    memset(s, 0, sizeof(*s));
}

sluice_err sluice_rest_parse_submit(sluice_rest_version v,
                                    const json_t *resp,
                                    sluice_rest_submit_t *out,
                                    sluice_error_t *err)
{
    sluice_rest_submit_t s = {0};
    jdec_t d;
    jdec_cur_t root;
    const json_t *step;
    const char *text;
    bool has = false;
    int64_t id = 0;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "submit: NULL output");
    if ((rc = sluice_rest_parse_envelope(v, resp, &s.env, err)) != SLUICE_OK)
        goto out;
    slurmrest_decoder(&d, err);
    jdec_root(&root, &d, resp, "");
    if ((text = jdec_peek_string(&root, "job_id")) != NULL) {
        /* "<id>" or "<id>;<cluster>" (a job routed to another cluster) */
        if ((rc = slurmrest_split_job_id(text, "job_id", &id, &s.cluster, err)) != SLUICE_OK)
            goto out;
        has = true;
    } else if ((rc = slurmrest_number(&root, "job_id", &has, &id)) != SLUICE_OK) {
        goto out;
    }
    if (has && id < 0) {
        rc = sluice_errorf(err, SLUICE_EPROTO, "job_id: negative");
        goto out;
    }
    s.job_id = has ? (uint64_t)id : 0;
    /* step_id is "BATCH"/"batch", but a v0.0.39 hetjob answers an integer. */
    step = jdec_value(&root, "step_id");
    if (json_is_integer(step)) {
        char tmp[32];
        snprintf(tmp, sizeof(tmp), "%" JSON_INTEGER_FORMAT, json_integer_value(step));
        s.step_id = strdup(tmp);
    } else if ((rc = jdec_strdup(&root, "step_id", 0, SIZE_MAX, &s.step_id)) != SLUICE_OK) {
        goto out;
    }
    rc = jdec_strdup(&root, "job_submit_user_msg", 0, SIZE_MAX, &s.user_msg);
    if (rc != SLUICE_OK)
        goto out;
    *out = s;
    memset(&s, 0, sizeof(s));
out:
    sluice_rest_submit_clear(&s);
    return rc;
}

/* ---- jobs (live and accounting) ----------------------------------------------- */

void sluice_rest_jobs_clear(sluice_rest_jobs_t *j)
{
    if (j == NULL)
        return;
    sluice_rest_envelope_clear(&j->env);
    for (size_t i = 0; i < j->n_jobs; i++)
        sluice_jobview_clear(&j->jobs[i]);
    free(j->jobs);
    memset(j, 0, sizeof(*j));
}

/* True when b should replace a as the record of the same job. */
static bool newer(const sluice_jobview_t *a, const sluice_jobview_t *b)
{
    if (b->submit_time != a->submit_time)
        return b->submit_time > a->submit_time;
    if (b->restart_count != a->restart_count)
        return b->restart_count > a->restart_count;
    return true;
}

static bool same_text(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Two accounting records of one id that are runs of the same job. */
static bool same_job(const sluice_jobview_t *a, const sluice_jobview_t *b)
{
    return a->other_cluster == b->other_cluster && same_text(a->name, b->name) &&
           same_text(a->user_name, b->user_name);
}

static sluice_err parse_jobs(sluice_rest_version v,
                             const json_t *resp,
                             bool acct,
                             sluice_rest_jobs_t *out,
                             sluice_error_t *err)
{
    const slurmrest_info_t *info = slurmrest_info(v);
    sluice_rest_jobs_t j = {0};
    jdec_t d;
    jdec_cur_t root, jobs, rec;
    size_t i;
    sluice_err rc;

    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "jobs: NULL output");
    if ((rc = sluice_rest_parse_envelope(v, resp, &j.env, err)) != SLUICE_OK)
        goto out;
    slurmrest_decoder(&d, err);
    jdec_root(&root, &d, resp, "");
    if ((rc = jdec_array(&root, "jobs", 0, &jobs)) != SLUICE_OK)
        goto out;
    if (jdec_len(&jobs) > 0 && (j.jobs = calloc(jdec_len(&jobs), sizeof(*j.jobs))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "jobs: out of memory");
        goto out;
    }
    JDEC_FOREACH(&jobs, i, rec)
    {
        sluice_jobview_t view = {0};
        size_t k;

        if (!json_is_object(rec.v)) {
            rc = jdec_fail(&rec, NULL, "expected an object");
            goto out;
        }
        if (info->family == 38)
            rc = acct ? slurmrest_v0038_acct_job(&rec, &view) : slurmrest_v0038_job(&rec, &view);
        else
            rc = acct ? slurmrest_v0040_acct_job(info, &rec, &view)
                      : slurmrest_v0040_job(info, &rec, &view);
        if (rc != SLUICE_OK) {
            sluice_jobview_clear(&view);
            goto out;
        }
        view.other_cluster = slurmrest_other_cluster(&rec, j.env.cluster);
        /* slurmdbd lists a requeued job once per run: keep the newest.  A
         * record with the same id on another cluster, or of another name
         * or user (an id Slurm reused), is another job: kept apart. */
        for (k = 0; acct && k < j.n_jobs; k++) {
            if (j.jobs[k].job_id == view.job_id && same_job(&j.jobs[k], &view))
                break;
        }
        if (acct && k < j.n_jobs) {
            if (newer(&j.jobs[k], &view)) {
                sluice_jobview_clear(&j.jobs[k]);
                j.jobs[k] = view;
            } else {
                sluice_jobview_clear(&view);
            }
            continue;
        }
        j.jobs[j.n_jobs++] = view;
    }
    *out = j;
    memset(&j, 0, sizeof(j));
out:
    sluice_rest_jobs_clear(&j);
    return rc;
}

sluice_err sluice_rest_parse_jobs(sluice_rest_version v,
                                  const json_t *resp,
                                  sluice_rest_jobs_t *out,
                                  sluice_error_t *err)
{
    return parse_jobs(v, resp, false, out, err);
}

sluice_err sluice_rest_parse_acct_jobs(sluice_rest_version v,
                                       const json_t *resp,
                                       sluice_rest_jobs_t *out,
                                       sluice_error_t *err)
{
    return parse_jobs(v, resp, true, out, err);
}

/* ---- jobs/state --------------------------------------------------------------- */

void sluice_rest_job_states_clear(sluice_rest_job_states_t *s)
{
    if (s == NULL)
        return;
    sluice_rest_envelope_clear(&s->env);
    free(s->states);
    memset(s, 0, sizeof(*s));
}

/* "123" or "123+1" (hetjob component: its own id, '+', its offset). */
static bool parse_state_id(const char *s, sluice_rest_job_state_t *st)
{
    char *end = NULL;
    unsigned long long id;

    if (!isdigit((unsigned char)s[0]))
        return false;
    errno = 0;
    id = strtoull(s, &end, 10);
    if (errno != 0 || id == 0)
        return false;
    st->job_id = (uint64_t)id;
    if (*end == '+') {
        const char *off = end + 1;
        unsigned long o;
        if (!isdigit((unsigned char)off[0]))
            return false;
        o = strtoul(off, &end, 10);
        if (errno != 0 || o > UINT32_MAX)
            return false;
        st->has_het_offset = true;
        st->het_offset = (uint32_t)o;
    }
    return *end == '\0';
}

sluice_err sluice_rest_parse_job_states(sluice_rest_version v,
                                        const json_t *resp,
                                        sluice_rest_job_states_t *out,
                                        sluice_error_t *err)
{
    const slurmrest_info_t *info = slurmrest_info(v);
    sluice_rest_job_states_t s = {0};
    jdec_t d;
    jdec_cur_t root, jobs, rec, state;
    size_t i;
    sluice_err rc;

    if (out == NULL || info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "jobs/state: bad arguments");
    if (!info->jobs_state)
        return sluice_errorf(err, SLUICE_EUNSUPPORTED, "jobs/state: not served by %s", info->name);
    if ((rc = sluice_rest_parse_envelope(v, resp, &s.env, err)) != SLUICE_OK)
        goto out;
    slurmrest_decoder(&d, err);
    jdec_root(&root, &d, resp, "");
    if ((rc = jdec_array(&root, "jobs", 0, &jobs)) != SLUICE_OK)
        goto out;
    if (jdec_len(&jobs) > 0 && (s.states = calloc(jdec_len(&jobs), sizeof(*s.states))) == NULL) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "jobs: out of memory");
        goto out;
    }
    JDEC_FOREACH(&jobs, i, rec)
    {
        sluice_rest_job_state_t *st = &s.states[s.n_states];
        const json_t *id = jdec_value(&rec, "job_id");

        if (!json_is_object(rec.v)) {
            rc = jdec_fail(&rec, NULL, "expected an object");
            goto out;
        }
        if (json_is_integer(id) && json_integer_value(id) > 0) {
            st->job_id = (uint64_t)json_integer_value(id);
        } else if (!json_is_string(id) || !parse_state_id(json_string_value(id), st)) {
            rc = jdec_fail(&rec, "job_id", "expected \"<id>\" or \"<id>+<n>\"");
            goto out;
        }
        jdec_member(&state, &rec, "state");
        if ((rc = slurmrest_state_value(&state, &st->base, &st->flags)) != SLUICE_OK)
            goto out;
        s.n_states++;
    }
    *out = s;
    memset(&s, 0, sizeof(s));
out:
    sluice_rest_job_states_clear(&s);
    return rc;
}
