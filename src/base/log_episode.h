/* SPDX-License-Identifier: Apache-2.0 */
/* log_episode.h - log a condition once per episode, not once per failure.
 *
 * An episode is a run of failures of one kind toward one thing (kind
 * "slurmrestd", key the URL).  Its first failure is logged at WARNING;
 * the rest are only counted.  The first success after it logs one WARNING
 * line that the condition is over, with the count and the duration.  So
 * an outage of any length gives exactly two lines, with the log's own
 * timestamps.  Episodes are process-wide (a table of LOG_EPISODE_MAX kinds
 * and keys), so two clients that talk to the same slurmrestd share one.
 * Thread-safe.
 */
#ifndef SLUICE_BASE_LOG_EPISODE_H
#define SLUICE_BASE_LOG_EPISODE_H

#include <sluice/common.h>

#define LOG_EPISODE_MAX 32

/* A failure of `kind` toward `key`: logs "<what>" at WARNING when it starts
 * an episode, else counts it.  `file` names the subsystem (pass __FILE__).
 * Returns 1 when this call logged. */
int log_episode_fail(const char *file, const char *kind, const char *key, const char *fmt, ...)
    SLUICE_PRINTF(4, 5);

/* A success of `kind` toward `key`: when an episode was open, logs
 * "<what>: after N failures in S s" at WARNING and closes it.  Returns 1
 * when this call logged. */
int log_episode_ok(const char *file, const char *kind, const char *key, const char *fmt, ...)
    SLUICE_PRINTF(4, 5);

/* Whether an episode of `kind` toward `key` is open now. */
int log_episode_open(const char *kind, const char *key);

/* Forget every episode (tests). */
void log_episode_reset(void);

#endif /* SLUICE_BASE_LOG_EPISODE_H */
