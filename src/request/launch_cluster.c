/* SPDX-License-Identifier: Apache-2.0 */
/* launch_cluster.c - a request's `cluster`: which of the site's clusters
 * (the site file's `clusters:`) runs the launch (docs/launch-request.md).
 *
 * Notes:
 * - The names come from the policy (sluice_launch_policy_t.clusters, the
 *   accept pipeline fills them from the site config); a site without
 *   `clusters:` has one cluster, "default".
 * - Absent: the site's first cluster; the accept pipeline writes the
 *   resolved name into the canonical request (accept.c).
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "launch_int.h"

/* `cluster`: one of the site's clusters (policy.clusters; none listed:
 * only "default", the one cluster of a site without `clusters:`). */
sluice_err launch_parse_cluster(launch_ctx_t *c,
                                const jdec_cur_t *root,
                                const sluice_launch_policy_t *pol,
                                char **out)
{
    static const char *const one[] = {"default"};
    const char *const *list = pol->n_clusters > 0 ? pol->clusters : one;
    size_t n = pol->n_clusters > 0 ? pol->n_clusters : 1;
    char known[200] = "", e[ECHO_CAP];
    size_t used = 0;
    sluice_err rc;

    if ((rc = launch_want_ident(c, root, "cluster", SLUICE_LAUNCH_MAX_NAME, false, out)) !=
            SLUICE_OK ||
        *out == NULL)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (list[i] != NULL && strcmp(list[i], *out) == 0)
            return SLUICE_OK;
    for (size_t i = 0; i < n && used < sizeof(known) - 1; i++) {
        int w = snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
                         list[i] ? list[i] : "");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return jdec_fail(root, "cluster", "unknown cluster \"%s\" (known: %s)", launch_echo(e, *out),
                     known);
}
