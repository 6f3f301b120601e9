/* SPDX-License-Identifier: Apache-2.0 */
/* log.c - the library's log sink and the secret redactor.  The line
 * formats and the stock stderr sink are in log_format.c.
 *
 * Notes:
 * - The sink is process-wide and set once at start (sluice_log_set(),
 *   sluice_log_set_records() or sluice_log_to_stderr()).
 * - Each record names its subsystem (the logging file's name, from
 *   __FILE__ through the sluice_log() macro of log.h) and, for a message
 *   that starts "launch <id>: ", the launch.
 * - Every message is redacted before any callback sees it: a token that
 *   slipped into a message (a curl trace, a server's echo) is still hidden.
 *   The redactor knows the shapes a credential takes here: bearer values,
 *   X-SLURM-USER-TOKEN headers, SLURM_JWT= assignments, token= parameters and
 *   bare JWTs (base64url "eyJ..." with two dots).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sluice/log.h>

/* log.h turns sluice_log() into sluice_log_from(__FILE__, ...) for sluice's
 * own sources; here the function itself is defined. */
#undef sluice_log

static sluice_log_fn log_fn;
static sluice_log_record_fn log_record_fn;
static int log_max_level = SLUICE_LOG_INFO;
static void *log_arg;

void sluice_log_set(sluice_log_fn fn, int max_level, void *arg)
{
    log_fn = fn;
    log_record_fn = NULL;
    log_max_level = max_level;
    log_arg = arg;
}

void sluice_log_set_records(sluice_log_record_fn fn, int max_level, void *arg)
{
    log_fn = NULL;
    log_record_fn = fn;
    log_max_level = max_level;
    log_arg = arg;
}

int sluice_log_enabled(int level)
{
    return (log_fn != NULL || log_record_fn != NULL) && level <= log_max_level;
}

const char *sluice_log_level_name(int level)
{
    switch (level) {
    case SLUICE_LOG_ERR:
        return "error";
    case SLUICE_LOG_WARNING:
        return "warning";
    case SLUICE_LOG_NOTICE:
        return "notice";
    case SLUICE_LOG_INFO:
        return "info";
    case SLUICE_LOG_DEBUG:
        return "debug";
    default:
        return level < SLUICE_LOG_ERR ? "error" : "debug";
    }
}

/* The file name without folders and extension: "src/supervise/launcher_poll.c"
 * -> "launcher_poll", into `out`. */
static void subsystem_of(const char *file, char *out, size_t size)
{
    const char *base = file ? strrchr(file, '/') : NULL;
    size_t n;

    base = base ? base + 1 : (file ? file : "");
    n = strcspn(base, ".");
    if (n >= size)
        n = size - 1;
    memcpy(out, base, n);
    out[n] = '\0';
}

/* The id of "launch <id>: ..." (the launch_id rule's characters), into `out`;
 * false when the message does not start so. */
static int launch_of(const char *msg, char *out, size_t size)
{
    size_t n = 0;

    if (strncmp(msg, "launch ", 7) != 0)
        return 0;
    msg += 7;
    while (isalnum((unsigned char)msg[n]) || msg[n] == '.' || msg[n] == '_' || msg[n] == '-')
        n++;
    if (n == 0 || n >= size || msg[n] != ':')
        return 0;
    memcpy(out, msg, n);
    out[n] = '\0';
    return 1;
}

static void vlog(const char *file, int level, const char *fmt, va_list ap)
{
    char msg[2048];

    if (!sluice_log_enabled(level))
        return;
    vsnprintf(msg, sizeof(msg), fmt, ap);
    sluice_redact(msg, sizeof(msg));
    if (log_record_fn != NULL) {
        char sub[64], id[129];
        struct timespec ts;
        sluice_log_record_t rec;

        clock_gettime(CLOCK_REALTIME, &ts);
        subsystem_of(file, sub, sizeof(sub));
        rec.time_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        rec.level = level;
        rec.subsystem = sub;
        rec.launch_id = launch_of(msg, id, sizeof(id)) ? id : NULL;
        rec.msg = msg;
        log_record_fn(&rec, log_arg);
    } else if (log_fn != NULL) {
        log_fn(level, msg, log_arg);
    }
}

void sluice_log(int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(NULL, level, fmt, ap);
    va_end(ap);
}

void sluice_log_from(const char *file, int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vlog(file, level, fmt, ap);
    va_end(ap);
}

static const char redacted[] = "[REDACTED]";

static int is_b64url(int c)
{
    return isalnum(c) || c == '-' || c == '_' || c == '=';
}

/* Characters that end a credential value in a header, query or assignment. */
static int ends_value(int c)
{
    return c == '\0' || isspace(c) || c == '&' || c == ',' || c == ';' || c == '"' || c == '\'';
}

/* Replace text[start, end) by "[REDACTED]" keeping the string NUL-terminated
 * within `size` bytes.  Returns the index just after the replacement. */
static size_t replace_span(char *text, size_t size, size_t start, size_t end)
{
    size_t len = strlen(text);
    size_t rlen = sizeof(redacted) - 1;
    size_t tail = len - end;

    if (start + rlen >= size) {
        /* No room even for the marker: cut the string at the value. */
        text[start] = '\0';
        return start;
    }
    if (start + rlen + tail >= size)
        tail = size - 1 - start - rlen;
    memmove(text + start + rlen, text + end, tail);
    memcpy(text + start, redacted, rlen);
    text[start + rlen + tail] = '\0';
    return start + rlen;
}

/* If a JWT starts at text[i] ("eyJ" after a non-base64url character, then a
 * run of base64url characters and dots holding at least two dots), return
 * the end of that run, else 0.  The whole run goes, so that what follows a
 * redaction can never start a new token on a second pass. */
static size_t jwt_end(const char *text, size_t i)
{
    size_t j = i;
    int dots = 0;

    if (strncmp(text + i, "eyJ", 3) != 0)
        return 0;
    if (i > 0 && is_b64url((unsigned char)text[i - 1]))
        return 0;
    while (text[j] != '\0') {
        if (text[j] == '.') {
            dots++;
        } else if (!is_b64url((unsigned char)text[j])) {
            break;
        }
        j++;
    }
    return dots >= 2 ? j : 0;
}

size_t sluice_redact(char *text, size_t size)
{
    static const char *const keys[] = {
        "bearer ", "x-slurm-user-token:", "x-slurm-user-token=", "slurm_jwt=",
        "token=",  "authorization:",      "\"token\":",
    };
    size_t count = 0;
    size_t i = 0;

    if (text == NULL || size == 0)
        return 0;
    text[size - 1] = '\0';
    while (text[i] != '\0') {
        size_t end = jwt_end(text, i);
        size_t k;

        if (end > i) {
            i = replace_span(text, size, i, end);
            count++;
            continue;
        }
        for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            size_t klen = strlen(keys[k]);
            size_t v, e;

            if (strncasecmp(text + i, keys[k], klen) != 0)
                continue;
            v = i + klen;
            while (text[v] == ' ' || text[v] == '\t' || text[v] == '"')
                v++;
            /* "Authorization: Bearer x": let the bearer key take the value. */
            if (strncasecmp(text + v, "bearer ", 7) == 0) {
                i = v;
                break;
            }
            e = v;
            while (!ends_value((unsigned char)text[e]))
                e++;
            if (e > v && strncmp(text + v, redacted, sizeof(redacted) - 1) != 0) {
                i = replace_span(text, size, v, e);
                count++;
            } else {
                i = e;
            }
            break;
        }
        if (k == sizeof(keys) / sizeof(keys[0]))
            i++;
    }
    return count;
}
