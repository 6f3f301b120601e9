/* SPDX-License-Identifier: Apache-2.0 */
/* config_walk.c - the layers of one site model: the defaults, the YAML tree
 * walked against the table of fields, the environment and --set overrides.
 *
 * Every value, whatever its layer, goes through cfg_apply(): environment values
 * and --set overrides become scalar nodes, so every layer is validated the
 * same way.  config.c runs these layers for the site, config_clusters.c
 * again for each entry of `clusters:`.
 *
 * Notes:
 * - Secret material is never read here: only paths to it are kept.
 * - Slurm times and durations are parsed by base/syntax.h, the parser
 *   launch requests use too.
 * - `clusters` is a key of the top level that the walk leaves alone:
 *   config_clusters.c reads it from the tree.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/config.h>
#include <sluice/log.h>

#include "base/suggest.h"
#include "base/syntax.h"
#include "base/urlsafe.h"

#include "config_int.h"

static bool profile_ok(const char *s)
{
    sluice_sandbox_t sb;

    return cfg_sandbox_word(s, &sb);
}

static bool list_item_ok(const char *s)
{
    return cfg_oneline_ok(s) && !strchr(s, ',');
}

static sluice_err set_port_range(ctx_t *c, const node_t *n, const char *key)
{
    long lo = 0, hi = 0;
    bool ok = false;

    if (n->kind == N_SCALAR) {
        const char *dash = strchr(n->str, '-');
        if (dash && dash != n->str) {
            char a[16];
            size_t len = (size_t)(dash - n->str);
            if (len < sizeof(a)) {
                memcpy(a, n->str, len);
                a[len] = '\0';
                ok = cfg_parse_long(a, &lo) && cfg_parse_long(dash + 1, &hi);
            }
        }
    } else if (n->kind == N_SEQ && n->n == 2 && n->kids[0]->kind == N_SCALAR &&
               n->kids[1]->kind == N_SCALAR) {
        ok = cfg_parse_long(n->kids[0]->str, &lo) && cfg_parse_long(n->kids[1]->str, &hi);
    }
    if (!ok)
        return cfg_bad(c, n, key, "expected a port range \"START-END\" or [START, END]");
    if (lo < 1 || hi > 65535 || lo > hi)
        return cfg_bad(c, n, key, "expected 1 <= START <= END <= 65535, got %ld-%ld", lo, hi);
    c->cfg->launcher.port_range_lo = lo;
    c->cfg->launcher.port_range_hi = hi;
    return SLUICE_OK;
}

/* Apply one value to one field. */
sluice_err cfg_apply(ctx_t *c, const field_t *f, const node_t *n)
{
    void *slot = (char *)c->cfg + f->off;
    char **sp = (char **)slot;
    long *lp = (long *)slot;
    bool *bp = (bool *)slot;
    const char *key = f->path;
    sluice_err rc = SLUICE_OK;
    size_t idx = (size_t)(f - cfg_fields);
    sluice_error_t serr = SLUICE_ERROR_INIT;
    long v;
    bool b;

    if (cfg_is_null(n) && f->kind != K_LINES)
        return SLUICE_OK; /* "key:" with no value keeps the default */
    switch (f->kind) {
    case K_SERIES:
        rc = cfg_set_series(c, n, key);
        break;
    case K_EXECS:
        rc = cfg_set_execs(c, n, key);
        break;
    case K_PORTRANGE:
        rc = set_port_range(c, n, key);
        break;
    case K_LINES:
        if (cfg_is_null(n)) {
            cfg_strlist_clear((sluice_strlist_t *)slot);
            break;
        }
        rc = cfg_set_lines(c, n, key, (sluice_strlist_t *)slot);
        break;
    case K_LIST:
        rc = cfg_get_list(c, n, key, list_item_ok, "names", (sluice_strlist_t *)slot);
        break;
    case K_ENVLIST:
        rc = cfg_get_list(c, n, key, cfg_env_name_ok,
                          "variable names matching [A-Za-z_][A-Za-z0-9_]*",
                          (sluice_strlist_t *)slot);
        break;
    case K_PROFILES:
        rc = cfg_get_list(c, n, key, profile_ok, "profiles (enroot-pyxis, pyxis, apptainer, none)",
                          (sluice_strlist_t *)slot);
        break;
    case K_ARGV:
        rc = cfg_get_list(c, n, key, cfg_oneline_ok, "command arguments (single lines)",
                          (sluice_strlist_t *)slot);
        if (rc == SLUICE_OK &&
            (((sluice_strlist_t *)slot)->n == 0 || ((sluice_strlist_t *)slot)->items[0][0] != '/'))
            rc = cfg_bad(c, n, key,
                         "expected a command: a list whose first item is the absolute "
                         "path of the program (it runs without a shell)");
        break;
    default:
        if (n->kind != N_SCALAR)
            return cfg_bad(c, n, key, "expected a scalar, found %s", cfg_kind_word(n));
        if (cfg_is_placeholder(n->str))
            return cfg_bad(c, n, key,
                           "still the placeholder `sluice config init` wrote (%.80s): put the "
                           "site's value here",
                           n->str);
        break;
    }
    if (rc != SLUICE_OK || f->kind == K_SERIES || f->kind == K_EXECS || f->kind == K_PORTRANGE ||
        f->kind == K_LINES || f->kind == K_LIST || f->kind == K_ENVLIST || f->kind == K_PROFILES ||
        f->kind == K_ARGV)
        goto record;

    switch (f->kind) {
    case K_RUNTIME:
        if (strcmp(n->str, "slurm") != 0)
            return cfg_bad(c, n, key, "expected \"slurm\"");
        goto record_only;
    case K_STR:
        if (!cfg_oneline_ok(n->str))
            return cfg_bad(c, n, key, "expected a non-empty single-line string");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_NAME:
        if (!cfg_name_ok(n->str))
            return cfg_bad(c, n, key, "expected 1-64 characters from [A-Za-z0-9._-]");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_PREFIX: {
        size_t i, len = strlen(n->str);
        bool ok = len >= 1 && len <= 16 && isalpha((unsigned char)n->str[0]);
        for (i = 0; ok && i < len; i++)
            ok = isalnum((unsigned char)n->str[i]) || n->str[i] == '_';
        if (!ok)
            return cfg_bad(c, n, key,
                           "expected a job name prefix such as \"sluice\" or \"nvfl\" "
                           "([A-Za-z][A-Za-z0-9_]{0,15})");
        rc = cfg_set_str(c, sp, n->str);
        break;
    }
    case K_HOST: {
        size_t i;
        bool ok = cfg_oneline_ok(n->str) && strlen(n->str) <= 253;
        for (i = 0; ok && n->str[i]; i++)
            ok = isalnum((unsigned char)n->str[i]) || strchr(".-:[]_", n->str[i]);
        if (!ok)
            return cfg_bad(c, n, key, "expected a host name or address");
        rc = cfg_set_str(c, sp, n->str);
        break;
    }
    case K_ABS:
        if (n->str[0] != '/' || !cfg_oneline_ok(n->str))
            return cfg_bad(c, n, key, "expected an absolute path");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_JOBPATH:
        if (!syntax_path_list(n->str))
            return cfg_bad(c, n, key,
                           "expected absolute directories joined by ':' (no empty entry, no '.' or "
                           "'..', no trailing '/', no quote, '$', '\\' or control byte)");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_URL: {
        const char *s = n->str;
        bool ok = cfg_oneline_ok(s) && !strchr(s, ' ');
        if (ok && strncmp(s, "https://", 8) == 0)
            ok = s[8] != '\0' && s[8] != '/';
        else if (ok && strncmp(s, "http://", 7) == 0)
            ok = s[7] != '\0' && s[7] != '/';
        else if (ok && strncmp(s, "unix:/", 6) == 0)
            ok = s[6] != '\0';
        else
            ok = false;
        if (!ok)
            return cfg_bad(c, n, key, "expected an https://, http:// (loopback) or unix:/ URL");
        rc = cfg_set_str(c, sp, s);
        break;
    }
    case K_DBURL:
        /* The password goes in store.password_file or libpq's PGPASSFILE:
         * never in a value that `config show` and the logs print. */
        if (!cfg_oneline_ok(n->str) || strchr(n->str, ' ') || !urlsafe_is_postgres(n->str))
            return cfg_bad(c, n, key, "expected a postgresql:// or postgres:// URL");
        if (urlsafe_has_password(n->str))
            return cfg_bad(c, n, key,
                           "a password in the URL is refused (the value is not shown); put it "
                           "in store.password_file (0600) or libpq's PGPASSFILE");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_APIVER: {
        /* The names of SLUICE_REST_VERSION_MAP (sluice/client.h, a layer
         * above this one); test_config checks that the two lists agree. */
        static const char *const vers[] = {"auto",    "v0.0.38", "v0.0.40", "v0.0.41", "v0.0.42",
                                           "v0.0.43", "v0.0.44", "v0.0.45", "v0.0.46"};
        size_t i, nv = sizeof(vers) / sizeof(vers[0]);
        for (i = 0; i < nv; i++) {
            if (strcmp(n->str, vers[i]) == 0)
                break;
        }
        if (i == nv)
            return cfg_bad(c, n, key, "expected auto, v0.0.38 or v0.0.40 to v0.0.46");
        rc = cfg_set_str(c, sp, n->str);
        break;
    }
    case K_SANDBOX: {
        sluice_sandbox_t sb;
        if (!cfg_sandbox_word(n->str, &sb))
            return cfg_bad(c, n, key, "expected enroot-pyxis (alias pyxis), apptainer or none");
        *(sluice_sandbox_t *)slot = sb;
        break;
    }
    case K_GPUVENDOR:
        if (!cfg_gpu_vendor_word(n->str))
            return cfg_bad(c, n, key, "expected nvidia, amd or none");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_LOGLEVEL:
        if (sluice_log_level_parse(n->str) < 0)
            return cfg_bad(c, n, key, "expected error, warning, notice, info or debug");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_LOGFORMAT:
        if (sluice_log_format_parse(n->str) < 0)
            return cfg_bad(c, n, key, "expected text, json or journald");
        rc = cfg_set_str(c, sp, n->str);
        break;
    case K_ICS:
        if (strcmp(n->str, "mtls") != 0 && strcmp(n->str, "clear") != 0)
            return cfg_bad(c, n, key, "expected mtls or clear");
        rc = cfg_set_str(c, sp, n->str);
        if (rc == SLUICE_OK)
            rc = cfg_warn(c, n, key,
                          "accepted for NVFlare compatibility, not used by sluice (no "
                          "worker-to-parent link)");
        break;
    case K_BOOL:
        if (c->src == SLUICE_SRC_FILE && !n->plain && cfg_bool_word(n->str, &b))
            return cfg_bad(c, n, key,
                           "expected true or false, got \"%s\" as a quoted string: drop the "
                           "quotes",
                           n->str);
        if ((c->src == SLUICE_SRC_FILE && !n->plain) || !cfg_bool_word(n->str, &b))
            return cfg_bad(c, n, key, "expected true or false");
        *bp = b;
        break;
    case K_INT:
        if (cfg_is_nonfinite(n->str))
            return cfg_bad(c, n, key, "expected an integer, got a non-finite number");
        if (c->src == SLUICE_SRC_FILE && !n->plain && cfg_parse_long(n->str, &v))
            return cfg_bad(c, n, key,
                           "expected an integer from %ld to %ld, got \"%ld\" as a quoted "
                           "string: drop the quotes",
                           f->min, f->max, v);
        if ((c->src == SLUICE_SRC_FILE && !n->plain) || !cfg_parse_long(n->str, &v))
            return cfg_bad(c, n, key, "expected an integer from %ld to %ld", f->min, f->max);
        if (v < f->min || v > f->max)
            return cfg_bad(c, n, key, "expected an integer from %ld to %ld, got %ld", f->min,
                           f->max, v);
        *lp = v;
        break;
    case K_DUR:
        if (cfg_is_nonfinite(n->str))
            return cfg_bad(c, n, key, "expected a duration, got a non-finite number");
        if (syntax_duration(&v, n->str, key, &serr) != SLUICE_OK)
            return cfg_bad_text(c, n, serr.text);
        if (v < f->min || v > f->max)
            return cfg_bad(c, n, key, "expected a duration from %lds to %lds, got %lds", f->min,
                           f->max, v);
        *lp = v;
        break;
    case K_MODE: {
        char *end = NULL;
        errno = 0;
        v = isdigit((unsigned char)n->str[0]) ? strtol(n->str, &end, 8) : -1;
        if (v < 0 || errno || end == NULL || *end || v > 0777)
            return cfg_bad(c, n, key, "expected an octal file mode such as 0660");
        if (v & 07)
            return cfg_bad(c, n, key, "mode %04lo is accessible by others; use 0660 or stricter",
                           v);
        if ((v & 0600) != 0600)
            return cfg_bad(c, n, key,
                           "mode %04lo must give the owner read and write (0600 at least)", v);
        *lp = v;
        break;
    }
    case K_STIME: {
        uint32_t minutes = 0;
        if (syntax_slurm_time(&minutes, n->str, SYNTAX_TIME_MAX_MINUTES, key, &serr) != SLUICE_OK)
            return cfg_bad_text(c, n, serr.text);
        rc = cfg_set_str(c, sp, n->str);
        c->cfg->launcher.sbatch.time_minutes = (long)minutes;
        break;
    }
    default:
        break;
    }
record:
    if (rc != SLUICE_OK)
        return rc;
record_only:
    c->cfg->priv->src[idx] = (unsigned char)c->src;
    free(c->cfg->priv->origin[idx]);
    c->cfg->priv->origin[idx] = NULL;
    if (c->origin && !(c->cfg->priv->origin[idx] = cfg_dup(c->origin)))
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    c->cfg->priv->line[idx] = n->line;
    c->cfg->priv->col[idx] = n->col;
    return SLUICE_OK;
}

static sluice_err walk_parent(ctx_t *c, const node_t *n)
{
    size_t i;
    sluice_err rc;
    char key[128];

    if (n->kind != N_MAP)
        return cfg_bad(c, n, "parent", "expected a mapping, found %s", cfg_kind_word(n));
    for (i = 0; i < n->n; i += 2) {
        snprintf(key, sizeof(key), "parent.%.64s", n->kids[i]->str);
        rc = cfg_warn(c, n->kids[i], key,
                      "not used by sluice (parent-only setting; sluice is not placed by sbatch)");
        if (rc != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

/* The key valid beside the unknown `key` of the section `prefix` ("" for
 * the top level) closest to it, as a dotted path in out[cap], or NULL:
 * the candidates are the next parts of the field paths below `prefix`
 * (a field or a section), and at the top level clusters and parent. */
static const char *near_key(const char *prefix, const char *key, char *out, size_t cap)
{
    char parts[CFG_N_FIELDS + 2][SUGGEST_WORD_MAX + 1];
    size_t i, n = 0, plen = strlen(prefix), len;
    const char *rest, *dot, *best;
    suggest_t s;

    suggest_init(&s, key);
    if (plen == 0) {
        suggest_add(&s, "clusters");
        suggest_add(&s, "tenants");
        suggest_add(&s, "parent");
    }
    for (i = 0; i < CFG_N_FIELDS; i++) {
        rest = cfg_fields[i].path;
        if (plen > 0) {
            if (strncmp(rest, prefix, plen) != 0 || rest[plen] != '.')
                continue;
            rest += plen + 1;
        }
        dot = strchr(rest, '.');
        len = dot ? (size_t)(dot - rest) : strlen(rest);
        if (len > SUGGEST_WORD_MAX)
            continue;
        memcpy(parts[n], rest, len);
        parts[n][len] = '\0';
        suggest_add(&s, parts[n++]);
    }
    if (!(best = suggest_best(&s)))
        return NULL;
    if (plen > 0)
        snprintf(out, cap, "%s.%s", prefix, best);
    else
        snprintf(out, cap, "%s", best);
    return out;
}

/* "unknown key", with the closest valid key when one is clearly meant. */
static sluice_err unknown_key(ctx_t *c, const node_t *k, const char *path, const char *prefix)
{
    char near[256];

    if (near_key(prefix, k->str, near, sizeof(near)))
        return cfg_bad(c, k, path, "unknown key (did you mean %s%s%s?)", c->scope ? c->scope : "",
                       c->scope ? "." : "", near);
    return cfg_bad(c, k, path, "unknown key");
}

sluice_err cfg_walk_map(ctx_t *c, const node_t *n, const char *prefix)
{
    size_t i;
    sluice_err rc;
    char path[256];
    const field_t *f;
    bool failed = false;

    if (n->kind != N_MAP)
        return cfg_bad(c, n, prefix[0] ? prefix : "(top level)", "expected a mapping, found %s",
                       cfg_kind_word(n));
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        if (prefix[0])
            snprintf(path, sizeof(path), "%s.%.128s", prefix, k->str);
        else
            snprintf(path, sizeof(path), "%.128s", k->str);
        if ((f = cfg_find_field(path)) != NULL)
            rc = cfg_apply(c, f, v);
        else if (strcmp(path, "clusters") == 0 || strcmp(path, "tenants") == 0)
            rc = SLUICE_OK; /* config_clusters.c, config_tenants.c */
        else if (cfg_is_section(path) && cfg_is_null(v))
            rc = SLUICE_OK;
        else if (cfg_is_section(path))
            rc = cfg_walk_map(c, v, path);
        else if (strcmp(path, "parent") == 0)
            rc = walk_parent(c, v);
        else
            rc = unknown_key(c, k, path, prefix);
        if (cfg_go_on(c, rc))
            failed = true; /* the next key: every error of the file in one run */
        else if (rc != SLUICE_OK)
            return rc;
    }
    return failed ? SLUICE_ECONFIG : SLUICE_OK;
}

/* ------------------------------------------- defaults, environment, flags */

static sluice_err set_defaults(sluice_config_t *cfg, sluice_error_t *err)
{
    if (!(cfg->priv = calloc(1, sizeof(*cfg->priv))) || !(cfg->site_name = cfg_dup("default")) ||
        !(cfg->job_name_prefix = cfg_dup("sluice")) || !(cfg->rest.api_version = cfg_dup("auto")))
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    cfg->rest.jwt_lifespan_s = 1800;
    cfg->rest.tls_verify = true;
    cfg->launcher.internal_port = 8102;
    cfg->launcher.poll_interval_s = 0;
    cfg->launcher.submit_timeout_s = 30;
    cfg->launcher.query_timeout_s = 10;
    cfg->launcher.cancel_timeout_s = 10;
    cfg->launcher.pending_timeout_s = 600;
    cfg->launcher.fail_unschedulable = true;
    cfg->launcher.port_range_lo = 29400;
    cfg->launcher.port_range_hi = 30399;
    cfg->accounting.miss_budget = 5;
    cfg->accounting.miss_spacing_s = 6;
    cfg->submit.absence_delay_s = 60;
    cfg->submit.absence_lookups = 3;
    cfg->submit.absence_spacing_s = 10;
    cfg->server.socket_mode = 0660;
    cfg->server.threads = 4;
    cfg->server.conn_timeout_s = 30;
    cfg->server.max_connections = 4096;
    cfg->server.head_timeout_s = 10;
    cfg->retention.launches_max_age_s = 2592000;
    cfg->retention.logs_max_age_s = 7776000;
    cfg->submit.in_flight = 4;
    cfg->submit.per_sec = 200;
    cfg->poll.rpc_per_sec = 50;
    cfg->webhooks.queue_max = 10000;
    cfg->webhooks.timeout_s = 10;
    cfg->webhooks.retry_initial_s = 5;
    cfg->webhooks.retry_max_s = 3600;
    cfg->webhooks.max_attempts = 20;
    cfg->store.log_max_bytes = 8L << 20;
    cfg->ha.lease_ms = 8000;
    cfg->ha.renew_ms = 2000;
    return SLUICE_OK;
}

sluice_err cfg_new(sluice_config_t **out, sluice_error_t *err)
{
    sluice_config_t *cfg = calloc(1, sizeof(*cfg));
    sluice_err rc;

    if (!cfg)
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    if ((rc = set_defaults(cfg, err)) != SLUICE_OK) {
        /* Only what set_defaults() allocates (sluice_config_free() is
         * config.c's, which calls this file). */
        free(cfg->site_name);
        free(cfg->job_name_prefix);
        free(cfg->rest.api_version);
        free(cfg->priv);
        free(cfg);
        return rc;
    }
    *out = cfg;
    return SLUICE_OK;
}

static const char *lookup_env(const sluice_config_opts_t *o, const char *name)
{
    size_t i, len = strlen(name);
    const char *v = NULL;

    if (o->envp) {
        for (i = 0; o->envp[i]; i++) {
            if (strncmp(o->envp[i], name, len) == 0 && o->envp[i][len] == '=')
                v = o->envp[i] + len + 1;
        }
    } else if (o->getenv_fn) {
        v = o->getenv_fn(name, o->getenv_arg);
    }
    return v && v[0] ? v : NULL;
}

static sluice_err apply_string(ctx_t *c, const field_t *f, const char *value)
{
    node_t n;

    memset(&n, 0, sizeof(n));
    n.kind = N_SCALAR;
    n.plain = true;
    n.str = (char *)(uintptr_t)value;
    if (!cfg_kind_settable(f->kind))
        return cfg_bad(c, NULL, f->path,
                       "cannot be set from the environment or --set: set in the site file only");
    return cfg_apply(c, f, &n);
}

/* The executables from SLUICE_JOB_LAUNCHER_EXECUTABLES_<NAME> (the names
 * are a fixed set, so each has a variable; a gpu_series name has no
 * spelling as a variable name, so its entries are the file's and --set's). */
static sluice_err apply_env_execs(ctx_t *c, const sluice_config_opts_t *o, bool *failed)
{
    static const char *const names[] = {"srun",   "enroot", "apptainer", "singularity",
                                        "sbatch", "squeue", "sacct",     "scancel"};
    const field_t *f = cfg_find_field("job_launcher.executables");
    char key[64], name[96];
    const char *v;
    size_t i;
    sluice_err rc;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(key, sizeof(key), "job_launcher.executables.%s", names[i]);
        cfg_env_name(key, name, sizeof(name));
        if ((v = lookup_env(o, name)) == NULL)
            continue;
        c->src = SLUICE_SRC_ENV;
        c->origin = name;
        rc = cfg_set_entry(c, f, key, v);
        c->origin = NULL;
        if (cfg_go_on(c, rc))
            *failed = true;
        else if (rc != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

sluice_err cfg_apply_env(ctx_t *c, const sluice_config_opts_t *o, bool site_wide_only)
{
    size_t i;
    sluice_err rc;
    char name[160];
    const char *v;
    bool failed = false;

    v = lookup_env(o, "FORGE_DEFAULT_FLEET_KIND");
    if (v && strcmp(v, "slurm") != 0) {
        c->src = SLUICE_SRC_ENV;
        if ((rc = cfg_warn(c, NULL, "FORGE_DEFAULT_FLEET_KIND",
                           "is not \"slurm\"; sluice only drives Slurm")) != SLUICE_OK)
            return rc;
    }
    for (i = 0; i < CFG_N_FIELDS; i++) {
        const field_t *f = &cfg_fields[i];
        if (f->kind == K_ARGV) { /* a command: refused aloud, never run from the environment */
            cfg_env_name(f->path, name, sizeof(name));
            if (lookup_env(o, name) != NULL) {
                c->src = SLUICE_SRC_ENV;
                c->origin = name;
                rc = apply_string(c, f, "");
                c->origin = NULL;
                if (!cfg_go_on(c, rc))
                    return rc;
                failed = true;
            }
        }
        if (!cfg_kind_settable(f->kind) || (site_wide_only && cfg_field_per_cluster(f)))
            continue;
        /* FORGE_* first, then SLUICE_* so that sluice's own name wins. */
        if (f->forge && (v = lookup_env(o, f->forge)) != NULL) {
            c->src = SLUICE_SRC_ENV;
            c->origin = f->forge;
            rc = apply_string(c, f, v);
            if (cfg_go_on(c, rc))
                failed = true;
            else if (rc != SLUICE_OK)
                return rc;
        }
        cfg_env_name(f->path, name, sizeof(name));
        if ((v = lookup_env(o, name)) != NULL) {
            c->src = SLUICE_SRC_ENV;
            c->origin = name;
            rc = apply_string(c, f, v);
            if (cfg_go_on(c, rc))
                failed = true;
            else if (rc != SLUICE_OK)
                return rc;
        }
    }
    c->origin = NULL;
    if ((rc = apply_env_execs(c, o, &failed)) != SLUICE_OK)
        return rc;
    return failed ? SLUICE_ECONFIG : SLUICE_OK;
}

/* The keys --set refuses because the file alone sets them. */
static bool file_only_key(const char *key)
{
    static const char *const tops[] = {"tenants", "clusters", "parent"};
    size_t i, len;

    for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
        len = strlen(tops[i]);
        if (strncmp(key, tops[i], len) == 0 &&
            (key[len] == '\0' || key[len] == '.' || key[len] == '['))
            return true;
    }
    return false;
}

/* One --set KEY=VALUE. */
static sluice_err apply_flag(ctx_t *c, const char *s, bool site_wide_only)
{
    const char *eq = s ? strchr(s, '=') : NULL;
    const field_t *f;
    size_t len, j;
    char key[256], text[512];
    suggest_t sg;

    if (!eq || eq == s || (len = (size_t)(eq - s)) >= sizeof(key)) {
        snprintf(text, sizeof(text), "--set '%.64s': expected key=value", s ? s : "");
        return cfg_fail(c, "", text);
    }
    memcpy(key, s, len);
    key[len] = '\0';
    if ((f = cfg_find_field(key)) != NULL) {
        if (site_wide_only && cfg_field_per_cluster(f))
            return SLUICE_OK;
        return apply_string(c, f, eq + 1);
    }
    if ((f = cfg_entry_field(key)) != NULL) {
        if (site_wide_only && cfg_field_per_cluster(f))
            return SLUICE_OK;
        return cfg_set_entry(c, f, key, eq + 1);
    }
    if (file_only_key(key)) {
        snprintf(text, sizeof(text),
                 "--set %.128s: cannot be set from the environment or --set: set in the site file "
                 "only",
                 key);
        return cfg_fail(c, key, text);
    }
    suggest_init(&sg, key);
    for (j = 0; j < CFG_N_FIELDS; j++)
        suggest_add(&sg, cfg_fields[j].path);
    if (suggest_best(&sg))
        snprintf(text, sizeof(text), "--set %.128s: unknown key (did you mean %s?)", key,
                 suggest_best(&sg));
    else
        snprintf(text, sizeof(text), "--set %.128s: unknown key", key);
    return cfg_fail(c, key, text);
}

sluice_err cfg_apply_flags(ctx_t *c, const sluice_config_opts_t *o, bool site_wide_only)
{
    size_t i;
    sluice_err rc;
    bool failed = false;

    c->src = SLUICE_SRC_FLAG;
    c->origin = NULL;
    for (i = 0; i < o->n_overrides; i++) {
        rc = apply_flag(c, o->overrides[i], site_wide_only);
        if (cfg_go_on(c, rc))
            failed = true;
        else if (rc != SLUICE_OK)
            return rc;
    }
    return failed ? SLUICE_ECONFIG : SLUICE_OK;
}
