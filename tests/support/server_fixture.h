/* SPDX-License-Identifier: Apache-2.0 */
/* server_fixture.h - a `sluice serve` stack for server tests: a store in a
 * fresh temporary directory, the flower-gpu golden site, a launcher over
 * the fake cluster and the HTTP server on 127.0.0.1:<any> with a tokens
 * file (alice: SFX_TOKEN, bob).  Only loopback traffic. */
#ifndef SLUICE_TEST_SERVER_FIXTURE_H
#define SLUICE_TEST_SERVER_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/server.h>
#include <sluice/sluice.h>

#include "fake_cluster.h"

#define SFX_TOKEN "tok-alice-0123456789abcdef"
#define SFX_AUTH "Authorization: Bearer " SFX_TOKEN "\r\n"
#define SFX_JSON_AUTH SFX_AUTH "Content-Type: application/json\r\n"

typedef struct {
    char tmp[128];    /* the temporary directory (removed by stop) */
    char state[256];  /* the store directory */
    int64_t clock_ms; /* the launcher's and the fake cluster's clock (starts at now; tests
                         advance it) */
    fake_cluster_t *fc;
    sluice_store_t *store;
    sluice_config_t *cfg;
    sluice_launcher_t *launcher;
    sluice_server_t *server;
    uint16_t port;
} server_fixture_t;

/* Adjusts the server options before the server starts (may be NULL). */
typedef void (*sfx_tweak_fn)(sluice_server_opts_t *so, void *arg);

/* Build everything; 0 or -1 (the reason is in `why`). */
int sfx_start(server_fixture_t *fx, sfx_tweak_fn tweak, void *arg, char *why, size_t why_size);

/* Free everything and remove the directory.  Safe after a failed start. */
void sfx_stop(server_fixture_t *fx);

/* A valid launch request for `id` running `command` (into buf). */
const char *sfx_request(const char *id, const char *command, char *buf, size_t size);

#endif
