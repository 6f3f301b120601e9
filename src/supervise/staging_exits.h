/* SPDX-License-Identifier: Apache-2.0 */
/* staging_exits.h - the per-pool exit files of an attempt (staging_exits.c). */
#ifndef SLUICE_SUPERVISE_STAGING_EXITS_H
#define SLUICE_SUPERVISE_STAGING_EXITS_H

#include <jansson.h>

#include <sluice/launcher.h>

/* Read the exit files of the pools of the stored render `render` (borrowed)
 * of launch `launch_id` into out[0..max): one entry per pool that has a
 * file, *n_out of them.  No staging directory, or no exit directory, is no
 * entry and success. */
sluice_err staging_read_exits(const char *launch_id,
                              const json_t *render,
                              sluice_pool_exit_t *out,
                              size_t max,
                              size_t *n_out,
                              sluice_error_t *err);

#endif /* SLUICE_SUPERVISE_STAGING_EXITS_H */
