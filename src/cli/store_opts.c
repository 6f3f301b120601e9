/* SPDX-License-Identifier: Apache-2.0 */
/* store_opts.c - opening an existing store for `sluice status`, `ls`,
 * `logs` and `cancel` (see store_opts.h).
 *
 * Notes:
 * - The store is --state-dir, else $SLUICE_STATE_DIR, else the default
 *   (sluice_store_default_dir()).
 * - sluice_store_open() creates a missing store, which is right for a
 *   supervisor (`serve`, `launch --wait`) and wrong for a command that only
 *   reads: `sluice status x` as root must not leave /var/lib/sluice/sluice.db
 *   behind.  So the database file must exist before it is opened; a missing
 *   one is EX_NOINPUT (66), like any missing input (docs/cli.md).
 * - $SLUICE_STORE_URL (a postgresql:// URL, as store.url of the site file)
 *   selects the PostgreSQL store, with $SLUICE_STORE_PASSWORD_FILE as
 *   store.password_file; these commands do not read the site file.  A
 *   PostgreSQL store that has no schema yet is made (it holds nothing).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "store_opts.h"

int cli_store_open_existing(const cli_spec_t *spec, const char *state_dir, sluice_store_t **out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *url = getenv("SLUICE_STORE_URL"), *pwfile = getenv("SLUICE_STORE_PASSWORD_FILE");
    char *dir = NULL, *db = NULL;
    int rc = CLI_EX_OK;

    *out = NULL;
    if (state_dir == NULL && sluice_store_default_dir(&dir, &err) != SLUICE_OK)
        return cli_fail(&err);
    if (state_dir == NULL)
        state_dir = dir;
    if (url != NULL && url[0] != '\0') {
        sluice_store_opts_t so = SLUICE_STORE_OPTS_INIT;

        so.dir = state_dir;
        so.url = url;
        so.password_file = pwfile != NULL && pwfile[0] != '\0' ? pwfile : NULL;
        if (sluice_store_open_with(out, &so, &err) != SLUICE_OK)
            rc = cli_fail(&err);
        free(dir);
        return rc;
    }
    if ((db = malloc(strlen(state_dir) + sizeof("/" CLI_STORE_DB))) == NULL) {
        free(dir);
        return CLI_EX_SOFTWARE;
    }
    sprintf(db, "%s/%s", state_dir, CLI_STORE_DB);
    if (access(db, F_OK) != 0) {
        if (errno == EACCES) {
            fprintf(stderr, "sluice %s: store %s: %s\n", spec->name, state_dir, strerror(errno));
            rc = CLI_EX_NOPERM;
        } else {
            fprintf(stderr,
                    "sluice %s: no store at %s (no %s there; --state-dir or $SLUICE_STATE_DIR "
                    "names the store that `sluice serve` or `sluice launch --wait` uses)\n",
                    spec->name, state_dir, CLI_STORE_DB);
            rc = CLI_EX_NOINPUT;
        }
        goto out;
    }
    if (sluice_store_open(out, state_dir, &err) != SLUICE_OK)
        rc = cli_fail(&err);
out:
    free(db);
    free(dir);
    return rc;
}
