/* SPDX-License-Identifier: Apache-2.0 */
/* test_store.c - the durable store: files and modes, refusals, idempotent
 * create, event logs, summaries, listing, pruning, the supervisor lock and
 * consistency after a writer is killed at random points. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/store.h>

#include "sluice_assert.h"
#include "store_backend.h"

#include "base/marker.h"
#include "store/store.h"
#include "store/store_int.h"

static char tmp[128];
static char dir[192];
static char db[256];

static void setup(void)
{
    strcpy(tmp, "/tmp/sluice-store-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(dir, sizeof(dir), "%s/state/sub", tmp);
    snprintf(db, sizeof(db), "%s/sluice.db", dir);
    store_backend_setup();
}

static void teardown(void)
{
    char cmd[256];

    store_backend_teardown();
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", tmp);
}

TestSuite(store, .init = setup, .fini = teardown, .timeout = 120);

static sluice_store_t *open_store(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;

    cr_assert_sluice_ok(store_backend_open(&s, dir, &err), &err);
    cr_assert_not_null(s);
    return s;
}

/* Create launch `id` at `site` with creation time `t`. */
static void make_launch(sluice_store_t *s, const char *id, const char *site, int64_t t)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s, s:s}", "launch_id", id, "command", "true");
    json_t *render = json_pack("{s:s, s:[]}", "script", "#!/bin/sh\ntrue\n", "jobs");
    sluice_store_launch_spec_t spec = {0};
    int existed = -1;

    spec.launch_id = id;
    spec.site = site;
    spec.study = "study1";
    spec.request = req;
    spec.render = render;
    spec.caller = "tester";
    spec.time_ms = t;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, &existed, &err), &err);
    cr_assert_eq(existed, 0);
    json_decref(req);
    json_decref(render);
}

static void finish(sluice_store_t *s, const char *id, int64_t t)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

    sum.state = "SUCCEEDED";
    sum.terminal = 1;
    sum.set_result = 1;
    sum.result_code = 0;
    cr_assert_sluice_ok(
        sluice_store_append_event_and_update(s, id, "finished", NULL, NULL, t, &sum, NULL, &err),
        &err);
}

/* A test of SQLite's files only: skipped on PostgreSQL. */
#define SQLITE_ONLY(why)                                                                           \
    do {                                                                                           \
        if (store_backend_is_pg()) {                                                               \
            store_backend_teardown(); /* .fini does not run after a skip */                        \
            cr_skip_test("SQLite only: %s", why);                                                  \
        }                                                                                          \
    } while (0)

/* Whole file into memory; caller frees. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long n;

    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = malloc((size_t)n + 1);
    cr_assert_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return data;
}

static int mode_of(const char *path)
{
    struct stat sb;

    cr_assert_eq(stat(path, &sb), 0, "%s", path);
    return (int)(sb.st_mode & 0777);
}

/* The launch a create answers with, built in memory, is the launch and
 * the events a read back gives at once (the API's 201 uses it). */
Test(store, created_launch_is_what_a_read_back_gives)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *req =
        json_pack("{s:s, s:s, s:{s:s}}", "launch_id", "c1", "command", "run", "env", "A", "b");
    json_t *render = json_pack("{s:s, s:[]}", "script", "#!/bin/sh\ntrue\n", "jobs");
    json_t *ctx = json_pack("{s:s}", "via", "api");
    json_t *l_mem = NULL, *ev_mem = NULL, *l_db = NULL, *ev_db = NULL;
    sluice_store_launch_spec_t sp[2];
    sluice_store_create_result_t res[2];
    int64_t v_mem = 0, v_db = 0;

    memset(sp, 0, sizeof(sp));
    for (int i = 0; i < 2; i++) {
        sp[i].launch_id = i == 0 ? "c1" : "c2";
        sp[i].site = "s1";
        sp[i].request = req;
        sp[i].render = render;
        sp[i].time_ms = 5000 + i;
    }
    sp[0].study = "st";
    sp[0].cluster = "east";
    sp[0].caller = "alice";
    sp[0].context = ctx;
    cr_assert_sluice_ok(sluice_store_create_many(s, sp, 2, res, &err), &err);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(res[i].rc, SLUICE_OK);
        cr_assert_gt(res[i].gseq, 0);
        cr_assert_sluice_ok(
            sluice_store_created_launch(&sp[i], &res[i], &l_mem, &ev_mem, &v_mem, &err), &err);
        cr_assert_sluice_ok(
            sluice_store_read_launch(s, sp[i].launch_id, &l_db, &ev_db, &v_db, &err), &err);
        {
            char *a = json_dumps(l_mem, JSON_SORT_KEYS), *b = json_dumps(l_db, JSON_SORT_KEYS);
            char *c = json_dumps(ev_mem, JSON_SORT_KEYS), *d = json_dumps(ev_db, JSON_SORT_KEYS);
            cr_expect(json_equal(l_mem, l_db), "in memory %s\nread back %s", a, b);
            cr_expect(json_equal(ev_mem, ev_db), "in memory %s\nread back %s", c, d);
            free(a);
            free(b);
            free(c);
            free(d);
        }
        cr_expect_eq(v_mem, v_db);
        json_decref(l_mem);
        json_decref(ev_mem);
        json_decref(l_db);
        json_decref(ev_db);
    }
    /* A repeat creates nothing: there is no launch of this call to show. */
    cr_assert_sluice_ok(sluice_store_create_many(s, sp, 1, res, &err), &err);
    cr_assert_eq(res[0].existed, 1);
    cr_expect_eq(sluice_store_created_launch(&sp[0], &res[0], &l_mem, &ev_mem, NULL, &err),
                 SLUICE_EINVAL);
    json_decref(req);
    json_decref(render);
    json_decref(ctx);
    sluice_store_close(s);
}

Test(store, creates_private_directory_and_database_in_wal_mode)
{
    sluice_store_t *s;
    char wal[300];
    unsigned char hdr[20];
    FILE *f;

    SQLITE_ONLY("the database file and its WAL");
    s = open_store();
    make_launch(s, "a", "site", 1000);
    snprintf(wal, sizeof(wal), "%s-wal", db);
    cr_assert_eq(mode_of(dir), 0700);
    cr_assert_eq(mode_of(db), 0600);
    cr_assert_eq(mode_of(wal), 0600, "the WAL file exists while open and is private");
    cr_assert_str_eq(sluice_store_dir(s), dir);
    cr_assert_str_eq(sluice_store_db_path(s), db);
    sluice_store_close(s);
    /* Bytes 18 and 19 of the header are 2 in WAL mode. */
    f = fopen(db, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(hdr, 1, sizeof(hdr), f), sizeof(hdr));
    fclose(f);
    cr_assert_eq(memcmp(hdr, "SQLite format 3", 16), 0);
    cr_assert_eq(hdr[18], 2);
    cr_assert_eq(hdr[19], 2);
}

Test(store, reopen_keeps_launches_and_events)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *l = NULL, *evs = NULL;
    int64_t seq = 0;
    int i;

    make_launch(s, "durable", "site", 1000);
    for (i = 0; i < 3; i++)
        cr_assert_sluice_ok(
            sluice_store_append_event(s, "durable", "note", NULL, NULL, 2000 + i, &seq, &err),
            &err);
    cr_assert_eq(seq, 4);
    sluice_store_close(s);
    s = open_store();
    cr_assert_sluice_ok(sluice_store_get_launch(s, "durable", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(l, "state")), "ACCEPTED");
    cr_assert_eq(json_integer_value(json_object_get(l, "last_seq")), 4);
    cr_assert_eq(json_integer_value(json_object_get(l, "created_ms")), 1000);
    cr_assert_eq(json_integer_value(json_object_get(l, "updated_ms")), 2002);
    cr_assert_str_eq(json_string_value(json_object_get(l, "study")), "study1");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(l, "render"), "script")),
                     "#!/bin/sh\ntrue\n");
    cr_assert(json_is_object(json_object_get(l, "request")));
    cr_assert_eq(strlen(json_string_value(json_object_get(l, "request_hash"))), 64);
    cr_assert(json_is_null(json_object_get(l, "result_code")));
    cr_assert(json_is_false(json_object_get(l, "terminal")));
    cr_assert_sluice_ok(sluice_store_replay(s, "durable", &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 4);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(evs, 0), "name")),
                     "accepted");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(evs, 0), "caller")),
                     "tester");
    for (i = 0; i < 4; i++)
        cr_assert_eq(json_integer_value(json_object_get(json_array_get(evs, (size_t)i), "seq")),
                     i + 1);
    json_decref(l);
    json_decref(evs);
    sluice_store_close(s);
}

Test(store, default_dir_follows_the_documented_order)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *d = NULL;

    setenv("SLUICE_STATE_DIR", "/srv/sluice-state", 1);
    cr_assert_sluice_ok(sluice_store_default_dir(&d, &err), &err);
    cr_assert_str_eq(d, "/srv/sluice-state");
    free(d);
    unsetenv("SLUICE_STATE_DIR");
    setenv("XDG_STATE_HOME", "/xdg/state", 1);
    setenv("HOME", "/home/someone", 1);
    cr_assert_sluice_ok(sluice_store_default_dir(&d, &err), &err);
    cr_assert_str_eq(d, geteuid() == 0 ? "/var/lib/sluice" : "/xdg/state/sluice");
    free(d);
    unsetenv("XDG_STATE_HOME");
    cr_assert_sluice_ok(sluice_store_default_dir(&d, &err), &err);
    cr_assert_str_eq(d, geteuid() == 0 ? "/var/lib/sluice" : "/home/someone/.local/state/sluice");
    free(d);
}

Test(store, refuses_a_newer_schema_and_leaves_the_file_alone)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    char *before, *after;
    size_t nb, na;

    sluice_store_close(s);
    if (store_backend_is_pg()) {
        /* The same on PostgreSQL: refused, the version row left as it is. */
        store_backend_exec(db, "UPDATE sluice_schema SET version = 8");
        s = NULL;
        cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
        cr_assert_null(s);
        cr_assert(strstr(err.text, "version 8") != NULL, "%s", err.text);
        cr_assert(strstr(err.text, "127.0.0.1") != NULL, "the text names the server: %s", err.text);
        cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE, "still version 8");
        return;
    }
    cr_assert_sluice_ok(store_debug_exec_file(db, "PRAGMA user_version = 8", &err), &err);
    before = slurp(db, &nb);
    s = NULL;
    cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
    cr_assert_null(s);
    cr_assert(strstr(err.text, db) != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "version 8") != NULL, "%s", err.text);
    {
        char mine[32];
        snprintf(mine, sizeof(mine), "version %d", SLUICE_STORE_SCHEMA_VERSION);
        cr_assert(strstr(err.text, mine) != NULL, "%s", err.text);
    }
    after = slurp(db, &na);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(before, after, nb), 0);
    free(before);
    free(after);
}

Test(store, refuses_a_corrupt_file_and_leaves_it_alone)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;
    char garbage[4096], *after;
    size_t i, na;
    FILE *f;

    SQLITE_ONLY("a damaged database file");
    sluice_store_close(open_store()); /* creates the directory */
    for (i = 0; i < sizeof(garbage); i++)
        garbage[i] = (char)(i * 7 + 3);
    f = fopen(db, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(garbage, 1, sizeof(garbage), f), sizeof(garbage));
    fclose(f);
    cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
    cr_assert_null(s);
    cr_assert(strstr(err.text, db) != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "corrupt") != NULL, "%s", err.text);
    after = slurp(db, &na);
    cr_assert_eq(na, sizeof(garbage));
    cr_assert_eq(memcmp(garbage, after, na), 0);
    free(after);
}

Test(store, refuses_a_sqlite_file_that_is_not_a_sluice_store)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;

    if (store_backend_is_pg()) {
        /* A schema holding other tables, and ours with another id. */
        store_backend_exec(db, "CREATE TABLE other (x INTEGER)");
        cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
        cr_assert(strstr(err.text, "not a sluice store") != NULL, "%s", err.text);
        store_backend_exec(db, "DROP TABLE other");
        sluice_store_close(open_store());
        store_backend_exec(db, "UPDATE sluice_schema SET application_id = 42");
        cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
        cr_assert(strstr(err.text, "not a sluice store") != NULL, "%s", err.text);
        return;
    }
    sluice_store_close(open_store());
    cr_assert_eq(unlink(db), 0);
    cr_assert_sluice_ok(store_debug_exec_file(db, "CREATE TABLE other (x INTEGER)", &err), &err);
    cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
    cr_assert(strstr(err.text, "not a sluice store") != NULL, "%s", err.text);
    /* Our schema but another application id is foreign too. */
    cr_assert_eq(unlink(db), 0);
    sluice_store_close(open_store());
    cr_assert_sluice_ok(store_debug_exec_file(db, "PRAGMA application_id = 42", &err), &err);
    cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
    cr_assert(strstr(err.text, "not a sluice store") != NULL, "%s", err.text);
}

Test(store, create_is_idempotent_on_the_same_request_and_conflicts_otherwise)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *req = json_pack("{s:s, s:i}", "command", "run", "nodes", 2);
    json_t *req_same = json_pack("{s:i, s:s}", "nodes", 2, "command", "run");
    json_t *req_other = json_pack("{s:s, s:i}", "command", "run", "nodes", 3);
    json_t *evs = NULL;
    sluice_store_launch_spec_t spec = {0};
    int existed = -1;

    spec.launch_id = "idem";
    spec.site = "s1";
    spec.request = req;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, &existed, &err), &err);
    cr_assert_eq(existed, 0);
    spec.request = req_same; /* same body, other key order */
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, &existed, &err), &err);
    cr_assert_eq(existed, 1);
    spec.request = req_other;
    cr_assert_eq(sluice_store_create_launch(s, &spec, &existed, &err), SLUICE_ECONFLICT);
    cr_assert(strstr(err.text, "idem") != NULL, "%s", err.text);
    spec.request = req;
    spec.site = "s2";
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_ECONFLICT);
    cr_assert_sluice_ok(sluice_store_read_events(s, "idem", 1, 0, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 1, "a repeated create writes nothing");
    spec.launch_id = "bad id!";
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_EINVAL);
    json_decref(evs);
    json_decref(req);
    json_decref(req_same);
    json_decref(req_other);
    sluice_store_close(s);
}

/* The old hash, as stores written before the request's canonical text was
 * made once: the SHA-256 of json_pack's {site, study?, request} dumped
 * compact with sorted keys. */
static void old_hash(const char *site, const char *study, const json_t *req, char hex[65])
{
    json_t *whole = json_pack("{s:s, s:s?, s:O}", "site", site, "study", study, "request", req);
    char *text = json_dumps(whole, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

    cr_assert_not_null(text);
    cr_assert(marker_sha256_hex(text, hex));
    free(text);
    json_decref(whole);
}

/* The hash put together around the request's canonical text is the one
 * every store holds, so that a launch accepted before the upgrade is the
 * same launch after it (an idempotent repeat, not a conflict). */
Test(store, request_hash_of_the_text_is_the_old_one)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    const char *studies[] = {NULL, "study-1"};
    json_t *reqs[] = {
        json_pack("{s:s, s:i}", "command", "run", "nodes", 2),
        json_pack("{s:s, s:[s,s], s:{s:s}}", "launch_id", "x/y", "args", "caf\u00e9", "a\"b\\c\n",
                  "env", "K", "\001\177\u2028"),
    };
    char a[65], b[65];

    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 2; j++) {
            char *text = json_dumps(reqs[i], JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

            old_hash("site.a", studies[j], reqs[i], a);
            cr_assert_sluice_ok(store_request_hash_text("site.a", studies[j], text, b, &err), &err);
            cr_assert_str_eq(a, b, "request %zu, study %s", i, studies[j] ? studies[j] : "none");
            free(text);
        }
    json_decref(reqs[0]);
    json_decref(reqs[1]);
}

/* A caller's canonical text is stored and hashed as the store's own
 * serialisation would be: the same launch either way. */
Test(store, a_request_text_from_the_caller_is_the_same_request)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *req = json_pack("{s:s, s:s}", "command", "caf\u00e9", "launch_id", "t1");
    json_t *row = NULL;
    char *text = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
    sluice_store_launch_spec_t spec = {0};
    int existed = -1;

    spec.launch_id = "t1";
    spec.site = "s1";
    spec.request = req;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, &existed, &err), &err);
    cr_assert_eq(existed, 0);
    spec.request_text = text;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, &existed, &err), &err);
    cr_assert_eq(existed, 1, "the caller's text hashes as the store's own");
    spec.launch_id = "t2";
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, &existed, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "t2", &row, &err), &err);
    cr_assert(json_equal(json_object_get(row, "request"), req));
    json_decref(row);
    free(text);
    json_decref(req);
    sluice_store_close(s);
}

/* A group of creates in one transaction (the accepts' group commit): each
 * launch has its own outcome, a refused one leaves the others, and a
 * repeat of an id written earlier in the same group is idempotent or a
 * conflict, as across transactions. */
Test(store, create_many_writes_a_group_with_an_outcome_each)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *req = json_pack("{s:s}", "command", "run");
    json_t *req_other = json_pack("{s:s}", "command", "other");
    json_t *bad = json_pack("{s:{s:s}}", "env", "secrets", "x");
    json_t *evs = NULL, *row = NULL;
    sluice_store_launch_spec_t sp[5];
    sluice_store_create_result_t res[5];
    const char *ids[5] = {"g1", "g2", "g1", "g3", "g2"};

    memset(sp, 0, sizeof(sp));
    for (int i = 0; i < 5; i++) {
        sp[i].launch_id = ids[i];
        sp[i].site = "s1";
        sp[i].request = req;
        sp[i].time_ms = 1000 + i;
    }
    sp[3].request = bad;       /* refused on its own (a secret in the request) */
    sp[4].request = req_other; /* g2 again, another request: conflict */
    cr_assert_sluice_ok(sluice_store_create_many(s, sp, 5, res, &err), &err);
    cr_assert_eq(res[0].rc, SLUICE_OK);
    cr_assert_eq(res[0].existed, 0);
    cr_assert_eq(res[1].rc, SLUICE_OK);
    cr_assert_eq(res[1].existed, 0);
    cr_assert_eq(res[2].rc, SLUICE_OK, "g1 again with the same request: %s", res[2].err.text);
    cr_assert_eq(res[2].existed, 1, "written earlier in the same group");
    cr_assert_eq(res[3].rc, SLUICE_EINVAL);
    cr_assert(strstr(res[3].err.text, "secrets") != NULL, "%s", res[3].err.text);
    cr_assert_eq(res[4].rc, SLUICE_ECONFLICT);
    cr_assert(strstr(res[4].err.text, "g2") != NULL, "%s", res[4].err.text);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "g1", &row, &err), &err);
    json_decref(row);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "g2", &row, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "request"), "command")),
                     "run", "the conflicting repeat changed nothing");
    json_decref(row);
    row = NULL;
    cr_assert_eq(sluice_store_get_launch(s, "g3", &row, &err), SLUICE_ENOTFOUND);
    cr_assert_sluice_ok(sluice_store_read_events(s, "g1", 1, 0, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 1, "one accepted event, not two");
    json_decref(evs);
    json_decref(req);
    json_decref(req_other);
    json_decref(bad);
    sluice_store_close(s);
}

Test(store, refuses_secret_values_at_any_depth)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *nested = json_pack("{s:{s:{s:s}}}", "env", "secrets", "TOKEN", "hunter2");
    json_t *in_array = json_pack("{s:[{s:s}, {s:{}}]}", "pools", "name", "a", "secret_values");
    json_t *names_ok = json_pack("{s:[s]}", "secret_env", "TOKEN");
    json_t *ctx = json_pack("{s:{s:s}}", "secrets", "K", "v");
    json_t *l = NULL;
    sluice_store_launch_spec_t spec = {0};

    spec.launch_id = "sec";
    spec.site = "s";
    spec.request = nested;
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "request.env.secrets") != NULL, "%s", err.text);
    cr_assert(strstr(err.text, "hunter2") == NULL);
    spec.request = in_array;
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "request.pools[1].secret_values") != NULL, "%s", err.text);
    cr_assert_eq(sluice_store_get_launch(s, "sec", &l, &err), SLUICE_ENOTFOUND);
    spec.request = names_ok; /* names of secret variables are fine */
    spec.render = ctx;
    cr_assert_eq(sluice_store_create_launch(s, &spec, NULL, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "render.secrets") != NULL, "%s", err.text);
    spec.render = NULL;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, NULL, &err), &err);
    cr_assert_eq(sluice_store_append_event(s, "sec", "note", ctx, NULL, 0, NULL, &err),
                 SLUICE_EINVAL);
    cr_assert(strstr(err.text, "context.secrets") != NULL, "%s", err.text);
    json_decref(nested);
    json_decref(in_array);
    json_decref(names_ok);
    json_decref(ctx);
    sluice_store_close(s);
}

Test(store, events_get_contiguous_seqs_and_read_back_in_pages)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *ctx = json_pack("{s:s, s:i}", "slurm_state", "PENDING", "n", 5);
    json_t *evs = NULL, *ev;
    int64_t seq = 0;
    int i;

    make_launch(s, "ev", "site", 1000);
    for (i = 0; i < 5; i++) {
        cr_assert_sluice_ok(sluice_store_append_event(s, "ev", "slurm-state", ctx,
                                                      i == 2 ? "alice" : NULL, 5000 + i, &seq,
                                                      &err),
                            &err);
        cr_assert_eq(seq, i + 2);
    }
    cr_assert_sluice_ok(sluice_store_read_events(s, "ev", 3, 2, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 2);
    ev = json_array_get(evs, 0);
    cr_assert_eq(json_integer_value(json_object_get(ev, "seq")), 3);
    cr_assert_eq(json_integer_value(json_object_get(ev, "time")), 5001);
    cr_assert_str_eq(json_string_value(json_object_get(ev, "name")), "slurm-state");
    cr_assert(json_equal(json_object_get(ev, "context"), ctx));
    cr_assert(json_is_null(json_object_get(ev, "caller")));
    ev = json_array_get(evs, 1);
    cr_assert_str_eq(json_string_value(json_object_get(ev, "caller")), "alice");
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_read_events(s, "ev", 7, 0, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 0);
    json_decref(evs);
    cr_assert_eq(sluice_store_append_event(s, "nope", "x", NULL, NULL, 0, NULL, &err),
                 SLUICE_ENOTFOUND);
    cr_assert_eq(sluice_store_append_event(s, "ev", "bad name", NULL, NULL, 0, NULL, &err),
                 SLUICE_EINVAL);
    cr_assert_eq(sluice_store_read_events(s, "nope", 1, 0, &evs, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(sluice_store_replay(s, "nope", &evs, &err), SLUICE_ENOTFOUND);
    json_decref(ctx);
    sluice_store_close(s);
}

Test(store, summary_changes_only_with_its_event_and_terminal_is_final)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;
    json_t *jobs = json_pack("[i]", 4242);
    json_t *l = NULL;
    int64_t seq = 0;

    make_launch(s, "sum", "site", 1000);
    sum.state = "PENDING";
    sum.attempt = 1;
    sum.job_ids = jobs;
    sum.reason = "Priority";
    cr_assert_sluice_ok(sluice_store_append_event_and_update(s, "sum", "submitted", NULL, NULL,
                                                             2000, &sum, &seq, &err),
                        &err);
    cr_assert_eq(seq, 2);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "sum", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(l, "state")), "PENDING");
    cr_assert_str_eq(json_string_value(json_object_get(l, "reason")), "Priority");
    cr_assert_eq(json_integer_value(json_object_get(l, "attempt")), 1);
    cr_assert(json_equal(json_object_get(l, "job_ids"), jobs));
    cr_assert_eq(json_integer_value(json_object_get(l, "summary_seq")), 2);
    json_decref(l);

    /* Keep what is not given; "" clears the reason. */
    sum = (sluice_store_summary_t)SLUICE_STORE_SUMMARY_INIT;
    sum.state = "RUNNING";
    sum.reason = "";
    cr_assert_sluice_ok(sluice_store_append_event_and_update(s, "sum", "slurm-state", NULL, NULL,
                                                             3000, &sum, NULL, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "sum", &l, &err), &err);
    cr_assert(json_is_null(json_object_get(l, "reason")));
    cr_assert_eq(json_integer_value(json_object_get(l, "attempt")), 1);
    cr_assert(json_equal(json_object_get(l, "job_ids"), jobs));
    json_decref(l);

    finish(s, "sum", 4000);
    sum.state = "RUNNING";
    cr_assert_eq(sluice_store_append_event_and_update(s, "sum", "slurm-state", NULL, NULL, 5000,
                                                      &sum, NULL, &err),
                 SLUICE_ESTATE);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "sum", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(l, "state")), "SUCCEEDED");
    cr_assert_eq(json_integer_value(json_object_get(l, "result_code")), 0);
    cr_assert(json_is_true(json_object_get(l, "terminal")));
    cr_assert_eq(json_integer_value(json_object_get(l, "last_seq")), 4, "refused: no event");
    json_decref(l);
    /* Plain events after the end are still recorded. */
    cr_assert_sluice_ok(
        sluice_store_append_event(s, "sum", "archived", NULL, NULL, 6000, &seq, &err), &err);
    cr_assert_eq(seq, 5);
    sum.job_ids = NULL;
    sum.state = NULL;
    cr_assert_eq(
        sluice_store_append_event_and_update(s, "sum", "x", NULL, NULL, 0, &sum, NULL, &err),
        SLUICE_EINVAL);
    json_decref(jobs);
    sluice_store_close(s);
}

static size_t page_ids(json_t *page, char *out, size_t size)
{
    size_t i;
    json_t *l;

    out[0] = '\0';
    json_array_foreach(page, i, l)
    {
        strncat(out, json_string_value(json_object_get(l, "launch_id")), size - strlen(out) - 1);
        strncat(out, " ", size - strlen(out) - 1);
        cr_assert_null(json_object_get(l, "request"), "summaries omit the request");
    }
    return json_array_size(page);
}

Test(store, lists_with_filters_and_cursor_pagination)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_filter_t f = {0};
    json_t *page = NULL;
    char *cursor = NULL, ids[256];

    make_launch(s, "l1", "alpha", 1000);
    make_launch(s, "l2", "beta", 2000);
    make_launch(s, "l3b", "alpha", 3000);
    make_launch(s, "l3a", "alpha", 3000); /* same time: ordered by id */
    make_launch(s, "l5", "beta", 5000);
    make_launch(s, "l6", "alpha", 6000);
    make_launch(s, "l7", "alpha", 7000);
    finish(s, "l2", 8000);
    finish(s, "l6", 8000);

    f.limit = 3;
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, &cursor, &err), &err);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l1 l2 l3a ");
    cr_assert_not_null(cursor);
    json_decref(page);
    f.cursor = cursor;
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, &cursor, &err), &err);
    free((char *)(uintptr_t)f.cursor);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l3b l5 l6 ");
    json_decref(page);
    f.cursor = cursor;
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, &cursor, &err), &err);
    free((char *)(uintptr_t)f.cursor);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l7 ");
    cr_assert_null(cursor, "last page");
    json_decref(page);

    memset(&f, 0, sizeof(f));
    f.site = "alpha";
    f.terminal = SLUICE_STORE_LIVE;
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, NULL, &err), &err);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l1 l3a l3b l7 ");
    json_decref(page);
    memset(&f, 0, sizeof(f));
    f.terminal = SLUICE_STORE_TERMINAL;
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, NULL, &err), &err);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l2 l6 ");
    json_decref(page);
    memset(&f, 0, sizeof(f));
    f.state = "ACCEPTED";
    f.site = "beta";
    f.study = "study1";
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, NULL, &err), &err);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l5 ");
    json_decref(page);
    f.study = "other";
    cr_assert_sluice_ok(sluice_store_list_launches(s, &f, &page, NULL, &err), &err);
    cr_assert_eq(json_array_size(page), 0);
    json_decref(page);

    memset(&f, 0, sizeof(f));
    f.cursor = "garbage";
    cr_assert_eq(sluice_store_list_launches(s, &f, &page, NULL, &err), SLUICE_EINVAL);
    cr_assert_sluice_ok(sluice_store_list_live(s, &page, &err), &err);
    page_ids(page, ids, sizeof(ids));
    cr_assert_str_eq(ids, "l1 l3a l3b l5 l7 ");
    json_decref(page);
    sluice_store_close(s);
}

Test(store, global_event_cursor_walks_every_launch_in_order)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *evs = NULL;
    int64_t next = -1, first;

    make_launch(s, "g1", "x", 1000);
    make_launch(s, "g2", "x", 1000);
    cr_assert_sluice_ok(sluice_store_append_event(s, "g1", "note", NULL, "bob", 0, NULL, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_events_since(s, 0, 2, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 2);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(evs, 0), "launch_id")), "g1");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(evs, 1), "launch_id")), "g2");
    first = json_integer_value(json_object_get(json_array_get(evs, 0), "gseq"));
    cr_assert_eq(next, first + 1);
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_events_since(s, next, 0, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 1);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(evs, 0), "caller")), "bob");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(evs, 0), "seq")), 2);
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_events_since(s, next, 0, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 0);
    cr_assert_eq(next, first + 2, "nothing new keeps the cursor");
    json_decref(evs);
    sluice_store_close(s);
}

/* The `state` of event k of `id` (1-based), or NULL for a JSON null. */
static const char *state_of(json_t *evs, size_t k)
{
    return json_string_value(json_object_get(json_array_get(evs, k - 1), "state"));
}

Test(store, every_event_records_the_state_after_it_and_its_gseq)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;
    json_t *evs = NULL;
    int64_t next = 0;

    make_launch(s, "st1", "x", 1000);
    sum.state = "PENDING";
    cr_assert_sluice_ok(sluice_store_append_event_and_update(s, "st1", "submitted", NULL, NULL,
                                                             1001, &sum, NULL, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_append_event(s, "st1", "note", NULL, NULL, 1002, NULL, &err),
                        &err);
    finish(s, "st1", 1003);
    /* A late event after DONE keeps DONE's state. */
    cr_assert_sluice_ok(sluice_store_append_event(s, "st1", "note", NULL, NULL, 1004, NULL, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_read_events(s, "st1", 1, 0, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 5);
    cr_assert_str_eq(state_of(evs, 1), "ACCEPTED");
    cr_assert_str_eq(state_of(evs, 2), "PENDING");
    cr_assert_str_eq(state_of(evs, 3), "PENDING", "a plain event keeps the launch's state");
    cr_assert_str_eq(state_of(evs, 4), "SUCCEEDED");
    cr_assert_str_eq(state_of(evs, 5), "SUCCEEDED");
    cr_assert(json_integer_value(json_object_get(json_array_get(evs, 4), "gseq")) >
              json_integer_value(json_object_get(json_array_get(evs, 0), "gseq")));
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_events_since(s, 0, 0, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 5);
    cr_assert_str_eq(state_of(evs, 2), "PENDING");
    json_decref(evs);
    sluice_store_close(s);
}

/* keep_schema opens an older store as it is (a reader of its event log)
 * and leaves it for the older sluice that writes it; without it the open
 * migrates. */
Test(store, keep_schema_reads_an_older_store_without_migrating_it)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_opts_t o = SLUICE_STORE_OPTS_INIT;
    json_t *evs = NULL, *l = NULL;

    make_launch(s, "k1", "x", 1000);
    sluice_store_close(s);
    store_backend_exec(db, store_backend_is_pg()
                               ? STORE_BACKEND_UNDO_TEXTS "UPDATE sluice_schema SET version = 6"
                               : STORE_BACKEND_UNDO_TEXTS "PRAGMA user_version = 6");
    o.dir = dir;
    o.url = store_backend_url();
    o.keep_schema = 1;
    s = NULL;
    cr_assert_sluice_ok(sluice_store_open_with(&s, &o, &err), &err);
    cr_assert_sluice_ok(sluice_store_read_events(s, "k1", 1, 0, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 1);
    json_decref(evs);
    cr_expect_neq(sluice_store_get_launch(s, "k1", &l, &err), SLUICE_OK,
                  "schema 6 has no launch_texts: not migrated");
    sluice_store_close(s);
    s = open_store(); /* a plain open migrates */
    cr_assert_sluice_ok(sluice_store_get_launch(s, "k1", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(l, "request"), "command")),
                     "true");
    json_decref(l);
    sluice_store_close(s);
}

Test(store, migration_to_schema_2_fills_the_states_it_can_be_sure_of)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;
    json_t *evs = NULL;

    make_launch(s, "m1", "x", 1000);
    sum.state = "PENDING";
    cr_assert_sluice_ok(sluice_store_append_event_and_update(s, "m1", "submitted", NULL, NULL, 1001,
                                                             &sum, NULL, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_append_event(s, "m1", "note", NULL, NULL, 1002, NULL, &err),
                        &err);
    sluice_store_close(s);
    /* Make it a schema-1 store again: no state column (and no cluster). */
    store_backend_exec(db, store_backend_is_pg() ? STORE_BACKEND_UNDO_TEXTS
                               "ALTER TABLE events DROP COLUMN state; "
                               "ALTER TABLE launches DROP COLUMN cluster; "
                               "UPDATE sluice_schema SET version = 1"
                                                 : STORE_BACKEND_UNDO_TEXTS
                               "ALTER TABLE events DROP COLUMN state; "
                               "ALTER TABLE launches DROP COLUMN cluster; "
                               "PRAGMA user_version = 1");
    s = open_store();
    cr_assert_sluice_ok(sluice_store_read_events(s, "m1", 1, 0, &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 3);
    cr_assert_str_eq(state_of(evs, 1), "ACCEPTED");
    cr_assert(json_is_null(json_object_get(json_array_get(evs, 1), "state")),
              "a middle event's state is unknown after the migration");
    cr_assert_str_eq(state_of(evs, 3), "PENDING", "the newest event has the launch's state");
    json_decref(evs);
    sluice_store_close(s);
}

Test(store, prune_removes_only_old_terminal_launches)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *l = NULL, *evs = NULL;
    size_t n = 99;
    int64_t next = 0, before;

    make_launch(s, "old-done", "x", 1000);
    make_launch(s, "old-live", "x", 1000);
    make_launch(s, "new-done", "x", 1000);
    finish(s, "old-done", 2000);
    finish(s, "new-done", 90000);
    cr_assert_sluice_ok(sluice_store_events_since(s, 0, 1000, &evs, &before, &err), &err);
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_prune(s, 50000, 100000, &n, &err), &err);
    cr_assert_eq(n, 1);
    cr_assert_eq(sluice_store_get_launch(s, "old-done", &l, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(sluice_store_read_events(s, "old-done", 1, 0, &evs, &err), SLUICE_ENOTFOUND);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "old-live", &l, &err), &err);
    json_decref(l);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "new-done", &l, &err), &err);
    json_decref(l);
    /* Even an age of zero never touches a live launch. */
    cr_assert_sluice_ok(sluice_store_prune(s, 0, 10000000, &n, &err), &err);
    cr_assert_eq(n, 1);
    cr_assert_sluice_ok(sluice_store_replay(s, "old-live", &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 1);
    json_decref(evs);
    cr_assert_sluice_ok(sluice_store_events_since(s, 0, 1000, &evs, NULL, &err), &err);
    cr_assert_eq(json_array_size(evs), 1, "pruned launches' events are gone");
    json_decref(evs);
    /* gseq values are never reused. */
    cr_assert_sluice_ok(sluice_store_append_event(s, "old-live", "note", NULL, NULL, 0, NULL, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_events_since(s, before, 10, &evs, &next, &err), &err);
    cr_assert_eq(json_array_size(evs), 1);
    cr_assert_gt(next, before);
    json_decref(evs);
    sluice_store_close(s);
}

Test(store, unparsable_json_in_a_row_is_a_store_error_naming_launch_and_column)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *out = NULL;

    make_launch(s, "broken", "x", 1000);
    store_backend_exec(db, "UPDATE launches SET job_ids = '[1,' WHERE launch_id='broken'");
    cr_assert_eq(sluice_store_get_launch(s, "broken", &out, &err), SLUICE_ESTORE);
    cr_assert(strstr(err.text, "broken") != NULL && strstr(err.text, "job_ids") != NULL, "%s",
              err.text);
    cr_assert_eq(sluice_store_list_live(s, &out, &err), SLUICE_ESTORE);
    store_backend_exec(db, "UPDATE launches SET job_ids = '[]' WHERE launch_id='broken'; "
                           "UPDATE launch_texts SET request = 'nope' WHERE launch_id='broken'");
    cr_assert_eq(sluice_store_get_launch(s, "broken", &out, &err), SLUICE_ESTORE);
    cr_assert(strstr(err.text, "request") != NULL, "%s", err.text);
    store_backend_exec(db, "UPDATE events SET context = '{\"a\":' WHERE launch_id='broken'");
    cr_assert_eq(sluice_store_read_events(s, "broken", 1, 0, &out, &err), SLUICE_ESTORE);
    cr_assert(strstr(err.text, "broken") != NULL && strstr(err.text, "context") != NULL, "%s",
              err.text);
    cr_assert_eq(sluice_store_events_since(s, 0, 0, &out, NULL, &err), SLUICE_ESTORE);
    sluice_store_close(s);
}

Test(store, replay_detects_a_gap_in_the_log)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *out = NULL;
    int i;

    make_launch(s, "gap", "x", 1000);
    for (i = 0; i < 3; i++)
        cr_assert_sluice_ok(sluice_store_append_event(s, "gap", "note", NULL, NULL, 0, NULL, &err),
                            &err);
    store_backend_exec(db, "DELETE FROM events WHERE launch_id='gap' AND seq=3");
    cr_assert_eq(sluice_store_replay(s, "gap", &out, &err), SLUICE_ESTORE);
    cr_assert(strstr(err.text, "gap") != NULL, "%s", err.text);
    sluice_store_close(s);
}

Test(store, one_supervisor_at_a_time)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store(), *t = open_store();
    int ready[2];
    char c, pidtext[32];
    pid_t child;
    int status;

    /* Two objects in one process exclude each other as well. */
    cr_assert_sluice_ok(sluice_store_lock_supervisor(s, &err), &err);
    cr_assert_sluice_ok(sluice_store_lock_supervisor(s, &err), &err);
    cr_assert_eq(sluice_store_lock_supervisor(t, &err), SLUICE_ECONFLICT);
    snprintf(pidtext, sizeof(pidtext), "pid %ld", (long)getpid());
    cr_assert(strstr(err.text, pidtext) != NULL, "%s", err.text);
    sluice_store_unlock_supervisor(s);

    cr_assert_eq(pipe(ready), 0);
    child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        sluice_store_t *cs = NULL;

        if (store_backend_open(&cs, dir, NULL) != SLUICE_OK ||
            sluice_store_lock_supervisor(cs, NULL) != SLUICE_OK)
            _exit(1);
        if (write(ready[1], "k", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    cr_assert_eq(read(ready[0], &c, 1), 1, "child took the lock");
    close(ready[0]);
    cr_assert_eq(sluice_store_lock_supervisor(t, &err), SLUICE_ECONFLICT);
    snprintf(pidtext, sizeof(pidtext), "pid %ld", (long)child);
    cr_assert(strstr(err.text, pidtext) != NULL, "%s", err.text);
    kill(child, SIGKILL);
    cr_assert_eq(waitpid(child, &status, 0), child);
    /* A dead supervisor's lock is gone with it. */
    cr_assert_sluice_ok(sluice_store_lock_supervisor(t, &err), &err);
    sluice_store_close(t);
    sluice_store_close(s);
}

Test(store, concurrent_appenders_in_two_processes_never_collide)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *evs = NULL;
    pid_t kids[2];
    int i, k, status;

    make_launch(s, "shared", "x", 1000);
    for (k = 0; k < 2; k++) {
        kids[k] = fork();
        cr_assert_neq(kids[k], -1);
        if (kids[k] == 0) {
            sluice_store_t *cs = NULL;

            if (store_backend_open(&cs, dir, NULL) != SLUICE_OK)
                _exit(1);
            for (i = 0; i < 40; i++)
                if (sluice_store_append_event(cs, "shared", "cancel-requested", NULL,
                                              k == 0 ? "cli" : "api", 0, NULL, NULL) != SLUICE_OK)
                    _exit(2);
            sluice_store_close(cs);
            _exit(0);
        }
    }
    for (k = 0; k < 2; k++) {
        cr_assert_eq(waitpid(kids[k], &status, 0), kids[k]);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d status %d", k, status);
    }
    cr_assert_sluice_ok(sluice_store_replay(s, "shared", &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 81);
    json_decref(evs);
    sluice_store_close(s);
}

/* The writer of the kill-point test: forever, round-robin over three
 * launches, append a plain event or an event that sets the summary to the
 * state named in its own context. */
static void kill_point_writer(int ready_fd)
{
    static const char *ids[] = {"k0", "k1", "k2"};
    sluice_store_t *s = NULL;
    json_t *req = json_pack("{s:s}", "command", "run");
    char state[32];
    long i;
    int k;

    if (store_backend_open(&s, dir, NULL) != SLUICE_OK)
        _exit(1);
    for (k = 0; k < 3; k++) {
        sluice_store_launch_spec_t spec = {0};

        spec.launch_id = ids[k];
        spec.site = "x";
        spec.request = req;
        if (sluice_store_create_launch(s, &spec, NULL, NULL) != SLUICE_OK)
            _exit(2);
    }
    if (write(ready_fd, "r", 1) != 1)
        _exit(3);
    for (i = 0;; i++) {
        const char *id = ids[i % 3];
        json_t *ctx;
        sluice_err rc;

        snprintf(state, sizeof(state), "S%ld-%ld", (long)getpid(), i);
        ctx = json_pack("{s:s, s:I}", "state", state, "i", (json_int_t)i);
        if (i % 2 == 0) {
            sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

            sum.state = state;
            sum.attempt = (int)(i % 1000);
            rc =
                sluice_store_append_event_and_update(s, id, "step", ctx, NULL, 0, &sum, NULL, NULL);
        } else {
            rc = sluice_store_append_event(s, id, "note", ctx, "writer", 0, NULL, NULL);
        }
        json_decref(ctx);
        if (rc != SLUICE_OK)
            _exit(4);
    }
}

/* After a kill: the store opens (quick_check passes), every log is
 * contiguous up to last_seq, and the summary is the one written by the
 * event at summary_seq. */
static size_t check_consistent(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    json_t *live = NULL, *l, *evs = NULL, *ev;
    size_t i, total = 0;

    cr_assert_sluice_ok(sluice_store_list_live(s, &live, &err), &err);
    json_array_foreach(live, i, l)
    {
        const char *id = json_string_value(json_object_get(l, "launch_id"));
        json_int_t sseq = json_integer_value(json_object_get(l, "summary_seq"));
        const char *state = json_string_value(json_object_get(l, "state"));

        cr_assert_sluice_ok(sluice_store_replay(s, id, &evs, &err), &err);
        cr_assert_eq((json_int_t)json_array_size(evs),
                     json_integer_value(json_object_get(l, "last_seq")));
        ev = json_array_get(evs, (size_t)sseq - 1);
        cr_assert_not_null(ev);
        if (sseq == 1) {
            cr_assert_str_eq(state, "ACCEPTED");
        } else {
            cr_assert_str_eq(json_string_value(json_object_get(ev, "name")), "step");
            cr_assert_str_eq(
                json_string_value(json_object_get(json_object_get(ev, "context"), "state")), state,
                "launch %s: summary %s does not match event %lld", id, state, (long long)sseq);
        }
        total += json_array_size(evs);
        json_decref(evs);
    }
    json_decref(live);
    sluice_store_close(s);
    return total;
}

Test(store, killed_writer_leaves_a_consistent_store, .timeout = 240)
{
    unsigned int seed = 20240611u;
    size_t before = 0, after;
    int round;

    for (round = 0; round < 20; round++) {
        int ready[2], status;
        pid_t child;
        char c;

        cr_assert_eq(pipe(ready), 0);
        child = fork();
        cr_assert_neq(child, -1);
        if (child == 0) {
            close(ready[0]);
            kill_point_writer(ready[1]);
        }
        close(ready[1]);
        cr_assert_eq(read(ready[0], &c, 1), 1, "round %d: writer did not start", round);
        close(ready[0]);
        usleep(1000 + (useconds_t)(rand_r(&seed) % 40000));
        kill(child, SIGKILL);
        cr_assert_eq(waitpid(child, &status, 0), child);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "round %d: writer ended early (status %d)", round, status);
        after = check_consistent();
        cr_assert_geq(after, before, "round %d: events were lost", round);
        before = after;
    }
    cr_assert_gt(before, 3, "the writer made progress");
}

Test(store, refuses_a_database_whose_pages_are_damaged)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s;
    unsigned char junk[4096];
    char id[16], *before, *after;
    size_t nb, na;
    int i, fd;

    SQLITE_ONLY("damaged pages of the database file");
    s = open_store();
    for (i = 0; i < 200; i++) {
        snprintf(id, sizeof(id), "p%03d", i);
        make_launch(s, id, "x", 1000 + i);
    }
    sluice_store_close(s);
    memset(junk, 0xa5, sizeof(junk));
    fd = open(db, O_WRONLY);
    cr_assert_geq(fd, 0);
    /* Pages 3 to 5: table and index pages, never the header page. */
    for (i = 2; i < 5; i++)
        cr_assert_eq(pwrite(fd, junk, sizeof(junk), (off_t)i * 4096), (ssize_t)sizeof(junk));
    close(fd);
    before = slurp(db, &nb);
    s = NULL;
    cr_assert_eq(store_backend_open(&s, dir, &err), SLUICE_ESTORE);
    cr_assert_null(s);
    cr_assert(strstr(err.text, db) != NULL, "%s", err.text);
    after = slurp(db, &na);
    cr_assert_eq(na, nb);
    cr_assert_eq(memcmp(before, after, nb), 0, "a refused file is not modified");
    free(before);
    free(after);
}

struct thread_arg {
    sluice_store_t *s;
    const char *caller;
    int failures;
};

static void *thread_appender(void *p)
{
    struct thread_arg *a = p;
    int i;

    for (i = 0; i < 50; i++)
        if (sluice_store_append_event(a->s, "mt", "note", NULL, a->caller, 0, NULL, NULL) !=
            SLUICE_OK)
            a->failures++;
    return NULL;
}

Test(store, threads_may_share_one_store_object)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    struct thread_arg a = {s, "t1", 0}, b = {s, "t2", 0};
    pthread_t ta, tb;
    json_t *evs = NULL;

    make_launch(s, "mt", "x", 1000);
    cr_assert_eq(pthread_create(&ta, NULL, thread_appender, &a), 0);
    cr_assert_eq(pthread_create(&tb, NULL, thread_appender, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    cr_assert_eq(a.failures + b.failures, 0);
    cr_assert_sluice_ok(sluice_store_replay(s, "mt", &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 101);
    json_decref(evs);
    sluice_store_close(s);
}

/* Several processes opening a store that does not exist yet, all at the
 * same moment (a supervisor starting while `sluice status` polls it): every
 * one must succeed; none may take the half-created file for a foreign one. */
Test(store, concurrent_first_opens_all_succeed)
{
    enum { ROUNDS = 15, PROCS = 6 };
    int round;

    for (round = 0; round < ROUNDS; round++) {
        char sub[256];
        int go[2];
        pid_t pids[PROCS];
        int i, failures = 0;

        snprintf(sub, sizeof(sub), "%s/race-%d", dir, round);
        cr_assert_eq(pipe(go), 0);
        for (i = 0; i < PROCS; i++) {
            pids[i] = fork();
            cr_assert_geq(pids[i], 0);
            if (pids[i] == 0) {
                sluice_store_t *s = NULL;
                sluice_error_t err = SLUICE_ERROR_INIT;
                char c;

                close(go[1]);
                /* Wait for the start signal: the pipe closing. */
                if (read(go[0], &c, 1) < 0)
                    _exit(3);
                if (store_backend_open(&s, sub, &err) != SLUICE_OK) {
                    fprintf(stderr, "open failed: %s\n", err.text);
                    _exit(1);
                }
                sluice_store_close(s);
                _exit(0);
            }
        }
        close(go[0]);
        close(go[1]);
        for (i = 0; i < PROCS; i++) {
            int st;
            cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                failures++;
        }
        cr_assert_eq(failures, 0, "round %d: %d of %d first opens failed", round, failures, PROCS);
    }
}

static int64_t last_seq_of(sluice_store_t *s, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *l = NULL;
    int64_t v;

    cr_assert_sluice_ok(sluice_store_get_launch(s, id, &l, &err), &err);
    v = (int64_t)json_integer_value(json_object_get(l, "last_seq"));
    json_decref(l);
    return v;
}

/* A recoverable batch is an append_many whose commit is not synced: what
 * it wrote reads back at once, a failure rolls all of it back, and the
 * store's next commit is durable again (SQLite: synchronous back to FULL). */
Test(store, append_recoverable_commits_and_restores_durability)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_summary_t pend = SLUICE_STORE_SUMMARY_INIT;
    json_t *jobs = json_pack("[i]", 78);
    sluice_store_append_t items[2];
    json_t *l = NULL;

    make_launch(s, "r1", "site", 1000);
    make_launch(s, "r2", "site", 1000);
    if (!store_backend_is_pg())
        cr_assert_eq(store_debug_synchronous(s), 2, "the store commits at synchronous FULL");
    pend.state = "PENDING";
    pend.job_ids = jobs;
    memset(items, 0, sizeof(items));
    items[0] = (sluice_store_append_t){"r1", "submitted", NULL, NULL, 2001, &pend, 0, 0};
    items[1] = (sluice_store_append_t){"r2", "submitted", NULL, NULL, 2001, &pend, 0, 0};
    cr_assert_sluice_ok(sluice_store_append_recoverable(s, items, 2, &err), &err);
    cr_assert_eq(items[0].seq, 2);
    cr_assert_eq(items[1].seq, 2);
    if (!store_backend_is_pg())
        cr_assert_eq(store_debug_synchronous(s), 2, "FULL again after the relaxed commit");
    cr_assert_sluice_ok(sluice_store_get_launch(s, "r2", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(l, "state")), "PENDING");
    json_decref(l);

    /* A failure inside the transaction (an unknown launch) rolls back the
     * event before it, and durability comes back all the same. */
    items[0] = (sluice_store_append_t){"r1", "note", NULL, "ops", 3000, NULL, 0, 0};
    items[1] = (sluice_store_append_t){"nope", "note", NULL, "ops", 3000, NULL, 0, 0};
    cr_assert_neq(sluice_store_append_recoverable(s, items, 2, &err), SLUICE_OK);
    cr_assert(strstr(err.text, "event 2 of 2") != NULL, "%s", err.text);
    cr_assert_eq(last_seq_of(s, "r1"), 2);
    if (!store_backend_is_pg())
        cr_assert_eq(store_debug_synchronous(s), 2, "FULL again after the rollback");
    json_decref(jobs);
    sluice_store_close(s);
}

/* The relaxed begin lowers synchronous for its own transaction only, each
 * time (a cached PRAGMA would act once: SQLite runs it when preparing). */
Test(store, relaxed_transactions_lower_synchronous_each_time)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();

    if (store_backend_is_pg()) {
        sluice_store_close(s);
        return;
    }
    for (int round = 0; round < 3; round++) {
        cr_assert_sluice_ok(store_exec(s, STORE_BEGIN_RELAXED, &err), &err);
        cr_assert_eq(store_debug_synchronous(s), 1, "round %d: NORMAL inside", round);
        cr_assert_sluice_ok(store_exec(s, "COMMIT", &err), &err);
        cr_assert_eq(store_debug_synchronous(s), 2, "round %d: FULL after", round);
        cr_assert_sluice_ok(store_exec(s, "BEGIN IMMEDIATE", &err), &err);
        cr_assert_eq(store_debug_synchronous(s), 2, "round %d: a plain begin stays FULL", round);
        cr_assert_sluice_ok(store_exec(s, "COMMIT", &err), &err);
    }
    sluice_store_close(s);
}

/* A batch is one transaction: every event with its summary, or nothing. */
Test(store, append_many_commits_a_batch_atomically)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_summary_t sub = SLUICE_STORE_SUMMARY_INIT;
    sluice_store_summary_t pend = SLUICE_STORE_SUMMARY_INIT;
    json_t *jobs = json_pack("[i]", 77);
    json_t *ctx = json_pack("{s:i}", "attempt", 1);
    json_t *bad = json_pack("{s:{s:s}}", "x", "secrets", "v");
    sluice_store_append_t items[4];
    json_t *l = NULL;
    json_t *evs = NULL;

    make_launch(s, "b1", "site", 1000);
    make_launch(s, "b2", "site", 1000);
    make_launch(s, "b3", "site", 1000);
    sub.state = "SUBMITTING";
    sub.attempt = 1;
    pend.state = "PENDING";
    pend.job_ids = jobs;
    memset(items, 0, sizeof(items));
    items[0] = (sluice_store_append_t){"b1", "submit-started", ctx, NULL, 2000, &sub, 0, 0};
    items[1] = (sluice_store_append_t){"b2", "submit-started", ctx, NULL, 2000, &sub, 0, 0};
    items[2] = (sluice_store_append_t){"b1", "submitted", NULL, NULL, 2001, &pend, 0, 0};
    items[3] = (sluice_store_append_t){"b3", "note", NULL, "ops", 0, NULL, 0, 0};
    cr_assert_sluice_ok(sluice_store_append_many(s, items, 4, &err), &err);
    cr_assert_eq(items[0].seq, 2);
    cr_assert_eq(items[1].seq, 2);
    cr_assert_eq(items[2].seq, 3, "two events of one launch in one batch keep their order");
    cr_assert_eq(items[3].seq, 2);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "b1", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(l, "state")), "PENDING");
    cr_assert_eq(json_integer_value(json_object_get(l, "summary_seq")), 3);
    cr_assert(json_equal(json_object_get(l, "job_ids"), jobs));
    json_decref(l);
    cr_assert_sluice_ok(sluice_store_replay(s, "b1", &evs, &err), &err);
    cr_assert_eq(json_array_size(evs), 3);
    json_decref(evs);

    /* A refused event (secret in a context) fails the batch before any write. */
    items[0] = (sluice_store_append_t){"b2", "submitted", NULL, NULL, 3000, &pend, 0, 0};
    items[1] = (sluice_store_append_t){"b3", "oops", bad, NULL, 3000, NULL, 0, 0};
    cr_assert_eq(sluice_store_append_many(s, items, 2, &err), SLUICE_EINVAL);
    cr_assert(strstr(err.text, "event 2 of 2") != NULL, "%s", err.text);
    cr_assert_eq(items[0].seq, 0);
    cr_assert_eq(last_seq_of(s, "b2"), 2);

    /* A failure inside the transaction (unknown launch, terminal launch)
     * rolls back the events already inserted. */
    sluice_error_clear(&err);
    items[0] = (sluice_store_append_t){"b2", "submitted", NULL, NULL, 3000, &pend, 0, 0};
    items[1] = (sluice_store_append_t){"nope", "submitted", NULL, NULL, 3000, &pend, 0, 0};
    cr_assert_eq(sluice_store_append_many(s, items, 2, &err), SLUICE_ENOTFOUND);
    cr_assert(strstr(err.text, "event 2 of 2") != NULL, "%s", err.text);
    cr_assert_eq(last_seq_of(s, "b2"), 2, "rolled back");
    finish(s, "b3", 4000);
    sluice_error_clear(&err);
    items[1] = (sluice_store_append_t){"b3", "submitted", NULL, NULL, 5000, &pend, 0, 0};
    cr_assert_eq(sluice_store_append_many(s, items, 2, &err), SLUICE_ESTATE);
    cr_assert_eq(last_seq_of(s, "b2"), 2, "rolled back");
    cr_assert_eq(last_seq_of(s, "b3"), 3);
    /* summary_if_live: the terminal launch gets the event, its summary stays. */
    items[1].summary_if_live = 1;
    cr_assert_sluice_ok(sluice_store_append_many(s, items, 2, &err), &err);
    cr_assert_eq(last_seq_of(s, "b2"), 3);
    cr_assert_eq(items[1].seq, 4);
    cr_assert_sluice_ok(sluice_store_get_launch(s, "b3", &l, &err), &err);
    cr_assert_str_eq(json_string_value(json_object_get(l, "state")), "SUCCEEDED");
    cr_assert_eq(json_integer_value(json_object_get(l, "summary_seq")), 3);
    json_decref(l);
    cr_assert_sluice_ok(sluice_store_append_many(s, NULL, 0, &err), &err);
    json_decref(jobs);
    json_decref(ctx);
    json_decref(bad);
    sluice_store_close(s);
}

Test(store, a_lost_connection_is_made_again_between_transactions)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s;
    json_t *l = NULL;
    int64_t seq = 0;

    if (!store_backend_is_pg()) {
        store_backend_teardown();
        cr_skip_test("PostgreSQL only: a server connection");
    }
    s = open_store();
    make_launch(s, "lost", "x", 1000);
    /* A read, then a write transaction, each first after a cut. */
    store_backend_kill_connections();
    cr_assert_sluice_ok(sluice_store_get_launch(s, "lost", &l, &err), &err);
    json_decref(l);
    store_backend_kill_connections();
    cr_assert_sluice_ok(sluice_store_append_event(s, "lost", "note", NULL, NULL, 2000, &seq, &err),
                        &err);
    cr_assert_eq(seq, 2);
    sluice_store_close(s);
}
