/* SPDX-License-Identifier: Apache-2.0 */
/* server_fixture.c - see server_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "render_case.h"
#include "server_fixture.h"

static int64_t fixture_now(void *arg)
{
    return ((server_fixture_t *)arg)->clock_ms;
}

/* As `sluice serve` does: every transition counts for /v1/metrics. */
static void fixture_transition(const sluice_launcher_transition_t *t, void *arg)
{
    (void)t;
    sluice_server_count_transition(((server_fixture_t *)arg)->server);
}

static int accept_image(const char *path, void *arg)
{
    (void)path, (void)arg;
    return 0;
}

int sfx_start(server_fixture_t *fx, sfx_tweak_fn tweak, void *arg, char *why, size_t why_size)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co;
    sluice_launcher_opts_t lo;
    sluice_server_opts_t so;
    char path[512], tokens[256], root[300];
    const char *src = getenv("SLUICE_SOURCE_DIR");
    const char *sets[1];
    FILE *f;

    memset(fx, 0, sizeof(*fx));
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fx->clock_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    snprintf(fx->tmp, sizeof(fx->tmp), "/tmp/sluice-sfx-XXXXXX");
    if (mkdtemp(fx->tmp) == NULL) {
        snprintf(why, why_size, "mkdtemp failed");
        return -1;
    }
    snprintf(path, sizeof(path), "%s/tests/golden/render/flower-gpu/site.yaml", src ? src : ".");
    snprintf(root, sizeof(root), "storage.root=%s/storage", fx->tmp);
    sets[0] = root;
    memset(&co, 0, sizeof(co));
    co.path = path;
    co.overrides = sets;
    co.n_overrides = 1;
    snprintf(fx->state, sizeof(fx->state), "%s/state", fx->tmp);
    if (sluice_config_load(&co, &fx->cfg, &err) != SLUICE_OK ||
        sluice_store_open(&fx->store, fx->state, &err) != SLUICE_OK)
        goto fail;
    if ((fx->fc = calloc(1, sizeof(*fx->fc))) == NULL) {
        snprintf(err.text, sizeof(err.text), "out of memory");
        goto fail;
    }
    fake_cluster_init(fx->fc, &fx->clock_ms, "sluice");
    memset(&lo, 0, sizeof(lo));
    lo.store = fx->store;
    lo.cluster = fake_cluster_ops(fx->fc);
    lo.user = "sluice";
    lo.site = "site-1";
    lo.now_ms = fixture_now;
    lo.clock_arg = fx;
    lo.on_transition = fixture_transition;
    lo.transition_arg = fx;
    if (sluice_launcher_new(&fx->launcher, &lo, &err) != SLUICE_OK ||
        sluice_launcher_recover(fx->launcher, NULL, &err) != SLUICE_OK)
        goto fail;
    snprintf(tokens, sizeof(tokens), "%s/tokens", fx->tmp);
    if ((f = fopen(tokens, "w")) == NULL) {
        snprintf(err.text, sizeof(err.text), "cannot write %s", tokens);
        goto fail;
    }
    fprintf(f, "alice %s\nbob tok-bob-0123456789abcdef\n", SFX_TOKEN);
    fclose(f);
    chmod(tokens, 0600);
    memset(&so, 0, sizeof(so));
    so.launcher = fx->launcher;
    so.store = fx->store;
    so.cfg = fx->cfg;
    so.listen = "127.0.0.1:0";
    so.tokens_file = tokens;
    so.getenv_fn = render_case_getenv;
    so.stat_fn = accept_image;
    so.follow_poll_ms = 50;
    if (tweak)
        tweak(&so, arg);
    if (sluice_server_new(&fx->server, &so, &err) != SLUICE_OK)
        goto fail;
    fx->port = sluice_server_port(fx->server);
    return 0;
fail:
    snprintf(why, why_size, "%s", err.text);
    return -1;
}

void sfx_stop(server_fixture_t *fx)
{
    char cmd[200];

    sluice_server_free(fx->server);
    sluice_launcher_free(fx->launcher);
    sluice_store_close(fx->store);
    sluice_config_free(fx->cfg);
    free(fx->fc);
    fx->server = NULL;
    fx->launcher = NULL;
    fx->store = NULL;
    fx->cfg = NULL;
    fx->fc = NULL;
    if (fx->tmp[0] != '\0') {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "server_fixture: could not remove %s\n", fx->tmp);
    }
}

const char *sfx_request(const char *id, const char *command, char *buf, size_t size)
{
    snprintf(buf, size,
             "{\"launch_id\": \"%s\", \"site\": \"site-1\", \"profile\": \"none\", "
             "\"time_limit\": \"00:10:00\", \"partition\": \"gpu\", \"pools\": [{\"name\": "
             "\"main\", \"cpus_per_node\": 1, \"mem_per_node_mib\": 1024, \"command\": \"%s\"}]}",
             id, command);
    return buf;
}
