/* SPDX-License-Identifier: Apache-2.0 */
/* bench_serve.c - `sluice serve` under read load on the testbed.
 *
 * 1. Accepts N held launches (default 100; the rendered job descriptions
 *    get hold = true, as bench_launch does) into a fresh store, then
 *    releases the store.
 * 2. Starts the real binary (`$SLUICE_BIN serve --listen 127.0.0.1:0
 *    --tokens FILE --config SITE --state-dir DIR`), which recovers the
 *    launches and submits them; waits until every one is PENDING (held in
 *    Slurm), so all N are live while the load runs.
 * 3. An open-loop load generator: GET /v1/launches/{id} (ids round robin)
 *    at a fixed rate (default 500/s) for a fixed time (default 30 s) over
 *    loopback with a bearer token.  Request i is due at t0 + i/rate; T
 *    threads each own every T-th request on their own keep-alive
 *    connection, and latency runs from the due time to the end of the
 *    answer, so a slow answer delays (and is charged to) the requests
 *    behind it: no coordinated omission.
 * 4. Before that, the same load on /v1/healthz for --baseline-seconds
 *    (10): the floor of this machine, client and HTTP stack.  Each run
 *    prints p50/p90/p99/p99.9/max latency, errors, achieved rate, the
 *    service's CPU (utime + stime from /proc over the window, launcher
 *    cycles included) and RSS (VmRSS, VmHWM); the launch run adds
 *    `target ... -> met|MISSED` lines.
 * 5. Cancels every launch through the API, waits for them to end, stops
 *    the service with SIGTERM.
 *
 * usage: bench_serve --config SITE.yaml [--launches 100] [--rate 500]
 *                    [--seconds 30] [--baseline-seconds 10] [--threads 8]
 *                    [--state-dir DIR] [--p99-ms 5]
 * Environment: SLUICE_BIN (default ./sluice).  Exit 0 whenever it ran.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/accept.h>
#include <sluice/config.h>
#include <sluice/launcher.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>

#include "bench_http.h"
#include "bench_util.h"
#include "site/config_model.h"

extern char **environ;

#define API_TOKEN "bench-serve-token-0123456789abcdef"

/* --p99-ms: the p99 target (issue 6: 5 ms at 500/s with 100 live;
 * issue 16: 2 ms at 1,000/s with 1,000 live). */
static double p99_target_ms = 5.0;

static const char *env_get(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* ---- 1. held launches in a store ---------------------------------------- */

/* Accept n held launches into the store at dir (a supervisor of this
 * process, closed again so that the service can take the store); their ids
 * go to ids[]. */
static size_t accept_held(const sluice_config_t *cfg, const char *dir, size_t n, char **ids)
{
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t accepted = 0;

    so.state_dir = dir;
    if (sluice_supervisor_open(&sup, cfg, &so, NULL, &err) != SLUICE_OK) {
        fprintf(stderr, "bench_serve: setup: %s\n", err.text);
        goto out;
    }
    ao.getenv_fn = env_get;
    ao.caller = "bench";
    ao.hold = true;
    for (size_t i = 0; i < n; i++) {
        sluice_accept_t *a = NULL;
        char id[96], text[1024];
        int len;

        snprintf(id, sizeof(id), "bs-%ld-%zu", (long)getpid(), i);
        len = snprintf(text, sizeof(text),
                       "{\"launch_id\": \"%s\", \"site\": \"%s\", \"profile\": \"none\", "
                       "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
                       "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
                       id, cfg->site_name);
        if (sluice_accept(&a, NULL, NULL, sluice_supervisor_launcher(sup), cfg, text, (size_t)len,
                          &ao, &err) != SLUICE_OK)
            fprintf(stderr, "bench_serve: accept %s: %s\n", id, err.text);
        else if ((ids[accepted] = strdup(sluice_accept_launch_id(a))) != NULL)
            accepted++;
        sluice_accept_free(a);
    }
out:
    sluice_supervisor_close(sup); /* releases the supervisor lock for the service */
    return accepted;
}

/* ---- 2. the service ----------------------------------------------------- */

/* VmRSS / VmHWM (KiB) of a process. */
static long proc_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    long v = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, strlen(field)) == 0)
            v = strtol(line + strlen(field) + 1, NULL, 10);
    fclose(f);
    return v;
}

static double loadavg(void)
{
    double l1 = -1;
    FILE *f = fopen("/proc/loadavg", "r");

    if (f) {
        if (fscanf(f, "%lf", &l1) != 1)
            l1 = -1;
        fclose(f);
    }
    return l1;
}

/* Launches in a state, through the API. */
static long count_state(uint16_t port, const char *state)
{
    bench_conn_t *c = bench_conn_new(port, API_TOKEN);
    char path[512], cursor[256] = "";
    long n = 0;

    if (c == NULL)
        return -1;
    /* pages of 200: the bench client takes answers up to 256 KiB */
    do {
        char *body = NULL;
        json_t *j;
        const char *next;

        snprintf(path, sizeof(path), "/v1/launches?state=%s&limit=200%s%s", state,
                 cursor[0] ? "&cursor=" : "", cursor);
        if (bench_conn_request(c, "GET", path, NULL, &body) != 200 ||
            (j = json_loads(body, 0, NULL)) == NULL) {
            free(body);
            n = -1;
            break;
        }
        free(body);
        n += (long)json_array_size(json_object_get(j, "items"));
        next = json_string_value(json_object_get(j, "next_cursor"));
        snprintf(cursor, sizeof(cursor), "%s", next ? next : "");
        json_decref(j);
    } while (cursor[0]);
    bench_conn_free(c);
    return n;
}

/* ---- 3. the load -------------------------------------------------------- */

typedef struct {
    uint16_t port;
    char **ids;
    size_t n_ids;
    double t0, rate;
    size_t total, stride, first;
    int healthz; /* GET /v1/healthz instead (the floor of machine + client + HTTP) */
    double *lat; /* seconds, indexed by request number; NAN: no answer */
    size_t errors, done;
    int failed; /* could not connect: sent nothing, its requests count as errors */
} worker_t;

static void sleep_until(double t)
{
    double d = t - bench_now();

    if (d > 0) {
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    bench_conn_t *c = bench_conn_new(w->port, API_TOKEN);
    char path[256];

    /* Connected before the first due time (keep-alive is what is measured).
     * A worker that cannot connect sends nothing: its requests stay NAN and
     * count as errors, never as latencies of 0. */
    if (c == NULL || bench_conn_request(c, "GET", "/v1/healthz", NULL, NULL) != 200) {
        w->failed = 1;
        for (size_t i = w->first; i < w->total; i += w->stride)
            w->errors++;
        bench_conn_free(c);
        return NULL;
    }
    for (size_t i = w->first; i < w->total; i += w->stride) {
        double due = w->t0 + (double)i / w->rate;
        int st;

        sleep_until(due);
        if (w->healthz)
            snprintf(path, sizeof(path), "/v1/healthz");
        else
            snprintf(path, sizeof(path), "/v1/launches/%s", w->ids[i % w->n_ids]);
        st = bench_conn_request(c, "GET", path, NULL, NULL);
        /* no answer at all (the connection failed): an error, no latency */
        w->lat[i] = st > 0 ? bench_now() - due : NAN;
        if (st != 200)
            w->errors++;
        w->done++;
    }
    bench_conn_free(c);
    return NULL;
}

/* One open-loop run; prints its numbers (and targets unless healthz). */
static void run_load(uint16_t port,
                     pid_t pid,
                     char **ids,
                     size_t n,
                     double rate,
                     double seconds,
                     size_t threads,
                     int healthz)
{
    size_t total = (size_t)(rate * seconds), errors = 0, done = 0, n_lat = 0, failed = 0;
    double *lat = calloc(total ? total : 1, sizeof(*lat));
    worker_t *ws = calloc(threads, sizeof(*ws));
    pthread_t *tids = calloc(threads, sizeof(*tids));
    double cpu0, cpu1, t_start, t_end, load0 = loadavg(), p99;
    const char *what = healthz ? "GET /v1/healthz (floor)" : "GET /v1/launches/{id}";

    if (lat == NULL || ws == NULL || tids == NULL || total == 0)
        goto out;
    for (size_t i = 0; i < total; i++)
        lat[i] = NAN;
    cpu0 = bench_pid_cpu((long)pid);
    t_start = bench_now() + 0.2;
    for (size_t k = 0; k < threads; k++) {
        ws[k].port = port;
        ws[k].ids = ids;
        ws[k].n_ids = n;
        ws[k].t0 = t_start;
        ws[k].rate = rate;
        ws[k].total = total;
        ws[k].stride = threads;
        ws[k].first = k;
        ws[k].healthz = healthz;
        ws[k].lat = lat;
        pthread_create(&tids[k], NULL, worker_main, &ws[k]);
    }
    for (size_t k = 0; k < threads; k++) {
        pthread_join(tids[k], NULL);
        errors += ws[k].errors;
        done += ws[k].done;
        failed += (size_t)ws[k].failed;
    }
    t_end = bench_now();
    cpu1 = bench_pid_cpu((long)pid);
    /* only answered requests have a latency */
    for (size_t i = 0; i < total; i++)
        if (!isnan(lat[i]))
            lat[n_lat++] = lat[i];
    bench_sort(lat, n_lat);
    p99 = n_lat ? bench_pct(lat, n_lat, 99) * 1e3 : NAN;
    printf("load: %s (%zu ids) open loop at %.0f/s for %.0f s, %zu threads (keep-alive), %zu "
           "requests in %.2f s = %.1f/s, errors %zu\n",
           what, n, rate, seconds, threads, done, t_end - t_start, (double)done / (t_end - t_start),
           errors);
    if (failed > 0)
        printf("FAILED workers: %zu of %zu could not connect; their %zu requests were never sent "
               "and count as errors, not latencies\n",
               failed, threads, total - done);
    printf("latency ms over %zu answered requests of %zu: p50 %.3f  p90 %.3f  p99 %.3f  p99.9 "
           "%.3f  max %.3f\n",
           n_lat, total, bench_median(lat, n_lat) * 1e3, bench_pct(lat, n_lat, 90) * 1e3, p99,
           bench_pct(lat, n_lat, 99.9) * 1e3, n_lat ? lat[n_lat - 1] * 1e3 : NAN);
    printf("service: CPU %.2f s over %.1f s = %.1f%% of one core (%.1f us per request, launcher "
           "included); VmRSS %ld KiB, VmHWM %ld KiB\n",
           cpu1 - cpu0, t_end - t_start, (cpu1 - cpu0) / (t_end - t_start) * 100.0,
           (cpu1 - cpu0) / (double)(done ? done : 1) * 1e6, proc_kib(pid, "VmRSS:"),
           proc_kib(pid, "VmHWM:"));
    printf("machine: load average %.2f before, %.2f after\n", load0, loadavg());
    if (!healthz) {
        char name[128];
        snprintf(name, sizeof(name), "serve GET p99 latency (ms), %zu live at %.0f/s", n, rate);
        if (n_lat == 0)
            bench_target_no_data(name, "no request was answered");
        else
            bench_target(name, p99, p99_target_ms, false);
        bench_target("serve GET errors", (double)errors, 0.0, false);
        bench_target("serve achieved rate (req/s)", (double)done / (t_end - t_start), rate * 0.98,
                     true);
    }
out:
    free(lat);
    free(ws);
    free(tids);
}

int main(int argc, char **argv)
{
    const char *config = NULL, *state = NULL, *bin = getenv("SLUICE_BIN");
    size_t n = 100, threads = 8;
    double rate = 500, seconds = 30, baseline_s = 10;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char base[] = "/var/tmp/sluice-bench-serve.XXXXXX";
    char dir[600], tokens[600], log[600], cmd[700];
    char **ids = NULL;
    size_t accepted;
    pid_t pid = -1;
    uint16_t port = 0;
    double t_ready;
    long pending = 0;
    FILE *f;

    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            config = argv[++a];
        else if (strcmp(argv[a], "--launches") == 0 && a + 1 < argc)
            n = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--rate") == 0 && a + 1 < argc)
            rate = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--seconds") == 0 && a + 1 < argc)
            seconds = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--baseline-seconds") == 0 && a + 1 < argc)
            baseline_s = strtod(argv[++a], NULL);
        else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            threads = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--state-dir") == 0 && a + 1 < argc)
            state = argv[++a];
        else if (strcmp(argv[a], "--p99-ms") == 0 && a + 1 < argc)
            p99_target_ms = strtod(argv[++a], NULL);
        else {
            fprintf(stderr, "usage: bench_serve --config SITE.yaml [--launches 100] [--rate 500] "
                            "[--seconds 30] [--baseline-seconds 10] [--threads 8] "
                            "[--state-dir DIR] [--p99-ms 5]\n");
            return 0;
        }
    }
    if (config == NULL || n == 0 || rate <= 0 || seconds <= 0 || threads == 0) {
        printf("bench_serve: NOT RUN (no --config)\n");
        return 0;
    }
    if (bin == NULL)
        bin = "./sluice";
    if (access(bin, X_OK) != 0) {
        printf("bench_serve: NOT RUN (no sluice binary at %s; set SLUICE_BIN)\n", bin);
        return 0;
    }
    co.path = config;
    co.envp = (const char *const *)environ;
    if (sluice_config_load(&co, &cfg, &err) != SLUICE_OK) {
        printf("bench_serve: NOT RUN (config: %s)\n", err.text);
        return 0;
    }
    if (state == NULL && (state = mkdtemp(base)) == NULL) {
        printf("bench_serve: NOT RUN (no state directory)\n");
        sluice_config_free(cfg);
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s/store", state);
    snprintf(tokens, sizeof(tokens), "%s/tokens", state);
    snprintf(log, sizeof(log), "%s/serve.log", state);
    if ((f = fopen(tokens, "w")) == NULL) {
        printf("bench_serve: NOT RUN (cannot write %s)\n", tokens);
        goto out;
    }
    fprintf(f, "bench %s\n", API_TOKEN);
    fclose(f);
    chmod(tokens, 0600);

    /* 1 + 2: n held launches, live in the service */
    ids = calloc(n, sizeof(*ids));
    accepted = ids ? accept_held(cfg, dir, n, ids) : 0;
    if (accepted < n) {
        printf("bench_serve: NOT RUN (accepted %zu of %zu launches)\n", accepted, n);
        goto out;
    }
    if ((pid = bench_serve_start(bin, config, dir, tokens, log, NULL, &port)) < 0) {
        printf("bench_serve: NOT RUN (sluice serve did not start; see %s)\n", log);
        pid = -1;
        goto out;
    }
    t_ready = bench_now();
    while (bench_now() - t_ready < 120.0 && (pending = count_state(port, "PENDING")) < (long)n)
        usleep(250000);
    printf("serve: %ld of %zu launches PENDING (held) after %.1f s, port %u, pid %ld\n", pending, n,
           bench_now() - t_ready, (unsigned)port, (long)pid);
    if (pending < (long)n)
        printf("serve: not every launch is live: CHECK %s\n", log);

    /* 3 + 4: the floor (healthz), then the load */
    if (baseline_s > 0)
        run_load(port, pid, ids, n, rate, baseline_s, threads, 1);
    run_load(port, pid, ids, n, rate, seconds, threads, 0);

    /* 5: clean up through the API */
    {
        bench_conn_t *c = bench_conn_new(port, API_TOKEN);
        size_t cancelled = 0;
        double t_c;
        uint64_t *jobs = calloc(n, sizeof(*jobs));
        bench_target_t tg;
        sluice_client_t *cl;

        bench_target_from_env(&tg);

        /* The first 100 through the API; past that their jobs are cancelled
         * in Slurm (each DELETE waits for the launcher's mutex, about one
         * cycle, so 1,000 of them take minutes) and the launcher ends the
         * launches when it sees them CANCELLED. */
        if (c != NULL) {
            for (size_t i = 0; i < n; i++) {
                char path[256], *body = NULL;
                json_t *j;
                snprintf(path, sizeof(path), "/v1/launches/%s", ids[i]);
                if (jobs != NULL && bench_conn_request(c, "GET", path, NULL, &body) == 200 &&
                    (j = json_loads(body, 0, NULL)) != NULL) {
                    json_t *id = json_array_get(json_object_get(j, "job_ids"), 0);
                    if (json_is_integer(id))
                        jobs[i] = (uint64_t)json_integer_value(id);
                    json_decref(j);
                }
                free(body);
                if (i < 100)
                    cancelled += bench_conn_request(c, "DELETE", path, NULL, NULL) == 202;
            }
            bench_conn_free(c);
        }
        if (jobs != NULL && n > 100 && (cl = bench_client_new(&tg)) != NULL) {
            cancelled += bench_cancel_all(cl, jobs + 100, n - 100);
            sluice_client_free(cl);
        }
        t_c = bench_now();
        while (bench_now() - t_c < 120.0 && count_state(port, "DONE") < (long)n)
            usleep(500000);
        printf("cleanup: %zu cancels accepted; %ld of %zu launches DONE after %.1f s\n", cancelled,
               count_state(port, "DONE"), n, bench_now() - t_c);
        /* a cancel the service had not sent yet when it stops: no job is
         * left behind (cancelling an ended job again is harmless) */
        if (jobs != NULL && (cl = bench_client_new(&tg)) != NULL) {
            (void)bench_cancel_all(cl, jobs, n < 100 ? n : 100);
            sluice_client_free(cl);
        }
        free(jobs);
    }
out:
    bench_serve_stop(pid);
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
    if (strncmp(state, "/var/tmp/sluice-bench-serve.", 28) == 0 && getenv("BENCH_KEEP") == NULL &&
        system(cmd) != 0)
        fprintf(stderr, "bench_serve: could not remove %s\n", state);
    sluice_config_free(cfg);
    return 0;
}
