/* SPDX-License-Identifier: Apache-2.0 */
/* client.c - the slurmrestd client: one exchange = token headers + HTTP +
 * outcome classification + the retry rule; operations wrap the adapters.
 *
 * Notes:
 * - The retry rule lives in exchange() only: a GET/DELETE classified AUTH
 *   is sent once more after sluice_auth_invalidate(); a POST never is.
 * - 22.05 reports an unknown job id as HTTP 500 with error 2017; that is
 *   NOT_FOUND here (slurmrestd-api.md section 16).
 * - Accounting's "Nothing found" (9003) is NOT_FOUND for accounting calls.
 * - A 404 from slurmrestd's router (plain text "Unable find requested URL",
 *   no errors[]) is no verdict on a job: the URL is not served.  It is
 *   UNAVAILABLE with call->not_served set; on /slurmdb/ the text says that
 *   accounting is not served.  Only the version probes of negotiation read
 *   it as NOT_FOUND ("this version is not loaded").
 * - A 22.05 submit refused with HTTP 500 stays UNCERTAIN: a 5xx never
 *   proves a rejection (design.md "No blind POST").
 * - A POST is never NOT_FOUND (a handler 404, 22.05's 500 + 2017): it
 *   reached slurmrestd, so it is UNCERTAIN.  A POST is UNAVAILABLE only when
 *   it provably never left (a transfer that was not sent, TLS before the
 *   request) and AUTH only when no usable token was at hand.
 * - Log lines name the method, path and status only; never a header.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <sluice/client.h>
#include <sluice/log.h>

#include "base/buf.h"
#include "http.h"
#include "restclass.h"

#define ESLURM_INVALID_JOB_ID 2017
#define ESLURM_REST_EMPTY_RESULT 9003
/* jobs/state: slurmrestd (24.11.5, 26.05.5, measured) answers a query
 * string of up to 65,535 bytes; past that it drops the query silently and
 * returns the states of every job on the cluster.  A filtered read stays
 * well under that; a larger tracked set is read unfiltered, once, and
 * filtered here (one slurmctld RPC either way). */
#define STATES_QUERY_MAX 60000

struct sluice_client {
    http_client_t *http;
    sluice_auth_t *auth;
    pthread_mutex_t lock; /* guards the negotiation fields */
    bool pinned;
    bool negotiated;
    sluice_rest_version version;
    char release[64];
    char cluster[128];
    char data_parser[64];
    size_t states_chunk;
    /* sluice_client_stats(): requests by http_class_t, exchanges by rest_class_t */
    atomic_ullong n_kind[HTTP_CLASS_COUNT_];
    atomic_ullong n_class[REST_NOT_FOUND + 1];
};

typedef struct {
    http_method_t method;
    http_class_t klass;
    const char *path; /* may carry "?query" */
    const char *body;
    sluice_rest_version v;
    bool probe; /* a version probe: a router 404 means "version not served" */
} req_t;

static const char *const outcome_names[] = {
#define SLUICE_OUTCOME_NAME(id, name) name,
    SLUICE_OUTCOME_MAP(SLUICE_OUTCOME_NAME)
#undef SLUICE_OUTCOME_NAME
};

const char *sluice_outcome_name(sluice_outcome o)
{
    if ((int)o < 0 || o >= SLUICE_OUTCOME_COUNT_)
        return "unknown";
    return outcome_names[o];
}

static const char *method_name(http_method_t m)
{
    switch (m) {
    case HTTP_GET:
        return "GET";
    case HTTP_POST:
        return "POST";
    case HTTP_DELETE:
        return "DELETE";
    }
    return "?";
}

static slurm_family_t family_of(sluice_rest_version v)
{
    if (v == SLUICE_REST_V0038)
        return SLURM_FAMILY_22_05;
    if (v == SLUICE_REST_V0040 || v == SLUICE_REST_V0041)
        return SLURM_FAMILY_23_02;
    return SLURM_FAMILY_24_11;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src != NULL ? src : "");
}

/* errors[0] of an answer into call (number and text). */
static void note_slurm_error(sluice_call_t *call, const json_t *root)
{
    const json_t *first = json_array_get(json_object_get(root, "errors"), 0);
    const json_t *num = json_object_get(first, "error_number");
    const char *text = json_string_value(json_object_get(first, "error"));

    if (num == NULL)
        num = json_object_get(first, "error_code");
    if (text == NULL || text[0] == '\0')
        text = json_string_value(json_object_get(first, "description"));
    call->slurm_errno = json_is_integer(num) ? (long)json_integer_value(num) : 0;
    copy_str(call->slurm_error, sizeof(call->slurm_error), text);
}

/* The sluice_err and text of a finished exchange that was not OK. */
static sluice_err
fail_call(const sluice_call_t *call, const req_t *r, http_xfer_t xfer, sluice_error_t *err)
{
    sluice_err code;
    char slurm[320] = "";
    sluice_err out;

    switch (call->outcome) {
    case SLUICE_OUTCOME_OK:
        return SLUICE_OK;
    case SLUICE_OUTCOME_NOT_FOUND:
        code = SLUICE_ENOTFOUND;
        break;
    case SLUICE_OUTCOME_AUTH:
        code = SLUICE_EAUTH;
        break;
    case SLUICE_OUTCOME_REJECTED:
        code = SLUICE_ESLURM;
        break;
    case SLUICE_OUTCOME_PROTOCOL:
        code = SLUICE_EPROTO;
        break;
    case SLUICE_OUTCOME_TOO_LARGE:
        code = SLUICE_ETOOBIG;
        break;
    default:
        if (xfer == HTTP_XFER_TIMEOUT)
            code = SLUICE_ETIMEDOUT;
        else if (call->http_status != 0)
            code = SLUICE_EHTTP;
        else
            code = SLUICE_ETRANSPORT;
        break;
    }
    if (call->slurm_errno != 0 || call->slurm_error[0] != '\0')
        snprintf(slurm, sizeof(slurm), "; Slurm error %ld: %s", call->slurm_errno,
                 call->slurm_error[0] ? call->slurm_error : "(no text)");
    if (call->http_status != 0)
        out = sluice_errorf(err, code, "%s %s: %s (HTTP %ld%s%s)", method_name(r->method), r->path,
                            sluice_outcome_name(call->outcome), call->http_status,
                            xfer != HTTP_XFER_OK ? ", " : "",
                            xfer != HTTP_XFER_OK ? http_xfer_name(xfer) : "");
    else
        out = sluice_errorf(err, code, "%s %s: %s (%s)", method_name(r->method), r->path,
                            sluice_outcome_name(call->outcome), http_xfer_name(xfer));
    if (slurm[0] != '\0' && err != NULL) {
        size_t used = strlen(err->text);
        snprintf(err->text + used, sizeof(err->text) - used, "%s", slurm);
    }
    if (err != NULL)
        err->http_status = call->http_status;
    return out;
}

/* Append to err what a router 404 means: the URL `path` is not served, and
 * on /slurmdb/ that accounting is not.  `body` is the router's text. */
static void note_not_served(const char *path, const char *body, sluice_error_t *err)
{
    char text[120];
    size_t used;
    size_t n = 0;

    if (err == NULL)
        return;
    for (; body != NULL && body[n] != '\0' && body[n] != '\n' && n < sizeof(text) - 1; n++)
        text[n] = (body[n] >= 0x20 && body[n] < 0x7f) ? body[n] : '?';
    text[n] = '\0';
    used = strlen(err->text);
    if (strncmp(path, "/slurmdb/", 9) == 0)
        snprintf(err->text + used, sizeof(err->text) - used,
                 ": accounting is not served: slurmrestd answers \"%s\" for /slurmdb/ URLs "
                 "(no openapi/slurmdbd plugin loaded)",
                 text);
    else
        snprintf(err->text + used, sizeof(err->text) - used,
                 ": slurmrestd serves no such URL: \"%s\"", text);
}

/* One operation's HTTP part, with the retry rule.  On OUTCOME_OK,
 * *json_out (may be NULL) receives the decoded body as a new reference, or
 * NULL for an empty body (304). */
static sluice_err exchange(
    sluice_client_t *c, const req_t *r, json_t **json_out, sluice_call_t *call, sluice_error_t *err)
{
    const bool is_post = r->method == HTTP_POST;
    http_response_t resp = HTTP_RESPONSE_INIT;
    http_xfer_t last_xfer = HTTP_XFER_OK;
    char *path = NULL;
    char *query = NULL;
    json_t *root = NULL;
    sluice_err rc = SLUICE_OK;

    if (json_out != NULL)
        *json_out = NULL;
    path = strdup(r->path);
    if (path == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "client: out of memory");
    query = strchr(path, '?');
    if (query != NULL)
        *query++ = '\0';

    for (int attempt = 0; attempt < 2; attempt++) {
        char **headers = NULL;
        sluice_error_t aerr = SLUICE_ERROR_INIT;
        http_request_t hr;
        rest_outcome_t o;
        rest_class_t cls;
        long enumber;

        http_response_free(&resp);
        json_decref(root);
        root = NULL;
        call->http_status = 0;
        call->slurm_errno = 0;
        call->slurm_error[0] = '\0';
        call->not_served = false;
        if (sluice_auth_headers(c->auth, &headers, &aerr) != SLUICE_OK) {
            /* Nothing was sent, so even a POST is certainly not submitted. */
            call->outcome = SLUICE_OUTCOME_AUTH;
            rc = sluice_errorf(err, aerr.code == SLUICE_ENOMEM ? SLUICE_ENOMEM : SLUICE_EAUTH,
                               "%s %s: no usable token: %s", method_name(r->method), path,
                               aerr.text);
            goto out;
        }
        memset(&hr, 0, sizeof(hr));
        hr.method = r->method;
        hr.klass = r->klass;
        hr.path = path;
        hr.query = query;
        hr.body = r->body;
        hr.headers = (const char *const *)headers;
        call->requests++;
        if ((unsigned)r->klass < HTTP_CLASS_COUNT_)
            atomic_fetch_add(&c->n_kind[r->klass], 1);
        (void)http_request(c->http, &hr, &resp, NULL);
        sluice_auth_headers_free(headers);
        last_xfer = resp.xfer;

        if (resp.xfer != HTTP_XFER_OK) {
            atomic_fetch_add(&c->n_class[REST_UNAVAILABLE], 1);
            if (resp.xfer == HTTP_XFER_TOO_BIG)
                call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_TOO_LARGE;
            else if (!http_xfer_maybe_sent(resp.xfer))
                call->outcome = SLUICE_OUTCOME_UNAVAILABLE;
            else
                call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_UNAVAILABLE;
            call->http_status = resp.status;
            break;
        }
        call->http_status = resp.status;
        if (resp.body_len > 0) {
            root = json_loadb(resp.body, resp.body_len, 0, NULL);
            if (root != NULL)
                note_slurm_error(call, root);
        }
        enumber = restclass_error_number(resp.body, resp.body_len);
        memset(&o, 0, sizeof(o));
        o.status = resp.status;
        o.xfer = resp.xfer;
        o.error_number = enumber;
        o.family = family_of(r->v);
        o.authenticated = 1;
        o.after_refresh = attempt > 0;
        o.unrouted = !r->probe && restclass_unrouted(resp.status, resp.body, resp.body_len);
        call->not_served = o.unrouted != 0;
        cls = restclass_classify(&o);
        if (resp.status == 500 && enumber == ESLURM_INVALID_JOB_ID)
            cls = REST_NOT_FOUND;
        if ((unsigned)cls <= REST_NOT_FOUND)
            atomic_fetch_add(&c->n_class[cls], 1);
        sluice_log(SLUICE_LOG_DEBUG, "rest: %s %s -> HTTP %ld (%s)", method_name(r->method), path,
                   resp.status, restclass_name(cls));

        if (cls == REST_AUTH) {
            sluice_auth_invalidate(c->auth);
            call->auth_refreshed = true;
            sluice_log(SLUICE_LOG_NOTICE, "rest: %s %s: token refused (HTTP %ld); token renewed%s",
                       method_name(r->method), path, resp.status,
                       is_post ? ", submit outcome uncertain"
                               : (attempt == 0 ? ", retrying once" : ""));
            if (is_post) {
                call->outcome = SLUICE_OUTCOME_UNCERTAIN;
                break;
            }
            call->outcome = SLUICE_OUTCOME_AUTH;
            continue;
        }
        switch (cls) {
        case REST_OK:
            if (resp.body_len > 0 && root == NULL)
                call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_PROTOCOL;
            else
                call->outcome = SLUICE_OUTCOME_OK;
            break;
        case REST_NOT_FOUND:
            /* A POST reached slurmrestd: "no such job" proves no rejection. */
            call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_NOT_FOUND;
            break;
        case REST_REJECTED:
            call->outcome = SLUICE_OUTCOME_REJECTED;
            break;
        default:
            call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_UNAVAILABLE;
            break;
        }
        break;
    }
    if (call->outcome == SLUICE_OUTCOME_OK) {
        if (json_out != NULL) {
            *json_out = root;
            root = NULL;
        }
        rc = SLUICE_OK;
    } else {
        rc = fail_call(call, r, last_xfer, err);
        if (call->not_served)
            note_not_served(path, resp.body, err);
        if (call->outcome == SLUICE_OUTCOME_UNCERTAIN && err != NULL)
            sluice_error_prefix(err, "submit outcome uncertain (never retried)");
    }
out:
    json_decref(root);
    http_response_free(&resp);
    free(path);
    return rc;
}

/* Reset a call record (or use a scratch one). */
static sluice_call_t *call_init(sluice_call_t *call, sluice_call_t *scratch)
{
    if (call == NULL)
        call = scratch;
    memset(call, 0, sizeof(*call));
    call->outcome = SLUICE_OUTCOME_UNAVAILABLE;
    return call;
}

/* A local failure (building a request): no request was sent. */
static sluice_err local_fail(sluice_call_t *call, sluice_outcome o, sluice_err rc)
{
    call->outcome = o;
    return rc;
}

/* A 2xx answer the adapter could not read. */
static sluice_err proto_fail(sluice_call_t *call, sluice_error_t *err, const char *what)
{
    call->outcome = SLUICE_OUTCOME_PROTOCOL;
    if (err != NULL) {
        err->http_status = call->http_status;
        if (err->code != SLUICE_ENOMEM)
            err->code = SLUICE_EPROTO;
        sluice_error_prefix(err, "%s", what);
        return err->code;
    }
    return SLUICE_EPROTO;
}

/* ---- creation ------------------------------------------------------------ */

sluice_err
sluice_client_new(sluice_client_t **out, const sluice_client_options_t *opts, sluice_error_t *err)
{
    sluice_client_t *c = NULL;
    http_options_t ho;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || opts == NULL || opts->url == NULL || opts->auth == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: url and auth are required");
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "client: out of memory");
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return sluice_errorf(err, SLUICE_ENOMEM, "client: cannot create a mutex");
    }
    if (opts->api_version != NULL && opts->api_version[0] != '\0' &&
        strcmp(opts->api_version, "auto") != 0) {
        if ((rc = sluice_rest_version_parse(opts->api_version, &c->version, err)) != SLUICE_OK) {
            sluice_error_prefix(err, "rest.api_version");
            goto out;
        }
        c->pinned = true;
    }
    memset(&ho, 0, sizeof(ho));
    ho.base_url = opts->url;
    ho.allow_insecure_http = opts->allow_insecure_http;
    ho.tls_no_verify = opts->tls_no_verify;
    ho.ca_file = opts->ca_file;
    ho.ca_path = opts->ca_path;
    ho.pinned_pubkey = opts->pinned_pubkey;
    ho.client_cert = opts->client_cert;
    ho.client_key = opts->client_key;
    ho.max_response = opts->max_response;
    for (int i = 0; i < HTTP_CLASS_COUNT_; i++)
        ho.timeouts[i].connect_ms = opts->connect_timeout_ms;
    ho.timeouts[HTTP_CLASS_SUBMIT].total_ms =
        opts->submit_timeout_ms > 0 ? opts->submit_timeout_ms : 30000;
    ho.timeouts[HTTP_CLASS_QUERY].total_ms =
        opts->query_timeout_ms > 0 ? opts->query_timeout_ms : 10000;
    ho.timeouts[HTTP_CLASS_CANCEL].total_ms =
        opts->cancel_timeout_ms > 0 ? opts->cancel_timeout_ms : 10000;
    if ((rc = http_client_new(&c->http, &ho, err)) != SLUICE_OK)
        goto out;
    c->states_chunk = opts->states_chunk; /* 0: by the URL's length */
    c->auth = opts->auth;
    *out = c;
    c = NULL;
out:
    if (c != NULL) {
        http_client_free(c->http);
        pthread_mutex_destroy(&c->lock);
        free(c);
    }
    return rc;
}

sluice_err sluice_client_new_from_config(sluice_client_t **out,
                                         const sluice_config_t *cfg,
                                         sluice_error_t *err)
{
    sluice_auth_options_t ao;
    sluice_client_options_t co;
    sluice_auth_t *auth = NULL;
    sluice_err rc;

    if (out == NULL || cfg == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    if (cfg->rest.url == NULL)
        return sluice_errorf(err, SLUICE_ECONFIG, "rest.url: required");
    memset(&ao, 0, sizeof(ao));
    ao.user = cfg->rest.user;
    ao.lifespan = cfg->rest.jwt_lifespan_s;
    ao.strict_permissions = cfg->rest.strict_permissions;
    if (cfg->rest.jwt_file != NULL) {
        ao.kind = SLUICE_AUTH_TOKEN_FILE;
        ao.path = cfg->rest.jwt_file;
    } else if (cfg->rest.jwt_key_file != NULL) {
        ao.kind = SLUICE_AUTH_HS256_KEY;
        ao.path = cfg->rest.jwt_key_file;
    } else if (cfg->rest.jwt_rs256_key_file != NULL) {
        ao.kind = SLUICE_AUTH_RS256_KEY;
        ao.path = cfg->rest.jwt_rs256_key_file;
    } else {
        ao.kind = SLUICE_AUTH_ENV;
    }
    if ((rc = sluice_auth_new(&auth, &ao, err)) != SLUICE_OK)
        return rc;
    memset(&co, 0, sizeof(co));
    co.url = cfg->rest.url;
    co.api_version = cfg->rest.api_version;
    co.allow_insecure_http = cfg->rest.allow_insecure_http;
    co.tls_no_verify = !cfg->rest.tls_verify;
    co.ca_file = cfg->rest.ca_file;
    co.ca_path = cfg->rest.ca_path;
    co.pinned_pubkey = cfg->rest.pinned_pubkey;
    co.client_cert = cfg->rest.client_cert;
    co.client_key = cfg->rest.client_key;
    co.submit_timeout_ms = cfg->launcher.submit_timeout_s * 1000;
    co.query_timeout_ms = cfg->launcher.query_timeout_s * 1000;
    co.cancel_timeout_ms = cfg->launcher.cancel_timeout_s * 1000;
    co.auth = auth;
    if ((rc = sluice_client_new(out, &co, err)) != SLUICE_OK)
        sluice_auth_free(auth);
    return rc;
}

void sluice_client_free(sluice_client_t *c)
{
    if (c == NULL)
        return;
    http_client_free(c->http);
    sluice_auth_free(c->auth);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

sluice_auth_t *sluice_client_auth(sluice_client_t *c)
{
    return c != NULL ? c->auth : NULL;
}

void sluice_client_stats(const sluice_client_t *c, sluice_client_stats_t *out)
{
    const sluice_client_t *m = c;

    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (m == NULL)
        return;
    out->submit = atomic_load(&m->n_kind[HTTP_CLASS_SUBMIT]);
    out->query = atomic_load(&m->n_kind[HTTP_CLASS_QUERY]);
    out->cancel = atomic_load(&m->n_kind[HTTP_CLASS_CANCEL]);
    out->ok = atomic_load(&m->n_class[REST_OK]);
    out->auth = atomic_load(&m->n_class[REST_AUTH]);
    out->unavailable = atomic_load(&m->n_class[REST_UNAVAILABLE]);
    out->rejected = atomic_load(&m->n_class[REST_REJECTED]);
    out->not_found = atomic_load(&m->n_class[REST_NOT_FOUND]);
}

void sluice_client_info(sluice_client_t *c, sluice_client_info_t *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    out->negotiated = c->negotiated;
    out->version = c->version;
    copy_str(out->release, sizeof(out->release), c->release);
    copy_str(out->cluster, sizeof(out->cluster), c->cluster);
    copy_str(out->data_parser, sizeof(out->data_parser), c->data_parser);
    pthread_mutex_unlock(&c->lock);
    copy_str(out->url, sizeof(out->url), http_client_url(c->http));
}

/* ---- negotiation --------------------------------------------------------- */

/* One authenticated diag call at version v; on OK records meta. */
static sluice_err
probe(sluice_client_t *c, sluice_rest_version v, sluice_call_t *call, sluice_error_t *err)
{
    sluice_rest_envelope_t env = {0};
    json_t *root = NULL;
    char *path = NULL;
    req_t r;
    sluice_err rc;

    if ((rc = sluice_rest_path_diag(v, &path, err)) != SLUICE_OK)
        return local_fail(call, SLUICE_OUTCOME_PROTOCOL, rc);
    memset(&r, 0, sizeof(r));
    r.method = HTTP_GET;
    r.klass = HTTP_CLASS_QUERY;
    r.path = path;
    r.v = v;
    r.probe = true;
    if ((rc = exchange(c, &r, &root, call, err)) != SLUICE_OK)
        goto out;
    if ((rc = sluice_rest_parse_envelope(v, root, &env, err)) != SLUICE_OK) {
        rc = proto_fail(call, err, "diag");
        goto out;
    }
    c->version = v;
    copy_str(c->release, sizeof(c->release), env.release);
    copy_str(c->cluster, sizeof(c->cluster), env.cluster);
    copy_str(c->data_parser, sizeof(c->data_parser), env.data_parser);
    c->negotiated = true;
out:
    sluice_rest_envelope_clear(&env);
    json_decref(root);
    free(path);
    return rc;
}

/* "v0.0.39 v0.0.40" from GET /openapi/v3, or a note that it failed. */
static void server_offers(sluice_client_t *c, char *dst, size_t size)
{
    sluice_call_t call;
    json_t *root = NULL;
    json_t *paths;
    const char *key;
    json_t *val;
    req_t r;
    size_t used = 0;

    memset(&r, 0, sizeof(r));
    r.method = HTTP_GET;
    r.klass = HTTP_CLASS_QUERY;
    r.path = "/openapi/v3";
    r.v = SLUICE_REST_V0045;
    call_init(&call, &call);
    copy_str(dst, size, "");
    if (exchange(c, &r, &root, &call, NULL) != SLUICE_OK || !json_is_object(root)) {
        copy_str(dst, size, "(its /openapi/v3 listing is not available)");
        goto out;
    }
    paths = json_object_get(root, "paths");
    json_object_foreach(paths, key, val)
    {
        char ver[32];
        int n = 0;

        (void)val;
        if (sscanf(key, "/slurm/%30[^/]/%n", ver, &n) != 1 || n == 0)
            continue;
        if (strstr(dst, ver) != NULL)
            continue;
        used = strlen(dst);
        snprintf(dst + used, size - used, "%s%s", used ? " " : "", ver);
    }
    if (dst[0] == '\0')
        copy_str(dst, size, "(no /slurm/ paths in its /openapi/v3 listing)");
out:
    json_decref(root);
}

static sluice_err unsupported(sluice_client_t *c, const char *what, sluice_error_t *err)
{
    char offers[256];

    server_offers(c, offers, sizeof(offers));
    return sluice_errorf(err, SLUICE_EUNSUPPORTED,
                         "%s: the server at %s offers %s; sluice supports v0.0.38 and "
                         "v0.0.40-v0.0.45",
                         what, http_client_url(c->http), offers);
}

sluice_err sluice_client_negotiate(sluice_client_t *c, sluice_call_t *call, sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_err rc = SLUICE_OK;

    if (c == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    call = call_init(call, &scratch);
    pthread_mutex_lock(&c->lock);
    if (c->negotiated) {
        call->outcome = SLUICE_OUTCOME_OK;
        goto out;
    }
    if (c->pinned) {
        rc = probe(c, c->version, call, err);
        if (rc != SLUICE_OK && call->outcome == SLUICE_OUTCOME_NOT_FOUND)
            rc = unsupported(c, sluice_rest_version_name(c->version), err);
        goto out;
    }
    for (int v = SLUICE_REST_VERSION_COUNT_ - 1; v >= 0; v--) {
        unsigned sent = call->requests;
        bool refreshed = call->auth_refreshed;

        call_init(call, call);
        rc = probe(c, (sluice_rest_version)v, call, err);
        call->requests += sent;
        call->auth_refreshed = call->auth_refreshed || refreshed;
        if (rc == SLUICE_OK || call->outcome != SLUICE_OUTCOME_NOT_FOUND)
            goto out;
    }
    rc = unsupported(c, "no supported API version", err);
out:
    if (rc == SLUICE_OK)
        sluice_log(SLUICE_LOG_INFO, "rest: %s speaks %s (Slurm %s%s%s)", http_client_url(c->http),
                   sluice_rest_version_name(c->version), c->release[0] ? c->release : "?",
                   c->cluster[0] ? ", cluster " : "", c->cluster);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Negotiate if needed; *v receives the version. */
static sluice_err
ready(sluice_client_t *c, sluice_rest_version *v, sluice_call_t *call, sluice_error_t *err)
{
    sluice_err rc;

    if (c == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    if ((rc = sluice_client_negotiate(c, call, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&c->lock);
    *v = c->version;
    pthread_mutex_unlock(&c->lock);
    call_init(call, call);
    return SLUICE_OK;
}

/* GET `path` (freed here) and hand the decoded body to the caller. */
static sluice_err get_json(sluice_client_t *c,
                           sluice_rest_version v,
                           char *path,
                           http_class_t klass,
                           http_method_t method,
                           json_t **root,
                           sluice_call_t *call,
                           sluice_error_t *err)
{
    req_t r;
    sluice_err rc;

    memset(&r, 0, sizeof(r));
    r.method = method;
    r.klass = klass;
    r.path = path;
    r.v = v;
    rc = exchange(c, &r, root, call, err);
    free(path);
    return rc;
}

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
    req_t r;
    sluice_err rc;

    call = call_init(call, &scratch);
    if (out == NULL)
        return local_fail(call, SLUICE_OUTCOME_REJECTED,
                          sluice_errorf(err, SLUICE_EINVAL, "submit: NULL result"));
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_submit_body(v, descs, n, &body, err)) != SLUICE_OK ||
        (rc = sluice_rest_path_submit(v, &path, err)) != SLUICE_OK) {
        call->outcome = SLUICE_OUTCOME_REJECTED; /* refused locally: nothing was sent */
        goto out;
    }
    text = json_dumps(body, JSON_COMPACT);
    if (text == NULL) {
        rc = local_fail(call, SLUICE_OUTCOME_REJECTED,
                        sluice_errorf(err, SLUICE_ENOMEM, "submit: cannot encode the body"));
        goto out;
    }
    memset(&r, 0, sizeof(r));
    r.method = HTTP_POST;
    r.klass = HTTP_CLASS_SUBMIT;
    r.path = path;
    r.body = text;
    r.v = v;
    if ((rc = exchange(c, &r, &root, call, err)) != SLUICE_OK)
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
            copy_str(call->slurm_error, sizeof(call->slurm_error), t);
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

    call = call_init(call, &scratch);
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_job(v, job_id, &path, err)) != SLUICE_OK)
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_parse_jobs(v, root, out, err)) != SLUICE_OK)
        rc = proto_fail(call, err, "job");
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

    call = call_init(call, &scratch);
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_jobs(v, update_time, &path, err)) != SLUICE_OK)
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) != SLUICE_OK)
        return rc;
    if (call->http_status == 304) {
        call->no_changes = true;
        goto out;
    }
    if ((rc = sluice_rest_parse_jobs(v, root, out, err)) != SLUICE_OK) {
        rc = proto_fail(call, err, "jobs");
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
        local_fail(call, SLUICE_OUTCOME_UNAVAILABLE, rc);
        goto out;
    }
    out->states = calloc(jobs.n_jobs > 0 ? jobs.n_jobs : 1, sizeof(*out->states));
    if (out->states == NULL) {
        rc = local_fail(call, SLUICE_OUTCOME_UNAVAILABLE,
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
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) != SLUICE_OK)
        return rc; /* get_json freed path */
    rc = sluice_rest_parse_job_states(v, root, out, err);
    json_decref(root);
    if (rc != SLUICE_OK)
        return proto_fail(call, err, "jobs state");
    if (all && (rc = keep_tracked(out, job_ids, n, err)) != SLUICE_OK) {
        sluice_rest_job_states_clear(out);
        return local_fail(call, SLUICE_OUTCOME_UNAVAILABLE, rc);
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

    call = call_init(call, &scratch);
    if (job_ids == NULL || n == 0 || out == NULL)
        return local_fail(call, SLUICE_OUTCOME_REJECTED,
                          sluice_errorf(err, SLUICE_EINVAL, "jobs state: no job ids"));
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
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
            return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
        call_init(call, call);
        rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err);
        sent += call->requests;
        call->requests = sent;
        if (rc != SLUICE_OK)
            goto fail;
        if ((rc = sluice_rest_parse_job_states(v, root, &part, err)) != SLUICE_OK) {
            json_decref(root);
            rc = proto_fail(call, err, "jobs state");
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

    call = call_init(call, &scratch);
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_acct_job(v, job_id, &path, err)) != SLUICE_OK)
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err);
    if (rc != SLUICE_OK)
        return acct_empty(call, rc, err);
    if ((rc = sluice_rest_parse_acct_jobs(v, root, out, err)) != SLUICE_OK)
        rc = proto_fail(call, err, "accounting job");
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

    call = call_init(call, &scratch);
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    /* dbv0.0.38 has no `users` filter (an unknown key is error 9000), and
     * 22.05's parse_time() refuses a bare epoch: filter users here and send
     * the window relative to the server's clock ("now-N"). */
    if (v == SLUICE_REST_V0038) {
        if ((rc = v0038_acct_path(job_name, start_time, end_time, &path, err)) != SLUICE_OK)
            return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    } else if ((rc = sluice_rest_path_acct_jobs(v, job_name, user, start_time, end_time, &path,
                                                err)) != SLUICE_OK) {
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    }
    rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err);
    if (rc != SLUICE_OK)
        return acct_empty(call, rc, err);
    if ((rc = sluice_rest_parse_acct_jobs(v, root, out, err)) != SLUICE_OK) {
        rc = proto_fail(call, err, "accounting jobs");
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

    call = call_init(call, &scratch);
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = sluice_rest_path_cancel(v, job_id, signal, &path, err)) != SLUICE_OK)
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    rc = get_json(c, v, path, HTTP_CLASS_CANCEL, HTTP_DELETE, NULL, call, err);
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

    call = call_init(call, &scratch);
    if ((rc = ready(c, &v, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = make_path(v, &path, err)) != SLUICE_OK)
        return local_fail(call, SLUICE_OUTCOME_REJECTED, rc);
    if ((rc = get_json(c, v, path, HTTP_CLASS_QUERY, HTTP_GET, &root, call, err)) != SLUICE_OK)
        return rc;
    if ((rc = parse(v, root, out, err)) != SLUICE_OK)
        rc = proto_fail(call, err, what);
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

/* ---- constraint matching ------------------------------------------------- */

static bool feature_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-' || ch == '.' || ch == ':';
}

static bool has_feature(const char *features, const char *name, size_t len)
{
    const char *p = features;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

        while (n > 0 && *p == ' ') {
            p++;
            n--;
        }
        while (n > 0 && p[n - 1] == ' ')
            n--;
        if (n == len && strncmp(p, name, len) == 0)
            return true;
        p = end != NULL ? end + 1 : NULL;
    }
    return false;
}

int sluice_constraint_match(const char *constraint, const char *features)
{
    const char *p = constraint;
    bool any = false;  /* some OR-term was satisfied */
    bool term = true;  /* the current AND-term so far */
    bool seen = false; /* a name was read in this term */

    if (constraint == NULL)
        return -1;
    if (features == NULL)
        features = "";
    for (;;) {
        while (*p == ' ')
            p++;
        if (feature_char(*p)) {
            const char *s = p;

            if (seen)
                return -1;
            while (feature_char(*p))
                p++;
            term = term && has_feature(features, s, (size_t)(p - s));
            seen = true;
            continue;
        }
        if (!seen)
            return -1; /* empty operand or unsupported syntax */
        if (*p == '&') {
            seen = false;
            p++;
        } else if (*p == '|' || *p == '\0') {
            any = any || term;
            if (*p == '\0')
                break;
            term = true;
            seen = false;
            p++;
        } else {
            return -1;
        }
    }
    return any ? 1 : 0;
}
