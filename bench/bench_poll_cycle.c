/* SPDX-License-Identifier: Apache-2.0 */
/* bench_poll_cycle.c - slurmctld RPCs per poll cycle of a real launcher
 * tracking N held jobs (issue 29).  bench_poll measures one state read
 * (the cluster op alone); this measures the launcher's whole cycle, with
 * everything it does in it: a supervisor (sluice_supervisor_open: the store,
 * the pooled REST cluster ops, staging on the storage root) accepts N held
 * launches (sluice_accept_prepare + sluice_accept_commit, `hold`), submits
 * them in its own cycles until every one is PENDING, and then runs C more
 * cycles paced as `sluice serve` paces them (sluice_launcher_idle for
 * sluice_launcher_next_interval_ms, then sluice_launcher_step).  slurmctld's
 * diag counters (rpcs_by_message_type) are read before and after those C
 * cycles; REQUEST_STATS_INFO (the diag reads themselves) is left out.  A
 * launch that is not PENDING after --settle-s (a submit whose answer was
 * lost, being reconciled) does not stop the measure: the launches that are
 * not PENDING are printed by state, and their searches are in the counts.
 *
 * It prints the RPCs per cycle and per state read (the launcher's read
 * count, from its timings: a cycle whose read is not due sends none), and
 * the counters that moved, by message type.  Then every job is cancelled
 * (scancel, 500 ids a call, through PATH: the release's own scancel) and
 * the supervisor is closed.
 *
 * usage: bench_poll_cycle --config SITE.yaml [--jobs 10000] [--cycles 5]
 *                         [--settle-s 300] [--warm-cycles 0] [--state-dir DIR]
 * --warm-cycles W runs W more cycles before the measured ones: the full
 * reads of jobs first seen pending are spent by then (the read budget,
 * poll.rpc_per_sec, paces them), and what is measured is the steady cycle.
 * Environment: the testbed's (eval "$(deploy/testbed/env.sh --release R)").
 * Exit 0 whenever it ran; the target line says met or MISSED.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/accept.h>
#include <sluice/config.h>
#include <sluice/launcher.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>
#include <sluice/timing.h>

#include "bench_util.h"
#include "site/config_model.h"

extern char **environ;

typedef struct {
    size_t pending, done;
} counts_t;

static void on_transition(const sluice_launcher_transition_t *t, void *arg)
{
    counts_t *c = arg;

    if (t->to == SLUICE_FSM_PENDING && t->from != SLUICE_FSM_PENDING)
        c->pending++;
    else if (t->to == SLUICE_FSM_DONE)
        c->done++;
}

static const char *env_get(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* Accept n held launches pc-<pid>-<i>; their ids into ids[] (NULL where
 * the accept failed).  Returns how many were accepted. */
static size_t accept_all(const sluice_config_t *cfg, sluice_launcher_t *l, size_t n, char **ids)
{
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    size_t ok = 0;

    ao.getenv_fn = env_get;
    ao.caller = "bench";
    ao.hold = true;
    for (size_t i = 0; i < n; i++) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        sluice_accept_t *a = NULL;
        char text[1024];
        int len = snprintf(text, sizeof(text),
                           "{\"launch_id\": \"pc-%ld-%zu\", \"site\": \"%s\", \"profile\": "
                           "\"none\", \"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": "
                           "[{\"name\": \"main\", \"nodes\": 1, \"cpus_per_node\": 1, "
                           "\"mem_per_node_mib\": 100}]}",
                           (long)getpid(), i, cfg->site_name);

        if (len <= 0 || (size_t)len >= sizeof(text))
            continue;
        if (sluice_accept_prepare(&a, NULL, cfg, text, (size_t)len, &ao, &err) != SLUICE_OK)
            fprintf(stderr, "bench_poll_cycle: prepare %zu: %s\n", i, err.text);
        else if (sluice_accept_commit(a, NULL, NULL, l, &err) != SLUICE_OK)
            fprintf(stderr, "bench_poll_cycle: accept %zu: %s\n", i, err.text);
        else if ((ids[i] = strdup(sluice_accept_launch_id(a))) != NULL)
            ok++;
        sluice_accept_free(a);
    }
    return ok;
}

/* One step, after waiting as the service waits.  false on a step error. */
static bool paced_step(sluice_launcher_t *l)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    (void)sluice_launcher_idle(l, sluice_launcher_next_interval_ms(l));
    if (sluice_launcher_step(l, &err) != SLUICE_OK) {
        fprintf(stderr, "bench_poll_cycle: step: %s\n", err.text);
        return false;
    }
    return true;
}

/* The launches that are not PENDING, by state, with the first of each and
 * its reason. */
static void print_unsettled(sluice_store_t *store, char **ids, size_t n)
{
    char names[8][32], first[8][240];
    size_t counts[8] = {0}, kinds = 0;

    for (size_t i = 0; i < n; i++) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *row = NULL;
        const char *st, *why;
        size_t k;

        if (ids[i] == NULL || sluice_store_get_launch(store, ids[i], &row, &err) != SLUICE_OK)
            continue;
        st = json_string_value(json_object_get(row, "state"));
        why = json_string_value(json_object_get(row, "reason"));
        if (st != NULL && strcmp(st, "PENDING") != 0) {
            for (k = 0; k < kinds && strcmp(names[k], st) != 0; k++)
                ;
            if (k == kinds && kinds < 8) {
                snprintf(names[k], sizeof(names[k]), "%s", st);
                snprintf(first[k], sizeof(first[k]), "%s: %s", ids[i], why ? why : "");
                kinds++;
            }
            if (k < kinds)
                counts[k]++;
        }
        json_decref(row);
    }
    for (size_t k = 0; k < kinds; k++)
        printf("poll-cycle: NOT PENDING: %zu %s (first %s); measured with them\n", counts[k],
               names[k], first[k]);
}

/* scancel every job of the launches, 500 ids per call; how many calls
 * succeeded is printed. */
static void cancel_all(sluice_store_t *store, char **ids, size_t n)
{
    char *cmd = malloc(500 * 24 + 64);
    size_t len = 0, in_cmd = 0, jobs = 0, calls = 0, failed = 0;

    if (cmd == NULL)
        return;
    for (size_t i = 0; i <= n; i++) {
        sluice_error_t err = SLUICE_ERROR_INIT;
        json_t *row = NULL, *v;
        size_t k;

        if (i < n && ids[i] != NULL &&
            sluice_store_get_launch(store, ids[i], &row, &err) == SLUICE_OK) {
            json_array_foreach(json_object_get(row, "job_ids"), k, v)
            {
                if (in_cmd == 0)
                    len = (size_t)snprintf(cmd, 64, "scancel");
                len +=
                    (size_t)snprintf(cmd + len, 24, " %" PRIu64, (uint64_t)json_integer_value(v));
                in_cmd++;
                jobs++;
            }
            json_decref(row);
        }
        if (in_cmd > 0 && (in_cmd >= 490 || i == n)) {
            calls++;
            if (system(cmd) != 0)
                failed++;
            in_cmd = 0;
        }
    }
    printf("cleanup: scancel of %zu jobs in %zu calls, %zu failed%s\n", jobs, calls, failed,
           failed ? " (CHECK squeue)" : "");
    free(cmd);
}

int main(int argc, char **argv)
{
    const char *config = NULL, *state = NULL;
    size_t n = 10000, cycles = 5, accepted = 0, steps = 0, settle_s = 300, warm = 0;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_rest_diag_t d0, d1;
    sluice_timing_t tm0[SLUICE_TIMING_COUNT], tm1[SLUICE_TIMING_COUNT];
    sluice_client_t *diag = NULL;
    sluice_launcher_t *l;
    bench_target_t t;
    counts_t cnt = {0, 0};
    char base[] = "/var/tmp/sluice-bench-poll-cycle.XXXXXX", cmd[700];
    char **ids = NULL;
    double t0, t_acc, t_pend, t_cyc;
    uint64_t r0 = 0, r1 = 0, reads;
    bool have_diag = false;

    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(&d0, 0, sizeof(d0));
    memset(&d1, 0, sizeof(d1));
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            config = argv[++a];
        else if (strcmp(argv[a], "--jobs") == 0 && a + 1 < argc)
            n = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--cycles") == 0 && a + 1 < argc)
            cycles = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--warm-cycles") == 0 && a + 1 < argc)
            warm = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--settle-s") == 0 && a + 1 < argc)
            settle_s = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--state-dir") == 0 && a + 1 < argc)
            state = argv[++a];
        else {
            fprintf(stderr, "usage: bench_poll_cycle --config SITE.yaml [--jobs 10000] "
                            "[--cycles 5] [--settle-s 300] [--warm-cycles 0] [--state-dir DIR]\n");
            return 0;
        }
    }
    if (config == NULL || n == 0 || cycles == 0) {
        printf("bench_poll_cycle: NOT RUN (no --config, or no jobs or cycles)\n");
        return 0;
    }
    bench_target_from_env(&t);
    if ((diag = bench_client_new(&t)) == NULL) {
        printf("bench_poll_cycle: NOT RUN (no testbed: eval \"$(deploy/testbed/env.sh)\")\n");
        return 0;
    }
    co.path = config;
    co.envp = (const char *const *)environ;
    if (sluice_config_load(&co, &cfg, &err) != SLUICE_OK) {
        printf("bench_poll_cycle: NOT RUN (config: %s)\n", err.text);
        goto out;
    }
    if (state == NULL && (state = mkdtemp(base)) == NULL) {
        printf("bench_poll_cycle: NOT RUN (no state directory)\n");
        goto out;
    }
    if ((ids = calloc(n, sizeof(*ids))) == NULL)
        goto out;
    so.state_dir = state;
    so.submit_in_flight = 4;
    so.on_transition = on_transition;
    so.transition_arg = &cnt;
    if (sluice_supervisor_open(&sup, cfg, &so, NULL, &err) != SLUICE_OK) {
        printf("bench_poll_cycle: NOT RUN (supervisor: %s)\n", err.text);
        goto out;
    }
    l = sluice_supervisor_launcher(sup);

    t0 = bench_now();
    accepted = accept_all(cfg, l, n, ids);
    t_acc = bench_now();
    printf("poll-cycle: %zu of %zu held launches accepted in %.1f s\n", accepted, n, t_acc - t0);
    /* the launcher submits them in its own cycles, paced as the service */
    while (cnt.pending + cnt.done < accepted && bench_now() < t_acc + (double)settle_s) {
        if (!paced_step(l))
            break;
        steps++;
    }
    t_pend = bench_now();
    printf("poll-cycle: %zu PENDING (held), %zu ended, after %zu cycles in %.1f s\n", cnt.pending,
           cnt.done, steps, t_pend - t_acc);
    if (cnt.pending < accepted || cnt.done > 0)
        print_unsettled(sluice_supervisor_store(sup), ids, n);
    /* one more cycle, so that the measure starts after a read; then the
     * warm-up cycles */
    (void)paced_step(l);
    for (size_t c = 0; c < warm; c++)
        if (!paced_step(l))
            break;
    if (warm > 0)
        printf("poll-cycle: %zu warm-up cycles done (%.1f s)\n", warm, bench_now() - t_pend);

    sluice_timings(tm0);
    have_diag = bench_diag(diag, &d0);
    t_cyc = bench_now();
    for (size_t c = 0; c < cycles && have_diag; c++)
        if (!paced_step(l))
            have_diag = false;
    t_cyc = bench_now() - t_cyc;
    sluice_timings(tm1);
    if (have_diag)
        have_diag = bench_diag(diag, &d1);
    reads = tm1[SLUICE_TIMING_READ].count - tm0[SLUICE_TIMING_READ].count;
    if (!have_diag) {
        bench_target_no_data("slurmctld RPCs per poll cycle", "diag could not be read");
        goto cancel;
    }
    for (size_t i = 0; i < d0.n_rpcs; i++)
        if (d0.rpcs[i].message_type && strcmp(d0.rpcs[i].message_type, "REQUEST_STATS_INFO") != 0)
            r0 += d0.rpcs[i].count;
    for (size_t i = 0; i < d1.n_rpcs; i++)
        if (d1.rpcs[i].message_type && strcmp(d1.rpcs[i].message_type, "REQUEST_STATS_INFO") != 0)
            r1 += d1.rpcs[i].count;
    printf("poll-cycle: %zu held jobs, %zu cycles in %.1f s (%.2f s per cycle), %" PRIu64
           " state reads, %" PRIu64 " slurmctld RPCs\n",
           accepted, cycles, t_cyc, t_cyc / (double)cycles, reads, r1 - r0);
    bench_print_rpc_deltas("poll-cycle", &d0, &d1);
    printf("poll-cycle RPCs per cycle: %.2f; per state read: %s%.2f\n",
           (double)(r1 - r0) / (double)cycles, reads ? "" : "(no read) ",
           reads ? (double)(r1 - r0) / (double)reads : 0.0);
    if (reads == 0)
        bench_target_no_data("slurmctld RPCs per poll cycle", "no cycle read the states");
    else
        bench_target("slurmctld RPCs per poll cycle (per read)", (double)(r1 - r0) / (double)reads,
                     1.0, false);

cancel:
    cancel_all(sluice_supervisor_store(sup), ids, n);
out:
    sluice_rest_diag_clear(&d0);
    sluice_rest_diag_clear(&d1);
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
    sluice_supervisor_close(sup);
    sluice_client_free(diag);
    if (state != NULL && strncmp(state, "/var/tmp/sluice-bench-poll-cycle.", 33) == 0) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_poll_cycle: could not remove %s\n", state);
    }
    sluice_config_free(cfg);
    return 0;
}
