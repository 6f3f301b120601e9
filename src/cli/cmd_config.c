/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_config.c - `sluice config show`: print the effective site configuration
 * (defaults < file < environment < --set) with the source of each value,
 * each cluster's own values when the site has `clusters:`, and the Slurm
 * identity it gives (rest.user, or the token's own user).
 *
 * Notes:
 * - The site file is --config FILE, else $SLUICE_CONFIG, else none.
 * - Exit codes: 0 ok, 64 usage, 66 the site file does not exist, 78
 *   configuration error, 74 unreadable file.
 * - Output never contains secret material (the model only holds paths).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "cli.h"
#include "prepare.h"
#include "print.h"

/* One line: `shown` (the path, after the cluster's "clusters[i]." when
 * there is one), the value, and the source `sources` gives `path`. */
static void print_value(const char *shown, const char *path, json_t *v, json_t *sources)
{
    json_t *src = json_object_get(sources, path);
    const char *s = json_is_string(src) ? json_string_value(src) : "derived";
    char *text = NULL;

    if (json_is_string(v))
        printf("%-48s %-24s (%s)\n", shown, json_string_value(v), s);
    else {
        text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
        printf("%-48s %-24s (%s)\n", shown, text ? text : "?", s);
        free(text);
    }
}

/* {"user": ..., "source": ...}, or {"user": null, "error": ...} when the
 * configuration gives no usable identity (serve, launch and check refuse it). */
static json_t *identity_json(sluice_config_t *cfg)
{
    char user[SLUICE_TOKEN_USER_MAX];
    char source[128];
    sluice_error_t err = SLUICE_ERROR_INIT;

    if (cli_identity(cfg, user, sizeof(user), source, sizeof(source), &err) != SLUICE_OK)
        return json_pack("{s:n, s:s}", "user", "error", err.text);
    return json_pack("{s:s, s:s}", "user", user, "source", source);
}

/* `scope` is "" for the site, "clusters[i]." for a cluster. */
static void print_tree(const char *scope, const char *prefix, json_t *obj, json_t *sources)
{
    const char *key;
    json_t *v;
    char path[256], shown[300];

    json_object_foreach(obj, key, v)
    {
        if (prefix[0])
            snprintf(path, sizeof(path), "%s.%s", prefix, key);
        else
            snprintf(path, sizeof(path), "%s", key);
        if (json_is_object(v) && !json_object_get(sources, path)) {
            print_tree(scope, path, v, sources);
        } else {
            snprintf(shown, sizeof(shown), "%s%s", scope, path);
            print_value(shown, path, v, sources);
        }
    }
}

/* The identity line (`scope` as for print_tree()). */
static void print_identity(const char *scope, json_t *who)
{
    char shown[64];

    snprintf(shown, sizeof(shown), "%sidentity.user", scope);
    if (json_is_string(json_object_get(who, "user")))
        printf("%-48s %-24s (%s)\n", shown, json_string_value(json_object_get(who, "user")),
               json_string_value(json_object_get(who, "source")));
    else if (json_is_object(who))
        printf("%-48s %-24s (%s)\n", shown, "-", json_string_value(json_object_get(who, "error")));
}

/* A site with `clusters:`: each one's name and per-cluster values. */
static void print_clusters(json_t *clusters)
{
    json_t *k;
    size_t i;
    char scope[48], name[64];

    json_array_foreach(clusters, i, k)
    {
        snprintf(scope, sizeof(scope), "clusters[%zu].", i);
        snprintf(name, sizeof(name), "clusters[%zu].name", i);
        printf("%-48s %-24s (%s)\n", name, json_string_value(json_object_get(k, "name")),
               i == 0 ? "file; the default cluster" : "file");
        print_tree(scope, "", json_object_get(k, "config"), json_object_get(k, "sources"));
        print_identity(scope, json_object_get(k, "identity"));
    }
}

int cmd_config_show(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL, *id = NULL, *ids = NULL;
    size_t i;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    if ((rc = cli_config_load(&a.site, &cfg)) != CLI_EX_OK)
        return rc;
    /* First: rest.user then shows the token's user.  A site with
     * `clusters:` is not itself a cluster: its identity is its default
     * (first) cluster's, and each cluster shows its own (the clusters are
     * cfg's, which this command owns). */
    if (sluice_config_cluster_name(cfg) == NULL) {
        ids = json_array();
        for (i = 0; ids && i < sluice_config_cluster_count(cfg); i++)
            json_array_append_new(
                ids, identity_json((sluice_config_t *)(uintptr_t)sluice_config_cluster_at(cfg, i)));
        id = json_incref(json_array_get(ids, 0));
    } else {
        id = identity_json(cfg);
    }
    if (sluice_config_to_json(cfg, &j, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    json_object_set_new(j, "identity", id);
    id = NULL;
    for (i = 0; i < json_array_size(ids); i++)
        json_object_set(json_array_get(json_object_get(j, "clusters"), i), "identity",
                        json_array_get(ids, i));
    if (a.json) {
        if (cli_print_json(j, 1) != 0)
            rc = CLI_EX_SOFTWARE;
    } else {
        json_t *w = json_object_get(j, "warnings");
        print_tree("", "", json_object_get(j, "config"), json_object_get(j, "sources"));
        print_clusters(json_object_get(j, "clusters"));
        print_identity("", json_object_get(j, "identity"));
        for (i = 0; i < json_array_size(w); i++)
            fprintf(stderr, "sluice: warning: %s\n", json_string_value(json_array_get(w, i)));
    }
out:
    json_decref(ids);
    json_decref(id);
    json_decref(j);
    sluice_config_free(cfg);
    return rc;
}
