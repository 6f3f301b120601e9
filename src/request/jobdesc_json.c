/* SPDX-License-Identifier: Apache-2.0 */
/* jobdesc_json.c - the neutral job model read back from its JSON view.
 *
 * Purpose:
 *   "Render once": the render stored at accept time holds one
 *   sluice_jobdesc_to_json() object per component.  Every submit attempt
 *   turns them back into sluice_jobdesc_t with sluice_jobdesc_from_json().
 *
 * Notes:
 *   - Strict (base/jdec.h): an unknown key, a wrong type, an out-of-range
 *     number or a NUL byte in a string is SLUICE_EINVAL naming the key
 *     ("nodes: expected an integer in 0..4294967295").  null is accepted
 *     for every string and for env.
 *   - to_json(from_json(x)) == x for every object to_json produced.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/jobdesc.h>

#include "base/jdec.h"

/* env: [{"name", "value"}, ...] (absent or null: none). */
static sluice_err env_from(const jdec_cur_t *root, sluice_jobdesc_t *d, sluice_error_t *err)
{
    jdec_cur_t env, e;
    size_t i;
    sluice_err rc;

    if ((rc = jdec_array(root, "env", JDEC_NULLABLE, &env)) != SLUICE_OK)
        return rc;
    JDEC_FOREACH(&env, i, e)
    {
        const char *name = jdec_peek_string(&e, "name");
        const char *value = jdec_peek_string(&e, "value");

        if (!json_is_object(e.v) || json_object_size(e.v) != 2 || name == NULL || value == NULL)
            return jdec_fail(&e, NULL, "expected {name, value}");
        if ((rc = sluice_jobdesc_setenv(d, name, value, err)) != SLUICE_OK)
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

sluice_err sluice_jobdesc_from_json(const json_t *obj, sluice_jobdesc_t *out, sluice_error_t *err)
{
    sluice_jobdesc_t d;
    jdec_t dec;
    jdec_cur_t root;
    uint64_t n;
    sluice_err rc = SLUICE_OK;

    memset(&d, 0, sizeof(d));
    if (out == NULL)
        return sluice_errorf(err, SLUICE_EINVAL, "out: required");
    if (!json_is_object(obj))
        return sluice_errorf(err, SLUICE_EINVAL, "job description: expected an object");
    jdec_init(&dec, JDEC_STRICT, JDEC_VOICE_EXPECT, SLUICE_EINVAL, err, NULL);
    jdec_root(&root, &dec, obj, "");
    if ((rc = jdec_keys(&root, known_keys)) != SLUICE_OK)
        goto out;
#define STR(k)                                                                                     \
    if ((rc = jdec_strdup(&root, #k, JDEC_NULLABLE, SIZE_MAX, &d.k)) != SLUICE_OK)                 \
        goto out;
#define UINT(k, max)                                                                               \
    n = d.k;                                                                                       \
    if ((rc = jdec_uint(&root, #k, 0, 0, (max), &n)) != SLUICE_OK)                                 \
        goto out;                                                                                  \
    d.k = n;
#define BOOL(k)                                                                                    \
    if ((rc = jdec_bool(&root, #k, 0, &d.k)) != SLUICE_OK)                                         \
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
    if ((rc = env_from(&root, &d, err)) != SLUICE_OK)
        goto out;
    *out = d;
    memset(&d, 0, sizeof(d));
out:
    sluice_jobdesc_clear(&d);
    return rc;
}
