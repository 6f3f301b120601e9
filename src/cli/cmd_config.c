/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_config.c - `sluice config show`: print the effective site configuration
 * (defaults < file < environment < --set) with the source of each value,
 * each cluster's own values when the site has `clusters:`, and the Slurm
 * identity it gives (rest.user, or the token's own user).  `sluice config
 * reference`: the reference of the site keys (markdown or JSON Schema),
 * made by the site layer from its field table (site/config_ref.h).
 * `sluice config init`: a commented starting site file from the same table,
 * to stdout or a new --out FILE (mode 0640).
 *
 * Notes:
 * - The site file is --config FILE, else $SLUICE_CONFIG, else none.
 * - Exit codes: 0 ok, 64 usage, 66 the site file does not exist, 78
 *   configuration error, 74 unreadable file.
 * - Output never contains secret material (the model only holds paths).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "args.h"
#include "base/jdec.h"
#include "cli.h"
#include "prepare.h"
#include "print.h"
#include "site/config_ref.h"

/* One line: the value's path (after the cluster's `scope`, "clusters[i]."
 * when there is one), the value, and the source `sources` gives its path.
 * An unset value whose meaning `effs` gives prints that meaning instead
 * ("nvidia (default)"). */
static void print_value(const char *scope,
                        const jdec_cur_t *v,
                        const jdec_cur_t *sources,
                        const jdec_cur_t *effs)
{
    const char *s = jdec_peek_string_or(sources, v->path, "derived");
    const char *str = jdec_peek_string(v, NULL);
    const char *eff = jdec_peek_string(effs, v->path);
    char shown[300], *text = NULL;

    snprintf(shown, sizeof(shown), "%s%s", scope, v->path);
    if (eff != NULL) {
        printf("%-48s %-24s (%s)\n", shown, eff, s);
    } else if (str != NULL) {
        printf("%-48s %-24s (%s)\n", shown, str, s);
    } else {
        text = json_dumps(jdec_value(v, NULL),
                          JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
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

/* `scope` is "" for the site, "clusters[i]." for a cluster; the paths
 * are the cursors' ("a.b"), relative to the scope's config. */
static void print_tree(const char *scope,
                       const jdec_cur_t *obj,
                       const jdec_cur_t *sources,
                       const jdec_cur_t *effs)
{
    const char *key;
    jdec_cur_t v;
    void *it;

    JDEC_FOREACH_MEMBER(obj, it, key, v)
    {
        if (json_is_object(jdec_value(&v, NULL)) && jdec_value(sources, v.path) == NULL)
            print_tree(scope, &v, sources, effs);
        else
            print_value(scope, &v, sources, effs);
    }
}

/* The identity line (`scope` as for print_tree()). */
static void print_identity(const char *scope, const jdec_cur_t *who)
{
    char shown[64];
    const char *user = jdec_peek_string(who, "user");

    snprintf(shown, sizeof(shown), "%sidentity.user", scope);
    if (user != NULL)
        printf("%-48s %-24s (%s)\n", shown, user, jdec_peek_string_or(who, "source", "(null)"));
    else if (json_is_object(jdec_value(who, NULL)))
        printf("%-48s %-24s (%s)\n", shown, "-", jdec_peek_string_or(who, "error", "(null)"));
}

/* The config tree of a scope (the site, or a cluster): `config` is read
 * from a root of its own, whose paths are the keys of `sources`. */
static void print_config(const char *scope, const jdec_cur_t *at)
{
    jdec_cur_t config, sources, effs;

    jdec_root(&config, at->d, jdec_value(at, "config"), "");
    jdec_root(&sources, at->d, jdec_value(at, "sources"), "");
    jdec_root(&effs, at->d, jdec_value(at, "effective"), "");
    print_tree(scope, &config, &sources, &effs);
}

/* A site with `clusters:`: each one's name and per-cluster values. */
static void print_clusters(const jdec_cur_t *clusters)
{
    jdec_cur_t k, who;
    size_t i;
    char scope[48], name[64];

    JDEC_FOREACH(clusters, i, k)
    {
        snprintf(scope, sizeof(scope), "clusters[%zu].", i);
        snprintf(name, sizeof(name), "clusters[%zu].name", i);
        printf("%-48s %-24s (%s)\n", name, jdec_peek_string_or(&k, "name", "(null)"),
               i == 0 ? "file; the default cluster" : "file");
        print_config(scope, &k);
        jdec_member(&who, &k, "identity");
        print_identity(scope, &who);
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
        jdec_t d;
        jdec_cur_t site, part, w;

        jdec_peek_root(&d, &site, j);
        print_config("", &site);
        jdec_member(&part, &site, "clusters");
        print_clusters(&part);
        jdec_member(&part, &site, "identity");
        print_identity("", &part);
        jdec_member(&part, &site, "warnings");
        JDEC_FOREACH(&part, i, w)
        {
            fprintf(stderr, "sluice: warning: %s\n", jdec_peek_string_or(&w, NULL, "(null)"));
        }
    }
out:
    json_decref(ids);
    json_decref(id);
    json_decref(j);
    sluice_config_free(cfg);
    return rc;
}

static int reference_option(int id, const char *v, void *arg)
{
    cfg_ref_format_t *fmt = arg;

    if (id != CLI_O_FORMAT)
        return CLI_EX_SOFTWARE;
    /* the table allows markdown, json-schema and man only */
    *fmt = strcmp(v, "json-schema") == 0 ? CFG_REF_JSON_SCHEMA
           : strcmp(v, "man") == 0       ? CFG_REF_MAN
                                         : CFG_REF_MARKDOWN;
    return CLI_EX_OK;
}

int cmd_config_reference(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    cfg_ref_format_t fmt = CFG_REF_MARKDOWN;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *text = NULL;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, reference_option, &fmt, &rc))
        return rc;
    if (cfg_reference(fmt, &text, &err) != SLUICE_OK)
        return cli_fail(&err);
    rc = CLI_EX_OK;
    if (fputs(text, stdout) == EOF || fflush(stdout) != 0)
        rc = CLI_EX_SOFTWARE;
    free(text);
    return rc;
}

typedef struct {
    const char *path; /* --out FILE, or NULL: the standard output */
    bool force;
} init_opts_t;

static int init_option(int id, const char *v, void *arg)
{
    init_opts_t *io = arg;

    if (id == CLI_O_OUT)
        io->path = v;
    else if (id == CLI_O_FORCE)
        io->force = true;
    else
        return CLI_EX_SOFTWARE;
    return CLI_EX_OK;
}

/* `text` into `path`, mode 0640: created, or with `force` replaced (its
 * mode set again).  The exit code. */
static int write_new_file(const char *path, const char *text, bool force)
{
    size_t len = strlen(text), done = 0;
    ssize_t w;
    int fd, e;

    struct stat st;

    /* Never through a link, never into a FIFO or device (--force replaces
     * a regular file only). */
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (force ? 0 : O_EXCL),
              0640);
    if (fd < 0) {
        e = errno;
        fprintf(stderr, "sluice config init: %s: %s%s\n", path,
                e == ELOOP ? "is a symbolic link; refused" : strerror(e),
                e == EEXIST ? " (use --force to replace it)" : "");
        return e == EEXIST ? CLI_EX_CANTCREAT : CLI_EX_IOERR;
    }
    if (fstat(fd, &st) != 0)
        goto fail;
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        fprintf(stderr, "sluice config init: %s: not a regular file; refused\n", path);
        return CLI_EX_CANTCREAT;
    }
    if (ftruncate(fd, 0) != 0 || fchmod(fd, 0640) != 0)
        goto fail;
    while (done < len) {
        if ((w = write(fd, text + done, len - done)) < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    return CLI_EX_OK;
fail:
    e = errno;
    if (fd >= 0)
        close(fd);
    fprintf(stderr, "sluice config init: %s: %s\n", path, strerror(e));
    return CLI_EX_IOERR;
}

int cmd_config_init(const cli_spec_t *spec, int argc, char **argv)
{
    cli_args_t a;
    init_opts_t io = {NULL, false};
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *text = NULL;
    int rc;

    if (!cli_parse(spec, argc, argv, &a, init_option, &io, &rc))
        return rc;
    if (io.force && io.path == NULL)
        return cli_usage_error(spec, "--force needs --out FILE");
    if (cfg_init_text(&text, &err) != SLUICE_OK)
        return cli_fail(&err);
    if (io.path != NULL) {
        rc = write_new_file(io.path, text, io.force);
    } else {
        rc = CLI_EX_OK;
        if (fputs(text, stdout) == EOF || fflush(stdout) != 0)
            rc = CLI_EX_IOERR;
    }
    free(text);
    return rc;
}
