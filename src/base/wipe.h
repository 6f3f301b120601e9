/* SPDX-License-Identifier: Apache-2.0 */
/* wipe.h - zeroing memory that held a secret (internal).
 *
 * The one way sluice clears secret bytes (token values, keys, secret
 * environment values, request bodies): explicit_bzero(3), which the
 * compiler may not drop as a dead store.  Every function is NULL-safe.
 */
#ifndef SLUICE_WIPE_H
#define SLUICE_WIPE_H

#include <stddef.h>

/* Zero p[0..n). */
void wipe(void *p, size_t n);
/* Zero the bytes of the string s (up to its NUL). */
void wipe_str(char *s);
/* Zero p[0..n), then free(p). */
void wipe_free(void *p, size_t n);
/* Zero the string s, then free(s). */
void wipe_str_free(char *s);

#endif /* SLUICE_WIPE_H */
