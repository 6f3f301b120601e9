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

#include "bench_util.h"

static int64_t fake_clock_ms = 1700000000000;
static uint64_t fake_next_id = 1000;

static int64_t clock_now(void *arg)
{
    (void)arg;
    return fake_clock_ms;
}

static void clock_sleep(void *arg, int64_t ms)
{
    (void)arg;
    fake_clock_ms += ms;
}

static sluice_submit_outcome
fake_submit(void *arg, const sluice_jobdesc_t *d, size_t n, sluice_submit_result_t *out)
{
    (void)arg;
    (void)d;
    (void)n;
    memset(out, 0, sizeof(*out));
    out->job_id = fake_next_id++;
    return SLUICE_SUBMIT_OK;
}

static sluice_lookup fake_get_job(void *arg, uint64_t id, sluice_jobview_t **v, size_t *n)
{
    sluice_jobview_t *x = calloc(1, sizeof(*x));

    (void)arg;
    if (x == NULL)
        return SLUICE_LOOKUP_UNAVAILABLE;
    x->job_id = id;
    x->user_name = strdup("sluiceuser");
    x->partition = strdup("debug");
    x->state_reason = strdup("JobHeldUser");
    x->base = SLUICE_JOB_PENDING;
    x->submit_time = fake_clock_ms / 1000;
    *v = x;
    *n = 1;
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup
fake_states(void *arg, const uint64_t *ids, size_t n, sluice_job_state_t *states)
{
    (void)arg;
    (void)ids;
    for (size_t i = 0; i < n; i++) {
        states[i].present = true;
        states[i].base = SLUICE_JOB_PENDING;
        states[i].flags = 0;
    }
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup
fake_find_live(void *arg, const char *name, const char *user, sluice_jobview_t **v, size_t *n)
{
    (void)arg;
    (void)name;
    (void)user;
    *v = NULL;
    *n = 0;
    return SLUICE_LOOKUP_NOT_FOUND;
}

static sluice_lookup fake_find_acct(void *arg,
                                    const char *name,
                                    const char *user,
                                    int64_t s,
                                    int64_t e,
                                    sluice_jobview_t **v,
                                    size_t *n)
{
    (void)s;
    (void)e;
    return fake_find_live(arg, name, user, v, n);
}

static sluice_lookup fake_acct(void *arg, uint64_t id, sluice_jobview_t **v, size_t *n)
{
    (void)id;
    return fake_find_live(arg, NULL, NULL, v, n);
}

static sluice_err fake_cancel(void *arg, uint64_t id, int sig, sluice_error_t *err)
{
    (void)arg;
    (void)id;
    (void)sig;
    (void)err;
    return SLUICE_OK;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

static sluice_launcher_t *open_launcher(sluice_store_t *store)
{
    sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_t *l = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    o.store = store;
    o.cluster.submit = fake_submit;
    o.cluster.get_job = fake_get_job;
    o.cluster.job_states = fake_states;
    o.cluster.find_live_by_name = fake_find_live;
    o.cluster.find_acct_by_name = fake_find_acct;
    o.cluster.acct_job = fake_acct;
    o.cluster.cancel = fake_cancel;
    o.user = "sluiceuser";
    o.site = "bench";
    o.rpc_per_sec = 1e9;
    o.now_ms = clock_now;
    o.sleep_ms = clock_sleep;
    if (sluice_launcher_new(&l, &o, &err) != SLUICE_OK ||
        sluice_launcher_recover(l, NULL, &err) != SLUICE_OK) {
        fprintf(stderr, "bench_mem: launcher: %s\n", err.text);
        sluice_launcher_free(l);
        return NULL;
    }
    return l;
}

static void steps(sluice_launcher_t *l, int k)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (int i = 0; i < k; i++) {
        fake_clock_ms += 1000;
        if (sluice_launcher_step(l, &err) != SLUICE_OK) {
            fprintf(stderr, "bench_mem: step: %s\n", err.text);
            return;
        }
    }
}

/* One job description's render. */
static json_t *make_render(void)
{
    sluice_jobdesc_t d;
    bench_target_t t;
    json_t *r, *j;

    memset(&t, 0, sizeof(t));
    t.partition = "debug";
    t.workdir = "/tmp";
    bench_held_desc(&d, &t, "x", true);
    free(d.script);
    d.script = NULL;
    j = sluice_jobdesc_to_json(&d);
    sluice_jobdesc_clear(&d);
    r = json_pack("{s:s s:[o]}", "script", "#!/bin/sh\ntrue\n", "jobs", j);
    return r;
}

/* Phase bodies; each returns the RSS pair through `out` (kib, kib trimmed). */
static int phase(const char *dir, const char *what, size_t n, long out[3])
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
        json_t *req = json_object();
        for (size_t i = 0; i < n; i++) {
            sluice_store_launch_spec_t sp;
            sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;
            char id[64];

            snprintf(id, sizeof(id), "fin-%zu", i);
            json_object_set_new(req, "launch_id", json_string(id));
            json_object_set_new(req, "site", json_string("bench"));
            memset(&sp, 0, sizeof(sp));
            sp.launch_id = id;
            sp.site = "bench";
            sp.request = req;
            sum.state = "DONE";
            sum.terminal = 1;
            sum.set_result = 1;
            sum.result_code = 0;
            sum.reason = "succeeded";
            if (sluice_store_create_launch(store, &sp, NULL, &err) != SLUICE_OK ||
                sluice_store_append_event_and_update(store, id, "done", NULL, NULL, 0, &sum, NULL,
                                                     &err) != SLUICE_OK) {
                fprintf(stderr, "bench_mem: fill %zu: %s\n", i, err.text);
                break;
            }
        }
        json_decref(req);
        sluice_store_close(store);
        out[0] = out[1] = 0;
        out[2] = (long)((bench_now() - t0) * 1000);
        return 0;
    }
    if ((l = open_launcher(store)) == NULL) {
        sluice_store_close(store);
        return -1;
    }
    if (strcmp(what, "live") == 0) {
        json_t *render = make_render();
        json_t *req = json_object();
        for (size_t i = 0; i < n; i++) {
            sluice_launcher_request_t r;
            char id[64];

            snprintf(id, sizeof(id), "live-%zu", i);
            json_object_set_new(req, "launch_id", json_string(id));
            json_object_set_new(req, "site", json_string("bench"));
            memset(&r, 0, sizeof(r));
            r.request = req;
            r.render = render;
            if (sluice_launcher_accept(l, &r, NULL, NULL, &err) != SLUICE_OK) {
                fprintf(stderr, "bench_mem: accept %zu: %s\n", i, err.text);
                break;
            }
        }
        json_decref(req);
        json_decref(render);
    }
    steps(l, 3);
    out[0] = rss_kib();
    malloc_trim(0);
    out[1] = rss_kib();
    out[2] = (long)sluice_launcher_tracked(l);
    fprintf(stderr, "bench_mem: phase %s: %.1f s\n", what, bench_now() - t0);
    sluice_launcher_free(l);
    sluice_store_close(store);
    return 0;
}

static int in_child(const char *dir, const char *what, size_t n, long out[3])
{
    int fd[2], st = 0;
    pid_t pid;

    if (pipe(fd) != 0)
        return -1;
    if ((pid = fork()) == 0) {
        long v[3] = {-1, -1, -1};
        close(fd[0]);
        if (phase(dir, what, n, v) != 0)
            v[0] = -1;
        if (write(fd[1], v, sizeof(v)) != (ssize_t)sizeof(v))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], out, 3 * sizeof(long)) != (ssize_t)(3 * sizeof(long)))
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
    long e[3], lv[3], f[3], fill[3];
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
        printf("mem store fill: %zu finished launches written in %.1f s\n", finished,
               (double)fill[2] / 1000.0);
        printf("mem %zu finished in store: rss_kib=%ld (after malloc_trim %ld), tracked=%ld, "
               "delta vs empty=%ld KiB\n",
               finished, f[0], f[1], f[2], f[0] - e[0]);
        bench_target("bytes per live launch <= 4096", per, 4096.0, false);
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
