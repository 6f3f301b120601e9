/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_compat.c - a store written by commit 1ccc315 opens and resumes
 * (issue 30).
 *
 * tests/fixtures/store/1ccc315/ holds a store written by the library of
 * commit 1ccc315 (tests/fixtures/store/gen_1ccc315.c, see the README there),
 * the last one before the accept made the request's canonical text once and
 * put the idempotency hash together around it, before the render column
 * kept its built key order and before the launcher kept typed job
 * descriptions (decoding the stored render only after a restart) and folded
 * its own appends without reading them back.  expected.json says what the
 * old library wrote: the request texts, the canonical texts and hashes, the
 * summaries, the renders of the launches still ACCEPTED and the jobs its
 * cluster held.
 *
 * Each test opens a copy of the store with the current code and shows:
 * - every launch is there with its state, request, hash and render;
 * - a launcher over it (the fake cluster, which is given the old jobs)
 *   submits the ACCEPTED launches from their old stored render, adopts the
 *   one whose POST was never answered, tracks the live ones to their end,
 *   and ends the one whose secret died with the old process;
 * - after every step, each launch the launcher holds is the replay of its
 *   stored log (what it folded from its own appends is what reading them
 *   back gives), and a launcher started over the store mid-way rebuilds the
 *   same states;
 * - the same request sent again through sluice_accept() is the same launch
 *   (the old hash is the new composition's), a changed one a conflict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/sluice.h>

#include "base/marker.h"
#include "fake_cluster.h"
#include "sluice_assert.h"
#include "supervise/launcher_int.h"

#define USER "sluice"
#define MAX_POSTS 16

static char tmp[128];
static int64_t clock_now;
static fake_cluster_t *fc;
static sluice_store_t *store;
static sluice_config_t *cfg;
static sluice_study_runtime_t *rt; /* the old site's study runtime */
static json_t *fixture;            /* expected.json */
static bool archive_ok;            /* the archive hook succeeds (else DONE launches stay held) */
/* per launch of expected.json: its launcher state compared with its replay,
 * and so while it was DONE */
static unsigned n_compared[32], n_compared_done[32];

/* What the cluster was sent: each POST's job descriptions as JSON. */
typedef struct {
    char comment[128];
    json_t *jobs;
} post_t;

static post_t posts[MAX_POSTS];
static size_t n_posts;
static sluice_submit_outcome (*submit_base)(void *,
                                            const sluice_jobdesc_t *,
                                            size_t,
                                            sluice_submit_result_t *);

static sluice_submit_outcome
t_submit(void *arg, const sluice_jobdesc_t *d, size_t n, sluice_submit_result_t *out)
{
    if (n_posts < MAX_POSTS) {
        post_t *p = &posts[n_posts++];

        snprintf(p->comment, sizeof(p->comment), "%s", d[0].comment ? d[0].comment : "");
        p->jobs = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(p->jobs, sluice_jobdesc_to_json(&d[i]));
    }
    return submit_base(arg, d, n, out);
}

static int64_t t_now(void *arg)
{
    (void)arg;
    return clock_now;
}

static void t_sleep(void *arg, int64_t ms)
{
    (void)arg;
    clock_now += ms;
}

static bool t_kill(void *arg, const char *point)
{
    (void)arg, (void)point;
    return false;
}

static sluice_err
h_archive(void *arg, const char *id, uint32_t attempt, const char *dir, sluice_error_t *err)
{
    (void)arg, (void)attempt, (void)dir;
    if (!archive_ok)
        return sluice_errorf(err, SLUICE_EIO, "%s: held for the comparison (test)", id);
    return SLUICE_OK;
}

static int image_present(const char *path, void *arg)
{
    (void)path, (void)arg;
    return 0;
}

static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");

    cr_assert_not_null(in, "cannot open %s", from);
    cr_assert_not_null(out, "cannot create %s", to);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        cr_assert_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

static void setup(void)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_opts_t co = SLUICE_CONFIG_OPTS_INIT;
    json_error_t jerr;
    char path[1200], db[256], root[300];
    const char *sets[1];
    const char *yaml;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(path, sizeof(path), "%s/tests/fixtures/store/1ccc315/expected.json", src);
    fixture = json_load_file(path, 0, &jerr);
    cr_assert_not_null(fixture, "%s: %s", path, jerr.text);
    strcpy(tmp, "/tmp/sluice-store-compat-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(path, sizeof(path), "%s/tests/fixtures/store/1ccc315/sluice.db", src);
    snprintf(db, sizeof(db), "%s/sluice.db", tmp);
    copy_file(path, db);
    cr_assert_sluice_ok(sluice_store_open(&store, tmp, &err), &err);
    /* The site the old library served, its storage root here. */
    yaml = json_string_value(json_object_get(fixture, "site_yaml"));
    cr_assert_not_null(yaml);
    snprintf(root, sizeof(root), "storage.root=%s/storage", tmp);
    sets[0] = root;
    co.text = yaml;
    co.text_len = strlen(yaml);
    co.text_name = "site.yaml";
    co.overrides = sets;
    co.n_overrides = 1;
    cr_assert_sluice_ok(sluice_config_load(&co, &cfg, &err), &err);
    yaml = json_string_value(json_object_get(fixture, "study_yaml"));
    cr_assert_not_null(yaml);
    cr_assert_sluice_ok(
        sluice_study_runtime_load("study_runtime.yaml", yaml, strlen(yaml), cfg, &rt, &err), &err);
    /* The clock goes on from where the old process stopped. */
    clock_now = (int64_t)json_integer_value(json_object_get(fixture, "clock_ms")) + 1000;
    cr_assert_gt(clock_now, 1000);
    fc = calloc(1, sizeof(*fc));
    cr_assert_not_null(fc);
    fake_cluster_init(fc, &clock_now, USER);
    archive_ok = false;
    memset(n_compared, 0, sizeof(n_compared));
    memset(n_compared_done, 0, sizeof(n_compared_done));
    n_posts = 0;
}

static void teardown(void)
{
    char cmd[256];

    for (size_t i = 0; i < n_posts; i++)
        json_decref(posts[i].jobs);
    sluice_store_close(store);
    sluice_study_runtime_free(rt);
    sluice_config_free(cfg);
    json_decref(fixture);
    free(fc);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(store_compat, .init = setup, .fini = teardown, .timeout = 120);

static sluice_launcher_t *new_launcher(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_opts_t o = SLUICE_LAUNCHER_OPTS_INIT;
    sluice_launcher_t *l = NULL;

    o.store = store;
    o.cluster = fake_cluster_ops(fc);
    submit_base = o.cluster.submit;
    o.cluster.submit = t_submit;
    o.cluster.submit_many = NULL;
    o.staging.archive = h_archive;
    o.user = USER;
    o.site = "site-1";
    o.now_ms = t_now;
    o.sleep_ms = t_sleep;
    o.kill_at = t_kill;
    o.rpc_per_sec = 100000;
    o.submit_in_flight = 1;
    cr_assert_sluice_ok(sluice_launcher_new(&l, &o, &err), &err);
    cr_assert_sluice_ok(sluice_launcher_recover(l, NULL, &err), &err);
    return l;
}

static const json_t *launches(void)
{
    const json_t *a = json_object_get(fixture, "launches");

    cr_assert(json_array_size(a) >= 10 && json_array_size(a) <= 32,
              "expected.json lists the fixture's launches");
    return a;
}

static const json_t *launch_of(const char *id)
{
    const json_t *x;
    size_t i;

    json_array_foreach(launches(), i, x)
    {
        if (strcmp(json_string_value(json_object_get(x, "launch_id")), id) == 0)
            return x;
    }
    cr_assert_fail("%s is not in expected.json", id);
    return NULL;
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static json_t *row(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *r = NULL;

    cr_assert_sluice_ok(sluice_store_get_launch(store, id, &r, &err), &err);
    return r;
}

/* A launch's stored log as the fsm folds it (time in ms -> seconds; the
 * launcher's bookkeeping events left out). */
static json_t *fsm_log(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *stored = NULL, *out = json_array(), *e;
    size_t i;

    cr_assert_sluice_ok(sluice_store_read_events(store, id, 1, 0, &stored, &err), &err);
    json_array_foreach(stored, i, e)
    {
        sluice_fsm_event_type t;

        if (!sluice_fsm_event_from_name(str_of(e, "name"), &t))
            continue;
        json_array_append_new(
            out, json_pack("{s:O, s:f, s:O, s:O}", "seq", json_object_get(e, "seq"), "time",
                           (double)json_integer_value(json_object_get(e, "time")) / 1000.0, "name",
                           json_object_get(e, "name"), "context", json_object_get(e, "context")));
    }
    json_decref(stored);
    return out;
}

/* The stored summary of `id` is what `f` says. */
static void summary_is(const char *id, const sluice_fsm_launch_t *f)
{
    json_t *r = row(id);
    const json_t *ids = json_object_get(r, "job_ids");

    cr_assert_str_eq(str_of(r, "state"), sluice_fsm_state_name(sluice_fsm_state_public(f->state)),
                     "%s: state", id);
    cr_assert_eq(json_is_true(json_object_get(r, "terminal")), f->state == SLUICE_FSM_DONE,
                 "%s: terminal", id);
    cr_assert_eq(json_integer_value(json_object_get(r, "attempt")), (json_int_t)f->attempt,
                 "%s: attempt", id);
    cr_assert_eq(json_array_size(ids), f->n_job_ids, "%s: job ids", id);
    for (size_t i = 0; i < f->n_job_ids; i++)
        cr_assert_eq(json_integer_value(json_array_get(ids, i)), (json_int_t)f->job_ids[i],
                     "%s: job_ids[%zu]", id, i);
    if (f->state == SLUICE_FSM_DONE)
        cr_assert_eq(json_integer_value(json_object_get(r, "result_code")), f->result, "%s: result",
                     id);
    json_decref(r);
}

/* (d) Every launch the launcher holds is the replay of its stored log, and
 * the stored summary says the same. */
static void held_states_replay(sluice_launcher_t *l)
{
    const json_t *x;
    size_t i;

    json_array_foreach(launches(), i, x)
    {
        sluice_error_t err = SLUICE_ERROR_INIT;
        const char *id = str_of(x, "launch_id");
        launch_t *L = launcher_find_launch(l, id);
        sluice_fsm_launch_t mine, replayed;
        json_t *log;

        if (L == NULL)
            continue;
        launcher_fsm_get(L, &mine);
        log = fsm_log(id);
        cr_assert_sluice_ok(sluice_fsm_replay(&mine.cfg, log, &replayed, &err), &err);
        json_decref(log);
        cr_assert(sluice_fsm_launch_equal(&mine, &replayed),
                  "%s: the launcher holds %s (seq %lld at %.3f, %u applied, \"%s\") but its "
                  "stored log replays to %s (seq %lld at %.3f, %u applied, \"%s\")",
                  id, sluice_fsm_state_name(mine.state), (long long)mine.last_seq, mine.last_time,
                  (unsigned)mine.n_applied, mine.reason, sluice_fsm_state_name(replayed.state),
                  (long long)replayed.last_seq, replayed.last_time, (unsigned)replayed.n_applied,
                  replayed.reason);
        summary_is(id, &replayed);
        n_compared[i]++;
        n_compared_done[i] += replayed.state == SLUICE_FSM_DONE;
    }
}

static bool all_done(void)
{
    const json_t *x;
    size_t i;
    bool done = true;

    json_array_foreach(launches(), i, x)
    {
        json_t *r = row(str_of(x, "launch_id"));

        done = done && json_is_true(json_object_get(r, "terminal"));
        json_decref(r);
    }
    return done;
}

static size_t count_events(const char *id, const char *name)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL, *e;
    size_t i, k = 0;

    cr_assert_sluice_ok(sluice_store_read_events(store, id, 1, 0, &evs, &err), &err);
    json_array_foreach(evs, i, e)
    {
        k += strcmp(str_of(e, "name"), name) == 0;
    }
    json_decref(evs);
    return k;
}

/* ---- (a) ------------------------------------------------------------------ */

Test(store_compat, every_launch_is_there_with_its_state)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_filter_t filter;
    json_t *page = NULL;
    const json_t *x;
    size_t i, n_accepted = 0, n_live = 0, n_done = 0;

    memset(&filter, 0, sizeof(filter));
    filter.limit = 1000;
    cr_assert_sluice_ok(sluice_store_list_launches(store, &filter, &page, NULL, &err), &err);
    cr_assert_eq(json_array_size(page), json_array_size(launches()), "launches in the store");
    json_decref(page);
    /* tenants came later: every launch of the old store is the default
     * tenant's, and no tenant has any */
    filter.tenant = "";
    cr_assert_sluice_ok(sluice_store_list_launches(store, &filter, &page, NULL, &err), &err);
    cr_assert_eq(json_array_size(page), json_array_size(launches()), "the default tenant's");
    json_decref(page);
    filter.tenant = "vision";
    cr_assert_sluice_ok(sluice_store_list_launches(store, &filter, &page, NULL, &err), &err);
    cr_assert_eq(json_array_size(page), 0, "no tenant's");
    json_decref(page);
    filter.tenant = NULL;
    json_array_foreach(launches(), i, x)
    {
        const char *id = str_of(x, "launch_id");
        json_t *r = row(id), *stored = NULL, *log;
        char *canonical = json_dumps(json_object_get(r, "request"), JSON_COMPACT | JSON_SORT_KEYS);
        sluice_fsm_config_t c;
        sluice_fsm_launch_t f;

        cr_assert_str_eq(str_of(r, "state"), str_of(x, "state"), "%s: state", id);
        cr_assert_eq(json_is_true(json_object_get(r, "terminal")),
                     json_is_true(json_object_get(x, "terminal")), "%s: terminal", id);
        cr_assert(json_equal(json_object_get(r, "result_code"), json_object_get(x, "result_code")),
                  "%s: result_code", id);
        cr_assert(json_equal(json_object_get(r, "reason"), json_object_get(x, "reason")),
                  "%s: reason", id);
        cr_assert(json_equal(json_object_get(r, "attempt"), json_object_get(x, "attempt")),
                  "%s: attempt", id);
        cr_assert(json_equal(json_object_get(r, "job_ids"), json_object_get(x, "job_ids")),
                  "%s: job_ids", id);
        cr_assert(json_equal(json_object_get(r, "last_seq"), json_object_get(x, "last_seq")),
                  "%s: last_seq", id);
        cr_assert_str_eq(str_of(r, "request_hash"), str_of(x, "request_hash"), "%s: hash", id);
        cr_assert_str_eq(canonical, str_of(x, "canonical"), "%s: request", id);
        free(canonical);
        /* The old render text reads back as the render the old accept made
         * (its job 0 without the script, as the old launcher stored it). */
        cr_assert(json_is_object(json_object_get(r, "render")), "%s: render", id);
        if (json_object_get(x, "render") != NULL)
            cr_assert(json_equal(json_object_get(r, "render"), json_object_get(x, "render")),
                      "%s: the stored render is not the old accept's", id);
        /* The log is whole and replays to the stored state. */
        cr_assert_sluice_ok(sluice_store_replay(store, id, &stored, &err), &err);
        cr_assert(
            json_equal(json_object_get(json_array_get(stored, json_array_size(stored) - 1), "seq"),
                       json_object_get(x, "last_seq")),
            "%s: log", id);
        json_decref(stored);
        sluice_fsm_config_default(&c);
        log = fsm_log(id);
        cr_assert_sluice_ok(sluice_fsm_replay(&c, log, &f, &err), &err);
        json_decref(log);
        cr_assert_str_eq(sluice_fsm_state_name(sluice_fsm_state_public(f.state)),
                         str_of(x, "state"), "%s: replayed state", id);
        n_accepted += f.state == SLUICE_FSM_ACCEPTED;
        n_live += f.state != SLUICE_FSM_ACCEPTED && f.state != SLUICE_FSM_DONE;
        n_done += f.state == SLUICE_FSM_DONE;
        json_decref(r);
    }
    cr_assert(n_accepted >= 4 && n_live >= 3 && n_done >= 3,
              "the fixture holds ACCEPTED (%zu), live (%zu) and DONE (%zu) launches", n_accepted,
              n_live, n_done);
}

/* ---- (b) and (d) ------------------------------------------------------------ */

/* How each launch ends here: the live ones as the fake cluster says, the
 * ACCEPTED ones submitted now (the fake's default: COMPLETED 0), the one
 * whose secret value died with the old process at recovery, the old DONE
 * ones as they were. */
static const struct {
    const char *id;
    int result;
} ends[] = {
    {"c1-done", 0},         {"c1-failed", 1},     {"c1-cancelled", 9}, {"c1-running", 0},
    {"c1-pending", 1},      {"c1-submitting", 0}, {"c1-accepted", 0},  {"c1-accepted-het", 0},
    {"c1-accepted-dep", 0}, {"c1-nvflare", 0},    {"c1-study", 0},     {"c1-secret", 104},
};

/* The old cluster's jobs of the launches that were live, in the fake one
 * (same ids, names and comments), each with how it goes on from here. */
static void give_old_jobs(void)
{
    static const fake_stage_t running[] = {{SLUICE_JOB_RUNNING, 0, 0, 0, 3},
                                           {SLUICE_JOB_COMPLETED, 0, 0, 0, 2}};
    static const fake_stage_t pending[] = {{SLUICE_JOB_PENDING, 0, 0, 0, 2},
                                           {SLUICE_JOB_RUNNING, 0, 0, 0, 1},
                                           {SLUICE_JOB_FAILED, 0, 3, 0, 2}};
    static const fake_stage_t unanswered[] = {{SLUICE_JOB_PENDING, 0, 0, 0, 1},
                                              {SLUICE_JOB_RUNNING, 0, 0, 0, 1},
                                              {SLUICE_JOB_COMPLETED, 0, 0, 0, 2}};
    static const struct {
        const char *id;
        const fake_stage_t *stages;
        size_t n;
    } jobs[] = {
        {"c1-running", running, 2}, {"c1-pending", pending, 3}, {"c1-submitting", unanswered, 3}};

    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
        const json_t *j = json_object_get(launch_of(jobs[i].id), "job");
        uint64_t id = (uint64_t)json_integer_value(json_object_get(j, "id"));

        cr_assert(id > 0, "%s: expected.json names its job", jobs[i].id);
        fake_cluster_set_script(fc, jobs[i].stages, jobs[i].n);
        fc->next_id = id;
        cr_assert_eq(fake_cluster_add_job(fc, str_of(j, "name"), str_of(j, "comment"), USER,
                                          (size_t)json_integer_value(json_object_get(j, "n_comp"))),
                     id);
    }
    fake_cluster_set_script(fc, unanswered, 3); /* the default again */
    fc->next_id = 9000;
}

/* (b) The POST of launch `id` is its old render: each job description as
 * the old accept rendered it, with the attempt's marker, job 0 with the
 * render's batch script, and the dependency on the partner's job. */
static void post_is_old_render(const post_t *p, const char *id)
{
    const json_t *x = launch_of(id);
    const json_t *render = json_object_get(x, "render");
    const json_t *jobs = json_object_get(render, "jobs");
    const char *script = str_of(render, "script");
    json_t *req = json_loads(str_of(x, "request"), 0, NULL);
    const json_t *depends = json_object_get(req, "depends_on");
    char name[256], comment[160], dependency[64] = "";

    cr_assert_not_null(script, "%s: expected.json has its old render", id);
    cr_assert_eq(json_array_size(p->jobs), json_array_size(jobs), "%s: components", id);
    marker_job_name(name, sizeof(name), "sluice", "site-1", id, 1);
    snprintf(comment, sizeof(comment), "sluice:%s:1", id);
    if (depends != NULL) {
        const json_t *partner = launch_of(str_of(depends, "launch_id"));

        snprintf(
            dependency, sizeof(dependency), "%s:%lld", str_of(depends, "condition"),
            (long long)json_integer_value(json_object_get(json_object_get(partner, "job"), "id")));
    }
    for (size_t i = 0; i < json_array_size(p->jobs); i++) {
        json_t *want = json_deep_copy(json_array_get(jobs, i));
        const json_t *got = json_array_get(p->jobs, i);
        char *w, *g;

        json_object_set_new(want, "name", json_string(name));
        json_object_set_new(want, "comment", json_string(comment));
        if (i == 0)
            json_object_set_new(want, "script", json_string(script));
        if (dependency[0] != '\0')
            json_object_set_new(want, "dependency", json_string(dependency));
        w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
        g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        cr_assert(json_equal(want, got), "%s: job %zu sent\n%.2000s\nnot the old render's\n%.2000s",
                  id, i, g, w);
        free(w);
        free(g);
        json_decref(want);
    }
    /* The batch script is the one stored in 1ccc315's days, not one made
     * again now (today's render adds a status check the old one lacks). */
    cr_assert_str_eq(str_of(json_array_get(p->jobs, 0), "script"), script, "%s: script", id);
    cr_assert_null(strstr(script, "sluice_is_status"), "%s: a render of today was sent", id);
    json_decref(req);
}

/* (d) A restart: a new launcher reads back what `l` folded from its own
 * appends and holds the same state of every live launch (one that has
 * ended is not loaded again). */
static sluice_launcher_t *restart(sluice_launcher_t *l)
{
    struct {
        const char *id;
        sluice_fsm_launch_t f;
    } held[16];
    size_t n = 0, i, n_live = 0;
    const json_t *x;

    json_array_foreach(launches(), i, x)
    {
        launch_t *L = launcher_find_launch(l, str_of(x, "launch_id"));

        if (L == NULL)
            continue;
        cr_assert_lt(n, 16);
        held[n].id = str_of(x, "launch_id");
        launcher_fsm_get(L, &held[n++].f);
    }
    sluice_launcher_free(l);
    l = new_launcher();
    for (i = 0; i < n; i++) {
        launch_t *L = launcher_find_launch(l, held[i].id);
        sluice_fsm_launch_t f;

        if (held[i].f.state == SLUICE_FSM_DONE)
            continue;
        cr_assert_not_null(L, "%s: not resumed after the restart", held[i].id);
        launcher_fsm_get(L, &f);
        cr_assert(sluice_fsm_launch_equal(&f, &held[i].f), "%s: %s after the restart, %s before",
                  held[i].id, sluice_fsm_state_name(f.state),
                  sluice_fsm_state_name(held[i].f.state));
        n_live++;
    }
    cr_assert_gt(n_live, 0, "live launches at the restart");
    return l;
}

Test(store_compat, the_launcher_resumes_every_launch)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_t *l;
    sluice_fsm_launch_t f;
    const json_t *x;
    json_t *r, *ids;
    size_t i, n_posted = 0;
    int steps;

    give_old_jobs();
    l = new_launcher();
    /* The old request's terms: its pending timeout and requeue. */
    cr_assert_not_null(launcher_find_launch(l, "c1-pending"));
    launcher_fsm_get(launcher_find_launch(l, "c1-pending"), &f);
    cr_assert_eq(f.cfg.pending_timeout, 500.0);
    cr_assert(f.cfg.requeue_allowed);
    /* Recovery: the secret value died with the old process; the POST the
     * old process did not live to record is being reconciled. */
    r = row("c1-secret");
    cr_assert(json_is_true(json_object_get(r, "terminal")), "c1-secret: %s", str_of(r, "state"));
    cr_assert_eq(json_integer_value(json_object_get(r, "result_code")), 104);
    cr_assert_not_null(strstr(str_of(r, "reason"), "secret"), "%s", str_of(r, "reason"));
    json_decref(r);
    cr_assert_eq(count_events("c1-submitting", "submit-uncertain"), 1);
    cr_assert_geq(sluice_launcher_tracked(l), 7, "every live launch is tracked");
    held_states_replay(l);

    for (steps = 0; steps < 60 && !all_done(); steps++) {
        cr_assert_sluice_ok(sluice_launcher_step(l, &err), &err);
        clock_now += 1000;
        held_states_replay(l);
        if (steps == 1)
            l = restart(l);
    }
    cr_assert(all_done(), "every launch ended within %d steps", steps);
    for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
        r = row(ends[i].id);
        cr_assert_eq(json_integer_value(json_object_get(r, "result_code")), ends[i].result,
                     "%s: result %lld (%s)", ends[i].id,
                     (long long)json_integer_value(json_object_get(r, "result_code")),
                     str_of(r, "reason"));
        json_decref(r);
    }
    /* The old DONE launches were left as they were. */
    json_array_foreach(launches(), i, x)
    {
        if (!json_is_true(json_object_get(x, "terminal")))
            continue;
        r = row(str_of(x, "launch_id"));
        cr_assert(json_equal(json_object_get(r, "last_seq"), json_object_get(x, "last_seq")),
                  "%s: written to after its end", str_of(x, "launch_id"));
        json_decref(r);
    }

    /* (b) One POST per ACCEPTED launch (not the one whose secret is gone),
     * none for the launches that had a job: the unanswered one adopted its
     * job. */
    json_array_foreach(launches(), i, x)
    {
        const char *id = str_of(x, "launch_id");
        char comment[160];
        size_t k, found = 0;

        snprintf(comment, sizeof(comment), "sluice:%s:1", id);
        for (k = 0; k < n_posts; k++)
            if (strcmp(posts[k].comment, comment) == 0) {
                found++;
                post_is_old_render(&posts[k], id);
            }
        if (strcmp(str_of(x, "state"), "ACCEPTED") == 0 && strcmp(id, "c1-secret") != 0)
            cr_assert_eq(found, 1, "%s: %zu POSTs", id, found);
        else
            cr_assert_eq(found, 0, "%s: POSTed again", id);
        n_posted += found;
    }
    cr_assert_eq(n_posted, 5);
    cr_assert_eq(fc->n_submit, 5);
    cr_assert_eq(count_events("c1-submitting", "adopted"), 1);
    r = row("c1-submitting");
    ids =
        json_pack("[O]", json_object_get(json_object_get(launch_of("c1-submitting"), "job"), "id"));
    cr_assert(json_equal(json_object_get(r, "job_ids"), ids), "c1-submitting: not its old job");
    json_decref(ids);
    json_decref(r);

    /* (d) compared at every step; then the ended launches are archived and
     * let go. */
    json_array_foreach(launches(), i, x)
    {
        if (json_is_true(json_object_get(x, "terminal")))
            continue; /* ended before: never held */
        cr_assert_geq(n_compared[i], 3, "%s: compared with its replay %u times",
                      str_of(x, "launch_id"), n_compared[i]);
        cr_assert_geq(n_compared_done[i], 1, "%s: never compared once DONE",
                      str_of(x, "launch_id"));
    }
    archive_ok = true;
    cr_assert_sluice_ok(sluice_launcher_step(l, &err), &err);
    cr_assert_eq(sluice_launcher_tracked(l), 0);
    sluice_launcher_free(l);
}

/* ---- (c) ------------------------------------------------------------------ */

/* Accept `text` (prepare, then commit) with today's pipeline; the outcome,
 * and the canonical text into `text_out` (may be NULL). */
static sluice_err accept_text(sluice_launcher_t *l,
                              const char *text,
                              sluice_accept_outcome *outcome,
                              char **text_out,
                              sluice_error_t *err)
{
    sluice_accept_opts_t o = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_t *a = NULL;
    sluice_err rc;

    o.rt = rt;
    o.stat_fn = image_present;
    o.caller = "carol";
    *outcome = SLUICE_ACCEPT_NONE;
    rc = sluice_accept_prepare(&a, NULL, cfg, text, strlen(text), &o, err);
    if (rc != SLUICE_OK)
        return rc;
    if (text_out != NULL)
        *text_out = strdup(sluice_accept_request_text(a));
    rc = sluice_accept_commit(a, outcome, NULL, l, err);
    sluice_accept_free(a);
    return rc;
}

static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);

    cr_assert_not_null(at, "%s not in %s", from, text);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return out;
}

Test(store_compat, the_same_request_is_the_same_launch)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_launcher_t *l = new_launcher();
    size_t tracked = sluice_launcher_tracked(l), i;
    const json_t *x;

    json_array_foreach(launches(), i, x)
    {
        const char *id = str_of(x, "launch_id");
        const char *text = str_of(x, "request");
        sluice_accept_outcome outcome;
        json_t *before = row(id), *after, *doc;
        char *canonical = NULL, *again;

        /* The same text: today's canonical text is the old one, and the old
         * hash matches today's composition around it. */
        cr_assert_sluice_ok(accept_text(l, text, &outcome, &canonical, &err), &err);
        cr_assert_str_eq(canonical, str_of(x, "canonical"), "%s: canonical request", id);
        cr_assert_eq(outcome, SLUICE_ACCEPT_EXISTED, "%s: outcome %d", id, (int)outcome);
        free(canonical);
        /* The same request written otherwise (keys sorted, indented). */
        doc = json_loads(text, 0, NULL);
        cr_assert_not_null(doc);
        again = json_dumps(doc, JSON_INDENT(3) | JSON_SORT_KEYS);
        json_decref(doc);
        cr_assert_sluice_ok(accept_text(l, again, &outcome, NULL, &err), &err);
        cr_assert_eq(outcome, SLUICE_ACCEPT_EXISTED, "%s: reformatted: outcome %d", id,
                     (int)outcome);
        free(again);
        /* Nothing was written. */
        after = row(id);
        cr_assert(json_equal(before, after), "%s: the row changed", id);
        json_decref(before);
        json_decref(after);
    }
    cr_assert_eq(sluice_launcher_tracked(l), tracked, "a repeat is not tracked twice");

    /* A changed request under an old launch id: a conflict, the old row
     * stays. */
    {
        static const struct {
            const char *id, *from, *to;
        } changes[] = {
            {"c1-accepted", "\"10\"", "\"11\""},
            {"c1-running", "\"FL_ROUNDS\": \"3\"", "\"FL_ROUNDS\": \"4\""},
            {"c1-done", "/bin/true", "/bin/false"},
        };

        for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
            const json_t *y = launch_of(changes[i].id);
            char *text = replace(str_of(y, "request"), changes[i].from, changes[i].to);
            sluice_accept_outcome outcome;
            json_t *before = row(changes[i].id), *after;

            cr_assert_eq(accept_text(l, text, &outcome, NULL, &err), SLUICE_ECONFLICT, "%s: %s",
                         changes[i].id, err.text);
            cr_assert_eq(outcome, SLUICE_ACCEPT_CONFLICT, "%s", changes[i].id);
            after = row(changes[i].id);
            cr_assert(json_equal(before, after), "%s: the row changed", changes[i].id);
            cr_assert_str_eq(str_of(after, "request_hash"), str_of(y, "request_hash"));
            json_decref(before);
            json_decref(after);
            free(text);
        }
    }
    sluice_launcher_free(l);
}
