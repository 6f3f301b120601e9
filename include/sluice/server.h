/* SPDX-License-Identifier: Apache-2.0 */
/* server.h - the HTTP API of `sluice serve` (/v1, JSON, bearer tokens).
 *
 * Purpose:
 *   Expose launches (create, dry run, get, list, cancel), their job output
 *   (with offsets and follow), the store's transitions as Server-Sent
 *   Events, and health, readiness and Prometheus metrics.
 *
 * Notes:
 *   - src/serve/server.c is the only file that includes <microhttpd.h>.
 *   - TCP with TLS (tls_cert + tls_key, through libmicrohttpd's GnuTLS) may
 *     listen on any address; plain TCP only on loopback (127.0.0.0/8, ::1).
 *   - Over TCP every route but /v1/healthz needs `Authorization: Bearer
 *     <token>` with a token from the tokens file (mode 0600, lines
 *     `<caller-name> <token> [admin]`); the caller name is the audit name.
 *     The Unix socket (mode 0660 by default, optionally chowned to a group)
 *     needs no token: its file mode guards it, and its caller is
 *     "unix:<user>" from the peer's uid (SO_PEERCRED); root and the
 *     service's own user are admins there.
 *   - Ownership: the caller recorded on a launch's `accepted` event is its
 *     creator (`created_by`).  Every authenticated caller may read every
 *     launch; only the creator or an admin may cancel one (else 403).
 *   - Secret values (`secrets` in a launch request) are refused with 403
 *     over plain TCP; they are accepted over TLS and the Unix socket.
 *   - Retention: sluice_server_run_launcher() runs sluice_server_prune()
 *     at start and then every prune_interval_s.
 *   - The launcher and the store are borrowed.  The server serialises the
 *     launcher's cycles, cancels and readiness checks behind one mutex;
 *     drive the launcher through sluice_server_step() or
 *     sluice_server_run_launcher() so its cycles take the same mutex.
 *     Accepts do not take it (sluice_launcher_accept is thread-safe and
 *     wakes the launcher), so a POST never waits for a running cycle.  Reads (get, list, logs,
 * events, metrics) go through the server's own connection to the same store, so they never wait for
 * a launcher cycle.
 *   - Log follow and SSE never hold a worker thread while waiting: a
 *     waiting stream is suspended and resumed by a ticker.
 *   - GET /v1/launches/{id} answers are kept per launch and served again
 *     until an event of that launch appears (docs/service.md).
 */
#ifndef SLUICE_SERVER_H
#define SLUICE_SERVER_H

#include <stdint.h>

#include <sluice/common.h>
#include <sluice/client.h>
#include <sluice/config.h>
#include <sluice/error.h>
#include <sluice/launcher.h>
#include <sluice/leader.h>
#include <sluice/render.h>
#include <sluice/store.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest request body accepted (bigger: 413). */
#define SLUICE_SERVER_MAX_BODY (1024u * 1024u)

/* One cluster of a site with `clusters:` (sluice_server_opts_t.clusters). */
typedef struct {
    const char *name;            /* the cluster's name (borrowed) */
    sluice_launcher_t *launcher; /* its launcher (borrowed; the supervisor's) */
    sluice_client_t *client;     /* its REST client, for /v1/metrics (may be NULL) */
} sluice_server_cluster_t;

typedef struct {
    unsigned int version;             /* SLUICE_SERVER_OPTS_VERSION: first, always */
    sluice_launcher_t *launcher;      /* required, borrowed (the first cluster's) */
    sluice_store_t *store;            /* required, borrowed (the launcher's store); the
                                         server sets its commit callback
                                         (sluice_store_on_commit) until freed */
    const sluice_config_t *cfg;       /* required, borrowed */
    const sluice_study_runtime_t *rt; /* may be NULL */
    /* The study runtime file, re-read when it changes (wins over rt; may
     * be NULL; borrowed): see sluice_study_source_get(). */
    sluice_study_source_t *studies;
    const char *listen;       /* "127.0.0.1:PORT" or "[::1]:PORT" (PORT 0 = any), or NULL */
    const char *socket_path;  /* Unix socket to serve on, or NULL */
    unsigned socket_mode;     /* its file mode; 0 = 0660 */
    const char *tokens_file;  /* 0600 file of `<caller> <token> [admin]` lines; required
                                 with `listen` */
    const char *socket_group; /* group to chown the socket to, or NULL */
    const char *tls_cert;     /* PEM certificate (chain) file: TLS on `listen` */
    const char *tls_key;      /* PEM private key file (required with tls_cert) */
    /* Node address lookup for GET /v1/launches/{id}: copy the address of
     * `node` into buf and return 1, or return 0 when it is unknown (the
     * answer then says null).  NULL: every address is unknown. */
    int (*node_address)(void *arg, const char *node, char *buf, size_t size);
    /* The same in the launch's cluster (`cluster`: its name, NULL for a
     * launch of the first or only one); when set it is used instead of
     * node_address, with the same arg. */
    int (*node_address_in)(
        void *arg, const char *cluster, const char *node, char *buf, size_t size);
    void *node_address_arg;
    /* Retention (0: keep forever). */
    int64_t launches_max_age_s; /* finished launches */
    int64_t logs_max_age_s;     /* archived logs (the store's and this host's copies) */
    unsigned prune_interval_s;  /* 0 = 3600 */
    /* Rendering inputs (NULL: the process environment, stat(2)). */
    sluice_getenv_fn getenv_fn;
    void *getenv_arg;
    sluice_render_stat_fn stat_fn;
    void *stat_arg;
    /* Readiness of slurmrestd (it answers a ping): SLUICE_OK or an error
     * whose text says why.  NULL: not checked.  The token's time left is
     * the separate token_ttl_s check.  With several clusters, SLUICE_OK
     * while any one answers; a text left in err with SLUICE_OK names the
     * ones that did not (the answer shows it as the check's detail). */
    sluice_err (*ready)(void *arg, sluice_error_t *err);
    /* Seconds until the Slurm token expires, or < 0 when unknown. */
    int64_t (*token_ttl_s)(void *arg);
    void *cluster_arg;
    /* 1: ready and token_ttl_s touch nothing of the launcher's (a client
     * of their own, their own lock), so readiness is answered without
     * waiting for a running launcher cycle (a first cycle over 1,000 live
     * launches takes seconds).  0: they run under the launcher's mutex. */
    int ready_unlocked;
    unsigned threads;        /* worker threads; 0 = 4 */
    unsigned follow_poll_ms; /* how often waiting streams look again; 0 = 250 */
    /* Hostile or slow clients (docs/service.md).  conn_timeout_s: a
     * connection idle this long is closed, and so is one whose request body
     * has not arrived within it; 0 = 30.  max_connections: open connections
     * per listener past their first request head; past it a request gets
     * 503 with Retry-After, and past twice it and SLUICE_SERVER_CONN_SPARE
     * more the connection is closed at accept; 0 = 4096 (raise
     * RLIMIT_NOFILE to match). */
    unsigned conn_timeout_s;
    unsigned max_connections;
    /* A connection that has not sent its whole first request head
     * (request line and headers) within head_timeout_s of its accept is
     * closed, however slowly it trickles; 0 = 10.  Each listener (TCP, the
     * Unix socket) counts its own connections, and those still sending
     * their first head apart from the others: at most max_connections of
     * them, the oldest closed to make room for a new one, so slow clients
     * never take the slots of callers.  An answer without a caller (a
     * public route, a 401) closes its connection. */
    unsigned head_timeout_s;
    /* The Slurm REST client whose counters /v1/metrics shows (borrowed;
     * NULL: no RPC metrics).  Only its atomic counters are read. */
    sluice_client_t *client;
    /* Several clusters (NULL, 0: one, `launcher`): every cluster's launcher
     * by name, in the site's order; clusters[0].launcher is `launcher`.  A
     * POST goes to its launch's cluster's launcher; GET carries `cluster`
     * and the list filters by it.  sluice_server_run_launcher() drives the
     * first; the caller drives each other with sluice_server_run_cluster()
     * on a thread of its own (an outage of one never delays another).
     * Borrowed. */
    const sluice_server_cluster_t *clusters;
    size_t n_clusters;
    /* Replicas on one PostgreSQL store (leader.h; borrowed; NULL:
     * standalone).  The launcher runs only while this replica leads: it
     * recovers when it becomes leader and forgets everything when it stops
     * leading.  /v1/readyz and /v1/metrics show the role. */
    sluice_leader_t *leader;
} sluice_server_opts_t;

/* Every field but `version` zero: each one's documented default.  Declare options as
 * `sluice_server_opts_t o = SLUICE_SERVER_OPTS_INIT;` and set what differs. */
#define SLUICE_SERVER_OPTS_VERSION 1
#define SLUICE_SERVER_OPTS_INIT SLUICE_OPTS_INIT_V(SLUICE_SERVER_OPTS_VERSION)

/* Initialise `opts` as SLUICE_SERVER_OPTS_INIT does, for `version`
 * (pass SLUICE_SERVER_OPTS_VERSION).  SLUICE_EINVAL for NULL or a version
 * this library does not know (`opts` is then untouched). */
SLUICE_API sluice_err sluice_server_opts_init(sluice_server_opts_t *opts,
                                              unsigned int version,
                                              sluice_error_t *err);

/* Connections accepted past max_connections only to be told 503. */
#define SLUICE_SERVER_CONN_SPARE 64u

typedef struct sluice_server sluice_server_t;

/* Load the tokens and start listening.  Caller frees with
 * sluice_server_free().  SLUICE_EINVAL for a non-loopback address or a
 * malformed tokens file, SLUICE_ECONFIG for a tokens file readable by group
 * or others, SLUICE_ETRANSPORT when the address cannot be bound. */
SLUICE_API sluice_err sluice_server_new(sluice_server_t **out,
                                        const sluice_server_opts_t *opts,
                                        sluice_error_t *err);

/* Stop listening, end every stream and free.  NULL-safe. */
SLUICE_API void sluice_server_free(sluice_server_t *s);

/* The bound TCP port. */
SLUICE_API uint16_t sluice_server_port(const sluice_server_t *s);

/* One launcher cycle under the server's mutex. */
SLUICE_API sluice_err sluice_server_step(sluice_server_t *s, sluice_error_t *err);

/* Step, then sleep the launcher's interval (in short slices), until *stop
 * becomes non-zero.  Step errors are logged and retried. */
SLUICE_API sluice_err sluice_server_run_launcher(sluice_server_t *s,
                                                 volatile int *stop,
                                                 sluice_error_t *err);

/* The same loop for cluster i (1 .. n_clusters - 1) of opts.clusters,
 * under a mutex of that cluster's own (retention stays with the first's
 * loop).  Run each on a thread of its own.  SLUICE_EINVAL for another i. */
SLUICE_API sluice_err sluice_server_run_cluster(sluice_server_t *s,
                                                size_t i,
                                                volatile int *stop,
                                                sluice_error_t *err);

/* One retention pass at `now_ms` (0 = now): delete finished launches
 * older than launches_max_age_s from the store (with their archived logs),
 * and the archived logs older than logs_max_age_s: the store's copies
 * (sluice_store_prune_logs()) and this host's directories
 * (<state>/artifacts/<id>/), never those of a live launch.  Counts go to
 * *launches_out and *logs_out (launches whose stored logs went, and
 * directories; either may be NULL) and to the totals of /v1/metrics
 * (sluice_launches_pruned_total, sluice_logs_pruned_total). */
SLUICE_API sluice_err sluice_server_prune(sluice_server_t *s,
                                          int64_t now_ms,
                                          size_t *launches_out,
                                          size_t *logs_out,
                                          sluice_error_t *err);

/* Count one transition for /v1/metrics (call from the launcher's
 * on_transition callback, which runs after the event's commit); it also
 * wakes the waiting event streams, so watchers see the transition at once
 * instead of at the next follow_poll_ms tick.  NULL-safe. */
SLUICE_API void sluice_server_count_transition(sluice_server_t *s);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_SERVER_H */
