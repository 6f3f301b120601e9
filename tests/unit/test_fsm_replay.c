/* SPDX-License-Identifier: Apache-2.0 */
/* test_fsm_replay.c - logs written by release ef034af replay to the same launches.
 *
 * tests/fixtures/store/ef034af/ holds a store written by the library of
 * release ef034af (tests/fixtures/store/gen_ef034af.c, see the README there)
 * and expected.json, that release's replayed state of every launch.  This
 * test opens a copy of the store with the current code, folds each launch's
 * log the way the launcher does (time in ms -> seconds) and compares every
 * field sluice_fsm_launch_equal() compares.
 *
 * The old flags map to the states that replaced them: old SUBMITTING with
 * `uncertain` is RECONCILING, with `may_retry` RETRYING, with neither
 * SUBMITTING; the public state (sluice_fsm_state_public()) is the old state
 * name.  Once a launch is DONE the old flags had no effect (nothing is due)
 * and are not compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/fsm.h>
#include <sluice/store.h>

static char src_dir[1024];

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

static json_t *fsm_log(const json_t *stored)
{
    json_t *out = json_array(), *e;
    size_t i;

    json_array_foreach(stored, i, e)
    {
        sluice_fsm_event_type t;

        if (!sluice_fsm_event_from_name(json_string_value(json_object_get(e, "name")), &t))
            continue;
        json_array_append_new(
            out, json_pack("{s:O, s:f, s:O, s:O}", "seq", json_object_get(e, "seq"), "time",
                           (double)json_integer_value(json_object_get(e, "time")) / 1000.0, "name",
                           json_object_get(e, "name"), "context", json_object_get(e, "context")));
    }
    return out;
}

#define WANT_INT(f)                                                                                \
    cr_assert_eq((long long)l.f, (long long)json_integer_value(json_object_get(x, #f)), "%s: %s",  \
                 id, #f)
#define WANT_REAL(f) cr_assert_eq(l.f, json_real_value(json_object_get(x, #f)), "%s: %s", id, #f)
#define WANT_BOOL(f) cr_assert_eq(l.f, json_is_true(json_object_get(x, #f)), "%s: %s", id, #f)
#define WANT_STR(f)                                                                                \
    cr_assert_str_eq(l.f, json_string_value(json_object_get(x, #f)), "%s: %s", id, #f)

static void compare(const char *id, const sluice_fsm_launch_t *lp, const json_t *x)
{
    const sluice_fsm_launch_t l = *lp;
    const char *old_state = json_string_value(json_object_get(x, "state"));
    const json_t *ids = json_object_get(x, "job_ids"), *pools = json_object_get(x, "pools");
    bool uncertain = json_is_true(json_object_get(x, "uncertain"));
    bool may_retry = json_is_true(json_object_get(x, "may_retry"));
    size_t i;

    cr_assert_str_eq(sluice_fsm_state_name(sluice_fsm_state_public(l.state)), old_state,
                     "%s: state", id);
    if (l.state != SLUICE_FSM_DONE) {
        cr_assert_eq(l.state == SLUICE_FSM_RECONCILING, uncertain, "%s: uncertain", id);
        cr_assert_eq(l.state == SLUICE_FSM_RETRYING, may_retry, "%s: may_retry", id);
    }
    WANT_INT(result);
    WANT_STR(reason);
    WANT_REAL(last_time);
    WANT_INT(last_seq);
    WANT_INT(n_applied);
    WANT_INT(n_ignored);
    WANT_INT(attempt);
    WANT_STR(job_name);
    WANT_STR(comment);
    WANT_REAL(post_time);
    WANT_INT(intent);
    WANT_STR(caller);
    WANT_STR(unschedulable);
    WANT_BOOL(cancel_sent);
    WANT_REAL(cancel_sent_time);
    WANT_BOOL(left_queue);
    WANT_INT(misses);
    WANT_BOOL(has_miss);
    WANT_REAL(last_miss_time);
    WANT_BOOL(has_pending);
    WANT_REAL(first_pending);
    WANT_BOOL(prev_pending);
    WANT_REAL(last_pending);
    WANT_REAL(pending_observed);
    WANT_INT(n_components);
    WANT_BOOL(settling);
    WANT_REAL(settle_time);
    WANT_INT(verdict);
    WANT_STR(verdict_reason);
    WANT_BOOL(unasked_cancel);
    WANT_INT(verdict_rest);
    WANT_INT(slurm_exit_code);
    cr_assert_eq(l.n_job_ids, json_array_size(ids), "%s: n_job_ids", id);
    for (i = 0; i < l.n_job_ids; i++)
        cr_assert_eq((json_int_t)l.job_ids[i], json_integer_value(json_array_get(ids, i)),
                     "%s: job_ids[%zu]", id, i);
    cr_assert_eq(l.n_pools, json_array_size(pools), "%s: n_pools", id);
    for (i = 0; i < l.n_pools; i++) {
        const json_t *p = json_array_get(pools, i);

        cr_assert_str_eq(l.pools[i].name, json_string_value(json_object_get(p, "name")));
        cr_assert_eq(l.pools[i].exit_code, json_integer_value(json_object_get(p, "exit_code")));
        cr_assert_eq(l.pools[i].signal, json_integer_value(json_object_get(p, "signal")));
        cr_assert_eq(l.pools[i].first, json_is_true(json_object_get(p, "first")));
        cr_assert_eq(l.pools[i].signalled, json_is_true(json_object_get(p, "signalled")));
    }
}

Test(fsm_replay, ef034af_store_replays_to_the_same_states)
{
    const char *dir = getenv("SLUICE_SOURCE_DIR");
    char tmp[] = "/tmp/sluice-fsm-replay-XXXXXX", path[1200], db[1200];
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_error_t jerr;
    sluice_store_t *st = NULL;
    json_t *expected, *x;
    size_t i, n_inner = 0;

    cr_assert_not_null(dir, "SLUICE_SOURCE_DIR is not set");
    snprintf(src_dir, sizeof(src_dir), "%s/tests/fixtures/store/ef034af", dir);
    snprintf(path, sizeof(path), "%s/expected.json", src_dir);
    expected = json_load_file(path, 0, &jerr);
    cr_assert_not_null(expected, "%s: %s", path, jerr.text);
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(path, sizeof(path), "%s/sluice.db", src_dir);
    snprintf(db, sizeof(db), "%s/sluice.db", tmp);
    copy_file(path, db);
    cr_assert_eq(sluice_store_open(&st, tmp, &err), SLUICE_OK, "%s", err.text);
    cr_assert_gt(json_array_size(expected), 100);
    json_array_foreach(expected, i, x)
    {
        const char *id = json_string_value(json_object_get(x, "launch_id"));
        const json_t *c = json_object_get(x, "cfg");
        sluice_fsm_config_t cfg;
        sluice_fsm_launch_t l;
        json_t *stored = NULL, *log;

        sluice_fsm_config_default(&cfg);
        cfg.miss_budget = (unsigned)json_integer_value(json_object_get(c, "miss_budget"));
        cfg.miss_spacing = json_real_value(json_object_get(c, "miss_spacing"));
        cfg.pending_timeout = json_real_value(json_object_get(c, "pending_timeout"));
        cfg.cancel_resend = json_real_value(json_object_get(c, "cancel_resend"));
        cfg.requeue_allowed = json_is_true(json_object_get(c, "requeue_allowed"));
        cr_assert_eq(sluice_store_replay(st, id, &stored, &err), SLUICE_OK, "%s", err.text);
        log = fsm_log(stored);
        cr_assert_eq(sluice_fsm_replay(&cfg, log, &l, &err), SLUICE_OK, "%s: %s", id, err.text);
        compare(id, &l, x);
        n_inner += l.state == SLUICE_FSM_RECONCILING || l.state == SLUICE_FSM_RETRYING;
        json_decref(log);
        json_decref(stored);
    }
    cr_assert_gt(n_inner, 0, "the fixture should hold launches in RECONCILING or RETRYING");
    sluice_store_close(st);
    json_decref(expected);
    unlink(db);
    snprintf(path, sizeof(path), "%s/sluice.db-wal", tmp);
    unlink(path);
    snprintf(path, sizeof(path), "%s/sluice.db-shm", tmp);
    unlink(path);
    snprintf(path, sizeof(path), "%s/supervisor.lock", tmp);
    unlink(path);
    rmdir(tmp);
}
