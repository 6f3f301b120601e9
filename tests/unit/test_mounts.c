/* SPDX-License-Identifier: Apache-2.0 */
/* test_mounts.c - the render's mount and image rules against a real file
 * system (issue 13): mount sources may not reach the storage root, written
 * or through a symbolic link; a request mount may not shadow a study
 * mount or the staging directory; study secret mounts bind read-only and
 * need a mount namespace; a job image needs BYOC authorisation
 * (policy.allowed_images, compared on canonical paths).
 *
 * Each test builds a case directory (site.yaml, request.json, maybe
 * study_runtime.yaml) in a scratch directory whose storage root, image
 * directories and symbolic links are real. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "base/marker.h"
#include "render_case.h"
#include "scratch.h"

static char scratch[256];

static void setup(void)
{
    scratch_make(scratch, sizeof(scratch), "mounts");
}

static void teardown(void)
{
    scratch_remove(scratch);
}

TestSuite(mounts, .init = setup, .fini = teardown, .timeout = 60);

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");

    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* scratch/<rel> as a directory (and its parents). */
static void mkdirs(const char *rel)
{
    char cmd[1024];

    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", scratch, rel);
    cr_assert_eq(system(cmd), 0);
}

static void symlink_in(const char *target_rel, const char *link_rel)
{
    char t[512], l[512];

    snprintf(t, sizeof(t), "%s/%s", scratch, target_rel);
    snprintf(l, sizeof(l), "%s/%s", scratch, link_rel);
    cr_assert_eq(symlink(t, l), 0, "%s -> %s", l, t);
}

/* The case directory: a site whose storage root is scratch/root (the
 * cluster sees it at scratch/croot), with `policy_extra` lines under
 * policy:, the request (with "@" replaced by the scratch path) and an
 * optional study file.  Renders it into *c. */
static sluice_err run(const char *policy_extra,
                      const char *request,
                      const char *study,
                      render_case_t *c,
                      sluice_error_t *err)
{
    char dir[512], path[640], site[4096], req[4096];
    size_t i, o = 0;

    snprintf(dir, sizeof(dir), "%s/case", scratch);
    mkdir(dir, 0700);
    snprintf(site, sizeof(site),
             "site: {name: site-1}\n"
             "rest: {url: \"https://slurmrestd.example:6820\", user: sluice, jwt_file: /run/j}\n"
             "storage:\n  root: %s/root\n  cluster_root: %s/croot\n"
             "job_launcher:\n  sandbox: apptainer\n  image: %s/site-images/worker.sif\n"
             "gpu_series:\n  a100: {constraint: a100}\n"
             "policy:\n  allowed_profiles: [apptainer, none]\n%s",
             scratch, scratch, scratch, policy_extra ? policy_extra : "");
    snprintf(path, sizeof(path), "%s/site.yaml", dir);
    write_file(path, site);
    for (i = 0; request[i] && o + 300 < sizeof(req); i++) {
        if (request[i] == '@')
            o += (size_t)snprintf(req + o, sizeof(req) - o, "%s", scratch);
        else
            req[o++] = request[i];
    }
    req[o] = '\0';
    snprintf(path, sizeof(path), "%s/request.json", dir);
    write_file(path, req);
    snprintf(path, sizeof(path), "%s/study_runtime.yaml", dir);
    unlink(path);
    if (study)
        write_file(path, study);
    return render_case_run(dir, c, err);
}

#define REQ_HEAD "{\"launch_id\": \"m1\", \"site\": \"site-1\", \"command\": \"/bin/true\", "
#define REQ_POOL "\"pools\": [{\"name\": \"main\"}]}"

/* ---- mount sources and the storage root ---------------------------------- */

Test(mounts, a_source_under_the_storage_root_is_refused)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char want[1024];

    mkdirs("root/site-1/0c5b6f2e/attempt-1");
    cr_assert_eq(run(NULL,
                     REQ_HEAD "\"mounts\": [{\"source\": \"@/root/site-1/0c5b6f2e/attempt-1\", "
                              "\"target\": \"/peek\"}], " REQ_POOL,
                     NULL, &c, &err),
                 SLUICE_EINVAL);
    snprintf(want, sizeof(want),
             "mounts[0]: source %s/root/site-1/0c5b6f2e/attempt-1 overlaps storage.root %s/root, "
             "where sluice keeps the staging of every launch; refused",
             scratch, scratch);
    cr_expect_str_eq(err.text, want);
    cr_expect_null(c.render);
    render_case_clear(&c);

    /* The cluster's name of the same directory, and a directory above the
     * root (which holds it), are refused too. */
    sluice_error_clear(&err);
    cr_assert_eq(
        run(NULL,
            REQ_HEAD
            "\"mounts\": [{\"source\": \"@/croot/site-1\", \"target\": \"/p\"}], " REQ_POOL,
            NULL, &c, &err),
        SLUICE_EINVAL);
    cr_expect(strstr(err.text, "overlaps storage.cluster_root"), "%s", err.text);
    render_case_clear(&c);
    sluice_error_clear(&err);
    cr_assert_eq(run(NULL,
                     REQ_HEAD "\"mounts\": [{\"source\": \"@\", \"target\": \"/p\"}], " REQ_POOL,
                     NULL, &c, &err),
                 SLUICE_EINVAL);
    cr_expect(strstr(err.text, "overlaps storage.root"), "%s", err.text);
    render_case_clear(&c);
}

Test(mounts, a_source_that_leads_into_the_storage_root_by_a_symlink_is_refused)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;

    mkdirs("root/site-1/0c5b6f2e/attempt-1");
    mkdirs("data");
    /* data/innocent -> root/site-1: as written, outside the root. */
    symlink_in("root/site-1", "data/innocent");
    cr_assert_eq(run(NULL,
                     REQ_HEAD "\"mounts\": [{\"source\": \"@/data/innocent/0c5b6f2e\", "
                              "\"target\": \"/p\"}], " REQ_POOL,
                     NULL, &c, &err),
                 SLUICE_EINVAL);
    cr_expect(strstr(err.text, "mounts[0]: source ") &&
                  strstr(err.text, "/data/innocent/0c5b6f2e") && strstr(err.text, "resolves to ") &&
                  strstr(err.text, "overlaps storage.root"),
              "%s", err.text);
    render_case_clear(&c);

    /* A real directory next to it is fine, and binds as written. */
    sluice_error_clear(&err);
    mkdirs("data/real");
    cr_assert_eq(run(NULL,
                     REQ_HEAD
                     "\"mounts\": [{\"source\": \"@/data/real\", \"target\": \"/p\"}], " REQ_POOL,
                     NULL, &c, &err),
                 SLUICE_OK, "%s", err.text);
    cr_expect_not_null(strstr(c.render->script, "/data/real:/p:ro'"), "%s", c.render->script);
    render_case_clear(&c);
}

/* A request's source that is a symlink binds what it resolved to when it
 * was checked (issue 27): the link re-pointed at the storage root after
 * accept is never followed by the job's bind. */
Test(mounts, a_symlinked_source_binds_the_path_it_was_checked_as)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char want[700];

    mkdirs("data/real");
    symlink_in("data/real", "data/link");
    cr_assert_eq(run(NULL,
                     REQ_HEAD
                     "\"mounts\": [{\"source\": \"@/data/link\", \"target\": \"/p\"}], " REQ_POOL,
                     NULL, &c, &err),
                 SLUICE_OK, "%s", err.text);
    snprintf(want, sizeof(want), "%s/data/real:/p:ro'", scratch);
    cr_expect_not_null(strstr(c.render->script, want), "%s", c.render->script);
    cr_expect_null(strstr(c.render->script, "/data/link:"), "the link is bound as written");
    render_case_clear(&c);
}

/* ---- mount targets ------------------------------------------------------- */

Test(mounts, no_target_may_overlap_the_staging_directory)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char req[512], hex[9];

    mkdirs("data/x");
    /* Above it (the cluster root) and inside it. */
    cr_assert_eq(run(NULL,
                     REQ_HEAD
                     "\"mounts\": [{\"source\": \"@/data/x\", \"target\": \"@/croot\"}], " REQ_POOL,
                     NULL, &c, &err),
                 SLUICE_EINVAL);
    cr_expect(strstr(err.text, "mounts[0]: target ") &&
                  strstr(err.text, "overlaps the launch's staging directory") &&
                  strstr(err.text, "which sluice binds itself"),
              "%s", err.text);
    render_case_clear(&c);
    sluice_error_clear(&err);
    /* The staging directory's name comes from the launch id. */
    marker_sha8("m1", hex);
    snprintf(req, sizeof(req),
             REQ_HEAD "\"mounts\": [{\"source\": \"@/data/x\", \"target\": "
                      "\"@/croot/site-1/%s/attempt-1/exit\"}], " REQ_POOL,
             hex);
    cr_assert_eq(run(NULL, req, NULL, &c, &err), SLUICE_EINVAL);
    cr_expect(strstr(err.text, "overlaps the launch's staging directory"), "%s", err.text);
    render_case_clear(&c);
}

static const char study_file[] = "format_version: 2\n"
                                 "studies:\n"
                                 "  atlas:\n"
                                 "    datasets:\n"
                                 "      images: {source: /cluster/data/atlas, mode: ro}\n"
                                 "    secret_mounts:\n"
                                 "      db:\n"
                                 "        source: /cluster/secrets/atlas-db\n"
                                 "        mount_path: /run/secrets/db\n";

Test(mounts, study_secret_mounts_bind_read_only_and_may_not_be_shadowed)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;

    cr_assert_eq(run(NULL,
                     "{\"launch_id\": \"m1\", \"site\": \"site-1\", \"study\": \"atlas\", "
                     "\"command\": \"/bin/true\", " REQ_POOL,
                     study_file, &c, &err),
                 SLUICE_OK, "%s", err.text);
    cr_expect_not_null(strstr(c.render->script,
                              "'--bind' '/cluster/data/atlas:/data/atlas/images:ro' "
                              "'--bind' '/cluster/secrets/atlas-db:/run/secrets/db:ro'"),
                       "%s", c.render->script);
    /* Only the paths are rendered: sluice never opens a source. */
    render_case_clear(&c);

    /* A request mount onto, inside or above the secret mount is refused,
     * naming the request's mount; a writable one included. */
    sluice_error_clear(&err);
    mkdirs("data/mine");
    cr_assert_eq(run(NULL,
                     "{\"launch_id\": \"m1\", \"site\": \"site-1\", \"study\": \"atlas\", "
                     "\"command\": \"/bin/true\", \"mounts\": [{\"source\": \"@/data/mine\", "
                     "\"target\": \"/run/secrets\", \"mode\": \"rw\"}], " REQ_POOL,
                     study_file, &c, &err),
                 SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "mounts[0]: target /run/secrets is above the target /run/secrets/db "
                               "of study.secret_mounts.db; refused (a mount may not shadow a "
                               "study's mount)");
    render_case_clear(&c);

    /* Profile none has no mount namespace: refused, naming the field. */
    sluice_error_clear(&err);
    cr_assert_eq(run(NULL,
                     "{\"launch_id\": \"m1\", \"site\": \"site-1\", \"study\": \"atlas\", "
                     "\"profile\": \"none\", \"command\": \"/bin/true\", " REQ_POOL,
                     "format_version: 2\nstudies:\n  atlas:\n    secret_mounts:\n"
                     "      db: {source: /cluster/secrets/atlas-db, mount_path: /run/secrets/db}\n",
                     &c, &err),
                 SLUICE_EINVAL);
    cr_expect_str_eq(err.text, "study.secret_mounts: profile none has no mount namespace; mounts, "
                               "datasets and secret mounts need apptainer or enroot-pyxis");
    render_case_clear(&c);
}

/* ---- job images (BYOC) ---------------------------------------------------- */

#define IMG_REQ(path)                                                                              \
    "{\"launch_id\": \"m1\", \"site\": \"site-1\", \"command\": \"/bin/true\", \"image\": \"" path \
    "\", " REQ_POOL

static void make_images(void)
{
    char path[512];

    mkdirs("images/sub");
    mkdirs("other");
    mkdirs("site-images");
    snprintf(path, sizeof(path), "%s/images/ok.sif", scratch);
    write_file(path, "");
    snprintf(path, sizeof(path), "%s/images/sub/deep.sqsh", scratch);
    write_file(path, "");
    snprintf(path, sizeof(path), "%s/other/evil.sif", scratch);
    write_file(path, "");
    snprintf(path, sizeof(path), "%s/other/chosen.sif", scratch);
    write_file(path, "");
    snprintf(path, sizeof(path), "%s/site-images/worker.sif", scratch);
    write_file(path, "");
    /* images/evil.sif -> other/evil.sif: inside the allowed directory as
     * written, outside it canonically. */
    symlink_in("other/evil.sif", "images/evil.sif");
    /* imglink -> images: an allowed directory named through a link. */
    symlink_in("images", "imglink");
}

Test(mounts, a_job_image_needs_an_allow_list_entry)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char want[1024], pol[1024];

    make_images();
    /* No list: every job image is refused, naming it; the site's image is
     * trusted. */
    cr_assert_eq(run(NULL, IMG_REQ("@/images/ok.sif"), NULL, &c, &err), SLUICE_EINVAL);
    snprintf(want, sizeof(want),
             "image: %s/images/ok.sif is a job image, which needs BYOC authorisation, and this "
             "site authorises none (policy.allowed_images is empty); leave image out to use the "
             "study's or the site's image",
             scratch);
    cr_expect_str_eq(err.text, want);
    render_case_clear(&c);
    sluice_error_clear(&err);
    cr_assert_eq(run(NULL, REQ_HEAD REQ_POOL, NULL, &c, &err), SLUICE_OK, "%s", err.text);
    render_case_clear(&c);

    /* A directory entry allows what lies below it, canonically. */
    snprintf(pol, sizeof(pol), "  allowed_images: [%s/images/, %s/other/chosen.sif]\n", scratch,
             scratch);
    cr_assert_eq(run(pol, IMG_REQ("@/images/ok.sif"), NULL, &c, &err), SLUICE_OK, "%s", err.text);
    render_case_clear(&c);
    cr_assert_eq(run(pol, IMG_REQ("@/images/sub/deep.sqsh"), NULL, &c, &err), SLUICE_OK, "%s",
                 err.text);
    render_case_clear(&c);
    cr_assert_eq(run(pol, IMG_REQ("@/imglink/ok.sif"), NULL, &c, &err), SLUICE_OK, "%s", err.text);
    render_case_clear(&c);
    /* A file entry allows that file only. */
    cr_assert_eq(run(pol, IMG_REQ("@/other/chosen.sif"), NULL, &c, &err), SLUICE_OK, "%s",
                 err.text);
    render_case_clear(&c);
    cr_assert_eq(run(pol, IMG_REQ("@/other/evil.sif"), NULL, &c, &err), SLUICE_EINVAL);
    snprintf(want, sizeof(want),
             "image: %s/other/evil.sif is not an authorised job image (BYOC): no entry of "
             "policy.allowed_images allows its canonical path; refused",
             scratch);
    cr_expect_str_eq(err.text, want);
    render_case_clear(&c);
    /* A link inside the allowed directory that leads out of it. */
    sluice_error_clear(&err);
    cr_assert_eq(run(pol, IMG_REQ("@/images/evil.sif"), NULL, &c, &err), SLUICE_EINVAL);
    snprintf(want, sizeof(want),
             "image: %s/images/evil.sif is not an authorised job image (BYOC): no entry of "
             "policy.allowed_images allows its canonical path; refused",
             scratch);
    cr_expect_str_eq(err.text, want);
    render_case_clear(&c);
}

Test(mounts, an_existing_directory_entry_without_a_slash_is_a_directory)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char pol[512];

    make_images();
    snprintf(pol, sizeof(pol), "  allowed_images: [%s/imglink]\n", scratch);
    cr_assert_eq(run(pol, IMG_REQ("@/images/sub/deep.sqsh"), NULL, &c, &err), SLUICE_OK, "%s",
                 err.text);
    render_case_clear(&c);
    /* ... and nothing outside it. */
    cr_assert_eq(run(pol, IMG_REQ("@/other/chosen.sif"), NULL, &c, &err), SLUICE_EINVAL);
    render_case_clear(&c);
}
