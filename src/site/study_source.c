/* SPDX-License-Identifier: Apache-2.0 */
/* study_source.c - a study runtime file that is re-read for every launch
 * that names a study (the seed: "re-read for every launch"), parsed again
 * only when it changed.
 *
 * Notes:
 * - Each sluice_study_source_get() reads the file (at most 1 MiB) and
 *   compares its bytes with the version in memory; only different bytes
 *   are parsed.  Bytes, not timestamps: a rewrite in the same clock tick
 *   of the file system, with the same size, is still seen.
 * - A version in use is never freed under its reader: every get takes a
 *   reference, released with sluice_study_source_release(); the last
 *   release of a replaced version frees it.
 * - A file that becomes unreadable or invalid is not replaced by the last
 *   good version: study launches are refused with the load error (which
 *   names the file, line and column) until the file is fixed, and the
 *   error is logged once per content (or per read error) of the file.
 *   Requests that name no study never call here.
 * - One mutex guards the state; the read and the parse run under it (a
 *   study file is small).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/log.h>

#include "config_int.h"

typedef struct snap {
    sluice_study_runtime_t *rt;
    unsigned refs; /* readers, plus one while it is the current version */
    struct snap *next;
} snap_t;

struct sluice_study_source {
    pthread_mutex_t mu;
    char *path;
    const sluice_config_t *site; /* borrowed */
    snap_t *cur;                 /* the current good version, or NULL */
    snap_t *all;                 /* every version still referenced */
    char *text;                  /* the bytes `cur` or `why` came from, or NULL */
    size_t len;
    bool bad; /* the file cannot be used now: `why` says why */
    sluice_error_t why;
};

static void unref(sluice_study_source_t *src, snap_t *s)
{
    snap_t **pp;

    if (--s->refs > 0)
        return;
    for (pp = &src->all; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    sluice_study_runtime_free(s->rt);
    free(s);
}

static void drop_current(sluice_study_source_t *src)
{
    if (src->cur)
        unref(src, src->cur);
    src->cur = NULL;
}

/* The file cannot be read: refuse until it can (logged once per reason). */
static void unreadable(sluice_study_source_t *src, const sluice_error_t *err)
{
    if (!src->bad || src->text || strcmp(src->why.text, err->text) != 0)
        sluice_log(SLUICE_LOG_ERR, "study runtime file: %s; launches that name a study are refused",
                   err->text);
    free(src->text);
    src->text = NULL;
    src->len = 0;
    src->bad = true;
    src->why = *err;
    drop_current(src);
}

/* New bytes `text` (taken): parse them (under the mutex). */
static void reparse(sluice_study_source_t *src, char *text, size_t len)
{
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    snap_t *s = NULL;

    free(src->text);
    src->text = text;
    src->len = len;
    if (sluice_study_runtime_load(src->path, text, len, src->site, &rt, &err) != SLUICE_OK ||
        (s = calloc(1, sizeof(*s))) == NULL) {
        if (rt)
            sluice_errorf(&err, SLUICE_ENOMEM, "%s: out of memory", src->path);
        sluice_study_runtime_free(rt);
        src->bad = true;
        src->why = err;
        drop_current(src);
        sluice_log(SLUICE_LOG_ERR,
                   "study runtime file %s changed and cannot be used; launches that name a study "
                   "are refused until it is fixed: %s",
                   src->path, err.text);
        return;
    }
    s->rt = rt;
    s->refs = 1;
    s->next = src->all;
    src->all = s;
    drop_current(src);
    src->cur = s;
    src->bad = false;
    sluice_log(SLUICE_LOG_NOTICE, "study runtime file %s read (%zu studies)", src->path,
               rt->n_studies);
}

sluice_err sluice_study_source_get(sluice_study_source_t *src,
                                   const sluice_study_runtime_t **out,
                                   sluice_error_t *err)
{
    sluice_error_t rerr = SLUICE_ERROR_INIT;
    char *text = NULL;
    size_t len = 0;
    sluice_err rc = SLUICE_OK;

    if (!src || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_study_source_get: NULL argument");
    *out = NULL;
    pthread_mutex_lock(&src->mu);
    if (cfg_read_file(src->path, &text, &len, &rerr) != SLUICE_OK)
        unreadable(src, &rerr);
    else if (src->text && len == src->len && memcmp(text, src->text, len) == 0)
        free(text); /* unchanged: the version in memory (good or bad) */
    else
        reparse(src, text, len);
    if (src->bad || !src->cur) {
        /* A file the site cannot give (unreadable, invalid) is the site's
         * configuration: SLUICE_ECONFIG, whatever the reader said. */
        rc = src->why.code == SLUICE_ENOMEM ? SLUICE_ENOMEM : SLUICE_ECONFIG;
        if (err) {
            *err = src->why;
            err->code = rc;
        }
    } else {
        src->cur->refs++;
        *out = src->cur->rt;
    }
    pthread_mutex_unlock(&src->mu);
    return rc;
}

void sluice_study_source_release(sluice_study_source_t *src, const sluice_study_runtime_t *rt)
{
    snap_t *s;

    if (!src || !rt)
        return;
    pthread_mutex_lock(&src->mu);
    for (s = src->all; s; s = s->next) {
        if (s->rt == rt) {
            unref(src, s);
            break;
        }
    }
    pthread_mutex_unlock(&src->mu);
}

sluice_err sluice_study_source_open(sluice_study_source_t **out,
                                    const char *path,
                                    const sluice_config_t *site,
                                    sluice_error_t *err)
{
    sluice_study_source_t *src;
    const sluice_study_runtime_t *rt = NULL;
    sluice_err rc;

    if (!out || !path)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_study_source_open: NULL argument");
    if ((src = calloc(1, sizeof(*src))) == NULL || (src->path = cfg_dup(path)) == NULL) {
        free(src);
        return sluice_errorf(err, SLUICE_ENOMEM, "out of memory");
    }
    src->site = site;
    pthread_mutex_init(&src->mu, NULL);
    /* The first read is checked here: a service does not start with a
     * study file it cannot use. */
    if ((rc = sluice_study_source_get(src, &rt, err)) != SLUICE_OK) {
        sluice_study_source_close(src);
        return rc;
    }
    sluice_study_source_release(src, rt);
    *out = src;
    return SLUICE_OK;
}

void sluice_study_source_close(sluice_study_source_t *src)
{
    snap_t *s, *next;

    if (!src)
        return;
    for (s = src->all; s; s = next) {
        next = s->next;
        sluice_study_runtime_free(s->rt);
        free(s);
    }
    pthread_mutex_destroy(&src->mu);
    free(src->text);
    free(src->path);
    free(src);
}
