/* SPDX-License-Identifier: Apache-2.0 */
/* bench_util.c - see bench_util.h. */
#include "bench_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sluice/auth.h>

double bench_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double bench_cpu(bool children)
{
    struct rusage ru;

    if (getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &ru) != 0)
        return 0.0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

double bench_pid_cpu(long pid)
{
    char path[64], line[1024];
    unsigned long ut = 0, st = 0;
    struct timespec ts;
    clockid_t clk;
    char *p;
    FILE *f;

    if (pid <= 0)
        return -1.0;
    /* The process's CPU clock: every thread's run time, exited ones too, in
     * ns (Linux lets any process read it).  /proc's utime + stime count
     * 10 ms ticks: 0.1 ms per launch over 100 launches. */
    if (clock_getcpuclockid((pid_t)pid, &clk) == 0 && clock_gettime(clk, &ts) == 0)
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((f = fopen(path, "r")) == NULL)
        return -1.0;
    p = fgets(line, sizeof(line), f);
    fclose(f);
    if (p == NULL || (p = strrchr(line, ')')) == NULL)
        return -1.0;
    /* after ") ": state(3) ... utime(14) stime(15) */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1.0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

double bench_pid_file_cpu(const char *pid_file)
{
    FILE *f = fopen(pid_file, "r");
    long pid = 0;

    if (f == NULL)
        return -1.0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    return bench_pid_cpu(pid);
}

void bench_cpu_snap(bench_cpu_snap_t *s)
{
    const char *dir = getenv("SLUICE_TESTBED_DIR");
    unsigned long long v[10] = {0};
    char path[512];
    FILE *f;

    memset(s, 0, sizeof(*s));
    s->t = bench_now();
    s->slurm = -1.0;
    if ((f = fopen("/proc/stat", "r")) != NULL) {
        /* cpu  user nice system idle iowait irq softirq steal guest guest_nice */
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
            for (int i = 0; i < 8; i++)
                s->all += (double)v[i];
            s->busy = s->all - (double)v[3] - (double)v[4];
        }
        fclose(f);
    }
    if (dir != NULL && dir[0] != '\0') {
        double a, b;

        snprintf(path, sizeof(path), "%s/run/slurm/slurmctld.pid", dir);
        a = bench_pid_file_cpu(path);
        snprintf(path, sizeof(path), "%s/run/rest/slurmrestd.pid", dir);
        b = bench_pid_file_cpu(path);
        s->slurm = a < 0 || b < 0 ? -1.0 : a + b;
    }
}

void bench_cpu_report(const bench_cpu_snap_t *a, const bench_cpu_snap_t *b, size_t jobs)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double tick = (double)sysconf(_SC_CLK_TCK);
    double secs = b->t - a->t, all = b->all - a->all, busy = b->busy - a->busy;
    double slurm_ms, rest_ms;

    if (secs <= 0 || all <= 0 || jobs == 0 || cores < 1 || tick <= 0)
        return;
    /* busy jiffies over every core's, in CPU seconds per job */
    rest_ms = busy / tick * 1e3 / (double)jobs;
    slurm_ms =
        a->slurm >= 0 && b->slurm >= a->slurm ? (b->slurm - a->slurm) * 1e3 / (double)jobs : -1.0;
    if (slurm_ms >= 0)
        rest_ms -= slurm_ms;
    printf("  CPU: machine busy %.0f%% of %ld cores over %.2f s; slurmctld + slurmrestd %.2f ms "
           "per job; everything else (slurmdbd, mariadb, this bench, sluice) %.2f ms per job\n",
           100.0 * busy / all, cores, secs, slurm_ms, rest_ms);
}

static const char *env_or(const char *a, const char *b, const char *dflt)
{
    const char *v = a ? getenv(a) : NULL;

    if (v == NULL || v[0] == '\0')
        v = b ? getenv(b) : NULL;
    return (v == NULL || v[0] == '\0') ? dflt : v;
}

void bench_target_from_env(bench_target_t *t)
{
    t->url = env_or("SLUICE_BENCH_URL", "SLUICE_TB_REST_URL", NULL);
    t->token_file = env_or("SLUICE_BENCH_TOKEN_FILE", "SLUICE_TB_TOKEN_FILE", NULL);
    t->user = env_or("SLUICE_BENCH_USER", "SLUICE_TB_USER", "sluiceuser");
    t->api_version = env_or("SLUICE_BENCH_API_VERSION", NULL, "auto");
    t->partition = env_or("SLUICE_BENCH_PARTITION", "SLUICE_TB_PARTITION", "debug");
    t->workdir = env_or("SLUICE_BENCH_WORKDIR", NULL, "/tmp");
    t->tb_dir = env_or("SLUICE_TESTBED_DIR", NULL, NULL);
}

sluice_client_t *bench_client_new(const bench_target_t *t)
{
    sluice_auth_opts_t ao = SLUICE_AUTH_OPTS_INIT;
    sluice_client_opts_t co = SLUICE_CLIENT_OPTS_INIT;
    sluice_auth_t *auth = NULL;
    sluice_client_t *c = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_call_t call;

    if (t->url == NULL || t->token_file == NULL) {
        fprintf(stderr, "bench: no REST URL or token file: eval \"$(deploy/testbed/env.sh)\" or "
                        "set SLUICE_BENCH_URL and SLUICE_BENCH_TOKEN_FILE\n");
        return NULL;
    }
    ao.kind = SLUICE_AUTH_TOKEN_FILE;
    ao.user = t->user;
    ao.path = t->token_file;
    if (sluice_auth_new(&auth, &ao, &err) != SLUICE_OK) {
        fprintf(stderr, "bench: token: %s\n", err.text);
        return NULL;
    }
    co.url = t->url;
    co.api_version = t->api_version;
    co.allow_insecure_http = 1;
    co.auth = auth;
    co.query_timeout_ms = 120000;
    co.submit_timeout_ms = 60000;
    if (sluice_client_new(&c, &co, &err) != SLUICE_OK) {
        fprintf(stderr, "bench: client: %s\n", err.text);
        sluice_auth_free(auth);
        return NULL;
    }
    /* 22.05's slurmrestd resets a connection now and then while it is
     * busy (seen in bench_serve_submit's rounds); a baseline that is lost
     * to that would count as 0 in the medians, so the probe gets 3 tries. */
    for (int attempt = 1;; attempt++) {
        struct timespec pause = {0, 200 * 1000 * 1000};

        memset(&call, 0, sizeof(call));
        sluice_error_clear(&err);
        if (sluice_client_negotiate(c, &call, &err) == SLUICE_OK)
            return c;
        fprintf(stderr, "bench: negotiate with %s (try %d of 3): %s\n", t->url, attempt, err.text);
        if (attempt == 3)
            break;
        nanosleep(&pause, NULL);
    }
    sluice_client_free(c);
    return NULL;
}

bool bench_diag(sluice_client_t *c, sluice_rest_diag_t *out)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    memset(out, 0, sizeof(*out));
    if (sluice_client_diag(c, out, NULL, &err) != SLUICE_OK) {
        fprintf(stderr, "bench: diag: %s\n", err.text);
        sluice_rest_diag_clear(out);
        return false;
    }
    return true;
}

static uint64_t total_of(const sluice_rest_diag_t *d, uint64_t *stats_out)
{
    uint64_t sum = 0, stats = 0;

    for (size_t i = 0; i < d->n_rpcs; i++) {
        if (d->rpcs[i].message_type && strcmp(d->rpcs[i].message_type, "REQUEST_STATS_INFO") == 0)
            stats += d->rpcs[i].count;
        else
            sum += d->rpcs[i].count;
    }
    if (stats_out)
        *stats_out = stats;
    return sum;
}

bool bench_rpc_total(sluice_client_t *c, uint64_t *total_out, uint64_t *stats_out)
{
    sluice_rest_diag_t d;

    if (!bench_diag(c, &d))
        return false;
    *total_out = total_of(&d, stats_out);
    sluice_rest_diag_clear(&d);
    return true;
}

void bench_print_rpc_deltas(const char *label,
                            const sluice_rest_diag_t *before,
                            const sluice_rest_diag_t *after)
{
    printf("  %s rpc deltas:", label);
    for (size_t i = 0; i < after->n_rpcs; i++) {
        const char *mt = after->rpcs[i].message_type;
        uint64_t was = mt ? sluice_rest_diag_rpc_count(before, mt) : 0;

        if (mt && after->rpcs[i].count != was)
            printf(" %s=%llu", mt, (unsigned long long)(after->rpcs[i].count - was));
    }
    printf("\n");
}

void bench_held_desc(sluice_jobdesc_t *d, const bench_target_t *t, const char *name, bool hold)
{
    memset(d, 0, sizeof(*d));
    d->name = strdup(name);
    d->partition = strdup(t->partition);
    d->time_limit = 5;
    d->nodes = 1;
    d->tasks_per_node = 1;
    d->workdir = strdup(t->workdir);
    d->std_out = strdup("/dev/null");
    d->std_err = strdup("/dev/null");
    d->hold = hold;
    d->script = strdup("#!/bin/sh\ntrue\n");
    (void)sluice_jobdesc_setenv(d, "PATH", "/usr/bin:/bin", NULL);
}

size_t bench_cancel_all(sluice_client_t *c, const uint64_t *ids, size_t n)
{
    size_t ok = 0;

    for (size_t i = 0; i < n; i++) {
        sluice_error_t err = SLUICE_ERROR_INIT;

        if (ids[i] > 0 && sluice_client_cancel(c, ids[i], NULL, NULL, &err) == SLUICE_OK)
            ok++;
    }
    return ok;
}

int bench_trivial_script(char *dir_template, char *script, size_t size)
{
    FILE *f;

    if (mkdtemp(dir_template) == NULL)
        return -1;
    chmod(dir_template, 0755);
    snprintf(script, size, "%s/job.sh", dir_template);
    if ((f = fopen(script, "w")) == NULL) {
        rmdir(dir_template);
        return -1;
    }
    fputs("#!/bin/sh\ntrue\n", f);
    fclose(f);
    chmod(script, 0755);
    return 0;
}

void bench_trivial_script_rm(const char *dir, const char *script)
{
    unlink(script);
    rmdir(dir);
}

/* Whether `s` is safe inside the single quotes of a shell word and as a
 * plain argument: letters, digits and ._/:-+= only. */
static bool shell_plain(const char *s)
{
    if (s == NULL || s[0] == '\0')
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && strchr("._/:-+=", *s) == NULL)
            return false;
    return true;
}

double bench_sbatch_loop(const char *runuser,
                         const char *script,
                         const char *partition,
                         size_t n,
                         uint64_t *ids,
                         size_t *ok_out)
{
    const char *root = getenv("SLUICE_TB_ROOT");
    const char *bin = getenv("SLUICE_TB_SLURM_BIN");
    const char *conf = getenv("SLURM_CONF");
    char loop[1024], cmd[2048], line[128];
    size_t i = 0;
    double t0;
    FILE *p;

    *ok_out = 0;
    memset(ids, 0, n * sizeof(*ids));
    if (!shell_plain(script) || !shell_plain(partition) ||
        (runuser != NULL && !shell_plain(runuser))) {
        fprintf(stderr, "bench: sbatch loop: unexpected characters in its arguments\n");
        return 0.0;
    }
    /* The whole loop is one shell: per call, what is timed is sbatch's own
     * cost (and runuser's), not a process start of ours.  One line per
     * call: the job id, or 0. */
    snprintf(loop, sizeof(loop),
             "i=0; while [ $i -lt %zu ]; do "
             "%s%s%s sbatch --hold --parsable -J sluicebench-sb-$i -p %s -t 5 -o /dev/null "
             "-e /dev/null --chdir /tmp %s 2>/dev/null || echo 0; i=$((i + 1)); done",
             n, runuser ? "runuser -u " : "", runuser ? runuser : "", runuser ? " --" : "",
             partition, script);
    /* A release in a root (24.11, 26.05): the loop runs inside it, in one
     * chroot, instead of the testbed's host wrapper around every sbatch (a
     * chroot per call, 5.5 ms each).  The script is under /tmp, which the
     * root shares. */
    if (root != NULL && root[0] != '\0') {
        if (!shell_plain(root) || !shell_plain(bin) || !shell_plain(conf)) {
            fprintf(stderr, "bench: sbatch loop: SLUICE_TB_ROOT, SLUICE_TB_SLURM_BIN or "
                            "SLURM_CONF missing or unexpected\n");
            return 0.0;
        }
        snprintf(cmd, sizeof(cmd),
                 "chroot '%s' /usr/bin/env PATH='%s:/usr/sbin:/usr/bin:/sbin:/bin' "
                 "SLURM_CONF='%s' /bin/sh -c '%s'",
                 root, bin, conf, loop);
    } else {
        snprintf(cmd, sizeof(cmd), "/bin/sh -c '%s'", loop);
    }
    t0 = bench_now();
    if ((p = popen(cmd, "r")) == NULL)
        return 0.0;
    while (i < n && fgets(line, sizeof(line), p) != NULL)
        if ((ids[i++] = strtoull(line, NULL, 10)) > 0)
            (*ok_out)++;
    pclose(p);
    return bench_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void bench_sort(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
}

double bench_pct(const double *sorted, size_t n, double p)
{
    size_t k;

    if (n == 0)
        return 0.0;
    k = (size_t)(p / 100.0 * (double)(n - 1) + 0.5);
    return sorted[k < n ? k : n - 1];
}

double bench_median(const double *sorted, size_t n)
{
    if (n == 0)
        return 0.0;
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

bool bench_target(const char *name, double measured, double target, bool higher_better)
{
    bool met = higher_better ? measured >= target : measured <= target;

    printf("target %-40s measured %10.2f %s %8.2f -> %s\n", name, measured,
           higher_better ? ">=" : "<=", target, met ? "met" : "MISSED");
    return met;
}

bool bench_target_no_data(const char *name, const char *why)
{
    printf("target %-40s no data (%s) -> MISSED\n", name, why);
    return false;
}
