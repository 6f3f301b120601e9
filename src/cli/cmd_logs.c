/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_logs.c - `sluice logs [-f] LAUNCH_ID`: a launch's stdout or stderr,
 * read from the shared storage without a shell on the cluster.
 *
 * Notes:
 * - While the launch lives, the job writes <staging>/stdout.log (the
 *   staging path comes from the render stored with the launch); once it
 *   ended, the supervisor archived the file to <state>/artifacts/<id>/.
 * - -f follows: new bytes are printed as they arrive (polled every 500 ms,
 *   never the whole file in memory) until the launch is over and its
 *   archived copy has been printed to the same length.
 * - Exit codes: 0 ok, 64 usage, 66 no store there (it never creates one),
 *   69 unknown launch, 74 the output cannot be read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "base/jobfs.h"
#include "request/staging.h"

#include "args.h"
#include "cli.h"
#include "remote.h"
#include "store_opts.h"

/* Copy bytes of the open file `fd` from *offset to stdout, and close it. */
static void copy_from(int fd, off_t *offset)
{
    char chunk[65536];
    ssize_t n;

    if (lseek(fd, *offset, SEEK_SET) >= 0) {
        while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
            fwrite(chunk, 1, (size_t)n, stdout);
            *offset += n;
        }
    }
    fflush(stdout);
    close(fd);
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
    const char *id, *name;
    int follow, rc = CLI_EX_OK;
    sluice_store_t *store = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *launch = NULL;
    char archived[4200];
    const char *staging;
    off_t offset = 0;
    struct timespec pause = {0, 500 * 1000 * 1000};

    if (!cli_parse(spec, argc, argv, &a, logs_option, &lo, &rc))
        return rc;
    id = a.operands[0];
    name = lo.name;
    follow = lo.follow;
    if (cli_remote_wanted(&a.remote))
        return logs_remote(&a.remote, id, name, follow);
    if ((rc = cli_store_open_existing(spec, a.state_dir, &store)) != CLI_EX_OK)
        return rc;
    for (;;) {
        int terminal, fd = -1, live_missing = 0;

        json_decref(launch);
        launch = NULL;
        if (sluice_store_get_launch(store, id, &launch, &err) != SLUICE_OK) {
            rc = cli_fail(&err);
            goto out;
        }
        terminal = json_is_true(json_object_get(launch, "terminal"));
        staging = json_string_value(json_object_get(
            json_object_get(json_object_get(launch, "render"), "staging"), "service"));
        snprintf(archived, sizeof(archived), "%s/artifacts/%s/%s", sluice_store_dir(store), id,
                 name);
        /* The archive holds the whole file once the launch is over; the
         * live file grows until then.  The live file is job-owned: opened
         * by the staging tree's rule, never followed or waited on. */
        if ((fd = jobfs_open_copy(archived, NULL)) >= 0) {
            copy_from(fd, &offset);
            if (terminal)
                break;
        } else if (staging != NULL) {
            sluice_err orc = staging_open_file(staging, name, &fd, NULL, &err);
            if (orc == SLUICE_OK) {
                copy_from(fd, &offset);
            } else if (orc != SLUICE_ENOTFOUND) {
                fprintf(stderr, "sluice logs: %s\n", err.text);
                rc = CLI_EX_IOERR;
                goto out;
            } else {
                live_missing = 1;
            }
        }
        if (!follow)
            break;
        if (terminal && fd < 0 && (staging == NULL || live_missing))
            break; /* ended without output */
        nanosleep(&pause, NULL);
    }
out:
    json_decref(launch);
    sluice_store_close(store);
    return rc;
}
