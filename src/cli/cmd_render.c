/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_render.c - `sluice render REQUEST.json`: print the batch script and
 * the REST submit body a launch would get, without writing anything.
 *
 * Notes:
 * - Exit codes: 0 ok, 64 usage, 65 bad request, 66 missing file, 74
 *   unreadable file, 78 bad site configuration or study runtime.
 * - Secrets in the request are never printed (the render has names only).
 * - forward_env values are read from this process's environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "args.h"
#include "cli.h"
#include "prepare.h"
#include "site/config_model.h"
#include "print.h"
#include "slurm/slurmrest.h"

static int render_option(int id, const char *v, void *arg)
{
    const char **api = arg;

    if (id != CLI_O_API_VERSION)
        return CLI_EX_SOFTWARE;
    *api = v;
    return CLI_EX_OK;
}

int cmd_render(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    cli_prepared_t p;
    const char *api = NULL; /* --api-version; else the site's rest.api_version */
    sluice_rest_version v;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *body = NULL, *j = NULL;
    char *text = NULL;
    int rc = CLI_EX_OK;

    memset(&p, 0, sizeof(p));
    if (!cli_parse(spec, argc, argv, &a, render_option, &api, &rc))
        return rc;
    a.site.request_path = a.operands[0];
    a.site.command = "render";
    if (api != NULL && sluice_rest_version_parse(api, &v, &err) != SLUICE_OK)
        return cli_usage_error(spec, "--api-version: %s", err.text);
    if ((rc = cli_prepare(&a.site, &p)) != CLI_EX_OK)
        return rc;
    if (api == NULL) {
        /* The version the site speaks.  "auto" is chosen from what the
         * server offers, which a render does not ask: the oldest version
         * every supported release still serves, and the header says so. */
        const char *site_api = p.cfg->rest.api_version;
        api = site_api != NULL && strcmp(site_api, "auto") != 0 ? site_api : "v0.0.38";
        if (sluice_rest_version_parse(api, &v, &err) != SLUICE_OK) {
            rc = cli_fail(&err);
            goto out;
        }
        if (site_api == NULL || strcmp(site_api, "auto") == 0)
            fprintf(stderr,
                    "sluice render: rest.api_version is auto (chosen from what the "
                    "server offers); showing the %s body: --api-version picks another\n",
                    api);
    }
    if (sluice_rest_submit_body(v, p.render->jobs, p.render->n_jobs, &body, &err) != SLUICE_OK) {
        rc = CLI_EX_DATAERR;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    if (a.json) {
        j = sluice_render_to_json(p.render);
        if (!j || json_object_set(j, "body", body) != 0 ||
            json_object_set_new(j, "api_version", json_string(sluice_rest_version_name(v))) != 0 ||
            cli_print_json(j, 1) != 0) {
            rc = CLI_EX_SOFTWARE;
            goto out;
        }
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
