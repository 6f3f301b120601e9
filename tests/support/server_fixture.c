/* SPDX-License-Identifier: Apache-2.0 */
/* server_fixture.c - see server_fixture.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <criterion/criterion.h>

#include "http_client.h"
#include "render_case.h"
#include "store_backend.h"
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

int sfx_accept_image(const char *path, void *arg)
{
    (void)path, (void)arg;
    return 0;
}

static void *drive(void *arg)
{
    server_fixture_t *fx = arg;
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (sluice_server_run_launcher(fx->server, &fx->stop_driver, &err) != SLUICE_OK)
        fprintf(stderr, "server_fixture: the launcher thread stopped: %s\n", err.text);
    return NULL;
}

int sfx_write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    int bad;

    if (f == NULL)
        return -1;
    bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    bad |= chmod(path, mode) != 0;
    return bad ? -1 : 0;
}

int sfx_start_with(server_fixture_t *fx, const sfx_opts_t *opts, char *why, size_t why_size)
{
    static const sfx_opts_t none;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_launcher_opts_t lo = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_server_opts_t so = SLUICE_SERVER_OPTS_INIT;
    char path[512], root[300], lines[1024];
    const char *src = getenv("SLUICE_SOURCE_DIR");
    const char *sets[1];
    sluice_launcher_tenant_t *tenants = NULL;
    sluice_err rc_new;

    if (opts == NULL)
        opts = &none;
    memset(fx, 0, sizeof(*fx));
    {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fx->clock_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    }
    snprintf(fx->tmp, sizeof(fx->tmp), "/tmp/sluice-sfx-XXXXXX");
    if (mkdtemp(fx->tmp) == NULL) {
        snprintf(why, why_size, "mkdtemp failed");
        fx->tmp[0] = '\0';
        return -1;
    }
    snprintf(path, sizeof(path), "%s/tests/golden/render/flower-gpu/site.yaml", src ? src : ".");
    if (opts->site_append != NULL) {
        FILE *in = fopen(path, "r"), *out;
        char copy[256], chunk[4096];
        size_t n;

        snprintf(copy, sizeof(copy), "%s/site.yaml", fx->tmp);
        if (in == NULL || (out = fopen(copy, "w")) == NULL) {
            if (in != NULL)
                fclose(in);
            snprintf(err.text, sizeof(err.text), "cannot copy the site file");
            goto fail;
        }
        while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0)
            fwrite(chunk, 1, n, out);
        fclose(in);
        fprintf(out, "\n%s", opts->site_append);
        fclose(out);
        snprintf(path, sizeof(path), "%s", copy);
    }
    snprintf(root, sizeof(root), "storage.root=%s/storage", fx->tmp);
    sets[0] = root;
    co.path = path;
    co.overrides = sets;
    co.n_overrides = 1;
    snprintf(fx->state, sizeof(fx->state), "%s/state", fx->tmp);
    store_backend_setup(); /* PostgreSQL runs (unit.<suite>.pg): a schema */
    if (sluice_config_load(&co, &fx->cfg, &err) != SLUICE_OK ||
        store_backend_open(&fx->store, fx->state, &err) != SLUICE_OK)
        goto fail;
    if ((fx->fc = calloc(1, sizeof(*fx->fc))) == NULL) {
        snprintf(err.text, sizeof(err.text), "out of memory");
        goto fail;
    }
    fake_cluster_init(fx->fc, &fx->clock_ms, "sluice");
    lo.store = fx->store;
    lo.cluster = fake_cluster_ops(fx->fc);
    lo.user = "sluice";
    lo.site = "site-1";
    if (!opts->real_clock) {
        lo.now_ms = fixture_now;
        lo.clock_arg = fx;
    }
    lo.poll_min_ms = opts->poll_min_ms;
    lo.poll_max_ms = opts->poll_max_ms;
    lo.on_transition = fixture_transition;
    lo.transition_arg = fx;
    /* The site's tenants act through the same fake cluster, each as its
     * own Slurm user (the launcher refuses a launch of a tenant it was not
     * given). */
    lo.n_tenants = sluice_config_tenant_count(fx->cfg);
    if (lo.n_tenants > 0 && (tenants = calloc(lo.n_tenants, sizeof(*tenants))) == NULL) {
        snprintf(err.text, sizeof(err.text), "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < lo.n_tenants; i++) {
        tenants[i].name = sluice_config_tenant_at(fx->cfg, i)->name;
        tenants[i].user = sluice_config_tenant_at(fx->cfg, i)->slurm_user;
        tenants[i].cluster = lo.cluster;
    }
    lo.tenants = tenants;
    if (opts->launcher_tweak)
        opts->launcher_tweak(&lo, opts->launcher_arg);
    rc_new = sluice_launcher_new(&fx->launcher, &lo, &err);
    free(tenants); /* copied by the launcher */
    tenants = NULL;
    if (rc_new != SLUICE_OK || sluice_launcher_recover(fx->launcher, NULL, &err) != SLUICE_OK)
        goto fail;
    snprintf(fx->tokens, sizeof(fx->tokens), "%s/tokens", fx->tmp);
    snprintf(lines, sizeof(lines), "# caller token [role]\nalice %s\nbob %s\n%s", SFX_TOKEN,
             SFX_BOB_TOKEN, opts->extra_tokens ? opts->extra_tokens : "");
    snprintf(fx->token_file, sizeof(fx->token_file), "%s/alice.token", fx->tmp);
    if (sfx_write_file(fx->tokens, lines, 0600) != 0 ||
        sfx_write_file(fx->token_file, SFX_TOKEN "\n", 0600) != 0) {
        snprintf(err.text, sizeof(err.text), "cannot write the token files in %s", fx->tmp);
        goto fail;
    }
    if (opts->socket)
        snprintf(fx->sock, sizeof(fx->sock), "%s/api.sock", fx->tmp);
    so.launcher = fx->launcher;
    so.store = fx->store;
    so.cfg = fx->cfg;
    so.listen = "127.0.0.1:0";
    so.socket_path = opts->socket ? fx->sock : NULL;
    so.tokens_file = fx->tokens;
    so.getenv_fn = render_case_getenv;
    so.stat_fn = sfx_accept_image;
    so.follow_poll_ms = 50;
    if (opts->tweak)
        opts->tweak(&so, opts->tweak_arg);
    if (sluice_server_new(&fx->server, &so, &err) != SLUICE_OK)
        goto fail;
    fx->port = sluice_server_port(fx->server);
    if (opts->drive) {
        if (pthread_create(&fx->driver, NULL, drive, fx) != 0) {
            snprintf(err.text, sizeof(err.text), "cannot start the launcher thread");
            goto fail;
        }
        fx->driving = true;
    }
    return 0;
fail:
    snprintf(why, why_size, "%s", err.text);
    return -1;
}

int sfx_start(server_fixture_t *fx, sfx_tweak_fn tweak, void *arg, char *why, size_t why_size)
{
    sfx_opts_t o;

    memset(&o, 0, sizeof(o));
    o.tweak = tweak;
    o.tweak_arg = arg;
    return sfx_start_with(fx, &o, why, why_size);
}

int sfx_stop(server_fixture_t *fx)
{
    char cmd[200];
    int rc = 0;

    if (fx->driving) {
        fx->stop_driver = 1;
        pthread_join(fx->driver, NULL);
        fx->driving = false;
    }
    sluice_server_free(fx->server);
    sluice_launcher_free(fx->launcher);
    sluice_store_close(fx->store);
    store_backend_teardown();
    sluice_config_free(fx->cfg);
    free(fx->fc);
    fx->server = NULL;
    fx->launcher = NULL;
    fx->store = NULL;
    fx->cfg = NULL;
    fx->fc = NULL;
    if (fx->tmp[0] != '\0') {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->tmp);
        if (system(cmd) != 0) {
            fprintf(stderr, "server_fixture: could not remove %s\n", fx->tmp);
            rc = -1;
        }
        fx->tmp[0] = '\0';
    }
    return rc;
}

void sfx_server_opts(const server_fixture_t *fx, sluice_server_opts_t *so)
{
    *so = (sluice_server_opts_t)SLUICE_SERVER_OPTS_INIT;
    so->launcher = fx->launcher;
    so->store = fx->store;
    so->cfg = fx->cfg;
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

int sfx_post(const server_fixture_t *fx, const char *id)
{
    char req[1024];
    hc_response_t r;
    int status;

    sfx_request(id, "/bin/true", req, sizeof(req));
    if (hc_request(fx->port, "POST", "/v1/launches", SFX_JSON_AUTH, req, strlen(req), &r) != 0)
        return -1;
    status = r.status;
    hc_response_clear(&r);
    return status;
}

long long sfx_metric(const server_fixture_t *fx, const char *name_and_labels)
{
    hc_response_t r;
    const char *p;
    long long v = -1;
    char needle[256];

    snprintf(needle, sizeof(needle), "\n%s ", name_and_labels);
    cr_assert_eq(hc_request(fx->port, "GET", "/v1/metrics", SFX_AUTH, NULL, 0, &r), 0);
    cr_assert_eq(r.status, 200, "%s", r.body);
    if ((p = strstr(r.body, needle)) != NULL)
        v = strtoll(p + strlen(needle), NULL, 10);
    hc_response_clear(&r);
    cr_assert_geq(v, 0, "metric %s missing", name_and_labels);
    return v;
}
