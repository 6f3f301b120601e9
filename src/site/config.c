/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - site YAML + environment + flags -> validated site model, and the
 * study runtime file.
 *
 * The YAML text is first turned into a small tree (scalars, mappings,
 * sequences with their line and column), refusing aliases, duplicate keys,
 * NUL bytes, several documents and trees that are too deep or too large.
 * The tree is then walked against one table of fields (dotted path, kind,
 * place in sluice_config_t, limits, FORGE_* variable).  Environment values
 * and --set overrides are applied through the same setters as scalars, so
 * every layer is validated the same way.  Cross-field checks run last.
 *
 * Notes:
 * - This is the only file that includes <yaml.h>.
 * - Everything is built into a fresh object; *out is set only on success,
 *   so a failed load never half-applies anything.
 * - Secret material is never read here: only paths to it are kept.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include <sluice/config.h>

#include "base/buf.h"

#define CFG_MAX_FILE (1024 * 1024)
#define CFG_MAX_DEPTH 32
#define CFG_MAX_NODES 20000

/* ------------------------------------------------------------------ tree */

typedef enum { N_SCALAR, N_MAP, N_SEQ } nkind_t;

typedef struct node {
    nkind_t kind;
    char *str;  /* scalar text (NUL-free) */
    bool plain; /* plain style, no explicit tag: may be a number/bool/null */
    size_t line, col;
    struct node **kids; /* map: key, value, key, value ... */
    size_t n;
} node_t;

static void node_free(node_t *n)
{
    size_t i;

    if (!n)
        return;
    for (i = 0; i < n->n; i++)
        node_free(n->kids[i]);
    free(n->kids);
    free(n->str);
    free(n);
}

static char *dupn(const char *s, size_t len)
{
    char *d = malloc(len + 1);

    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static char *dup(const char *s)
{
    return s ? dupn(s, strlen(s)) : NULL;
}

typedef struct {
    yaml_parser_t parser;
    const char *file;
    size_t count;
    sluice_error_t *err;
} pctx_t;

static sluice_err perr(pctx_t *p, size_t line, size_t col, const char *msg)
{
    return sluice_errorf(p->err, SLUICE_ECONFIG, "%s:%zu:%zu: %s", p->file, line + 1, col + 1, msg);
}

static sluice_err next_event(pctx_t *p, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&p->parser, ev)) {
        return sluice_errorf(p->err, SLUICE_ECONFIG, "%s:%zu:%zu: invalid YAML: %s", p->file,
                             p->parser.problem_mark.line + 1, p->parser.problem_mark.column + 1,
                             p->parser.problem ? p->parser.problem : "syntax error");
    }
    return SLUICE_OK;
}

static sluice_err push_kid(node_t *parent, node_t *kid)
{
    node_t **k = realloc(parent->kids, (parent->n + 1) * sizeof(*k));

    if (!k)
        return SLUICE_ENOMEM;
    parent->kids = k;
    parent->kids[parent->n++] = kid;
    return SLUICE_OK;
}

static sluice_err parse_node(pctx_t *p, yaml_event_t *ev, size_t depth, node_t **out)
{
    node_t *n = NULL;
    node_t *kid = NULL;
    yaml_event_t child;
    yaml_event_type_t end;
    sluice_err rc = SLUICE_OK;
    size_t i;

    if (++p->count > CFG_MAX_NODES)
        return perr(p, ev->start_mark.line, ev->start_mark.column,
                    "document too large (more than 20000 nodes)");
    if (depth > CFG_MAX_DEPTH)
        return perr(p, ev->start_mark.line, ev->start_mark.column,
                    "document nested too deeply (more than 32 levels)");
    if (ev->type == YAML_ALIAS_EVENT)
        return perr(p, ev->start_mark.line, ev->start_mark.column, "YAML aliases are not allowed");
    n = calloc(1, sizeof(*n));
    if (!n)
        return sluice_errorf(p->err, SLUICE_ENOMEM, "out of memory");
    n->line = ev->start_mark.line;
    n->col = ev->start_mark.column;
    if (ev->type == YAML_SCALAR_EVENT) {
        n->kind = N_SCALAR;
        if (memchr(ev->data.scalar.value, 0, ev->data.scalar.length)) {
            rc = perr(p, n->line, n->col, "NUL bytes are not allowed");
            goto out;
        }
        n->str = dupn((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (!n->str) {
            rc = sluice_errorf(p->err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        n->plain =
            ev->data.scalar.plain_implicit && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return SLUICE_OK;
    }
    if (ev->type == YAML_SEQUENCE_START_EVENT) {
        n->kind = N_SEQ;
        end = YAML_SEQUENCE_END_EVENT;
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        n->kind = N_MAP;
        end = YAML_MAPPING_END_EVENT;
    } else {
        rc = perr(p, n->line, n->col, "unexpected YAML event");
        goto out;
    }
    for (;;) {
        if ((rc = next_event(p, &child)) != SLUICE_OK)
            goto out;
        if (child.type == end) {
            yaml_event_delete(&child);
            break;
        }
        rc = parse_node(p, &child, depth + 1, &kid);
        yaml_event_delete(&child);
        if (rc != SLUICE_OK)
            goto out;
        if (n->kind == N_MAP && n->n % 2 == 0) {
            if (kid->kind != N_SCALAR) {
                rc = perr(p, kid->line, kid->col, "mapping keys must be scalars");
                goto out;
            }
            for (i = 0; i < n->n; i += 2) {
                if (strcmp(n->kids[i]->str, kid->str) == 0) {
                    char msg[200];
                    snprintf(msg, sizeof(msg), "duplicate key '%.64s' (first at line %zu)",
                             kid->str, n->kids[i]->line + 1);
                    rc = perr(p, kid->line, kid->col, msg);
                    goto out;
                }
            }
        }
        if (push_kid(n, kid) != SLUICE_OK) {
            rc = sluice_errorf(p->err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        kid = NULL;
    }
    *out = n;
    n = NULL;
out:
    node_free(kid);
    node_free(n);
    return rc;
}

/* Parse YAML text into a tree; an empty document gives *out == NULL. */
static sluice_err
parse_yaml(const char *file, const char *text, size_t len, node_t **out, sluice_error_t *err)
{
    pctx_t p;
    yaml_event_t ev;
    node_t *root = NULL;
    sluice_err rc = SLUICE_OK;
    const char *nul;
    bool have_ev = false;

    memset(&p, 0, sizeof(p));
    p.file = file;
    p.err = err;
    nul = memchr(text, 0, len);
    if (nul) {
        size_t line = 0, col = 0;
        const char *c;
        for (c = text; c < nul; c++) {
            if (*c == '\n') {
                line++;
                col = 0;
            } else {
                col++;
            }
        }
        return perr(&p, line, col, "NUL bytes are not allowed");
    }
    if (!yaml_parser_initialize(&p.parser))
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    yaml_parser_set_input_string(&p.parser, (const unsigned char *)text, len);
    for (;;) {
        if ((rc = next_event(&p, &ev)) != SLUICE_OK)
            goto out;
        have_ev = true;
        if (ev.type == YAML_STREAM_END_EVENT)
            break;
        if (ev.type == YAML_DOCUMENT_START_EVENT && root) {
            rc = perr(&p, ev.start_mark.line, ev.start_mark.column,
                      "only one YAML document is allowed");
            goto out;
        }
        if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
            ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_ALIAS_EVENT) {
            if ((rc = parse_node(&p, &ev, 0, &root)) != SLUICE_OK)
                goto out;
        }
        yaml_event_delete(&ev);
        have_ev = false;
    }
    *out = root;
    root = NULL;
out:
    if (have_ev)
        yaml_event_delete(&ev);
    node_free(root);
    yaml_parser_delete(&p.parser);
    return rc;
}

static sluice_err read_file(const char *path, char **text, size_t *len, sluice_error_t *err)
{
    FILE *f = NULL;
    buf_t b = BUF_INIT;
    char chunk[8192];
    size_t got;
    sluice_err rc = SLUICE_OK;

    buf_init(&b, CFG_MAX_FILE);
    f = fopen(path, "rb");
    if (!f) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: cannot open: %s", path, strerror(errno));
        goto out;
    }
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (buf_append(&b, chunk, got) != SLUICE_OK) {
            rc = sluice_errorf(err, SLUICE_ECONFIG, "%s: file larger than 1 MiB", path);
            goto out;
        }
    }
    if (ferror(f)) {
        rc = sluice_errorf(err, SLUICE_EIO, "%s: read error", path);
        goto out;
    }
    *len = b.len;
    *text = buf_take(&b);
    if (!*text)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
out:
    if (f)
        fclose(f);
    buf_free(&b);
    return rc;
}

/* ------------------------------------------------------------ the fields */

typedef enum {
    K_STR,       /* any single-line string */
    K_NAME,      /* [A-Za-z0-9._-]{1,64} */
    K_PREFIX,    /* job name prefix */
    K_HOST,      /* host name */
    K_ABS,       /* absolute path */
    K_URL,       /* rest.url */
    K_APIVER,    /* auto | v0.0.38 | v0.0.40..45 */
    K_SANDBOX,   /* enroot-pyxis | pyxis | apptainer | none */
    K_ICS,       /* mtls | clear (accepted, not used) */
    K_RUNTIME,   /* "slurm" */
    K_BOOL,      /* true/false */
    K_INT,       /* integer in [min,max] */
    K_DUR,       /* seconds or "30s"/"5m"/"2h"/"1d" */
    K_STIME,     /* Slurm time */
    K_PORTRANGE, /* "a-b" or [a, b] */
    K_LINES,     /* block string or list of lines */
    K_LIST,      /* list of strings */
    K_ENVLIST,   /* list of variable names */
    K_PROFILES,  /* list of sandbox names */
    K_SERIES,    /* gpu_series map */
    K_EXECS,     /* executables map */
    K_MODE,      /* octal file mode, never world-accessible */
    K_JOBPATH,   /* PATH of the job: absolute directories joined by ':' */
} kind_t;

typedef struct {
    const char *path;
    kind_t kind;
    size_t off;
    long min, max;
    const char *forge; /* FORGE_* variable, or NULL */
} field_t;

#define F(p, k, m, lo, hi, fe)                                                                     \
    {                                                                                              \
        p, k, offsetof(sluice_config_t, m), lo, hi, fe                                             \
    }

static const field_t fields[] = {
    F("runtime", K_RUNTIME, site_name, 0, 0, NULL),
    F("site.name", K_NAME, site_name, 0, 0, NULL),
    F("site.job_name_prefix", K_PREFIX, job_name_prefix, 0, 0, NULL),
    F("rest.url", K_URL, rest.url, 0, 0, "FORGE_SLURM_REST_URL"),
    F("rest.api_version", K_APIVER, rest.api_version, 0, 0, "FORGE_SLURM_REST_API_VERSION"),
    F("rest.user", K_STR, rest.user, 0, 0, "FORGE_SLURM_REST_USER"),
    F("rest.jwt_file", K_ABS, rest.jwt_file, 0, 0, "FORGE_SLURM_JWT_FILE"),
    F("rest.jwt_key_file", K_ABS, rest.jwt_key_file, 0, 0, NULL),
    F("rest.jwt_rs256_key_file", K_ABS, rest.jwt_rs256_key_file, 0, 0, NULL),
    F("rest.jwt_lifespan", K_DUR, rest.jwt_lifespan_s, 60, 86400, NULL),
    F("rest.tls_verify", K_BOOL, rest.tls_verify, 0, 0, "FORGE_SLURM_TLS_VERIFY"),
    F("rest.ca_file", K_ABS, rest.ca_file, 0, 0, NULL),
    F("rest.ca_path", K_ABS, rest.ca_path, 0, 0, NULL),
    F("rest.pinned_pubkey", K_STR, rest.pinned_pubkey, 0, 0, NULL),
    F("rest.client_cert", K_ABS, rest.client_cert, 0, 0, NULL),
    F("rest.client_key", K_ABS, rest.client_key, 0, 0, NULL),
    F("rest.allow_insecure_http", K_BOOL, rest.allow_insecure_http, 0, 0, NULL),
    F("rest.strict_permissions", K_BOOL, rest.strict_permissions, 0, 0, NULL),
    F("storage.root", K_ABS, storage.root, 0, 0, "FORGE_STORAGE_ROOT"),
    F("storage.cluster_root", K_ABS, storage.cluster_root, 0, 0, "FORGE_SLURM_STORAGE_ROOT"),
    F("job_launcher.sandbox", K_SANDBOX, launcher.sandbox, 0, 0, "FORGE_SLURM_RUNTIME_PROFILE"),
    F("job_launcher.image", K_ABS, launcher.image, 0, 0, NULL),
    F("job_launcher.python_path", K_ABS, launcher.python_path, 0, 0, NULL),
    F("job_launcher.parent_host", K_HOST, launcher.parent_host, 0, 0, NULL),
    F("job_launcher.sbatch_directives.partition",
      K_STR,
      launcher.sbatch.partition,
      0,
      0,
      "FORGE_SLURM_PARTITION"),
    F("job_launcher.sbatch_directives.account", K_STR, launcher.sbatch.account, 0, 0, NULL),
    F("job_launcher.sbatch_directives.qos", K_STR, launcher.sbatch.qos, 0, 0, NULL),
    F("job_launcher.sbatch_directives.time", K_STIME, launcher.sbatch.time, 0, 0, NULL),
    F("job_launcher.sbatch_directives.constraint", K_STR, launcher.sbatch.constraint, 0, 0, NULL),
    F("job_launcher.sbatch_directives.reservation", K_STR, launcher.sbatch.reservation, 0, 0, NULL),
    F("job_launcher.setup", K_LINES, launcher.setup, 0, 0, NULL),
    F("job_launcher.forward_env", K_ENVLIST, launcher.forward_env, 0, 0, NULL),
    F("job_launcher.executables", K_EXECS, launcher.executables, 0, 0, NULL),
    F("job_launcher.job_path", K_JOBPATH, launcher.job_path, 0, 0, NULL),
    F("job_launcher.internal_port", K_INT, launcher.internal_port, 1, 65535, NULL),
    F("job_launcher.poll_interval", K_DUR, launcher.poll_interval_s, 1, 3600, NULL),
    F("job_launcher.submit_timeout", K_DUR, launcher.submit_timeout_s, 1, 3600, NULL),
    F("job_launcher.query_timeout", K_DUR, launcher.query_timeout_s, 1, 3600, NULL),
    F("job_launcher.cancel_timeout", K_DUR, launcher.cancel_timeout_s, 1, 3600, NULL),
    F("job_launcher.pending_timeout", K_DUR, launcher.pending_timeout_s, 1, 30 * 86400, NULL),
    F("job_launcher.fail_unschedulable", K_BOOL, launcher.fail_unschedulable, 0, 0, NULL),
    F("job_launcher.unschedulable_reasons", K_LIST, launcher.unschedulable_reasons, 0, 0, NULL),
    F("job_launcher.multi_node_port_range", K_PORTRANGE, launcher.port_range_lo, 1, 65535, NULL),
    F("job_launcher.internal_connection_security",
      K_ICS,
      launcher.internal_connection_security,
      0,
      0,
      NULL),
    F("gpu_series", K_SERIES, gpu_series, 0, 0, NULL),
    F("policy.allowed_profiles", K_PROFILES, policy.allowed_profiles, 0, 0, NULL),
    F("policy.allowed_partitions", K_LIST, policy.allowed_partitions, 0, 0, NULL),
    F("policy.allowed_accounts", K_LIST, policy.allowed_accounts, 0, 0, NULL),
    F("policy.allowed_qos", K_LIST, policy.allowed_qos, 0, 0, NULL),
    F("policy.allow_requeue", K_BOOL, policy.allow_requeue, 0, 0, NULL),
    F("policy.max_time_minutes", K_INT, policy.max_time_minutes, 1, 525600 * 10, NULL),
    F("accounting.miss_budget", K_INT, accounting.miss_budget, 1, 1000, NULL),
    F("accounting.miss_spacing_s", K_DUR, accounting.miss_spacing_s, 1, 3600, NULL),
    F("submit.absence_delay_s", K_DUR, submit.absence_delay_s, 1, 86400, NULL),
    F("submit.absence_lookups", K_INT, submit.absence_lookups, 1, 100, NULL),
    F("submit.absence_spacing_s", K_DUR, submit.absence_spacing_s, 1, 3600, NULL),
    F("server.listen", K_HOST, server.listen, 0, 0, NULL),
    F("server.tokens_file", K_ABS, server.tokens_file, 0, 0, NULL),
    F("server.socket", K_ABS, server.socket, 0, 0, NULL),
    F("server.socket_mode", K_MODE, server.socket_mode, 0, 0770, NULL),
    F("server.socket_group", K_NAME, server.socket_group, 0, 0, NULL),
    F("server.tls_cert", K_ABS, server.tls_cert, 0, 0, NULL),
    F("server.tls_key", K_ABS, server.tls_key, 0, 0, NULL),
    F("server.threads", K_INT, server.threads, 1, 64, NULL),
    F("server.conn_timeout_s", K_DUR, server.conn_timeout_s, 1, 3600, NULL),
    F("server.max_connections", K_INT, server.max_connections, 16, 1000000, NULL),
    F("retention.launches_max_age_s",
      K_DUR,
      retention.launches_max_age_s,
      0,
      100L * 365 * 86400,
      NULL),
    F("retention.logs_max_age_s", K_DUR, retention.logs_max_age_s, 0, 100L * 365 * 86400, NULL),
    F("submit.in_flight", K_INT, submit.in_flight, 1, 16, NULL),
    F("submit.per_sec", K_INT, submit.per_sec, 1, 100000, NULL),
    F("poll.rpc_per_sec", K_INT, poll.rpc_per_sec, 1, 100000, NULL),
};

#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

struct sluice_config_priv {
    unsigned char src[N_FIELDS];
    char *origin[N_FIELDS]; /* env variable name for SLUICE_SRC_ENV */
    size_t line[N_FIELDS], col[N_FIELDS];
};

static const field_t *find_field(const char *path)
{
    size_t i;

    for (i = 0; i < N_FIELDS; i++) {
        if (strcmp(fields[i].path, path) == 0)
            return &fields[i];
    }
    return NULL;
}

static bool is_section(const char *path)
{
    size_t i, len = strlen(path);

    for (i = 0; i < N_FIELDS; i++) {
        if (strncmp(fields[i].path, path, len) == 0 && fields[i].path[len] == '.')
            return true;
    }
    return false;
}

/* ------------------------------------------------------- walker context */

typedef struct {
    const char *file;
    sluice_config_t *cfg;
    sluice_config_source_t src;
    const char *origin; /* env var name or NULL */
    sluice_error_t *err;
} ctx_t;

static sluice_err bad(ctx_t *c, const node_t *n, const char *key, const char *fmt, ...)
    SLUICE_PRINTF(4, 5);

/* "<file>:<line>:<col>: <key>: <message>" (or "env NAME: ..." / "--set: ..."). */
static sluice_err bad(ctx_t *c, const node_t *n, const char *key, const char *fmt, ...)
{
    char msg[384];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->src == SLUICE_SRC_ENV)
        return sluice_errorf(c->err, SLUICE_ECONFIG, "environment %s: %s: %s", c->origin, key, msg);
    if (c->src == SLUICE_SRC_FLAG)
        return sluice_errorf(c->err, SLUICE_ECONFIG, "--set %s: %s", key, msg);
    if (!n)
        return sluice_errorf(c->err, SLUICE_ECONFIG, "%s: %s: %s", c->file, key, msg);
    return sluice_errorf(c->err, SLUICE_ECONFIG, "%s:%zu:%zu: %s: %s", c->file, n->line + 1,
                         n->col + 1, key, msg);
}

static const char *kind_word(const node_t *n)
{
    if (n->kind == N_MAP)
        return "a mapping";
    if (n->kind == N_SEQ)
        return "a list";
    return "a scalar";
}

static bool is_null(const node_t *n)
{
    return n->kind == N_SCALAR && n->plain &&
           (n->str[0] == '\0' || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
            strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0);
}

static bool is_nonfinite(const char *s)
{
    const char *p = s;

    if (*p == '+' || *p == '-')
        p++;
    return strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0 ||
           strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0 ||
           strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0 || strcasecmp(s, "nan") == 0;
}

static bool parse_long(const char *s, long *out)
{
    char *end = NULL;
    long v;

    if (!s[0] || isspace((unsigned char)s[0]))
        return false;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || !end || *end)
        return false;
    *out = v;
    return true;
}

static bool env_name_ok(const char *s)
{
    size_t i;

    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (i = 1; s[i]; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return false;
    }
    return i <= 128;
}

static bool name_ok(const char *s)
{
    size_t i;

    if (!s[0] || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (i = 0; s[i]; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    }
    return i <= 64;
}

static bool oneline_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    }
    return i > 0 && i <= 4096;
}

static bool bool_word(const char *s, bool *out)
{
    static const char *yes[] = {"true", "yes", "on", "1"};
    static const char *no[] = {"false", "no", "off", "0"};
    size_t i;

    for (i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

static bool sandbox_word(const char *s, sluice_sandbox_t *out)
{
    if (strcmp(s, "enroot-pyxis") == 0 || strcmp(s, "pyxis") == 0)
        *out = SLUICE_SANDBOX_ENROOT_PYXIS;
    else if (strcmp(s, "apptainer") == 0)
        *out = SLUICE_SANDBOX_APPTAINER;
    else if (strcmp(s, "none") == 0)
        *out = SLUICE_SANDBOX_NONE;
    else
        return false;
    return true;
}

/* Seconds from "90", "30s", "5m", "2h", "1d". */
static bool duration_word(const char *s, long *out)
{
    char *end = NULL;
    long v, mul = 1;

    if (!isdigit((unsigned char)s[0]))
        return false;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || v < 0)
        return false;
    if (*end == '\0' || strcmp(end, "s") == 0)
        mul = 1;
    else if (strcmp(end, "m") == 0)
        mul = 60;
    else if (strcmp(end, "h") == 0)
        mul = 3600;
    else if (strcmp(end, "d") == 0)
        mul = 86400;
    else
        return false;
    if (v > LONG_MAX / mul)
        return false;
    *out = v * mul;
    return true;
}

static bool digits(const char *s, size_t n, long *out)
{
    long v = 0;
    size_t i;

    if (n == 0 || n > 6)
        return false;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Slurm --time: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S" -> minutes
 * (seconds round up, as Slurm does). */
static bool slurm_time_word(const char *s, long *minutes)
{
    long d = 0, part[3] = {0, 0, 0};
    size_t np = 0, len;
    const char *dash = strchr(s, '-');
    const char *p = s, *colon;
    bool has_day = dash != NULL;

    if (has_day) {
        if (!digits(s, (size_t)(dash - s), &d))
            return false;
        p = dash + 1;
    }
    for (;;) {
        colon = strchr(p, ':');
        len = colon ? (size_t)(colon - p) : strlen(p);
        if (np == 3 || !digits(p, len, &part[np]))
            return false;
        np++;
        if (!colon)
            break;
        p = colon + 1;
    }
    if (has_day) {
        /* D-H, D-H:M, D-H:M:S */
        if (part[0] > 23 || part[1] > 59 || part[2] > 59)
            return false;
        *minutes = d * 1440 + part[0] * 60 + part[1] + (part[2] > 0);
        return true;
    }
    if (np == 1) {
        *minutes = part[0];
    } else if (np == 2) {
        if (part[1] > 59)
            return false;
        *minutes = part[0] + (part[1] > 0);
    } else {
        if (part[1] > 59 || part[2] > 59)
            return false;
        *minutes = part[0] * 60 + part[1] + (part[2] > 0);
    }
    return true;
}

static bool is_loopback_host(const char *h, size_t n)
{
    return (n == 9 && strncmp(h, "localhost", 9) == 0) || (n >= 4 && strncmp(h, "127.", 4) == 0) ||
           (n == 5 && strncmp(h, "[::1]", 5) == 0);
}

/* Host part of an http(s) URL (after "://", before port/path). */
static void url_host(const char *url, const char **host, size_t *n)
{
    const char *h = strstr(url, "://") + 3;
    const char *at, *end;

    end = h + strcspn(h, "/?#");
    at = memchr(h, '@', (size_t)(end - h));
    if (at)
        h = at + 1;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(end - h));
        *host = h;
        *n = rb ? (size_t)(rb - h) + 1 : (size_t)(end - h);
        return;
    }
    *host = h;
    *n = strcspn(h, ":/?#");
}

static void strlist_clear(sluice_strlist_t *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

static sluice_err strlist_push(sluice_strlist_t *l, const char *s, size_t len)
{
    char **items;
    char *copy = dupn(s, len);

    if (!copy)
        return SLUICE_ENOMEM;
    items = realloc(l->items, (l->n + 1) * sizeof(*items));
    if (!items) {
        free(copy);
        return SLUICE_ENOMEM;
    }
    l->items = items;
    l->items[l->n++] = copy;
    return SLUICE_OK;
}

static sluice_err warn(ctx_t *c, const node_t *n, const char *key, const char *msg)
{
    char line[512];

    if (n && c->src == SLUICE_SRC_FILE)
        snprintf(line, sizeof(line), "%s:%zu:%zu: %s: %s", c->file, n->line + 1, n->col + 1, key,
                 msg);
    else
        snprintf(line, sizeof(line), "%s: %s", key, msg);
    if (strlist_push(&c->cfg->warnings, line, strlen(line)) != SLUICE_OK)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    return SLUICE_OK;
}

static sluice_err set_str(ctx_t *c, char **slot, const char *v)
{
    char *copy = dup(v);

    if (!copy)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    free(*slot);
    *slot = copy;
    return SLUICE_OK;
}

/* A list from a sequence of scalars, or (env/flag only) a comma-separated
 * scalar.  Each item is checked by `ok` when given. */
static sluice_err get_list(ctx_t *c,
                           const node_t *n,
                           const char *key,
                           bool (*ok)(const char *),
                           const char *what,
                           sluice_strlist_t *out)
{
    sluice_strlist_t l = {NULL, 0};
    sluice_err rc = SLUICE_OK;
    size_t i;

    if (n->kind == N_SCALAR && c->src != SLUICE_SRC_FILE) {
        const char *p = n->str;
        while (*p) {
            size_t len = strcspn(p, ",");
            char item[4097];
            if (len == 0 || len >= sizeof(item)) {
                rc = bad(c, n, key, "expected a comma-separated list of %s", what);
                goto out;
            }
            memcpy(item, p, len);
            item[len] = '\0';
            if (ok && !ok(item)) {
                rc = bad(c, n, key, "'%.64s': expected %s", item, what);
                goto out;
            }
            if (strlist_push(&l, p, len) != SLUICE_OK) {
                rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
                goto out;
            }
            p += len;
            if (*p == ',')
                p++;
        }
    } else if (n->kind == N_SEQ) {
        for (i = 0; i < n->n; i++) {
            const node_t *it = n->kids[i];
            if (it->kind != N_SCALAR || is_null(it)) {
                rc = bad(c, it, key, "expected a list of %s, found %s", what, kind_word(it));
                goto out;
            }
            if (ok ? !ok(it->str) : !oneline_ok(it->str)) {
                rc = bad(c, it, key, "'%.64s': expected %s", it->str, what);
                goto out;
            }
            if (strlist_push(&l, it->str, strlen(it->str)) != SLUICE_OK) {
                rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
                goto out;
            }
        }
    } else {
        rc = bad(c, n, key, "expected a list of %s, found %s", what, kind_word(n));
        goto out;
    }
    strlist_clear(out);
    *out = l;
    l.items = NULL;
    l.n = 0;
out:
    strlist_clear(&l);
    return rc;
}

static bool profile_ok(const char *s)
{
    sluice_sandbox_t sb;

    return sandbox_word(s, &sb);
}

static bool list_item_ok(const char *s)
{
    return oneline_ok(s) && !strchr(s, ',');
}

/* One absolute, normalised directory or file path of `len` bytes that is
 * safe inside PATH and inside a quoted shell word: no ':', no quote, '$',
 * '`', '\\' or control byte, no '.', '..' or empty component, no trailing
 * '/' (except "/" itself). */
static bool path_dir_ok(const char *s, size_t len)
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

/* job_launcher.job_path: absolute directories joined by ':', none empty. */
static bool job_path_ok(const char *s)
{
    const char *p = s;

    if (!s[0] || strlen(s) > 4096)
        return false;
    for (;;) {
        size_t len = strcspn(p, ":");
        if (!path_dir_ok(p, len))
            return false;
        if (p[len] == '\0')
            return true;
        p += len + 1;
    }
}

static const char *const execs_used[] = {"srun", "enroot", "apptainer", "singularity"};
static const char *const execs_unused[] = {"sbatch", "squeue", "sacct", "scancel"};

static void execs_free(sluice_executable_t *e, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(e[i].name);
        free(e[i].path);
    }
    free(e);
}

static void series_free(sluice_gpu_series_t *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(s[i].name);
        free(s[i].constraint);
        free(s[i].gres);
    }
    free(s);
}

static sluice_err set_execs(ctx_t *c, const node_t *n, const char *key)
{
    sluice_executable_t *e = NULL;
    size_t ne = 0, i, j;
    sluice_err rc = SLUICE_OK;
    char sub[300];

    if (n->kind != N_MAP)
        return bad(c, n, key, "expected a mapping of command name to absolute path, found %s",
                   kind_word(n));
    e = calloc(n->n / 2 + 1, sizeof(*e));
    if (!e)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        bool used = false, known = false;
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        for (j = 0; j < 4; j++) {
            if (strcmp(k->str, execs_used[j]) == 0)
                known = used = true;
            if (strcmp(k->str, execs_unused[j]) == 0)
                known = true;
        }
        if (!known) {
            rc = bad(c, k, sub,
                     "unknown command (expected one of sbatch, squeue, sacct, scancel, srun, "
                     "enroot, apptainer, singularity)");
            goto out;
        }
        if (v->kind != N_SCALAR || v->str[0] != '/' || !oneline_ok(v->str)) {
            rc = bad(c, v, sub, "expected an absolute path");
            goto out;
        }
        if (!path_dir_ok(v->str, strlen(v->str)) || strcmp(v->str, "/") == 0) {
            rc = bad(c, v, sub,
                     "expected an absolute normalised path to the command (no '.', '..', '//' "
                     "or trailing '/'; no ':', quote, '$' or '\\')");
            goto out;
        }
        if (!used &&
            (rc = warn(c, k, sub, "not used by sluice (it talks to slurmrestd)")) != SLUICE_OK)
            goto out;
        e[ne].name = dup(k->str);
        e[ne].path = dup(v->str);
        e[ne].in_use = used;
        ne++;
        if (!e[ne - 1].name || !e[ne - 1].path) {
            rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
    }
    execs_free(c->cfg->launcher.executables, c->cfg->launcher.n_executables);
    c->cfg->launcher.executables = e;
    c->cfg->launcher.n_executables = ne;
    e = NULL;
    ne = 0;
out:
    execs_free(e, ne);
    return rc;
}

static bool constraint_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++) {
        if (!(isalnum((unsigned char)s[i]) || strchr("_-.&|*[]():,!", s[i])))
            return false;
    }
    return i > 0 && i <= 1024;
}

static bool gres_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++) {
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '-' || s[i] == ':'))
            return false;
    }
    return i > 0 && i <= 64;
}

static sluice_err set_series(ctx_t *c, const node_t *n, const char *key)
{
    sluice_gpu_series_t *s = NULL;
    size_t ns = 0, i, j;
    sluice_err rc = SLUICE_OK;
    char sub[300];

    if (n->kind != N_MAP)
        return bad(c, n, key,
                   "expected a mapping of series name to {constraint, gres, "
                   "gpus_per_node}, found %s",
                   kind_word(n));
    s = calloc(n->n / 2 + 1, sizeof(*s));
    if (!s)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (!name_ok(k->str)) {
            rc = bad(c, k, sub, "series names use [A-Za-z0-9._-]");
            goto out;
        }
        if (v->kind != N_MAP) {
            rc = bad(c, v, sub, "expected a mapping with constraint, gres, gpus_per_node");
            goto out;
        }
        s[ns].name = dup(k->str);
        s[ns].gres = dup("gpu");
        ns++;
        if (!s[ns - 1].name || !s[ns - 1].gres) {
            rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        for (j = 0; j < v->n; j += 2) {
            const node_t *sk = v->kids[j], *sv = v->kids[j + 1];
            char sub2[340];
            snprintf(sub2, sizeof(sub2), "%s.%.32s", sub, sk->str);
            if (strcmp(sk->str, "constraint") == 0) {
                if (sv->kind != N_SCALAR || !constraint_ok(sv->str)) {
                    rc =
                        bad(c, sv, sub2,
                            "expected a Slurm feature expression (letters, digits, _-.&|*[]():,!)");
                    goto out;
                }
                if ((rc = set_str(c, &s[ns - 1].constraint, sv->str)) != SLUICE_OK)
                    goto out;
            } else if (strcmp(sk->str, "gres") == 0) {
                if (sv->kind != N_SCALAR || !gres_ok(sv->str)) {
                    rc = bad(c, sv, sub2, "expected a gres name such as gpu or gpu:a100");
                    goto out;
                }
                if ((rc = set_str(c, &s[ns - 1].gres, sv->str)) != SLUICE_OK)
                    goto out;
            } else if (strcmp(sk->str, "gpus_per_node") == 0) {
                long g;
                if (sv->kind != N_SCALAR || !sv->plain || !parse_long(sv->str, &g) || g < 1 ||
                    g > 1024) {
                    rc = bad(c, sv, sub2, "expected an integer from 1 to 1024");
                    goto out;
                }
                s[ns - 1].gpus_per_node = g;
            } else {
                rc = bad(c, sk, sub2, "unknown key (expected constraint, gres, gpus_per_node)");
                goto out;
            }
        }
        if (!s[ns - 1].constraint) {
            rc = bad(c, v, sub,
                     "constraint is required (fail-closed: a series without a Slurm constraint "
                     "could land on any GPU node)");
            goto out;
        }
    }
    series_free(c->cfg->gpu_series, c->cfg->n_gpu_series);
    c->cfg->gpu_series = s;
    c->cfg->n_gpu_series = ns;
    s = NULL;
    ns = 0;
out:
    series_free(s, ns);
    return rc;
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
                ok = parse_long(a, &lo) && parse_long(dash + 1, &hi);
            }
        }
    } else if (n->kind == N_SEQ && n->n == 2 && n->kids[0]->kind == N_SCALAR &&
               n->kids[1]->kind == N_SCALAR) {
        ok = parse_long(n->kids[0]->str, &lo) && parse_long(n->kids[1]->str, &hi);
    }
    if (!ok)
        return bad(c, n, key, "expected a port range \"START-END\" or [START, END]");
    if (lo < 1 || hi > 65535 || lo > hi)
        return bad(c, n, key, "expected 1 <= START <= END <= 65535, got %ld-%ld", lo, hi);
    c->cfg->launcher.port_range_lo = lo;
    c->cfg->launcher.port_range_hi = hi;
    return SLUICE_OK;
}

static sluice_err set_lines(ctx_t *c, const node_t *n, const char *key, sluice_strlist_t *slot)
{
    sluice_strlist_t l = {NULL, 0};
    const char *p;

    if (n->kind == N_SEQ)
        return get_list(c, n, key, NULL, "shell lines", slot);
    if (n->kind != N_SCALAR)
        return bad(c, n, key, "expected a block string or a list of shell lines, found %s",
                   kind_word(n));
    for (p = n->str; *p;) {
        size_t len = strcspn(p, "\n");
        if (strlist_push(&l, p, len) != SLUICE_OK) {
            strlist_clear(&l);
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
        }
        p += len;
        if (*p == '\n')
            p++;
    }
    strlist_clear(slot);
    *slot = l;
    return SLUICE_OK;
}

/* Apply one value to one field. */
static sluice_err apply(ctx_t *c, const field_t *f, const node_t *n)
{
    void *slot = (char *)c->cfg + f->off;
    char **sp = (char **)slot;
    long *lp = (long *)slot;
    bool *bp = (bool *)slot;
    const char *key = f->path;
    sluice_err rc = SLUICE_OK;
    size_t idx = (size_t)(f - fields);
    long v;
    bool b;

    if (is_null(n) && f->kind != K_LINES)
        return SLUICE_OK; /* "key:" with no value keeps the default */
    switch (f->kind) {
    case K_SERIES:
        rc = set_series(c, n, key);
        break;
    case K_EXECS:
        rc = set_execs(c, n, key);
        break;
    case K_PORTRANGE:
        rc = set_port_range(c, n, key);
        break;
    case K_LINES:
        if (is_null(n)) {
            strlist_clear((sluice_strlist_t *)slot);
            break;
        }
        rc = set_lines(c, n, key, (sluice_strlist_t *)slot);
        break;
    case K_LIST:
        rc = get_list(c, n, key, list_item_ok, "names", (sluice_strlist_t *)slot);
        break;
    case K_ENVLIST:
        rc = get_list(c, n, key, env_name_ok, "variable names matching [A-Za-z_][A-Za-z0-9_]*",
                      (sluice_strlist_t *)slot);
        break;
    case K_PROFILES:
        rc = get_list(c, n, key, profile_ok, "profiles (enroot-pyxis, pyxis, apptainer, none)",
                      (sluice_strlist_t *)slot);
        break;
    default:
        if (n->kind != N_SCALAR)
            return bad(c, n, key, "expected a scalar, found %s", kind_word(n));
        break;
    }
    if (rc != SLUICE_OK || f->kind == K_SERIES || f->kind == K_EXECS || f->kind == K_PORTRANGE ||
        f->kind == K_LINES || f->kind == K_LIST || f->kind == K_ENVLIST || f->kind == K_PROFILES)
        goto record;

    switch (f->kind) {
    case K_RUNTIME:
        if (strcmp(n->str, "slurm") != 0)
            return bad(c, n, key, "expected \"slurm\"");
        goto record_only;
    case K_STR:
        if (!oneline_ok(n->str))
            return bad(c, n, key, "expected a non-empty single-line string");
        rc = set_str(c, sp, n->str);
        break;
    case K_NAME:
        if (!name_ok(n->str))
            return bad(c, n, key, "expected 1-64 characters from [A-Za-z0-9._-]");
        rc = set_str(c, sp, n->str);
        break;
    case K_PREFIX: {
        size_t i, len = strlen(n->str);
        bool ok = len >= 1 && len <= 16 && isalpha((unsigned char)n->str[0]);
        for (i = 0; ok && i < len; i++)
            ok = isalnum((unsigned char)n->str[i]) || n->str[i] == '_';
        if (!ok)
            return bad(c, n, key,
                       "expected a job name prefix such as \"sluice\" or \"nvfl\" "
                       "([A-Za-z][A-Za-z0-9_]{0,15})");
        rc = set_str(c, sp, n->str);
        break;
    }
    case K_HOST: {
        size_t i;
        bool ok = oneline_ok(n->str) && strlen(n->str) <= 253;
        for (i = 0; ok && n->str[i]; i++)
            ok = isalnum((unsigned char)n->str[i]) || strchr(".-:[]_", n->str[i]);
        if (!ok)
            return bad(c, n, key, "expected a host name or address");
        rc = set_str(c, sp, n->str);
        break;
    }
    case K_ABS:
        if (n->str[0] != '/' || !oneline_ok(n->str))
            return bad(c, n, key, "expected an absolute path");
        rc = set_str(c, sp, n->str);
        break;
    case K_JOBPATH:
        if (!job_path_ok(n->str))
            return bad(c, n, key,
                       "expected absolute directories joined by ':' (no empty entry, no '.' or "
                       "'..', no trailing '/', no quote, '$', '\\' or control byte)");
        rc = set_str(c, sp, n->str);
        break;
    case K_URL: {
        const char *s = n->str;
        bool ok = oneline_ok(s) && !strchr(s, ' ');
        if (ok && strncmp(s, "https://", 8) == 0)
            ok = s[8] != '\0' && s[8] != '/';
        else if (ok && strncmp(s, "http://", 7) == 0)
            ok = s[7] != '\0' && s[7] != '/';
        else if (ok && strncmp(s, "unix:/", 6) == 0)
            ok = s[6] != '\0';
        else
            ok = false;
        if (!ok)
            return bad(c, n, key, "expected an https://, http:// (loopback) or unix:/ URL");
        rc = set_str(c, sp, s);
        break;
    }
    case K_APIVER: {
        static const char *const vers[] = {"auto",    "v0.0.38", "v0.0.40", "v0.0.41",
                                           "v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"};
        size_t i;
        for (i = 0; i < 8; i++) {
            if (strcmp(n->str, vers[i]) == 0)
                break;
        }
        if (i == 8)
            return bad(c, n, key, "expected auto, v0.0.38 or v0.0.40 to v0.0.45");
        rc = set_str(c, sp, n->str);
        break;
    }
    case K_SANDBOX: {
        sluice_sandbox_t sb;
        if (!sandbox_word(n->str, &sb))
            return bad(c, n, key, "expected enroot-pyxis (alias pyxis), apptainer or none");
        *(sluice_sandbox_t *)slot = sb;
        break;
    }
    case K_ICS:
        if (strcmp(n->str, "mtls") != 0 && strcmp(n->str, "clear") != 0)
            return bad(c, n, key, "expected mtls or clear");
        rc = set_str(c, sp, n->str);
        if (rc == SLUICE_OK)
            rc = warn(c, n, key,
                      "accepted for NVFlare compatibility, not used by sluice (no "
                      "worker-to-parent link)");
        break;
    case K_BOOL:
        if ((c->src == SLUICE_SRC_FILE && !n->plain) || !bool_word(n->str, &b))
            return bad(c, n, key, "expected true or false");
        *bp = b;
        break;
    case K_INT:
        if (is_nonfinite(n->str))
            return bad(c, n, key, "expected an integer, got a non-finite number");
        if ((c->src == SLUICE_SRC_FILE && !n->plain) || !parse_long(n->str, &v))
            return bad(c, n, key, "expected an integer from %ld to %ld", f->min, f->max);
        if (v < f->min || v > f->max)
            return bad(c, n, key, "expected an integer from %ld to %ld, got %ld", f->min, f->max,
                       v);
        *lp = v;
        break;
    case K_DUR:
        if (is_nonfinite(n->str))
            return bad(c, n, key, "expected a duration, got a non-finite number");
        if (!duration_word(n->str, &v))
            return bad(c, n, key,
                       "expected a duration: seconds, or a number with s, m, h or d (\"30s\", "
                       "\"5m\", \"2h\")");
        if (v < f->min || v > f->max)
            return bad(c, n, key, "expected a duration from %lds to %lds, got %lds", f->min, f->max,
                       v);
        *lp = v;
        break;
    case K_MODE: {
        char *end = NULL;
        errno = 0;
        v = isdigit((unsigned char)n->str[0]) ? strtol(n->str, &end, 8) : -1;
        if (v < 0 || errno || end == NULL || *end || v > 0777)
            return bad(c, n, key, "expected an octal file mode such as 0660");
        if (v & 07)
            return bad(c, n, key, "mode %04lo is accessible by others; use 0660 or stricter", v);
        if ((v & 0600) != 0600)
            return bad(c, n, key, "mode %04lo must give the owner read and write (0600 at least)",
                       v);
        *lp = v;
        break;
    }
    case K_STIME:
        if (!slurm_time_word(n->str, &v) || v < 1)
            return bad(c, n, key,
                       "expected a Slurm time: minutes, \"HH:MM:SS\", \"D-HH:MM:SS\" (and their "
                       "short forms)");
        rc = set_str(c, sp, n->str);
        c->cfg->launcher.sbatch.time_minutes = v;
        break;
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
    if (c->origin && !(c->cfg->priv->origin[idx] = dup(c->origin)))
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
        return bad(c, n, "parent", "expected a mapping, found %s", kind_word(n));
    for (i = 0; i < n->n; i += 2) {
        snprintf(key, sizeof(key), "parent.%.64s", n->kids[i]->str);
        rc = warn(c, n->kids[i], key,
                  "not used by sluice (parent-only setting; sluice is not placed by sbatch)");
        if (rc != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static sluice_err walk_map(ctx_t *c, const node_t *n, const char *prefix)
{
    size_t i;
    sluice_err rc;
    char path[256];
    const field_t *f;

    if (n->kind != N_MAP)
        return bad(c, n, prefix[0] ? prefix : "(top level)", "expected a mapping, found %s",
                   kind_word(n));
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        if (prefix[0])
            snprintf(path, sizeof(path), "%s.%.128s", prefix, k->str);
        else
            snprintf(path, sizeof(path), "%.128s", k->str);
        if ((f = find_field(path)) != NULL)
            rc = apply(c, f, v);
        else if (is_section(path) && is_null(v))
            rc = SLUICE_OK;
        else if (is_section(path))
            rc = walk_map(c, v, path);
        else if (strcmp(path, "parent") == 0)
            rc = walk_parent(c, v);
        else
            rc = bad(c, k, path, "unknown key");
        if (rc != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

/* ------------------------------------------------------ load and checks */

static sluice_err set_defaults(sluice_config_t *cfg, sluice_error_t *err)
{
    if (!(cfg->site_name = dup("default")) || !(cfg->job_name_prefix = dup("sluice")) ||
        !(cfg->rest.api_version = dup("auto")))
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
    cfg->retention.launches_max_age_s = 2592000;
    cfg->retention.logs_max_age_s = 7776000;
    cfg->submit.in_flight = 4;
    cfg->submit.per_sec = 200;
    cfg->poll.rpc_per_sec = 50;
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

/* SLUICE_<PATH> with dots as underscores, upper case: SLUICE_REST_URL. */
static void sluice_env_name(const char *path, char *out, size_t cap)
{
    size_t i, j = 0;
    const char *pre = "SLUICE_";

    for (i = 0; pre[i] && j + 1 < cap; i++)
        out[j++] = pre[i];
    for (i = 0; path[i] && j + 1 < cap; i++)
        out[j++] = path[i] == '.' ? '_' : (char)toupper((unsigned char)path[i]);
    out[j] = '\0';
}

static sluice_err apply_string(ctx_t *c, const field_t *f, const char *value)
{
    node_t n;

    memset(&n, 0, sizeof(n));
    n.kind = N_SCALAR;
    n.plain = true;
    n.str = (char *)(uintptr_t)value;
    if (f->kind == K_SERIES || f->kind == K_EXECS || f->kind == K_RUNTIME)
        return bad(c, NULL, f->path, "cannot be set from the environment or --set");
    return apply(c, f, &n);
}

static sluice_err apply_env(ctx_t *c, const sluice_config_opts_t *o)
{
    size_t i;
    sluice_err rc;
    char name[160];
    const char *v;

    v = lookup_env(o, "FORGE_DEFAULT_FLEET_KIND");
    if (v && strcmp(v, "slurm") != 0) {
        c->src = SLUICE_SRC_ENV;
        if ((rc = warn(c, NULL, "FORGE_DEFAULT_FLEET_KIND",
                       "is not \"slurm\"; sluice only drives Slurm")) != SLUICE_OK)
            return rc;
    }
    for (i = 0; i < N_FIELDS; i++) {
        const field_t *f = &fields[i];
        if (f->kind == K_SERIES || f->kind == K_EXECS || f->kind == K_RUNTIME)
            continue;
        /* FORGE_* first, then SLUICE_* so that sluice's own name wins. */
        if (f->forge && (v = lookup_env(o, f->forge)) != NULL) {
            c->src = SLUICE_SRC_ENV;
            c->origin = f->forge;
            if ((rc = apply_string(c, f, v)) != SLUICE_OK)
                return rc;
        }
        sluice_env_name(f->path, name, sizeof(name));
        if ((v = lookup_env(o, name)) != NULL) {
            c->src = SLUICE_SRC_ENV;
            c->origin = name;
            if ((rc = apply_string(c, f, v)) != SLUICE_OK)
                return rc;
        }
    }
    c->origin = NULL;
    return SLUICE_OK;
}

static sluice_err apply_flags(ctx_t *c, const sluice_config_opts_t *o)
{
    size_t i;
    sluice_err rc;
    char key[256];

    c->src = SLUICE_SRC_FLAG;
    c->origin = NULL;
    for (i = 0; i < o->n_overrides; i++) {
        const char *s = o->overrides[i];
        const char *eq = s ? strchr(s, '=') : NULL;
        const field_t *f;
        size_t len;
        if (!eq || eq == s || (len = (size_t)(eq - s)) >= sizeof(key))
            return sluice_errorf(c->err, SLUICE_ECONFIG, "--set '%.64s': expected key=value",
                                 s ? s : "");
        memcpy(key, s, len);
        key[len] = '\0';
        if (!(f = find_field(key)))
            return sluice_errorf(c->err, SLUICE_ECONFIG, "--set %.128s: unknown key", key);
        if ((rc = apply_string(c, f, eq + 1)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static size_t fidx(const char *path)
{
    const field_t *f = find_field(path);

    return f ? (size_t)(f - fields) : 0;
}

/* Error about a field already set, at the place it was set. */
static sluice_err bad_at(ctx_t *c, const char *path, const char *fmt, ...) SLUICE_PRINTF(3, 4);

static sluice_err bad_at(ctx_t *c, const char *path, const char *fmt, ...)
{
    char msg[384];
    size_t i = fidx(path);
    sluice_config_priv_t *p = c->cfg->priv;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    switch ((sluice_config_source_t)p->src[i]) {
    case SLUICE_SRC_FILE:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "%s:%zu:%zu: %s: %s", c->file, p->line[i] + 1,
                             p->col[i] + 1, path, msg);
    case SLUICE_SRC_ENV:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "environment %s: %s: %s",
                             p->origin[i] ? p->origin[i] : "?", path, msg);
    case SLUICE_SRC_FLAG:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "--set %s: %s", path, msg);
    default:
        return sluice_errorf(c->err, SLUICE_ECONFIG, "%s: %s: %s", c->file, path, msg);
    }
}

static bool is_set(const sluice_config_t *cfg, const char *path)
{
    return cfg->priv->src[fidx(path)] != SLUICE_SRC_DEFAULT;
}

static sluice_err finalize(ctx_t *c, bool no_required)
{
    sluice_config_t *cfg = c->cfg;
    int n_jwt = 0;

    if (!no_required) {
        if (!cfg->rest.url)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: rest.url: required (set rest.url, FORGE_SLURM_REST_URL or "
                                 "--set rest.url=...)",
                                 c->file);
        if (!cfg->storage.root)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: storage.root: required (set storage.root, "
                                 "FORGE_STORAGE_ROOT or --set storage.root=...)",
                                 c->file);
        if (cfg->launcher.sandbox == SLUICE_SANDBOX_UNSET)
            return sluice_errorf(c->err, SLUICE_ECONFIG,
                                 "%s: job_launcher.sandbox: required (enroot-pyxis, apptainer or "
                                 "none; or FORGE_SLURM_RUNTIME_PROFILE)",
                                 c->file);
    }
    if (cfg->rest.url && strncmp(cfg->rest.url, "http://", 7) == 0 &&
        !cfg->rest.allow_insecure_http) {
        const char *h;
        size_t hn;
        url_host(cfg->rest.url, &h, &hn);
        if (!is_loopback_host(h, hn))
            return bad_at(c, "rest.url",
                          "expected an https://, http:// (loopback) or unix:/ URL (plain http to "
                          "another host needs rest.allow_insecure_http: true)");
    }
    n_jwt = (cfg->rest.jwt_file != NULL) + (cfg->rest.jwt_key_file != NULL) +
            (cfg->rest.jwt_rs256_key_file != NULL);
    if (n_jwt > 1)
        return bad_at(c, cfg->rest.jwt_key_file ? "rest.jwt_key_file" : "rest.jwt_rs256_key_file",
                      "set only one of rest.jwt_file, rest.jwt_key_file and "
                      "rest.jwt_rs256_key_file");
    if ((cfg->rest.client_cert != NULL) != (cfg->rest.client_key != NULL))
        return bad_at(c, cfg->rest.client_cert ? "rest.client_cert" : "rest.client_key",
                      "rest.client_cert and rest.client_key go together");
    if (cfg->storage.root && !cfg->storage.cluster_root &&
        !(cfg->storage.cluster_root = dup(cfg->storage.root)))
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    if (cfg->launcher.internal_port >= cfg->launcher.port_range_lo &&
        cfg->launcher.internal_port <= cfg->launcher.port_range_hi) {
        if (is_set(cfg, "job_launcher.multi_node_port_range"))
            return bad_at(c, "job_launcher.multi_node_port_range",
                          "must not contain job_launcher.internal_port (%ld)",
                          cfg->launcher.internal_port);
        cfg->launcher.port_range_lo = 30400;
        cfg->launcher.port_range_hi = 31399;
    }
    if (cfg->policy.max_time_minutes &&
        cfg->launcher.sbatch.time_minutes > cfg->policy.max_time_minutes)
        return bad_at(c, "job_launcher.sbatch_directives.time",
                      "%ld minutes is more than policy.max_time_minutes (%ld)",
                      cfg->launcher.sbatch.time_minutes, cfg->policy.max_time_minutes);
    if (cfg->launcher.image && cfg->launcher.sandbox == SLUICE_SANDBOX_NONE)
        return bad_at(c, "job_launcher.image", "not allowed when job_launcher.sandbox is none");
    return SLUICE_OK;
}

sluice_err
sluice_config_load(const sluice_config_opts_t *opts, sluice_config_t **out, sluice_error_t *err)
{
    sluice_config_t *cfg = NULL;
    node_t *root = NULL;
    char *text = NULL;
    size_t len = 0;
    sluice_err rc = SLUICE_OK;
    ctx_t c;

    if (!opts || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_config_load: NULL argument");
    memset(&c, 0, sizeof(c));
    c.err = err;
    c.file = opts->path ? opts->path : (opts->text_name ? opts->text_name : "<config>");
    cfg = calloc(1, sizeof(*cfg));
    if (!cfg || !(cfg->priv = calloc(1, sizeof(*cfg->priv)))) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    c.cfg = cfg;
    if ((rc = set_defaults(cfg, err)) != SLUICE_OK)
        goto out;
    if (opts->path) {
        if ((rc = read_file(opts->path, &text, &len, err)) != SLUICE_OK)
            goto out;
        rc = parse_yaml(c.file, text, len, &root, err);
    } else if (opts->text) {
        rc = parse_yaml(c.file, opts->text, opts->text_len, &root, err);
    }
    if (rc != SLUICE_OK)
        goto out;
    c.src = SLUICE_SRC_FILE;
    if (root && !is_null(root) && (rc = walk_map(&c, root, "")) != SLUICE_OK)
        goto out;
    if ((rc = apply_env(&c, opts)) != SLUICE_OK)
        goto out;
    if ((rc = apply_flags(&c, opts)) != SLUICE_OK)
        goto out;
    if ((rc = finalize(&c, opts->no_required)) != SLUICE_OK)
        goto out;
    *out = cfg;
    cfg = NULL;
out:
    sluice_config_free(cfg);
    node_free(root);
    free(text);
    return rc;
}

void sluice_config_free(sluice_config_t *cfg)
{
    size_t i;

    if (!cfg)
        return;
    for (i = 0; i < N_FIELDS; i++) {
        const field_t *f = &fields[i];
        void *slot = (char *)cfg + f->off;
        switch (f->kind) {
        case K_STR:
        case K_NAME:
        case K_PREFIX:
        case K_HOST:
        case K_ABS:
        case K_URL:
        case K_APIVER:
        case K_ICS:
        case K_STIME:
        case K_JOBPATH:
            free(*(char **)slot);
            *(char **)slot = NULL;
            break;
        case K_LINES:
        case K_LIST:
        case K_ENVLIST:
        case K_PROFILES:
            strlist_clear((sluice_strlist_t *)slot);
            break;
        default:
            break;
        }
        if (cfg->priv)
            free(cfg->priv->origin[i]);
    }
    execs_free(cfg->launcher.executables, cfg->launcher.n_executables);
    series_free(cfg->gpu_series, cfg->n_gpu_series);
    strlist_clear(&cfg->warnings);
    free(cfg->priv);
    free(cfg);
}

const char *sluice_sandbox_name(sluice_sandbox_t s)
{
    switch (s) {
    case SLUICE_SANDBOX_ENROOT_PYXIS:
        return "enroot-pyxis";
    case SLUICE_SANDBOX_APPTAINER:
        return "apptainer";
    case SLUICE_SANDBOX_NONE:
        return "none";
    default:
        return "unset";
    }
}

const char *sluice_config_source_name(sluice_config_source_t s)
{
    switch (s) {
    case SLUICE_SRC_FILE:
        return "file";
    case SLUICE_SRC_ENV:
        return "env";
    case SLUICE_SRC_FLAG:
        return "flag";
    default:
        return "default";
    }
}

const sluice_gpu_series_t *sluice_config_gpu_series(const sluice_config_t *cfg, const char *name)
{
    size_t i;

    if (!cfg || !name)
        return NULL;
    for (i = 0; i < cfg->n_gpu_series; i++) {
        if (strcmp(cfg->gpu_series[i].name, name) == 0)
            return &cfg->gpu_series[i];
    }
    return NULL;
}

const char *sluice_config_executable(const sluice_config_t *cfg, const char *name)
{
    size_t i;

    if (!cfg || !name)
        return NULL;
    for (i = 0; i < cfg->launcher.n_executables; i++) {
        if (strcmp(cfg->launcher.executables[i].name, name) == 0)
            return cfg->launcher.executables[i].path;
    }
    return NULL;
}

sluice_config_source_t sluice_config_source(const sluice_config_t *cfg, const char *key)
{
    const field_t *f;

    if (!cfg || !key || !(f = find_field(key)))
        return SLUICE_SRC_DEFAULT;
    return (sluice_config_source_t)cfg->priv->src[f - fields];
}

/* ---------------------------------------------------------------- JSON */

static json_t *strlist_json(const sluice_strlist_t *l)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a && i < l->n; i++)
        json_array_append_new(a, json_string(l->items[i]));
    return a;
}

/* rest.url without a password: "https://user:***@host". */
static json_t *url_json(const char *url)
{
    const char *scheme = strstr(url, "://");
    const char *at, *colon, *end;
    json_t *j;
    char *copy;

    if (!scheme)
        return json_string(url);
    end = scheme + 3 + strcspn(scheme + 3, "/?#");
    at = memchr(scheme + 3, '@', (size_t)(end - scheme - 3));
    if (!at)
        return json_string(url);
    colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3));
    if (!colon)
        return json_string(url);
    copy = malloc(strlen(url) + 4);
    if (!copy)
        return NULL;
    memcpy(copy, url, (size_t)(colon - url) + 1);
    strcpy(copy + (colon - url) + 1, "***");
    strcat(copy, at);
    j = json_string(copy);
    free(copy);
    return j;
}

static json_t *value_json(const sluice_config_t *cfg, const field_t *f)
{
    const void *slot = (const char *)cfg + f->off;
    const char *s;
    json_t *o;
    size_t i;

    switch (f->kind) {
    case K_RUNTIME:
        return json_string("slurm");
    case K_URL:
        s = *(char *const *)slot;
        return s ? url_json(s) : json_null();
    case K_STR:
    case K_NAME:
    case K_PREFIX:
    case K_HOST:
    case K_ABS:
    case K_APIVER:
    case K_ICS:
    case K_STIME:
    case K_JOBPATH:
        s = *(char *const *)slot;
        return s ? json_string(s) : json_null();
    case K_SANDBOX:
        return cfg->launcher.sandbox ? json_string(sluice_sandbox_name(cfg->launcher.sandbox))
                                     : json_null();
    case K_BOOL:
        return json_boolean(*(const bool *)slot);
    case K_INT:
    case K_DUR:
        return json_integer(*(const long *)slot);
    case K_MODE: {
        char mode[8];
        snprintf(mode, sizeof(mode), "%04lo", *(const long *)slot);
        return json_string(mode);
    }
    case K_PORTRANGE:
        return json_pack("[ii]", (json_int_t)cfg->launcher.port_range_lo,
                         (json_int_t)cfg->launcher.port_range_hi);
    case K_LINES:
    case K_LIST:
    case K_ENVLIST:
    case K_PROFILES:
        return strlist_json((const sluice_strlist_t *)slot);
    case K_EXECS:
        o = json_object();
        for (i = 0; o && i < cfg->launcher.n_executables; i++)
            json_object_set_new(o, cfg->launcher.executables[i].name,
                                json_pack("{s:s s:b}", "path", cfg->launcher.executables[i].path,
                                          "used", cfg->launcher.executables[i].in_use));
        return o;
    case K_SERIES:
        o = json_object();
        for (i = 0; o && i < cfg->n_gpu_series; i++) {
            const sluice_gpu_series_t *g = &cfg->gpu_series[i];
            json_object_set_new(o, g->name,
                                json_pack("{s:s s:s s:I}", "constraint", g->constraint, "gres",
                                          g->gres, "gpus_per_node", (json_int_t)g->gpus_per_node));
        }
        return o;
    }
    return json_null();
}

sluice_err sluice_config_to_json(const sluice_config_t *cfg, json_t **out, sluice_error_t *err)
{
    json_t *root = NULL, *conf, *srcs, *obj, *val;
    sluice_err rc = SLUICE_OK;
    size_t i;
    char part[128];

    if (!cfg || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_config_to_json: NULL argument");
    root =
        json_pack("{s:{} s:{} s:o}", "config", "sources", "warnings", strlist_json(&cfg->warnings));
    if (!root)
        goto nomem;
    conf = json_object_get(root, "config");
    srcs = json_object_get(root, "sources");
    for (i = 0; i < N_FIELDS; i++) {
        const char *p = fields[i].path, *dot;
        char srcname[200];
        obj = conf;
        while ((dot = strchr(p, '.')) != NULL) {
            json_t *next;
            snprintf(part, sizeof(part), "%.*s", (int)(dot - p), p);
            next = json_object_get(obj, part);
            if (!next) {
                next = json_object();
                if (!next || json_object_set_new(obj, part, next) != 0)
                    goto nomem;
            }
            obj = next;
            p = dot + 1;
        }
        val = value_json(cfg, &fields[i]);
        if (!val || json_object_set_new(obj, p, val) != 0)
            goto nomem;
        if (cfg->priv->src[i] == SLUICE_SRC_ENV && cfg->priv->origin[i])
            snprintf(srcname, sizeof(srcname), "env:%s", cfg->priv->origin[i]);
        else
            snprintf(srcname, sizeof(srcname), "%s",
                     sluice_config_source_name((sluice_config_source_t)cfg->priv->src[i]));
        if (json_object_set_new(srcs, fields[i].path, json_string(srcname)) != 0)
            goto nomem;
    }
    /* Derived values other modules use. */
    obj = json_object_get(json_object_get(conf, "job_launcher"), "sbatch_directives");
    if (json_object_set_new(obj, "time_minutes", json_integer(cfg->launcher.sbatch.time_minutes)) !=
        0)
        goto nomem;
    *out = root;
    return SLUICE_OK;
nomem:
    rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------- study runtime */

static void study_free(sluice_study_t *s)
{
    size_t i;

    free(s->name);
    free(s->image);
    for (i = 0; i < s->n_datasets; i++) {
        free(s->datasets[i].name);
        free(s->datasets[i].source);
        free(s->datasets[i].target);
    }
    free(s->datasets);
    for (i = 0; i < s->n_env; i++) {
        free(s->env_names[i]);
        free(s->env_values[i]);
    }
    free(s->env_names);
    free(s->env_values);
    for (i = 0; i < s->n_secret_env; i++) {
        free(s->secret_env[i].name);
        free(s->secret_env[i].source);
    }
    free(s->secret_env);
    strlist_clear(&s->setup);
    free(s->partition);
    free(s->account);
    free(s->qos);
}

void sluice_study_runtime_free(sluice_study_runtime_t *rt)
{
    size_t i;

    if (!rt)
        return;
    for (i = 0; i < rt->n_studies; i++)
        study_free(&rt->studies[i]);
    free(rt->studies);
    free(rt);
}

const sluice_study_t *sluice_study_runtime_find(const sluice_study_runtime_t *rt, const char *name)
{
    size_t i;

    if (!rt || !name)
        return NULL;
    for (i = 0; i < rt->n_studies; i++) {
        if (strcmp(rt->studies[i].name, name) == 0)
            return &rt->studies[i];
    }
    return NULL;
}

static bool reserved_env(const char *s)
{
    return strncmp(s, "SLURM_", 6) == 0 || strncmp(s, "SLUICE_", 7) == 0 ||
           strncmp(s, "NVFL_", 5) == 0;
}

static sluice_err study_str(ctx_t *c, const node_t *v, const char *key, bool abs, char **slot)
{
    if (v->kind != N_SCALAR || is_null(v) || !oneline_ok(v->str))
        return bad(c, v, key, abs ? "expected an absolute path" : "expected a non-empty string");
    if (abs && v->str[0] != '/')
        return bad(c, v, key, "expected an absolute path");
    return set_str(c, slot, v->str);
}

static sluice_err study_datasets(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    size_t i, j;
    sluice_err rc;
    char sub[300], sub2[340];

    if (n->kind != N_MAP)
        return bad(c, n, key, "expected a mapping of dataset name to {source, mode}");
    s->datasets = calloc(n->n / 2 + 1, sizeof(*s->datasets));
    if (!s->datasets)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        sluice_dataset_t *d = &s->datasets[s->n_datasets++];
        char target[200];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (!name_ok(k->str))
            return bad(c, k, sub, "dataset names use [A-Za-z0-9._-]");
        if (v->kind != N_MAP)
            return bad(c, v, sub, "expected a mapping with source and mode");
        d->read_only = true;
        if ((rc = set_str(c, &d->name, k->str)) != SLUICE_OK)
            return rc;
        snprintf(target, sizeof(target), "/data/%s/%s", s->name, k->str);
        if ((rc = set_str(c, &d->target, target)) != SLUICE_OK)
            return rc;
        for (j = 0; j < v->n; j += 2) {
            const node_t *dk = v->kids[j], *dv = v->kids[j + 1];
            snprintf(sub2, sizeof(sub2), "%s.%.32s", sub, dk->str);
            if (strcmp(dk->str, "source") == 0) {
                if ((rc = study_str(c, dv, sub2, true, &d->source)) != SLUICE_OK)
                    return rc;
            } else if (strcmp(dk->str, "mode") == 0) {
                if (dv->kind != N_SCALAR ||
                    (strcmp(dv->str, "ro") != 0 && strcmp(dv->str, "rw") != 0))
                    return bad(c, dv, sub2, "expected ro or rw");
                d->read_only = strcmp(dv->str, "ro") == 0;
            } else {
                return bad(c, dk, sub2, "unknown key (expected source, mode)");
            }
        }
        if (!d->source)
            return bad(c, v, sub, "source is required");
    }
    return SLUICE_OK;
}

static sluice_err study_env(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    size_t i;
    char sub[300];

    if (n->kind != N_MAP)
        return bad(c, n, key, "expected a mapping of variable name to value");
    s->env_names = calloc(n->n / 2 + 1, sizeof(char *));
    s->env_values = calloc(n->n / 2 + 1, sizeof(char *));
    if (!s->env_names || !s->env_values)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (!env_name_ok(k->str))
            return bad(c, k, sub, "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
        if (reserved_env(k->str))
            return bad(c, k, sub, "reserved prefix (SLURM_, SLUICE_, NVFL_)");
        if (v->kind != N_SCALAR)
            return bad(c, v, sub, "expected a scalar value, found %s", kind_word(v));
        s->env_names[s->n_env] = dup(k->str);
        s->env_values[s->n_env] = dup(is_null(v) ? "" : v->str);
        s->n_env++;
        if (!s->env_names[s->n_env - 1] || !s->env_values[s->n_env - 1])
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    return SLUICE_OK;
}

/* secret_env: {NAME: {source: VAR}} (NVFlare), {NAME: VAR}, or [NAME, ...]. */
static sluice_err study_secret_env(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    size_t i, step = n->kind == N_MAP ? 2 : 1;
    char sub[300];

    if (n->kind == N_SCALAR)
        return bad(c, n, key, "expected a mapping NAME: {source: VAR} or a list of names");
    s->secret_env = calloc(n->n / step + 1, sizeof(*s->secret_env));
    if (!s->secret_env)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    for (i = 0; i < n->n; i += step) {
        const node_t *k = n->kids[i];
        const node_t *v = step == 2 ? n->kids[i + 1] : NULL;
        const char *source = k->str;
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->kind == N_SCALAR ? k->str : "?");
        if (k->kind != N_SCALAR || !env_name_ok(k->str))
            return bad(c, k, sub, "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
        if (reserved_env(k->str))
            return bad(c, k, sub, "reserved prefix (SLURM_, SLUICE_, NVFL_)");
        if (v && v->kind == N_MAP) {
            if (v->n != 2 || strcmp(v->kids[0]->str, "source") != 0)
                return bad(c, v, sub, "expected {source: VARIABLE}");
            v = v->kids[1];
        }
        if (v && !is_null(v)) {
            if (v->kind != N_SCALAR || !env_name_ok(v->str))
                return bad(c, v, sub,
                           "source: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
            source = v->str;
        }
        s->secret_env[s->n_secret_env].name = dup(k->str);
        s->secret_env[s->n_secret_env].source = dup(source);
        s->n_secret_env++;
        if (!s->secret_env[s->n_secret_env - 1].name || !s->secret_env[s->n_secret_env - 1].source)
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    }
    return SLUICE_OK;
}

static sluice_err study_slurm(ctx_t *c, sluice_study_t *s, const node_t *n, const char *key)
{
    size_t i;
    sluice_err rc;
    char sub[300];

    if (n->kind != N_MAP)
        return bad(c, n, key, "expected a mapping");
    for (i = 0; i < n->n; i += 2) {
        const node_t *k = n->kids[i], *v = n->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, k->str);
        if (strcmp(k->str, "sandbox") == 0) {
            if (v->kind != N_SCALAR || !sandbox_word(v->str, &s->sandbox))
                return bad(c, v, sub, "expected enroot-pyxis (alias pyxis), apptainer or none");
        } else if (strcmp(k->str, "setup") == 0) {
            if ((rc = set_lines(c, v, sub, &s->setup)) != SLUICE_OK)
                return rc;
            s->has_setup = true;
        } else if (strcmp(k->str, "partition") == 0) {
            if ((rc = study_str(c, v, sub, false, &s->partition)) != SLUICE_OK)
                return rc;
        } else if (strcmp(k->str, "account") == 0) {
            if ((rc = study_str(c, v, sub, false, &s->account)) != SLUICE_OK)
                return rc;
        } else if (strcmp(k->str, "qos") == 0) {
            if ((rc = study_str(c, v, sub, false, &s->qos)) != SLUICE_OK)
                return rc;
        } else {
            return bad(c, k, sub, "unknown key (expected sandbox, setup, partition, account, qos)");
        }
    }
    return SLUICE_OK;
}

static sluice_err study_one(
    ctx_t *c, sluice_study_t *s, const node_t *k, const node_t *v, const sluice_config_t *site)
{
    size_t i;
    sluice_err rc;
    char key[160], sub[300];
    const node_t *image_node = NULL, *ds_node = NULL;
    sluice_sandbox_t eff;

    snprintf(key, sizeof(key), "studies.%.64s", k->str);
    if (!name_ok(k->str))
        return bad(c, k, key, "study names use [A-Za-z0-9._-]");
    if (v->kind != N_MAP)
        return bad(c, v, key, "expected a mapping, found %s", kind_word(v));
    if ((rc = set_str(c, &s->name, k->str)) != SLUICE_OK)
        return rc;
    for (i = 0; i < v->n; i += 2) {
        const node_t *sk = v->kids[i], *sv = v->kids[i + 1];
        snprintf(sub, sizeof(sub), "%.200s.%.64s", key, sk->str);
        if (strcmp(sk->str, "container") == 0) {
            if (sv->kind != N_MAP || sv->n != 2 || strcmp(sv->kids[0]->str, "image") != 0)
                return bad(c, sv, sub, "expected {image: /absolute/path}");
            snprintf(sub, sizeof(sub), "%s.container.image", key);
            if ((rc = study_str(c, sv->kids[1], sub, true, &s->image)) != SLUICE_OK)
                return rc;
            image_node = sv->kids[1];
        } else if (strcmp(sk->str, "image") == 0) {
            if ((rc = study_str(c, sv, sub, true, &s->image)) != SLUICE_OK)
                return rc;
            image_node = sv;
        } else if (strcmp(sk->str, "datasets") == 0) {
            if ((rc = study_datasets(c, s, sv, sub)) != SLUICE_OK)
                return rc;
            ds_node = sv;
        } else if (strcmp(sk->str, "env") == 0) {
            if ((rc = study_env(c, s, sv, sub)) != SLUICE_OK)
                return rc;
        } else if (strcmp(sk->str, "secret_env") == 0) {
            if ((rc = study_secret_env(c, s, sv, sub)) != SLUICE_OK)
                return rc;
        } else if (strcmp(sk->str, "slurm") == 0) {
            if ((rc = study_slurm(c, s, sv, sub)) != SLUICE_OK)
                return rc;
        } else {
            return bad(c, sk, sub,
                       "unknown key (expected container, datasets, env, secret_env, slurm)");
        }
    }
    eff = s->sandbox ? s->sandbox : (site ? site->launcher.sandbox : SLUICE_SANDBOX_UNSET);
    if (eff == SLUICE_SANDBOX_NONE && image_node)
        return bad(c, image_node, key,
                   "an image is not allowed when the effective sandbox is none");
    if (eff == SLUICE_SANDBOX_NONE && ds_node && s->n_datasets)
        return bad(c, ds_node, key,
                   "datasets are not allowed when the effective sandbox is none (no mount "
                   "namespace)");
    return SLUICE_OK;
}

sluice_err sluice_study_runtime_load(const char *path,
                                     const char *text,
                                     size_t len,
                                     const sluice_config_t *site,
                                     sluice_study_runtime_t **out,
                                     sluice_error_t *err)
{
    sluice_study_runtime_t *rt = NULL;
    sluice_config_t scratch;
    node_t *root = NULL;
    char *ftext = NULL;
    sluice_err rc = SLUICE_OK;
    const node_t *studies = NULL;
    bool have_version = false;
    size_t i;
    ctx_t c;

    if (!out || (!path && !text))
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_study_runtime_load: NULL argument");
    memset(&c, 0, sizeof(c));
    memset(&scratch, 0, sizeof(scratch));
    c.file = path ? path : "<study_runtime>";
    c.err = err;
    c.src = SLUICE_SRC_FILE;
    c.cfg = &scratch; /* only for warnings, which studies do not produce */
    if (!text) {
        if ((rc = read_file(path, &ftext, &len, err)) != SLUICE_OK)
            goto out;
        text = ftext;
    }
    if ((rc = parse_yaml(c.file, text, len, &root, err)) != SLUICE_OK)
        goto out;
    rt = calloc(1, sizeof(*rt));
    if (!rt) {
        rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
        goto out;
    }
    if (!root || root->kind != N_MAP) {
        rc = bad(&c, root, "(top level)", "expected a mapping with format_version: 2 and studies");
        goto out;
    }
    for (i = 0; i < root->n; i += 2) {
        const node_t *k = root->kids[i], *v = root->kids[i + 1];
        if (strcmp(k->str, "format_version") == 0) {
            if (v->kind != N_SCALAR || strcmp(v->str, "2") != 0) {
                rc = bad(&c, v, "format_version", "expected 2 (migrate study_data.yaml first)");
                goto out;
            }
            have_version = true;
        } else if (strcmp(k->str, "studies") == 0) {
            if (v->kind != N_MAP && !is_null(v)) {
                rc = bad(&c, v, "studies", "expected a mapping of study name to settings");
                goto out;
            }
            studies = v->kind == N_MAP ? v : NULL;
        } else {
            rc = bad(&c, k, k->str, "unknown key (expected format_version, studies)");
            goto out;
        }
    }
    if (!have_version) {
        rc = bad(&c, root, "format_version", "required (format_version: 2)");
        goto out;
    }
    if (studies) {
        rt->studies = calloc(studies->n / 2 + 1, sizeof(*rt->studies));
        if (!rt->studies) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
            goto out;
        }
        for (i = 0; i < studies->n; i += 2) {
            rc = study_one(&c, &rt->studies[rt->n_studies++], studies->kids[i],
                           studies->kids[i + 1], site);
            if (rc != SLUICE_OK)
                goto out;
        }
    }
    *out = rt;
    rt = NULL;
out:
    strlist_clear(&scratch.warnings);
    sluice_study_runtime_free(rt);
    node_free(root);
    free(ftext);
    return rc;
}
