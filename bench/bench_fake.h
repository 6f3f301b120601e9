/* SPDX-License-Identifier: Apache-2.0 */
/* bench_fake.h - an in-memory stand-in cluster for the benchmarks that
 * need many live launches without a real job each (bench_mem,
 * bench_startup): every submit is accepted with the next job id, every job
 * stays PENDING (held) forever, and nothing is kept per job, so all memory
 * measured is the process's accept path and launcher.  Launches come in
 * through sluice_accept(), the service's one accept path (parse, render,
 * durable accept).  The clock is a fake one that sleeps by moving forward.
 */
#ifndef SLUICE_BENCH_FAKE_H
#define SLUICE_BENCH_FAKE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <sluice/launcher.h>
#include <sluice/store.h>

/* The first job id the stand-in hands out (then +1 per job). */
void bench_fake_first_id(uint64_t id);

/* A launcher on `store` with the stand-in cluster, no staging, the fake
 * clock and an unlimited budget, recovered; NULL (message printed) on
 * failure. */
sluice_launcher_t *bench_fake_launcher(sluice_store_t *store);

/* k launcher cycles, one fake second apart. */
void bench_fake_steps(sluice_launcher_t *l, int k);

/* Accept n launches "<prefix>-<i>" through the one accept path
 * (sluice_accept(): parsed and rendered, held, for a site of profile none);
 * returns how many were accepted. */
size_t bench_fake_accept(sluice_launcher_t *l, const char *prefix, size_t n);

/* Write n finished launches "<prefix>-<i>" straight through the store API
 * (create + a terminal `done` event); returns how many were written. */
size_t bench_fake_fill_finished(sluice_store_t *store, const char *prefix, size_t n);

/* VmRSS of this process in KiB, -1 when unknown. */
long bench_rss_kib(void);

#endif /* SLUICE_BENCH_FAKE_H */
