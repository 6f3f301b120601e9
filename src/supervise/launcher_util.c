/* SPDX-License-Identifier: Apache-2.0 */
/* launcher_util.c - the helpers every launcher file uses: the clocks (real
 * or injected) and their one conversion to the fsm's seconds, the kill
 * points, and the table of launches (find, drop, free, the kept render).
 * The budgets are launcher_budget.c's.
 *
 * Notes:
 *   - Times: the store keeps epoch ms, the fsm epoch seconds (double).
 *     launcher_fsm_time() is the one conversion.
 *   - Nothing here touches the store: launcher_record.c records and folds.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/launcher.h>

#include "base/wipe.h"
#include "launcher_int.h"

/* ---- small helpers ----------------------------------------------------- */

double launcher_fsm_time(int64_t ms)
{
    return (double)ms / 1000.0;
}

/* Seconds-scale values (already multiplied) back to whole ms; never negative here. */
int64_t launcher_to_ms(double x)
{
    return (int64_t)(x >= 0 ? x + 0.5 : x - 0.5);
}

int64_t launcher_real_now_ms(void *arg)
{
    struct timespec ts;

    (void)arg;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void launcher_real_sleep_ms(void *arg, int64_t ms)
{
    struct timespec ts;

    (void)arg;
    if (ms <= 0)
        return;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

double launcher_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool launcher_real_clock(const sluice_launcher_t *l)
{
    return l->o.sleep_ms == launcher_real_sleep_ms;
}

int64_t launcher_now_ms(const sluice_launcher_t *l)
{
    return l->o.now_ms(l->o.clock_arg);
}

char *launcher_dup_or(const char *s, const char *dflt)
{
    return strdup(s != NULL && s[0] != '\0' ? s : dflt);
}

void launcher_views_free(sluice_jobview_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sluice_jobview_clear(&v[i]);
    free(v);
}

bool launcher_same_str(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* A kill point: true means "the process died here". */
bool launcher_killed_at(sluice_launcher_t *l, const char *point)
{
    static atomic_bool stopped_once; /* SLUICE_STOP_AT: the first time only */
    const char *env;

    if (l->o.kill_at != NULL) {
        if (l->o.kill_at(l->o.kill_arg, point)) {
            l->dead = true;
            return true;
        }
        return false;
    }
    env = getenv("SLUICE_KILL_AT");
    if (env != NULL && strcmp(env, point) == 0)
        raise(SIGKILL);
    /* The replicas' fencing test: a leader paused (SIGSTOP) here, once. */
    env = getenv("SLUICE_STOP_AT");
    if (env != NULL && strcmp(env, point) == 0 && !atomic_exchange(&stopped_once, true))
        raise(SIGSTOP);
    return false;
}

void launcher_launch_free(launch_t *L)
{
    if (L == NULL)
        return;
    for (size_t i = 0; i < L->n_secrets; i++) {
        if (L->secret_values[i] != NULL)
            wipe_str(L->secret_values[i]);
        free(L->secret_values[i]);
        free(L->secret_names[i]);
    }
    free(L->secret_values);
    free(L->secret_names);
    launcher_views_free(L->poll.views, L->poll.n_views);
    launcher_fsm_free(L);
    launcher_render_free(L->intake.render);
    free(L->id);
    free(L->site);
    free(L->dep_id);
    free(L->dep_cond);
    free(L);
}

launch_t *launcher_find_launch(const sluice_launcher_t *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i]->id, id) == 0)
            return l->v[i];
    return NULL;
}

void launcher_render_free(launcher_render_t *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n_jobs; i++)
        sluice_jobdesc_clear(&r->jobs[i]);
    free(r->jobs);
    json_decref(r->json);
    free(r);
}

void launcher_render_drop(sluice_launcher_t *l, launch_t *L)
{
    if (L == NULL || L->intake.render == NULL)
        return;
    launcher_render_free(L->intake.render);
    L->intake.render = NULL;
    atomic_fetch_sub(&l->renders, 1);
}

void launcher_drop_launch(sluice_launcher_t *l, launch_t *L)
{
    launcher_render_drop(l, L);
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i] == L) {
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
            l->n--;
            break;
        }
    }
    launcher_launch_free(L);
}
