/* SPDX-License-Identifier: Apache-2.0 */
/* bench_fake.c - the in-memory stand-in cluster of bench_fake.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <sluice/accept.h>
#include <sluice/config.h>
#include <sluice/launcher.h>
#include <sluice/store.h>

#include "bench_fake.h"
#include "bench_util.h"

static int64_t fake_clock_ms = 1700000000000;
static uint64_t fake_next_id = 1000;

static int64_t clock_now(void *arg)
{
    (void)arg;
    return fake_clock_ms;
}

static void clock_sleep(void *arg, int64_t ms)
{
    (void)arg;
    fake_clock_ms += ms;
}

static sluice_submit_outcome
fake_submit(void *arg, const sluice_jobdesc_t *d, size_t n, sluice_submit_result_t *out)
{
    (void)arg;
    (void)d;
    (void)n;
    memset(out, 0, sizeof(*out));
    out->job_id = fake_next_id++;
    return SLUICE_SUBMIT_OK;
}

static sluice_lookup fake_get_job(void *arg, uint64_t id, sluice_jobview_t **v, size_t *n)
{
    sluice_jobview_t *x = calloc(1, sizeof(*x));

    (void)arg;
    if (x == NULL)
        return SLUICE_LOOKUP_UNAVAILABLE;
    x->job_id = id;
    x->user_name = strdup("sluiceuser");
    x->partition = strdup("debug");
    x->state_reason = strdup("JobHeldUser");
    x->base = SLUICE_JOB_PENDING;
    x->submit_time = fake_clock_ms / 1000;
    *v = x;
    *n = 1;
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup
fake_states(void *arg, const uint64_t *ids, size_t n, sluice_job_state_t *states)
{
    (void)arg;
    (void)ids;
    for (size_t i = 0; i < n; i++) {
        states[i].present = true;
        states[i].base = SLUICE_JOB_PENDING;
        states[i].flags = 0;
    }
    return SLUICE_LOOKUP_FOUND;
}

static sluice_lookup
fake_find_live(void *arg, const char *name, const char *user, sluice_jobview_t **v, size_t *n)
{
    (void)arg;
    (void)name;
    (void)user;
    *v = NULL;
    *n = 0;
    return SLUICE_LOOKUP_NOT_FOUND;
}

static sluice_lookup fake_find_acct(void *arg,
                                    const char *name,
                                    const char *user,
                                    int64_t s,
                                    int64_t e,
                                    sluice_jobview_t **v,
                                    size_t *n)
{
    (void)s;
    (void)e;
    return fake_find_live(arg, name, user, v, n);
}

static sluice_lookup fake_acct(void *arg, uint64_t id, sluice_jobview_t **v, size_t *n)
{
    (void)id;
    return fake_find_live(arg, NULL, NULL, v, n);
}

static sluice_err fake_cancel(void *arg, uint64_t id, int sig, sluice_error_t *err)
{
    (void)arg;
    (void)id;
    (void)sig;
    (void)err;
    return SLUICE_OK;
}

long bench_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

sluice_launcher_t *bench_fake_launcher(sluice_store_t *store)
{
    sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_t *l = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    o.store = store;
    o.cluster.submit = fake_submit;
    o.cluster.get_job = fake_get_job;
    o.cluster.job_states = fake_states;
    o.cluster.find_live_by_name = fake_find_live;
    o.cluster.find_acct_by_name = fake_find_acct;
    o.cluster.acct_job = fake_acct;
    o.cluster.cancel = fake_cancel;
    o.user = "sluiceuser";
    o.site = "bench";
    o.rpc_per_sec = 1e9;
    o.submit_per_sec = 1e9; /* every accepted launch is submitted in the first cycle */
    o.now_ms = clock_now;
    o.sleep_ms = clock_sleep;
    if (sluice_launcher_new(&l, &o, &err) != SLUICE_OK ||
        sluice_launcher_recover(l, NULL, &err) != SLUICE_OK) {
        fprintf(stderr, "bench: launcher: %s\n", err.text);
        sluice_launcher_free(l);
        return NULL;
    }
    return l;
}

void bench_fake_steps(sluice_launcher_t *l, int k)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    for (int i = 0; i < k; i++) {
        fake_clock_ms += 1000;
        if (sluice_launcher_step(l, &err) != SLUICE_OK) {
            fprintf(stderr, "bench: step: %s\n", err.text);
            return;
        }
    }
}

void bench_fake_first_id(uint64_t id)
{
    fake_next_id = id;
}

/* The site the stand-in launches are judged and rendered for: profile
 * none, nothing on disk (the launcher has no staging hooks). */
static const char fake_site[] = "site:\n"
                                "  name: bench\n"
                                "rest:\n"
                                "  url: http://127.0.0.1:6820\n"
                                "  user: bench\n"
                                "storage:\n"
                                "  root: /tmp/sluice-bench-fake\n"
                                "job_launcher:\n"
                                "  sandbox: none\n"
                                "  sbatch_directives:\n"
                                "    partition: debug\n"
                                "policy:\n"
                                "  allowed_profiles: [none]\n";

size_t bench_fake_accept(sluice_launcher_t *l, const char *prefix, size_t n)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    size_t i;

    co.text = fake_site;
    co.text_len = sizeof(fake_site) - 1;
    co.text_name = "bench_fake site";
    if (sluice_config_load(&co, &cfg, &err) != SLUICE_OK) {
        fprintf(stderr, "bench: site: %s\n", err.text);
        return 0;
    }
    ao.hold = true;
    for (i = 0; i < n; i++) {
        char req[512];
        int len = snprintf(req, sizeof(req),
                           "{\"launch_id\": \"%s-%zu\", \"site\": \"bench\", \"profile\": "
                           "\"none\", \"command\": \"/bin/true\", \"time_limit\": 5, "
                           "\"pools\": [{\"name\": \"main\", \"nodes\": 1, "
                           "\"cpus_per_node\": 1, \"mem_per_node_mib\": 100}]}",
                           prefix, i);

        if (len < 0 || (size_t)len >= sizeof(req) ||
            sluice_accept(NULL, NULL, NULL, l, cfg, req, (size_t)len, &ao, &err) != SLUICE_OK) {
            fprintf(stderr, "bench: accept %zu: %s\n", i, err.text);
            break;
        }
    }
    sluice_config_free(cfg);
    return i;
}

size_t bench_fake_fill_finished(sluice_store_t *store, const char *prefix, size_t n)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_object();
    size_t i;

    for (i = 0; i < n; i++) {
        sluice_store_launch_spec_t sp;
        sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;
        char id[64];

        snprintf(id, sizeof(id), "%s-%zu", prefix, i);
        json_object_set_new(req, "launch_id", json_string(id));
        json_object_set_new(req, "site", json_string("bench"));
        memset(&sp, 0, sizeof(sp));
        sp.launch_id = id;
        sp.site = "bench";
        sp.request = req;
        sum.state = "DONE";
        sum.terminal = 1;
        sum.set_result = 1;
        sum.result_code = 0;
        sum.reason = "succeeded";
        if (sluice_store_create_launch(store, &sp, NULL, &err) != SLUICE_OK ||
            sluice_store_append_event_and_update(store, id, "done", NULL, NULL, 0, &sum, NULL,
                                                 &err) != SLUICE_OK) {
            fprintf(stderr, "bench: fill %zu: %s\n", i, err.text);
            break;
        }
    }
    json_decref(req);
    return i;
}
