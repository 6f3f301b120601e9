/* SPDX-License-Identifier: Apache-2.0 */
/* store_backend.c - see store_backend.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "sluice_assert.h"
#include "store_backend.h"
#include "store/store.h"

static char schema[64];
static char url[1024];

int store_backend_is_pg(void)
{
    const char *b = getenv("SLUICE_TEST_STORE_BACKEND");

    return b != NULL && strcmp(b, "pg") == 0;
}

const char *store_backend_url(void)
{
    return store_backend_is_pg() ? url : NULL;
}

void store_backend_setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *base = getenv("SLUICE_TEST_PG_URL");
    char sql[128];
    struct timespec ts;

    if (!store_backend_is_pg())
        return;
    cr_assert(base != NULL && base[0] != '\0',
              "SLUICE_TEST_STORE_BACKEND=pg needs SLUICE_TEST_PG_URL (deploy/testbed/postgres.sh)");
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(schema, sizeof(schema), "sluice_test_%ld_%ld", (long)getpid(),
             (long)(ts.tv_nsec / 1000));
    snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE; CREATE SCHEMA %s", schema,
             schema);
    cr_assert_sluice_ok(store_debug_exec_url(base, sql, &err), &err);
    /* The application name finds this test's connections
     * (store_backend_kill_connections). */
    snprintf(url, sizeof(url), "%s%soptions=-csearch_path%%3D%s&application_name=%s", base,
             strchr(base, '?') != NULL ? "&" : "?", schema, schema);
}

void store_backend_teardown(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char sql[128];

    if (!store_backend_is_pg() || schema[0] == '\0')
        return;
    snprintf(sql, sizeof(sql), "DROP SCHEMA IF EXISTS %s CASCADE", schema);
    if (store_debug_exec_url(getenv("SLUICE_TEST_PG_URL"), sql, &err) != SLUICE_OK)
        fprintf(stderr, "cannot drop schema %s: %s\n", schema, err.text);
    schema[0] = '\0';
}

sluice_err store_backend_open(sluice_store_t **out, const char *dir, sluice_error_t *err)
{
    sluice_store_opts_t opts = SLUICE_STORE_OPTS_INIT;

    opts.dir = dir;
    opts.url = store_backend_url();
    return sluice_store_open_with(out, &opts, err);
}

void store_backend_exec(const char *db_path, const char *sql)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (store_backend_is_pg())
        cr_assert_sluice_ok(store_debug_exec_url(url, sql, &err), &err);
    else
        cr_assert_sluice_ok(store_debug_exec_file(db_path, sql, &err), &err);
}

void store_backend_kill_connections(void)
{
    char sql[256];

    cr_assert(store_backend_is_pg());
    snprintf(sql, sizeof(sql),
             "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
             "'%s' AND pid <> pg_backend_pid()",
             schema);
    store_backend_exec(NULL, sql);
}
