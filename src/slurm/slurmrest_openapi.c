/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrest_openapi.c - what a slurmrestd's own OpenAPI document says about
 * one REST version: how many operations it serves and how many it marks
 * deprecated; and the release that removes each version.
 *
 * Purpose:
 *   `sluice check` warns when the version sluice talks is deprecated by the
 *   server (a pinned rest.api_version outlives its data parser).
 *
 * Notes:
 *   - slurmrestd 24.05+ serves the merged document of every loaded data
 *     parser at /openapi/v3, and sets "deprecated": true on each method of
 *     every path of a deprecated parser (src/slurmrestd/openapi.c,
 *     _populate_method, from the parser's IS_PLUGIN_DEPRECATED: released
 *     before the oldest protocol version the release still talks).  So a
 *     version is deprecated when all its operations are; single deprecated
 *     operations are counted, not taken for the version.
 *   - Only the "paths" member is read; components are not.  The document is
 *     read strictly (base/jdec.h): a null where an object or a boolean
 *     belongs is an error, as any other wrong type.
 */
#include <stdio.h>
#include <string.h>

#include "base/jdec.h"
#include "slurmrest.h"

const char *sluice_rest_version_removed_in(sluice_rest_version v)
{
    const slurmrest_info_t *info = slurmrest_info(v);

    return info != NULL ? info->removed_in : NULL;
}

/* Does `path` ("/slurmdb/v0.0.43/jobs/") belong to version `name`? */
static bool path_of(const char *path, const char *name)
{
    static const char *const roots[] = {"/slurm/", "/slurmdb/"};
    size_t n = strlen(name);

    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        size_t r = strlen(roots[i]);
        if (strncmp(path, roots[i], r) == 0 && strncmp(path + r, name, n) == 0 &&
            path[r + n] == '/')
            return true;
    }
    return false;
}

/* One path item (cursor `item`, named "openapi: paths[\"<path>\"]"): its
 * operations and their deprecation marks. */
static sluice_err count_item(const jdec_cur_t *item, sluice_rest_openapi_ops_t *o)
{
    static const char *const methods[] = {"get",     "put",  "post",  "delete",
                                          "options", "head", "patch", "trace"};
    sluice_err rc;

    if (!json_is_object(item->v))
        return jdec_fail(item, NULL, "expected an object");
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        jdec_cur_t op;
        bool dep = false;

        if ((rc = jdec_object(item, methods[i], 0, &op)) != SLUICE_OK)
            return rc;
        if (op.v == NULL)
            continue;
        o->operations++;
        if ((rc = jdec_bool(&op, "deprecated", 0, &dep)) != SLUICE_OK)
            return rc;
        if (dep)
            o->deprecated++;
    }
    return SLUICE_OK;
}

sluice_err sluice_rest_openapi_ops(const json_t *doc,
                                   sluice_rest_version v,
                                   sluice_rest_openapi_ops_t *out,
                                   sluice_error_t *err)
{
    const slurmrest_info_t *info = slurmrest_info(v);
    sluice_rest_openapi_ops_t o = {0, 0};
    jdec_t d;
    jdec_cur_t root, paths, member, item;
    const char *key;
    void *it;
    char name[240];
    sluice_err rc;

    if (doc == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "openapi: NULL argument");
    if (info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "openapi: unknown version %d", (int)v);
    if (!json_is_object(doc))
        return sluice_errorf(err, SLUICE_EPROTO, "openapi: expected an object");
    /* strict: a document, not an answer; null is a wrong type here */
    jdec_init(&d, JDEC_STRICT, JDEC_VOICE_EXPECT, SLUICE_EPROTO, err, NULL);
    jdec_root(&root, &d, doc, "openapi");
    if (jdec_object(&root, "paths", JDEC_REQUIRED | JDEC_SILENT, &paths) != SLUICE_OK)
        return jdec_fail(&root, "paths", "%s",
                         jdec_value(&root, "paths") == NULL ? "missing" : "expected an object");
    JDEC_FOREACH_MEMBER(&paths, it, key, member)
    {
        if (!path_of(key, info->name))
            continue;
        snprintf(name, sizeof(name), "openapi: paths[\"%.200s\"]", key);
        jdec_root(&item, &d, member.v, name);
        if ((rc = count_item(&item, &o)) != SLUICE_OK)
            return rc;
    }
    *out = o;
    return SLUICE_OK;
}
