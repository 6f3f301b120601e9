/* SPDX-License-Identifier: Apache-2.0 */
/* launch_logs.h - where a launch's stdout or stderr is read from now, for
 * every reader (GET /v1/launches/{id}/logs/{stream}, `sluice logs`):
 * the store's archived copy once there is one, else the job's live file
 * in staging, else a copy this host archived before the store kept logs;
 * and why not, when none of them can be read (internal, not installed).
 *
 * Notes:
 * - The store's copy comes first: it is the same on every replica, where
 *   the live file is gone once archived and an old artifacts copy is on
 *   one host only.
 * - The live file is job-owned: opened by the staging tree's rule
 *   (request/staging.h, base/jobfs.h), never followed or waited on; a
 *   file that breaks the rule is REFUSED, never read and never shown as
 *   an empty log.
 * - Offsets are offsets in the job's file whatever the source; the
 *   store's copy holds bytes [omitted, size).
 */
#ifndef SLUICE_LAUNCH_LOGS_H
#define SLUICE_LAUNCH_LOGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/store.h>

typedef enum {
    LAUNCH_LOG_EMPTY,     /* not ended, and its job has not written the file yet */
    LAUNCH_LOG_LIVE,      /* the job's file in staging (fd) */
    LAUNCH_LOG_STORE,     /* the store's archived copy (attempt, size, omitted) */
    LAUNCH_LOG_ARTIFACTS, /* a copy archived on this host before the store kept logs (fd) */
    LAUNCH_LOG_REFUSED,   /* the live file breaks the job-owned rule (why) */
    LAUNCH_LOG_GONE,      /* ended, and no copy of the log can be read (why) */
} launch_log_kind_t;

typedef struct {
    launch_log_kind_t kind;
    bool terminal;    /* the launch has ended */
    int fd;           /* LIVE, ARTIFACTS: the open file (launch_log_clear closes it); else -1 */
    uint32_t attempt; /* STORE: the attempt whose log it is (the newest) */
    int64_t size;     /* LIVE, ARTIFACTS: the file's size now; STORE: when archived */
    int64_t omitted;  /* STORE: bytes at the log's start the store does not hold */
    char why[600];    /* REFUSED, GONE: the reason, naming the launch and the log */
} launch_log_t;

#define LAUNCH_LOG_INIT                                                                            \
    {                                                                                              \
        LAUNCH_LOG_EMPTY, false, -1, 0, 0, 0, ""                                                   \
    }

/* Where log `stream` ("stdout" or "stderr") of `launch_id` is read from
 * now, into *out (start from LAUNCH_LOG_INIT; cleared first).  An archived
 * copy made before the store kept logs is looked for under
 * <sluice_store_dir(store)>/artifacts/.  SLUICE_ENOTFOUND for an unknown
 * launch; SLUICE_ESTORE when the store cannot be read; SLUICE_EIO when the
 * live file cannot be opened for another reason than the rule. */
sluice_err launch_log_find(sluice_store_t *store,
                           const char *launch_id,
                           const char *stream,
                           launch_log_t *out,
                           sluice_error_t *err);

/* Up to `max` bytes at file offset `offset` from the source `l` names
 * (LIVE, ARTIFACTS, STORE; a STORE read starts at `omitted` at the
 * earliest: pass launch_log_start()) into buf; *n_out 0 at the end. */
sluice_err launch_log_read(sluice_store_t *store,
                           const char *launch_id,
                           const char *stream,
                           const launch_log_t *l,
                           uint64_t offset,
                           char *buf,
                           size_t max,
                           size_t *n_out,
                           sluice_error_t *err);

/* The first offset at or after `offset` that `l` can give: `omitted` for a
 * read of the store's copy below it, else `offset`. */
uint64_t launch_log_start(const launch_log_t *l, uint64_t offset);

/* "live", "store", "artifacts" or "none" (static). */
const char *launch_log_source(const launch_log_t *l);

/* Close what `l` holds and make it LAUNCH_LOG_INIT again.  NULL-safe. */
void launch_log_clear(launch_log_t *l);

#endif /* SLUICE_LAUNCH_LOGS_H */
