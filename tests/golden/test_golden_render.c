/* SPDX-License-Identifier: Apache-2.0 */
/* test_golden_render.c - golden rendering cases: every directory under
 * tests/golden/render/ holds request.json + site.yaml (+ study_runtime.yaml)
 * and the expected outputs: expected.sh (the batch script), expected.json
 * (sluice_render_to_json() with the script replaced by "@expected.sh"),
 * expected-v0.0.38.json and expected-v0.0.43.json (REST submit bodies, the
 * script replaced the same way), or expected-error.txt for a case that must
 * be refused.  UPDATE_GOLDEN=1 rewrites the expected files. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "render_case.h"

static bool updating(void)
{
    const char *u = getenv("UPDATE_GOLDEN");
    return u && u[0] && strcmp(u, "0") != 0;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void check_text(const char *path, const char *got)
{
    char *want;

    if (updating()) {
        write_text(path, got);
        return;
    }
    want = render_case_slurp(path, NULL);
    cr_assert_not_null(want, "%s missing (UPDATE_GOLDEN=1 creates it)", path);
    cr_expect_str_eq(got, want, "%s differs (UPDATE_GOLDEN=1 rewrites)", path);
    free(want);
}

/* Replace every string equal to `script` by "@expected.sh". */
static void strip_script(json_t *j, const char *script)
{
    const char *k;
    json_t *v;
    size_t i;

    if (json_is_object(j)) {
        json_object_foreach(j, k, v)
        {
            if (json_is_string(v) && strcmp(json_string_value(v), script) == 0)
                json_object_set_new(j, k, json_string("@expected.sh"));
            else
                strip_script(v, script);
        }
    } else if (json_is_array(j)) {
        json_array_foreach(j, i, v) strip_script(v, script);
    }
}

static void check_json(const char *path, json_t *got, const char *script)
{
    char *text;

    strip_script(got, script);
    text = json_dumps(got, JSON_INDENT(2) | JSON_SORT_KEYS);
    cr_assert_not_null(text);
    {
        size_t n = strlen(text);
        char *t2 = malloc(n + 2);
        memcpy(t2, text, n);
        t2[n] = '\n';
        t2[n + 1] = '\0';
        check_text(path, t2);
        free(t2);
    }
    free(text);
}

static void run_case(const char *dir, const char *name)
{
    render_case_t c;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[8192];
    sluice_err rc = render_case_run(dir, &c, &err);
    static const sluice_rest_version versions[] = {SLUICE_REST_V0038, SLUICE_REST_V0043};
    size_t i;

    snprintf(path, sizeof(path), "%s/expected-error.txt", dir);
    if (access(path, R_OK) == 0 || (updating() && rc != SLUICE_OK)) {
        char msg[600];
        cr_assert_neq(rc, SLUICE_OK, "%s: expected a refusal", name);
        snprintf(msg, sizeof(msg), "%s: %s\n", sluice_err_name(err.code), err.text);
        check_text(path, msg);
        render_case_clear(&c);
        return;
    }
    cr_assert_eq(rc, SLUICE_OK, "%s: %s: %s", name, sluice_err_name(err.code), err.text);
    snprintf(path, sizeof(path), "%s/expected.sh", dir);
    check_text(path, c.render->script);
    snprintf(path, sizeof(path), "%s/expected.json", dir);
    {
        json_t *j = sluice_render_to_json(c.render);
        cr_assert_not_null(j);
        check_json(path, j, c.render->script);
        json_decref(j);
    }
    for (i = 0; i < 2; i++) {
        json_t *body = NULL;
        cr_assert_eq(
            sluice_rest_submit_body(versions[i], c.render->jobs, c.render->n_jobs, &body, &err),
            SLUICE_OK, "%s: %s", name, err.text);
        snprintf(path, sizeof(path), "%s/expected-%s.json", dir,
                 sluice_rest_version_name(versions[i]));
        check_json(path, body, c.render->script);
        json_decref(body);
    }
    render_case_clear(&c);
}

Test(golden_render, every_case_matches)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char root[4096], dir[4096 + 256];
    DIR *d;
    struct dirent *e;
    int n = 0;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    snprintf(root, sizeof(root), "%s/tests/golden/render", src);
    d = opendir(root);
    cr_assert_not_null(d, "%s", root);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", root, e->d_name);
        run_case(dir, e->d_name);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 10, "only %d golden rendering cases", n);
}
