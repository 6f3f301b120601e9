/* SPDX-License-Identifier: Apache-2.0 */
/* log_episode.c - once-per-episode warnings (log_episode.h).
 *
 * Notes:
 * - One mutex guards the table; the log line is formatted and written
 *   after it is released, so a slow sink never holds it.
 * - A table that is full shares its last slot among the newcomers: their
 *   episodes may then merge, which costs a line, never a flood.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sluice/log.h>

#include "base/log_episode.h"

typedef struct {
    char kind[32];
    char key[224];
    int open;
    unsigned long failures;
    long long since_ms;
} episode_t;

static pthread_mutex_t episode_lock = PTHREAD_MUTEX_INITIALIZER;
static episode_t episodes[LOG_EPISODE_MAX];
static size_t n_episodes;

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The slot of (kind, key), made when `make`; NULL when absent.  Under the lock. */
static episode_t *slot(const char *kind, const char *key, int make)
{
    size_t i;

    for (i = 0; i < n_episodes; i++) {
        if (strncmp(episodes[i].kind, kind, sizeof(episodes[i].kind) - 1) == 0 &&
            strncmp(episodes[i].key, key, sizeof(episodes[i].key) - 1) == 0)
            return &episodes[i];
    }
    if (!make)
        return NULL;
    if (n_episodes == LOG_EPISODE_MAX)
        return &episodes[LOG_EPISODE_MAX - 1];
    i = n_episodes++;
    snprintf(episodes[i].kind, sizeof(episodes[i].kind), "%s", kind);
    snprintf(episodes[i].key, sizeof(episodes[i].key), "%s", key);
    episodes[i].open = 0;
    episodes[i].failures = 0;
    return &episodes[i];
}

int log_episode_fail(const char *file, const char *kind, const char *key, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    episode_t *e;
    int starts;

    pthread_mutex_lock(&episode_lock);
    e = slot(kind, key ? key : "", 1);
    starts = !e->open;
    if (starts) {
        e->open = 1;
        e->failures = 0;
        e->since_ms = now_ms();
    }
    e->failures++;
    pthread_mutex_unlock(&episode_lock);
    if (!starts)
        return 0;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sluice_log_from(file, SLUICE_LOG_WARNING, "%s (further failures are counted, not logged)", msg);
    return 1;
}

int log_episode_ok(const char *file, const char *kind, const char *key, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    episode_t *e;
    unsigned long failures = 0;
    long long since = 0;
    int ends = 0;

    pthread_mutex_lock(&episode_lock);
    e = slot(kind, key ? key : "", 0);
    if (e != NULL && e->open) {
        ends = 1;
        e->open = 0;
        failures = e->failures;
        since = e->since_ms;
    }
    pthread_mutex_unlock(&episode_lock);
    if (!ends)
        return 0;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sluice_log_from(file, SLUICE_LOG_WARNING, "%s: after %lu failure%s in %.1f s", msg, failures,
                    failures == 1 ? "" : "s", (double)(now_ms() - since) / 1000.0);
    return 1;
}

int log_episode_open(const char *kind, const char *key)
{
    episode_t *e;
    int open;

    pthread_mutex_lock(&episode_lock);
    e = slot(kind, key ? key : "", 0);
    open = e != NULL && e->open;
    pthread_mutex_unlock(&episode_lock);
    return open;
}

void log_episode_reset(void)
{
    pthread_mutex_lock(&episode_lock);
    n_episodes = 0;
    pthread_mutex_unlock(&episode_lock);
}
