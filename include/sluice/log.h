/* SPDX-License-Identifier: Apache-2.0 */
/* log.h - where the library's log lines go.
 *
 * The library never writes to stdout or stderr on its own.  A program
 * installs a sink: a callback that gets each message as a record (time,
 * level, subsystem, launch id, text) with sluice_log_set_records(), the
 * older text-only callback with sluice_log_set(), or the stock stderr sink
 * with sluice_log_to_stderr() in one of three formats (text, JSON lines,
 * journald).  Without a sink, messages are dropped.  Levels are syslog(3)'s.
 * Every message passes through the redactor first, so a sink never sees a
 * bearer token, a JWT or an X-SLURM-USER-TOKEN value.
 *
 * The subsystem is the name of the library file that logged (launcher_poll,
 * http, server, ...).  A message about one launch starts "launch <id>: ";
 * the record then carries that id as launch_id, and the JSON format gives
 * it a field of its own.
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

/* Output formats of the stock sink. */
typedef enum {
    SLUICE_LOG_FORMAT_TEXT = 0, /* 2026-12-02T02:21:05.123Z warning launcher_poll: ... */
    SLUICE_LOG_FORMAT_JSON = 1, /* one JSON object a line: time, level, subsystem, launch_id, msg */
    SLUICE_LOG_FORMAT_JOURNALD = 2, /* "<4>launcher_poll: ...": sd-daemon(3) level prefixes */
} sluice_log_format_t;

/* One message.  Every pointer is borrowed for the duration of the sink's
 * call. */
typedef struct sluice_log_record {
    long long time_ms;     /* wall clock, epoch milliseconds */
    int level;             /* SLUICE_LOG_* */
    const char *subsystem; /* the logging file's name ("launcher_poll"); "" when unknown */
    const char *launch_id; /* the launch the message is about, or NULL */
    const char *msg;       /* the redacted text, "launch <id>: " prefix included */
} sluice_log_record_t;

/* `msg` is borrowed for the duration of the call. */
typedef void (*sluice_log_fn)(int level, const char *msg, void *arg);
typedef void (*sluice_log_record_fn)(const sluice_log_record_t *rec, void *arg);

/* Install `fn` (NULL to drop messages) for messages at `max_level` or more
 * severe.  Process-wide; call it before starting threads that log. */
SLUICE_API void sluice_log_set(sluice_log_fn fn, int max_level, void *arg);

/* Install a record sink instead (replaces any sink set before). */
SLUICE_API void sluice_log_set_records(sluice_log_record_fn fn, int max_level, void *arg);

/* Install the stock sink: every record at `max_level` or more severe, one
 * line each, written whole to stderr with one write(2) (so lines of two
 * threads never interleave). */
SLUICE_API void sluice_log_to_stderr(int max_level, sluice_log_format_t format);

/* Whether a message at `level` would reach the sink now. */
SLUICE_API int sluice_log_enabled(int level);

/* Log a printf-style message (redacted first).  Thread-safe as long as the
 * installed callback is. */
SLUICE_API void sluice_log(int level, const char *fmt, ...) SLUICE_PRINTF(2, 3);

/* sluice_log() with the file that logs (its name becomes the subsystem).
 * Inside sluice's own sources sluice_log() is this, with __FILE__. */
SLUICE_API void sluice_log_from(const char *file, int level, const char *fmt, ...)
    SLUICE_PRINTF(3, 4);
#ifdef SLUICE_LOG_FROM_FILE
#define sluice_log(...) sluice_log_from(__FILE__, __VA_ARGS__)
#endif

/* Format `rec` as one line of `format`, newline included, into `buf`
 * (always NUL-terminated; a line that does not fit is cut, and a JSON line
 * stays valid JSON).  Returns the line's length. */
SLUICE_API size_t sluice_log_format_record(const sluice_log_record_t *rec,
                                           sluice_log_format_t format,
                                           char *buf,
                                           size_t size);

/* "error", "warning", "notice", "info", "debug" (or "err", "warn", or a
 * number 3..7) -> the level; -1 for anything else. */
SLUICE_API int sluice_log_level_parse(const char *text);

/* "text", "json", "journald" -> the format; -1 for anything else. */
SLUICE_API int sluice_log_format_parse(const char *text);

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
