/* SPDX-License-Identifier: Apache-2.0 */
/* store_check.c - what may be written to the store, checked and serialised
 * before any lock is taken: launch ids (base/marker.c's rule), event
 * names, no secret values at any depth, summaries, the canonical JSON text
 * and the request hash.
 *
 * Notes:
 * - Nothing here touches the database; a refused input never reaches a
 *   transaction. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/store.h>

#include "base/json_text.h"
#include "base/buf.h"
#include "base/marker.h"
#include "store_int.h"

#define MAX_JSON_DEPTH 128

/* The launch_id rule is base/marker.c's (issue 12: one implementation). */
sluice_err store_check_launch_id(const char *id, sluice_error_t *err)
{
    return marker_check_launch_id("launch_id", id, err);
}

bool store_tenant_ok(const char *tenant)
{
    return tenant != NULL && marker_tenant_name_ok(tenant, strlen(tenant));
}

sluice_err store_check_event_name(const char *name, sluice_error_t *err)
{
    size_t n = name != NULL ? strlen(name) : 0;

    if (n == 0 || n > 64 ||
        strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "event name: must be 1-64 characters of [A-Za-z0-9._-]");
    return SLUICE_OK;
}

/* Refuse any key named `secrets` or `secret_values` at any depth: secret
 * values are kept in memory and in the attempt's secret file, never here.
 * `path` holds the JSON path so far (for the message). */
static sluice_err check_no_secrets(
    const json_t *v, const char *what, char *path, size_t path_size, int depth, sluice_error_t *err)
{
    size_t len = strlen(path);
    sluice_err rc = SLUICE_OK;

    if (depth > MAX_JSON_DEPTH)
        return sluice_errorf(err, SLUICE_ETOOBIG, "%s%s: nested deeper than %d levels", what, path,
                             MAX_JSON_DEPTH);
    if (json_is_object(v)) {
        const char *key;
        json_t *child;

        json_object_foreach((json_t *)(uintptr_t)v, key, child)
        {
            if (strcmp(key, "secrets") == 0 || strcmp(key, "secret_values") == 0)
                return sluice_errorf(err, SLUICE_EINVAL,
                                     "%s%s.%s: secret values are never stored; pass them "
                                     "in memory only",
                                     what, path, key);
            snprintf(path + len, path_size - len, ".%s", key);
            rc = check_no_secrets(child, what, path, path_size, depth + 1, err);
            path[len] = '\0';
            if (rc != SLUICE_OK)
                return rc;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *child;

        json_array_foreach(v, i, child)
        {
            snprintf(path + len, path_size - len, "[%zu]", i);
            rc = check_no_secrets(child, what, path, path_size, depth + 1, err);
            path[len] = '\0';
            if (rc != SLUICE_OK)
                return rc;
        }
    }
    return SLUICE_OK;
}

sluice_err store_refuse_secrets(const json_t *v, const char *what, sluice_error_t *err)
{
    char path[512] = "";

    if (v == NULL)
        return SLUICE_OK;
    return check_no_secrets(v, what, path, sizeof(path), 0, err);
}

/* Canonical text of a JSON value: compact, keys sorted.  Caller frees. */
sluice_err store_json_text(const json_t *v, const char *what, char **out, sluice_error_t *err)
{
    char *s = json_text_dump(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

    if (s == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s: cannot serialise", what);
    *out = s;
    return SLUICE_OK;
}

/* A JSON string as the canonical text writes it (compact, not ASCII-only),
 * appended to `b`; a NULL string is `null`. */
static int append_json_string(buf_t *b, const char *v)
{
    json_t *j;
    char *text;
    int rc;

    if (v == NULL)
        return buf_append(b, "null", 4);
    if ((j = json_string(v)) == NULL)
        return -1;
    text = json_text_dump(j, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    if (text == NULL)
        return -1;
    rc = buf_append(b, text, strlen(text));
    free(text);
    return rc;
}

/* The idempotency hash: lower-case hex SHA-256 of the canonical
 * {"request": ..., "site": ..., "study": ...} (compact, keys sorted; a
 * launch without a study has "study": null).  The object's text is put
 * together around the request's own canonical text, so the request is
 * serialised once for the column and the hash alike; the value is the one
 * stores have always held (store::request_hash_of_the_text_is_the_old_one). */
sluice_err store_request_hash_text(const char *site,
                                   const char *study,
                                   const char *request_text,
                                   char hex[65],
                                   sluice_error_t *err)
{
    buf_t b = BUF_INIT;
    sluice_err rc = SLUICE_OK;

    if (buf_append(&b, "{\"request\":", 11) != 0 ||
        buf_append(&b, request_text, strlen(request_text)) != 0 ||
        buf_append(&b, ",\"site\":", 8) != 0 || append_json_string(&b, site) != 0 ||
        buf_append(&b, ",\"study\":", 9) != 0 || append_json_string(&b, study) != 0 ||
        buf_append(&b, "}", 1) != 0)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "request hash: out of memory");
    else if (!marker_sha256_hex(buf_str(&b), hex))
        rc = sluice_errorf(err, SLUICE_ESTORE, "request hash: sha256 failed");
    buf_free(&b);
    return rc;
}

sluice_err store_check_summary(const sluice_store_summary_t *sum, sluice_error_t *err)
{
    size_t n = sum->state != NULL ? strlen(sum->state) : 0;

    if (n == 0 || n > 64)
        return sluice_errorf(err, SLUICE_EINVAL, "summary.state: required, at most 64 characters");
    if (sum->terminal != 0 && sum->terminal != 1)
        return sluice_errorf(err, SLUICE_EINVAL, "summary.terminal: must be 0 or 1");
    if (sum->job_ids != NULL && !json_is_array(sum->job_ids))
        return sluice_errorf(err, SLUICE_EINVAL, "summary.job_ids: must be an array");
    return SLUICE_OK;
}

void store_append_text_free(store_append_text_t *t)
{
    free(t->ctx);
    free(t->job_ids);
    t->ctx = NULL;
    t->job_ids = NULL;
}

/* Validate one event and serialise its context and job ids. */
sluice_err store_append_prepare(const char *launch_id,
                                const char *name,
                                const json_t *context,
                                const sluice_store_summary_t *sum,
                                store_append_text_t *out,
                                sluice_error_t *err)
{
    sluice_err rc;

    memset(out, 0, sizeof(*out));
    if ((rc = store_check_launch_id(launch_id, err)) != SLUICE_OK ||
        (rc = store_check_event_name(name, err)) != SLUICE_OK)
        return rc;
    if (context != NULL && !json_is_object(context))
        return sluice_errorf(err, SLUICE_EINVAL, "launch %s: event %s: context must be an object",
                             launch_id, name);
    if ((rc = store_refuse_secrets(context, "context", err)) != SLUICE_OK)
        return rc;
    if (sum != NULL && (rc = store_check_summary(sum, err)) != SLUICE_OK)
        return rc;
    if (context != NULL)
        rc = store_json_text(context, "context", &out->ctx, err);
    else if ((out->ctx = strdup("{}")) == NULL)
        rc = sluice_errorf(err, SLUICE_ENOMEM, "append event: out of memory");
    if (rc == SLUICE_OK && sum != NULL && sum->job_ids != NULL)
        rc = store_json_text(sum->job_ids, "job_ids", &out->job_ids, err);
    if (rc != SLUICE_OK)
        store_append_text_free(out);
    return rc;
}
