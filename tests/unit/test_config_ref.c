/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_ref.c - the configuration reference made from the field table
 * (`sluice config reference`, issue 31): the types, limits and fixed words
 * in the markdown and the JSON Schema, checked against what the loader
 * accepts and refuses; a description on every row; and the shipped site
 * files (deploy/examples, tests/fixtures/config) against the schema: every
 * key they use is in it, with a value of a type it allows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include <sluice/config.h>
#include "site/config_int.h"
#include "site/config_ref.h"

#include "config_case.h"

#define BASE                                                                                       \
    "rest:\n"                                                                                      \
    "  url: https://rest.example:6820\n"                                                           \
    "storage:\n"                                                                                   \
    "  root: /lustre/s\n"                                                                          \
    "job_launcher:\n"                                                                              \
    "  sandbox: none\n"

static char *markdown(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *md = NULL;

    cr_assert_eq(cfg_reference(CFG_REF_MARKDOWN, &md, &err), SLUICE_OK, "%s", err.text);
    return md;
}

static json_t *schema(void)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char *text = NULL;
    json_t *j;
    json_error_t je;

    cr_assert_eq(cfg_reference(CFG_REF_JSON_SCHEMA, &text, &err), SLUICE_OK, "%s", err.text);
    j = json_loads(text, 0, &je);
    cr_assert_not_null(j, "the schema does not parse: %s", je.text);
    free(text);
    return j;
}

/* The schema of a dotted key (borrowed from `root`), or NULL. */
static json_t *prop(json_t *root, const char *path)
{
    char buf[256], *save = NULL, *part;
    json_t *node = root;

    snprintf(buf, sizeof(buf), "%s", path);
    for (part = strtok_r(buf, ".", &save); part && node; part = strtok_r(NULL, ".", &save))
        node = json_object_get(json_object_get(node, "properties"), part);
    return node;
}

/* The markdown row of a key (a copy up to its newline), or NULL. */
static char *md_row(const char *md, const char *key)
{
    char needle[160];
    const char *at, *end;

    snprintf(needle, sizeof(needle), "\n| `%s` |", key);
    if (!(at = strstr(md, needle)))
        return NULL;
    at++;
    end = strchr(at, '\n');
    return strndup(at, end ? (size_t)(end - at) : strlen(at));
}

static bool in_enum(json_t *s, const char *word)
{
    json_t *v;
    size_t i;

    json_array_foreach(json_object_get(s, "enum"), i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), word) == 0)
            return true;
    }
    return false;
}

Test(config_ref, every_row_has_a_description)
{
    size_t i;

    for (i = 0; i < CFG_N_FIELDS; i++)
        cr_expect(cfg_fields[i].doc && cfg_fields[i].doc[0], "%s: no description",
                  cfg_fields[i].path);
}

Test(config_ref, markdown_rows)
{
    char *md = markdown(), *r;

    cr_assert_not_null(strstr(md, "do not edit by hand"));
    cr_assert_not_null(strstr(md, "\n## job_launcher\n"));
    r = md_row(md, "job_launcher.internal_port");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "| integer from 1 to 65535 |"), "%s", r);
    cr_expect_not_null(strstr(r, "`SLUICE_JOB_LAUNCHER_INTERNAL_PORT`"), "%s", r);
    cr_expect_not_null(strstr(r, "| `job_launcher.internal_port` |"), "%s", r);
    free(r);
    r = md_row(md, "log.level");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "error, warning, notice, info, debug"), "%s", r);
    free(r);
    r = md_row(md, "rest.url");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "`SLUICE_REST_URL`, `FORGE_SLURM_REST_URL`"), "%s", r);
    free(r);
    r = md_row(md, "job_launcher.poll_interval");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "| duration (1s to 3600s) |"), "%s", r);
    free(r);
    /* the maps: --set reaches their entries (the environment, executables') */
    r = md_row(md, "gpu_series");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "| file and --set only | `gpu_series.<name>.<field>` |"), "%s", r);
    free(r);
    r = md_row(md, "job_launcher.executables");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "| `SLUICE_JOB_LAUNCHER_EXECUTABLES_<NAME>` | "
                                 "`job_launcher.executables.<name>` |"),
                       "%s", r);
    free(r);
    r = md_row(md, "rest.jwt_command");
    cr_assert_not_null(r);
    cr_expect_not_null(strstr(r, "| file only | file only |"), "%s", r);
    free(r);
    free(md);
}

Test(config_ref, schema_types_and_limits)
{
    json_t *s = schema(), *p;

    cr_assert_str_eq(json_string_value(json_object_get(s, "$schema")),
                     "https://json-schema.org/draft/2020-12/schema");
    cr_assert(json_is_false(json_object_get(s, "additionalProperties")));
    cr_assert(json_is_false(json_object_get(prop(s, "job_launcher"), "additionalProperties")));
    cr_assert(json_is_false(
        json_object_get(prop(s, "job_launcher.sbatch_directives"), "additionalProperties")));
    p = prop(s, "job_launcher.internal_port");
    cr_assert_not_null(p);
    cr_expect_eq(json_integer_value(json_object_get(p, "minimum")), 1);
    cr_expect_eq(json_integer_value(json_object_get(p, "maximum")), 65535);
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(p, "type"), 0)), "integer");
    cr_expect_str_eq(json_string_value(json_object_get(p, "description")),
                     cfg_find_field("job_launcher.internal_port")->doc);
    p = prop(s, "log.level");
    cr_assert_not_null(p);
    cr_expect(in_enum(p, "debug") && in_enum(p, "warning") && !in_enum(p, "verbose"));
    cr_expect(in_enum(prop(s, "job_launcher.sandbox"), "pyxis"));
    cr_expect(in_enum(prop(s, "log.format"), "journald"));
    p = prop(s, "rest.jwt_lifespan"); /* a duration: integer or "30s" */
    cr_assert_not_null(p);
    cr_expect_eq(json_integer_value(
                     json_object_get(json_array_get(json_object_get(p, "anyOf"), 0), "minimum")),
                 60);
    cr_expect_str_eq(
        json_string_value(json_object_get(json_array_get(json_object_get(p, "anyOf"), 1), "type")),
        "string");
    cr_expect_not_null(prop(s, "gpu_series"));
    cr_expect_not_null(prop(s, "clusters"));
    json_decref(s);
}

/* The loader agrees with the words and limits the reference prints: every
 * fixed word loads through --set, a word outside them and a number past
 * each limit are refused with the limits of the table, and the kinds the
 * reference calls "file only" are refused from --set. */
Test(config_ref, loader_agrees)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    sluice_config_t *cfg = NULL;
    char set[256], want[160];
    const char *sets[1] = {set};
    size_t i, k;

    for (i = 0; i < CFG_N_FIELDS; i++) {
        const field_t *f = &cfg_fields[i];
        const char *const *w = cfg_kind_values(f->kind);
        if (!cfg_kind_settable(f->kind)) {
            snprintf(set, sizeof(set), "%s=x", f->path);
            cr_expect_neq(config_case_load(BASE, NULL, sets, 1, &cfg, &err), SLUICE_OK, "%s",
                          f->path);
            cr_expect_not_null(strstr(err.text, "cannot be set from the environment or --set"),
                               "%s", err.text);
            continue;
        }
        for (k = 0; w && w[k]; k++) {
            snprintf(set, sizeof(set), "%s=%s", f->path, w[k]);
            cr_expect_eq(config_case_load(BASE, NULL, sets, 1, &cfg, &err), SLUICE_OK, "%s: %s",
                         set, err.text);
            sluice_config_free(cfg);
            cfg = NULL;
        }
        if (w) {
            snprintf(set, sizeof(set), "%s=bogus", f->path);
            cr_expect_neq(config_case_load(BASE, NULL, sets, 1, &cfg, &err), SLUICE_OK, "%s", set);
        }
        if (f->kind == K_INT || f->kind == K_DUR) {
            if (f->kind == K_INT)
                snprintf(want, sizeof(want), "expected an integer from %ld to %ld", f->min, f->max);
            else
                snprintf(want, sizeof(want), "expected a duration from %lds to %lds", f->min,
                         f->max);
            snprintf(set, sizeof(set), "%s=%ld", f->path, f->max + 1);
            cr_expect_neq(config_case_load(BASE, NULL, sets, 1, &cfg, &err), SLUICE_OK, "%s", set);
            cr_expect_not_null(strstr(err.text, want), "%s: %s", set, err.text);
            if (f->min > 0) {
                snprintf(set, sizeof(set), "%s=%ld", f->path, f->min - 1);
                cr_expect_neq(config_case_load(BASE, NULL, sets, 1, &cfg, &err), SLUICE_OK, "%s",
                              set);
                cr_expect_not_null(strstr(err.text, want), "%s: %s", set, err.text);
            }
        }
    }
}

/* ---- the shipped site files against the schema ------------------------ */

static bool type_ok(json_t *s, json_t *v);

static bool one_type_ok(const char *t, json_t *v)
{
    return (strcmp(t, "null") == 0 && json_is_null(v)) ||
           (strcmp(t, "string") == 0 && json_is_string(v)) ||
           (strcmp(t, "integer") == 0 && json_is_integer(v)) ||
           (strcmp(t, "boolean") == 0 && json_is_boolean(v)) ||
           (strcmp(t, "array") == 0 && json_is_array(v)) ||
           (strcmp(t, "object") == 0 && json_is_object(v));
}

/* The "type", "enum" and "anyOf" of `s` allow `v` (not the patterns). */
static bool type_ok(json_t *s, json_t *v)
{
    json_t *t = json_object_get(s, "type"), *e, *x;
    size_t i;

    if ((e = json_object_get(s, "anyOf")) != NULL) {
        json_array_foreach(e, i, x)
        {
            if (type_ok(x, v))
                return true;
        }
        return false;
    }
    if ((e = json_object_get(s, "enum")) != NULL) {
        json_array_foreach(e, i, x)
        {
            if (json_equal(x, v))
                return true;
        }
        return false;
    }
    if (json_is_string(t))
        return one_type_ok(json_string_value(t), v);
    json_array_foreach(t, i, x)
    {
        if (one_type_ok(json_string_value(x), v))
            return true;
    }
    return t == NULL;
}

/* Every key of `doc` is a property of `s` (or allowed by its
 * additionalProperties schema), and every value has a type it allows. */
static void check_value(const char *file, const char *path, json_t *s, json_t *v)
{
    const char *key;
    json_t *sub, *kid;
    char p[256];

    cr_expect(type_ok(s, v), "%s: %s: a value of a type the schema does not allow", file, path);
    if (json_is_object(v)) {
        json_object_foreach(v, key, kid)
        {
            snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
            sub = json_object_get(json_object_get(s, "properties"), key);
            if (!sub && json_is_object(json_object_get(s, "additionalProperties")))
                sub = json_object_get(s, "additionalProperties");
            if (!sub && json_is_false(json_object_get(s, "additionalProperties"))) {
                cr_expect_fail("%s: %s: not a key of the schema", file, p);
                continue;
            }
            if (sub)
                check_value(file, p, sub, kid);
        }
    } else if (json_is_array(v) && json_is_object(json_object_get(s, "items"))) {
        size_t i;
        json_array_foreach(v, i, kid)
        {
            snprintf(p, sizeof(p), "%s[%zu]", path, i);
            check_value(file, p, json_object_get(s, "items"), kid);
        }
    }
}

static const char *const site_files[] = {
    "deploy/examples/site.yaml",
    "deploy/examples/site-service.yaml",
    "deploy/examples/site-render.yaml",
    "tests/fixtures/config/site.yaml",
    "tests/fixtures/config/nvflare-slurm.yaml",
    "tests/fixtures/config/nvflare-slurm-full.yaml",
};

Test(config_ref, shipped_site_files_fit_the_schema)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    json_t *s = schema(), *doc = NULL;
    sluice_error_t err = SLUICE_ERROR_INIT;
    char path[1024], *text;
    size_t i, len;
    FILE *f;

    cr_assert_not_null(src, "SLUICE_SOURCE_DIR is not set");
    for (i = 0; i < sizeof(site_files) / sizeof(site_files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", src, site_files[i]);
        f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        text = malloc(1 << 20);
        cr_assert_not_null(text);
        len = fread(text, 1, (1 << 20) - 1, f);
        fclose(f);
        cr_assert_eq(sluice_yaml_to_json(site_files[i], text, len, &doc, &err), SLUICE_OK, "%s",
                     err.text);
        cr_assert(json_is_object(doc), "%s", site_files[i]);
        check_value(site_files[i], "", s, doc);
        json_decref(doc);
        free(text);
    }
    json_decref(s);
}
