/* SPDX-License-Identifier: Apache-2.0 */
/* config_kinds.c - the kinds of the field table in words, for the
 * configuration reference (`sluice config reference`): the type of a field,
 * the fixed words a kind accepts, which kinds the environment and --set may
 * set, and the SLUICE_* variable of a key.
 *
 * Notes:
 * - The words repeat what config_walk.c (cfg_apply) and config_value.c
 *   accept; test_config_ref checks them against the loader.  They are
 *   markdown: patterns are in backquotes.
 * - Nothing here calls another file of sluice.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"

static const char *const w_runtime[] = {"slurm", NULL};
static const char *const w_apiver[] = {"auto",    "v0.0.38", "v0.0.40", "v0.0.41", "v0.0.42",
                                       "v0.0.43", "v0.0.44", "v0.0.45", "v0.0.46", NULL};
static const char *const w_sandbox[] = {"enroot-pyxis", "pyxis", "apptainer", "none", NULL};
static const char *const w_ics[] = {"mtls", "clear", NULL};
static const char *const w_vendor[] = {"nvidia", "amd", "none", NULL};
/* sluice_log_level_parse(): the names (any case) and the syslog numbers. */
static const char *const w_level[] = {"error", "err", "warning", "warn", "notice", "info", "debug",
                                      "3",     "4",   "5",       "6",    "7",      NULL};
static const char *const w_format[] = {"text", "json", "journald", NULL};

const char *const *cfg_kind_values(kind_t k)
{
    switch (k) {
    case K_RUNTIME:
        return w_runtime;
    case K_APIVER:
        return w_apiver;
    case K_SANDBOX:
    case K_PROFILES:
        return w_sandbox;
    case K_ICS:
        return w_ics;
    case K_GPUVENDOR:
        return w_vendor;
    case K_LOGLEVEL:
        return w_level;
    case K_LOGFORMAT:
        return w_format;
    default:
        return NULL;
    }
}

bool cfg_kind_settable(kind_t k)
{
    return k != K_SERIES && k != K_EXECS && k != K_RUNTIME && k != K_ARGV;
}

/* "a, b or c" of a NULL-terminated list, appended at buf + used. */
static void join_words(const char *const *w, char *buf, size_t cap)
{
    size_t i, used = strlen(buf);

    for (i = 0; w[i] && used < cap; i++) {
        const char *sep = i == 0 ? "" : (w[i + 1] ? ", " : " or ");
        int n = snprintf(buf + used, cap - used, "%s%s", sep, w[i]);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}

const char *cfg_kind_type(const field_t *f, char *buf, size_t cap)
{
    const char *fixed = NULL;

    if (cap == 0)
        return buf;
    buf[0] = '\0';
    switch (f->kind) {
    case K_STR:
        fixed = "string (one line, 1 to 4096 bytes)";
        break;
    case K_NAME:
        fixed = "name: 1 to 64 characters from `[A-Za-z0-9._-]`";
        break;
    case K_PREFIX:
        fixed = "job name prefix: `[A-Za-z][A-Za-z0-9_]{0,15}`";
        break;
    case K_HOST:
        fixed = "host name or address (at most 253 characters from `[A-Za-z0-9.:_[]-]`)";
        break;
    case K_ABS:
        fixed = "absolute path";
        break;
    case K_URL:
        fixed = "URL: `https://`, `http://` (loopback) or `unix:/`";
        break;
    case K_DBURL:
        fixed = "PostgreSQL URL: `postgresql://` or `postgres://`, without a password";
        break;
    case K_BOOL:
        fixed = "boolean";
        break;
    case K_INT:
        snprintf(buf, cap, "integer from %ld to %ld", f->min, f->max);
        return buf;
    case K_DUR:
        snprintf(buf, cap, "duration (%lds to %lds)", f->min, f->max);
        return buf;
    case K_STIME:
        fixed = "Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)";
        break;
    case K_PORTRANGE:
        snprintf(buf, cap, "port range `START-END` or `[START, END]`, %ld to %ld", f->min, f->max);
        return buf;
    case K_LINES:
        fixed = "block string or list of shell lines";
        break;
    case K_LIST:
        fixed = "list of strings";
        break;
    case K_ENVLIST:
        fixed = "list of variable names (`[A-Za-z_][A-Za-z0-9_]*`)";
        break;
    case K_ARGV:
        fixed = "command: list of strings, the first an absolute path (run without a shell)";
        break;
    case K_SERIES:
        fixed = "map: series name to `{constraint, gres, gpus_per_node, gpu_vendor}`";
        break;
    case K_EXECS:
        fixed = "map: command name to absolute path";
        break;
    case K_MODE:
        snprintf(buf, cap, "octal file mode from 0600 to %04lo, no bit for others", f->max);
        return buf;
    case K_JOBPATH:
        fixed = "absolute directories joined by `:`";
        break;
    case K_PROFILES:
        snprintf(buf, cap, "list of: ");
        join_words(cfg_kind_values(f->kind), buf, cap);
        return buf;
    case K_LOGLEVEL:
        snprintf(buf, cap,
                 "one of error, warning, notice, info, debug (also err, warn, or "
                 "3 to 7; any case)");
        return buf;
    case K_LOGFORMAT:
        snprintf(buf, cap, "one of text, json, journald (any case)");
        return buf;
    default: /* the other kinds with fixed words */
        snprintf(buf, cap, "one of ");
        join_words(cfg_kind_values(f->kind), buf, cap);
        return buf;
    }
    snprintf(buf, cap, "%s", fixed);
    return buf;
}

void cfg_env_name(const char *path, char *out, size_t cap)
{
    size_t i, j = 0;
    const char *pre = "SLUICE_";

    for (i = 0; pre[i] && j + 1 < cap; i++)
        out[j++] = pre[i];
    for (i = 0; path[i] && j + 1 < cap; i++)
        out[j++] = path[i] == '.' ? '_' : (char)toupper((unsigned char)path[i]);
    out[j] = '\0';
}
