/* SPDX-License-Identifier: Apache-2.0 */
/* staging_exits.c - the per-pool exit files of a hetjob's attempt
 * (exit/<pool>, exit/.first, exit/.signalled), as the launcher reads them
 * after the job's terminal state (design.md, "Hetjob outcome").
 *
 * Notes:
 * - The exit directory is job-owned: a workload may write anything into it,
 *   or put a symlink, a FIFO or a hard link in place of a file.  Files are
 *   opened by the jobfs rule, and a file that holds no status 0-255 (the
 *   script writes one decimal status and a newline) is the pool's failure
 *   with its status unknown: `unknown`, with the file's text, printable and
 *   cut, in `raw`.  It never becomes an out-of-range exit code.
 */
#define _GNU_SOURCE 1 /* fstatat under -std=c11 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sluice/log.h>

#include "base/jobfs.h"
#include "request/staging.h"
#include "staging_exits.h"

/* exit/.first: "<pool> <code>", written by the script for the first pool
 * that failed on its own.  Copies the pool name to `out`; false when the
 * file is absent, not a job-owned file, or not of that form. */
static bool read_first_pool(int exit_fd, char *out, size_t cap)
{
    char line[128];
    size_t len;

    if (jobfs_read_small(exit_fd, ".first", line, sizeof(line), NULL, NULL, NULL) != SLUICE_OK)
        return false;
    len = strcspn(line, " \n");
    if (len == 0 || line[len] != ' ' || len >= cap)
        return false;
    memcpy(out, line, len);
    out[len] = '\0';
    return true;
}

/* `text` as it may appear in a reason: printable ASCII only (anything else
 * becomes '?'), a trailing newline dropped, cut with "..." to fit `cap`. */
static void printable(const char *text, bool more, char *out, size_t cap)
{
    size_t len = strlen(text), room = cap - 1, n, i;
    bool cut;

    if (len > 0 && text[len - 1] == '\n' && !more)
        len--;
    cut = more || len > room;
    n = cut ? room - 3 : len; /* cap >= 4: SLUICE_FSM_RAW_MAX */
    if (n > len)
        n = len;
    for (i = 0; i < n; i++)
        out[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
    if (cut) {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = '\0';
}

/* One exit file's text as the script writes it: a status 0-255 in decimal
 * and a newline.  Anything else (a workload may write into its own staging)
 * is no status. */
static bool parse_status(const char *text, int *out)
{
    size_t n = strspn(text, "0123456789");
    long v;

    if (n == 0 || n > 3 || !(text[n] == '\0' || (text[n] == '\n' && text[n + 1] == '\0')))
        return false;
    v = strtol(text, NULL, 10);
    if (v > 255)
        return false;
    *out = (int)v;
    return true;
}

/* One pool's exit file into `pe`: true when there is one (a status, or no
 * status: `unknown`), false when it does not exist. */
static bool
read_one_exit(int exit_fd, const char *launch_id, const char *name, sluice_pool_exit_t *pe)
{
    char text[64];
    bool more = false;
    int code = 0;
    sluice_error_t rerr = SLUICE_ERROR_INIT;
    sluice_err rc = jobfs_read_small(exit_fd, name, text, sizeof(text), NULL, &more, &rerr);

    if (rc == SLUICE_ENOTFOUND)
        return false;
    memset(pe, 0, sizeof(*pe));
    snprintf(pe->name, sizeof(pe->name), "%s", name);
    if (rc != SLUICE_OK) {
        /* A symlink, FIFO, hard link or foreign file in place of the exit
         * file: the pool's status cannot be known. */
        sluice_log(SLUICE_LOG_WARNING, "launch %s: exit file of pool %s: %s", launch_id, name,
                   rerr.text);
        pe->unknown = true;
        snprintf(pe->raw, sizeof(pe->raw), "(not a file)");
    } else if (more || !parse_status(text, &code)) {
        pe->unknown = true;
        printable(text, more, pe->raw, sizeof(pe->raw));
    } else if (code > 128 && code < 128 + 65) {
        /* bash reports a step killed by signal S as 128+S. */
        pe->signal = code - 128;
    } else {
        pe->exit_code = code;
    }
    return true;
}

sluice_err staging_read_exits(const char *launch_id,
                              const json_t *render,
                              sluice_pool_exit_t *out,
                              size_t max,
                              size_t *n_out,
                              sluice_error_t *err)
{
    const json_t *pools, *p;
    const char *dir;
    char first[SLUICE_FSM_NAME_MAX];
    bool signalled = false;
    int afd = -1, efd = -1;
    struct stat st;
    size_t i;
    sluice_err rc = SLUICE_OK;

    *n_out = 0;
    dir = json_string_value(json_object_get(json_object_get(render, "staging"), "service"));
    if (dir == NULL)
        goto out;
    if ((rc = staging_open_attempt(dir, NULL, &afd, err)) != SLUICE_OK) {
        if (rc == SLUICE_ENOTFOUND)
            rc = SLUICE_OK; /* no staging: no exit file */
        goto out;
    }
    if ((rc = jobfs_open_dir(afd, "exit", &efd, err)) != SLUICE_OK) {
        if (rc == SLUICE_ENOTFOUND)
            rc = SLUICE_OK;
        else
            sluice_error_prefix(err, "staging %s", dir);
        goto out;
    }
    if (!read_first_pool(efd, first, sizeof(first)))
        first[0] = '\0';
    signalled = fstatat(efd, ".signalled", &st, AT_SYMLINK_NOFOLLOW) == 0;
    pools = json_object_get(render, "pools");
    json_array_foreach(pools, i, p)
    {
        const char *name = json_is_string(p) ? json_string_value(p)
                                             : json_string_value(json_object_get(p, "name"));

        if (name == NULL || *n_out >= max || !read_one_exit(efd, launch_id, name, &out[*n_out]))
            continue;
        out[*n_out].first = first[0] != '\0' && strcmp(first, name) == 0;
        out[*n_out].signalled = signalled;
        (*n_out)++;
    }
out:
    if (efd >= 0)
        close(efd);
    if (afd >= 0)
        close(afd);
    return rc;
}
