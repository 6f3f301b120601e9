/* SPDX-License-Identifier: Apache-2.0 */
/* prepare.c - configuration, request and render for the commands that
 * start from a launch request (`sluice render`, `sluice launch`), and the
 * Slurm identity a configuration gives (`config show`, `check`).
 *
 * Notes:
 * - Configuration precedence is the config module's: --set > environment
 *   (FORGE_SLURM_*, SLUICE_*) > file > defaults.
 * - The request is read whole (at most 2 MiB) and wiped once judged; the
 *   pipeline (policy, strict parse, render) is the library's
 *   sluice_accept_prepare(), and the render is made once here and never
 *   again for this launch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/client.h>

#include "base/wipe.h"
#include "cli.h"
#include "prepare.h"
#include "site/config_model.h"

extern char **environ;

const char *cli_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

void cli_config_opts(sluice_config_opts_t *opts,
                     const char *path,
                     const char *const *sets,
                     size_t n_sets)
{
    const char *env = getenv("SLUICE_CONFIG");

    opts->path = path ? path : (env && env[0] ? env : NULL);
    opts->envp = (const char *const *)environ;
    opts->overrides = sets;
    opts->n_overrides = n_sets;
}

sluice_err cli_identity(
    sluice_config_t *cfg, char *user, size_t ucap, char *source, size_t scap, sluice_error_t *err)
{
    const char *claim = NULL;
    sluice_err rc;

    user[0] = source[0] = '\0';
    if (sluice_config_source(cfg, "rest.user") == SLUICE_SRC_TOKEN)
        return sluice_errorf(err, SLUICE_EINVAL, "identity: already resolved");
    if ((rc = sluice_client_resolve_user(cfg, &claim, err)) != SLUICE_OK)
        return rc;
    snprintf(user, ucap, "%s", cfg->rest.user);
    if (claim != NULL)
        snprintf(source, scap, "the `%s` claim of the token of %s", claim,
                 cfg->rest.jwt_file != NULL    ? "rest.jwt_file"
                 : cfg->rest.jwt_command.n > 0 ? "rest.jwt_command"
                                               : "$SLURM_JWT");
    else
        snprintf(source, scap, "rest.user (%s)",
                 sluice_config_source_name(sluice_config_source(cfg, "rest.user")));
    return SLUICE_OK;
}

void cli_config_no_file(const sluice_config_opts_t *opts, sluice_error_t *err)
{
    /* The site layer names a configuration without a file "<config>" and
     * checks rest.url first: missing, nothing was configured at all (one
     * set from the environment or --set is a configuration without a file,
     * whose own missing keys are the message). */
    static const char nourl[] = "<config>: rest.url: required";

    if (opts->path != NULL || opts->text != NULL || err->code != SLUICE_ECONFIG ||
        strncmp(err->text, nourl, sizeof(nourl) - 1) != 0)
        return;
    sluice_errorf(err, SLUICE_ECONFIG,
                  "no site file given: pass --config FILE or set SLUICE_CONFIG=FILE");
}

void cli_config_errors(const sluice_errlist_t *errs)
{
    size_t i;

    /* items[0] is the first error, which err's text already said */
    for (i = 1; i < errs->n; i++)
        fprintf(stderr, "sluice: %s\n", errs->items[i].reason);
    if (errs->dropped > 0)
        fprintf(stderr, "sluice: %zu more errors not shown (the first %d are)\n", errs->dropped,
                SLUICE_ERRLIST_MAX);
}

int cli_config_load(const cli_prepare_opts_t *o, sluice_config_t **cfg)
{
    sluice_config_opts_t opts = SLUICE_CONFIG_OPTS_INIT;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_errlist_t errs = SLUICE_ERRLIST_INIT;
    int rc;

    *cfg = NULL;
    opts.errors = &errs;
    cli_config_opts(&opts, o->config_path, o->sets, o->n_sets);
    if (opts.path != NULL && access(opts.path, F_OK) != 0) {
        int e = errno;
        fprintf(stderr, "sluice: site file %s: %s\n", opts.path, strerror(e));
        return e == EACCES ? CLI_EX_NOPERM : CLI_EX_NOINPUT;
    }
    if (sluice_config_load(&opts, cfg, &err) != SLUICE_OK) {
        cli_config_no_file(&opts, &err);
        rc = cli_fail(&err);
        cli_config_errors(&errs);
        sluice_errlist_clear(&errs);
        return rc;
    }
    sluice_errlist_clear(&errs);
    cli_log_site(*cfg);
    return CLI_EX_OK;
}

sluice_err cli_resolve_users(sluice_config_t *cfg, sluice_error_t *err)
{
    sluice_config_t *c;
    sluice_err rc = SLUICE_OK;

    for (size_t i = 0; rc == SLUICE_OK && (c = sluice_config_cluster_at_mut(cfg, i)) != NULL; i++)
        rc = sluice_client_resolve_user(c, NULL, err);
    return rc;
}

int cli_read_fail(const char *what, const char *path)
{
    int e = errno;

    fprintf(stderr, "sluice: cannot read %s %s: %s\n", what, path,
            e == EFBIG ? "larger than 2 MiB" : strerror(e));
    switch (e) {
    case ENOENT:
    case ENOTDIR:
        return CLI_EX_NOINPUT;
    case EACCES:
        return CLI_EX_NOPERM;
    case EFBIG:
        return CLI_EX_DATAERR;
    default:
        return CLI_EX_IOERR;
    }
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    char *d = NULL, *nd;
    size_t cap = 0, n = 0, r;

    if (!f)
        return NULL;
    for (;;) {
        if (n + 4096 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > 2u * 1024u * 1024u || (nd = realloc(d, cap)) == NULL) {
                free(d);
                d = NULL;
                errno = cap > 2u * 1024u * 1024u ? EFBIG : ENOMEM;
                break;
            }
            d = nd;
        }
        r = fread(d + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    if (f != stdin) {
        int e = errno;
        fclose(f);
        errno = e;
    }
    if (d) {
        d[n] = '\0';
        *len = n;
    }
    return d;
}

/* Every field error of the request, one line each naming its path; the
 * error struct alone when the list is empty (an error of the request as a
 * whole, or of another stage). */
static void
print_field_errors(const char *path, const sluice_errlist_t *fields, const sluice_error_t *err)
{
    /* The library names the document "request"; a syntax error names the
     * file instead ("req.json: invalid JSON at line 3, column 5: ..."). */
    static const char syntax[] = "request: invalid JSON";
    size_t i;

    if (fields->n == 0 && strncmp(err->text, syntax, sizeof(syntax) - 1) == 0) {
        fprintf(stderr, "sluice: %s: %s\n", strcmp(path, "-") == 0 ? "(standard input)" : path,
                err->text + strlen("request: "));
        return;
    }
    if (fields->n == 0) {
        fprintf(stderr, "sluice: %s\n", err->text);
        return;
    }
    for (i = 0; i < fields->n; i++) {
        if (fields->items[i].path[0] != '\0')
            fprintf(stderr, "sluice: %s: %s\n", fields->items[i].path, fields->items[i].reason);
        else
            fprintf(stderr, "sluice: %s\n", fields->items[i].reason);
    }
    if (fields->dropped > 0)
        fprintf(stderr, "sluice: ... and %zu more errors\n", fields->dropped);
}

int cli_prepare(const cli_prepare_opts_t *o, cli_prepared_t *out)
{
    sluice_accept_opts_t ao = SLUICE_ACCEPT_OPTS_INIT;
    sluice_accept_stage stage = SLUICE_ACCEPT_STAGE_NONE;
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_errlist_t fields = SLUICE_ERRLIST_INIT; /* every field error of the request */
    char *data = NULL;
    size_t len = 0;
    int rc = CLI_EX_OK;

    memset(out, 0, sizeof(*out));
    if ((rc = cli_config_load(o, &out->cfg)) != CLI_EX_OK)
        goto out;
    if ((data = cli_read_file(o->request_path, &len)) == NULL) {
        rc = cli_read_fail("the request", o->request_path);
        goto out;
    }
    if (o->study_path && access(o->study_path, F_OK) != 0) {
        rc = cli_read_fail("the study runtime", o->study_path);
        goto out;
    }
    if (o->study_path &&
        sluice_study_runtime_load(o->study_path, NULL, 0, out->cfg, &out->rt, &err) != SLUICE_OK) {
        fprintf(stderr, "sluice: %s\n", err.text);
        rc = CLI_EX_CONFIG;
        goto out;
    }
    ao.rt = out->rt;
    ao.getenv_fn = cli_getenv;
    ao.caller = "cli";
    ao.read_secrets = o->read_secrets != 0;
    ao.errors = &fields;
    ao.cluster = o->cluster;
    if (o->cluster != NULL && sluice_config_cluster_named(out->cfg, o->cluster) == NULL) {
        /* a usage error: the flag names no cluster of the site */
        fprintf(stderr, "sluice %s: --cluster: unknown cluster \"%s\" (known:",
                o->command ? o->command : "launch", o->cluster);
        for (size_t i = 0; i < sluice_config_cluster_count(out->cfg); i++)
            fprintf(stderr, "%s %s", i ? "," : "",
                    sluice_config_cluster_name(sluice_config_cluster_at(out->cfg, i)));
        fprintf(stderr, ")\n");
        rc = CLI_EX_USAGE;
        goto out;
    }
    if (sluice_accept_prepare(&out->accept, &stage, out->cfg, data, len, &ao, &err) != SLUICE_OK) {
        switch (stage) {
        case SLUICE_ACCEPT_STAGE_POLICY:
            fprintf(stderr, "sluice: %s\n", err.text);
            rc = CLI_EX_CONFIG;
            break;
        case SLUICE_ACCEPT_STAGE_RENDER:
            fprintf(stderr, "sluice: %s\n", err.text);
            rc = err.code == SLUICE_ECONFIG ? CLI_EX_CONFIG : CLI_EX_DATAERR;
            break;
        case SLUICE_ACCEPT_STAGE_SECRETS:
            rc = cli_fail(&err);
            break;
        default:
            print_field_errors(o->request_path, &fields, &err);
            rc = CLI_EX_DATAERR;
            break;
        }
        goto out;
    }
    out->render = sluice_accept_render(out->accept);
out:
    wipe_free(data, len); /* the request may hold secret values */
    sluice_errlist_clear(&fields);
    if (rc != CLI_EX_OK)
        cli_prepared_free(out);
    return rc;
}

void cli_prepared_free(cli_prepared_t *p)
{
    sluice_accept_free(p->accept);
    sluice_study_runtime_free(p->rt);
    sluice_config_free(p->cfg);
    memset(p, 0, sizeof(*p));
}
