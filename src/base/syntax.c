/* SPDX-License-Identifier: Apache-2.0 */
/* syntax.c - the Slurm value syntaxes: time limits, memory sizes,
 * durations, signal specs, variable names and paths (see syntax.h).
 *
 * Notes:
 * - Numbers are read digit by digit with a digit cap, never with strtol
 *   on the whole value, so no sign, space or overflow slips through.
 * - Reasons are static sentences; the field name comes from the caller.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "syntax.h"

#define SYNTAX_MAX_PATH 4096

static sluice_err fail(sluice_error_t *err, const char *field, const char *reason)
{
    return sluice_errorf(err, SLUICE_EINVAL, "%s: %s", field ? field : "value", reason);
}

static sluice_err nomem(sluice_error_t *err, const char *field)
{
    return sluice_errorf(err, SLUICE_ENOMEM, "%s: out of memory", field ? field : "value");
}

/* Read up to `cap` decimal digits; returns how many were read (0: none, or
 * more than `cap`). */
static size_t read_num(const char *s, size_t cap, uint64_t *v)
{
    size_t i = 0;

    *v = 0;
    while (s[i] >= '0' && s[i] <= '9') {
        if (i == cap)
            return 0;
        *v = *v * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    return i;
}

/* ---- Slurm time limits ------------------------------------------------- */

sluice_err syntax_slurm_time(
    uint32_t *minutes, const char *s, uint32_t max_minutes, const char *field, sluice_error_t *err)
{
    static const char *const bad = "expected minutes or a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, "
                                   "D-HH:MM, D-HH:MM:SS)";
    uint64_t f[3] = {0, 0, 0}, days = 0, secs, mins;
    size_t nf, k;
    bool has_days = false;
    const char *p = s;
    char msg[80];

    if (strcmp(s, "-1") == 0 || strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0)
        return fail(err, field,
                    "no limit (UNLIMITED, INFINITE, -1) is refused: give a finite time");
    if ((k = read_num(p, 9, &f[0])) == 0)
        return fail(err, field, bad);
    p += k;
    nf = 1;
    if (*p == '-') {
        has_days = true;
        days = f[0];
        p++;
        if ((k = read_num(p, 9, &f[0])) == 0)
            return fail(err, field, bad);
        p += k;
    }
    while (*p == ':' && nf < 3) {
        p++;
        if ((k = read_num(p, 9, &f[nf])) == 0)
            return fail(err, field, bad);
        p += k;
        nf++;
    }
    if (*p != '\0')
        return fail(err, field, bad);
    /* Slurm's rule: the parts add up, none is range-checked. */
    if (has_days)
        secs = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2]; /* D-H[:M[:S]] */
    else if (nf == 1)
        secs = f[0] * 60; /* M */
    else if (nf == 2)
        secs = f[0] * 60 + f[1]; /* M:S */
    else
        secs = f[0] * 3600 + f[1] * 60 + f[2]; /* H:M:S */
    mins = (secs + 59) / 60;
    if (mins == 0)
        return fail(err, field, "must be at least 1 minute");
    if (mins > max_minutes) {
        if (max_minutes % 1440 == 0)
            snprintf(msg, sizeof(msg), "must be at most %u days", max_minutes / 1440);
        else
            snprintf(msg, sizeof(msg), "must be at most %u minutes", max_minutes);
        return fail(err, field, msg);
    }
    *minutes = (uint32_t)mins;
    return SLUICE_OK;
}

/* ---- memory sizes and durations ---------------------------------------- */

sluice_err syntax_mem_size(uint64_t *mib, const char *s, const char *field, sluice_error_t *err)
{
    static const char *const bad = "expected MiB as an integer or a size like \"512M\", "
                                   "\"32G\" or \"1T\"";
    uint64_t v = 0;
    size_t i;

    if ((i = read_num(s, 12, &v)) == 0)
        return fail(err, field, bad);
    switch (s[i]) {
    case '\0':
        break;
    case 'k':
    case 'K':
        v = (v + 1023) / 1024;
        i++;
        break;
    case 'm':
    case 'M':
        i++;
        break;
    case 'g':
    case 'G':
        v *= 1024;
        i++;
        break;
    case 't':
    case 'T':
        v *= 1024 * 1024;
        i++;
        break;
    default:
        return fail(err, field, bad);
    }
    if (s[i] != '\0')
        return fail(err, field, bad);
    if (v == 0)
        return fail(err, field, "must be at least 1 MiB");
    if (v > SYNTAX_MEM_MAX_MIB)
        return fail(err, field, "must be at most 64 TiB");
    *mib = v;
    return SLUICE_OK;
}

sluice_err syntax_duration(long *seconds, const char *s, const char *field, sluice_error_t *err)
{
    static const char *const bad = "expected a duration: seconds, or a number with s, m, h or d "
                                   "(\"30s\", \"5m\", \"2h\")";
    char *end = NULL;
    long v, mul;

    if (!isdigit((unsigned char)s[0]))
        return fail(err, field, bad);
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || v < 0)
        return fail(err, field, bad);
    if (*end == '\0' || strcmp(end, "s") == 0)
        mul = 1;
    else if (strcmp(end, "m") == 0)
        mul = 60;
    else if (strcmp(end, "h") == 0)
        mul = 3600;
    else if (strcmp(end, "d") == 0)
        mul = 86400;
    else
        return fail(err, field, bad);
    if (v > LONG_MAX / mul)
        return fail(err, field, bad);
    *seconds = v * mul;
    return SLUICE_OK;
}

/* ---- signals ----------------------------------------------------------- */

static const char *const signal_names[] = {
    "HUP",  "INT",  "QUIT", "ABRT", "KILL", "USR1",   "USR2", "ALRM",  "TERM", "CONT",
    "STOP", "TSTP", "URG",  "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "PWR",  NULL};

sluice_err syntax_signal(char **out, const char *s, const char *field, sluice_error_t *err)
{
    static const char *const bad = "expected <signal>[@<seconds>], e.g. \"USR1@120\"; signal "
                                   "is a name (HUP, INT, USR1, TERM, ...) or a number 1-64";
    char sig[16], buf[48];
    const char *at = strchr(s, '@');
    size_t n = at ? (size_t)(at - s) : strlen(s), k, i;
    uint64_t secs = 60, num;
    char *copy;

    if (n == 0 || n >= sizeof(sig))
        return fail(err, field, bad);
    memcpy(sig, s, n);
    sig[n] = '\0';
    if (sig[0] >= '0' && sig[0] <= '9') {
        k = read_num(sig, 9, &num);
        if (k != n || num < 1 || num > 64)
            return fail(err, field, bad);
    } else {
        const char *name = strncmp(sig, "SIG", 3) == 0 ? sig + 3 : sig;
        bool found = false;

        for (i = 0; signal_names[i] != NULL; i++)
            if (strcmp(name, signal_names[i]) == 0)
                found = true;
        if (!found)
            return fail(err, field, bad);
        memmove(sig, name, strlen(name) + 1);
    }
    if (at != NULL) {
        k = read_num(at + 1, 9, &secs);
        if (k == 0 || at[1 + k] != '\0')
            return fail(err, field, bad);
        if (secs > 65535)
            return fail(err, field, "seconds must be between 0 and 65535");
    }
    snprintf(buf, sizeof(buf), "%s@%llu", sig, (unsigned long long)secs);
    if ((copy = malloc(strlen(buf) + 1)) == NULL)
        return nomem(err, field);
    memcpy(copy, buf, strlen(buf) + 1);
    *out = copy;
    return SLUICE_OK;
}

/* ---- variable names ---------------------------------------------------- */

const char *syntax_envname_reason(const char *s)
{
    size_t i, n = strlen(s);

    if (n == 0 || n > 128)
        return "expected a variable name of 1 to 128 bytes";
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_') || (unsigned char)s[0] > 0x7f)
        return "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*";
    for (i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_') || (unsigned char)s[i] > 0x7f)
            return "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*";
    return NULL;
}

sluice_err syntax_envname(const char *s, const char *field, sluice_error_t *err)
{
    const char *why = syntax_envname_reason(s);

    return why ? fail(err, field, why) : SLUICE_OK;
}

/* ---- paths ------------------------------------------------------------- */

sluice_err syntax_path_normalize(char **out, const char *s, const char *field, sluice_error_t *err)
{
    size_t n = strlen(s), i, o = 0;
    char *res;

    if (n == 0 || s[0] != '/')
        return fail(err, field, "expected an absolute path");
    if (n > SYNTAX_MAX_PATH)
        return fail(err, field, "path longer than 4096 bytes");
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return fail(err, field, "path contains a control character");
    if ((res = malloc(n + 2)) == NULL)
        return nomem(err, field);
    i = 0;
    while (i < n) {
        size_t start, len;

        while (i < n && s[i] == '/')
            i++;
        start = i;
        while (i < n && s[i] != '/')
            i++;
        len = i - start;
        if (len == 0 || (len == 1 && s[start] == '.'))
            continue;
        if (len == 2 && s[start] == '.' && s[start + 1] == '.') {
            free(res);
            return fail(err, field, "path must not contain \"..\"");
        }
        res[o++] = '/';
        memcpy(res + o, s + start, len);
        o += len;
    }
    if (o == 0)
        res[o++] = '/';
    res[o] = '\0';
    *out = res;
    return SLUICE_OK;
}

bool syntax_path_plain(const char *s, size_t len)
{
    size_t i, n;

    if (len == 0 || s[0] != '/')
        return false;
    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f || strchr(":'\"`$\\", ch))
            return false;
    }
    if (len == 1)
        return true;
    for (i = 0; i < len; i += n + 1) {
        /* s[i] is a '/'; the component after it is n bytes long. */
        n = 0;
        while (i + 1 + n < len && s[i + 1 + n] != '/')
            n++;
        if (n == 0 || (n == 1 && s[i + 1] == '.') || (n == 2 && s[i + 1] == '.' && s[i + 2] == '.'))
            return false;
    }
    return true;
}

bool syntax_path_list(const char *s)
{
    const char *p = s;

    if (!s[0] || strlen(s) > SYNTAX_MAX_PATH)
        return false;
    for (;;) {
        size_t len = strcspn(p, ":");
        if (!syntax_path_plain(p, len))
            return false;
        if (p[len] == '\0')
            return true;
        p += len + 1;
    }
}
