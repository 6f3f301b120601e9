/* SPDX-License-Identifier: Apache-2.0 */
/* store_case.h - launches made directly in a test's store (no launcher):
 * for tests of what reads the store (the server's cache, its event feed). */
#ifndef SLUICE_TEST_STORE_CASE_H
#define SLUICE_TEST_STORE_CASE_H

#include <sluice/store.h>

/* Create launch `id` of `site` in `st` with the request {"launch_id": id}
 * (asserts on failure). */
void store_case_make_launch(sluice_store_t *st, const char *id, const char *site);

#endif /* SLUICE_TEST_STORE_CASE_H */
