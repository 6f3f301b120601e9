/* SPDX-License-Identifier: Apache-2.0 */
/* launch_remote.c - `sluice launch REQUEST.json --server URL [--wait]`: POST
 * the request to a running `sluice serve` and, with --wait, follow the
 * launch to its end with the same transition lines and exit code as the
 * local supervisor.
 *
 * Notes:
 * - The request file is sent as it is; the service validates, renders and
 *   resolves `secret_env` from its own environment.  Sending it again with
 *   the same launch_id resumes the same launch (200), a different body is a
 *   conflict (409, exit 65).
 * - --wait follows the launch's own event stream,
 *   /v1/launches/<id>/events (Server-Sent Events), from the resource
 *   version of its first read, and reads the launch (summary and event
 *   log) after each of its events.  The log is folded
 *   through the state machine, so every transition gets its line even when
 *   the service moved on before the first read (an accepted launch is often
 *   SUBMITTING by then); the terminal line comes from the summary, which is
 *   what the exit code follows.  The fold knows the request's
 *   pending_timeout and requeue but not the service's budgets, so an
 *   intermediate line may differ from the service's view only where a site
 *   changed those; the summary decides.
 * - Every read moves the stream's mark (Last-Event-ID) to the read's
 *   resource_version: what it showed is never asked for again, and no
 *   other launch's event nor the store's history is read.  A dropped
 *   stream is resumed from the mark; after five failures in a row the
 *   command gives up with 69.  The service ends the stream once the launch
 *   is done.  An older service, whose reads carry no resource_version, is
 *   followed through /v1/events from its oldest event.
 * - The service's answers are read with base/jdec.h's peeks
 *   (jdec_peek_root()): only a missing launch_id or state is an error
 *   (CLI_EX_PROTOCOL), worded here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include <sluice/fsm.h>

#include "base/jdec.h"
#include "base/wipe.h"
#include "cli.h"
#include "prepare.h"
#include "print.h"
#include "progress.h"
#include "remote.h"

typedef struct {
    cli_remote_t *r;
    const char *id;
    char path[512];   /* /v1/launches/<id> */
    char events[520]; /* /v1/launches/<id>/events */
    int per_launch;   /* the service has resource versions (and that stream) */
    int json;
    /* the launch's log folded so far */
    sluice_fsm_launch_t fsm;
    int fsm_ready;
    int folded; /* the fold printed a transition */
    int64_t next_seq;
    char slurm[32]; /* the newest observed Slurm state */
    /* what was printed last */
    char state[32];
    int result;
    char reason[512];
    /* the SSE parser */
    char line[65536];
    size_t line_len;
    char event_id[32];       /* of the event being read */
    char last_id[32];        /* of the last complete event */
    int ours;                /* the event being read is about this launch */
    int done;                /* the launch is over */
    int failed;              /* sysexit of a failed GET, or 0 */
    cli_progress_t progress; /* status line / heartbeat between transitions */
} follow_t;

/* Fold the log entries not seen yet and print every transition short of
 * DONE (that line comes from the summary). */
static void print_new_transitions(follow_t *f, const jdec_cur_t *l)
{
    jdec_cur_t events, req, e;
    int64_t created = jdec_peek_int(l, "created_ms", 0);
    size_t i;

    jdec_member(&events, l, "events");
    if (!f->fsm_ready) {
        sluice_fsm_config_t cfg;
        int64_t pt;

        jdec_member(&req, l, "request");
        pt = jdec_peek_int(&req, "pending_timeout", 0);
        sluice_fsm_config_default(&cfg);
        if (json_is_integer(jdec_value(&req, "pending_timeout")) && pt > 0)
            cfg.pending_timeout = (double)pt;
        cfg.requeue_allowed = jdec_peek_true(&req, "requeue");
        sluice_fsm_launch_init(&f->fsm, &cfg);
        f->fsm_ready = 1;
        f->next_seq = 1;
    }
    JDEC_FOREACH(&events, i, e)
    {
        int64_t seq = jdec_peek_int(&e, "seq", 0);
        const char *name = jdec_peek_string(&e, "name");
        const char *obs = cli_observed_state(&e);
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_fsm_event_type type;
        sluice_fsm_event_t ev;
        sluice_fsm_transition_t tr;
        cli_transition_t t;
        json_t *fe;
        int64_t at = jdec_peek_int(&e, "time", 0);

        if (seq < f->next_seq)
            continue;
        f->next_seq = seq + 1;
        if (obs != NULL)
            snprintf(f->slurm, sizeof(f->slurm), "%s", obs);
        if (name == NULL || !sluice_fsm_event_from_name(name, &type))
            continue; /* bookkeeping (archived, peers-written, ...) */
        fe = json_pack("{s:I s:f s:s s:O}", "seq", (json_int_t)seq, "time", (double)at / 1000.0,
                       "name", name, "context", jdec_value(&e, "context"));
        memset(&ev, 0, sizeof(ev));
        if (fe == NULL || sluice_fsm_event_from_json(fe, &ev, &err) != SLUICE_OK) {
            json_decref(fe);
            sluice_fsm_event_clear(&ev);
            continue;
        }
        json_decref(fe);
        if (sluice_fsm_apply(&f->fsm, &ev, &tr, &err) == SLUICE_OK && !tr.ignored &&
            sluice_fsm_state_public(tr.from) != sluice_fsm_state_public(tr.to) &&
            tr.to != SLUICE_FSM_DONE) {
            memset(&t, 0, sizeof(t));
            t.launch_id = f->id;
            t.event = name;
            t.state = sluice_fsm_state_name(sluice_fsm_state_public(tr.to));
            t.result = 127;
            t.slurm_state = f->slurm;
            t.reason = tr.reason;
            t.elapsed = (double)(at - created) / 1000.0;
            cli_print_transition(&t, f->json);
            snprintf(f->state, sizeof(f->state), "%s", t.state);
            f->folded = 1;
        }
        sluice_fsm_event_clear(&ev);
    }
}

/* Move the stream's mark to the resource version of read `l` when it is
 * newer: every event up to it has been folded. */
static void mark_read(follow_t *f, const jdec_cur_t *l)
{
    long long v = (long long)jdec_peek_int(l, "resource_version", -1);

    if (v >= 0)
        f->per_launch = 1;
    if (v >= 0 && (f->last_id[0] == '\0' || v > strtoll(f->last_id, NULL, 10)))
        snprintf(f->last_id, sizeof(f->last_id), "%lld", v);
}

/* Read the launch; print its new transitions, then the summary's state
 * when it still differs (the terminal line).  0 or the sysexit. */
static int refresh(follow_t *f)
{
    json_t *launch = NULL;
    jdec_t d;
    jdec_cur_t l, events;
    long status = 0;
    const char *state, *reason;
    int rc, result;
    cli_transition_t t;

    if ((rc = cli_remote_json(f->r, "GET", f->path, NULL, NULL, &status, &launch)) != CLI_EX_OK)
        return rc;
    cli_progress_clear(&f->progress);
    jdec_peek_root(&d, &l, launch);
    state = jdec_peek_string(&l, "state");
    reason = jdec_peek_string(&l, "reason");
    result = (int)jdec_peek_int(&l, "result_code", 127);
    jdec_member(&events, &l, "events");
    if (state == NULL) {
        fprintf(stderr, "sluice launch: the service's answer for %s has no state\n", f->id);
        json_decref(launch);
        return CLI_EX_PROTOCOL;
    }
    print_new_transitions(f, &l);
    mark_read(f, &l);
    /* The summary's line: the terminal one, or every change when the log
     * could not be folded (a service with events this CLI does not know).
     * The summary and the log are two reads, so a live summary may lag the
     * fold: never print it then. */
    if ((strcmp(state, f->state) != 0 || result != f->result) &&
        (jdec_peek_true(&l, "terminal") || !f->folded)) {
        cli_transition_of(launch, NULL, cli_last_slurm_state(jdec_value(&events, NULL)), &t);
        t.launch_id = f->id;
        cli_print_transition(&t, f->json);
        snprintf(f->state, sizeof(f->state), "%s", state);
        f->result = result;
        snprintf(f->reason, sizeof(f->reason), "%s", reason ? reason : "");
    }
    f->done = jdec_peek_true(&l, "terminal");
    if (!f->done)
        cli_progress_tick(&f->progress, launch);
    json_decref(launch);
    return CLI_EX_OK;
}

/* One complete SSE line (without its newline). */
static int sse_line(follow_t *f, const char *line)
{
    if (line[0] == '\0') {
        /* end of an event */
        if (f->event_id[0] && (f->last_id[0] == '\0' ||
                               strtoll(f->event_id, NULL, 10) > strtoll(f->last_id, NULL, 10)))
            snprintf(f->last_id, sizeof(f->last_id), "%s", f->event_id);
        if (f->ours) {
            int rc = refresh(f);
            if (rc != CLI_EX_OK) {
                f->failed = rc;
                return 1;
            }
        }
        f->event_id[0] = '\0';
        f->ours = 0;
        return f->done;
    }
    if (line[0] == ':') {
        /* The service's keep-alive (every ~10 s of silence): a moment to
         * show the launch's progress, read afresh. */
        json_t *launch = NULL;
        jdec_t d;
        jdec_cur_t l;
        long status = 0;

        if (!f->json &&
            cli_remote_json(f->r, "GET", f->path, NULL, NULL, &status, &launch) == CLI_EX_OK) {
            jdec_peek_root(&d, &l, launch);
            if (!jdec_peek_true(&l, "terminal"))
                cli_progress_tick(&f->progress, launch);
        }
        json_decref(launch);
        return 0;
    }
    if (strncmp(line, "id: ", 4) == 0) {
        snprintf(f->event_id, sizeof(f->event_id), "%s", line + 4);
    } else if (strncmp(line, "data: ", 6) == 0) {
        json_t *data = json_loads(line + 6, 0, NULL);
        jdec_t d;
        jdec_cur_t ev;
        const char *lid;

        jdec_peek_root(&d, &ev, data);
        lid = jdec_peek_string(&ev, "launch_id");
        if (lid != NULL && strcmp(lid, f->id) == 0)
            f->ours = 1;
        json_decref(data);
    }
    return 0;
}

static int on_sse(const char *data, size_t len, void *arg)
{
    follow_t *f = arg;
    size_t i;

    for (i = 0; i < len; i++) {
        if (data[i] == '\n') {
            f->line[f->line_len] = '\0';
            f->line_len = 0;
            if (sse_line(f, f->line) != 0)
                return 1;
        } else if (f->line_len < sizeof(f->line) - 1) {
            f->line[f->line_len++] = data[i];
        }
    }
    return 0;
}

static int follow(follow_t *f)
{
    struct timespec pause = {1, 0};
    int rc, failures = 0, ended;

    if ((rc = refresh(f)) != CLI_EX_OK)
        return rc;
    while (!f->done) {
        f->line_len = 0;
        f->event_id[0] = '\0';
        f->ours = 0;
        /* A service without resource versions has no per-launch stream
         * either: follow its global one from the start, as before. */
        rc = cli_remote_stream(f->r, f->per_launch ? f->events : "/v1/events", NULL,
                               "text/event-stream", f->last_id[0] ? f->last_id : NULL, on_sse, f,
                               &ended);
        if (f->failed)
            return f->failed;
        if (f->done)
            break;
        if (rc == CLI_EX_NOPERM || rc == CLI_EX_DATAERR)
            return rc;
        if (rc != CLI_EX_OK && ++failures >= 5) {
            fprintf(stderr,
                    "sluice launch: lost the event stream of %s five times; giving up "
                    "(the launch goes on: `sluice status --server`)\n",
                    f->id);
            return rc;
        }
        if (rc == CLI_EX_OK)
            failures = 0;
        nanosleep(&pause, NULL);
        /* Whatever was missed while the stream was down. */
        if ((rc = refresh(f)) != CLI_EX_OK)
            return rc;
    }
    return CLI_EX_OK;
}

int cli_launch_remote(
    const cli_remote_opts_t *o, const char *request_path, int wait, int json, double heartbeat_s)
{
    cli_remote_t *r = NULL;
    follow_t *f = NULL;
    json_t *launch = NULL;
    jdec_t d;
    jdec_cur_t l, req, pools;
    char *body = NULL, esc[400];
    size_t len = 0;
    long status = 0;
    const char *id;
    int rc;

    if ((body = cli_read_file(request_path, &len)) == NULL)
        return cli_read_fail("the request", request_path);
    if ((rc = cli_remote_open(o, &r)) != CLI_EX_OK)
        goto out;
    if ((rc = cli_remote_json(r, "POST", "/v1/launches", NULL, body, &status, &launch)) !=
        CLI_EX_OK)
        goto out;
    jdec_peek_root(&d, &l, launch);
    id = jdec_peek_string(&l, "launch_id");
    if (id == NULL || cli_remote_escape(id, esc, sizeof(esc)) != 0) {
        fprintf(stderr, "sluice launch: the service's answer has no launch_id\n");
        rc = CLI_EX_PROTOCOL;
        goto out;
    }
    jdec_member(&req, &l, "request");
    jdec_member(&pools, &req, "pools");
    if (!json)
        cli_print_accepted(id, status == 200, jdec_peek_string_or(&l, "site", "?"),
                           jdec_len(&pools));
    if (!wait)
        goto out;
    if ((f = calloc(1, sizeof(*f))) == NULL) {
        rc = CLI_EX_SOFTWARE;
        goto out;
    }
    f->r = r;
    f->id = id;
    f->json = json;
    f->result = 127;
    snprintf(f->path, sizeof(f->path), "/v1/launches/%s", esc);
    snprintf(f->events, sizeof(f->events), "/v1/launches/%s/events", esc);
    cli_progress_init(&f->progress, json, heartbeat_s);
    rc = follow(f);
    cli_progress_clear(&f->progress);
    if (rc == CLI_EX_OK)
        rc = f->result;
out:
    free(f);
    if (body != NULL)
        wipe(body, len); /* it may hold secret values */
    free(body);
    json_decref(launch);
    cli_remote_close(r);
    return rc;
}
