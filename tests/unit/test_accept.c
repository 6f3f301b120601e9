/* SPDX-License-Identifier: Apache-2.0 */
/* test_accept.c - the accept pipeline (sluice_accept): a new launch, the
 * idempotent repeat, the conflicting repeat, a policy refusal that names
 * its field, a missing secret_env, and secret values that never reach the
 * store or the log.  A temporary store and a launcher over the fake
 * cluster (server_fixture), the flower-gpu golden site. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/accept.h>
#include <sluice/log.h>
#include <sluice/sluice.h>

#include "render_case.h"
#include "server_fixture.h"
#include "site/config_model.h"
#include "sluice_assert.h"

#define SECRET_VALUE "sekrit-Value-0451-never-stored"

static server_fixture_t fx;

static void setup(void)
{
    char why[256];

    cr_assert_eq(sfx_start(&fx, NULL, NULL, why, sizeof(why)), 0, "%s", why);
}

static void teardown(void)
{
    sfx_stop(&fx);
}

TestSuite(accept, .init = setup, .fini = teardown, .timeout = 30);

static sluice_accept_opts_t opts(void)
{
    sluice_accept_opts_t o = SLUICE_ACCEPT_OPTS_INIT;

    o.getenv_fn = render_case_getenv;
    o.stat_fn = sfx_accept_image;
    o.caller = "alice";
    return o;
}

/* The request of sfx_request() with `extra` (", \"key\": value ...")
 * added before its closing brace. */
static const char *request_with(const char *id, const char *extra, char *buf, size_t size)
{
    char *brace;

    sfx_request(id, "/bin/true", buf, size);
    brace = strrchr(buf, '}');
    snprintf(brace, size - (size_t)(brace - buf), "%s}", extra);
    return buf;
}

/* 1 when `needle` occurs in any file of directory `dir`. */
static int dir_contains(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;

    cr_assert_not_null(d, "%s", dir);
    while (!found && (e = readdir(d)) != NULL) {
        char path[600];
        FILE *f;
        char *data;
        long n;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if ((f = fopen(path, "rb")) == NULL)
            continue;
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        data = malloc((size_t)n + 1);
        cr_assert_not_null(data);
        if (n > 0 && fread(data, 1, (size_t)n, f) == (size_t)n) {
            size_t k, m = strlen(needle);
            for (k = 0; !found && k + m <= (size_t)n; k++)
                found = memcmp(data + k, needle, m) == 0;
        }
        free(data);
        fclose(f);
    }
    closedir(d);
    return found;
}

static char log_text[16384];

static void capture_log(int level, const char *msg, void *arg)
{
    size_t used = strlen(log_text);

    (void)level;
    (void)arg;
    snprintf(log_text + used, sizeof(log_text) - used, "%s\n", msg);
}

Test(accept, a_new_launch_is_stored_with_its_render)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_accept_t *a = NULL;
    char req[1200];
    json_t *row = NULL;

    sfx_request("acc-new", "/bin/true", req, sizeof(req));
    cr_assert_sluice_ok(
        sluice_accept(&a, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_NEW);
    cr_expect_str_eq(sluice_accept_launch_id(a), "acc-new");
    cr_assert_not_null(sluice_accept_render(a));
    cr_expect_eq(sluice_accept_render(a)->n_jobs, 1);
    cr_expect_str_eq(json_string_value(json_object_get(sluice_accept_request_json(a), "launch_id")),
                     "acc-new");
    cr_expect(json_is_array(json_object_get(sluice_accept_render_json(a), "jobs")));
    cr_expect_eq(sluice_launcher_tracked(fx.launcher), 1);

    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "acc-new", &row, &err), &err);
    cr_expect_str_eq(json_string_value(json_object_get(row, "state")), "ACCEPTED");
    cr_expect(json_is_object(json_object_get(row, "render")));
    json_decref(row);
    sluice_accept_free(a);
}

Test(accept, the_same_request_again_is_the_same_launch)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    char req[1200];

    sfx_request("acc-again", "/bin/true", req, sizeof(req));
    cr_assert_sluice_ok(
        sluice_accept(NULL, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_NEW);
    /* The same request, written differently (a key order, blanks): the
     * canonical request is the same, so is the launch. */
    snprintf(req, sizeof(req),
             "{ \"pools\": [{\"command\": \"/bin/true\", \"name\": \"main\", "
             "\"mem_per_node_mib\": 1024, \"cpus_per_node\": 1}], \"partition\": \"gpu\", "
             "\"time_limit\": \"00:10:00\", \"profile\": \"none\", \"site\": \"site-1\", "
             "\"launch_id\": \"acc-again\" }");
    outcome = SLUICE_ACCEPT_NONE;
    cr_assert_sluice_ok(
        sluice_accept(NULL, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_EXISTED);
    cr_expect_eq(sluice_launcher_tracked(fx.launcher), 1);
}

Test(accept, the_same_id_with_another_request_is_a_conflict)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_accept_t *a = NULL;
    char req[1200], *text;
    json_t *row = NULL;

    sfx_request("acc-conflict", "/bin/true", req, sizeof(req));
    cr_assert_sluice_ok(
        sluice_accept(NULL, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err), &err);
    sfx_request("acc-conflict", "/bin/false", req, sizeof(req));
    cr_expect_eq(
        sluice_accept(&a, &outcome, &stage, fx.launcher, fx.cfg, req, strlen(req), &o, &err),
        SLUICE_ECONFLICT, "%s", err.text);
    cr_expect_eq(outcome, SLUICE_ACCEPT_CONFLICT);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_STORE);
    cr_expect_null(a, "nothing is handed back on a failure");
    cr_expect(strstr(err.text, "acc-conflict") != NULL, "%s", err.text);
    /* The first request stays. */
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "acc-conflict", &row, &err), &err);
    text = json_dumps(row, JSON_COMPACT);
    cr_assert_not_null(text);
    cr_expect(strstr(text, "/bin/false") == NULL, "%s", text);
    free(text);
    json_decref(row);
}

Test(accept, a_policy_refusal_names_the_field_and_stores_nothing)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    char req[1200], *p;
    json_t *row = NULL;

    sfx_request("acc-policy", "/bin/true", req, sizeof(req));
    p = strstr(req, "\"gpu\"");
    cr_assert_not_null(p);
    memcpy(p, "\"dbg\"", 5); /* a partition the site does not allow */
    cr_expect_eq(
        sluice_accept(NULL, &outcome, &stage, fx.launcher, fx.cfg, req, strlen(req), &o, &err),
        SLUICE_EINVAL, "%s", err.text);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_PARSE);
    cr_expect_eq(outcome, SLUICE_ACCEPT_NONE);
    cr_expect(strncmp(err.text, "partition: ", 11) == 0, "%s", err.text);
    cr_expect(strstr(err.text, "not allowed by site policy") != NULL, "%s", err.text);
    cr_expect_eq(sluice_store_get_launch(fx.store, "acc-policy", &row, &err), SLUICE_ENOTFOUND);
    cr_expect_eq(sluice_launcher_tracked(fx.launcher), 0);
}

Test(accept, a_missing_secret_env_is_named_before_anything_is_stored)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_accept_t *a = NULL;
    char req[1200];
    json_t *row = NULL;

    request_with("acc-env", ", \"secret_env\": [\"ACC_NOT_SET_ANYWHERE\"]", req, sizeof(req));
    /* Judged and rendered without it (a dry run needs no secret)... */
    cr_assert_sluice_ok(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    /* ...refused when it is to be committed. */
    cr_expect_eq(sluice_accept_commit(a, NULL, &stage, fx.launcher, &err), SLUICE_EINVAL);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_SECRETS);
    cr_expect(strstr(err.text, "ACC_NOT_SET_ANYWHERE") != NULL, "%s", err.text);
    sluice_accept_free(a);
    a = NULL;
    /* read_secrets: refused by prepare already. */
    o.read_secrets = true;
    stage = SLUICE_ACCEPT_STAGE_NONE;
    cr_expect_eq(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                 SLUICE_EINVAL);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_SECRETS);
    cr_expect_null(a);
    cr_expect_eq(sluice_store_get_launch(fx.store, "acc-env", &row, &err), SLUICE_ENOTFOUND);
}

Test(accept, secret_values_never_reach_the_store_or_the_log)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_accept_t *a = NULL;
    char req[1200], *text;
    json_t *row = NULL;

    log_text[0] = '\0';
    sluice_log_set(capture_log, SLUICE_LOG_DEBUG, NULL);
    request_with("acc-secret", ", \"secrets\": {\"API_KEY\": \"" SECRET_VALUE "\"}", req,
                 sizeof(req));
    cr_assert_sluice_ok(
        sluice_accept(&a, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_NEW);
    /* The secret is listed by name in what the launcher got. */
    text = json_dumps(sluice_accept_request_json(a), JSON_COMPACT);
    cr_assert_not_null(text);
    cr_expect(strstr(text, SECRET_VALUE) == NULL, "%s", text);
    cr_expect(strstr(text, "API_KEY") != NULL, "%s", text);
    free(text);
    text = json_dumps(sluice_accept_render_json(a), JSON_COMPACT);
    cr_expect(strstr(text, SECRET_VALUE) == NULL);
    free(text);
    /* The same request again (its values in memory again): still nothing
     * stored, and an idempotent repeat. */
    cr_assert_sluice_ok(
        sluice_accept(NULL, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_EXISTED);
    /* A conflicting repeat with a secret: the error names no value. */
    request_with("acc-secret", ", \"secrets\": {\"API_KEY\": \"other-" SECRET_VALUE "\"}", req,
                 sizeof(req));
    (void)sluice_accept(NULL, &outcome, NULL, fx.launcher, fx.cfg, req, strlen(req), &o, &err);
    cr_expect(strstr(err.text, SECRET_VALUE) == NULL, "%s", err.text);

    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "acc-secret", &row, &err), &err);
    text = json_dumps(row, JSON_COMPACT);
    cr_expect(strstr(text, SECRET_VALUE) == NULL, "%s", text);
    free(text);
    json_decref(row);
    /* Every file of the store (the database and its write-ahead log): the
     * launch is there, its secret value is not. */
    cr_expect(dir_contains(fx.state, "acc-secret"), "the search finds what is stored");
    cr_expect_not(dir_contains(fx.state, SECRET_VALUE), "a secret value is in %s", fx.state);
    cr_expect(strstr(log_text, SECRET_VALUE) == NULL, "%s", log_text);
    sluice_log_set(NULL, 0, NULL);
    sluice_accept_free(a);
}

/* ---- studies (issue 13) ---------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

#define STUDY_V1 "format_version: 2\nstudies:\n  s1:\n    env: {STUDY_MARK: v1}\n"
/* The same size as STUDY_V1, written at once: seen by its bytes. */
#define STUDY_V2 "format_version: 2\nstudies:\n  s1:\n    env: {STUDY_MARK: v2}\n"

/* A study the runtime does not know is refused, naming it: the launch would
 * otherwise run without the study's datasets, secrets and partition. */
Test(accept, an_unknown_study_is_refused_naming_it)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_study_runtime_t *rt = NULL;
    sluice_accept_t *a = NULL;
    char req[1200];
    json_t *row = NULL;

    cr_assert_sluice_ok(
        sluice_study_runtime_load("study.yaml", STUDY_V1, strlen(STUDY_V1), fx.cfg, &rt, &err),
        &err);
    o.rt = rt;
    request_with("acc-study-typo", ", \"study\": \"s2\"", req, sizeof(req));
    cr_expect_eq(sluice_accept(NULL, NULL, &stage, fx.launcher, fx.cfg, req, strlen(req), &o, &err),
                 SLUICE_EINVAL);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_PARSE);
    cr_expect_str_eq(err.text, "study: unknown study \"s2\" (not in the study runtime file); "
                               "refused");
    cr_expect_eq(sluice_store_get_launch(fx.store, "acc-study-typo", &row, &err), SLUICE_ENOTFOUND);
    /* Without any study runtime, every study is unknown. */
    o.rt = NULL;
    request_with("acc-study-none", ", \"study\": \"s1\"", req, sizeof(req));
    cr_expect_eq(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                 SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "study: unknown study \"s1\": no study runtime file is loaded "
                               "(--study-runtime); refused");
    cr_expect_null(a);
    /* The known one is taken, with its environment. */
    o.rt = rt;
    cr_assert_sluice_ok(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_expect_str_eq(sluice_accept_study(a)->name, "s1");
    cr_expect_not_null(strstr(sluice_accept_render(a)->script, "sluice_export STUDY_MARK 'v1'"));
    sluice_accept_free(a);
    sluice_study_runtime_free(rt);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    for (; (hay = strstr(hay, needle)) != NULL; hay++)
        n++;
    return n;
}

/* `sluice serve`'s study source: the file is re-read when it changes; a
 * version in use survives the reload; an unusable file refuses study
 * launches (logged once), never requests that name no study. */
Test(accept, the_study_file_is_reread_when_it_changes)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_study_source_t *src = NULL;
    sluice_accept_t *a1 = NULL, *a2 = NULL;
    char path[300], req[1200], plain[1200];

    snprintf(path, sizeof(path), "%s/study_runtime.yaml", fx.tmp);
    write_text(path, STUDY_V1);
    cr_assert_sluice_ok(sluice_study_source_open(&src, path, fx.cfg, &err), &err);
    o.studies = src;
    request_with("acc-reload", ", \"study\": \"s1\"", req, sizeof(req));
    cr_assert_sluice_ok(sluice_accept_prepare(&a1, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_expect_not_null(strstr(sluice_accept_render(a1)->script, "STUDY_MARK 'v1'"));

    /* Rewritten in place while a1 still holds the first version. */
    write_text(path, STUDY_V2);
    cr_assert_sluice_ok(sluice_accept_prepare(&a2, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_expect_not_null(strstr(sluice_accept_render(a2)->script, "STUDY_MARK 'v2'"), "%s",
                       sluice_accept_render(a2)->script);
    /* The first version is still whole for its reader (ASan watches). */
    cr_expect_str_eq(sluice_accept_study(a1)->env_values[0], "v1");
    sluice_accept_free(a1);
    sluice_accept_free(a2);
    a1 = a2 = NULL;

    /* Invalid now: study launches are refused with the file's own error
     * (naming the file), logged once; a request without a study goes on. */
    log_text[0] = '\0';
    sluice_log_set(capture_log, SLUICE_LOG_DEBUG, NULL);
    write_text(path, "format_version: 3\nstudies: {}\n");
    cr_expect_eq(sluice_accept_prepare(&a1, &stage, fx.cfg, req, strlen(req), &o, &err),
                 SLUICE_ECONFIG);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_POLICY);
    cr_expect(strstr(err.text, path) && strstr(err.text, "format_version"), "%s", err.text);
    cr_expect_eq(sluice_accept_prepare(&a1, &stage, fx.cfg, req, strlen(req), &o, &err),
                 SLUICE_ECONFIG);
    cr_expect_eq(count_of(log_text, "cannot be used"), 1, "%s", log_text);
    sfx_request("acc-reload-plain", "/bin/true", plain, sizeof(plain));
    cr_assert_sluice_ok(sluice_accept_prepare(&a1, &stage, fx.cfg, plain, strlen(plain), &o, &err),
                        &err);
    sluice_accept_free(a1);
    a1 = NULL;

    /* Missing: refused, naming the file. */
    cr_assert_eq(unlink(path), 0);
    cr_expect_eq(sluice_accept_prepare(&a1, &stage, fx.cfg, req, strlen(req), &o, &err),
                 SLUICE_ECONFIG);
    cr_expect(strstr(err.text, path) != NULL, "%s", err.text);

    /* Fixed: taken again. */
    write_text(path, STUDY_V1);
    cr_assert_sluice_ok(sluice_accept_prepare(&a1, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_expect_not_null(strstr(sluice_accept_render(a1)->script, "STUDY_MARK 'v1'"));
    sluice_accept_free(a1);
    sluice_log_set(NULL, 0, NULL);
    sluice_study_source_close(src);
}

/* `sluice launch` without --wait: the prepared launch is stored for the
 * supervisor that runs on the store in another process, as the same row a
 * commit through a launcher writes; a repeat is the same launch.  A launch
 * with secret values (which would live only in the handing process) or a
 * dependency (its supervisor checks the partner) is refused, naming why,
 * and nothing is stored. */
Test(accept, a_handed_over_launch_is_the_row_a_commit_writes)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_accept_opts_t o = opts();
    sluice_accept_outcome outcome = SLUICE_ACCEPT_NONE;
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_accept_t *a = NULL, *b = NULL;
    char req[1200], twin[1200];
    json_t *row = NULL, *row2 = NULL;

    sfx_request("acc-ho", "/bin/true", req, sizeof(req));
    cr_assert_sluice_ok(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_assert_sluice_ok(sluice_accept_hand_over(a, fx.store, &outcome, &stage, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_NEW);
    cr_expect_eq(sluice_launcher_tracked(fx.launcher), 0, "no launcher of this process took it");
    cr_assert_sluice_ok(sluice_accept_hand_over(a, fx.store, &outcome, &stage, &err), &err);
    cr_expect_eq(outcome, SLUICE_ACCEPT_EXISTED, "a repeat is the same launch");
    /* the twin, committed through the launcher: the same render and request */
    sfx_request("acc-ho2", "/bin/true", twin, sizeof(twin));
    cr_assert_sluice_ok(
        sluice_accept(&b, &outcome, NULL, fx.launcher, fx.cfg, twin, strlen(twin), &o, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "acc-ho", &row, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_launch(fx.store, "acc-ho2", &row2, &err), &err);
    cr_expect_str_eq(json_string_value(json_object_get(row, "state")), "ACCEPTED");
    cr_expect_str_eq(json_string_value(json_object_get(row, "site")),
                     json_string_value(json_object_get(row2, "site")));
    cr_expect(json_is_object(json_object_get(row, "render")));
    {
        /* the same shape: as many jobs, each with the same keys (job 0's
         * script kept once, at the top: render_for_store) */
        json_t *j1 = json_object_get(json_object_get(row, "render"), "jobs");
        json_t *j2 = json_object_get(json_object_get(row2, "render"), "jobs");
        cr_expect_eq(json_array_size(j1), json_array_size(j2));
        for (size_t i = 0; i < json_array_size(j1); i++) {
            const char *k;
            json_t *v;
            cr_expect_eq(json_object_size(json_array_get(j1, i)),
                         json_object_size(json_array_get(j2, i)), "job %zu", i);
            json_object_foreach(json_array_get(j1, i), k, v)
                cr_expect_not_null(json_object_get(json_array_get(j2, i), k), "job %zu: %s", i, k);
        }
        cr_expect_null(json_object_get(json_array_get(j1, 0), "script"));
        cr_expect(json_is_string(json_object_get(json_object_get(row, "render"), "script")));
    }
    json_decref(row);
    json_decref(row2);
    sluice_accept_free(a);
    sluice_accept_free(b);
    a = NULL;

    /* secret values: refused by name, before any value is read */
    request_with("acc-ho-secret", ", \"secrets\": {\"API_KEY\": \"" SECRET_VALUE "\"}", req,
                 sizeof(req));
    cr_assert_sluice_ok(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_expect_eq(sluice_accept_hand_over(a, fx.store, NULL, &stage, &err), SLUICE_EINVAL);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_SECRETS);
    cr_expect(strstr(err.text, "secrets:") == err.text, "%s", err.text);
    cr_expect(strstr(err.text, "API_KEY") != NULL, "%s", err.text);
    cr_expect(strstr(err.text, SECRET_VALUE) == NULL, "%s", err.text);
    cr_expect_eq(sluice_store_get_launch(fx.store, "acc-ho-secret", &row, &err), SLUICE_ENOTFOUND);
    sluice_accept_free(a);
    a = NULL;

    /* a dependency: refused at the parse stage */
    request_with("acc-ho-dep",
                 ", \"depends_on\": {\"launch_id\": \"acc-ho\", \"condition\": "
                 "\"afterany\"}",
                 req, sizeof(req));
    cr_assert_sluice_ok(sluice_accept_prepare(&a, &stage, fx.cfg, req, strlen(req), &o, &err),
                        &err);
    cr_expect_eq(sluice_accept_hand_over(a, fx.store, NULL, &stage, &err), SLUICE_EINVAL);
    cr_expect_eq(stage, SLUICE_ACCEPT_STAGE_PARSE);
    cr_expect(strstr(err.text, "depends_on:") == err.text, "%s", err.text);
    cr_expect_eq(sluice_store_get_launch(fx.store, "acc-ho-dep", &row, &err), SLUICE_ENOTFOUND);
    sluice_accept_free(a);
}
