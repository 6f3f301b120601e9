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
