/* SPDX-License-Identifier: Apache-2.0 */
/* store_usage.c - what one tenant has in the store: its live launches,
 * its recent accepts and the requests of its live launches, which the
 * service compares with the tenant's limits before an accept.
 *
 * Notes:
 * - A tenant's launches are the rows whose key starts "<tenant>~"; the
 *   default tenant's are those without '~' (base/marker.h).  The tenant
 *   name is checked first, so the LIKE pattern has no wildcard of its own.
 * - The three reads share one read transaction: the counts and the
 *   requests are one snapshot.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <sluice/store.h>

#include "store_int.h"

/* " AND launch_id ..." for `tenant` (the pattern, if any, is ?1). */
static const char *tenant_cond(const char *tenant)
{
    return tenant[0] == '\0' ? " launch_id NOT LIKE '%~%'" : " launch_id LIKE ?1";
}

/* One integer query: `head` + the tenant condition + `tail`. */
static sluice_err count(sluice_store_t *store,
                        const char *head,
                        const char *tenant,
                        const char *pattern,
                        int64_t since_ms,
                        int64_t *a,
                        int64_t *b,
                        sluice_error_t *err)
{
    char sql[256];
    store_stmt_t *st = NULL;
    sluice_err rc;
    int step;

    snprintf(sql, sizeof(sql), "%s%s", head, tenant_cond(tenant));
    if ((rc = store_prepare(store, sql, &st, err)) != SLUICE_OK)
        return rc;
    if (pattern != NULL)
        store_bind_text(st, 1, pattern);
    if (strstr(head, "?2") != NULL)
        store_bind_int64(st, 2, since_ms);
    step = store_step(st);
    if (step == STORE_ROW) {
        *a = store_column_int64(st, 0);
        if (b != NULL)
            *b = store_column_is_null(st, 1) ? 0 : store_column_int64(st, 1);
    } else {
        rc = store_db_fail(store, err, "tenant usage");
    }
    store_finalize(st);
    return rc;
}

static sluice_err live_requests(sluice_store_t *store,
                                const char *tenant,
                                const char *pattern,
                                size_t max,
                                json_t *arr,
                                sluice_error_t *err)
{
    char sql[256];
    store_stmt_t *st = NULL;
    sluice_err rc;
    int step;

    snprintf(sql, sizeof(sql),
             "SELECT request FROM launches WHERE terminal = 0 AND%s ORDER BY created_ms LIMIT ?3",
             tenant_cond(tenant));
    if ((rc = store_prepare(store, sql, &st, err)) != SLUICE_OK)
        return rc;
    if (pattern != NULL)
        store_bind_text(st, 1, pattern);
    store_bind_int64(st, 3, (int64_t)max);
    while ((step = store_step(st)) == STORE_ROW) {
        const char *text = store_column_str(st, 0);
        json_t *req = text != NULL ? json_loads(text, 0, NULL) : NULL;

        /* A request the store holds was valid JSON when written; one that
         * is not any more counts as nothing rather than failing the
         * accept of another launch. */
        if (req != NULL && json_array_append_new(arr, req) != 0) {
            rc = sluice_errorf(err, SLUICE_ENOMEM, "tenant usage: out of memory");
            goto out;
        }
    }
    if (step != STORE_DONE)
        rc = store_db_fail(store, err, "tenant usage");
out:
    store_finalize(st);
    return rc;
}

sluice_err sluice_store_tenant_usage(sluice_store_t *store,
                                     const char *tenant,
                                     int64_t since_ms,
                                     size_t max_requests,
                                     sluice_store_usage_t *out,
                                     json_t **requests_out,
                                     sluice_error_t *err)
{
    char pattern[48];
    const char *pat = NULL;
    json_t *arr = NULL;
    sluice_store_usage_t u = {0, 0, 0};
    sluice_err rc;
    int in_txn = 0;

    if (store == NULL || tenant == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL,
                             "tenant usage: store, tenant and out are required");
    if (tenant[0] != '\0') {
        if (!store_tenant_ok(tenant))
            return sluice_errorf(err, SLUICE_EINVAL, "tenant: not a tenant name");
        snprintf(pattern, sizeof(pattern), "%s~%%", tenant);
        pat = pattern;
    }
    if (requests_out != NULL && (arr = json_array()) == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "tenant usage: out of memory");
    pthread_mutex_lock(&store->mu);
    if ((rc = store_exec(store, "BEGIN", err)) != SLUICE_OK)
        goto out;
    in_txn = 1;
    if ((rc = count(store, "SELECT count(*) FROM launches WHERE terminal = 0 AND", tenant, pat, 0,
                    &u.live, NULL, err)) != SLUICE_OK)
        goto out;
    if ((rc = count(
             store, "SELECT count(*), min(created_ms) FROM launches WHERE created_ms >= ?2 AND",
             tenant, pat, since_ms, &u.accepted_since, &u.oldest_since_ms, err)) != SLUICE_OK)
        goto out;
    if (arr != NULL && max_requests > 0 &&
        (rc = live_requests(store, tenant, pat, max_requests, arr, err)) != SLUICE_OK)
        goto out;
    *out = u;
    if (requests_out != NULL) {
        *requests_out = arr;
        arr = NULL;
    }
out:
    if (in_txn)
        (void)store_exec(store, "COMMIT", NULL);
    pthread_mutex_unlock(&store->mu);
    json_decref(arr);
    return rc;
}
