/* SPDX-License-Identifier: Apache-2.0 */
/* server_req.c - lookups in a request of `sluice serve` (headers, query
 * arguments) and the check of its query text.
 *
 * Notes:
 * - Names are compared without regard to case and the first match wins:
 *   that is how libmicrohttpd looks them up, and these lookups replace its
 *   own.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "server_req.h"
#include "server_text.h"

static const char *find_len(const req_kv_t *kv, size_t n, const char *key, size_t *len)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strcasecmp(kv[i].key, key) == 0) {
            *len = kv[i].value_len;
            return kv[i].value;
        }
    }
    *len = 0;
    return NULL;
}

static const char *find(const req_kv_t *kv, size_t n, const char *key)
{
    size_t len;

    return find_len(kv, n, key, &len);
}

void req_nul_lengths(req_kv_t *kv, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        const char *end = kv[i].value ? kv[i].value + kv[i].value_len : NULL;
        if (end != NULL &&
            (i + 1 < n ? (uintptr_t)kv[i + 1].key - (uintptr_t)end > 2 : end[1] != '\0'))
            kv[i].value_len++;
    }
}

const char *req_header_len(const req_t *rq, const char *name, size_t *len)
{
    return find_len(rq->headers, rq->n_headers, name, len);
}

const char *req_header(const req_t *rq, const char *name)
{
    return find(rq->headers, rq->n_headers, name);
}

const char *req_arg(const req_t *rq, const char *key)
{
    return find(rq->args, rq->n_args, key);
}

int req_arg_true(const req_t *rq, const char *key)
{
    const char *v = req_arg(rq, key);
    return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

int req_check_args(const req_t *rq, const char **field_out, const char **why_out)
{
    size_t i;

    for (i = 0; i < rq->n_args; i++) {
        const req_kv_t *kv = &rq->args[i];
        if (!text_clean(kv->key, strlen(kv->key), why_out)) {
            *field_out = "query";
            return -1;
        }
        if (kv->value && !text_clean(kv->value, strlen(kv->value), why_out)) {
            *field_out = kv->key;
            return -1;
        }
    }
    return 0;
}
