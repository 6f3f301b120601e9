/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_render.c - `sluice render REQUEST.json`: print the batch script and
 * the REST submit body a launch would get, without writing anything.
 *
 * Notes:
 * - Exit codes: 0 ok, 64 usage, 65 bad request, 74 unreadable file, 78 bad
 *   site configuration or study runtime.
 * - Secrets in the request are never printed (the render has names only).
 * - forward_env values are read from this process's environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "prepare.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sluice render REQUEST.json [--config FILE] [--set KEY=VALUE ...]\n"
            "                     [--study-runtime FILE] [--api-version v0.0.NN] [-o text|json]\n"
            "\n"
            "Render a launch request into its batch script and Slurm REST submit body and\n"
            "print them.  Nothing is written or submitted.\n"
            "\n"
            "options:\n"
            "  --config FILE         site YAML (default: $SLUICE_CONFIG)\n"
            "  --set KEY=VALUE       override one dotted site key\n"
            "  --study-runtime FILE  study runtime file (format_version 2)\n"
            "  --api-version V       REST version of the body (default v0.0.38)\n"
            "  -o, --output FMT      text (default) or json\n"
            "  -h, --help            show this help\n");
}

int cmd_render(int argc, char **argv)
{
    cli_prepare_opts_t po;
    cli_prepared_t p;
    const char *api = "v0.0.38", *format = "text";
    sluice_rest_version v;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *body = NULL, *j = NULL;
    char *text = NULL;
    int rc = CLI_EX_OK, a, k;

    memset(&po, 0, sizeof(po));
    memset(&p, 0, sizeof(p));
    for (a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return CLI_EX_OK;
        } else if ((k = cli_prepare_option(&po, argc, argv, &a)) != 0) {
            if (k < 0)
                return CLI_EX_USAGE;
        } else if (strcmp(arg, "--api-version") == 0 && a + 1 < argc) {
            api = argv[++a];
        } else if ((strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) && a + 1 < argc) {
            format = argv[++a];
        } else if ((arg[0] != '-' || strcmp(arg, "-") == 0) && !po.request_path) {
            po.request_path = arg;
        } else {
            fprintf(stderr, "sluice render: unexpected argument '%s'\n", arg);
            usage(stderr);
            return CLI_EX_USAGE;
        }
    }
    if (!po.request_path) {
        usage(stderr);
        return CLI_EX_USAGE;
    }
    if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
        fprintf(stderr, "sluice render: -o expects text or json, not '%s'\n", format);
        return CLI_EX_USAGE;
    }
    if (sluice_rest_version_parse(api, &v, &err) != SLUICE_OK) {
        fprintf(stderr, "sluice render: --api-version: %s\n", err.text);
        return CLI_EX_USAGE;
    }
    if ((rc = cli_prepare(&po, &p)) != CLI_EX_OK)
        return rc;
    if (sluice_rest_submit_body(v, p.render->jobs, p.render->n_jobs, &body, &err) != SLUICE_OK) {
        rc = CLI_EX_DATAERR;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    if (strcmp(format, "json") == 0) {
        j = sluice_render_to_json(p.render);
        if (!j || json_object_set(j, "body", body) != 0 ||
            json_object_set_new(j, "api_version", json_string(sluice_rest_version_name(v))) != 0 ||
            (text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS)) == NULL) {
            rc = CLI_EX_SOFTWARE;
            goto out;
        }
        printf("%s\n", text);
    } else {
        if ((text = json_dumps(body, JSON_INDENT(2) | JSON_SORT_KEYS)) == NULL) {
            rc = CLI_EX_SOFTWARE;
            goto out;
        }
        printf("# ---- batch script (%s) ----\n%s", p.render->staging_cluster, p.render->script);
        printf("# ---- REST submit body (%s) ----\n%s\n", sluice_rest_version_name(v), text);
    }
out:
    free(text);
    json_decref(j);
    json_decref(body);
    cli_prepared_free(&p);
    return rc;
}
