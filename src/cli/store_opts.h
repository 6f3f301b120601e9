/* SPDX-License-Identifier: Apache-2.0 */
/* store_opts.h - the opening of the local store by the commands that read
 * it or append a request to it (`sluice status`, `ls`, `logs`, `cancel`):
 * they never create one. */
#ifndef SLUICE_CLI_STORE_OPTS_H
#define SLUICE_CLI_STORE_OPTS_H

#include <sluice/store.h>

#include "table.h"

/* The file whose presence makes a directory a store (store.h). */
#define CLI_STORE_DB "sluice.db"

/* Open the store of `state_dir` (NULL: $SLUICE_STATE_DIR, else the
 * default) into *out when one exists there (caller closes it with
 * sluice_store_close()).  Returns 0, or the sysexit after printing the
 * error: 66 when there is no store ("sluice status: no store at DIR ..."),
 * 77 when the directory may not be searched, the store's own codes
 * otherwise.  Nothing is created. */
int cli_store_open_existing(const cli_spec_t *spec, const char *state_dir, sluice_store_t **out);

#endif /* SLUICE_CLI_STORE_OPTS_H */
