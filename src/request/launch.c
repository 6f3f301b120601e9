/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c - launch requests: strict JSON → validated launch model.
 *
 * The request is loaded with jansson (duplicate keys refused, NUL bytes
 * allowed by the loader so that we can name the field that carries one),
 * then walked field by field.  Every object is checked against its list of
 * known keys first, so an unknown or misspelt field is an error rather than
 * something silently ignored.  The model is built in a private struct and
 * handed out only when everything passed.
 *
 * Notes:
 * - Secret values never reach an error message: errors about `secrets`
 *   name the variable, never the value, and JSON syntax errors are reported
 *   by line and column without jansson's "near '<token>'" excerpt.
 * - After parsing, the secret strings inside the jansson tree are zeroed
 *   before the tree is released, and the model's own copies are zeroed in
 *   sluice_launch_free().
 * - The canonical JSON is built from the model, not from the input, so key
 *   order, spelling variants (profile alias, signal prefix, time format,
 *   memory units) and the input form (native or NVFlare) do not change it.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "base/marker.h"
#include "launch.h"

struct sluice_launch {
    sluice_launch_spec_t spec;
    size_t n_secrets;
    char **secret_names;  /* sorted */
    char **secret_values; /* NULL when reloaded from the store */
    char hash[65];
};

typedef struct {
    const sluice_launch_policy_t *pol;
    unsigned flags;
    sluice_error_t *err;
} pctx_t;

#define PATH_CAP 320
#define ECHO_CAP 72

/* ---- small helpers ----------------------------------------------------- */

static char *xstrdup(const char *s)
{
    size_t n;
    char *p;

    if (s == NULL)
        return NULL;
    n = strlen(s);
    p = malloc(n + 1);
    if (p != NULL)
        memcpy(p, s, n + 1);
    return p;
}

/* A value quoted into an error: at most ECHO_CAP bytes, control bytes
 * shown as '?', so hostile input cannot forge log lines. */
static const char *echo(char *dst, const char *s)
{
    size_t i, n = strlen(s);

    for (i = 0; i < n && i < ECHO_CAP - 4; i++)
        dst[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    if (i < n) {
        memcpy(dst + i, "...", 3);
        i += 3;
    }
    dst[i] = '\0';
    return dst;
}

/* Bounded concatenation for JSON paths; a path that does not fit is cut. */
static void path_join(char *dst, const char *a, const char *sep, const char *b)
{
    size_t used = 0;
    const char *parts[3] = {a, sep, b};
    size_t i, n;

    for (i = 0; i < 3; i++) {
        n = strlen(parts[i]);
        if (n > PATH_CAP - 1 - used)
            n = PATH_CAP - 1 - used;
        memmove(dst + used, parts[i], n);
        used += n;
    }
    dst[used] = '\0';
}

static void path_key(char *dst, const char *parent, const char *key)
{
    char k[ECHO_CAP];

    echo(k, key);
    if (parent == NULL || parent[0] == '\0')
        path_join(dst, "", "", k);
    else
        path_join(dst, parent, ".", k);
}

static void path_idx(char *dst, const char *parent, size_t i)
{
    char idx[32];

    snprintf(idx, sizeof(idx), "[%zu]", i);
    path_join(dst, parent, "", idx);
}

static sluice_err perr(pctx_t *c, const char *path, const char *fmt, ...) SLUICE_PRINTF(3, 4);

static sluice_err perr(pctx_t *c, const char *path, const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sluice_errorf(c->err, SLUICE_EINVAL, "%s: %s", path, msg);
}

static sluice_err oom(pctx_t *c)
{
    return sluice_errorf(c->err, SLUICE_ENOMEM, "launch request: out of memory");
}

static bool in_list(const char *const *keys, const char *k)
{
    size_t i;

    for (i = 0; keys[i] != NULL; i++)
        if (strcmp(keys[i], k) == 0)
            return true;
    return false;
}

static sluice_err check_keys(pctx_t *c, json_t *obj, const char *path, const char *const *keys)
{
    const char *k;
    json_t *v;
    char p[PATH_CAP];

    json_object_foreach(obj, k, v)
    {
        if (!in_list(keys, k)) {
            path_key(p, path, k);
            return perr(c, p, "unknown field");
        }
    }
    return SLUICE_OK;
}

static bool charset_ok(const char *s, const char *extra, bool upper)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            (upper && ch >= 'A' && ch <= 'Z') || (ch != 0 && strchr(extra, ch) != NULL))
            continue;
        return false;
    }
    return true;
}

/* ---- typed getters ----------------------------------------------------- */

/* A string value: type, NUL bytes, length (bytes), emptiness. */
static sluice_err
want_string(pctx_t *c, json_t *v, const char *path, size_t max, bool allow_empty, const char **out)
{
    const char *s;

    if (!json_is_string(v))
        return perr(c, path, "expected a string");
    s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return perr(c, path, "contains a NUL byte");
    if (json_string_length(v) > max)
        return perr(c, path, "longer than %zu bytes", max);
    if (!allow_empty && s[0] == '\0')
        return perr(c, path, "must not be empty");
    *out = s;
    return SLUICE_OK;
}

static sluice_err
dup_string(pctx_t *c, json_t *v, const char *path, size_t max, bool allow_empty, char **out)
{
    const char *s = NULL;
    sluice_err rc;

    if ((rc = want_string(c, v, path, max, allow_empty, &s)) != SLUICE_OK)
        return rc;
    if ((*out = xstrdup(s)) == NULL)
        return oom(c);
    return SLUICE_OK;
}

static sluice_err
want_uint(pctx_t *c, json_t *v, const char *path, uint64_t min, uint64_t max, uint64_t *out)
{
    json_int_t n;
    char what[96];

    if (max == UINT64_MAX)
        snprintf(what, sizeof(what), "expected an integer >= %llu", (unsigned long long)min);
    else
        snprintf(what, sizeof(what), "expected an integer between %llu and %llu",
                 (unsigned long long)min, (unsigned long long)max);
    if (!json_is_integer(v))
        return perr(c, path, "%s", what);
    n = json_integer_value(v);
    if (n < 0 || (uint64_t)n < min || (uint64_t)n > max)
        return perr(c, path, "%s (got %lld)", what, (long long)n);
    *out = (uint64_t)n;
    return SLUICE_OK;
}

static sluice_err want_bool(pctx_t *c, json_t *v, const char *path, bool *out)
{
    if (!json_is_boolean(v))
        return perr(c, path, "expected true or false");
    *out = json_is_true(v);
    return SLUICE_OK;
}

static void free_strv(char **v, size_t n)
{
    size_t i;

    if (v == NULL)
        return;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* An array of non-empty strings (arguments). */
static sluice_err want_args(pctx_t *c, json_t *v, const char *path, char ***out, size_t *n_out)
{
    char **args = NULL;
    size_t i, n;
    char p[PATH_CAP];
    sluice_err rc = SLUICE_OK;

    if (!json_is_array(v))
        return perr(c, path, "expected an array of strings");
    n = json_array_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return perr(c, path, "more than %d items", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (args = calloc(n, sizeof(*args))) == NULL)
        return oom(c);
    for (i = 0; i < n; i++) {
        path_idx(p, path, i);
        /* an empty argument is legitimate ("" on a command line) */
        if ((rc = dup_string(c, json_array_get(v, i), p, SLUICE_LAUNCH_MAX_STRING, true,
                             &args[i])) != SLUICE_OK)
            goto out;
    }
    *out = args;
    *n_out = n;
    args = NULL;
out:
    free_strv(args, n);
    return rc;
}

/* ---- value syntaxes (internal API, see launch.h) ----------------------- */

static const char *const reserved_prefixes[] = {"SLURM_",  "SLUICE_", "NVFL_",      "SRUN_",
                                                "SBATCH_", "SALLOC_", "APPTAINER",  "SINGULARITY",
                                                "ENROOT_", "PYXIS_",  "BASH_FUNC_", NULL};

static const char *const forbidden_names[] = {"LD_PRELOAD",     "LD_AUDIT", "BASH_ENV",   "ENV",
                                              "SHELLOPTS",      "BASHOPTS", "IFS",        "PS4",
                                              "PROMPT_COMMAND", "CDPATH",   "GLOBIGNORE", NULL};

const char *launch_envname_check(const char *name)
{
    size_t i, n = strlen(name);

    if (n == 0 || n > 128)
        return "expected a variable name of 1 to 128 bytes";
    if (!(isalpha((unsigned char)name[0]) || name[0] == '_'))
        return "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*";
    for (i = 1; i < n; i++)
        if (!(isalnum((unsigned char)name[i]) || name[i] == '_') || (unsigned char)name[i] > 0x7f)
            return "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*";
    for (i = 0; reserved_prefixes[i] != NULL; i++)
        if (strncmp(name, reserved_prefixes[i], strlen(reserved_prefixes[i])) == 0)
            return "uses a reserved prefix (SLURM_, SLUICE_, NVFL_, SRUN_, SBATCH_, SALLOC_, "
                   "APPTAINER, SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_)";
    for (i = 0; forbidden_names[i] != NULL; i++)
        if (strcmp(name, forbidden_names[i]) == 0)
            return "is reserved: it changes how the shell or the dynamic loader behaves";
    return NULL;
}

/* Read up to 9 decimal digits; returns the number of digits read (0: none). */
static size_t read_num(const char *s, uint64_t *v)
{
    size_t i = 0;

    *v = 0;
    while (s[i] >= '0' && s[i] <= '9') {
        if (i == 9)
            return 0;
        *v = *v * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    return i;
}

const char *launch_time_parse(const char *s, uint32_t *minutes)
{
    static const char *const bad = "expected minutes or a Slurm time (MM, MM:SS, HH:MM:SS, D-HH, "
                                   "D-HH:MM, D-HH:MM:SS)";
    uint64_t f[4] = {0, 0, 0, 0}, days = 0, secs;
    size_t nf = 0, k;
    bool has_days = false;
    const char *p = s;

    if ((k = read_num(p, &f[0])) == 0)
        return bad;
    p += k;
    nf = 1;
    if (*p == '-') {
        has_days = true;
        days = f[0];
        p++;
        nf = 0;
        if ((k = read_num(p, &f[0])) == 0)
            return bad;
        p += k;
        nf = 1;
    }
    while (*p == ':' && nf < 3) {
        p++;
        if ((k = read_num(p, &f[nf])) == 0)
            return bad;
        p += k;
        nf++;
    }
    if (*p != '\0')
        return bad;
    if (has_days) {
        /* D-HH, D-HH:MM, D-HH:MM:SS */
        secs = days * 86400 + f[0] * 3600 + (nf > 1 ? f[1] * 60 : 0) + (nf > 2 ? f[2] : 0);
    } else if (nf == 1) {
        secs = f[0] * 60; /* MM */
    } else if (nf == 2) {
        secs = f[0] * 60 + f[1]; /* MM:SS */
    } else {
        secs = f[0] * 3600 + f[1] * 60 + f[2]; /* HH:MM:SS */
    }
    secs = (secs + 59) / 60;
    if (secs == 0)
        return "must be at least 1 minute";
    if (secs > SLUICE_LAUNCH_MAX_TIME_MINUTES)
        return "must be at most 365 days";
    *minutes = (uint32_t)secs;
    return NULL;
}

#define MAX_MEM_MIB (UINT64_C(64) * 1024 * 1024) /* 64 TiB */

const char *launch_mem_parse(const char *s, uint64_t *mib)
{
    static const char *const bad = "expected MiB as an integer or a size like \"512M\", "
                                   "\"32G\" or \"1T\"";
    uint64_t v = 0;
    size_t i = 0;

    while (s[i] >= '0' && s[i] <= '9') {
        if (i == 12)
            return bad;
        v = v * 10 + (uint64_t)(s[i] - '0');
        i++;
    }
    if (i == 0)
        return bad;
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
        return bad;
    }
    if (s[i] != '\0')
        return bad;
    if (v == 0)
        return "must be at least 1 MiB";
    if (v > MAX_MEM_MIB)
        return "must be at most 64 TiB";
    *mib = v;
    return NULL;
}

const char *launch_path_normalize(const char *in, char **out)
{
    size_t n = strlen(in), i = 0, o = 0;
    char *res;

    if (n == 0 || in[0] != '/')
        return "expected an absolute path";
    if (n > SLUICE_LAUNCH_MAX_STRING)
        return "path longer than 4096 bytes";
    for (i = 0; i < n; i++)
        if ((unsigned char)in[i] < 0x20 || in[i] == 0x7f)
            return "path contains a control character";
    if ((res = malloc(n + 2)) == NULL)
        return NULL; /* the caller checks *out */
    i = 0;
    while (i < n) {
        size_t start, len;

        while (i < n && in[i] == '/')
            i++;
        start = i;
        while (i < n && in[i] != '/')
            i++;
        len = i - start;
        if (len == 0 || (len == 1 && in[start] == '.'))
            continue;
        if (len == 2 && in[start] == '.' && in[start + 1] == '.') {
            free(res);
            return "path must not contain \"..\"";
        }
        res[o++] = '/';
        memcpy(res + o, in + start, len);
        o += len;
    }
    if (o == 0)
        res[o++] = '/';
    res[o] = '\0';
    *out = res;
    return NULL;
}

static const char *const signal_names[] = {
    "HUP",  "INT",  "QUIT", "ABRT", "KILL", "USR1",   "USR2", "ALRM",  "TERM", "CONT",
    "STOP", "TSTP", "URG",  "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "PWR",  NULL};

const char *launch_signal_normalize(const char *in, char **out)
{
    static const char *const bad = "expected <signal>[@<seconds>], e.g. \"USR1@120\"; signal "
                                   "is a name (HUP, INT, USR1, TERM, ...) or a number 1-64";
    char sig[16];
    const char *at = strchr(in, '@');
    size_t n = at ? (size_t)(at - in) : strlen(in);
    uint64_t secs = 60, num;
    size_t k;
    char buf[48];

    if (n == 0 || n >= sizeof(sig))
        return bad;
    memcpy(sig, in, n);
    sig[n] = '\0';
    if (sig[0] >= '0' && sig[0] <= '9') {
        k = read_num(sig, &num);
        if (k != n || num < 1 || num > 64)
            return bad;
    } else {
        const char *name = strncmp(sig, "SIG", 3) == 0 ? sig + 3 : sig;
        bool found = false;
        size_t i;

        for (i = 0; signal_names[i] != NULL; i++)
            if (strcmp(name, signal_names[i]) == 0)
                found = true;
        if (!found)
            return bad;
        memmove(sig, name, strlen(name) + 1);
    }
    if (at != NULL) {
        k = read_num(at + 1, &secs);
        if (k == 0 || at[1 + k] != '\0')
            return bad;
        if (secs > 65535)
            return "seconds must be between 0 and 65535";
    }
    snprintf(buf, sizeof(buf), "%s@%llu", sig, (unsigned long long)secs);
    if ((*out = xstrdup(buf)) == NULL)
        return NULL;
    return NULL;
}

/* ---- profile and dependency names -------------------------------------- */

const char *sluice_launch_profile_name(sluice_launch_profile p)
{
    switch (p) {
    case SLUICE_LAUNCH_PROFILE_NONE:
        return "none";
    case SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS:
        return "enroot-pyxis";
    case SLUICE_LAUNCH_PROFILE_APPTAINER:
        return "apptainer";
    default:
        return "";
    }
}

sluice_launch_profile sluice_launch_profile_parse(const char *name)
{
    if (name == NULL)
        return SLUICE_LAUNCH_PROFILE_UNSET;
    if (strcmp(name, "none") == 0)
        return SLUICE_LAUNCH_PROFILE_NONE;
    if (strcmp(name, "enroot-pyxis") == 0 || strcmp(name, "pyxis") == 0)
        return SLUICE_LAUNCH_PROFILE_ENROOT_PYXIS;
    if (strcmp(name, "apptainer") == 0)
        return SLUICE_LAUNCH_PROFILE_APPTAINER;
    return SLUICE_LAUNCH_PROFILE_UNSET;
}

const char *sluice_launch_dep_name(sluice_launch_dep d)
{
    switch (d) {
    case SLUICE_LAUNCH_DEP_AFTER:
        return "after";
    case SLUICE_LAUNCH_DEP_AFTEROK:
        return "afterok";
    case SLUICE_LAUNCH_DEP_AFTERANY:
        return "afterany";
    default:
        return "";
    }
}

/* ---- freeing ----------------------------------------------------------- */

static void wipe_free(char *s)
{
    if (s == NULL)
        return;
    OPENSSL_cleanse(s, strlen(s));
    free(s);
}

static void pool_clear(sluice_launch_pool_t *p)
{
    free(p->name);
    free(p->gpu_series);
    free(p->command);
    free_strv(p->args, p->n_args);
    free(p->additional_node_command);
    free(p->constraint);
    free(p->gres);
    memset(p, 0, sizeof(*p));
}

void sluice_launch_free(sluice_launch_t *l)
{
    sluice_launch_spec_t *s;
    size_t i;

    if (l == NULL)
        return;
    s = &l->spec;
    free(s->launch_id);
    free(s->site);
    free(s->study);
    free(s->image);
    free(s->command);
    free_strv(s->args, s->n_args);
    free(s->workdir);
    for (i = 0; i < s->n_env; i++) {
        free(s->env[i].name);
        free(s->env[i].value);
    }
    free(s->env);
    free_strv(s->secret_env, s->n_secret_env);
    for (i = 0; i < s->n_mounts; i++) {
        free(s->mounts[i].source);
        free(s->mounts[i].target);
    }
    free(s->mounts);
    free(s->depends_on);
    free(s->signal);
    free(s->account);
    free(s->qos);
    free(s->partition);
    for (i = 0; i < s->n_pools; i++)
        pool_clear(&s->pools[i]);
    free(s->pools);
    for (i = 0; i < l->n_secrets; i++) {
        free(l->secret_names[i]);
        if (l->secret_values != NULL)
            wipe_free(l->secret_values[i]);
    }
    free(l->secret_names);
    free(l->secret_values);
    OPENSSL_cleanse(l, sizeof(*l));
    free(l);
}

/* ---- field parsers ----------------------------------------------------- */

/* [A-Za-z0-9._-]{1,max}; `path_safe` also refuses "." and "..". */
static sluice_err
want_ident(pctx_t *c, json_t *v, const char *path, size_t max, bool path_safe, char **out)
{
    const char *s = NULL;
    sluice_err rc;

    if ((rc = want_string(c, v, path, max, false, &s)) != SLUICE_OK)
        return rc;
    if (!charset_ok(s, "._-", true))
        return perr(c, path, "expected 1 to %zu characters from [A-Za-z0-9._-]", max);
    if (path_safe && (strcmp(s, ".") == 0 || strcmp(s, "..") == 0))
        return perr(c, path, "must not be \".\" or \"..\"");
    if ((*out = xstrdup(s)) == NULL)
        return oom(c);
    return SLUICE_OK;
}

/* A launch_id: the rule is base/marker.c's (issue 12: one implementation). */
_Static_assert(SLUICE_LAUNCH_MAX_ID == MARKER_LAUNCH_ID_MAX, "one launch_id length");
static sluice_err want_launch_id(pctx_t *c, json_t *v, const char *path, char **out)
{
    const char *s = NULL;
    sluice_err rc;

    if ((rc = want_string(c, v, path, SLUICE_LAUNCH_MAX_ID, false, &s)) != SLUICE_OK)
        return rc;
    if (!marker_launch_id_ok(s, strlen(s)))
        return perr(c, path, "%s", MARKER_LAUNCH_ID_RULE);
    if ((*out = xstrdup(s)) == NULL)
        return oom(c);
    return SLUICE_OK;
}

static sluice_err want_path(pctx_t *c, json_t *v, const char *path, char **out)
{
    const char *s = NULL, *why;
    sluice_err rc;

    if ((rc = want_string(c, v, path, SLUICE_LAUNCH_MAX_STRING, false, &s)) != SLUICE_OK)
        return rc;
    *out = NULL;
    why = launch_path_normalize(s, out);
    if (why != NULL)
        return perr(c, path, "%s", why);
    if (*out == NULL)
        return oom(c);
    return SLUICE_OK;
}

static bool looks_like_registry(const char *s)
{
    static const char *const schemes[] = {
        "docker-daemon:", "docker-archive:", "oci-archive:", "dockerd:", "podman:", NULL};
    size_t i;

    if (strstr(s, "://") != NULL)
        return true;
    for (i = 0; schemes[i] != NULL; i++)
        if (strncmp(s, schemes[i], strlen(schemes[i])) == 0)
            return true;
    /* name:tag, host/name, host:port/name:tag */
    return s[0] != '/' && s[0] != '.' && (strchr(s, ':') != NULL || strchr(s, '/') != NULL);
}

static sluice_err want_image(pctx_t *c, json_t *v, const char *path, char **out)
{
    const char *s = NULL;
    char e[ECHO_CAP];
    sluice_err rc;

    if ((rc = want_string(c, v, path, SLUICE_LAUNCH_MAX_STRING, false, &s)) != SLUICE_OK)
        return rc;
    if (looks_like_registry(s))
        return perr(c, path,
                    "registry reference \"%s\" is refused; give the absolute path of an image "
                    "file (.sqsh for enroot-pyxis, .sif for apptainer) on shared storage",
                    echo(e, s));
    if (s[0] != '/')
        return perr(c, path, "expected an absolute path to a .sqsh or .sif file");
    if (strchr(s, ':') != NULL || strchr(s, ',') != NULL)
        return perr(c, path, "must not contain ':' or ','");
    return want_path(c, v, path, out);
}

static sluice_err check_policy_list(pctx_t *c,
                                    const char *path,
                                    const char *what,
                                    const char *value,
                                    const char *const *list,
                                    size_t n)
{
    char allowed[200] = "";
    char e[ECHO_CAP];
    size_t i, used = 0;

    if (list == NULL || n == 0)
        return perr(c, path, "site policy does not let a request choose the %s", what);
    for (i = 0; i < n; i++)
        if (list[i] != NULL && (strcmp(list[i], "*") == 0 || strcmp(list[i], value) == 0))
            return SLUICE_OK;
    for (i = 0; i < n && used < sizeof(allowed) - 1; i++) {
        int w = snprintf(allowed + used, sizeof(allowed) - used, "%s%s", i ? ", " : "",
                         list[i] ? list[i] : "");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return perr(c, path, "%s \"%s\" is not allowed by site policy (allowed: %s)", what,
                echo(e, value), allowed);
}

static sluice_err parse_env(pctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    const char *k, *why, *val = NULL;
    json_t *x;
    size_t n, i = 0;
    char p[PATH_CAP];
    sluice_err rc;

    if (!json_is_object(v))
        return perr(c, "env", "expected an object of name to string");
    n = json_object_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return perr(c, "env", "more than %d variables", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (s->env = calloc(n, sizeof(*s->env))) == NULL)
        return oom(c);
    json_object_foreach(v, k, x)
    {
        path_key(p, "env", k);
        if ((why = launch_envname_check(k)) != NULL)
            return perr(c, p, "%s", why);
        if ((rc = want_string(c, x, p, SLUICE_LAUNCH_MAX_VALUE, true, &val)) != SLUICE_OK)
            return rc;
        s->env[i].name = xstrdup(k);
        s->env[i].value = xstrdup(val);
        s->n_env = ++i;
        if (s->env[i - 1].name == NULL || s->env[i - 1].value == NULL)
            return oom(c);
    }
    return SLUICE_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_var(const void *a, const void *b)
{
    return strcmp(((const sluice_launch_var_t *)a)->name, ((const sluice_launch_var_t *)b)->name);
}

static sluice_err parse_secret_env(pctx_t *c, json_t *v, const char *key, char ***out, size_t *nout)
{
    size_t i, n;
    char p[PATH_CAP];
    const char *name = NULL, *why;
    char **names;
    sluice_err rc;

    if (!json_is_array(v))
        return perr(c, key, "expected an array of variable names");
    n = json_array_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return perr(c, key, "more than %d names", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (*out = calloc(n, sizeof(char *))) == NULL)
        return oom(c);
    names = *out;
    for (i = 0; i < n; i++) {
        path_idx(p, key, i);
        if ((rc = want_string(c, json_array_get(v, i), p, 128, false, &name)) != SLUICE_OK)
            return rc;
        if ((why = launch_envname_check(name)) != NULL)
            return perr(c, p, "%s", why);
        if ((names[i] = xstrdup(name)) == NULL)
            return oom(c);
        *nout = i + 1;
    }
    if (n > 1)
        qsort(names, n, sizeof(char *), cmp_str);
    for (i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            return perr(c, key, "\"%s\" is listed twice", names[i]);
    return SLUICE_OK;
}

static sluice_err parse_secrets(pctx_t *c, json_t *v, sluice_launch_t *l)
{
    const char *k, *why, *val = NULL;
    json_t *x;
    size_t n, i = 0;
    char p[PATH_CAP];
    sluice_err rc;

    if (!json_is_object(v))
        return perr(c, "secrets", "expected an object of name to string");
    n = json_object_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return perr(c, "secrets", "more than %d secrets", SLUICE_LAUNCH_MAX_ITEMS);
    if (n == 0)
        return SLUICE_OK;
    if ((l->secret_names = calloc(n, sizeof(char *))) == NULL ||
        (l->secret_values = calloc(n, sizeof(char *))) == NULL)
        return oom(c);
    json_object_foreach(v, k, x)
    {
        path_key(p, "secrets", k);
        if ((why = launch_envname_check(k)) != NULL)
            return perr(c, p, "%s", why);
        /* want_string's messages never quote the value */
        if ((rc = want_string(c, x, p, SLUICE_LAUNCH_MAX_VALUE, true, &val)) != SLUICE_OK)
            return rc;
        l->secret_names[i] = xstrdup(k);
        l->secret_values[i] = xstrdup(val);
        l->n_secrets = ++i;
        if (l->secret_names[i - 1] == NULL || l->secret_values[i - 1] == NULL)
            return oom(c);
    }
    /* sort names and values together (selection sort; n <= 256) */
    for (i = 0; i + 1 < n; i++) {
        size_t j, m = i;
        for (j = i + 1; j < n; j++)
            if (strcmp(l->secret_names[j], l->secret_names[m]) < 0)
                m = j;
        if (m != i) {
            char *t = l->secret_names[i];
            l->secret_names[i] = l->secret_names[m];
            l->secret_names[m] = t;
            t = l->secret_values[i];
            l->secret_values[i] = l->secret_values[m];
            l->secret_values[m] = t;
        }
    }
    return SLUICE_OK;
}

static bool target_forbidden(const char *t)
{
    static const char *const bad[] = {"/proc", "/sys", "/dev", NULL};
    size_t i, n;

    if (strcmp(t, "/") == 0)
        return true;
    for (i = 0; bad[i] != NULL; i++) {
        n = strlen(bad[i]);
        if (strncmp(t, bad[i], n) == 0 && (t[n] == '\0' || t[n] == '/'))
            return true;
    }
    return false;
}

static sluice_err parse_mounts(pctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    static const char *const keys[] = {"source", "target", "mode", NULL};
    size_t i, j, n;
    char p[PATH_CAP], q[PATH_CAP];
    sluice_err rc;

    if (!json_is_array(v))
        return perr(c, "mounts", "expected an array of mounts");
    n = json_array_size(v);
    if (n > 64)
        return perr(c, "mounts", "more than 64 mounts");
    if (n > 0 && (s->mounts = calloc(n, sizeof(*s->mounts))) == NULL)
        return oom(c);
    for (i = 0; i < n; i++) {
        json_t *m = json_array_get(v, i), *x;
        sluice_launch_mount_t *mt = &s->mounts[i];
        const char *mode = NULL;

        path_idx(p, "mounts", i);
        if (!json_is_object(m))
            return perr(c, p, "expected an object with source, target and mode");
        if ((rc = check_keys(c, m, p, keys)) != SLUICE_OK)
            return rc;
        s->n_mounts = i + 1;
        path_key(q, p, "source");
        if ((x = json_object_get(m, "source")) == NULL)
            return perr(c, q, "required");
        if ((rc = want_path(c, x, q, &mt->source)) != SLUICE_OK)
            return rc;
        if (strpbrk(mt->source, ":,") != NULL)
            return perr(c, q, "must not contain ':' or ','");
        path_key(q, p, "target");
        if ((x = json_object_get(m, "target")) == NULL)
            return perr(c, q, "required");
        if ((rc = want_path(c, x, q, &mt->target)) != SLUICE_OK)
            return rc;
        if (strpbrk(mt->target, ":,") != NULL)
            return perr(c, q, "must not contain ':' or ','");
        if (target_forbidden(mt->target))
            return perr(c, q, "must not be /, /proc, /sys or /dev (or below them)");
        for (j = 0; j < i; j++)
            if (strcmp(s->mounts[j].target, mt->target) == 0)
                return perr(c, q, "\"%s\" is already the target of mounts[%zu]", mt->target, j);
        path_key(q, p, "mode");
        if ((x = json_object_get(m, "mode")) != NULL) {
            if ((rc = want_string(c, x, q, 8, false, &mode)) != SLUICE_OK)
                return rc;
            if (strcmp(mode, "ro") == 0)
                mt->rw = false;
            else if (strcmp(mode, "rw") == 0)
                mt->rw = true;
            else
                return perr(c, q, "expected \"ro\" or \"rw\"");
        }
    }
    return SLUICE_OK;
}

static sluice_err parse_time_value(pctx_t *c, json_t *v, const char *path, uint32_t *out)
{
    const char *s = NULL, *why;
    uint64_t m = 0;
    sluice_err rc;

    if (json_is_integer(v)) {
        if ((rc = want_uint(c, v, path, 1, SLUICE_LAUNCH_MAX_TIME_MINUTES, &m)) != SLUICE_OK)
            return rc;
        *out = (uint32_t)m;
        return SLUICE_OK;
    }
    if (!json_is_string(v))
        return perr(c, path, "expected minutes (integer) or a Slurm time string");
    if ((rc = want_string(c, v, path, 32, false, &s)) != SLUICE_OK)
        return rc;
    if ((why = launch_time_parse(s, out)) != NULL)
        return perr(c, path, "%s", why);
    return SLUICE_OK;
}

static sluice_err parse_pending(pctx_t *c, json_t *v, const char *path, sluice_launch_spec_t *s)
{
    uint64_t n = 0;
    uint32_t site =
        c->pol->pending_timeout ? c->pol->pending_timeout : SLUICE_LAUNCH_DEFAULT_PENDING_TIMEOUT;
    sluice_err rc;

    if ((rc = want_uint(c, v, path, 1, UINT64_MAX, &n)) != SLUICE_OK)
        return rc;
    if (n > site)
        return perr(c, path,
                    "%llu s is more than the site's pending_timeout of %u s; a request may "
                    "lower it, never raise it",
                    (unsigned long long)n, site);
    s->pending_timeout = (uint32_t)n;
    return SLUICE_OK;
}

static sluice_err parse_depends(pctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    static const char *const keys[] = {"launch_id", "condition", NULL};
    const char *cond = NULL;
    json_t *x;
    sluice_err rc;

    if (!json_is_object(v))
        return perr(c, "depends_on", "expected an object with launch_id and condition");
    if ((rc = check_keys(c, v, "depends_on", keys)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(v, "launch_id")) == NULL)
        return perr(c, "depends_on.launch_id", "required");
    if ((rc = want_launch_id(c, x, "depends_on.launch_id", &s->depends_on)) != SLUICE_OK)
        return rc;
    if (strcmp(s->depends_on, s->launch_id) == 0)
        return perr(c, "depends_on.launch_id", "a launch cannot depend on itself");
    if ((x = json_object_get(v, "condition")) == NULL)
        return perr(c, "depends_on.condition", "required (after, afterok or afterany)");
    if ((rc = want_string(c, x, "depends_on.condition", 16, false, &cond)) != SLUICE_OK)
        return rc;
    if (strcmp(cond, "after") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTER;
    else if (strcmp(cond, "afterok") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTEROK;
    else if (strcmp(cond, "afterany") == 0)
        s->depends_condition = SLUICE_LAUNCH_DEP_AFTERANY;
    else
        return perr(c, "depends_on.condition", "expected \"after\", \"afterok\" or \"afterany\"");
    return SLUICE_OK;
}

static sluice_err want_node_command(pctx_t *c, json_t *v, const char *path, char **out)
{
    sluice_err rc;

    if ((rc = dup_string(c, v, path, SLUICE_LAUNCH_MAX_STRING, false, out)) != SLUICE_OK)
        return rc;
    if (strstr(*out, "${secret:") != NULL)
        return perr(c, path, "${secret:...} references are not supported");
    return SLUICE_OK;
}

/* Resolve a pool's series in the catalogue (fail-closed). */
static sluice_err resolve_series(pctx_t *c, const char *path, sluice_launch_pool_t *pool)
{
    const sluice_launch_policy_t *pol = c->pol;
    char e[ECHO_CAP];
    size_t i;

    for (i = 0; i < pol->n_series; i++) {
        const sluice_launch_series_t *ser = &pol->series[i];

        if (ser->series == NULL || strcmp(ser->series, pool->gpu_series) != 0)
            continue;
        if (ser->constraint == NULL || ser->constraint[0] == '\0')
            return perr(c, path,
                        "pool \"%s\" asks for GPU series \"%s\", which has no slurm_constraint "
                        "in the site catalogue; refused before anything is submitted",
                        pool->name, pool->gpu_series);
        if (ser->max_gpus_per_node != 0 && pool->gpus_per_node > ser->max_gpus_per_node)
            return perr(c, path,
                        "pool \"%s\" asks for %u GPUs per node; series \"%s\" has %u per node",
                        pool->name, pool->gpus_per_node, pool->gpu_series, ser->max_gpus_per_node);
        if ((pool->constraint = xstrdup(ser->constraint)) == NULL)
            return oom(c);
        if (ser->gres != NULL && (pool->gres = xstrdup(ser->gres)) == NULL)
            return oom(c);
        return SLUICE_OK;
    }
    return perr(c, path, "pool \"%s\": unknown GPU series \"%s\" (not in the site catalogue)",
                pool->name, echo(e, pool->gpu_series));
}

static sluice_err parse_pool(pctx_t *c, json_t *v, const char *path, sluice_launch_pool_t *pool)
{
    static const char *const keys[] = {"name",
                                       "gpu_series",
                                       "nodes",
                                       "gpus_per_node",
                                       "cpus_per_node",
                                       "mem_per_node_mib",
                                       "command",
                                       "args",
                                       "additional_node_command",
                                       NULL};
    char q[PATH_CAP], e[ECHO_CAP];
    const char *name = NULL;
    uint64_t n = 0;
    json_t *x;
    sluice_err rc;

    if (!json_is_object(v))
        return perr(c, path, "expected a pool object");
    if ((rc = check_keys(c, v, path, keys)) != SLUICE_OK)
        return rc;
    path_key(q, path, "name");
    if ((x = json_object_get(v, "name")) == NULL)
        return perr(c, q, "required");
    if ((rc = want_string(c, x, q, 32, false, &name)) != SLUICE_OK)
        return rc;
    if (!charset_ok(name, "_-", false))
        return perr(c, q, "\"%s\" does not match [a-z0-9_-]{1,32}", echo(e, name));
    if ((pool->name = xstrdup(name)) == NULL)
        return oom(c);
    pool->nodes = 1;
    path_key(q, path, "nodes");
    if ((x = json_object_get(v, "nodes")) != NULL) {
        if ((rc = want_uint(c, x, q, 1, SLUICE_LAUNCH_MAX_NODES, &n)) != SLUICE_OK)
            return rc;
        pool->nodes = (uint32_t)n;
    }
    path_key(q, path, "gpus_per_node");
    if ((x = json_object_get(v, "gpus_per_node")) != NULL) {
        if ((rc = want_uint(c, x, q, 0, SLUICE_LAUNCH_MAX_GPUS, &n)) != SLUICE_OK)
            return rc;
        pool->gpus_per_node = (uint32_t)n;
    }
    path_key(q, path, "cpus_per_node");
    if ((x = json_object_get(v, "cpus_per_node")) != NULL) {
        if ((rc = want_uint(c, x, q, 1, SLUICE_LAUNCH_MAX_CPUS, &n)) != SLUICE_OK)
            return rc;
        pool->cpus_per_node = (uint32_t)n;
    }
    path_key(q, path, "mem_per_node_mib");
    if ((x = json_object_get(v, "mem_per_node_mib")) != NULL) {
        if ((rc = want_uint(c, x, q, 1, MAX_MEM_MIB, &n)) != SLUICE_OK)
            return rc;
        pool->mem_per_node_mib = n;
    }
    path_key(q, path, "command");
    if ((x = json_object_get(v, "command")) != NULL) {
        if ((rc = dup_string(c, x, q, SLUICE_LAUNCH_MAX_STRING, false, &pool->command)) !=
            SLUICE_OK)
            return rc;
        pool->set_command = true;
    }
    path_key(q, path, "args");
    if ((x = json_object_get(v, "args")) != NULL) {
        if ((rc = want_args(c, x, q, &pool->args, &pool->n_args)) != SLUICE_OK)
            return rc;
        pool->set_args = true;
    }
    path_key(q, path, "additional_node_command");
    if ((x = json_object_get(v, "additional_node_command")) != NULL &&
        (rc = want_node_command(c, x, q, &pool->additional_node_command)) != SLUICE_OK)
        return rc;
    path_key(q, path, "gpu_series");
    if ((x = json_object_get(v, "gpu_series")) != NULL) {
        if ((rc = want_string(c, x, q, 64, false, &name)) != SLUICE_OK)
            return rc;
        if ((pool->gpu_series = xstrdup(name)) == NULL)
            return oom(c);
        if ((rc = resolve_series(c, q, pool)) != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static sluice_err parse_pools(pctx_t *c, json_t *v, sluice_launch_spec_t *s)
{
    size_t i, j, n;
    char p[PATH_CAP], q[PATH_CAP];
    sluice_err rc;

    if (!json_is_array(v))
        return perr(c, "pools", "expected an array of 1 to %d pools", SLUICE_LAUNCH_MAX_POOLS);
    n = json_array_size(v);
    if (n < 1 || n > SLUICE_LAUNCH_MAX_POOLS)
        return perr(c, "pools", "expected 1 to %d pools (got %zu)", SLUICE_LAUNCH_MAX_POOLS, n);
    if ((s->pools = calloc(n, sizeof(*s->pools))) == NULL)
        return oom(c);
    for (i = 0; i < n; i++) {
        path_idx(p, "pools", i);
        s->n_pools = i + 1;
        if ((rc = parse_pool(c, json_array_get(v, i), p, &s->pools[i])) != SLUICE_OK)
            return rc;
        for (j = 0; j < i; j++)
            if (strcmp(s->pools[j].name, s->pools[i].name) == 0) {
                path_key(q, p, "name");
                return perr(c, q, "\"%s\" is already the name of pools[%zu]", s->pools[i].name, j);
            }
    }
    return SLUICE_OK;
}

/* ---- the NVFlare form -------------------------------------------------- */

typedef struct {
    json_t *site; /* launcher_spec.<site>.slurm, or NULL */
    json_t *dflt; /* launcher_spec.default.slurm, or NULL */
    char site_path[PATH_CAP];
    char dflt_path[PATH_CAP];
} nvslurm_t;

/* The value of a slurm key (site block first, then default) and its path. */
static json_t *nv_get(const nvslurm_t *nv, const char *key, char *path)
{
    json_t *x;

    if (nv->site != NULL && (x = json_object_get(nv->site, key)) != NULL) {
        path_key(path, nv->site_path, key);
        return x;
    }
    if (nv->dflt != NULL && (x = json_object_get(nv->dflt, key)) != NULL) {
        path_key(path, nv->dflt_path, key);
        return x;
    }
    path_key(path, nv->site != NULL || nv->dflt == NULL ? nv->site_path : nv->dflt_path, key);
    return NULL;
}

static sluice_err
nv_slurm_block(pctx_t *c, json_t *ls, const char *name, json_t **out, char *path_out)
{
    static const char *const keys[] = {"image",
                                       "nodes",
                                       "gpus_per_node",
                                       "cpus_per_node",
                                       "mem_per_node",
                                       "time",
                                       "pending_timeout",
                                       "additional_node_command",
                                       NULL};
    char p[PATH_CAP];
    json_t *blk, *sl;
    sluice_err rc;

    path_key(p, "launcher_spec", name);
    path_key(path_out, p, "slurm");
    *out = NULL;
    if ((blk = json_object_get(ls, name)) == NULL)
        return SLUICE_OK;
    if (!json_is_object(blk))
        return perr(c, p, "expected an object keyed by launcher (\"slurm\")");
    /* keys of other launchers (docker, k8s, ...) belong to them: ignored */
    if ((sl = json_object_get(blk, "slurm")) == NULL)
        return SLUICE_OK;
    if (!json_is_object(sl))
        return perr(c, path_out, "expected an object");
    if ((rc = check_keys(c, sl, path_out, keys)) != SLUICE_OK)
        return rc;
    *out = sl;
    return SLUICE_OK;
}

static sluice_err parse_nvflare(pctx_t *c, json_t *root, sluice_launch_spec_t *s)
{
    static const char *const rkeys[] = {"num_of_gpus", NULL};
    json_t *rs = json_object_get(root, "resource_spec");
    json_t *ls = json_object_get(root, "launcher_spec");
    json_t *x, *ng = NULL;
    nvslurm_t nv;
    sluice_launch_pool_t *pool;
    char ng_path[PATH_CAP] = "", p[PATH_CAP], gp_path[PATH_CAP], nodes_path[PATH_CAP];
    uint64_t n = 0, num_gpus = 0;
    bool has_gpus = false, has_gpn = false;
    const char *str = NULL, *why;
    sluice_err rc;

    memset(&nv, 0, sizeof(nv));
    if (rs != NULL) {
        if (!json_is_object(rs))
            return perr(c, "resource_spec", "expected an object");
        if (json_object_get(rs, "num_of_gpus") != NULL) {
            /* flat form: {"num_of_gpus": N} */
            if ((rc = check_keys(c, rs, "resource_spec", rkeys)) != SLUICE_OK)
                return rc;
            ng = json_object_get(rs, "num_of_gpus");
            snprintf(ng_path, sizeof(ng_path), "resource_spec.num_of_gpus");
        } else if ((x = json_object_get(rs, s->site)) != NULL) {
            /* NVFlare's own form: keyed by site; other sites' blocks are theirs */
            path_key(p, "resource_spec", s->site);
            if (!json_is_object(x))
                return perr(c, p, "expected an object");
            if ((rc = check_keys(c, x, p, rkeys)) != SLUICE_OK)
                return rc;
            ng = json_object_get(x, "num_of_gpus");
            path_key(ng_path, p, "num_of_gpus");
        }
        if (ng != NULL) {
            if ((rc = want_uint(c, ng, ng_path, 0,
                                (uint64_t)SLUICE_LAUNCH_MAX_NODES * SLUICE_LAUNCH_MAX_GPUS,
                                &num_gpus)) != SLUICE_OK)
                return rc;
            has_gpus = true;
        }
    }
    if (ls != NULL) {
        if (!json_is_object(ls))
            return perr(c, "launcher_spec", "expected an object keyed by site");
        if ((rc = nv_slurm_block(c, ls, s->site, &nv.site, nv.site_path)) != SLUICE_OK ||
            (rc = nv_slurm_block(c, ls, "default", &nv.dflt, nv.dflt_path)) != SLUICE_OK)
            return rc;
    } else {
        path_key(p, "launcher_spec", s->site);
        path_key(nv.site_path, p, "slurm");
    }

    if ((s->pools = calloc(1, sizeof(*s->pools))) == NULL)
        return oom(c);
    s->n_pools = 1;
    pool = &s->pools[0];
    if ((pool->name = xstrdup("main")) == NULL)
        return oom(c);
    pool->nodes = 1;
    if ((x = nv_get(&nv, "nodes", nodes_path)) != NULL) {
        if ((rc = want_uint(c, x, nodes_path, 1, SLUICE_LAUNCH_MAX_NODES, &n)) != SLUICE_OK)
            return rc;
        pool->nodes = (uint32_t)n;
    }
    if ((x = nv_get(&nv, "gpus_per_node", gp_path)) != NULL) {
        if ((rc = want_uint(c, x, gp_path, 0, SLUICE_LAUNCH_MAX_GPUS, &n)) != SLUICE_OK)
            return rc;
        pool->gpus_per_node = (uint32_t)n;
        has_gpn = true;
    }
    if ((x = nv_get(&nv, "cpus_per_node", p)) != NULL) {
        if ((rc = want_uint(c, x, p, 1, SLUICE_LAUNCH_MAX_CPUS, &n)) != SLUICE_OK)
            return rc;
        pool->cpus_per_node = (uint32_t)n;
    }
    if ((x = nv_get(&nv, "mem_per_node", p)) != NULL) {
        if (json_is_integer(x)) {
            if ((rc = want_uint(c, x, p, 1, MAX_MEM_MIB, &pool->mem_per_node_mib)) != SLUICE_OK)
                return rc;
        } else if (json_is_string(x)) {
            if ((rc = want_string(c, x, p, 32, false, &str)) != SLUICE_OK)
                return rc;
            if ((why = launch_mem_parse(str, &pool->mem_per_node_mib)) != NULL)
                return perr(c, p, "%s", why);
        } else {
            return perr(c, p, "expected MiB as an integer or a size like \"32G\"");
        }
    }
    if ((x = nv_get(&nv, "time", p)) != NULL &&
        (rc = parse_time_value(c, x, p, &s->time_limit)) != SLUICE_OK)
        return rc;
    if ((x = nv_get(&nv, "pending_timeout", p)) != NULL &&
        (rc = parse_pending(c, x, p, s)) != SLUICE_OK)
        return rc;
    if ((x = nv_get(&nv, "image", p)) != NULL) {
        if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE)
            return perr(c, p, "job images are refused where the effective sandbox is none");
        if ((rc = want_image(c, x, p, &s->image)) != SLUICE_OK)
            return rc;
    }
    /* null: application-owned fan-out, the same as leaving it out */
    if ((x = nv_get(&nv, "additional_node_command", p)) != NULL && !json_is_null(x) &&
        (rc = want_node_command(c, x, p, &pool->additional_node_command)) != SLUICE_OK)
        return rc;

    if (has_gpus && has_gpn) {
        if ((uint64_t)pool->nodes * pool->gpus_per_node != num_gpus)
            return perr(c, ng_path,
                        "%llu must equal nodes * gpus_per_node = %u * %u = %llu (%s, %s)",
                        (unsigned long long)num_gpus, pool->nodes, pool->gpus_per_node,
                        (unsigned long long)pool->nodes * pool->gpus_per_node, nodes_path, gp_path);
    } else if (has_gpus && num_gpus > 0) {
        if (pool->nodes > 1)
            return perr(c, gp_path, "required when num_of_gpus (%llu) > 0 and nodes (%u) > 1",
                        (unsigned long long)num_gpus, pool->nodes);
        if (num_gpus > SLUICE_LAUNCH_MAX_GPUS)
            return perr(c, ng_path, "%llu GPUs on one node is more than %d",
                        (unsigned long long)num_gpus, SLUICE_LAUNCH_MAX_GPUS);
        pool->gpus_per_node = (uint32_t)num_gpus;
    }
    return SLUICE_OK;
}

/* ---- the request ------------------------------------------------------- */

static const char *const native_keys[] = {
    "launch_id",  "site",    "study",      "profile",   "image",   "command",    "args",
    "workdir",    "env",     "secret_env", "secrets",   "mounts",  "time_limit", "pending_timeout",
    "depends_on", "requeue", "signal",     "exclusive", "account", "qos",        "partition",
    "pools",      NULL};
static const char *const nvflare_only[] = {"resource_spec", "launcher_spec", NULL};
static const char *const native_only[] = {"pools", "image", "time_limit", "pending_timeout", NULL};

static sluice_err parse_policy_name(pctx_t *c,
                                    json_t *root,
                                    const char *key,
                                    const char *what,
                                    const char *const *list,
                                    size_t n,
                                    char **out)
{
    json_t *x = json_object_get(root, key);
    sluice_err rc;

    if (x == NULL)
        return SLUICE_OK;
    if ((rc = want_ident(c, x, key, SLUICE_LAUNCH_MAX_NAME, false, out)) != SLUICE_OK)
        return rc;
    return check_policy_list(c, key, what, *out, list, n);
}

static sluice_err check_disjoint(pctx_t *c, const sluice_launch_t *l)
{
    const sluice_launch_spec_t *s = &l->spec;
    size_t i, j;

    for (i = 0; i < s->n_secret_env; i++)
        for (j = 0; j < s->n_env; j++)
            if (strcmp(s->secret_env[i], s->env[j].name) == 0)
                return perr(c, "secret_env", "\"%s\" is also set in env", s->secret_env[i]);
    for (i = 0; i < l->n_secrets; i++) {
        char p[PATH_CAP];

        path_key(p, "secrets", l->secret_names[i]);
        for (j = 0; j < s->n_env; j++)
            if (strcmp(l->secret_names[i], s->env[j].name) == 0)
                return perr(c, p, "also set in env");
        for (j = 0; j < s->n_secret_env; j++)
            if (strcmp(l->secret_names[i], s->secret_env[j]) == 0)
                return perr(c, p, "also listed in secret_env");
    }
    return SLUICE_OK;
}

/* Effective commands and the multi-node fan-out rule. */
static sluice_err finish_pools(pctx_t *c, sluice_launch_spec_t *s)
{
    char p[PATH_CAP];
    size_t i, k;

    for (i = 0; i < s->n_pools; i++) {
        sluice_launch_pool_t *pool = &s->pools[i];

        if (!pool->set_command) {
            if (s->command == NULL) {
                if (s->nvflare_form)
                    return perr(c, "command",
                                "required: the NVFlare form must carry the worker command "
                                "(sluice invents none)");
                snprintf(p, sizeof(p), "pools[%zu].command", i);
                return perr(c, p, "required because the launch has no command");
            }
            if ((pool->command = xstrdup(s->command)) == NULL)
                return oom(c);
            if (!pool->set_args && s->n_args > 0) {
                if ((pool->args = calloc(s->n_args, sizeof(char *))) == NULL)
                    return oom(c);
                for (k = 0; k < s->n_args; k++) {
                    if ((pool->args[k] = xstrdup(s->args[k])) == NULL)
                        return oom(c);
                    pool->n_args = k + 1;
                }
            }
        }
        if (pool->nodes > 1 && pool->additional_node_command == NULL &&
            s->effective_profile != SLUICE_LAUNCH_PROFILE_NONE) {
            if (s->nvflare_form)
                path_join(p, "launcher_spec.", s->site, ".slurm.nodes");
            else
                snprintf(p, sizeof(p), "pools[%zu].nodes", i);
            return perr(c, p,
                        "%u nodes without additional_node_command leave the fan-out to the "
                        "application, which needs the sandbox none (effective: %s)",
                        pool->nodes, sluice_launch_profile_name(s->effective_profile));
        }
    }
    return SLUICE_OK;
}

static sluice_err parse_root(pctx_t *c, json_t *root, sluice_launch_t *l)
{
    sluice_launch_spec_t *s = &l->spec;
    const sluice_launch_policy_t *pol = c->pol;
    const char *str = NULL;
    char e[ECHO_CAP];
    json_t *x;
    sluice_err rc;

    s->nvflare_form = json_object_get(root, "resource_spec") != NULL ||
                      json_object_get(root, "launcher_spec") != NULL;
    {
        const char *k;
        json_t *v;

        json_object_foreach(root, k, v)
        {
            if (s->nvflare_form && in_list(native_only, k))
                return perr(c, k,
                            "not allowed in the NVFlare form (resource_spec/launcher_spec); "
                            "set it under launcher_spec.<site>.slurm");
            if (in_list(native_keys, k) || in_list(nvflare_only, k))
                continue;
            if ((c->flags & SLUICE_LAUNCH_PARSE_STORED) && strcmp(k, "secret_names") == 0)
                continue;
            return perr(c, echo(e, k), "unknown field");
        }
    }

    if ((x = json_object_get(root, "launch_id")) == NULL)
        return perr(c, "launch_id", "required");
    if ((rc = want_launch_id(c, x, "launch_id", &s->launch_id)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "site")) == NULL)
        return perr(c, "site", "required");
    if ((rc = want_ident(c, x, "site", SLUICE_LAUNCH_MAX_NAME, true, &s->site)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "study")) != NULL &&
        (rc = want_ident(c, x, "study", SLUICE_LAUNCH_MAX_NAME, true, &s->study)) != SLUICE_OK)
        return rc;

    s->effective_profile = pol->default_profile == SLUICE_LAUNCH_PROFILE_UNSET
                               ? SLUICE_LAUNCH_PROFILE_NONE
                               : pol->default_profile;
    if ((x = json_object_get(root, "profile")) != NULL) {
        unsigned allowed = pol->allowed_profiles ? pol->allowed_profiles
                                                 : SLUICE_LAUNCH_PROFILE_BIT(s->effective_profile);

        if ((rc = want_string(c, x, "profile", 32, false, &str)) != SLUICE_OK)
            return rc;
        s->profile = sluice_launch_profile_parse(str);
        if (s->profile == SLUICE_LAUNCH_PROFILE_UNSET)
            return perr(c, "profile",
                        "expected \"enroot-pyxis\", \"pyxis\", \"apptainer\" or "
                        "\"none\"");
        if (!(allowed & SLUICE_LAUNCH_PROFILE_BIT(s->profile)))
            return perr(c, "profile", "\"%s\" is not allowed by site policy",
                        sluice_launch_profile_name(s->profile));
        s->effective_profile = s->profile;
    }

    if ((x = json_object_get(root, "command")) != NULL &&
        (rc = dup_string(c, x, "command", SLUICE_LAUNCH_MAX_STRING, false, &s->command)) !=
            SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "args")) != NULL &&
        (rc = want_args(c, x, "args", &s->args, &s->n_args)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "workdir")) != NULL &&
        (rc = want_path(c, x, "workdir", &s->workdir)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "env")) != NULL && (rc = parse_env(c, x, s)) != SLUICE_OK)
        return rc;
    if (s->n_env > 1)
        qsort(s->env, s->n_env, sizeof(*s->env), cmp_var);
    if ((x = json_object_get(root, "secret_env")) != NULL &&
        (rc = parse_secret_env(c, x, "secret_env", &s->secret_env, &s->n_secret_env)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "secrets")) != NULL &&
        (rc = parse_secrets(c, x, l)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "secret_names")) != NULL) {
        if (l->n_secrets > 0)
            return perr(c, "secret_names", "not allowed together with secrets");
        if ((rc = parse_secret_env(c, x, "secret_names", &l->secret_names, &l->n_secrets)) !=
            SLUICE_OK)
            return rc;
    }
    if ((rc = check_disjoint(c, l)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "mounts")) != NULL) {
        if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE && json_array_size(x) > 0)
            return perr(c, "mounts",
                        "not allowed where the effective profile is none (no mount "
                        "namespace)");
        if ((rc = parse_mounts(c, x, s)) != SLUICE_OK)
            return rc;
    }
    if ((x = json_object_get(root, "depends_on")) != NULL &&
        (rc = parse_depends(c, x, s)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "requeue")) != NULL) {
        if ((rc = want_bool(c, x, "requeue", &s->requeue)) != SLUICE_OK)
            return rc;
        if (s->requeue && !pol->allow_requeue)
            return perr(c, "requeue", "site policy does not allow requeue");
    }
    if ((x = json_object_get(root, "exclusive")) != NULL &&
        (rc = want_bool(c, x, "exclusive", &s->exclusive)) != SLUICE_OK)
        return rc;
    if ((x = json_object_get(root, "signal")) != NULL) {
        const char *why;

        if ((rc = want_string(c, x, "signal", 32, false, &str)) != SLUICE_OK)
            return rc;
        if ((why = launch_signal_normalize(str, &s->signal)) != NULL)
            return perr(c, "signal", "%s", why);
        if (s->signal == NULL)
            return oom(c);
    }
    if ((rc = parse_policy_name(c, root, "partition", "partition", pol->partitions,
                                pol->n_partitions, &s->partition)) != SLUICE_OK ||
        (rc = parse_policy_name(c, root, "account", "account", pol->accounts, pol->n_accounts,
                                &s->account)) != SLUICE_OK ||
        (rc = parse_policy_name(c, root, "qos", "qos", pol->qos, pol->n_qos, &s->qos)) != SLUICE_OK)
        return rc;

    if (s->nvflare_form) {
        if ((rc = parse_nvflare(c, root, s)) != SLUICE_OK)
            return rc;
    } else {
        if ((x = json_object_get(root, "image")) != NULL) {
            if (s->effective_profile == SLUICE_LAUNCH_PROFILE_NONE)
                return perr(c, "image", "not allowed where the effective profile is none");
            if ((rc = want_image(c, x, "image", &s->image)) != SLUICE_OK)
                return rc;
        }
        if ((x = json_object_get(root, "time_limit")) != NULL &&
            (rc = parse_time_value(c, x, "time_limit", &s->time_limit)) != SLUICE_OK)
            return rc;
        if ((x = json_object_get(root, "pending_timeout")) != NULL &&
            (rc = parse_pending(c, x, "pending_timeout", s)) != SLUICE_OK)
            return rc;
        if ((x = json_object_get(root, "pools")) == NULL)
            return perr(c, "pools", "required (1 to %d pools)", SLUICE_LAUNCH_MAX_POOLS);
        if ((rc = parse_pools(c, x, s)) != SLUICE_OK)
            return rc;
    }
    s->effective_pending_timeout =
        s->pending_timeout
            ? s->pending_timeout
            : (pol->pending_timeout ? pol->pending_timeout : SLUICE_LAUNCH_DEFAULT_PENDING_TIMEOUT);
    return finish_pools(c, s);
}

/* Zero every secret string in the parse tree before it is released. */
static void wipe_tree_secrets(json_t *root)
{
    json_t *sec = json_object_get(root, "secrets"), *v;
    const char *k;

    if (!json_is_object(sec))
        return;
    json_object_foreach(sec, k, v)
    {
        if (json_is_string(v)) {
            char *p = (char *)(uintptr_t)json_string_value(v);
            OPENSSL_cleanse(p, json_string_length(v));
        }
    }
}

/* ---- canonical JSON and hash ------------------------------------------- */

static int set_new(json_t *obj, const char *key, json_t *v)
{
    return v == NULL ? -1 : json_object_set_new(obj, key, v);
}

static int set_str(json_t *obj, const char *key, const char *s)
{
    return s == NULL ? 0 : set_new(obj, key, json_string(s));
}

static json_t *strv_json(char *const *v, size_t n)
{
    json_t *a = json_array();
    size_t i;

    for (i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *canonical(const sluice_launch_t *l)
{
    const sluice_launch_spec_t *s = &l->spec;
    json_t *o = json_object(), *a = NULL, *x;
    size_t i;
    int bad = 0;

    if (o == NULL)
        return NULL;
    bad |= set_str(o, "launch_id", s->launch_id);
    bad |= set_str(o, "site", s->site);
    bad |= set_str(o, "study", s->study);
    if (s->profile != SLUICE_LAUNCH_PROFILE_UNSET)
        bad |= set_str(o, "profile", sluice_launch_profile_name(s->profile));
    bad |= set_str(o, "image", s->image);
    bad |= set_str(o, "command", s->command);
    if (s->n_args > 0)
        bad |= set_new(o, "args", strv_json(s->args, s->n_args));
    bad |= set_str(o, "workdir", s->workdir);
    if (s->n_env > 0) {
        x = json_object();
        for (i = 0; x != NULL && i < s->n_env; i++)
            bad |= set_new(x, s->env[i].name, json_string(s->env[i].value));
        bad |= set_new(o, "env", x);
    }
    if (s->n_secret_env > 0)
        bad |= set_new(o, "secret_env", strv_json(s->secret_env, s->n_secret_env));
    if (l->n_secrets > 0)
        bad |= set_new(o, "secret_names", strv_json(l->secret_names, l->n_secrets));
    if (s->n_mounts > 0) {
        a = json_array();
        for (i = 0; a != NULL && i < s->n_mounts; i++)
            bad |= json_array_append_new(
                a, json_pack("{s:s s:s s:s}", "source", s->mounts[i].source, "target",
                             s->mounts[i].target, "mode", s->mounts[i].rw ? "rw" : "ro"));
        bad |= set_new(o, "mounts", a);
    }
    if (s->time_limit)
        bad |= set_new(o, "time_limit", json_integer(s->time_limit));
    if (s->pending_timeout)
        bad |= set_new(o, "pending_timeout", json_integer(s->pending_timeout));
    if (s->depends_on != NULL)
        bad |= set_new(o, "depends_on",
                       json_pack("{s:s s:s}", "launch_id", s->depends_on, "condition",
                                 sluice_launch_dep_name(s->depends_condition)));
    if (s->requeue)
        bad |= set_new(o, "requeue", json_true());
    if (s->exclusive)
        bad |= set_new(o, "exclusive", json_true());
    bad |= set_str(o, "signal", s->signal);
    bad |= set_str(o, "account", s->account);
    bad |= set_str(o, "qos", s->qos);
    bad |= set_str(o, "partition", s->partition);
    a = json_array();
    for (i = 0; a != NULL && i < s->n_pools; i++) {
        const sluice_launch_pool_t *p = &s->pools[i];

        x = json_pack("{s:s s:I s:I}", "name", p->name, "nodes", (json_int_t)p->nodes,
                      "gpus_per_node", (json_int_t)p->gpus_per_node);
        if (x == NULL) {
            bad = 1;
            break;
        }
        bad |= set_str(x, "gpu_series", p->gpu_series);
        if (p->cpus_per_node)
            bad |= set_new(x, "cpus_per_node", json_integer(p->cpus_per_node));
        if (p->mem_per_node_mib)
            bad |= set_new(x, "mem_per_node_mib", json_integer((json_int_t)p->mem_per_node_mib));
        if (p->set_command)
            bad |= set_str(x, "command", p->command);
        if (p->set_args)
            bad |= set_new(x, "args", strv_json(p->args, p->n_args));
        bad |= set_str(x, "additional_node_command", p->additional_node_command);
        bad |= json_array_append_new(a, x);
    }
    bad |= set_new(o, "pools", a);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *sluice_launch_to_json(const sluice_launch_t *l, sluice_error_t *err)
{
    json_t *o = NULL;
    char *text = NULL;

    if (l == NULL) {
        sluice_errorf(err, SLUICE_EINVAL, "sluice_launch_to_json: no launch");
        return NULL;
    }
    if ((o = canonical(l)) == NULL)
        goto out;
    text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
out:
    json_decref(o);
    if (text == NULL)
        sluice_errorf(err, SLUICE_ENOMEM, "launch: out of memory building the canonical JSON");
    return text;
}

static sluice_err compute_hash(sluice_launch_t *l, sluice_error_t *err)
{
    char *text = NULL;
    sluice_err rc = SLUICE_OK;

    if ((text = sluice_launch_to_json(l, err)) == NULL)
        return SLUICE_ENOMEM;
    if (!marker_sha256_hex(text, l->hash)) /* base/marker.c (issue 12) */
        rc = sluice_errorf(err, SLUICE_ENOMEM, "launch: SHA-256 failed");
    free(text);
    return rc;
}

/* ---- public entry points ----------------------------------------------- */

sluice_err sluice_launch_parse(sluice_launch_t **out,
                               const char *data,
                               size_t len,
                               const sluice_launch_policy_t *policy,
                               unsigned flags,
                               sluice_error_t *err)
{
    json_t *root = NULL;
    json_error_t jerr;
    sluice_launch_t *l = NULL;
    pctx_t c = {policy, flags, err};
    sluice_err rc = SLUICE_OK;

    if (out == NULL || policy == NULL || (data == NULL && len > 0))
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_launch_parse: invalid arguments");
    *out = NULL;
    if (len > SLUICE_LAUNCH_MAX_BYTES)
        return sluice_errorf(err, SLUICE_ETOOBIG, "request: larger than %d bytes",
                             SLUICE_LAUNCH_MAX_BYTES);
    root = json_loadb(data ? data : "", len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (root == NULL) {
        /* jansson appends "near '<token>'", which may be part of a secret */
        char *near = strstr(jerr.text, " near '");
        if (near != NULL)
            *near = '\0';
        rc = sluice_errorf(err, SLUICE_EINVAL, "request: invalid JSON at line %d, column %d: %s",
                           jerr.line, jerr.column, jerr.text);
        goto out;
    }
    if (!json_is_object(root)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "request: expected a JSON object");
        goto out;
    }
    if ((l = calloc(1, sizeof(*l))) == NULL) {
        rc = oom(&c);
        goto out;
    }
    if ((rc = parse_root(&c, root, l)) != SLUICE_OK)
        goto out;
    if ((rc = compute_hash(l, err)) != SLUICE_OK)
        goto out;
    *out = l;
    l = NULL;
out:
    if (root != NULL)
        wipe_tree_secrets(root);
    json_decref(root);
    sluice_launch_free(l);
    return rc;
}

const sluice_launch_spec_t *sluice_launch_spec(const sluice_launch_t *l)
{
    return l ? &l->spec : NULL;
}

const char *sluice_launch_id(const sluice_launch_t *l)
{
    return l ? l->spec.launch_id : NULL;
}

size_t sluice_launch_pool_count(const sluice_launch_t *l)
{
    return l ? l->spec.n_pools : 0;
}

const sluice_launch_pool_t *sluice_launch_pool(const sluice_launch_t *l, size_t i)
{
    return (l && i < l->spec.n_pools) ? &l->spec.pools[i] : NULL;
}

size_t sluice_launch_secret_count(const sluice_launch_t *l)
{
    return l ? l->n_secrets : 0;
}

const char *sluice_launch_secret_name(const sluice_launch_t *l, size_t i)
{
    return (l && i < l->n_secrets) ? l->secret_names[i] : NULL;
}

const char *sluice_launch_secret_value(const sluice_launch_t *l, size_t i)
{
    return (l && l->secret_values && i < l->n_secrets) ? l->secret_values[i] : NULL;
}

const char *sluice_launch_hash(const sluice_launch_t *l)
{
    return l ? l->hash : NULL;
}
