/* SPDX-License-Identifier: Apache-2.0 */
/* bench_util.h - shared pieces of the benchmarks: clocks, CPU time, the
 * testbed connection (client from environment), RPC totals from diag,
 * held-job descriptions and target reporting.
 *
 * Benchmarks never fail the build: every program exits 0 once it ran, and
 * a missed target is printed as MISSED, never as an error exit.
 */
#ifndef SLUICE_BENCH_UTIL_H
#define SLUICE_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/client.h>
#include <sluice/jobdesc.h>

/* Monotonic wall clock, seconds. */
double bench_now(void);
/* CPU seconds (user + system) of this process, or of its waited-for
 * children when `children` is true. */
double bench_cpu(bool children);
/* CPU seconds (user + system, all its threads) of process `pid`, from its
 * CPU clock (ns; /proc's utime + stime when that fails), or of the process
 * named by a pid file; -1 when unknown. */
double bench_pid_cpu(long pid);
double bench_pid_file_cpu(const char *pid_file);

/* Where the CPU went during a phase: the whole machine (/proc/stat) and
 * the testbed's slurmctld + slurmrestd (their pid files under
 * SLUICE_TESTBED_DIR).  Take one snapshot before and one after. */
typedef struct {
    double t;         /* bench_now() */
    double busy, all; /* machine jiffies: not idle/iowait, and every one */
    double slurm;     /* CPU s of slurmctld + slurmrestd; -1 unknown */
} bench_cpu_snap_t;

void bench_cpu_snap(bench_cpu_snap_t *s);
/* One line, "  CPU: machine busy 87% of 2 cores; slurmctld + slurmrestd
 * 6.10 ms per job; the rest 1.20 ms per job" (`jobs` made in the phase). */
void bench_cpu_report(const bench_cpu_snap_t *a, const bench_cpu_snap_t *b, size_t jobs);

/* Where the testbed is: SLUICE_BENCH_URL or SLUICE_TB_REST_URL, the token
 * file (SLUICE_BENCH_TOKEN_FILE or SLUICE_TB_TOKEN_FILE), the user
 * (SLUICE_BENCH_USER or SLUICE_TB_USER, default sluiceuser), the API
 * version (SLUICE_BENCH_API_VERSION, default auto). */
typedef struct {
    const char *url;
    const char *token_file;
    const char *user;
    const char *api_version;
    const char *partition; /* SLUICE_TB_PARTITION, default debug */
    const char *workdir;   /* SLUICE_BENCH_WORKDIR, default /tmp */
    const char *tb_dir;    /* SLUICE_TESTBED_DIR, may be NULL */
} bench_target_t;

void bench_target_from_env(bench_target_t *t);

/* A negotiated client for the target; NULL (message printed) on failure. */
sluice_client_t *bench_client_new(const bench_target_t *t);

/* Sum of every RPC counter in diag except REQUEST_STATS_INFO (the diag
 * read itself); `stats_out` (may be NULL) receives that one.  Returns false
 * when diag could not be read. */
bool bench_rpc_total(sluice_client_t *c, uint64_t *total_out, uint64_t *stats_out);

/* Read diag into `out` (caller clears with sluice_rest_diag_clear). */
bool bench_diag(sluice_client_t *c, sluice_rest_diag_t *out);

/* Print the per-type deltas between two diag reads (types that moved). */
void bench_print_rpc_deltas(const char *label,
                            const sluice_rest_diag_t *before,
                            const sluice_rest_diag_t *after);

/* A held one-task job named `name` (borrowed strings; nothing to free). */
void bench_held_desc(sluice_jobdesc_t *d, const bench_target_t *t, const char *name, bool hold);

/* Cancel every listed job (DELETE); returns how many were accepted. */
size_t bench_cancel_all(sluice_client_t *c, const uint64_t *ids, size_t n);

/* mkdtemp(dir_template), made 0755, with an executable "#!/bin/sh\ntrue"
 * job.sh in it (its path into script[size]): the baseline loops' job.
 * 0, or -1 when it could not be made.  Remove with bench_trivial_script_rm. */
int bench_trivial_script(char *dir_template, char *script, size_t size);
void bench_trivial_script_rm(const char *dir, const char *script);

/* n `sbatch --hold --parsable` calls of `script` in `partition` (as
 * `runuser` through `runuser -u RUNUSER --` when not NULL), job names
 * sluicebench-sb-<i>, in ONE shell loop: with SLUICE_TB_ROOT set (a release
 * in a root), the loop runs inside the root in one chroot, with
 * SLUICE_TB_SLURM_BIN first on PATH and SLURM_CONF, so that each call costs
 * sbatch's own time and not the testbed's host wrapper's chroot.  ids[i]
 * receives each job id (0 on failure), *ok_out how many succeeded.  Returns
 * the seconds the loop took (0 when it could not run). */
double bench_sbatch_loop(const char *runuser,
                         const char *script,
                         const char *partition,
                         size_t n,
                         uint64_t *ids,
                         size_t *ok_out);

/* Sort v[n] ascending; then bench_pct(v, n, 99) is its 99th percentile
 * (nearest rank; 0 for n == 0) and bench_median(v, n) its median: the middle
 * value, or for an even n the mean of the two middle values (0 for n == 0).
 * Every median the benchmarks print is bench_median's (p50 included), never
 * bench_pct(v, n, 50), which is the upper of the two for an even n. */
void bench_sort(double *v, size_t n);
double bench_pct(const double *sorted, size_t n, double p);
double bench_median(const double *sorted, size_t n);

/* Print one target line: "target <name>: measured <value> <op> <target>
 * -> met|MISSED" and return whether it was met.  `higher_better` selects
 * >= (true) or <= (false). */
bool bench_target(const char *name, double measured, double target, bool higher_better);

/* The target line of a measure that has no data (`why`: what is missing):
 * "target <name>: no data (<why>) -> MISSED"; a target without data is
 * never met.  Returns false. */
bool bench_target_no_data(const char *name, const char *why);

#endif /* SLUICE_BENCH_UTIL_H */
