/* SPDX-License-Identifier: Apache-2.0 */
/* study_source.c - a study runtime file that is re-read when it changes:
 * every launch that names a study sees the file as it is now (the seed:
 * "re-read for every launch"), without parsing it on every accept.
 *
 * Notes:
 * - Each sluice_study_source_get() stat()s the file; when its identity
 *   (device, inode, size, modification and change times) differs from the
 *   version in memory, the file is read and parsed again.  An atomic
 *   rename, an in-place rewrite and a touch all count as a change.
 * - A version in use is never freed under its reader: every get takes a
 *   reference, released with sluice_study_source_release(); the last
 *   release of a replaced version frees it.
 * - A file that becomes unreadable or invalid is not replaced by the last
 *   good version: study launches are refused with the load error (which
 *   names the file, line and column) until the file is fixed, and the
 *   error is logged once per version of the file.  Requests that name no
 *   study never call here.
 * - One mutex guards the state; the parse runs under it (a study file is
 *   small, and a reload is rare).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sluice/log.h>

#include "config_int.h"

typedef struct snap {
    sluice_study_runtime_t *rt;
    unsigned refs; /* readers, plus one while it is the current version */
    struct snap *next;
} snap_t;

/* What makes one version of the file. */
typedef struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtim, ctim;
} file_id_t;

struct sluice_study_source {
    pthread_mutex_t mu;
    char *path;
    const sluice_config_t *site; /* borrowed */
    snap_t *cur;                 /* the current good version, or NULL */
    snap_t *all;                 /* every version still referenced */
    bool have_id;                /* `id` describes the file `cur` or `bad` came from */
    file_id_t id;
    bool bad; /* the file at `id` cannot be used: `why` says why */
    sluice_error_t why;
};

static bool same_id(const file_id_t *a, const file_id_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtim.tv_sec == b->mtim.tv_sec && a->mtim.tv_nsec == b->mtim.tv_nsec &&
           a->ctim.tv_sec == b->ctim.tv_sec && a->ctim.tv_nsec == b->ctim.tv_nsec;
}

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

/* Read the file again (under the mutex).  `id` is the identity stat()
 * gave before the read: a change during the read shows at the next get. */
static void reload(sluice_study_source_t *src, const file_id_t *id)
{
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    snap_t *s;

    src->id = *id;
    src->have_id = true;
    if (sluice_study_runtime_load(src->path, NULL, 0, src->site, &rt, &err) != SLUICE_OK ||
        (s = calloc(1, sizeof(*s))) == NULL) {
        if (rt)
            sluice_errorf(&err, SLUICE_ENOMEM, "%s: out of memory", src->path);
        sluice_study_runtime_free(rt);
        src->bad = true;
        src->why = err;
        if (src->cur)
            unref(src, src->cur);
        src->cur = NULL;
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
    if (src->cur)
        unref(src, src->cur);
    src->cur = s;
    src->bad = false;
    sluice_log(SLUICE_LOG_NOTICE, "study runtime file %s read (%zu studies)", src->path,
               rt->n_studies);
}

sluice_err sluice_study_source_get(sluice_study_source_t *src,
                                   const sluice_study_runtime_t **out,
                                   sluice_error_t *err)
{
    struct stat sb;
    file_id_t id;
    sluice_err rc = SLUICE_OK;

    if (!src || !out)
        return sluice_errorf(err, SLUICE_EINVAL, "sluice_study_source_get: NULL argument");
    *out = NULL;
    pthread_mutex_lock(&src->mu);
    if (stat(src->path, &sb) != 0) {
        int e = errno;
        /* Log once per state: a file that stays missing is one message. */
        if (!src->bad || src->have_id)
            sluice_log(SLUICE_LOG_ERR,
                       "study runtime file %s: %s; launches that name a study are refused",
                       src->path, strerror(e));
        src->bad = true;
        src->have_id = false;
        sluice_errorf(&src->why, SLUICE_ECONFIG, "%s: cannot read the study runtime file: %s",
                      src->path, strerror(e));
        if (src->cur)
            unref(src, src->cur);
        src->cur = NULL;
    } else {
        memset(&id, 0, sizeof(id));
        id.dev = sb.st_dev;
        id.ino = sb.st_ino;
        id.size = sb.st_size;
        id.mtim = sb.st_mtim;
        id.ctim = sb.st_ctim;
        if (!src->have_id || !same_id(&id, &src->id))
            reload(src, &id);
    }
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
    free(src->path);
    free(src);
}

const char *sluice_study_source_path(const sluice_study_source_t *src)
{
    return src ? src->path : NULL;
}
