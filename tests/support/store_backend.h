/* SPDX-License-Identifier: Apache-2.0 */
/* store_backend.h - the store backend a test run uses: SQLite (the
 * default), or PostgreSQL when SLUICE_TEST_STORE_BACKEND=pg, at
 * SLUICE_TEST_PG_URL (libpq's environment, e.g. PGPASSFILE, gives the
 * password; deploy/testbed/postgres.sh env prints both).  CTest runs each
 * store suite twice: unit.<suite> and unit.<suite>.pg.
 *
 * With PostgreSQL every test gets a schema of its own, made in .init
 * (store_backend_setup) and dropped in .fini (store_backend_teardown); the
 * URL the store is opened with selects it (search_path). */
#ifndef SLUICE_TEST_STORE_BACKEND_H
#define SLUICE_TEST_STORE_BACKEND_H

#include <sluice/store.h>

/* 1 when this run uses PostgreSQL. */
int store_backend_is_pg(void);
/* Call in .init / .fini (asserts on failure; no-ops for SQLite). */
void store_backend_setup(void);
void store_backend_teardown(void);
/* This test's store URL (NULL for SQLite); borrowed. */
const char *store_backend_url(void);
/* sluice_store_open() of the state directory `dir` with this test's URL. */
sluice_err store_backend_open(sluice_store_t **out, const char *dir, sluice_error_t *err);
/* Run raw SQL on the test's database: the SQLite file `db_path`, or this
 * test's schema (no sluice checks; asserts on failure). */
void store_backend_exec(const char *db_path, const char *sql);

/* SQL (both backends) that takes a store of schema 7 back to the tables of
 * schema 6: the request and the render in `launches` again, no
 * `launch_texts` (for tests that rebuild an older store and migrate it). */
#define STORE_BACKEND_UNDO_TEXTS                                                                   \
    "ALTER TABLE launches ADD COLUMN request TEXT NOT NULL DEFAULT '';"                            \
    "ALTER TABLE launches ADD COLUMN render TEXT;"                                                 \
    "UPDATE launches SET request = (SELECT t.request FROM launch_texts t"                          \
    "  WHERE t.launch_id = launches.launch_id), render = (SELECT t.render FROM launch_texts t"     \
    "  WHERE t.launch_id = launches.launch_id);"                                                   \
    "DROP TABLE launch_texts;"

/* PostgreSQL only: end every server connection of this test's stores (as
 * a server restart or a network cut would). */
void store_backend_kill_connections(void);

#endif /* SLUICE_TEST_STORE_BACKEND_H */
