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
 */
#define _GNU_SOURCE 1 /* pread under -std=c11 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/store.h>

#include "server_logs.h"
#include "server_util.h"

typedef struct {
    sluice_server_t *s;
    char id[136];
    char live[4200];
    char archived[4200];
    uint64_t offset;
    unsigned idle;
} logstream_t;

/* Read up to `max` bytes of `path` at `off`: bytes read, 0 at the end,
 * -1 when the file does not exist or cannot be read. */
static ssize_t read_at(const char *path, uint64_t off, char *buf, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -1;
    n = pread(fd, buf, max, (off_t)off);
    close(fd);
    return n;
}

static ssize_t log_reader(void *cls, char *buf, size_t max)
{
    logstream_t *ls = cls;
    sluice_server_t *s = ls->s;
    json_t *l = NULL;
    ssize_t n;
    int terminal = 0, have_archive;

    have_archive = access(ls->archived, F_OK) == 0;
    n = read_at(have_archive ? ls->archived : ls->live, ls->offset, buf, max);
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
        snprintf(ls->live, sizeof(ls->live), "%s/%s.log", staging ? staging : "/nonexistent",
                 which);
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
        const char *path = access(ls->archived, F_OK) == 0 ? ls->archived : ls->live;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;

        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size > ls->offset) {
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
