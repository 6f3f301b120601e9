/* SPDX-License-Identifier: Apache-2.0 */
/* bench_startup.c - how long `sluice serve` takes from exec to ready with
 * a big store (issue 16: 100,000 finished and 1,000 live launches, <= 1 s).
 *
 * 1. Builds two stores with the library: an empty one, and one with M
 *    finished launches (store API: create + a terminal `done` event) and N
 *    live ones (accepted and submitted through a launcher on the in-memory
 *    stand-in cluster of bench_fake.h, so each holds a job id from
 *    60,000,000 on: ids no testbed job has).  The stores live under
 *    /dev/shm by default (--dir): 100,000 durable writes on disk take
 *    minutes, and the timed start then reads a store in the page cache, as
 *    a restart right after a stop does.
 * 2. Starts the real binary (`$SLUICE_BIN serve --listen 127.0.0.1:0
 *    --tokens FILE --config SITE --state-dir DIR`) --runs times on each
 *    store and times, from just before fork+exec: `listening` (its
 *    "(port N)" line on stderr, looked for every millisecond) and `ready`
 *    (the first 200 of GET /v1/readyz, asked every 2 ms once the port is
 *    known; readyz pings slurmrestd).  Between runs the service is
 *    stopped with SIGTERM.  The live launches' fake job ids are read by
 *    the service's first cycles (not found: accounting); no job is made.
 *
 * usage: bench_startup --config SITE.yaml [--finished 100000] [--live 1000]
 *                      [--runs 3] [--dir DIR]
 * Environment: SLUICE_BIN (default ./sluice); BENCH_KEEP=1 keeps DIR, and a
 * later run with the same --dir reuses its store (DIR/pristine, copied to
 * DIR/full before each start).  Exit 0 whenever it ran.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/launcher.h>
#include <sluice/log.h>
#include <sluice/store.h>

#include "bench_fake.h"
#include "bench_http.h"
#include "bench_util.h"

#define API_TOKEN "bench-startup-token-0123456789abcdef"

/* Build the store at dir: `finished` terminal launches, `live` submitted
 * ones.  Runs in a child so that the store's lock is gone afterwards. */
static int build_store(const char *dir, size_t finished, size_t live)
{
    pid_t pid = fork();
    int st = 0;

    if (pid == 0) {
        sluice_store_t *store = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_launcher_t *l;
        double t0 = bench_now();
        size_t nf, nl = 0;

        sluice_log_set(NULL, 0, NULL);
        if (sluice_store_open(&store, dir, &err) != SLUICE_OK) {
            fprintf(stderr, "bench_startup: store: %s\n", err.text);
            _exit(1);
        }
        nf = bench_fake_fill_finished(store, "fin", finished);
        printf("store: %zu finished launches written in %.1f s\n", nf, bench_now() - t0);
        t0 = bench_now();
        if (live > 0 && (l = bench_fake_launcher(store)) != NULL) {
            bench_fake_first_id(60000000);
            nl = bench_fake_accept(l, "live", live);
            bench_fake_steps(l, 3);
            printf("store: %zu live launches accepted and submitted (stand-in cluster) in %.1f s, "
                   "tracked %zu\n",
                   nl, bench_now() - t0, sluice_launcher_tracked(l));
            sluice_launcher_free(l);
        }
        sluice_store_close(store);
        _exit(nf == finished && nl == live ? 0 : 1);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* One timed start: *listen_s and *ready_s from exec (-1: never). */
static void one_start(const char *bin,
                      const char *config,
                      const char *dir,
                      const char *tokens,
                      const char *log,
                      double *listen_s,
                      double *ready_s)
{
    double t0 = bench_now(), deadline = t0 + 60.0;
    unsigned port = 0;
    bench_conn_t *c = NULL;
    pid_t pid;

    *listen_s = *ready_s = -1;
    unlink(log); /* never read the previous run's port */
    if ((pid = fork()) < 0)
        return;
    if (pid == 0) {
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--tokens", tokens, "--config", config,
              "--state-dir", dir, (char *)NULL);
        _exit(127);
    }
    while (bench_now() < deadline && port == 0) {
        FILE *f = fopen(log, "r");
        char line[512];

        while (f && fgets(line, sizeof(line), f)) {
            const char *q = strstr(line, "(port ");
            if (q && sscanf(q, "(port %u)", &port) == 1) {
                *listen_s = bench_now() - t0;
                break;
            }
        }
        if (f)
            fclose(f);
        if (port == 0) {
            if (waitpid(pid, NULL, WNOHANG) == pid)
                return;
            usleep(1000);
        }
    }
    if (port > 0 && (c = bench_conn_new((uint16_t)port, API_TOKEN)) != NULL) {
        while (bench_now() < deadline) {
            if (bench_conn_request(c, "GET", "/v1/readyz", NULL, NULL) == 200) {
                *ready_s = bench_now() - t0;
                break;
            }
            usleep(2000);
        }
        bench_conn_free(c);
    }
    bench_serve_stop(pid);
}

/* The first three fields of /proc/loadavg (static buffer). */
static const char *loadavg3(void)
{
    static char buf[64];
    FILE *f = fopen("/proc/loadavg", "r");
    double a = 0, b = 0, c = 0;

    if (f == NULL || fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3)
        a = b = c = -1;
    if (f)
        fclose(f);
    snprintf(buf, sizeof(buf), "%.2f %.2f %.2f", a, b, c);
    return buf;
}

static double median(double *v, size_t n)
{
    bench_sort(v, n);
    return n ? bench_median(v, n) : -1;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *dir = NULL, *bin = getenv("SLUICE_BIN");
    size_t finished = 100000, live = 1000, runs = 3;
    char base[] = "/dev/shm/sluice-bench-startup.XXXXXX";
    char d_empty[600], d_full[600], d_pristine[600], tokens[600], log[600], cmd[2000];
    struct stat sb;
    double le[16], re[16], lf[16], rf[16];
    FILE *f;

    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            config = argv[++a];
        else if (strcmp(argv[a], "--finished") == 0 && a + 1 < argc)
            finished = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--live") == 0 && a + 1 < argc)
            live = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc)
            runs = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--dir") == 0 && a + 1 < argc)
            dir = argv[++a];
        else {
            fprintf(stderr, "usage: bench_startup --config SITE.yaml [--finished 100000] "
                            "[--live 1000] [--runs 3] [--dir DIR]\n");
            return 0;
        }
    }
    if (runs == 0 || runs > 16)
        runs = 3;
    if (config == NULL) {
        printf("bench_startup: NOT RUN (no --config)\n");
        return 0;
    }
    if (bin == NULL)
        bin = "./sluice";
    if (access(bin, X_OK) != 0) {
        printf("bench_startup: NOT RUN (no sluice binary at %s; set SLUICE_BIN)\n", bin);
        return 0;
    }
    if (dir == NULL && (dir = mkdtemp(base)) == NULL) {
        printf("bench_startup: NOT RUN (no temporary directory)\n");
        return 0;
    }
    snprintf(d_empty, sizeof(d_empty), "%s/empty", dir);
    snprintf(d_full, sizeof(d_full), "%s/full", dir);
    snprintf(d_pristine, sizeof(d_pristine), "%s/pristine", dir);
    snprintf(tokens, sizeof(tokens), "%s/tokens", dir);
    snprintf(log, sizeof(log), "%s/serve.log", dir);
    if ((f = fopen(tokens, "w")) == NULL) {
        printf("bench_startup: NOT RUN (cannot write %s)\n", tokens);
        return 0;
    }
    fprintf(f, "bench %s\n", API_TOKEN);
    fclose(f);
    chmod(tokens, 0600);
    snprintf(cmd, sizeof(cmd), "%s/sluice.db", d_pristine);
    if (stat(cmd, &sb) == 0) {
        printf("store: reusing %s (built by an earlier run with BENCH_KEEP=1)\n", d_pristine);
    } else if (build_store(d_empty, 0, 0) != 0 || build_store(d_pristine, finished, live) != 0) {
        printf("bench_startup: NOT RUN (the stores could not be built)\n");
        goto out;
    }
    for (size_t r = 0; r < runs; r++) {
        /* every start gets the store as built: the service's cycles change
         * it (the stand-in's job ids are not found, launches end) */
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", d_full, d_pristine, d_full);
        if (system(cmd) != 0) {
            printf("bench_startup: NOT RUN (cannot copy the store)\n");
            goto out;
        }
        one_start(bin, config, d_empty, tokens, log, &le[r], &re[r]);
        one_start(bin, config, d_full, tokens, log, &lf[r], &rf[r]);
        printf("run %zu: empty store: listening %.3f s, ready %.3f s; %zu finished + %zu live: "
               "listening %.3f s, ready %.3f s (load %s)\n",
               r + 1, le[r], re[r], finished, live, lf[r], rf[r], loadavg3());
    }
    {
        double me = median(re, runs), mf = median(rf, runs), ml = median(lf, runs);
        char name[160];
        printf("startup median: empty store ready %.3f s; full store listening %.3f s, ready "
               "%.3f s\n",
               me, ml, mf);
        snprintf(name, sizeof(name), "startup to ready, %zu finished + %zu live (s)", finished,
                 live);
        bench_target(name, mf < 0 ? 1e9 : mf, 1.0, false);
    }
out:
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (strncmp(dir, "/dev/shm/sluice-bench-startup.", 30) == 0 && getenv("BENCH_KEEP") == NULL &&
        system(cmd) != 0)
        fprintf(stderr, "bench_startup: could not remove %s\n", dir);
    return 0;
}
