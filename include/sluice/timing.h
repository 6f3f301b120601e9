/* SPDX-License-Identifier: Apache-2.0 */
/* timing.h - where a launch's time goes on its way from the request to its
 * Slurm job id: process-wide counters of wall time per phase of the submit
 * path, for the benchmarks and GET /v1/metrics.
 *
 * Every phase adds (launches, nanoseconds): a phase that works per launch
 * (parse, render) adds 1 and its own time; a phase that works for a group
 * of launches at once (one durable commit for several accepts, one chunk of
 * staging, markers, POSTs or answers) adds the group's size and the group's
 * wall time once.  So sum_ns / count is the wall time per launch that the
 * phase costs the path, amortised over its groups.  The counters are
 * atomics: any thread may read them while others add.
 */
#ifndef SLUICE_TIMING_H
#define SLUICE_TIMING_H

#include <stdint.h>

#include <sluice/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SLUICE_TIMING_PARSE = 0,     /* accept: study lookup, policy, strict parse */
    SLUICE_TIMING_RENDER,        /* accept: render, request and render JSON */
    SLUICE_TIMING_ACCEPT_WAIT,   /* accept: waiting for the store write (lock or group) */
    SLUICE_TIMING_ACCEPT_COMMIT, /* accept: the durable store commit(s) */
    SLUICE_TIMING_INTAKE_DELAY,  /* accept committed -> the launcher took it in */
    SLUICE_TIMING_QUEUE,         /* taken in -> its chunk's staging starts */
    SLUICE_TIMING_STAGING,       /* staging directory and files, the chunk's syncfs */
    SLUICE_TIMING_MARKER_COMMIT, /* the chunk's submit-started commit */
    SLUICE_TIMING_POST,          /* the chunk's POSTs to slurmrestd */
    SLUICE_TIMING_ANSWER_COMMIT, /* the chunk's submitted commit */
    SLUICE_TIMING_READ,          /* the launcher's batched state read: count = reads, not
                                    launches (it blocks the launcher's submits meanwhile) */
    SLUICE_TIMING_COUNT
} sluice_timing_phase;

typedef struct {
    uint64_t count;  /* launches */
    uint64_t sum_ns; /* wall time */
} sluice_timing_t;

/* A snapshot of every phase's counters (out[SLUICE_TIMING_COUNT]). */
SLUICE_API void sluice_timings(sluice_timing_t *out);

/* The phase's name ("parse", "accept_commit", ...); "?" out of range. */
SLUICE_API const char *sluice_timing_name(int phase);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_TIMING_H */
