/* SPDX-License-Identifier: Apache-2.0 */
/* bench_mem.c - resident memory of a launcher: per live launch, and what
 * finished launches in the store cost.
 *
 * The cluster is an in-memory stand-in (every job is accepted and stays
 * PENDING, held, forever) that keeps no per-job state of its own, so all
 * resident memory measured belongs to the launcher, the store connection
 * and the libraries.  The store lives on tmpfs (--dir, default under
 * /dev/shm) so that 10,000 accepts and 100,000 store writes finish in
 * seconds; tmpfs pages are not part of the process's RSS (only the small
 * mapped WAL index is).
 *
 * Each phase runs in a child process and reports VmRSS (/proc/self/status)
 * at its end, once as is and once after malloc_trim(0):
 *   empty:    launcher_new + recover on an empty store;
 *   live:     N launches accepted and submitted, every job held; three
 *             poll cycles later;
 *   finished: a store holding M terminal launches (written through the
 *             store API: create + a terminal event), then launcher_new +
 *             recover + three cycles.
 *
 * usage: bench_mem [--live 10000] [--finished 100000] [--dir DIR]
 * Exit 0 whenever it ran.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/launcher.h>
#include <sluice/log.h>
#include <sluice/store.h>

#include "bench_fake.h"
#include "bench_util.h"

/* Phase bodies; each returns the RSS pair through `out` (kib, kib trimmed). */
static int phase(const char *dir, const char *what, size_t n, long out[4])
{
    sluice_store_t *store = NULL;
    sluice_launcher_t *l;
    sluice_error_t err = SLUICE_ERROR_INIT;
    double t0 = bench_now();

    if (sluice_store_open(&store, dir, &err) != SLUICE_OK) {
        fprintf(stderr, "bench_mem: store: %s\n", err.text);
        return -1;
    }
    if (strcmp(what, "fill") == 0) {
        /* finished launches written straight through the store API */
        bench_fake_fill_finished(store, "fin", n);
        sluice_store_close(store);
        out[0] = out[1] = 0;
        out[2] = (long)((bench_now() - t0) * 1000);
        return 0;
    }
    if ((l = bench_fake_launcher(store)) == NULL) {
        sluice_store_close(store);
        return -1;
    }
    if (strcmp(what, "live") == 0)
        bench_fake_accept(l, "live", n);
    bench_fake_steps(l, 3);
    out[0] = bench_rss_kib();
    malloc_trim(0);
    out[1] = bench_rss_kib();
    out[2] = (long)sluice_launcher_tracked(l);
    {
        struct mallinfo2 mi = mallinfo2(); /* bytes malloc hands out now */
        out[3] = (long)((mi.uordblks + mi.hblkhd) / 1024);
    }
    fprintf(stderr, "bench_mem: phase %s: %.1f s\n", what, bench_now() - t0);
    sluice_launcher_free(l);
    sluice_store_close(store);
    return 0;
}

static int in_child(const char *dir, const char *what, size_t n, long out[4])
{
    int fd[2], st = 0;
    pid_t pid;

    if (pipe(fd) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        long v[4] = {-1, -1, -1, -1};
        close(fd[0]);
        if (phase(dir, what, n, v) != 0)
            v[0] = -1;
        if (write(fd[1], v, sizeof(v)) != (ssize_t)sizeof(v))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], out, 4 * sizeof(long)) != (ssize_t)(4 * sizeof(long)))
        out[0] = -1;
    close(fd[0]);
    waitpid(pid, &st, 0);
    return out[0] < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    size_t live = 10000, finished = 100000;
    char base[] = "/dev/shm/sluice-bench-mem.XXXXXX";
    const char *dir = NULL;
    char d_empty[512], d_live[512], d_fin[512], cmd[600];
    long e[4], lv[4], f[4], fill[4];
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--live") == 0 && a + 1 < argc)
            live = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--finished") == 0 && a + 1 < argc)
            finished = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--dir") == 0 && a + 1 < argc)
            dir = argv[++a];
        else {
            fprintf(stderr, "usage: bench_mem [--live 10000] [--finished 100000] [--dir DIR]\n");
            return 0;
        }
    }
    if (dir == NULL && (dir = mkdtemp(base)) == NULL) {
        printf("bench_mem: NOT RUN (no temporary directory)\n");
        return 0;
    }
    if (live == 0)
        live = 1;
    sluice_log_set(NULL, 0, NULL);
    snprintf(d_empty, sizeof(d_empty), "%s/empty", dir);
    snprintf(d_live, sizeof(d_live), "%s/live", dir);
    snprintf(d_fin, sizeof(d_fin), "%s/finished", dir);
    if (in_child(d_empty, "empty", 0, e) != 0 || in_child(d_live, "live", live, lv) != 0 ||
        in_child(d_fin, "fill", finished, fill) != 0 || in_child(d_fin, "finished", 0, f) != 0) {
        printf("bench_mem: a phase failed\n");
    } else {
        double per = (double)(lv[0] - e[0]) * 1024.0 / (double)live;
        double per_t = (double)(lv[1] - e[1]) * 1024.0 / (double)live;
        printf("mem empty launcher:         rss_kib=%ld (after malloc_trim %ld)\n", e[0], e[1]);
        printf("mem %zu live launches:   rss_kib=%ld (after malloc_trim %ld), tracked=%ld\n", live,
               lv[0], lv[1], lv[2]);
        printf("mem per live launch:        %.0f bytes (after malloc_trim %.0f bytes)\n", per,
               per_t);
        printf("mem heap in use per live launch: %.0f bytes (malloc's allocated bytes, without "
               "free or fragmented space)\n",
               (double)(lv[3] - e[3]) * 1024.0 / (double)live);
        printf("mem store fill: %zu finished launches written in %.1f s\n", finished,
               (double)fill[2] / 1000.0);
        printf("mem %zu finished in store: rss_kib=%ld (after malloc_trim %ld), tracked=%ld, "
               "delta vs empty=%ld KiB\n",
               finished, f[0], f[1], f[2], f[0] - e[0]);
        bench_target("bytes per live launch <= 4096 (floor)", per, 4096.0, false);
        bench_target("bytes per live launch <= 2048 (issue 16)", per, 2048.0, false);
        bench_target("finished: tracked launches == 0", (double)f[2], 0.0, false);
        printf("mem per finished launch:    %.2f bytes (RSS delta / %zu)\n",
               (double)(f[0] - e[0]) * 1024.0 / (double)(finished ? finished : 1), finished);
        /* SQLite's page cache is bounded (default 2 MiB) whatever the count */
        bench_target("finished: RSS delta vs empty (KiB) <= 2560", (double)(f[0] - e[0]), 2560.0,
                     false);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (strncmp(dir, "/dev/shm/sluice-bench-mem.", 26) == 0 && system(cmd) != 0)
        fprintf(stderr, "bench_mem: could not remove %s\n", dir);
    return 0;
}
