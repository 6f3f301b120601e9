/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_config.c - `sluice config show`: print the effective site configuration
 * (defaults < file < environment < --set) with the source of each value, and
 * the Slurm identity it gives (rest.user, or the token's own user).
 *
 * Notes:
 * - The site file is --config FILE, else $SLUICE_CONFIG, else none.
 * - Exit codes: 0 ok, 64 usage, 78 configuration error, 74 unreadable file.
 * - Output never contains secret material (the model only holds paths).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "prepare.h"

#define MAX_SETS 128

static void usage(FILE *f)
{
    fprintf(f, "usage: sluice config show [--config FILE] [--set KEY=VALUE ...] [-o text|json]\n"
               "\n"
               "Print the effective site configuration and where each value came from\n"
               "(default, file, env:<VARIABLE>, flag).  Precedence: --set > environment\n"
               "(SLUICE_<SECTION>_<KEY>, FORGE_*) > site file > default.  The last line,\n"
               "identity.user, is the Slurm user sluice acts as: rest.user, else the\n"
               "token's own (its `sun` claim); the token is read, nothing is sent.\n"
               "\n"
               "options:\n"
               "  --config FILE      site YAML (default: $SLUICE_CONFIG; none if unset)\n"
               "  --set KEY=VALUE    override one dotted key, e.g. rest.url=https://h:6820\n"
               "  -o, --output FMT   text (default) or json\n"
               "  -h, --help         show this help\n");
}

static void print_value(const char *path, json_t *v, json_t *sources)
{
    json_t *src = json_object_get(sources, path);
    const char *s = json_is_string(src) ? json_string_value(src) : "derived";
    char *text = NULL;

    if (json_is_string(v))
        printf("%-48s %-24s (%s)\n", path, json_string_value(v), s);
    else {
        text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        printf("%-48s %-24s (%s)\n", path, text ? text : "?", s);
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

int cmd_config(int argc, char **argv)
{
    const char *sets[MAX_SETS];
    sluice_config_opts_t opts = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *j = NULL;
    json_t *id = NULL;
    const char *format = "text";
    size_t n_sets = 0, i;
    int rc = CLI_EX_OK;
    int a;

    if (argc < 2) {
        usage(stderr);
        return CLI_EX_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return CLI_EX_OK;
    }
    if (strcmp(argv[1], "show") != 0) {
        fprintf(stderr, "sluice config: unknown subcommand '%s'\n\n", argv[1]);
        usage(stderr);
        return CLI_EX_USAGE;
    }
    for (a = 2; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return CLI_EX_OK;
        } else if (strcmp(arg, "--config") == 0 && a + 1 < argc) {
            opts.path = argv[++a];
        } else if (strncmp(arg, "--config=", 9) == 0) {
            opts.path = arg + 9;
        } else if (strcmp(arg, "--set") == 0 && a + 1 < argc) {
            if (n_sets == MAX_SETS) {
                fprintf(stderr, "sluice config: too many --set options\n");
                return CLI_EX_USAGE;
            }
            sets[n_sets++] = argv[++a];
        } else if (strncmp(arg, "--set=", 6) == 0 && n_sets < MAX_SETS) {
            sets[n_sets++] = arg + 6;
        } else if ((strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) && a + 1 < argc) {
            format = argv[++a];
        } else if (strncmp(arg, "--output=", 9) == 0) {
            format = arg + 9;
        } else {
            fprintf(stderr, "sluice config show: unexpected argument '%s'\n", arg);
            usage(stderr);
            return CLI_EX_USAGE;
        }
    }
    if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
        fprintf(stderr, "sluice config show: -o expects text or json, not '%s'\n", format);
        return CLI_EX_USAGE;
    }
    cli_config_opts(&opts, opts.path, sets, n_sets);
    if (sluice_config_load(&opts, &cfg, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    id = identity_json(cfg); /* first: rest.user then shows the token's user */
    if (sluice_config_to_json(cfg, &j, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    json_object_set_new(j, "identity", id);
    id = NULL;
    if (strcmp(format, "json") == 0) {
        char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!text) {
            rc = CLI_EX_SOFTWARE;
            goto out;
        }
        printf("%s\n", text);
        free(text);
    } else {
        json_t *w = json_object_get(j, "warnings");
        json_t *who = json_object_get(j, "identity");
        print_tree("", json_object_get(j, "config"), json_object_get(j, "sources"));
        if (json_is_string(json_object_get(who, "user")))
            printf("%-48s %-24s (%s)\n", "identity.user",
                   json_string_value(json_object_get(who, "user")),
                   json_string_value(json_object_get(who, "source")));
        else
            printf("%-48s %-24s (%s)\n", "identity.user", "-",
                   json_string_value(json_object_get(who, "error")));
        for (i = 0; i < json_array_size(w); i++)
            fprintf(stderr, "sluice: warning: %s\n", json_string_value(json_array_get(w, i)));
    }
out:
    json_decref(id);
    json_decref(j);
    sluice_config_free(cfg);
    return rc;
}
