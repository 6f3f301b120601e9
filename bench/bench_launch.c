/* SPDX-License-Identifier: Apache-2.0 */
/* bench_launch.c - submit throughput of the full launcher path against the
 * testbed: parse + render each request (as `sluice launch` does), accept it
 * into the store, then step the launcher (real REST cluster ops, real
 * staging on the storage root, store on local disk with its durable
 * commits) until every launch is PENDING in Slurm.  Every job is held (the
 * rendered job descriptions get hold = true) and cancelled at the end.
 *
 * The wiring is the library's: sluice_supervisor_open() (store, REST
 * client, cluster ops, staging, launcher, recovered) and sluice_accept()'s
 * two halves for each request.
 *
 * The requests are parsed, rendered and accepted on a thread of their own
 * (as the service's HTTP threads do) while the main thread runs the
 * launcher's cycles; between cycles it waits in sluice_launcher_idle() for
 * the adaptive interval or until an accept wakes it (as `sluice serve`
 * does).  The clock runs from the first parse to the last job PENDING.  The
 * launcher gets its options from the site config
 * (sluice_launcher_opts_from_config: default budgets, poll.rpc_per_sec 50
 * and submit.per_sec 200, unless the config sets them) and the pooled REST
 * cluster ops (sluice_cluster_rest_t).  Runs twice: sequential
 * (submit.in_flight 1) and with 4 in flight.  In the same run, before and
 * after the launcher runs, an `sbatch --hold` loop as the calling user
 * submits the same number of held jobs (bench_submit's baseline); the
 * ratios against the faster of the two loops are checked against the
 * issue's targets (>= 2.5x sequential, >= 5x with 4 in flight).  With
 * --rounds N the whole sequence runs N times and the targets take the
 * median ratio (single runs move by +-15 % on a shared 2-core VM).
 *
 * usage: bench_launch --config SITE.yaml [--jobs 100] [--rounds N] [--state-dir DIR]
 *                     [--no-sbatch]
 * Exit 0 whenever it ran.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/accept.h>
#include <sluice/config.h>
#include <sluice/launcher.h>
#include <sluice/log.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>
#include <sluice/timing.h>

#include "bench_util.h"
#include "site/config_model.h"

extern char **environ;

typedef struct {
    size_t pending;
    size_t done;
} counts_t;

static void on_transition(const sluice_launcher_transition_t *t, void *arg)
{
    counts_t *c = arg;

    if (t->to == SLUICE_FSM_PENDING && t->from != SLUICE_FSM_PENDING)
        c->pending++;
    else if (t->to == SLUICE_FSM_DONE)
        c->done++;
}

/* BENCH_TRACE: the launcher's debug timings of every cycle on stderr. */
static void trace_log(int level, const char *msg, void *arg)
{
    (void)arg;
    fprintf(stderr, "  [%s] %s\n", sluice_log_level_name(level), msg);
}

static const char *env_get(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* The request of launch `id` (into buf); returns its length. */
static size_t request_text(const sluice_config_t *cfg, const char *id, char *buf, size_t size)
{
    int n = snprintf(buf, size,
                     "{\"launch_id\": \"%s\", \"site\": \"%s\", \"profile\": \"none\", "
                     "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
                     "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
                     id, cfg->site_name);

    return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/* The accepting side of one run: parse, render and accept n launches
 * (sluice_accept_prepare + sluice_accept_commit, held). */
typedef struct {
    const sluice_config_t *cfg;
    sluice_launcher_t *l;
    const char *label;
    size_t n;
    char **ids;
    atomic_size_t accepted;
    atomic_bool done;
    double t_render; /* seconds spent parsing and rendering */
    double t_end;    /* when the last accept returned */
} intake_t;

static void *intake_main(void *p)
{
    intake_t *in = p;

    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;

    ao.getenv_fn = env_get;
    ao.caller = "bench";
    ao.hold = true;
    for (size_t i = 0; i < in->n; i++) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_accept_t *a = NULL;
        char id[96], text[1024];
        double tr = bench_now();
        size_t len;
        sluice_err made;

        snprintf(id, sizeof(id), "bl-%ld-%s-%zu", (long)getpid(), in->label, i);
        len = request_text(in->cfg, id, text, sizeof(text));
        made = sluice_accept_prepare(&a, NULL, in->cfg, text, len, &ao, &err);
        in->t_render += bench_now() - tr;
        if (made != SLUICE_OK)
            fprintf(stderr, "bench_launch: %s: %s\n", id, err.text);
        else if (sluice_accept_commit(a, NULL, NULL, in->l, &err) != SLUICE_OK)
            fprintf(stderr, "bench_launch: accept: %s\n", err.text);
        else if ((in->ids[i] = strdup(sluice_accept_launch_id(a))) != NULL)
            atomic_fetch_add(&in->accepted, 1);
        sluice_accept_free(a);
    }
    in->t_end = bench_now();
    atomic_store(&in->done, true);
    sluice_launcher_wake(in->l);
    return NULL;
}

/* One launcher-path run; returns launches/s (0 when it did not run). */
static double run_once(
    const sluice_config_t *cfg, const char *dir, size_t n, unsigned in_flight, const char *label)
{
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_store_t *store;
    sluice_client_t *client;
    double rate = 0.0;
    sluice_launcher_t *l;
    sluice_error_t err = SLUICE_ERROR_INIT;
    counts_t cnt = {0, 0};
    double t0, t_acc, t1, ts, deadline, t_render = 0.0;
    sluice_timing_t tm0[SLUICE_TIMING_COUNT], tm1[SLUICE_TIMING_COUNT];
    size_t accepted = 0, cancelled = 0, steps = 0;
    char **ids = calloc(n, sizeof(*ids));
    intake_t in;
    pthread_t th;
    bool started = false;

    memset(&in, 0, sizeof(in));
    so.state_dir = dir;
    so.submit_in_flight = in_flight;
    so.on_transition = on_transition;
    so.transition_arg = &cnt;
    if (ids == NULL || sluice_supervisor_open(&sup, cfg, &so, NULL, &err) != SLUICE_OK) {
        fprintf(stderr, "bench_launch: setup: %s\n", err.text);
        goto out;
    }
    store = sluice_supervisor_store(sup);
    client = sluice_supervisor_client(sup);
    l = sluice_supervisor_launcher(sup);
    in.cfg = cfg;
    in.l = l;
    in.label = label;
    in.n = n;
    in.ids = ids;
    sluice_timings(tm0);
    t0 = bench_now();
    if (pthread_create(&th, NULL, intake_main, &in) != 0) {
        fprintf(stderr, "bench_launch: cannot start the accepting thread\n");
        goto out;
    }
    started = true;
    deadline = t0 + 300.0;
    for (;;) {
        size_t acc = atomic_load(&in.accepted);
        bool all_in = atomic_load(&in.done);

        if (all_in && cnt.pending + cnt.done >= acc)
            break;
        if (bench_now() > deadline) {
            fprintf(stderr, "bench_launch: not every launch PENDING after 300 s\n");
            break;
        }
        ts = bench_now();
        if (sluice_launcher_step(l, &err) != SLUICE_OK) {
            fprintf(stderr, "bench_launch: step: %s\n", err.text);
            break;
        }
        steps++;
        if (getenv("BENCH_TRACE"))
            fprintf(stderr,
                    "  step +%.3f..+%.3f s: %zu accepted, %zu pending, next %" PRId64 " ms\n",
                    ts - t0, bench_now() - t0, atomic_load(&in.accepted), cnt.pending,
                    sluice_launcher_next_interval_ms(l));
        /* the service's pacing: the adaptive interval, or at once on an accept */
        if (!(atomic_load(&in.done) && cnt.pending + cnt.done >= atomic_load(&in.accepted))) {
            bool woke = sluice_launcher_idle(l, sluice_launcher_next_interval_ms(l));
            if (getenv("BENCH_TRACE"))
                fprintf(stderr, "  idle until +%.3f s (%s)\n", bench_now() - t0,
                        woke ? "woken" : "interval");
        }
    }
    pthread_join(th, NULL);
    started = false;
    accepted = atomic_load(&in.accepted);
    t_acc = in.t_end;
    t_render = in.t_render;
    t1 = bench_now();
    rate = t1 > t0 ? (double)cnt.pending / (t1 - t0) : 0.0;
    printf("launch %-18s jobs=%zu/%zu accept_ms/job=%6.2f (render %4.2f) tail_ms=%6.1f "
           "steps=%zu total_ms/job=%6.2f jobs/s=%7.1f%s\n",
           label, cnt.pending, n, accepted ? (t_acc - t0) * 1e3 / (double)accepted : 0.0,
           accepted ? t_render * 1e3 / (double)accepted : 0.0, (t1 - t_acc) * 1e3, steps,
           cnt.pending ? (t1 - t0) * 1e3 / (double)cnt.pending : 0.0, rate,
           cnt.done ? " (some launches ended: CHECK)" : "");
    sluice_timings(tm1);
    printf("launch %-18s breakdown, wall ms per launch (a group's time counted once):", label);
    for (int k = 0; k < SLUICE_TIMING_COUNT; k++) {
        uint64_t c = tm1[k].count - tm0[k].count;
        printf(" %s %.3f", sluice_timing_name(k),
               c ? (double)(tm1[k].sum_ns - tm0[k].sum_ns) / 1e6 / (double)c : 0.0);
    }
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        json_t *row = NULL;
        size_t k;
        json_t *v;

        if (ids[i] == NULL || sluice_store_get_launch(store, ids[i], &row, &err) != SLUICE_OK)
            continue;
        json_array_foreach(json_object_get(row, "job_ids"), k, v)
        {
            uint64_t jid = (uint64_t)json_integer_value(v);
            cancelled += bench_cancel_all(client, &jid, 1);
        }
        json_decref(row);
    }
    printf("launch %-18s cancelled %zu jobs\n", label, cancelled);
out:
    if (started)
        pthread_join(th, NULL);
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
    sluice_supervisor_close(sup);
    return rate;
}

/* The CLI launchers' way: one `sbatch --hold` per job, as the calling user,
 * then scancel.  Returns jobs/s (0 when it could not run). */
static double sbatch_loop(const char *partition, size_t n, const char *label)
{
    char dir[] = "/tmp/sluice-bench-launch-sb.XXXXXX";
    char script[128];
    uint64_t *ids = calloc(n, sizeof(*ids));
    size_t ok = 0, cancelled = 0;
    double secs, rate = 0.0;

    if (ids == NULL || bench_trivial_script(dir, script, sizeof(script)) != 0) {
        free(ids);
        return 0.0;
    }
    secs = bench_sbatch_loop(NULL, script, partition, n, ids, &ok);
    rate = secs > 0 ? (double)ok / secs : 0.0;
    printf("launch %-18s jobs=%zu/%zu ms/job=%6.2f jobs/s=%7.1f\n", label, ok, n,
           ok ? secs * 1e3 / (double)ok : 0.0, rate);
    for (size_t i = 0; i < n; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "scancel %llu", (unsigned long long)ids[i]);
        if (ids[i] > 0 && system(cmd) == 0)
            cancelled++;
    }
    printf("launch %-18s cancelled %zu jobs\n", label, cancelled);
    bench_trivial_script_rm(dir, script);
    free(ids);
    return ok == n ? rate : 0.0;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *state = NULL;
    const char *partition = getenv("SLUICE_TB_PARTITION");
    size_t n = 100, rounds = 1, done = 0, dropped = 0;
    bool sbatch = true;
    double q_seq[16], q_par[16];
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char base[] = "/var/tmp/sluice-bench-launch.XXXXXX";
    char d1[600], d2[600], cmd[700];

    if (getenv("BENCH_TRACE"))
        sluice_log_set(trace_log, SLUICE_LOG_DEBUG, NULL);

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            config = argv[++a];
        else if (strcmp(argv[a], "--jobs") == 0 && a + 1 < argc)
            n = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--state-dir") == 0 && a + 1 < argc)
            state = argv[++a];
        else if (strcmp(argv[a], "--rounds") == 0 && a + 1 < argc)
            rounds = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--no-sbatch") == 0)
            sbatch = false;
        else {
            fprintf(stderr, "usage: bench_launch --config SITE.yaml [--jobs 100] "
                            "[--rounds 1..16] [--state-dir DIR] [--no-sbatch]\n");
            return 0;
        }
    }
    if (rounds < 1 || rounds > 16) {
        fprintf(stderr, "bench_launch: --rounds takes 1 to 16\n");
        return 0;
    }
    if (config == NULL || n == 0) {
        printf("bench_launch: NOT RUN (no --config)\n");
        return 0;
    }
    co.path = config;
    co.envp = (const char *const *)environ;
    if (sluice_config_load(&co, &cfg, &err) != SLUICE_OK) {
        printf("bench_launch: NOT RUN (config: %s)\n", err.text);
        return 0;
    }
    if (state == NULL && (state = mkdtemp(base)) == NULL) {
        printf("bench_launch: NOT RUN (no state directory)\n");
        sluice_config_free(cfg);
        return 0;
    }
    if (partition == NULL || partition[0] == '\0')
        partition = "debug";
    printf("launch budgets: poll.rpc_per_sec=%ld submit.per_sec=%ld (from the site config)\n",
           cfg->poll.rpc_per_sec, cfg->submit.per_sec);
    /* Each round: loop, sequential, 4 in flight, loop; its ratios are
     * against the faster of its two loops.  The verdict takes the median
     * round (one run moves by +-15 % on a shared 2-core VM). */
    for (size_t r = 0; r < rounds; r++) {
        double r_seq, r_par, r_sb1 = 0.0, r_sb2 = 0.0, r_base;
        char tag[32];

        snprintf(d1, sizeof(d1), "%s/r%zu-in-flight-1", state, r);
        snprintf(d2, sizeof(d2), "%s/r%zu-in-flight-4", state, r);
        if (sbatch)
            r_sb1 = sbatch_loop(partition, n, "sbatch-loop-before");
        r_seq = run_once(cfg, d1, n, 1, "sequential");
        r_par = run_once(cfg, d2, n, 4, "4-in-flight");
        if (sbatch)
            r_sb2 = sbatch_loop(partition, n, "sbatch-loop-after");
        r_base = r_sb1 > r_sb2 ? r_sb1 : r_sb2;
        if (r_base <= 0) {
            if (sbatch) {
                printf("launch round %zu DROPPED: both sbatch loops failed, no ratio\n", r + 1);
                dropped++;
            }
            continue;
        }
        snprintf(tag, sizeof(tag), rounds > 1 ? " (round %zu)" : "", r + 1);
        printf("launch ratio sequential%s: %.2fx the faster sbatch loop (%.1f/s; loops %.1f and "
               "%.1f/s)\n",
               tag, r_seq / r_base, r_base, r_sb1, r_sb2);
        printf("launch ratio 4 in flight%s: %.2fx the faster sbatch loop\n", tag, r_par / r_base);
        q_seq[done] = r_seq / r_base;
        q_par[done] = r_par / r_base;
        done++;
    }
    if (sbatch && done == 0) {
        bench_target_no_data("launcher path sequential vs sbatch loop",
                             "the sbatch loops failed in every round");
        bench_target_no_data("launcher path 4 in flight vs sbatch loop",
                             "the sbatch loops failed in every round");
    }
    if (done > 0) {
        bench_sort(q_seq, done);
        bench_sort(q_par, done);
        if (done > 1 || dropped > 0)
            printf("launch ratios over %zu of %zu rounds (%zu dropped: their sbatch loops "
                   "failed): sequential %.2f..%.2fx, 4 in flight %.2f..%.2fx; the targets take "
                   "the medians (the mean of the two middle rounds for an even count)\n",
                   done, rounds, dropped, q_seq[0], q_seq[done - 1], q_par[0], q_par[done - 1]);
        bench_target("launcher path sequential vs sbatch loop", bench_median(q_seq, done), 2.5,
                     true);
        bench_target("launcher path 4 in flight vs sbatch loop", bench_median(q_par, done), 5.0,
                     true);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
    if (strncmp(state, "/var/tmp/sluice-bench-launch.", 29) == 0 && system(cmd) != 0)
        fprintf(stderr, "bench_launch: could not remove %s\n", state);
    sluice_config_free(cfg);
    return 0;
}
