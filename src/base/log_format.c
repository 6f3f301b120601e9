/* SPDX-License-Identifier: Apache-2.0 */
/* log_format.c - the three line formats of a log record (text, JSON lines,
 * journald), the level and format names, and the stock stderr sink.
 *
 * Notes:
 * - A line is built in a fixed buffer and written with one write(2), so
 *   two threads' lines never interleave and no allocation happens on the
 *   logging path.
 * - The JSON format escapes by hand (RFC 8259: quote, backslash and control
 *   characters); a message cut to fit stays valid JSON, and a cut never
 *   splits an escape or a UTF-8 character.
 * - journald reads "<N>" at the start of a line on a service's stderr as
 *   the syslog priority (sd-daemon(3)) and stamps the time itself, so that
 *   format carries no time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <sluice/log.h>

static int log_format_current = SLUICE_LOG_FORMAT_TEXT;

int sluice_log_level_parse(const char *text)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {
        {"error", SLUICE_LOG_ERR},       {"err", SLUICE_LOG_ERR},
        {"warning", SLUICE_LOG_WARNING}, {"warn", SLUICE_LOG_WARNING},
        {"notice", SLUICE_LOG_NOTICE},   {"info", SLUICE_LOG_INFO},
        {"debug", SLUICE_LOG_DEBUG},
    };
    size_t i;

    if (text == NULL)
        return -1;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(text, names[i].name) == 0)
            return names[i].level;
    }
    if (text[0] >= '3' && text[0] <= '7' && text[1] == '\0')
        return text[0] - '0';
    return -1;
}

int sluice_log_format_parse(const char *text)
{
    if (text == NULL)
        return -1;
    if (strcasecmp(text, "text") == 0)
        return SLUICE_LOG_FORMAT_TEXT;
    if (strcasecmp(text, "json") == 0)
        return SLUICE_LOG_FORMAT_JSON;
    if (strcasecmp(text, "journald") == 0)
        return SLUICE_LOG_FORMAT_JOURNALD;
    return -1;
}

/* A bounded writer: `n` counts what is written, `cap` what may be (the NUL
 * excluded).  Once full, writes are dropped. */
typedef struct {
    char *buf;
    size_t n;
    size_t cap;
} line_t;

static void put(line_t *l, const char *s, size_t len)
{
    if (len > l->cap - l->n)
        len = l->cap - l->n;
    memcpy(l->buf + l->n, s, len);
    l->n += len;
}

static void puts_(line_t *l, const char *s)
{
    put(l, s, strlen(s));
}

/* The length of the UTF-8 sequence starting with byte `c` (1 for a stray
 * continuation byte, so that it is copied alone). */
static size_t utf8_len(unsigned char c)
{
    if (c >= 0xf0)
        return 4;
    if (c >= 0xe0)
        return 3;
    if (c >= 0xc0)
        return 2;
    return 1;
}

/* `s` as the body of a JSON string, in at most `room` bytes; stops before
 * an escape or a character that would not fit whole. */
static void put_json_text(line_t *l, const char *s, size_t room)
{
    size_t end = l->n + room;

    if (end > l->cap)
        end = l->cap;
    while (*s != '\0') {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        size_t len;

        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            len = 2;
        } else if (c == '\n') {
            memcpy(esc, "\\n", 2);
            len = 2;
        } else if (c == '\t') {
            memcpy(esc, "\\t", 2);
            len = 2;
        } else if (c == '\r') {
            memcpy(esc, "\\r", 2);
            len = 2;
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            len = 6;
        } else {
            size_t k = utf8_len(c), j;

            for (j = 1; j < k; j++) {
                if (((unsigned char)s[j] & 0xc0) != 0x80)
                    break;
            }
            if (j < k)
                k = 1; /* a broken sequence: its bytes go one by one */
            if (l->n + k > end)
                return;
            put(l, s, k);
            s += k;
            continue;
        }
        if (l->n + len > end)
            return;
        put(l, esc, len);
        s++;
    }
}

static void put_time(line_t *l, long long ms)
{
    char t[40];
    struct tm tm;
    time_t sec = (time_t)(ms / 1000);

    gmtime_r(&sec, &tm);
    snprintf(t, sizeof(t), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    puts_(l, t);
}

size_t sluice_log_format_record(const sluice_log_record_t *rec,
                                sluice_log_format_t format,
                                char *buf,
                                size_t size)
{
    line_t l;
    const char *sub = rec->subsystem && rec->subsystem[0] ? rec->subsystem : "sluice";
    char pri[8];

    if (buf == NULL || size < 2)
        return 0;
    /* Room for the newline is kept back until the end. */
    l.buf = buf;
    l.n = 0;
    l.cap = size - 2;
    switch (format) {
    case SLUICE_LOG_FORMAT_JSON:
        /* The closing `"}` takes 2 bytes: kept back from the text. */
        puts_(&l, "{\"time\":\"");
        put_time(&l, rec->time_ms);
        puts_(&l, "\",\"level\":\"");
        puts_(&l, sluice_log_level_name(rec->level));
        puts_(&l, "\",\"subsystem\":\"");
        put_json_text(&l, sub, 64);
        puts_(&l, "\"");
        if (rec->launch_id != NULL) {
            puts_(&l, ",\"launch_id\":\"");
            put_json_text(&l, rec->launch_id, 300);
            puts_(&l, "\"");
        }
        puts_(&l, ",\"msg\":\"");
        if (l.n + 2 <= l.cap)
            put_json_text(&l, rec->msg, l.cap - l.n - 2);
        puts_(&l, "\"}");
        break;
    case SLUICE_LOG_FORMAT_JOURNALD:
        snprintf(pri, sizeof(pri), "<%d>", rec->level < 0 ? 3 : (rec->level > 7 ? 7 : rec->level));
        puts_(&l, pri);
        puts_(&l, sub);
        puts_(&l, ": ");
        puts_(&l, rec->msg);
        break;
    case SLUICE_LOG_FORMAT_TEXT:
    default:
        put_time(&l, rec->time_ms);
        puts_(&l, " ");
        puts_(&l, sluice_log_level_name(rec->level));
        puts_(&l, " ");
        puts_(&l, sub);
        puts_(&l, ": ");
        puts_(&l, rec->msg);
        break;
    }
    /* A text line stays one line: a newline inside the message would let
     * whoever controls the message forge a second log line. */
    if (format != SLUICE_LOG_FORMAT_JSON) {
        size_t i;

        for (i = 0; i < l.n; i++) {
            if (buf[i] == '\n' || buf[i] == '\r')
                buf[i] = ' ';
        }
    }
    buf[l.n++] = '\n';
    buf[l.n] = '\0';
    return l.n;
}

static void stderr_sink(const sluice_log_record_t *rec, void *arg)
{
    char line[4096];
    size_t n, off = 0;

    (void)arg;
    n = sluice_log_format_record(rec, (sluice_log_format_t)log_format_current, line, sizeof(line));
    while (off < n) {
        ssize_t w = write(STDERR_FILENO, line + off, n - off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

void sluice_log_to_stderr(int max_level, sluice_log_format_t format)
{
    log_format_current = (int)format;
    sluice_log_set_records(stderr_sink, max_level, NULL);
}
