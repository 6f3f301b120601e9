/* SPDX-License-Identifier: Apache-2.0 */
/* access_capture.c - see access_capture.h. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <sluice/log.h>

#include "access_capture.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char lines[ACCESS_CAPTURE_MAX][512];
static int n_lines;

static void capture(const sluice_log_record_t *rec, void *arg)
{
    (void)arg;
    if (strcmp(rec->subsystem, "access") != 0)
        return;
    pthread_mutex_lock(&lock);
    if (n_lines < ACCESS_CAPTURE_MAX)
        snprintf(lines[n_lines++], sizeof(lines[0]), "%s", rec->msg);
    pthread_mutex_unlock(&lock);
}

void access_capture_start(void)
{
    pthread_mutex_lock(&lock);
    n_lines = 0;
    pthread_mutex_unlock(&lock);
    sluice_log_set_records(capture, SLUICE_LOG_INFO, NULL);
}

int access_find(const char *needle)
{
    int i, found = -1;

    pthread_mutex_lock(&lock);
    for (i = 0; i < n_lines && found < 0; i++) {
        if (strstr(lines[i], needle) != NULL)
            found = i;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

const char *access_line(int i)
{
    static char copy[sizeof(lines[0])];

    pthread_mutex_lock(&lock);
    if (i < 0)
        i = n_lines - 1;
    snprintf(copy, sizeof(copy), "%s", i >= 0 && i < n_lines ? lines[i] : "");
    pthread_mutex_unlock(&lock);
    return copy;
}
