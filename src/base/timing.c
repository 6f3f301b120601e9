/* SPDX-License-Identifier: Apache-2.0 */
/* timing.c - the submit path's phase counters (include/sluice/timing.h):
 * two relaxed atomics per phase, process-wide. */
#include <stdatomic.h>
#include <time.h>

#include "timing.h"

static _Atomic uint64_t counts[SLUICE_TIMING_COUNT];
static _Atomic uint64_t sums[SLUICE_TIMING_COUNT];

static const char *const names[SLUICE_TIMING_COUNT] = {
    "parse",   "render",        "accept_wait", "accept_commit", "intake_delay", "queue",
    "staging", "marker_commit", "post",        "answer_commit", "read",
};

uint64_t timing_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void timing_add(sluice_timing_phase phase, uint64_t launches, uint64_t ns)
{
    if ((unsigned)phase >= SLUICE_TIMING_COUNT || launches == 0)
        return;
    atomic_fetch_add_explicit(&counts[phase], launches, memory_order_relaxed);
    atomic_fetch_add_explicit(&sums[phase], ns, memory_order_relaxed);
}

void timing_since(sluice_timing_phase phase, uint64_t launches, uint64_t since_ns)
{
    uint64_t now = timing_now_ns();

    timing_add(phase, launches, now > since_ns ? now - since_ns : 0);
}

void sluice_timings(sluice_timing_t *out)
{
    if (out == NULL)
        return;
    for (int i = 0; i < SLUICE_TIMING_COUNT; i++) {
        out[i].count = atomic_load_explicit(&counts[i], memory_order_relaxed);
        out[i].sum_ns = atomic_load_explicit(&sums[i], memory_order_relaxed);
    }
}

const char *sluice_timing_name(int phase)
{
    return phase >= 0 && phase < SLUICE_TIMING_COUNT ? names[phase] : "?";
}
