/* SPDX-License-Identifier: Apache-2.0 */
/* server_util.c - the small helpers of `sluice serve` that every other file
 * may call: clocks and sleeps, decimal counts, launch ids, secret wiping.
 *
 * Notes:
 * - This file calls no other file of src/serve/, so calls between the
 *   serve files can only go one way through it.
 */
#define _GNU_SOURCE 1 /* nanosleep under -std=c11 */
#include <stdint.h>
#include <time.h>

#include "base/marker.h"
#include "server_util.h"

void server_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

double server_elapsed_s(const struct timespec *t0)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

int64_t server_clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long server_parse_count(const char *s)
{
    long long v = 0;

    if (s == NULL || *s == '\0')
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

int server_valid_id(const char *id, size_t len)
{
    /* The launch_id rule is base/marker.c's (it refuses "." and ".."), so
     * every launch the parser and the store accept can be named here. */
    return marker_launch_id_ok(id, len);
}
