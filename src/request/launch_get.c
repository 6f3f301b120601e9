/* SPDX-License-Identifier: Apache-2.0 */
/* launch_get.c - the field readers of a launch request that add the
 * request's own rules to base/jdec.h's getters: argument lists,
 * identifiers, paths, images, time limits, pending timeouts, commands;
 * the request-level variable-name rule; profile and dependency names.
 *
 * Notes:
 * - Every error is "<json path>: <reason>" (SLUICE_EINVAL) and never quotes
 *   more than ECHO_CAP bytes of a value, with control bytes shown as '?'.
 * - Types, lengths and ranges are checked by base/jdec.h's getters (strict,
 *   the request's words: "expected true or false", "expected an integer
 *   between 1 and 8 (got 9)"), called on cursors of the parse's decoder,
 *   which notes into its collector; the paths of keys and items are jdec's
 *   too.  What is here is the request's own rules.
 * - The value syntaxes themselves (Slurm times, memory sizes, signals,
 *   variable names, paths) are base/syntax.h's, shared with the site file.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/jdec.h"
#include "base/syntax.h"

#include "launch_int.h"

/* ---- small helpers ----------------------------------------------------- */

char *launch_strdup(const char *s)
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
const char *launch_echo(char *dst, const char *s)
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
void launch_path_join(char *dst, const char *a, const char *sep, const char *b)
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

bool launch_in_list(const char *const *keys, const char *k)
{
    size_t i;

    for (i = 0; keys[i] != NULL; i++)
        if (strcmp(keys[i], k) == 0)
            return true;
    return false;
}

bool launch_charset_ok(const char *s, const char *extra, bool upper)
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

/* ---- field readers ----------------------------------------------------- */

/* The cursor of the member `key` of at (key NULL: at itself). */
static void field(jdec_cur_t *out, const jdec_cur_t *at, const char *key)
{
    if (key != NULL)
        jdec_member(out, at, key);
    else
        *out = *at;
}

void launch_free_strv(char **v, size_t n)
{
    size_t i;

    if (v == NULL)
        return;
    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* An array of strings (arguments); an empty one is legitimate ("" on a
 * command line). */
sluice_err
launch_want_args(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char ***out, size_t *n_out)
{
    jdec_cur_t arr, item;
    char **args = NULL;
    size_t i, n;
    sluice_err rc = SLUICE_OK, one;

    if (jdec_array(at, key, JDEC_SILENT, &arr) != SLUICE_OK)
        return jdec_fail(at, key, "expected an array of strings");
    if (arr.v == NULL)
        return SLUICE_OK;
    n = jdec_len(&arr);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return jdec_fail(&arr, NULL, "more than %d items", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (args = calloc(n, sizeof(*args))) == NULL)
        return launch_oom(c);
    JDEC_FOREACH(&arr, i, item)
    {
        /* every bad item is named */
        one = jdec_strdup(&item, NULL, 0, SLUICE_LAUNCH_MAX_STRING, &args[i]);
        if (one != SLUICE_OK && rc == SLUICE_OK)
            rc = one;
        if (launch_fatal(c, one))
            goto out;
    }
    if (rc != SLUICE_OK)
        goto out;
    *out = args;
    *n_out = n;
    args = NULL;
out:
    launch_free_strv(args, n);
    return rc;
}

static const char *const reserved_prefixes[] = {"SLURM_",  "SLUICE_", "NVFL_",      "SRUN_",
                                                "SBATCH_", "SALLOC_", "APPTAINER",  "SINGULARITY",
                                                "ENROOT_", "PYXIS_",  "BASH_FUNC_", NULL};

static const char *const forbidden_names[] = {"LD_PRELOAD",     "LD_AUDIT", "BASH_ENV",   "ENV",
                                              "SHELLOPTS",      "BASHOPTS", "IFS",        "PS4",
                                              "PROMPT_COMMAND", "CDPATH",   "GLOBIGNORE", NULL};

const char *launch_envname_check(const char *name)
{
    size_t i;
    const char *why = syntax_envname_reason(name);

    if (why != NULL)
        return why;
    for (i = 0; reserved_prefixes[i] != NULL; i++)
        if (strncmp(name, reserved_prefixes[i], strlen(reserved_prefixes[i])) == 0)
            return "uses a reserved prefix (SLURM_, SLUICE_, NVFL_, SRUN_, SBATCH_, SALLOC_, "
                   "APPTAINER, SINGULARITY, ENROOT_, PYXIS_, BASH_FUNC_)";
    for (i = 0; forbidden_names[i] != NULL; i++)
        if (strcmp(name, forbidden_names[i]) == 0)
            return "is reserved: it changes how the shell or the dynamic loader behaves";
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

/* ---- field parsers ----------------------------------------------------- */

/* [A-Za-z0-9._-]{1,max}; `path_safe` also refuses "." and "..". */
sluice_err launch_want_ident(
    launch_ctx_t *c, const jdec_cur_t *at, const char *key, size_t max, bool path_safe, char **out)
{
    const char *s = NULL;
    sluice_err rc;

    if ((rc = jdec_string(at, key, JDEC_NONEMPTY, max, &s)) != SLUICE_OK || s == NULL)
        return rc;
    if (!launch_charset_ok(s, "._-", true))
        return jdec_fail(at, key, "expected 1 to %zu characters from [A-Za-z0-9._-]", max);
    if (path_safe && (strcmp(s, ".") == 0 || strcmp(s, "..") == 0))
        return jdec_fail(at, key, "must not be \".\" or \"..\"");
    if ((*out = launch_strdup(s)) == NULL)
        return launch_oom(c);
    return SLUICE_OK;
}

sluice_err launch_want_path(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out)
{
    jdec_cur_t f;
    const char *s = NULL;
    sluice_error_t e = SLUICE_ERROR_INIT;
    sluice_err rc;

    field(&f, at, key);
    if ((rc = jdec_string(&f, NULL, JDEC_NONEMPTY, SLUICE_LAUNCH_MAX_STRING, &s)) != SLUICE_OK ||
        s == NULL)
        return rc;
    return launch_take(c, f.path, syntax_path_normalize(out, s, f.path, &e), &e);
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

sluice_err launch_want_image(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out)
{
    const char *s = NULL;
    char e[ECHO_CAP];
    sluice_err rc;

    if ((rc = jdec_string(at, key, JDEC_NONEMPTY, SLUICE_LAUNCH_MAX_STRING, &s)) != SLUICE_OK ||
        s == NULL)
        return rc;
    if (looks_like_registry(s))
        return jdec_fail(at, key,
                         "registry reference \"%s\" is refused; give the absolute path of an "
                         "image file (.sqsh for enroot-pyxis, .sif for apptainer) on shared "
                         "storage",
                         launch_echo(e, s));
    if (s[0] != '/')
        return jdec_fail(at, key, "expected an absolute path to a .sqsh or .sif file");
    if (strchr(s, ':') != NULL || strchr(s, ',') != NULL)
        return jdec_fail(at, key, "must not contain ':' or ','");
    return launch_want_path(c, at, key, out);
}

sluice_err launch_want_time(launch_ctx_t *c, const jdec_cur_t *at, const char *key, uint32_t *out)
{
    jdec_cur_t f;
    const char *s = NULL;
    uint64_t m = 0;
    sluice_error_t e = SLUICE_ERROR_INIT;
    sluice_err rc;

    field(&f, at, key);
    if (f.v == NULL)
        return SLUICE_OK;
    if (json_is_integer(f.v)) {
        if ((rc = jdec_uint(&f, NULL, 0, 1, SLUICE_LAUNCH_MAX_TIME_MINUTES, &m)) != SLUICE_OK)
            return rc;
        *out = (uint32_t)m;
        return SLUICE_OK;
    }
    if (!json_is_string(f.v))
        return jdec_fail(&f, NULL, "expected minutes (integer) or a Slurm time string");
    if ((rc = jdec_string(&f, NULL, JDEC_NONEMPTY, 32, &s)) != SLUICE_OK)
        return rc;
    return launch_take(c, f.path,
                       syntax_slurm_time(out, s, SLUICE_LAUNCH_MAX_TIME_MINUTES, f.path, &e), &e);
}

sluice_err
launch_want_pending(launch_ctx_t *c, const jdec_cur_t *at, const char *key, sluice_launch_spec_t *s)
{
    uint64_t n = 0;
    uint32_t site =
        c->pol->pending_timeout ? c->pol->pending_timeout : SLUICE_LAUNCH_DEFAULT_PENDING_TIMEOUT;
    sluice_err rc;

    if ((rc = jdec_uint(at, key, 0, 1, UINT64_MAX, &n)) != SLUICE_OK || !jdec_present(at, key))
        return rc;
    if (n > site)
        return jdec_fail(at, key,
                         "%llu s is more than the site's pending_timeout of %u s; a request may "
                         "lower it, never raise it",
                         (unsigned long long)n, site);
    s->pending_timeout = (uint32_t)n;
    return SLUICE_OK;
}

/* The reason a program name may not start with '-': it lands where srun
 * (and, in a wrapper, apptainer or bash) still reads options, so
 * "--container-image=..." or "--jobid=..." would be taken as one. */
#define LAUNCH_DASH_RULE                                                                           \
    "must not start with '-': it would be read as an option of srun, not as the program to run"

sluice_err launch_want_command(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out)
{
    char *s = NULL;
    sluice_err rc;

    (void)c;
    if ((rc = jdec_strdup(at, key, JDEC_NONEMPTY, SLUICE_LAUNCH_MAX_STRING, &s)) != SLUICE_OK ||
        s == NULL)
        return rc;
    *out = s;
    if (s[0] == '-')
        return jdec_fail(at, key, LAUNCH_DASH_RULE);
    return SLUICE_OK;
}

sluice_err
launch_want_node_command(launch_ctx_t *c, const jdec_cur_t *at, const char *key, char **out)
{
    char *s = NULL;
    sluice_err rc;

    (void)c;
    if ((rc = jdec_strdup(at, key, JDEC_NONEMPTY, SLUICE_LAUNCH_MAX_STRING, &s)) != SLUICE_OK ||
        s == NULL)
        return rc;
    *out = s;
    if (strstr(s, "${secret:") != NULL)
        return jdec_fail(at, key, "${secret:...} references are not supported");
    if (s[strspn(s, " \t\n")] == '-')
        return jdec_fail(at, key, "its first word " LAUNCH_DASH_RULE);
    return SLUICE_OK;
}
