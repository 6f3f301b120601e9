/* SPDX-License-Identifier: Apache-2.0 */
/* jobdesc_json.c - the neutral job model read back from its JSON view.
 *
 * Purpose:
 *   "Render once": the render stored at accept time holds one
 *   sluice_jobdesc_to_json() object per component.  Every submit attempt
 *   turns them back into sluice_jobdesc_t with sluice_jobdesc_from_json().
 *
 * Notes:
 *   - Strict: an unknown key, a wrong type or an out-of-range number is
 *     SLUICE_EINVAL naming the key.  null is accepted for every string.
 *   - to_json(from_json(x)) == x for every object to_json produced.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/jobdesc.h>

static sluice_err take_str(const json_t *obj, const char *key, char **dst, sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (v == NULL || json_is_null(v))
        return SLUICE_OK;
    if (!json_is_string(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s: expected a string", key);
    *dst = strdup(json_string_value(v));
    if (*dst == NULL)
        return sluice_errorf(err, SLUICE_ENOMEM, "%s: out of memory", key);
    return SLUICE_OK;
}

static sluice_err
take_uint(const json_t *obj, const char *key, uint64_t max, uint64_t *dst, sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (v == NULL)
        return SLUICE_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) > max)
        return sluice_errorf(err, SLUICE_EINVAL, "%s: expected an integer in 0..%llu", key,
                             (unsigned long long)max);
    *dst = (uint64_t)json_integer_value(v);
    return SLUICE_OK;
}

static sluice_err take_bool(const json_t *obj, const char *key, bool *dst, sluice_error_t *err)
{
    const json_t *v = json_object_get(obj, key);

    if (v == NULL)
        return SLUICE_OK;
    if (!json_is_boolean(v))
        return sluice_errorf(err, SLUICE_EINVAL, "%s: expected a boolean", key);
    *dst = json_is_true(v);
    return SLUICE_OK;
}

static sluice_err take_env(const json_t *obj, sluice_jobdesc_t *d, sluice_error_t *err)
{
    const json_t *env = json_object_get(obj, "env");
    size_t i;
    const json_t *e;
    sluice_err rc;

    if (env == NULL || json_is_null(env))
        return SLUICE_OK;
    if (!json_is_array(env))
        return sluice_errorf(err, SLUICE_EINVAL, "env: expected an array");
    json_array_foreach(env, i, e)
    {
        const json_t *n = json_object_get(e, "name");
        const json_t *v = json_object_get(e, "value");

        if (!json_is_object(e) || json_object_size(e) != 2 || !json_is_string(n) ||
            !json_is_string(v))
            return sluice_errorf(err, SLUICE_EINVAL, "env[%zu]: expected {name, value}", i);
        rc = sluice_jobdesc_setenv(d, json_string_value(n), json_string_value(v), err);
        if (rc != SLUICE_OK)
            return rc;
    }
    return SLUICE_OK;
}

static const char *const known_keys[] = {"name",
                                         "comment",
                                         "partition",
                                         "account",
                                         "qos",
                                         "reservation",
                                         "time_limit",
                                         "nodes",
                                         "tasks_per_node",
                                         "cpus_per_task",
                                         "mem_per_node_mib",
                                         "gpus_per_node",
                                         "gres_name",
                                         "constraint",
                                         "workdir",
                                         "std_out",
                                         "std_err",
                                         "hold",
                                         "dependency",
                                         "requeue",
                                         "signal",
                                         "exclusive",
                                         "env",
                                         "script",
                                         NULL};

static bool known(const char *key)
{
    for (size_t i = 0; known_keys[i] != NULL; i++)
        if (strcmp(known_keys[i], key) == 0)
            return true;
    return false;
}

sluice_err sluice_jobdesc_from_json(const json_t *obj, sluice_jobdesc_t *out, sluice_error_t *err)
{
    sluice_jobdesc_t d;
    size_t n_known = 0;
    uint64_t n;
    sluice_err rc = SLUICE_OK;

    memset(&d, 0, sizeof(d));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    if (!json_is_object(obj))
        return sluice_errorf(err, SLUICE_EINVAL, "job description: expected an object");
    for (size_t i = 0; known_keys[i] != NULL; i++)
        if (json_object_get(obj, known_keys[i]) != NULL)
            n_known++;
    if (n_known != json_object_size(obj)) {
        json_t *mut; /* jansson's iteration API is not const-qualified */
        const char *key;
        json_t *v;

        memcpy(&mut, &obj, sizeof(mut));
        json_object_foreach(mut, key, v)
        {
            if (!known(key)) {
                rc = sluice_errorf(err, SLUICE_EINVAL, "%s: unknown key", key);
                goto out;
            }
        }
    }
#define STR(k)                                                                                     \
    if ((rc = take_str(obj, #k, &d.k, err)) != SLUICE_OK)                                          \
        goto out;
#define UINT(k, max)                                                                               \
    n = d.k;                                                                                       \
    if ((rc = take_uint(obj, #k, (max), &n, err)) != SLUICE_OK)                                    \
        goto out;                                                                                  \
    d.k = n;
#define BOOL(k)                                                                                    \
    if ((rc = take_bool(obj, #k, &d.k, err)) != SLUICE_OK)                                         \
        goto out;
    STR(name)
    STR(comment)
    STR(partition)
    STR(account)
    STR(qos)
    STR(reservation)
    UINT(time_limit, UINT32_MAX)
    UINT(nodes, UINT32_MAX)
    UINT(tasks_per_node, UINT32_MAX)
    UINT(cpus_per_task, UINT32_MAX)
    UINT(mem_per_node_mib, (uint64_t)INT64_MAX)
    UINT(gpus_per_node, UINT32_MAX)
    STR(gres_name)
    STR(constraint)
    STR(workdir)
    STR(std_out)
    STR(std_err)
    BOOL(hold)
    STR(dependency)
    BOOL(requeue)
    STR(signal)
    BOOL(exclusive)
    STR(script)
#undef STR
#undef UINT
#undef BOOL
    if ((rc = take_env(obj, &d, err)) != SLUICE_OK)
        goto out;
    *out = d;
    memset(&d, 0, sizeof(d));
out:
    sluice_jobdesc_clear(&d);
    return rc;
}
