/* SPDX-License-Identifier: Apache-2.0 */
/* launch_secrets.c - the two ways a request names secrets: `secret_env`
 * (names of variables of the service's environment, only those the site's
 * policy.allowed_secret_env lists) and `secrets` (values, API only).  The
 * values of either never reach an error text.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "launch_int.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Is `name` one of the site's policy.allowed_secret_env (an exact name, or
 * a prefix ending in '*')? */
static bool secret_env_allowed(const sluice_launch_policy_t *pol, const char *name)
{
    for (size_t i = 0; pol != NULL && i < pol->n_secret_env_allowed; i++) {
        const char *e = pol->secret_env_allowed[i];
        size_t n = strlen(e);
        if (n > 0 && e[n - 1] == '*' ? strncmp(e, name, n - 1) == 0 : strcmp(e, name) == 0)
            return true;
    }
    return false;
}

sluice_err launch_parse_secret_env(
    launch_ctx_t *c, const jdec_cur_t *root, const char *key, char ***out, size_t *nout)
{
    jdec_cur_t arr, item;
    size_t i, n;
    const char *name = NULL, *why;
    char **names;
    sluice_err rc;

    if (jdec_array(root, key, JDEC_SILENT, &arr) != SLUICE_OK)
        return jdec_fail(root, key, "expected an array of variable names");
    n = jdec_len(&arr);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return jdec_fail(&arr, NULL, "more than %d names", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (*out = calloc(n, sizeof(char *))) == NULL)
        return launch_oom(c);
    names = *out;
    JDEC_FOREACH(&arr, i, item)
    {
        if ((rc = jdec_string(&item, NULL, JDEC_NONEMPTY, 128, &name)) != SLUICE_OK) {
            LAUNCH_GO_ON(c, rc);
            continue;
        }
        if ((why = launch_envname_check(name)) != NULL) {
            LAUNCH_GO_ON(c, jdec_fail(&item, NULL, "%s", why));
            continue;
        }
        /* Only what the site lists: the same answer whether or not the
         * service has the variable, so a caller learns nothing of its
         * environment. */
        if (strcmp(key, "secret_env") == 0 && !secret_env_allowed(c->pol, name)) {
            LAUNCH_GO_ON(c, jdec_fail(&item, NULL,
                                      "\"%s\" is not a variable the site allows a request to "
                                      "name (policy.allowed_secret_env)",
                                      name));
            continue;
        }
        if ((names[*nout] = launch_strdup(name)) == NULL)
            return launch_oom(c);
        (*nout)++; /* the good names, in a row */
    }
    if (*nout > 1)
        qsort(names, *nout, sizeof(char *), cmp_str);
    for (i = 1; i < *nout; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            LAUNCH_GO_ON(c, jdec_fail(&arr, NULL, "\"%s\" is listed twice", names[i]));
    return SLUICE_OK;
}

sluice_err launch_parse_secrets(launch_ctx_t *c, const jdec_cur_t *root, sluice_launch_t *l)
{
    jdec_cur_t obj, x;
    const char *k, *why, *val = NULL;
    void *it;
    size_t n, i = 0;
    sluice_err rc;

    if (jdec_object(root, "secrets", JDEC_SILENT, &obj) != SLUICE_OK)
        return jdec_fail(root, "secrets", "expected an object of name to string");
    n = jdec_members(&obj);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return jdec_fail(&obj, NULL, "more than %d secrets", SLUICE_LAUNCH_MAX_ITEMS);
    if (n == 0)
        return SLUICE_OK;
    if ((l->secret_names = calloc(n, sizeof(char *))) == NULL ||
        (l->secret_values = calloc(n, sizeof(char *))) == NULL)
        return launch_oom(c);
    JDEC_FOREACH_MEMBER(&obj, it, k, x)
    {
        if ((why = launch_envname_check(k)) != NULL) {
            LAUNCH_GO_ON(c, jdec_fail(&x, NULL, "%s", why));
            continue;
        }
        /* jdec's messages never quote the value */
        if ((rc = jdec_string(&x, NULL, 0, SLUICE_LAUNCH_MAX_VALUE, &val)) != SLUICE_OK) {
            LAUNCH_GO_ON(c, rc);
            continue;
        }
        l->secret_names[i] = launch_strdup(k);
        l->secret_values[i] = launch_strdup(val);
        l->n_secrets = ++i;
        if (l->secret_names[i - 1] == NULL || l->secret_values[i - 1] == NULL)
            return launch_oom(c);
    }
    /* sort names and values together (selection sort; n <= 256) */
    n = l->n_secrets;
    for (i = 0; i + 1 < n; i++) {
        size_t j, m = i;
        for (j = i + 1; j < n; j++)
            if (strcmp(l->secret_names[j], l->secret_names[m]) < 0)
                m = j;
        if (m != i) {
            char *t = l->secret_names[i];
            l->secret_names[i] = l->secret_names[m];
            l->secret_names[m] = t;
            t = l->secret_values[i];
            l->secret_values[i] = l->secret_values[m];
            l->secret_values[m] = t;
        }
    }
    return SLUICE_OK;
}
