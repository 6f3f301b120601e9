/* SPDX-License-Identifier: Apache-2.0 */
/* launch_logs.c - where a launch's stdout or stderr is read from now (see
 * launch_logs.h): the store's archived copy, the live file in staging, an
 * old artifacts copy on this host, or the reason none can be read.
 *
 * Notes:
 * - The order is: the store's row (the archive writes it before it removes
 *   the staging), the live file, the store's row again for a launch that
 *   has ended (archived between the two reads), the old artifacts copy.
 * - A launch that has ended and has none of them is GONE, with the reason:
 *   the archive found the log missing or refused, retention pruned it, a
 *   sluice before the store kept logs archived it on another replica (the
 *   `archived` event names that replica's directory), or it was never
 *   archived and its staging is gone.
 */
#define _GNU_SOURCE 1 /* pread under -std=c11 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "base/jobfs.h"
#include "launch_logs.h"
#include "request/staging.h"

void launch_log_clear(launch_log_t *l)
{
    if (l == NULL)
        return;
    if (l->fd >= 0)
        close(l->fd);
    *l = (launch_log_t)LAUNCH_LOG_INIT;
}

const char *launch_log_source(const launch_log_t *l)
{
    switch (l->kind) {
    case LAUNCH_LOG_LIVE:
    case LAUNCH_LOG_EMPTY:
        return "live";
    case LAUNCH_LOG_STORE:
        return "store";
    case LAUNCH_LOG_ARTIFACTS:
        return "artifacts";
    default:
        return "none";
    }
}

uint64_t launch_log_start(const launch_log_t *l, uint64_t offset)
{
    if (l->kind == LAUNCH_LOG_STORE && l->omitted > 0 && offset < (uint64_t)l->omitted)
        return (uint64_t)l->omitted;
    return offset;
}

/* The store's row of the newest attempt into `out`: 1 when there is one
 * (STORE, or GONE saying why its bytes are not there), 0 when there is
 * none, -1 on an error (err set). */
static int from_row(sluice_store_t *store,
                    const char *id,
                    const char *stream,
                    launch_log_t *out,
                    sluice_error_t *err)
{
    sluice_store_log_info_t info;
    sluice_error_t gerr = SLUICE_ERROR_INIT;
    sluice_err rc = sluice_store_get_log(store, id, stream, -1, &info, &gerr);

    if (rc == SLUICE_ENOTFOUND)
        return 0;
    if (rc != SLUICE_OK) {
        if (err != NULL)
            *err = gerr;
        return -1;
    }
    out->attempt = info.attempt;
    out->size = info.size;
    out->omitted = info.omitted;
    switch (info.status) {
    case SLUICE_STORE_LOG_STORED:
        out->kind = LAUNCH_LOG_STORE;
        break;
    case SLUICE_STORE_LOG_MISSING:
        out->kind = LAUNCH_LOG_GONE;
        snprintf(out->why, sizeof(out->why),
                 "launch %s ended without a %s.log: its job (attempt %" PRIu32 ") never wrote one",
                 id, stream, info.attempt);
        break;
    case SLUICE_STORE_LOG_REFUSED:
        out->kind = LAUNCH_LOG_GONE;
        snprintf(out->why, sizeof(out->why),
                 "launch %s: %s.log of attempt %" PRIu32
                 " was not archived: the file broke the job-owned rule (%s)",
                 id, stream, info.attempt, info.note[0] != '\0' ? info.note : "refused");
        break;
    default:
        out->kind = LAUNCH_LOG_GONE;
        snprintf(out->why, sizeof(out->why),
                 "launch %s: the archived %s of attempt %" PRIu32 " (%" PRId64
                 " bytes) was removed by retention (retention.logs_max_age_s)",
                 id, stream, info.attempt, info.size);
        break;
    }
    return 1;
}

/* Why a launch that has ended has no log to read: the `archived` event
 * names the directory an older sluice archived it to, on the replica that
 * did. */
static void gone(sluice_store_t *store,
                 const char *id,
                 const char *stream,
                 const char *staging,
                 launch_log_t *out)
{
    json_t *evs = NULL, *e;
    const char *dir = NULL;
    size_t i;

    out->kind = LAUNCH_LOG_GONE;
    if (sluice_store_read_events(store, id, 1, 0, &evs, NULL) == SLUICE_OK)
        json_array_foreach(evs, i, e)
        {
            const char *name = json_string_value(json_object_get(e, "name"));
            if (name != NULL && strcmp(name, "archived") == 0)
                dir = json_string_value(json_object_get(json_object_get(e, "context"), "dir"));
        }
    if (dir != NULL)
        snprintf(out->why, sizeof(out->why),
                 "launch %s was archived to %s by a sluice that kept logs only in the state "
                 "directory of the replica that archived them (before store schema 6); its %s is "
                 "not on this host",
                 id, dir, stream);
    else if (staging != NULL)
        snprintf(out->why, sizeof(out->why),
                 "launch %s ended and its %s was never archived, and its staging (%s) is gone", id,
                 stream, staging);
    else
        snprintf(out->why, sizeof(out->why), "launch %s ended without staging: it has no %s", id,
                 stream);
    json_decref(evs);
}

sluice_err launch_log_find(sluice_store_t *store,
                           const char *id,
                           const char *stream,
                           launch_log_t *out,
                           sluice_error_t *err)
{
    sluice_error_t oerr = SLUICE_ERROR_INIT;
    json_t *launch = NULL;
    const char *staging;
    char name[16], path[4400];
    struct stat st;
    int got;
    sluice_err rc;

    launch_log_clear(out);
    if ((rc = sluice_store_get_launch(store, id, &launch, err)) != SLUICE_OK)
        return rc;
    out->terminal = json_is_true(json_object_get(launch, "terminal"));
    staging = json_string_value(
        json_object_get(json_object_get(json_object_get(launch, "render"), "staging"), "service"));
    snprintf(name, sizeof(name), "%s.log", stream);
    if ((got = from_row(store, id, stream, out, err)) != 0)
        goto out;
    if (staging != NULL) {
        rc = staging_open_file(staging, name, &out->fd, &st, &oerr);
        if (rc == SLUICE_OK) {
            out->kind = LAUNCH_LOG_LIVE;
            out->size = (int64_t)st.st_size;
            goto out;
        }
        if (rc == SLUICE_EPERM) {
            out->kind = LAUNCH_LOG_REFUSED;
            snprintf(out->why, sizeof(out->why), "launch %s: %s is refused, not read: %s", id, name,
                     oerr.text);
            rc = SLUICE_OK;
            goto out;
        }
        if (rc != SLUICE_ENOTFOUND) {
            if (err != NULL)
                *err = oerr;
            goto out;
        }
        rc = SLUICE_OK;
    }
    if (!out->terminal)
        goto out; /* LAUNCH_LOG_EMPTY: nothing written yet */
    if ((got = from_row(store, id, stream, out, err)) != 0)
        goto out;
    snprintf(path, sizeof(path), "%s/artifacts/%s/%s", sluice_store_dir(store), id, name);
    if ((out->fd = jobfs_open_copy(path, &st)) >= 0) {
        out->kind = LAUNCH_LOG_ARTIFACTS;
        out->size = (int64_t)st.st_size;
        goto out;
    }
    gone(store, id, stream, staging, out);
out:
    if (got < 0)
        rc = err != NULL ? err->code : SLUICE_ESTORE;
    json_decref(launch);
    return rc;
}

sluice_err launch_log_read(sluice_store_t *store,
                           const char *id,
                           const char *stream,
                           const launch_log_t *l,
                           uint64_t offset,
                           char *buf,
                           size_t max,
                           size_t *n_out,
                           sluice_error_t *err)
{
    ssize_t n;

    *n_out = 0;
    switch (l->kind) {
    case LAUNCH_LOG_LIVE:
    case LAUNCH_LOG_ARTIFACTS:
        if ((n = pread(l->fd, buf, max, (off_t)offset)) < 0)
            return sluice_errorf(err, SLUICE_EIO, "launch %s: read %s: %s", id, stream,
                                 strerror(errno));
        *n_out = (size_t)n;
        return SLUICE_OK;
    case LAUNCH_LOG_STORE:
        return sluice_store_read_log(store, id, stream, l->attempt, (int64_t)offset, buf, max,
                                     n_out, err);
    default:
        return SLUICE_OK;
    }
}
