/* SPDX-License-Identifier: Apache-2.0 */
/* server_answer.c - building the answers of `sluice serve` as plain data:
 * JSON and text bodies, files, streams, and the problem+json error bodies
 * (RFC 9457 shape, `type` urn:sluice:problem:<slug>).
 *
 * Notes:
 * - No libmicrohttpd here: server.c sends what is built.
 * - An answer that could not be built (out of memory) is ANSWER_NONE, and
 *   the connection then closes without an answer, as libmicrohttpd does
 *   when a handler fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_text.h"
#include "server_answer.h"

void answer_init(answer_t *a)
{
    memset(a, 0, sizeof(*a));
    a->kind = ANSWER_NONE;
    a->fd = -1;
}

void answer_clear(answer_t *a)
{
    if (a == NULL)
        return;
    free(a->body);
    if (a->fd >= 0)
        close(a->fd);
    if (a->cls != NULL && a->free_cls != NULL)
        a->free_cls(a->cls);
    answer_init(a);
}

void answer_header(answer_t *a, const char *name, const char *value)
{
    answer_header_t *h;

    if (a->n_headers == ANSWER_MAX_HEADERS)
        return;
    h = &a->headers[a->n_headers++];
    h->name = name;
    snprintf(h->value, sizeof(h->value), "%s", value);
}

void answer_text(answer_t *a, unsigned status, const char *ctype, char *text)
{
    answer_clear(a);
    if (text == NULL)
        return;
    a->kind = ANSWER_BUFFER;
    a->status = status;
    a->body = text;
    a->len = strlen(text);
    answer_header(a, "Content-Type", ctype);
    answer_header(a, "Cache-Control", "no-store");
}

void answer_json(answer_t *a, unsigned status, json_t *j)
{
    char *text = j ? json_text_dump(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

    json_decref(j);
    if (text == NULL) {
        answer_clear(a);
        return;
    }
    answer_text(a, status, "application/json", text);
}

void answer_file(answer_t *a, unsigned status, int fd, uint64_t offset, uint64_t size)
{
    answer_clear(a);
    a->kind = ANSWER_FILE;
    a->status = status;
    a->fd = fd;
    a->offset = offset;
    a->size = size;
}

void answer_empty(answer_t *a, unsigned status)
{
    answer_clear(a);
    a->kind = ANSWER_BUFFER;
    a->status = status;
}

void answer_stream(answer_t *a,
                   unsigned status,
                   size_t block,
                   answer_read_fn read,
                   void *cls,
                   void (*free_cls)(void *cls))
{
    answer_clear(a);
    a->kind = ANSWER_STREAM;
    a->status = status;
    a->block = block;
    a->read = read;
    a->cls = cls;
    a->free_cls = free_cls;
}

void answer_problem_ex(answer_t *a,
                       unsigned status,
                       const char *slug,
                       const char *title,
                       const char *detail,
                       const char *field,
                       const char *allow)
{
    answer_problem_more(a, status, slug, title, detail, field, allow, NULL);
}

void answer_problem_more(answer_t *a,
                         unsigned status,
                         const char *slug,
                         const char *title,
                         const char *detail,
                         const char *field,
                         const char *allow,
                         json_t *more)
{
    json_t *j = json_pack("{s:s+ s:s s:i s:s}", "type", "urn:sluice:problem:", slug, "title", title,
                          "status", (int)status, "detail", detail ? detail : title);
    char *text;

    answer_clear(a);
    if (j && more)
        json_object_update_missing(j, more);
    json_decref(more);
    if (j && field)
        json_object_set_new(j, "field", json_string(field));
    text = j ? json_text_dump(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(j);
    if (text == NULL)
        return;
    a->kind = ANSWER_BUFFER;
    a->status = status;
    a->body = text;
    a->len = strlen(text);
    answer_header(a, "Content-Type", "application/problem+json");
    if (allow)
        answer_header(a, "Allow", allow);
    if (status == 401)
        answer_header(a, "WWW-Authenticate", "Bearer");
}

void answer_problem(
    answer_t *a, unsigned status, const char *slug, const char *title, const char *detail)
{
    answer_problem_ex(a, status, slug, title, detail, NULL, NULL);
}

/* The `errors` member of a 422: every field error of `fields`, or the one
 * `err` names ("<path>: <reason>", path "" when its text names none). */
static json_t *field_errors(const sluice_error_t *err, const sluice_errlist_t *fields)
{
    sluice_errlist_t one = SLUICE_ERRLIST_INIT;
    json_t *arr = json_array();
    size_t i;

    if (fields == NULL || fields->n == 0) {
        if (sluice_errlist_add_text(&one, err->text) != SLUICE_OK) {
            json_decref(arr);
            return NULL;
        }
        fields = &one;
    }
    for (i = 0; arr != NULL && i < fields->n; i++)
        if (json_array_append_new(arr, json_pack("{s:s s:s}", "path", fields->items[i].path,
                                                 "reason", fields->items[i].reason)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    sluice_errlist_clear(&one);
    return arr;
}

void answer_invalid(answer_t *a, const sluice_error_t *err, const sluice_errlist_t *fields)
{
    json_t *errors = field_errors(err, fields);
    const char *field = NULL;

    if (errors == NULL) {
        answer_clear(a);
        return;
    }
    field = json_string_value(json_object_get(json_array_get(errors, 0), "path"));
    answer_problem_more(a, 422, "invalid-request", "Invalid launch request", err->text,
                        field != NULL && field[0] != '\0' ? field : NULL, NULL,
                        json_pack("{s:o}", "errors", errors));
}

void answer_error_fields(answer_t *a, const sluice_error_t *err, const sluice_errlist_t *fields)
{
    switch (err->code) {
    case SLUICE_ENOTFOUND:
        answer_problem(a, 404, "not-found", "Not found", err->text);
        return;
    case SLUICE_ECONFLICT:
        answer_problem(a, 409, "conflict", "Conflict", err->text);
        return;
    case SLUICE_EINVAL:
    case SLUICE_ETOOBIG:
    case SLUICE_ECONFIG:
        /* The parser's messages start with the JSON path: "<path>: <why>". */
        answer_invalid(a, err, fields);
        return;
    case SLUICE_ESTATE:
        answer_problem(a, 409, "wrong-state", "Not allowed in the current state", err->text);
        return;
    default:
        answer_problem(a, 500, "internal", "Internal error", err->text);
        return;
    }
}

void answer_error(answer_t *a, const sluice_error_t *err)
{
    answer_error_fields(a, err, NULL);
}
