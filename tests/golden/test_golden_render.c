/* SPDX-License-Identifier: Apache-2.0 */
/* test_golden_render.c - golden rendering cases: every directory under
 * tests/golden/render/ holds request.json + site.yaml (+ study_runtime.yaml)
 * and the expected outputs: expected.sh (the batch script), expected.json
 * (sluice_render_to_json() with the script replaced by "@expected.sh"),
 * expected-v0.0.38.json and expected-v0.0.43.json (REST submit bodies, the
 * script replaced the same way), or expected-error.txt for a case that must
 * be refused.  UPDATE_GOLDEN=1 rewrites the expected files, except under
 * CI=true, where it fails the test (tests/support/ci_guard.h).
 *
 * Every rendered srun step is also read the way srun reads its command line
 * (check_srun_order): srun's own options, the enroot-pyxis --container-*
 * options among them, come before the command; what follows the command is
 * the workload's argv, which srun passes on unread.  enroot and pyxis are not
 * in Debian, so no testbed runs them: this order is what stands in for a
 * real srun accepting the options. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "ci_guard.h"
#include "render_case.h"

static bool updating(void)
{
    return ci_guard_update_golden();
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

/* The shell words of one command of a rendered script: '...' literal,
 * "..." with \" \\ \$ \` escapes ($(...) kept as text), words split on
 * blanks; backslash-newline joins lines.  Returns the number of words
 * (at most max) and sets *end to the first character after the command. */
static size_t shell_words(const char *p, char **w, size_t max, const char **end)
{
    size_t n = 0;

    while (*p && *p != '\n') {
        char buf[4096];
        size_t k = 0;

        while (*p == ' ' || *p == '\t' || (p[0] == '\\' && p[1] == '\n'))
            p += *p == '\\' ? 2 : 1;
        if (!*p || *p == '\n')
            break;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && k + 1 < sizeof(buf)) {
            if (*p == '\'') {
                for (p++; *p && *p != '\'' && k + 1 < sizeof(buf); p++)
                    buf[k++] = *p;
                p += *p == '\'';
            } else if (*p == '"') {
                for (p++; *p && *p != '"' && k + 1 < sizeof(buf); p++) {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                        p++;
                    buf[k++] = *p;
                }
                p += *p == '"';
            } else if (p[0] == '\\' && p[1] == '\n') {
                break;
            } else {
                if (*p == '\\' && p[1])
                    p++;
                buf[k++] = *p++;
            }
        }
        buf[k] = '\0';
        if (n < max)
            w[n++] = strdup(buf);
    }
    *end = p;
    return n;
}

/* enroot-pyxis steps checked over all cases: the check must have read some. */
static int pyxis_steps;

static bool srun_own_option(const char *word)
{
    return strncmp(word, "--container-", 12) == 0 || strncmp(word, "--no-container-", 15) == 0 ||
           strncmp(word, "--export=", 9) == 0;
}

/* Every `sluice_step NAME SRUN OPTIONS... COMMAND ARGS...` of a script:
 * the options are words that start with "-" (sluice writes srun's options
 * in the --name=value form, so no option's value is a word of its own); the
 * first other word is the command.  No srun option (pyxis's, --export) may
 * follow it, and an enroot-pyxis step has every pyxis option before it. */
static void check_srun_order(const char *name, const char *script)
{
    static const char *const pyxis[] = {"--export=",
                                        "--container-image=",
                                        "--container-mounts=",
                                        "--container-workdir=",
                                        "--container-env=",
                                        "--container-readonly",
                                        "--no-container-mount-home",
                                        "--no-container-entrypoint",
                                        "--no-container-remap-root"};
    bool is_pyxis = strstr(script, "SLUICE_PROFILE='enroot-pyxis'") != NULL;
    const char *p = script;
    int steps = 0;

    while ((p = strstr(p, "sluice_step ")) != NULL) {
        char *w[512];
        const char *end, *srun;
        size_t n, i, j, cmd;

        if (p != script && p[-1] != ' ') { /* the definition, or a word's tail */
            p++;
            continue;
        }
        n = shell_words(p, w, sizeof(w) / sizeof(w[0]), &end);
        srun = n > 2 ? strrchr(w[2], '/') : NULL;
        srun = srun ? srun + 1 : (n > 2 ? w[2] : "");
        if (n > 2 && strcmp(w[0], "sluice_step") == 0 && strcmp(srun, "srun") == 0) {
            for (cmd = 3; cmd < n && w[cmd][0] == '-'; cmd++)
                ;
            cr_assert_lt(cmd, n, "%s: step %s: srun has no command", name, w[1]);
            for (j = cmd + 1; j < n; j++)
                cr_expect(!srun_own_option(w[j]),
                          "%s: step %s: srun option %s comes after the command %s: srun would "
                          "pass it to the workload instead of reading it",
                          name, w[1], w[j], w[cmd]);
            for (i = 0; is_pyxis && i < sizeof(pyxis) / sizeof(pyxis[0]); i++) {
                bool found = false;
                for (j = 3; j < cmd && !found; j++)
                    found = strncmp(w[j], pyxis[i], strlen(pyxis[i])) == 0;
                cr_expect(found,
                          "%s: step %s: pyxis option %s is not among srun's options "
                          "(before the command %s)",
                          name, w[1], pyxis[i], w[cmd]);
            }
            steps++;
        }
        for (i = 0; i < n; i++)
            free(w[i]);
        p = end;
    }
    pyxis_steps += is_pyxis ? steps : 0;
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
    check_srun_order(name, c.render->script);
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
    cr_assert_geq(pyxis_steps, 4, "only %d enroot-pyxis srun steps checked", pyxis_steps);
}
