/* SPDX-License-Identifier: Apache-2.0 */
/* test_leader.c - one leader among replicas (leader.h): the lease row
 * (campaign, renewal, takeover only after the lease ended, the epoch that
 * only grows, release), the fence of event appends (refused and nothing
 * stored; creating launches and cancel asks never fenced), and the leader
 * object's options and ticks.  Two store handles on one store stand for
 * two replicas; unit.leader.pg runs the same on PostgreSQL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/leader.h>
#include <sluice/store.h>

#include "scratch.h"
#include "sluice_assert.h"
#include "store_backend.h"
#include "store_case.h"

static char dir[128];

static void setup(void)
{
    scratch_make(dir, sizeof(dir), "leader");
    store_backend_setup();
}

static void teardown(void)
{
    store_backend_teardown();
    scratch_remove(dir);
}

TestSuite(leader, .init = setup, .fini = teardown, .timeout = 60);

static sluice_store_t *open_store(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_t *s = NULL;

    cr_assert_sluice_ok(store_backend_open(&s, dir, &err), &err);
    return s;
}

static sluice_store_lease_t campaign(sluice_store_t *s, const char *who, int64_t epoch, int64_t ms)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_lease_t out;

    memset(&out, 0, sizeof(out));
    cr_assert_sluice_ok(sluice_store_lease_campaign(s, who, epoch, ms, &out, &err), &err);
    return out;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t n_events(sluice_store_t *s, const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *evs = NULL;
    size_t n;

    cr_assert_sluice_ok(sluice_store_read_events(s, id, 1, 0, &evs, &err), &err);
    n = json_array_size(evs);
    json_decref(evs);
    return n;
}

Test(leader, the_first_campaign_takes_epoch_1_and_the_second_replica_follows)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_store_lease_t la, lb;

    la = campaign(a, "a", 0, 5000);
    cr_assert_eq(la.leader, 1);
    cr_assert_eq(la.epoch, 1);
    cr_assert_str_eq(la.holder, "a");
    cr_assert_gt(la.lease_until_ms, la.now_ms);
    lb = campaign(b, "b", 0, 5000);
    cr_assert_eq(lb.leader, 0);
    cr_assert_eq(lb.epoch, 1);
    cr_assert_str_eq(lb.holder, "a");
    sluice_store_close(a);
    sluice_store_close(b);
}

Test(leader, a_renewal_keeps_the_epoch_and_moves_the_end)
{
    sluice_store_t *a = open_store();
    sluice_store_lease_t l1, l2, r;
    sluice_error_t err = SLUICE_ERROR_INIT;

    l1 = campaign(a, "a", 0, 5000);
    sleep_ms(20);
    l2 = campaign(a, "a", l1.epoch, 5000);
    cr_assert_eq(l2.leader, 1);
    cr_assert_eq(l2.epoch, 1);
    cr_assert_gt(l2.lease_until_ms, l1.lease_until_ms);
    cr_assert_sluice_ok(sluice_store_lease_read(a, &r, &err), &err);
    cr_assert_eq(r.leader, 0);
    cr_assert_eq(r.epoch, 1);
    cr_assert_eq(r.lease_until_ms, l2.lease_until_ms);
    /* A renewal at an epoch the table does not hold is no renewal. */
    cr_assert_eq(campaign(a, "a", 7, 5000).leader, 0);
    cr_assert_eq(campaign(a, "z", 1, 5000).leader, 0);
    sluice_store_close(a);
}

Test(leader, a_takeover_happens_only_after_the_lease_ended_and_raises_the_epoch)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_store_lease_t la, lb;

    la = campaign(a, "a", 0, 400);
    cr_assert_eq(campaign(b, "b", 0, 400).leader, 0);
    sleep_ms(500);
    lb = campaign(b, "b", 0, 400);
    cr_assert_eq(lb.leader, 1);
    cr_assert_eq(lb.epoch, la.epoch + 1);
    cr_assert_str_eq(lb.holder, "b");
    /* The old leader's renewal finds another epoch: it no longer leads,
     * and it does not take the lease back while b's runs. */
    la = campaign(a, "a", la.epoch, 400);
    cr_assert_eq(la.leader, 0);
    cr_assert_eq(la.epoch, 2);
    cr_assert_str_eq(la.holder, "b");
    cr_assert_eq(campaign(a, "a", 0, 400).leader, 0);
    sleep_ms(500);
    la = campaign(a, "a", 0, 400);
    cr_assert_eq(la.leader, 1);
    cr_assert_eq(la.epoch, 3);
    sluice_store_close(a);
    sluice_store_close(b);
}

Test(leader, a_released_lease_is_taken_over_at_once)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_lease_t la;

    la = campaign(a, "a", 0, 60000);
    /* Another holder's release changes nothing. */
    cr_assert_sluice_ok(sluice_store_lease_release(b, "b", la.epoch, &err), &err);
    cr_assert_eq(campaign(b, "b", 0, 60000).leader, 0);
    cr_assert_sluice_ok(sluice_store_lease_release(a, "a", la.epoch, &err), &err);
    cr_assert_eq(campaign(b, "b", 0, 60000).epoch, 2);
    sluice_store_close(a);
    sluice_store_close(b);
}

Test(leader, bad_arguments_are_refused)
{
    sluice_store_t *a = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_lease_t l;
    char big[SLUICE_REPLICA_ID_MAX + 1];

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cr_assert_eq(sluice_store_lease_campaign(a, "", 0, 100, &l, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_store_lease_campaign(a, big, 0, 100, &l, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_store_lease_campaign(a, "a", 0, 0, &l, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_store_lease_campaign(a, "a", -1, 100, &l, &err), SLUICE_EINVAL);
    cr_assert_eq(sluice_store_lease_release(a, "a", 0, &err), SLUICE_EINVAL);
    sluice_store_close(a);
}

Test(leader, a_fenced_append_is_refused_and_nothing_of_it_is_stored)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_store_lease_t la, lb;
    sluice_store_append_t items[2];
    uint64_t before = sluice_store_fenced_total();
    json_t *ctx = json_pack("{s:s}", "k", "v");

    store_case_make_launch(a, "L1", "site1");
    la = campaign(a, "a", 0, 300);
    sluice_store_set_fence(a, la.epoch, mono_ms() + 60000);
    cr_assert_sluice_ok(sluice_store_append_event(a, "L1", "note-one", ctx, NULL, 0, NULL, &err),
                        &err);
    cr_assert_eq(n_events(b, "L1"), 2);
    sleep_ms(400);
    lb = campaign(b, "b", 0, 60000);
    cr_assert_eq(lb.epoch, la.epoch + 1);
    /* a's handle still believes it leads at epoch 1. */
    cr_assert_eq(sluice_store_append_event(a, "L1", "note-two", ctx, NULL, 0, NULL, &err),
                 SLUICE_ECONFLICT);
    cr_assert(strstr(err.text, "fenced: epoch 1, now 2: event note-two of launch L1 refused") !=
                  NULL,
              "%s", err.text);
    memset(items, 0, sizeof(items));
    items[0].launch_id = items[1].launch_id = "L1";
    items[0].name = "note-three";
    items[1].name = "note-four";
    items[0].context = items[1].context = ctx;
    cr_assert_eq(sluice_store_append_many(a, items, 2, &err), SLUICE_ECONFLICT);
    cr_assert(strstr(err.text, "fenced: epoch 1, now 2: 2 events") != NULL, "%s", err.text);
    cr_assert_eq(items[0].seq, 0);
    cr_assert_eq(n_events(b, "L1"), 2);
    cr_assert_eq(sluice_store_fenced_total(), before + 2);
    /* The new leader's handle, fenced at its epoch, writes. */
    sluice_store_set_fence(b, lb.epoch, mono_ms() + 60000);
    cr_assert_sluice_ok(sluice_store_append_event(b, "L1", "note-five", ctx, NULL, 0, NULL, &err),
                        &err);
    cr_assert_eq(n_events(a, "L1"), 3);
    json_decref(ctx);
    sluice_store_close(a);
    sluice_store_close(b);
}

Test(leader, creating_launches_and_asking_for_a_cancel_are_never_fenced)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    int appended = 0;

    (void)campaign(b, "b", 0, 60000);
    sluice_store_set_fence(a, -1, 0); /* a follows */
    store_case_make_launch(a, "L2", "site1");
    cr_assert_sluice_ok(sluice_store_request_cancel(a, "L2", "alice", &appended, &err), &err);
    cr_assert_eq(appended, 1);
    cr_assert_eq(n_events(b, "L2"), 2);
    cr_assert_eq(sluice_store_append_event(a, "L2", "note", NULL, NULL, 0, NULL, &err),
                 SLUICE_ECONFLICT);
    cr_assert(strstr(err.text, "fenced: epoch -1, now 1") != NULL, "%s", err.text);
    sluice_store_close(a);
    sluice_store_close(b);
}

Test(leader, freshness_follows_the_fence)
{
    sluice_store_t *a = open_store();

    cr_assert_eq(sluice_store_fence(a), 0);
    cr_assert_eq(sluice_store_fence_fresh(a), 1); /* no fence: standalone */
    sluice_store_set_fence(a, -1, mono_ms() + 60000);
    cr_assert_eq(sluice_store_fence_fresh(a), 0); /* following */
    sluice_store_set_fence(a, 3, mono_ms() + 60000);
    cr_assert_eq(sluice_store_fence(a), 3);
    cr_assert_eq(sluice_store_fence_fresh(a), 1);
    sluice_store_set_fence(a, 3, mono_ms() - 1);
    cr_assert_eq(sluice_store_fence_fresh(a), 0); /* the lease went stale */
    sluice_store_close(a);
}

Test(leader, the_options_are_checked_and_the_errors_name_the_field)
{
    sluice_store_t *a = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_leader_opts_t o = SLUICE_LEADER_OPTS_INIT;
    sluice_leader_t *l = NULL;

    o.lease_ms = 4000;
    o.renew_ms = 2000;
    cr_assert_eq(sluice_leader_new(&l, a, &o, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "ha.renew_ms") != NULL, "%s", err.text);
    o.lease_ms = 500;
    o.renew_ms = 100;
    cr_assert_eq(sluice_leader_new(&l, a, &o, &err), SLUICE_ECONFIG);
    cr_assert(strstr(err.text, "ha.lease_ms") != NULL, "%s", err.text);
    cr_assert_null(l);
    cr_assert_eq(sluice_store_fence(a), 0); /* a refused object leaves the handle alone */
    sluice_store_close(a);
}

Test(leader, two_objects_elect_one_leader_and_the_other_takes_over_after_a_release)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_leader_opts_t oa = SLUICE_LEADER_OPTS_INIT, ob = SLUICE_LEADER_OPTS_INIT;
    sluice_leader_t *la = NULL, *lb = NULL;
    sluice_leader_status_t st;

    oa.replica_id = "replica-a";
    ob.replica_id = "replica-b";
    cr_assert_sluice_ok(sluice_leader_new(&la, a, &oa, &err), &err);
    cr_assert_sluice_ok(sluice_leader_new(&lb, b, &ob, &err), &err);
    cr_assert_eq(sluice_store_fence(a), -1); /* following until it wins */
    sluice_leader_tick(la);
    sluice_leader_tick(lb);
    cr_assert_eq(sluice_leader_epoch(la), 1);
    cr_assert_eq(sluice_leader_epoch(lb), 0);
    cr_assert_eq(sluice_store_fence(a), 1);
    cr_assert_eq(sluice_store_fence_fresh(a), 1);
    cr_assert_eq(sluice_store_fence_fresh(b), 0);
    sluice_leader_status(lb, &st);
    cr_assert_eq(st.role, SLUICE_ROLE_FOLLOWER);
    cr_assert_str_eq(st.leader, "replica-a");
    cr_assert_str_eq(st.replica, "replica-b");
    cr_assert_eq(st.epoch, 1);
    cr_assert_eq(st.db_ok, 1);
    sluice_leader_status(la, &st);
    cr_assert_eq(st.role, SLUICE_ROLE_LEADER);
    cr_assert_eq(st.changes, 1);
    cr_assert_str_eq(sluice_role_name(st.role), "leader");
    sluice_leader_free(la); /* releases the lease */
    cr_assert_eq(sluice_store_fence(a), -1);
    sluice_leader_tick(lb);
    cr_assert_eq(sluice_leader_epoch(lb), 2);
    cr_assert_eq(sluice_store_fence(b), 2);
    sluice_leader_free(lb);
    sluice_store_close(a);
    sluice_store_close(b);
}

Test(leader, a_leader_that_cannot_renew_stops_by_itself)
{
    sluice_store_t *a = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_leader_opts_t o = SLUICE_LEADER_OPTS_INIT;
    sluice_leader_t *l = NULL;

    o.replica_id = "replica-a";
    o.lease_ms = 1000;
    o.renew_ms = 400;
    cr_assert_sluice_ok(sluice_leader_new(&l, a, &o, &err), &err);
    sluice_leader_tick(l);
    cr_assert_eq(sluice_leader_epoch(l), 1);
    /* No renewal for longer than lease - renew / 2 (800 ms): not fresh. */
    sleep_ms(850);
    cr_assert_eq(sluice_leader_epoch(l), 0);
    cr_assert_eq(sluice_store_fence_fresh(a), 0);
    sluice_leader_free(l);
    sluice_store_close(a);
}

Test(leader, the_thread_campaigns_and_renews)
{
    sluice_store_t *a = open_store(), *b = open_store();
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_leader_opts_t o = SLUICE_LEADER_OPTS_INIT;
    sluice_leader_t *l = NULL;
    sluice_store_lease_t r1, r2;

    o.replica_id = "replica-a";
    o.lease_ms = 1000;
    o.renew_ms = 200;
    cr_assert_sluice_ok(sluice_leader_new(&l, a, &o, &err), &err);
    cr_assert_sluice_ok(sluice_leader_start(l, &err), &err);
    sleep_ms(300);
    cr_assert_eq(sluice_leader_epoch(l), 1);
    cr_assert_sluice_ok(sluice_store_lease_read(b, &r1, &err), &err);
    sleep_ms(1200); /* past the first lease: renewed since */
    cr_assert_eq(sluice_leader_epoch(l), 1);
    cr_assert_sluice_ok(sluice_store_lease_read(b, &r2, &err), &err);
    cr_assert_gt(r2.lease_until_ms, r1.lease_until_ms);
    cr_assert_eq(campaign(b, "b", 0, 1000).leader, 0);
    sluice_leader_free(l);
    sluice_store_close(a);
    sluice_store_close(b);
}
