/* SPDX-License-Identifier: Apache-2.0 */
/* opts.h - the version of a public options struct (docs/architecture.md,
 * "The public API and ABI").
 *
 * Every `sluice_<name>_opts_t` starts with `unsigned int version`, set by
 * SLUICE_<NAME>_OPTS_INIT or sluice_<name>_opts_init().  The function that
 * takes the struct checks it first with opts_check_version(), so a caller
 * built against another layout (or one that zeroed the struct instead of
 * starting from the INIT) is refused before a member is read.
 */
#ifndef SLUICE_BASE_OPTS_H
#define SLUICE_BASE_OPTS_H

#include <stddef.h>

#include <sluice/error.h>

/* SLUICE_OK when `version` is one this library knows for the options of
 * `name` ("client" for sluice_client_opts_t): 1 to `current`.  Otherwise
 * SLUICE_EINVAL: "sluice_client_opts_t: version 0 is unknown to this
 * library (it knows 1 to 1); start from SLUICE_CLIENT_OPTS_INIT or
 * sluice_client_opts_init()". */
sluice_err opts_check_version(const char *name,
                              unsigned int version,
                              unsigned int current,
                              sluice_error_t *err);

/* The body of sluice_<name>_opts_init(): check `version` as above, then copy
 * the `size` bytes of `tmpl` (the struct made by its INIT macro) into
 * `opts`.  SLUICE_EINVAL for a NULL `opts` or an unknown version (`opts`
 * is then untouched). */
sluice_err opts_init(void *opts,
                     const void *tmpl,
                     size_t size,
                     const char *name,
                     unsigned int version,
                     unsigned int current,
                     sluice_error_t *err);

#endif /* SLUICE_BASE_OPTS_H */
