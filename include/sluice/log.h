/* SPDX-License-Identifier: Apache-2.0 */
/* log.h - where the library's log lines go.
 *
 * The library never writes to stdout or stderr itself.  A program installs a
 * callback with sluice_log_set(); without one, messages are dropped.  Levels
 * are syslog(3)'s.  Every message passes through the redactor first, so a
 * callback never sees a bearer token, a JWT or an X-SLURM-USER-TOKEN value.
 */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

#include <stddef.h>

#include <sluice/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SLUICE_LOG_ERR = 3,
    SLUICE_LOG_WARNING = 4,
    SLUICE_LOG_NOTICE = 5,
    SLUICE_LOG_INFO = 6,
    SLUICE_LOG_DEBUG = 7,
};

/* `msg` is borrowed for the duration of the call. */
typedef void (*sluice_log_fn)(int level, const char *msg, void *arg);

/* Install `fn` (NULL to drop messages) for messages at `max_level` or more
 * severe.  Process-wide; call it before starting threads that log. */
SLUICE_API void sluice_log_set(sluice_log_fn fn, int max_level, void *arg);

/* Log a printf-style message (redacted first).  Thread-safe as long as the
 * installed callback is. */
SLUICE_API void sluice_log(int level, const char *fmt, ...) SLUICE_PRINTF(2, 3);

/* Name of a level ("error", "warning", "notice", "info", "debug"). */
SLUICE_API const char *sluice_log_level_name(int level);

/* Rewrite `text` in place so that secrets cannot be read from it: the value
 * after "Bearer ", "X-SLURM-USER-TOKEN:", "SLURM_JWT=", "token=" and any
 * string shaped like a JWT (three base64url parts starting "eyJ") becomes
 * "[REDACTED]".  The result never grows beyond `size` bytes (NUL
 * included).  Returns the number of redactions made. */
SLUICE_API size_t sluice_redact(char *text, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_LOG_H */
