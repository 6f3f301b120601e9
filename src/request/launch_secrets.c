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

sluice_err
launch_parse_secret_env(launch_ctx_t *c, json_t *v, const char *key, char ***out, size_t *nout)
{
    size_t i, n;
    char p[PATH_CAP];
    const char *name = NULL, *why;
    char **names;
    sluice_err rc;

    if (!json_is_array(v))
        return launch_perr(c, key, "expected an array of variable names");
    n = json_array_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return launch_perr(c, key, "more than %d names", SLUICE_LAUNCH_MAX_ITEMS);
    if (n > 0 && (*out = calloc(n, sizeof(char *))) == NULL)
        return launch_oom(c);
    names = *out;
    for (i = 0; i < n; i++) {
        launch_path_idx(p, key, i);
        if ((rc = launch_want_string(c, json_array_get(v, i), p, 128, false, &name)) != SLUICE_OK) {
            LAUNCH_GO_ON(c, rc);
            continue;
        }
        if ((why = launch_envname_check(name)) != NULL) {
            LAUNCH_GO_ON(c, launch_perr(c, p, "%s", why));
            continue;
        }
        /* Only what the site lists: the same answer whether or not the
         * service has the variable, so a caller learns nothing of its
         * environment. */
        if (strcmp(key, "secret_env") == 0 && !secret_env_allowed(c->pol, name)) {
            LAUNCH_GO_ON(c, launch_perr(c, p,
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
            LAUNCH_GO_ON(c, launch_perr(c, key, "\"%s\" is listed twice", names[i]));
    return SLUICE_OK;
}

sluice_err launch_parse_secrets(launch_ctx_t *c, json_t *v, sluice_launch_t *l)
{
    const char *k, *why, *val = NULL;
    json_t *x;
    size_t n, i = 0;
    char p[PATH_CAP];
    sluice_err rc;

    if (!json_is_object(v))
        return launch_perr(c, "secrets", "expected an object of name to string");
    n = json_object_size(v);
    if (n > SLUICE_LAUNCH_MAX_ITEMS)
        return launch_perr(c, "secrets", "more than %d secrets", SLUICE_LAUNCH_MAX_ITEMS);
    if (n == 0)
        return SLUICE_OK;
    if ((l->secret_names = calloc(n, sizeof(char *))) == NULL ||
        (l->secret_values = calloc(n, sizeof(char *))) == NULL)
        return launch_oom(c);
    json_object_foreach(v, k, x)
    {
        launch_path_key(p, "secrets", k);
        if ((why = launch_envname_check(k)) != NULL) {
            LAUNCH_GO_ON(c, launch_perr(c, p, "%s", why));
            continue;
        }
        /* launch_want_string's messages never quote the value */
        if ((rc = launch_want_string(c, x, p, SLUICE_LAUNCH_MAX_VALUE, true, &val)) != SLUICE_OK) {
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
