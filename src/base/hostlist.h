/* SPDX-License-Identifier: Apache-2.0 */
/* hostlist.h - expand a Slurm hostlist expression into node names
 * (internal).
 *
 * "tb[1-3,5],gpu07" -> tb1 tb2 tb3 tb5 gpu07.  Zero padding of a range is
 * kept ("n[01-03]" -> n01 n02 n03).  Only one bracket group per name is
 * understood (what Slurm prints for flat node names); anything else is
 * SLUICE_EINVAL naming the expression.  The only hostlist parser in C:
 * the launch view's node names and peers.env's first hosts both use it.
 */
#ifndef SLUICE_HOSTLIST_H
#define SLUICE_HOSTLIST_H

#include <stddef.h>

#include <jansson.h>

#include <sluice/error.h>

/* Names expanded from `expr`, at most `max` of them (more: SLUICE_ETOOBIG),
 * as a new array of strings in *out (caller releases with json_decref()). */
sluice_err hostlist_expand(const char *expr, size_t max, json_t **out, sluice_error_t *err);

/* The first name of `expr` into `out` (`size` bytes, NUL included); the
 * whole expression is checked as hostlist_expand() checks it.  SLUICE_EINVAL
 * for a bad or empty expression, SLUICE_ETOOBIG when the name does not fit. */
sluice_err hostlist_first(const char *expr, char *out, size_t size, sluice_error_t *err);

#endif /* SLUICE_HOSTLIST_H */
