/* SPDX-License-Identifier: Apache-2.0 */
/* bench_fanout.c - SSE fan-out of `sluice serve` (issue 16): W concurrent
 * per-launch watchers (default 200) must each receive every event of their
 * launch within 50 ms of its store commit.
 *
 * 1. Accepts W held launches into a fresh store (the library, as
 *    bench_serve does), starts the real binary on it, reads the store's
 *    newest gseq M (the library, read-only) and opens one event stream per
 *    launch at once: GET /v1/launches/{id}/events?after=M (--route
 *    launch), or /v1/events?launch_id={id}&after=M (--route events).  (Not
 *    since=now: an event committed between the request and its handling
 *    is rightly not on such a stream, which made `missed` flaky.)  Where
 *    the server answers the per-launch route with 404 (a build without
 *    it), that watcher falls back to /v1/events and keeps only its
 *    launch's events.  One thread reads every stream (poll()).
 * 2. The service submits the W launches (held jobs: PENDING forever); once
 *    every launch is PENDING, the benchmark cancels their jobs in Slurm
 *    (REST DELETE to slurmrestd; the testbed environment, bench_util.h) and
 *    waits until all launches are DONE.  Every event those steps commit
 *    (submit-started, submitted, observed, the final observed...) is a
 *    sample.
 * 3. Latency of one sample = the time this process read the frame
 *    (CLOCK_REALTIME) - the event's `time` (epoch ms).  The launcher and the
 *    HTTP handlers take that time just BEFORE the store commit (the event
 *    row carries it), so the figure includes the commit itself (its fsync)
 *    and the ms truncation: an upper bound on commit -> delivery, never an
 *    underestimate.  (Events the launcher commits as one batch carry each
 *    its own staging time, so theirs also includes the rest of the
 *    batch's staging.)  Events committed before the watcher's stream is
 *    open (its answer head read) are its catch-up: left out of the
 *    samples, not of the completeness check.  How long the streams took
 *    to open is printed on its own line.  The reader thread runs while
 *    the watchers open, so each is read from its first frame on.
 * 4. Completeness: after the service stops, the store is read with the
 *    library and every event of each launch after M must have been
 *    received (`missed` counts the rest, `repeated` a frame whose gseq is
 *    not above the watcher's previous one); on the per-launch route up to
 *    the launch's DONE event, where that stream ends by contract.
 *
 * usage: bench_fanout --config SITE.yaml [--watchers 200]
 *                     [--route launch|events] [--state-dir DIR]
 * Environment: SLUICE_BIN (default ./sluice).  Exit 0 whenever it ran.
 */
#define _GNU_SOURCE 1 /* memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <sluice/accept.h>
#include <sluice/config.h>
#include <sluice/store.h>
#include <sluice/supervisor.h>

#include "bench_http.h"
#include "bench_util.h"
#include "site/config_model.h"

extern char **environ;

#define API_TOKEN "bench-fanout-token-0123456789abcdef"
#define MAX_SAMPLES 200000

static const char *env_get(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

static double bench_loadavg1(void)
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

static double real_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* ---- 1. held launches ----------------------------------------------------- */

static size_t accept_held(const sluice_config_t *cfg, const char *dir, size_t n, char **ids)
{
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t so = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t accepted = 0;

    so.state_dir = dir;
    if (sluice_supervisor_open(&sup, cfg, &so, NULL, &err) != SLUICE_OK) {
        fprintf(stderr, "bench_fanout: setup: %s\n", err.text);
        goto out;
    }
    ao.getenv_fn = env_get;
    ao.caller = "bench";
    ao.hold = true;
    for (size_t i = 0; i < n; i++) {
        sluice_accept_t *a = NULL;
        char id[96], text[1024];
        int len;

        snprintf(id, sizeof(id), "bf-%ld-%zu", (long)getpid(), i);
        len = snprintf(text, sizeof(text),
                       "{\"launch_id\": \"%s\", \"site\": \"%s\", \"profile\": \"none\", "
                       "\"command\": \"/bin/true\", \"time_limit\": 5, \"pools\": [{\"name\": "
                       "\"main\", \"nodes\": 1, \"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
                       id, cfg->site_name);
        if (sluice_accept(&a, NULL, NULL, sluice_supervisor_launcher(sup), cfg, text, (size_t)len,
                          &ao, &err) != SLUICE_OK)
            fprintf(stderr, "bench_fanout: accept %s: %s\n", id, err.text);
        else if ((ids[accepted] = strdup(sluice_accept_launch_id(a))) != NULL)
            accepted++;
        sluice_accept_free(a);
    }
out:
    sluice_supervisor_close(sup);
    return accepted;
}

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

/* ---- 2. the watchers ---------------------------------------------------- */

#define BY_NAME 16

/* The samples of one event name: how many, how many over 50 ms, the
 * longest. */
typedef struct {
    char name[40];
    size_t n, over;
    double max;
} by_name_t;

static void by_name_add(by_name_t *t, const char *name, double ms)
{
    size_t i;

    for (i = 0; i < BY_NAME && t[i].name[0] != '\0'; i++)
        if (strcmp(t[i].name, name) == 0)
            break;
    if (i == BY_NAME)
        return;
    if (t[i].name[0] == '\0')
        snprintf(t[i].name, sizeof(t[i].name), "%s", name);
    t[i].n++;
    t[i].over += ms > 50.0;
    if (ms > t[i].max)
        t[i].max = ms;
}

typedef enum { W_HEAD, W_SIZE, W_DATA, W_CRLF, W_DEAD } wstate_t;

typedef struct {
    const char *id;
    int fd;
    int global; /* on /v1/events, filtering by launch_id here */
    wstate_t st;
    int64_t since_ms;  /* events at or before this are not samples: the stream's open */
    double sent_ms;    /* when the request was sent */
    int64_t last_gseq; /* the newest frame received */
    char raw[8192];    /* undecoded bytes */
    size_t rlen;
    size_t chunk_left;
    char *text; /* de-chunked stream, complete lines consumed */
    size_t tlen, tcap;
    size_t received; /* frames of this launch after the mark */
    size_t repeated; /* frames at or below last_gseq */
} watcher_t;

typedef struct {
    watcher_t *w;
    size_t n;
    uint16_t port;
    const char *route;
    atomic_int stop;
    double *lat; /* ms */
    size_t n_lat;
    by_name_t names[BY_NAME]; /* the samples by event name */
    size_t fallbacks, errors;
    double *lat_t;   /* each sample's event time (ms) */
    double all_open; /* when the last stream opened (ms) */
    double *open_ms; /* per watcher: request sent -> answer head read */
    size_t n_open_ms;
    atomic_size_t n_open; /* w[0..n_open) are open: the reader polls them while the rest open */
    FILE *dump;           /* $BENCH_FANOUT_SAMPLES: every sample (time, read, gseq, name, launch) */
    int64_t mark;         /* the store's newest gseq before the watchers connected */
} watch_t;

static int w_open(watch_t *W, watcher_t *w)
{
    struct sockaddr_in a;
    char req[512];
    int one = 1, n;

    if ((w->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(W->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(w->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(w->fd);
        w->fd = -1;
        return -1;
    }
    if (w->global)
        n = snprintf(req, sizeof(req), "GET /v1/events?launch_id=%s&after=%lld HTTP/1.1\r\n", w->id,
                     (long long)W->mark);
    else
        n = snprintf(req, sizeof(req), "GET /v1/launches/%s/events?after=%lld HTTP/1.1\r\n", w->id,
                     (long long)W->mark);
    n +=
        snprintf(req + n, sizeof(req) - (size_t)n,
                 "Host: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n",
                 API_TOKEN);
    w->since_ms = INT64_MAX; /* no samples before the stream is open */
    w->sent_ms = real_now();
    if (send(w->fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        close(w->fd);
        w->fd = -1;
        return -1;
    }
    w->st = W_HEAD;
    w->rlen = 0;
    w->tlen = 0;
    return 0;
}

/* One complete `data: ` line of w's stream. */
static void w_line(watch_t *W, watcher_t *w, const char *line, size_t len, double t_read)
{
    json_t *j;
    const char *lid;
    int64_t t, g;

    if (len < 6 || strncmp(line, "data: ", 6) != 0)
        return;
    if ((j = json_loadb(line + 6, len - 6, 0, NULL)) == NULL)
        return;
    lid = json_string_value(json_object_get(j, "launch_id"));
    t = (int64_t)json_integer_value(json_object_get(j, "time"));
    g = (int64_t)json_integer_value(json_object_get(j, "gseq"));
    if ((lid == NULL || strcmp(lid, w->id) == 0) && g > W->mark) {
        if (g <= w->last_gseq)
            w->repeated++;
        else
            w->received++;
        w->last_gseq = g > w->last_gseq ? g : w->last_gseq;
        if (t > w->since_ms && W->n_lat < MAX_SAMPLES) {
            const char *name = json_string_value(json_object_get(j, "name"));

            W->lat_t[W->n_lat] = (double)t;
            W->lat[W->n_lat++] = t_read - (double)t;
            by_name_add(W->names, name ? name : "?", t_read - (double)t);
            if (W->dump != NULL)
                fprintf(W->dump, "%" PRId64 " %.1f %" PRId64 " %s %s\n", t, t_read, g,
                        name ? name : "?", w->id);
        }
    }
    json_decref(j);
}

static void w_text(watch_t *W, watcher_t *w, const char *p, size_t n, double t_read)
{
    size_t start = 0;

    if (w->tlen + n > w->tcap) {
        size_t cap = (w->tlen + n) * 2 + 1024;
        char *np = realloc(w->text, cap);
        if (np == NULL)
            return;
        w->text = np;
        w->tcap = cap;
    }
    memcpy(w->text + w->tlen, p, n);
    w->tlen += n;
    for (size_t i = 0; i < w->tlen; i++) {
        if (w->text[i] == '\n') {
            w_line(W, w, w->text + start, i - start, t_read);
            start = i + 1;
        }
    }
    memmove(w->text, w->text + start, w->tlen - start);
    w->tlen -= start;
}

/* Decode what is in w->raw (HTTP head, then chunked body). */
static void w_decode(watch_t *W, watcher_t *w, double t_read)
{
    size_t off = 0;

    for (;;) {
        char *eol;
        if (w->st == W_HEAD) {
            char *end = memmem(w->raw + off, w->rlen - off, "\r\n\r\n", 4);
            int status = 0;
            if (end == NULL)
                break;
            sscanf(w->raw + off, "HTTP/1.%*d %d", &status);
            if (status != 200) {
                if (status == 404 && !w->global) {
                    w->global = 1; /* no per-launch route: the global one, filtered */
                    W->fallbacks++;
                    close(w->fd);
                    if (w_open(W, w) != 0)
                        w->st = W_DEAD;
                    return;
                }
                W->errors++;
                w->st = W_DEAD;
                return;
            }
            off = (size_t)(end + 4 - w->raw);
            w->st = W_SIZE;
            /* The stream is open: what is committed from now on is fan-out
             * (a sample); what came before is its catch-up. */
            w->since_ms = (int64_t)t_read;
            if (W->n_open_ms < W->n)
                W->open_ms[W->n_open_ms++] = t_read - w->sent_ms;
            if (t_read > W->all_open)
                W->all_open = t_read; /* the last stream's open, at the end */
            if (W->dump != NULL)
                fprintf(W->dump, "%.1f %.1f 0 head %s\n", w->sent_ms, t_read, w->id);
        } else if (w->st == W_SIZE) {
            eol = memmem(w->raw + off, w->rlen - off, "\r\n", 2);
            if (eol == NULL)
                break;
            w->chunk_left = strtoul(w->raw + off, NULL, 16);
            off = (size_t)(eol + 2 - w->raw);
            w->st = w->chunk_left == 0 ? W_DEAD : W_DATA;
            if (w->st == W_DEAD)
                return; /* the stream ended (the launch is done) */
        } else if (w->st == W_DATA) {
            size_t k = w->rlen - off < w->chunk_left ? w->rlen - off : w->chunk_left;
            if (k == 0)
                break;
            w_text(W, w, w->raw + off, k, t_read);
            off += k;
            w->chunk_left -= k;
            if (w->chunk_left == 0)
                w->st = W_CRLF;
        } else if (w->st == W_CRLF) {
            if (w->rlen - off < 2)
                break;
            off += 2;
            w->st = W_SIZE;
        } else {
            return;
        }
    }
    memmove(w->raw, w->raw + off, w->rlen - off);
    w->rlen -= off;
}

static void *watch_main(void *arg)
{
    watch_t *W = arg;
    struct pollfd *pf = calloc(W->n, sizeof(*pf));

    if (pf == NULL)
        return NULL;
    while (!atomic_load(&W->stop)) {
        size_t k = 0;
        int r;

        size_t n = atomic_load(&W->n_open);

        for (size_t i = 0; i < n; i++) {
            pf[i].fd = W->w[i].st == W_DEAD ? -1 : W->w[i].fd;
            pf[i].events = POLLIN;
            pf[i].revents = 0;
        }
        /* short waits while watchers still open, so that each is read from
         * its first frame on */
        if ((r = poll(pf, n, n < W->n ? 2 : 100)) <= 0)
            continue;
        {
            double t_read = real_now();
            for (size_t i = 0; i < n && k < (size_t)r; i++) {
                watcher_t *w = &W->w[i];
                ssize_t got;
                if (pf[i].revents == 0)
                    continue;
                k++;
                got = recv(w->fd, w->raw + w->rlen, sizeof(w->raw) - w->rlen, 0);
                if (got <= 0) {
                    w->st = W_DEAD;
                    continue;
                }
                w->rlen += (size_t)got;
                w_decode(W, w, t_read);
            }
        }
    }
    free(pf);
    return NULL;
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    const char *config = NULL, *state = NULL, *route = "launch", *bin = getenv("SLUICE_BIN");
    size_t n = 200;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char base[] = "/var/tmp/sluice-bench-fanout.XXXXXX";
    char dir[600], tokens[600], log[600], cmd[700];
    char **ids = NULL;
    size_t accepted = 0;
    pid_t pid = -1;
    uint16_t port = 0;
    watch_t W;
    pthread_t th;
    int started = 0;
    double t0;
    long c;
    FILE *f;

    memset(&W, 0, sizeof(W));
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--config") == 0 && a + 1 < argc)
            config = argv[++a];
        else if (strcmp(argv[a], "--watchers") == 0 && a + 1 < argc)
            n = strtoul(argv[++a], NULL, 10);
        else if (strcmp(argv[a], "--route") == 0 && a + 1 < argc)
            route = argv[++a];
        else if (strcmp(argv[a], "--state-dir") == 0 && a + 1 < argc)
            state = argv[++a];
        else {
            fprintf(stderr, "usage: bench_fanout --config SITE.yaml [--watchers 200] "
                            "[--route launch|events] [--state-dir DIR]\n");
            return 0;
        }
    }
    if (config == NULL || n == 0 || n > 1000) {
        printf("bench_fanout: NOT RUN (no --config, or --watchers not in 1..1000)\n");
        return 0;
    }
    if (bin == NULL)
        bin = "./sluice";
    if (access(bin, X_OK) != 0) {
        printf("bench_fanout: NOT RUN (no sluice binary at %s; set SLUICE_BIN)\n", bin);
        return 0;
    }
    co.path = config;
    co.envp = (const char *const *)environ;
    if (sluice_config_load(&co, &cfg, &err) != SLUICE_OK) {
        printf("bench_fanout: NOT RUN (config: %s)\n", err.text);
        return 0;
    }
    if (state == NULL && (state = mkdtemp(base)) == NULL) {
        printf("bench_fanout: NOT RUN (no state directory)\n");
        sluice_config_free(cfg);
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s/store", state);
    snprintf(tokens, sizeof(tokens), "%s/tokens", state);
    snprintf(log, sizeof(log), "%s/serve.log", state);
    if ((f = fopen(tokens, "w")) == NULL) {
        printf("bench_fanout: NOT RUN (cannot write %s)\n", tokens);
        goto out;
    }
    fprintf(f, "bench %s\n", API_TOKEN);
    fclose(f);
    chmod(tokens, 0600);
    ids = calloc(n, sizeof(*ids));
    W.w = calloc(n, sizeof(*W.w));
    W.lat = calloc(MAX_SAMPLES, sizeof(*W.lat));
    W.lat_t = calloc(MAX_SAMPLES, sizeof(*W.lat_t));
    W.open_ms = calloc(n, sizeof(*W.open_ms));
    if (ids == NULL || W.w == NULL || W.lat == NULL || W.lat_t == NULL || W.open_ms == NULL)
        goto out;
    for (size_t i = 0; i < n; i++)
        W.w[i].fd = -1;
    if ((accepted = accept_held(cfg, dir, n, ids)) < n) {
        printf("bench_fanout: NOT RUN (accepted %zu of %zu launches)\n", accepted, n);
        goto out;
    }
    if ((pid = bench_serve_start(bin, config, dir, tokens, log, NULL, &port)) < 0) {
        printf("bench_fanout: NOT RUN (sluice serve did not start; see %s)\n", log);
        pid = -1;
        goto out;
    }
    /* every watcher connected before the service's first submits land,
     * each from the store's newest event now */
    W.n = n;
    W.port = port;
    W.route = route;
    if (getenv("BENCH_FANOUT_SAMPLES") != NULL)
        W.dump = fopen(getenv("BENCH_FANOUT_SAMPLES"), "w");
    {
        sluice_store_t *store = NULL;

        if (sluice_store_open(&store, dir, &err) != SLUICE_OK ||
            sluice_store_last_gseq(store, &W.mark, &err) != SLUICE_OK) {
            printf("bench_fanout: NOT RUN (store: %s)\n", err.text);
            sluice_store_close(store);
            goto out;
        }
        sluice_store_close(store);
    }
    for (size_t i = 0; i < n; i++)
        W.w[i].fd = -1;
    /* The reader runs while the watchers open: each is read from the
     * moment it is open (a watcher opened early is not left unread while
     * the others connect). */
    if (pthread_create(&th, NULL, watch_main, &W) != 0)
        goto out;
    started = 1;
    for (size_t i = 0; i < n; i++) {
        W.w[i].id = ids[i];
        W.w[i].global = strcmp(route, "events") == 0;
        if (w_open(&W, &W.w[i]) != 0)
            W.w[i].st = W_DEAD;
        atomic_store(&W.n_open, i + 1);
    }
    printf("fanout: %zu watchers on %s, service pid %ld port %u, load %.2f\n", n,
           strcmp(route, "events") == 0 ? "/v1/events?launch_id=ID&after=M"
                                        : "/v1/launches/ID/events?after=M",
           (long)pid, (unsigned)port, bench_loadavg1());
    t0 = bench_now();
    while (bench_now() - t0 < 120.0 && (c = count_state(port, "PENDING")) < (long)n)
        usleep(200000);
    printf("fanout: %ld of %zu PENDING after %.1f s\n", count_state(port, "PENDING"), n,
           bench_now() - t0);
    usleep(1000000);
    {
        /* Cancel the jobs in Slurm itself (REST DELETE to slurmrestd): the
         * launcher observes CANCELLED and ends each launch, a burst of
         * commits in its cycles.  (DELETE /v1/launches/{id} would also do,
         * but each one waits for the launcher's mutex, a whole cycle.) */
        bench_target_t tg;
        sluice_client_t *cl;
        bench_conn_t *bc = bench_conn_new(port, API_TOKEN);
        char *body = NULL;
        json_t *j = NULL, *it;
        uint64_t *jobs = calloc(n, sizeof(*jobs));
        size_t nj = 0, k;

        bench_target_from_env(&tg);
        if (bc != NULL &&
            bench_conn_request(bc, "GET", "/v1/launches?limit=1000", NULL, &body) == 200)
            j = json_loads(body, 0, NULL);
        json_array_foreach(json_object_get(j, "items"), k, it)
        {
            json_t *ji = json_array_get(json_object_get(it, "job_ids"), 0);
            if (jobs != NULL && nj < n && json_is_integer(ji))
                jobs[nj++] = (uint64_t)json_integer_value(ji);
        }
        json_decref(j);
        free(body);
        bench_conn_free(bc);
        if ((cl = bench_client_new(&tg)) != NULL) {
            printf("fanout: %zu of %zu jobs cancelled in Slurm\n", bench_cancel_all(cl, jobs, nj),
                   nj);
            sluice_client_free(cl);
        }
        free(jobs);
    }
    t0 = bench_now();
    while (bench_now() - t0 < 120.0 && (c = count_state(port, "DONE")) < (long)n)
        usleep(200000);
    printf("fanout: %ld of %zu DONE after %.1f s\n", count_state(port, "DONE"), n,
           bench_now() - t0);
    usleep(1500000); /* the last frames */
out:
    if (started) {
        atomic_store(&W.stop, 1);
        pthread_join(th, NULL);
    }
    if (W.dump != NULL)
        fclose(W.dump);
    bench_serve_stop(pid);
    if (started) {
        sluice_store_t *store = NULL;
        size_t expected = 0, received = 0, missed = 0, repeated = 0, over = 0, n_late = 0,
               over_late = 0;

        if (sluice_store_open(&store, dir, &err) == SLUICE_OK) {
            for (size_t i = 0; i < n; i++) {
                json_t *evs = NULL, *e;
                size_t k, mine = 0;
                if (sluice_store_read_events(store, ids[i], 1, 0, &evs, &err) != SLUICE_OK)
                    continue;
                json_array_foreach(evs, k, e)
                {
                    const char *st = json_string_value(json_object_get(e, "state"));
                    if ((int64_t)json_integer_value(json_object_get(e, "gseq")) > W.mark)
                        mine++;
                    /* The per-launch stream ends with the event that made
                     * the launch DONE: later bookkeeping (archived) is on
                     * /v1/events only, by contract (docs/api.md). */
                    if (!W.w[i].global && st != NULL && strcmp(st, "DONE") == 0)
                        break;
                }
                json_decref(evs);
                expected += mine;
                received += W.w[i].received;
                repeated += W.w[i].repeated;
                if (W.w[i].received < mine)
                    missed += mine - W.w[i].received;
            }
            sluice_store_close(store);
        }
        /* the samples committed once every stream was open: the fan-out
         * of 200 concurrent watchers, without the storm of 200 opens */
        for (size_t i = 0; i < W.n_lat; i++)
            if (W.lat_t[i] > W.all_open)
                W.lat_t[n_late++] = W.lat[i];
        bench_sort(W.lat_t, n_late);
        for (size_t i = 0; i < n_late; i++)
            over_late += W.lat_t[i] > 50.0;
        bench_sort(W.lat, W.n_lat);
        for (size_t i = 0; i < W.n_lat; i++)
            over += W.lat[i] > 50.0;
        printf("fanout: mark M = gseq %lld\n", (long long)W.mark);
        printf("fanout: %zu events committed after the mark, %zu received, %zu missed, %zu "
               "repeated; %zu watchers fell back to /v1/events, %zu stream errors\n",
               expected, received, missed, repeated, W.fallbacks, W.errors);
        printf("fanout latency ms (event time -> frame read; includes the commit): p50 %.1f  "
               "p90 %.1f  p99 %.1f  max %.1f; over 50 ms: %zu of %zu (load %.2f)\n",
               bench_median(W.lat, W.n_lat), bench_pct(W.lat, W.n_lat, 90),
               bench_pct(W.lat, W.n_lat, 99), W.n_lat ? W.lat[W.n_lat - 1] : -1.0, over, W.n_lat,
               bench_loadavg1());
        bench_sort(W.open_ms, W.n_open_ms);
        printf("fanout: %zu streams open (request sent -> answer head) p50 %.1f  p90 %.1f  max "
               "%.1f ms, while the service submits the launches it started with; an event "
               "committed before its stream is open is catch-up (in the completeness check, not "
               "a sample)\n",
               W.n_open_ms, bench_median(W.open_ms, W.n_open_ms),
               bench_pct(W.open_ms, W.n_open_ms, 90),
               W.n_open_ms ? W.open_ms[W.n_open_ms - 1] : -1.0);
        printf("fanout latency ms once all %zu streams were open: p50 %.1f  p90 %.1f  p99 %.1f  "
               "max %.1f; over 50 ms: %zu of %zu\n",
               W.n_open_ms, bench_median(W.lat_t, n_late), bench_pct(W.lat_t, n_late, 90),
               bench_pct(W.lat_t, n_late, 99), n_late ? W.lat_t[n_late - 1] : -1.0, over_late,
               n_late);
        for (size_t i = 0; i < BY_NAME && W.names[i].name[0] != '\0'; i++)
            printf("fanout:   %-20s %4zu samples, %4zu over 50 ms, max %.1f ms\n", W.names[i].name,
                   W.names[i].n, W.names[i].over, W.names[i].max);
        bench_target("fanout: events missed", (double)missed, 0.0, false);
        bench_target("fanout: events repeated", (double)repeated, 0.0, false);
        bench_target("fanout: max latency commit -> watcher (ms)",
                     W.n_lat ? W.lat[W.n_lat - 1] : 1e9, 50.0, false);
        bench_target("fanout: p99 latency commit -> watcher (ms)",
                     W.n_lat ? bench_pct(W.lat, W.n_lat, 99) : 1e9, 50.0, false);
        bench_target("fanout: p99 latency, all streams open (ms)",
                     n_late ? bench_pct(W.lat_t, n_late, 99) : 1e9, 50.0, false);
        bench_target("fanout: max latency, all streams open (ms)",
                     n_late ? W.lat_t[n_late - 1] : 1e9, 50.0, false);
    }
    for (size_t i = 0; W.w && i < n; i++) {
        if (W.w[i].fd >= 0)
            close(W.w[i].fd);
        free(W.w[i].text);
    }
    for (size_t i = 0; ids && i < n; i++)
        free(ids[i]);
    free(ids);
    free(W.w);
    free(W.open_ms);
    free(W.lat_t);
    free(W.lat);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state);
    if (strncmp(state, "/var/tmp/sluice-bench-fanout.", 29) == 0 && getenv("BENCH_KEEP") == NULL &&
        system(cmd) != 0)
        fprintf(stderr, "bench_fanout: could not remove %s\n", state);
    sluice_config_free(cfg);
    return 0;
}
