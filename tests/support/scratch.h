/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.h - a test's scratch directory: made fresh under /tmp for each
 * test, removed after it (kept when KEEP_SCRATCH is set, to look at). */
#ifndef SLUICE_TEST_SCRATCH_H
#define SLUICE_TEST_SCRATCH_H

#include <stddef.h>

/* Make /tmp/sluice-<tag>-XXXXXX into dir (asserts on failure). */
void scratch_make(char *dir, size_t size, const char *tag);

/* Remove it and everything in it (a warning, not a failure, if that fails). */
void scratch_remove(const char *dir);

#endif /* SLUICE_TEST_SCRATCH_H */
