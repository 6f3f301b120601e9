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
 *   - Only the "paths" member is read; components are not.
 */
#include <string.h>

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

/* One path item: its operations and their deprecation marks. */
static sluice_err
count_item(const char *path, const json_t *item, sluice_rest_openapi_ops_t *o, sluice_error_t *err)
{
    static const char *const methods[] = {"get",     "put",  "post",  "delete",
                                          "options", "head", "patch", "trace"};

    if (!json_is_object(item))
        return sluice_errorf(err, SLUICE_EPROTO, "openapi: paths[\"%.200s\"]: expected an object",
                             path);
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        const json_t *op = json_object_get(item, methods[i]);
        const json_t *dep;

        if (op == NULL)
            continue;
        if (!json_is_object(op))
            return sluice_errorf(err, SLUICE_EPROTO,
                                 "openapi: paths[\"%.200s\"].%s: expected an object", path,
                                 methods[i]);
        o->operations++;
        dep = json_object_get(op, "deprecated");
        if (dep != NULL && !json_is_boolean(dep))
            return sluice_errorf(err, SLUICE_EPROTO,
                                 "openapi: paths[\"%.200s\"].%s.deprecated: expected a boolean",
                                 path, methods[i]);
        if (json_is_true(dep))
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
    json_t *paths;
    const char *key;
    json_t *item;
    sluice_err rc;

    if (doc == NULL || out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "openapi: NULL argument");
    if (info == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "openapi: unknown version %d", (int)v);
    if (!json_is_object(doc))
        return sluice_errorf(err, SLUICE_EPROTO, "openapi: expected an object");
    paths = json_object_get(doc, "paths");
    if (!json_is_object(paths))
        return sluice_errorf(err, SLUICE_EPROTO, "openapi.paths: %s",
                             paths == NULL ? "missing" : "expected an object");
    json_object_foreach(paths, key, item)
    {
        if (!path_of(key, info->name))
            continue;
        if ((rc = count_item(key, item, &o, err)) != SLUICE_OK)
            return rc;
    }
    *out = o;
    return SLUICE_OK;
}
