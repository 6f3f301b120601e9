/* SPDX-License-Identifier: Apache-2.0 */
/* server_logs.c - the job output of a launch over `sluice serve`'s API: a
 * launch's stdout or stderr from an offset, once (a file range) or followed
 * (a stream).
 *
 * Notes:
 * - Files are read in chunks at an offset; nothing reads a whole log.
 * - While a launch runs its output is the live file in its service staging
 *   directory; once it has finished the archive under
 *   <store>/artifacts/<id>/ is read instead.
 * - A followed stream that has nothing new returns ANSWER_STREAM_WAIT, and
 *   server.c suspends its connection until the ticker resumes it.
 * - The live file is job-owned: it is opened by the staging tree's rule
 *   (request/staging.h, base/jobfs.h), so a workload that puts a symlink,
 *   a FIFO or a hard link in place of its log gets nothing read and no
 *   worker blocked: the answer is empty, as for a log not written yet.
 */
#define _GNU_SOURCE 1 /* pread under -std=c11 */
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/store.h>

#include "base/jobfs.h"
#include "request/staging.h"
#include "server_logs.h"
#include "server_util.h"

typedef struct {
    sluice_server_t *s;
    char id[136];
    char staging[4200]; /* the attempt directory (job-owned) */
    char name[16];      /* stdout.log or stderr.log */
    char archived[4200];
    uint64_t offset;
    unsigned idle;
} logstream_t;

/* The log as it is now: the archived copy when there is one, else the live
 * file in staging by the job-owned rule.  An fd and its fstat, or -1 when
 * there is no readable log. */
static int open_log(const logstream_t *ls, struct stat *st, bool *archived)
{
    int fd = jobfs_open_copy(ls->archived, st);

    *archived = fd >= 0;
    if (fd >= 0)
        return fd;
    if (ls->staging[0] == '\0' ||
        staging_open_file(ls->staging, ls->name, &fd, st, NULL) != SLUICE_OK)
        return -1;
    return fd;
}

static ssize_t log_reader(void *cls, char *buf, size_t max)
{
    logstream_t *ls = cls;
    sluice_server_t *s = ls->s;
    json_t *l = NULL;
    ssize_t n;
    int terminal = 0, fd;
    bool have_archive;
    struct stat st;

    fd = open_log(ls, &st, &have_archive);
    n = fd >= 0 ? pread(fd, buf, max, (off_t)ls->offset) : -1;
    if (fd >= 0)
        close(fd);
    if (n > 0) {
        ls->offset += (uint64_t)n;
        ls->idle = 0;
        return n;
    }
    pthread_mutex_lock(&s->rmu);
    if (sluice_store_get_launch(s->rstore, ls->id, &l, NULL) == SLUICE_OK)
        terminal = json_is_true(json_object_get(l, "terminal"));
    else
        terminal = 1; /* pruned */
    pthread_mutex_unlock(&s->rmu);
    json_decref(l);
    /* Over once the archive has been read to its end, or when a finished
     * launch left no archive for a while (it produced no output). */
    if (terminal && (have_archive || ++ls->idle > 40))
        return ANSWER_STREAM_END;
    return ANSWER_STREAM_WAIT;
}

void logs_get(sluice_server_t *s, req_t *rq, answer_t *out)
{
    const char *id = rq->id, *which = rq->route_arg;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *l = NULL;
    const char *staging, *off = req_arg(rq, "offset");
    long long offset = off ? server_parse_count(off) : 0;
    logstream_t *ls = NULL;
    sluice_err rc;

    if (offset < 0) {
        answer_problem_ex(out, 400, "invalid-query", "Invalid query",
                          "offset must be a non-negative integer", "offset", NULL);
        return;
    }
    if ((ls = calloc(1, sizeof(*ls))) == NULL)
        return; /* no answer */
    ls->s = s;
    ls->offset = (uint64_t)offset;
    snprintf(ls->id, sizeof(ls->id), "%s", id);
    pthread_mutex_lock(&s->rmu);
    rc = sluice_store_get_launch(s->rstore, id, &l, &err);
    if (rc == SLUICE_OK) {
        staging = json_string_value(
            json_object_get(json_object_get(json_object_get(l, "render"), "staging"), "service"));
        snprintf(ls->archived, sizeof(ls->archived), "%s/artifacts/%s/%s.log",
                 sluice_store_dir(s->o.store), id, which);
        snprintf(ls->staging, sizeof(ls->staging), "%s", staging ? staging : "");
        snprintf(ls->name, sizeof(ls->name), "%s.log", which);
    }
    pthread_mutex_unlock(&s->rmu);
    json_decref(l);
    if (rc != SLUICE_OK) {
        free(ls);
        answer_error(out, &err);
        return;
    }
    if (req_arg_true(rq, "follow")) {
        answer_stream(out, 200, 64 * 1024, log_reader, ls, free);
    } else {
        struct stat st;
        bool archived;
        int fd = open_log(ls, &st, &archived);

        if (fd >= 0 && (uint64_t)st.st_size > ls->offset) {
            answer_file(out, 200, fd, ls->offset, (uint64_t)st.st_size - ls->offset);
        } else {
            if (fd >= 0)
                close(fd);
            answer_empty(out, 200);
        }
        free(ls);
    }
    answer_header(out, "Content-Type", "text/plain; charset=utf-8");
    answer_header(out, "Cache-Control", "no-store");
}
