/* SPDX-License-Identifier: Apache-2.0 */
/* client_ops.c - the operations of the slurmrestd client: submit, one job,
 * jobs since a time, batched job states, accounting (one job, by name),
 * cancel, and diag/nodes/ping.  Each builds its path and body with the
 * version adapters, sends it through client_exchange() (client.c) and reads
 * the answer with the adapters.
 *
 * Notes:
 * - A submit is sent once: an answer that is not understood, or that has no
 *   job id and no error, leaves its outcome UNCERTAIN.
 * - Accounting's "Nothing found" (9003) is NOT_FOUND for accounting calls.
 * - Log lines name the method, path and status only; never a header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <sluice/client.h>
#include <sluice/log.h>

#include "base/json_text.h"
#include "base/buf.h"
#include "client_int.h"
#include "transport/http.h"

#define ESLURM_REST_EMPTY_RESULT 9003
/* jobs/state: slurmrestd (24.11.5, 26.05.5, measured) answers a query
 * string of up to 65,535 bytes; past that it drops the query silently and
 * returns the states of every job on the cluster.  A filtered read stays
 * well under that; a larger tracked set is read unfiltered, once, and
 * filtered here (one slurmctld RPC either way). */
#define STATES_QUERY_MAX 60000

/* ---- operations ---------------------------------------------------------- */

sluice_err sluice_client_submit(sluice_client_t *c,
                                const sluice_jobdesc_t *descs,
                                size_t n,
                                sluice_rest_submit_t *out,
                                sluice_call_t *call,
                                sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_submit_t res = {0};
    sluice_rest_version v;
    json_t *body = NULL;
    json_t *root = NULL;
    char *text = NULL;
    char *path = NULL;
    client_req_t r;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if (out == NULL)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED,
                                 sluice_errorf(err, SLUICE_EINVAL, "submit: NULL result"));
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_submit_body(v, descs, n, &body, err)) != SLUICE_OK ||
        (rc = sluice_rest_path_submit(v, &path, err)) != SLUICE_OK) {
        call->outcome = SLUICE_OUTCOME_REJECTED; /* refused locally: nothing was sent */
        goto out;
    }
    text = json_text_dump(body, JSON_COMPACT);
    if (text == NULL) {
        rc = client_local_fail(call, SLUICE_OUTCOME_REJECTED,
                               sluice_errorf(err, SLUICE_ENOMEM, "submit: cannot encode the body"));
        goto out;
    }
    memset(&r, 0, sizeof(r));
    r.method = HTTP_POST;
    r.klass = HTTP_CLASS_SUBMIT;
    r.path = path;
    r.body = text;
    r.v = v;
    if ((rc = client_exchange(c, &r, &root, call, err)) != SLUICE_OK)
        goto out;
    if (sluice_rest_parse_submit(v, root, &res, NULL) != SLUICE_OK) {
        call->outcome = SLUICE_OUTCOME_UNCERTAIN;
        rc = sluice_errorf(err, SLUICE_EPROTO,
                           "submit outcome uncertain (never retried): HTTP %ld answer not "
                           "understood",
                           call->http_status);
        goto out;
    }
    if (res.job_id == 0) {
        if (res.env.n_errors > 0) {
            const char *t = NULL;
            long num = 0;

            (void)sluice_rest_first_error(&res.env, &num, &t);
            call->outcome = SLUICE_OUTCOME_REJECTED;
            call->slurm_errno = num;
            client_copy_str(call->slurm_error, sizeof(call->slurm_error), t);
            rc = sluice_errorf(err, SLUICE_ESLURM, "submit: rejected (Slurm error %ld: %s)", num,
                               t != NULL ? t : "(no text)");
        } else {
            call->outcome = SLUICE_OUTCOME_UNCERTAIN;
            rc = sluice_errorf(err, SLUICE_EPROTO,
                               "submit outcome uncertain (never retried): no job id in the "
                               "answer");
        }
        goto out;
    }
    sluice_log(SLUICE_LOG_INFO, "rest: submitted job %" PRIu64 " (%zu component%s)", res.job_id, n,
               n == 1 ? "" : "s");
    *out = res;
    memset(&res, 0, sizeof(res));
out:
    if (rc != SLUICE_OK && err != NULL && err->http_status == 0)
        err->http_status = call->http_status;
    sluice_rest_submit_clear(&res);
    json_decref(body);
    json_decref(root);
    free(text);
    free(path);
    return rc;
}

sluice_err sluice_client_get_job(sluice_client_t *c,
                                 uint64_t job_id,
                                 sluice_rest_jobs_t *out,
                                 sluice_call_t *call,
                                 sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_job(v, job_id, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) !=
        SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_parse_jobs(v, root, out, err)) != SLUICE_OK)
        rc = client_proto_fail(call, err, "job");
    else if (out->n_jobs == 0) {
        call->outcome = SLUICE_OUTCOME_NOT_FOUND;
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "job %" PRIu64 ": not found", job_id);
    }
    json_decref(root);
    return rc;
}

sluice_err sluice_client_jobs_since(sluice_client_t *c,
                                    int64_t update_time,
                                    sluice_rest_jobs_t *out,
                                    sluice_call_t *call,
                                    sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_jobs(v, update_time, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) !=
        SLUICE_OK)
        return rc;
    if (call->http_status == 304) {
        call->no_changes = true;
        goto out;
    }
    if ((rc = sluice_rest_parse_jobs(v, root, out, err)) != SLUICE_OK) {
        rc = client_proto_fail(call, err, "jobs");
        goto out;
    }
    call->no_changes = sluice_rest_no_job_changes(&out->env);
out:
    json_decref(root);
    return rc;
}

/* The tracked ids, sorted, for filtering a state answer that holds more
 * jobs than ours. */
typedef struct {
    uint64_t *ids;
    size_t n;
} idset_t;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static sluice_err idset_make(idset_t *set, const uint64_t *ids, size_t n, sluice_error_t *err)
{
    set->n = n;
    if ((set->ids = malloc((n > 0 ? n : 1) * sizeof(*set->ids))) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "jobs state: out of memory");
    if (n > 0)
        memcpy(set->ids, ids, n * sizeof(*set->ids));
    qsort(set->ids, n, sizeof(*set->ids), cmp_u64);
    return SLUICE_OK;
}

static bool idset_has(const idset_t *set, uint64_t id)
{
    return id != 0 && bsearch(&id, set->ids, set->n, sizeof(*set->ids), cmp_u64) != NULL;
}

/* v0.0.38: the whole job list, filtered. */
static sluice_err states_from_jobs(sluice_client_t *c,
                                   sluice_rest_version v,
                                   const uint64_t *ids,
                                   size_t n,
                                   sluice_rest_job_states_t *out,
                                   sluice_call_t *call,
                                   sluice_error_t *err)
{
    sluice_rest_jobs_t jobs = {0};
    idset_t set = {0};
    sluice_err rc;

    if ((rc = sluice_client_jobs_since(c, -1, &jobs, call, err)) != SLUICE_OK)
        return rc;
    /* A local failure after a good answer must not read as "no job of
     * ours in the queue": the call fails UNAVAILABLE. */
    if ((rc = idset_make(&set, ids, n, err)) != SLUICE_OK) {
        client_local_fail(call, SLUICE_OUTCOME_UNAVAILABLE, rc);
        goto out;
    }
    out->states = calloc(jobs.n_jobs > 0 ? jobs.n_jobs : 1, sizeof(*out->states));
    if (out->states == NULL) {
        rc = client_local_fail(call, SLUICE_OUTCOME_UNAVAILABLE,
                               sluice_errorf(err, SLUICE_ENOMEM, "jobs state: out of memory"));
        goto out;
    }
    for (size_t i = 0; i < jobs.n_jobs; i++) {
        const sluice_jobview_t *j = &jobs.jobs[i];
        sluice_rest_job_state_t *s;

        if (!idset_has(&set, j->job_id) && !idset_has(&set, j->het_job_id))
            continue;
        s = &out->states[out->n_states++];
        s->job_id = j->job_id;
        s->has_het_offset = j->het_job_id != 0;
        s->het_offset = j->het_job_offset;
        s->base = j->base;
        s->flags = j->flags;
    }
    out->env = jobs.env;
    memset(&jobs.env, 0, sizeof(jobs.env));
out:
    free(set.ids);
    sluice_rest_jobs_clear(&jobs);
    return rc;
}

/* Keep only the states of `ids` (or of a component whose leader, its id less
 * its offset, is one of them) in an unfiltered jobs/state answer. */
static sluice_err
keep_tracked(sluice_rest_job_states_t *st, const uint64_t *ids, size_t n, sluice_error_t *err)
{
    idset_t set;
    size_t i, kept = 0;
    sluice_err rc;

    if ((rc = idset_make(&set, ids, n, err)) != SLUICE_OK)
        return rc;
    for (i = 0; i < st->n_states; i++) {
        const sluice_rest_job_state_t *s = &st->states[i];
        bool mine = idset_has(&set, s->job_id) || (s->has_het_offset && s->job_id > s->het_offset &&
                                                   idset_has(&set, s->job_id - s->het_offset));

        if (mine)
            st->states[kept++] = *s;
    }
    st->n_states = kept;
    free(set.ids);
    return SLUICE_OK;
}

/* One jobs/state read: the ids in the query when it fits, else every job's
 * state, filtered to the ids. */
static sluice_err states_once(sluice_client_t *c,
                              sluice_rest_version v,
                              const uint64_t *job_ids,
                              size_t n,
                              sluice_rest_job_states_t *out,
                              sluice_call_t *call,
                              sluice_error_t *err)
{
    json_t *root = NULL;
    char *path = NULL;
    size_t qlen = 0;
    bool all;
    sluice_err rc;

    /* "job_id=<id>&" per id, counted before the path is built (a path of
     * a hundred thousand ids would pass the adapters' path limit). */
    for (size_t i = 0; i < n && qlen <= STATES_QUERY_MAX; i++) {
        char digits[24];

        qlen += 8 + (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, job_ids[i]);
    }
    all = qlen > STATES_QUERY_MAX;
    if ((rc = sluice_rest_path_jobs_state(v, job_ids, all ? 0 : n, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) !=
        SLUICE_OK)
        return rc; /* get_json freed path */
    rc = sluice_rest_parse_job_states(v, root, out, err);
    json_decref(root);
    if (rc != SLUICE_OK)
        return client_proto_fail(call, err, "jobs state");
    if (all && (rc = keep_tracked(out, job_ids, n, err)) != SLUICE_OK) {
        sluice_rest_job_states_clear(out);
        return client_local_fail(call, SLUICE_OUTCOME_UNAVAILABLE, rc);
    }
    return SLUICE_OK;
}

sluice_err sluice_client_job_states(sluice_client_t *c,
                                    const uint64_t *job_ids,
                                    size_t n,
                                    sluice_rest_job_states_t *out,
                                    sluice_call_t *call,
                                    sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    unsigned sent = 0;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if (job_ids == NULL || n == 0 || out == NULL)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED,
                                 sluice_errorf(err, SLUICE_EINVAL, "jobs state: no job ids"));
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if (v == SLUICE_REST_V0038)
        return states_from_jobs(c, v, job_ids, n, out, call, err);
    if (c->states_chunk == 0)
        return states_once(c, v, job_ids, n, out, call, err);

    for (size_t off = 0; off < n; off += c->states_chunk) {
        size_t k = n - off < c->states_chunk ? n - off : c->states_chunk;
        sluice_rest_job_states_t part = {0};
        sluice_rest_job_state_t *grown;
        json_t *root = NULL;
        char *path = NULL;

        if ((rc = sluice_rest_path_jobs_state(v, job_ids + off, k, &path, err)) != SLUICE_OK)
            return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
        client_call_init(call, call);
        rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err);
        sent += call->requests;
        call->requests = sent;
        if (rc != SLUICE_OK)
            goto fail;
        if ((rc = sluice_rest_parse_job_states(v, root, &part, err)) != SLUICE_OK) {
            json_decref(root);
            rc = client_proto_fail(call, err, "jobs state");
            goto fail;
        }
        json_decref(root);
        grown = realloc(out->states, (out->n_states + part.n_states + 1) * sizeof(*grown));
        if (grown == NULL) {
            sluice_rest_job_states_clear(&part);
            rc = sluice_errorf(err, SLUICE_ENOMEM, "jobs state: out of memory");
            goto fail;
        }
        out->states = grown;
        if (part.n_states > 0)
            memcpy(out->states + out->n_states, part.states, part.n_states * sizeof(*grown));
        out->n_states += part.n_states;
        if (off == 0) {
            out->env = part.env;
            memset(&part.env, 0, sizeof(part.env));
        }
        sluice_rest_job_states_clear(&part);
    }
    return SLUICE_OK;
fail:
    sluice_rest_job_states_clear(out);
    return rc;
}

/* Accounting's "Nothing found" is NOT_FOUND. */
static sluice_err acct_empty(sluice_call_t *call, sluice_err rc, sluice_error_t *err)
{
    if (rc != SLUICE_OK && call->slurm_errno == ESLURM_REST_EMPTY_RESULT &&
        call->outcome != SLUICE_OUTCOME_AUTH) {
        call->outcome = SLUICE_OUTCOME_NOT_FOUND;
        if (err != NULL)
            err->code = SLUICE_ENOTFOUND;
        return SLUICE_ENOTFOUND;
    }
    return rc;
}

sluice_err sluice_client_acct_job(sluice_client_t *c,
                                  uint64_t job_id,
                                  sluice_rest_jobs_t *out,
                                  sluice_call_t *call,
                                  sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_acct_job(v, job_id, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err);
    if (rc != SLUICE_OK)
        return acct_empty(call, rc, err);
    if ((rc = sluice_rest_parse_acct_jobs(v, root, out, err)) != SLUICE_OK)
        rc = client_proto_fail(call, err, "accounting job");
    else if (out->n_jobs == 0) {
        call->outcome = SLUICE_OUTCOME_NOT_FOUND;
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "accounting: no record of job %" PRIu64, job_id);
    }
    json_decref(root);
    return rc;
}

/* "now", "now-N" or "now+N" for an epoch time. */
static void relative_time(char *dst, size_t size, int64_t t, int64_t now)
{
    if (t == now)
        snprintf(dst, size, "now");
    else
        snprintf(dst, size, "now%c%" PRId64, t < now ? '-' : '+', t < now ? now - t : t - now);
}

static sluice_err
v0038_acct_path(const char *name, int64_t start, int64_t end, char **out, sluice_error_t *err)
{
    int64_t now = (int64_t)time(NULL);
    char *base = NULL;
    char when[48];
    buf_t b;
    sluice_err rc;

    if ((rc = sluice_rest_path_acct_jobs(SLUICE_REST_V0038, name, NULL, -1, -1, &base, err)) !=
        SLUICE_OK)
        return rc;
    buf_init(&b, 0);
    rc = buf_puts(&b, base);
    if (rc == SLUICE_OK && start >= 0) {
        relative_time(when, sizeof(when), start, now);
        rc = buf_puts(&b, strchr(buf_str(&b), '?') ? "&start_time=" : "?start_time=");
        if (rc == SLUICE_OK)
            rc = http_urlencode(&b, when);
    }
    if (rc == SLUICE_OK && end >= 0) {
        relative_time(when, sizeof(when), end, now);
        rc = buf_puts(&b, strchr(buf_str(&b), '?') ? "&end_time=" : "?end_time=");
        if (rc == SLUICE_OK)
            rc = http_urlencode(&b, when);
    }
    free(base);
    if (rc != SLUICE_OK) {
        buf_free(&b);
        return sluice_errorf(err, rc, "accounting path: out of memory");
    }
    *out = buf_take(&b);
    return SLUICE_OK;
}

/* Drop records of other users (v0.0.38 cannot filter by user). */
static void keep_user(sluice_rest_jobs_t *jobs, const char *user)
{
    size_t w = 0;

    for (size_t i = 0; i < jobs->n_jobs; i++) {
        if (jobs->jobs[i].user_name != NULL && strcmp(jobs->jobs[i].user_name, user) != 0) {
            sluice_jobview_clear(&jobs->jobs[i]);
            continue;
        }
        if (w != i)
            jobs->jobs[w] = jobs->jobs[i];
        w++;
    }
    jobs->n_jobs = w;
}

static int newest_first(const void *a, const void *b)
{
    const sluice_jobview_t *x = a;
    const sluice_jobview_t *y = b;

    if (x->submit_time != y->submit_time)
        return x->submit_time > y->submit_time ? -1 : 1;
    if (x->job_id != y->job_id)
        return x->job_id > y->job_id ? -1 : 1;
    return 0;
}

sluice_err sluice_client_acct_find(sluice_client_t *c,
                                   const char *job_name,
                                   const char *user,
                                   int64_t start_time,
                                   int64_t end_time,
                                   sluice_rest_jobs_t *out,
                                   sluice_call_t *call,
                                   sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    /* dbv0.0.38 has no `users` filter (an unknown key is error 9000), and
     * 22.05's parse_time() refuses a bare epoch: filter users here and send
     * the window relative to the server's clock ("now-N"). */
    if (v == SLUICE_REST_V0038) {
        if ((rc = v0038_acct_path(job_name, start_time, end_time, &path, err)) != SLUICE_OK)
            return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    } else if ((rc = sluice_rest_path_acct_jobs(v, job_name, user, start_time, end_time, &path,
                                                err)) != SLUICE_OK) {
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    }
    rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err);
    if (rc != SLUICE_OK)
        return acct_empty(call, rc, err);
    if ((rc = sluice_rest_parse_acct_jobs(v, root, out, err)) != SLUICE_OK) {
        rc = client_proto_fail(call, err, "accounting jobs");
        goto out;
    }
    if (user != NULL)
        keep_user(out, user);
    if (out->n_jobs == 0) {
        call->outcome = SLUICE_OUTCOME_NOT_FOUND;
        rc = sluice_errorf(err, SLUICE_ENOTFOUND, "accounting: no job named %s for %s",
                           job_name ? job_name : "*", user ? user : "*");
    } else {
        qsort(out->jobs, out->n_jobs, sizeof(*out->jobs), newest_first);
    }
out:
    json_decref(root);
    return rc;
}

sluice_err sluice_client_cancel(sluice_client_t *c,
                                uint64_t job_id,
                                const char *signal,
                                sluice_call_t *call,
                                sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_cancel(v, job_id, signal, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    rc = client_get_json(c, v, path, HTTP_CLASS_CANCEL, HTTP_DELETE, NULL, call, err);
    if (rc == SLUICE_OK)
        sluice_log(SLUICE_LOG_INFO, "rest: signalled job %" PRIu64 " (%s)", job_id,
                   signal != NULL ? signal : "KILL");
    return rc;
}

/* A GET whose answer one parser reads (diag, nodes, ping). */
typedef sluice_err (*simple_path_fn)(sluice_rest_version v, char **out, sluice_error_t *err);
typedef sluice_err (*simple_parse_fn)(sluice_rest_version v,
                                      const json_t *root,
                                      void *out,
                                      sluice_error_t *err);

static sluice_err simple_get(sluice_client_t *c,
                             simple_path_fn make_path,
                             simple_parse_fn parse,
                             void *out,
                             const char *what,
                             sluice_call_t *call,
                             sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = make_path(v, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) !=
        SLUICE_OK)
        return rc;
    if ((rc = parse(v, root, out, err)) != SLUICE_OK)
        rc = client_proto_fail(call, err, what);
    json_decref(root);
    return rc;
}

static sluice_err parse_diag(sluice_rest_version v, const json_t *r, void *o, sluice_error_t *e)
{
    return sluice_rest_parse_diag(v, r, o, e);
}

static sluice_err parse_nodes(sluice_rest_version v, const json_t *r, void *o, sluice_error_t *e)
{
    return sluice_rest_parse_nodes(v, r, o, e);
}

static sluice_err parse_ping(sluice_rest_version v, const json_t *r, void *o, sluice_error_t *e)
{
    return sluice_rest_parse_ping(v, r, o, e);
}

sluice_err
sluice_client_openapi(sluice_client_t *c, json_t **out, sluice_call_t *call, sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_rest_version v;
    json_t *root = NULL;
    char *path = NULL;
    sluice_err rc;

    call = client_call_init(call, &scratch);
    if (out == NULL)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED,
                                 sluice_errorf(err, SLUICE_EINVAL, "openapi: NULL result"));
    if ((rc = client_ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((path = strdup("/openapi/v3")) == NULL)
        return client_local_fail(call, SLUICE_OUTCOME_REJECTED,
                                 sluice_errorf(err, SLUICE_ENOMEM, "openapi: out of memory"));
    if ((rc = client_get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) !=
        SLUICE_OK)
        return rc;
    if (!json_is_object(root)) {
        json_decref(root);
        sluice_errorf(err, SLUICE_EPROTO, "expected an object");
        return client_proto_fail(call, err, "openapi");
    }
    *out = root;
    return SLUICE_OK;
}

sluice_err sluice_client_diag(sluice_client_t *c,
                              sluice_rest_diag_t *out,
                              sluice_call_t *call,
                              sluice_error_t *err)
{
    return simple_get(c, sluice_rest_path_diag, parse_diag, out, "diag", call, err);
}

sluice_err sluice_client_nodes(sluice_client_t *c,
                               sluice_rest_nodes_t *out,
                               sluice_call_t *call,
                               sluice_error_t *err)
{
    return simple_get(c, sluice_rest_path_nodes, parse_nodes, out, "nodes", call, err);
}

sluice_err sluice_client_ping(sluice_client_t *c,
                              sluice_rest_ping_t *out,
                              sluice_call_t *call,
                              sluice_error_t *err)
{
    return simple_get(c, sluice_rest_path_ping, parse_ping, out, "ping", call, err);
}
