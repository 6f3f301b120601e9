/* SPDX-License-Identifier: Apache-2.0 */
/* server_int.h - what the files of `sluice serve`'s HTTP API share (not
 * installed): the server struct and the functions one file offers another.
 *
 * Who owns what:
 * - server.c: everything that calls libmicrohttpd (the only file that
 *   includes <microhttpd.h>): daemon start and stop, the request entry,
 *   hostile-client limits, routing, the handlers and their responses,
 *   stream suspend/resume; also the launcher loop and the small request
 *   helpers below.
 * - server_access.c: the tokens file, the constant-time compare, callers
 *   and admins, TLS PEM reading and zeroing, the listening sockets.
 * - server_metrics.c: the Prometheus text of /v1/metrics and the
 *   launcher-cycle histogram.
 * - server_retention.c: sluice_server_prune and its helpers.
 * - server_cache.c: the read cache of GET /v1/launches/{id}.
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
#define VIEW_SLOTS 512u     /* cached GET /v1/launches/{id} answers */
#define N_CYCLE_BUCKETS 11u /* server_metrics.c checks its table against it */

struct MHD_Daemon; /* only server.c knows these */
struct MHD_Connection;

/* One cached answer of GET /v1/launches/{id}. */
typedef struct {
    char id[136];
    char *text;
    int64_t built_at_gseq; /* every event up to this one was seen before the read */
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
} caller_t;

typedef struct {
    struct sluice_server *s;
    int unix_socket; /* 1: the Unix socket listener (no bearer token needed) */
    int tls;         /* 1: the TCP listener speaks TLS */
} listener_t;

struct sluice_server {
    sluice_server_opts_t o;
    struct MHD_Daemon *d;  /* TCP, or NULL */
    struct MHD_Daemon *ud; /* Unix socket, or NULL */
    listener_t tcp_l, unix_l;
    char *socket_path; /* to unlink at free */
    uint16_t port;
    pthread_mutex_t mu;     /* the launcher and its store */
    sluice_store_t *rstore; /* the server's own connection for reads */
    pthread_mutex_t rmu;    /* rstore */
    pthread_mutex_t wait_mu;
    struct MHD_Connection **waiting;
    size_t n_waiting, cap_waiting;
    int no_more_suspend;
    pthread_t ticker;
    int ticker_started;
    atomic_int stopping;
    atomic_ullong transitions;
    atomic_ullong requests;
    /* hostile clients and metrics */
    atomic_uint open_conns;
    atomic_ullong refused_busy, refused_too_large, body_timeouts, pruned;
    atomic_ullong cycle_le[N_CYCLE_BUCKETS], cycle_count, cycle_errors, cycle_sum_us;
    /* the GET view cache (see get_launch) */
    pthread_mutex_t vmu;
    struct timespec started;
    view_slot_t views[VIEW_SLOTS];
    int64_t last_event[VIEW_SLOTS]; /* newest event gseq seen per slot */
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
    atomic_ullong pruned_logs;
};

/* ---- server.c ----------------------------------------------------------- */

void server_sleep_ms(unsigned ms);
/* Seconds since `t0` on CLOCK_MONOTONIC. */
double server_elapsed_s(const struct timespec *t0);
/* Parse a non-negative decimal; -1 when malformed. */
long long server_parse_count(const char *s);
/* Launch ids in a path: the characters a launch id may hold. */
int server_valid_id(const char *id, size_t len);

/* ---- server_access.c ---------------------------------------------------- */

/* Zero `n` bytes at `p` (NULL allowed) in a way the compiler keeps. */
void server_wipe(char *p, size_t n);
/* Read the tokens file `path` into s->tokens (mode 0600 or stricter, lines
 * `<caller> <token> [admin]`).  Errors name the line, never a token. */
sluice_err server_load_tokens(sluice_server_t *s, const char *path, sluice_error_t *err);
/* The tokens entry for an Authorization header value (borrowed; valid until
 * sluice_server_free), or NULL when it carries no valid bearer token. */
const token_t *server_authenticate(sluice_server_t *s, const char *authorization);
/* The Unix socket peer on `fd` as a caller; 0, or -1 when unknown. */
int server_peer_caller(int fd, caller_t *out);
/* Wipe and free the tokens and the TLS key (at sluice_server_free). */
void server_access_free(sluice_server_t *s);
/* Read a PEM file into a new buffer (caller wipes and frees). */
sluice_err
server_read_pem(const char *path, int is_key, char **out, size_t *len_out, sluice_error_t *err);
/* Parse HOST:PORT or [ADDR]:PORT; plain HTTP only on loopback. */
sluice_err server_parse_listen(
    const char *listen, int tls, struct sockaddr_storage *ss, int *v6, sluice_error_t *err);
/* Listening sockets: the fd, or -1 with `err` set. */
int server_tcp_listen(const struct sockaddr_storage *ss,
                      int v6,
                      const char *listen_s,
                      sluice_error_t *err);
int server_unix_listen(const char *path, unsigned mode, const char *group, sluice_error_t *err);

/* ---- server_metrics.c --------------------------------------------------- */

/* Count one launcher cycle that took `took` seconds and ended with `rc`. */
void server_metrics_cycle(sluice_server_t *s, double took, sluice_err rc);
/* The body of GET /v1/metrics in *text_out (caller frees).  SLUICE_ESTORE
 * when the store could not be read, SLUICE_ENOMEM. */
sluice_err server_metrics_render(sluice_server_t *s, char **text_out);

/* ---- server_retention.c ------------------------------------------------- */

/* Milliseconds on clock `id`. */
int64_t server_clock_ms(clockid_t id);

/* ---- server_cache.c ----------------------------------------------------- */

/* A copy of the kept answer for launch `id` (caller frees), or NULL when
 * none is current.  *upto_out is the event mark to build a new answer at
 * (-1: the store could not say; do not keep it). */
char *server_cache_get(sluice_server_t *s, const char *id, int64_t *upto_out);
/* Keep a copy of `text` as the answer for `id` built at mark `upto`. */
void server_cache_put(sluice_server_t *s, const char *id, int64_t upto, const char *text);
/* Drop every kept answer. */
void server_cache_clear(sluice_server_t *s);

#endif /* SLUICE_SERVER_INTERNAL_H */
