/* SPDX-License-Identifier: Apache-2.0 */
/* test_study.c - the study runtime file beyond test_config.c (issue 13):
 * read-only secret mounts (NVFlare's secret_mounts) and the study source
 * that `sluice serve` re-reads for every launch that names a study. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <sluice/config.h>

#include "cmd_case.h"
#include "scratch.h"
#include "site/config_model.h"

static char scratch[256];

static void setup(void)
{
    scratch_make(scratch, sizeof(scratch), "study");
}

static void teardown(void)
{
    scratch_remove(scratch);
}

TestSuite(study, .init = setup, .fini = teardown, .timeout = 30);

/* A site with sandbox `sandbox` and the storage root /srv/sluice
 * (/cluster/sluice on the cluster). */
static sluice_config_t *site(const char *sandbox)
{
    char text[512];
    sluice_config_opts_t o = SLUICE_CONFIG_OPTS_INIT;
    sluice_config_t *cfg = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    snprintf(text, sizeof(text),
             "rest: {url: \"https://r.example:6820\", user: u, jwt_file: /run/j}\n"
             "storage: {root: /srv/sluice, cluster_root: /cluster/sluice}\n"
             "job_launcher: {sandbox: %s}\n",
             sandbox);
    o.text = text;
    o.text_len = strlen(text);
    o.text_name = "site.yaml";
    cr_assert_eq(sluice_config_load(&o, &cfg, &err), SLUICE_OK, "%s", err.text);
    return cfg;
}

#define HEAD "format_version: 2\nstudies:\n  atlas:\n    secret_mounts:\n"

Test(study, secret_mounts_are_read)
{
    static const char yaml[] = HEAD "      db-cert:\n"
                                    "        source: /lustre/secrets/atlas/db\n"
                                    "        mount_path: /run/secrets/db\n"
                                    "        mode: ro\n"
                                    "      hf: {source: /lustre/secrets/atlas/hf.token, "
                                    "mount_path: /run/secrets/hf.token}\n";
    sluice_config_t *cfg = site("apptainer");
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    const sluice_study_t *s;

    cr_assert_eq(sluice_study_runtime_load("study.yaml", yaml, strlen(yaml), cfg, &rt, &err),
                 SLUICE_OK, "%s", err.text);
    s = sluice_study_runtime_find(rt, "atlas");
    cr_assert_eq(s->n_secret_mounts, 2);
    cr_assert_str_eq(s->secret_mounts[0].name, "db-cert");
    cr_assert_str_eq(s->secret_mounts[0].source, "/lustre/secrets/atlas/db");
    cr_assert_str_eq(s->secret_mounts[0].target, "/run/secrets/db");
    cr_assert_str_eq(s->secret_mounts[1].target, "/run/secrets/hf.token");
    sluice_study_runtime_free(rt);
    sluice_config_free(cfg);
}

Test(study, bad_secret_mounts_are_named)
{
    static const struct {
        const char *yaml, *text;
    } cases[] = {
        {HEAD "      db: {source: /s/db, mount_path: /run/db, mode: rw}\n",
         "study.yaml:5:54: studies.atlas.secret_mounts.db.mode: expected ro (secret mounts are "
         "always read-only)"},
        {HEAD "      db: {source: /s/db, mount_path: /run/db, items: {a: b}}\n",
         "study.yaml:5:48: studies.atlas.secret_mounts.db.items: Kubernetes-only; point source at "
         "a directory that holds only the intended files"},
        {HEAD "      db: {source: s/db, mount_path: /run/db}\n",
         "study.yaml:5:20: studies.atlas.secret_mounts.db.source: expected an absolute path"},
        {HEAD "      db: {source: /s/../db, mount_path: /run/db}\n",
         "study.yaml:5:20: studies.atlas.secret_mounts.db.source: expected a normalised absolute "
         "path (no '.', '..', '//', trailing '/', ':' or ',')"},
        {HEAD "      db: {source: /s/db, mount_path: /run/a:b}\n",
         "study.yaml:5:39: studies.atlas.secret_mounts.db.mount_path: expected a normalised "
         "absolute path (no '.', '..', '//', trailing '/', ':' or ',')"},
        {HEAD "      db: {source: /s/db, mount_path: /proc/x}\n",
         "study.yaml:5:11: studies.atlas.secret_mounts.db: mount_path /proc/x is not allowed (/, "
         "/proc, /sys, /dev)"},
        {HEAD "      db: {source: /s/db}\n",
         "study.yaml:5:11: studies.atlas.secret_mounts.db: mount_path is required"},
        {HEAD "      db: {mount_path: /run/db}\n",
         "study.yaml:5:11: studies.atlas.secret_mounts.db: source is required"},
        {HEAD "      db: {source: /s/db, mount_path: /run/db, target: /x}\n",
         "study.yaml:5:48: studies.atlas.secret_mounts.db.target: unknown key (expected source, "
         "mount_path, mode)"},
        {HEAD "      ../db: {source: /s/db, mount_path: /run/db}\n",
         "study.yaml:5:7: studies.atlas.secret_mounts.../db: secret mount names use "
         "[A-Za-z0-9._-]"},
        {HEAD "      - /s/db\n",
         "study.yaml:5:7: studies.atlas.secret_mounts: expected a mapping of name to {source, "
         "mount_path}"},
        /* The storage root holds every launch's staging (and secrets). */
        {HEAD "      db: {source: /srv/sluice/site-1, mount_path: /run/db}\n",
         "study.yaml:5:11: studies.atlas.secret_mounts.db: source /srv/sluice/site-1 overlaps "
         "storage.root /srv/sluice; refused"},
        {HEAD "      db: {source: /cluster, mount_path: /run/db}\n",
         "study.yaml:5:11: studies.atlas.secret_mounts.db: source /cluster overlaps "
         "storage.cluster_root /cluster/sluice; refused"},
    };
    sluice_config_t *cfg = site("apptainer");
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sluice_study_runtime_t *rt = NULL;
        sluice_error_t err = SLUICE_ERROR_INIT;

        cr_expect_eq(sluice_study_runtime_load("study.yaml", cases[i].yaml, strlen(cases[i].yaml),
                                               cfg, &rt, &err),
                     SLUICE_ECONFIG, "case %zu", i);
        cr_expect_str_eq(err.text, cases[i].text, "case %zu: %s", i, err.text);
        cr_expect_null(rt);
        sluice_study_runtime_free(rt);
    }
    sluice_config_free(cfg);
}

/* Bare mode has no mount namespace: secret mounts are refused where the
 * effective sandbox is none (the site's, or the study's own). */
Test(study, secret_mounts_need_a_mount_namespace)
{
    static const char yaml[] = HEAD "      db: {source: /s/db, mount_path: /run/db}\n";
    static const char own[] =
        "format_version: 2\nstudies:\n  atlas:\n    slurm: {sandbox: none}\n"
        "    secret_mounts:\n      db: {source: /s/db, mount_path: /run/db}\n";
    sluice_config_t *bare = site("none"), *app = site("apptainer");
    sluice_study_runtime_t *rt = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(sluice_study_runtime_load("study.yaml", yaml, strlen(yaml), bare, &rt, &err),
                 SLUICE_ECONFIG);
    cr_expect_str_eq(err.text, "study.yaml:5:7: studies.atlas: secret_mounts are not allowed when "
                               "the effective sandbox is none (no mount namespace)");
    cr_assert_eq(sluice_study_runtime_load("study.yaml", own, strlen(own), app, &rt, &err),
                 SLUICE_ECONFIG);
    cr_expect(strstr(err.text, "secret_mounts are not allowed"), "%s", err.text);
    sluice_config_free(bare);
    sluice_config_free(app);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* The source re-reads the file for every get: a rewrite (even of the same
 * size, at once) is the next version; an atomic rename too; a reader's
 * version outlives the replacement. */
Test(study, the_source_follows_the_file)
{
    sluice_config_t *cfg = site("apptainer");
    sluice_study_source_t *src = NULL;
    const sluice_study_runtime_t *v1 = NULL, *v2 = NULL, *v3 = NULL, *again = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[300], tmp[300];

    snprintf(path, sizeof(path), "%s/study_runtime.yaml", scratch);
    snprintf(tmp, sizeof(tmp), "%s/study_runtime.yaml.new", scratch);
    write_text(path, "format_version: 2\nstudies:\n  a: {env: {X: '1'}}\n");
    cr_assert_eq(sluice_study_source_open(&src, path, cfg, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_study_source_get(src, &v1, &err), SLUICE_OK, "%s", err.text);
    cr_assert_eq(sluice_study_source_get(src, &again, &err), SLUICE_OK);
    cr_expect_eq(again, v1, "an unchanged file is the same version");
    sluice_study_source_release(src, again);

    write_text(path, "format_version: 2\nstudies:\n  a: {env: {X: '2'}}\n");
    cr_assert_eq(sluice_study_source_get(src, &v2, &err), SLUICE_OK, "%s", err.text);
    cr_expect_neq(v2, v1);
    cr_expect_str_eq(sluice_study_runtime_find(v2, "a")->env_values[0], "2");
    cr_expect_str_eq(sluice_study_runtime_find(v1, "a")->env_values[0], "1");

    write_text(tmp, "format_version: 2\nstudies:\n  b: {}\n");
    cr_assert_eq(rename(tmp, path), 0);
    cr_assert_eq(sluice_study_source_get(src, &v3, &err), SLUICE_OK, "%s", err.text);
    cr_expect_null(sluice_study_runtime_find(v3, "a"));
    cr_expect_not_null(sluice_study_runtime_find(v3, "b"));
    sluice_study_source_release(src, v1);
    sluice_study_source_release(src, v2);
    sluice_study_source_release(src, v3);

    /* An unusable file at open is an error there. */
    write_text(path, "format_version: 2\nstudies:\n  a: {colour: red}\n");
    sluice_study_source_close(src);
    src = NULL;
    cr_assert_eq(sluice_study_source_open(&src, path, cfg, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, path) && strstr(err.text, "studies.a.colour: unknown key"), "%s",
              err.text);
    cr_expect_null(src);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(sluice_study_source_open(&src, path, cfg, &err), SLUICE_ECONFIG);
    cr_expect(strstr(err.text, path) && strstr(err.text, "cannot open"), "%s", err.text);
    sluice_config_free(cfg);
}

/* ---- the CLI: an unknown study is bad input (exit 65), named ------------- */

static void cli_setup(void)
{
    cmd_case_setup("study");
}

TestSuite(study_cli, .init = cli_setup, .fini = cmd_case_teardown, .timeout = 60);

Test(study_cli, render_refuses_an_unknown_study_with_exit_65)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[600], req[1024];

    cr_assert_not_null(src);
    snprintf(path, sizeof(path), "%s/study.yaml", cmd_dir);
    write_text(path, "format_version: 2\nstudies:\n  atlas: {env: {ATLAS_MARK: from-the-study}}\n");
    for (int known = 0; known < 2; known++) {
        snprintf(req, sizeof(req),
                 "{\"launch_id\": \"cli-study\", \"site\": \"site-1\", \"study\": \"%s\", "
                 "\"profile\": \"none\", \"command\": \"/bin/true\", \"partition\": \"cpu\", "
                 "\"pools\": [{\"name\": \"main\"}]}",
                 known ? "atlas" : "atlsa");
        snprintf(path, sizeof(path), "%s/request.json", cmd_dir);
        write_text(path, req);
        if (!known) {
            cr_expect_eq(cmd_sluice("render '%s/request.json' --config "
                                    "'%s/tests/golden/render/flower-subprocess/site.yaml' "
                                    "--study-runtime '%s/study.yaml'",
                                    cmd_dir, src, cmd_dir),
                         65, "%s", cmd_output());
            cr_expect_not_null(strstr(cmd_output(), "sluice: study: unknown study \"atlsa\" (not "
                                                    "in the study runtime file); refused"),
                               "%s", cmd_output());
        } else {
            cr_expect_eq(cmd_sluice("render '%s/request.json' --config "
                                    "'%s/tests/golden/render/flower-subprocess/site.yaml' "
                                    "--study-runtime '%s/study.yaml'",
                                    cmd_dir, src, cmd_dir),
                         0, "%s", cmd_output());
            cr_expect_not_null(strstr(cmd_output(), "ATLAS_MARK 'from-the-study'"), "%s",
                               cmd_output());
        }
    }
}
