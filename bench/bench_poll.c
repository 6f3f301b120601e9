/* SPDX-License-Identifier: Apache-2.0 */
/* bench_poll.c - poll cost of tracking many held jobs: sluice's batched
 * state read against the CLI launchers' per-job squeue.
 *
 * For each size (default 10, 100, 1000) the queue is filled with that many
 * held jobs (submitted through REST with hold = true), then:
 *   (a) sluice: N cycles of the launcher's poll path, i.e. one cluster-ops
 *       job_states() call for every tracked id (what sluice_launcher_step
 *       sends when nothing changed);
 *   (b) baseline: per tracked job and cycle one `squeue --name <name> -h
 *       -o %T` (held jobs never leave the queue, so no sacct is due).
 * slurmctld RPCs come from diag's rpcs_by_message_type read before and
 * after the cycles (REQUEST_STATS_INFO, the diag read itself, excluded).
 * Wall and CPU time are per cycle; CPU is this process (sluice) or the
 * squeue children (baseline), plus slurmctld and slurmrestd when the
 * testbed's pid files are readable.  Every job is cancelled at the end.
 *
 * usage: bench_poll [--sizes 10,100,1000] [--cycles 20]
 *                   [--baseline-cycles 3,2,1] [--no-baseline]
 * Environment: see bench_util.h.  Exit 0 whenever it ran (targets are
 * printed as met or MISSED).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sluice/ops.h>

#include "bench_util.h"

extern char **environ;

#define MAX_SIZES 8

typedef struct {
    double rpcs, wall, cpu, server_cpu;
    unsigned cycles;
    bool ok;
} cost_t;

static size_t parse_list(const char *s, size_t *out, size_t max)
{
    size_t n = 0;
    char *end;

    while (*s && n < max) {
        unsigned long v = strtoul(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static double server_cpu(const bench_target_t *t)
{
    char p1[512], p2[512];
    double a, b;

    if (t->tb_dir == NULL)
        return -1.0;
    snprintf(p1, sizeof(p1), "%s/run/slurm/slurmctld.pid", t->tb_dir);
    snprintf(p2, sizeof(p2), "%s/run/rest/slurmrestd.pid", t->tb_dir);
    a = bench_pid_file_cpu(p1);
    b = bench_pid_file_cpu(p2);
    return (a < 0 || b < 0) ? -1.0 : a + b;
}

/* Run squeue for one job name; returns true when it printed PENDING. */
static bool squeue_one(const char *name, bool *pending)
{
    char *argv[] = {"squeue", "--name", NULL, "-h", "-o", "%T", NULL};
    posix_spawn_file_actions_t fa;
    int fd[2];
    pid_t pid;
    char buf[256];
    size_t len = 0;
    ssize_t r;
    int st = 0;

    argv[2] = (char *)(uintptr_t)name;
    if (pipe(fd) != 0)
        return false;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    if (posix_spawnp(&pid, "squeue", &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(fd[0]);
        close(fd[1]);
        return false;
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    while ((r = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0 || (r < 0 && errno == EINTR))
        if (r > 0 && (len += (size_t)r) >= sizeof(buf) - 1)
            break;
    buf[len] = '\0';
    close(fd[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *pending = strncmp(buf, "PENDING", 7) == 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static cost_t measure_sluice(
    sluice_client_t *c, const bench_target_t *t, const uint64_t *ids, size_t n, unsigned cycles)
{
    sluice_cluster_ops_t ops;
    sluice_cluster_rest_t *rest = NULL;
    sluice_job_state_t *st = calloc(n, sizeof(*st));
    sluice_rest_diag_t d0, d1;
    cost_t r;
    double w0, c0, s0;
    unsigned bad = 0;

    memset(&r, 0, sizeof(r));
    if (st == NULL || sluice_cluster_rest_new(&rest, c, NULL, NULL) != SLUICE_OK) {
        free(st);
        return r;
    }
    sluice_cluster_rest_ops(rest, &ops);
    /* one warm-up cycle (connection, negotiation already done) */
    (void)ops.job_states(ops.arg, ids, n, st);
    if (!bench_diag(c, &d0)) {
        sluice_cluster_rest_free(rest);
        free(st);
        return r;
    }
    w0 = bench_now();
    c0 = bench_cpu(false);
    s0 = server_cpu(t);
    for (unsigned k = 0; k < cycles; k++) {
        if (ops.job_states(ops.arg, ids, n, st) != SLUICE_LOOKUP_FOUND)
            bad++;
        for (size_t i = 0; i < n; i++)
            if (!st[i].present || st[i].base != SLUICE_JOB_PENDING)
                bad++;
    }
    r.wall = (bench_now() - w0) / cycles;
    r.cpu = (bench_cpu(false) - c0) / cycles;
    r.server_cpu = s0 < 0 ? -1.0 : (server_cpu(t) - s0) / cycles;
    if (bench_diag(c, &d1)) {
        uint64_t a0 = 0, a1 = 0;
        for (size_t i = 0; i < d0.n_rpcs; i++)
            if (strcmp(d0.rpcs[i].message_type, "REQUEST_STATS_INFO") != 0)
                a0 += d0.rpcs[i].count;
        for (size_t i = 0; i < d1.n_rpcs; i++)
            if (strcmp(d1.rpcs[i].message_type, "REQUEST_STATS_INFO") != 0)
                a1 += d1.rpcs[i].count;
        r.rpcs = (double)(a1 - a0) / cycles;
        r.ok = bad == 0;
        bench_print_rpc_deltas("sluice", &d0, &d1);
        sluice_rest_diag_clear(&d1);
    }
    if (bad)
        printf("  sluice: %u missing or non-PENDING states\n", bad);
    r.cycles = cycles;
    sluice_rest_diag_clear(&d0);
    sluice_cluster_rest_free(rest);
    free(st);
    return r;
}

static cost_t measure_baseline(
    sluice_client_t *c, const bench_target_t *t, char **names, size_t n, unsigned cycles)
{
    sluice_rest_diag_t d0, d1;
    cost_t r;
    double w0, c0, s0;
    unsigned bad = 0;

    memset(&r, 0, sizeof(r));
    if (!bench_diag(c, &d0))
        return r;
    w0 = bench_now();
    c0 = bench_cpu(true);
    s0 = server_cpu(t);
    for (unsigned k = 0; k < cycles; k++) {
        for (size_t i = 0; i < n; i++) {
            bool pending = false;
            if (!squeue_one(names[i], &pending) || !pending)
                bad++;
        }
    }
    r.wall = (bench_now() - w0) / cycles;
    r.cpu = (bench_cpu(true) - c0) / cycles;
    r.server_cpu = s0 < 0 ? -1.0 : (server_cpu(t) - s0) / cycles;
    if (bench_diag(c, &d1)) {
        uint64_t a0 = 0, a1 = 0;
        for (size_t i = 0; i < d0.n_rpcs; i++)
            if (strcmp(d0.rpcs[i].message_type, "REQUEST_STATS_INFO") != 0)
                a0 += d0.rpcs[i].count;
        for (size_t i = 0; i < d1.n_rpcs; i++)
            if (strcmp(d1.rpcs[i].message_type, "REQUEST_STATS_INFO") != 0)
                a1 += d1.rpcs[i].count;
        r.rpcs = (double)(a1 - a0) / cycles;
        r.ok = bad == 0;
        bench_print_rpc_deltas("baseline", &d0, &d1);
        sluice_rest_diag_clear(&d1);
    }
    if (bad)
        printf("  baseline: %u squeue calls failed or did not show PENDING\n", bad);
    r.cycles = cycles;
    sluice_rest_diag_clear(&d0);
    return r;
}

static void print_cost(const char *who, size_t n, const cost_t *r)
{
    printf("poll n=%-5zu %-8s cycles=%-3u rpcs/cycle=%8.2f wall_ms/cycle=%10.2f "
           "cpu_ms/cycle=%9.2f server_cpu_ms/cycle=%9.2f%s\n",
           n, who, r->cycles, r->rpcs, r->wall * 1e3, r->cpu * 1e3,
           r->server_cpu < 0 ? -1.0 : r->server_cpu * 1e3, r->ok ? "" : " (CHECK FAILED)");
}

int main(int argc, char **argv)
{
    size_t sizes[MAX_SIZES] = {10, 100, 1000}, n_sizes = 3;
    size_t bcycles[MAX_SIZES] = {3, 2, 1}, n_bcycles = 3;
    unsigned cycles = 20;
    bool baseline = true;
    bench_target_t t;
    sluice_client_t *c;
    size_t max = 0, have = 0;
    uint64_t *ids = NULL;
    char **names = NULL;
    sluice_client_info_t info;
    int a;
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--sizes") == 0 && a + 1 < argc)
            n_sizes = parse_list(argv[++a], sizes, MAX_SIZES);
        else if (strcmp(argv[a], "--baseline-cycles") == 0 && a + 1 < argc)
            n_bcycles = parse_list(argv[++a], bcycles, MAX_SIZES);
        else if (strcmp(argv[a], "--cycles") == 0 && a + 1 < argc)
            cycles = (unsigned)strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--no-baseline") == 0)
            baseline = false;
        else {
            fprintf(stderr, "usage: bench_poll [--sizes 10,100,1000] [--cycles 20] "
                            "[--baseline-cycles 3,2,1 (0 skips)] [--no-baseline]\n");
            return 0;
        }
    }
    if (cycles == 0)
        cycles = 1;
    bench_target_from_env(&t);
    if ((c = bench_client_new(&t)) == NULL) {
        printf("bench_poll: NOT RUN (no testbed)\n");
        return 0;
    }
    sluice_client_info(c, &info);
    printf("bench_poll: %s, Slurm %s, API %s\n", t.url, info.release,
           sluice_rest_version_name(info.version));
    for (size_t i = 0; i < n_sizes; i++)
        if (sizes[i] > max)
            max = sizes[i];
    ids = calloc(max ? max : 1, sizeof(*ids));
    names = calloc(max ? max : 1, sizeof(*names));
    if (ids == NULL || names == NULL)
        return 0;
    for (size_t s = 0; s < n_sizes; s++) {
        size_t n = sizes[s];
        double t0 = bench_now();
        size_t before = have;
        cost_t rs, rb;

        /* fill the queue up to n held jobs */
        while (have < n) {
            sluice_jobdesc_t d;
            sluice_rest_submit_t out;
            sluice_error_t err = SLUICE_ERROR_INIT;
            char name[64];

            snprintf(name, sizeof(name), "sluicebench-%ld-%zu", (long)getpid(), have);
            bench_held_desc(&d, &t, name, true);
            memset(&out, 0, sizeof(out));
            if (sluice_client_submit(c, &d, 1, &out, NULL, &err) != SLUICE_OK) {
                fprintf(stderr, "bench_poll: submit %zu: %s\n", have, err.text);
                sluice_jobdesc_clear(&d);
                break;
            }
            ids[have] = out.job_id;
            names[have] = strdup(name);
            have++;
            sluice_rest_submit_clear(&out);
            sluice_jobdesc_clear(&d);
        }
        if (have < n) {
            printf("poll n=%zu: only %zu jobs submitted: stopping\n", n, have);
            break;
        }
        printf("poll n=%zu: %zu held jobs in the queue (%zu submitted in %.2f s)\n", n, have,
               have - before, bench_now() - t0);
        rs = measure_sluice(c, &t, ids, n, cycles);
        print_cost("sluice", n, &rs);
        bench_target("poll rpcs/cycle (sluice) <= 1", rs.rpcs, 1.0, false);
        /* A baseline cycle count of 0 skips the baseline at that size (one
         * squeue per job: 10,000 jobs take minutes per cycle). */
        if (!baseline || (s < n_bcycles && bcycles[s] == 0))
            continue;
        rb = measure_baseline(c, &t, names, n,
                              (unsigned)(s < n_bcycles && bcycles[s] ? bcycles[s] : 1));
        print_cost("baseline", n, &rb);
        printf("poll n=%-5zu ratio    rpcs baseline/sluice=%.1fx wall baseline/sluice=%.1fx "
               "cpu(client) baseline/sluice=%.1fx\n",
               n, rs.rpcs > 0 ? rb.rpcs / rs.rpcs : 0.0, rs.wall > 0 ? rb.wall / rs.wall : 0.0,
               rs.cpu > 0 ? rb.cpu / rs.cpu : 0.0);
        if (n == 1000) {
            bench_target("rpc ratio at 1000 jobs >= 300x", rs.rpcs > 0 ? rb.rpcs / rs.rpcs : 0.0,
                         300.0, true);
            /* The full table on v0.0.38; jobs/state on v0.0.40+. */
            if (info.version == SLUICE_REST_V0038)
                bench_target("wall ratio at 1000 jobs >= 20x (v0.0.38)",
                             rs.wall > 0 ? rb.wall / rs.wall : 0.0, 20.0, true);
            else
                bench_target("wall ratio at 1000 jobs >= 1000x (jobs/state)",
                             rs.wall > 0 ? rb.wall / rs.wall : 0.0, 1000.0, true);
        }
    }
    printf("bench_poll: cancelled %zu of %zu jobs\n", bench_cancel_all(c, ids, have), have);
    for (size_t i = 0; i < have; i++)
        free(names[i]);
    free(names);
    free(ids);
    sluice_client_free(c);
    return 0;
}
