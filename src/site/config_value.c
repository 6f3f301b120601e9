/* SPDX-License-Identifier: Apache-2.0 */
/* config_value.c - the helpers every site-file walker uses: errors and
 * warnings placed at a node (or at the environment variable or --set that
 * gave the value), the scalar words (null, booleans, integers, names,
 * sandboxes), string lists and shell lines.
 *
 * Notes:
 * - Errors name the place first and the dotted key second, so every
 *   message of the site and study files has the same shape.
 * - Variable names are checked by base/syntax.h, like launch requests.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/syntax.h"

#include "config_int.h"

sluice_err cfg_fail(ctx_t *c, const char *key, const char *text)
{
    sluice_error_t later = SLUICE_ERROR_INIT;

    if (!c->bad)
        return sluice_errorf(c->err, SLUICE_ECONFIG, "%s", text);
    /* c->err keeps the first error: the line tests and scripts read. */
    sluice_errorf(c->bad->n == 0 ? c->err : &later, SLUICE_ECONFIG, "%s", text);
    c->bad->n++;
    if (c->bad->list && sluice_errlist_add(c->bad->list, key, "%s", text) != SLUICE_OK)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    return SLUICE_ECONFIG;
}

bool cfg_go_on(const ctx_t *c, sluice_err rc)
{
    return rc == SLUICE_ECONFIG && c->bad != NULL;
}

/* "<file>:<line>:<col>: <text>" (or "environment NAME: ..." / "--set ..."). */
sluice_err cfg_bad_text(ctx_t *c, const node_t *n, const char *text)
{
    char scoped[640], key[SLUICE_FIELD_PATH_MAX], out[1024];
    size_t klen;

    if (c->scope) {
        snprintf(scoped, sizeof(scoped), "%s.%s", c->scope, text);
        text = scoped;
    }
    klen = strcspn(text, ":");
    snprintf(key, sizeof(key), "%.*s", (int)(klen < sizeof(key) ? klen : sizeof(key) - 1), text);
    if (c->src == SLUICE_SRC_ENV)
        snprintf(out, sizeof(out), "environment %s: %s", c->origin, text);
    else if (c->src == SLUICE_SRC_FLAG)
        snprintf(out, sizeof(out), "--set %s", text);
    else if (!n)
        snprintf(out, sizeof(out), "%s: %s", c->file, text);
    else
        snprintf(out, sizeof(out), "%s:%zu:%zu: %s", c->file, n->line + 1, n->col + 1, text);
    return cfg_fail(c, key, out);
}

sluice_err cfg_bad(ctx_t *c, const node_t *n, const char *key, const char *fmt, ...)
{
    char msg[384], text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(text, sizeof(text), "%s: %s", key, msg);
    return cfg_bad_text(c, n, text);
}

bool cfg_is_placeholder(const char *s)
{
    return strncmp(s, "<required", 9) == 0; /* config_init.c writes "<required: ...>" */
}

const char *cfg_kind_word(const node_t *n)
{
    if (n->kind == N_MAP)
        return "a mapping";
    if (n->kind == N_SEQ)
        return "a list";
    return "a scalar";
}

bool cfg_is_null(const node_t *n)
{
    return n->kind == N_SCALAR && n->plain &&
           (n->str[0] == '\0' || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
            strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0);
}

bool cfg_is_nonfinite(const char *s)
{
    const char *p = s;

    if (*p == '+' || *p == '-')
        p++;
    return strcmp(p, ".inf") == 0 || strcmp(p, ".Inf") == 0 || strcmp(p, ".INF") == 0 ||
           strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0 ||
           strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0 || strcasecmp(s, "nan") == 0;
}

bool cfg_parse_long(const char *s, long *out)
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

bool cfg_name_ok(const char *s)
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

bool cfg_oneline_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return false;
    }
    return i > 0 && i <= 4096;
}

bool cfg_bool_word(const char *s, bool *out)
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

bool cfg_sandbox_word(const char *s, sluice_sandbox_t *out)
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

bool cfg_gpu_vendor_word(const char *s)
{
    return strcmp(s, "nvidia") == 0 || strcmp(s, "amd") == 0 || strcmp(s, "none") == 0;
}

bool cfg_env_name_ok(const char *s)
{
    return syntax_envname_reason(s) == NULL;
}

void cfg_strlist_clear(sluice_strlist_t *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->n = 0;
}

sluice_err cfg_strlist_push(sluice_strlist_t *l, const char *s, size_t len)
{
    char **items;
    char *copy = cfg_dupn(s, len);

    if (!copy)
        return SLUICE_ENOMEM;
    items = realloc(l->items, (l->n + 2) * sizeof(*items)); /* NULL-terminated */
    if (!items) {
        free(copy);
        return SLUICE_ENOMEM;
    }
    l->items = items;
    l->items[l->n++] = copy;
    l->items[l->n] = NULL;
    return SLUICE_OK;
}

sluice_err cfg_warn(ctx_t *c, const node_t *n, const char *key, const char *msg)
{
    char line[640];
    const char *dot = c->scope ? "." : "";
    const char *scope = c->scope ? c->scope : "";

    if (n && c->src == SLUICE_SRC_FILE)
        snprintf(line, sizeof(line), "%s:%zu:%zu: %s%s%s: %s", c->file, n->line + 1, n->col + 1,
                 scope, dot, key, msg);
    else
        snprintf(line, sizeof(line), "%s%s%s: %s", scope, dot, key, msg);
    if (cfg_strlist_push(&c->cfg->warnings, line, strlen(line)) != SLUICE_OK)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    return SLUICE_OK;
}

sluice_err cfg_set_str(ctx_t *c, char **slot, const char *v)
{
    char *copy = cfg_dup(v);

    if (!copy)
        return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
    free(*slot);
    *slot = copy;
    return SLUICE_OK;
}

/* A list from a sequence of scalars, or (env/flag only) a comma-separated
 * scalar.  Each item is checked by `ok` when given. */
sluice_err cfg_get_list(ctx_t *c,
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
                rc = cfg_bad(c, n, key, "expected a comma-separated list of %s", what);
                goto out;
            }
            memcpy(item, p, len);
            item[len] = '\0';
            if (ok && !ok(item)) {
                rc = cfg_bad(c, n, key, "'%.64s': expected %s", item, what);
                goto out;
            }
            if (cfg_strlist_push(&l, p, len) != SLUICE_OK) {
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
            if (it->kind != N_SCALAR || cfg_is_null(it)) {
                rc =
                    cfg_bad(c, it, key, "expected a list of %s, found %s", what, cfg_kind_word(it));
                goto out;
            }
            if (ok ? !ok(it->str) : !cfg_oneline_ok(it->str)) {
                rc = cfg_bad(c, it, key, "'%.64s': expected %s", it->str, what);
                goto out;
            }
            if (cfg_strlist_push(&l, it->str, strlen(it->str)) != SLUICE_OK) {
                rc = sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
                goto out;
            }
        }
    } else {
        rc = cfg_bad(c, n, key, "expected a list of %s, found %s", what, cfg_kind_word(n));
        goto out;
    }
    cfg_strlist_clear(out);
    *out = l;
    l.items = NULL;
    l.n = 0;
out:
    cfg_strlist_clear(&l);
    return rc;
}

sluice_err cfg_set_lines(ctx_t *c, const node_t *n, const char *key, sluice_strlist_t *slot)
{
    sluice_strlist_t l = {NULL, 0};
    const char *p;

    if (n->kind == N_SEQ)
        return cfg_get_list(c, n, key, NULL, "shell lines", slot);
    if (n->kind != N_SCALAR)
        return cfg_bad(c, n, key, "expected a block string or a list of shell lines, found %s",
                       cfg_kind_word(n));
    for (p = n->str; *p;) {
        size_t len = strcspn(p, "\n");
        if (cfg_strlist_push(&l, p, len) != SLUICE_OK) {
            cfg_strlist_clear(&l);
            return sluice_errorf(c->err, SLUICE_ENOMEM, "out of memory");
        }
        p += len;
        if (*p == '\n')
            p++;
    }
    cfg_strlist_clear(slot);
    *slot = l;
    return SLUICE_OK;
}

const node_t *cfg_map_get(const node_t *m, const char *key)
{
    size_t i;

    if (m == NULL || m->kind != N_MAP)
        return NULL;
    for (i = 0; i + 1 < m->n; i += 2)
        if (strcmp(m->kids[i]->str, key) == 0)
            return cfg_is_null(m->kids[i + 1]) ? NULL : m->kids[i + 1];
    return NULL;
}
