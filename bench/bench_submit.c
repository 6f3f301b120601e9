/* SPDX-License-Identifier: Apache-2.0 */
/* bench_submit.c - submit throughput of held jobs: sluice's REST submit
 * (keep-alive, through the client) sequentially and with 4 in flight (4
 * threads, one client each), against an `sbatch --hold` loop.
 *
 * The sbatch loop runs the same trivial held job, once as the calling user
 * (`sbatch`, what a launcher running as the job user pays) and once through
 * `runuser -u <user> --` (as the job user from root).  Targets compare with
 * the faster of the two loops.  Every job is cancelled (DELETE) at the end.
 *
 * usage: bench_submit [--jobs 200] [--threads 4] [--no-sbatch]
 * Exit 0 whenever it ran.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

typedef struct {
    const bench_target_t *t;
    sluice_client_t *c;
    uint64_t *ids; /* this thread's slots */
    size_t n;
    size_t done;
    int tag;
} worker_t;

static void *submit_worker(void *arg)
{
    worker_t *w = arg;

    for (size_t i = 0; i < w->n; i++) {
        sluice_jobdesc_t d;
        sluice_rest_submit_t out;
        sluice_error_t err = SLUICE_ERROR_INIT;
        char name[64];

        snprintf(name, sizeof(name), "sluicebench-sub-%ld-%d-%zu", (long)getpid(), w->tag, i);
        bench_held_desc(&d, w->t, name, true);
        memset(&out, 0, sizeof(out));
        if (sluice_client_submit(w->c, &d, 1, &out, NULL, &err) == SLUICE_OK) {
            w->ids[i] = out.job_id;
            w->done++;
        } else {
            fprintf(stderr, "bench_submit: submit: %s\n", err.text);
        }
        sluice_rest_submit_clear(&out);
        sluice_jobdesc_clear(&d);
    }
    return NULL;
}

static double rate_line(const char *what, size_t ok, size_t n, double secs)
{
    double rate = secs > 0 ? (double)ok / secs : 0.0;

    printf("submit %-28s jobs=%zu/%zu wall_s=%8.3f ms/job=%8.2f jobs/s=%8.1f\n", what, ok, n, secs,
           ok ? secs * 1e3 / (double)ok : 0.0, rate);
    return rate;
}

int main(int argc, char **argv)
{
    size_t n = 200, nthreads = 4;
    bool sbatch = true;
    bench_target_t t;
    sluice_client_t *c;
    uint64_t *seq_ids, *par_ids, *sb_ids, *ru_ids;
    worker_t w[16];
    pthread_t th[16];
    double t0, r_seq, r_par, r_sb = 0, r_ru = 0, r_base;
    size_t ok_sb = 0, ok_ru = 0, ok_par = 0, cancelled = 0;
    char dir[] = "/tmp/sluice-bench-submit.XXXXXX";
    char script[128];
    int a;
    setvbuf(stdout, NULL, _IOLBF, 0);

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--jobs") == 0 && a + 1 < argc)
            n = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            nthreads = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--no-sbatch") == 0)
            sbatch = false;
        else {
            fprintf(stderr, "usage: bench_submit [--jobs 200] [--threads 4] [--no-sbatch]\n");
            return 0;
        }
    }
    if (n == 0)
        n = 1;
    if (nthreads == 0 || nthreads > 16)
        nthreads = 4;
    bench_target_from_env(&t);
    if ((c = bench_client_new(&t)) == NULL) {
        printf("bench_submit: NOT RUN (no testbed)\n");
        return 0;
    }
    seq_ids = calloc(n, sizeof(*seq_ids));
    par_ids = calloc(n, sizeof(*par_ids));
    sb_ids = calloc(n, sizeof(*sb_ids));
    ru_ids = calloc(n, sizeof(*ru_ids));
    if (!seq_ids || !par_ids || !sb_ids || !ru_ids)
        return 0;

    /* sluice, sequential, one keep-alive client (already negotiated) */
    memset(w, 0, sizeof(w));
    w[0].t = &t;
    w[0].c = c;
    w[0].ids = seq_ids;
    w[0].n = n;
    t0 = bench_now();
    submit_worker(&w[0]);
    r_seq = rate_line("sluice REST sequential", w[0].done, n, bench_now() - t0);

    /* sluice, `nthreads` in flight: one client per thread */
    memset(w, 0, sizeof(w));
    for (size_t k = 0; k < nthreads; k++) {
        w[k].t = &t;
        w[k].tag = (int)k + 1;
        w[k].ids = par_ids + k * (n / nthreads);
        w[k].n = n / nthreads + (k == nthreads - 1 ? n % nthreads : 0);
        if ((w[k].c = bench_client_new(&t)) == NULL)
            return 0;
    }
    t0 = bench_now();
    for (size_t k = 0; k < nthreads; k++)
        pthread_create(&th[k], NULL, submit_worker, &w[k]);
    for (size_t k = 0; k < nthreads; k++) {
        pthread_join(th[k], NULL);
        ok_par += w[k].done;
    }
    {
        char what[64];
        snprintf(what, sizeof(what), "sluice REST %zu in flight", nthreads);
        r_par = rate_line(what, ok_par, n, bench_now() - t0);
    }
    for (size_t k = 0; k < nthreads; k++)
        sluice_client_free(w[k].c);

    if (sbatch && bench_trivial_script(dir, script, sizeof(script)) == 0) {
        double secs = bench_sbatch_loop(NULL, script, t.partition, n, sb_ids, &ok_sb);
        r_sb = rate_line("sbatch --hold loop", ok_sb, n, secs);
        secs = bench_sbatch_loop(t.user, script, t.partition, n, ru_ids, &ok_ru);
        r_ru = rate_line("runuser+sbatch --hold loop", ok_ru, n, secs);
        bench_trivial_script_rm(dir, script);
    }
    r_base = r_sb > r_ru ? r_sb : r_ru;
    if (r_base > 0) {
        printf("submit ratio sequential: %.2fx (vs sbatch), %.2fx (vs runuser+sbatch)\n",
               r_sb > 0 ? r_seq / r_sb : 0.0, r_ru > 0 ? r_seq / r_ru : 0.0);
        printf("submit ratio %zu in flight: %.2fx (vs sbatch), %.2fx (vs runuser+sbatch)\n",
               nthreads, r_sb > 0 ? r_par / r_sb : 0.0, r_ru > 0 ? r_par / r_ru : 0.0);
        bench_target("submit sequential vs fastest sbatch loop", r_seq / r_base, 2.5, true);
        bench_target("submit 4 in flight vs fastest sbatch loop", r_par / r_base, 5.0, true);
    }
    cancelled += bench_cancel_all(c, seq_ids, n);
    cancelled += bench_cancel_all(c, par_ids, n);
    /* the plain sbatch loop's jobs belong to the calling user: scancel */
    for (size_t i = 0; i < n; i++) {
        char cmd[64];
        snprintf(cmd, sizeof(cmd), "scancel %llu", (unsigned long long)sb_ids[i]);
        if (sb_ids[i] > 0 && system(cmd) == 0)
            cancelled++;
    }
    cancelled += bench_cancel_all(c, ru_ids, n);
    printf("bench_submit: cancelled %zu jobs\n", cancelled);
    free(seq_ids);
    free(par_ids);
    free(sb_ids);
    free(ru_ids);
    sluice_client_free(c);
    return 0;
}
