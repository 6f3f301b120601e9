/* SPDX-License-Identifier: Apache-2.0 */
/* timing.h - adding to the submit path's phase counters
 * (include/sluice/timing.h). */
#ifndef SLUICE_BASE_TIMING_H
#define SLUICE_BASE_TIMING_H

#include <stdint.h>

#include <sluice/timing.h>

/* Monotonic clock, nanoseconds. */
uint64_t timing_now_ns(void);

/* `launches` launches spent `ns` of wall time in `phase` (together). */
void timing_add(sluice_timing_phase phase, uint64_t launches, uint64_t ns);

/* timing_add(phase, launches, timing_now_ns() - since_ns). */
void timing_since(sluice_timing_phase phase, uint64_t launches, uint64_t since_ns);

#endif /* SLUICE_BASE_TIMING_H */
