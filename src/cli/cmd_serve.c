/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_serve.c - `sluice serve`: the supervisor and the HTTP API in one
 * process.
 *
 * The process takes the store's supervisor lock, recovers every live
 * launch, then runs the launcher's cycles in the main thread while the
 * HTTP server (its own threads) accepts, lists, cancels and streams.  Both
 * share the launcher behind the server's mutex.  SIGTERM and SIGINT stop
 * the loop; the server then closes every stream and exits 0.
 *
 * Notes:
 * - Flags override the site's `server:` block (server.listen, ...); the
 *   `retention:` block sets how long finished launches and archived logs
 *   are kept.
 * - TCP with --tls-cert/--tls-key may listen on any address; plain HTTP
 *   only on loopback.
 * - secret_env names in requests are read from this process's environment.
 * - The store, the REST client, the cluster operations (submit.in_flight
 *   POSTs at once), staging and the recovered launcher are one
 *   sluice_supervisor_open(); the node-address client is this file's.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <sluice/server.h>
#include <sluice/supervisor.h>

#include "args.h"
#include "cli.h"
#include "prepare.h"
#include "site/config_model.h"

static volatile int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

/* The options of serve alone (NULL: the site's server: block). */
typedef struct {
    const char *listen, *tokens, *socket_path, *socket_group, *tls_cert, *tls_key;
} serve_opts_t;

static int serve_option(int id, const char *v, void *arg)
{
    serve_opts_t *o = arg;

    switch (id) {
    case CLI_O_LISTEN:
        o->listen = v;
        break;
    case CLI_O_TOKENS:
        o->tokens = v;
        break;
    case CLI_O_SOCKET:
        o->socket_path = v;
        break;
    case CLI_O_SOCKET_GROUP:
        o->socket_group = v;
        break;
    case CLI_O_TLS_CERT:
        o->tls_cert = v;
        break;
    case CLI_O_TLS_KEY:
        o->tls_key = v;
        break;
    default:
        return CLI_EX_SOFTWARE;
    }
    return CLI_EX_OK;
}

#define SERVE_MAX_CLUSTERS 64

/* Node addresses (Slurm's NodeAddr) for GET /v1/launches/{id}, one table
 * per cluster: read through a client of its own (HTTP workers never share
 * a launcher's), at most once a minute, and only when asked.  The same
 * client answers readiness. */
typedef struct {
    pthread_mutex_t mu;
    const char *cluster;     /* its name (the config's), NULL: the only one */
    sluice_client_t *client; /* or NULL: addresses unknown */
    sluice_rest_nodes_t nodes;
    time_t read_at;
} node_cache_t;

typedef struct {
    sluice_client_t *client; /* the first cluster's launcher client (borrowed) */
    sluice_server_t *server;
    node_cache_t nc[SERVE_MAX_CLUSTERS];
    size_t n_nc;
} serve_ctx_t;

static int node_address_of(node_cache_t *nc, const char *node, char *buf, size_t size)
{
    time_t now = time(NULL);
    int found = 0;

    pthread_mutex_lock(&nc->mu);
    if (nc->client != NULL && now - nc->read_at >= 60) {
        sluice_rest_nodes_t fresh;
        sluice_error_t e = SLUICE_ERROR_INIT;

        memset(&fresh, 0, sizeof(fresh));
        nc->read_at = now; /* a failed read is not retried for a minute either */
        if (sluice_client_nodes(nc->client, &fresh, NULL, &e) == SLUICE_OK) {
            sluice_rest_nodes_clear(&nc->nodes);
            nc->nodes = fresh;
        } else {
            sluice_log(SLUICE_LOG_WARNING, "node addresses%s%s: %s",
                       nc->cluster ? " of cluster " : "", nc->cluster ? nc->cluster : "", e.text);
        }
    }
    for (size_t i = 0; i < nc->nodes.n_nodes && !found; i++) {
        const sluice_rest_node_t *n = &nc->nodes.nodes[i];
        if (n->name && n->address && n->address[0] && strcmp(n->name, node) == 0) {
            snprintf(buf, size, "%s", n->address);
            found = 1;
        }
    }
    pthread_mutex_unlock(&nc->mu);
    return found;
}

/* opts.node_address_in: the table of the launch's cluster (NULL: the
 * first); a cluster the site no longer names has no addresses. */
static int node_address_in(void *arg, const char *cluster, const char *node, char *buf, size_t size)
{
    serve_ctx_t *sc = arg;

    for (size_t i = 0; i < sc->n_nc; i++)
        if (cluster == NULL || sc->nc[i].cluster == NULL || strcmp(sc->nc[i].cluster, cluster) == 0)
            return node_address_of(&sc->nc[i], node, buf, size);
    return 0;
}

static void on_transition(const sluice_launcher_transition_t *t, void *arg)
{
    serve_ctx_t *sc = arg;
    const char *to = sluice_fsm_state_name(t->to);

    sluice_server_count_transition(sc->server);
    sluice_log(SLUICE_LOG_INFO, "launch %s: %s -> %s (%s)", t->launch_id,
               sluice_fsm_state_name(t->from), to ? to : "?", t->event ? t->event : "");
}

/* Readiness goes through the node-address clients (their own locks), never
 * a launcher's, so /v1/readyz does not wait for a running launcher cycle
 * (so.ready_unlocked); without such a client, the first cluster's launcher
 * client under the server's mutex.  With several clusters the service is
 * ready while any one answers (the others' launches wait, their reads keep
 * working); err then names the ones that did not. */
static sluice_client_t *ready_client(serve_ctx_t *sc, size_t i)
{
    return sc->nc[i].client != NULL ? sc->nc[i].client : i == 0 ? sc->client : NULL;
}

static sluice_err ready(void *arg, sluice_error_t *err)
{
    serve_ctx_t *sc = arg;
    size_t ok = 0, off = 0;
    char why[sizeof(err->text)] = "";
    sluice_err last = SLUICE_OK;

    for (size_t i = 0; i < sc->n_nc; i++) {
        sluice_client_t *c = ready_client(sc, i);
        sluice_rest_ping_t ping;
        sluice_error_t e = SLUICE_ERROR_INIT;
        sluice_err rc;

        /* slurmrestd only: the token's time left is its own check (token_ttl) */
        memset(&ping, 0, sizeof(ping));
        pthread_mutex_lock(&sc->nc[i].mu);
        rc = c != NULL ? sluice_client_ping(c, &ping, NULL, &e)
                       : sluice_errorf(&e, SLUICE_ECONFIG, "no REST client of its own");
        pthread_mutex_unlock(&sc->nc[i].mu);
        if (rc == SLUICE_OK) {
            sluice_rest_ping_clear(&ping);
            ok++;
            continue;
        }
        last = rc;
        if (sc->n_nc == 1) {
            if (err != NULL)
                *err = e;
            return rc;
        }
        if (off < sizeof(why))
            off += (size_t)snprintf(why + off, sizeof(why) - off, "%scluster %s: %s",
                                    off ? "; " : "", sc->nc[i].cluster, e.text);
    }
    if (why[0] != '\0' && err != NULL)
        snprintf(err->text, sizeof(err->text), "%s", why);
    if (ok == 0 && sc->n_nc > 0) {
        if (err != NULL)
            err->code = last;
        return last;
    }
    return SLUICE_OK;
}

/* The shortest time left of the clusters' tokens; -1 when none is known. */
static int64_t token_ttl(void *arg)
{
    serve_ctx_t *sc = arg;
    int64_t least = -1;

    for (size_t i = 0; i < sc->n_nc; i++) {
        sluice_client_t *c = ready_client(sc, i);
        int64_t left = -1;
        sluice_err rc;

        if (c == NULL)
            continue;
        pthread_mutex_lock(&sc->nc[i].mu);
        rc = sluice_auth_expiry(sluice_client_auth(c), NULL, &left, NULL);
        pthread_mutex_unlock(&sc->nc[i].mu);
        if (rc != SLUICE_OK)
            continue;
        if (left < 0)
            left = 0;
        if (least < 0 || left < least)
            least = left;
    }
    return least;
}

/* A launcher loop of one cluster past the first (sluice_server_run_cluster). */
typedef struct {
    sluice_server_t *server;
    size_t i;
    pthread_t t;
    int started;
} cluster_thread_t;

static void *run_cluster(void *arg)
{
    cluster_thread_t *ct = arg;
    sluice_error_t e = SLUICE_ERROR_INIT;

    if (sluice_server_run_cluster(ct->server, ct->i, &stop_flag, &e) != SLUICE_OK)
        sluice_log(SLUICE_LOG_ERR, "launcher of cluster %zu: %s", ct->i, e.text);
    return NULL;
}

/* The server's table of clusters (names and launchers, borrowed from the
 * supervisor), *out to free. */
static int
serve_clusters(sluice_supervisor_t *sup, sluice_server_opts_t *so, sluice_server_cluster_t **out)
{
    size_t n = sluice_supervisor_cluster_count(sup);

    if (n > SERVE_MAX_CLUSTERS) {
        fprintf(stderr, "sluice serve: at most %d clusters\n", SERVE_MAX_CLUSTERS);
        return CLI_EX_CONFIG;
    }
    if ((*out = calloc(n, sizeof(**out))) == NULL) {
        fprintf(stderr, "sluice serve: out of memory\n");
        return CLI_EX_SOFTWARE;
    }
    for (size_t i = 0; i < n; i++) {
        (*out)[i].name = sluice_config_cluster_name(sluice_supervisor_cluster_config(sup, i));
        (*out)[i].launcher = sluice_supervisor_launcher_at(sup, i);
        (*out)[i].client = sluice_supervisor_client_at(sup, i);
    }
    so->clusters = *out;
    so->n_clusters = n;
    return CLI_EX_OK;
}

/* Every connection is a descriptor: take the hard limit, so that the
 * server's connection limit (4096 by default) is not cut short at 1024. */
static void raise_nofile(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            sluice_log(SLUICE_LOG_WARNING, "cannot raise the open-file limit from %llu",
                       (unsigned long long)was);
    }
}

int cmd_serve(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    serve_opts_t o;
    sluice_config_t *cfg = NULL;
    sluice_study_source_t *studies = NULL;
    sluice_supervisor_t *sup = NULL;
    sluice_supervisor_opts_t sup_opts = SLUICE_SUPERVISOR_OPTS_INIT;
    sluice_server_opts_t so = SLUICE_SERVER_OPTS_INIT;
    serve_ctx_t sc;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *listen, *tokens, *socket_path, *socket_group, *tls_cert, *tls_key;
    struct sigaction sa;
    sluice_server_cluster_t *clusters = NULL; /* the site's clusters, or NULL */
    cluster_thread_t threads[SERVE_MAX_CLUSTERS];
    int rc = CLI_EX_OK;

    memset(threads, 0, sizeof(threads));
    memset(&o, 0, sizeof(o));
    memset(&sc, 0, sizeof(sc));
    if (!cli_parse(spec, argc, argv, &a, serve_option, &o, &rc))
        return rc;
    for (size_t i = 0; i < SERVE_MAX_CLUSTERS; i++)
        pthread_mutex_init(&sc.nc[i].mu, NULL);
    if ((rc = cli_config_load(&a.site, &cfg)) != CLI_EX_OK)
        goto out;
    /* rest.user unset: the token's user (each cluster's), before staging
     * and the launchers read it */
    if (cli_resolve_users(cfg, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    /* Flags over the site's server: block. */
#define PICK(v, key) ((v) != NULL ? (v) : cfg->server.key)
    listen = PICK(o.listen, listen);
    tokens = PICK(o.tokens, tokens_file);
    socket_path = PICK(o.socket_path, socket);
    socket_group = PICK(o.socket_group, socket_group);
    tls_cert = PICK(o.tls_cert, tls_cert);
    tls_key = PICK(o.tls_key, tls_key);
#undef PICK
    if ((listen == NULL && socket_path == NULL) || (listen && tokens == NULL)) {
        rc = cli_usage_error(spec, "--listen with --tokens, or --socket, is required (or "
                                   "server.listen with server.tokens_file, or server.socket)");
        goto out;
    }
    if ((tls_cert == NULL) != (tls_key == NULL)) {
        rc = cli_usage_error(spec, "--tls-cert and --tls-key go together");
        goto out;
    }
    sup_opts.state_dir = a.state_dir;
    sup_opts.replicas = 1; /* with PostgreSQL: one leader among replicas (leader.h) */
    sup_opts.on_transition = on_transition;
    sup_opts.transition_arg = &sc;
    /* The study file is re-read when it changes (checked at each accept of
     * a launch that names a study). */
    if ((a.site.study_path &&
         sluice_study_source_open(&studies, a.site.study_path, cfg, &err) != SLUICE_OK) ||
        sluice_supervisor_open(&sup, cfg, &sup_opts, NULL, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    sc.client = sluice_supervisor_client(sup);
    so.launcher = sluice_supervisor_launcher(sup);
    if (sluice_config_cluster_name(cfg) == NULL && /* the site has `clusters:` */
        (rc = serve_clusters(sup, &so, &clusters)) != CLI_EX_OK)
        goto out;
    so.store = sluice_supervisor_store(sup);
    so.cfg = cfg;
    so.studies = studies;
    so.listen = listen;
    so.tokens_file = tokens;
    so.socket_path = socket_path;
    so.socket_mode = (unsigned)cfg->server.socket_mode;
    so.socket_group = socket_group;
    so.tls_cert = tls_cert;
    so.tls_key = tls_key;
    so.threads = (unsigned)cfg->server.threads;
    so.conn_timeout_s = (unsigned)cfg->server.conn_timeout_s;
    so.max_connections = (unsigned)cfg->server.max_connections;
    so.head_timeout_s = (unsigned)cfg->server.head_timeout_s;
    so.launches_max_age_s = cfg->retention.launches_max_age_s;
    so.logs_max_age_s = cfg->retention.logs_max_age_s;
    so.getenv_fn = cli_getenv;
    so.ready = ready;
    so.token_ttl_s = token_ttl;
    so.cluster_arg = &sc;
    /* a client of its own per cluster: node addresses and readiness */
    sc.n_nc = so.n_clusters > 0 ? so.n_clusters : 1;
    so.ready_unlocked = 1;
    for (size_t i = 0; i < sc.n_nc; i++) {
        sluice_error_t ne = SLUICE_ERROR_INIT;
        const sluice_config_t *ccfg =
            so.n_clusters > 0 ? sluice_supervisor_cluster_config(sup, i) : cfg;

        sc.nc[i].cluster = so.n_clusters > 0 ? clusters[i].name : NULL;
        if (sluice_client_new_from_config(&sc.nc[i].client, ccfg, &ne) != SLUICE_OK) {
            sluice_log(SLUICE_LOG_WARNING, "node addresses%s%s unavailable: %s",
                       sc.nc[i].cluster ? " of cluster " : "",
                       sc.nc[i].cluster ? sc.nc[i].cluster : "", ne.text);
            if (i == 0)
                so.ready_unlocked = 0; /* readiness through the launcher's client */
        }
    }
    so.node_address_in = node_address_in;
    so.node_address_arg = &sc;
    so.client = sc.client;
    so.leader = sluice_supervisor_leader(sup);
    raise_nofile();
    if (sluice_server_new(&sc.server, &so, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (listen)
        fprintf(stderr, "sluice serve: listening on %s://%s (port %u)\n",
                tls_cert ? "https" : "http", listen, (unsigned)sluice_server_port(sc.server));
    if (socket_path)
        fprintf(stderr, "sluice serve: listening on unix:%s\n", socket_path);
    fprintf(stderr, "sluice serve: store %s\n", sluice_store_dir(sluice_supervisor_store(sup)));
    /* Every other cluster's launcher on a thread of its own: an outage of
     * one cluster never delays another's submits, polls or cancels. */
    for (size_t i = 1; i < so.n_clusters; i++) {
        threads[i].server = sc.server;
        threads[i].i = i;
        if (pthread_create(&threads[i].t, NULL, run_cluster, &threads[i]) != 0) {
            fprintf(stderr, "sluice serve: cannot start the launcher of cluster %s\n",
                    clusters[i].name);
            stop_flag = 1;
            rc = CLI_EX_SOFTWARE;
            break;
        }
        threads[i].started = 1;
    }
    if (rc == CLI_EX_OK && sluice_server_run_launcher(sc.server, &stop_flag, &err) != SLUICE_OK)
        rc = cli_fail(&err);
    stop_flag = 1;
    for (size_t i = 1; i < so.n_clusters; i++)
        if (threads[i].started)
            pthread_join(threads[i].t, NULL);
    /* Replicas: the launcher has stopped; hand the lead over now, not
     * after the HTTP side has closed every stream. */
    sluice_leader_stop(sluice_supervisor_leader(sup));
out:
    sluice_server_free(sc.server);
    sluice_supervisor_close(sup);
    for (size_t i = 0; i < SERVE_MAX_CLUSTERS; i++) {
        sluice_client_free(sc.nc[i].client);
        sluice_rest_nodes_clear(&sc.nc[i].nodes);
        pthread_mutex_destroy(&sc.nc[i].mu);
    }
    sluice_study_source_close(studies);
    free(clusters);
    sluice_config_free(cfg);
    return rc;
}
