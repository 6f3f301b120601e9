/* SPDX-License-Identifier: Apache-2.0 */
/* store_opts.h - the options that `sluice status`, `sluice ls` and `sluice
 * cancel` share (--state-dir, -o json|text and the --server options), and
 * the opening of the local store they read. */
#ifndef SLUICE_CLI_STORE_OPTS_H
#define SLUICE_CLI_STORE_OPTS_H

#include <sluice/store.h>

#include "remote.h"

/* Filled by cli_store_parse(); zero it before.  Borrows from argv. */
typedef struct {
    const char *state_dir; /* --state-dir; NULL: $SLUICE_STATE_DIR or the default */
    int json;              /* -o json */
    cli_remote_opts_t remote;
} cli_store_opts_t;

/* Parse the shared options from argv[1] on, up to the first operand.
 * Returns the index of that operand (argc when there is none); -2 after
 * printing `usage_text` for --help (*rc_out = 0); -1 after printing a
 * usage error (*rc_out = 64).  An unknown option prints `usage_text` to
 * stderr. */
int cli_store_parse(
    int argc, char **argv, cli_store_opts_t *o, const char *usage_text, int *rc_out);

/* Open the store of o->state_dir into *out (caller closes it with
 * sluice_store_close()).  Returns 0, or the sysexit after printing the
 * error. */
int cli_store_open(const cli_store_opts_t *o, sluice_store_t **out);

#endif /* SLUICE_CLI_STORE_OPTS_H */
