/* SPDX-License-Identifier: Apache-2.0 */
/* server_logs.c - the job output of a launch over `sluice serve`'s API: a
 * launch's stdout or stderr from an offset, once or followed (a stream).
 *
 * Notes:
 * - Where the bytes come from is supervise/launch_logs.c's rule: the
 *   store's archived copy once there is one (the same on every replica),
 *   else the live file in the launch's staging while it runs, else a copy
 *   this host archived before the store kept logs.  X-Sluice-Log-Source,
 *   -Size and -Omitted say which, how long the log is, and how many bytes
 *   at its start the store's copy does not hold (store.log_max_bytes).
 * - A log that cannot be read is an error, never an empty 200: 409
 *   log-refused (the live file breaks the job-owned rule: a symlink, a
 *   FIFO, a hard link; nothing is read and no worker blocks), 410 log-gone
 *   (the launch ended and no copy can be read: the detail says why), 503
 *   store (the store cannot be read now).  An empty 200 is a log that
 *   holds nothing after the offset, or one the job has not written yet.
 * - Offsets are offsets in the job's file whatever the source; a read
 *   below the store's cut starts at the cut (X-Sluice-Log-Omitted).
 * - Files and rows are read in chunks at an offset; nothing reads a whole
 *   log.  A followed stream that has nothing new returns
 *   ANSWER_STREAM_WAIT, and server.c suspends its connection until the
 *   ticker resumes it; it looks for the log again at every read, so it
 *   goes on from the store's copy once the launch is archived, and holds
 *   no file of the staging open between reads.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/store.h>

#include "server_logs.h"
#include "server_util.h"
#include "supervise/launch_logs.h"

typedef struct {
    sluice_server_t *s;
    char id[136];
    char stream[8]; /* stdout or stderr */
    launch_log_t log;
    uint64_t offset;
    unsigned idle;
    bool follow;
} logstream_t;

static sluice_err find(logstream_t *ls, sluice_error_t *err)
{
    sluice_err rc;

    pthread_mutex_lock(&ls->s->rmu);
    rc = launch_log_find(ls->s->rstore, ls->id, ls->stream, &ls->log, err);
    pthread_mutex_unlock(&ls->s->rmu);
    return rc;
}

static void logstream_free(void *cls)
{
    logstream_t *ls = cls;

    launch_log_clear(&ls->log);
    free(ls);
}

static ssize_t log_reader(void *cls, char *buf, size_t max)
{
    logstream_t *ls = cls;
    launch_log_t *l = &ls->log;
    size_t n = 0;
    sluice_err rc;

    /* A whole copy is read to its end; anything else is looked for again
     * (the live file grows, the archive may have come). */
    if (l->kind != LAUNCH_LOG_STORE && l->kind != LAUNCH_LOG_ARTIFACTS &&
        find(ls, NULL) != SLUICE_OK)
        return ANSWER_STREAM_END; /* pruned, or the store failed */
    if (l->kind == LAUNCH_LOG_GONE || l->kind == LAUNCH_LOG_REFUSED)
        return ANSWER_STREAM_END;
    if (l->kind != LAUNCH_LOG_EMPTY) {
        ls->offset = launch_log_start(l, ls->offset);
        pthread_mutex_lock(&ls->s->rmu);
        rc = launch_log_read(ls->s->rstore, ls->id, ls->stream, l, ls->offset, buf, max, &n, NULL);
        pthread_mutex_unlock(&ls->s->rmu);
        if (l->kind == LAUNCH_LOG_LIVE) {
            close(l->fd); /* the staging is the job's: no fd kept in it */
            l->fd = -1;
        }
        if (rc != SLUICE_OK)
            return ANSWER_STREAM_ERROR;
        if (n > 0) {
            ls->offset += n;
            ls->idle = 0;
            return (ssize_t)n;
        }
        if (l->kind == LAUNCH_LOG_STORE || l->kind == LAUNCH_LOG_ARTIFACTS || !ls->follow)
            return ANSWER_STREAM_END;
    } else if (!ls->follow) {
        return ANSWER_STREAM_END;
    }
    /* Nothing new yet.  Over when a finished launch's archive does not
     * come for a while (a replica that stopped before it archived). */
    if (l->terminal && ++ls->idle > 40)
        return ANSWER_STREAM_END;
    return ANSWER_STREAM_WAIT;
}

/* The headers of a 200: where the bytes come from and what the log is. */
static void log_headers(answer_t *out, const launch_log_t *l)
{
    char v[32];

    answer_header(out, "Content-Type", "text/plain; charset=utf-8");
    answer_header(out, "Cache-Control", "no-store");
    answer_header(out, "X-Sluice-Log-Source", launch_log_source(l));
    snprintf(v, sizeof(v), "%" PRId64, l->size);
    answer_header(out, "X-Sluice-Log-Size", v);
    snprintf(v, sizeof(v), "%" PRId64, l->kind == LAUNCH_LOG_STORE ? l->omitted : 0);
    answer_header(out, "X-Sluice-Log-Omitted", v);
}

void logs_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *off = req_arg(rq, "offset");
    long long offset = off ? server_parse_count(off) : 0;
    logstream_t *ls = NULL;
    launch_log_t *l;
    sluice_err rc;

    if (offset < 0) {
        answer_problem_ex(out, 400, "invalid-query", "Invalid query",
                          "offset must be a non-negative integer", "offset", NULL);
        return;
    }
    if ((ls = calloc(1, sizeof(*ls))) == NULL)
        return; /* no answer */
    ls->s = s;
    ls->log = (launch_log_t)LAUNCH_LOG_INIT;
    ls->offset = (uint64_t)offset;
    ls->follow = req_arg_true(rq, "follow");
    snprintf(ls->id, sizeof(ls->id), "%s", rq->id);
    snprintf(ls->stream, sizeof(ls->stream), "%s", rq->route_arg);
    l = &ls->log;
    if ((rc = find(ls, &err)) != SLUICE_OK) {
        if (rc == SLUICE_ESTORE)
            answer_problem(out, 503, "store", "Store unavailable", err.text);
        else
            answer_error(out, &err);
    } else if (l->kind == LAUNCH_LOG_REFUSED) {
        answer_problem(out, 409, "log-refused", "Log refused", l->why);
    } else if (l->kind == LAUNCH_LOG_GONE) {
        answer_problem(out, 410, "log-gone", "Log gone", l->why);
    } else if (ls->follow || l->kind == LAUNCH_LOG_STORE) {
        answer_stream(out, 200, 64 * 1024, log_reader, ls, logstream_free);
        log_headers(out, l); /* ls is the answer's now, alive until the stream ends */
        return;
    } else if ((l->kind == LAUNCH_LOG_LIVE || l->kind == LAUNCH_LOG_ARTIFACTS) &&
               l->size > offset) {
        answer_file(out, 200, l->fd, ls->offset, (uint64_t)l->size - ls->offset);
        l->fd = -1; /* the answer's now */
        log_headers(out, l);
    } else {
        answer_empty(out, 200); /* nothing after the offset, or nothing written yet */
        log_headers(out, l);
    }
    logstream_free(ls);
}
