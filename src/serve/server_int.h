/* SPDX-License-Identifier: Apache-2.0 */
/* server_int.h - the server struct of `sluice serve`'s HTTP API and the
 * small types its files share (not installed).  Each file's functions are
 * declared in its own header.
 *
 * Who owns what (lowest first; a file calls only files above it):
 * - server_util.c: clocks, sleeps, decimal counts, launch ids, wiping.
 * - server_wake.c: asking the ticker to resume waiting streams now.
 * - server_tenant.c: the API seen from one tenant (keys, filters, the
 *   shape of what is sent, limits).
 * - server_text.c: UTF-8 and control-byte checks, %XX decoding.
 * - server_conns.c: each listener's open connections; request heads
 *   bounded in number and time.
 * - server_answer.c: an answer as plain data; JSON and problem bodies.
 * - server_req.c: a request as plain data; header and query lookups.
 * - server_access.c: the tokens file, the constant-time compare, callers
 *   and admins, TLS PEM reading and zeroing, the listening sockets.
 * - server_cache.c: the read cache of GET /v1/launches/{id}.
 * - server_feed.c: the shared feed of recent events the streams copy
 *   from (its own locks).
 * - server_retention.c: sluice_server_prune and its helpers.
 * - server_metrics.c: the Prometheus text of /v1/metrics and the
 *   launcher-cycle histogram.
 * - server_driver.c: the launcher loop (sluice_server_step, _run_launcher).
 * - server_ticker.c: the ticker thread (feed reads, which streams to
 *   resume; the resume itself is server.c's).
 * - handlers, each building an answer from a request: server_health.c
 *   (healthz, readyz, metrics), server_launches.c (list, get, cancel, the
 *   launch view), server_launch_post.c (POST /v1/launches), server_logs.c
 *   (job output), server_sse.c (the event stream), server_status.c
 *   (/v1/status), server_ui.c (the status page's files).
 * - server_routes.c: the route table and the dispatch through it.
 * - server.c: everything that calls libmicrohttpd (the only file that
 *   includes <microhttpd.h>): daemon start and stop, the request entry,
 *   hostile-client limits, bodies, sending answers, stream suspend/resume.
 *
 * Notes:
 * - The struct's comments name the mutex that guards each field; every
 *   file keeps to them.
 */
#ifndef SLUICE_SERVER_INTERNAL_H
#define SLUICE_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <sluice/error.h>
#include <sluice/fsm.h>
#include <sluice/server.h>

#define MAX_TOKENS 256
#define VIEW_SLOTS 4096u    /* cached GET /v1/launches/{id} answers (8-way: 512 sets) */
#define N_CYCLE_BUCKETS 11u /* server_metrics.c checks its table against it */

struct MHD_Daemon; /* only server.c uses these */
struct MHD_Connection;
struct server_feed; /* server_feed.h */

/* One cached answer of GET /v1/launches/{id}. */
typedef struct {
    char id[136];
    char *text;
    int64_t built_at_gseq; /* every event up to this one was seen before the read */
    int64_t version;       /* the launch's resource version in text (its ETag) */
    double built_s;        /* monotonic */
} view_slot_t;

typedef struct {
    char *name;
    char *token;
    int admin;
} token_t;

/* Who sent a request: the audit name and whether it may cancel any
 * launch. */
typedef struct {
    char name[SLUICE_FSM_NAME_MAX];
    int admin;
    char tenant[33]; /* its tenant (server_tenant.c); "" the default one */
} caller_t;

typedef struct {
    struct sluice_server *s;
    int unix_socket; /* 1: the Unix socket listener (no bearer token needed) */
    int tls;         /* 1: the TCP listener speaks TLS */
    /* its open connections (server_conns.c), under conn_mu: each listener
     * counts its own, so a flood on one never refuses the other */
    pthread_mutex_t conn_mu;
    struct server_conn *heads_first, *heads_last; /* first head not whole yet, oldest first */
    unsigned n_heads;                             /* in that list */
    unsigned n_open;                              /* every open connection */
} listener_t;

#define SERVER_HA_CLUSTERS 64 /* server_ha.c */

struct sluice_server {
    sluice_server_opts_t o;
    struct MHD_Daemon *d;  /* TCP, or NULL */
    struct MHD_Daemon *ud; /* Unix socket, or NULL */
    listener_t tcp_l, unix_l;
    char *socket_path; /* to unlink at free */
    uint16_t port;
    pthread_mutex_t mu;     /* the launcher and its store */
    pthread_mutex_t *cmu;   /* cluster i > 0's launcher (o.clusters), [0] unused */
    sluice_store_t *rstore; /* the server's own connection for reads */
    pthread_mutex_t rmu;    /* rstore's reads (a write, the cancel request,
                               relies on the store's own lock) */
    /* recent events for the streams (server_feed.c; locks of its own) */
    struct server_feed *feed;
    pthread_mutex_t wait_mu;
    struct server_waiter *waiting; /* server.c: a parked stream and its key */
    /* server.c's resume, for the ticker (server_ticker.h); set at start */
    void (*resume_locked)(sluice_server_t *s, const uint64_t *keys, size_t n);
    size_t n_waiting, cap_waiting;
    int no_more_suspend;
    /* wakes (server_wake_streams): the ticker's condition; its rounds */
    pthread_cond_t wake_cv;  /* with wait_mu */
    int wake_due;            /* under wait_mu: a wake is asked for */
    atomic_ullong round_gen; /* bumped under wait_mu after each round's feed read */
    int feed_failing;        /* ticker only: the last feed read failed */
    /* Event streams open now (server_sse.c): while there are none, the
     * ticker leaves the feed where it is (nobody reads it) and the first
     * stream to open catches it up (server_ticker_catch_up). */
    atomic_int streams;
    pthread_t ticker;
    int ticker_started;
    atomic_int stopping;
    atomic_ullong transitions;
    atomic_ullong requests;
    /* hostile clients and metrics */
    atomic_uint open_conns;
    atomic_ullong refused_busy, refused_too_large, body_timeouts, pruned;
    atomic_ullong head_timeouts, head_evictions; /* server_conns.c */
    atomic_ullong cycle_le[N_CYCLE_BUCKETS], cycle_count, cycle_errors, cycle_sum_us;
    atomic_ullong cycle_last_us, cycle_max_us; /* the newest and the longest cycle */
    atomic_llong cycle_last_end_ms;            /* CLOCK_MONOTONIC when it ended; 0: none yet */
    /* the GET view cache (server_cache.c) */
    pthread_mutex_t vmu;
    struct timespec started;
    view_slot_t views[VIEW_SLOTS];
    int64_t last_event[VIEW_SLOTS]; /* newest event gseq seen per event bucket of ids */
    int64_t seen_gseq;              /* events up to here are in last_event */
    pthread_mutex_t lookmu;         /* one look for new events at a time */
    atomic_int views_dirty;         /* this process wrote: look before the next answer */
    double looked_s;                /* under lookmu */
    atomic_ullong view_hits, view_misses;
    token_t tokens[MAX_TOKENS];
    size_t n_tokens;
    char *cert_pem, *key_pem; /* TLS material, wiped at free */
    size_t cert_len, key_len;
    int starting;      /* 1 while MHD_start_daemon runs: its messages go to mhd_msg */
    char mhd_msg[256]; /* libmicrohttpd's last message during start */
    pthread_mutex_t prune_mu;
    pthread_mutex_t tenant_mu; /* one tenant-limited accept at a time (server_tenant.c) */
    atomic_ullong pruned_logs;
    /* server_ha.c: the epoch each cluster's launcher recovered at (0: none;
     * sluice serve has at most 64 clusters; past that a cluster's loop
     * never runs with replicas). */
    int64_t ha_epoch[SERVER_HA_CLUSTERS];
};

/* server_clusters.c: cluster i's launcher and the mutex of its cycles
 * (0: o.launcher and s->mu); the launcher of the cluster named `name`
 * (NULL: the first; NULL when none has the name); wake every launcher. */
size_t server_cluster_count(const sluice_server_t *s);
sluice_launcher_t *server_cluster_launcher(const sluice_server_t *s, size_t i);
pthread_mutex_t *server_cluster_mu(sluice_server_t *s, size_t i);
sluice_launcher_t *server_launcher_for(const sluice_server_t *s, const char *name);
void server_wake_launchers(const sluice_server_t *s);

/* server_retention.c: count `n` launches a prune removed (the metric) and
 * drop every kept answer and kept event, since a prune writes no event and
 * nothing kept may outlive it.  NULL-safe. */
void server_count_pruned(sluice_server_t *s, size_t n);

#endif /* SLUICE_SERVER_INTERNAL_H */
