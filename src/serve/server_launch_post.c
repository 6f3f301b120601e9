/* SPDX-License-Identifier: Apache-2.0 */
/* server_launch_post.c - the create route of `sluice serve`: POST
 * /v1/launches checks the body (media type, UTF-8, JSON, secrets only on a
 * protected channel), then runs the accept pipeline (policy, parse, render,
 * dry run, secrets, sluice_launcher_accept) and answers with the view.
 *
 * Notes:
 * - The whole pipeline is launch_post(), in one piece, so that it can be
 *   replaced by one library call.
 * - An accept does not take s->mu: sluice_launcher_accept is thread-safe
 *   and wakes the launcher, so a POST never waits for a running cycle.
 * - The body is wiped before the answer is sent: it may hold secrets.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/config.h>
#include <sluice/launch.h>
#include <sluice/launcher.h>
#include <sluice/ops.h>
#include <sluice/render.h>

#include "server_launch_post.h"
#include "server_launches.h"
#include "server_text.h"
#include "server_util.h"

static const char *process_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

static const char *server_getenv_cb(const char *name, void *arg)
{
    sluice_server_t *s = arg;
    return s->o.getenv_fn ? s->o.getenv_fn(name, s->o.getenv_arg) : getenv(name);
}

void launch_post(sluice_server_t *s, req_t *rq, answer_t *out)
{
    const char *ctype = req_header(rq, "Content-Type");
    int protected_channel = rq->unix_socket || rq->tls;
    json_t *peek = NULL, *request = NULL, *render = NULL, *view = NULL;
    json_error_t jerr;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launch_policy_t policy;
    sluice_launch_t *launch = NULL;
    sluice_render_t *r = NULL;
    sluice_render_ctx_t ctx;
    sluice_launcher_request_t lr;
    sluice_secret_t *secrets = NULL;
    const sluice_study_t *study = NULL;
    size_t n_secrets = 0;
    char *canon = NULL, *id = NULL;
    int existed = 0, have_policy = 0;
    sluice_err rc;

    memset(&policy, 0, sizeof(policy));
    memset(&ctx, 0, sizeof(ctx));
    memset(&lr, 0, sizeof(lr));
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
        answer_problem(out, 400, "malformed-json", "Malformed JSON",
                       peek ? "the body is not a JSON object" : jerr.text);
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
    /* ---- the accept pipeline ---- */
    if (s->o.rt) {
        const char *name = json_string_value(json_object_get(peek, "study"));
        study = name ? sluice_study_runtime_find(s->o.rt, name) : NULL;
    }
    if (sluice_config_launch_policy(s->o.cfg, study, &policy, &err) != SLUICE_OK) {
        answer_error(out, &err);
        goto out;
    }
    have_policy = 1;
    if (sluice_launch_parse(&launch, rq->body, rq->len, &policy, 0, &err) != SLUICE_OK) {
        answer_error(out, &err);
        goto out;
    }
    ctx.attempt = 1;
    ctx.getenv_fn = s->o.getenv_fn;
    ctx.getenv_arg = s->o.getenv_arg;
    ctx.stat_fn = s->o.stat_fn;
    ctx.stat_arg = s->o.stat_arg;
    if (ctx.getenv_fn == NULL)
        ctx.getenv_fn = process_getenv;
    if (sluice_render(s->o.cfg, study, launch, &ctx, &r, &err) != SLUICE_OK) {
        answer_error(out, &err);
        goto out;
    }
    if ((canon = sluice_launch_to_json(launch, &err)) == NULL ||
        (request = json_loads(canon, 0, NULL)) == NULL ||
        (render = sluice_render_to_json(r)) == NULL) {
        answer_problem(out, 500, "internal", "Internal error", "out of memory");
        goto out;
    }
    if (req_arg_true(rq, "dry_run")) {
        answer_json(out, 200,
                    json_pack("{s:b s:s s:O s:O}", "dry_run", 1, "launch_id",
                              sluice_launch_id(launch), "request", request, "render", render));
        goto out;
    }
    if (sluice_launch_collect_secrets(launch, study, server_getenv_cb, s, &secrets, &n_secrets,
                                      &err) != SLUICE_OK) {
        answer_problem_ex(out, 422, "invalid-request", "Invalid launch request", err.text,
                          "secret_env", NULL);
        goto out;
    }
    lr.request = request;
    lr.render = render;
    lr.secrets = secrets;
    lr.n_secrets = n_secrets;
    lr.caller = rq->caller.name;
    /* Not under s->mu: an accept never waits for a launcher cycle (the
     * launcher takes the launch at its next intake and is woken now). */
    rc = sluice_launcher_accept(s->o.launcher, &lr, &id, &existed, &err);
    atomic_store(&s->views_dirty, 1);
    if (rc == SLUICE_OK)
        launches_view(s, id, &view, &err);
    if (view == NULL) {
        answer_error(out, &err);
        goto out;
    }
    answer_json(out, existed ? 200 : 201, view);
    view = NULL;
out:
    server_wipe(rq->body, rq->len);
    free(secrets);
    free(id);
    free(canon);
    json_decref(view);
    json_decref(peek);
    json_decref(request);
    json_decref(render);
    sluice_render_free(r);
    sluice_launch_free(launch);
    if (have_policy)
        sluice_config_launch_policy_clear(&policy);
}
