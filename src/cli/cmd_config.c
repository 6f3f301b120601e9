/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_config.c - `sluice config show`: print the effective site configuration
 * (defaults < file < environment < --set) with the source of each value.
 *
 * Notes:
 * - The site file is --config FILE, else $SLUICE_CONFIG, else none.
 * - Exit codes: 0 ok, 64 usage, 66 the site file does not exist, 78
 *   configuration error, 74 unreadable file.
 * - Output never contains secret material (the model only holds paths).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "cli.h"
#include "prepare.h"
#include "print.h"

static void print_value(const char *path, json_t *v, json_t *sources)
{
    json_t *src = json_object_get(sources, path);
    const char *s = json_is_string(src) ? json_string_value(src) : "derived";
    char *text = NULL;

    if (json_is_string(v))
        printf("%-48s %-24s (%s)\n", path, json_string_value(v), s);
    else {
        text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
        printf("%-48s %-24s (%s)\n", path, text ? text : "?", s);
        free(text);
    }
}

static void print_tree(const char *prefix, json_t *obj, json_t *sources)
{
    const char *key;
    json_t *v;
    char path[256];

    json_object_foreach(obj, key, v)
    {
        if (prefix[0])
            snprintf(path, sizeof(path), "%s.%s", prefix, key);
        else
            snprintf(path, sizeof(path), "%s", key);
        if (json_is_object(v) && !json_object_get(sources, path))
            print_tree(path, v, sources);
        else
            print_value(path, v, sources);
    }
}

int cmd_config_show(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    size_t i;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, NULL, NULL, &rc))
        return rc;
    if ((rc = cli_config_load(&a.site, &cfg)) != CLI_EX_OK)
        return rc;
    if (sluice_config_to_json(cfg, &j, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if (a.json) {
        if (cli_print_json(j, 1) != 0)
            rc = CLI_EX_SOFTWARE;
    } else {
        json_t *w = json_object_get(j, "warnings");
        print_tree("", json_object_get(j, "config"), json_object_get(j, "sources"));
        for (i = 0; i < json_array_size(w); i++)
            fprintf(stderr, "sluice: warning: %s\n", json_string_value(json_array_get(w, i)));
    }
out:
    json_decref(j);
    sluice_config_free(cfg);
    return rc;
}
