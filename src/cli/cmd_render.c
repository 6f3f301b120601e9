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

extern char **environ;

#define MAX_SETS 128

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

static const char *env_get(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *d = NULL, *nd;
    size_t cap = 0, n = 0, r;

    if (!f)
        return NULL;
    for (;;) {
        if (n + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > 2u * 1024u * 1024u || (nd = realloc(d, cap)) == NULL) {
                free(d);
                fclose(f);
                return NULL;
            }
            d = nd;
        }
        r = fread(d + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    d[n] = '\0';
    *len = n;
    return d;
}

int cmd_render(int argc, char **argv)
{
    const char *sets[MAX_SETS];
    const char *req_path = NULL, *study_path = NULL, *api = "v0.0.38", *format = "text";
    sluice_config_opts_t opts;
    sluice_config_t *cfg = NULL;
    sluice_study_runtime_t *rt = NULL;
    const sluice_study_t *study = NULL;
    sluice_launch_policy_t pol;
    sluice_launch_t *l = NULL;
    sluice_render_t *r = NULL;
    sluice_render_ctx_t ctx;
    sluice_rest_version v;
    sluice_error_t err = SLUICE_ERROR_INIT;
    json_t *body = NULL, *j = NULL;
    char *data = NULL, *text = NULL;
    size_t len = 0, n_sets = 0;
    int rc = CLI_EX_OK, a;

    memset(&opts, 0, sizeof(opts));
    memset(&pol, 0, sizeof(pol));
    memset(&ctx, 0, sizeof(ctx));
    for (a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return CLI_EX_OK;
        } else if (strcmp(arg, "--config") == 0 && a + 1 < argc) {
            opts.path = argv[++a];
        } else if (strcmp(arg, "--set") == 0 && a + 1 < argc) {
            if (n_sets == MAX_SETS) {
                fprintf(stderr, "sluice render: too many --set options\n");
                return CLI_EX_USAGE;
            }
            sets[n_sets++] = argv[++a];
        } else if (strcmp(arg, "--study-runtime") == 0 && a + 1 < argc) {
            study_path = argv[++a];
        } else if (strcmp(arg, "--api-version") == 0 && a + 1 < argc) {
            api = argv[++a];
        } else if ((strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) && a + 1 < argc) {
            format = argv[++a];
        } else if (arg[0] != '-' && !req_path) {
            req_path = arg;
        } else {
            fprintf(stderr, "sluice render: unexpected argument '%s'\n", arg);
            usage(stderr);
            return CLI_EX_USAGE;
        }
    }
    if (!req_path) {
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
    if (!opts.path) {
        const char *env = getenv("SLUICE_CONFIG");
        if (env && env[0])
            opts.path = env;
    }
    opts.envp = (const char *const *)environ;
    opts.overrides = sets;
    opts.n_overrides = n_sets;
    if (sluice_config_load(&opts, &cfg, &err) != SLUICE_OK) {
        rc = cli_fail(&err);
        goto out;
    }
    if ((data = read_all(req_path, &len)) == NULL) {
        fprintf(stderr, "sluice render: cannot read %s\n", req_path);
        rc = CLI_EX_IOERR;
        goto out;
    }
    if (study_path && sluice_study_runtime_load(study_path, NULL, 0, cfg, &rt, &err) != SLUICE_OK) {
        rc = CLI_EX_CONFIG;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    /* The study is named by the request; peek at it before the full parse. */
    if (rt) {
        json_t *peek = json_loadb(data, len, 0, NULL);
        const char *name = json_string_value(json_object_get(peek, "study"));
        study = name ? sluice_study_runtime_find(rt, name) : NULL;
        json_decref(peek);
    }
    if (sluice_config_launch_policy(cfg, study, &pol, &err) != SLUICE_OK) {
        rc = CLI_EX_CONFIG;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    if (sluice_launch_parse(&l, data, len, &pol, 0, &err) != SLUICE_OK) {
        rc = CLI_EX_DATAERR;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    ctx.attempt = 1;
    ctx.getenv_fn = env_get;
    if (sluice_render(cfg, study, l, &ctx, &r, &err) != SLUICE_OK) {
        rc = err.code == SLUICE_ECONFIG ? CLI_EX_CONFIG : CLI_EX_DATAERR;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    if (sluice_rest_submit_body(v, r->jobs, r->n_jobs, &body, &err) != SLUICE_OK) {
        rc = CLI_EX_DATAERR;
        fprintf(stderr, "sluice: %s\n", err.text);
        goto out;
    }
    if (strcmp(format, "json") == 0) {
        j = sluice_render_to_json(r);
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
        printf("# ---- batch script (%s) ----\n%s", r->staging_cluster, r->script);
        printf("# ---- REST submit body (%s) ----\n%s\n", sluice_rest_version_name(v), text);
    }
out:
    free(text);
    json_decref(j);
    json_decref(body);
    sluice_render_free(r);
    sluice_launch_free(l);
    sluice_config_launch_policy_clear(&pol);
    sluice_study_runtime_free(rt);
    sluice_config_free(cfg);
    free(data);
    return rc;
}
