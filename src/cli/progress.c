/* SPDX-License-Identifier: Apache-2.0 */
/* progress.c - the status line and the heartbeat of `sluice launch --wait`
 * (progress.h).
 *
 * Notes:
 * - The facts come from the launch's view, the object of GET
 *   /v1/launches/{id}: its state, its Slurm job ids, and per component the
 *   node list and Slurm's state reason as last observed.
 * - The status line is written to stderr with "\r" and erase-to-end, so it
 *   never mixes with the transition lines on stdout; it is erased before
 *   each transition line and at the end.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/jdec.h"

#include "progress.h"

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_progress_init(cli_progress_t *p, int json, double heartbeat_s)
{
    memset(p, 0, sizeof(*p));
    p->json = json;
    p->tty = !json && isatty(STDERR_FILENO);
    p->heartbeat_s = heartbeat_s;
    p->start = p->last_beat = now_s();
}

/* Append to buf (bounded). */
static void add(char *buf, size_t size, const char *text)
{
    size_t n = strlen(buf);

    if (n + 1 < size)
        snprintf(buf + n, size - n, "%s", text);
}

void cli_progress_line(const json_t *view, double elapsed_s, char *buf, size_t size)
{
    jdec_t d;
    jdec_cur_t v, comps, c;
    const char *state;
    int64_t jid;
    char part[256], reason[160] = "", nodes[200] = "";
    size_t i;

    jdec_peek_root(&d, &v, view);
    state = jdec_peek_string(&v, "state");
    jdec_member(&comps, &v, "components");
    JDEC_FOREACH(&comps, i, c)
    {
        const char *r = jdec_peek_string(&c, "state_reason");
        const char *n = jdec_peek_string(&c, "nodelist");

        if (r != NULL && r[0] != '\0' && strcmp(r, "None") != 0 && reason[0] == '\0')
            snprintf(reason, sizeof(reason), "%s", r);
        if (n != NULL && n[0] != '\0' && strcmp(n, "(null)") != 0) {
            if (nodes[0] != '\0')
                add(nodes, sizeof(nodes), " + ");
            add(nodes, sizeof(nodes), n);
        }
    }
    snprintf(buf, size, "%-10s %7.1fs", state ? state : "?", elapsed_s);
    if (state != NULL && strcmp(state, "RUNNING") == 0 && nodes[0] != '\0') {
        snprintf(part, sizeof(part), "  on %s", nodes);
        add(buf, size, part);
    } else if (reason[0] != '\0') {
        snprintf(part, sizeof(part), "  %s", reason);
        add(buf, size, part);
    }
    /* A hetjob's id is its first component's. */
    jdec_item(&c, &comps, 0);
    jid = jdec_peek_int(&c, "job_id", 0);
    if (jid > 0) {
        snprintf(part, sizeof(part), " (job %lld)", (long long)jid);
        add(buf, size, part);
    }
}

void cli_progress_clear(cli_progress_t *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = 0;
    }
}

void cli_progress_tick(cli_progress_t *p, const json_t *view)
{
    char line[512];
    double t = now_s();

    if (p->json || view == NULL)
        return;
    if (p->tty) {
        cli_progress_line(view, t - p->start, line, sizeof(line));
        fprintf(stderr, "\r\033[K%s", line);
        fflush(stderr);
        p->drawn = 1;
        return;
    }
    if (p->heartbeat_s > 0 && t - p->last_beat >= p->heartbeat_s) {
        cli_progress_line(view, t - p->start, line, sizeof(line));
        printf("[%7.1fs] still      %s\n", t - p->start, line);
        fflush(stdout);
        p->last_beat = t;
    }
}
