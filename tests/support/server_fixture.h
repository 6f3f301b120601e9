/* SPDX-License-Identifier: Apache-2.0 */
/* server_fixture.h - a `sluice serve` stack for server tests: a store in a
 * fresh temporary directory, the flower-gpu golden site, a launcher over
 * the fake cluster and the HTTP server on 127.0.0.1:<any> with a tokens
 * file (alice: SFX_TOKEN, bob: SFX_BOB_TOKEN) and a client token file
 * holding alice's token.  sfx_opts_t adds what a suite needs on top: the
 * real clock, poll bounds, more tokens, a Unix socket, a launcher thread.
 * Only loopback traffic. */
#ifndef SLUICE_TEST_SERVER_FIXTURE_H
#define SLUICE_TEST_SERVER_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "fake_cluster.h"

#define SFX_TOKEN "tok-alice-0123456789abcdef"
#define SFX_BOB_TOKEN "tok-bob-0123456789abcdef"
#define SFX_AUTH "Authorization: Bearer " SFX_TOKEN "\r\n"
#define SFX_JSON_AUTH SFX_AUTH "Content-Type: application/json\r\n"

typedef struct {
    char tmp[128];        /* the temporary directory (removed by stop) */
    char state[256];      /* the store directory */
    char tokens[256];     /* the server's tokens file (<tmp>/tokens, mode 0600) */
    char token_file[256]; /* a client token file: alice's token (<tmp>/alice.token, 0600) */
    char sock[256];       /* the server's Unix socket when opts.socket, else "" */
    int64_t clock_ms;     /* the fake cluster's clock, and the launcher's unless opts.real_clock
                             (starts at now; tests advance it) */
    fake_cluster_t *fc;
    sluice_store_t *store;
    sluice_config_t *cfg;
    sluice_launcher_t *launcher;
    sluice_server_t *server;
    uint16_t port;
    /* the launcher thread (opts.drive) */
    pthread_t driver;
    volatile int stop_driver;
    bool driving;
} server_fixture_t;

/* Adjusts the server options before the server starts (may be NULL). */
typedef void (*sfx_tweak_fn)(sluice_server_opts_t *so, void *arg);
/* Adjusts the launcher options before the launcher is made (may be NULL). */
typedef void (*sfx_launcher_tweak_fn)(sluice_launcher_opts_t *lo, void *arg);

/* What a suite changes; all zero is what sfx_start builds. */
typedef struct {
    /* The launcher reads the real clock (a launcher that runs on its own
     * thread in real time needs it); fx->clock_ms then feeds only the fake
     * cluster. */
    bool real_clock;
    int64_t poll_min_ms; /* the launcher's poll bounds; 0: its defaults */
    int64_t poll_max_ms;
    /* Lines appended to the tokens file (each ending in '\n'), e.g. an
     * admin: "carol tok-carol-0123456789abcdef admin\n". */
    const char *extra_tokens;
    bool socket; /* also listen on <tmp>/api.sock (fx->sock) */
    /* Run the launcher on its own thread (sluice_server_run_launcher) from
     * start until sfx_stop. */
    bool drive;
    sfx_launcher_tweak_fn launcher_tweak;
    void *launcher_arg;
    sfx_tweak_fn tweak;
    void *tweak_arg;
    /* YAML appended to the site file (a copy in fx->tmp), e.g. a
     * `tenants:` list; NULL: the golden site as it is. */
    const char *site_append;
} sfx_opts_t;

/* Build everything; 0 or -1 (the reason is in `why`).  opts may be NULL. */
int sfx_start_with(server_fixture_t *fx, const sfx_opts_t *opts, char *why, size_t why_size);

/* sfx_start_with with only a server tweak. */
int sfx_start(server_fixture_t *fx, sfx_tweak_fn tweak, void *arg, char *why, size_t why_size);

/* Stop the launcher thread, free everything and remove the directory; 0,
 * or -1 when the directory could not be removed.  Safe after a failed
 * start. */
int sfx_stop(server_fixture_t *fx);

/* Server options with only the fixture's launcher, store and config set
 * (for a second server over the same stack). */
void sfx_server_opts(const server_fixture_t *fx, sluice_server_opts_t *so);

/* A valid launch request for `id` running `command` (into buf). */
const char *sfx_request(const char *id, const char *command, char *buf, size_t size);

/* POST sfx_request(id, "/bin/true") to the fixture's server with the
 * default token; the HTTP status (-1 when the request could not be made). */
int sfx_post(const server_fixture_t *fx, const char *id);

/* The value of the Prometheus sample `name_and_labels` ("sluice_x" or
 * "sluice_x{a=\"b\"}") in the fixture's /v1/metrics; asserts it is there. */
long long sfx_metric(const server_fixture_t *fx, const char *name_and_labels);

/* A stat_fn that takes every container image path as present. */
int sfx_accept_image(const char *path, void *arg);

/* Write `text` to `path` and give it `mode`; 0 or -1. */
int sfx_write_file(const char *path, const char *text, mode_t mode);

#endif
