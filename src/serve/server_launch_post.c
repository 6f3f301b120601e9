/* SPDX-License-Identifier: Apache-2.0 */
/* server_launch_post.c - the create route of `sluice serve`: POST
 * /v1/launches checks the body (media type, UTF-8, JSON, secrets only on a
 * protected channel), then runs the library's accept pipeline on the value
 * it loaded (sluice_accept_prepare_value: policy, parse, render; the dry
 * run answers there; sluice_accept_commit: secrets and the durable accept)
 * and answers with the view.
 *
 * Notes:
 * - An accept does not take s->mu: sluice_accept_commit is thread-safe
 *   and wakes the launcher, so a POST never waits for a running cycle.
 * - The body is wiped before the answer is sent: it may hold secrets.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/accept.h>

#include "base/wipe.h"
#include "server_ha.h"
#include "server_int.h"
#include "server_launch_post.h"
#include "server_launches.h"
#include "server_tenant.h"
#include "server_text.h"
#include "server_util.h"

void launch_post(sluice_server_t *s, req_t *rq, answer_t *out)
{
    const char *ctype = req_header(rq, "Content-Type");
    int protected_channel = rq->unix_socket || rq->tls;
    json_t *peek = NULL, *view = NULL;
    json_error_t jerr;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_t *a = NULL;
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_errlist_t fields = SLUICE_ERRLIST_INIT; /* every field error: the 422's errors[] */
    sluice_err rc;

    if (ctype == NULL || strncmp(ctype, "application/json", 16) != 0 ||
        (ctype[16] != '\0' && ctype[16] != ';')) {
        answer_problem(out, 415, "unsupported-media-type", "Unsupported media type",
                       "send the launch request as application/json");
        goto out;
    }
    if (rq->body && text_utf8_prefix(rq->body, rq->len) != rq->len) {
        char field[256], detail[320];
        text_utf8_field(rq->body, rq->len, field, sizeof(field));
        snprintf(detail, sizeof(detail), "%s: not valid UTF-8 (byte %zu of the body)", field,
                 text_utf8_prefix(rq->body, rq->len));
        answer_problem_ex(out, 400, "invalid-utf8", "Invalid UTF-8", detail, field, NULL);
        goto out;
    }
    if ((peek = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr)) ==
            NULL ||
        !json_is_object(peek)) {
        /* The position and jansson's reason as the CLI gives them, without
         * its "near '...'" excerpt: that quotes the body, which may hold a
         * secret value. */
        char detail[256], *near = strstr(jerr.text, " near '");

        if (peek != NULL) {
            answer_problem(out, 400, "malformed-json", "Malformed JSON",
                           "the body is not a JSON object");
            goto out;
        }
        if (near != NULL)
            *near = '\0';
        snprintf(detail, sizeof(detail), "not valid JSON at line %d, column %d: %s", jerr.line,
                 jerr.column, jerr.text);
        answer_problem_more(out, 400, "malformed-json", "Malformed JSON", detail, NULL, NULL,
                            json_pack("{s:i s:i}", "line", jerr.line, "column", jerr.column));
        goto out;
    }
    /* Values that crossed plain TCP are not secret any more: refuse them
     * before anything is parsed, rendered or stored. */
    if (!protected_channel && json_object_get(peek, "secrets") != NULL) {
        answer_problem_ex(out, 403, "secrets-need-protected-channel",
                          "Secrets need TLS or the Unix socket",
                          "secret values are accepted only over TLS or the Unix socket; nothing "
                          "was stored (use secret_env names, or a protected listener)",
                          "secrets", NULL);
        goto out;
    }
    /* The launch_id (and depends_on's) become keys of the caller's tenant
     * before anything judges the request. */
    if (server_tenant_body(&rq->caller, peek, out) != 0)
        goto out;
    if (server_ha_refuse_accept(s, peek, out))
        goto out;
    /* ---- the accept pipeline (sluice_accept, the one for every caller) ---- */
    ao.rt = s->o.rt;
    ao.studies = s->o.studies;     /* the study file as it is now */
    ao.getenv_fn = s->o.getenv_fn; /* NULL: this process's environment */
    ao.getenv_arg = s->o.getenv_arg;
    ao.stat_fn = s->o.stat_fn;
    ao.stat_arg = s->o.stat_arg;
    ao.caller = rq->caller.name;
    ao.errors = &fields;
    /* The value loaded above is the one the pipeline judges: the body is
     * parsed once (its secret values are wiped by the parse). */
    if (sluice_accept_prepare_value(&a, &stage, s->o.cfg, peek, &ao, &err) != SLUICE_OK) {
        answer_error_fields(out, &err, &fields);
        goto out;
    }
    if (req_arg_true(rq, "dry_run")) {
        json_t *dry =
            json_pack("{s:b s:s s:o s:o}", "dry_run", 1, "launch_id", sluice_accept_launch_id(a),
                      "request", json_deep_copy(sluice_accept_request_json(a)), "render",
                      json_deep_copy(sluice_accept_render_json(a)));
        server_tenant_shape(dry);
        answer_json(out, 200, dry);
        goto out;
    }
    /* Not under s->mu: an accept never waits for a launcher cycle (the
     * launcher takes the launch at its next intake and is woken now). */
    {
        /* the launch's cluster's launcher (the request's `cluster`, checked
         * by the parse against the site's clusters) */
        sluice_launcher_t *l = server_launcher_for(s, sluice_accept_cluster(a));
        if (l == NULL) {
            answer_problem_ex(out, 422, "invalid-request", "Invalid request",
                              "cluster: no launcher for the cluster", "cluster", NULL);
            goto out;
        }
        /* A tenant's limits are checked against the store and the accept
         * committed under one lock, so two POSTs of this replica cannot both
         * take the last place. */
        pthread_mutex_lock(&s->tenant_mu);
        if (server_tenant_limits(s, &rq->caller, a, out) != 0) {
            pthread_mutex_unlock(&s->tenant_mu);
            goto out;
        }
        rc = sluice_accept_commit(a, &outcome, &stage, l, &err);
        pthread_mutex_unlock(&s->tenant_mu);
    }
    if (rc != SLUICE_OK && stage == SLUICE_ACCEPT_STAGE_SECRETS) {
        /* a secret_env variable the service's environment lacks (the
         * request's, "secret_env: ...", or the study's) */
        const char *why = err.text;

        if (strncmp(why, "secret_env: ", 12) == 0)
            why += 12;
        if (sluice_errlist_add(&fields, "secret_env", "%s", why) != SLUICE_OK)
            sluice_errorf(&err, SLUICE_ENOMEM, "out of memory");
        answer_error_fields(out, &err, &fields);
        goto out;
    }
    atomic_store(&s->views_dirty, 1);
    if (rc == SLUICE_OK) {
        /* A launch this POST created is answered from what the commit
         * wrote (as a read back would give it at once: unit.store checks
         * both agree); a repeat is read back (it may have gone on since). */
        const json_t *events = NULL;
        int64_t version = 0;
        const json_t *made = sluice_accept_created_launch(a, &events, &version);

        if (made != NULL)
            launches_view_of(s, made, events, version, &view, &err);
        else
            launches_view(s, sluice_accept_launch_id(a), &view, &err);
    }
    if (view == NULL) {
        if (!server_ha_store_failed(s, &err, out))
            answer_error(out, &err);
        goto out;
    }
    answer_json(out, outcome == SLUICE_ACCEPT_EXISTED ? 200 : 201, view);
    view = NULL;
    {
        char where[ANSWER_HEADER_MAX];
        snprintf(where, sizeof(where), "/v1/launches/%s",
                 server_tenant_bare(sluice_accept_launch_id(a)));
        answer_header(out, "Location", where);
    }
out:
    wipe(rq->body, rq->len);
    json_decref(view);
    json_decref(peek);
    sluice_accept_free(a);
    sluice_errlist_clear(&fields);
}
