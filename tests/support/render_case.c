/* SPDX-License-Identifier: Apache-2.0 */
/* render_case.c - see render_case.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "render_case.h"

char *render_case_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *d;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        (d = malloc((size_t)n + 1)) == NULL) {
        fclose(f);
        return NULL;
    }
    if (fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        fclose(f);
        return NULL;
    }
    fclose(f);
    d[n] = '\0';
    if (len)
        *len = (size_t)n;
    return d;
}

const char *render_case_getenv(const char *name, void *arg)
{
    (void)arg;
    if (strcmp(name, "CUDA_HOME") == 0)
        return "/usr/local/cuda-12.4";
    if (strcmp(name, "HF_TOKEN_SRC") == 0)
        return "hf_FromServiceEnvSecret";
    if (strcmp(name, "DB_PASSWORD") == 0)
        return "p@ss'w0rd$(touch /tmp/pwned)";
    return NULL;
}

static int accept_image(const char *path, void *arg)
{
    (void)path;
    (void)arg;
    return 0;
}

sluice_err render_case_run(const char *dir, render_case_t *out, sluice_error_t *err)
{
    char path[4096];
    char *req = NULL;
    size_t len = 0;
    sluice_config_opts_t opts = SLUICE_CONFIG_OPTS_INIT;
    sluice_launch_policy_t pol;
    sluice_render_ctx_t ctx;
    sluice_err rc;

    memset(out, 0, sizeof(*out));
    memset(&pol, 0, sizeof(pol));
    memset(&ctx, 0, sizeof(ctx));
    snprintf(path, sizeof(path), "%s/site.yaml", dir);
    opts.path = path;
    if ((rc = sluice_config_load(&opts, &out->cfg, err)) != SLUICE_OK)
        return rc;
    snprintf(path, sizeof(path), "%s/study_runtime.yaml", dir);
    if (access(path, R_OK) == 0 &&
        (rc = sluice_study_runtime_load(path, NULL, 0, out->cfg, &out->rt, err)) != SLUICE_OK)
        return rc;
    snprintf(path, sizeof(path), "%s/request.json", dir);
    if ((req = render_case_slurp(path, &len)) == NULL)
        return sluice_errorf(err, SLUICE_EIO, "%s: unreadable", path);
    if (out->rt) {
        json_t *j = json_loadb(req, len, 0, NULL);
        const char *name = json_string_value(json_object_get(j, "study"));
        out->study = name ? sluice_study_runtime_find(out->rt, name) : NULL;
        json_decref(j);
    }
    if ((rc = sluice_config_launch_policy(out->cfg, out->study, &pol, err)) == SLUICE_OK)
        rc = sluice_launch_parse(&out->launch, req, len, &pol, 0, err);
    sluice_config_launch_policy_clear(&pol);
    free(req);
    if (rc != SLUICE_OK)
        return rc;
    ctx.attempt = 1;
    ctx.getenv_fn = render_case_getenv;
    ctx.stat_fn = accept_image;
    return sluice_render(out->cfg, out->study, out->launch, &ctx, &out->render, err);
}

void render_case_clear(render_case_t *c)
{
    sluice_render_free(c->render);
    sluice_launch_free(c->launch);
    sluice_study_runtime_free(c->rt);
    sluice_config_free(c->cfg);
    memset(c, 0, sizeof(*c));
}
