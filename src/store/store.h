/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - internal helpers of the store module, for tests only.
 *
 * The tests may not include <sqlite3.h> or <libpq-fe.h> (store_sqlite.c and
 * store_pg.c are their only users), so the few raw manipulations they need
 * (a newer schema version, a foreign database, a damaged JSON column) go
 * through these hooks.
 */
#ifndef SLUICE_STORE_INTERNAL_H
#define SLUICE_STORE_INTERNAL_H

#include <sluice/error.h>
#include <sluice/store.h>

/* Open the SQLite file `db_path` directly (creating it when missing), run
 * `sql` (one or more statements) and close it.  No sluice checks at all.
 * SLUICE_ESTORE with SQLite's message on failure. */
sluice_err store_debug_exec_file(const char *db_path, const char *sql, sluice_error_t *err);

/* The same for PostgreSQL: connect to `url` (libpq's environment gives the
 * password), run `sql`, disconnect (store_pg.c). */
sluice_err store_debug_exec_url(const char *url, const char *sql, sluice_error_t *err);

/* SQLite: `PRAGMA synchronous` of the store's own connection (2: FULL,
 * 1: NORMAL), read under its mutex; -1 for PostgreSQL or on failure. */
int store_debug_synchronous(sluice_store_t *s);

#endif /* SLUICE_STORE_INTERNAL_H */
