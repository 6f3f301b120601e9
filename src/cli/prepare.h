/* SPDX-License-Identifier: Apache-2.0 */
/* prepare.h - what `sluice render` and `sluice launch` share: load the site
 * configuration and study runtime, read the request, and judge and render
 * it once through the library's accept pipeline (sluice_accept_prepare()). */
#ifndef SLUICE_CLI_PREPARE_H
#define SLUICE_CLI_PREPARE_H

#include <stddef.h>

#include <sluice/accept.h>
#include <sluice/sluice.h>

#define CLI_MAX_SETS 128

typedef struct {
    const char *request_path; /* "-" reads standard input */
    const char *config_path;  /* NULL: $SLUICE_CONFIG */
    const char *sets[CLI_MAX_SETS];
    size_t n_sets;
    const char *study_path; /* NULL: none */
    /* `sluice launch`: gather the secret values now (a secret_env that is
     * not set fails before the store is opened). */
    int read_secrets;
    const char *command; /* for messages: "launch" (NULL), "render" */
    const char *cluster; /* --cluster: of a request that names none; NULL: the first */
} cli_prepare_opts_t;

typedef struct {
    sluice_config_t *cfg;
    sluice_study_runtime_t *rt;
    sluice_accept_t *accept;       /* the prepared launch, ready to commit */
    const sluice_render_t *render; /* borrowed from accept */
} cli_prepared_t;

/* Load the site configuration of o->config_path (NULL: $SLUICE_CONFIG when
 * set, else none) with o's --set overrides into *cfg.  Returns 0, or the
 * sysexit after printing the error: 66 when the site file does not exist,
 * the configuration's own code (78, 74) otherwise. */
int cli_config_load(const cli_prepare_opts_t *o, sluice_config_t **cfg);
/* sluice_client_resolve_user() on every cluster of cfg (a site without
 * rest.user takes each cluster's token's user). */
sluice_err cli_resolve_users(sluice_config_t *cfg, sluice_error_t *err);

/* The sysexit for a file that cli_read_file() could not read (errno):
 * 66 missing, 77 not readable, 65 too large, 74 otherwise; prints
 * "sluice: cannot read <what> <path>: <reason>". */
int cli_read_fail(const char *what, const char *path);

/* Do it all; returns 0 or the sysexits code after printing the error
 * (65 bad request, 66 missing file, 74 unreadable file, 78 bad
 * configuration; a secret_env that is not set: the code of its error, 65). */
int cli_prepare(const cli_prepare_opts_t *o, cli_prepared_t *out);

/* Fill the configuration inputs every command uses: `path` (NULL:
 * $SLUICE_CONFIG when set), this process's environment, and the --set
 * overrides (borrowed). */
void cli_config_opts(sluice_config_opts_t *opts,
                     const char *path,
                     const char *const *sets,
                     size_t n_sets);

/* After a failed sluice_config_load(opts): when no site file was named
 * (neither --config nor $SLUICE_CONFIG) and nothing set rest.url either,
 * rewrite err to say so: "no site file given: pass --config FILE or set
 * SLUICE_CONFIG=FILE" (the code stays SLUICE_ECONFIG, exit 78).  Anything
 * else is left as it is. */
void cli_config_no_file(const sluice_config_opts_t *opts, sluice_error_t *err);

/* The site configuration's errors after the first (which cli_fail() of the
 * load's err printed), one "sluice: <file>:<line>:<col>: <key>: ..." line
 * each on stderr, then how many were past SLUICE_ERRLIST_MAX. */
void cli_config_errors(const sluice_errlist_t *errs);

/* The Slurm identity of `cfg` (the token is read, no request is sent),
 * which completes a configuration without rest.user
 * (sluice_client_resolve_user()): `user` receives the user, `source` where
 * it came from ("rest.user (file)", "the `sun` claim of the token of
 * rest.jwt_file").  Call it once, before anything else reads rest.user.
 * Errors of sluice_client_auth_from_config(), in `err`. */
sluice_err cli_identity(
    sluice_config_t *cfg, char *user, size_t ucap, char *source, size_t scap, sluice_error_t *err);

/* The process environment, as render and secrets read it. */
const char *cli_getenv(const char *name, void *arg);

void cli_prepared_free(cli_prepared_t *p);

/* Read a whole file ("-": standard input) of at most 2 MiB; the caller
 * frees.  NULL when it cannot be read (errno says why; EFBIG: larger). */
char *cli_read_file(const char *path, size_t *len);

#endif /* SLUICE_CLI_PREPARE_H */
