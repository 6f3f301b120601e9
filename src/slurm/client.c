/* SPDX-License-Identifier: Apache-2.0 */
/* client.c - the slurmrestd client object and its exchange: token headers
 * + HTTP + outcome classification + the retry rule; creation, statistics
 * and API version negotiation.  The operations that wrap the adapters are
 * in client_ops.c.
 *
 * Notes:
 * - The retry rule lives in client_exchange() only: a GET/DELETE classified
 *   AUTH is sent once more after sluice_auth_invalidate(); a POST never is.
 * - 22.05 reports an unknown job id as HTTP 500 with error 2017; that is
 *   NOT_FOUND here (slurmrestd-api.md section 16).
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
 * - The client made from a site configuration is in client_config.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/client.h>
#include <sluice/log.h>

#include "base/log_episode.h"
#include "base/opts.h"
#include "client_int.h"
#include "transport/http.h"
#include "restclass.h"

#define ESLURM_INVALID_JOB_ID 2017

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

void client_copy_str(char *dst, size_t size, const char *src)
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
    client_copy_str(call->slurm_error, sizeof(call->slurm_error), text);
}

/* The sluice_err and text of a finished exchange that was not OK. */
static sluice_err
fail_call(const sluice_call_t *call, const client_req_t *r, http_xfer_t xfer, sluice_error_t *err)
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
sluice_err client_exchange(sluice_client_t *c,
                           const client_req_t *r,
                           json_t **json_out,
                           sluice_call_t *call,
                           sluice_error_t *err)
{
    const bool is_post = r->method == HTTP_POST;
    http_response_t resp = HTTP_RESPONSE_INIT;
    http_xfer_t last_xfer = HTTP_XFER_OK;
    sluice_error_t xerr = SLUICE_ERROR_INIT;
    const char *url = http_client_url(c->http);
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
        sluice_outcome cls;
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
        sluice_error_clear(&xerr);
        (void)http_request(c->http, &hr, &resp, &xerr);
        sluice_auth_headers_free(headers);
        last_xfer = resp.xfer;

        if (resp.xfer != HTTP_XFER_OK && resp.xfer != HTTP_XFER_TOO_BIG)
            log_episode_fail(__FILE__, "slurmrestd", url, "slurmrestd unreachable at %s: %s", url,
                             xerr.text[0] ? xerr.text : http_xfer_name(resp.xfer));
        else
            log_episode_ok(__FILE__, "slurmrestd", url, "slurmrestd reachable again at %s", url);
        if (resp.xfer != HTTP_XFER_OK) {
            atomic_fetch_add(&c->n_class[SLUICE_OUTCOME_UNAVAILABLE], 1);
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
        enumber = restclass_error_number_of(root); /* the body, parsed once */
        memset(&o, 0, sizeof(o));
        o.status = resp.status;
        o.xfer = resp.xfer;
        o.error_number = enumber;
        o.family = family_of(r->v);
        o.authenticated = 1;
        o.after_refresh = attempt > 0;
        o.unrouted = !r->probe && restclass_unrouted_of(resp.status, root);
        call->not_served = o.unrouted != 0;
        cls = restclass_classify(&o);
        if (resp.status == 500 && enumber == ESLURM_INVALID_JOB_ID)
            cls = SLUICE_OUTCOME_NOT_FOUND;
        if ((unsigned)cls < SLUICE_OUTCOME_COUNT_)
            atomic_fetch_add(&c->n_class[cls], 1);
        sluice_log(SLUICE_LOG_DEBUG, "rest: %s %s -> HTTP %ld (%s)", method_name(r->method), path,
                   resp.status, sluice_outcome_name(cls));

        if (cls == SLUICE_OUTCOME_AUTH)
            log_episode_fail(__FILE__, "slurm-token", url,
                             "slurmrestd at %s refused the Slurm token (HTTP %ld); renewing it",
                             url, resp.status);
        else if (cls == SLUICE_OUTCOME_OK || cls == SLUICE_OUTCOME_NOT_FOUND)
            log_episode_ok(__FILE__, "slurm-token", url,
                           "slurmrestd at %s accepts the Slurm token again", url);
        if (cls == SLUICE_OUTCOME_AUTH) {
            sluice_auth_invalidate(c->auth);
            call->auth_refreshed = true;
            sluice_log(SLUICE_LOG_DEBUG, "rest: %s %s: token refused (HTTP %ld); token renewed%s",
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
        case SLUICE_OUTCOME_OK:
            if (resp.body_len > 0 && root == NULL)
                call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_PROTOCOL;
            else
                call->outcome = SLUICE_OUTCOME_OK;
            break;
        case SLUICE_OUTCOME_NOT_FOUND:
            /* A POST reached slurmrestd: "no such job" proves no rejection. */
            call->outcome = is_post ? SLUICE_OUTCOME_UNCERTAIN : SLUICE_OUTCOME_NOT_FOUND;
            break;
        case SLUICE_OUTCOME_REJECTED:
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
        /* The transport's own words ("Failed to connect to 127.0.0.1 port 1
         * ...: Connection refused"), not only the outcome's name. */
        if (last_xfer != HTTP_XFER_OK && xerr.text[0] != '\0' && err != NULL) {
            const char *why = strstr(xerr.text, "): ");
            size_t used = strlen(err->text);

            snprintf(err->text + used, sizeof(err->text) - used, ": %s", why ? why + 3 : xerr.text);
        }
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
sluice_call_t *client_call_init(sluice_call_t *call, sluice_call_t *scratch)
{
    if (call == NULL)
        call = scratch;
    memset(call, 0, sizeof(*call));
    call->outcome = SLUICE_OUTCOME_UNAVAILABLE;
    return call;
}

/* A local failure (building a request): no request was sent. */
sluice_err client_local_fail(sluice_call_t *call, sluice_outcome o, sluice_err rc)
{
    call->outcome = o;
    return rc;
}

/* A 2xx answer the adapter could not read. */
sluice_err client_proto_fail(sluice_call_t *call, sluice_error_t *err, const char *what)
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
sluice_client_new(sluice_client_t **out, const sluice_client_opts_t *opts, sluice_error_t *err)
{
    sluice_client_t *c = NULL;
    http_opts_t ho;
    sluice_err rc = SLUICE_OK;

    if (out == NULL || opts == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: url and auth are required");
    if ((rc = opts_check_version("client", opts->version, SLUICE_CLIENT_OPTS_VERSION, err)) !=
        SLUICE_OK)
        return rc;
    if (opts->url == NULL || opts->auth == NULL)
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
    ho.url_name = "rest.url";
    ho.insecure_name = "rest.allow_insecure_http";
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
    out->ok = atomic_load(&m->n_class[SLUICE_OUTCOME_OK]);
    out->auth = atomic_load(&m->n_class[SLUICE_OUTCOME_AUTH]);
    out->unavailable = atomic_load(&m->n_class[SLUICE_OUTCOME_UNAVAILABLE]);
    out->rejected = atomic_load(&m->n_class[SLUICE_OUTCOME_REJECTED]);
    out->not_found = atomic_load(&m->n_class[SLUICE_OUTCOME_NOT_FOUND]);
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
    client_copy_str(out->release, sizeof(out->release), c->release);
    client_copy_str(out->cluster, sizeof(out->cluster), c->cluster);
    client_copy_str(out->data_parser, sizeof(out->data_parser), c->data_parser);
    pthread_mutex_unlock(&c->lock);
    client_copy_str(out->url, sizeof(out->url), http_client_url(c->http));
}

/* ---- negotiation --------------------------------------------------------- */

/* One authenticated diag call at version v; on OK records meta. */
static sluice_err
probe(sluice_client_t *c, sluice_rest_version v, sluice_call_t *call, sluice_error_t *err)
{
    sluice_rest_envelope_t env = {0};
    json_t *root = NULL;
    char *path = NULL;
    client_req_t r;
    sluice_err rc;

    if ((rc = sluice_rest_path_diag(v, &path, err)) != SLUICE_OK)
        return client_local_fail(call, SLUICE_OUTCOME_PROTOCOL, rc);
    memset(&r, 0, sizeof(r));
    r.method = HTTP_GET;
    r.klass = HTTP_CLASS_QUERY;
    r.path = path;
    r.v = v;
    r.probe = true;
    if ((rc = client_exchange(c, &r, &root, call, err)) != SLUICE_OK)
        goto out;
    if ((rc = sluice_rest_parse_envelope(v, root, &env, err)) != SLUICE_OK) {
        rc = client_proto_fail(call, err, "diag");
        goto out;
    }
    c->version = v;
    client_copy_str(c->release, sizeof(c->release), env.release);
    client_copy_str(c->cluster, sizeof(c->cluster), env.cluster);
    client_copy_str(c->data_parser, sizeof(c->data_parser), env.data_parser);
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
    client_req_t r;
    size_t used = 0;

    memset(&r, 0, sizeof(r));
    r.method = HTTP_GET;
    r.klass = HTTP_CLASS_QUERY;
    r.path = "/openapi/v3";
    r.v = (sluice_rest_version)(SLUICE_REST_VERSION_COUNT_ - 1);
    client_call_init(&call, &call);
    client_copy_str(dst, size, "");
    if (client_exchange(c, &r, &root, &call, NULL) != SLUICE_OK || !json_is_object(root)) {
        client_copy_str(dst, size, "(its /openapi/v3 listing is not available)");
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
        client_copy_str(dst, size, "(no /slurm/ paths in its /openapi/v3 listing)");
out:
    json_decref(root);
}

static sluice_err unsupported(sluice_client_t *c, const char *what, sluice_error_t *err)
{
    char offers[256];

    server_offers(c, offers, sizeof(offers));
    return sluice_errorf(err, SLUICE_EUNSUPPORTED,
                         "%s: the server at %s offers %s; sluice supports v0.0.38 and "
                         "v0.0.40-%s",
                         what, http_client_url(c->http), offers,
                         sluice_rest_version_name(SLUICE_REST_VERSION_COUNT_ - 1));
}

sluice_err sluice_client_negotiate(sluice_client_t *c, sluice_call_t *call, sluice_error_t *err)
{
    sluice_call_t scratch;
    sluice_err rc = SLUICE_OK;

    if (c == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    call = client_call_init(call, &scratch);
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

        client_call_init(call, call);
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
sluice_err
client_ready(sluice_client_t *c, sluice_rest_version *v, sluice_call_t *call, sluice_error_t *err)
{
    sluice_err rc;

    if (c == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "client: NULL argument");
    if ((rc = sluice_client_negotiate(c, call, err)) != SLUICE_OK)
        return rc;
    pthread_mutex_lock(&c->lock);
    *v = c->version;
    pthread_mutex_unlock(&c->lock);
    client_call_init(call, call);
    return SLUICE_OK;
}

/* GET `path` (freed here) and hand the decoded body to the caller. */
sluice_err client_get_json(sluice_client_t *c,
                           sluice_rest_version v,
                           char *path,
                           http_class_t klass,
                           http_method_t method,
                           json_t **root,
                           sluice_call_t *call,
                           sluice_error_t *err)
{
    client_req_t r;
    sluice_err rc;

    memset(&r, 0, sizeof(r));
    r.method = method;
    r.klass = klass;
    r.path = path;
    r.v = v;
    rc = client_exchange(c, &r, root, call, err);
    free(path);
    return rc;
}

sluice_err
sluice_client_opts_init(sluice_client_opts_t *opts, unsigned int version, sluice_error_t *err)
{
    static const sluice_client_opts_t tmpl = SLUICE_CLIENT_OPTS_INIT;

    return opts_init(opts, &tmpl, sizeof(tmpl), "client", version, SLUICE_CLIENT_OPTS_VERSION, err);
}
