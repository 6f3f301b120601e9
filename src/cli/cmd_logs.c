/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_logs.c - `sluice logs [-f] LAUNCH_ID`: a launch's stdout or stderr,
 * read from the store and the shared storage without a shell on the
 * cluster.
 *
 * Notes:
 * - Where the bytes come from is supervise/launch_logs.c's rule, the same
 *   as the API's: the store's archived copy once the launch is archived
 *   (the same on every replica), else the job's live file in its staging
 *   (<staging>/stdout.log, from the render stored with the launch), else a
 *   copy an older sluice archived to <state>/artifacts/<id>/.  When the
 *   store keeps only the last store.log_max_bytes bytes, stderr says how
 *   many were cut.
 * - -f follows: new bytes are printed as they arrive (polled every 500 ms,
 *   never the whole file in memory) until the launch is over and its
 *   archived copy has been printed to the end.
 * - Exit codes: 0 ok, 64 usage, 66 no store there (it never creates one),
 *   69 unknown launch, 74 the output cannot be read (a live file the
 *   job-owned rule refuses, or a finished launch with no copy to read: the
 *   message says why).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "supervise/launch_logs.h"

#include "args.h"
#include "cli.h"
#include "remote.h"
#include "store_opts.h"

/* Print what `l` holds from *offset on, to its end now. */
static int print_from(sluice_store_t *store,
                      const char *id,
                      const char *stream,
                      const launch_log_t *l,
                      uint64_t *offset)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char chunk[65536];
    size_t n;

    if (launch_log_start(l, *offset) != *offset) {
        fprintf(stderr,
                "sluice logs: the store keeps the last %" PRId64 " of %" PRId64
                " bytes (store.log_max_bytes); the first %" PRId64 " are not kept\n",
                l->size - l->omitted, l->size, l->omitted);
        *offset = launch_log_start(l, *offset);
    }
    for (;;) {
        if (launch_log_read(store, id, stream, l, *offset, chunk, sizeof(chunk), &n, &err) !=
            SLUICE_OK) {
            fprintf(stderr, "sluice logs: %s\n", err.text);
            return CLI_EX_IOERR;
        }
        if (n == 0)
            break;
        fwrite(chunk, 1, n, stdout);
        *offset += n;
    }
    fflush(stdout);
    return CLI_EX_OK;
}

static int write_out(const char *data, size_t len, void *arg)
{
    (void)arg;
    if (fwrite(data, 1, len, stdout) != len)
        return 1;
    fflush(stdout);
    return 0;
}

/* GET /v1/launches/{id}/logs/{stream}[?follow=true], streamed to stdout. */
static int logs_remote(const cli_remote_opts_t *o, const char *id, const char *name, int follow)
{
    cli_remote_t *r = NULL;
    char path[512], esc[400];
    int rc, ended = 0;

    if (cli_remote_escape(id, esc, sizeof(esc)) != 0) {
        fprintf(stderr, "sluice logs: launch id '%s' is too long\n", id);
        return CLI_EX_DATAERR;
    }
    snprintf(path, sizeof(path), "/v1/launches/%s/logs/%s", esc,
             strcmp(name, "stderr.log") == 0 ? "stderr" : "stdout");
    if ((rc = cli_remote_open(o, &r)) != CLI_EX_OK)
        return rc;
    rc = cli_remote_stream(r, path, follow ? "follow=true" : NULL, "text/plain", NULL, write_out,
                           NULL, &ended);
    if (rc == CLI_EX_OK && !ended)
        rc = CLI_EX_IOERR; /* stdout refused the bytes */
    cli_remote_close(r);
    return rc;
}

typedef struct {
    const char *name; /* stdout.log or stderr.log */
    int follow;
} logs_opts_t;

static int logs_option(int id, const char *v, void *arg)
{
    logs_opts_t *lo = arg;

    (void)v;
    if (id == 'f')
        lo->follow = 1;
    else if (id == CLI_O_STDERR)
        lo->name = "stderr.log";
    else
        return CLI_EX_SOFTWARE;
    return CLI_EX_OK;
}

int cmd_logs(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    logs_opts_t lo = {"stdout.log", 0};
    const char *id, *stream;
    int rc = CLI_EX_OK;
    unsigned idle = 0;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    launch_log_t l = LAUNCH_LOG_INIT;
    uint64_t offset = 0;
    struct timespec pause = {0, 500 * 1000 * 1000};

    if (!cli_parse(spec, argc, argv, &a, logs_option, &lo, &rc))
        return rc;
    id = a.operands[0];
    if (cli_remote_wanted(&a.remote))
        return logs_remote(&a.remote, id, lo.name, lo.follow);
    stream = strcmp(lo.name, "stderr.log") == 0 ? "stderr" : "stdout";
    if ((rc = cli_store_open_existing(spec, a.state_dir, &store)) != CLI_EX_OK)
        return rc;
    for (;;) {
        if (launch_log_find(store, id, stream, &l, &err) != SLUICE_OK) {
            rc = err.code == SLUICE_EIO ? CLI_EX_IOERR : cli_fail(&err);
            if (err.code == SLUICE_EIO)
                fprintf(stderr, "sluice logs: %s\n", err.text);
            break;
        }
        if (l.kind == LAUNCH_LOG_REFUSED || l.kind == LAUNCH_LOG_GONE) {
            fprintf(stderr, "sluice logs: %s\n", l.why);
            rc = CLI_EX_IOERR;
            break;
        }
        if (l.kind != LAUNCH_LOG_EMPTY) {
            uint64_t before = offset;

            if ((rc = print_from(store, id, stream, &l, &offset)) != CLI_EX_OK)
                break;
            /* A copy of the archive is the whole log. */
            if (l.kind == LAUNCH_LOG_STORE || l.kind == LAUNCH_LOG_ARTIFACTS)
                break;
            idle = offset != before ? 0 : idle + 1;
        }
        if (!lo.follow)
            break;
        /* Over when a finished launch's archive does not come for a while
         * (a supervisor that stopped before it archived). */
        if (l.terminal && idle > 40)
            break;
        launch_log_clear(&l); /* no file of the job's staging kept open */
        nanosleep(&pause, NULL);
    }
    launch_log_clear(&l);
    sluice_store_close(store);
    return rc;
}
