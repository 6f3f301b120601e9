/* SPDX-License-Identifier: Apache-2.0 */
/* server_util.h - the small helpers every file of `sluice serve` may use
 * (not installed): clocks and sleeps, decimal counts, launch ids in paths,
 * and wiping secrets.  The lowest file of src/serve/: it calls no other.
 */
#ifndef SLUICE_SERVER_UTIL_H
#define SLUICE_SERVER_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Sleep `ms` milliseconds (a signal may end it early). */
void server_sleep_ms(unsigned ms);
/* Seconds since `t0` on CLOCK_MONOTONIC. */
double server_elapsed_s(const struct timespec *t0);
/* Milliseconds on clock `id`. */
int64_t server_clock_ms(clockid_t id);
/* Parse a non-negative decimal; -1 when malformed. */
long long server_parse_count(const char *s);
/* 1 when id[0..len) holds only the characters a launch id may hold (and
 * is not "." or ".."), else 0. */
int server_valid_id(const char *id, size_t len);

#endif /* SLUICE_SERVER_UTIL_H */
