/* SPDX-License-Identifier: Apache-2.0 */
/* test_server_cache_rules.c - the rules of the read cache of
 * GET /v1/launches/{id} (server_cache.c), on a bare server struct and a
 * real store: 1,000 live launches all stay kept (issue 16), an event drops
 * its launch's answer and not the others, an answer built from a read
 * older than an event is never current, another process's event is seen
 * at the next look, answers expire with age, a kept answer is always the
 * one of its own id, and a clear drops all.
 *
 * Notes:
 * - The server here holds only what server_cache.c uses (the locks, the
 *   read connection, the slots and the marks); no HTTP, no launcher.
 * - "This process wrote" is views_dirty = 1, as the handlers and the
 *   launcher driver set it after a write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/store.h>

#include "serve/server_cache.h"
#include "serve/server_int.h"
#include "sluice_assert.h"
#include "store_case.h"

static char tmp[128];
static sluice_store_t *w; /* the writer: the launcher's or another process's connection */
static sluice_server_t *srv;

static void setup(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    strcpy(tmp, "/tmp/sluice-cache-rules-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    cr_assert_sluice_ok(sluice_store_open(&w, tmp, &err), &err);
    srv = calloc(1, sizeof(*srv));
    cr_assert_not_null(srv);
    pthread_mutex_init(&srv->rmu, NULL);
    pthread_mutex_init(&srv->vmu, NULL);
    pthread_mutex_init(&srv->lookmu, NULL);
    atomic_init(&srv->views_dirty, 1);
    clock_gettime(CLOCK_MONOTONIC, &srv->started);
    cr_assert_sluice_ok(sluice_store_open(&srv->rstore, tmp, &err), &err);
    cr_assert_sluice_ok(sluice_store_last_gseq(srv->rstore, &srv->seen_gseq, &err), &err);
}

static void teardown(void)
{
    char cmd[256];

    server_cache_clear(srv);
    sluice_store_close(srv->rstore);
    pthread_mutex_destroy(&srv->rmu);
    pthread_mutex_destroy(&srv->vmu);
    pthread_mutex_destroy(&srv->lookmu);
    free(srv);
    sluice_store_close(w);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(server_cache_rules, .init = setup, .fini = teardown, .timeout = 60);

static void make(const char *id)
{
    store_case_make_launch(w, id, "site");
}

static void note(const char *id)
{
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_sluice_ok(sluice_store_append_event(w, id, "observed", NULL, NULL, 0, NULL, &err),
                        &err);
}

/* The kept answer of `id` (caller frees), or NULL; *upto_out as
 * server_cache_get() sets it. */
static char *get(const char *id, int64_t *upto_out)
{
    int64_t upto = -2, version = -1;
    char *text = server_cache_get(srv, id, &upto, &version);

    cr_assert_geq(upto, 0, "the store could always say (%s)", id);
    if (text != NULL)
        cr_assert_eq(version, 7, "the kept version comes back (%s)", id);
    if (upto_out != NULL)
        *upto_out = upto;
    return text;
}

/* Read `id` as a miss would: the mark, then keep `text` at it. */
static void build(const char *id, const char *text)
{
    int64_t upto;
    char *had = get(id, &upto);

    free(had);
    server_cache_put(srv, id, upto, text, 7);
}

static int kept(const char *id)
{
    char *text = get(id, NULL);
    int yes = text != NULL;

    free(text);
    return yes;
}

Test(server_cache_rules, a_thousand_live_launches_read_round_robin_all_stay_kept)
{
    char id[32];
    int n = 0;

    /* 2-way over 2,048 pairs, ~10-20 % of these ids shared a pair with two
     * others and evicted each other on every round. */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 1000; i++) {
            snprintf(id, sizeof(id), "bs-7706-%d", i);
            if (round == 0)
                build(id, id);
            else
                n += kept(id);
        }
    cr_expect_eq(n, 1000, "%d of 1000 answers were kept", n);
}

Test(server_cache_rules, an_event_drops_its_launch_answer_and_not_the_others)
{
    char id[32];
    int others = 0;

    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof(id), "l-%d", i);
        make(id);
    }
    atomic_store(&srv->views_dirty, 1); /* the accepts were this process's */
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof(id), "l-%d", i);
        build(id, id);
    }
    cr_assert(kept("l-3"));
    note("l-3");
    atomic_store(&srv->views_dirty, 1); /* this process wrote */
    cr_expect_not(kept("l-3"), "an answer from before its launch's event is not served");
    for (int i = 0; i < 20; i++) {
        snprintf(id, sizeof(id), "l-%d", i);
        others += i != 3 && kept(id);
    }
    /* An id sharing l-3's event bucket may be rebuilt too; these 19 do not. */
    cr_expect_eq(others, 19, "%d of the 19 other answers were kept", others);
    build("l-3", "l-3 again");
    cr_expect(kept("l-3"), "rebuilt after the event, it is kept again");
}

Test(server_cache_rules, an_answer_read_before_an_event_is_never_kept_as_current)
{
    int64_t upto;
    char *had;

    make("slow");
    make("other");
    had = get("slow", &upto); /* a miss takes its mark, then reads the launch... */
    cr_assert_null(had);
    note("slow"); /* ...while the launcher commits an event of it */
    atomic_store(&srv->views_dirty, 1);
    cr_assert_not(kept("other")); /* another request's look notes the event */
    server_cache_put(srv, "slow", upto, "from before the event", 7);
    cr_expect_not(kept("slow"), "an answer read before an event noted since is not current");
}

Test(server_cache_rules, another_process_event_is_seen_at_the_next_look)
{
    make("cli");
    build("cli", "cli");
    cr_assert(kept("cli"));
    note("cli"); /* `sluice cancel` in another process: views_dirty stays 0 */
    pthread_mutex_lock(&srv->lookmu);
    srv->looked_s -= 10.0; /* the look is due (VIEW_LOOK_S passed) */
    pthread_mutex_unlock(&srv->lookmu);
    cr_expect_not(kept("cli"), "the look noted the other process's event");
}

Test(server_cache_rules, answers_expire_with_age)
{
    build("aged", "aged");
    cr_assert(kept("aged"));
    pthread_mutex_lock(&srv->vmu);
    srv->started.tv_sec -= 61; /* every kept answer is now over 60 s old */
    pthread_mutex_unlock(&srv->vmu);
    cr_expect_not(kept("aged"), "an answer older than VIEW_MAX_AGE_S is rebuilt");
}

Test(server_cache_rules, a_kept_answer_is_always_its_own_ids)
{
    char id[32];
    int hits = 0;

    /* More ids than slots: answers are evicted, never mixed up. */
    for (int i = 0; i < 6000; i++) {
        snprintf(id, sizeof(id), "many-%d", i);
        build(id, id);
    }
    for (int i = 0; i < 6000; i++) {
        char *text;

        snprintf(id, sizeof(id), "many-%d", i);
        if ((text = get(id, NULL)) != NULL) {
            cr_assert_str_eq(text, id);
            hits++;
        }
        free(text);
    }
    cr_expect_gt(hits, 0);
    cr_expect_leq(hits, (int)VIEW_SLOTS);
}

Test(server_cache_rules, a_clear_drops_every_answer)
{
    build("a", "a");
    build("b", "b");
    server_cache_clear(srv);
    cr_expect_not(kept("a"));
    cr_expect_not(kept("b"));
}
