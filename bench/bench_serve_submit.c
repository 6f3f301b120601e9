/* SPDX-License-Identifier: Apache-2.0 */
/* bench_serve_submit.c - submit throughput of `sluice serve` (issue 5's
 * submit targets, measured on the path users run): HTTP clients POST
 * launches, the service accepts each durably (render + store commit), and
 * its launcher thread submits them in batches with `submit.in_flight` POSTs
 * to slurmrestd at once (staging and the batch commits included).
 *
 * One service run per in-flight setting (1, then 4), each on a fresh state
 * directory, with the real binary:
 *   $SLUICE_BIN serve --listen 127.0.0.1:0 --tokens FILE --config SITE
 *       --state-dir DIR --set submit.in_flight=K --set submit.per_sec=1000
 *       --set job_launcher.sbatch_directives.reservation=RESV
 * K clients (K = in_flight), each on its own keep-alive loopback connection
 * with a bearer token, POST N launches in total (a shared counter: each
 * client sends its next request when the previous one is answered).
 *
 * Held jobs.  A launch request cannot ask for a held job (the render always
 * sets hold = false), so the site keeps them pending instead: the benchmark
 * creates a Slurm reservation for the job user on all nodes that starts in
 * 7 days and points the service's site at it (sbatch_directives.reservation
 * through --set).  Slurm accepts every job and leaves it PENDING with reason
 * "Reservation"; none can start.  The reservation is deleted at the end.
 *
 * The measure starts once the service is idle after its start (settle():
 * its CPU clock still for two 250 ms steps; its recovery and first read of
 * the job table are no part of a launch) and runs from just before the
 * first POST to the time of the last
 * `submitted` event (the launch has its Slurm job id), read from the store
 * with the sluice library.  While it runs, this process only reads the
 * store's new events every WATCH_MS (a WAL reader in another process: no
 * request to the service, no lock the service waits for) to know when to
 * stop; the times come from the events themselves.  The service's CPU is
 * read when the last job id is seen, so at most WATCH_MS after it, while
 * the service idles (its batched state read is set an hour apart: see
 * run_service()).  A tighter watch is no better: a WAL reader every few ms
 * keeps the service's WAL from restarting, and its commits then grow the
 * WAL and its index.  The accept latency is
 * each POST's send-to-answer time on the client.  It also prints the span
 * from the first `submit-started` event to the last `submitted` one: the
 * batch's marker commit, POSTs and answer commit, without the wait for the
 * launcher's cycle and without staging (which comes before the markers).
 *
 * Baseline: an `sbatch --hold` loop of N jobs as the calling user, run
 * before and after the service runs; ratios against the faster loop are
 * checked against the targets (>= 2.5x sequential, >= 5x with 4 in flight).
 * Issue 16: in the same round the raw client (bench_submit's path:
 * sluice_client_submit, held jobs, K keep-alive clients) submits N jobs
 * before each service run, and the service's throughput is compared with
 * it (target >= 80 %).  It then submits N jobs once more with the
 * service's own job description (rendered by the library for the same
 * request: 6 KB of script, environment, working directory; not held,
 * pending on the reservation), and that ratio is printed too: the same
 * POSTs with and without the service around them.
 * --rounds N repeats everything N times and prints
 * the median and minimum of every ratio with the load average.  After each
 * service run the breakdown per launch is read from the service's
 * GET /v1/metrics (sluice_submit_phase_*: include/sluice/timing.h) and from
 * the store's events (accepted -> submit-started -> submitted).  With
 * SLUICE_BIN_BEFORE set, every service run is made with both binaries, in
 * alternating order, so that before and after share the round's load,
 * loops and raw client.
 * Every job made is cancelled (DELETE through REST after the service has
 * stopped; scancel for the loop's jobs), and squeue is checked for them.
 *
 * usage: bench_serve_submit --config SITE.yaml [--submit 100]
 *            [--in-flight 1,4] [--per-sec 1000] [--rounds 1]
 *            [--state-dir DIR] [--no-sbatch]
 * Environment: SLUICE_BIN (default ./sluice), SLUICE_BIN_BEFORE (optional),
 * SLURM_CONF and the testbed's
 * variables (eval "$(deploy/testbed/env.sh)").  Needs root for the
 * reservation (scontrol create reservation).  Exit 0 whenever it ran.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/client.h>
#include <sluice/config.h>
#include <sluice/launch.h>
#include <sluice/render.h>
#include <sluice/store.h>
#include <sluice/timing.h>

#include "bench_http.h"
#include "bench_util.h"
#include "site/config_model.h"

extern char **environ;

#define MAX_RUNS 8
#define MAX_ROUNDS 20
#define WATCH_MS 100

/* Every Slurm job this run made, for the final squeue check. */
typedef struct {
    uint64_t *ids;
    size_t n, cap;
} idlist_t;

static void ids_add(idlist_t *l, uint64_t id)
{
    if (id == 0)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        uint64_t *p = realloc(l->ids, cap * sizeof(*p));
        if (p == NULL)
            return;
        l->ids = p;
        l->cap = cap;
    }
    l->ids[l->n++] = id;
}

static int64_t wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A random hex token for the service's tokens file (never printed). */
static int make_token(char *out, size_t size)
{
    unsigned char raw[24];
    FILE *f = fopen("/dev/urandom", "r");
    size_t got = f ? fread(raw, 1, sizeof(raw), f) : 0;

    if (f)
        fclose(f);
    if (got != sizeof(raw) || size < 2 * sizeof(raw) + 1)
        return -1;
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* ---- the clients -------------------------------------------------------- */

typedef struct {
    uint16_t port;
    const char *token;
    const char *site;
    const char *prefix; /* launch ids are <prefix>-<i> */
    size_t n;
    atomic_size_t next; /* the next launch to POST */
    pthread_barrier_t *start;
    double *lat;      /* seconds, per launch */
    int *status;      /* HTTP status, per launch */
    double last_done; /* bench_now() of the last answer, any client */
    size_t failed;    /* clients that could not connect (under mu) */
    pthread_mutex_t mu;
} clients_t;

static void *client_main(void *arg)
{
    clients_t *cs = arg;
    bench_conn_t *c = bench_conn_new(cs->port, cs->token);
    char body[1024];
    size_t i;

    /* connect before the clock starts: keep-alive is the case measured.  A
     * client that cannot connect takes no launch (the others POST them)
     * and is counted as failed. */
    if (c != NULL && bench_conn_request(c, "GET", "/v1/healthz", NULL, NULL) != 200) {
        bench_conn_free(c);
        c = NULL;
    }
    if (c == NULL) {
        pthread_mutex_lock(&cs->mu);
        cs->failed++;
        pthread_mutex_unlock(&cs->mu);
    }
    pthread_barrier_wait(cs->start);
    while (c != NULL && (i = atomic_fetch_add(&cs->next, 1)) < cs->n) {
        double t;

        snprintf(body, sizeof(body),
                 "{\"launch_id\": \"%s-%zu\", \"site\": \"%s\", \"profile\": \"none\", "
                 "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
                 "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
                 cs->prefix, i, cs->site);
        t = bench_now();
        cs->status[i] = bench_conn_request(c, "POST", "/v1/launches", body, NULL);
        cs->lat[i] = bench_now() - t;
        pthread_mutex_lock(&cs->mu);
        if (bench_now() > cs->last_done)
            cs->last_done = bench_now();
        pthread_mutex_unlock(&cs->mu);
    }
    bench_conn_free(c);
    return NULL;
}

/* ---- watching the store ------------------------------------------------- */

typedef struct {
    size_t submitted, rejected, uncertain;
    int64_t first_ms, last_ms; /* times of the first and last `submitted` */
    int64_t started_ms;        /* time of the first `submit-started` */
    int64_t gseq;
    /* per launch (index from its id "<prefix>-<i>"): event times, ms */
    size_t n;
    int64_t *acc, *mark, *sub;
} watch_t;

/* The launch's index from its id "<prefix>-<i>", or -1. */
static long launch_index(const char *lid, const char *prefix, size_t n)
{
    size_t pl = strlen(prefix);
    char *end;
    unsigned long i;

    if (strncmp(lid, prefix, pl) != 0 || lid[pl] != '-')
        return -1;
    i = strtoul(lid + pl + 1, &end, 10);
    return *end == '\0' && i < n ? (long)i : -1;
}

/* Read the events after w->gseq; count submits, collect job ids. */
static int watch_read(sluice_store_t *store, const char *prefix, watch_t *w, idlist_t *jobs)
{
    for (;;) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *evs = NULL, *ev;
        int64_t next = w->gseq;
        size_t k, n;

        if (sluice_store_events_since(store, w->gseq, 500, &evs, &next, &err) != SLUICE_OK) {
            fprintf(stderr, "bench_serve_submit: store: %s\n", err.text);
            return -1;
        }
        n = json_array_size(evs);
        json_array_foreach(evs, k, ev)
        {
            const char *name = json_string_value(json_object_get(ev, "name"));
            const char *lid = json_string_value(json_object_get(ev, "launch_id"));
            int64_t t = json_integer_value(json_object_get(ev, "time"));

            long idx;

            if (name == NULL || lid == NULL || strncmp(lid, prefix, strlen(prefix)) != 0)
                continue;
            idx = launch_index(lid, prefix, w->n);
            if (idx >= 0 && w->acc != NULL) {
                if (strcmp(name, "accepted") == 0)
                    w->acc[idx] = t;
                else if (strcmp(name, "submit-started") == 0 && w->mark[idx] == 0)
                    w->mark[idx] = t;
                else if (strcmp(name, "submitted") == 0)
                    w->sub[idx] = t;
            }
            if (strcmp(name, "submitted") == 0) {
                json_t *ids = json_object_get(json_object_get(ev, "context"), "job_ids"), *v;
                size_t j;

                w->submitted++;
                if (w->first_ms == 0 || t < w->first_ms)
                    w->first_ms = t;
                if (t > w->last_ms)
                    w->last_ms = t;
                json_array_foreach(ids, j, v) ids_add(jobs, (uint64_t)json_integer_value(v));
            } else if (strcmp(name, "submit-started") == 0) {
                if (w->started_ms == 0 || t < w->started_ms)
                    w->started_ms = t;
            } else if (strcmp(name, "submit-rejected") == 0) {
                w->rejected++;
                fprintf(
                    stderr, "bench_serve_submit: %s rejected: %s\n", lid,
                    json_string_value(json_object_get(json_object_get(ev, "context"), "detail")));
            } else if (strcmp(name, "submit-uncertain") == 0) {
                w->uncertain++;
            }
        }
        json_decref(evs);
        w->gseq = next;
        if (n < 500)
            return 0;
    }
}

/* After the measure: how many of the jobs squeue shows PENDING on the
 * reservation (held), and how many in any other state. */
static void check_held(const idlist_t *jobs)
{
    FILE *p = popen("squeue -h -o '%i %T %r'", "r");
    char line[256], st[64], reason[128];
    size_t held = 0, other = 0;
    unsigned long long id;

    if (p == NULL)
        return;
    while (fgets(line, sizeof(line), p)) {
        if (sscanf(line, "%llu %63s %127s", &id, st, reason) != 3)
            continue;
        for (size_t i = 0; i < jobs->n; i++)
            if (jobs->ids[i] == id) {
                if (strcmp(st, "PENDING") == 0 && strcmp(reason, "Reservation") == 0)
                    held++;
                else
                    other++;
                break;
            }
    }
    if (pclose(p) != 0)
        printf("  squeue failed: the jobs' states are unknown\n");
    else
        printf("  squeue after the measure: %zu of %zu jobs PENDING (Reservation), %zu in another "
               "state%s\n",
               held, jobs->n, other, other ? " (CHECK: not held)" : "");
}

/* ---- one service run ---------------------------------------------------- */

typedef struct {
    unsigned in_flight;
    size_t with_id; /* launches that got a job id */
    double rate;    /* launches/s, first POST to last job id */
    /* the breakdown, ms per launch */
    double post_p50;                      /* client: POST -> 201 */
    double acc_to_mark, mark_to_sub;      /* store events, medians */
    double phase_ms[SLUICE_TIMING_COUNT]; /* the service's counters */
    bool have_phases;
    double cpu_ms; /* the service's CPU (utime + stime) per launch, -1 unknown */
} run_result_t;

/* The service's per-phase counters from GET /v1/metrics into ms per launch
 * (sluice_submit_phase_seconds_total / sluice_submit_phase_launches_total). */
static bool read_phases(uint16_t port, const char *token, double *ms)
{
    bench_conn_t *c = bench_conn_new(port, token);
    char *text = NULL, *line, *save = NULL;
    double secs[SLUICE_TIMING_COUNT] = {0}, cnt[SLUICE_TIMING_COUNT] = {0};
    bool ok = false;

    if (c != NULL && bench_conn_request(c, "GET", "/v1/metrics", NULL, &text) == 200 && text) {
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            static const char sp[] = "sluice_submit_phase_seconds_total{phase=\"";
            static const char lp[] = "sluice_submit_phase_launches_total{phase=\"";
            bool is_s = strncmp(line, sp, sizeof(sp) - 1) == 0;
            bool is_l = strncmp(line, lp, sizeof(lp) - 1) == 0;
            const char *name, *q;
            if (!is_s && !is_l)
                continue;
            name = line + (is_s ? sizeof(sp) : sizeof(lp)) - 1;
            if ((q = strchr(name, '"')) == NULL || q[1] != '}')
                continue;
            for (int k = 0; k < SLUICE_TIMING_COUNT; k++) {
                const char *kn = sluice_timing_name(k);
                if (strlen(kn) == (size_t)(q - name) &&
                    strncmp(kn, name, (size_t)(q - name)) == 0) {
                    if (is_s)
                        secs[k] = strtod(q + 2, NULL);
                    else
                        cnt[k] = strtod(q + 2, NULL);
                    ok = true;
                }
            }
        }
    }
    for (int k = 0; k < SLUICE_TIMING_COUNT; k++)
        ms[k] = cnt[k] > 0 ? secs[k] * 1e3 / cnt[k] : 0.0;
    free(text);
    bench_conn_free(c);
    return ok;
}

/* Wait until the service `pid` is idle: its CPU clock moved by less than
 * SETTLE_QUIET_MS in each of two SETTLE_STEP_MS steps in a row (at most
 * SETTLE_MAX_MS).  Returns the ms waited; *cpu_ms the CPU it spent. */
#define SETTLE_STEP_MS 250
#define SETTLE_QUIET_MS 2.5
#define SETTLE_MAX_MS 60000.0
static double settle(pid_t pid, double *cpu_ms)
{
    double t0 = bench_now(), c0 = bench_pid_cpu((long)pid), prev = c0, now;
    int quiet = 0;

    *cpu_ms = 0.0;
    while ((bench_now() - t0) * 1e3 < SETTLE_MAX_MS && quiet < 2) {
        usleep(SETTLE_STEP_MS * 1000);
        now = bench_pid_cpu((long)pid);
        if (now < 0)
            break;
        quiet = (now - prev) * 1e3 < SETTLE_QUIET_MS ? quiet + 1 : 0;
        prev = now;
    }
    if (c0 >= 0 && prev >= c0)
        *cpu_ms = (prev - c0) * 1e3;
    return (bench_now() - t0) * 1e3;
}

/* The median of v[i] - u[i] over the launches where both are set. */
static double median_diff(const int64_t *v, const int64_t *u, size_t n)
{
    double *d = calloc(n ? n : 1, sizeof(*d)), r;
    size_t m = 0;

    if (d == NULL)
        return 0.0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0 && u[i] > 0)
            d[m++] = (double)(v[i] - u[i]);
    bench_sort(d, m);
    r = bench_median(d, m);
    free(d);
    return r;
}

static void run_service(const char *bin,
                        const char *config,
                        const sluice_config_t *cfg,
                        const char *state,
                        const char *resv,
                        unsigned in_flight,
                        long per_sec,
                        size_t n,
                        idlist_t *all,
                        run_result_t *res)
{
    char dir[600], tokens[600], log[600], prefix[64], token[64];
    char set_if[64], set_ps[64], set_resv[300];
    /* The batched state read (every 2 s here) reads every job of the
     * cluster: ~1,000 held jobs of the bench on 22.05 are a 1.9 MB answer
     * and 10-20 ms of CPU, which fell inside a 1 s window or not by chance
     * (+-0.2 ms per launch).  Polling is no part of a launch's cost: both
     * binaries run with it an hour apart. */
    const char *extra[] = {"--set", set_if,   "--set", set_ps,
                           "--set", set_resv, "--set", "job_launcher.poll_interval=3600",
                           NULL};
    idlist_t jobs = {NULL, 0, 0};
    clients_t cs;
    pthread_barrier_t start;
    pthread_t *tids = calloc(in_flight, sizeof(*tids));
    sluice_store_t *store = NULL;
    sluice_client_t *client = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    watch_t w;
    size_t errors = 0, cancelled = 0, n_lat = 0;
    double deadline, t_mono0, cpu0, cpu1, *sorted = NULL;
    bench_cpu_snap_t m0, m1;
    sluice_store_opts_t so = SLUICE_STORE_OPTS_INIT;
    int64_t t0_ms;
    uint16_t port = 0;
    pid_t pid = -1;
    FILE *f;
    static unsigned seq; /* a fresh state directory and id prefix per run */
    double settle_ms, settle_cpu_ms;

    memset(&cs, 0, sizeof(cs));
    memset(&w, 0, sizeof(w));
    res->in_flight = in_flight;
    res->with_id = 0;
    res->rate = 0.0;
    seq++;
    snprintf(dir, sizeof(dir), "%s/in-flight-%u-%u", state, in_flight, seq);
    snprintf(tokens, sizeof(tokens), "%s/tokens-%u-%u", state, in_flight, seq);
    snprintf(log, sizeof(log), "%s/serve-%u-%u.log", state, in_flight, seq);
    snprintf(prefix, sizeof(prefix), "bss-%ld-k%u-r%u", (long)getpid(), in_flight, seq);
    snprintf(set_if, sizeof(set_if), "submit.in_flight=%u", in_flight);
    snprintf(set_ps, sizeof(set_ps), "submit.per_sec=%ld", per_sec);
    snprintf(set_resv, sizeof(set_resv), "job_launcher.sbatch_directives.reservation=%s", resv);
    cs.lat = calloc(n, sizeof(*cs.lat));
    cs.status = calloc(n, sizeof(*cs.status));
    sorted = calloc(n, sizeof(*sorted));
    w.n = n;
    w.acc = calloc(n, sizeof(*w.acc));
    w.mark = calloc(n, sizeof(*w.mark));
    w.sub = calloc(n, sizeof(*w.sub));
    if (tids == NULL || cs.lat == NULL || cs.status == NULL || sorted == NULL || w.acc == NULL ||
        w.mark == NULL || w.sub == NULL || make_token(token, sizeof(token)) != 0 ||
        (f = fopen(tokens, "w")) == NULL) {
        printf("serve-submit in_flight=%u: NOT RUN (setup)\n", in_flight);
        goto out;
    }
    fprintf(f, "bench %s\n", token);
    fclose(f);
    chmod(tokens, 0600);
    if ((pid = bench_serve_start(bin, config, dir, tokens, log, extra, &port)) < 0) {
        printf("serve-submit in_flight=%u: NOT RUN (sluice serve did not start; see %s)\n",
               in_flight, log);
        goto out;
    }
    /* The service created the store; this process only reads it (the
     * same PostgreSQL store when $SLUICE_STORE_URL names one: the service
     * takes it from there too, as store.url). */
    so.dir = dir;
    so.url = getenv("SLUICE_STORE_URL");
    /* Never migrate the store of the service under measure: it may be an
     * older sluice's (SLUICE_BIN_BEFORE), and the watch reads only the
     * event log, the same in every schema. */
    so.keep_schema = 1;
    if (sluice_store_open_with(&store, &so, &err) != SLUICE_OK ||
        sluice_store_last_gseq(store, &w.gseq, &err) != SLUICE_OK) {
        printf("serve-submit in_flight=%u: NOT RUN (store: %s)\n", in_flight, err.text);
        goto out;
    }

    /* Start measuring once the service is idle: its start-up work (the
     * store's recovery, the first read of the job table: seconds and a
     * good deal of CPU on v0.0.38 once the table holds the earlier runs'
     * jobs) is no part of a launch's cost, and whether it overlapped the
     * window decided by chance up to ±0.5 ms per launch. */
    settle_ms = settle(pid, &settle_cpu_ms);
    printf("  the service settled %.1f s after its start (%.0f ms CPU meanwhile)%s\n",
           settle_ms / 1e3, settle_cpu_ms,
           settle_ms >= SETTLE_MAX_MS ? ": NOT quiet, measured anyway" : "");

    cs.port = port;
    cs.token = token;
    cs.site = cfg->site_name;
    cs.prefix = prefix;
    cs.n = n;
    atomic_init(&cs.next, 0);
    cs.start = &start;
    pthread_mutex_init(&cs.mu, NULL);
    pthread_barrier_init(&start, NULL, in_flight + 1);
    for (unsigned k = 0; k < in_flight; k++)
        pthread_create(&tids[k], NULL, client_main, &cs);
    t0_ms = wall_ms();
    t_mono0 = bench_now();
    cpu0 = bench_pid_cpu((long)pid);
    bench_cpu_snap(&m0);
    pthread_barrier_wait(&start);

    /* Wait for every launch to have a job id (or a verdict). */
    deadline = bench_now() + 120.0 + 0.2 * (double)n;
    while (bench_now() < deadline) {
        if (watch_read(store, prefix, &w, &jobs) != 0)
            break;
        if (w.submitted + w.rejected >= n)
            break;
        usleep(WATCH_MS * 1000);
    }
    cpu1 = bench_pid_cpu((long)pid); /* at most WATCH_MS after the last job id */
    bench_cpu_snap(&m1);
    for (unsigned k = 0; k < in_flight; k++)
        pthread_join(tids[k], NULL);
    (void)watch_read(store, prefix, &w, &jobs);
    pthread_barrier_destroy(&start);
    pthread_mutex_destroy(&cs.mu);

    /* the accept latency of the POSTs answered 201 only: a POST never sent
     * or never answered has none */
    for (size_t i = 0; i < n; i++) {
        errors += cs.status[i] != 201;
        if (cs.status[i] == 201)
            sorted[n_lat++] = cs.lat[i] * 1e3;
    }
    bench_sort(sorted, n_lat);
    if (cs.failed > 0)
        printf("FAILED clients: %zu of %u could not connect (their share went to the others)\n",
               cs.failed, in_flight);
    res->with_id = w.submitted;
    if (w.submitted == n && w.last_ms > t0_ms)
        res->rate = (double)n / ((double)(w.last_ms - t0_ms) / 1e3);
    printf("serve-submit in_flight=%u clients=%u: %zu/%zu launches with a Slurm job id; first "
           "POST -> last job id %.3f s = %.1f launches/s, %.2f ms/launch%s\n",
           in_flight, in_flight, w.submitted, n, (double)(w.last_ms - t0_ms) / 1e3, res->rate,
           res->rate > 0 ? 1e3 / res->rate : 0.0,
           w.submitted == n ? "" : " (NOT every launch: CHECK the log)");
    res->cpu_ms = cpu0 >= 0 && cpu1 >= cpu0 ? (cpu1 - cpu0) * 1e3 / (double)n : -1.0;
    printf("  the service's CPU (user + system, all threads): %.2f ms per launch\n", res->cpu_ms);
    bench_cpu_report(&m0, &m1, w.submitted);
    printf("  accept (POST -> 201, %zu answered 201): p50 %.2f ms  p99 %.2f ms  max %.2f ms; %zu "
           "POSTs in %.3f s (%.1f/s), non-201 answers or none %zu\n",
           n_lat, bench_median(sorted, n_lat), bench_pct(sorted, n_lat, 99),
           n_lat ? sorted[n_lat - 1] : NAN, n, cs.last_done - t_mono0,
           (double)n / (cs.last_done - t_mono0), errors);
    printf("  timeline from the first POST: last 201 at +%.0f ms, first submit-started at +%" PRId64
           " ms, first job id at +%" PRId64 " ms, last job id at +%" PRId64
           " ms; rejected %zu, uncertain %zu\n",
           (cs.last_done - t_mono0) * 1e3, w.started_ms ? w.started_ms - t0_ms : -1,
           w.first_ms ? w.first_ms - t0_ms : -1, w.last_ms ? w.last_ms - t0_ms : -1, w.rejected,
           w.uncertain);
    if (w.submitted == n && w.started_ms > 0 && w.last_ms > w.started_ms)
        printf("  POST phase of the batch (first submit-started -> last job id): %" PRId64
               " ms = %.1f launches/s (no accept, no wait for the cycle, no staging: the "
               "launcher stages before its submit-started commit)\n",
               w.last_ms - w.started_ms, (double)n / ((double)(w.last_ms - w.started_ms) / 1e3));

    res->post_p50 = n_lat ? bench_median(sorted, n_lat) : NAN;
    res->acc_to_mark = median_diff(w.mark, w.acc, n);
    res->mark_to_sub = median_diff(w.sub, w.mark, n);
    res->have_phases = read_phases(port, token, res->phase_ms);
    printf("  per launch (store events, median): accepted -> submit-started %.1f ms, "
           "submit-started -> submitted %.1f ms\n",
           res->acc_to_mark, res->mark_to_sub);
    if (res->have_phases) {
        printf("  breakdown (the service's counters, wall ms per launch; a group's time counted "
               "once for the group):");
        for (int k = 0; k < SLUICE_TIMING_COUNT; k++)
            printf(" %s %.3f", sluice_timing_name(k), res->phase_ms[k]);
        printf("\n");
    }

    check_held(&jobs);
out:
    sluice_store_close(store);
    bench_serve_stop(pid);
    /* Cancel every job through REST, after the service has stopped. */
    if (jobs.n > 0) {
        if (sluice_client_new_from_config(&client, cfg, &err) == SLUICE_OK)
            cancelled = bench_cancel_all(client, jobs.ids, jobs.n);
        else
            fprintf(stderr, "bench_serve_submit: client: %s\n", err.text);
        printf("  cancelled %zu of %zu jobs (REST DELETE)\n", cancelled, jobs.n);
    }
    for (size_t i = 0; i < jobs.n; i++)
        ids_add(all, jobs.ids[i]);
    sluice_client_free(client);
    free(jobs.ids);
    free(tids);
    free(cs.lat);
    free(cs.status);
    free(sorted);
    free(w.acc);
    free(w.mark);
    free(w.sub);
}

/* ---- the raw client (bench_submit's path), same round ------------------ */

typedef struct {
    const bench_target_t *t;
    sluice_client_t *c;
    uint64_t *ids;
    size_t n, done;
    int tag;
    const char *resv;  /* NULL: held jobs; else not held, pending on it */
    const json_t *job; /* with resv: the service's job description (render) */
} raw_worker_t;

/* The job description the service POSTs for the benchmark's request (the
 * same body as a client's POST: the rendered script, environment, working
 * directory and directives), as JSON; NULL when it cannot be rendered. */
static json_t *service_job(const sluice_config_t *cfg, const char *site)
{
    char body[512];
    sluice_launch_t *launch = NULL;
    sluice_render_t *r = NULL;
    sluice_render_ctx_t ctx;
    sluice_launch_policy_t pol;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *all = NULL, *job = NULL;

    snprintf(body, sizeof(body),
             "{\"launch_id\": \"bench-raw-%ld\", \"site\": \"%s\", \"profile\": \"none\", "
             "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
             "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
             (long)getpid(), site);
    memset(&ctx, 0, sizeof(ctx));
    memset(&pol, 0, sizeof(pol));
    if (sluice_config_launch_policy(cfg, NULL, &pol, &err) != SLUICE_OK ||
        sluice_launch_parse(&launch, body, strlen(body), &pol, 0, &err) != SLUICE_OK ||
        sluice_render(cfg, NULL, launch, &ctx, &r, &err) != SLUICE_OK ||
        (all = sluice_render_to_json(r)) == NULL) {
        fprintf(stderr, "bench_serve_submit: the service's job: %s\n", err.text);
        goto out;
    }
    job = json_incref(json_array_get(json_object_get(all, "jobs"), 0));
out:
    json_decref(all);
    sluice_render_free(r);
    sluice_launch_free(launch);
    sluice_config_launch_policy_clear(&pol);
    return job;
}

static void *raw_worker(void *arg)
{
    raw_worker_t *w = arg;

    for (size_t i = 0; i < w->n; i++) {
        sluice_jobdesc_t d;
        sluice_rest_submit_t out;
        sluice_error_t err = SLUICE_ERROR_INIT;
        char name[64];

        snprintf(name, sizeof(name), "sluicebench-raw-%ld-%d-%zu", (long)getpid(), w->tag, i);
        memset(&d, 0, sizeof(d));
        if (w->resv != NULL && w->job != NULL &&
            sluice_jobdesc_from_json(w->job, &d, &err) == SLUICE_OK) {
            free(d.name);
            d.name = strdup(name);
            free(d.reservation);
            d.reservation = strdup(w->resv);
        } else {
            bench_held_desc(&d, w->t, name, w->resv == NULL);
            if (w->resv != NULL)
                d.reservation = strdup(w->resv);
        }
        memset(&out, 0, sizeof(out));
        if (sluice_client_submit(w->c, &d, 1, &out, NULL, &err) == SLUICE_OK) {
            w->ids[i] = out.job_id;
            w->done++;
        } else {
            fprintf(stderr, "bench_serve_submit: raw submit: %s\n", err.text);
        }
        sluice_rest_submit_clear(&out);
        sluice_jobdesc_clear(&d);
    }
    return NULL;
}

/* n held jobs through sluice_client_submit on `k` keep-alive clients (one
 * per thread), as bench_submit does; jobs/s (0 when not all went).  With
 * `resv`, the jobs are the service's instead: the description the service
 * renders for the benchmark's request (`job`: its 6 KB script, environment
 * and directives), not held, kept pending by that reservation, so that the
 * ratio compares the same POSTs.  The jobs are cancelled (REST DELETE)
 * before it returns. */
static double raw_client(size_t n, unsigned k, const char *resv, const json_t *job, idlist_t *all)
{
    bench_target_t t;
    raw_worker_t w[16];
    pthread_t th[16];
    uint64_t *ids = calloc(n, sizeof(*ids));
    size_t ok = 0, off = 0;
    double t0, secs, rate = 0.0;
    sluice_client_t *cancel = NULL;
    bench_cpu_snap_t c0, c1;

    memset(w, 0, sizeof(w));
    bench_target_from_env(&t);
    if (ids == NULL || k == 0 || k > 16) {
        free(ids);
        return 0.0;
    }
    for (unsigned i = 0; i < k; i++) {
        w[i].t = &t;
        w[i].tag = (int)i;
        w[i].resv = resv;
        w[i].job = job;
        w[i].ids = ids + off;
        w[i].n = n / k + (i < n % k ? 1 : 0);
        off += w[i].n;
        if ((w[i].c = bench_client_new(&t)) == NULL)
            goto out;
    }
    bench_cpu_snap(&c0);
    t0 = bench_now();
    for (unsigned i = 0; i < k; i++)
        pthread_create(&th[i], NULL, raw_worker, &w[i]);
    for (unsigned i = 0; i < k; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].done;
    }
    secs = bench_now() - t0;
    bench_cpu_snap(&c1);
    rate = secs > 0 ? (double)ok / secs : 0.0;
    printf("raw client (sluice_client_submit, %s) %u in flight: jobs=%zu/%zu ms/job=%6.2f "
           "jobs/s=%7.1f\n",
           resv ? "the service's job" : "held job", k, ok, n, ok ? secs * 1e3 / (double)ok : 0.0,
           rate);
    bench_cpu_report(&c0, &c1, ok);
    cancel = w[0].c;
    (void)bench_cancel_all(cancel, ids, n);
    for (size_t i = 0; i < n; i++)
        ids_add(all, ids[i]);
out:
    for (unsigned i = 0; i < k; i++)
        sluice_client_free(w[i].c);
    free(ids);
    return ok == n ? rate : 0.0;
}

static double loadavg1(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double v = -1.0;

    if (f != NULL) {
        if (fscanf(f, "%lf", &v) != 1)
            v = -1.0;
        fclose(f);
    }
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median and minimum of v[0..n), leaving out NaN (a round whose baseline
 * failed: no ratio, rather than a ratio of 0); v is reordered.  Returns how
 * many values were used (0: both are 0, and there is no data). */
static size_t med_min(double *v, size_t n, double *med, double *min)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    n = k;
    qsort(v, n, sizeof(*v), cmp_double);
    *min = n ? v[0] : 0.0;
    *med = bench_median(v, n);
    return n;
}

/* ---- the sbatch loop ---------------------------------------------------- */

/* scancel the listed jobs, 50 per call; returns how many calls failed. */
static int scancel_all(const uint64_t *ids, size_t n)
{
    int failed = 0;

    for (size_t i = 0; i < n; i += 50) {
        char cmd[50 * 21 + 16];
        size_t off = (size_t)snprintf(cmd, sizeof(cmd), "scancel");
        for (size_t j = i; j < n && j < i + 50; j++)
            off +=
                (size_t)snprintf(cmd + off, sizeof(cmd) - off, " %llu", (unsigned long long)ids[j]);
        failed += system(cmd) != 0;
    }
    return failed;
}

/* N `sbatch --hold` as the calling user; jobs/s (0 when not all went). */
static double sbatch_loop(const char *partition, size_t n, const char *label, idlist_t *all)
{
    char dir[] = "/tmp/sluice-bench-serve-sb.XXXXXX";
    char script[128];
    uint64_t *ids = calloc(n, sizeof(*ids));
    size_t ok = 0;
    double secs, rate;

    if (ids == NULL || bench_trivial_script(dir, script, sizeof(script)) != 0) {
        free(ids);
        return 0.0;
    }
    secs = bench_sbatch_loop(NULL, script, partition, n, ids, &ok);
    rate = secs > 0 ? (double)ok / secs : 0.0;
    printf("sbatch --hold loop %-7s jobs=%zu/%zu ms/job=%6.2f jobs/s=%7.1f\n", label, ok, n,
           ok ? secs * 1e3 / (double)ok : 0.0, rate);
    if (scancel_all(ids, n) != 0)
        printf("sbatch --hold loop %-7s scancel failed: CHECK squeue\n", label);
    for (size_t i = 0; i < n; i++)
        ids_add(all, ids[i]);
    bench_trivial_script_rm(dir, script);
    free(ids);
    return ok == n ? rate : 0.0;
}

/* How many of the listed jobs squeue still shows (pending, running, ...);
 * -1 when squeue could not run. */
static long still_queued(const idlist_t *all)
{
    FILE *p = popen("squeue -h -o %i", "r");
    char line[64];
    long n = 0;

    if (p == NULL)
        return -1;
    while (fgets(line, sizeof(line), p)) {
        uint64_t id = strtoull(line, NULL, 10);
        for (size_t i = 0; i < all->n; i++)
            if (all->ids[i] == id) {
                n++;
                break;
            }
    }
    return pclose(p) == 0 ? n : -1;
}

static int parse_list(const char *s, unsigned *out, size_t max, size_t *n_out)
{
    char *end;
    size_t n = 0;

    while (*s && n < max) {
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || v < 1 || v > 16)
            return -1;
        out[n++] = (unsigned)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    *n_out = n;
    return n > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *state = NULL, *bin = getenv("SLUICE_BIN");
    const char *partition = getenv("SLUICE_TB_PARTITION");
    size_t n = 100, n_runs = 2;
    unsigned in_flight[MAX_RUNS] = {1, 4};
    long per_sec = 1000;
    bool sbatch = true, have_resv = false;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char base[] = "/var/tmp/sluice-bench-serve-submit.XXXXXX";
    char resv[64], cmd[800];
    run_result_t res[2][MAX_RUNS];
    /* [b]: 0 the binary measured (SLUICE_BIN), 1 SLUICE_BIN_BEFORE when set */
    static run_result_t bd[2][MAX_ROUNDS * MAX_RUNS];
    static double v_rate[2][MAX_ROUNDS * MAX_RUNS], v_raw[2][MAX_ROUNDS * MAX_RUNS],
        v_rawj[2][MAX_ROUNDS * MAX_RUNS], v_sb[2][MAX_ROUNDS * MAX_RUNS],
        v_rawsb[MAX_ROUNDS * MAX_RUNS], load[MAX_ROUNDS];
    const char *before = getenv("SLUICE_BIN_BEFORE"), *bins[2];
    size_t nb = 1;
    size_t rounds = 1;
    idlist_t all = {NULL, 0, 0};
    json_t *svc_job = NULL;
    long left;

    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    memset(res, 0, sizeof(res));
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            config = argv[++a];
        else if (strcmp(argv[a], "--submit") == 0 && a + 1 < argc)
            n = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--in-flight") == 0 && a + 1 < argc) {
            if (parse_list(argv[++a], in_flight, MAX_RUNS, &n_runs) != 0) {
                fprintf(stderr, "bench_serve_submit: --in-flight: expected a comma-separated "
                                "list of integers from 1 to 16\n");
                return 0;
            }
        } else if (strcmp(argv[a], "--per-sec") == 0 && a + 1 < argc)
            per_sec = strtol(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--state-dir") == 0 && a + 1 < argc)
            state = argv[++a];
        else if (strcmp(argv[a], "--rounds") == 0 && a + 1 < argc) {
            rounds = strtoul(argv[++a], NULL, 10);
            if (rounds < 1 || rounds > MAX_ROUNDS)
                rounds = 1;
        } else if (strcmp(argv[a], "--no-sbatch") == 0)
            sbatch = false;
        else {
            fprintf(stderr, "usage: bench_serve_submit --config SITE.yaml [--submit 100] "
                            "[--in-flight 1,4] [--per-sec 1000] [--rounds 1] [--state-dir DIR] "
                            "[--no-sbatch]\n");
            return 0;
        }
    }
    if (config == NULL || n == 0 || per_sec < 1 || per_sec > 100000) {
        printf("bench_serve_submit: NOT RUN (no --config, or --submit 0, or --per-sec outside "
               "1..100000)\n");
        return 0;
    }
    if (bin == NULL)
        bin = "./sluice";
    if (access(bin, X_OK) != 0) {
        printf("bench_serve_submit: NOT RUN (no sluice binary at %s; set SLUICE_BIN)\n", bin);
        return 0;
    }
    if (partition == NULL || partition[0] == '\0')
        partition = "debug";
    bins[0] = bin;
    bins[1] = before;
    if (before != NULL && before[0] != '\0' && access(before, X_OK) == 0) {
        nb = 2;
        printf("serve-submit: before/after in the same rounds: SLUICE_BIN_BEFORE=%s and "
               "SLUICE_BIN=%s, in alternating order\n",
               before, bin);
    }
    co.path = config;
    co.envp = (const char *const *)environ;
    if (sluice_config_load(&co, &cfg, &err) != SLUICE_OK) {
        printf("bench_serve_submit: NOT RUN (config: %s)\n", err.text);
        return 0;
    }
    if (state == NULL && (state = mkdtemp(base)) == NULL) {
        printf("bench_serve_submit: NOT RUN (no state directory)\n");
        goto out;
    }

    /* The reservation that keeps the service's jobs pending. */
    snprintf(resv, sizeof(resv), "sluice-bench-hold-%ld", (long)getpid());
    snprintf(cmd, sizeof(cmd),
             "scontrol create reservation ReservationName=%s StartTime=now+7days Duration=10 "
             "Users=%s Nodes=ALL Flags=OVERLAP >/dev/null",
             resv, cfg->rest.user);
    if (system(cmd) != 0) {
        printf("bench_serve_submit: NOT RUN (could not create reservation %s, scontrol says why "
               "above: needs root and SLURM_CONF)\n",
               resv);
        goto out;
    }
    have_resv = true;
    svc_job = service_job(cfg, cfg->site_name);
    printf("serve-submit: %zu launches per run; every job pending on reservation %s (starts in "
           "7 days: Slurm accepts the job and keeps it PENDING, reason Reservation)\n",
           n, resv);
    printf("serve-submit: submit.per_sec=%ld (site: %ld) so that the submit budget is not what "
           "is measured; poll.rpc_per_sec=%ld from the site config; poll_interval 1 h (the "
           "batched state read of every job of the cluster is no part of a launch's cost)\n",
           per_sec, cfg->submit.per_sec, cfg->poll.rpc_per_sec);
    printf("serve-submit: completion is read from the store's events every %d ms (this "
           "process, WAL reader); times are the events' own\n",
           WATCH_MS);
    {
        const char *u = getenv("SLUICE_STORE_URL");
        printf("serve-submit: the store: %s\n",
               u != NULL && u[0] != '\0' ? "PostgreSQL ($SLUICE_STORE_URL, the service's store.url)"
                                         : "SQLite in each run's state directory");
    }

    for (size_t rd = 0; rd < rounds; rd++) {
        double r_sb1 = 0.0, r_sb2 = 0.0, r_base, raw[MAX_RUNS], rawj[MAX_RUNS];
        double la0 = loadavg1(), la1;

        printf("== round %zu of %zu (load average %.2f)\n", rd + 1, rounds, la0);
        if (sbatch)
            r_sb1 = sbatch_loop(partition, n, "before", &all);
        for (size_t r = 0; r < n_runs; r++) {
            raw[r] = raw_client(n, in_flight[r], NULL, NULL, &all);
            rawj[r] = raw_client(n, in_flight[r], resv, svc_job, &all);
            for (size_t j = 0; j < nb; j++) {
                size_t b = rd % 2 == 0 ? j : nb - 1 - j; /* alternate which goes first */
                if (nb > 1)
                    printf("-- %s\n", b == 0 ? "after (SLUICE_BIN)" : "before (SLUICE_BIN_BEFORE)");
                run_service(bins[b], config, cfg, state, resv, in_flight[r], per_sec, n, &all,
                            &res[b][r]);
            }
        }
        if (sbatch)
            r_sb2 = sbatch_loop(partition, n, "after", &all);
        la1 = loadavg1();
        r_base = r_sb1 > r_sb2 ? r_sb1 : r_sb2;
        load[rd] = la0 > la1 ? la0 : la1;
        if (r_base > 0)
            printf("sbatch --hold loop: faster of the two %.1f jobs/s (before %.1f, after %.1f)\n",
                   r_base, r_sb1, r_sb2);
        for (size_t r = 0; r < n_runs; r++)
            for (size_t b = 0; b < nb; b++) {
                size_t i = rd * MAX_RUNS + r;
                v_rate[b][i] = res[b][r].rate;
                v_raw[b][i] = raw[r] > 0 ? res[b][r].rate / raw[r] : NAN;
                v_rawj[b][i] = rawj[r] > 0 ? res[b][r].rate / rawj[r] : NAN;
                v_sb[b][i] = r_base > 0 ? res[b][r].rate / r_base : NAN;
                v_rawsb[i] = r_base > 0 && raw[r] > 0 ? raw[r] / r_base : NAN;
                bd[b][i] = res[b][r];
                printf("round %zu in_flight=%u%s: service %.1f/s, raw client %.1f/s (the "
                       "service's job: %.1f/s), sbatch loop %.1f/s: service = %.0f%% of the raw "
                       "client (%.0f%% with the service's job), %.2fx the loop (raw client "
                       "%.2fx); load %.2f-%.2f\n",
                       rd + 1, in_flight[r], b ? " BEFORE" : "", res[b][r].rate, raw[r], rawj[r],
                       r_base, 100.0 * v_raw[b][i], 100.0 * v_rawj[b][i], v_sb[b][i], v_rawsb[i],
                       la0, la1);
            }
    }

    /* Median and minimum over the rounds, per in-flight setting. */
    {
        double tmp[MAX_ROUNDS], lmed, lmin, lmax = 0;
        for (size_t rd = 0; rd < rounds; rd++)
            lmax = load[rd] > lmax ? load[rd] : lmax;
        memcpy(tmp, load, rounds * sizeof(double));
        med_min(tmp, rounds, &lmed, &lmin);
        printf("== summary of %zu rounds (load average 1 min: median %.2f, min %.2f, max %.2f); "
               "a ratio leaves out the rounds whose baseline failed, and each line says how many "
               "it used\n",
               rounds, lmed, lmin, lmax);
        for (size_t b = 0; b < nb; b++)
            for (size_t r = 0; r < n_runs; r++) {
                double med[5], mn[5], *vs[5] = {v_rate[b], v_raw[b], v_sb[b], v_rawsb, v_rawj[b]};
                double ph[SLUICE_TIMING_COUNT], pmed, pmin;
                size_t used[5];
                char dropped[5][160];
                for (int q = 0; q < 5; q++) {
                    size_t off = 0;
                    dropped[q][0] = '\0';
                    for (size_t rd = 0; rd < rounds; rd++) {
                        tmp[rd] = vs[q][rd * MAX_RUNS + r];
                        if (isnan(tmp[rd]) && off < sizeof(dropped[q]) - 8)
                            off += (size_t)snprintf(dropped[q] + off, sizeof(dropped[q]) - off,
                                                    "%s%zu", off ? "," : " dropped round ", rd + 1);
                    }
                    used[q] = med_min(tmp, rounds, &med[q], &mn[q]);
                }
                printf("in_flight=%u%s: rounds used: service/raw client %zu of %zu%s; "
                       "service/sbatch loop %zu of %zu%s (a dropped round: its baseline failed)\n",
                       in_flight[r], b ? " BEFORE" : "", used[1], rounds, dropped[1], used[2],
                       rounds, dropped[2]);
                printf("in_flight=%u%s: service %.1f/s (min %.1f); service/raw client %.0f%% (min "
                       "%.0f%%); service/sbatch loop %.2fx (min %.2fx); raw client/sbatch loop "
                       "%.2fx (min %.2fx)\n",
                       in_flight[r], b ? " BEFORE" : "", med[0], mn[0], 100 * med[1], 100 * mn[1],
                       med[2], mn[2], med[3], mn[3]);
                printf("in_flight=%u%s: service/raw client with the service's job %.0f%% (min "
                       "%.0f%%)\n",
                       in_flight[r], b ? " BEFORE" : "", 100 * med[4], 100 * mn[4]);
                printf("  breakdown in_flight=%u%s, ms per launch, median (min) over the rounds:\n",
                       in_flight[r], b ? " BEFORE" : "");
                for (size_t rd = 0; rd < rounds; rd++)
                    tmp[rd] = bd[b][rd * MAX_RUNS + r].post_p50;
                med_min(tmp, rounds, &pmed, &pmin);
                printf("    %-28s %8.3f (%8.3f)\n", "client POST -> 201 (p50)", pmed, pmin);
                for (size_t rd = 0; rd < rounds; rd++)
                    tmp[rd] = bd[b][rd * MAX_RUNS + r].cpu_ms;
                med_min(tmp, rounds, &pmed, &pmin);
                printf("    %-28s %8.3f (%8.3f)\n", "service CPU per launch", pmed, pmin);
                for (int k = 0; k < SLUICE_TIMING_COUNT; k++) {
                    for (size_t rd = 0; rd < rounds; rd++)
                        tmp[rd] = bd[b][rd * MAX_RUNS + r].phase_ms[k];
                    med_min(tmp, rounds, &ph[k], &pmin);
                    printf("    %-28s %8.3f (%8.3f)\n",
                           k == SLUICE_TIMING_READ ? "read (ms per read)" : sluice_timing_name(k),
                           ph[k], pmin);
                }
                for (size_t rd = 0; rd < rounds; rd++)
                    tmp[rd] = bd[b][rd * MAX_RUNS + r].acc_to_mark;
                med_min(tmp, rounds, &pmed, &pmin);
                printf("    %-28s %8.3f (%8.3f)\n", "accepted -> submit-started", pmed, pmin);
                for (size_t rd = 0; rd < rounds; rd++)
                    tmp[rd] = bd[b][rd * MAX_RUNS + r].mark_to_sub;
                med_min(tmp, rounds, &pmed, &pmin);
                printf("    %-28s %8.3f (%8.3f)\n", "submit-started -> submitted", pmed, pmin);
                if (b == 0 && (in_flight[r] == 1 || in_flight[r] == 4)) {
                    char name[96];
                    snprintf(name, sizeof(name), "serve submit %s vs raw client (median)",
                             in_flight[r] == 1 ? "sequential" : "4 in flight");
                    if (used[1] > 0)
                        bench_target(name, med[1], 0.80, true);
                    else
                        bench_target_no_data(name, "the raw client failed in every round");
                    if (sbatch) {
                        snprintf(name, sizeof(name), "serve submit %s vs sbatch loop (median)",
                                 in_flight[r] == 1 ? "sequential" : "4 in flight");
                        if (used[2] > 0)
                            bench_target(name, med[2], in_flight[r] == 1 ? 2.5 : 5.0, true);
                        else
                            bench_target_no_data(name, "the sbatch loop failed in every round");
                    }
                }
            }
    }

    /* Issue 30: the service's CPU per launch, this binary beside
     * SLUICE_BIN_BEFORE's, per round (both ran in it) and over the rounds;
     * the ratio is the median of the rounds' own ratios. */
    for (size_t r = 0; nb > 1 && r < n_runs; r++) {
        double a[MAX_ROUNDS], b[MAX_ROUNDS], q[MAX_ROUNDS], amed, amin, bmed, bmin, qmed, qmin;
        size_t used;
        char name[96];

        printf("service CPU per launch in_flight=%u, ms, after (SLUICE_BIN) / before "
               "(SLUICE_BIN_BEFORE) per round:",
               in_flight[r]);
        for (size_t rd = 0; rd < rounds; rd++) {
            a[rd] = bd[0][rd * MAX_RUNS + r].cpu_ms;
            b[rd] = bd[1][rd * MAX_RUNS + r].cpu_ms;
            q[rd] = a[rd] > 0 && b[rd] > 0 ? a[rd] / b[rd] : NAN;
            printf(" %.3f/%.3f", a[rd], b[rd]);
        }
        printf("\n");
        for (size_t rd = 0; rd < rounds; rd++) {
            a[rd] = a[rd] > 0 ? a[rd] : NAN;
            b[rd] = b[rd] > 0 ? b[rd] : NAN;
        }
        med_min(a, rounds, &amed, &amin);
        med_min(b, rounds, &bmed, &bmin);
        used = med_min(q, rounds, &qmed, &qmin);
        printf("service CPU per launch in_flight=%u: after %.3f ms (min %.3f), before %.3f ms "
               "(min %.3f); after/before %.2f (%+.0f%%), median of %zu rounds' ratios\n",
               in_flight[r], amed, amin, bmed, bmin, qmed, 100.0 * (qmed - 1.0), used);
        snprintf(name, sizeof(name), "serve CPU/launch in_flight=%u vs before", in_flight[r]);
        if (used > 0)
            bench_target(name, qmed, 0.65, false);
        else
            bench_target_no_data(name, "no round measured both binaries' CPU");
    }

    /* Cancelled jobs leave squeue's default view at once. */
    left = still_queued(&all);
    printf("cleanup: %zu jobs made in this run; %ld of them still in squeue%s\n", all.n, left,
           left == 0 ? "" : " (CHECK)");
out:
    if (have_resv) {
        snprintf(cmd, sizeof(cmd), "scontrol delete ReservationName=%s", resv);
        if (system(cmd) != 0)
            printf("cleanup: could not delete reservation %s: CHECK scontrol show res\n", resv);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state ? state : "");
    if (state && strncmp(state, "/var/tmp/sluice-bench-serve-submit.", 35) == 0 &&
        getenv("BENCH_KEEP") == NULL && system(cmd) != 0)
        fprintf(stderr, "bench_serve_submit: could not remove %s\n", state);
    free(all.ids);
    json_decref(svc_job);
    sluice_config_free(cfg);
    return 0;
}
