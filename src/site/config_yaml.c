/* SPDX-License-Identifier: Apache-2.0 */
/* config_yaml.c - YAML text -> the small tree the site and study files are
 * walked as, and reading those files from disk.
 *
 * The events of libyaml become nodes (scalars, mappings, sequences with
 * their line and column).  Aliases, duplicate keys, NUL bytes, several
 * documents and trees that are too deep or too large are refused here, so
 * the walkers never see them.
 *
 * Notes:
 * - This is the only file that includes <yaml.h>.
 * - cfg_dupn()/cfg_dup() live here because the tree is their first user;
 *   every site file copies strings with them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/buf.h"

#include "config_int.h"

#define CFG_MAX_FILE (1024 * 1024)
#define CFG_MAX_DEPTH 32
#define CFG_MAX_NODES 20000

void cfg_node_free(node_t *n)
{
    size_t i;

    if (!n)
        return;
    for (i = 0; i < n->n; i++)
        cfg_node_free(n->kids[i]);
    free(n->kids);
    free(n->str);
    free(n);
}

char *cfg_dupn(const char *s, size_t len)
{
    char *d = malloc(len + 1);

    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

char *cfg_dup(const char *s)
{
    return s ? cfg_dupn(s, strlen(s)) : NULL;
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
        n->str = cfg_dupn((const char *)ev->data.scalar.value, ev->data.scalar.length);
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
    cfg_node_free(kid);
    cfg_node_free(n);
    return rc;
}

sluice_err
cfg_parse_yaml(const char *file, const char *text, size_t len, node_t **out, sluice_error_t *err)
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
    cfg_node_free(root);
    yaml_parser_delete(&p.parser);
    return rc;
}

sluice_err cfg_read_file(const char *path, char **text, size_t *len, sluice_error_t *err)
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

/* ---- YAML <-> JSON (sluice_yaml_to_json, sluice_json_to_yaml) ------------ */

/* What a plain scalar is under the YAML 1.2 core schema: null, a boolean,
 * an integer (decimal, 0o octal, 0x hex) or a float; anything else (and
 * .inf/.nan, which JSON cannot hold) is a string.  NULL when out of
 * memory. */
static json_t *core_scalar(const char *s)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    const char *p = s;
    char *end;
    size_t i;
    bool digits = false;

    for (i = 0; nulls[i]; i++)
        if (strcmp(s, nulls[i]) == 0)
            return json_null();
    for (i = 0; trues[i]; i++)
        if (strcmp(s, trues[i]) == 0)
            return json_true();
    for (i = 0; falses[i]; i++)
        if (strcmp(s, falses[i]) == 0)
            return json_false();
    if ((s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) && s[2] != '\0') {
        long long v;

        errno = 0;
        v = strtoll(s + 2, &end, s[1] == 'o' ? 8 : 16);
        if (*end == '\0' && errno == 0 && strspn(s + 2, "0123456789abcdefABCDEF") == strlen(s + 2))
            return json_integer((json_int_t)v);
        return json_string(s);
    }
    /* [-+]?[0-9]+ or [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
    if (*p == '-' || *p == '+')
        p++;
    for (; *p >= '0' && *p <= '9'; p++)
        digits = true;
    if (*p == '\0' && digits) {
        long long v;

        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno == 0)
            return json_integer((json_int_t)v);
        return json_real(strtod(s, NULL)); /* too big for an integer */
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++)
            digits = true;
    }
    if (digits && (*p == 'e' || *p == 'E')) {
        p++;
        if (*p == '-' || *p == '+')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return json_string(s);
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (digits && *p == '\0') {
        double d = strtod(s, NULL);

        if (d - d == 0) /* finite */
            return json_real(d);
    }
    return json_string(s);
}

static sluice_err node_json(const node_t *n, json_t **out, sluice_error_t *err)
{
    json_t *j = NULL, *kid = NULL;
    size_t i;

    if (n == NULL)
        j = json_null();
    else if (n->kind == N_SCALAR)
        j = n->plain ? core_scalar(n->str) : json_string(n->str);
    else if (n->kind == N_SEQ)
        j = json_array();
    else
        j = json_object();
    for (i = 0; j != NULL && n != NULL && n->kind != N_SCALAR && i < n->n; i++) {
        const node_t *v = n->kind == N_MAP ? n->kids[++i] : n->kids[i];

        if (node_json(v, &kid, err) != SLUICE_OK) {
            json_decref(j);
            return err ? err->code : SLUICE_ENOMEM;
        }
        if ((n->kind == N_MAP ? json_object_set_new(j, n->kids[i - 1]->str, kid)
                              : json_array_append_new(j, kid)) != 0) {
            json_decref(j);
            j = NULL;
        }
    }
    if (j == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "YAML to JSON: out of memory");
    *out = j;
    return SLUICE_OK;
}

sluice_err sluice_yaml_to_json(
    const char *name, const char *text, size_t len, json_t **out, sluice_error_t *err)
{
    node_t *root = NULL;
    sluice_err rc;

    if (out == NULL || (text == NULL && len > 0))
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_yaml_to_json: invalid arguments");
    *out = NULL;
    if (len > CFG_MAX_FILE)
        return sluice_errorf(err, SLUICE_ETOOBIG, "%s: larger than %d bytes", name ? name : "YAML",
                             CFG_MAX_FILE);
    if ((rc = cfg_parse_yaml(name ? name : "YAML", text ? text : "", len, &root, err)) != SLUICE_OK)
        return rc;
    rc = node_json(root, out, err);
    cfg_node_free(root);
    return rc;
}

/* A string that a plain scalar would not give back as itself (the core
 * schema would read another type, or YAML syntax would) is quoted. */
static bool plain_ok(const char *s)
{
    json_t *j = core_scalar(s);
    bool ok = json_is_string(j) && s[0] != '\0' && strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) == NULL &&
              strstr(s, ": ") == NULL && strstr(s, " #") == NULL && strchr(s, '\n') == NULL &&
              s[strlen(s) - 1] != ' ' && s[strlen(s) - 1] != ':';

    json_decref(j);
    return ok;
}

static int emit_write(void *data, unsigned char *buffer, size_t size)
{
    return buf_append((buf_t *)data, (const char *)buffer, size) == SLUICE_OK;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, bool plain, yaml_scalar_style_t style)
{
    yaml_event_t ev;

    if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)s, (int)strlen(s),
                                      plain, !plain, style))
        return 0;
    return yaml_emitter_emit(em, &ev);
}

static int emit_value(yaml_emitter_t *em, const json_t *j, size_t depth)
{
    yaml_event_t ev;
    char num[64];

    if (depth > CFG_MAX_DEPTH)
        return 0;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;

        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return 0;
        json_object_foreach((json_t *)(uintptr_t)j, k, v)
        {
            if (!emit_scalar(em, k, plain_ok(k), YAML_ANY_SCALAR_STYLE) ||
                !emit_value(em, v, depth + 1))
                return 0;
        }
        return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    }
    case JSON_ARRAY: {
        size_t i;

        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(em, &ev))
            return 0;
        for (i = 0; i < json_array_size(j); i++)
            if (!emit_value(em, json_array_get(j, i), depth + 1))
                return 0;
        return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    }
    case JSON_STRING: {
        const char *s = json_string_value(j);

        if (strlen(s) != json_string_length(j))
            return 0; /* a NUL byte: YAML text cannot carry it */
        return emit_scalar(em, s, plain_ok(s),
                           strchr(s, '\n') != NULL ? YAML_LITERAL_SCALAR_STYLE
                                                   : YAML_ANY_SCALAR_STYLE);
    }
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        return emit_scalar(em, num, true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.17g", json_real_value(j));
        if (strpbrk(num, ".eE") == NULL)
            strcat(num, ".0"); /* read back as a float, not an integer */
        return emit_scalar(em, num, true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE:
        return emit_scalar(em, "true", true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return emit_scalar(em, "false", true, YAML_PLAIN_SCALAR_STYLE);
    case JSON_NULL:
    default:
        return emit_scalar(em, "null", true, YAML_PLAIN_SCALAR_STYLE);
    }
}

sluice_err sluice_json_to_yaml(const json_t *j, char **out, sluice_error_t *err)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    buf_t b;
    sluice_err rc = SLUICE_OK;

    if (j == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_json_to_yaml: invalid arguments");
    *out = NULL;
    buf_init(&b, 16 * CFG_MAX_FILE);
    if (!yaml_emitter_initialize(&em)) {
        buf_free(&b);
        return sluice_errorf(err, SLUICE_ENOMEM, "JSON to YAML: out of memory");
    }
    yaml_emitter_set_output(&em, emit_write, &b);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, 100);
    if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
        !yaml_emitter_emit(&em, &ev) ||
        !yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
        !yaml_emitter_emit(&em, &ev) || !emit_value(&em, j, 0) ||
        !yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&em, &ev) ||
        !yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&em, &ev) ||
        !yaml_emitter_flush(&em)) {
        rc = sluice_errorf(err, SLUICE_EINVAL, "JSON to YAML: %s",
                           em.problem ? em.problem : "a value YAML cannot carry, or out of memory");
        goto out;
    }
    if ((*out = buf_take(&b)) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "JSON to YAML: out of memory");
out:
    yaml_emitter_delete(&em);
    buf_free(&b);
    return rc;
}
