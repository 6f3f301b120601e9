/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_logs.c - the archived logs in the store (launch_logs): kept
 * bytes, the cut and what it says, ranges by file offset, attempts,
 * missing and refused logs, retention and pruning with the launch, the
 * fence, and the additive migration of a schema-5 store.  Runs on SQLite
 * (unit.store_logs) and PostgreSQL (unit.store_logs.pg). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/lease.h>
#include <sluice/store.h>

#include "sluice_assert.h"
#include "store_backend.h"

static char tmp[128];
static char dir[192];
static char db[256];

static void setup(void)
{
    strcpy(tmp, "/tmp/sluice-store-logs-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(dir, sizeof(dir), "%s/state", tmp);
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

TestSuite(store_logs, .init = setup, .fini = teardown, .timeout = 120);

static sluice_store_t *open_store(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;

    cr_assert_sluice_ok(store_backend_open(&s, dir, &err), &err);
    return s;
}

static void make_launch(sluice_store_t *s, const char *id, int64_t t)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *req = json_pack("{s:s, s:s}", "launch_id", id, "command", "true");
    sluice_store_launch_spec_t spec = {0};

    spec.launch_id = id;
    spec.site = "x";
    spec.request = req;
    spec.time_ms = t;
    cr_assert_sluice_ok(sluice_store_create_launch(s, &spec, NULL, &err), &err);
    json_decref(req);
}

static void finish(sluice_store_t *s, const char *id, int64_t t)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_summary_t sum = SLUICE_STORE_SUMMARY_INIT;

    sum.state = "DONE";
    sum.terminal = 1;
    sum.set_result = 1;
    sum.result_code = 0;
    cr_assert_sluice_ok(
        sluice_store_append_event_and_update(s, id, "finished", NULL, NULL, t, &sum, NULL, &err),
        &err);
}

/* Store `len` bytes of `data` as the last of a log of `size` bytes. */
static sluice_err put(sluice_store_t *s,
                      const char *id,
                      uint32_t attempt,
                      const char *stream,
                      const void *data,
                      size_t len,
                      int64_t size,
                      sluice_error_t *err)
{
    sluice_store_log_t lg = {0};

    lg.launch_id = id;
    lg.attempt = attempt;
    lg.stream = stream;
    lg.status = SLUICE_STORE_LOG_STORED;
    lg.data = data;
    lg.len = len;
    lg.size = size;
    lg.time_ms = 5000;
    return sluice_store_put_log(s, &lg, err);
}

/* Every kept byte from `offset` on, read in chunks of `chunk`. */
static size_t read_all(sluice_store_t *s,
                       const char *id,
                       const char *stream,
                       uint32_t attempt,
                       int64_t offset,
                       size_t chunk,
                       unsigned char *out,
                       size_t cap)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    size_t total = 0, n;

    for (;;) {
        cr_assert_sluice_ok(sluice_store_read_log(s, id, stream, attempt, offset + (int64_t)total,
                                                  out + total, chunk, &n, &err),
                            &err);
        if (n == 0)
            return total;
        total += n;
        cr_assert_leq(total, cap);
    }
}

Test(store_logs, bytes_come_back_as_stored_every_byte_value_and_empty)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_log_info_t info;
    unsigned char data[512], back[1024];
    size_t n;

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (unsigned char)(i * 7); /* NUL, 0xff, backslashes: every byte value */
    make_launch(s, "L1", 1000);
    cr_assert_sluice_ok(put(s, "L1", 1, "stdout", data, sizeof(data), sizeof(data), &err), &err);
    cr_assert_sluice_ok(put(s, "L1", 1, "stderr", NULL, 0, 0, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_log(s, "L1", "stdout", -1, &info, &err), &err);
    cr_assert_eq(info.attempt, 1);
    cr_assert_eq(info.status, SLUICE_STORE_LOG_STORED);
    cr_assert_str_eq(sluice_store_log_status_name(info.status), "stored");
    cr_assert_eq(info.size, 512);
    cr_assert_eq(info.omitted, 0);
    cr_assert_eq(info.archived_ms, 5000);
    n = read_all(s, "L1", "stdout", 1, 0, 100, back, sizeof(back));
    cr_assert_eq(n, sizeof(data));
    cr_assert_eq(memcmp(back, data, n), 0);
    n = read_all(s, "L1", "stdout", 1, 300, 7, back, sizeof(back));
    cr_assert_eq(n, 212);
    cr_assert_eq(memcmp(back, data + 300, n), 0, "a range starts at its file offset");
    cr_assert_sluice_ok(sluice_store_read_log(s, "L1", "stdout", 1, 9999, back, 10, &n, &err),
                        &err);
    cr_assert_eq(n, 0, "past the end: nothing");
    /* An empty log is stored (size 0), not missing. */
    cr_assert_sluice_ok(sluice_store_get_log(s, "L1", "stderr", 1, &info, &err), &err);
    cr_assert_eq(info.status, SLUICE_STORE_LOG_STORED);
    cr_assert_eq(info.size, 0);
    cr_assert_eq(read_all(s, "L1", "stderr", 1, 0, 10, back, sizeof(back)), 0);
    sluice_store_close(s);
}

Test(store_logs, a_cut_log_keeps_its_tail_and_says_what_was_cut)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_log_info_t info;
    const size_t size = 3 << 20, kept = 1 << 20; /* 3 MiB written, 1 MiB kept */
    unsigned char *log = malloc(size), *back = malloc(kept + 1);
    size_t n;

    cr_assert(log != NULL && back != NULL);
    for (size_t i = 0; i < size; i++)
        log[i] = (unsigned char)((i * 2654435761u) >> 13);
    make_launch(s, "big", 1000);
    cr_assert_sluice_ok(put(s, "big", 2, "stdout", log + size - kept, kept, (int64_t)size, &err),
                        &err);
    cr_assert_sluice_ok(sluice_store_get_log(s, "big", "stdout", -1, &info, &err), &err);
    cr_assert_eq(info.size, (int64_t)size);
    cr_assert_eq(info.omitted, (int64_t)(size - kept), "the row says how much was cut");
    /* Offsets are the job file's: the kept part starts at `omitted`. */
    cr_assert_eq(sluice_store_read_log(s, "big", "stdout", 2, 0, back, 10, &n, &err),
                 SLUICE_EINVAL);
    cr_assert(strstr(err.text, "does not hold") != NULL, "%s", err.text);
    n = read_all(s, "big", "stdout", 2, info.omitted, 65536, back, kept);
    cr_assert_eq(n, kept);
    cr_assert_eq(memcmp(back, log + size - kept, kept), 0, "the tail, byte for byte");
    free(log);
    free(back);
    sluice_store_close(s);
}

Test(store_logs, attempts_rewrites_missing_and_refused_logs)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_log_info_t info;
    sluice_store_log_t lg = {0};
    unsigned char back[64];
    size_t n;

    make_launch(s, "att", 1000);
    cr_assert_sluice_ok(put(s, "att", 1, "stdout", "first\n", 6, 6, &err), &err);
    cr_assert_sluice_ok(put(s, "att", 2, "stdout", "second\n", 7, 7, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_log(s, "att", "stdout", -1, &info, &err), &err);
    cr_assert_eq(info.attempt, 2, "the newest attempt by default");
    cr_assert_sluice_ok(sluice_store_get_log(s, "att", "stdout", 1, &info, &err), &err);
    cr_assert_eq(info.attempt, 1);
    /* An archive tried again replaces its row. */
    cr_assert_sluice_ok(put(s, "att", 2, "stdout", "2nd!\n", 5, 5, &err), &err);
    n = read_all(s, "att", "stdout", 2, 0, 64, back, sizeof(back));
    cr_assert_eq(n, 5);
    cr_assert_eq(memcmp(back, "2nd!\n", 5), 0);
    /* A log the job never wrote, and one the job-owned rule refused. */
    lg.launch_id = "att";
    lg.attempt = 2;
    lg.stream = "stderr";
    lg.status = SLUICE_STORE_LOG_REFUSED;
    lg.note = "stderr.log: a symbolic link";
    cr_assert_sluice_ok(sluice_store_put_log(s, &lg, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_log(s, "att", "stderr", -1, &info, &err), &err);
    cr_assert_eq(info.status, SLUICE_STORE_LOG_REFUSED);
    cr_assert_str_eq(info.note, "stderr.log: a symbolic link");
    cr_assert_sluice_ok(sluice_store_read_log(s, "att", "stderr", 2, 0, back, 64, &n, &err), &err);
    cr_assert_eq(n, 0, "nothing kept");
    lg.status = SLUICE_STORE_LOG_MISSING;
    lg.note = NULL;
    lg.attempt = 0;
    cr_assert_sluice_ok(sluice_store_put_log(s, &lg, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_log(s, "att", "stderr", 0, &info, &err), &err);
    cr_assert_str_eq(sluice_store_log_status_name(info.status), "missing");
    cr_assert_str_eq(info.note, "");
    /* What is refused. */
    cr_assert_eq(put(s, "nope", 1, "stdout", "x", 1, 1, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(put(s, "att", 1, "stdin", "x", 1, 1, &err), SLUICE_EINVAL);
    cr_assert_eq(put(s, "att", 1, "stdout", "xy", 2, 1, &err), SLUICE_EINVAL, "len > size");
    cr_assert_eq(sluice_store_get_log(s, "att", "stdout", 7, &info, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(sluice_store_get_log(s, "none", "stdout", -1, &info, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(sluice_store_read_log(s, "att", "stdout", 9, 0, back, 1, &n, &err),
                 SLUICE_ENOTFOUND);
    sluice_store_close(s);
}

Test(store_logs, retention_prunes_old_finished_logs_and_the_launch_takes_its_rows)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_log_info_t info;
    unsigned char back[16];
    size_t n = 99;

    make_launch(s, "old", 1000);
    make_launch(s, "live", 1000);
    make_launch(s, "new", 1000);
    finish(s, "old", 2000);
    finish(s, "new", 90000);
    cr_assert_sluice_ok(put(s, "old", 1, "stdout", "old\n", 4, 4, &err), &err);
    cr_assert_sluice_ok(put(s, "live", 1, "stdout", "live\n", 5, 5, &err), &err);
    cr_assert_sluice_ok(put(s, "new", 1, "stdout", "new\n", 4, 4, &err), &err);
    cr_assert_sluice_ok(sluice_store_prune_logs(s, 50000, 100000, &n, &err), &err);
    cr_assert_eq(n, 1);
    cr_assert_sluice_ok(sluice_store_get_log(s, "old", "stdout", -1, &info, &err), &err);
    cr_assert_eq(info.status, SLUICE_STORE_LOG_PRUNED, "the row stays and says why");
    cr_assert_eq(info.size, 4);
    cr_assert_sluice_ok(sluice_store_read_log(s, "old", "stdout", 1, 0, back, 16, &n, &err), &err);
    cr_assert_eq(n, 0);
    /* A live launch's logs are never pruned, whatever the age. */
    cr_assert_sluice_ok(sluice_store_prune_logs(s, 0, 10000000, &n, &err), &err);
    cr_assert_eq(n, 1, "only `new`");
    cr_assert_sluice_ok(sluice_store_get_log(s, "live", "stdout", -1, &info, &err), &err);
    cr_assert_eq(info.status, SLUICE_STORE_LOG_STORED);
    /* Pruning a launch deletes its logs with it. */
    cr_assert_sluice_ok(sluice_store_prune(s, 0, 10000000, &n, &err), &err);
    cr_assert_eq(n, 2);
    cr_assert_eq(sluice_store_get_log(s, "old", "stdout", -1, &info, &err), SLUICE_ENOTFOUND);
    cr_assert_eq(sluice_store_get_log(s, "new", "stdout", -1, &info, &err), SLUICE_ENOTFOUND);
    sluice_store_close(s);
}

Test(store_logs, a_fenced_handle_stores_no_log)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_log_info_t info;

    make_launch(s, "f", 1000);
    sluice_store_set_fence(s, 5, 0); /* the table holds no epoch 5 */
    cr_assert_eq(put(s, "f", 1, "stdout", "late\n", 5, 5, &err), SLUICE_ECONFLICT);
    cr_assert(strstr(err.text, "fenced") != NULL, "%s", err.text);
    sluice_store_set_fence(s, 0, 0);
    cr_assert_eq(sluice_store_get_log(s, "f", "stdout", -1, &info, &err), SLUICE_ENOTFOUND,
                 "nothing was written");
    cr_assert_sluice_ok(put(s, "f", 1, "stdout", "ok\n", 3, 3, &err), &err);
    sluice_store_close(s);
}

Test(store_logs, a_schema_5_store_migrates_and_keeps_its_launches)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = open_store();
    sluice_store_log_info_t info;
    json_t *l = NULL;

    make_launch(s, "m", 1000);
    finish(s, "m", 2000);
    sluice_store_close(s);
    /* What a sluice of schema 5 (before the store kept logs) leaves. */
    store_backend_exec(db, store_backend_is_pg() ? STORE_BACKEND_UNDO_TEXTS
                               "DROP TABLE launch_logs; UPDATE sluice_schema SET version = 5"
                                                 : STORE_BACKEND_UNDO_TEXTS
                               "DROP TABLE launch_logs; PRAGMA user_version = 5");
    s = open_store();
    cr_assert_sluice_ok(sluice_store_get_launch(s, "m", &l, &err), &err);
    cr_assert(json_is_true(json_object_get(l, "terminal")));
    json_decref(l);
    cr_assert_eq(sluice_store_get_log(s, "m", "stdout", -1, &info, &err), SLUICE_ENOTFOUND,
                 "archived before: nothing in the store");
    cr_assert_sluice_ok(put(s, "m", 1, "stdout", "after\n", 6, 6, &err), &err);
    cr_assert_sluice_ok(sluice_store_get_log(s, "m", "stdout", -1, &info, &err), &err);
    cr_assert_eq(info.size, 6);
    sluice_store_close(s);
}
